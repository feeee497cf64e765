/* strset.h - a set of strings: finished case ids for --resume, seen ids for the plan
 * walk's dedupe. Open addressing with linear probing, resized at half load; strings
 * are copied. */
#ifndef KB_STRSET_H
#define KB_STRSET_H

#include <stddef.h>

typedef struct {
    char **slots;      /* [cap], NULL = empty */
    size_t cap;        /* power of two, or 0 before the first add */
    size_t n;
} kb_strset;

void kb_strset_init(kb_strset *s);
void kb_strset_free(kb_strset *s);
/* Add a copy of str; 1 when added, 0 when already present, -1 when out of memory. */
int kb_strset_add(kb_strset *s, const char *str);
/* 1 when str is in the set. */
int kb_strset_has(const kb_strset *s, const char *str);

#endif /* KB_STRSET_H */
