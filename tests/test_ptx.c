/* test_ptx.c - offline PTX checks (NVRTC, no GPU) for sm_80, sm_89 and sm_90: what the
 * fast variants claim is in the instructions they compile to, so that a speed regression
 * fails CI without a GPU. Per checked case: no local memory (.local), the 16-byte
 * global accesses (cp.async 16 B, ld/st.global.v4) where the variant claims them (at least
 * NVEC of each per thread in the row kernels that hold a row in registers), and
 * gemm_mma's mma.sync count per k-tile (the k-tile loop's body is unrolled, the loop over
 * k-tiles is not, so the PTX holds the body once) and its 16-byte epilogue stores; attention's
 * attn_mma (variants mma and fa2) the same per K/V tile, plus its 16-byte output stores and
 * one ex2 per score; attn_fused's 16-byte shared loads, as many at RQ > 1 as at RQ = 1
 * (register blocking); attn_decode's mma.sync and ldmatrix per tile, 16-byte copies and stores,
 * and its combine's 16-byte loads and stores; gemm_wgmma on sm_90a (wgmma.mma_async per k-tile,
 * TMA loads and stores, mbarrier waits, setmaxnreg, no mma.sync) and its refusal on sm_90;
 * attn_fa3 on sm_90a (fp16, bf16 and fp8 e4m3; wgmma Q K^T from shared memory, P V with A in registers, TMA, named
 * barriers with an id, setmaxnreg) and its refusal on sm_90. */
#include "check.h"
#include "core/arch.h"
#include "core/fsutil.h"
#include "engine/defines.h"
#include "engine/family.h"
#include "engine/modules.h"
#include "gemm_model.h"
#include "kernels/families.h"

#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>

static const int archs[] = { 80, 89, 90 };

/* The PTX of case c's module for the arch of code sm (core/arch.h: 90, or 1090 for sm_90a) -
 * the virtual arch (compute_90a), or with real the real one (sm_120a: NVRTC then assembles a
 * CUBIN with ptxas too) - with the gating defines the harness passes (KB_ARCH,
 * KB_ARCH_SPECIFIC), malloc'ed; NULL (and a message) on failure. */
static char *ptx_of_arch(const kb_case *c, int sm, int real)
{
    const kb_family *f = kb_families[c->family];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", kb_kernels_dir(), f->source);
    char *src = NULL;
    size_t n = 0;
    if (kb_fs_read_all(path, &src, &n) != KB_OK) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    kb_sb defs, opt;
    kb_sb_init(&defs);
    kb_sb_init(&opt);
    kb_case_defines(f, c, &defs);
    const char *d[64];
    int nd = kb_defines_split(defs.s, d, 64);
    const char *opts[80];
    char arch[48], inc[1100], cuda[1100], def_arch[40] = "-D", def_spec[40] = "-D";
    snprintf(arch, sizeof arch, "--gpu-architecture=%s_%s", real ? "sm" : "compute",
             kb_arch_name(sm) + 3);   /* "sm_90a" -> 90a */
    if (kb_arch_defines(sm, def_arch + 2, def_spec + 2) != 0) {
        fprintf(stderr, "no architecture of code %d\n", sm);
        free(src);
        return NULL;
    }
    snprintf(inc, sizeof inc, "-I%s", kb_kernels_dir());
    snprintf(cuda, sizeof cuda, "-I%.*s", (int)strcspn(KB_CUDA_INCLUDE_DIR, ";"), KB_CUDA_INCLUDE_DIR);
    int no = 0;
    opts[no++] = arch, opts[no++] = "-std=c++17", opts[no++] = inc, opts[no++] = cuda;
    opts[no++] = def_arch, opts[no++] = def_spec;
    char *dd[64];
    for (int i = 0; i < nd; i++) {
        dd[i] = malloc(strlen(d[i]) + 3);
        sprintf(dd[i], "-D%s", d[i]);
        opts[no++] = dd[i];
    }
    nvrtcProgram prog;
    char *ptx = NULL;
    if (nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL) == NVRTC_SUCCESS) {
        size_t len = 0;
        if (nvrtcCompileProgram(prog, no, opts) == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &len) == NVRTC_SUCCESS &&
            (ptx = malloc(len + 1)) && nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
            free(ptx);
            ptx = NULL;
        }
        if (!ptx) {
            size_t ll = 0;
            nvrtcGetProgramLogSize(prog, &ll);
            char *log = malloc(ll + 1);
            nvrtcGetProgramLog(prog, log);
            fprintf(stderr, "%s: %s\n", arch, log);
            free(log);
        }
        nvrtcDestroyProgram(&prog);
    }
    for (int i = 0; i < nd; i++)
        free(dd[i]);
    kb_sb_free(&defs);
    kb_sb_free(&opt);
    free(src);
    return ptx;
}

/* The PTX of case c's module for the virtual arch of code sm. */
static char *ptx_of(const kb_case *c, int sm) { return ptx_of_arch(c, sm, 0); }

