/* estimate.c - the static model of one case (estimate.h); the equations are those of
 * docs/estimate.md, in the same order, so a reader can follow one with the other. */
#include "estimate/estimate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const roof_names[] = {
    [KB_ROOF_TENSOR] = "tensor", [KB_ROOF_SIMT] = "simt",   [KB_ROOF_SFU] = "sfu",         [KB_ROOF_CVT] = "cvt",
    [KB_ROOF_PIPES] = "pipes",
    [KB_ROOF_ISSUE] = "issue",   [KB_ROOF_SMEM] = "smem",   [KB_ROOF_L2] = "l2",           [KB_ROOF_DRAM] = "dram",
    [KB_ROOF_LATENCY] = "latency", [KB_ROOF_LAUNCH] = "launch",
};
_Static_assert(sizeof roof_names / sizeof roof_names[0] == KB_ROOF_COUNT, "one name per roof");

const char *kb_est_roof_name(kb_est_roof r)
{
    return (unsigned)r < KB_ROOF_COUNT ? roof_names[r] : "?";
}

static void occ_min(kb_est_occ *o, int64_t blocks, const char *limit)
{
    if (blocks < o->blocks) {
        o->blocks = (int)(blocks < 0 ? 0 : blocks);
        o->limit = limit;
    }
}

kb_est_occ kb_est_occupancy(const kb_est_arch *a, int threads, int regs, int64_t smem_bytes)
{
    kb_est_occ o = { a->max_blocks_sm, "blocks" };
    int warps = (threads + 31) / 32;
    if (warps < 1)
        warps = 1;
    occ_min(&o, a->max_threads_sm / (warps * 32), "threads");
    if (regs > 0) {
        /* registers are allocated per warp in units of 256, from 4 sub-partitions of regs_sm/4 */
        int per_warp = (regs * 32 + 255) / 256 * 256;
        int warps_sm = 4 * (a->regs_sm / 4 / per_warp);
        occ_min(&o, warps_sm / warps, "registers");
    }
    occ_min(&o, a->smem_sm_bytes / (smem_bytes + a->smem_reserved_bytes), "smem");
    return o;
}

/* [us] of work at rate per second, 0 when there is no work; rate 0 with work: infinite. */
static double at_rate(double work, double per_s)
{
    if (work <= 0)
        return 0;
    return per_s > 0 ? work / per_s * 1e6 : INFINITY;
}

/* A traffic for a family without a hook: compulsory bytes, its flops on the dtype's path,
 * enough blocks to fill every SM. */
static kb_traffic work_only(const kb_family *f, const kb_case *c, const kb_est_target *x)
{
    kb_work w = f->work(c);
    kb_traffic t;
    memset(&t, 0, sizeof t);
    t.blocks = (int64_t)x->gpu->sms;
    t.threads = 256;
    t.launches = 1;
    if (c->dtype == KB_DT_FP32)
        t.simt_flops = w.flops;
    else
        t.mma_flops = w.flops;
    double bytes = w.bytes_read + w.bytes_written;
    t.dram_bytes = w.bytes_moved > bytes ? w.bytes_moved : bytes;
    t.l2_bytes = t.dram_bytes;
    t.write_bytes = w.bytes_written;
    return t;
}

void kb_est_target_init(kb_est_target *x, const kb_est_gpu *g, const kb_peaks *p)
{
    x->gpu = g;
    x->arch = kb_est_arch_find(g->sm);
    x->peaks = p;
    x->clock_mhz = p->tensor_mhz > 0 ? p->tensor_mhz : g->boost_mhz;
    x->dram_gbps = p->measured_gbps > 0 ? p->measured_gbps : kb_est_dram_fraction() * kb_peaks_gbps(p, NULL);
    x->dram_source = p->measured_gbps > 0 ? "measured ceiling" : "datasheet x 0.866 (assumed)";
    double launches_s = kb_peaks_measured(p, "launch");
    x->launch_us[0] = launches_s > 0 ? 1e6 / launches_s : kb_est_launch_us(0);
    x->launch_us[1] = kb_est_launch_us(1);
    if (x->launch_us[1] > x->launch_us[0])
        x->launch_us[1] = x->launch_us[0];
    x->launch_source = launches_s > 0 ? "measured ceiling" : "assumed";
}

