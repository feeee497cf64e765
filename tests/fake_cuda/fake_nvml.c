/* fake_nvml.c - an NVML double (CMake target kbench_fake_nvml: build/fake-driver/
 * libnvidia-ml.so.1, loaded through KBENCH_LIBNVML) with scripted SM clocks, so a test can
 * inject a clock drop and assert what the throttle rule discards.
 *
 *   KBENCH_FAKE_NVML_SM_CLOCKS  comma-separated SM clocks [MHz], one per nvmlDeviceGetClockInfo
 *                               (NVML_CLOCK_SM) call, cycled (default "1980")
 *   KBENCH_FAKE_NVML_SM_MAX     nvmlDeviceGetMaxClockInfo's SM clock [MHz] (default 1980)
 *   KBENCH_FAKE_NVML_MIG        1: MIG mode enabled (nvmlDeviceGetMigMode)
 *   KBENCH_FAKE_NVML_REASONS    clock event reasons under load (nvmlDeviceGetCurrentClocksEventReasons
 *                               bits, e.g. 0x4 sw_power_cap, 0x2 clocks set by the user; default 0)
 *   KBENCH_FAKE_NVML_APP_SM     nvmlDeviceGetApplicationsClock's SM clock [MHz] (default: the maximum)
 * Idle, as a real GPU is (nvidia-smi -q: "the link generation may be reduced when the GPU is
 * not in use"; nvmlClocksEventReasonGpuIdle): when the driver double (KBENCH_LIBCUDA) has had
 * no work for FAKE_NVML_IDLE_NS, or KBENCH_FAKE_NVML_IDLE=1, the reasons are gpu_idle, the SM
 * clock KBENCH_FAKE_NVML_IDLE_SM (default 345 MHz) and the PCIe generation
 * KBENCH_FAKE_NVML_PCIE_IDLE_GEN (default 1); KBENCH_FAKE_NVML_IDLE=0 forces busy. Without the
 * driver double loaded the GPU counts as busy (the scripted values).
 * Health (backend/health.h; defaults are a healthy H100 SXM on a gen 5 x16 link):
 *   KBENCH_FAKE_NVML_ECC          current ECC mode, 1 enabled (default) or 0
 *   KBENCH_FAKE_NVML_ECC_UNC      "volatile,aggregate" uncorrected ECC error counts (default "0,0")
 *   KBENCH_FAKE_NVML_RETIRED      "sbe,dbe,pending" retired pages and the pending flag (default "0,0,0")
 *   KBENCH_FAKE_NVML_REMAP        "correctable,uncorrectable,pending,failed" (nvmlDeviceGetRemappedRows,
 *                                 default "0,0,0,0")
 *   KBENCH_FAKE_NVML_PCIE         "gen,max_gen,width,max_width" (default "5,5,16,16")
 *   KBENCH_FAKE_NVML_SERIAL       board serial (default "1650123456789")
 *   KBENCH_FAKE_NVML_UNSUPPORTED  comma-separated NVML function names that return 3
 *                                 (NVML_ERROR_NOT_SUPPORTED), e.g. "nvmlDeviceGetRemappedRows"
 * Page retirement (nvmlDeviceGetRetiredPages, ...PendingStatus) is NOT_SUPPORTED from
 * compute capability 8.0 (KBENCH_FAKE_CUDA_ARCH, default 90), where row remapping replaces
 * it, and row remapping NOT_SUPPORTED before 8.0 (NVIDIA's "A100 GPU Memory Error Management",
 * supported GPUs: row remapping on GA100, GH100 and later; nvmlDeviceGetRemappedRows: "Ampere or
 * newer"; the review of issue 24: H100 reports page retirement as N/A).
 * Devices: nvmlDeviceGetHandleByPciBusId_v2 finds the node's GPUs (fake_nvml_topo.c) by address,
 * else the one telemetry GPU (bus 00000000:00:00.0; any id while KBENCH_FAKE_NVML_BUS_IDS is
 * unset, NOT_FOUND otherwise); every GPU reads the scripted values. nvmlErrorString gives NVML's
 * words for codes 0-15.
 * Memory clock 2619 MHz, power 350 W, 45 C. Return codes as nvml.h:
 * 0 success, 2 invalid argument, 3 not supported, 6 not found, 7 insufficient size.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake_nvml_device *nvml_device;
static char device_obj;
static long sm_reads;

#define EXPORT __attribute__((visibility("default")))

/* The entry points, as nvml.h declares them (types simplified as backend/cuda/nvml.c does). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvml_device *d);
int nvmlDeviceGetHandleByUUID(const char *uuid, nvml_device *d);
int nvmlDeviceGetClockInfo(nvml_device d, int type, unsigned *mhz);
int nvmlDeviceGetMaxClockInfo(nvml_device d, int type, unsigned *mhz);
int nvmlDeviceGetPowerUsage(nvml_device d, unsigned *mw);
int nvmlDeviceGetTemperature(nvml_device d, int sensor, unsigned *c);
int nvmlDeviceGetCurrentClocksEventReasons(nvml_device d, unsigned long long *r);
int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending);
int nvmlDeviceGetEccMode(nvml_device d, int *current, int *pending);
int nvmlDeviceGetTotalEccErrors(nvml_device d, int error_type, int counter_type, unsigned long long *count);
int nvmlDeviceGetRetiredPages(nvml_device d, int cause, unsigned *count, unsigned long long *addresses);
int nvmlDeviceGetRetiredPagesPendingStatus(nvml_device d, int *pending);
int nvmlDeviceGetRemappedRows(nvml_device d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed);
int nvmlDeviceGetCurrPcieLinkGeneration(nvml_device d, unsigned *v);
int nvmlDeviceGetMaxPcieLinkGeneration(nvml_device d, unsigned *v);
int nvmlDeviceGetCurrPcieLinkWidth(nvml_device d, unsigned *v);
int nvmlDeviceGetMaxPcieLinkWidth(nvml_device d, unsigned *v);
int nvmlDeviceGetSerial(nvml_device d, char *serial, unsigned length);
int nvmlDeviceGetPciInfo_v3(nvml_device d, void *pci);
int nvmlDeviceGetApplicationsClock(nvml_device d, int type, unsigned *mhz);

#define FAKE_NVML_IDLE_NS 5e7   /* [ns] of no GPU work after which the GPU reports idle (*assumed*) */
#define REASON_GPU_IDLE 0x1ull

