/* test_gemm.c - what the GEMM suite (tests/suites/kernels_gemm.yaml) cannot show: the
 * descriptor and work model, valid()'s reasons and their dependence on the target, that
 * verification catches a broken kernel (the smem variant without its barrier after the
 * tile loads, BROKEN_NO_SYNC=1) and unwritten outputs, the native fp8 mma path (the
 * emulator's default sm_90 takes the f16 route), and the sampled reference of big shapes. */
#include "family_fixture.h"
#include "gemm_model.h"   /* variant, param and layout indices; the launch geometry */

#include <math.h>
#include <stdlib.h>
#include <string.h>


static kb_case make_case(int variant, kb_dtype dt, int layout, int64_t m, int64_t n, int64_t k, int pad)
{
    kb_case c = family_case(variant, dt, pad, 11);
    c.dims[0] = m, c.dims[1] = n, c.dims[2] = k;
    c.params[P_LAYOUT] = layout;
    return c;
}

static void test_descriptor(void)
{
    CHECK(fam->n_variants == 5 && fam->n_dims == 3 && fam->n_params == 22);
    CHECK(!strcmp(fam->variants[V_CUBLASLT].name, "cublaslt") && fam->variants[V_CUBLASLT].entry == NULL);
    CHECK(kb_param_applies(fam, P_ALGO, V_CUBLASLT) && !kb_param_applies(fam, P_ALGO, V_MMA) &&
          !kb_param_applies(fam, P_BM, V_CUBLASLT) && kb_param_applies(fam, P_LAYOUT, V_CUBLASLT));
    CHECK(!strcmp(fam->variants[V_NAIVE].name, "naive") && !strcmp(fam->variants[V_SMEM].name, "smem") &&
          !strcmp(fam->variants[V_MMA].name, "mma"));
    CHECK(!(fam->variants[V_SMEM].dtypes & KB_DT_BIT(KB_DT_INT8)));
    CHECK(!(fam->variants[V_MMA].dtypes & KB_DT_BIT(KB_DT_FP32)));
    CHECK(kb_param_applies(fam, P_TM, V_SMEM) && !kb_param_applies(fam, P_TM, V_MMA));
    CHECK(kb_param_applies(fam, P_STAGES, V_MMA) && !kb_param_applies(fam, P_BM, V_NAIVE));
    kb_sb b;
    kb_sb_init(&b);
    kb_case c = make_case(V_MMA, KB_DT_BF16, L_NT, 37, 45, 29, 8);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "gemm/mma(layout=nt,alpha=1,beta=0,BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3)/bf16/37x45x29/pad8/eager"),
              "%s", b.s);
    /* GROUP came later: out of the id at its default (above), in it otherwise */
    c.params[P_GROUP] = 4;
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "gemm/mma(layout=nt,alpha=1,beta=0,BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3,GROUP=4)/bf16/37x45x29/pad8/eager"),
              "%s", b.s);
    kb_case_defines(fam, &c, &b);
    CHECK_MSG(strstr(b.s, "GROUP=4\n") && strstr(b.s, "LAYOUT=1\n") && strstr(b.s, "LAYOUT_NT=1") && strstr(b.s, "GEMM_VARIANT=2") &&
                  strstr(b.s, "KB_T=kb_bf16"), "%s", b.s);
    kb_sb_free(&b);
}

/* gemm/wgmma's cluster param: out of the id at 1x1, in it otherwise; the CLUSTER define; the
 * launch in whole {2,1,1} clusters over cluster units (300 x 200 in 128 x 64 tiles: 3 x 4 tiles,
 * 2x1: 2 x 4 units, the last M unit half phantom; 1x2: 3 x 2 units). */