/* Occurrences of needle in the PTX. */
static int count(const char *ptx, const char *needle)
{
    int n = 0;
    for (const char *p = ptx; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static kb_case make(const char *family, const char *variant, kb_dtype dt)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.family = kb_family_find(family);
    const kb_family *f = kb_families[c.family];
    c.variant = kb_family_variant_find(f, variant);
    c.dtype = dt;
    c.shape_name = -1;
    for (int p = 0; p < f->n_params; p++)
        c.params[p] = f->params[p].def;
    return c;
}

static void set_param(kb_case *c, const char *name, int64_t v)
{
    c->params[kb_family_param_find(kb_families[c->family], name)] = v;
}

/* Global accesses of exactly 16 bytes of kind "ld" or "st": v4 of 32-bit or v2 of 64-bit words. */
static int count16(const char *ptx, const char *kind)
{
    int n = 0;
    size_t kl = strlen(kind);
    for (const char *l = ptx; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        while (*l == ' ' || *l == '\t')
            l++;
        if (strncmp(l, kind, kl) || strncmp(l + kl, ".global.", 8))
            continue;
        const char *q = l + kl + 8;
        if (!strncmp(q, "nc.", 3))
            q += 3;
        n += !strncmp(q, "v4.u32", 6) || !strncmp(q, "v4.b32", 6) || !strncmp(q, "v4.f32", 6) ||
             !strncmp(q, "v4.s32", 6) || !strncmp(q, "v2.u64", 6) || !strncmp(q, "v2.b64", 6) ||
             !strncmp(q, "v2.f64", 6);
    }
    return n;
}

/* gemm_mma: per k-tile BK/mk steps, each MT x NTL mma.sync (twice for fp8 widened to f16
 * where the table says fp8 mma.sync is not native: gemm.cu's FP8_VIA_F16 must agree with
 * kb_gemm_fp8_widened), MT + NTL/2 ldmatrix.x4 (layout nt); 16-byte cp.async; no local memory. */
static void check_gemm_mma(kb_dtype dt, int sm)
{
    kb_case c = make("gemm", "mma", dt);
    set_param(&c, "layout", 1);   /* nt: both operands K-contiguous, ldmatrix for every dtype */
    int mk = dt == KB_DT_TF32 ? 8 : dt == KB_DT_FP16 || dt == KB_DT_BF16 ? 16 : 32;
    int steps = 32 / mk, mt = 64 / 16, ntl = 64 / 8;
    int widened = (dt == KB_DT_FP8E4M3 || dt == KB_DT_FP8E5M2) && kb_gemm_fp8_widened(sm);
    char *p = ptx_of(&c, sm);
    CHECK_MSG(p != NULL, "gemm mma %s sm_%d does not compile", kb_dtype_name(dt), sm);
    if (!p)
        return;
    CHECK_MSG(count(p, ".local") == 0, "gemm mma %s sm_%d uses local memory", kb_dtype_name(dt), sm);
    CHECK_MSG(count(p, "mma.sync") == steps * mt * ntl * (widened ? 2 : 1), "gemm mma %s sm_%d: %d mma.sync",
              kb_dtype_name(dt), sm, count(p, "mma.sync"));
    if (kb_dtype_size(dt) == 1 && dt != KB_DT_INT8)   /* the fp8 form itself, or none of it */
        CHECK_MSG((count(p, "m16n8k32.row.col.f32.e") > 0) == !widened, "gemm mma %s sm_%d: fp8 mma form %d, widened %d",
                  kb_dtype_name(dt), sm, count(p, "m16n8k32.row.col.f32.e"), widened);
    CHECK_MSG(count(p, "ldmatrix") == steps * (mt + ntl / 2), "gemm mma %s sm_%d: %d ldmatrix", kb_dtype_name(dt), sm,
              count(p, "ldmatrix"));
    /* 3 stages: the prologue's two tiles and the loop's one, (128+128) x 32 elements in 16-byte chunks */
    int chunks = (128 + 128) * 32 * (int)kb_dtype_size(dt) / 16 / 128;
    CHECK_MSG(count(p, "cp.async.cg.shared.global") == 3 * chunks, "gemm mma %s sm_%d: %d cp.async 16 B",
              kb_dtype_name(dt), sm, count(p, "cp.async.cg.shared.global"));
    /* the epilogue (D rows 16-byte aligned): a 16-byte store per 16 bytes of a lane's output
     * (at least: ptxas may version the loop on beta, as it does for tf32) */
    int och = 16 / (dt == KB_DT_TF32 || dt == KB_DT_INT8 ? 4 : 2);   /* D: fp32, int32; else 16-bit */
    CHECK_MSG(count16(p, "st") >= mt * 16 * 64 / och / 32, "gemm mma %s sm_%d: %d 16-byte epilogue stores",
              kb_dtype_name(dt), sm, count16(p, "st"));
    free(p);
}

/* gemm_mma split into K slices (SPLITK=2): the same mma.sync count per k-tile, no local
 * memory, and the module holds the reduction kernel. */
static void check_gemm_split(kb_dtype dt, int sm)
{
    kb_case c = make("gemm", "mma", dt);
    set_param(&c, "layout", 1);
    set_param(&c, "SPLITK", 2);
    int mk = dt == KB_DT_FP16 ? 16 : 32;
    char *p = ptx_of(&c, sm);
    CHECK_MSG(p != NULL, "gemm mma SPLITK=2 %s sm_%d does not compile", kb_dtype_name(dt), sm);
    if (!p)
        return;
    CHECK_MSG(count(p, ".local") == 0, "gemm mma SPLITK=2 %s sm_%d uses local memory", kb_dtype_name(dt), sm);
    CHECK_MSG(count(p, "mma.sync") == 32 / mk * 4 * 8, "gemm mma SPLITK=2 %s sm_%d: %d mma.sync", kb_dtype_name(dt),
              sm, count(p, "mma.sync"));
    CHECK_MSG(count(p, ".entry gemm_splitk_reduce") == 1, "gemm mma SPLITK=2 %s sm_%d: no reduction kernel",
              kb_dtype_name(dt), sm);
    free(p);
}

static void test_gemm_mma(void)
{
    const kb_dtype dts[] = { KB_DT_FP16, KB_DT_BF16, KB_DT_TF32, KB_DT_INT8, KB_DT_FP8E4M3, KB_DT_FP8E5M2 };
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < 6; i++)
            if (kb_dtype_size(dts[i]) != 1 || dts[i] == KB_DT_INT8 || archs[a] >= 89)
                check_gemm_mma(dts[i], archs[a]);
    for (int a = 0; a < 3; a++) {
        check_gemm_split(KB_DT_FP16, archs[a]);
        check_gemm_split(KB_DT_INT8, archs[a]);
    }
    /* Blackwell: fp8 widened on 10.x, native on 12.x, as the architecture table says */
    check_gemm_mma(KB_DT_FP8E4M3, 100);
    check_gemm_mma(KB_DT_FP8E4M3, 120);
    check_gemm_mma(KB_DT_BF16, 120);
}

