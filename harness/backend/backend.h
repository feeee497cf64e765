/* backend.h - one interface, two implementations: cuda (driver API + NVRTC) and emu
 * (CPU emulator running the same kernel source).
 *
 * A backend is a table of function pointers. Slots marked OPTIONAL may be NULL and are
 * reached through the kb_be_* accessors below, which supply a default; every other slot
 * is always set. kb_backend_open refuses a table whose KB_CAP_* bits disagree with its
 * slots (kb_backend_check). Callers never ask which backend they drive: they ask what
 * it can do (kb_backend.caps, KB_CAP_*), so a third backend needs no caller changed.
 * Every function returns a kb_status; on failure the backend's last_error() holds a
 * one-line message ("file:line function: call -> NAME: message" for API failures).
 * Device memory is addressed by kb_dptr, an opaque 64-bit handle (a CUdeviceptr on
 * cuda, a host address on emu); kernel arguments are passed as kb_arg values, which
 * both backends marshal from the same description.
 */
#ifndef KB_BACKEND_H
#define KB_BACKEND_H

#include "backend/health.h"
#include "backend/telemetry.h"
#include "backend/tmap.h"
#include "core/kb.h"

#include <string.h>

typedef uint64_t kb_dptr;

/* Kernel argument: the kind decides both the cuLaunchKernel size and the emu ffi type.
 * KB_ARG_TMAP is a tensor map passed by value (`const __grid_constant__ kb_tmap`, 128 bytes,
 * made by kb_backend_tmap_encode): the launch copies the bytes, as CUDA copies parameters,
 * so a graph replays the map it captured. */
typedef enum { KB_ARG_PTR, KB_ARG_I32, KB_ARG_I64, KB_ARG_F32, KB_ARG_TMAP } kb_arg_kind;
typedef struct {
    kb_arg_kind kind;
    union { kb_dptr ptr; int32_t i32; int64_t i64; float f32; unsigned char tmap[KB_TMAP_BYTES]; } v;
} kb_arg;

static inline kb_arg kb_arg_ptr(kb_dptr p) { kb_arg a; a.kind = KB_ARG_PTR; a.v.ptr = p; return a; }
static inline kb_arg kb_arg_i32(int32_t x) { kb_arg a; a.kind = KB_ARG_I32; a.v.i32 = x; return a; }
static inline kb_arg kb_arg_i64(int64_t x) { kb_arg a; a.kind = KB_ARG_I64; a.v.i64 = x; return a; }
static inline kb_arg kb_arg_f32(float x) { kb_arg a; a.kind = KB_ARG_F32; a.v.f32 = x; return a; }
static inline kb_arg kb_arg_tmap(const unsigned char map[KB_TMAP_BYTES])
{
    kb_arg a;
    a.kind = KB_ARG_TMAP;
    memcpy(a.v.tmap, map, KB_TMAP_BYTES);
    return a;
}

/* Launch geometry. */
typedef struct {
    unsigned grid[3];       /* blocks */
    unsigned block[3];      /* threads per block */
    size_t shmem_bytes;     /* dynamic shared memory [bytes] */
    unsigned cluster[3];    /* blocks per thread block cluster in x, y, z; {1,1,1} (or all 0): no cluster.
                             * grid must be a multiple of it; sm_90+ (KB_PATH_CLUSTER) */
} kb_geom;

/* Blocks per cluster of g: 1 when g asks for no cluster (all dims 0 or 1). */
static inline unsigned kb_geom_cluster_blocks(const kb_geom *g)
{
    return (g->cluster[0] ? g->cluster[0] : 1) * (g->cluster[1] ? g->cluster[1] : 1) * (g->cluster[2] ? g->cluster[2] : 1);
}

/* Resource usage of one compiled kernel entry; -1 where unknown (emu). */
typedef struct {
    int registers;          /* per thread */
    int spill_store_bytes;  /* [bytes] */
    int spill_load_bytes;   /* [bytes] */
    int stack_bytes;        /* [bytes] stack frame */
    int static_shmem_bytes; /* [bytes] */
    int max_threads;        /* per block the kernel can be launched with */
} kb_resources;

