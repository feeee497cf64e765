/* replay_rec.c - kbench records as a recorded space (replay_rec.h). */
#include "tune/replay_rec.h"

#include "kernels/families.h"
#include "results/record.h"
#include "tune/replay_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM_MAX (1LL << 40)   /* as the suite loader bounds dims */
#define PAD_MAX (1LL << 20)

/* 1 when param name (value v) of family f is a configuration axis (space.h's rule). */
static int is_config(const kb_family *f, const char *name, json_t *v)
{
    int i = f ? kb_family_param_find(f, name) : -1;
    if (i >= 0)
        return kb_tune_param_is_config(f, i);
    return !json_is_string(v) && ((name[0] >= 'A' && name[0] <= 'Z') || strcmp(name, "algo") == 0);
}

static const kb_family *family_of(json_t *rec)
{
    int fi = kb_family_find(json_string_value(json_object_get(rec, "family")) ? json_string_value(json_object_get(rec, "family")) : "");
    return fi >= 0 ? kb_families[fi] : NULL;
}

/* An integer field in [lo, hi]: 0 with *out, -1 otherwise. */
static int int_in(json_t *v, long long lo, long long hi, long long *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -1;
    *out = (long long)json_integer_value(v);
    return 0;
}

/* The problem params of a record ("(layout=nt,alpha=1)") of variant var of f (-1: unknown)
 * into b. */
static void problem_params(json_t *rec, const kb_family *f, int var, kb_sb *b)
{
    json_t *params = json_object_get(rec, "params"), *v;
    int first = 1;
    kb_sb text;
    kb_sb_init(&text);
    if (f) {   /* as space.c: the problem params of the record's operation (defaults where it lacks one) */
        for (int i = 0; i < f->n_params; i++) {
            const kb_param *p = &f->params[i];
            if (var >= 0 ? !kb_tune_param_in_key(f, i, var) : kb_tune_param_is_config(f, i))
                continue;
            if ((v = json_object_get(params, p->name)))
                kb_replay_value_text(v, &text);
            else if (p->choices)
                kb_sb_printf(&text, "%s", p->choices[p->def]);
            else
                kb_sb_printf(&text, "%lld", (long long)p->def);
            kb_sb_printf(b, "%s%s=%s", first ? "(" : ",", p->name, text.s);
            kb_sb_clear(&text);
            first = 0;
        }
    } else {
        const char *name;
        json_object_foreach(params, name, v) {
            if (is_config(f, name, v))
                continue;
            kb_replay_value_text(v, &text);
            kb_sb_printf(b, "%s%s=%s", first ? "(" : ",", name, text.s);
            first = 0;
        }
    }
    kb_sb_free(&text);
    kb_sb_printf(b, "%s", first ? "" : ")");
}

/* The problem key of a record (as kb_tune_problem_key makes it) into b: 0; -1 when it is
 * not a case record; -2 when its dims or pad are out of range. */
static int record_key(json_t *rec, kb_sb *b)
{
    const char *fam = json_string_value(json_object_get(rec, "family"));
    const char *dt = json_string_value(json_object_get(rec, "dtype"));
    const char *launch = json_string_value(json_object_get(rec, "launch"));
    json_t *dims = json_object_get(rec, "dims"), *v;
    if (!fam || !dt || !launch || !json_is_object(dims))
        return -1;
    const kb_family *f = family_of(rec);
    const char *vname = json_string_value(json_object_get(rec, "variant"));
    int var = f && vname ? kb_family_variant_find(f, vname) : -1;
    kb_sb_clear(b);
    kb_sb_printf(b, "%s", fam);
    if (f && kb_tune_other_op(f, var))   /* another operation over the dims: its own problems */
        kb_sb_printf(b, "/%s", vname);
    problem_params(rec, f, var, b);
    kb_sb_printf(b, "/%s/", dt);
    const char *name;
    long long d, pad;
    int first = 1;
    json_object_foreach(dims, name, v) {
        if (int_in(v, 1, DIM_MAX, &d) != 0)
            return -2;
        kb_sb_printf(b, "%s%lld", first ? "" : "x", d);
        first = 0;
    }
    if (int_in(json_object_get(rec, "pad"), 0, PAD_MAX, &pad) != 0)
        return -2;
    kb_sb_printf(b, "/pad%lld/%s", pad, launch);
    return 0;
}

/* Pick the problem: the first key containing filter, else the one with most records.
 * 0, or -1 with err (a record out of range, no problem). */