static void test_wgmma_cluster(void)
{
    kb_case c = make_case(V_WGMMA, KB_DT_BF16, L_NT, 300, 200, 96, 0);
    c.params[P_BN] = 64;
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(!strstr(b.s, "cluster"), "%s", b.s);
    kb_geom g = kb_gemm_geom(&c);
    CHECK(g.grid[0] == 12 && g.grid[1] == 1 && kb_geom_cluster_blocks(&g) == 1);
    c.params[P_CLUSTER] = CLUSTER_2X1;
    kb_case_id(&c, &b);
    CHECK_MSG(strstr(b.s, ",cluster=2x1)"), "%s", b.s);
    kb_case_defines(fam, &c, &b);
    CHECK_MSG(strstr(b.s, "CLUSTER=1\n"), "%s", b.s);
    g = kb_gemm_geom(&c);
    CHECK(g.grid[0] == 16 && g.cluster[0] == 2 && kb_geom_cluster_blocks(&g) == 2);
    CHECK(kb_gemm_wgmma_cluster(&c, 0) == 2 && kb_gemm_wgmma_cluster(&c, 1) == 1);
    c.params[P_CLUSTER] = CLUSTER_1X2;
    g = kb_gemm_geom(&c);
    CHECK(g.grid[0] == 12 && g.cluster[0] == 2 && kb_gemm_wgmma_cluster(&c, 1) == 2);
    kb_sb_free(&b);
}

/* 2*M*N*K (+2*M*N with beta); A + B read (+ C with beta), D written; pad is not work. */
static void test_work_model(void)
{
    kb_case c = make_case(V_SMEM, KB_DT_FP16, L_NN, 4, 6, 10, 8);
    kb_work w = fam->work(&c);
    CHECK(w.flops == 2.0 * 4 * 6 * 10);
    CHECK(w.bytes_read == (4 * 10 + 10 * 6) * 2.0 && w.bytes_written == 4 * 6 * 2.0);
    c.params[P_BETA] = 1;
    w = fam->work(&c);
    CHECK(w.flops == 2.0 * 4 * 6 * 10 + 2.0 * 4 * 6);
    CHECK(w.bytes_read == (4 * 10 + 10 * 6) * 2.0 + 4 * 6 * 2.0);
    c.dtype = KB_DT_INT8;   /* int8 operands, int32 C and D */
    w = fam->work(&c);
    CHECK(w.bytes_read == (4 * 10 + 10 * 6) * 1.0 + 4 * 6 * 4.0 && w.bytes_written == 4 * 6 * 4.0);
}

static int refused(const kb_case *c, const kb_target *t, const char *needle)
{
    char why[512] = "";
    int ok = fam->valid(c, t, why, sizeof why);
    if (ok || !strstr(why, needle))
        fprintf(stderr, "valid=%d, reason '%s' lacks '%s'\n", ok, why, needle);
    return !ok && strstr(why, needle) != NULL;
}

/* cuBLASLt: refused without vendor libraries (the emulator) or without the library, and
 * for what its documentation rules out; its id carries only its own params. */
static void test_cublaslt_valid(void)
{
    kb_target emu = { 90, 0, 227 * 1024 };
    kb_target gpu = { 90, KB_CAP_VENDOR_LIBS | KB_CAP_CUBLASLT | KB_CAP_CUDNN, 227 * 1024 };
    kb_target nolib = { 90, KB_CAP_VENDOR_LIBS | KB_CAP_CUDNN, 227 * 1024 }, ada = gpu;
    ada.sm = 80;
    char why[512];
    kb_case c = make_case(V_CUBLASLT, KB_DT_FP16, L_NT, 48, 96, 64, 1);
    CHECK(refused(&c, &emu, "cuBLASLt needs a GPU"));
    CHECK(refused(&c, &nolib, "KBENCH_LIBCUBLASLT"));
    CHECK(fam->valid(&c, &gpu, why, sizeof why));
    c.dtype = KB_DT_FP8E5M2;
    CHECK(refused(&c, &gpu, "no e5m2 x e5m2"));
    c.dtype = KB_DT_FP8E4M3;
    CHECK(fam->valid(&c, &gpu, why, sizeof why));
    CHECK(refused(&c, &ada, "sm_89"));
    c.params[P_LAYOUT] = L_NN;
    CHECK(refused(&c, &gpu, "TN form"));
    /* INT8 (IMMA) with the regular data ordering: the TN form only, as FP8 */
    static const int64_t not_tn[] = { L_NN, L_TN, L_TT };
    for (int i = 0; i < 3; i++) {
        c = make_case(V_CUBLASLT, KB_DT_INT8, not_tn[i], 48, 96, 64, 0);
        CHECK(refused(&c, &gpu, "INT8 matmul takes only the TN form"));
    }
    c = make_case(V_CUBLASLT, KB_DT_INT8, L_NT, 48, 96, 64, 0);
    CHECK(fam->valid(&c, &gpu, why, sizeof why));
    c.params[P_SEARCH] = 1;
    c.params[P_ALGO] = 64;
    CHECK(refused(&c, &gpu, "below budget=64"));
    kb_sb b;
    kb_sb_init(&b);
    c = make_case(V_CUBLASLT, KB_DT_BF16, L_NT, 48, 96, 64, 0);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "gemm/cublaslt(layout=nt,alpha=1,beta=0,algo=0,workspace=32,search=heuristic,budget=64)"
                           "/bf16/48x96x64/pad0/eager"), "%s", b.s);
    kb_sb_free(&b);
    kb_work w = fam->work(&c), wm = fam->work((c.variant = V_MMA, &c));
    CHECK(w.flops == wm.flops && w.bytes_read == wm.bytes_read && w.bytes_written == wm.bytes_written);
}

