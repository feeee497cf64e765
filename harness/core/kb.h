/* kb.h - types every stage of kbench shares: status codes, dtypes, a planned case.
 *
 * Data flows one way: suite -> plan (kb_case[]) -> compile -> execute -> measure ->
 * derive -> record. Everything a later stage needs about a case lives in kb_case;
 * the family descriptor (family.h) gives meaning to its dims[] and params[].
 */
#ifndef KB_H
#define KB_H

#include <stddef.h>
#include <stdint.h>

#include "core/arch.h" /* the architectures every stage names by code */

/* ---- status codes (returned by every fallible function; 0 is success) ---- */
typedef enum {
    KB_OK = 0,
    KB_ERR_INPUT,     /* bad user input: suite, flag, case parameters */
    KB_ERR_SETUP,     /* environment: no driver, no device, missing library/tool */
    KB_ERR_COMPILE,   /* kernel did not compile (log attached to the case) */
    KB_ERR_LAUNCH,    /* launch rejected (bad geometry, too many resources) */
    KB_ERR_OOM,       /* allocation failed */
    KB_ERR_FAULT,     /* kernel faulted, or the emulator detected a divergent barrier */
    KB_ERR_TIMEOUT,   /* kernel or case exceeded its time budget */
    KB_ERR_IO,        /* file system */
    KB_ERR_INTERNAL,  /* a bug in kbench */
    KB_ERR_INTERRUPTED, /* SIGINT/SIGTERM arrived: the work in flight was abandoned */
    KB_STATUS_COUNT
} kb_status;

const char *kb_status_name(kb_status s); /* "ok", "input", ... never NULL */

/* ---- interruption: set by the command's signal handler, polled by every long loop
 * (warm-up, sampling, launch overhead, emulated blocks) so that Ctrl-C or SIGTERM ends
 * them promptly. Async-signal-safe to set. ---- */
void kb_interrupt_set(int sig);
int kb_interrupted(void);            /* the signal that arrived, 0 when none */
/* A command's handler for SIGINT and SIGTERM: the first sets the flag (blocking calls
 * restart, so the case in flight runs to its record), a second ends the process at once. */
void kb_interrupt_install(void);

/* ---- process exit codes (documented in README) ---- */
enum {
    KB_EXIT_OK = 0,       /* every case ok or skipped */
    KB_EXIT_WRONG = 1,    /* at least one case wrong, faulted, failed to compile or launch */
    KB_EXIT_INPUT = 2,    /* bad command line or suite; nothing was run */
    KB_EXIT_SETUP = 3,    /* no device / driver / toolchain; out of memory */
    KB_EXIT_REGRESS = 4,  /* kbench compare found a regression beyond the threshold */
    KB_EXIT_SLOW = 5,     /* kbench accept/fleet: a GPU is below a performance floor or a fleet outlier */
    KB_EXIT_INCORRECT = 6, /* kbench accept/fleet: wrong results or a hardware error on a GPU */
    KB_EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM: finished cases are recorded */
};

/* ---- element types ---- */
typedef enum {
    KB_DT_FP32 = 0,
    KB_DT_TF32,     /* fp32 storage, tf32 tensor-core math */
    KB_DT_FP16,
    KB_DT_BF16,
    KB_DT_INT8,     /* int8 operands, int32 accumulate/output */
    KB_DT_FP8E4M3,
    KB_DT_FP8E5M2,
    KB_DT_FP6E2M3,  /* OCP MX fp6, one element per byte (low 6 bits): block-scaled recipes only */
    KB_DT_FP6E3M2,
    KB_DT_FP4E2M1,  /* OCP MX fp4, one element per byte (low 4 bits): mx and nv recipes */
    KB_DT_COUNT
} kb_dtype;

#define KB_DT_BIT(d) (1u << (d))

/* "fp32", "tf32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2", "fp6e2m3", "fp6e3m2", "fp4e2m1" */
const char *kb_dtype_name(kb_dtype d);
int kb_dtype_parse(const char *s, kb_dtype *out);   /* 0 on success, -1 unknown; also "fp8" = e4m3, "fp4" = e2m1 */
/* storage bytes of one element in kbench's own kernels (fp6 and fp4: one per byte) */
size_t kb_dtype_size(kb_dtype d);
/* bits of one element as the format packs it (fp6: 6, fp4: 4; the others 8 x size): what
 * a work model counts as compulsory bytes */
int kb_dtype_bits(kb_dtype d);
/* C type spelled in kernel source for storage: "float", "kb_half", "kb_bf16", "int8_t", "kb_fp8e4m3", ... */
const char *kb_dtype_ctype(kb_dtype d);

/* ---- launch modes ---- */
typedef enum { KB_LAUNCH_EAGER = 0, KB_LAUNCH_GRAPH, KB_LAUNCH_COUNT } kb_launch_mode;
const char *kb_launch_name(kb_launch_mode m);        /* "eager", "graph" */

/* ---- a planned case ---- */
#define KB_MAX_DIMS 4
#define KB_MAX_PARAMS 24

typedef struct {
    int family;                      /* index into kb_families[] */
    int variant;                     /* index into that family's variants[] */
    kb_dtype dtype;
    int64_t dims[KB_MAX_DIMS];       /* family dims in declared order (gemm: m,n,k) [elements] */
    int64_t params[KB_MAX_PARAMS];   /* family params in declared order; choice params hold the choice index */
    int pad;                         /* [elements] leading-dim padding / base misalignment, meaning per family */
    kb_launch_mode launch;
    uint32_t seed;                   /* input PRNG seed */
    int shape_name;                  /* index into the plan's shape-name table, -1 for an inline shape */
    int check_shape;                 /* 1 when dims are the suite's small "check" shape (emu) */
    int entry;                       /* index of the suite entry that produced it (for messages) */
} kb_case;

/* ---- growable string buffer (used for logs, ids, JSON fragments) ---- */
typedef struct {
    char *s;      /* NUL-terminated, never NULL after kb_sb_init */
    size_t len;
    size_t cap;
} kb_sb;

void kb_sb_init(kb_sb *b);
void kb_sb_free(kb_sb *b);
void kb_sb_printf(kb_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kb_sb_append(kb_sb *b, const char *s, size_t n);
void kb_sb_clear(kb_sb *b);

/* Out of memory where no caller can carry the error (the string buffer, the suite
 * loader's tree): "kbench: out of memory (what, N bytes)" on stderr, then exit with
 * KB_EXIT_SETUP - a clear error, never an abort's core dump. Records already written stay. */
void kb_out_of_memory(const char *what, size_t bytes) __attribute__((noreturn));

/* ---- small PRNG (splitmix64 seeding + xoshiro128**) for deterministic inputs ---- */
typedef struct { uint32_t s[4]; } kb_rng;
void kb_rng_seed(kb_rng *r, uint64_t seed);
uint32_t kb_rng_u32(kb_rng *r);
float kb_rng_uniform(kb_rng *r, float lo, float hi); /* [lo, hi) */

/* ---- 64-bit FNV-1a, used for cache keys ---- */
uint64_t kb_hash64(const void *p, size_t n, uint64_t h);  /* start with KB_HASH_INIT */
#define KB_HASH_INIT 0xcbf29ce484222325ull

#endif /* KB_H */
