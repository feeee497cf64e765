/* arch.c - the architecture table (see arch.h). */
#include "core/arch.h"

#include <stdio.h>
#include <string.h>

#define KIB 1024
#define AMPERE (KB_PATH_MMA)
#define ADA (KB_PATH_MMA | KB_PATH_MMA_FP8 | KB_PATH_MMA_FP8_NATIVE)
#define HOPPER_UP (KB_PATH_MMA | KB_PATH_MMA_FP8 | KB_PATH_TMA | KB_PATH_CLUSTER)
#define RTX_BW (HOPPER_UP | KB_PATH_MMA_FP8_NATIVE)   /* 12.x: mma.sync is its tensor path, fp8 native */

/* One row: code, name, cc, `a`, paths, the NVRTC target (the name itself), shared memory
 * per block opt-in / per SM [KiB], 1 KiB reserved per block, 64 K registers per SM, 255
 * per thread, 1024 threads per block, resident threads and blocks per SM, portable
 * cluster size. Limits: CUDA Programming Guide (CUDA 13) 5.1, Tables 30 and 31 (12.x:
 * 100 KB per SM, 99 per block, 1536 threads, 24 blocks; 10.x: as 9.0); paths: PTX ISA
 * (mma e4m3/e5m2 from sm_89; wgmma and setmaxnreg on sm_90a; tcgen05 on sm_100a/sm_103a;
 * mma kind::mxf8f6f4 .block_scale on sm_120a/sm_121a) and Table 29 (clusters, TMA from
 * 9.0); native fp8 mma.sync: the Ada and RTX Blackwell whitepapers' fp8 tensor rates, Hopper's
 * f16 route from NVIDIA/cutlass#1986, none claimed for 10.x. sm_121 is DGX Spark's GB10; sm_87/88/110 (Jetson, Thor) are left out: no kbench
 * user targets them yet. */
#define ROW(cc, sfx, spec, paths, blk, sm, threads, blocks, cluster)                                 \
    { (cc) + (spec) * KB_ARCH_SPECIFIC, "sm_" #cc sfx, (cc), (spec), (paths), "sm_" #cc sfx, (blk) * KIB, \
      (sm) * KIB, KIB, 65536, 255, 1024, (threads), (blocks), (cluster) }

const kb_arch kb_archs[] = {
    ROW(80, "", 0, AMPERE, 163, 164, 2048, 32, 0),
    ROW(86, "", 0, AMPERE, 99, 100, 1536, 16, 0),
    ROW(89, "", 0, ADA, 99, 100, 1536, 24, 0),
    ROW(90, "", 0, HOPPER_UP, 227, 228, 2048, 32, 8),
    ROW(90, "a", 1, HOPPER_UP | KB_PATH_WGMMA, 227, 228, 2048, 32, 8),
    ROW(100, "", 0, HOPPER_UP, 227, 228, 2048, 32, 8),
    ROW(100, "a", 1, HOPPER_UP | KB_PATH_TCGEN05, 227, 228, 2048, 32, 8),
    ROW(103, "", 0, HOPPER_UP, 227, 228, 2048, 32, 8),
    ROW(103, "a", 1, HOPPER_UP | KB_PATH_TCGEN05, 227, 228, 2048, 32, 8),
    ROW(120, "", 0, RTX_BW, 99, 100, 1536, 24, 8),
    ROW(120, "a", 1, RTX_BW | KB_PATH_MMA_BLOCK_SCALE, 99, 100, 1536, 24, 8),
    ROW(121, "", 0, RTX_BW, 99, 100, 1536, 24, 8),
    ROW(121, "a", 1, RTX_BW | KB_PATH_MMA_BLOCK_SCALE, 99, 100, 1536, 24, 8),
};
_Static_assert(sizeof kb_archs / sizeof kb_archs[0] == KB_ARCH_COUNT, "KB_ARCH_COUNT rows in the table");
const int kb_n_archs = KB_ARCH_COUNT;

