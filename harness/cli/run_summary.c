/* run_summary.c - the closing summary of `kbench run` (see run_summary.h). */
#include "cli/run_summary.h"

#include "cli/console_cols.h"
#include "tune/winner.h"

#include <stdlib.h>
#include <string.h>

#define MAX_REASONS_SHOWN 8
#define MAX_FAILED_SHOWN 10

typedef struct {
    const kb_cases_item *item;
    double median_us;             /* [us] */
    double noise;                 /* relative standard error of the median */
} timed;

typedef struct {
    char *text;
    int n;
} reason;

struct kb_run_summary {
    int count[KB_CASE_STATUS_COUNT];
    int total;
    unsigned caps;                /* the device's: a GPU timer or the emulator's CPU clock */
    int check_shapes;
    kb_cols cols;                 /* the run's axes, to name configurations */
    timed *t;                     /* the verified, measured cases */
    int n_t, cap_t;
    reason *skips;                /* skipped cases by reason, in order of first appearance */
    int n_skips;
    kb_sb failed;                 /* "  <id>: <status>: <reason>" lines, the first few */
    int n_failed;
};

kb_run_summary *kb_run_summary_new(void)
{
    kb_run_summary *s = calloc(1, sizeof *s);
    if (s)
        kb_sb_init(&s->failed);
    return s;
}

void kb_run_summary_free(kb_run_summary *s)
{
    if (!s)
        return;
    kb_cols_free(&s->cols);
    for (int i = 0; i < s->n_skips; i++)
        free(s->skips[i].text);
    free(s->skips);
    free(s->t);
    kb_sb_free(&s->failed);
    free(s);
}

/* ---- collecting ---- */

static void sum_open(void *self, const kb_sink_run *run)
{
    kb_run_summary *s = self;
    s->caps = run->dev->caps;
    s->check_shapes = run->check_shapes;
    kb_cols_free(&s->cols);
    kb_cols_build(run->cases, run->plan, &s->cols);   /* out of memory: configurations unnamed */
}

static void add_skip(kb_run_summary *s, const char *why)
{
    for (int i = 0; i < s->n_skips; i++)
        if (!strcmp(s->skips[i].text, why)) {
            s->skips[i].n++;
            return;
        }
    reason *g = realloc(s->skips, (size_t)(s->n_skips + 1) * sizeof *g);
    char *t = g ? strdup(why) : NULL;
    if (g)
        s->skips = g;
    if (t)
        s->skips[s->n_skips++] = (reason){ t, 1 };
}

static void add_timed(kb_run_summary *s, const kb_sink_case *c)
{
    if (s->n_t == s->cap_t) {
        int cap = s->cap_t ? 2 * s->cap_t : 64;
        timed *g = realloc(s->t, (size_t)cap * sizeof *g);
        if (!g)
            return;
        s->t = g;
        s->cap_t = cap;
    }
    s->t[s->n_t++] = (timed){ c->item, c->r->measure.m.st.median, c->r->measure.m.noise };
}

static kb_status sum_record(void *self, const kb_sink_case *c)
{
    kb_run_summary *s = self;
    const kb_case_result *r = c->r;
    s->count[r->status]++;
    s->total++;
    if (r->status == KB_CASE_SKIPPED)
        add_skip(s, r->reason[0] ? r->reason : "(no reason given)");
    else if (kb_case_status_failed(r->status) && s->n_failed++ < MAX_FAILED_SHOWN)
        kb_sb_printf(&s->failed, "  %s: %s%s%s\n", c->item->it.id, c->status, r->reason[0] ? ": " : "", r->reason);
    if (r->status == KB_CASE_OK && r->verify.done && r->measure.done && r->measure.m.st.median > 0)
        add_timed(s, c);
    return KB_OK;
}

static const kb_sink_ops sum_ops = { "summary", 0, sum_open, NULL, sum_record, NULL, NULL };

kb_sink kb_run_summary_sink(kb_run_summary *s)
{
    return s ? (kb_sink){ &sum_ops, s } : (kb_sink){ NULL, NULL };
}

/* ---- printing ---- */

