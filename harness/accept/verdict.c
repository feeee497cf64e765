/* verdict.c - one GPU's acceptance verdict from its records (see verdict.h). */
#include "accept/verdict.h"

#include "backend/telemetry.h"
#include "engine/case.h"
#include "results/record_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = { "PASS", "SKIP", "WARN", "FAIL", "NOT CHECKED" };
_Static_assert(sizeof status_names / sizeof status_names[0] == KB_ACC_STATUS_COUNT, "one name per status");

const char *kb_acc_status_name(kb_acc_status s) { return s < KB_ACC_STATUS_COUNT ? status_names[s] : "?"; }

int kb_acc_status_parse(const char *s)
{
    for (int i = 0; i < KB_ACC_STATUS_COUNT; i++)
        if (s && !strcmp(s, status_names[i]))
            return i;
    return -1;
}

int kb_acc_test_is_health(kb_acc_test t)
{
    return t == KB_ACC_CORRECTNESS || t == KB_ACC_ECC || t == KB_ACC_ROW_REMAP || t == KB_ACC_PCIE;
}

int kb_acc_exit_code(const kb_acc_status *status, const kb_acc_test *test, int n)
{
    int health = 0, slow = 0, checked = 0;
    for (int i = 0; i < n; i++) {
        if (status[i] == KB_ACC_FAIL && kb_acc_test_is_health(test[i]))
            health = 1;
        else if (status[i] == KB_ACC_FAIL)
            slow = 1;
        if (status[i] != KB_ACC_SKIP)
            checked = 1;
    }
    if (health)
        return KB_EXIT_INCORRECT;
    if (slow)
        return KB_EXIT_SLOW;
    return checked ? KB_EXIT_OK : KB_EXIT_SETUP;
}

/* ---- record fields ---- */

static const char *str_at(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static const char *clock_of(json_t *rec) { return str_at(json_object_get(rec, "timing"), "clock"); }

/* The record is of family fam (and of variant var unless NULL) and was measured ok. */
static int ok_case(json_t *rec, const char *fam, const char *var)
{
    kb_case_status st;
    return kb_record_status(rec, &st) == 0 && st == KB_CASE_OK && !strcmp(str_at(rec, "family"), fam) &&
           (!var || !strcmp(str_at(rec, "variant"), var));
}

static void set_reason(kb_acc_result *r, kb_acc_status st, const char *fmt, const char *a)
{
    r->status = st;
    snprintf(r->reason, sizeof r->reason, fmt, a);
}

/* ---- correctness ---- */

static void eval_correctness(json_t *records, kb_acc_result *r)
{
    int n = 0, ok = 0, skipped = 0, bad = 0;
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        kb_case_status st;
        if (kb_record_status(rec, &st) != 0)
            continue;
        n++;
        ok += st == KB_CASE_OK;
        skipped += st == KB_CASE_SKIPPED;
        if (kb_case_status_failed(st) && bad++ == 0)
            snprintf(r->detail, sizeof r->detail, "%s: %s", str_at(rec, "case_id"), kb_case_status_name(st));
    }
    r->have_value = 1;
    r->value = ok;
    if (bad) {
        r->status = KB_ACC_FAIL;
        snprintf(r->reason, sizeof r->reason, "%d of %d cases failed verification or did not run (first: %s)", bad,
                 n, r->detail);
    } else if (ok) {
        r->status = KB_ACC_PASS;
        snprintf(r->reason, sizeof r->reason, "%d cases verified against the CPU reference, %d skipped with their "
                 "reason", ok, skipped);
    } else {
        set_reason(r, KB_ACC_SKIP, "no case ran%s", n ? " (every case was skipped)" : "");
    }
}

/* ---- performance floors and limits ---- */

double kb_acc_launch_us(json_t *lo)
{
    json_t *e = json_object_get(lo, "eager_us"), *h = json_object_get(lo, "host_enqueue_us"),
           *n = json_object_get(lo, "launches");
    double gpu = json_is_number(e) ? json_number_value(e) : NAN;
    double host = json_is_number(h) ? json_number_value(h) * (json_is_integer(n) ? (double)json_integer_value(n) : 1)
                                    : NAN;
    if (isnan(host))
        return gpu;
    return isnan(gpu) || host > gpu ? host : gpu;
}

/* The value of one record for test t: GB/s, TFLOPS or the per-launch time; NAN when none. */
static double value_of(json_t *rec, kb_acc_test t)
{
    kb_derived d;
    if (t == KB_ACC_LAUNCH)
        return kb_acc_launch_us(json_object_get(rec, "launch_overhead"));
    if (!kb_record_derived(rec, &d))
        return NAN;
    return t == KB_ACC_MEM_BW ? d.gbps : d.tflops;
}

