/* replay.c - recorded spaces: reading the file, building the levels, the Kernel Tuner
 * cache, and random sampling's exact baseline (replay.h). kbench records: replay_rec.c. */
#include "tune/replay.h"

#include "tune/replay_build.h"
#include "tune/replay_rec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Kernel Tuner's cache ---- */

/* The time of an entry [ms]: its number, INFINITY for an error string, KB_TUNE_REFUSED
 * for InvalidConfig. -1 (with err) for a time out of range or of another type. */
static int kt_time(json_t *e, const char *key, const char *path, double *out, kb_sb *err)
{
    json_t *t = json_object_get(e, "time");
    if (json_is_string(t)) {
        *out = strcmp(json_string_value(t), "InvalidConfig") == 0 ? KB_TUNE_REFUSED : INFINITY;
        return 0;
    }
    double v = json_is_number(t) ? json_number_value(t) : NAN;
    if (!(v > 0 && v < KB_REPLAY_MAX_TIME)) {
        kb_sb_printf(err, "%s: cache entry \"%.80s\": \"time\" must be a positive number of ms below %g or an error "
                     "string (InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig)", path, key,
                     KB_REPLAY_MAX_TIME);
        return -1;
    }
    *out = v;
    return 0;
}

/* What evaluating an entry cost [s]: the methodology's five time keys [ms] (benchmark
 * from the sum of `times` when absent); NAN when it has none of them. */
static double kt_cost(json_t *e)
{
    static const char *const keys[] = { "compile_time", "verification_time", "benchmark_time", "framework_time",
                                        "strategy_time" };
    double ms = 0;
    int found = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get(e, keys[k]);
        if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) < KB_REPLAY_MAX_TIME) {
            ms += json_number_value(v);
            found++;
        } else if (k == 2 && json_is_array(json_object_get(e, "times"))) {
            size_t i;
            json_t *x;
            json_array_foreach(json_object_get(e, "times"), i, x)
                ms += json_is_number(x) && json_number_value(x) > 0 && json_number_value(x) < KB_REPLAY_MAX_TIME
                          ? json_number_value(x) : 0;
            found++;
        }
    }
    return found ? ms / 1000.0 : NAN;
}

/* The axes from tune_params_keys / tune_params. 0, or -1 with err. */
static int kt_axes(json_t *doc, const char *path, kb_tune_replay *r, kb_sb *err)
{
    json_t *keys = json_object_get(doc, "tune_params_keys"), *tp = json_object_get(doc, "tune_params");
    size_t i;
    json_t *k;
    if (!json_is_array(keys) || !json_is_object(tp) || !json_is_object(json_object_get(doc, "cache")) ||
        json_array_size(keys) == 0 || json_array_size(keys) > KB_TUNE_MAX_AXES) {
        kb_sb_printf(err, "%s: a Kernel Tuner cache needs tune_params_keys (1 to %d), tune_params and cache", path,
                     KB_TUNE_MAX_AXES);
        return -1;
    }
    double combos = 1;
    json_array_foreach(keys, i, k) {
        const char *name = json_string_value(k);
        json_t *list = json_object_get(tp, name ? name : "");
        if (!name || !json_is_array(list) || json_array_size(list) == 0) {
            kb_sb_printf(err, "%s: tune_params_keys[%zu] has no list of values in tune_params", path, i);
            return -1;
        }
        if (strlen(name) > KB_REPLAY_NAME_MAX) {
            kb_sb_printf(err, "%s: tune_params_keys[%zu] is longer than %d characters", path, i, KB_REPLAY_NAME_MAX);
            return -1;
        }
        for (int a = 0; a < r->n_axes; a++)
            if (strcmp(r->axis[a], name) == 0) {
                kb_sb_printf(err, "%s: tune_params_keys[%zu] \"%s\" repeats tune_params_keys[%d]", path, i, name, a);
                return -1;
            }
        snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "%s", name);
        combos *= (double)json_array_size(list);
    }
    r->absent = combos < 2e9 ? (int)combos : -1;
    return 0;
}

