/* kb_nvrtc_lib.h - NVRTC chosen at run time: which libnvrtc kbench compiles with, and
 * whether the driver can load what it produces.
 *
 * kbench does not link NVRTC. A CUBIN built by NVRTC of CUDA major M loads only on a
 * driver of CUDA M.0 or later (CUDA Compatibility guide, minor-version compatibility:
 * CUDA 13.x needs driver >= 580, 12.x >= 525, 11.x >= 450; it never crosses a major
 * version). So on an R550 driver (CUDA 12.4) every CUBIN of NVRTC 13 fails in
 * cuModuleLoadData, while NVRTC 12's load. The candidates, in order:
 *   $KBENCH_LIBNVRTC (when set, the only one: the user's explicit choice),
 *   libnvrtc.so.13, libnvrtc.so.12 on the loader's path,
 *   the same two in the lib64 (then lib) folder of the toolkit kbench was built with;
 * the newest that loads and fits the driver is chosen (without a driver: the newest that
 * loads). nvrtc.h stays the toolkit's: only its types are used, and the entry points
 * kbench calls have kept their signatures since CUDA 11.1 (nvrtcGetCUBIN).
 *
 * The selection is process-wide (one NVRTC per process, so the compile cache key, which
 * carries the NVRTC version through the toolchain id, names the compiler that built each
 * entry). Thread-safe.
 */
#ifndef KB_NVRTC_LIB_H
#define KB_NVRTC_LIB_H

#include <nvrtc.h> /* the toolkit's NVRTC types */
#include <stddef.h>

#include "core/kb.h"

/* One loaded libnvrtc: its entry points and what it is. */
typedef struct {
    void *lib;                  /* dlopen handle; NULL when not loaded */
    char path[512];             /* what was dlopen'ed (soname or file) */
    int major, minor;           /* nvrtcVersion */
    const char *(*GetErrorString)(nvrtcResult r);
    nvrtcResult (*Version)(int *major, int *minor);
    nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src, const char *name, int n_headers,
                                 const char *const *headers, const char *const *include_names);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*CompileProgram)(nvrtcProgram prog, int n_opts, const char *const *opts);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*GetPTXSize)(nvrtcProgram prog, size_t *bytes);
    nvrtcResult (*GetPTX)(nvrtcProgram prog, char *ptx);
    nvrtcResult (*GetNumSupportedArchs)(int *n);          /* NVRTC 11.2+ */
    nvrtcResult (*GetSupportedArchs)(int *archs);          /* compute capabilities x10, ascending */
} kb_nvrtc_lib;

/* ---- the pure rules (no library loaded) ---- */

/* The oldest driver, as cuDriverGetVersion reports it (CUDA major*1000 + minor*10), that
 * loads CUBINs of NVRTC `nvrtc_major`: nvrtc_major * 1000 (minor-version compatibility
 * inside a major, never across one). */
int kb_nvrtc_min_driver(int nvrtc_major);

/* The oldest Linux driver branch for that NVRTC major (CUDA Compatibility guide):
 * 13 -> 580, 12 -> 525, 11 -> 450; 0 for a major the guide does not list. */
int kb_nvrtc_min_branch(int nvrtc_major);

/* 1 when a driver of driver_version loads CUBINs of NVRTC nvrtc_major, else 0. */
int kb_nvrtc_fits(int nvrtc_major, int driver_version);

/* The sentence kbench stops with when NVRTC nvrtc_major does not fit driver_version:
 * "the driver supports CUDA 12.4 (12040); NVRTC 13 output needs CUDA >= 13.0 (driver
 * branch >= 580): install the cuda-compat-13 package (forward compatibility, data-centre
 * GPUs) or point KBENCH_LIBNVRTC at a CUDA 12 libnvrtc.so.12". Pure; always NUL-terminated. */
void kb_nvrtc_unfit_message(char *buf, size_t n, int nvrtc_major, int driver_version);

/* 1 when the architecture of code (core/arch.h) is among archs[0..n_archs) - the compute
 * capabilities x10 nvrtcGetSupportedArchs lists (an `a` target by its cc); else 0. Pure. */
int kb_nvrtc_arch_listed(const int *archs, int n_archs, int code);

/* ---- the selection ---- */

/* Choose the NVRTC for a driver of driver_version (0: no driver, e.g. an offline
 * `kbench compile`: the newest that loads). Returns KB_OK with note "NVRTC 13.0
 * (libnvrtc.so.13)"; or KB_ERR_SETUP with note saying why none can be used: none loads
 * ("NVRTC not found: ..."), or every one found makes CUBINs this driver cannot load
 * (kb_nvrtc_unfit_message for the newest found). A previous selection is replaced. */
kb_status kb_nvrtc_lib_select(int driver_version, char *note, size_t n);

/* The selected NVRTC; when none was selected yet, the newest that loads is selected first.
 * NULL when no NVRTC can be loaded (kb_nvrtc_lib_select says why). */
const kb_nvrtc_lib *kb_nvrtc_lib_current(void);

/* Whether the selected NVRTC compiles for the architecture of code, read at run time from
 * nvrtcGetSupportedArchs: 1; 0 with why naming the kbench architectures it does support
 * ("NVRTC 12.4 (libnvrtc.so.12) cannot compile for sm_100a; of kbench's architectures it
 * supports sm_80, sm_86, sm_89, sm_90, sm_90a"); -1 with why when no NVRTC loads. */
int kb_nvrtc_supports(int code, char *why, size_t n);

#endif /* KB_NVRTC_LIB_H */
