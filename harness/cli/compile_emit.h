/* compile_emit.h - `kbench compile --emit ptx|cubin --out DIR`: each module's PTX or CUBIN
 * written into DIR, named by the case that uses it, for users' own tools (cuobjdump, ncu,
 * grep) and for tests.
 *
 * The rule (README "kbench compile --emit"):
 *   - DIR is made (mkdir -p) when missing; an existing path that is not a directory is
 *     refused (exit 2), a directory that cannot be made or written is refused (exit 3),
 *     both before anything is compiled;
 *   - one file per module: <case>.<ext>, <case> the id of the first case that uses it, made
 *     safe as a file name (kb_emit_safe_name); when more than one case of the walk uses the
 *     module, or two modules' names would collide, the name carries the module's hash too:
 *     <case>.<hash>.<ext> (the hash of its source and defines, 8 hex digits);
 *   - kbench never overwrites a file: every name is checked before the first compile, and a
 *     name that already exists in DIR stops the command (exit 2) - use a new or empty DIR;
 *     files are created with O_EXCL, so one that appears meanwhile is not overwritten either.
 */
#ifndef KB_COMPILE_EMIT_H
#define KB_COMPILE_EMIT_H

#include <stddef.h>

typedef struct kb_emit kb_emit;

/* Make or check dir for emitting kind ("ptx" or "cubin"). On success *out (caller frees
 * with kb_emit_free) and -1; else the message on stderr and the exit code (2: a path that
 * is not a directory; 3: cannot be made or written; 3: out of memory). */
int kb_emit_open(const char *dir, const char *kind, kb_emit **out);

/* Announce that the case case_id uses the module identified by module (its source and
 * defines, any text that is equal exactly when the module is). 0, or -1 when out of memory. */
int kb_emit_plan(kb_emit *e, const char *case_id, const char *module);

/* After every case was announced: name each module's file and refuse names DIR already
 * holds. -1 to go on; else the message on stderr and the exit code (2). */
int kb_emit_check(kb_emit *e);

/* Write the module's artefact (the compile cache's file at artifact) into DIR, once per
 * module: the file name in DIR on success (also when an earlier case wrote it), owned by e;
 * NULL with why filled when module was never announced or the copy failed. */
const char *kb_emit_write(kb_emit *e, const char *module, const char *artifact, char *why, size_t n);

/* Files written so far. */
int kb_emit_count(const kb_emit *e);

void kb_emit_free(kb_emit *e);

/* The case id as a file name: letters, digits, '.', '-' and '_' kept, every other run of
 * characters one '_', no leading '.', at most 160 bytes (a longer id is cut and ends with
 * its own hash, 8 hex digits, so two long ids stay apart). Returns out. Pure. */
char *kb_emit_safe_name(const char *id, char *out, size_t n);

#endif /* KB_COMPILE_EMIT_H */