/* Every entry of the cache a configuration. 0, or -1 with err (KB_ERR_INTERNAL: *oom). */
static int kt_entries(kb_replay_builder *b, json_t *doc, const char *path, kb_sb *err, int *oom)
{
    kb_tune_replay *r = b->r;
    json_t *tp = json_object_get(doc, "tune_params"), *e;
    const char *key;
    int have_cost = 1;
    json_object_foreach(json_object_get(doc, "cache"), key, e) {
        json_t *vals[KB_TUNE_MAX_AXES];
        for (int a = 0; a < r->n_axes; a++) {
            vals[a] = json_object_get(e, r->axis[a]);
            if (!vals[a] || kb_replay_value_index(json_object_get(tp, r->axis[a]), vals[a]) < 0) {
                kb_sb_printf(err, "%s: cache entry \"%.80s\": %s %s", path, key, r->axis[a],
                             vals[a] ? "is not among its tune_params values" : "is missing");
                return -1;
            }
        }
        double t, cost = kt_cost(e);
        if (kt_time(e, key, path, &t, err) != 0)
            return -1;
        have_cost &= !isnan(cost);
        int rc = kb_replay_add(b, vals, t, cost, err);
        if (rc != 0) {
            *oom = rc == -2;
            if (rc == -1)
                kb_sb_printf(err, " (%s: cache entry \"%.80s\")", path, key);
            return -1;
        }
    }
    if (!have_cost) {
        free(r->cost_s);
        r->cost_s = NULL;
    }
    if (r->absent >= 0)
        r->absent -= r->n;
    return 0;
}

static kb_status load_kt(json_t *doc, const char *path, kb_tune_replay *r, kb_sb *err)
{
    if (kt_axes(doc, path, r, err) != 0)
        return KB_ERR_INPUT;
    r->format = "Kernel Tuner cache";
    json_t *name = json_object_get(doc, "kernel_name"), *dev = json_object_get(doc, "device_name");
    snprintf(r->problem, sizeof r->problem, "%s", json_is_string(name) ? json_string_value(name) : "kernel");
    snprintf(r->device, sizeof r->device, "%s", json_is_string(dev) ? json_string_value(dev) : "");
    r->n_problems = 1;
    kb_replay_builder b;
    kb_replay_builder_init(&b, r);
    for (int a = 0; a < r->n_axes; a++)   /* the levels in tune_params' order, then by value */
        if (kb_replay_declare(&b, a, json_object_get(json_object_get(doc, "tune_params"), r->axis[a])) != 0) {
            kb_replay_builder_free(&b);
            return KB_ERR_INTERNAL;
        }
    int oom = 0, rc = kt_entries(&b, doc, path, err, &oom);
    if (rc == 0)
        rc = kb_replay_finish(&b, path, err);
    kb_replay_builder_free(&b);
    return rc == 0 ? KB_OK : oom ? KB_ERR_INTERNAL : KB_ERR_INPUT;
}

/* Kernel Tuner appends entries while tuning: an unterminated file lacks its closing
 * braces. Loads text, closing it when needed. */
static json_t *load_json_closing(const char *text, size_t len)
{
    json_t *doc = json_loadb(text, len, 0, NULL);
    if (doc)
        return doc;
    size_t n = len;
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == ',' || text[n - 1] == '\r'))
        n--;
    kb_sb s;
    kb_sb_init(&s);
    kb_sb_append(&s, text, n);
    kb_sb_printf(&s, "}}");
    doc = json_loadb(s.s, s.len, 0, NULL);
    kb_sb_free(&s);
    return doc;
}

/* The whole file, when it is a regular file within the size limit (opened without
 * blocking: a FIFO never hangs the load). KB_OK, KB_ERR_IO (cannot be read), KB_ERR_INPUT. */
static kb_status read_file(const char *path, kb_sb *all, kb_sb *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        kb_sb_printf(err, "%s: cannot be read (%s)", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return KB_ERR_IO;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > KB_REPLAY_MAX_BYTES) {
        kb_sb_printf(err, "%s: %s", path, S_ISREG(st.st_mode) ? "larger than the 1 GiB a replay file may have"
                                                               : "not a regular file");
        close(fd);
        return S_ISDIR(st.st_mode) ? KB_ERR_IO : KB_ERR_INPUT;
    }
    char buf[65536];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0 && all->len <= (size_t)KB_REPLAY_MAX_BYTES)
        kb_sb_append(all, buf, (size_t)got);
    close(fd);
    if (got < 0) {
        kb_sb_printf(err, "%s: cannot be read (%s)", path, strerror(errno));
        return KB_ERR_IO;
    }
    return KB_OK;
}

