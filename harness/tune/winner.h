/* winner.h - choosing a winner that is beyond the noise.
 *
 * Each measured configuration has a median and the relative standard error of that
 * median (measure.h's noise); its 95% confidence interval is median * (1 +- 1.96 noise),
 * clipped at 0.
 * The fastest median leads; every configuration whose interval overlaps the leader's
 * is "within noise". Alone, the leader wins "clear"; otherwise it is a "tie" and the
 * tied configurations are ordered deterministically: fewer registers, then less static
 * shared memory (both when known), then the median, then the id. A configuration that
 * failed (not ok) is never considered.
 */
#ifndef KB_TUNE_WINNER_H
#define KB_TUNE_WINNER_H

#define KB_TUNE_Z95 1.96
#define KB_TUNE_MAX_TIED 8

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
    double lo_us, hi_us;           /* [us] the winner's 95% interval */
} kb_tune_choice;

/* The 95% interval of r [us]; an unknown noise gives [0, 2 * median]. */
void kb_tune_interval(const kb_tune_result *r, double *lo, double *hi);

/* Choose among r[0..n). Returns the winner's index (also out->winner), -1 when none. */
int kb_tune_choose(const kb_tune_result *r, int n, kb_tune_choice *out);

#endif /* KB_TUNE_WINNER_H */