/* A datasheet rate stated at clock `stated` [MHz], brought to the model clock: 1 when either
 * clock is unpublished (gpu.h: 0), so the datasheet rate stands as it is. */
static double clock_ratio(double model_mhz, double stated_mhz)
{
    return model_mhz > 0 && stated_mhz > 0 ? model_mhz / stated_mhz : 1.0;
}

/* [FLOP/s] the tensor roof's rate for path dtype dt: the datasheet peak (stated at the
 * tensor clock) at the model clock, times the path's efficiency (e->tensor_eff). */
static double tensor_rate(const kb_traffic *t, kb_dtype dt, const kb_est_target *x, kb_estimate *e)
{
    double tclk = x->peaks->tensor_mhz > 0 ? x->peaks->tensor_mhz : x->gpu->boost_mhz;
    int r = t->serial_pipes || t->attention_products
                ? kb_est_attention_efficiency_dt(x->gpu->sm, t->tensor_path, dt, &e->tensor_eff, NULL)
                : kb_est_tensor_efficiency(x->gpu->sm, t->tensor_path, &e->tensor_eff, NULL);
    e->tensor_calibrated = r == 1;
    return kb_peaks_tflops(x->peaks, dt, NULL) * 1e12 * clock_ratio(x->clock_mhz, tclk) * e->tensor_eff;
}

/* Every roof at the model clock; the per-SM ones over the SMs' balanced share (SM use over
 * the traffic's imbalance), L2 and DRAM whole-GPU. */
static void roofs(const kb_traffic *t, const kb_case *c, kb_dtype path, const kb_est_target *x, kb_estimate *e)
{
    const kb_est_arch *a = x->arch;
    double clk = x->clock_mhz * 1e6, bal = e->sm_use / e->imbalance, sms = x->gpu->sms * bal, sfu_clk, cvt_clk;
    double fp32 = kb_peaks_tflops(x->peaks, KB_DT_FP32, NULL) * 1e12 * clock_ratio(x->clock_mhz, x->gpu->boost_mhz);
    kb_est_sfu_per_clk(x->gpu->sm, &sfu_clk);
    kb_est_cvt_per_clk(x->gpu->sm, &cvt_clk);
    e->roof_us[KB_ROOF_TENSOR] = at_rate(t->mma_flops, tensor_rate(t, path, x, e) * bal);
    e->roof_us[KB_ROOF_SIMT] = at_rate(t->simt_flops, fp32 * bal);
    if (clk > 0) {   /* a GPU whose clock is unpublished (gpu.h): its per-clock roofs are left out */
        e->roof_us[KB_ROOF_SFU] = at_rate(t->sfu_ops, sms * sfu_clk * clk);
        e->roof_us[KB_ROOF_CVT] = at_rate(t->cvt_ops, sms * cvt_clk * clk);
        e->roof_us[KB_ROOF_ISSUE] = at_rate(t->warp_insts, sms * a->issue_per_clk * clk);
        e->roof_us[KB_ROOF_SMEM] = at_rate(t->smem_bytes, sms * a->smem_bytes_clk * clk);
        e->roof_us[KB_ROOF_L2] = at_rate(t->l2_bytes, a->l2_bytes_clk * clk);
    }
    /* a warp's softmax waits for its first product and feeds the second; inside it the FP32
     * and SFU work (independent instructions, separate pipes) overlap, the conversions follow */
    if (t->serial_pipes)
        e->roof_us[KB_ROOF_PIPES] = e->roof_us[KB_ROOF_TENSOR] +
                                    fmax(e->roof_us[KB_ROOF_SIMT], e->roof_us[KB_ROOF_SFU]) + e->roof_us[KB_ROOF_CVT];
    e->roof_us[KB_ROOF_DRAM] = at_rate(t->dram_bytes, x->dram_gbps * 1e9);
    /* Little's law: every byte loaded holds its in-flight slot for its latency (stores do not) */
    int64_t resident = (int64_t)e->occ.blocks * x->gpu->sms;
    double threads = (double)(t->blocks < resident ? t->blocks : resident) * t->threads;
    double hits = t->l2_bytes > t->dram_bytes ? t->l2_bytes - t->dram_bytes : 0;
    double misses = t->dram_bytes > t->write_bytes ? t->dram_bytes - t->write_bytes : 0;
    double byte_ns = hits * a->l2_latency_ns + misses * a->dram_latency_ns;
    e->roof_us[KB_ROOF_LATENCY] = t->inflight_bytes > 0 ? byte_ns * 1e-3 / (threads * t->inflight_bytes) : 0;
    /* serial: each launch's cost and its pipeline fill (one DRAM latency), and a pre-pass's bytes */
    double per_launch = x->launch_us[c->launch == KB_LAUNCH_GRAPH] + a->dram_latency_ns * 1e-3;
    e->roof_us[KB_ROOF_LAUNCH] = (t->launches > 1 ? t->launches : 1) * per_launch +
                                 (t->serial_dram_bytes > 0 ? at_rate(t->serial_dram_bytes, x->dram_gbps * 1e9) : 0);
}

