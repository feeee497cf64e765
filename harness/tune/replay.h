/* replay.h - a recorded tuning space, for running strategies offline (Kernel Tuner's
 * simulation mode): each configuration's time comes from a file instead of a device.
 *
 * FILE is either
 *   kbench records (JSON Lines, as in results/): grouped into problems as `kbench tune`
 *     groups cases (space.h); a record that is not ok counts as failed; or
 *   a Kernel Tuner cache file: tune_params_keys / tune_params span the space, cache
 *     entries keyed "v1,v2,..." give "time" [ms] or an error string (InvalidConfig,
 *     CompilationFailedConfig, RuntimeFailedConfig: failed); a configuration of the space
 *     absent from the cache counts as failed (spaces of at most KB_REPLAY_MAX_SPACE; a
 *     larger one replays the cache's entries only). A file Kernel Tuner was still
 *     appending to (unterminated) is closed on load.
 * One problem is replayed: the one whose key contains the filter, else the largest.
 */
#ifndef KB_TUNE_REPLAY_H
#define KB_TUNE_REPLAY_H

#include "tune/space.h"

#define KB_REPLAY_MAX_SPACE 1000000

typedef struct {
    char problem[384];             /* the problem key, or the Kernel Tuner kernel's name */
    const char *format;            /* "kbench records" or "Kernel Tuner cache" */
    int cpu;                       /* kbench records timed on the emulator (CPU time) */
    int n, n_axes;
    char axis[KB_TUNE_MAX_AXES][32];
    int *level;                    /* [n * n_axes] */
    double *time;                  /* [n] seconds-agnostic time; INFINITY failed */
    char **label;                  /* [n] "BM=64,BN=64,..." */
    int n_problems;                /* problems in the file (records) */
    int absent;                    /* configurations missing from a Kernel Tuner cache (failed) */
} kb_tune_replay;

/* Load path (either format) into *out. filter: a text the replayed problem's key must
 * contain (NULL: the largest). KB_ERR_INPUT with "path: ..." in err when the file is
 * neither format or no problem matches; KB_ERR_IO when unreadable. */
kb_status kb_tune_replay_load(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err);
void kb_tune_replay_free(kb_tune_replay *r);

/* The index of the fastest configuration, -1 when every one failed. */
int kb_tune_replay_optimum(const kb_tune_replay *r);

/* The expected best time of `budget` configurations drawn at random without repeats (the
 * baseline Kernel Tuner's methodology scores strategies against), exactly: failed
 * configurations count as the slowest time. */
double kb_tune_replay_random_expected(const kb_tune_replay *r, int budget);

#endif /* KB_TUNE_REPLAY_H */
