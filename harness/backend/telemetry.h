/* telemetry.h - what a backend with KB_CAP_TELEMETRY reports about its device while a
 * case runs: clocks, power, temperature and clock event ("throttle") reasons, and the
 * throttle rule applied to them. Pure data and pure functions: no library is loaded
 * here (the cuda backend reads NVML, backend/cuda/nvml.h).
 *
 * Throttle rule (nvbench's): a reading is throttled when the SM clock is under 75% of
 * the device's maximum SM clock, or when a thermal or hardware-slowdown reason is set
 * (hardware slowdown, software/hardware thermal slowdown, hardware power brake). The
 * software power cap is not throttling on its own (NVML: "the clocks have been optimized to
 * ensure not to exceed currently set power limits": a healthy GPU at its TDP, as an H100
 * under a dense GEMM is); a power cap deep enough to matter shows in the clock. The idle,
 * application-clock, sync-boost and display reasons are not throttling either.
 */
#ifndef KB_TELEMETRY_H
#define KB_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

/* Clock event reason bits, as nvml.h defines nvmlClocksEventReason* / nvmlClocksThrottleReason*. */
#define KB_TEL_REASON_GPU_IDLE            0x0000000000000001ull
#define KB_TEL_REASON_APP_CLOCKS          0x0000000000000002ull
#define KB_TEL_REASON_SW_POWER_CAP        0x0000000000000004ull
#define KB_TEL_REASON_HW_SLOWDOWN         0x0000000000000008ull
#define KB_TEL_REASON_SYNC_BOOST          0x0000000000000010ull
#define KB_TEL_REASON_SW_THERMAL          0x0000000000000020ull
#define KB_TEL_REASON_HW_THERMAL          0x0000000000000040ull
#define KB_TEL_REASON_HW_POWER_BRAKE      0x0000000000000080ull
#define KB_TEL_REASON_DISPLAY_CLOCKS      0x0000000000000100ull
/* The thermal and hardware-slowdown reasons that make a reading throttled. */
#define KB_TEL_THROTTLE_MASK (KB_TEL_REASON_HW_SLOWDOWN | KB_TEL_REASON_SW_THERMAL | KB_TEL_REASON_HW_THERMAL | \
                              KB_TEL_REASON_HW_POWER_BRAKE)
#define KB_TEL_MIN_CLOCK_FRACTION 0.75  /* nvbench's throttle threshold */

/* One reading. Fields a device does not support are -1. */
typedef struct {
    int available;          /* 0: nothing below is meaningful; why says why */
    char why[512];          /* "" when available */
    int sm_clock_mhz;       /* current SM clock [MHz] */
    int sm_clock_max_mhz;   /* maximum SM clock [MHz] */
    int mem_clock_mhz;      /* current memory clock [MHz] */
    double power_w;         /* board power draw [W] */
    int temperature_c;      /* [C] */
    int have_reasons;
    uint64_t reasons;       /* KB_TEL_REASON_* bits */
    int throttled;          /* kb_telemetry_throttled() of the above */
} kb_telemetry;

/* The throttle rule above. A clock or maximum <= 0 (unknown) does not count. */
int kb_telemetry_throttled(int sm_clock_mhz, int sm_clock_max_mhz, uint64_t reasons);

/* Names of the set reason bits, comma-separated in bit order ("sw_power_cap,hw_thermal_slowdown"),
 * "none" for 0, unknown bits as "0x...". Writes at most len bytes (NUL included);
 * returns the length the full text needs, like snprintf. */
int kb_telemetry_reason_names(uint64_t reasons, char *buf, size_t len);

#endif /* KB_TELEMETRY_H */
