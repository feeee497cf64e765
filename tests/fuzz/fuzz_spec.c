/* fuzz_spec.c - libFuzzer target for the acceptance spec reader (accept/spec.h): any
 * input must end in a spec or a KB_ERR_INPUT message naming file:line:col, in bounded
 * time and memory, with no sanitizer report; a parsed spec is then matched against a few
 * GPUs (names, PCI ids), which must not read past its tables. The same input goes through the
 * system spec reader (accept/system.h, `accept --system`) under the same rule.
 *
 * Built by -DKB_FUZZ=ON with clang (scripts/fuzz.sh spec); seed corpus: data/acceptance/.
 * Inputs that once crashed live in tests/fuzz/spec_regressions/ and are replayed with the
 * seeds by the ordinary test fuzz_spec_regressions (tests/fuzz/replay.c). */
#include "accept/spec.h"
#include "accept/system.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kb_acc_spec s;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_acc_spec_parse(text, "fuzz.yaml", &s, &err);
    if (st == KB_OK) {
        const kb_acc_gpu gpus[] = { { "NVIDIA H100 80GB HBM3", 90, 132, 0 }, { "NVIDIA L4", 89, 58, 0x27b8 },
                                    { "", 0, 0, 0 }, { NULL, 80, 108, 0x20b2 } };
        for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
            kb_acc_spec_matches(&s, &gpus[i], NULL);
    } else if (st == KB_ERR_INPUT && strncmp(err.s, "fuzz.yaml:", 10) != 0) {
        abort();   /* every input error names the file and the place */
    }
    kb_acc_system sys;
    st = kb_acc_system_parse(text, "fuzz.yaml", &sys, &err);
    if (st == KB_ERR_INPUT && strncmp(err.s, "fuzz.yaml:", 10) != 0)
        abort();
    kb_sb_free(&err);
    free(text);
    return 0;
}
