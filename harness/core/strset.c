/* strset.c - a set of strings (see strset.h). */
#include "core/strset.h"

#include "core/kb.h"

#include <stdlib.h>
#include <string.h>

void kb_strset_init(kb_strset *s) { s->slots = NULL; s->cap = 0; s->n = 0; }

void kb_strset_free(kb_strset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
    kb_strset_init(s);
}

static size_t strset_slot(char *const *slots, size_t cap, const char *str)
{
    size_t i = (size_t)kb_hash64(str, strlen(str), KB_HASH_INIT) & (cap - 1);
    while (slots[i] && strcmp(slots[i], str) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

int kb_strset_has(const kb_strset *s, const char *str)
{
    return s->cap && s->slots[strset_slot(s->slots, s->cap, str)] != NULL;
}

int kb_strset_add(kb_strset *s, const char *str)
{
    if ((s->n + 1) * 2 > s->cap) {   /* keep the load under one half: short probes */
        size_t ncap = s->cap ? s->cap * 2 : 64;
        char **ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i])
                ns[strset_slot(ns, ncap, s->slots[i])] = s->slots[i];
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
    }
    size_t i = strset_slot(s->slots, s->cap, str);
    if (s->slots[i])
        return 0;
    s->slots[i] = strdup(str);
    if (!s->slots[i]) return -1;
    s->n++;
    return 1;
}