/* wgmma: sm_90a only, with the reason elsewhere; layout nt; 16-byte strides (the pad axis);
 * the tile rules; its id, defines and launch (384 threads, one block per tile before the
 * launch clamps the grid to the SMs). */
static void test_wgmma_valid(void)
{
    kb_target h100a = { 1090, 0, 227 * 1024 }, h100 = h100a, a100 = h100a;
    h100.sm = 90, a100.sm = 80;
    char why[512];
    kb_case c = make_case(V_WGMMA, KB_DT_BF16, L_NT, 300, 200, 200, 0);
    c.params[P_BK] = 64;
    CHECK_MSG(fam->valid(&c, &h100a, why, sizeof why), "%s", why);
    CHECK(refused(&c, &h100, "only sm_90a has") && refused(&c, &h100, "the target is sm_90"));
    CHECK(refused(&c, &a100, "use --arch sm_90a"));
    kb_target notma = h100a;
    notma.caps = KB_CAP_GPU_TIMER;
    CHECK(refused(&c, &notma, "tensor maps cannot be encoded here"));
    c.params[P_LAYOUT] = L_NN;
    CHECK(refused(&c, &h100a, "layout nt only"));
    c.params[P_LAYOUT] = L_NT;
    c.pad = 1;   /* (200 + 1) x 2 bytes */
    CHECK(refused(&c, &h100a, "multiples of 16 bytes") && refused(&c, &h100a, "402, 402, 402 bytes at pad 1"));
    c.pad = 8;
    CHECK(fam->valid(&c, &h100a, why, sizeof why));
    c.dims[2] = 36;   /* K = 36: 72-byte rows of A and B */
    CHECK(refused(&c, &h100a, "lda, ldb, ldc = 88, 88, 416"));
    c = make_case(V_WGMMA, KB_DT_FP8E4M3, L_NT, 64, 64, 64, 0);
    CHECK(fam->valid(&c, &h100a, why, sizeof why));   /* BK 32 x 1 byte: the 32-byte swizzle */
    c.params[P_BM] = 64;
    CHECK(refused(&c, &h100a, "BM is 128 or 256"));
    c.params[P_BM] = 256, c.params[P_BN] = 256;
    CHECK(refused(&c, &h100a, "256 accumulators per consumer thread"));
    c.params[P_BN] = 40;
    CHECK(refused(&c, &h100a, "multiple of 16 in [16, 256]"));
    c.params[P_BN] = 128, c.params[P_BK] = 48;
    CHECK(refused(&c, &h100a, "32, 64 or a multiple of 128"));
    c.params[P_BK] = 64, c.params[P_SCHEDULE] = SCHED_PINGPONG;   /* one warpgroup per tile: BM 64 or 128 */
    CHECK(refused(&c, &h100a, "under pingpong one consumer warpgroup takes the whole tile"));
    c.params[P_BM] = 128, c.params[P_BN] = 256;
    CHECK(refused(&c, &h100a, "256 accumulators per consumer thread"));
    c.params[P_BM] = 64;
    CHECK_MSG(fam->valid(&c, &h100a, why, sizeof why), "%s", why);
    c.params[P_SCHEDULE] = SCHED_COOPERATIVE, c.params[P_BM] = 256, c.params[P_BN] = 128;
    c.params[P_BK] = 256, c.params[P_STAGES] = 8;   /* 8 x (256 + 128) x 256 bytes */
    CHECK(refused(&c, &h100a, "bytes of shared memory; sm_90a allows"));
    c.params[P_STAGES] = 1;
    CHECK(refused(&c, &h100a, "2 to 8 stages"));

    kb_sb b;
    kb_sb_init(&b);
    c = make_case(V_WGMMA, KB_DT_BF16, L_NT, 300, 200, 200, 0);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "gemm/wgmma(layout=nt,alpha=1,beta=0,BM=128,BN=128,BK=32,STAGES=3)/bf16/300x200x200/pad0/eager"),
              "%s", b.s);
    kb_case_defines(fam, &c, &b);
    CHECK_MSG(strstr(b.s, "GEMM_VARIANT=4") && strstr(b.s, "SCHEDULE=0\n") && strstr(b.s, "SCHEDULE_COOPERATIVE=0"),
              "%s", b.s);
    kb_sb_free(&b);
    kb_geom g = kb_gemm_geom(&c);
    CHECK(g.block[0] == 384 && g.grid[0] == 3 * 2 && g.grid[1] == 1);
    /* 1024 slack + 3 x (128 + 128) x 32 x 2 + 128 x 128 x 2 + 7 mbarriers */
    CHECK(g.shmem_bytes == 1024 + 3 * 256 * 64 + 128 * 128 * 2 + 7 * 8 && (int64_t)g.shmem_bytes == kb_gemm_wgmma_smem_bytes(&c));
    c.params[P_SCHEDULE] = SCHED_PINGPONG;   /* a staging tile and a C barrier per consumer warpgroup */
    CHECK(kb_gemm_wgmma_smem_bytes(&c) == 1024 + 3 * 256 * 64 + 2 * 128 * 128 * 2 + 8 * 8);
}

