/* fleet.c - merge the ranks' verdict files and flag outliers (see fleet.h). */
#include "accept/fleet.h"

#include "accept/fleet_stats.h"
#include "accept/verdict.h"
#include "accept/verdict_io.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int jint(json_t *o, const char *k) { return (int)json_integer_value(json_object_get(o, k)); }

static void problem(kb_fleet *f, const char *fmt, const char *a, const char *b)
{
    char msg[1200];
    snprintf(msg, sizeof msg, fmt, a, b);
    json_array_append_new(f->problems, json_string(msg));
}

/* ---- loading ---- */

/* A verdict object of the schema this kbench writes; else a problem and 0. */
static int read_verdict(kb_fleet *f, const char *path, json_t **out)
{
    json_error_t e;
    json_t *v = json_load_file(path, 0, &e);
    if (!v) {
        char where[64];
        snprintf(where, sizeof where, "%d:%d", e.line, e.column);
        problem(f, "corrupt: %s:%s: not valid JSON", path, where);
        return 0;
    }
    if (!json_is_object(v) || strcmp(jstr(v, "schema"), KB_ACC_SCHEMA) ||
        jint(v, "schema_version") != KB_ACC_SCHEMA_VERSION || !json_is_array(json_object_get(v, "tests")) ||
        !json_is_object(json_object_get(v, "identity")) || !json_is_object(json_object_get(v, "gpu"))) {
        problem(f, "corrupt: %s: not a %s verdict of schema version 1", path, KB_ACC_SCHEMA);
        json_decref(v);
        return 0;
    }
    *out = v;
    return 1;
}

static int cmp_gpu(const void *a, const void *b)
{
    json_t *x = json_object_get(((const kb_fleet_gpu *)a)->v, "identity");
    json_t *y = json_object_get(((const kb_fleet_gpu *)b)->v, "identity");
    int c = strcmp(jstr(x, "host"), jstr(y, "host"));
    return c ? c : jint(x, "rank") - jint(y, "rank");
}

static int is_verdict_name(const char *name)
{
    size_t n = strlen(name), s = strlen(".verdict.json");
    return name[0] != '.' && n > s && !strcmp(name + n - s, ".verdict.json");
}

/* Same rank of the same job step, or the same (real) GPU twice. */
static void check_duplicates(kb_fleet *f)
{
    for (int i = 0; i < f->n; i++)
        for (int j = i + 1; j < f->n; j++) {
            json_t *a = json_object_get(f->gpus[i].v, "identity"), *b = json_object_get(f->gpus[j].v, "identity");
            const char *ua = jstr(json_object_get(f->gpus[i].v, "gpu"), "uuid");
            const char *ub = jstr(json_object_get(f->gpus[j].v, "gpu"), "uuid");
            int same_rank = strcmp(jstr(a, "launcher"), "none") && !strcmp(jstr(a, "job_id"), jstr(b, "job_id")) &&
                            !strcmp(jstr(a, "step_id"), jstr(b, "step_id")) && jint(a, "rank") == jint(b, "rank") &&
                            !strcmp(jstr(a, "launcher"), jstr(b, "launcher"));
            int same_gpu = *ua && strcmp(ua, "emu") && !strcmp(ua, ub);
            if (same_rank || same_gpu)
                problem(f, same_rank ? "duplicate: %s and %s are the same rank of the same job step"
                                     : "duplicate: %s and %s are the same GPU (UUID)",
                        f->gpus[i].file, f->gpus[j].file);
        }
}

