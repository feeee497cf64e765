/* test_embedding.c - what the embedding family's suite cannot show, since its check
 * requires every case ok: an out-of-range id is caught on the host before launch, the
 * case is recorded as an input error naming the id, and the run goes on. Runs
 * tests/suites/kernels_embedding_badid.yaml through the kbench binary ($KBENCH_BIN) on
 * the emulator. Also: the family's zero-flop work model and its legality checks. */
#include "check.h"
#include "results/record_json.h"
#include "engine/family.h"
#include "spawn.h"

#include <jansson.h>
#include <math.h>

#define BADID_SUITE "tests/suites/kernels_embedding_badid.yaml"

extern const kb_family kb_family_embedding;

static char dir[256];

/* The records of one run, in order. */
typedef struct {
    json_t *rec[16];
    int n;
} records;

static void records_load(records *rs, const char *path)
{
    rs->n = 0;
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "no records at %s", path);
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0 && rs->n < 16) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        CHECK_MSG(j != NULL, "record %d is not JSON: %s", rs->n + 1, je.text);
        if (j)
            rs->rec[rs->n++] = j;
    }
    free(line);
    fclose(f);
}

static void records_free(records *rs)
{
    for (int i = 0; i < rs->n; i++)
        json_decref(rs->rec[i]);
    rs->n = 0;
}

static const char *str_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void test_bad_id_is_refused_and_the_run_continues(void)
{
    char out[512], log[512];
    snprintf(out, sizeof out, "%s/badid.jsonl", dir);
    snprintf(log, sizeof log, "%s/badid.log", dir);
    const char *argv[] = { "kbench", "run", BADID_SUITE, "--backend", "emu", "--out", out, "--quiet",
                           "--min-samples", "1", "--max-samples", "2", "--timeout", "0.01", NULL };
    int rc = run_kbench(argv, log);
    /* exit 1: a case failed; not 0 (the error went unnoticed), not 2/3 (the run stopped) */
    CHECK_MSG(rc == 1, "kbench run %s exited %d, want 1", BADID_SUITE, rc);
    if (rc != 1)
        print_tail(log, 4000);

    records rs;
    records_load(&rs, out);
    CHECK_MSG(rs.n == 4, "%d records, want 4 (every case recorded, the run went on)", rs.n);
    int n_bad = 0, n_ok = 0, bad_at = -1;
    for (int i = 0; i < rs.n; i++) {
        json_t *r = rs.rec[i];
        const char *id = str_of(r, "case_id"), *st = str_of(r, "status"), *why = str_of(r, "reason");
        if (strstr(id, "bad_id=1")) {
            n_bad++;
            bad_at = i;
            CHECK_MSG(strcmp(st, "ok") != 0, "%s: status ok for a planted bad id", id);
            CHECK_MSG(!strcmp(str_of(r, "error"), "input"), "%s: error %s, want input", id, str_of(r, "error"));
            /* the planted id is vocab = 100 at token tokens/2 = 3 */
            CHECK_MSG(strstr(why, "bad id") && strstr(why, "ids[3] = 100") && strstr(why, "[0, 100)"),
                      "%s: reason does not name the bad id: \"%s\"", id, why);
            CHECK_MSG(json_is_null(json_object_get(r, "verify")), "%s: verified although never launched", id);
            CHECK_MSG(json_is_null(json_object_get(r, "timing")), "%s: timed although never launched", id);
        } else {
            CHECK_MSG(!strcmp(st, "ok"), "%s: status %s (%s), want ok", id, st, why);
            json_int_t n = json_integer_value(json_object_get(json_object_get(r, "verify"), "n"));
            CHECK_MSG(n > 0, "%s: ok but nothing verified", id);
            if (!strcmp(st, "ok"))
                n_ok++;
        }
    }
    CHECK_MSG(n_bad == 1, "%d bad-id records, want 1", n_bad);
    CHECK_MSG(n_ok == 3, "%d ok records, want 3", n_ok);
    /* the bad case is second: the cases after it ran */
    CHECK_MSG(bad_at == 1, "bad-id record at position %d, want 1", bad_at);
    records_free(&rs);
}

/* A gather does no arithmetic: flops 0, and every rate the harness derives from the
 * record stays finite, with arithmetic intensity 0 and the memory bound. */
static void test_zero_flops_derive_cleanly(void)
{
    char out[512];
    snprintf(out, sizeof out, "%s/badid.jsonl", dir);
    records rs;
    records_load(&rs, out);
    int n_checked = 0;
    for (int i = 0; i < rs.n; i++) {
        json_t *r = rs.rec[i];
        if (strcmp(str_of(r, "status"), "ok") != 0)
            continue;
        json_t *w = json_object_get(r, "work");
        CHECK(json_number_value(json_object_get(w, "flops")) == 0.0);
        /* tokens 7, dim 31: ids 7 x 4 bytes + 7 x 31 rows read; 7 x 31 written */
        double esz = !strcmp(str_of(r, "dtype"), "fp32") ? 4.0 : 2.0;
        CHECK(json_number_value(json_object_get(w, "bytes_read")) == 7 * 4 + 7 * 31 * esz);
        CHECK(json_number_value(json_object_get(w, "bytes_written")) == 7 * 31 * esz);
        kb_derived d;
        CHECK_MSG(kb_record_derived(r, &d) == 1, "%s: no rates derived", str_of(r, "case_id"));
        CHECK(d.ai == 0.0);
        CHECK(isfinite(d.gbps) && d.gbps > 0);
        CHECK(d.tflops == 0.0);
        CHECK(d.bound == KB_BOUND_MEMORY);
        n_checked++;
    }
    CHECK(n_checked == 3);
    records_free(&rs);
}

static void test_valid_explains_refusals(void)
{
    const kb_family *f = &kb_family_embedding;
    kb_target t = { 90, 0, 232448 };
    char why[256];
    kb_case c;
    memset(&c, 0, sizeof c);
    c.dtype = KB_DT_BF16;
    c.variant = kb_family_variant_find(f, "vec");
    int p_block = kb_family_param_find(f, "BLOCK"), p_bad = kb_family_param_find(f, "bad_id");
    CHECK(c.variant >= 0 && p_block >= 0 && p_bad >= 0);
    if (c.variant < 0 || p_block < 0 || p_bad < 0)
        return;
    c.dims[0] = 8; c.dims[1] = 50257; c.dims[2] = 4099;
    c.params[p_block] = 256;
    c.params[p_bad] = 0;
    CHECK(f->valid(&c, &t, why, sizeof why) == 1);

    c.params[p_block] = 100;
    CHECK(f->valid(&c, &t, why, sizeof why) == 0 && strstr(why, "BLOCK=100"));
    c.params[p_block] = 256;

    c.params[p_bad] = 2;
    CHECK(f->valid(&c, &t, why, sizeof why) == 0 && strstr(why, "bad_id=2"));
    c.params[p_bad] = 0;

    c.dims[1] = 3000000000LL; /* ids are int32 */
    CHECK(f->valid(&c, &t, why, sizeof why) == 0 && strstr(why, "int32"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kbench-test-embedding-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_bad_id_is_refused_and_the_run_continues);
    RUN(test_zero_flops_derive_cleanly);
    RUN(test_valid_explains_refusals);
    TEST_MAIN_END();
}
