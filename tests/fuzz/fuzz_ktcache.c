/* fuzz_ktcache.c - libFuzzer target for the Kernel Tuner cache reader (tune/replay.h): any
 * input must end in a recorded space or a KB_ERR_INPUT message naming the file, in bounded
 * time and memory, with no sanitizer report (issue 28: a long parameter name once looped
 * forever). A space that loads is then searched by every strategy with a small budget and
 * a simulated-time budget when it has costs: each must respect its budget, never evaluate
 * a configuration twice, and its best must be the fastest it evaluated.
 *
 * Built by -DKB_FUZZ=ON with clang (scripts/fuzz.sh ktcache); seeds: tests/data/kt_*.json
 * and tests/fuzz/ktcache_regressions/, replayed in every build by the ordinary test
 * fuzz_ktcache_regressions (tests/fuzz/replay.c). */
#include "tune/replay.h"
#include "tune/strategy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void search_all(const kb_tune_replay *r)
{
    kb_tune_view v = kb_tune_replay_view(r, NULL);
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .budget = 12, .seed = 3,
                                  .budget_s = r->cost_s ? 5.0 : 0 };
        kb_tune_trace t;
        if (kb_tune_search(&o, &v, kb_tune_replay_objective, (void *)r, &t) != KB_OK)
            abort();
        double best = INFINITY;
        for (int k = 0; k < t.evaluations; k++) {
            for (int j = 0; j < k; j++)
                if (t.order[j] == t.order[k])
                    abort();   /* evaluated twice */
            best = t.times[k] < best ? t.times[k] : best;
        }
        if (t.evaluations > 12 || (t.best >= 0 && t.best_time != best))
            abort();
        kb_tune_trace_free(&t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_tune_replay_parse_kt((const char *)data, size, "fuzz.json", &r, &err);
    if (st == KB_OK) {
        if (kb_tune_replay_optimum(&r) < 0 || !(kb_tune_replay_random_expected(&r, 2) > 0))
            abort();   /* a loaded space always has a time */
        if (r.n <= 4096)
            search_all(&r);
    } else if (st == KB_ERR_INPUT && strncmp(err.s, "fuzz.json", 9) != 0) {
        abort();   /* every input error names the file */
    }
    kb_tune_replay_free(&r);
    kb_sb_free(&err);
    return 0;
}