kb_status kb_tune_replay_parse_kt(const char *text, size_t len, const char *name, kb_tune_replay *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc = load_json_closing(text, len);
    kb_status st = KB_ERR_INPUT;
    if (json_is_object(doc) && json_object_get(doc, "cache"))
        st = load_kt(doc, name, out, err);
    else
        kb_sb_printf(err, "%s: not a Kernel Tuner cache (a JSON object with a \"cache\")", name);
    json_decref(doc);
    if (st != KB_OK)
        kb_tune_replay_free(out);
    return st;
}

kb_status kb_tune_replay_load(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    kb_sb all;
    kb_sb_init(&all);
    kb_status st = read_file(path, &all, err);
    json_t *doc = st == KB_OK ? load_json_closing(all.s, all.len) : NULL;
    int kt = json_is_object(doc) && json_object_get(doc, "cache");
    json_decref(doc);
    if (kt)
        st = kb_tune_replay_parse_kt(all.s, all.len, path, out, err);
    else if (st == KB_OK)
        st = kb_replay_load_records(path, filter, out, err);
    kb_sb_free(&all);
    if (st != KB_OK)
        kb_tune_replay_free(out);
    return st;
}

void kb_tune_replay_free(kb_tune_replay *r)
{
    for (int i = 0; r->label && i < r->n; i++)
        free(r->label[i]);
    free(r->label);
    free(r->level);
    free(r->time);
    free(r->cost_s);
    free(r->cases);
    memset(r, 0, sizeof *r);
}

kb_tune_view kb_tune_replay_view(const kb_tune_replay *r, const double *prior)
{
    kb_tune_view v = { r->n, r->n_axes, r->level, r->categorical, prior, r->cost_s };
    return v;
}

double kb_tune_replay_objective(void *user, int i) { return ((const kb_tune_replay *)user)->time[i]; }

int kb_tune_replay_optimum(const kb_tune_replay *r)
{
    int best = -1;
    for (int i = 0; i < r->n; i++)
        if (isfinite(r->time[i]) && (best < 0 || r->time[i] < r->time[best]))
            best = i;
    return best;
}

int kb_tune_replay_candidates(const kb_tune_replay *r) { return r->n - r->refused; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The times random sampling draws from, sorted (failed: the slowest); their count in *n. */
static double *sorted_times(const kb_tune_replay *r, int *n)
{
    double worst = 0;
    *n = 0;
    double *t = malloc((size_t)(r->n ? r->n : 1) * sizeof *t);
    if (!t)
        return NULL;
    for (int i = 0; i < r->n; i++)
        if (isfinite(r->time[i]) && r->time[i] > worst)
            worst = r->time[i];
    for (int i = 0; i < r->n; i++)
        if (r->time[i] != KB_TUNE_REFUSED)
            t[(*n)++] = isfinite(r->time[i]) ? r->time[i] : worst;
    qsort(t, (size_t)*n, sizeof *t, cmp_double);
    return t;
}

double kb_tune_replay_random_expected(const kb_tune_replay *r, int budget)
{
    int n;
    double *t = sorted_times(r, &n), e = 0;
    int k = budget < n ? budget : n;
    if (!t || n == 0 || k <= 0 || t[0] <= 0) {
        free(t);
        return INFINITY;
    }
    /* P(the i-th smallest is the minimum of k draws) = C(n-1-i, k-1) / C(n, k), as a running ratio */
    double p = (double)k / n;
    for (int i = 0; i <= n - k && p > 0; i++) {
        e += p * t[i];
        p *= (double)(n - k - i) / (double)(n - 1 - i);
    }
    free(t);
    return e;
}

double kb_tune_replay_random_quantile(const kb_tune_replay *r, int budget, double q)
{
    int n;
    double *t = sorted_times(r, &n), v = INFINITY;
    int k = budget < n ? budget : n;
    if (t && n > 0 && k > 0 && t[0] > 0) {
        /* P(the minimum is beyond the i-th smallest) = C(n-1-i, k) / C(n, k) */
        double beyond = 1.0;
        for (int i = 0; i < n; i++) {
            beyond *= i <= n - k - 1 ? (double)(n - k - i) / (double)(n - i) : 0.0;
            if (1.0 - beyond >= q - 1e-12) {
                v = t[i];
                break;
            }
        }
    }
    free(t);
    return v;
}
