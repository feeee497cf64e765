/* bench_plan.c - cost of loading and planning a large sweep.
 *
 * Writes a suite whose one gelu entry expands to 120,000 cases (3 dtypes x 125 shapes x
 * 4 pads x 2 launch modes x params; the fake family from tests/suite_fakes.h, so this
 * does not depend on the real family table) to a temporary file, then times
 * kb_suite_plan (read + YAML parse + validation + expansion) with and without a where
 * clause. The target: well under one second for 100,000 cases.
 *
 * Usage: bench_plan [repetitions]   (default 5; the best run is reported)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "suite/plan.h"
#include "../tests/suite_fakes.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The sweep; where_clause NULL for none. */
static void write_suite(FILE *f, const char *where_clause)
{
    fprintf(f, "suite: bench_plan\nbenchmarks:\n  - family: gelu\n    variant: [naive, vec]\n"
               "    dtype: [fp32, fp16, bf16]\n    shape: [");
    for (int i = 0; i < 125; i++)
        fprintf(f, "%s{n: %d, check: {n: %d}}", i ? ", " : "", 1000 + 4096 * i, 17 + i);
    fprintf(f, "]\n    pad: [0, 1, 2, 3]\n    launch: [eager, graph]\n"
               "    params: {VEC: [1, 2, 4, 8], BLOCK: [64, 128, 256, 512], form: [erf, tanh]}\n");
    if (where_clause)
        fprintf(f, "    where: \"%s\"\n", where_clause);
}

/* Time the sweep; combos: combinations enumerated (for the rate), 0 = the cases. */
static int run(const char *label, const char *where_clause, int reps, int64_t *cases_out, int64_t combos)
{
    char path[] = "/tmp/kbench_bench_plan_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 1; }
    FILE *f = fdopen(fd, "w");
    write_suite(f, where_clause);
    fclose(f);

    double best = 1e30;
    int64_t n_cases = 0;
    kb_sb err;
    kb_sb_init(&err);
    for (int r = 0; r < reps; r++) {
        kb_plan p;
        double t0 = now_s();
        kb_status st = kb_suite_plan(path, fake_fams, N_FAKE_FAMS, 0, &p, &err);
        double dt = now_s() - t0;
        if (st) {
            fprintf(stderr, "bench_plan: %s\n", err.s);
            kb_sb_free(&err);
            unlink(path);
            return 1;
        }
        n_cases = p.n_cases;
        kb_plan_free(&p);
        if (dt < best) best = dt;
    }
    kb_sb_free(&err);
    unlink(path);
    if (!combos) combos = n_cases;
    printf("%-16s cases %7lld of %7lld combinations  load+plan %7.2f ms  %10.0f combinations/s\n", label,
           (long long)n_cases, (long long)combos, best * 1e3, (double)combos / best);
    *cases_out = n_cases;
    return 0;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    printf("bench_plan: best of %d runs (read + parse + validate + expand)\n", reps);
    int64_t product, kept;
    if (run("product", NULL, reps, &product, 0)) return 1;
    if (run("product + where", "n % (VEC * 64) == 8 || BLOCK >= 256 && pad < 2 && dtype != fp16",
            reps, &kept, product)) return 1;
    return 0;
}