/* What a backend can do. The caps field of the table and of kb_device_info. */
enum {
    KB_CAP_GPU_TIMER  = 1u << 0, /* the timer measures device time ("gpu"); without it, CPU time ("cpu") */
    KB_CAP_ROOFLINE   = 1u << 1, /* a GPU whose datasheet/clock peaks apply: % of roofline is meaningful */
    KB_CAP_FULL_SPEED = 1u << 2, /* executes at device speed: full shapes and full sampling are practical;
                                  * without it, suites run their check shapes and measure briefly */
    KB_CAP_GRAPHS     = 1u << 3, /* graph capture and replay (the graph_* slots are set) */
    KB_CAP_RESOURCES  = 1u << 4, /* per-entry registers, stack, shared memory, max threads (resources slot;
                                  * what a backend cannot know is -1: the emulator knows max threads only) */
    KB_CAP_TELEMETRY  = 1u << 5, /* clocks, power, temperature, throttle reasons (telemetry slot) */
    KB_CAP_VENDOR_LIBS = 1u << 6, /* vendor libraries (cuBLASLt, cuDNN) can run on the device (a GPU) */
    KB_CAP_CUBLASLT   = 1u << 7, /* cuBLASLt is loaded (vendor_* slots take KB_VOP_MATMUL). A backend's
                                  * caps promise it; a device's caps drop it when the library did not load */
    KB_CAP_CUDNN      = 1u << 8, /* cuDNN is loaded (vendor_* slots take KB_VOP_SDPA); as KB_CAP_CUBLASLT */
    KB_CAP_TMA        = 1u << 9  /* tensor maps can be encoded (tmap_encode slot) for TMA kernels. A backend's
                                  * caps promise it; a device's caps drop it where the device or the driver
                                  * has no TMA (kb_device_info.tma_note says why) */
};

/* Description of the device a backend drives (or emulates). */
typedef struct {
    char name[128];
    char uuid[64];          /* "GPU-xxxxxxxx-..." on cuda; "emu" on emu */
    char pci_bus_id[32];
    int sm;                 /* compute capability x10: 80, 89, 90, 100; emu: the emulated arch's */
    int sm_count;
    int clock_khz;          /* max SM clock */
    int mem_clock_khz;
    int mem_bus_bits;
    int l2_bytes;
    size_t total_mem_bytes;
    int max_shmem_per_block_optin; /* [bytes] */
    unsigned caps;          /* the backend's KB_CAP_* (without KB_CAP_GPU_TIMER timings are CPU
                             * timings, never GPU numbers) */
    char vendor_note[1024];  /* one line per vendor library: its version, or why it did not load; "" without */
    int driver_version;     /* cuda: cuDriverGetVersion (12040 = CUDA 12.4); 0 on emu */
    int target_sm;          /* the arch kernels are compiled for: a code of core/arch.h (sm_90a = 1090),
                             * --arch or the device's own; 0 = sm (kb_target_sm) */
    int toolchain_unusable; /* 1: no compiler this build found makes code this driver loads (run stops, exit 3) */
    char toolchain_note[512]; /* cuda: the NVRTC chosen and its fit with the driver, or why none fits; "" on emu */
    char tma_note[256];     /* cuda: how tensor maps are encoded, or why they cannot be here (KB_CAP_TMA dropped
                             * from caps: a device below compute capability 9.0, a driver without
                             * cuTensorMapEncodeTiled); "" on emu */
} kb_device_info;

/* The arch a device's kernels are compiled for (a code of core/arch.h): --arch when given,
 * else its own. Peaks, `devices` and the record's "sm" keep the device's own cc (d->sm). */
static inline int kb_target_sm(const kb_device_info *d) { return d->target_sm > 0 ? d->target_sm : d->sm; }

/* ---- vendor library calls (cuBLASLt, cuDNN): the OPTIONAL vendor_* slots ----
 *
 * A family reaches a vendor library only through a kb_vendor_op (exec.h: kb_run_vendor_plan
 * and kb_run_vendor_run), never by naming a backend. Plan once in setup (descriptors,
 * heuristics, workspace), run in enqueue (one library call on the backend's stream, so it
 * is timed, captured into graphs and synchronised like a launch). */
