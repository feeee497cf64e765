/* test_ptx.c - offline PTX checks (NVRTC, no GPU) for sm_80, sm_89 and sm_90: what the
 * fast variants claim is in the instructions they compile to, so that a speed regression
 * fails CI without a GPU. Per checked case: no local memory (.local), the 16-byte
 * global accesses (cp.async 16 B, ld/st.global.v4) where the variant claims them, and
 * gemm_mma's mma.sync count per k-tile (the k-tile loop's body is unrolled, the loop over
 * k-tiles is not, so the PTX holds the body once), and its 16-byte epilogue stores. */
#include "check.h"
#include "core/fsutil.h"
#include "engine/defines.h"
#include "engine/family.h"
#include "engine/modules.h"

#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>

static const int archs[] = { 80, 89, 90 };

/* The PTX of case c's module for compute_<sm>, malloc'ed; NULL (and a message) on failure. */
static char *ptx_of(const kb_case *c, int sm)
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
    char arch[32], inc[1100], cuda[1100];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d", sm);
    snprintf(inc, sizeof inc, "-I%s", kb_kernels_dir());
    snprintf(cuda, sizeof cuda, "-I%.*s", (int)strcspn(KB_CUDA_INCLUDE_DIR, ";"), KB_CUDA_INCLUDE_DIR);
    int no = 0;
    opts[no++] = arch, opts[no++] = "-std=c++17", opts[no++] = inc, opts[no++] = cuda;
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
            fprintf(stderr, "compute_%d: %s\n", sm, log);
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

/* gemm_mma: per k-tile BK/mk steps, each MT x NTL mma.sync (twice for fp8 widened to f16 on
 * sm_90), MT + NTL/2 ldmatrix.x4 (layout nt); 16-byte cp.async; no local memory. */
static void check_gemm_mma(kb_dtype dt, int sm)
{
    kb_case c = make("gemm", "mma", dt);
    set_param(&c, "layout", 1);   /* nt: both operands K-contiguous, ldmatrix for every dtype */
    int mk = dt == KB_DT_TF32 ? 8 : dt == KB_DT_FP16 || dt == KB_DT_BF16 ? 16 : 32;
    int steps = 32 / mk, mt = 64 / 16, ntl = 64 / 8;
    int widened = (dt == KB_DT_FP8E4M3 || dt == KB_DT_FP8E5M2) && sm >= 90;
    char *p = ptx_of(&c, sm);
    CHECK_MSG(p != NULL, "gemm mma %s sm_%d does not compile", kb_dtype_name(dt), sm);
    if (!p)
        return;
    CHECK_MSG(count(p, ".local") == 0, "gemm mma %s sm_%d uses local memory", kb_dtype_name(dt), sm);
    CHECK_MSG(count(p, "mma.sync") == steps * mt * ntl * (widened ? 2 : 1), "gemm mma %s sm_%d: %d mma.sync",
              kb_dtype_name(dt), sm, count(p, "mma.sync"));
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
        c = make("softmax", "online", dts[i]);   /* its 16-bit stores were split into 4-byte ones */
        set_param(&c, "VEC", vec);
        check_vec(&c, "softmax online", 1, 1, 0);
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
}

int main(void)
{
    RUN(test_count16);
    RUN(test_gemm_mma);
    RUN(test_vec_variants);
    TEST_MAIN_END();
}
