/* derive.c - rates and the roofline position of a case, and their JSON form. */
#include "engine/derive.h"

#include <math.h>
#include <stdio.h>
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

/* The path roof: the measured rate of the path's instruction, else the datasheet (clock)
 * peak of the dtype that bounds it. */
static void path_roof(const kb_peaks *p, const kb_path *path, kb_derived *d)
{
    const char *src = "measured";
    double rate = kb_peaks_measured(p, path->kind);
    if (!(rate > 0))
        rate = kb_peaks_tflops(p, path->dtype, &src);
    if (!(rate > 0) || !src)
        return;
    d->have_path = 1;
    d->path_tflops = rate;
    d->path_source = src;
    d->pct_path = 100.0 * d->tflops / rate;
}

static void measured_roof(const kb_work *w, const kb_peaks *p, const kb_path *path, kb_derived *d)
{
    double bw = p->measured_gbps, c = path ? kb_peaks_measured(p, path->kind) : 0;
    if (!(bw > 0))
        return;
    d->measured_source = "measured";
    if (!(c > 0) && w->flops > 0) {
        c = d->peak_tflops;   /* the path was not measured: the datasheet's compute ceiling */
        d->measured_source = "measured bandwidth, datasheet compute";
    }
    if (w->flops > 0 && !(c > 0))
        return;
    double slope = d->ai * bw / 1e3;
    d->have_measured = 1;
    d->measured_gbps = bw;
    if (w->flops > 0 && slope >= c) {
        d->measured_roof_tflops = c;
        d->pct_measured = 100.0 * d->tflops / c;
    } else {
        d->measured_roof_tflops = slope;
        d->pct_measured = 100.0 * d->gbps / bw;
    }
}

void kb_derive_roofs(const kb_work *w, const kb_peaks *p, const kb_path *path, kb_derived *d)
{
    if (path)
        snprintf(d->path, sizeof d->path, "%s", path->kind);
    if (!p || p->no_roof || !d->have_rates)
        return;
    if (path && w->flops > 0)
        path_roof(p, path, d);
    measured_roof(w, p, path, d);
}