/* The record test t reads: ceiling/copy, ceiling/launch (eager), gemm of the test's dtype. */
static int selects(json_t *rec, kb_acc_test t)
{
    if (t == KB_ACC_MEM_BW)
        return ok_case(rec, "ceiling", "copy");
    if (t == KB_ACC_LAUNCH)
        return ok_case(rec, "ceiling", "launch") && !strcmp(str_at(rec, "launch"), "eager");
    int dt = kb_acc_test_dtype(t);
    return dt >= 0 && ok_case(rec, "gemm", NULL) && !strcmp(str_at(rec, "dtype"), kb_dtype_name((kb_dtype)dt));
}

/* The reason of a case test t would have read had it run (the first skipped one). */
static void why_none(json_t *records, kb_acc_test t, kb_acc_result *r)
{
    size_t i;
    json_t *rec;
    int dt = kb_acc_test_dtype(t);
    json_array_foreach(records, i, rec) {
        const char *fam = str_at(rec, "family"), *var = str_at(rec, "variant");
        int mine = t == KB_ACC_MEM_BW   ? !strcmp(fam, "ceiling") && !strcmp(var, "copy")
                   : t == KB_ACC_LAUNCH ? !strcmp(fam, "ceiling") && !strcmp(var, "launch")
                                        : !strcmp(fam, "gemm") && !strcmp(str_at(rec, "dtype"),
                                                                          kb_dtype_name((kb_dtype)dt));
        if (mine && *str_at(rec, "reason")) {
            snprintf(r->reason, sizeof r->reason, "no case ran: %s (%s)", str_at(rec, "reason"),
                     str_at(rec, "case_id"));
            return;
        }
    }
    snprintf(r->reason, sizeof r->reason, "the accept suite has no ok case for this test");
}

/* The reference of a floor: the spec's number, or the device's peak. 0 when unknown. */
static double reference_of(const kb_acc_threshold *th, const kb_peaks *peaks, kb_acc_test t, kb_acc_result *r)
{
    snprintf(r->source, sizeof r->source, "%s", th->source);
    if (!th->from_peak)
        return th->reference;
    if (!peaks || peaks->no_roof)
        return 0;
    const char *how = NULL;
    double v = t == KB_ACC_MEM_BW ? kb_peaks_gbps(peaks, &how)
                                  : kb_peaks_tflops(peaks, (kb_dtype)kb_acc_test_dtype(t), &how);
    if (v > 0)
        snprintf(r->source, sizeof r->source, "%s peak of %s (%s)", how ? how : "?", peaks->device, th->source);
    return v;
}

/* Compare r->value with the spec's threshold. */
static void judge(const kb_acc_spec *s, const kb_peaks *peaks, kb_acc_test t, kb_acc_result *r)
{
    const kb_acc_threshold *th = &s->t[t];
    const char *unit = kb_acc_test_unit(t);
    if (!th->have) {
        set_reason(r, KB_ACC_SKIP, "spec %s sets no threshold for this test", s->name);
        return;
    }
    if (kb_acc_test_kind(t) == KB_ACC_KIND_LIMIT) {
        r->threshold = th->limit;
        snprintf(r->source, sizeof r->source, "%s", th->source);
    } else {
        r->reference = reference_of(th, peaks, t, r);
        r->fraction = th->fraction;
        r->threshold = r->reference * th->fraction;
        if (!(r->reference > 0)) {
            set_reason(r, KB_ACC_SKIP, "no peak is known for %s", s->sku);
            return;
        }
    }
    r->have_threshold = 1;
    int pass = kb_acc_test_kind(t) == KB_ACC_KIND_LIMIT ? r->value <= r->threshold : r->value >= r->threshold;
    r->status = pass ? KB_ACC_PASS : KB_ACC_FAIL;
    snprintf(r->reason, sizeof r->reason, "%.4g %s %s %s %.4g %s", r->value, unit, pass ? "meets" : "misses",
             kb_acc_test_kind(t) == KB_ACC_KIND_LIMIT ? "the limit" : "the floor", r->threshold, unit);
}

