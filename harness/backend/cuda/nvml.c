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
    nvml_ret (*AppClock)(nvml_device, int, unsigned *);         /* OPTIONAL */
    /* health (kb_nvml_health), every one OPTIONAL: an older driver lacks some */
    nvml_ret (*EccMode)(nvml_device, int *, int *);                          /* nvmlEnableState_t current, pending */
    nvml_ret (*TotalEcc)(nvml_device, int, int, unsigned long long *);       /* error type, counter type */
    nvml_ret (*RetiredPages)(nvml_device, int, unsigned *, unsigned long long *);
    nvml_ret (*RetiredPending)(nvml_device, int *);
    nvml_ret (*RemappedRows)(nvml_device, unsigned *, unsigned *, unsigned *, unsigned *);   /* R460+, Ampere+ */
    nvml_ret (*PcieGen)(nvml_device, unsigned *);
    nvml_ret (*PcieGenMax)(nvml_device, unsigned *);
    nvml_ret (*PcieWidth)(nvml_device, unsigned *);
    nvml_ret (*PcieWidthMax)(nvml_device, unsigned *);
    nvml_ret (*Serial)(nvml_device, char *, unsigned);
    nvml_ret (*PciInfo)(nvml_device, void *);                                /* nvml_pci_info */
} nvml_api;

/* nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3; the same layout as _v2). */
typedef struct {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;
enum { NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };                     /* nvmlMemoryErrorType_t */
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };              /* nvmlEccCounterType_t */
enum { NVML_PAGE_RETIREMENT_CAUSE_SBE = 0, NVML_PAGE_RETIREMENT_CAUSE_DBE = 1 };   /* nvmlPageRetirementCause_t */
enum { NVML_ERROR_INSUFFICIENT_SIZE = 7 };
enum { NVML_DEVICE_SERIAL_BUFFER_SIZE = 30 };

struct kb_nvml {
    void *dl;
    nvml_api api;
    int inited;
    nvml_device dev;
    int available;
    char why[512];
    unsigned user_mhz;      /* [MHz] highest SM clock read while user-defined clocks were reported */
};

/* nvmlReturn_t names, from nvml.h (NVML has an ErrorString but no name function). */
const char *kb_nvml_ret_name(int r)
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
    const char *name = kb_nvml_ret_name(r);
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