/* Ranks of a job step (world_size known) with no file. KB_ERR_OOM when they cannot be counted. */
static kb_status check_missing(kb_fleet *f)
{
    for (int i = 0; i < f->n; i++) {
        json_t *a = json_object_get(f->gpus[i].v, "identity");
        int w = jint(a, "world_size");
        int first = 1;   /* the first file of its job step does the counting */
        for (int j = 0; j < i && first; j++) {
            json_t *b = json_object_get(f->gpus[j].v, "identity");
            first = !(!strcmp(jstr(a, "job_id"), jstr(b, "job_id")) && !strcmp(jstr(a, "step_id"), jstr(b, "step_id")));
        }
        if (!first || !strcmp(jstr(a, "launcher"), "none") || w <= 0 || w > 1 << 20)
            continue;
        char *seen = calloc((size_t)w, 1);
        if (!seen)
            return KB_ERR_OOM;
        for (int j = 0; j < f->n; j++) {
            json_t *b = json_object_get(f->gpus[j].v, "identity");
            int r = jint(b, "rank");
            if (!strcmp(jstr(a, "job_id"), jstr(b, "job_id")) && !strcmp(jstr(a, "step_id"), jstr(b, "step_id")) &&
                r >= 0 && r < w)
                seen[r] = 1;
        }
        for (int r = 0; r < w; r++)
            if (!seen[r]) {
                char rank[32], job[200];
                snprintf(rank, sizeof rank, "%d of %d", r, w);
                snprintf(job, sizeof job, "%s step %s", *jstr(a, "job_id") ? jstr(a, "job_id") : "?",
                         *jstr(a, "step_id") ? jstr(a, "step_id") : "?");
                problem(f, "missing: rank %s of job %s wrote no verdict", rank, job);
            }
        free(seen);
    }
    return KB_OK;
}

kb_status kb_fleet_load(const char *dir, kb_fleet *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    DIR *d = opendir(dir);
    if (!d) {
        kb_sb_printf(err, "%s: %s", dir, strerror(errno));
        return KB_ERR_INPUT;
    }
    out->problems = json_array();
    out->groups = json_object();
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_verdict_name(e->d_name))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *v;
        if (!read_verdict(out, path, &v))
            continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            kb_fleet_gpu *grown = realloc(out->gpus, (size_t)cap * sizeof *out->gpus);
            if (!grown) {
                json_decref(v);
                closedir(d);
                kb_sb_printf(err, "%s: out of memory reading verdict %d", dir, out->n + 1);
                return KB_ERR_OOM;
            }
            out->gpus = grown;
        }
        snprintf(out->gpus[out->n].file, sizeof out->gpus[0].file, "%s", e->d_name);
        out->gpus[out->n++].v = v;
    }
    closedir(d);
    if (out->n)
        qsort(out->gpus, (size_t)out->n, sizeof *out->gpus, cmp_gpu);
    check_duplicates(out);
    if (check_missing(out) != KB_OK) {
        kb_sb_printf(err, "%s: out of memory counting the ranks of a job step", dir);
        return KB_ERR_OOM;
    }
    return KB_OK;
}

/* ---- judging ---- */

/* The test object named name of verdict v, or NULL. */
static json_t *test_of(json_t *v, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(v, "tests"), i, t)
        if (!strcmp(jstr(t, "name"), name))
            return t;
    return NULL;
}

/* The value of test name on GPU i timed by clock, into *x; 0 when it has none. */
static int timed_value(const kb_fleet *f, int i, const char *name, const char *clock, double *x)
{
    json_t *t = test_of(f->gpus[i].v, name);
    json_t *val = json_object_get(t, "value");
    if (!t || !json_is_number(val) || strcmp(jstr(t, "clock"), clock))
        return 0;
    *x = json_number_value(val);
    return 1;
}

/* Mark test t of a GPU as an outlier of the distribution d (scope "fleet" or "node"): it
 * FAILs, whatever it was on its own - PASS, WARN, or SKIP for want of a threshold (CPU
 * timings, a GPU whose peak kbench does not know): an outlier that passes would be a
 * finding contradicting itself. The reason names the bound's rule. */
static void mark(json_t *t, const kb_fleet_dist *d, const char *scope, int lower_better)
{
    char reason[600], rule[96];
    double x = json_number_value(json_object_get(t, "value"));
    int cpu = !strcmp(jstr(t, "clock"), "cpu");
    if (cpu)
        snprintf(rule, sizeof rule, "bound median %s %.0f: CPU timings, relative only", lower_better ? "x" : "/",
                 KB_FLEET_CPU_FACTOR);
    else
        snprintf(rule, sizeof rule, "MAD %.3g", d->mad);
    snprintf(reason, sizeof reason, "%s outlier: %.4g %s %s %.4g (median %.4g of %d GPUs of the SKU%s, %s); %s", scope,
             x, jstr(t, "unit"), lower_better ? "above" : "below", lower_better ? d->high : d->low, d->median, d->n,
             scope[0] == 'n' ? " on the node" : "", rule, jstr(t, "reason"));
    json_object_set_new(t, "status", json_string("FAIL"));
    json_object_set_new(t, "reason", json_string(reason));
    json_object_set_new(t, scope[0] == 'f' ? "fleet_outlier" : "node_outlier", json_true());
}