static int pick_problem(json_t **objs, size_t n, const char *filter, const char *path, kb_tune_replay *r, kb_sb *err)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_strset seen;
    kb_strset_init(&seen);
    int best_count = 0, *count = calloc(n ? n : 1, sizeof *count), rc = 0;
    char **keys = calloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; count && keys && i < n && rc == 0; i++) {
        int k = record_key(objs[i], &key);
        if (k == -2) {
            kb_sb_printf(err, "%s: record %zu: dims must be integers in [1, 2^40] and pad in [0, 2^20]", path, i + 1);
            rc = -1;
        }
        if (k == 0 && (!filter || strstr(key.s, filter)))
            keys[i] = strdup(key.s);
    }
    for (size_t i = 0; count && keys && rc == 0 && i < n; i++) {   /* count per first occurrence */
        if (!keys[i] || kb_strset_add(&seen, keys[i]) != 1)
            continue;
        r->n_problems++;
        for (size_t j = i; j < n; j++)
            count[i] += keys[j] && strcmp(keys[j], keys[i]) == 0;
        if (count[i] > best_count) {
            best_count = count[i];
            snprintf(r->problem, sizeof r->problem, "%s", keys[i]);
        }
    }
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i]);
    free(keys);
    free(count);
    kb_strset_free(&seen);
    kb_sb_free(&key);
    if (rc == 0 && best_count == 0) {
        kb_sb_printf(err, "%s: no recorded problem%s%s%s", path, filter ? " contains '" : "", filter ? filter : "",
                     filter ? "'" : "");
        rc = -1;
    }
    return rc;
}

/* A record's time: its median when ok, KB_TUNE_REFUSED when skipped, else INFINITY.
 * -1 (with err) for an ok record whose median is not a positive number in range. */
static int record_time(json_t *rec, size_t i, const char *path, double *out, kb_sb *err)
{
    const char *st = json_string_value(json_object_get(rec, "status"));
    json_t *m = json_object_get(json_object_get(rec, "timing"), "median_us");
    if (!st || strcmp(st, "ok") != 0) {
        *out = st && strcmp(st, "skipped") == 0 ? KB_TUNE_REFUSED : INFINITY;
        return 0;
    }
    double v = json_is_number(m) ? json_number_value(m) : NAN;
    if (!(v > 0 && v < KB_REPLAY_MAX_TIME)) {
        kb_sb_printf(err, "%s: record %zu: timing.median_us must be a positive number below %g", path, i + 1,
                     KB_REPLAY_MAX_TIME);
        return -1;
    }
    *out = v;
    return 0;
}

static double record_cost(json_t *rec)
{
    json_t *w = json_object_get(rec, "wall_ms");
    return json_is_number(w) && json_number_value(w) >= 0 && json_number_value(w) < KB_REPLAY_MAX_TIME
               ? json_number_value(w) / 1000.0 : NAN;
}

/* The case a record describes (family, variant, dtype, dims, params, pad, launch), for
 * the static estimate; c->family -1 when the record does not name one kbench knows. */
static void record_case(json_t *rec, kb_case *c)
{
    memset(c, 0, sizeof *c);
    c->family = -1;
    const kb_family *f = family_of(rec);
    kb_dtype dt;
    if (!f || kb_dtype_parse(json_string_value(json_object_get(rec, "dtype")) ? json_string_value(json_object_get(rec, "dtype")) : "", &dt) != 0)
        return;
    int var = kb_family_variant_find(f, json_string_value(json_object_get(rec, "variant")) ? json_string_value(json_object_get(rec, "variant")) : "");
    json_t *params = json_object_get(rec, "params"), *dims = json_object_get(rec, "dims");
    long long x;
    for (int d = 0; d < f->n_dims && d < KB_MAX_DIMS; d++) {
        if (int_in(json_object_get(dims, f->dims[d]), 1, DIM_MAX, &x) != 0)
            return;
        c->dims[d] = x;
    }
    for (int i = 0; i < f->n_params && i < KB_MAX_PARAMS; i++) {
        json_t *v = json_object_get(params, f->params[i].name);
        c->params[i] = f->params[i].def;
        if (json_is_integer(v))
            c->params[i] = json_integer_value(v);
        for (int k = 0; json_is_string(v) && f->params[i].choices && f->params[i].choices[k]; k++)
            if (strcmp(f->params[i].choices[k], json_string_value(v)) == 0)
                c->params[i] = k;
    }
    if (var < 0 || int_in(json_object_get(rec, "pad"), 0, PAD_MAX, &x) != 0)
        return;
    c->pad = (int)x;
    const char *launch = json_string_value(json_object_get(rec, "launch"));
    c->launch = launch && strcmp(launch, "graph") == 0 ? KB_LAUNCH_GRAPH : KB_LAUNCH_EAGER;
    c->dtype = dt;
    c->variant = var;
    c->check_shape = json_is_true(json_object_get(rec, "check_shape"));
    c->shape_name = -1;
    c->family = kb_family_find(f->name);
}

