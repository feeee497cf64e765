/* record_json.c - the record format (see record_json.h): block by block from the typed
 * case result. */
#include "results/record_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- JSON value helpers: never NULL for a representable value, never invalid JSON ---- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF, as jansson does. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* A JSON string of the n bytes at s, invalid UTF-8 bytes replaced by '?'. */
static json_t *jstrn(const char *s, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; ) {
        size_t k = s[i] ? utf8_seq((const unsigned char *)s + i, n - i) : 0;
        if (k == 0) { copy[o++] = '?'; i++; continue; }  /* NUL too: C strings end there */
        memcpy(copy + o, s + i, k);
        o += k;
        i += k;
    }
    json_t *j = json_stringn(copy, o);
    free(copy);
    return j;
}

static json_t *jstr(const char *s) { return s ? jstrn(s, strlen(s)) : json_null(); }
static json_t *jnum(double d) { return isfinite(d) ? json_real(d) : json_null(); }
static json_t *jint(long long v) { return json_integer(v); }
static json_t *jint_known(long long v) { return v < 0 ? json_null() : json_integer(v); }

/* A number that may be non-finite, kept as "nan" / "inf" / "-inf". */
static json_t *jnum_or_word(double d)
{
    if (isfinite(d)) return json_real(d);
    return json_string(isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
}

/* Set obj[key] = v, remembering an allocation failure in *bad (v NULL). */
static void put(json_t *obj, const char *key, json_t *v, int *bad)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *bad = 1;
}

static json_t *compile_log_json(const char *log)
{
    size_t n = strlen(log);
    if (n <= KB_RECORD_LOG_MAX)
        return jstrn(log, n);
    size_t head = KB_RECORD_LOG_MAX * 3 / 4, tail = KB_RECORD_LOG_MAX - head;
    kb_sb b;
    kb_sb_init(&b);
    kb_sb_append(&b, log, head);
    kb_sb_printf(&b, "\n[... %zu bytes cut ...]\n", n - head - tail);
    kb_sb_append(&b, log + n - tail, tail);
    /* a multi-byte character cut at either edge becomes '?' in jstrn */
    json_t *j = jstrn(b.s, b.len);
    kb_sb_free(&b);
    return j;
}

void kb_record_time_now(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A new object, remembering an allocation failure in *bad (then NULL: put() notes it). */
static json_t *obj(int *bad)
{
    json_t *o = json_object();
    if (!o)
        *bad = 1;
    return o;
}

static void case_fields(json_t *o, const kb_case_result *r, int *bad)
{
    const kb_family *f = r->family;
    const kb_case *c = r->c;
    int v_ok = f && c && c->variant >= 0 && c->variant < f->n_variants;
    put(o, "family", jstr(f ? f->name : NULL), bad);
    put(o, "variant", jstr(v_ok ? f->variants[c->variant].name : NULL), bad);
    put(o, "dtype", c ? jstr(kb_dtype_name(c->dtype)) : json_null(), bad);
    if (f && c) {
        json_t *dims = json_object(), *params = json_object();
        if (!dims || !params) { *bad = 1; json_decref(dims); json_decref(params); return; }
        for (int i = 0; i < f->n_dims && i < KB_MAX_DIMS; i++)
            put(dims, f->dims[i], jint(c->dims[i]), bad);
        for (int i = 0; i < f->n_params && i < KB_MAX_PARAMS; i++) {
            const kb_param *p = &f->params[i];
            if (!kb_param_applies(f, i, c->variant))
                continue;
            int64_t val = c->params[i], n_choices = 0;
            if (p->choices)
                while (p->choices[n_choices]) n_choices++;
            if (p->choices && val >= 0 && val < n_choices)
                put(params, p->name, jstr(p->choices[val]), bad);
            else
                put(params, p->name, jint(val), bad);
        }
        put(o, "dims", dims, bad);
        put(o, "params", params, bad);
    } else {
        put(o, "dims", json_null(), bad);
        put(o, "params", json_null(), bad);
    }
    put(o, "pad", c ? jint(c->pad) : json_null(), bad);
    put(o, "launch", c ? jstr(kb_launch_name(c->launch)) : json_null(), bad);
    put(o, "seed", c ? jint(c->seed) : json_null(), bad);
    put(o, "check_shape", json_boolean(r->check_shape), bad);
}


static json_t *device_json(const kb_device_info *d, int *bad)
{
    if (!d)
        return json_null();
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "name", jstr(d->name), bad);
    put(j, "uuid", jstr(d->uuid), bad);
    put(j, "pci_bus_id", jstr(d->pci_bus_id), bad);
    put(j, "sm", jint(d->sm), bad);
    /* the target's compute capability, and its name: sm_90a and sm_90 are both 90 */
    put(j, "target_sm", jint(kb_arch_cc(kb_target_sm(d)) ? kb_arch_cc(kb_target_sm(d)) : kb_target_sm(d)), bad);
    put(j, "target_arch", jstr(kb_arch_name(kb_target_sm(d))), bad);
    put(j, "driver_version", d->driver_version ? jint(d->driver_version) : json_null(), bad);
    put(j, "emulator", json_boolean(!(d->caps & KB_CAP_GPU_TIMER)), bad);
    return j;
}