typedef enum { KB_VOP_MATMUL = 1, KB_VOP_SDPA } kb_vendor_op_kind;

/* D = alpha * op(A) op(B) + beta * C in kbench's row-major convention (kernels/gemm.cu):
 * A is m x k (stored k x m when a_trans), B is k x n (stored n x k when b_trans), C and D
 * m x n; leading dimensions in elements. Operand types follow dtype as kbench's own
 * kernels do: fp32 C/D for tf32, int32 C/D for int8, bf16 C/D for fp8, fp6 and fp4 (fp6
 * one code per byte, fp4 two per byte, the first in the low nibble). */
typedef struct {
    kb_dtype dtype;
    int64_t m, n, k;
    int a_trans, b_trans;
    int64_t lda, ldb, ldc;
    kb_dptr a, b, c, d;          /* c may equal d; c is not read when beta == 0 */
    float alpha, beta;
    kb_dptr scale_a, scale_b;    /* fp8/fp6/fp4: device scales of A and B as recipe says; else 0 */
    int recipe;                  /* kb_recipe (core/precision.h): tensor: one fp32 each; otherwise
                                  * scale tensors in the layout cuBLASLt reads (kb_lt_scale_offset) */
    int algo;                    /* rank in the algorithm list (0 = the heuristic's first choice) */
    int search;                  /* 0: heuristic ranks; > 0: enumerate configurations, at most this many */
    size_t workspace_bytes;      /* the most workspace the algorithm may use */
} kb_vendor_matmul;

/* O = softmax(Q K^T * scale [+ causal mask]) V, Q, K, V, O [b, h, s, d] contiguous. */
typedef struct {
    kb_dtype dtype;              /* fp16 | bf16 */
    int64_t b, h, s, d;
    int causal;
    float scale;
    kb_dptr q, k, v, o;
} kb_vendor_sdpa;

typedef struct {
    kb_vendor_op_kind kind;
    union { kb_vendor_matmul mm; kb_vendor_sdpa sdpa; } u;
} kb_vendor_op;

/* What a planned vendor call will run: enough to replay it with the same library version. */
typedef struct {
    char library[16];            /* "cuBLASLt", "cuDNN" */
    long version;                /* the library's own version number (cublasLtGetVersion, cudnnGetVersion) */
    int have_algo;               /* cuBLASLt: the fields below describe the algorithm */
    uint64_t algo[8];            /* the cublasLtMatmulAlgo_t, word by word */
    int algo_id, tile, stages, splitk, reduction, swizzle, custom; /* CUBLASLT_ALGO_CONFIG_*; -1 unknown */
    float waves;                 /* the heuristic's wavesCount (0 unknown) */
    int candidates;              /* algorithms the heuristic (or the enumeration) offered */
    size_t workspace_bytes;      /* [bytes] the workspace the call uses */
    char engine[96];             /* cuDNN: the engine the heuristic chose ("engine 3, knobs ..."); "" */
} kb_vendor_info;

typedef struct kb_vendor_plan kb_vendor_plan; /* a planned call, private to each backend */

/* What to compile: one module per distinct (source, defines, arch). */
typedef struct {
    const char *source_path;    /* kernels/<family>.cu */
    const char *include_dir;    /* kernels/ (holds kb_device.h) */
    const char *const *defines; /* "NAME=VALUE" strings */
    int n_defines;
    int sm;                     /* target architecture: a code of core/arch.h (90; sm_90a: 1090) */
} kb_compile_req;

/* Checks the emulator can build into its modules (--emu-check): every load and store of
 * kernel code is then seen by the runtime. */
enum {
    KB_EMU_CHECK_RACE = 1u << 0,  /* shared-memory races between warps within a barrier epoch */
    KB_EMU_CHECK_INIT = 1u << 1   /* reads of shared or global memory never written */
};

typedef struct kb_backend_ctx kb_backend_ctx; /* private to each backend */
typedef struct kb_module kb_module;           /* a loaded module, private to each backend */
typedef struct kb_graph kb_graph;             /* an instantiated graph, private to each backend */

