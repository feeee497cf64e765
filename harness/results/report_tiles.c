/* report_tiles.c - the tile sweep, one chart per shape (see report_tiles.h). */
#include "results/report_tiles.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHART_MAX_W 1280   /* [px] the page's width: fits a 1400-px window beside its margins */
#define CHAR_W 6.0         /* [px] per character of 10-px monospace */
#define LABEL_MAX_W 640    /* [px] a longer configuration is cut (whole in the tooltip) */
#define BAR_W 120          /* [px] the longest bar */
#define VALUE_W 90         /* [px] "12345.6 13.45x" */
#define GAP 12             /* [px] between panels */
#define ROW_H 14           /* [px] one bar */
#define TITLE_H 18         /* [px] a panel's title */

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

/* "<dev>|<family>|<problem text>": what makes a shape. */
static void shape_key(const kb_report_axes *ax, const kb_report_row *r, kb_sb *out)
{
    kb_sb_printf(out, "%d|%s|", r->dev, r->family);
    kb_report_problem_text(ax, r, 1, out);
}

int kb_report_shapes(const kb_report_run *run, const kb_report_axes *ax, int **shape)
{
    int *s = calloc(run->n ? run->n : 1, sizeof *s);
    char **keys = calloc(run->n ? run->n : 1, sizeof *keys);
    int n = 0;
    *shape = s;
    for (size_t i = 0; s && keys && i < run->n; i++) {
        kb_sb k;
        kb_sb_init(&k);
        shape_key(ax, &run->rows[i], &k);
        int j = 0;
        while (j < n && strcmp(keys[j], k.s))
            j++;
        if (j == n)
            keys[n++] = k.s;
        else
            kb_sb_free(&k);
        s[i] = j;
    }
    for (int j = 0; keys && j < n; j++)
        free(keys[j]);
    int ok = s && keys;
    free(keys);
    return ok ? n : -1;
}

static int timed(const kb_report_row *r) { return r->ok && r->have_timing && r->median_us > 0; }

/* One panel: the measured rows of a dtype and pad, fastest first. */
typedef struct {
    const char *dtype;
    int pad;
    int *rows, n, n_all;          /* measured rows (sorted), and all rows of the panel */
    double height;                /* [px] */
} panel;

static int find_panel(panel *p, int n, const kb_report_row *r)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(p[k].dtype, r->dtype) && p[k].pad == r->pad)
            return k;
    return -1;
}

/* The panels of shape s, in dtype order then pad; returns their count (-1 out of memory). */
static int make_panels(const kb_report_run *run, const int *shape, int s, panel **out)
{
    panel *p = calloc(run->n ? run->n : 1, sizeof *p);
    int n = 0;
    *out = p;
    for (size_t i = 0; p && i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (shape[i] != s)
            continue;
        int k = find_panel(p, n, r);
        if (k < 0) {
            kb_dtype dt, dn;
            int at = n;   /* by dtype (the kb_dtype order), then pad */
            while (at > 0 && kb_dtype_parse(p[at - 1].dtype, &dt) == 0 && kb_dtype_parse(r->dtype, &dn) == 0 &&
                   (dt > dn || (dt == dn && p[at - 1].pad > r->pad))) {
                p[at] = p[at - 1];
                at--;
            }
            p[at] = (panel){ r->dtype, r->pad, calloc(run->n, sizeof(int)), 0, 0, 0 };
            if (!p[at].rows)
                return n + 1;
            n++;
            k = at;
        }
        p[k].n_all++;
        if (!timed(r))
            continue;
        int j = p[k].n++;
        while (j > 0 && run->rows[p[k].rows[j - 1]].median_us > r->median_us) {
            p[k].rows[j] = p[k].rows[j - 1];
            j--;
        }
        p[k].rows[j] = (int)i;
    }
    return p ? n : -1;
}

static void bar(FILE *out, const kb_report_run *run, const kb_report_axes *ax, int row, double x, double y,
                double label_w, double vmax, double best)
{
    const kb_report_row *r = &run->rows[row];
    kb_sb cfg;
    kb_sb_init(&cfg);
    kb_report_config_text(ax, r, &cfg);
    size_t fit = (size_t)(label_w / CHAR_W);
    if (cfg.len > fit && fit > 3)
        snprintf(cfg.s + fit - 3, 4, "...");
    double w = BAR_W * r->median_us / vmax;
    char t[48], ratio[48];
    kb_report_num(t, sizeof t, r->median_us);
    kb_report_num(ratio, sizeof ratio, r->median_us / best);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" font-family=\"monospace\">",
            x + label_w - 4, y + 10);
    text(out, cfg.s);
    fprintf(out, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x + label_w, y,
            w < 1 ? 1.0 : w, ROW_H - 3, r->median_us == best ? "#2e7d32" : "#4a7fb5");
    text(out, r->case_id);
    fprintf(out, ": %s us (%s)</title></rect><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s %sx</text>\n", t,
            r->clock, x + label_w + (w < 1 ? 1.0 : w) + 4, y + 10, t, ratio);
    kb_sb_free(&cfg);
}

