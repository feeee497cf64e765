/* replay.c - recorded spaces from kbench records or a Kernel Tuner cache (replay.h). */
#include "tune/replay.h"

#include "results/record.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct value texts per axis while loading. */
typedef struct {
    kb_tune_replay *r;
    int cap;
    char **vals[KB_TUNE_MAX_AXES];
    int n_vals[KB_TUNE_MAX_AXES];
} builder;

static int level_of(builder *b, int a, const char *v)
{
    for (int i = 0; i < b->n_vals[a]; i++)
        if (strcmp(b->vals[a][i], v) == 0)
            return i;
    char **nv = realloc(b->vals[a], (size_t)(b->n_vals[a] + 1) * sizeof *nv);
    if (!nv)
        return -1;
    b->vals[a] = nv;
    if (!(nv[b->n_vals[a]] = strdup(v)))
        return -1;
    return b->n_vals[a]++;
}

/* Add a configuration: its value text on every axis, its time. 0, or -1 out of memory. */
static int add_config(builder *b, const char *const *vals, double t)
{
    kb_tune_replay *r = b->r;
    if (r->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        int *lv = realloc(r->level, (size_t)cap * (size_t)r->n_axes * sizeof *lv);
        double *tm = lv ? realloc(r->time, (size_t)cap * sizeof *tm) : NULL;
        char **lb = tm ? realloc(r->label, (size_t)cap * sizeof *lb) : NULL;
        if (lv)
            r->level = lv;
        if (tm)
            r->time = tm;
        if (!lb)
            return -1;
        r->label = lb;
        b->cap = cap;
    }
    kb_sb l;
    kb_sb_init(&l);
    for (int a = 0; a < r->n_axes; a++) {
        int lv = level_of(b, a, vals[a]);
        if (lv < 0)
            return -1;
        r->level[(size_t)r->n * (size_t)r->n_axes + (size_t)a] = lv;
        kb_sb_printf(&l, "%s%s=%s", a ? "," : "", r->axis[a], vals[a]);
    }
    r->label[r->n] = l.s;
    r->time[r->n++] = t;
    return 0;
}

static void builder_free(builder *b)
{
    for (int a = 0; a < KB_TUNE_MAX_AXES; a++) {
        for (int i = 0; i < b->n_vals[a]; i++)
            free(b->vals[a][i]);
        free(b->vals[a]);
    }
}

/* ---- Kernel Tuner's cache ---- */