/* The case's traffic: the hook's, asked with the resident blocks once occupancy is known. */
static int traffic_of(const kb_family *f, const kb_case *c, int sm, int regs, int static_smem,
                      const kb_est_target *x, kb_traffic *t, kb_est_occ *occ)
{
    kb_traffic_gpu g = { sm, 0, x->gpu->l2_mb * 1e6, x->gpu->sms };
    int hooked = f->traffic && f->traffic(c, &g, t);
    if (!hooked)
        *t = work_only(f, c, x);
    *occ = kb_est_occupancy(x->arch, t->threads, regs, t->dyn_smem_bytes + (static_smem > 0 ? static_smem : 0));
    if (hooked && occ->blocks > 0) {
        g.resident_blocks = (int64_t)occ->blocks * x->gpu->sms;
        f->traffic(c, &g, t);
    }
    return hooked;
}

int kb_estimate_case(const kb_family *f, const kb_case *c, int sm, int regs, int static_smem, kb_dtype path,
                     const kb_est_target *x, kb_estimate *e, char *why, size_t whylen)
{
    memset(e, 0, sizeof *e);
    kb_traffic own;
    e->modelled = traffic_of(f, c, sm, regs, static_smem, x, &own, &e->occ);
    if (own.blocks < 1 || own.threads < 1) {
        snprintf(why, whylen, "the traffic model gives no blocks");
        return -1;
    }
    if (e->occ.blocks < 1) {
        snprintf(why, whylen, "a block of %d threads, %d registers each, does not fit on an SM (%s)", own.threads, regs,
                 e->occ.limit);
        return -1;
    }
    int64_t per_sm = (own.blocks + x->gpu->sms - 1) / x->gpu->sms;
    e->sm_use = (double)own.blocks / ((double)x->gpu->sms * (double)per_sm);
    e->waves = (double)own.blocks / ((double)e->occ.blocks * x->gpu->sms);
    e->imbalance = own.imbalance > 1 ? own.imbalance : 1;
    roofs(&own, c, path, x, e);
    for (int r = 0; r < KB_ROOF_LAUNCH; r++)
        if (e->roof_us[r] > e->roof_us[e->limit])
            e->limit = (kb_est_roof)r;
    e->est_us = e->roof_us[e->limit] + e->roof_us[KB_ROOF_LAUNCH];
    if (e->roof_us[KB_ROOF_LAUNCH] > e->roof_us[e->limit])
        e->limit = KB_ROOF_LAUNCH;
    if (!isfinite(e->est_us) || e->est_us <= 0) {
        snprintf(why, whylen, "%s has no datasheet rate for this case's work", x->gpu->name);
        return -1;
    }
    kb_work w = f->work(c);
    double compute = at_rate(w.flops, kb_peaks_tflops(x->peaks, c->dtype, NULL) * 1e12);
    double memory = at_rate(w.bytes_read + w.bytes_written, kb_peaks_gbps(x->peaks, NULL) * 1e9);
    e->roofline_us = isfinite(compute) && compute > memory ? compute : memory;
    e->pct_roofline = 100.0 * e->roofline_us / e->est_us;
    return 0;
}

int kb_estimate_built(const kb_family *f, const kb_case *c, int sm, const kb_resources *r, const kb_est_target *x,
                      kb_estimate *e, char *why, size_t whylen)
{
    kb_path p;
    kb_dtype path = f->path && f->path(c, sm, &p) ? p.dtype : c->dtype;
    return kb_estimate_case(f, c, sm, r->registers, r->static_shmem_bytes, path, x, e, why, whylen);
}
