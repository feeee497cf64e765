/* replay_build.c - building a recorded space configuration by configuration (replay_build.h). */
#include "tune/replay_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAX 4096   /* a value's characters at most */

void kb_replay_builder_init(kb_replay_builder *b, kb_tune_replay *r)
{
    memset(b, 0, sizeof *b);
    b->r = r;
}

void kb_replay_builder_free(kb_replay_builder *b)
{
    for (int a = 0; a < KB_TUNE_MAX_AXES; a++) {
        for (int i = 0; i < b->n_vals[a]; i++)
            free(b->vals[a][i]);
        free(b->vals[a]);
        b->vals[a] = NULL;
        b->n_vals[a] = 0;
    }
}

void kb_replay_value_text(json_t *v, kb_sb *out)
{
    kb_sb_clear(out);
    if (json_is_integer(v))
        kb_sb_printf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        kb_sb_printf(out, "%.17g", json_real_value(v));
    else if (json_is_string(v))
        kb_sb_append(out, json_string_value(v), json_string_length(v));
    else if (json_is_boolean(v))
        kb_sb_printf(out, "%s", json_is_true(v) ? "True" : "False");
    else
        kb_sb_printf(out, "None");
}

int kb_replay_value_index(json_t *list, json_t *v)
{
    kb_sb a, b;
    kb_sb_init(&a);
    kb_sb_init(&b);
    kb_replay_value_text(v, &a);
    size_t i;
    json_t *x;
    int found = -1;
    json_array_foreach(list, i, x) {
        kb_replay_value_text(x, &b);
        if (a.len == b.len && memcmp(a.s, b.s, a.len) == 0) {
            found = (int)i;
            break;
        }
    }
    kb_sb_free(&a);
    kb_sb_free(&b);
    return found;
}

/* The level of text v on axis a, adding it when new; -2 out of memory. */
static int level_of(kb_replay_builder *b, int a, const char *v)
{
    for (int i = 0; i < b->n_vals[a]; i++)
        if (strcmp(b->vals[a][i], v) == 0)
            return i;
    char **nv = realloc(b->vals[a], (size_t)(b->n_vals[a] + 1) * sizeof *nv);
    if (!nv)
        return -2;
    b->vals[a] = nv;
    if (!(nv[b->n_vals[a]] = strdup(v)))
        return -2;
    return b->n_vals[a]++;
}

int kb_replay_declare(kb_replay_builder *b, int a, json_t *list)
{
    kb_sb t;
    kb_sb_init(&t);
    size_t i;
    json_t *x;
    int rc = 0;
    json_array_foreach(list, i, x) {
        kb_replay_value_text(x, &t);
        if (rc == 0 && level_of(b, a, t.s) < 0)
            rc = -1;
    }
    kb_sb_free(&t);
    return rc;
}

/* Room for one more configuration. 0, -2 out of memory. */
static int grow(kb_replay_builder *b)
{
    kb_tune_replay *r = b->r;
    if (r->n < b->cap)
        return 0;
    int cap = b->cap ? 2 * b->cap : 64;
    int *lv = realloc(r->level, (size_t)cap * (size_t)(r->n_axes ? r->n_axes : 1) * sizeof *lv);
    if (lv)
        r->level = lv;
    double *tm = lv ? realloc(r->time, (size_t)cap * sizeof *tm) : NULL;
    if (tm)
        r->time = tm;
    double *cs = tm ? realloc(r->cost_s, (size_t)cap * sizeof *cs) : NULL;
    if (cs)
        r->cost_s = cs;
    char **lb = cs ? realloc(r->label, (size_t)cap * sizeof *lb) : NULL;
    if (lb)
        r->label = lb;
    kb_case *cases = lb && b->with_cases ? realloc(r->cases, (size_t)cap * sizeof *cases) : NULL;
    if (cases)
        r->cases = cases;
    if (!lb || (b->with_cases && !cases))
        return -2;
    b->cap = cap;
    return 0;
}

int kb_replay_add_texts(kb_replay_builder *b, const char *const *vals, double t, double cost_s, kb_sb *err)
{
    kb_tune_replay *r = b->r;
    for (int a = 0; a < r->n_axes; a++)
        if (strlen(vals[a]) > VALUE_MAX) {
            kb_sb_printf(err, "the value of %s is longer than %d characters", r->axis[a], VALUE_MAX);
            return -1;
        }
    if (grow(b) != 0)
        return -2;
    kb_sb l;
    kb_sb_init(&l);
    for (int a = 0; a < r->n_axes; a++) {
        int lv = level_of(b, a, vals[a]);
        if (lv < 0) {
            kb_sb_free(&l);
            return -2;
        }
        r->level[(size_t)r->n * (size_t)r->n_axes + (size_t)a] = lv;
        kb_sb_printf(&l, "%s%s=%s", a ? "," : "", r->axis[a], vals[a]);
    }
    r->label[r->n] = l.s;
    r->cost_s[r->n] = cost_s;
    r->time[r->n++] = t;
    return 0;
}