/* The widest configuration label of the panels [px], at most LABEL_MAX_W. */
static double label_width(const kb_report_run *run, const kb_report_axes *ax, const panel *p, int n)
{
    size_t longest = 8;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < p[k].n; j++) {
            kb_sb cfg;
            kb_sb_init(&cfg);
            kb_report_config_text(ax, &run->rows[p[k].rows[j]], &cfg);
            if (cfg.len > longest) longest = cfg.len;
            kb_sb_free(&cfg);
        }
    double w = longest * CHAR_W + 8;
    return w > LABEL_MAX_W ? LABEL_MAX_W : w;
}

static void draw_panel(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const panel *p, double x,
                       double y, double label_w)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-weight=\"bold\">", x, y + 12);
    text(out, p->dtype);
    fprintf(out, ", pad %d", p->pad);
    if (p->n < p->n_all)
        fprintf(out, " (%d of %d measured)", p->n, p->n_all);
    fputs("</text>\n", out);
    if (p->n == 0)
        return;
    double best = run->rows[p->rows[0]].median_us, vmax = run->rows[p->rows[p->n - 1]].median_us;
    for (int j = 0; j < p->n; j++)
        bar(out, run, ax, p->rows[j], x, y + TITLE_H + j * ROW_H, label_w, vmax, best);
}

static void draw(FILE *out, const kb_report_run *run, const kb_report_axes *ax, panel *p, int n, const char *family)
{
    double label_w = label_width(run, ax, p, n), panel_w = label_w + BAR_W + VALUE_W;
    int cols = (int)((CHART_MAX_W + GAP) / (panel_w + GAP));
    cols = cols < 1 ? 1 : cols > n ? n : cols;
    double height = 0, row_h = 0;
    for (int k = 0; k < n; k++) {
        double h = TITLE_H + p[k].n * ROW_H + 10;
        row_h = h > row_h ? h : row_h;
        if (k % cols == cols - 1 || k == n - 1) {
            height += row_h;
            row_h = 0;
        }
    }
    double width = cols * panel_w + (cols - 1) * GAP;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"tiles-%s\" width=\"%.0f\" "
                 "height=\"%.0f\">\n", family, width, height);
    double y = 0;
    row_h = 0;
    for (int k = 0; k < n; k++) {
        double h = TITLE_H + p[k].n * ROW_H + 10;
        draw_panel(out, run, ax, &p[k], (k % cols) * (panel_w + GAP), y, label_w);
        row_h = h > row_h ? h : row_h;
        if (k % cols == cols - 1) {
            y += row_h;
            row_h = 0;
        }
    }
    fputs("</svg>\n", out);
}

void kb_report_tiles_chart(const kb_report_run *run, const kb_report_axes *ax, const int *shape, int s, FILE *out)
{
    panel *p;
    int n = make_panels(run, shape, s, &p);
    int first = -1, measured = 0;
    for (size_t i = 0; i < run->n && first < 0; i++)
        if (shape[i] == s)
            first = (int)i;
    for (int k = 0; k < n; k++)
        measured += p[k].n;
    if (first >= 0) {
        const kb_report_row *r = &run->rows[first];
        kb_sb head;
        kb_sb_init(&head);
        kb_report_problem_text(ax, r, 1, &head);
        fprintf(out, "<h3 id=\"tiles-%d\">", s);
        text(out, r->family);
        fputc(' ', out);
        text(out, head.s);
        if (r->dev >= 0 && run->n_devs > 1) {
            fputs(" on ", out);
            text(out, run->devs[r->dev].name);
        }
        fputs("</h3>\n", out);
        kb_sb_free(&head);
        if (measured > 0)
            draw(out, run, ax, p, n, r->family);
        else
            fputs("<p>No configuration of this shape was measured (see the case table for why).</p>\n", out);
    }
    for (int k = 0; p && k < n; k++)
        free(p[k].rows);
    free(p);
}