/* Judge test name among the GPUs of spec (and of host, when host is not NULL) whose
 * values were timed by clock: GPU timings against median -/+ k scales, CPU timings (the
 * emulator) by a factor from the median. KB_ERR_OOM when the values cannot be gathered. */
static kb_status judge_group(kb_fleet *f, const char *spec, const char *host, const char *name, const char *clock,
                        int lower_better)
{
    double *x = malloc((size_t)(f->n ? f->n : 1) * sizeof *x);
    int *who = malloc((size_t)(f->n ? f->n : 1) * sizeof *who), m = 0;
    if (!x || !who) {
        free(x);
        free(who);
        return KB_ERR_OOM;
    }
    for (int i = 0; i < f->n; i++) {
        json_t *v = f->gpus[i].v;
        if (strcmp(jstr(json_object_get(v, "spec"), "name"), spec) ||
            (host && strcmp(jstr(json_object_get(v, "identity"), "host"), host)))
            continue;
        if (timed_value(f, i, name, clock, &x[m]))
            who[m++] = i;
    }
    kb_fleet_dist d;
    int cpu = !strcmp(clock, "cpu");
    int enough = cpu ? kb_fleet_dist_ratio(x, m, KB_FLEET_CPU_FACTOR, &d)
                     : kb_fleet_dist_of(x, m, f->k, f->rel_floor, &d);
    if (enough < 0) {
        free(x);
        free(who);
        return KB_ERR_OOM;
    }
    if (enough) {
        for (int j = 0; j < m; j++)
            if (kb_fleet_is_outlier(&d, x[j], lower_better))
                mark(test_of(f->gpus[who[j]].v, name), &d, host ? "node" : "fleet", lower_better);
        if (!host) {
            char key[96];
            snprintf(key, sizeof key, "%s%s", spec, cpu ? " (cpu timings)" : "");
            json_t *g = json_object_get(f->groups, key);
            if (!g)
                json_object_set_new(f->groups, key, g = json_object());
            json_object_set_new(g, name, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "n", d.n, "median", d.median,
                                                   "mad", d.mad, "scale", d.scale, "low", d.low, "high", d.high));
        }
    }
    free(x);
    free(who);
    return KB_OK;
}

/* A GPU's verdict and exit code from its (updated) tests. */
static void reverdict(json_t *v)
{
    kb_acc_status st[KB_ACC_TEST_COUNT];
    kb_acc_test which[KB_ACC_TEST_COUNT];
    int n = 0;
    kb_acc_status worst = KB_ACC_NOT_CHECKED;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(v, "tests"), i, t) {
        int id = kb_acc_test_parse(jstr(t, "name")), s = kb_acc_status_parse(jstr(t, "status"));
        if (id < 0 || s < 0 || s == KB_ACC_NOT_CHECKED || n == KB_ACC_TEST_COUNT)
            continue;
        st[n] = (kb_acc_status)s;
        which[n++] = (kb_acc_test)id;
        if (s != KB_ACC_SKIP && (worst == KB_ACC_NOT_CHECKED || s > (int)worst))
            worst = (kb_acc_status)s;
    }
    json_object_set_new(v, "verdict", json_string(kb_acc_status_name(worst)));
    json_object_set_new(v, "exit_code", json_integer(kb_acc_exit_code(st, which, n)));
}

