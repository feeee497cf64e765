/* kb_nvrtc.h - compile CUDA C++ source to a CUBIN with NVRTC, and read the
 * resource usage (registers, spills, stack, static shared memory) that ptxas
 * reports in the compile log.
 *
 * NVRTC is dlopen'ed (kb_nvrtc_lib.h chooses which libnvrtc fits the driver); it needs
 * no GPU and no driver, which is what lets every kernel be compiled for every architecture
 * of the table (core/arch.h) the installed NVRTC supports, on any machine.
 */
#ifndef KB_NVRTC_H
#define KB_NVRTC_H

#include "backend/backend.h"

/* Compile src (named `name` in diagnostics, e.g. its path) for the architecture of code
 * sm (core/arch.h: sm_90 -> 90, sm_90a -> 1090) into a CUBIN. Options: the table's
 * --gpu-architecture (a real one: sm_90a), -std=c++17, -I for each of include_dirs[0..n_inc)
 * and then the CUDA include directory, the gating defines -DKB_ARCH=<cc x10> and
 * -DKB_ARCH_SPECIFIC=<0|1>, -D for each of defines[0..n_def) ("NAME" or "NAME=VALUE"),
 * --ptxas-options=-v so the log carries registers and spills per entry.
 *
 * On KB_OK, *cubin is a malloc'ed image of *cubin_bytes bytes (caller frees).
 * On failure *cubin is NULL and *cubin_bytes 0. The NVRTC program log (the
 * ptxas report on success, the diagnostics on failure) is appended to *log in
 * both cases, followed by a one-line API report when an NVRTC call failed.
 * Returns KB_ERR_COMPILE when the source does not compile or an option is
 * rejected (e.g. an architecture this NVRTC does not support), KB_ERR_INPUT for a
 * code the architecture table lacks, KB_ERR_OOM when NVRTC ran out of memory,
 * KB_ERR_SETUP when NVRTC's builtins are missing or no NVRTC can be loaded,
 * KB_ERR_INTERNAL otherwise. */
kb_status kb_nvrtc_compile(const char *src, const char *name,
                           const char *const *include_dirs, int n_inc,
                           const char *const *defines, int n_def, int sm,
                           void **cubin, size_t *cubin_bytes, kb_sb *log);

/* The same compile (same options, so the log holds the same ptxas report), keeping the
 * PTX instead of the CUBIN: *ptx malloc'ed and NUL-terminated, *ptx_bytes its length
 * without the NUL (caller frees); NULL and 0 on failure. Statuses as kb_nvrtc_compile. */
kb_status kb_nvrtc_compile_ptx(const char *src, const char *name,
                               const char *const *include_dirs, int n_inc,
                               const char *const *defines, int n_def, int sm,
                               char **ptx, size_t *ptx_bytes, kb_sb *log);

/* The selected NVRTC's version (e.g. 13, 0; kb_nvrtc_lib_current). Returns 0 on success, -1 on failure (outputs untouched). */
int kb_nvrtc_version(int *major, int *minor);

/* Read the resources of kernel `entry` from a ptxas verbose log, e.g.
 *   ptxas info    : Compiling entry function 'k' for 'sm_90'
 *   ptxas info    : Function properties for k
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 10 registers, used 0 barriers, 368 bytes smem
 * Fills registers, spill_store_bytes, spill_load_bytes, stack_bytes and
 * static_shmem_bytes (0 when the "Used" line names no smem); max_threads is -1
 * (the log does not say). `entry` is the exact symbol (extern "C" name or the
 * mangled one). Returns 0 when the entry's "Used N registers" line was found,
 * -1 otherwise (out is then all -1). Fields whose line is missing stay -1. */
int kb_ptxas_parse(const char *log, const char *entry, kb_resources *out);

#endif /* KB_NVRTC_H */