typedef struct {
    const char *cache_dir;  /* compile cache root (see cache.h); NULL = default */
    int device_index;       /* cuda device ordinal */
    int sm_override;        /* --arch: a code of core/arch.h; 0 = the device's own */
    int emu_threads;        /* emu worker threads; 0 = number of cores */
    const char *emu_schedule; /* emu: "lockstep" (NULL), "warp-ahead", "random" or "random:SEED" */
    unsigned emu_checks;    /* emu: KB_EMU_CHECK_* the modules are built to perform */
} kb_backend_opts;

typedef struct kb_backend {
    const char *name;       /* "cuda", "emu" */
    unsigned caps;          /* KB_CAP_* this backend has */

    /* Open the backend. KB_ERR_SETUP with a clear message when no driver/device/
     * toolchain is present. On success *out is owned by the caller (fini). */
    kb_status (*init)(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t errlen);
    void (*fini)(kb_backend_ctx *x);
    const char *(*last_error)(kb_backend_ctx *x);

    kb_status (*device_info)(kb_backend_ctx *x, kb_device_info *out);

    /* OPTIONAL: toolchain identity for the compile-cache key ("nvrtc 13.0", "g++ 12.2.0"). */
    const char *(*toolchain_id)(kb_backend_ctx *x);
    /* OPTIONAL: file extension of the compiled artefact (".cubin", ".so"). */
    const char *artifact_ext;
    /* Compile req into the artefact file out_path (the cache renames it into place).
     * Appends the compiler log to *log. KB_ERR_COMPILE when the source does not compile.
     * Called from several compile workers at once (engine/modules.c), for different
     * requests: build and toolchain_id must not write shared state. */
    kb_status (*build)(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log);
    /* Load a built artefact. */
    kb_status (*load)(kb_backend_ctx *x, const char *artifact_path, kb_module **out);
    void (*unload)(kb_backend_ctx *x, kb_module *m);
    /* OPTIONAL (KB_CAP_RESOURCES): resources of one entry of a loaded module (fields -1
     * where unknown). */
    kb_status (*resources)(kb_backend_ctx *x, kb_module *m, const char *entry, kb_resources *out);
    /* OPTIONAL: whether build compiles for the architecture of code (core/arch.h), asked of
     * the compiler itself with no device or context (NVRTC's list, read at run time): 1; 0
     * with why (it lacks that architecture); -1 with why (no compiler can be loaded). */
    int (*compiles_for)(int code, char *why, size_t n);
    /* OPTIONAL: the resources of entry as the build log reports them (what the loaded
     * module cannot tell, e.g. spills in ptxas's report); fields -1 where the log says
     * nothing. Returns 0 when the log describes entry, -1 otherwise. Needs no context. */
    int (*build_resources)(const char *log, const char *entry, kb_resources *out);

    kb_status (*alloc)(kb_backend_ctx *x, size_t bytes, kb_dptr *out); /* poisoned with 0xFF bytes on emu */
    void (*free)(kb_backend_ctx *x, kb_dptr p);
    kb_status (*upload)(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t bytes);
    kb_status (*download)(kb_backend_ctx *x, void *dst, kb_dptr src, size_t bytes);
    kb_status (*fill)(kb_backend_ctx *x, kb_dptr dst, uint8_t byte, size_t bytes);

    /* Enqueue one launch on the backend's stream (emu: runs it to completion). */
    kb_status (*launch)(kb_backend_ctx *x, kb_module *m, const char *entry,
                        const kb_geom *g, const kb_arg *args, int nargs);
    kb_status (*sync)(kb_backend_ctx *x);

    /* Timing: events on cuda, a monotonic CPU clock on emu. stop() synchronises. */
    kb_status (*timer_start)(kb_backend_ctx *x);
    kb_status (*timer_stop)(kb_backend_ctx *x, double *elapsed_us);

    /* OPTIONAL (KB_CAP_TELEMETRY): read the device's telemetry now; available 0 with the
     * reason when it cannot be read (never a failure of the case). */
    void (*telemetry)(kb_backend_ctx *x, kb_telemetry *out);

    /* OPTIONAL (KB_CAP_GRAPHS, all four or none): CUDA Graph capture of everything
     * launched between begin and end. */
    kb_status (*graph_begin)(kb_backend_ctx *x);
    kb_status (*graph_end)(kb_backend_ctx *x, kb_graph **out);
    kb_status (*graph_launch)(kb_backend_ctx *x, kb_graph *g);
    void (*graph_free)(kb_backend_ctx *x, kb_graph *g);

    /* OPTIONAL (KB_CAP_VENDOR_LIBS, all three or none): plan a vendor library call
     * (descriptors, algorithm choice, workspace) and fill *info; KB_ERR_SETUP when the
     * library is not loaded, KB_ERR_INPUT when it offers no algorithm for the problem
     * (the message says so). run enqueues it on the backend's stream. */
    kb_status (*vendor_plan)(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info);
    kb_status (*vendor_run)(kb_backend_ctx *x, kb_vendor_plan *p);
    void (*vendor_free)(kb_backend_ctx *x, kb_vendor_plan *p);
    /* OPTIONAL: how timer_start/timer_stop measure, for the records ("cuda events behind a
     * blocking kernel", ...); NULL: the backend's clock around each window */
    const char *(*timing_method)(kb_backend_ctx *x);
    /* OPTIONAL: the SM clock now and the clock it should run at [MHz], read right after each
     * sample: the maximum, or the locked or application clock when the user set one (the
     * sampling loop discards samples under throttle_threshold of it). 1 when read. */
    int (*sample_clock)(kb_backend_ctx *x, int *sm_mhz, int *sm_ref_mhz);
    /* OPTIONAL: the GPU's health now (health.h: ECC, retired pages, row remapping, PCIe
     * link, serial); values the device or driver cannot give are unread with the reason. */
    void (*health)(kb_backend_ctx *x, kb_health *out);
    /* OPTIONAL (KB_CAP_TMA): encode a validated tensor map into the 128-byte opaque map a
     * TMA kernel takes (the emulator's own format on emu; cuTensorMapEncodeTiled on cuda).
     * KB_ERR_INPUT with the reason for what the backend cannot encode, or where the device has
     * no TMA (its caps lack KB_CAP_TMA). Reach it through kb_backend_tmap_encode, which
     * validates first. */
    kb_status (*tmap_encode)(kb_backend_ctx *x, const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES]);
} kb_backend;