/* The vendor library call of the case, as it can be replayed: the library and its version,
 * the serialised cuBLASLt algorithm (8 words, hex) with its configuration, or cuDNN's engine. */
static json_t *vendor_json(const kb_case_result *r, int *bad)
{
    if (!r->vendor.done)
        return json_null();
    const kb_vendor_info *v = &r->vendor.info;
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "library", jstr(v->library), bad);
    put(j, "version", jint(v->version), bad);
    put(j, "candidates", jint(v->candidates), bad);
    put(j, "workspace_bytes", jnum((double)v->workspace_bytes), bad);
    put(j, "engine", v->engine[0] ? jstr(v->engine) : json_null(), bad);
    if (!v->have_algo) {
        put(j, "algo", json_null(), bad);
        return j;
    }
    char words[8 * 17];
    for (int i = 0; i < 8; i++)
        snprintf(words + 17 * i, 18, "%016llx%s", (unsigned long long)v->algo[i], i < 7 ? ":" : "");
    put(j, "algo", jstr(words), bad);
    put(j, "algo_id", jint_known(v->algo_id), bad);
    put(j, "tile", jint_known(v->tile), bad);
    put(j, "stages", jint_known(v->stages), bad);
    put(j, "splitk", jint_known(v->splitk), bad);
    put(j, "reduction", jint_known(v->reduction), bad);
    put(j, "swizzle", jint_known(v->swizzle), bad);
    put(j, "custom", jint_known(v->custom), bad);
    put(j, "waves", v->waves > 0 ? jnum(v->waves) : json_null(), bad);
    return j;
}

static json_t *verify_json(const kb_case_result *r, int *bad)
{
    if (!r->verify.done)
        return json_null();
    const kb_verify *v = &r->verify.v;
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "n", jint(v->n), bad);
    put(j, "n_bad", jint(v->n_bad), bad);
    put(j, "first_bad", jint(v->first_bad), bad);
    put(j, "max_abs_err", jnum(v->max_abs_err), bad);
    put(j, "max_rel_err", jnum(v->max_rel_err), bad);
    put(j, "max_err_ratio", jnum(v->max_err_ratio), bad);
    put(j, "atol", jnum(v->atol), bad);
    put(j, "rtol", jnum(v->rtol), bad);
    put(j, "got_at_bad", v->n_bad ? jnum_or_word(v->got_at_bad) : json_null(), bad);
    put(j, "want_at_bad", v->n_bad ? jnum_or_word(v->want_at_bad) : json_null(), bad);
    put(j, "guard_bad", jint(v->guard_bad), bad);
    return j;
}

/* The accuracy block: null unless the family measured it (kb_verify acc_n > 0). */
static json_t *accuracy_json(const kb_case_result *r, int *bad)
{
    const kb_verify *v = &r->verify.v;
    if (!r->verify.done || v->acc_n <= 0)
        return json_null();
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "n", jint(v->acc_n), bad);
    put(j, "rel_fro_err", jnum(v->acc_rel_fro), bad);
    put(j, "max_rel_err", jnum(v->acc_max_rel), bad);
    put(j, "snr_db", jnum(v->acc_snr_db), bad);
    put(j, "reference", jstr("fp64 result of the unquantised real-valued inputs"), bad);
    return j;
}

static json_t *resources_json(const kb_case_result *r, int *bad)
{
    if (!r->compile.have_resources)
        return json_null();
    const kb_resources *res = &r->compile.res;
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "registers", jint_known(res->registers), bad);
    put(j, "spill_store_bytes", jint_known(res->spill_store_bytes), bad);
    put(j, "spill_load_bytes", jint_known(res->spill_load_bytes), bad);
    put(j, "stack_bytes", jint_known(res->stack_bytes), bad);
    put(j, "static_shmem_bytes", jint_known(res->static_shmem_bytes), bad);
    put(j, "max_threads", jint_known(res->max_threads), bad);
    return j;
}

