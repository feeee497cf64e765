/* fake_nvml.c - an NVML double (CMake target kbench_fake_nvml: build/fake-driver/
 * libnvidia-ml.so.1, loaded through KBENCH_LIBNVML) with scripted SM clocks, so a test can
 * inject a clock drop and assert what the throttle rule discards.
 *
 *   KBENCH_FAKE_NVML_SM_CLOCKS  comma-separated SM clocks [MHz], one per nvmlDeviceGetClockInfo
 *                               (NVML_CLOCK_SM) call, cycled (default "1980")
 *   KBENCH_FAKE_NVML_SM_MAX     nvmlDeviceGetMaxClockInfo's SM clock [MHz] (default 1980)
 *   KBENCH_FAKE_NVML_MIG        1: MIG mode enabled (nvmlDeviceGetMigMode)
 * Memory clock 2619 MHz, power 350 W, 45 C, no clock event reason. Return codes as nvml.h:
 * 0 success, 2 invalid argument, 6 not found.
 */
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

EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char *nvmlErrorString(int r) { return r ? "fake NVML error" : "Success"; }

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvml_device *d)
{
    if (!id || !d)
        return 2;
    *d = (nvml_device)&device_obj;
    return 0;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, nvml_device *d)
{
    return nvmlDeviceGetHandleByPciBusId_v2(uuid, d);
}

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
    if (d != (nvml_device)&device_obj || !mhz)
        return 2;
    const char *list = getenv("KBENCH_FAKE_NVML_SM_CLOCKS");
    if (type == 1)
        *mhz = list && *list ? scripted_clock(list, sm_reads++) : 1980;
    else
        *mhz = 2619;
    return 0;
}

EXPORT int nvmlDeviceGetMaxClockInfo(nvml_device d, int type, unsigned *mhz)
{
    if (d != (nvml_device)&device_obj || !mhz)
        return 2;
    const char *max = getenv("KBENCH_FAKE_NVML_SM_MAX");
    *mhz = type == 1 ? (unsigned)(max && *max ? atoi(max) : 1980) : 2619;
    return 0;
}

EXPORT int nvmlDeviceGetPowerUsage(nvml_device d, unsigned *mw) { (void)d; *mw = 350000; return 0; }
EXPORT int nvmlDeviceGetTemperature(nvml_device d, int sensor, unsigned *c) { (void)d; (void)sensor; *c = 45; return 0; }
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(nvml_device d, unsigned long long *r) { (void)d; *r = 0; return 0; }

EXPORT int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending)
{
    const char *e = getenv("KBENCH_FAKE_NVML_MIG");
    if (d != (nvml_device)&device_obj)
        return 2;
    *current = *pending = e && *e == '1';
    return 0;
}