extern const kb_backend kb_backend_cuda;
extern const kb_backend kb_backend_emu;
/* The cuda backend with PTX instead of CUBINs as its artefact (the driver JIT-compiles PTX
 * when it loads it): `kbench compile --emit ptx` builds through it. Not selectable by name. */
extern const kb_backend kb_backend_cuda_ptx;

/* Look a backend up by name; NULL when unknown. */
const kb_backend *kb_backend_find(const char *name);

/* Caps a backend name promises before it is opened ("auto" promises what the
 * emulator has: it is what auto falls back to). 0 for an unknown name. */
unsigned kb_backend_caps_of(const char *name);

/* Whether table b keeps its promises: every KB_CAP_* bit that names OPTIONAL slots set
 * exactly when those slots are (KB_CAP_GRAPHS: all four graph_* slots; KB_CAP_VENDOR_LIBS:
 * all three vendor_* slots; KB_CAP_TELEMETRY: telemetry; KB_CAP_RESOURCES: resources), a
 * library bit (KB_CAP_CUBLASLT, KB_CAP_CUDNN) only with KB_CAP_VENDOR_LIBS, and every
 * slot that is not OPTIONAL set. 0 when it does; -1 with the first disagreement in err. */
int kb_backend_check(const kb_backend *b, char *err, size_t errlen);

/* Open a backend by name ("auto": cuda when a device is present, else emu with a
 * one-line banner through kb_report). A table that fails kb_backend_check is refused
 * before it is initialised (KB_ERR_INTERNAL: a bug in that backend). Returns KB_OK, or
 * KB_ERR_SETUP / KB_ERR_INPUT / KB_ERR_INTERNAL with err filled. */
kb_status kb_backend_open(const char *name, const kb_backend_opts *bo, const kb_backend **be,
                          kb_backend_ctx **bx, char *err, size_t errlen);

/* kb_backend_open's work on a table: check b, init it, and where that finds no usable
 * device (KB_ERR_SETUP) and fallback is given, report it and open fallback instead (what
 * "auto" does with cuda and emu). As kb_backend_open. */
