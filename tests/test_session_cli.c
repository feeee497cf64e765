/* test_session_cli.c - the session layer end to end: `kbench run`, `kbench tune` and
 * `kbench selftest` run the same case through the one session, so their records of it
 * carry the same fields (every key of the record and of each of its blocks; stage_ms
 * lists only the stages that took time, so its own keys are not compared). On the
 * emulator, from tests/suites/session_fields.yaml. */
#include "check.h"
#include "core/kb.h"
#include "spawn.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUITE "tests/suites/session_fields.yaml"
#define CASE "gelu/vec(form=tanh,BLOCK=256,VEC=2,ypad=-1,max_grid=0)/fp16/1031/pad0/eager"

static char dir[] = "/tmp/kb_test_session_cli_XXXXXX";
static char log_path[300];

/* The first record of CASE in the JSON Lines file at path (a new reference), or NULL. */
static json_t *record_of(const char *path)
{
    char *text = slurp(path);
    json_t *found = NULL;
    for (char *line = text ? strtok(text, "\n") : NULL; line && !found; line = strtok(NULL, "\n")) {
        json_t *r = json_loads(line, 0, NULL);
        const char *id = json_string_value(json_object_get(r, "case_id"));
        if (id && !strcmp(id, CASE))
            found = json_incref(r);
        json_decref(r);
    }
    free(text);
    CHECK_MSG(found != NULL, "no record of %s in %s", CASE, path);
    return found;
}

/* Every key path of o ("timing/median_us", ...) into names, "\n"-joined, sorted by
 * jansson's key order (insertion: the serialiser's). */
static void key_paths(json_t *o, const char *prefix, char *names, size_t n)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        size_t len = strlen(names);
        snprintf(names + len, n - len, "%s%s\n", prefix, k);
        if (json_is_object(v) && strcmp(k, "stage_ms") != 0) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s%s/", prefix, k);
            key_paths(v, sub, names, n);
        }
    }
}

static int same_fields(json_t *a, json_t *b, const char *what)
{
    static char ka[16384], kb[16384];
    ka[0] = kb[0] = 0;
    key_paths(a, "", ka, sizeof ka);
    key_paths(b, "", kb, sizeof kb);
    if (strcmp(ka, kb) != 0)
        fprintf(stderr, "%s: fields differ\n-- run --\n%s-- other --\n%s", what, ka, kb);
    return strcmp(ka, kb) == 0 && strlen(ka) > 200;   /* a real record, not two empty ones */
}

static void test_run_tune_selftest_records_agree(void)
{
    char run[400], tune[400], db[400], work[400], self[440];
    snprintf(run, sizeof run, "%s/run.jsonl", dir);
    snprintf(tune, sizeof tune, "%s/tune.jsonl", dir);
    snprintf(db, sizeof db, "%s/tune.db", dir);
    snprintf(work, sizeof work, "%s/self", dir);
    snprintf(self, sizeof self, "%s/emu/records.jsonl", work);
    const char *r[] = { "kbench", "run", SUITE, "--backend", "emu", "--out", run, NULL };
    const char *t[] = { "kbench", "tune", SUITE, "--backend", "emu", "--out", tune, "--db", db, "--rounds", "0",
                        "--max-noise", "1e12", NULL };   /* the records are the point, not the verdict on a loaded machine */
    const char *s[] = { "kbench", "selftest", SUITE, "--work-dir", work, NULL };
    int rc = run_kbench_within(r, log_path, 300);
    CHECK_MSG(rc == KB_EXIT_OK, "run: exit %d", rc);
    if (rc != KB_EXIT_OK)
        print_tail(log_path, 2000);
    rc = run_kbench_within(t, log_path, 300);
    CHECK_MSG(rc == KB_EXIT_OK, "tune: exit %d", rc);
    if (rc != KB_EXIT_OK)
        print_tail(log_path, 2000);
    rc = run_kbench_within(s, log_path, 300);
    CHECK_MSG(rc == KB_EXIT_SETUP, "selftest without a GPU: exit %d", rc);   /* the GPU checks: not checked */
    json_t *a = record_of(run), *b = record_of(tune), *c = record_of(self);
    if (a && b && c) {
        CHECK(same_fields(a, b, "tune"));
        CHECK(same_fields(a, c, "selftest"));
        const char *status[] = { json_string_value(json_object_get(a, "status")),
                                 json_string_value(json_object_get(b, "status")),
                                 json_string_value(json_object_get(c, "status")) };
        CHECK(status[0] && status[1] && status[2] && !strcmp(status[0], "ok") && !strcmp(status[1], "ok") &&
              !strcmp(status[2], "ok"));
    }
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    RUN(test_run_tune_selftest_records_agree);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