static json_t *timing_json(const kb_case_result *r, int *bad)
{
    if (!r->measure.done)
        return json_null();
    const kb_measurement *m = &r->measure.m;
    json_t *j = obj(bad), *s = json_array();
    if (!j || !s) {
        *bad = 1;
        json_decref(j);
        json_decref(s);
        return NULL;
    }
    put(j, "clock", jstr(r->measure.clock), bad);
    put(j, "timing_method", jstr(r->measure.method), bad);
    put(j, "samples", jint(m->n), bad);
    put(j, "median_us", jnum(m->st.median), bad);
    put(j, "mean_us", jnum(m->st.mean), bad);
    put(j, "min_us", jnum(m->st.min), bad);
    put(j, "max_us", jnum(m->st.max), bad);
    put(j, "p10_us", jnum(m->st.p10), bad);
    put(j, "p90_us", jnum(m->st.p90), bad);
    put(j, "cv", jnum(m->st.cv), bad);
    put(j, "noise", jnum(m->noise), bad);
    put(j, "timed_out", json_boolean(m->timed_out), bad);
    put(j, "l2", jstr(kb_l2_mode_name(m->l2)), bad);
    put(j, "flush_bytes", jnum((double)m->flush_bytes), bad);
    put(j, "stop", jstr(kb_measure_stop_name(m->stop)), bad);
    put(j, "discarded", jint(m->throttled ? 0 : m->discarded), bad);
    put(j, "throttled_samples", jint(m->discarded), bad);
    put(j, "throttled", json_boolean(m->throttled), bad);
    put(j, "sm_clock_ref_mhz", m->clock_ref_mhz >= 0 ? jint(m->clock_ref_mhz) : json_null(), bad);
    put(j, "sm_clock_min_mhz", m->clock_min_mhz >= 0 ? jint(m->clock_min_mhz) : json_null(), bad);
    put(j, "sm_clock_max_mhz", m->clock_max_mhz >= 0 ? jint(m->clock_max_mhz) : json_null(), bad);
    for (int i = 0; m->samples_us && i < m->n; i++) {
        json_t *x = jnum(m->samples_us[i]);
        if (!x || json_array_append_new(s, x) != 0)
            *bad = 1;
    }
    put(j, "samples_us", s, bad);
    json_t *t = json_array();
    for (int i = 0; t && m->starts_us && i < m->n; i++) {
        json_t *x = jnum(m->starts_us[i]);
        if (!x || json_array_append_new(t, x) != 0)
            *bad = 1;
    }
    put(j, "samples_start_us", t, bad);
    return j;
}

static json_t *work_json(const kb_work *w, int *bad)
{
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "flops", jnum(w->flops), bad);
    put(j, "bytes_read", jnum(w->bytes_read), bad);
    put(j, "bytes_written", jnum(w->bytes_written), bad);
    put(j, "bytes_moved", jnum(w->bytes_moved > 0 ? w->bytes_moved : w->bytes_read + w->bytes_written), bad);
    return j;
}

/* A number that is only meaningful under a flag: null otherwise. */
static json_t *jnum_if(int have, double v) { return have ? jnum(v) : json_null(); }

static json_t *derived_json(const kb_case_result *r, int *bad)
{
    if (!r->derived.done)
        return json_null();
    const kb_derived *d = &r->derived.d;
    const char *bound = kb_bound_name(d->bound);
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "clock", jstr(r->measure.clock), bad);
    put(j, "tflops", jnum_if(d->have_rates, d->tflops), bad);
    put(j, "gbps", jnum_if(d->have_rates, d->gbps), bad);
    put(j, "ai", jnum_if(d->have_rates, d->ai), bad);
    put(j, "bound", jstr(bound), bad);
    put(j, "roof_tflops", jnum_if(d->have_roof, d->roof_tflops), bad);
    put(j, "pct_roof", jnum_if(d->have_roof, d->pct_roof), bad);
    put(j, "peak_tflops", jnum_if(d->have_roof, d->peak_tflops), bad);
    put(j, "peak_gbps", jnum_if(d->have_roof, d->peak_gbps), bad);
    put(j, "peak_source", d->have_roof ? jstr(d->peak_source) : json_null(), bad);
    put(j, "measured_gbps", jnum_if(d->have_measured, d->measured_gbps), bad);
    put(j, "measured_roof_tflops", jnum_if(d->have_measured, d->measured_roof_tflops), bad);
    put(j, "pct_measured", jnum_if(d->have_measured, d->pct_measured), bad);
    put(j, "measured_source", d->have_measured ? jstr(d->measured_source) : json_null(), bad);
    put(j, "path", d->path[0] ? jstr(d->path) : json_null(), bad);
    put(j, "path_tflops", jnum_if(d->have_path, d->path_tflops), bad);
    put(j, "pct_path", jnum_if(d->have_path, d->pct_path), bad);
    put(j, "path_source", d->have_path ? jstr(d->path_source) : json_null(), bad);
    return j;
}