kb_status kb_backend_open_table(const kb_backend *b, const kb_backend *fallback, const kb_backend_opts *bo,
                                const kb_backend **be, kb_backend_ctx **bx, char *err, size_t errlen);

/* ---- the OPTIONAL slots, each reached through one accessor with a default ----
 * (the shape of ggml's ggml-backend-impl.h). Callers never test a slot for NULL: they
 * call these, or test the KB_CAP_* bit kb_backend_check ties to the slot. */

/* be's toolchain identity for cache keys; "" without the slot. */
const char *kb_be_toolchain_id(const kb_backend *be, kb_backend_ctx *bx);
/* The extension of be's compiled artefacts (".cubin"); "" when the table names none. */
const char *kb_be_artifact_ext(const kb_backend *be);
/* The resources slot; without it every field -1 and KB_ERR_SETUP. */
kb_status kb_be_resources(const kb_backend *be, kb_backend_ctx *bx, kb_module *m, const char *entry,
                          kb_resources *out);
/* The compiles_for slot; without it 1 for every architecture of the table (the backend's
 * compiler takes any: the emulator's), 0 with why for a code the table lacks. */
int kb_be_compiles_for(const kb_backend *be, int code, char *why, size_t n);
/* The build_resources slot; without it every field -1 and -1 (the log describes nothing). */
int kb_be_build_resources(const kb_backend *be, const char *log, const char *entry, kb_resources *out);
/* The telemetry slot; without it available 0 with the reason. */
void kb_be_telemetry(const kb_backend *be, kb_backend_ctx *bx, kb_telemetry *out);
/* The graph_* slots; without them KB_ERR_LAUNCH (graph_end sets *out NULL), free does nothing. */
kb_status kb_be_graph_begin(const kb_backend *be, kb_backend_ctx *bx);
kb_status kb_be_graph_end(const kb_backend *be, kb_backend_ctx *bx, kb_graph **out);
kb_status kb_be_graph_launch(const kb_backend *be, kb_backend_ctx *bx, kb_graph *g);
void kb_be_graph_free(const kb_backend *be, kb_backend_ctx *bx, kb_graph *g);
/* The vendor_* slots; without them KB_ERR_SETUP (plan sets *out NULL), free does nothing. */
kb_status kb_be_vendor_plan(const kb_backend *be, kb_backend_ctx *bx, const kb_vendor_op *op, kb_vendor_plan **out,
                            kb_vendor_info *info);
kb_status kb_be_vendor_run(const kb_backend *be, kb_backend_ctx *bx, kb_vendor_plan *p);
void kb_be_vendor_free(const kb_backend *be, kb_backend_ctx *bx, kb_vendor_plan *p);
/* How the timer measures; without the slot "host monotonic clock around each window". */
const char *kb_be_timing_method(const kb_backend *be, kb_backend_ctx *bx);
/* The SM clock now and its maximum [MHz]; 1 when read, 0 (nothing written) without the slot. */
int kb_be_sample_clock(const kb_backend *be, kb_backend_ctx *bx, int *sm_mhz, int *sm_max_mhz);
/* The GPU's health; without the slot every value unread, "the <name> backend reads no GPU
 * health (no NVML)". */
void kb_be_health(const kb_backend *be, kb_backend_ctx *bx, kb_health *out);
/* A tensor-map kernel argument for d on backend b: kb_tmap_validate's rules first (KB_ERR_INPUT
 * with the broken rule in err), then the backend's tmap_encode (KB_ERR_INPUT "cannot encode
 * tensor maps" without KB_CAP_TMA). On success *out is a KB_ARG_TMAP argument. */
kb_status kb_backend_tmap_encode(const kb_backend *b, kb_backend_ctx *x, const kb_tmap_desc *d, kb_arg *out,
                                 char *err, size_t errlen);

/* The timing clock label of a device: "gpu" with KB_CAP_GPU_TIMER, else "cpu". */
static inline const char *kb_clock_name(unsigned caps) { return caps & KB_CAP_GPU_TIMER ? "gpu" : "cpu"; }

#endif /* KB_BACKEND_H */