static char *entry_of(const char *ptx, const char *name);
static int count_after(const char *ptx, const char *what, const char *prev);

/* gemm_wgmma at sm_90a, BM 128 x BN 128, BK of 128 bytes (one 128B-swizzled box per operand
 * and stage), 4 stages: the k-tile body is unrolled and the loop over k-tiles is not, so the
 * PTX holds its BK*esz/32 wgmma.mma_async (one 64-row block per consumer warpgroup) once; the
 * producer's two TMA loads, the epilogue's C load and D store; mbarrier try_wait; both
 * setmaxnreg; fence.proxy.async; no mma.sync, no local memory. On sm_90 (no `a`) the module does
 * not compile (kb_wgmma.h's static_assert: wgmma needs sm_90a). */
static void check_gemm_wgmma(kb_dtype dt)
{
    kb_case c = make("gemm", "wgmma", dt);
    set_param(&c, "layout", 1);
    set_param(&c, "BK", 128 / (int64_t)kb_dtype_size(dt));
    set_param(&c, "STAGES", 4);
    const char *dn = kb_dtype_name(dt);
    char *ptx = ptx_of(&c, 90 + KB_ARCH_SPECIFIC), *p = ptx ? entry_of(ptx, "gemm_wgmma") : NULL;
    CHECK_MSG(p != NULL, "gemm wgmma %s sm_90a does not compile to an entry gemm_wgmma", dn);
    if (p) {
        CHECK_MSG(count(p, "wgmma.mma_async.sync.aligned.m64n128k") == 4, "gemm wgmma %s: %d wgmma.mma_async m64n128",
                  dn, count(p, "wgmma.mma_async"));
        CHECK_MSG(count(p, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == 3 &&
                  count(p, "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") == 1,
                  "gemm wgmma %s: %d TMA tensor copies", dn, count(p, "cp.async.bulk.tensor"));
        CHECK_MSG(count(p, "mbarrier.try_wait.parity") >= 3 && count(p, "mbarrier.arrive.expect_tx") == 2,
                  "gemm wgmma %s: %d try_wait.parity, %d arrive.expect_tx", dn, count(p, "mbarrier.try_wait.parity"),
                  count(p, "mbarrier.arrive.expect_tx"));
        CHECK_MSG(count(p, "setmaxnreg.dec.sync.aligned.u32 40") == 1 && count(p, "setmaxnreg.inc.sync.aligned.u32 232") == 1,
                  "gemm wgmma %s: setmaxnreg missing", dn);
        CHECK_MSG(count(p, "wgmma.fence") >= 1 && count(p, "wgmma.commit_group") >= 1 && count(p, "wgmma.wait_group") >= 2 &&
                  count(p, "fence.proxy.async") >= 2, "gemm wgmma %s: fences, commit or waits missing", dn);
        CHECK_MSG(count(p, ".multicast::cluster") == 0 && count(p, "barrier.cluster") == 0 &&
                  count(p, "shared::cluster.b64") == 0, "gemm wgmma %s: cluster PTX without a cluster", dn);
        CHECK_MSG(count(p, "mma.sync") == 0 && count(p, ".local") == 0, "gemm wgmma %s: %d mma.sync, %d .local", dn,
                  count(p, "mma.sync"), count(p, ".local"));
    }
    free(p);
    free(ptx);
    char *plain = ptx_of(&c, 90);
    CHECK_MSG(plain == NULL, "gemm wgmma %s compiled for sm_90 (no wgmma there)", dn);
    free(plain);
}

/* gemm_wgmma at sm_90a under cluster 2x1 and 1x2 (otherwise as check_gemm_wgmma): per k-tile
 * box the shared operand is one cp.async.bulk.tensor .multicast::cluster (issued by rank 0) and
 * the CTA's own operand one plain TMA load, beside the epilogue's C load; the stages are
 * released on every CTA's empty barrier (mbarrier.arrive.release.cluster.shared::cluster after
 * mapa); barrier.cluster after the barrier init and before exit; no local memory. */
static void check_gemm_wgmma_cluster(kb_dtype dt, int64_t cluster)
{
    kb_case c = make("gemm", "wgmma", dt);
    set_param(&c, "layout", 1);
    set_param(&c, "BK", 128 / (int64_t)kb_dtype_size(dt));
    set_param(&c, "STAGES", 4);
    set_param(&c, "cluster", cluster);
    const char *dn = kb_dtype_name(dt);
    char *ptx = ptx_of(&c, 90 + KB_ARCH_SPECIFIC), *p = ptx ? entry_of(ptx, "gemm_wgmma") : NULL;
    CHECK_MSG(p != NULL, "gemm wgmma %s cluster %lld does not compile to an entry gemm_wgmma", dn, (long long)cluster);
    if (p) {
        const char *mc = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster";
        const char *ld = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [";
        CHECK_MSG(count(p, mc) == 1 && count(p, ld) == 2, "gemm wgmma %s cluster %lld: %d multicast loads, %d plain", dn,
                  (long long)cluster, count(p, mc), count(p, ld));
        CHECK_MSG(count(p, "mbarrier.arrive.release.cluster.shared::cluster.b64") >= 2 &&
                  count(p, "mapa.shared::cluster") >= 2, "gemm wgmma %s cluster %lld: %d remote arrives", dn,
                  (long long)cluster, count(p, "mbarrier.arrive.release.cluster.shared::cluster.b64"));
        CHECK_MSG(count(p, "barrier.cluster.arrive") >= 2 && count(p, "barrier.cluster.wait") >= 2,
                  "gemm wgmma %s cluster %lld: %d barrier.cluster.arrive", dn, (long long)cluster,
                  count(p, "barrier.cluster.arrive"));
        CHECK_MSG(count(p, "wgmma.mma_async.sync.aligned.m64n128k") == 4 && count(p, ".local") == 0,
                  "gemm wgmma %s cluster %lld: %d wgmma, %d .local", dn, (long long)cluster,
                  count(p, "wgmma.mma_async"), count(p, ".local"));
    }
    free(p);
    free(ptx);
}

/* attention fa3 at sm_90a, d 64, 128-key tiles, causal: the consumer's loop body holds
 * S = Q K^T once as d/16 wgmma m64n128k16 from descriptors and P V as BKV/16 wgmma m64n64k16
 * with A in registers ({%r..}); the TMA loads of Q, K and V (rank 3) and the O store; the
 * named barriers with an id and a count (ping-pong bar.sync and bar.arrive, the epilogue's
 * bar.sync); both setmaxnreg; one ex2 per score after an FFMA (scale * log2 e folded in); no
 * mma.sync, no local memory. On sm_90 the module does not compile (wgmma needs sm_90a). */
static void check_attn_fa3(kb_dtype dt)
{
    kb_case c = make("attention", "fa3", dt);
    set_param(&c, "causal", 1);
    set_param(&c, "BKV", 128);
    set_param(&c, "STAGES", 2);
    c.dims[0] = 1, c.dims[1] = 32, c.dims[2] = 2048, c.dims[3] = 64;
    const char *dn = kb_dtype_name(dt);
    char *ptx = ptx_of(&c, 90 + KB_ARCH_SPECIFIC), *p = ptx ? entry_of(ptx, "attn_fa3") : NULL;
    CHECK_MSG(p != NULL, "attention fa3 %s sm_90a does not compile to an entry attn_fa3", dn);
    if (p) {
        CHECK_MSG(count(p, "wgmma.mma_async.sync.aligned.m64n128k16") == 4 &&
                  count(p, "wgmma.mma_async.sync.aligned.m64n64k16") == 8, "attention fa3 %s: %d m64n128k16 (Q K^T), "
                  "%d m64n64k16 (P V)", dn, count(p, "wgmma.mma_async.sync.aligned.m64n128k16"),
                  count(p, "wgmma.mma_async.sync.aligned.m64n64k16"));
        const char *pv = strstr(p, "wgmma.mma_async.sync.aligned.m64n64k16");
        const char *a = pv ? strstr(pv, "}, {%r") : NULL, *eol = pv ? strchr(pv, '\n') : NULL;
        CHECK_MSG(a != NULL && a < eol, "attention fa3 %s: P V's A operand is not a register list (the RS form)", dn);
        CHECK_MSG(count(p, "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == 3 &&
                  count(p, "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group") == 1,
                  "attention fa3 %s: %d TMA tensor copies", dn, count(p, "cp.async.bulk.tensor"));
        CHECK_MSG(count(p, "bar.sync %r") >= 2 && count(p, "bar.arrive %r") >= 1,
                  "attention fa3 %s: %d bar.sync and %d bar.arrive with a barrier id and count", dn,
                  count(p, "bar.sync %r"), count(p, "bar.arrive %r"));
        CHECK_MSG(count(p, "setmaxnreg.dec.sync.aligned.u32 24") == 1 && count(p, "setmaxnreg.inc.sync.aligned.u32 240") == 1,
                  "attention fa3 %s: setmaxnreg missing", dn);
        CHECK_MSG(count_after(p, "ex2.approx", "fma.rn.f32") >= 64, "attention fa3 %s: %d ex2 after an FFMA, want >= 64",
                  dn, count_after(p, "ex2.approx", "fma.rn.f32"));
        CHECK_MSG(count(p, "mma.sync") == 0 && count(p, ".local") == 0, "attention fa3 %s: %d mma.sync, %d .local", dn,
                  count(p, "mma.sync"), count(p, ".local"));
    }
    free(p);
    free(ptx);
    char *plain = ptx_of(&c, 90);
    CHECK_MSG(plain == NULL, "attention fa3 %s compiled for sm_90 (no wgmma there)", dn);
    free(plain);
}

/* attention fa3 in fp8 e4m3 at sm_90a, d 64, 128-key tiles: S = Q K^T as d/32 = 2 wgmma
 * m64n128k32 .e4m3 from descriptors, P V as BKV/32 = 4 m64n64k32 .e4m3 with A in registers
 * (no transpose immediate exists for fp8: V comes K-major from the pre-pass), P converted by
 * cvt ... e4m3x2 (BKV/4 = 32 per thread and tile), TMA loads of Q, K and two 64-key boxes of
 * Vt, O stored by the TMA; the pre-pass attn_fa3_vt in the same module; no local memory. */
static void check_attn_fa3_fp8(void)
{
    kb_case c = make("attention", "fa3", KB_DT_FP8E4M3);
    set_param(&c, "causal", 1);
    set_param(&c, "BKV", 128);
    set_param(&c, "STAGES", 2);
    c.dims[0] = 1, c.dims[1] = 32, c.dims[2] = 2048, c.dims[3] = 64;
    char *ptx = ptx_of(&c, 90 + KB_ARCH_SPECIFIC), *p = ptx ? entry_of(ptx, "attn_fa3") : NULL;
    char *vt = ptx ? entry_of(ptx, "attn_fa3_vt") : NULL;
    CHECK_MSG(p != NULL && vt != NULL, "attention fa3 fp8e4m3 sm_90a: entries attn_fa3 and attn_fa3_vt missing");
    if (p) {
        int qk = count(p, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3");
        int pv = count(p, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3");
        CHECK_MSG(qk == 2 && pv == 4, "attention fa3 fp8: %d m64n128k32 e4m3 (Q K^T), %d m64n64k32 e4m3 (P V)", qk, pv);
        const char *at = strstr(p, "wgmma.mma_async.sync.aligned.m64n64k32");
        const char *a = at ? strstr(at, "}, {%r") : NULL, *eol = at ? strchr(at, '\n') : NULL;
        CHECK_MSG(a != NULL && a < eol, "attention fa3 fp8: P V's A operand is not a register list (the RS form)");
        CHECK_MSG(count(p, "e4m3x2.f32") >= 32, "attention fa3 fp8: %d cvt to e4m3x2, want >= 32",
                  count(p, "e4m3x2.f32"));
        CHECK_MSG(count(p, "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == 4 &&
                  count(p, "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group") == 1,
                  "attention fa3 fp8: %d TMA tensor copies", count(p, "cp.async.bulk.tensor"));
        CHECK_MSG(count(p, "mma.sync") == 0 && count(p, ".local") == 0, "attention fa3 fp8: %d mma.sync, %d .local",
                  count(p, "mma.sync"), count(p, ".local"));
    }
    free(vt);
    free(p);
    free(ptx);
}

static void test_attn_fa3(void)
{
    check_attn_fa3(KB_DT_FP16);
    check_attn_fa3(KB_DT_BF16);
    check_attn_fa3_fp8();
}

static void test_gemm_wgmma(void)
{
    const kb_dtype dts[] = { KB_DT_FP16, KB_DT_BF16, KB_DT_FP8E4M3, KB_DT_FP8E5M2, KB_DT_INT8 };
    for (int i = 0; i < 5; i++)
        check_gemm_wgmma(dts[i]);
    check_gemm_wgmma_cluster(KB_DT_BF16, 1);      /* 2x1: B multicast */
    check_gemm_wgmma_cluster(KB_DT_FP8E4M3, 2);   /* 1x2: A multicast */
}

/* Lines holding `what` whose previous line starts with `prev` (after indentation). */
static int count_after(const char *ptx, const char *what, const char *prev)
{
    int n = 0;
    const char *last = NULL;
    for (const char *l = ptx; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        int hit = 0;
        for (size_t i = 0; i + strlen(what) <= len && !hit; i++)
            hit = !strncmp(l + i, what, strlen(what));
        if (hit && last) {
            while (*last == ' ' || *last == '\t')
                last++;
            n += !strncmp(last, prev, strlen(prev));
        }
        last = l;
    }
    return n;
}

/* attn_mma at rw rows per warp (mma 16, fa2 32), BQ x BKV tiles, head dim d. The K/V-tile
 * loop's body is unrolled and the loop is not, so the PTX holds per tile: rw/16 x (d/16 x
 * BKV/8 + BKV/16 x d/8) mma.sync; ldmatrix.x4: K d/16 x BKV/16, V BKV/16 x d/8 / 2, Q d/16
 * once before the loop (16 rows) or rw/16 x d/16 in it (32 rows); ex2 one per score plus
 * one rescale per row half (rw/16 x (BKV/2 + 2) per lane), each score's fed by one FFMA
 * (scale * log2 e folded in); five cp.async commit groups (Q,
 * K0, V0, next K, next V); every global store 16 bytes (through shared memory); no local
 * memory. */
static void check_attn_mma(const char *variant, kb_dtype dt, int causal, int bq, int bkv, int d, int sm)
{
    kb_case c = make("attention", variant, dt);
    int rw = !strcmp(variant, "fa2") ? 32 : 16, mt = rw / 16;
    set_param(&c, "causal", causal);
    set_param(&c, "BQ", bq);
    set_param(&c, "BKV", bkv);
    c.dims[0] = 1, c.dims[1] = 32, c.dims[2] = 2048, c.dims[3] = d;
    char *ptx = ptx_of(&c, sm), *p = ptx ? strstr(ptx, ".entry attn_mma(") : NULL;
    const char *dn = kb_dtype_name(dt);
    CHECK_MSG(p != NULL, "attention %s %s sm_%d does not compile to an entry attn_mma", variant, dn, sm);
    if (!p) {
        free(ptx);
        return;
    }
    char *next = strstr(p + 1, ".entry ");   /* the module's naive kernels follow or precede it */
    if (next)
        *next = '\0';
    int mma = mt * (d / 16 * bkv / 8 + bkv / 16 * d / 8), ldm = d / 16 * bkv / 16 + bkv / 16 * d / 16 + mt * d / 16;
    CHECK_MSG(count(p, ".local") == 0, "attention %s %s sm_%d uses local memory", variant, dn, sm);
    CHECK_MSG(count(p, "mma.sync") == mma, "attention %s %s sm_%d: %d mma.sync, want %d", variant, dn, sm,
              count(p, "mma.sync"), mma);
    CHECK_MSG(count(p, "ldmatrix") == ldm, "attention %s %s sm_%d: %d ldmatrix, want %d", variant, dn, sm,
              count(p, "ldmatrix"), ldm);
    CHECK_MSG(count(p, "ex2.approx") == mt * (bkv / 2 + 2), "attention %s %s sm_%d: %d ex2, want %d", variant, dn, sm,
              count(p, "ex2.approx"), mt * (bkv / 2 + 2));
    CHECK_MSG(count_after(p, "ex2.approx", "fma.rn.f32") == mt * bkv / 2, "attention %s %s sm_%d: %d ex2 after an FFMA, "
              "want %d", variant, dn, sm, count_after(p, "ex2.approx", "fma.rn.f32"), mt * bkv / 2);
    CHECK_MSG(count(p, "cp.async.commit_group") == 5, "attention %s %s sm_%d: %d commit groups", variant, dn, sm,
              count(p, "cp.async.commit_group"));
    int st16 = count16(p, "st"), st = count(p, "st.global");
    CHECK_MSG(st16 >= 1 && st16 == st, "attention %s %s sm_%d: %d global stores, %d of them 16 bytes", variant, dn, sm,
              st, st16);
    free(ptx);
}

/* attn_fused, d = 128, KC = 8: the chunk's body is unrolled and its loop is not, so the PTX
 * holds per chunk 2 x KC x d/TPR/4 shared loads, every one 16 bytes (4 adjacent columns per
 * run), whatever RQ: each load feeds 4 x RQ FMAs (register blocking), and at least
 * 2 x KC x RQ x d/TPR FMAs; no local memory. */
static void check_attn_fused(kb_dtype dt, int tpr, int rq, int sm)
{
    kb_case c = make("attention", "fused", dt);
    set_param(&c, "TPR", tpr);
    set_param(&c, "RQ", rq);
    set_param(&c, "BQ", 32 * rq);
    c.dims[0] = 1, c.dims[1] = 32, c.dims[2] = 2048, c.dims[3] = 128;
    char *ptx = ptx_of(&c, sm), *p = ptx ? strstr(ptx, ".entry attn_fused(") : NULL;
    const char *dn = kb_dtype_name(dt);
    CHECK_MSG(p != NULL, "attention fused %s sm_%d does not compile to an entry attn_fused", dn, sm);
    if (!p) {
        free(ptx);
        return;
    }
    char *next = strstr(p + 1, ".entry ");
    if (next)
        *next = '\0';
    int dpt = 128 / tpr, loads = 2 * 8 * dpt / 4;
    CHECK_MSG(count(p, ".local") == 0, "attention fused %s sm_%d uses local memory", dn, sm);
    CHECK_MSG(count(p, "ld.shared") == loads && count(p, "ld.shared.v4") == loads,
              "attention fused %s TPR=%d RQ=%d sm_%d: %d shared loads (%d of 16 bytes), want %d", dn, tpr, rq, sm,
              count(p, "ld.shared"), count(p, "ld.shared.v4"), loads);
    CHECK_MSG(count(p, "fma.rn.f32") >= 2 * 8 * rq * dpt, "attention fused %s TPR=%d RQ=%d sm_%d: %d FMAs", dn, tpr,
              rq, sm, count(p, "fma.rn.f32"));
    free(ptx);
}

static void test_attn_mma(void)
{
    for (int a = 0; a < 3; a++) {
        check_attn_mma("fa2", KB_DT_BF16, 1, 128, 64, 128, archs[a]);
        check_attn_mma("fa2", KB_DT_FP16, 0, 128, 32, 128, archs[a]);
        check_attn_mma("fa2", KB_DT_FP16, 1, 128, 64, 64, archs[a]);
        check_attn_mma("mma", KB_DT_BF16, 1, 64, 64, 128, archs[a]);
        check_attn_fused(KB_DT_BF16, 4, 1, archs[a]);
        check_attn_fused(KB_DT_BF16, 4, 2, archs[a]);
        check_attn_fused(KB_DT_FP16, 8, 4, archs[a]);
    }
}

/* The PTX of entry `name` alone (the module's other entries cut off), malloc'ed; NULL when absent. */
static char *entry_of(const char *ptx, const char *name)
{
    char head[96];
    snprintf(head, sizeof head, ".entry %s(", name);
    const char *p = strstr(ptx, head);
    if (!p)
        return NULL;
    const char *next = strstr(p + 1, ".entry ");
    size_t n = next ? (size_t)(next - p) : strlen(p);
    char *out = malloc(n + 1);
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* attention/decode at head dim d, q_len x group query rows per KV head, WARPS warps: attn_decode's
 * tile loop is not unrolled, its body is, so the PTX holds per tile (for the warp's 16 keys and
 * mt m16 row tiles: mt = 2 when the rows exceed 16 and d <= 128) mt x (2 d/16 + d/8) mma.sync;
 * ldmatrix.x4 of K d/16 and of V d/16 (.trans), and of Q mt d/16 once before the loop (in
 * registers when mt d <= 128) or per tile; at least 8 mt ex2 fed by an FFMA (one per score);
 * every cp.async is a 16-byte .cg copy; every global store 16 bytes (O in the dtype, or the
 * fp32 partials) but the 4-byte stores of the rows' lse (at most one per row half and row
 * tile); attn_decode_combine's partials read by 16-byte loads and O stored in 16 bytes; no
 * local memory in either. */
static void check_attn_decode(kb_dtype dt, int d, int q_len, int group, int warps, int sm)
{
    kb_case c = make("attention", "decode", dt);
    set_param(&c, "causal", 1);
    set_param(&c, "q_len", q_len);
    set_param(&c, "group", group);
    set_param(&c, "WARPS", warps);
    c.dims[0] = 16, c.dims[1] = 8 * group, c.dims[2] = 4096, c.dims[3] = d;
    int mt = q_len * group > 16 && d <= 128 ? 2 : 1, qreg = mt * d <= 128;
    char *ptx = ptx_of(&c, sm), *p = ptx ? entry_of(ptx, "attn_decode") : NULL;
    char *cb = ptx ? entry_of(ptx, "attn_decode_combine") : NULL;
    const char *dn = kb_dtype_name(dt);
    CHECK_MSG(p && cb, "attention decode %s d=%d sm_%d: no attn_decode and attn_decode_combine entries", dn, d, sm);
    if (p && cb) {
        int mma = mt * (2 * d / 16 + d / 8), ldm = d / 16 + d / 16 + mt * d / 16;
        CHECK_MSG(count(p, ".local") == 0 && count(cb, ".local") == 0, "attention decode %s d=%d sm_%d uses local "
                  "memory", dn, d, sm);
        CHECK_MSG(count(p, "mma.sync") == mma, "attention decode %s d=%d q_len=%d group=%d sm_%d: %d mma.sync, want %d",
                  dn, d, q_len, group, sm, count(p, "mma.sync"), mma);
        CHECK_MSG(count(p, "ldmatrix") == ldm, "attention decode %s d=%d sm_%d: %d ldmatrix, want %d (Q %s)", dn, d, sm,
                  count(p, "ldmatrix"), ldm, qreg ? "in registers" : "per tile");
        CHECK_MSG(count(p, "ldmatrix.sync.aligned.m8n8.x4.trans") == d / 16, "attention decode %s d=%d sm_%d: %d V "
                  "ldmatrix.trans", dn, d, sm, count(p, "ldmatrix.sync.aligned.m8n8.x4.trans"));
        CHECK_MSG(count_after(p, "ex2.approx", "fma.rn.f32") >= 8 * mt, "attention decode %s d=%d sm_%d: %d ex2 after "
                  "an FFMA", dn, d, sm, count_after(p, "ex2.approx", "fma.rn.f32"));
        int cp = count(p, "cp.async.cg.shared.global"), cp_ca = count(p, "cp.async.ca");
        CHECK_MSG(cp >= 3 && cp_ca == 0, "attention decode %s d=%d sm_%d: %d 16-byte cp.async.cg, %d cp.async.ca", dn,
                  d, sm, cp, cp_ca);
        int st16 = count16(p, "st"), st = count(p, "st.global"), lse = count(p, "st.global.f32");
        CHECK_MSG(st16 >= 2 && lse >= 1 && lse <= 2 * mt && st16 + lse == st,
                  "attention decode %s d=%d sm_%d: %d global stores, %d of them 16 bytes, %d 4-byte lse stores", dn, d,
                  sm, st, st16, lse);
        CHECK_MSG(count16(cb, "ld") >= 2 && count16(cb, "st") == 1 && count(cb, "st.global") == 1,
                  "attention decode combine %s d=%d sm_%d: %d 16-byte loads, %d stores (%d of 16 bytes)", dn, d, sm,
                  count16(cb, "ld"), count(cb, "st.global"), count16(cb, "st"));
    }
    free(p);
    free(cb);
    free(ptx);
}

static void test_attn_decode(void)
{
    for (int a = 0; a < 3; a++) {
        check_attn_decode(KB_DT_BF16, 128, 1, 8, 4, archs[a]);    /* Llama-70B decode: GQA 8, Q in registers */
        check_attn_decode(KB_DT_FP16, 128, 16, 4, 4, archs[a]);   /* 64 rows: 2 row tiles per warp, Q per tile */
        check_attn_decode(KB_DT_BF16, 256, 1, 8, 2, archs[a]);    /* head dim 256: Q per tile */
        check_attn_decode(KB_DT_FP16, 64, 1, 1, 4, archs[a]);     /* multi-head, one token */
    }
}

/* attention/decode_tma at sm_90a (d, q_len, group, WARPS as check_attn_decode): the same
 * mma.sync and ldmatrix per tile as attn_decode (the tile code is shared), but no cp.async:
 * the producer's d/64 TMA loads of Q and d/64 each of K and V (rank 3, completing on an
 * mbarrier, the loop body once), parity waits on the Q, full and empty barriers, expect_tx
 * arrivals for Q and the tiles, the consumers' plain arrive releasing a slot, elect.sync, the
 * consumers' named barrier with a count (bar.sync 1, 32 WARPS); no setmaxnreg (one producer
 * warp, not a warpgroup), no wgmma, no local memory; the combine entry beside it. */
static void check_attn_decode_tma(kb_dtype dt, int d, int q_len, int group, int warps)
{
    kb_case c = make("attention", "decode_tma", dt);
    set_param(&c, "causal", 1);
    set_param(&c, "q_len", q_len);
    set_param(&c, "group", group);
    set_param(&c, "WARPS", warps);
    c.dims[0] = 1, c.dims[1] = 8 * group, c.dims[2] = 32768, c.dims[3] = d;
    int mt = q_len * group > 16 && d <= 128 ? 2 : 1;
    char *ptx = ptx_of(&c, 90 + KB_ARCH_SPECIFIC), *p = ptx ? entry_of(ptx, "attn_decode_tma") : NULL;
    char *cb = ptx ? entry_of(ptx, "attn_decode_combine") : NULL;
    const char *dn = kb_dtype_name(dt);
    CHECK_MSG(p && cb, "attention decode_tma %s d=%d sm_90a: no attn_decode_tma and attn_decode_combine entries", dn, d);
    if (p && cb) {
        CHECK_MSG(count(p, "mma.sync") == mt * (2 * d / 16 + d / 8) && count(p, "ldmatrix.sync.aligned.m8n8.x4.trans") ==
                  d / 16, "attention decode_tma %s d=%d: %d mma.sync, %d V ldmatrix.trans", dn, d, count(p, "mma.sync"),
                  count(p, "ldmatrix.sync.aligned.m8n8.x4.trans"));
        CHECK_MSG(count(p, "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") ==
                  3 * d / 64 && count(p, "cp.async.cg") == 0 && count(p, "cp.async.ca") == 0,
                  "attention decode_tma %s d=%d: %d TMA tensor loads (want %d), %d cp.async.cg", dn, d,
                  count(p, "cp.async.bulk.tensor"), 3 * d / 64, count(p, "cp.async.cg"));
        CHECK_MSG(count(p, "mbarrier.try_wait.parity") >= 3 && count(p, "mbarrier.arrive.expect_tx") == 2 &&
                  count(p, "mbarrier.init") >= 3 && count(p, "mbarrier.arrive.shared") >= 1 &&
                  count(p, "elect.sync") == 1, "attention decode_tma %s d=%d: %d try_wait.parity, %d arrive.expect_tx, "
                  "%d init, %d arrive, %d elect.sync", dn, d, count(p, "mbarrier.try_wait.parity"),
                  count(p, "mbarrier.arrive.expect_tx"), count(p, "mbarrier.init"),
                  count(p, "mbarrier.arrive.shared"), count(p, "elect.sync"));
        CHECK_MSG(count(p, "bar.sync") >= 2 && count(p, "setmaxnreg") == 0 && count(p, "wgmma") == 0 &&
                  count(p, ".local") == 0 && count(cb, ".local") == 0, "attention decode_tma %s d=%d: %d bar.sync, "
                  "%d setmaxnreg, %d wgmma, %d .local", dn, d, count(p, "bar.sync"), count(p, "setmaxnreg"),
                  count(p, "wgmma"), count(p, ".local"));
    }
    free(p);
    free(cb);
    free(ptx);
}

static void test_attn_decode_tma(void)
{
    check_attn_decode_tma(KB_DT_BF16, 128, 1, 8, 4);    /* Llama-70B decode: GQA 8, one token */
    check_attn_decode_tma(KB_DT_BF16, 128, 16, 8, 4);   /* 128 rows: 4 row warps of 2 m16 tiles */
    check_attn_decode_tma(KB_DT_FP16, 256, 1, 8, 2);    /* head dim 256: 4 boxes per tile */
    check_attn_decode_tma(KB_DT_FP16, 64, 1, 1, 4);     /* multi-head, one token, one box */
}

/* A vec variant: no local memory, at least min_ld 16-byte loads and min_st 16-byte stores;
 * same = 1: as many 16-byte stores as loads (a copy kernel). */
static void check_vec(kb_case *c, const char *what, int min_ld, int min_st, int same)
{
    for (int a = 0; a < 3; a++) {
        char *p = ptx_of(c, archs[a]);
        CHECK_MSG(p != NULL, "%s %s sm_%d does not compile", what, kb_dtype_name(c->dtype), archs[a]);
        if (!p)
            continue;
        int ld = count16(p, "ld"), st = count16(p, "st");
        const char *dt = kb_dtype_name(c->dtype);
        CHECK_MSG(count(p, ".local") == 0, "%s %s sm_%d uses local memory", what, dt, archs[a]);
        CHECK_MSG(ld >= min_ld && st >= min_st, "%s %s sm_%d: %d 16-byte loads, %d 16-byte stores", what, dt, archs[a],
                  ld, st);
        CHECK_MSG(!same || ld == st, "%s %s sm_%d: %d 16-byte loads but %d 16-byte stores", what, dt, archs[a], ld, st);
        free(p);
    }
}

static void test_vec_variants(void)
{
    kb_dtype dts[] = { KB_DT_FP32, KB_DT_BF16 };
    for (int i = 0; i < 2; i++) {
        int vec = 16 / (int)kb_dtype_size(dts[i]);
        kb_case c = make("embedding", "vec", dts[i]);
        check_vec(&c, "embedding vec", 1, 1, 1);
        c = make("gelu", "vec", dts[i]);
        set_param(&c, "VEC", vec);
        check_vec(&c, "gelu vec", 1, 1, 1);
        c = make("layernorm", "vec", dts[i]);
        set_param(&c, "VEC", vec);
        check_vec(&c, "layernorm vec", 1, 1, 0);
        c = make("layernorm", "reg", dts[i]);  /* x: all NVEC 16-byte loads per thread, y: NVEC 16-byte stores */
        check_vec(&c, "layernorm reg", 4, 4, 0);
        set_param(&c, "SPLIT", 2);               /* the statistics kernel's loads besides */
        check_vec(&c, "layernorm reg SPLIT 2", 8, 4, 0);
        c = make("softmax", "online", dts[i]);   /* its 16-bit stores were split into 4-byte ones */
        set_param(&c, "VEC", vec);
        check_vec(&c, "softmax online", 1, 1, 0);
        c = make("softmax", "reg", dts[i]);
        check_vec(&c, "softmax reg", 4, 4, 0);
        set_param(&c, "SPLIT", 2);
        check_vec(&c, "softmax reg SPLIT 2", 8, 4, 0);
    }
}

/* The counter itself, on PTX lines written by hand. */
static void test_count16(void)
{
    const char *ptx = "\tld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
                      "\tst.global.v4.u16 [%rd2], {%rs1, %rs2, %rs3, %rs4};\n"
                      "\tst.global.v2.b64 [%rd3], {%rd4, %rd5};\n"
                      "  ld.global.v2.u32 {%r5, %r6}, [%rd6];\n";
    CHECK(count16(ptx, "ld") == 1 && count16(ptx, "st") == 1);
    CHECK(count(ptx, "global") == 4);
    const char *ex = "\tfma.rn.f32 %f1, %f2, %f3, %f4;\n\tex2.approx.f32 %f5, %f1;\n\tmul.f32 %f6, %f5, %f5;\n"
                     "\tex2.approx.f32 %f7, %f6;\n";
    CHECK(count_after(ex, "ex2.approx", "fma.rn.f32") == 1 && count_after(ex, "ex2.approx", "mul.f32") == 1);
}

/* sm_120a: gemm_mma's scaled recipes on the block-scaled mma.sync, assembled by ptxas (a
 * CUBIN was built) without local memory: mx through kind::mxf8f6f4 (fp8, fp6, fp4), nv through
 * kind::mxf4nvf4 scale_vec::4X; the same case for sm_90 has none (the dequantising path). */
static void test_gemm_block_scaled_sm120a(void)
{
    static const struct { kb_dtype dt; int recipe; const char *want; } cs[] = {
        { KB_DT_FP8E4M3, 4, "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0" },
        { KB_DT_FP6E3M2, 4, "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e3m2.e3m2.f32.ue8m0" },
        { KB_DT_FP4E2M1, 4, "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e2m1.f32.ue8m0" },
        { KB_DT_FP4E2M1, 5, "kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3" },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kb_case c = make("gemm", "mma", cs[i].dt);
        set_param(&c, "layout", 1);   /* nt */
        set_param(&c, "scale", cs[i].recipe);
        set_param(&c, "BK", 64);
        char *ptx = ptx_of_arch(&c, 120 + KB_ARCH_SPECIFIC, 1);
        CHECK_MSG(ptx != NULL, "gemm %s scale=%d does not compile for sm_120a", kb_dtype_name(cs[i].dt), cs[i].recipe);
        if (ptx) {
            CHECK_MSG(strstr(ptx, cs[i].want) != NULL, "%s: no %s", kb_dtype_name(cs[i].dt), cs[i].want);
            CHECK_MSG(!strstr(ptx, ".local"), "%s scale=%d: local memory on sm_120a", kb_dtype_name(cs[i].dt),
                      cs[i].recipe);
            free(ptx);
        }
        ptx = ptx_of(&c, 90);
        CHECK(ptx && !strstr(ptx, "block_scale"));
        free(ptx);
    }
}

int main(void)
{
    RUN(test_count16);
    RUN(test_gemm_mma);
    RUN(test_gemm_wgmma);
    RUN(test_attn_mma);
    RUN(test_attn_decode);
    RUN(test_attn_fa3);
    RUN(test_attn_decode_tma);
    RUN(test_vec_variants);
    RUN(test_gemm_block_scaled_sm120a);
    TEST_MAIN_END();
}