static json_t *overhead_json(const kb_case_result *r, int *bad)
{
    if (!r->overhead.done)
        return json_null();
    const kb_overhead *o = &r->overhead.ov;
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "n", jint(o->n), bad);
    put(j, "launches", jint(o->launches), bad);
    put(j, "eager_us", jnum(o->eager_us), bad);
    put(j, "graph_us", jnum(o->graph_us), bad);
    put(j, "per_launch_us", jnum(o->per_launch_us), bad);
    put(j, "empty_eager_us", jnum(o->empty_eager_us), bad);
    put(j, "empty_graph_us", jnum(o->empty_graph_us), bad);
    put(j, "host_enqueue_us", jnum(o->host_enqueue_us), bad);
    put(j, "empty_host_us", jnum(o->empty_host_us), bad);
    put(j, "clock", jstr(r->measure.clock), bad);
    put(j, "reps", jint(o->reps), bad);
    put(j, "per_launch_q1_us", jnum(o->per_launch_q1_us), bad);
    put(j, "per_launch_q3_us", jnum(o->per_launch_q3_us), bad);
    put(j, "empty_n", o->empty_n ? jint(o->empty_n) : json_null(), bad);
    put(j, "null_reason", o->null_reason[0] ? jstr(o->null_reason) : json_null(), bad);
    return j;
}

/* The reason names of a telemetry reading as an array, null without reasons. */
static json_t *reasons_json(const kb_telemetry *t, int *bad)
{
    if (!t->have_reasons)
        return json_null();
    json_t *names = json_array();
    for (int i = 0; names && i < 64; i++) {
        if (!(t->reasons & (1ull << i)))
            continue;
        char one[32];
        kb_telemetry_reason_names(1ull << i, one, sizeof one);
        if (json_array_append_new(names, json_string(one)) != 0)
            *bad = 1;
    }
    if (!names)
        *bad = 1;
    return names;
}

static json_t *telemetry_json(const kb_case_result *r, int *bad)
{
    if (!r->telemetry.done)
        return json_null();
    const kb_telemetry *t = &r->telemetry.t;
    json_t *j = obj(bad);
    if (!j)
        return NULL;
    put(j, "available", json_boolean(t->available), bad);
    if (!t->available) {
        put(j, "why", jstr(t->why), bad);
        return j;
    }
    put(j, "sm_clock_mhz", jint_known(t->sm_clock_mhz), bad);
    put(j, "sm_clock_max_mhz", jint_known(t->sm_clock_max_mhz), bad);
    put(j, "mem_clock_mhz", jint_known(t->mem_clock_mhz), bad);
    put(j, "power_w", t->power_w >= 0 ? jnum(t->power_w) : json_null(), bad);
    put(j, "temperature_c", jint_known(t->temperature_c), bad);
    put(j, "reasons", reasons_json(t, bad), bad);
    put(j, "throttled", json_boolean(t->throttled), bad);
    return j;
}

/* [ms] per stage that ran (a stage that did not run has no key). */
static json_t *stages_json(const kb_case_result *r, int *bad)
{
    json_t *j = obj(bad);
    for (int s = 0; j && s < KB_STAGE_COUNT; s++)
        if (r->stage_ms[s] > 0)
            put(j, kb_stage_name((kb_stage)s), jnum(r->stage_ms[s]), bad);
    return j;
}

/* The case's constants {name: value}, null when it named none. */
static json_t *constants_json(const kb_case_result *r, int *bad)
{
    if (r->constants.n == 0)
        return json_null();
    json_t *j = obj(bad);
    for (int i = 0; j && i < r->constants.n; i++)
        put(j, r->constants.c[i].name, jnum(r->constants.c[i].value), bad);
    return j;
}

