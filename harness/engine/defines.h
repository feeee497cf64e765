/* defines.h - the compile-time defines of a case (see family.h for the convention). */
#ifndef KB_DEFINES_H
#define KB_DEFINES_H

#include "engine/family.h"

/* Write the case's defines into out as "NAME=VALUE" lines joined by '\n' (no trailing
 * newline): KB_T, KB_DTYPE_<NAME>, every family param upper-cased (choice params as
 * their index plus <PARAM>_<CHOICE>=<index>), then the family's own extras. */
void kb_case_defines(const kb_family *f, const kb_case *c, kb_sb *out);

/* Split a joined define list in place into at most max pointers; returns the count. */
int kb_defines_split(char *joined, const char **out, int max);

#endif
