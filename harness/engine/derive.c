/* derive.c - rates and the roofline position of a case, and their JSON form. */
#include "engine/derive.h"

#include <math.h>
#include <string.h>

const char *kb_bound_name(kb_bound b)
{
    return b == KB_BOUND_COMPUTE ? "compute" : b == KB_BOUND_MEMORY ? "memory" : NULL;
}

void kb_derive(const kb_work *w, double median_us, const kb_peaks *p, kb_dtype dt, kb_derived *out)
{
    memset(out, 0, sizeof *out);
    double flops = w->flops > 0 ? w->flops : 0;
    double bytes = (w->bytes_read > 0 ? w->bytes_read : 0) + (w->bytes_written > 0 ? w->bytes_written : 0);
    /* A zero-flop operation (a gather, a copy) is bound by memory whatever the GPU. */
    if (flops == 0)
        out->bound = KB_BOUND_MEMORY;
    if (!(median_us > 0) || !isfinite(median_us))
        return;
    out->have_rates = 1;
    out->tflops = flops / median_us / 1e6;   /* flops / (us * 1e-6) / 1e12 */
    out->gbps = bytes / median_us / 1e3;     /* bytes / (us * 1e-6) / 1e9 */
    out->ai = bytes > 0 ? flops / bytes : 0;

    const char *src_c = NULL, *src_m = NULL;
    double peak_c = kb_peaks_tflops(p, dt, &src_c);
    double peak_m = kb_peaks_gbps(p, &src_m);
    /* A roofline needs the bandwidth slope, and a compute ceiling unless there is no compute. */
    if (peak_m <= 0 || (flops > 0 && peak_c <= 0))
        return;
    out->have_roof = 1;
    out->peak_tflops = peak_c;
    out->peak_gbps = peak_m;
    /* the less certain of the two sources names the roof */
    out->peak_source = (src_c && strcmp(src_c, "clock") == 0) || strcmp(src_m, "clock") == 0 ? "clock" : "datasheet";
    double slope_tflops = out->ai * peak_m / 1e3;   /* FLOP/byte x GB/s = GFLOP/s */
    if (flops > 0 && slope_tflops >= peak_c) {
        out->bound = KB_BOUND_COMPUTE;
        out->roof_tflops = peak_c;
        out->pct_roof = 100.0 * out->tflops / peak_c;
    } else {
        /* memory-bound: the % of the bandwidth ceiling, equal to tflops / roof when
         * flops > 0, and still defined when there are none */
        out->bound = KB_BOUND_MEMORY;
        out->roof_tflops = slope_tflops;
        out->pct_roof = 100.0 * out->gbps / peak_m;
    }
}

static json_t *num_or_null(int have, double v)
{
    return have && isfinite(v) ? json_real(v) : json_null();
}

json_t *kb_derived_json(const kb_derived *d, const char *clock)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const char *bound = kb_bound_name(d->bound);
    int bad = 0;
    bad |= json_object_set_new(o, "clock", clock ? json_string(clock) : json_null());
    bad |= json_object_set_new(o, "tflops", num_or_null(d->have_rates, d->tflops));
    bad |= json_object_set_new(o, "gbps", num_or_null(d->have_rates, d->gbps));
    bad |= json_object_set_new(o, "ai", num_or_null(d->have_rates, d->ai));
    bad |= json_object_set_new(o, "bound", bound ? json_string(bound) : json_null());
    bad |= json_object_set_new(o, "roof_tflops", num_or_null(d->have_roof, d->roof_tflops));
    bad |= json_object_set_new(o, "pct_roof", num_or_null(d->have_roof, d->pct_roof));
    bad |= json_object_set_new(o, "peak_tflops", num_or_null(d->have_roof, d->peak_tflops));
    bad |= json_object_set_new(o, "peak_gbps", num_or_null(d->have_roof, d->peak_gbps));
    bad |= json_object_set_new(o, "peak_source", d->have_roof && d->peak_source
                               ? json_string(d->peak_source) : json_null());
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Number at obj[key]; 1 when it is one. */
static int get_num(json_t *obj, const char *key, double *v)
{
    json_t *j = json_object_get(obj, key);
    if (!json_is_number(j))
        return 0;
    *v = json_number_value(j);
    return 1;
}

int kb_derived_from_record(json_t *rec, kb_derived *out)
{
    memset(out, 0, sizeof *out);
    json_t *d = json_object_get(rec, "derived");
    if (json_is_object(d)) {
        out->have_rates = get_num(d, "tflops", &out->tflops) & get_num(d, "gbps", &out->gbps)
                        & get_num(d, "ai", &out->ai);
        out->have_roof = get_num(d, "roof_tflops", &out->roof_tflops) & get_num(d, "pct_roof", &out->pct_roof);
        get_num(d, "peak_tflops", &out->peak_tflops);
        get_num(d, "peak_gbps", &out->peak_gbps);
        const char *src = json_string_value(json_object_get(d, "peak_source"));
        out->peak_source = !src ? NULL : strcmp(src, "clock") == 0 ? "clock" : "datasheet";
        const char *b = json_string_value(json_object_get(d, "bound"));
        out->bound = !b ? KB_BOUND_UNKNOWN : strcmp(b, "compute") == 0 ? KB_BOUND_COMPUTE
                   : strcmp(b, "memory") == 0 ? KB_BOUND_MEMORY : KB_BOUND_UNKNOWN;
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
