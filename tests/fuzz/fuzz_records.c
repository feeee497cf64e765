/* fuzz_records.c - libFuzzer target for the record reader (results/record.h): the JSON
 * Lines files `kbench run`, `kbench tune` and `kbench accept` write, and that report,
 * compare, model, query --import and --resume read. Any input must end in records or a
 * KB_ERR_INPUT message naming path:line (or the path), in bounded time and memory, with no
 * sanitizer report; loaded records then go through every report format, a comparison with
 * themselves and the resume inspection, which must not read past what the checks let in.
 *
 * Built by -DKB_FUZZ=ON with clang (scripts/fuzz.sh records); seeds: the .jsonl files of tests/data.
 * Inputs that once crashed live in tests/fuzz/records_regressions/ and are replayed with
 * the seeds by the ordinary test fuzz_records_regressions (tests/fuzz/replay.c). */
#include "fuzz_input.h"
#include "results/compare.h"
#include "results/compare_out.h"
#include "results/record.h"
#include "results/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every writer of a loaded run, into memory. */
static void write_all(const kb_report_run *run)
{
    for (int f = 0; f < KB_REPORT_COUNT; f++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        kb_report_write(run, (kb_report_format)f, out);
        fclose(out);
        free(buf);
    }
    kb_cmp_result cmp;
    if (kb_compare_runs(run, run, 0.05, &cmp) == KB_OK) {
        for (int f = KB_CMP_OUT_TEXT; f <= KB_CMP_OUT_HTML; f++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *out = open_memstream(&buf, &len);
            kb_compare_write(run, run, &cmp, 0.05, (kb_cmp_format)f, out);
            fclose(out);
            free(buf);
        }
        kb_compare_free(&cmp);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    const char *path = fuzz_file("r.jsonl", data, size);
    kb_sb err;
    kb_sb_init(&err);
    kb_report_run run;
    kb_status st = kb_report_run_load(path, NULL, &run, &err);
    if (st == KB_OK) {
        write_all(&run);
        kb_report_run_free(&run);
    } else if (st == KB_ERR_INPUT && strncmp(err.s, path, strlen(path)) != 0) {
        abort();   /* every input error names the file (and the line) */
    }
    kb_record_file rf;
    kb_sb_clear(&err);
    kb_record_inspect(path, NULL, &rf, &err);   /* what --resume and --out look at */
    kb_sb_free(&err);
    return 0;
}
