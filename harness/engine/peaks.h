/* peaks.h - the GPU's ceilings for the roofline: datasheet peaks per SKU and dtype
 * (data/peaks.json, matched by device name) and the clock-based peaks computed from
 * the device's own attributes (SMs x clock x dense ops per clock per SM, and
 * mem_clock x 2 x bus_width / 8 for memory).
 *
 * Nothing is invented: an unknown GPU gets the clock-based numbers only (and none for
 * an architecture whose ops per clock are not in the table), and the emulator gets no
 * GPU peak at all. Rates are dense: TFLOPS, or TOPS for int8.
 */
#ifndef KB_PEAKS_H
#define KB_PEAKS_H

#include <stdio.h>

#include "backend/backend.h"

#define KB_PEAKS_MAX_MEASURED 24

typedef struct {
    char device[128];              /* the device name looked up */
    int no_roof;                   /* 1: the device has no GPU roofline (no KB_CAP_ROOFLINE, e.g. the
                                    * emulator): every number below is 0 */
    int sm;                        /* compute capability x10 */
    int sm_count;
    double clock_mhz;              /* [MHz] max SM clock the device reports */
    double mem_clock_mhz;          /* [MHz] */
    int mem_bus_bits;

    /* datasheet entry, when the name matched one */
    int have_sheet;
    char sku[48];                  /* "H100 SXM5" */
    char source[256];              /* where the numbers come from */
    double sheet_tflops[KB_DT_COUNT]; /* [TFLOPS|TOPS] dense; 0 = no published figure */
    double sheet_gbps;             /* [GB/s] 0 = unknown */
    double tensor_mhz;             /* [MHz] the SKU's tensor-core clock; 0 = the SM clock */

    /* clock-based, from the attributes above */
    double clock_tflops[KB_DT_COUNT]; /* [TFLOPS|TOPS] 0 = arch or dtype not in the ops table */
    double clock_gbps;             /* [GB/s] 0 when the memory attributes are unknown */

    /* measured on this device by the ceiling family (suites/ceilings.yaml), when a run of it
     * is in the store (results/ceilings.h loads them): best value per kind */
    int n_measured;
    struct {
        char kind[40];             /* "copy", "read", "write", "fma/fp32", "mma/fp16", "mma/fp8e4m3/widened",
                                    * "launch" */
        double value;              /* [GB/s] memory kinds, [TFLOPS|TOPS] compute kinds, [launches/s] launch */
    } measured[KB_PEAKS_MAX_MEASURED];
    double measured_gbps;          /* [GB/s] best of copy, read and write; 0 = none measured */
    char measured_note[192];       /* where they come from (run, time, timing clock, SM clock) */
} kb_peaks;

/* Dense ops per clock per SM of an architecture (sm x10) and dtype, from NVIDIA's
 * architecture whitepapers (see docs/references.md): an FMA counts 2. 0 when unknown. */
int kb_peaks_ops_per_clock(int sm, kb_dtype dt);

/* Path of the datasheet file: $KBENCH_PEAKS when set, else data/peaks.json of the
 * source tree kbench was built from. Never NULL (static storage). */
const char *kb_peaks_default_path(void);

/* Check that path is a readable peaks file (valid JSON with a "gpus" array, each entry's
 * "sm" a compute capability some architecture of core/arch.h runs on). KB_ERR_SETUP with
 * "path: why" in err otherwise. */
kb_status kb_peaks_check_file(const char *path, kb_sb *err);

/* Fill *out for device d: the clock-based peaks always (nothing for an emulator), the
 * datasheet entry whose name matches d->name from the file at path (NULL: the default
 * path). A missing or unreadable file is not an error: the datasheet part stays empty
 * and a note goes into err (may be NULL). KB_ERR_INPUT only for a malformed file, with
 * "path: message" in err. */
kb_status kb_peaks_for_device(const kb_device_info *d, const char *path, kb_peaks *out, kb_sb *err);

/* The compute ceiling used for the roofline: the datasheet figure when there is one,
 * else the clock-based one; 0 when neither. *source (may be NULL) is set to
 * "datasheet", "clock" or NULL. */
double kb_peaks_tflops(const kb_peaks *p, kb_dtype dt, const char **source);

/* The bandwidth ceiling [GB/s], chosen the same way. */
double kb_peaks_gbps(const kb_peaks *p, const char **source);

/* Add a measured ceiling (kind as the ceiling family names it, value in its unit); the
 * memory kinds (copy, read, write) also raise measured_gbps. Extra kinds past
 * KB_PEAKS_MAX_MEASURED are dropped; a kind given twice keeps the larger value. */
void kb_peaks_add_measured(kb_peaks *p, const char *kind, double value);

/* The measured ceiling of kind, 0 when none was measured (p may be NULL). */
double kb_peaks_measured(const kb_peaks *p, const char *kind);

/* 1 for the ceiling kinds that are bandwidths (copy, read, write). */
int kb_peaks_kind_is_memory(const char *kind);

/* Human-readable description of both sets of peaks for `kbench devices` (appended to
 * out, several lines, each starting with two spaces). Says plainly when the GPU is
 * unknown (clock-based only) or when the device is the emulator (no GPU peaks). */
void kb_peaks_format(const kb_peaks *p, kb_sb *out);

/* kb_peaks_format to a stream. */
void kb_peaks_print(FILE *f, const kb_peaks *p);

#endif /* KB_PEAKS_H */
