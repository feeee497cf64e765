/* nvml.h - GPU telemetry per case through NVML: SM and memory clocks, power,
 * temperature, clock event ("throttle") reasons.
 *
 * libnvidia-ml.so.1 is loaded with dlopen, never linked, so kbench starts where there
 * is no driver; $KBENCH_LIBNVML names another library file (tests force the missing
 * path with KBENCH_LIBNVML=/nonexistent). Without NVML the handle is in a clear
 * "unavailable" state with the reason, and samples say so: never an error.
 *
 * Throttle rule (nvbench's): a case is throttled when the SM clock is under 75% of the
 * device's maximum SM clock, or when a power or thermal reason is set (software power
 * cap, hardware slowdown, software/hardware thermal slowdown, hardware power brake).
 * The idle, application-clock, sync-boost and display reasons are not throttling.
 */
#ifndef KB_NVML_H
#define KB_NVML_H

#include <jansson.h>
#include <stdint.h>

#include "core/kb.h"

/* Clock event reason bits, as nvml.h defines nvmlClocksEventReason* / nvmlClocksThrottleReason*. */
#define KB_NVML_REASON_GPU_IDLE            0x0000000000000001ull
#define KB_NVML_REASON_APP_CLOCKS          0x0000000000000002ull
#define KB_NVML_REASON_SW_POWER_CAP        0x0000000000000004ull
#define KB_NVML_REASON_HW_SLOWDOWN         0x0000000000000008ull
#define KB_NVML_REASON_SYNC_BOOST          0x0000000000000010ull
#define KB_NVML_REASON_SW_THERMAL          0x0000000000000020ull
#define KB_NVML_REASON_HW_THERMAL          0x0000000000000040ull
#define KB_NVML_REASON_HW_POWER_BRAKE      0x0000000000000080ull
#define KB_NVML_REASON_DISPLAY_CLOCKS      0x0000000000000100ull
/* The power and thermal reasons that make a case throttled. */
#define KB_NVML_THROTTLE_MASK (KB_NVML_REASON_SW_POWER_CAP | KB_NVML_REASON_HW_SLOWDOWN | \
                               KB_NVML_REASON_SW_THERMAL | KB_NVML_REASON_HW_THERMAL | \
                               KB_NVML_REASON_HW_POWER_BRAKE)
#define KB_NVML_MIN_CLOCK_FRACTION 0.75  /* nvbench's throttle threshold */

typedef struct kb_nvml kb_nvml;

/* One reading. Fields a device does not support are -1 (reasons: have_reasons 0). */
typedef struct {
    int available;          /* 0: NVML unavailable, nothing else is meaningful */
    int sm_clock_mhz;       /* current SM clock [MHz] */
    int sm_clock_max_mhz;   /* maximum SM clock [MHz] */
    int mem_clock_mhz;      /* current memory clock [MHz] */
    double power_w;         /* board power draw [W]; -1 when unsupported */
    int temperature_c;      /* GPU temperature [C] */
    int have_reasons;
    uint64_t reasons;       /* KB_NVML_REASON_* bits */
    int throttled;          /* kb_nvml_throttled() of the above */
} kb_nvml_sample;

/* Open NVML for the GPU with this PCI bus id ("0000:3B:00.0"; CUDA's and NVML's agree)
 * or, when it is NULL/empty or not found, this UUID ("GPU-..."). Always returns a
 * handle (NULL only when out of memory); check kb_nvml_available. */
kb_nvml *kb_nvml_open(const char *pci_bus_id, const char *uuid);
/* 1 when samples can be read. */
int kb_nvml_available(const kb_nvml *n);
/* Why it is unavailable ("libnvidia-ml.so.1: cannot open shared object file ..."); "" when available. */
const char *kb_nvml_why(const kb_nvml *n);
/* Read one sample (available = 0 when NVML is unavailable). */
void kb_nvml_read(kb_nvml *n, kb_nvml_sample *out);
/* Shut NVML down and free (NULL is fine). */
void kb_nvml_close(kb_nvml *n);

/* ---- pure parts ---- */

/* The throttle rule above. A clock or maximum <= 0 (unknown) does not count. */
int kb_nvml_throttled(int sm_clock_mhz, int sm_clock_max_mhz, uint64_t reasons);

/* Names of the set reason bits, comma-separated in bit order ("sw_power_cap,hw_thermal"),
 * "none" for 0, unknown bits as "0x...". Writes at most len bytes (NUL included);
 * returns the length the full text needs, like snprintf. */
int kb_nvml_reason_names(uint64_t reasons, char *buf, size_t len);

/* The telemetry block of a record: {available, sm_clock_mhz, sm_clock_max_mhz,
 * mem_clock_mhz, power_w, temperature_c, reasons [names], throttled} with unknowns as
 * null, or {available: false, why} when unavailable. NULL when out of memory. */
json_t *kb_nvml_json(const kb_nvml_sample *s, const char *why);

#endif /* KB_NVML_H */
