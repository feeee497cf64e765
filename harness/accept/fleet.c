/* fleet.c - merge the ranks' verdict files and flag outliers (see fleet.h). */
#include "accept/fleet.h"

#include "accept/fleet_check.h"
#include "accept/fleet_stats.h"
#include "accept/verdict.h"
#include "accept/verdict_io.h"
#include "core/fsutil.h"

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
    char msg[2048];
    snprintf(msg, sizeof msg, fmt, a, b);
    json_array_append_new(f->problems, json_string(msg));
}

/* ---- loading ---- */

/* A verdict object of the schema this kbench writes, its numbers in range (fleet_check.c);
 * else a problem and 0. Read as every input is (core/fsutil.h): without blocking, a
 * regular file of at most KB_LIMIT_RANK_BYTES, no key twice. */
static int read_verdict(kb_fleet *f, const char *path, json_t **out)
{
    char *text = NULL;
    size_t len = 0;
    kb_sb why;
    kb_sb_init(&why);
    if (kb_fs_read_input(path, KB_LIMIT_RANK_BYTES, "rank file", &text, &len, &why) != KB_OK) {
        problem(f, "corrupt: %s%s", why.s, "");
        kb_sb_free(&why);
        return 0;
    }
    json_error_t e;
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    free(text);
    if (!v) {
        char where[300];
        snprintf(where, sizeof where, "%d:%d: %.200s", e.line, e.column, e.text);
        problem(f, "corrupt: %s:%s (not valid JSON)", path, where);
        kb_sb_free(&why);
        return 0;
    }
    if (!json_is_object(v) || strcmp(jstr(v, "schema"), KB_ACC_SCHEMA) ||
        jint(v, "schema_version") != KB_ACC_SCHEMA_VERSION || !json_is_array(json_object_get(v, "tests")) ||
        !json_is_object(json_object_get(v, "identity")) || !json_is_object(json_object_get(v, "gpu"))) {
        problem(f, "corrupt: %s: not a %s verdict of schema version 1", path, KB_ACC_SCHEMA);
        json_decref(v);
        kb_sb_free(&why);
        return 0;
    }
    if (kb_fleet_check_verdict(v, &why) != KB_OK) {
        problem(f, "corrupt: %s: %s", path, why.s);
        json_decref(v);
        kb_sb_free(&why);
        return 0;
    }
    kb_sb_free(&why);
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

/* ---- the merge: every pass sorts once, so a fleet of n files costs O(n log n) ---- */

/* What the merge compares of a GPU (borrowed from its verdict). */
typedef struct {
    const char *launcher, *job, *step, *uuid, *spec, *host;
    int rank, world;
    int i;                      /* its index in kb_fleet.gpus */
} gpu_key;

static gpu_key *make_keys(const kb_fleet *f)
{
    gpu_key *k = malloc((size_t)(f->n ? f->n : 1) * sizeof *k);
    for (int i = 0; k && i < f->n; i++) {
        json_t *v = f->gpus[i].v, *id = json_object_get(v, "identity");
        k[i] = (gpu_key){ jstr(id, "launcher"), jstr(id, "job_id"), jstr(id, "step_id"),
                          jstr(json_object_get(v, "gpu"), "uuid"), jstr(json_object_get(v, "spec"), "name"),
                          jstr(id, "host"), jint(id, "rank"), jint(id, "world_size"), i };
    }
    return k;
}

static int cmp_int(int a, int b) { return a < b ? -1 : a > b; }

/* Job step, then rank, then file order. */
static int by_step_rank(const void *pa, const void *pb)
{
    const gpu_key *a = pa, *b = pb;
    int c = strcmp(a->job, b->job);
    if (!c) c = strcmp(a->step, b->step);
    if (!c) c = cmp_int(a->rank, b->rank);
    return c ? c : cmp_int(a->i, b->i);
}

static int by_uuid(const void *pa, const void *pb)
{
    const gpu_key *a = pa, *b = pb;
    int c = strcmp(a->uuid, b->uuid);
    return c ? c : cmp_int(a->i, b->i);
}

/* SKU (spec), then node, then file order. */
static int by_spec_host(const void *pa, const void *pb)
{
    const gpu_key *a = pa, *b = pb;
    int c = strcmp(a->spec, b->spec);
    if (!c) c = strcmp(a->host, b->host);
    return c ? c : cmp_int(a->i, b->i);
}

static int same_step(const gpu_key *a, const gpu_key *b) { return !strcmp(a->job, b->job) && !strcmp(a->step, b->step); }

/* Both ranks of one job step under a launcher (not "none"). */
static int same_rank(const gpu_key *a, const gpu_key *b)
{
    return strcmp(a->launcher, "none") && !strcmp(a->launcher, b->launcher) && same_step(a, b) && a->rank == b->rank;
}

static int is_real_uuid(const char *u) { return *u && strcmp(u, "emu"); }

/* Same rank of the same job step, or the same (real) GPU twice: neighbours once sorted. */
static void check_duplicates(kb_fleet *f, gpu_key *k)
{
    qsort(k, (size_t)f->n, sizeof *k, by_step_rank);
    for (int i = 1; i < f->n; i++)
        if (same_rank(&k[i - 1], &k[i]))
            problem(f, "duplicate: %s and %s are the same rank of the same job step", f->gpus[k[i - 1].i].file,
                    f->gpus[k[i].i].file);
    qsort(k, (size_t)f->n, sizeof *k, by_uuid);
    for (int i = 1; i < f->n; i++)
        if (is_real_uuid(k[i].uuid) && !strcmp(k[i - 1].uuid, k[i].uuid) && !same_rank(&k[i - 1], &k[i]))
            problem(f, "duplicate: %s and %s are the same GPU (UUID)", f->gpus[k[i - 1].i].file,
                    f->gpus[k[i].i].file);
}

#define MAX_RANGES_SHOWN 32

/* The ranks of [0, world) missing from the sorted ranks k[0..n) of one job step, as
 * ranges ("3-7, 9"), at most MAX_RANGES_SHOWN of them written. The count of ranks missing. */
static long long missing_ranges(const gpu_key *k, int n, int world, kb_sb *text, int *ranges)
{
    long long missing = 0;
    int next = 0;   /* the lowest rank not yet accounted for */
    *ranges = 0;
    for (int j = 0; j <= n && next < world; j++) {
        int upto = j < n ? k[j].rank : world;      /* ranks [next, upto) are missing */
        if (upto > world)
            upto = world;
        if (upto > next) {
            if ((*ranges)++ < MAX_RANGES_SHOWN)
                kb_sb_printf(text, upto - next == 1 ? "%s%d" : "%s%d-%d", *ranges > 1 ? ", " : "", next, upto - 1);
            missing += upto - next;
        }
        if (j < n && k[j].rank + 1 > next)
            next = k[j].rank + 1;
    }
    if (*ranges > MAX_RANGES_SHOWN)
        kb_sb_printf(text, " and %d more ranges", *ranges - MAX_RANGES_SHOWN);
    return missing;
}

/* Ranks of a job step (world_size known, from its first file in host/rank order) with no
 * file, as one line per step whatever the world size. */
static void check_missing(kb_fleet *f, gpu_key *k)
{
    qsort(k, (size_t)f->n, sizeof *k, by_step_rank);
    kb_sb text;
    kb_sb_init(&text);
    for (int a = 0, b; a < f->n; a = b) {
        int first = a;   /* the step's file first in host/rank order: its launcher and world size count */
        for (b = a + 1; b < f->n && same_step(&k[a], &k[b]); b++)
            if (k[b].i < k[first].i)
                first = b;
        if (!strcmp(k[first].launcher, "none") || k[first].world <= 0)
            continue;
        int lo = a;
        while (lo < b && k[lo].rank < 0)
            lo++;
        kb_sb_clear(&text);
        int ranges;
        long long missing = missing_ranges(&k[lo], b - lo, k[first].world, &text, &ranges);
        if (!missing)
            continue;
        char job[600];
        snprintf(job, sizeof job, "%.200s step %.200s wrote no verdict%s", *k[a].job ? k[a].job : "?",
                 *k[a].step ? k[a].step : "?", "");
        kb_sb_printf(&text, " of %d of job %s", k[first].world, job);
        if (missing > 1)
            kb_sb_printf(&text, " (%lld ranks)", missing);
        problem(f, missing == 1 ? "missing: rank %s%s" : "missing: ranks %s%s", text.s, "");
    }
    kb_sb_free(&text);
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
    gpu_key *k = make_keys(out);
    if (!k) {
        kb_sb_printf(err, "%s: out of memory merging %d verdicts", dir, out->n);
        return KB_ERR_OOM;
    }
    check_duplicates(out, k);
    check_missing(out, k);
    free(k);
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

/* Judge test name among the GPUs who[0..m) (one SKU, or one SKU on one node when host is
 * not NULL) whose values were timed by clock: GPU timings against median -/+ k scales, CPU
 * timings (the emulator) by a factor from the median. x and idx are scratch arrays of m.
 * KB_ERR_OOM when the statistics cannot be had. */
static kb_status judge_group(kb_fleet *f, const gpu_key *who, int m_all, const char *host, const char *name,
                             const char *clock, int lower_better, double *x, int *idx)
{
    int m = 0;
    for (int j = 0; j < m_all; j++)
        if (timed_value(f, who[j].i, name, clock, &x[m]))
            idx[m++] = who[j].i;
    kb_fleet_dist d;
    int cpu = !strcmp(clock, "cpu");
    int enough = cpu ? kb_fleet_dist_ratio(x, m, KB_FLEET_CPU_FACTOR, &d)
                     : kb_fleet_dist_of(x, m, f->k, f->rel_floor, &d);
    if (enough < 0)
        return KB_ERR_OOM;
    if (!enough)
        return KB_OK;
    for (int j = 0; j < m; j++)
        if (kb_fleet_is_outlier(&d, x[j], lower_better))
            mark(test_of(f->gpus[idx[j]].v, name), &d, host ? "node" : "fleet", lower_better);
    if (!host) {
        char key[96];
        snprintf(key, sizeof key, "%s%s", who[0].spec, cpu ? " (cpu timings)" : "");
        json_t *g = json_object_get(f->groups, key);
        if (!g)
            json_object_set_new(f->groups, key, g = json_object());
        json_object_set_new(g, name, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "n", d.n, "median", d.median,
                                               "mad", d.mad, "scale", d.scale, "low", d.low, "high", d.high));
    }
    return KB_OK;
}

/* Every timed test of the GPUs who[0..m) judged as one group. */
static kb_status judge_tests(kb_fleet *f, const gpu_key *who, int m, const char *host, double *x, int *idx)
{
    kb_status st = KB_OK;
    for (int t = KB_ACC_MEM_BW; t <= KB_ACC_LAUNCH && st == KB_OK; t++) {
        const char *name = kb_acc_test_name((kb_acc_test)t);
        int lower = kb_acc_test_kind((kb_acc_test)t) == KB_ACC_KIND_LIMIT;
        for (int c = 0; c < 2 && st == KB_OK; c++)
            st = judge_group(f, who, m, host, name, c ? "cpu" : "gpu", lower, x, idx);
    }
    return st;
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
    f->k = k;
    f->rel_floor = rel_floor;
    /* sorted by SKU then node: each SKU, and each SKU's node, is one run of the array */
    gpu_key *key = make_keys(f);
    double *x = malloc((size_t)(f->n ? f->n : 1) * sizeof *x);
    int *idx = malloc((size_t)(f->n ? f->n : 1) * sizeof *idx);
    kb_status st = key && x && idx ? KB_OK : KB_ERR_OOM;
    if (st == KB_OK)
        qsort(key, (size_t)f->n, sizeof *key, by_spec_host);
    for (int a = 0, b; st == KB_OK && a < f->n; a = b) {
        for (b = a + 1; b < f->n && !strcmp(key[a].spec, key[b].spec); b++)
            ;
        st = judge_tests(f, &key[a], b - a, NULL, x, idx);
        for (int h = a, e; st == KB_OK && h < b; h = e) {
            for (e = h + 1; e < b && !strcmp(key[h].host, key[e].host); e++)
                ;
            st = judge_tests(f, &key[h], e - h, key[h].host, x, idx);
        }
    }
    free(key);
    free(x);
    free(idx);
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