int kb_replay_add(kb_replay_builder *b, json_t *const *vals, double t, double cost_s, kb_sb *err)
{
    kb_sb text[KB_TUNE_MAX_AXES];
    const char *v[KB_TUNE_MAX_AXES];
    for (int a = 0; a < b->r->n_axes; a++) {
        kb_sb_init(&text[a]);
        kb_replay_value_text(vals[a], &text[a]);
        v[a] = text[a].s;
    }
    int rc = kb_replay_add_texts(b, v, t, cost_s, err);
    for (int a = 0; a < b->r->n_axes; a++)
        kb_sb_free(&text[a]);
    return rc;
}

/* A value text as a number: 1 with *x, 0 when it is not one ("-" is not). */
static int numeric(const char *s, double *x)
{
    char *end;
    *x = strtod(s, &end);
    return *s && end != s && *end == 0 && isfinite(*x);
}

/* Order axis a's levels by value when every value is a number ("-" first); else mark it
 * categorical. 0, -2 out of memory. */
static int order_axis(kb_replay_builder *b, int a)
{
    kb_tune_replay *r = b->r;
    int nv = b->n_vals[a];
    double *key = malloc((size_t)(nv ? nv : 1) * sizeof *key);
    int *rank = malloc((size_t)(nv ? nv : 1) * sizeof *rank);
    if (!key || !rank) {
        free(key);
        free(rank);
        return -2;
    }
    int ordinal = a > 0 || strcmp(r->axis[0], "variant") != 0;
    for (int i = 0; i < nv && ordinal; i++)
        if (strcmp(b->vals[a][i], "-") == 0)
            key[i] = -INFINITY;
        else
            ordinal = numeric(b->vals[a][i], &key[i]);
    r->categorical[a] = (unsigned char)!ordinal;
    if (ordinal) {
        for (int i = 0; i < nv; i++) {   /* rank = how many values are smaller (ties: first seen) */
            rank[i] = 0;
            for (int j = 0; j < nv; j++)
                rank[i] += key[j] < key[i] || (key[j] == key[i] && j < i);
        }
        for (int c = 0; c < r->n; c++) {
            int *l = &r->level[(size_t)c * (size_t)r->n_axes + (size_t)a];
            *l = rank[*l];
        }
    }
    free(key);
    free(rank);
    return 0;
}

static int n_axes_cmp;
static const int *levels_cmp;

static int cmp_config(const void *x, const void *y)
{
    int i = *(const int *)x, j = *(const int *)y;
    return memcmp(&levels_cmp[(size_t)i * (size_t)n_axes_cmp], &levels_cmp[(size_t)j * (size_t)n_axes_cmp],
                  (size_t)n_axes_cmp * sizeof(int));
}

/* The first configuration that repeats another, -1 when none (-2 out of memory). */
static int duplicate(const kb_tune_replay *r)
{
    int *idx = malloc((size_t)(r->n ? r->n : 1) * sizeof *idx), dup = -1;
    if (!idx)
        return -2;
    for (int i = 0; i < r->n; i++)
        idx[i] = i;
    n_axes_cmp = r->n_axes;
    levels_cmp = r->level;
    qsort(idx, (size_t)r->n, sizeof *idx, cmp_config);
    for (int k = 1; k < r->n && dup < 0; k++)
        if (cmp_config(&idx[k - 1], &idx[k]) == 0)
            dup = idx[k] > idx[k - 1] ? idx[k] : idx[k - 1];
    free(idx);
    return dup;
}

int kb_replay_finish(kb_replay_builder *b, const char *path, kb_sb *err)
{
    kb_tune_replay *r = b->r;
    for (int a = 0; a < r->n_axes; a++)
        if (order_axis(b, a) != 0)
            return -2;
    int dup = duplicate(r), timed = 0;
    if (dup == -2)
        return -2;
    if (dup >= 0) {
        kb_sb_printf(err, "%s: configuration %.200s appears twice", path, r->label[dup]);
        return -1;
    }
    r->refused = r->failed = 0;
    for (int i = 0; i < r->n; i++) {
        r->refused += r->time[i] == KB_TUNE_REFUSED;
        r->failed += r->time[i] == INFINITY;
        timed += isfinite(r->time[i]);
    }
    for (int i = 0; r->cost_s && i < r->n; i++)
        if (isnan(r->cost_s[i])) {
            free(r->cost_s);
            r->cost_s = NULL;
        }
    if (timed == 0) {
        kb_sb_printf(err, "%s: no configuration has a time (%d configurations: %d failed, %d refused): nothing to "
                     "replay", path, r->n, r->failed, r->refused);
        return -1;
    }
    return 0;
}
