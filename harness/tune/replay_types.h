/* replay_types.h - the recorded space (replay.h describes what it holds and how it is
 * read), apart so that the two halves of the reader (replay_build.h, replay_rec.h) and
 * replay.h share it without including each other. */
#ifndef KB_TUNE_REPLAY_TYPES_H
#define KB_TUNE_REPLAY_TYPES_H

#include "tune/search.h"
#include "tune/space.h"

#define KB_REPLAY_MAX_BYTES (1024L * 1024 * 1024)  /* [bytes] a replay file at most */
#define KB_REPLAY_NAME_MAX 128                     /* an axis name's characters at most */
#define KB_REPLAY_MAX_TIME 1e15                    /* a time at most (any unit) */

typedef struct {
    char problem[384];             /* the problem key, or the Kernel Tuner kernel's name */
    const char *format;            /* "kbench records" or "Kernel Tuner cache" */
    char device[128];              /* where the times were measured ("" unknown) */
    int sm;                        /* its compute capability x10 (records; 0 unknown) */
    int cpu;                       /* kbench records timed on the emulator (CPU time) */
    int n, n_axes;
    char axis[KB_TUNE_MAX_AXES][KB_REPLAY_NAME_MAX + 1];
    unsigned char categorical[KB_TUNE_MAX_AXES]; /* per axis (see above) */
    int *level;                    /* [n * n_axes] */
    double *time;                  /* [n] time; INFINITY failed; KB_TUNE_REFUSED refused */
    double *cost_s;                /* [n] [s] what evaluating each cost; NULL when some entry lacks it */
    char **label;                  /* [n] "BM=64,BN=64,..." */
    kb_case *cases;                /* [n] records of a family kbench knows: each one's case (--prior estimate); NULL */
    int n_problems;                /* problems in the file (records) */
    int absent;                    /* Kernel Tuner: combinations of tune_params absent from the cache */
    int refused, failed;           /* configurations refused (InvalidConfig, skipped) / failed */
} kb_tune_replay;

#endif /* KB_TUNE_REPLAY_TYPES_H */