/* One wgmma case end to end at sm_90a on the emulator (6 tiles on 2 workers: the persistent
 * loop wraps; beta reads C through TMA); the suite runs the rest. */
static void test_wgmma_runs(void)
{
    kb_case c = make_case(V_WGMMA, KB_DT_BF16, L_NT, 200, 152, 72, 8);
    c.params[P_BN] = 64, c.params[P_BK] = 64, c.params[P_BETA] = 1, c.params[P_GROUP] = 2;
    kb_verify v;
    kb_status st;
    run_family_on_emu(&c, 1090, NULL, 1, FAM_CHECK_VALID | FAM_CHECK_RUN_OK, &v, &st);
    CHECK_MSG(st == KB_OK && v.n == 200 * 152 && v.n_bad == 0 && v.guard_bad == 0, "n %lld bad %lld guard %lld",
              (long long)v.n, (long long)v.n_bad, (long long)v.guard_bad);
}

/* fp8 two-level accumulation (accum=two): fp8 only, within the registers; at K = 2048 the
 * emulator's model of Hopper's fp8 accumulation (13 explicit mantissa bits per wgmma,
 * truncated) costs the one-level kernel a visible error, which two levels cut, both within
 * the tolerance (seed 11: max |error| 0.955 and 0.474; what remains is D's bf16 rounding). */
