/* replay.h - a recorded tuning space, for running strategies offline (Kernel Tuner's
 * simulation mode): each configuration's time comes from a file instead of a device.
 *
 * FILE is either
 *   a Kernel Tuner cache file: tune_params_keys / tune_params name the axes and their
 *     values, the cache's entries (keyed "v1,v2,...", each holding its param values) are
 *     the space - a configuration Kernel Tuner's restrictions removed is absent from the
 *     cache and so from the space (it costs nothing). Each entry's "time" [ms] is its time,
 *     or an error string: InvalidConfig (refused before compiling: it costs nothing, it is
 *     never the best), CompilationFailedConfig or RuntimeFailedConfig (failed: an
 *     evaluation spent, never the best). compile_time + verification_time +
 *     benchmark_time + framework_time + strategy_time [ms] (the five time keys of
 *     Willemsen et al.'s methodology; benchmark_time from `times` when absent) are what
 *     evaluating it costs, for budgets in simulated seconds. A file Kernel Tuner was still
 *     appending to (unterminated) is closed on load; or
 *   kbench records (JSON Lines, any `run` or `tune` output): grouped into problems as
 *     `kbench tune` groups cases (space.h); a record that is not ok counts as failed, a
 *     skipped one as refused; wall_ms is what it cost. The problem replayed is the one
 *     whose key contains the filter, else the largest.
 * An axis whose values are all numbers is ordinal: its levels are ordered by value (a
 * param that does not apply to a variant, "-", comes first); any other axis (the
 * variant, strings, booleans) is categorical.
 *
 * Hostile input is refused with KB_ERR_INPUT and a message naming the file and the
 * place: a file that is not regular or is larger than KB_REPLAY_MAX_BYTES, a name longer
 * than KB_REPLAY_NAME_MAX, a repeated axis, an entry whose values are missing or not among
 * tune_params, two entries of the same configuration, a time that is not a positive
 * finite number below KB_REPLAY_MAX_TIME, dims or pad that are not integers in range,
 * and a space in which no configuration has a time.
 */
#ifndef KB_TUNE_REPLAY_H
#define KB_TUNE_REPLAY_H

#include "tune/replay_types.h"

/* Load path (either format) into *out. filter: a text the replayed problem's key must
 * contain (NULL: the largest). KB_ERR_INPUT with "path: ..." in err when the file is
 * hostile (see above), neither format, or no problem matches; KB_ERR_IO when it cannot
 * be read (missing, a directory); KB_ERR_INTERNAL out of memory. Free with
 * kb_tune_replay_free (also after an error). */
kb_status kb_tune_replay_load(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err);
void kb_tune_replay_free(kb_tune_replay *r);

/* A Kernel Tuner cache from memory (text[0..len), not NUL-terminated; name for messages):
 * as kb_tune_replay_load reads one. KB_OK, KB_ERR_INPUT (with "name: ..." in err),
 * KB_ERR_INTERNAL. Free with kb_tune_replay_free (also after an error). */
kb_status kb_tune_replay_parse_kt(const char *text, size_t len, const char *name, kb_tune_replay *out, kb_sb *err);

/* The view of r for a strategy (the arrays stay r's; prior may be NULL). */
kb_tune_view kb_tune_replay_view(const kb_tune_replay *r, const double *prior);

/* The objective replaying r (user: the replay): the recorded time. */
double kb_tune_replay_objective(void *user, int i);

/* The index of the fastest configuration, -1 when every one failed or was refused. */
int kb_tune_replay_optimum(const kb_tune_replay *r);
/* Configurations a strategy can spend its budget on: n - refused. */
int kb_tune_replay_candidates(const kb_tune_replay *r);

/* Random sampling without repeats over the configurations that are not refused, failed
 * ones counting as the slowest time, exactly (the baseline of Kernel Tuner's methodology):
 * the expected best of `budget` draws, and the q-quantile (0 < q < 1) of that best.
 * INFINITY when nothing has a time or budget < 1. */
double kb_tune_replay_random_expected(const kb_tune_replay *r, int budget);
double kb_tune_replay_random_quantile(const kb_tune_replay *r, int budget, double q);

#endif /* KB_TUNE_REPLAY_H */
