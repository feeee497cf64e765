/* nvml.c - NVML telemetry through dlopen (see nvml.h).
 *
 * The few NVML types used are declared here, from NVIDIA's nvml.h documentation, so
 * that building needs no NVML header: nvmlReturn_t is an int (0 = NVML_SUCCESS), a
 * device is an opaque pointer, clocks are unsigned MHz, power unsigned milliwatts,
 * temperature unsigned degrees C, reasons an unsigned long long bitmask.
 */
#include "backend/cuda/nvml.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };   /* nvmlClockType_t */
enum { NVML_TEMPERATURE_GPU = 0 };                /* nvmlTemperatureSensors_t */

typedef struct {
    nvml_ret (*Init)(void);
    nvml_ret (*Shutdown)(void);
    const char *(*ErrorString)(nvml_ret);
    nvml_ret (*HandleByPciBusId)(const char *, nvml_device *);
    nvml_ret (*HandleByUUID)(const char *, nvml_device *);
    nvml_ret (*ClockInfo)(nvml_device, int, unsigned *);
    nvml_ret (*MaxClockInfo)(nvml_device, int, unsigned *);
    nvml_ret (*PowerUsage)(nvml_device, unsigned *);
    nvml_ret (*Temperature)(nvml_device, int, unsigned *);
    nvml_ret (*Reasons)(nvml_device, unsigned long long *);
    nvml_ret (*MigMode)(nvml_device, unsigned *, unsigned *);   /* OPTIONAL (R450+) */
} nvml_api;

struct kb_nvml {
    void *dl;
    nvml_api api;
    int inited;
    nvml_device dev;
    int available;
    char why[512];
};

/* nvmlReturn_t names, from nvml.h (NVML has an ErrorString but no name function). */
static const char *ret_name(nvml_ret r)
{
    static const char *const names[] = {
        "NVML_SUCCESS", "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_INVALID_ARGUMENT",
        "NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_NO_PERMISSION", "NVML_ERROR_ALREADY_INITIALIZED",
        "NVML_ERROR_NOT_FOUND", "NVML_ERROR_INSUFFICIENT_SIZE", "NVML_ERROR_INSUFFICIENT_POWER",
        "NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE",
        "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_FUNCTION_NOT_FOUND", "NVML_ERROR_CORRUPTED_INFOROM",
        "NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_OPERATING_SYSTEM",
        "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_IN_USE", "NVML_ERROR_MEMORY",
        "NVML_ERROR_NO_DATA",
    };
    if (r >= 0 && r < (int)(sizeof names / sizeof names[0]))
        return names[r];
    return r == 999 ? "NVML_ERROR_UNKNOWN" : NULL;
}

/* The project's check shape: "file:line function: call -> NAME: message" into n->why.
 * Returns 1 when the call failed. */
static int nvml_check(kb_nvml *n, nvml_ret r, const char *file, int line, const char *func, const char *call)
{
    if (r == 0)
        return 0;
    const char *name = ret_name(r);
    const char *msg = n->api.ErrorString ? n->api.ErrorString(r) : NULL;
    if (name)
        snprintf(n->why, sizeof n->why, "%s:%d %s: %s -> %s%s%s", file, line, func, call, name, msg ? ": " : "",
                 msg ? msg : "");
    else
        snprintf(n->why, sizeof n->why, "%s:%d %s: %s -> nvmlReturn_t %d", file, line, func, call, r);
    return 1;
}
#define NVML_CHECK(n, call) nvml_check((n), (call), __FILE__, __LINE__, __func__, #call)

/* First of the named symbols the library exports (newer name first). */
static void *sym(void *dl, const char *a, const char *b)
{
    void *p = dlsym(dl, a);
    return p || !b ? p : dlsym(dl, b);
}