static void test_wgmma_two_level(void)
{
    kb_target h100a = { 1090, 0, 227 * 1024 };
    kb_case c = make_case(V_WGMMA, KB_DT_BF16, L_NT, 128, 64, 8192, 0);
    c.params[P_BN] = 64, c.params[P_BK] = 128, c.params[P_ACCUM] = ACCUM_TWO;
    CHECK(refused(&c, &h100a, "accum=two is for fp8"));
    c.dtype = KB_DT_FP8E4M3;
    char why[256];
    CHECK_MSG(fam->valid(&c, &h100a, why, sizeof why), "%s", why);
    c.params[P_BN] = 256;
    CHECK(refused(&c, &h100a, "second f32 accumulator"));
    c.params[P_BN] = 64;
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(strstr(b.s, "STAGES=3,accum=two)"), "%s", b.s);
    kb_sb_free(&b);
    kb_verify one, two;
    kb_status st;
    run_family_on_emu(&c, 1090, NULL, 1, FAM_CHECK_VALID | FAM_CHECK_RUN_OK, &two, &st);
    c.params[P_ACCUM] = ACCUM_ONE;
    run_family_on_emu(&c, 1090, NULL, 1, FAM_CHECK_VALID | FAM_CHECK_RUN_OK, &one, &st);
    CHECK_MSG(one.n_bad == 0 && two.n_bad == 0 && two.n == 128 * 64, "bad: one %lld, two %lld", (long long)one.n_bad,
              (long long)two.n_bad);
    CHECK_MSG(two.max_abs_err < 0.6 * one.max_abs_err, "max error: two-level %g, one-level %g", two.max_abs_err,
              one.max_abs_err);
    printf("     fp8 e4m3, K = 8192: max |error| one-level %.3g, two-level %.3g (tolerance %.3g)\n", one.max_abs_err,
           two.max_abs_err, one.atol);
}

/* ---- the matmul the cublaslt variant plans, on a host-memory backend with fake vendor slots ---- */
static kb_vendor_op planned;
static int vendor_runs;
static char plan_token;

static kb_status host_alloc(kb_backend_ctx *x, size_t n, kb_dptr *out)
{
    void *p = malloc(n);
    *out = (kb_dptr)(uintptr_t)p;
    return p ? KB_OK : KB_ERR_OOM;
}
static void host_free(kb_backend_ctx *x, kb_dptr p) { free((void *)(uintptr_t)p); }
static kb_status host_in(kb_backend_ctx *x, kb_dptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return KB_OK;
}
static kb_status plan_it(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info)
{
    planned = *op;
    *out = (kb_vendor_plan *)&plan_token;
    return KB_OK;
}
static kb_status run_it(kb_backend_ctx *x, kb_vendor_plan *p)
{
    vendor_runs++;
    return KB_OK;
}
static void free_it(kb_backend_ctx *x, kb_vendor_plan *p) {}

static void test_cublaslt_plans_the_same_problem(void)
{
    static const kb_backend host = { .name = "host", .caps = KB_CAP_VENDOR_LIBS, .alloc = host_alloc, .free = host_free, .upload = host_in,
                                     .vendor_plan = plan_it, .vendor_run = run_it, .vendor_free = free_it };
    kb_case c = make_case(V_CUBLASLT, KB_DT_FP8E4M3, L_NT, 48, 96, 64, 1);
    c.params[P_BETA] = 2;
    c.params[P_WORKSPACE] = 4;
    kb_run r;
    memset(&r, 0, sizeof r);
    r.be = &host, r.f = fam, r.c = &c;
    void *st = NULL;
    CHECK(fam->setup(&r, &st) == KB_OK);
    const kb_vendor_matmul *mm = &planned.u.mm;
    CHECK(planned.kind == KB_VOP_MATMUL && mm->dtype == KB_DT_FP8E4M3 && mm->m == 48 && mm->n == 96 && mm->k == 64);
    CHECK(!mm->a_trans && mm->b_trans && mm->lda == 65 && mm->ldb == 65 && mm->ldc == 97);
    CHECK(mm->alpha == 1 && mm->beta == 2 && mm->c != mm->d && mm->algo == 0 && mm->search == 0);
    CHECK(mm->workspace_bytes == 4u << 20);
    /* the per-tensor scales, in device memory, are the powers of two the inputs were scaled by */
    float sa, sb;
    memcpy(&sa, (void *)(uintptr_t)mm->scale_a, 4);
    memcpy(&sb, (void *)(uintptr_t)mm->scale_b, 4);
    CHECK(sa > 0 && sb > 0 && frexpf(sa, &(int){ 0 }) == 0.5f && frexpf(sb, &(int){ 0 }) == 0.5f);
    CHECK(fam->enqueue(&r, st) == KB_OK && vendor_runs == 1);
    fam->teardown(&r, st);
    kb_run_free_all(&r);
}