/* 1 when the GPU is idle (see the file comment). */
static int idle(void)
{
    const char *force = getenv("KBENCH_FAKE_NVML_IDLE"), *lib = getenv("KBENCH_LIBCUDA");
    if (force && *force)
        return *force == '1';
    void *h = lib && *lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    double (*idle_ns)(void) = NULL;
    if (h) {
        *(void **)&idle_ns = dlsym(h, "fake_cuda_idle_ns");
        dlclose(h);   /* RTLD_NOLOAD took a reference */
    }
    return idle_ns && idle_ns() >= FAKE_NVML_IDLE_NS;
}

static int env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    return e && *e ? (int)strtol(e, NULL, 0) : dflt;
}

EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char *nvmlErrorString(int r)
{
    static const char *const msg[] = { "Success", "Uninitialized", "Invalid Argument", "Not Supported",
                                       "Insufficient Permissions", "Already Initialized", "Not Found",
                                       "Insufficient Size", "Insufficient External Power", "Driver Not Loaded",
                                       "Timeout", "Interrupt Request Issue", "NVML Shared Library Not Found",
                                       "Function Not Found", "Corrupted infoROM", "GPU is lost" };
    return r >= 0 && r < (int)(sizeof msg / sizeof msg[0]) ? msg[r] : "fake NVML error";
}

__attribute__((visibility("hidden"))) void *fake_topo_find(const char *bus_id);   /* fake_nvml_topo.c */
__attribute__((visibility("hidden"))) int fake_topo_gpu(const void *d);

/* A GPU of the node (fake_nvml_topo.c) by its address; the address 0:0:0.0 or, while
 * KBENCH_FAKE_NVML_BUS_IDS is unset, any other id: the one telemetry GPU (device_obj). With
 * KBENCH_FAKE_NVML_BUS_IDS set an id of no GPU is 6 (NVML_ERROR_NOT_FOUND). */
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvml_device *d)
{
    if (!id || !d)
        return 2;
    void *g = fake_topo_find(id);
    const char *ids = getenv("KBENCH_FAKE_NVML_BUS_IDS");
    if (!g && ids && *ids && strcmp(id, "00000000:00:00.0") && strcmp(id, "0000:00:00.0"))
        return 6;
    *d = g ? (nvml_device)g : (nvml_device)&device_obj;
    return 0;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, nvml_device *d)
{
    if (!uuid || !d)
        return 2;
    *d = (nvml_device)&device_obj;
    return 0;
}