kb_status kb_fleet_judge(kb_fleet *f, double k, double rel_floor)
{
    kb_status st = KB_OK;
    f->k = k;
    f->rel_floor = rel_floor;
    for (int i = 0; i < f->n; i++) {
        const char *spec = jstr(json_object_get(f->gpus[i].v, "spec"), "name");
        const char *host = jstr(json_object_get(f->gpus[i].v, "identity"), "host");
        int first_spec = 1, first_node = 1;   /* each group is judged once, by its first GPU */
        for (int j = 0; j < i; j++) {
            int same = !strcmp(spec, jstr(json_object_get(f->gpus[j].v, "spec"), "name"));
            first_spec &= !same;
            first_node &= !(same && !strcmp(host, jstr(json_object_get(f->gpus[j].v, "identity"), "host")));
        }
        for (int t = KB_ACC_MEM_BW; t <= KB_ACC_LAUNCH; t++) {
            const char *name = kb_acc_test_name((kb_acc_test)t);
            int lower = kb_acc_test_kind((kb_acc_test)t) == KB_ACC_KIND_LIMIT;
            for (int c = 0; c < 2; c++) {
                const char *clock = c ? "cpu" : "gpu";
                if (first_spec && st == KB_OK)
                    st = judge_group(f, spec, NULL, name, clock, lower);
                if (first_node && st == KB_OK)
                    st = judge_group(f, spec, host, name, clock, lower);
            }
        }
    }
    for (int i = 0; i < f->n; i++)
        reverdict(f->gpus[i].v);
    return st;
}

int kb_fleet_exit_code(const kb_fleet *f)
{
    int rc = f->n ? KB_EXIT_OK : KB_EXIT_SETUP;
    for (int i = 0; i < f->n; i++) {
        int c = jint(f->gpus[i].v, "exit_code");
        rc = c > rc ? c : rc;
    }
    if (json_array_size(f->problems) && rc < KB_EXIT_SETUP)
        rc = KB_EXIT_SETUP;
    return rc;
}

json_t *kb_fleet_json(const kb_fleet *f)
{
    json_t *gpus = json_array();
    int count[KB_ACC_STATUS_COUNT] = { 0 };
    for (int i = 0; i < f->n; i++) {
        json_t *v = json_deep_copy(f->gpus[i].v);
        json_object_set_new(v, "file", json_string(f->gpus[i].file));
        json_array_append_new(gpus, v);
        int s = kb_acc_status_parse(jstr(f->gpus[i].v, "verdict"));
        if (s >= 0)
            count[s]++;
    }
    int rc = kb_fleet_exit_code(f);
    const char *verdict = rc == KB_EXIT_OK ? (count[KB_ACC_WARN] ? "WARN" : "PASS")
                          : rc == KB_EXIT_SETUP ? kb_acc_status_name(KB_ACC_NOT_CHECKED) : "FAIL";
    char why[200] = "";
    size_t np = json_array_size(f->problems);
    if (rc == KB_EXIT_SETUP)
        snprintf(why, sizeof why, "%s%zu problem%s (missing, duplicate or corrupt rank files)%s%d of %d GPUs not "
                 "checked", f->n ? "" : "no verdict file; ", np, np == 1 ? "" : "s", "; ", count[KB_ACC_NOT_CHECKED],
                 f->n);
    return json_pack("{s:s, s:i, s:s, s:f, s:f, s:O, s:O, s:o, s:{s:i, s:i, s:i, s:i, s:i}, s:s, s:s?, s:i}",
                     "schema", "kbench-fleet", "schema_version", 1, "dir", f->dir, "k", f->k, "rel_floor",
                     f->rel_floor, "problems", f->problems, "groups", f->groups, "gpus", gpus, "counts", "gpus", f->n,
                     "pass", count[KB_ACC_PASS], "warn", count[KB_ACC_WARN], "fail", count[KB_ACC_FAIL],
                     "not_checked", count[KB_ACC_NOT_CHECKED], "verdict", verdict, "not_checked",
                     *why ? why : NULL, "exit_code", rc);
}

void kb_fleet_free(kb_fleet *f)
{
    for (int i = 0; i < f->n; i++)
        json_decref(f->gpus[i].v);
    free(f->gpus);
    json_decref(f->problems);
    json_decref(f->groups);
    memset(f, 0, sizeof *f);
}