static void test_valid_reasons(void)
{
    kb_target sm80 = { 80, 0, 163 * 1024 }, sm89 = { 89, 0, 99 * 1024 }, sm90 = { 90, 0, 227 * 1024 };
    char why[512];
    kb_case c = make_case(V_MMA, KB_DT_FP8E4M3, L_NT, 37, 45, 29, 1);
    CHECK(fam->valid(&c, &sm89, why, sizeof why) && fam->valid(&c, &sm90, why, sizeof why));
    CHECK(refused(&c, &sm80, "needs sm_89"));

    /* tf32 at the default tiles, 4 stages: 4 x (128 + 128) x 32 x 4 = 131072 bytes (swizzled
     * tiles, no row pad; 3 stages, 98304 bytes, fit sm_89's 99 KiB) */
    c = make_case(V_MMA, KB_DT_TF32, L_NN, 37, 45, 29, 0);
    c.params[P_STAGES] = 4;
    CHECK(fam->valid(&c, &sm90, why, sizeof why) && fam->valid(&c, &sm80, why, sizeof why));
    CHECK(refused(&c, &sm89, "131072 bytes"));
    c.params[P_STAGES] = 3;
    CHECK(fam->valid(&c, &sm89, why, sizeof why));
    /* the epilogue's staging can be the larger: 8 warps of 16 x (16 + 8) fp32 = 12288 bytes */
    c = make_case(V_MMA, KB_DT_INT8, L_NT, 37, 45, 29, 0);
    c.params[P_BM] = 64, c.params[P_BN] = 32, c.params[P_WM] = 16, c.params[P_WN] = 16, c.params[P_STAGES] = 2;
    kb_traffic_gpu gpu = { 0 };
    kb_traffic t = { 0 };
    CHECK(fam->traffic(&c, &gpu, &t) && t.dyn_smem_bytes == 12288);
    /* GROUP numbers the blocks with int */
    c = make_case(V_MMA, KB_DT_FP16, L_NT, 65535LL * 128, 32768LL * 128 + 1, 16, 0);
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.params[P_GROUP] = 8;
    CHECK(refused(&c, &sm90, "GROUP=8"));
    /* pad 1 (register staging): 16-bit 128x128x64 holds 16 chunks (64 registers) + 128
     * accumulators and spilled; BK=32 (8 chunks) and 32-bit tf32 (no funnel shift) do not */
    c = make_case(V_MMA, KB_DT_BF16, L_NT, 37, 48, 64, 1);
    c.params[P_BK] = 64;
    CHECK(refused(&c, &sm90, "16 register-staged"));
    c.pad = 0;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.pad = 1, c.params[P_BK] = 32;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.dtype = KB_DT_TF32;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    /* split-K: 1 to 4 slices, grid.z of the launch */
    c = make_case(V_MMA, KB_DT_FP16, L_NT, 16, 4096, 4096, 0);
    c.params[P_SPLITK] = 5;
    CHECK(refused(&c, &sm90, "SPLITK=5"));
    c.params[P_SPLITK] = 4;
    CHECK(fam->valid(&c, &sm90, why, sizeof why) && fam->traffic(&c, &gpu, &t) && t.launches == 2 &&
          t.blocks == 4 * 32);

    c = make_case(V_MMA, KB_DT_FP16, L_NN, 37, 45, 29, 0);
    c.params[P_BM] = 96;
    CHECK(refused(&c, &sm90, "BM=96 is not a multiple of WM=64"));
    c = make_case(V_MMA, KB_DT_FP16, L_NN, 37, 45, 29, 0);
    c.params[P_WN] = 8;
    CHECK(refused(&c, &sm90, "WN=8"));
    c = make_case(V_MMA, KB_DT_INT8, L_NN, 37, 45, 29, 0);
    c.params[P_BK] = 16;
    CHECK(refused(&c, &sm90, "int8 mma depth 32"));
    c = make_case(V_MMA, KB_DT_FP16, L_NN, 37, 45, 29, 0);
    c.params[P_WN] = 128;
    CHECK(refused(&c, &sm90, "256 accumulators"));
    c = make_case(V_MMA, KB_DT_FP16, L_NN, 37, 45, 29, 0);
    c.params[P_STAGES] = 1;
    CHECK(refused(&c, &sm90, "STAGES=1"));

    c = make_case(V_SMEM, KB_DT_FP32, L_TT, 37, 45, 29, 0);
    CHECK(fam->valid(&c, &sm80, why, sizeof why));
    c.params[P_TM] = 16;
    c.params[P_TN] = 16;
    CHECK(refused(&c, &sm80, "TM*TN = 256"));
    c = make_case(V_SMEM, KB_DT_FP32, L_TT, 37, 45, 29, 0);
    c.params[P_TN] = 3;
    CHECK(refused(&c, &sm80, "multiples of TM=8, TN=3"));
    c = make_case(V_SMEM, KB_DT_FP32, L_TT, 37, 45, 29, 0);
    c.params[P_BK] = 64;
    CHECK(refused(&c, &sm80, "48 KiB"));

    c = make_case(V_NAIVE, KB_DT_FP32, L_NN, 8 * 65535 + 1, 1, 1, 0);
    CHECK(refused(&c, &sm80, "65535"));
    c = make_case(V_NAIVE, KB_DT_FP32, L_NN, 3, 3, 3, 0);
    c.params[P_ALPHA] = 1 << 25;
    CHECK(refused(&c, &sm80, "exact in fp32"));
}