static void load_health_api(void *dl, nvml_api *a)
{
    *(void **)&a->EccMode = sym(dl, "nvmlDeviceGetEccMode", NULL);
    *(void **)&a->TotalEcc = sym(dl, "nvmlDeviceGetTotalEccErrors", NULL);
    *(void **)&a->RetiredPages = sym(dl, "nvmlDeviceGetRetiredPages", NULL);
    *(void **)&a->RetiredPending = sym(dl, "nvmlDeviceGetRetiredPagesPendingStatus", NULL);
    *(void **)&a->RemappedRows = sym(dl, "nvmlDeviceGetRemappedRows", NULL);
    *(void **)&a->PcieGen = sym(dl, "nvmlDeviceGetCurrPcieLinkGeneration", NULL);
    *(void **)&a->PcieGenMax = sym(dl, "nvmlDeviceGetMaxPcieLinkGeneration", NULL);
    *(void **)&a->PcieWidth = sym(dl, "nvmlDeviceGetCurrPcieLinkWidth", NULL);
    *(void **)&a->PcieWidthMax = sym(dl, "nvmlDeviceGetMaxPcieLinkWidth", NULL);
    *(void **)&a->Serial = sym(dl, "nvmlDeviceGetSerial", NULL);
    *(void **)&a->PciInfo = sym(dl, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
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
    *(void **)&a->AppClock = sym(n->dl, "nvmlDeviceGetApplicationsClock", NULL);
    load_health_api(n->dl, a);
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

int kb_nvml_sm_clock(kb_nvml *n, int *mhz, int *ref_mhz)
{
    unsigned v = 0, m = 0, app = 0;
    unsigned long long reasons = 0;
    if (!kb_nvml_available(n) || !n->api.MaxClockInfo)
        return 0;
    if (n->api.ClockInfo(n->dev, NVML_CLOCK_SM, &v) != 0 || n->api.MaxClockInfo(n->dev, NVML_CLOCK_SM, &m) != 0)
        return 0;
    unsigned ref = m;
    if (n->api.AppClock && n->api.AppClock(n->dev, NVML_CLOCK_SM, &app) == 0 && app > 0 && app < ref)
        ref = app;
    if (n->api.Reasons && n->api.Reasons(n->dev, &reasons) == 0 && (reasons & KB_TEL_REASON_APP_CLOCKS)) {
        if (v > n->user_mhz)
            n->user_mhz = v;
        if (n->user_mhz < ref)
            ref = n->user_mhz;
    }
    *mhz = (int)v;
    *ref_mhz = (int)ref;
    return 1;
}

/* ---- health ---- */

/* "function: NVML_ERROR_...: message" of a failed call into why. */
static void call_why(const kb_nvml *n, nvml_ret r, const char *func, char *why, size_t size)
{
    const char *name = kb_nvml_ret_name(r);
    const char *msg = n->api.ErrorString ? n->api.ErrorString(r) : NULL;
    if (name)
        snprintf(why, size, "%s: %s%s%s", func, name, msg ? ": " : "", msg ? msg : "");
    else
        snprintf(why, size, "%s: nvmlReturn_t %d", func, r);
}

static void not_exported(const char *func, char *why, size_t size)
{
    snprintf(why, size, "%s: not exported by this libnvidia-ml (an older driver)", func);
}

/* Record the outcome r of func into the values f[0..n): read with v[i], or unread with why. */
static void put(const kb_nvml *n, kb_health *h, nvml_ret r, const char *func, const kb_health_field *f,
                const unsigned long long *v, int count)
{
    for (int i = 0; i < count; i++) {
        kb_health_value *x = &h->f[f[i]];
        x->read = r == 0;
        x->v = r == 0 ? v[i] : 0;
        if (r != 0)
            call_why(n, r, func, x->why, sizeof x->why);
    }
}

/* A value of one unsigned out-parameter: fn(dev, &u). */
static void one_unsigned(const kb_nvml *n, kb_health *h, nvml_ret (*fn)(nvml_device, unsigned *), const char *func,
                         kb_health_field f)
{
    unsigned u = 0;
    if (!fn) {
        not_exported(func, h->f[f].why, sizeof h->f[f].why);
        return;
    }
    nvml_ret r = fn(n->dev, &u);
    unsigned long long v = u;
    put(n, h, r, func, &f, &v, 1);
}

static void read_ecc(const kb_nvml *n, kb_health *h)
{
    const nvml_api *a = &n->api;
    int cur = 0, pend = 0;
    kb_health_field f = KB_H_ECC_MODE;
    if (!a->EccMode)
        not_exported("nvmlDeviceGetEccMode", h->f[f].why, sizeof h->f[f].why);
    else {
        nvml_ret r = a->EccMode(n->dev, &cur, &pend);
        unsigned long long v = cur == 1;   /* NVML_FEATURE_ENABLED */
        put(n, h, r, "nvmlDeviceGetEccMode", &f, &v, 1);
    }
    const int counter[2] = { NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC };
    for (int i = 0; i < 2; i++) {
        f = i ? KB_H_ECC_UNC_AGGREGATE : KB_H_ECC_UNC_VOLATILE;
        unsigned long long v = 0;
        if (!a->TotalEcc) {
            not_exported("nvmlDeviceGetTotalEccErrors", h->f[f].why, sizeof h->f[f].why);
            continue;
        }
        nvml_ret r = a->TotalEcc(n->dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, counter[i], &v);
        put(n, h, r, "nvmlDeviceGetTotalEccErrors", &f, &v, 1);
    }
}

static void read_retired(const kb_nvml *n, kb_health *h)
{
    const nvml_api *a = &n->api;
    for (int i = 0; i < 2; i++) {
        kb_health_field f = i ? KB_H_RETIRED_DBE : KB_H_RETIRED_SBE;
        if (!a->RetiredPages) {
            not_exported("nvmlDeviceGetRetiredPages", h->f[f].why, sizeof h->f[f].why);
            continue;
        }
        /* pageCount 0 asks for the count only (INSUFFICIENT_SIZE when there are pages) */
        unsigned count = 0;
        unsigned long long none = 0;
        nvml_ret r = a->RetiredPages(n->dev, i ? NVML_PAGE_RETIREMENT_CAUSE_DBE : NVML_PAGE_RETIREMENT_CAUSE_SBE,
                                     &count, &none);
        unsigned long long v = count;
        put(n, h, r == NVML_ERROR_INSUFFICIENT_SIZE ? 0 : r, "nvmlDeviceGetRetiredPages", &f, &v, 1);
    }
    kb_health_field f = KB_H_RETIRED_PENDING;
    int pending = 0;
    if (!a->RetiredPending) {
        not_exported("nvmlDeviceGetRetiredPagesPendingStatus", h->f[f].why, sizeof h->f[f].why);
        return;
    }
    nvml_ret r = a->RetiredPending(n->dev, &pending);
    unsigned long long v = pending == 1;   /* NVML_FEATURE_ENABLED */
    put(n, h, r, "nvmlDeviceGetRetiredPagesPendingStatus", &f, &v, 1);
}

static void read_remap(const kb_nvml *n, kb_health *h)
{
    static const kb_health_field f[4] = { KB_H_REMAP_CORRECTABLE, KB_H_REMAP_UNCORRECTABLE, KB_H_REMAP_PENDING,
                                          KB_H_REMAP_FAILED };
    if (!n->api.RemappedRows) {
        for (int i = 0; i < 4; i++)
            not_exported("nvmlDeviceGetRemappedRows", h->f[f[i]].why, sizeof h->f[f[i]].why);
        return;
    }
    unsigned c = 0, u = 0, p = 0, fail = 0;
    nvml_ret r = n->api.RemappedRows(n->dev, &c, &u, &p, &fail);
    const unsigned long long v[4] = { c, u, p, fail };
    put(n, h, r, "nvmlDeviceGetRemappedRows", f, v, 4);
}

static void read_ids(const kb_nvml *n, kb_health *h)
{
    const nvml_api *a = &n->api;
    char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE + 2] = "";
    nvml_ret r;
    if (!a->Serial)
        not_exported("nvmlDeviceGetSerial", h->serial_why, sizeof h->serial_why);
    else if ((r = a->Serial(n->dev, serial, NVML_DEVICE_SERIAL_BUFFER_SIZE)) != 0)
        call_why(n, r, "nvmlDeviceGetSerial", h->serial_why, sizeof h->serial_why);
    else
        snprintf(h->serial, sizeof h->serial, "%.*s", NVML_DEVICE_SERIAL_BUFFER_SIZE, serial);
    nvml_pci_info pci;
    memset(&pci, 0, sizeof pci);
    if (!a->PciInfo)
        not_exported("nvmlDeviceGetPciInfo_v3", h->pci_why, sizeof h->pci_why);
    else if ((r = a->PciInfo(n->dev, &pci)) != 0)
        call_why(n, r, "nvmlDeviceGetPciInfo_v3", h->pci_why, sizeof h->pci_why);
    else
        snprintf(h->pci_bus_id, sizeof h->pci_bus_id, "%.*s", (int)sizeof pci.bus_id, pci.bus_id);
}

/* Whether the GPU was idle when the link was read (the gpu_idle clock event reason). */
static void read_idle(const kb_nvml *n, kb_health *h)
{
    kb_health_field f = KB_H_GPU_IDLE;
    unsigned long long reasons = 0;
    if (!n->api.Reasons) {
        not_exported("nvmlDeviceGetCurrentClocksEventReasons", h->f[f].why, sizeof h->f[f].why);
        return;
    }
    nvml_ret r = n->api.Reasons(n->dev, &reasons);
    unsigned long long v = (reasons & KB_TEL_REASON_GPU_IDLE) != 0;
    put(n, h, r, "nvmlDeviceGetCurrentClocksEventReasons", &f, &v, 1);
}

void kb_nvml_health(kb_nvml *n, kb_health *h)
{
    if (!kb_nvml_available(n)) {
        kb_health_unread(h, kb_nvml_why(n));
        return;
    }
    memset(h, 0, sizeof *h);
    h->available = 1;
    read_ecc(n, h);
    read_retired(n, h);
    read_remap(n, h);
    one_unsigned(n, h, n->api.PcieGen, "nvmlDeviceGetCurrPcieLinkGeneration", KB_H_PCIE_GEN);
    one_unsigned(n, h, n->api.PcieGenMax, "nvmlDeviceGetMaxPcieLinkGeneration", KB_H_PCIE_GEN_MAX);
    one_unsigned(n, h, n->api.PcieWidth, "nvmlDeviceGetCurrPcieLinkWidth", KB_H_PCIE_WIDTH);
    one_unsigned(n, h, n->api.PcieWidthMax, "nvmlDeviceGetMaxPcieLinkWidth", KB_H_PCIE_WIDTH_MAX);
    read_idle(n, h);
    read_ids(n, h);
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
