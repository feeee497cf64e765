/* arch.h - the architectures kbench compiles for, as one table (docs/architecture.md
 * "Architectures are one table"). `--arch`, the compile-cache key, the NVRTC option, the
 * gating defines kernels test, valid(), estimate, peaks, acceptance and the emulator's
 * limits all read it; nothing else spells an architecture.
 *
 * An architecture is named as NVRTC names it: sm_90, sm_90a, sm_100a, sm_120a ... The
 * `a` suffix is an arch-specific target: its CUBIN may use the architecture's own
 * instructions (wgmma and setmaxnreg on 9.0, tcgen05 on 10.x, block-scaled mma.sync on
 * 12.x) and loads on a device of exactly that compute capability, no other (CUDA
 * Programming Guide, 5.1.2 "Architecture-Specific Features"). A plain target's CUBIN
 * loads on the same major with an equal or newer minor (binary compatibility).
 *
 * Everywhere else an architecture travels as an int code: the compute capability x10 for
 * a plain target (80, 90, 100, 120) and that plus KB_ARCH_SPECIFIC for an `a` target
 * (sm_90a = 1090). The code is a key into this table, never arithmetic: ask the table
 * (kb_arch_cc, kb_arch_has, kb_arch_name) rather than compare codes.
 */
#ifndef KB_ARCH_H
#define KB_ARCH_H

#include <stddef.h>

#define KB_ARCH_SPECIFIC 1000   /* added to the cc x10 of an `a` target's code */

/* The instruction paths of an architecture: what a kernel may be built on. */
enum {
    KB_PATH_MMA      = 1u << 0, /* mma.sync f16/bf16/tf32/int8 with cp.async (sm_80+) */
    KB_PATH_MMA_FP8  = 1u << 1, /* mma.sync m16n8k32 e4m3/e5m2 (PTX ISA: sm_89+) */
    KB_PATH_TMA      = 1u << 2, /* cp.async.bulk.tensor and mbarrier expect_tx (sm_90+) */
    KB_PATH_CLUSTER  = 1u << 3, /* thread block clusters, distributed shared memory (sm_90+) */
    KB_PATH_WGMMA    = 1u << 4, /* wgmma.mma_async and setmaxnreg (sm_90a only) */
    KB_PATH_TCGEN05  = 1u << 5, /* tcgen05.mma with tensor memory (sm_100a, sm_103a) */
    KB_PATH_MMA_BLOCK_SCALE = 1u << 6, /* mma.sync kind::mxf8f6f4 / mxf4nvf4 .block_scale (sm_120a, sm_121a) */
    KB_PATH_MMA_FP8_NATIVE = 1u << 7,  /* fp8 mma.sync at the fp8 tensor rate (sm_89, sm_12x); elsewhere
                                        * it runs through the f16 pipe (sm_90: NVIDIA/cutlass#1986) or is
                                        * not claimed (sm_10x), and kbench's fp8 kernels widen to f16 */
    KB_PATH_COUNT    = 8
};

/* One architecture. Limits: CUDA Programming Guide (CUDA 13) 5.1 "Compute Capabilities",
 * Tables 30 and 31; the same values as NVIDIA CCCL's cuda/__device/arch_traits.h. */
typedef struct {
    int code;                   /* cc x10, + KB_ARCH_SPECIFIC for an `a` target */
    const char *name;           /* "sm_90a" */
    int cc;                     /* compute capability x10: 90 */
    int specific;               /* 1: `a` target, the CUBIN loads on exactly cc */
    unsigned paths;             /* KB_PATH_* */
    const char *nvrtc_arch;     /* the value of NVRTC's --gpu-architecture: "sm_90a" */
    int smem_block_optin;       /* [bytes] shared memory per block with the opt-in */
    int smem_sm;                /* [bytes] shared memory per SM */
    int smem_reserved;          /* [bytes] the system's share per resident block */
    int regs_sm;                /* 32-bit registers per SM */
    int regs_thread;            /* 32-bit registers per thread at most */
    int threads_block;          /* threads per block at most */
    int threads_sm;             /* resident threads per SM */
    int blocks_sm;              /* resident blocks per SM */
    int cluster_portable;       /* blocks per cluster guaranteed to launch; 0: no clusters */
} kb_arch;

/* The table, in order of compute capability (a plain target before its `a`): sm_80, sm_86,
 * sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103, sm_103a, sm_120, sm_120a, sm_121, sm_121a. */
#define KB_ARCH_COUNT 13
extern const kb_arch kb_archs[];
extern const int kb_n_archs;   /* KB_ARCH_COUNT */

/* The row of code, or NULL for a code the table lacks. */
const kb_arch *kb_arch_get(int code);
/* The row named name ("sm_90a"; also "90a", "90"), or NULL. */
const kb_arch *kb_arch_find(const char *name);
/* The plain target of compute capability cc x10 (a device's own arch), or NULL. */
const kb_arch *kb_arch_of_cc(int cc);

/* Name of code: "sm_90a"; "sm_?" for a code the table lacks. Never NULL. */
const char *kb_arch_name(int code);
/* Compute capability x10 of code; 0 for a code the table lacks. */
int kb_arch_cc(int code);
/* 1 when code's architecture has every path of paths (KB_PATH_*), else 0 (and for an
 * unknown code). */
int kb_arch_has(int code, unsigned paths);
/* Opt-in shared memory per block [bytes] of code; 0 for a code the table lacks. */
int kb_arch_max_shmem_optin(int code);

/* The name of path bit p ("mma.sync", "wgmma", ...); "?" for anything else. */
const char *kb_arch_path_name(unsigned p);

/* 1 when a CUBIN built for code loads on a device of compute capability device_cc x10:
 * an `a` target on exactly its cc; a plain one on the same major with a minor no newer
 * than the device's (CUDA Programming Guide: binary compatibility, 5.1.2). Else 0 with
 * why filled, e.g. "a CUBIN for sm_90a runs only on compute capability 9.0 exactly; this
 * device is 10.0 (sm_100): use --arch sm_100 or leave --arch out". Pure. */
int kb_arch_runs_on(int code, int device_cc, char *why, size_t n);

/* 1 when some plain target of the table loads on a device of compute capability cc x10
 * (its own, or an older minor of its major: 8.7 runs sm_86), else 0. Pure. */
int kb_arch_runs_any(int cc);

/* The gating defines every module of code is compiled with, on both backends, as
 * "KB_ARCH=<cc x10>" and "KB_ARCH_SPECIFIC=<0|1>" into def_arch and def_specific (each
 * at least 32 bytes). 0, or -1 for a code the table lacks. */
int kb_arch_defines(int code, char *def_arch, char *def_specific);

/* The names of every row whose compute capability the predicate accepts (NULL: all),
 * ", "-separated into buf: "sm_80, sm_86, ..., sm_121a". Returns buf. */
char *kb_arch_list(char *buf, size_t n, int (*accepts)(int cc, void *user), void *user);

#endif /* KB_ARCH_H */
