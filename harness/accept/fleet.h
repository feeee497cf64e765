/* fleet.h - `kbench fleet DIR`: merge the verdict files the ranks of a fleet run wrote
 * into DIR (accept/verdict_io.h), report what is missing, duplicated or corrupt, and flag
 * relative outliers (accept/fleet_stats.h) per SKU (the spec a GPU was judged by) and
 * per test, across the fleet and within each node:
 *   - a test that ran on a GPU clock and PASSed (or WARNed) on its own, but lies beyond
 *     median - k x scale of its SKU's fleet (above median + k x scale for launch latency),
 *     becomes FAIL "fleet outlier";
 *   - the same within the GPUs of one node (host) when it has at least 3 of the SKU:
 *     FAIL "node outlier".
 * Values are compared only with values of the same timing clock. CPU timings (the
 * emulator: no GPU threshold, noisy shared cores) are judged by a factor of
 * KB_FLEET_CPU_FACTOR from their group's median, and a flagged one becomes FAIL although
 * it was SKIP on its own: that is how the flow is exercised without a GPU.
 * A hard floor (the spec's) was already applied by each rank. Only ranks' files are read:
 * ranks never talk to each other.
 *
 * Problems: a file that is not a kbench-accept verdict (corrupt, cut, another schema); two
 * files for the same rank of the same job step, or the same GPU UUID twice; ranks of a job
 * step missing (a step's world_size says how many to expect).
 */
#ifndef KB_ACCEPT_FLEET_H
#define KB_ACCEPT_FLEET_H

#include <jansson.h>
#include <stdio.h>

#include "core/kb.h"

typedef struct {
    char file[512];
    json_t *v;              /* the verdict object (owned); its tests gain a "fleet" block */
} kb_fleet_gpu;

typedef struct {
    char dir[512];
    int n;
    kb_fleet_gpu *gpus;     /* sorted by host, then rank */
    json_t *problems;       /* array of strings */
    json_t *groups;         /* {spec: {test: {n, median, mad, scale, low, high}}} after kb_fleet_judge */
    double k, rel_floor;
} kb_fleet;

/* Read every <key>.verdict.json of dir. KB_OK (problems listed in out->problems), or
 * KB_ERR_INPUT when dir cannot be read, KB_ERR_OOM when out of memory ("dir: why" in err).
 * Free with kb_fleet_free. */
kb_status kb_fleet_load(const char *dir, kb_fleet *out, kb_sb *err);

/* Flag the outliers with k and rel_floor (fleet_stats.h) and update each GPU's tests,
 * verdict and exit_code. KB_ERR_OOM when a group could not be judged (out of memory). */
kb_status kb_fleet_judge(kb_fleet *f, double k, double rel_floor);

/* The worst exit code: the highest of the GPUs' (6 incorrect > 5 slow > 3 nothing checked
 * > 0), at least KB_EXIT_SETUP when a problem was found or no GPU was read. */
int kb_fleet_exit_code(const kb_fleet *f);

/* The fleet verdict object: schema "kbench-fleet", schema_version 1, dir, k, rel_floor,
 * problems, groups, gpus (the updated verdicts), counts {gpus, pass, warn, fail, skip},
 * verdict, exit_code. New reference; caller json_decref's. */
json_t *kb_fleet_json(const kb_fleet *f);

void kb_fleet_free(kb_fleet *f);

#endif /* KB_ACCEPT_FLEET_H */
