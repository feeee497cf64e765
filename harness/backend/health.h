/* health.h - what a backend reads about its GPU's health for `kbench accept` (the cuda
 * backend through NVML, backend/cuda/nvml.h): ECC mode and uncorrected error counts,
 * retired pages and row remapping, the PCIe link against its maximum, the board serial
 * and NVML's PCI bus id. Pure data and a name table: no library is loaded here.
 *
 * Every value is read on its own: a function an older driver does not export, or one the
 * GPU does not support (NVML_ERROR_NOT_SUPPORTED: no ECC on a GeForce, no row remapper
 * before Ampere, no page retirement after Volta), leaves that value unread with why, and
 * the others still count.
 */
#ifndef KB_HEALTH_H
#define KB_HEALTH_H

/* The values, one name each (kb_health_name). */
typedef enum {
    KB_H_ECC_MODE = 0,          /* nvmlDeviceGetEccMode: current mode, 1 enabled, 0 disabled */
    KB_H_ECC_UNC_VOLATILE,      /* nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE): since the driver loaded */
    KB_H_ECC_UNC_AGGREGATE,     /* ... (UNCORRECTED, AGGREGATE): over the board's life */
    KB_H_RETIRED_SBE,           /* nvmlDeviceGetRetiredPages(MULTIPLE_SINGLE_BIT_ECC_ERRORS): pages */
    KB_H_RETIRED_DBE,           /* nvmlDeviceGetRetiredPages(DOUBLE_BIT_ECC_ERROR): pages */
    KB_H_RETIRED_PENDING,       /* nvmlDeviceGetRetiredPagesPendingStatus: 1 when a retirement waits for a reset */
    KB_H_REMAP_CORRECTABLE,     /* nvmlDeviceGetRemappedRows: rows remapped for correctable errors */
    KB_H_REMAP_UNCORRECTABLE,   /* ... for uncorrectable errors */
    KB_H_REMAP_PENDING,         /* ... 1 when a remapping waits for a GPU reset */
    KB_H_REMAP_FAILED,          /* ... 1 when a remapping ever failed */
    KB_H_PCIE_GEN,              /* nvmlDeviceGetCurrPcieLinkGeneration */
    KB_H_PCIE_GEN_MAX,          /* nvmlDeviceGetMaxPcieLinkGeneration (this GPU in this system) */
    KB_H_PCIE_WIDTH,            /* nvmlDeviceGetCurrPcieLinkWidth [lanes] */
    KB_H_PCIE_WIDTH_MAX,        /* nvmlDeviceGetMaxPcieLinkWidth [lanes] */
    KB_H_GPU_IDLE,              /* nvmlDeviceGetCurrentClocksEventReasons has gpu_idle: 1 when the values were
                                 * read while the GPU was idle (its link may have trained down) */
    KB_H_COUNT
} kb_health_field;

typedef struct {
    int read;                   /* 1: v holds the value */
    unsigned long long v;
    char why[200];              /* when not read: "nvmlDeviceGetRemappedRows: NVML_ERROR_NOT_SUPPORTED: ..." */
} kb_health_value;

typedef struct {
    int available;              /* 0: NVML could not be used at all (why says why); nothing below is read */
    char why[512];
    kb_health_value f[KB_H_COUNT];
    char serial[64];            /* nvmlDeviceGetSerial; "" when not read (serial_why says why) */
    char serial_why[200];
    char pci_bus_id[64];        /* nvmlDeviceGetPciInfo's busId; "" when not read (pci_why says why) */
    char pci_why[200];
} kb_health;

/* "ecc_mode", "ecc_uncorrected_volatile", ... (snake case of the names above); "?" out of range. */
const char *kb_health_name(kb_health_field f);

/* Mark every value unread with why (a health reading of a backend without NVML). */
void kb_health_unread(kb_health *h, const char *why);

#endif /* KB_HEALTH_H */
