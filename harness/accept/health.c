/* health.c - the NVML health tests (see health.h). */
#include "accept/health.h"

#include <stdio.h>
#include <string.h>

static const kb_health_value *val(const kb_health *h, kb_health_field f) { return &h->f[f]; }

/* SKIP with the first reason a value of f[0..n) was not read. */
static void skip_unread(kb_acc_result *r, const kb_health *h, const kb_health_field *f, int n)
{
    r->status = KB_ACC_SKIP;
    for (int i = 0; i < n; i++)
        if (!val(h, f[i])->read) {
            snprintf(r->reason, sizeof r->reason, "not read: %.370s", val(h, f[i])->why);
            return;
        }
    snprintf(r->reason, sizeof r->reason, "not read");
}

/* DCGM's health watch (modules/health, MonitorMemVolatileDbes) fails on volatile double-bit
 * errors - NVML's uncorrected count since the driver loaded - and not on the aggregate
 * (lifetime) count: errors of the board's past have been dealt with by page retirement or
 * row remapping, which row_remap judges. The aggregate count is reported, not judged. */
static void judge_ecc(const kb_health *h, kb_acc_result *r)
{
    const kb_health_value *mode = val(h, KB_H_ECC_MODE), *vol = val(h, KB_H_ECC_UNC_VOLATILE),
                          *agg = val(h, KB_H_ECC_UNC_AGGREGATE);
    if (mode->read && !mode->v) {
        r->status = KB_ACC_WARN;
        snprintf(r->reason, sizeof r->reason, "ECC is disabled: memory errors are neither corrected nor counted");
        return;
    }
    if (!vol->read) {
        const kb_health_field f[] = { KB_H_ECC_UNC_VOLATILE };
        skip_unread(r, h, f, 1);
        return;
    }
    char a[64] = "not read";
    if (agg->read)
        snprintf(a, sizeof a, "%llu", agg->v);
    r->have_value = 1;
    r->value = (double)vol->v;
    r->status = vol->v > 0 ? KB_ACC_FAIL : KB_ACC_PASS;
    snprintf(r->reason, sizeof r->reason, "%s: uncorrected ECC errors volatile %llu, aggregate %s%s",
             vol->v > 0 ? "hardware error" : "no uncorrected ECC error since the driver loaded", vol->v, a,
             agg->read && agg->v > 0 && !vol->v ? " (lifetime count: not judged, as DCGM does not)" : "");
}

/* " retired pages 3 sbe + 1 dbe," or "" when not read. */
static void retired_text(const kb_health *h, char *out, size_t size)
{
    const kb_health_value *s = val(h, KB_H_RETIRED_SBE), *d = val(h, KB_H_RETIRED_DBE);
    out[0] = 0;
    if (s->read && d->read)
        snprintf(out, size, "; retired pages %llu (multiple single-bit) + %llu (double-bit)", s->v, d->v);
}

static void judge_remap(const kb_health *h, kb_acc_result *r)
{
    const kb_health_value *rp = val(h, KB_H_RETIRED_PENDING), *pend = val(h, KB_H_REMAP_PENDING),
                          *failed = val(h, KB_H_REMAP_FAILED), *unc = val(h, KB_H_REMAP_UNCORRECTABLE),
                          *cor = val(h, KB_H_REMAP_CORRECTABLE);
    char retired[160];
    retired_text(h, retired, sizeof retired);
    if (!rp->read && !pend->read) {
        const kb_health_field f[] = { KB_H_REMAP_PENDING, KB_H_RETIRED_PENDING };
        skip_unread(r, h, f, 2);
        return;
    }
    char rows[160] = "";
    if (pend->read)
        snprintf(rows, sizeof rows, "; remapped rows %llu (uncorrectable) + %llu (correctable)", unc->v, cor->v);
    r->have_value = 1;
    r->value = pend->read ? (double)unc->v : 0;
    const char *bad = failed->read && failed->v ? "a row remapping failed (the board needs service)"
                      : pend->read && pend->v   ? "a row remapping is pending (reset the GPU)"
                      : rp->read && rp->v       ? "a page retirement is pending (reset the GPU or reload the driver)"
                                                : NULL;
    r->status = bad ? KB_ACC_FAIL : KB_ACC_PASS;
    snprintf(r->reason, sizeof r->reason, "%s%s%s", bad ? bad : "nothing pending or failed", rows, retired);
}

