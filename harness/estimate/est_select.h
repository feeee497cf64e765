/* est_select.h - what `kbench estimate` shows (issue 26 item 4), whatever the format
 * (est_report.h): the output options, the rows selected (sorted, the top N) and the
 * summary per family (cases, total estimated time, median % of roofline, the roof that
 * limits most of the family's time). Every figure is an ESTIMATE. */
#ifndef KB_EST_SELECT_H
#define KB_EST_SELECT_H

#include "estimate/est_suite.h"

typedef enum { KB_EST_TEXT = 0, KB_EST_JSON, KB_EST_CSV, KB_EST_FORMAT_COUNT } kb_est_format;
/* The row order: the plan's; slowest first (est_us, descending); furthest from the roofline
 * first (% of roofline, ascending). */
typedef enum { KB_EST_SORT_PLAN = 0, KB_EST_SORT_TIME, KB_EST_SORT_ROOF, KB_EST_SORT_COUNT } kb_est_sort;

extern const char *const kb_est_format_names[]; /* "text", "json", "csv", NULL */
extern const char *const kb_est_sort_names[];   /* "plan", "time", "roof", NULL */

/* Index of name in a NULL-terminated table, -1 when absent. */
int kb_est_name_index(const char *const *names, const char *name);

typedef struct {
    const kb_est_target *x;    /* the GPU modelled */
    int sm;                    /* the architecture the kernels were compiled for */
    const char *ceilings_note; /* where measured ceilings came from ("": none, the datasheet x fraction) */
    kb_est_format format;
    kb_est_sort sort; /* with top > 0 and sort PLAN: TIME */
    int top;          /* > 0: only that many estimated rows, after sorting */
    int quiet;        /* text: no case rows, the header and the summary only */
} kb_est_report_opts;

/* One family's summary over every estimated row of it (not only the top N). */
typedef struct {
    int family; /* index into kb_families */
    int cases;
    double total_us;       /* [us] sum of the estimates */
    double median_pct;     /* [%] median % of roofline */
    kb_est_roof dominant;  /* the limit with the largest share of total_us */
    double dominant_share; /* [%] of total_us */
} kb_est_family_sum;

/* The per-family summaries of rows in order of first appearance; *out malloc'ed (caller
 * frees). Returns the count, -1 when out of memory. */
int kb_est_summarise(const kb_est_rows *rows, kb_est_family_sum **out);

/* The indices of the estimated rows to show, sorted and cut as o says; *out malloc'ed
 * (caller frees). Returns the count, -1 when out of memory. */
int kb_est_select(const kb_est_rows *rows, const kb_est_report_opts *o, size_t **out);

#endif /* KB_EST_SELECT_H */
