/* fuzz_suite.c - libFuzzer target for the suite loader, the planner and the plan walk:
 * what `kbench list SUITE` does, without executing anything. Any input must end in a
 * plan or a KB_ERR_INPUT message, in bounded time and memory, with no sanitizer report.
 *
 * Built by -DKB_FUZZ=ON with clang (-fsanitize=fuzzer,address,undefined); seed corpus:
 * suites/ and tests/suites/. Inputs that once crashed live in tests/fuzz/regressions/
 * and are replayed by the ordinary test fuzz_suite_regressions (tests/fuzz/replay.c). */
#include "engine/family.h"
#include "kernels/families.h"
#include "suite/walk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int visit(void *user, const kb_walk_item *it)
{
    size_t *n = user;
    *n += strlen(it->id) + strlen(it->why);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kb_plan plan;
    kb_sb err;
    kb_sb_init(&err);
    for (int check = 0; check < 2; check++) {
        if (kb_suite_plan_text(text, "fuzz.yaml", kb_families, kb_n_families, check, &plan, &err) != KB_OK)
            break;
        for (int sm = 80; sm <= 90; sm += 10) {
            kb_walk_opts o = { NULL, 0, NULL, { sm, 0, kb_arch_max_shmem_optin(sm) } };
            size_t n = 0;
            kb_walk(&plan, &o, visit, &n, NULL);
        }
        kb_plan_free(&plan);
    }
    kb_sb_free(&err);
    free(text);
    return 0;
}