/* The telemetry GPU or one of the node's: every GPU reads the same scripted values. */
static int known(nvml_device d) { return d == (nvml_device)&device_obj || fake_topo_gpu(d) >= 0; }

/* The i-th clock of the comma-separated list (cycled). */
static unsigned scripted_clock(const char *list, long i)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    long k = i % n;
    const char *p = list;
    while (k-- > 0)
        p = strchr(p, ',') + 1;
    return (unsigned)atoi(p);
}

EXPORT int nvmlDeviceGetClockInfo(nvml_device d, int type, unsigned *mhz)
{
    if (!known(d) || !mhz)
        return 2;
    const char *list = getenv("KBENCH_FAKE_NVML_SM_CLOCKS");
    if (type == 1 && idle())
        *mhz = (unsigned)env_int("KBENCH_FAKE_NVML_IDLE_SM", 345);
    else if (type == 1)
        *mhz = list && *list ? scripted_clock(list, sm_reads++) : 1980;
    else
        *mhz = 2619;
    return 0;
}

EXPORT int nvmlDeviceGetApplicationsClock(nvml_device d, int type, unsigned *mhz)
{
    if (!known(d) || !mhz)
        return 2;
    unsigned max = 0;
    nvmlDeviceGetMaxClockInfo(d, type, &max);
    *mhz = type == 1 ? (unsigned)env_int("KBENCH_FAKE_NVML_APP_SM", (int)max) : max;
    return 0;
}

EXPORT int nvmlDeviceGetMaxClockInfo(nvml_device d, int type, unsigned *mhz)
{
    if (!known(d) || !mhz)
        return 2;
    const char *max = getenv("KBENCH_FAKE_NVML_SM_MAX");
    *mhz = type == 1 ? (unsigned)(max && *max ? atoi(max) : 1980) : 2619;
    return 0;
}

EXPORT int nvmlDeviceGetPowerUsage(nvml_device d, unsigned *mw) { (void)d; *mw = 350000; return 0; }
EXPORT int nvmlDeviceGetTemperature(nvml_device d, int sensor, unsigned *c) { (void)d; (void)sensor; *c = 45; return 0; }
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(nvml_device d, unsigned long long *r)
{
    if (!known(d) || !r)
        return 2;
    const char *e = getenv("KBENCH_FAKE_NVML_REASONS");
    *r = idle() ? REASON_GPU_IDLE : e && *e ? strtoull(e, NULL, 0) : 0;
    return 0;
}

EXPORT int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending)
{
    const char *e = getenv("KBENCH_FAKE_NVML_MIG");
    if (!known(d))
        return 2;
    *current = *pending = e && *e == '1';
    return 0;
}

/* ---- health ---- */

/* The i-th comma-separated number of $name, or dflt. */
static unsigned long long knob(const char *name, int i, unsigned long long dflt)
{
    const char *p = getenv(name);
    if (!p || !*p)
        return dflt;
    while (i-- > 0 && p)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    return p ? strtoull(p, NULL, 10) : dflt;
}

/* 3 (NVML_ERROR_NOT_SUPPORTED) when fn is listed in KBENCH_FAKE_NVML_UNSUPPORTED or the
 * architecture lacks it (page retirement from sm_80 on, row remapping before), 2 for another
 * device handle, else 0. */
static int check(nvml_device d, const char *fn)
{
    if (!known(d))
        return 2;
    int ampere = env_int("KBENCH_FAKE_CUDA_ARCH", 90) >= 80;
    if (ampere ? !strncmp(fn, "nvmlDeviceGetRetiredPages", 25) : !strcmp(fn, "nvmlDeviceGetRemappedRows"))
        return 3;
    const char *list = getenv("KBENCH_FAKE_NVML_UNSUPPORTED");
    size_t n = strlen(fn);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        if (!strncmp(p, fn, n) && (p[n] == ',' || !p[n]))
            return 3;
    return 0;
}

EXPORT int nvmlDeviceGetEccMode(nvml_device d, int *current, int *pending)
{
    int r = check(d, "nvmlDeviceGetEccMode");
    if (r == 0)
        *current = *pending = (int)knob("KBENCH_FAKE_NVML_ECC", 0, 1);
    return r;
}

EXPORT int nvmlDeviceGetTotalEccErrors(nvml_device d, int error_type, int counter_type, unsigned long long *count)
{
    int r = check(d, "nvmlDeviceGetTotalEccErrors");
    if (r == 0 && (error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1 || !count))
        return 2;
    if (r == 0)   /* corrected errors: none */
        *count = error_type == 1 ? knob("KBENCH_FAKE_NVML_ECC_UNC", counter_type, 0) : 0;
    return r;
}