/* One name per path bit, in bit order. */
static const char *const path_names[] = {
    "mma.sync", "mma.sync fp8", "tma", "cluster", "wgmma", "tcgen05", "mma.sync block_scale", "mma.sync fp8 native",
};
_Static_assert(sizeof path_names / sizeof path_names[0] == KB_PATH_COUNT, "a name for every KB_PATH_* bit");

const kb_arch *kb_arch_get(int code)
{
    for (int i = 0; i < kb_n_archs; i++)
        if (kb_archs[i].code == code)
            return &kb_archs[i];
    return NULL;
}

const kb_arch *kb_arch_find(const char *name)
{
    if (!name)
        return NULL;
    const char *bare = strncmp(name, "sm_", 3) == 0 ? name + 3 : name;
    for (int i = 0; i < kb_n_archs; i++)
        if (strcmp(kb_archs[i].name + 3, bare) == 0)
            return &kb_archs[i];
    return NULL;
}

const kb_arch *kb_arch_of_cc(int cc)
{
    return kb_arch_get(cc);   /* a plain target's code is its cc */
}

const char *kb_arch_name(int code)
{
    const kb_arch *a = kb_arch_get(code);
    return a ? a->name : "sm_?";
}

int kb_arch_cc(int code)
{
    const kb_arch *a = kb_arch_get(code);
    return a ? a->cc : 0;
}

int kb_arch_has(int code, unsigned paths)
{
    const kb_arch *a = kb_arch_get(code);
    return a && (a->paths & paths) == paths;
}

int kb_arch_max_shmem_optin(int code)
{
    const kb_arch *a = kb_arch_get(code);
    return a ? a->smem_block_optin : 0;
}

const char *kb_arch_path_name(unsigned p)
{
    for (int i = 0; i < KB_PATH_COUNT; i++)
        if (p == 1u << i)
            return path_names[i];
    return "?";
}

int kb_arch_runs_on(int code, int device_cc, char *why, size_t n)
{
    const kb_arch *a = kb_arch_get(code);
    const kb_arch *dev = kb_arch_of_cc(device_cc);
    char use[64];
    if (dev)
        snprintf(use, sizeof use, "use --arch %s or leave --arch out", dev->name);
    else
        snprintf(use, sizeof use, "leave --arch out");
    if (!a) {
        snprintf(why, n, "kbench has no architecture of code %d; %s", code, use);
        return 0;
    }
    if (a->specific ? a->cc == device_cc : a->cc / 10 == device_cc / 10 && a->cc % 10 <= device_cc % 10)
        return 1;
    if (a->specific)
        snprintf(why, n, "a CUBIN for %s runs only on compute capability %d.%d exactly (an arch-specific target); "
                 "this device is %d.%d: %s", a->name, a->cc / 10, a->cc % 10, device_cc / 10, device_cc % 10, use);
    else
        snprintf(why, n, "a CUBIN for %s runs only on compute capability %d.x with x >= %d; this device is %d.%d: %s",
                 a->name, a->cc / 10, a->cc % 10, device_cc / 10, device_cc % 10, use);
    return 0;
}

int kb_arch_runs_any(int cc)
{
    char why[8];
    for (int i = 0; i < kb_n_archs; i++)
        if (!kb_archs[i].specific && kb_arch_runs_on(kb_archs[i].code, cc, why, sizeof why))
            return 1;
    return 0;
}

int kb_arch_defines(int code, char *def_arch, char *def_specific)
{
    const kb_arch *a = kb_arch_get(code);
    if (!a)
        return -1;
    snprintf(def_arch, 32, "KB_ARCH=%d", a->cc);
    snprintf(def_specific, 32, "KB_ARCH_SPECIFIC=%d", a->specific);
    return 0;
}

char *kb_arch_list(char *buf, size_t n, int (*accepts)(int cc, void *user), void *user)
{
    size_t len = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < kb_n_archs && len < n; i++) {
        if (accepts && !accepts(kb_archs[i].cc, user))
            continue;
        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", kb_archs[i].name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}