/* One case on the emulator for arch sm, with extra defines appended: setup, the kernel
 * (when launch), check; valid() must accept it. A launch failure lands in *st_out, not
 * in a CHECK. */
static void run_on_emu(const kb_case *c, int sm, const char *extra, int launch, kb_verify *v, kb_status *st_out)
{
    run_family_on_emu(c, sm, extra, launch, FAM_CHECK_VALID, v, st_out);
}

/* Without the barrier after the tile loads, threads read tile elements others have not
 * written yet (poisoned NaN on the emulator): verification must call the case wrong. The
 * same case with the barrier passes, so it is the barrier that matters. */
static void test_broken_no_sync_is_caught(void)
{
    kb_case c = make_case(V_SMEM, KB_DT_FP32, L_NN, 37, 45, 29, 0);
    c.params[P_BM] = 32, c.params[P_BN] = 64, c.params[P_BK] = 8, c.params[P_TM] = 4, c.params[P_TN] = 4;
    kb_verify v;
    kb_status st;
    run_on_emu(&c, 90, NULL, 1, &v, &st);
    CHECK_MSG(st == KB_OK && v.n == 37 * 45 && v.n_bad == 0, "%s, %lld bad", kb_status_name(st), (long long)v.n_bad);
    run_on_emu(&c, 90, "BROKEN_NO_SYNC=1", 1, &v, &st);
    CHECK_MSG(st == KB_ERR_FAULT || (st == KB_OK && v.n_bad > 0), "%s, %lld bad of %lld", kb_status_name(st),
              (long long)v.n_bad, (long long)v.n);
    printf("     without the barrier: %lld of %lld elements wrong\n", (long long)v.n_bad, (long long)v.n);
}

/* smem with TM = 2 but TN = 4: A is read scalar, B as float4s. With BM*BK = 30 floats
 * the B tile must still start 16-byte aligned (it faulted: misaligned vector load). */
static void test_smem_b_tile_aligned_after_odd_a_tile(void)
{
    kb_case c = make_case(V_SMEM, KB_DT_FP32, L_NN, 37, 45, 29, 0);
    c.params[P_BM] = 6, c.params[P_BN] = 128, c.params[P_BK] = 5, c.params[P_TM] = 2, c.params[P_TN] = 4;
    kb_verify v;
    kb_status st;
    run_on_emu(&c, 90, NULL, 1, &v, &st);
    CHECK_MSG(st == KB_OK && v.n == 37 * 45 && v.n_bad == 0, "%s, %lld bad", kb_status_name(st), (long long)v.n_bad);
}

/* One product missing from each dot product must fail, in the narrowest types too:
 * the tolerance follows the fp32 accumulation and D's rounding, not the operand type. */
