/* fuzz_model.c - libFuzzer target for the model description loader (model/model_desc.h)
 * and the roll-up of an empty run: any input must end in a model or a KB_ERR_INPUT
 * message naming file:line:col, in bounded time and memory, with no sanitizer report.
 *
 * Built by -DKB_FUZZ=ON with clang (target fuzz_model); seed corpus: data/models/ and
 * tests/data/model_tiny.yaml. Inputs that once crashed go to tests/fuzz/model_regressions/,
 * replayed with the seeds by the ordinary test fuzz_model_regressions. */
#include "model/model_rollup.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > KB_MODEL_MAX_BYTES)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kb_model m;
    kb_sb err;
    kb_sb_init(&err);
    const char *sets[] = { "seq=16" };
    for (int s = 0; s < 2; s++) {
        if (kb_model_load_text(text, "fuzz.yaml", sets, s, &m, &err) != KB_OK)
            continue;
        kb_report_run empty;
        memset(&empty, 0, sizeof empty);
        kb_model_rollup *r = malloc(sizeof *r);
        if (r) kb_model_rollup_run(&m, &empty, -1, r);
        free(r);
        kb_model_free(&m);
    }
    kb_sb_free(&err);
    free(text);
    return 0;
}