static void eval_rate(const kb_acc_spec *s, const kb_peaks *peaks, json_t *records, kb_acc_test t,
                      kb_acc_result *r)
{
    int lower_better = kb_acc_test_kind(t) == KB_ACC_KIND_LIMIT;
    json_t *best = NULL;
    double bv = NAN;
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        double v = selects(rec, t) ? value_of(rec, t) : NAN;
        if (isfinite(v) && (!best || (lower_better ? v < bv : v > bv))) {
            best = rec;
            bv = v;
        }
    }
    if (!best) {
        r->status = KB_ACC_SKIP;
        why_none(records, t, r);
        return;
    }
    r->have_value = 1;
    r->value = bv;
    snprintf(r->clock, sizeof r->clock, "%s", clock_of(best));
    snprintf(r->detail, sizeof r->detail, "%s", str_at(best, "case_id"));
    if (strcmp(r->clock, "gpu")) {
        set_reason(r, KB_ACC_SKIP, "emulator: CPU timings (%s clock), no GPU threshold applies", r->clock);
        return;
    }
    judge(s, peaks, t, r);
}

/* ---- telemetry ---- */

static void eval_clocks(json_t *records, kb_acc_result *r)
{
    int n = 0, throttled = 0;
    double max_power = 0;
    size_t i;
    json_t *rec;
    const char *why = NULL;
    json_array_foreach(records, i, rec) {
        json_t *tel = json_object_get(rec, "telemetry");
        if (!ok_case(rec, "gemm", NULL) || !json_is_object(tel))
            continue;
        if (!json_is_true(json_object_get(tel, "available"))) {
            why = why ? why : str_at(tel, "why");
            continue;
        }
        n++;
        double p = json_number_value(json_object_get(tel, "power_w"));
        max_power = p > max_power ? p : max_power;
        /* the reading after the case, or the samples themselves kept throttled at the timeout */
        int kept = json_is_true(json_object_get(json_object_get(rec, "timing"), "throttled"));
        if ((json_is_true(json_object_get(tel, "throttled")) || kept) && throttled++ == 0)
            snprintf(r->detail, sizeof r->detail, "%s: SM clock %lld of %lld MHz%s", str_at(rec, "case_id"),
                     json_integer_value(json_object_get(tel, "sm_clock_mhz")),
                     json_integer_value(json_object_get(tel, "sm_clock_max_mhz")),
                     kept ? ", its samples kept throttled at the timeout" : "");
    }
    if (!n) {
        set_reason(r, KB_ACC_SKIP, "no telemetry during the GEMM cases: %s",
                   why && *why ? why : "the backend reads none (the emulator has no NVML)");
        return;
    }
    r->have_value = 1;
    r->value = throttled;
    if (throttled) {
        r->status = KB_ACC_WARN;
        snprintf(r->reason, sizeof r->reason, "%d of %d GEMM cases throttled (thermal or hardware slowdown, or SM "
                 "clock under %.0f%% of max; first: %s)", throttled, n, 100 * KB_TEL_MIN_CLOCK_FRACTION, r->detail);
    } else {
        r->status = KB_ACC_PASS;
        snprintf(r->reason, sizeof r->reason, "no throttling in %d GEMM cases (board power up to %.0f W)", n,
                 max_power);
    }
}

void kb_acc_evaluate(const kb_acc_spec *s, const kb_peaks *peaks, json_t *records, kb_acc_verdict *out)
{
    memset(out, 0, sizeof *out);
    eval_correctness(records, &out->r[KB_ACC_CORRECTNESS]);
    for (int t = KB_ACC_MEM_BW; t <= KB_ACC_LAUNCH; t++)
        eval_rate(s, peaks, records, (kb_acc_test)t, &out->r[t]);
    eval_clocks(records, &out->r[KB_ACC_CLOCKS]);
    for (int t = KB_ACC_ECC; t <= KB_ACC_PCIE; t++)
        set_reason(&out->r[t], KB_ACC_SKIP, "%s", "not read: no NVML health reading was judged "
                   "(accept/health.h judges one)");
    kb_acc_verdict_finish(out);
}

void kb_acc_verdict_not_checked(const char *why, kb_acc_verdict *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->not_checked, sizeof out->not_checked, "%s", why);
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
        set_reason(&out->r[t], KB_ACC_SKIP, "not checked: %s", why);
    kb_acc_verdict_finish(out);
}

void kb_acc_verdict_finish(kb_acc_verdict *out)
{
    out->worst = KB_ACC_NOT_CHECKED;   /* when no test ran; else the worst of those that did */
    out->gpu_thresholds = 0;
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        kb_acc_status st = out->r[t].status;
        if (st != KB_ACC_SKIP && (out->worst == KB_ACC_NOT_CHECKED || st > out->worst))
            out->worst = st;
        if (!strcmp(out->r[t].clock, "gpu"))
            out->gpu_thresholds = 1;
    }
    if (out->worst != KB_ACC_NOT_CHECKED)
        out->not_checked[0] = 0;
    else if (!out->not_checked[0])
        snprintf(out->not_checked, sizeof out->not_checked, "every test was SKIP (each says why): nothing was checked");
}