static void test_one_missing_product_is_caught(void)
{
    kb_dtype dts[] = { KB_DT_FP8E5M2, KB_DT_FP8E4M3, KB_DT_BF16, KB_DT_FP16, KB_DT_TF32, KB_DT_FP32 };
    for (int i = 0; i < 6; i++) {
        kb_case c = make_case(V_NAIVE, dts[i], L_NT, 24, 40, 64, 0);
        kb_verify v;
        kb_status st;
        run_on_emu(&c, 90, NULL, 1, &v, &st);
        CHECK_MSG(st == KB_OK && v.n_bad == 0, "%s: %lld bad", kb_dtype_name(dts[i]), (long long)v.n_bad);
        run_on_emu(&c, 90, "BROKEN_SHORT_K=1", 1, &v, &st);
        CHECK_MSG(st == KB_OK && v.n_bad > v.n / 2, "%s: only %lld of %lld elements caught",
                  kb_dtype_name(dts[i]), (long long)v.n_bad, (long long)v.n);
    }
}

/* No kernel: D keeps its 0xFF poison (NaN, or -1 for int32): every element fails. */
static void test_unwritten_output_fails(void)
{
    kb_case c = make_case(V_NAIVE, KB_DT_BF16, L_TN, 5, 7, 3, 1);
    kb_verify v;
    kb_status st;
    run_on_emu(&c, 90, NULL, 0, &v, &st);
    CHECK(st == KB_OK && v.n == 35 && v.n_bad == 35);
    c.dtype = KB_DT_INT8;
    run_on_emu(&c, 90, NULL, 0, &v, &st);
    CHECK(st == KB_OK && v.n == 35 && v.n_bad >= 30 && v.atol == 0.0 && v.rtol == 0.0);
}

/* fp8 through the native m16n8k32 e4m3/e5m2 mma (sm_89) and through the f16 widening
 * (sm_90), with beta: both verify. */
static void test_fp8_native_and_widened(void)
{
    for (int sm = 89; sm <= 90; sm++)
        for (kb_dtype dt = KB_DT_FP8E4M3; dt <= KB_DT_FP8E5M2; dt++) {
            kb_case c = make_case(V_MMA, dt, L_TT, 37, 53, 70, 0);
            c.params[P_BM] = 32, c.params[P_BN] = 64, c.params[P_WM] = 32, c.params[P_WN] = 32, c.params[P_STAGES] = 2;
            c.params[P_ALPHA] = 3, c.params[P_BETA] = 1;
            kb_verify v;
            kb_status st;
            run_on_emu(&c, sm, NULL, 1, &v, &st);
            CHECK_MSG(st == KB_OK && v.n == 37 * 53 && v.n_bad == 0, "sm_%d %s: %s, %lld bad (got %g want %g)", sm,
                      kb_dtype_name(dt), kb_status_name(st), (long long)v.n_bad, v.got_at_bad, v.want_at_bad);
        }
}

/* Beyond 2^28 reference multiply-adds the check samples evenly spaced rows. */
static void test_big_shapes_check_sampled_rows(void)
{
    kb_case c = make_case(V_NAIVE, KB_DT_FP16, L_NN, 9000, 128, 512, 0);   /* 590M MACs */
    kb_verify v;
    kb_status st;
    run_on_emu(&c, 90, NULL, 0, &v, &st);
    int64_t rows = (1LL << 28) / (128 * 512);   /* 4096 rows of 128 */
    CHECK_MSG(st == KB_OK && v.n == rows * 128, "%lld compared", (long long)v.n);
    CHECK(v.n_bad == v.n);   /* nothing ran */
}

int main(void)
{
    if (!family_begin("gemm"))
        TEST_MAIN_END();
    RUN(test_descriptor);
    RUN(test_wgmma_cluster);
    RUN(test_work_model);
    RUN(test_valid_reasons);
    RUN(test_cublaslt_valid);
    RUN(test_wgmma_valid);
    RUN(test_wgmma_runs);
    RUN(test_wgmma_two_level);
    RUN(test_cublaslt_plans_the_same_problem);
    RUN(test_broken_no_sync_is_caught);
    RUN(test_smem_b_tile_aligned_after_odd_a_tile);
    RUN(test_unwritten_output_fails);
    RUN(test_one_missing_product_is_caught);
    RUN(test_fp8_native_and_widened);
    RUN(test_big_shapes_check_sampled_rows);
    TEST_MAIN_END();
}