static int load_api(kb_nvml *n, const char *path)
{
    n->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        snprintf(n->why, sizeof n->why, "NVML unavailable: %s", dlerror());
        return 0;
    }
    nvml_api *a = &n->api;
    *(void **)&a->Init = sym(n->dl, "nvmlInit_v2", "nvmlInit");
    *(void **)&a->Shutdown = sym(n->dl, "nvmlShutdown", NULL);
    *(void **)&a->ErrorString = sym(n->dl, "nvmlErrorString", NULL);
    *(void **)&a->HandleByPciBusId = sym(n->dl, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    *(void **)&a->HandleByUUID = sym(n->dl, "nvmlDeviceGetHandleByUUID", NULL);
    *(void **)&a->ClockInfo = sym(n->dl, "nvmlDeviceGetClockInfo", NULL);
    *(void **)&a->MaxClockInfo = sym(n->dl, "nvmlDeviceGetMaxClockInfo", NULL);
    *(void **)&a->PowerUsage = sym(n->dl, "nvmlDeviceGetPowerUsage", NULL);
    *(void **)&a->Temperature = sym(n->dl, "nvmlDeviceGetTemperature", NULL);
    /* renamed in R535; the old name stays exported as deprecated */
    *(void **)&a->Reasons = sym(n->dl, "nvmlDeviceGetCurrentClocksEventReasons",
                                "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&a->MigMode = sym(n->dl, "nvmlDeviceGetMigMode", NULL);
    if (!a->Init || !a->Shutdown || !a->HandleByPciBusId || !a->HandleByUUID || !a->ClockInfo) {
        snprintf(n->why, sizeof n->why, "NVML unavailable: %s lacks nvmlInit_v2/nvmlDeviceGetHandleBy*/"
                 "nvmlDeviceGetClockInfo", path);
        return 0;
    }
    return 1;
}

kb_nvml *kb_nvml_open(const char *pci_bus_id, const char *uuid)
{
    kb_nvml *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    const char *path = getenv("KBENCH_LIBNVML");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    if (!load_api(n, path))
        return n;
    if (NVML_CHECK(n, n->api.Init()))
        return n;
    n->inited = 1;
    /* by PCI bus id first (CUDA_DEVICE_ORDER aside, indices of CUDA and NVML can differ) */
    int found = 0;
    if (pci_bus_id && *pci_bus_id)
        found = !NVML_CHECK(n, n->api.HandleByPciBusId(pci_bus_id, &n->dev));
    if (!found && uuid && *uuid)
        found = !NVML_CHECK(n, n->api.HandleByUUID(uuid, &n->dev));
    if (!found) {
        if (!n->why[0])
            snprintf(n->why, sizeof n->why, "NVML: no PCI bus id or UUID to find the device by");
        return n;
    }
    n->available = 1;
    n->why[0] = 0;
    return n;
}

int kb_nvml_available(const kb_nvml *n) { return n && n->available; }

const char *kb_nvml_why(const kb_nvml *n)
{
    if (!n)
        return "NVML unavailable: out of memory";
    return n->available ? "" : n->why;
}

/* The value of a query that stored v and returned r; -1 when it failed (unsupported).
 * The call is made by the caller first: C leaves the order of argument evaluation
 * open, so f(call(&v), v) could read v before the call writes it. */
static long long value_or_unknown(nvml_ret r, unsigned v) { return r == 0 ? (long long)v : -1; }

void kb_nvml_read(kb_nvml *n, kb_telemetry *s)
{
    memset(s, 0, sizeof *s);
    s->sm_clock_mhz = s->sm_clock_max_mhz = s->mem_clock_mhz = s->temperature_c = -1;
    s->power_w = -1;
    if (!kb_nvml_available(n)) {
        snprintf(s->why, sizeof s->why, "%s", kb_nvml_why(n));
        return;
    }
    s->available = 1;
    const nvml_api *a = &n->api;
    unsigned v = 0;
    nvml_ret r;
    r = a->ClockInfo(n->dev, NVML_CLOCK_SM, &v);
    s->sm_clock_mhz = (int)value_or_unknown(r, v);
    r = a->ClockInfo(n->dev, NVML_CLOCK_MEM, &v);
    s->mem_clock_mhz = (int)value_or_unknown(r, v);
    if (a->MaxClockInfo) {
        r = a->MaxClockInfo(n->dev, NVML_CLOCK_SM, &v);
        s->sm_clock_max_mhz = (int)value_or_unknown(r, v);
    }
    if (a->PowerUsage) {
        r = a->PowerUsage(n->dev, &v);   /* [mW] */
        s->power_w = r == 0 ? v * 1e-3 : -1;
    }
    if (a->Temperature) {
        r = a->Temperature(n->dev, NVML_TEMPERATURE_GPU, &v);
        s->temperature_c = (int)value_or_unknown(r, v);
    }
    unsigned long long reasons = 0;
    if (a->Reasons && a->Reasons(n->dev, &reasons) == 0) {
        s->have_reasons = 1;
        s->reasons = reasons;
    }
    s->throttled = kb_telemetry_throttled(s->sm_clock_mhz, s->sm_clock_max_mhz, s->reasons);
}

int kb_nvml_mig_enabled(kb_nvml *n)
{
    unsigned current = 0, pending = 0;
    if (!kb_nvml_available(n) || !n->api.MigMode)
        return 0;
    return n->api.MigMode(n->dev, &current, &pending) == 0 && current == 1;   /* NVML_DEVICE_MIG_ENABLE */
}

int kb_nvml_sm_clock(kb_nvml *n, int *mhz, int *max_mhz)
{
    unsigned v = 0, m = 0;
    if (!kb_nvml_available(n) || !n->api.MaxClockInfo)
        return 0;
    if (n->api.ClockInfo(n->dev, NVML_CLOCK_SM, &v) != 0 || n->api.MaxClockInfo(n->dev, NVML_CLOCK_SM, &m) != 0)
        return 0;
    *mhz = (int)v;
    *max_mhz = (int)m;
    return 1;
}

void kb_nvml_close(kb_nvml *n)
{
    if (!n)
        return;
    if (n->inited)
        n->api.Shutdown();
    if (n->dl)
        dlclose(n->dl);
    free(n);
}
