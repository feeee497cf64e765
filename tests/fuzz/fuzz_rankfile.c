/* fuzz_rankfile.c - libFuzzer target for the rank-file reader of `kbench fleet`
 * (accept/fleet.h, accept/fleet_check.h): the input is one rank's verdict file in a fleet
 * directory beside a valid rank of the same job; the merge must end with the file read or
 * listed as a "corrupt" problem naming it, in bounded time and memory whatever its world
 * size, with no sanitizer report; then the judging and every page (JSON, markdown, HTML,
 * JUnit) are written into memory.
 *
 * Built by -DKB_FUZZ=ON with clang (scripts/fuzz.sh rankfile); seeds and the inputs that
 * once crashed live in tests/fuzz/rankfile_regressions/, replayed by the ordinary test
 * fuzz_rankfile_regressions (tests/fuzz/replay.c). */
#include "accept/fleet.h"
#include "accept/fleet_html.h"
#include "accept/fleet_md.h"
#include "accept/fleet_stats.h"
#include "accept/verdict_io.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char valid_rank[] =
    "{\"schema\":\"kbench-accept\",\"schema_version\":1,\"identity\":{\"launcher\":\"slurm\",\"rank\":0,"
    "\"local_rank\":0,\"node_id\":0,\"world_size\":4,\"job_id\":\"7\",\"step_id\":\"0\",\"host\":\"n0\"},"
    "\"gpu\":{\"name\":\"NVIDIA H100 80GB HBM3\",\"uuid\":\"GPU-0\"},\"spec\":{\"name\":\"h100-sxm\"},"
    "\"verdict\":\"PASS\",\"exit_code\":0,\"tests\":[{\"name\":\"memory_bandwidth\",\"status\":\"PASS\","
    "\"unit\":\"GB/s\",\"value\":2900,\"clock\":\"gpu\"}]}\n";

static void pages(json_t *fj)
{
    kb_status (*fn[])(json_t *, FILE *) = { kb_fleet_markdown, kb_fleet_html };
    for (int i = 0; i < 3; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        if (i < 2)
            fn[i](fj, out);
        else
            kb_acc_junit(out, json_object_get(fj, "gpus"), "fuzz");
        fclose(out);
        free(buf);
    }
    char *text = json_dumps(fj, 0);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    fuzz_file("r0.verdict.json", (const uint8_t *)valid_rank, sizeof valid_rank - 1);
    const char *path = fuzz_file("r1.verdict.json", data, size);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    if (kb_fleet_load(fuzz_dir(), &f, &err) == KB_OK) {
        if (f.n < 2) {   /* the input was not read: it must be a problem naming it */
            int named = 0;
            size_t i;
            json_t *p;
            json_array_foreach(f.problems, i, p)
                named |= strstr(json_string_value(p), "r1.verdict.json") != NULL;
            if (!named)
                abort();
        }
        if (kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR) == KB_OK) {
            json_t *fj = kb_fleet_json(&f);
            if (!fj)
                abort();   /* every number the merge keeps must be finite */
            pages(fj);
            json_decref(fj);
        }
    }
    kb_fleet_free(&f);
    kb_sb_free(&err);
    (void)path;
    return 0;
}