/* The axes: variant, then config params in first-seen order. */
static void axes(json_t **objs, size_t n, kb_tune_replay *r, kb_sb *key)
{
    snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "variant");
    for (size_t i = 0; i < n; i++) {
        if (record_key(objs[i], key) != 0 || strcmp(key->s, r->problem) != 0)
            continue;
        const kb_family *f = family_of(objs[i]);
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(objs[i], "params"), name, v) {
            int a = 1;
            while (a < r->n_axes && strcmp(r->axis[a], name) != 0)
                a++;
            if (is_config(f, name, v) && a == r->n_axes && r->n_axes < KB_TUNE_MAX_AXES &&
                strlen(name) <= KB_REPLAY_NAME_MAX)
                snprintf(r->axis[r->n_axes++], sizeof r->axis[0], "%s", name);
        }
    }
}

/* One record of the problem as a configuration. 0, -1 input error, -2 out of memory. */
static int add_record(kb_replay_builder *b, json_t *rec, size_t i, const char *path, kb_sb *err)
{
    kb_tune_replay *r = b->r;
    kb_sb text[KB_TUNE_MAX_AXES];
    const char *vals[KB_TUNE_MAX_AXES];
    vals[0] = json_string_value(json_object_get(rec, "variant"));
    for (int a = 1; a < r->n_axes; a++) {
        kb_sb_init(&text[a]);
        json_t *v = json_object_get(json_object_get(rec, "params"), r->axis[a]);
        if (v)
            kb_replay_value_text(v, &text[a]);
        vals[a] = v ? text[a].s : "-";
    }
    double t;
    int rc = !vals[0] ? 0 : record_time(rec, i, path, &t, err);
    if (vals[0] && rc == 0) {
        int at = r->n;
        rc = kb_replay_add_texts(b, vals, t, record_cost(rec), err);
        if (rc == 0)
            record_case(rec, &r->cases[at]);
    }
    for (int a = 1; a < r->n_axes; a++)
        kb_sb_free(&text[a]);
    const char *clock = json_string_value(json_object_get(json_object_get(rec, "timing"), "clock"));
    r->cpu |= clock && strcmp(clock, "cpu") == 0;
    const char *dev = json_string_value(json_object_get(json_object_get(rec, "device"), "name"));
    if (dev && !r->device[0])
        snprintf(r->device, sizeof r->device, "%s", dev);
    json_t *sm = json_object_get(json_object_get(rec, "device"), "sm");
    if (!r->sm && json_is_integer(sm) && json_integer_value(sm) >= 10 && json_integer_value(sm) < 1000)
        r->sm = (int)json_integer_value(sm);
    return rc;
}

static int records_space(json_t **objs, size_t n, const char *path, kb_tune_replay *r, kb_sb *err)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_strset ids;
    kb_strset_init(&ids);
    kb_replay_builder b;
    kb_replay_builder_init(&b, r);
    b.with_cases = 1;
    axes(objs, n, r, &key);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *id = json_string_value(json_object_get(objs[i], "case_id"));
        if (record_key(objs[i], &key) != 0 || strcmp(key.s, r->problem) != 0 || !id || kb_strset_add(&ids, id) != 1)
            continue;   /* a case re-measured (a tie) counts once: its first record */
        rc = add_record(&b, objs[i], i, path, err);
    }
    if (rc == 0)
        rc = kb_replay_finish(&b, path, err);
    kb_replay_builder_free(&b);
    kb_strset_free(&ids);
    kb_sb_free(&key);
    return rc;
}

kb_status kb_replay_load_records(const char *path, const char *filter, kb_tune_replay *out, kb_sb *err)
{
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
    int rc = pick_problem(objs, n, filter, path, out, err);
    if (rc == 0)
        rc = records_space(objs, n, path, out, err);
    kb_record_free_all(objs, n);
    return rc == 0 ? KB_OK : rc == -2 ? KB_ERR_INTERNAL : KB_ERR_INPUT;
}
