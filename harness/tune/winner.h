/* winner.h - choosing a winner that is beyond the noise.
 *
 * Each measured configuration has a median and the relative standard error of that
 * median (measure.h's noise). Times are positive and their errors multiplicative, so the
 * 95% confidence interval is taken in log space: median * exp(+-1.96 noise) - never
 * below zero, and for a small noise the same as median * (1 +- 1.96 noise). An unknown
 * noise gives no interval: such a configuration counts as within the noise of any other.
 * The fastest median leads; every configuration whose interval overlaps the leader's
 * is "within noise". Alone, the leader wins "clear"; otherwise it is a "tie" and the
 * tied configurations are ordered deterministically: fewer registers, then less static
 * shared memory (both when known), then the median, then the id. A winner whose own
 * noise is unknown or above the bound (KB_TUNE_NOISE_BOUND unless the caller gives one:
 * `kbench tune --max-noise`) is no winner: "noise" (its interval is wider than about
 * +-10%: a re-measurement could as well pick another). A configuration
 * that failed (not ok) is never considered.
 */
#ifndef KB_TUNE_WINNER_H
#define KB_TUNE_WINNER_H

#define KB_TUNE_Z95 1.96
#define KB_TUNE_MAX_TIED 8
#define KB_TUNE_NOISE_BOUND 0.05   /* a winner's relative standard error of the median at most */

typedef struct {
    const char *id;
    int ok;                        /* verified and measured */
    double median_us;              /* [us] */
    double noise;                  /* relative standard error of the median (inf/NaN: unknown) */
    int registers;                 /* per thread, -1 unknown */
    int shmem_bytes;               /* [bytes] static shared memory, -1 unknown */
} kb_tune_result;

typedef struct {
    int winner;                    /* index into the results, -1 when none was ok */
    int tie;                       /* 1: other configurations are within the winner's noise */
    int n_tied;                    /* how many others (those listed: at most KB_TUNE_MAX_TIED) */
    int tied[KB_TUNE_MAX_TIED];    /* their indexes, in tie-break order */
    double lo_us, hi_us;           /* [us] the winner's 95% interval (NAN when its noise is unknown) */
    int noisy;                     /* 1: no winner - the winner's noise is unknown or above KB_TUNE_NOISE_BOUND */
} kb_tune_choice;

/* The 95% interval of r [us] in log space (see above); NAN, NAN when its noise is unknown. */
void kb_tune_interval(const kb_tune_result *r, double *lo, double *hi);

/* Choose among r[0..n) with noise bound max_noise (<= 0: KB_TUNE_NOISE_BOUND). Returns the
 * winner's index (also out->winner), -1 when none passed. A winner can still be
 * out->noisy: the caller reports "no winner: noise". */
int kb_tune_choose(const kb_tune_result *r, int n, double max_noise, kb_tune_choice *out);

#endif /* KB_TUNE_WINNER_H */