/* Cases by status: ok, the failing ones, skipped; the skipped by reason, most first. */
static void print_counts(const kb_run_summary *s, FILE *out, int brief)
{
    int failed = 0;
    for (int st = 0; st < KB_CASE_STATUS_COUNT; st++)
        if (st != KB_CASE_WRONG && kb_case_status_failed((kb_case_status)st))
            failed += s->count[st];
    fprintf(out, "kbench: %d cases: %d ok, %d skipped, %d wrong, %d failed", s->total, s->count[KB_CASE_OK],
            s->count[KB_CASE_SKIPPED], s->count[KB_CASE_WRONG], failed);
    const char *sep = " (";
    for (int st = 0; st < KB_CASE_STATUS_COUNT; st++)
        if (st != KB_CASE_WRONG && kb_case_status_failed((kb_case_status)st) && s->count[st]) {
            fprintf(out, "%s%d %s", sep, s->count[st], kb_case_status_name((kb_case_status)st));
            sep = ", ";
        }
    fputs(*sep == ',' ? ")\n" : "\n", out);
    if (s->n_failed)
        fprintf(out, "%s%s", s->failed.s, s->n_failed > MAX_FAILED_SHOWN ? "  ...\n" : "");
    if (brief || s->n_skips == 0)
        return;
    int *order = malloc((size_t)s->n_skips * sizeof *order);
    for (int i = 0; order && i < s->n_skips; i++) {   /* by count, then first appearance */
        int k = i;
        while (k > 0 && s->skips[order[k - 1]].n < s->skips[i].n) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    fprintf(out, "  skipped, by reason:\n");
    int shown = s->n_skips < MAX_REASONS_SHOWN ? s->n_skips : MAX_REASONS_SHOWN;
    for (int i = 0; order && i < shown; i++)
        fprintf(out, "  %6d  %s\n", s->skips[order[i]].n, s->skips[order[i]].text);
    if (s->n_skips > shown)
        fprintf(out, "          and %d other reasons (kbench report RUN lists every case)\n", s->n_skips - shown);
    free(order);
}

/* One shape and dtype: the verified cases of one problem, fastest first. */
typedef struct {
    const kb_cols_family *cf;
    const kb_case *c;             /* its first case: family, shape, dtype, pad */
    int *m;                       /* indexes into s->t */
    int n;
} group;

static int same_problem(const group *g, const timed *t)
{
    return g->cf->f == t->item->f && kb_cols_same_problem(g->cf->f, g->c, t->item->it.c);
}

/* The groups of s->t, in order of first appearance, members fastest first. -1 when out
 * of memory; the count otherwise. */
static int make_groups(const kb_run_summary *s, group **out)
{
    group *g = calloc((size_t)(s->n_t ? s->n_t : 1), sizeof *g);
    int n = 0;
    for (int i = 0; g && i < s->n_t; i++) {
        const kb_cols_family *cf = kb_cols_find(&s->cols, s->t[i].item->f);
        if (!cf)
            continue;
        int k = 0;
        while (k < n && !same_problem(&g[k], &s->t[i]))
            k++;
        if (k == n) {
            g[n] = (group){ cf, s->t[i].item->it.c, calloc((size_t)s->n_t, sizeof(int)), 0 };
            if (!g[n++].m)
                return *out = g, -1;
        }
        int j = g[k].n++;   /* insertion by median */
        while (j > 0 && s->t[g[k].m[j - 1]].median_us > s->t[i].median_us) {
            g[k].m[j] = g[k].m[j - 1];
            j--;
        }
        g[k].m[j] = i;
    }
    *out = g;
    return g ? n : -1;
}

/* "1.31x" or "1.02x, within noise" (the runner-up's 95% interval overlaps the best's), or
 * "the only one". */
static void margin_text(const kb_run_summary *s, const group *g, char *buf, size_t n)
{
    if (g->n < 2) {
        snprintf(buf, n, "the only one");
        return;
    }
    const timed *a = &s->t[g->m[0]], *b = &s->t[g->m[1]];
    kb_tune_result ra = { "", 1, a->median_us, a->noise, -1, -1 }, rb = { "", 1, b->median_us, b->noise, -1, -1 };
    double alo, ahi, blo, bhi;
    kb_tune_interval(&ra, &alo, &ahi);
    kb_tune_interval(&rb, &blo, &bhi);
    snprintf(buf, n, "%.2fx%s", b->median_us / a->median_us, blo <= ahi ? ", within noise" : "");
}

/* The widest shape and configuration text of the groups of family cf [characters]. */
static void widths(const kb_run_summary *s, const group *g, int n, const kb_cols_family *cf, int *w_shape,
                   int *w_cfg)
{
    *w_shape = 5;
    *w_cfg = 7;
    for (int k = 0; k < n; k++) {
        if (g[k].cf != cf)
            continue;
        kb_sb t;
        kb_sb_init(&t);
        kb_cols_shape(s->cols.plan, cf->f, g[k].c, &t);
        kb_cols_problem(cf, g[k].c, &t);
        if ((int)t.len > *w_shape) *w_shape = (int)t.len;
        kb_sb_clear(&t);
        kb_cols_config(cf, s->t[g[k].m[0]].item->it.c, &t);
        if ((int)t.len > *w_cfg) *w_cfg = (int)t.len;
        kb_sb_free(&t);
    }
}

/* Groups of a family in reading order: by shape (in the plan's order of shapes), then the
 * problem params, dtype and pad. */
static int group_cmp(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    const kb_case *x = a->c, *y = b->c;
    if (x->shape_name != y->shape_name)
        return x->shape_name < y->shape_name ? -1 : 1;
    for (int d = 0; d < KB_MAX_DIMS; d++)
        if (x->dims[d] != y->dims[d])
            return x->dims[d] < y->dims[d] ? -1 : 1;
    for (int p = 0; p < a->cf->f->n_params && p < KB_MAX_PARAMS; p++)
        if (a->cf->f->params[p].problem && x->params[p] != y->params[p])
            return x->params[p] < y->params[p] ? -1 : 1;
    if (x->dtype != y->dtype)
        return x->dtype < y->dtype ? -1 : 1;
    return (x->pad > y->pad) - (x->pad < y->pad);
}

static void print_group(const kb_run_summary *s, const group *g, FILE *out, int w_shape, int w_cfg)
{
    kb_sb shape, cfg;
    kb_sb_init(&shape);
    kb_sb_init(&cfg);
    const timed *best = &s->t[g->m[0]];
    kb_cols_shape(s->cols.plan, g->cf->f, g->c, &shape);
    kb_cols_problem(g->cf, g->c, &shape);
    kb_cols_config(g->cf, best->item->it.c, &cfg);
    char pad[16] = "", margin[64], us[32];
    if (g->cf->col_pad)
        snprintf(pad, sizeof pad, "%d", g->c->pad);
    margin_text(s, g, margin, sizeof margin);
    snprintf(us, sizeof us, best->median_us >= 100 ? "%.1f" : best->median_us >= 1 ? "%.2f" : "%.3g",
             best->median_us);
    fprintf(out, "  %-*s %-7s %-3s %7d  %-*s %10s  %s\n", w_shape, shape.s, kb_dtype_name(g->c->dtype), pad, g->n,
            w_cfg, *cfg.s ? cfg.s : "-", us, margin);
    kb_sb_free(&shape);
    kb_sb_free(&cfg);
}

/* The groups of family cf: its header, then each in reading order. */
static void print_family(const kb_run_summary *s, group *g, int n, const kb_cols_family *cf, FILE *out)
{
    int first = 0, count = 0;
    for (int k = 0; k < n; k++)   /* gather cf's groups at the front of the rest */
        if (g[k].cf == cf) {
            group t = g[first + count];
            g[first + count] = g[k];
            g[k] = t;
            count++;
        }
    if (count == 0)
        return;
    qsort(g, (size_t)count, sizeof *g, group_cmp);
    int w_shape, w_cfg;
    widths(s, g, count, cf, &w_shape, &w_cfg);
    fprintf(out, "%s\n  %-*s %-7s %-3s %7s  %-*s %10s  %s\n", cf->f->name, w_shape, "shape", "dtype",
            cf->col_pad ? "pad" : "", "configs", w_cfg, "fastest", s->caps & KB_CAP_GPU_TIMER ? "median_us" : "cpu_us",
            "over the next fastest");
    for (int k = 0; k < count; k++)
        print_group(s, &g[k], out, w_shape, w_cfg);
}

static int print_best(const kb_run_summary *s, FILE *out)
{
    group *g;
    int n = make_groups(s, &g);
    if (n > 0) {
        fprintf(out, "\nfastest verified configuration per shape and dtype%s\n",
                s->caps & KB_CAP_GPU_TIMER ? ""
                : s->check_shapes          ? " (emulator: CPU timings of the check shapes - the CPU's ranking, "
                                             "not a GPU's)"
                                           : " (emulator: CPU timings - the CPU's ranking, not a GPU's)");
        int done = 0;
        for (int f = 0; f < s->cols.n; f++) {   /* family by family, in the run's order */
            int before = done;
            for (int k = done; k < n; k++)
                done += g[k].cf == &s->cols.fams[f];
            print_family(s, g + before, n - before, &s->cols.fams[f], out);
        }
    }
    for (int k = 0; g && k < (n < 0 ? s->n_t : n); k++)
        free(g[k].m);
    free(g);
    return n < 0 ? 0 : n;
}

/* "dir/name.html" for "dir/name.jsonl" (or name + ".html"). */
static void html_beside(const char *records, kb_sb *out)
{
    size_t n = strlen(records);
    if (n > 6 && !strcmp(records + n - 6, ".jsonl"))
        n -= 6;
    kb_sb_printf(out, "%.*s.html", (int)n, records);
}

static void print_where(const kb_run_summary *s, FILE *out, const kb_run_summary_where *w)
{
    fprintf(out, "\nrecords in %s (every case's full id, samples, errors)\n", w->records);
    if (w->db)
        fprintf(out, "database   %s (kbench query \"SELECT case_id, median_us FROM results\")\n", w->db);
    if (w->brief)
        return;
    kb_sb html;
    kb_sb_init(&html);
    html_beside(w->records, &html);
    fprintf(out, "next:\n  kbench report %s --format html --out %s    the page: summary, precision, tiles, "
                 "margins, every case\n", w->records, html.s);
    fprintf(out, "  kbench compare %s LATER.jsonl    a later run against this one (ratios, significance)\n",
            w->records);
    if (w->suite)
        fprintf(out, "  kbench tune %s    search the configurations, winners beyond the noise\n", w->suite);
    kb_sb_free(&html);
    (void)s;
}

int kb_run_summary_print(const kb_run_summary *s, FILE *out, const kb_run_summary_where *w)
{
    print_counts(s, out, w->brief);
    int n = w->brief ? 0 : print_best(s, out);
    print_where(s, out, w);
    fflush(out);
    return n;
}