EXPORT int nvmlDeviceGetRetiredPages(nvml_device d, int cause, unsigned *count, unsigned long long *addresses)
{
    int r = check(d, "nvmlDeviceGetRetiredPages");
    if (r == 0 && (cause < 0 || cause > 1 || !count || !addresses))
        return 2;
    if (r != 0)
        return r;
    unsigned have = (unsigned)knob("KBENCH_FAKE_NVML_RETIRED", cause, 0), room = *count;
    for (unsigned i = 0; i < have && i < room; i++)
        addresses[i] = 0x1000ull * (i + 1);
    *count = have;
    return have > room ? 7 : 0;
}

EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(nvml_device d, int *pending)
{
    int r = check(d, "nvmlDeviceGetRetiredPagesPendingStatus");
    if (r == 0)
        *pending = knob("KBENCH_FAKE_NVML_RETIRED", 2, 0) != 0;
    return r;
}

EXPORT int nvmlDeviceGetRemappedRows(nvml_device d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed)
{
    int r = check(d, "nvmlDeviceGetRemappedRows");
    if (r != 0)
        return r;
    *corr = (unsigned)knob("KBENCH_FAKE_NVML_REMAP", 0, 0);
    *unc = (unsigned)knob("KBENCH_FAKE_NVML_REMAP", 1, 0);
    *pending = (unsigned)knob("KBENCH_FAKE_NVML_REMAP", 2, 0);
    *failed = (unsigned)knob("KBENCH_FAKE_NVML_REMAP", 3, 0);
    return 0;
}

static int pcie(nvml_device d, const char *fn, int i, unsigned dflt, unsigned *v)
{
    int r = check(d, fn);
    if (r == 0)
        *v = (unsigned)knob("KBENCH_FAKE_NVML_PCIE", i, dflt);
    if (r == 0 && i == 0 && idle())   /* the current generation trains down at idle */
        *v = (unsigned)env_int("KBENCH_FAKE_NVML_PCIE_IDLE_GEN", 1);
    return r;
}

EXPORT int nvmlDeviceGetCurrPcieLinkGeneration(nvml_device d, unsigned *v)
{
    return pcie(d, "nvmlDeviceGetCurrPcieLinkGeneration", 0, 5, v);
}
EXPORT int nvmlDeviceGetMaxPcieLinkGeneration(nvml_device d, unsigned *v)
{
    return pcie(d, "nvmlDeviceGetMaxPcieLinkGeneration", 1, 5, v);
}
EXPORT int nvmlDeviceGetCurrPcieLinkWidth(nvml_device d, unsigned *v)
{
    return pcie(d, "nvmlDeviceGetCurrPcieLinkWidth", 2, 16, v);
}
EXPORT int nvmlDeviceGetMaxPcieLinkWidth(nvml_device d, unsigned *v)
{
    return pcie(d, "nvmlDeviceGetMaxPcieLinkWidth", 3, 16, v);
}

EXPORT int nvmlDeviceGetSerial(nvml_device d, char *serial, unsigned length)
{
    int r = check(d, "nvmlDeviceGetSerial");
    const char *s = getenv("KBENCH_FAKE_NVML_SERIAL");
    s = s && *s ? s : "1650123456789";
    if (r == 0 && strlen(s) + 1 > length)
        return 7;
    if (r == 0)
        strcpy(serial, s);
    return r;
}

/* nvmlPciInfo_t: busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32] */
__attribute__((visibility("hidden"))) int fake_topo_pci(const void *d, void *pci);   /* fake_nvml_topo.c */

EXPORT int nvmlDeviceGetPciInfo_v3(nvml_device d, void *pci)
{
    if (fake_topo_pci(d, pci) == 0)
        return 0;   /* a GPU of the node */
    int r = check(d, "nvmlDeviceGetPciInfo_v3");
    if (r != 0)
        return r;
    struct { char legacy[16]; unsigned domain, bus, device, id, subsystem; char bus_id[32]; } p;
    memset(&p, 0, sizeof p);
    strcpy(p.legacy, "0000:00:00.0");
    strcpy(p.bus_id, "00000000:00:00.0");
    p.id = 0x233010deu;   /* H100 SXM5 80GB, NVIDIA */
    memcpy(pci, &p, sizeof p);
    return 0;
}