json_t *kb_record_json(const kb_record_ctx *ctx, const kb_case_result *r)
{
    int bad = 0;
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "schema_version", jint(KB_RECORD_SCHEMA_VERSION), &bad);
    put(o, "run_id", jstr(ctx->run_id), &bad);
    put(o, "suite", jstr(ctx->suite), &bad);
    put(o, "time", jstr(ctx->time), &bad);
    put(o, "case_id", jstr(r->case_id), &bad);
    case_fields(o, r, &bad);
    put(o, "shape", jstr(ctx->shape), &bad);
    put(o, "backend", jstr(ctx->backend), &bad);
    put(o, "device", device_json(ctx->dev, &bad), &bad);
    put(o, "status", jstr(kb_case_status_name(r->status)), &bad);
    put(o, "error", jstr(kb_status_name(r->error)), &bad);
    put(o, "reason", jstr(r->reason), &bad);
    put(o, "vendor", vendor_json(r, &bad), &bad);
    put(o, "constants", constants_json(r, &bad), &bad);
    put(o, "verify", verify_json(r, &bad), &bad);
    put(o, "accuracy", accuracy_json(r, &bad), &bad);
    put(o, "resources", resources_json(r, &bad), &bad);
    put(o, "timing", timing_json(r, &bad), &bad);
    put(o, "work", work_json(&r->work, &bad), &bad);
    put(o, "derived", derived_json(r, &bad), &bad);
    put(o, "launch_overhead", overhead_json(r, &bad), &bad);
    put(o, "telemetry", telemetry_json(r, &bad), &bad);
    put(o, "compile_ms", jnum(r->compile.compile_ms), &bad);
    put(o, "wall_ms", jnum(r->wall_ms), &bad);
    put(o, "stage_ms", stages_json(r, &bad), &bad);
    put(o, "compile_log", r->compile.done && r->compile.log ? compile_log_json(r->compile.log) : json_null(), &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- reading ---- */

/* Number at obj[key]; 1 when it is one. */
static int get_num(json_t *o, const char *key, double *v)
{
    json_t *j = json_object_get(o, key);
    if (!json_is_number(j))
        return 0;
    *v = json_number_value(j);
    return 1;
}

static void derived_block(json_t *d, kb_derived *out)
{
    out->have_rates = get_num(d, "tflops", &out->tflops) & get_num(d, "gbps", &out->gbps) & get_num(d, "ai", &out->ai);
    out->have_roof = get_num(d, "roof_tflops", &out->roof_tflops) & get_num(d, "pct_roof", &out->pct_roof);
    get_num(d, "peak_tflops", &out->peak_tflops);
    get_num(d, "peak_gbps", &out->peak_gbps);
    const char *src = json_string_value(json_object_get(d, "peak_source"));
    out->peak_source = !src ? NULL : strcmp(src, "clock") == 0 ? "clock" : "datasheet";
    const char *b = json_string_value(json_object_get(d, "bound"));
    out->bound = !b ? KB_BOUND_UNKNOWN : strcmp(b, "compute") == 0 ? KB_BOUND_COMPUTE
               : strcmp(b, "memory") == 0 ? KB_BOUND_MEMORY : KB_BOUND_UNKNOWN;
    /* the measured and path roofs (records before they existed have neither) */
    out->have_measured = get_num(d, "pct_measured", &out->pct_measured) &
                         get_num(d, "measured_roof_tflops", &out->measured_roof_tflops);
    get_num(d, "measured_gbps", &out->measured_gbps);
    const char *ms = json_string_value(json_object_get(d, "measured_source"));
    out->measured_source = !ms ? NULL : strcmp(ms, "measured") == 0 ? "measured" : "measured bandwidth, datasheet compute";
    const char *path = json_string_value(json_object_get(d, "path"));
    snprintf(out->path, sizeof out->path, "%s", path ? path : "");
    out->have_path = get_num(d, "pct_path", &out->pct_path) & get_num(d, "path_tflops", &out->path_tflops);
    const char *ps = json_string_value(json_object_get(d, "path_source"));
    out->path_source = !ps ? NULL : !strcmp(ps, "measured") ? "measured" : !strcmp(ps, "clock") ? "clock" : "datasheet";
}

int kb_record_derived(json_t *rec, kb_derived *out)
{
    memset(out, 0, sizeof *out);
    json_t *d = json_object_get(rec, "derived");
    if (json_is_object(d)) {
        derived_block(d, out);
        return out->have_rates;
    }
    json_t *w = json_object_get(rec, "work"), *t = json_object_get(rec, "timing");
    kb_work work = { 0 };
    double median = 0;
    if (!json_is_object(w) || !get_num(t, "median_us", &median))
        return 0;
    get_num(w, "flops", &work.flops);
    get_num(w, "bytes_read", &work.bytes_read);
    get_num(w, "bytes_written", &work.bytes_written);
    kb_derive(&work, median, NULL, KB_DT_FP32, out);
    return out->have_rates;
}

int kb_record_status(json_t *rec, kb_case_status *out)
{
    const char *s = json_string_value(json_object_get(rec, "status"));
    return s ? kb_case_status_parse(s, out) : -1;
}
