/* fake_nvrtc.c - an NVRTC double (CMake target kbench_fake_nvrtc, build/fake-nvrtc/
 * libnvrtc.so.12) for the run-time architecture list: it says it is NVRTC 12.4 and lists
 * the compute capabilities CUDA 12.4's NVRTC supports (nvrtcGetSupportedArchs: 50 ... 90,
 * no Blackwell), so `kbench compile --arch sm_100` must be refused with that list. It
 * compiles nothing: every program fails with NVRTC_ERROR_COMPILATION and says so in its log. */
#include <nvrtc.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static const int archs[] = { 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90 };
static const char log_text[] = "fake NVRTC 12.4: compiles nothing\n";

EXPORT const char *nvrtcGetErrorString(nvrtcResult r)
{
    return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : "NVRTC_ERROR_COMPILATION";
}

EXPORT nvrtcResult nvrtcVersion(int *major, int *minor)
{
    *major = 12;
    *minor = 4;
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    *n = (int)(sizeof archs / sizeof archs[0]);
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetSupportedArchs(int *out)
{
    memcpy(out, archs, sizeof archs);
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int n, const char *const *h,
                                      const char *const *names)
{
    (void)src, (void)name, (void)n, (void)h, (void)names;
    *p = (nvrtcProgram)(void *)archs;   /* any non-NULL handle */
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p)
{
    *p = NULL;
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char *const *opts)
{
    (void)p, (void)n, (void)opts;
    return NVRTC_ERROR_COMPILATION;
}

EXPORT nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n)
{
    (void)p;
    *n = sizeof log_text;
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log)
{
    (void)p;
    memcpy(log, log_text, sizeof log_text);
    return NVRTC_SUCCESS;
}

/* No program ever compiles, so there is no image to ask for. */
EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *n) { (void)p; *n = 0; return NVRTC_ERROR_INVALID_PROGRAM; }
EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *c) { (void)p, (void)c; return NVRTC_ERROR_INVALID_PROGRAM; }
EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *n) { (void)p; *n = 0; return NVRTC_ERROR_INVALID_PROGRAM; }
EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *c) { (void)p, (void)c; return NVRTC_ERROR_INVALID_PROGRAM; }
