/* sink.c - the multiplex of record sinks (see sink.h). */
#include "session/sink.h"

#include <stdlib.h>
#include <string.h>

kb_status kb_sinks_add(kb_sinks *l, kb_sink k)
{
    if (!k.ops)
        return KB_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        kb_sink *grown = realloc(l->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            if (k.ops->free)
                k.ops->free(k.self);
            return KB_ERR_OOM;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = k;
    return KB_OK;
}

void kb_sinks_open(const kb_sinks *l, const kb_sink_run *run)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].ops->open)
            l->v[i].ops->open(l->v[i].self, run);
}

void kb_sinks_case_start(const kb_sinks *l, const kb_cases_item *item)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].ops->case_start)
            l->v[i].ops->case_start(l->v[i].self, item);
}

/* The sinks of one pass: those with flags & mask == want. 0, or -1 when one failed. */
static int pass(const kb_sinks *l, const kb_sink_case *c, unsigned mask, unsigned want)
{
    int rc = 0;
    for (int i = 0; i < l->n; i++) {
        const kb_sink *k = &l->v[i];
        if ((k->ops->flags & mask) == want && k->ops->record(k->self, c) != KB_OK)
            rc = -1;
    }
    return rc;
}

int kb_sinks_record(const kb_sinks *l, const kb_sink_case *c)
{
    const unsigned both = KB_SINK_REQUIRED | KB_SINK_MIRROR;
    int kept = c->rec != NULL && pass(l, c, KB_SINK_REQUIRED, KB_SINK_REQUIRED) == 0;
    if (kept)
        pass(l, c, both, KB_SINK_MIRROR);
    pass(l, c, both, 0);
    return kept ? 0 : -1;
}

void kb_sinks_close(const kb_sinks *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].ops->close)
            l->v[i].ops->close(l->v[i].self);
}

void kb_sinks_free(kb_sinks *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].ops->free)
            l->v[i].ops->free(l->v[i].self);
    free(l->v);
    memset(l, 0, sizeof *l);
}
