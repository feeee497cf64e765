/* report_rows.h - a recorded run as report rows, and the pieces every report writer
 * shares (numbers, dims, verification text, precision groups, ceilings, XML escaping).
 * Depends on nothing above the records: the writers (report_<format>.h) build on it,
 * the dispatcher (report.h) on them.
 *
 * Reports read only the JSON Lines records (record.h), never console text. A run is
 * loaded once into rows (one per record, in file order) grouped by device; each
 * writer formats those rows. Emulator rows carry CPU times: every report says so and
 * none draws a GPU roofline for them.
 */
#ifndef KB_REPORT_ROWS_H
#define KB_REPORT_ROWS_H

#include <jansson.h>
#include <stdio.h>

#include "core/precision.h"
#include "engine/case.h"
#include "engine/derive.h"

/* A device of the run (records grouped by name + uuid). */
typedef struct {
    char name[128];
    char uuid[64];
    int sm;
    int emulator;              /* 1: CPU times, no roofline */
    int n_rows;
} kb_report_device;

/* One case as the reports show it. Strings are borrowed from the record (never NULL:
 * "" when absent); numbers are meaningful where their have_* flag says so. */
typedef struct {
    json_t *rec;
    int dev;                   /* index into kb_report_run.devs, -1 without a device block */
    const char *case_id, *family, *variant, *dtype, *status, *reason, *clock, *launch;
    int status_known;          /* status is a kb_case_status word: st is meaningful */
    kb_case_status st;
    int ok;                    /* status "ok" */
    int failed;                /* a failed status (kb_case_status_failed), or an unknown word */
    int skipped;
    int verified;              /* a verify block is present */
    long long n_checked, n_bad;
    int have_err;              /* max_abs_err is a finite number (null: NaN or inf) */
    double max_abs_err, max_rel_err;
    int have_acc;              /* an accuracy block (against the unquantised inputs) is present */
    double acc_rel_fro, acc_max_rel, acc_snr_db;   /* snr_db: INFINITY when the record says exact (null) */
    int recipe;                /* kb_recipe of params.scale (tensor when absent or unknown) */
    const char *dist;          /* params.dist ("uniform" when absent) */
    int have_timing;           /* timing block with a median */
    double median_us, cv;
    int samples;
    double wall_ms;            /* [ms] 0 when absent */
    kb_derived d;              /* rates (d.have_rates), roofline (d.have_roof) */
    const char *shape;         /* the shape preset's name; "" for inline dims or an older record */
    int pad;                   /* [elements] */
    double noise;              /* relative standard error of the median; NAN when absent */
} kb_report_row;

typedef struct {
    char *source;              /* the path or run id it was loaded from */
    json_t **recs;             /* owned */
    size_t n;
    kb_report_row *rows;       /* [n] */
    kb_report_device *devs;
    int n_devs;
    const char *run_id;        /* of the first record ("" when none) */
    const char *time;          /* of the first record ("" when none) */
} kb_report_run;

/* Load RUN: a JSON Lines file, or else a run id looked up in every *.jsonl of
 * results_dir (NULL: "results"), keeping the records of that run. KB_ERR_INPUT when
 * neither exists or a file is malformed, message in err. Free with kb_report_run_free. */
kb_status kb_report_run_load(const char *run, const char *results_dir, kb_report_run *out, kb_sb *err);

/* Refuse the output path out when it is a file kb_report_run_load(run, results_dir) would
 * read: run itself, or, for a run id, any *.jsonl of results_dir (all are read to find the
 * id). what names the run ("the run", "run A"). KB_OK (also for a NULL out), or
 * KB_ERR_INPUT with err naming both (core/output.h's kb_out_not_input). */
kb_status kb_report_run_not_output(const char *run, const char *results_dir, const char *out, const char *what,
                                   kb_sb *err);

/* Build a run from records (takes ownership of recs, an array from kb_record_load). */
kb_status kb_report_run_from(json_t **recs, size_t n, const char *source, kb_report_run *out);

void kb_report_run_free(kb_report_run *r);

/* The parts of a report, each a section of the HTML page and the markdown (kbench report
 * --section NAME narrows a report to one): */
typedef enum {
    KB_SECTION_ALL = 0,
    KB_SECTION_SUMMARY,        /* counts by status and skip reason; the best per shape and dtype */
    KB_SECTION_BEST,           /* every problem's fastest configuration and its margin, listed */
    KB_SECTION_PRECISION,      /* the precision comparison */
    KB_SECTION_TILES,          /* per shape, every configuration's time, per dtype and pad */
    KB_SECTION_LAUNCH,         /* graph vs eager, case by case */
    KB_SECTION_MARGINS,        /* max error / tolerance per verified case */
    KB_SECTION_ROOFLINE,       /* GPU devices: the roofline and its ceilings */
    KB_SECTION_CASES,          /* the full case table */
    KB_SECTION_COUNT
} kb_report_section;

