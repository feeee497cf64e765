/* derive.h - every rate kbench reports, derived in one place from the family's work
 * model and the median time: TFLOPS, GB/s, arithmetic intensity, the roofline bound,
 * the % of it reached and whether the case is compute- or memory-bound.
 *
 * Bytes are the compulsory bytes (read + written) of the work model, not what a
 * variant happens to move: a naive kernel that moves more shows a lower GB/s.
 * Without a GPU peak (emulator, unknown architecture) the rates are kept and the
 * roofline fields are left unset: no ceiling is invented.
 */
#ifndef KB_DERIVE_H
#define KB_DERIVE_H

#include "engine/family.h"
#include "engine/peaks.h"

typedef enum { KB_BOUND_UNKNOWN = 0, KB_BOUND_COMPUTE, KB_BOUND_MEMORY } kb_bound;

const char *kb_bound_name(kb_bound b);   /* "compute", "memory", NULL for unknown */

typedef struct {
    int have_rates;       /* median > 0: tflops, gbps, ai are meaningful */
    double tflops;        /* [TFLOPS] flops / median (TOPS for int8) */
    double gbps;          /* [GB/s] compulsory bytes / median */
    double ai;            /* [FLOP/byte] flops / compulsory bytes; 0 for zero flops or bytes */

    int have_roof;        /* a GPU ceiling applied: the fields below are meaningful */
    double peak_tflops;   /* [TFLOPS] compute ceiling of the dtype (0 for a zero-flop case without one) */
    double peak_gbps;     /* [GB/s] bandwidth ceiling */
    double roof_tflops;   /* [TFLOPS] min(peak_tflops, ai * peak_gbps) */
    double pct_roof;      /* [%] achieved / roofline bound */
    const char *peak_source; /* "datasheet" or "clock" (static), NULL without a roof */

    kb_bound bound;       /* compute|memory by the ridge point; memory for zero flops even
                           * without peaks; unknown otherwise */

    /* The second roof, measured (kb_derive_roofs): the device's measured bandwidth x ai,
     * capped by the measured rate of the case's instruction path - or by the datasheet
     * compute ceiling (peak_tflops) where that path was not measured. */
    int have_measured;
    double measured_gbps;        /* [GB/s] the measured bandwidth ceiling */
    double measured_roof_tflops; /* [TFLOPS] min(compute, ai * measured_gbps) */
    double pct_measured;         /* [%] achieved / measured roof (memory: gbps / measured_gbps) */
    const char *measured_source; /* "measured", or "measured bandwidth, datasheet compute" */

    /* The third roof: the instruction the kernel's loop issues (family path hook). */
    char path[40];               /* "mma/fp8e4m3/widened", ""; named even without a GPU */
    int have_path;               /* path_tflops and pct_path are meaningful */
    double path_tflops;          /* [TFLOPS] the measured rate of that instruction, else the
                                  * datasheet (else clock) peak of the dtype bounding it */
    double pct_path;             /* [%] achieved / path_tflops */
    const char *path_source;     /* "measured", "datasheet", "clock" */
} kb_derived;

/* Derive the rates of work w timed at median_us. p may be NULL (no ceilings). A
 * non-positive median gives have_rates 0 and nothing else but the zero-flop bound.
 * Never divides by zero: zero flops -> ai 0, memory-bound, % of the bandwidth ceiling. */
void kb_derive(const kb_work *w, double median_us, const kb_peaks *p, kb_dtype dt, kb_derived *out);

/* After kb_derive: the measured roof and the path roof of d (see kb_derived). path may be
 * NULL (the family does not name one); p NULL or without a GPU roof (the emulator) leaves
 * both roofs unset - CPU timings are never scored against GPU ceilings. */
void kb_derive_roofs(const kb_work *w, const kb_peaks *p, const kb_path *path, kb_derived *d);

#endif /* KB_DERIVE_H */