/* A JSON scalar as Kernel Tuner joins it into a key (Python's str of the value). */
static void value_text(json_t *v, char *out, size_t n)
{
    if (json_is_integer(v))
        snprintf(out, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, n, "%.17g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(out, n, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(out, n, "%s", json_is_true(v) ? "True" : "False");
    else
        snprintf(out, n, "None");
}

static double kt_time(json_t *entry)
{
    json_t *t = json_object_get(entry, "time");
    return json_is_number(t) && json_number_value(t) > 0 ? json_number_value(t) : INFINITY;
}

/* Every combination of tune_params (absent from the cache: failed), odometer order. */
static int kt_product(builder *b, json_t *keys, json_t *tp, json_t *cache)
{
    kb_tune_replay *r = b->r;
    int idx[KB_TUNE_MAX_AXES] = { 0 };
    char text[KB_TUNE_MAX_AXES][64];
    const char *vals[KB_TUNE_MAX_AXES];
    for (;;) {
        kb_sb key;
        kb_sb_init(&key);
        for (int a = 0; a < r->n_axes; a++) {
            value_text(json_array_get(json_object_get(tp, r->axis[a]), (size_t)idx[a]), text[a], sizeof text[a]);
            vals[a] = text[a];
            kb_sb_printf(&key, "%s%s", a ? "," : "", text[a]);
        }
        json_t *e = json_object_get(cache, key.s);
        kb_sb_free(&key);
        r->absent += e == NULL;
        if (add_config(b, vals, e ? kt_time(e) : INFINITY) < 0)
            return -1;
        int a = r->n_axes - 1;
        while (a >= 0 && ++idx[a] == (int)json_array_size(json_object_get(tp, r->axis[a])))
            idx[a--] = 0;
        if (a < 0)
            return 0;
    }
    (void)keys;
}

/* Only the cache's own entries (a space too large to enumerate). */
static int kt_entries(builder *b, json_t *cache)
{
    kb_tune_replay *r = b->r;
    const char *k;
    json_t *e;
    char text[KB_TUNE_MAX_AXES][64];
    const char *vals[KB_TUNE_MAX_AXES];
    json_object_foreach(cache, k, e) {
        for (int a = 0; a < r->n_axes; a++) {
            value_text(json_object_get(e, r->axis[a]), text[a], sizeof text[a]);
            vals[a] = text[a];
        }
        if (add_config(b, vals, kt_time(e)) < 0)
            return -1;
    }
    return 0;
}

static kb_status load_kt(json_t *doc, const char *path, kb_tune_replay *r, kb_sb *err)
{
    json_t *keys = json_object_get(doc, "tune_params_keys"), *tp = json_object_get(doc, "tune_params");
    json_t *cache = json_object_get(doc, "cache");
    size_t i;
    json_t *k;
    double space = 1;
    if (!json_is_array(keys) || !json_is_object(tp) || !json_is_object(cache) || json_array_size(keys) == 0 ||
        json_array_size(keys) > KB_TUNE_MAX_AXES) {
        kb_sb_printf(err, "%s: a Kernel Tuner cache needs tune_params_keys (1 to %d), tune_params and cache", path,
                     KB_TUNE_MAX_AXES);
        return KB_ERR_INPUT;
    }
    json_array_foreach(keys, i, k) {
        json_t *list = json_object_get(tp, json_string_value(k) ? json_string_value(k) : "");
        if (!json_is_string(k) || !json_is_array(list) || json_array_size(list) == 0) {
            kb_sb_printf(err, "%s: tune_params_keys[%zu] has no list of values in tune_params", path, i);
            return KB_ERR_INPUT;
        }
        snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "%s", json_string_value(k));
        space *= (double)json_array_size(list);
    }
    r->format = "Kernel Tuner cache";
    json_t *name = json_object_get(doc, "kernel_name");
    snprintf(r->problem, sizeof r->problem, "%s", json_is_string(name) ? json_string_value(name) : "kernel");
    r->n_problems = 1;
    builder b = { r, 0, { 0 }, { 0 } };
    int rc = space <= KB_REPLAY_MAX_SPACE ? kt_product(&b, keys, tp, cache) : kt_entries(&b, cache);
    builder_free(&b);
    return rc == 0 ? KB_OK : KB_ERR_INTERNAL;
}

/* Kernel Tuner appends entries while tuning: an unterminated file lacks its closing
 * braces. Loads text, closing it when needed. */
static json_t *load_json_closing(const char *text)
{
    json_t *doc = json_loads(text, 0, NULL);
    if (doc)
        return doc;
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == ','))
        n--;
    kb_sb s;
    kb_sb_init(&s);
    kb_sb_append(&s, text, n);
    kb_sb_printf(&s, "}}");
    doc = json_loads(s.s, 0, NULL);
    kb_sb_free(&s);
    return doc;
}

/* ---- kbench records ---- */

/* 1 when param name (value v) of family is a configuration axis (space.h's rule). */
static int is_config(const kb_family *f, const char *name, json_t *v)
{
    int i = f ? kb_family_param_find(f, name) : -1;
    if (i >= 0)
        return kb_tune_param_is_config(f, i);
    return !json_is_string(v) && ((name[0] >= 'A' && name[0] <= 'Z') || strcmp(name, "algo") == 0);
}

/* The problem key of a record (as kb_tune_problem_key makes it) into b; -1 when it is not
 * a case record. */