/* "gen 4 x16", "gen 4" or "x16" from what was read. */
static void link_text(char *out, size_t size, int have_gen, unsigned long long gen, int have_width,
                      unsigned long long width)
{
    int n = have_gen ? snprintf(out, size, "gen %llu", gen) : 0;
    if (n < 0 || (size_t)n >= size)
        return;
    if (have_width)
        snprintf(out + n, size - (size_t)n, "%sx%llu", n ? " " : "", width);
}

/* The generation was read below its maximum while the GPU was idle: links train down then,
 * so it is not judged (the width does not train down and still is). */
static int idle_gen(const kb_health *h, int gens)
{
    const kb_health_value *idle = val(h, KB_H_GPU_IDLE);
    return gens && idle->read && idle->v && val(h, KB_H_PCIE_GEN)->v < val(h, KB_H_PCIE_GEN_MAX)->v;
}

static void judge_pcie(const kb_health *h, kb_acc_result *r)
{
    const kb_health_value *g = val(h, KB_H_PCIE_GEN), *gm = val(h, KB_H_PCIE_GEN_MAX), *w = val(h, KB_H_PCIE_WIDTH),
                          *wm = val(h, KB_H_PCIE_WIDTH_MAX);
    int gens = g->read && gm->read, widths = w->read && wm->read, idle = idle_gen(h, gens);
    if ((!gens || idle) && !widths) {
        const kb_health_field f[] = { KB_H_PCIE_GEN, KB_H_PCIE_GEN_MAX, KB_H_PCIE_WIDTH, KB_H_PCIE_WIDTH_MAX };
        skip_unread(r, h, f, 4);
        if (idle)
            snprintf(r->reason, sizeof r->reason, "gen %llu of max %llu read while the GPU was idle (not judged); "
                     "width not read", g->v, gm->v);
        return;
    }
    char cur[64], max[64], note[160] = "";
    link_text(cur, sizeof cur, gens && !idle, g->v, widths, w->v);
    link_text(max, sizeof max, gens && !idle, gm->v, widths, wm->v);
    if (idle)
        snprintf(note, sizeof note, "; gen %llu of max %llu not judged: read while the GPU was idle, when links "
                 "train down to save power", g->v, gm->v);
    int below = (gens && !idle && g->v < gm->v) || (widths && w->v < wm->v);
    r->have_value = 1;
    r->value = gens && !idle ? (double)g->v : (double)w->v;
    r->status = below ? KB_ACC_WARN : KB_ACC_PASS;
    snprintf(r->reason, sizeof r->reason, "PCIe link %s %s max %s%s%s", cur, below ? "below" : "at", max,
             below ? " (current/max)" : "", note);
}

void kb_acc_verdict_health(const kb_health *h, kb_acc_verdict *v)
{
    kb_acc_result *t[3] = { &v->r[KB_ACC_ECC], &v->r[KB_ACC_ROW_REMAP], &v->r[KB_ACC_PCIE] };
    for (int i = 0; i < 3; i++) {
        memset(t[i], 0, sizeof *t[i]);
        snprintf(t[i]->source, sizeof t[i]->source, "NVML");
    }
    if (!h->available) {
        for (int i = 0; i < 3; i++) {
            t[i]->status = KB_ACC_SKIP;
            snprintf(t[i]->reason, sizeof t[i]->reason, "not read: %.370s", h->why);
        }
    } else {
        judge_ecc(h, t[0]);
        judge_remap(h, t[1]);
        judge_pcie(h, t[2]);
    }
    kb_acc_verdict_finish(v);
}