/* "all", "summary", "best", "precision", "tiles", "launch", "margins", "roofline", "cases". */
extern const char *const kb_report_section_names[KB_SECTION_COUNT + 1];   /* NULL-terminated */
/* Their headings: "Summary", "Fastest configurations", ... */
extern const char *const kb_report_section_titles[KB_SECTION_COUNT];
/* 0 with *out set, or -1 for an unknown name. */
int kb_report_section_parse(const char *s, kb_report_section *out);

/* ---- shared by the writers ---- */

/* Precision comparison: one shape and input distribution of a GEMM or attention family on
 * one device; per dtype and scaling recipe the fastest ok row of kbench's own kernels (-1
 * where none), and the vendor library's row of the same shape, dtype and recipe
 * (gemm/cublaslt, attention/cudnn: a variant without a kernel entry): its fastest ok row,
 * else one that did not run (skipped, with its reason), -1 where none was planned. Kept
 * when two or more (dtype, recipe) rows ran, or a vendor row was planned beside one. */
typedef struct {
    int rows[KB_DT_COUNT][KB_RECIPE_COUNT];
    int vendor[KB_DT_COUNT][KB_RECIPE_COUNT];
    int first;                 /* a row of the group, for its family, dims, distribution and device */
} kb_precision_group;

/* The groups of run in order of first appearance (*out malloc'ed, caller frees).
 * Returns the count, or -1 when out of memory. */
int kb_report_precision_groups(const kb_report_run *run, kb_precision_group **out);

/* The heading of a precision group: family, the shape preset and its dims, pad, the
 * problem params of its rows, the input distribution and the device ("gemm qkv_prefill
 * 48x96x64, pad 0, layout=nt, dist=outliers on NVIDIA H100"), appended to out. */
void kb_report_precision_title(const kb_report_run *run, const kb_precision_group *g, kb_sb *out);

/* 1 when rows a and b (of one family) agree on every problem param (kb_param.problem:
 * layout, kind, causal, ...): what they compute is the same. */
int kb_report_same_problem_params(const kb_report_row *a, const kb_report_row *b);

/* 1 when the row is a vendor library's (its family's variant has no kernel entry). */
int kb_report_row_is_vendor(const kb_report_row *row);

/* The measured ceilings the records of device dev were scored against: the measured
 * bandwidth (*gbps, 0: none) and up to max measured instruction ceilings (kinds[i],
 * tflops[i]: each path whose rate was measured). Returns the number of kinds. */
int kb_report_measured(const kb_report_run *run, int dev, double *gbps, char kinds[][40], double *tflops, int max);

/* "4096x4096x4096" from a record's dims object (in its order). */
void kb_report_dims_text(const kb_report_row *row, kb_sb *out);

/* A number with a precision that suits its size: "2598", "190.1", "12.35", "1.234",
 * "0.01234", "1.1e-05"; "" for a non-finite value. */
void kb_report_num(char *buf, size_t n, double v);

/* "ok" / "13 bad" / "" and the max error ("1.1e-02", "NaN" when non-finite). */
void kb_report_verified_text(const kb_report_row *row, char *buf, size_t n);

/* The roofline ceilings recorded for device dev: per dtype compute [TFLOPS] (0 where no
 * row of that dtype had one), bandwidth [GB/s] (0: none) and their source ("datasheet",
 * "clock", or NULL). From the records' derived blocks only. */
void kb_report_ceilings(const kb_report_run *run, int dev, double tflops[KB_DT_COUNT], double *gbps,
                        const char **source);

/* Write s escaped for XML/HTML text and attribute values: & < > " ' as entities, and
 * control characters XML 1.0 forbids (all below 0x20 but tab, LF, CR) as '?'. */
void kb_report_xml_text(FILE *out, const char *s);

/* What every report says about an emulator device, in one sentence or two. */
#define KB_REPORT_EMU_NOTE \
    "Emulator run: these are CPU times of the emulator executing the kernel source on this " \
    "machine's CPU, not GPU times, and the rates are CPU rates. No GPU roofline applies: " \
    "%roof and bound are left empty and no roofline is drawn."

/* Counts of rows by status word, "13 ok, 1 wrong, 1 skipped" (appended to out). */
void kb_report_summary(const kb_report_run *run, kb_sb *out);

#endif /* KB_REPORT_ROWS_H */