static int record_key(json_t *rec, kb_sb *b)
{
    const char *fam = json_string_value(json_object_get(rec, "family"));
    const char *dt = json_string_value(json_object_get(rec, "dtype"));
    const char *launch = json_string_value(json_object_get(rec, "launch"));
    json_t *dims = json_object_get(rec, "dims"), *params = json_object_get(rec, "params");
    if (!fam || !dt || !launch || !json_is_object(dims))
        return -1;
    int fi = kb_family_find(fam);
    const kb_family *f = fi >= 0 ? kb_families[fi] : NULL;
    const char *vname = json_string_value(json_object_get(rec, "variant"));
    int var = f && vname ? kb_family_variant_find(f, vname) : -1;
    kb_sb_clear(b);
    kb_sb_printf(b, "%s", fam);
    if (f && kb_tune_other_op(f, var))
        kb_sb_printf(b, "/%s", vname);
    const char *name;
    json_t *v;
    int first = 1;
    char text[64];
    if (f) {   /* as space.c: the problem params of the record's operation (defaults where it lacks one) */
        for (int i = 0; i < f->n_params; i++) {
            const kb_param *p = &f->params[i];
            if (var >= 0 ? !kb_tune_param_in_key(f, i, var) : kb_tune_param_is_config(f, i))
                continue;
            v = json_object_get(params, p->name);
            if (v)
                value_text(v, text, sizeof text);
            else if (p->choices)
                snprintf(text, sizeof text, "%s", p->choices[p->def]);
            else
                snprintf(text, sizeof text, "%lld", (long long)p->def);
            kb_sb_printf(b, "%s%s=%s", first ? "(" : ",", p->name, text);
            first = 0;
        }
    } else {
        json_object_foreach(params, name, v) {
            if (is_config(f, name, v))
                continue;
            value_text(v, text, sizeof text);
            kb_sb_printf(b, "%s%s=%s", first ? "(" : ",", name, text);
            first = 0;
        }
    }
    kb_sb_printf(b, "%s/%s/", first ? "" : ")", dt);
    first = 1;
    json_object_foreach(dims, name, v) {
        kb_sb_printf(b, "%s%lld", first ? "" : "x", (long long)json_integer_value(v));
        first = 0;
    }
    kb_sb_printf(b, "/pad%lld/%s", (long long)json_integer_value(json_object_get(rec, "pad")), launch);
    return 0;
}

/* Pick the problem: the first key containing filter, else the one with most records. */
static int pick_problem(json_t **objs, size_t n, const char *filter, kb_tune_replay *r)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_strset seen;
    kb_strset_init(&seen);
    int best_count = 0;
    for (size_t i = 0; i < n; i++) {
        if (record_key(objs[i], &key) != 0 || (filter && !strstr(key.s, filter)) || kb_strset_add(&seen, key.s) != 1)
            continue;
        r->n_problems++;
        int count = 0;
        kb_sb other;
        kb_sb_init(&other);
        for (size_t j = i; j < n; j++)
            count += record_key(objs[j], &other) == 0 && strcmp(other.s, key.s) == 0;
        kb_sb_free(&other);
        if (count > best_count) {
            best_count = count;
            snprintf(r->problem, sizeof r->problem, "%s", key.s);
        }
    }
    kb_strset_free(&seen);
    kb_sb_free(&key);
    return best_count > 0 ? 0 : -1;
}

static double record_time(json_t *rec)
{
    const char *st = json_string_value(json_object_get(rec, "status"));
    json_t *m = json_object_get(json_object_get(rec, "timing"), "median_us");
    return st && strcmp(st, "ok") == 0 && json_is_number(m) ? json_number_value(m) : INFINITY;
}

