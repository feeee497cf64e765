/* est_select.c - the rows `kbench estimate` shows and its per-family summary (est_select.h). */
#include "estimate/est_select.h"

#include "kernels/families.h"

#include <stdlib.h>
#include <string.h>

const char *const kb_est_format_names[] = { "text", "json", "csv", NULL };
const char *const kb_est_sort_names[] = { "plan", "time", "roof", NULL };
_Static_assert(sizeof kb_est_format_names / sizeof kb_est_format_names[0] == KB_EST_FORMAT_COUNT + 1,
               "one name per format");
_Static_assert(sizeof kb_est_sort_names / sizeof kb_est_sort_names[0] == KB_EST_SORT_COUNT + 1, "one name per sort");

int kb_est_name_index(const char *const *names, const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The summary of family fam over the estimated rows. */
static void summarise_one(const kb_est_rows *rows, int fam, kb_est_family_sum *s, double *pct)
{
    double by_limit[KB_ROOF_COUNT] = { 0 };
    memset(s, 0, sizeof *s);
    s->family = fam;
    for (size_t i = 0; i < rows->n; i++) {
        const kb_est_row *r = &rows->rows[i];
        if (r->status != KB_EST_ROW_OK || r->c.family != fam)
            continue;
        pct[s->cases++] = r->e.pct_roofline;
        s->total_us += r->e.est_us;
        by_limit[r->e.limit] += r->e.est_us;
    }
    qsort(pct, (size_t)s->cases, sizeof *pct, cmp_double);
    s->median_pct = s->cases % 2 ? pct[s->cases / 2] : (pct[s->cases / 2 - 1] + pct[s->cases / 2]) / 2;
    for (int l = 0; l < KB_ROOF_COUNT; l++)
        if (by_limit[l] > by_limit[s->dominant])
            s->dominant = (kb_est_roof)l;
    s->dominant_share = s->total_us > 0 ? 100.0 * by_limit[s->dominant] / s->total_us : 0;
}

int kb_est_summarise(const kb_est_rows *rows, kb_est_family_sum **out)
{
    int n = 0, *seen = calloc((size_t)kb_n_families + 1, sizeof *seen);
    double *pct = malloc((rows->n ? rows->n : 1) * sizeof *pct);
    kb_est_family_sum *s = calloc((size_t)kb_n_families + 1, sizeof *s);
    *out = NULL;
    if (!seen || !pct || !s) {
        free(seen), free(pct), free(s);
        return -1;
    }
    for (size_t i = 0; i < rows->n; i++) {
        int fam = rows->rows[i].c.family;
        if (rows->rows[i].status != KB_EST_ROW_OK || fam < 0 || fam >= kb_n_families || seen[fam])
            continue;
        seen[fam] = 1;
        summarise_one(rows, fam, &s[n++], pct);
    }
    free(seen), free(pct);
    *out = s;
    return n;
}

static const kb_est_rows *sort_rows;
static kb_est_sort sort_key;

static int cmp_rows(const void *a, const void *b)
{
    const kb_estimate *x = &sort_rows->rows[*(const size_t *)a].e, *y = &sort_rows->rows[*(const size_t *)b].e;
    double u = sort_key == KB_EST_SORT_TIME ? y->est_us : x->pct_roofline;
    double v = sort_key == KB_EST_SORT_TIME ? x->est_us : y->pct_roofline;
    if (u != v)
        return (u > v) - (u < v);
    return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b); /* stable */
}

int kb_est_select(const kb_est_rows *rows, const kb_est_report_opts *o, size_t **out)
{
    size_t n = 0, *idx = malloc((rows->n ? rows->n : 1) * sizeof *idx);
    *out = idx;
    if (!idx)
        return -1;
    for (size_t i = 0; i < rows->n; i++)
        if (rows->rows[i].status == KB_EST_ROW_OK)
            idx[n++] = i;
    kb_est_sort key = o->sort == KB_EST_SORT_PLAN && o->top > 0 ? KB_EST_SORT_TIME : o->sort;
    if (key != KB_EST_SORT_PLAN) {
        sort_rows = rows, sort_key = key; /* qsort has no user pointer; one thread formats */
        qsort(idx, n, sizeof *idx, cmp_rows);
    }
    if (o->top > 0 && (size_t)o->top < n)
        n = (size_t)o->top;
    return (int)n;
}
