/* families.h - the registry of kernel families: the plug-in list of kbench.
 *
 * A family is kernels/<family>.cu (device code) plus kernels/<family>.c, which defines one
 * `const kb_family kb_family_<name>` (engine/family.h). families.c lists them; adding a family
 * is two lines there (docs/architecture.md, "A new family"). The harness never names a family:
 * it plans over this table and reaches a case's family as kb_families[c->family].
 */
#ifndef KB_FAMILIES_H
#define KB_FAMILIES_H

#include "engine/family.h"

/* Every family, in the order `kbench list` shows them; kb_n_families counts the table. */
extern const kb_family *const kb_families[];
extern const int kb_n_families;

/* The index of the family named name in kb_families[], or -1. */
int kb_family_find(const char *name);

/* kb_case_id_of (engine/family.h) with c's family from this table: requires c->family to
 * index kb_families[]. Writes into b (cleared first). */
void kb_case_id(const kb_case *c, kb_sb *b);

#endif /* KB_FAMILIES_H */