/* The axes (variant, then config params in first-seen order) and the configurations. */
static int records_space(json_t **objs, size_t n, kb_tune_replay *r)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_strset ids;
    kb_strset_init(&ids);
    builder b = { r, 0, { 0 }, { 0 } };
    snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "variant");
    for (int pass = 0, rc = 0; pass < 2 && rc == 0; pass++) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (record_key(objs[i], &key) != 0 || strcmp(key.s, r->problem) != 0)
                continue;
            json_t *rec = objs[i], *params = json_object_get(rec, "params"), *v;
            const kb_family *f = kb_family_find(json_string_value(json_object_get(rec, "family"))) >= 0
                                     ? kb_families[kb_family_find(json_string_value(json_object_get(rec, "family")))]
                                     : NULL;
            char text[KB_TUNE_MAX_AXES][64];
            const char *vals[KB_TUNE_MAX_AXES];
            vals[0] = json_string_value(json_object_get(rec, "variant"));
            for (int a = 1; a < r->n_axes; a++)
                vals[a] = "-";
            const char *name;
            json_object_foreach(params, name, v) {
                if (!is_config(f, name, v))
                    continue;
                int a = 1;
                while (a < r->n_axes && strcmp(r->axis[a], name) != 0)
                    a++;
                if (a == r->n_axes && pass == 0 && r->n_axes < KB_TUNE_MAX_AXES)
                    snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "%s", name);
                if (a < r->n_axes) {
                    value_text(v, text[a], sizeof text[a]);
                    vals[a] = text[a];
                }
            }
            const char *id = json_string_value(json_object_get(rec, "case_id"));
            if (pass == 1 && vals[0] && id && kb_strset_add(&ids, id) == 1)
                rc = add_config(&b, vals, record_time(rec));
            if (pass == 1 && json_string_value(json_object_get(json_object_get(rec, "timing"), "clock")) &&
                strcmp(json_string_value(json_object_get(json_object_get(rec, "timing"), "clock")), "cpu") == 0)
                r->cpu = 1;
        }
    }
    builder_free(&b);
    kb_strset_free(&ids);
    kb_sb_free(&key);
    return r->n > 0 ? 0 : -1;
}

kb_status kb_tune_replay_load(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        kb_sb_printf(err, "%s: cannot be read", path);
        return KB_ERR_IO;
    }
    kb_sb all;
    kb_sb_init(&all);
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0)
        kb_sb_append(&all, buf, got);
    fclose(fp);
    text = all.s;
    json_t *doc = load_json_closing(text);
    kb_sb_free(&all);
    if (json_is_object(doc) && json_object_get(doc, "cache")) {
        kb_status st = load_kt(doc, path, out, err);
        json_decref(doc);
        if (st != KB_OK)
            kb_tune_replay_free(out);
        return st;
    }
    json_decref(doc);
    json_t **objs = NULL;
    size_t n = 0;
    kb_sb lerr;
    kb_sb_init(&lerr);
    kb_status st = kb_record_load(path, &objs, &n, &lerr);
    if (st != KB_OK)
        kb_sb_printf(err, "%s (neither kbench records nor a Kernel Tuner cache)", lerr.s);
    kb_sb_free(&lerr);
    if (st != KB_OK)
        return st;
    out->format = "kbench records";
    if (pick_problem(objs, n, filter, out) != 0 || records_space(objs, n, out) != 0) {
        kb_sb_printf(err, "%s: no recorded problem%s%s%s", path, filter ? " contains '" : "", filter ? filter : "",
                     filter ? "'" : "");
        st = KB_ERR_INPUT;
        kb_tune_replay_free(out);
    }
    kb_record_free_all(objs, n);
    return st;
}

void kb_tune_replay_free(kb_tune_replay *r)
{
    for (int i = 0; r->label && i < r->n; i++)
        free(r->label[i]);
    free(r->label);
    free(r->level);
    free(r->time);
    memset(r, 0, sizeof *r);
}

int kb_tune_replay_optimum(const kb_tune_replay *r)
{
    int best = -1;
    for (int i = 0; i < r->n; i++)
        if (isfinite(r->time[i]) && (best < 0 || r->time[i] < r->time[best]))
            best = i;
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double kb_tune_replay_random_expected(const kb_tune_replay *r, int budget)
{
    int n = r->n, k = budget < n ? budget : n;
    if (n == 0 || k <= 0)
        return INFINITY;
    double *t = malloc((size_t)n * sizeof *t), worst = 0;
    if (!t)
        return INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(r->time[i]) && r->time[i] > worst)
            worst = r->time[i];
    for (int i = 0; i < n; i++)
        t[i] = isfinite(r->time[i]) ? r->time[i] : worst;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    /* P(the i-th smallest is the minimum of k draws) = C(n-1-i, k-1) / C(n, k), as a running ratio */
    double e = 0, p = (double)k / n;
    for (int i = 0; i <= n - k && p > 0; i++) {
        e += p * t[i];
        p *= (double)(n - k - i) / (double)(n - 1 - i);
    }
    free(t);
    return e;
}
