/* nvml.h - GPU telemetry per case through NVML: SM and memory clocks, power,
 * temperature, clock event ("throttle") reasons.
 *
 * libnvidia-ml.so.1 is loaded with dlopen, never linked, so kbench starts where there
 * is no driver; $KBENCH_LIBNVML names another library file (tests force the missing
 * path with KBENCH_LIBNVML=/nonexistent). Without NVML the handle is in a clear
 * "unavailable" state with the reason, and samples say so: never an error. The cuda
 * backend opens it for its device and serves the telemetry and health slots from it.
 */
#ifndef KB_NVML_H
#define KB_NVML_H

#include "backend/health.h"
#include "backend/telemetry.h"

typedef struct kb_nvml kb_nvml;

/* Open NVML for the GPU with this PCI bus id (CUDA's "0000:3b:00.0": nvmlDeviceGetHandleByPciBusId_v2
 * takes domain:bus:device.function in hex, NVML's own "00000000:3B:00.0" as well)
 * or, when it is NULL/empty or not found, this UUID ("GPU-..."). Always returns a
 * handle (NULL only when out of memory); check kb_nvml_available. */
kb_nvml *kb_nvml_open(const char *pci_bus_id, const char *uuid);
/* 1 when samples can be read. */
int kb_nvml_available(const kb_nvml *n);
/* Why it is unavailable ("libnvidia-ml.so.1: cannot open shared object file ..."); "" when available. */
const char *kb_nvml_why(const kb_nvml *n);
/* Read one sample (available = 0 and why set when NVML is unavailable). */
void kb_nvml_read(kb_nvml *n, kb_telemetry *out);
/* 1 when the GPU found (by PCI bus id: the physical GPU) has MIG mode enabled, so the CUDA
 * device is a MIG instance whose UUID NVML and nvidia-smi print as "MIG-..."; 0 otherwise or
 * when NVML cannot tell. */
int kb_nvml_mig_enabled(kb_nvml *n);
/* Only the SM clock and the clock it should run at [MHz], for a reading per sample (cheaper
 * than kb_nvml_read). The reference is the maximum SM clock, or the clock the user set:
 * the applications clock (nvmlDeviceGetApplicationsClock) when it is below the maximum, and
 * while NVML reports user-defined clocks (the applications_clocks_setting reason, which
 * locked clocks - nvidia-smi -lgc - also raise; NVML has no getter for the locked clock) the
 * highest SM clock read under that reason. 1 when both were read, else 0 (unavailable or
 * unsupported). */
int kb_nvml_sm_clock(kb_nvml *n, int *mhz, int *ref_mhz);
/* Read the GPU's health (backend/health.h): every value on its own, a function this
 * libnvidia-ml lacks or the GPU does not support leaves that value unread with the NVML
 * error (or "not exported") as why. Without NVML, everything unread with kb_nvml_why. */
void kb_nvml_health(kb_nvml *n, kb_health *out);
/* The name of an nvmlReturn_t ("NVML_ERROR_NOT_FOUND", from nvml.h), NULL for a code it lacks. */
const char *kb_nvml_ret_name(int r);
/* Shut NVML down and free (NULL is fine). */
void kb_nvml_close(kb_nvml *n);

#endif /* KB_NVML_H */
