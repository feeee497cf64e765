/* export.c - JSON, a C header and Kernel Tuner's cache from the tuning choices (export.h). */
#include "tune/export.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int kb_tune_problem_parse(const char *key, kb_tune_problem_parts *out)
{
    memset(out, 0, sizeof *out);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", key);
    char *seg[5], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(buf, "/", &save); t && n < 5; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    if (n != 5 || strncmp(seg[3], "pad", 3) != 0)
        return -1;
    snprintf(out->op, sizeof out->op, "%s", seg[0]);
    snprintf(out->family, sizeof out->family, "%.*s", (int)strcspn(seg[0], "("), seg[0]);
    snprintf(out->dtype, sizeof out->dtype, "%s", seg[1]);
    for (char *d = seg[2]; *d && out->n_dims < 4; out->n_dims++) {
        char *end;
        out->dims[out->n_dims] = strtoll(d, &end, 10);
        if (end == d)
            return -1;
        d = *end == 'x' ? end + 1 : end;
    }
    out->pad = atoi(seg[3] + 3);
    snprintf(out->launch, sizeof out->launch, "%s", seg[4]);
    return out->n_dims > 0 ? 0 : -1;
}

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *choice_json(const kb_tune_choice_row *c, const kb_tune_problem_parts *pp)
{
    json_t *params = json_loads(c->params, 0, NULL);
    json_t *variant = params ? json_object_get(params, "variant") : NULL;
    json_t *o = json_object(), *dims = json_array(), *gpu = json_object();
    for (int d = 0; d < pp->n_dims; d++)
        json_array_append_new(dims, json_integer(pp->dims[d]));
    json_object_set_new(o, "problem", json_string(c->problem));
    json_object_set_new(o, "family", json_string(pp->family));
    json_object_set_new(o, "op", json_string(pp->op));
    json_object_set_new(o, "dtype", json_string(pp->dtype));
    json_object_set_new(o, "dims", dims);
    json_object_set_new(o, "pad", json_integer(pp->pad));
    json_object_set_new(o, "launch", json_string(pp->launch));
    json_object_set_new(o, "variant", variant ? json_incref(variant) : json_null());
    if (params)
        json_object_del(params, "variant");
    json_object_set_new(o, "params", params ? params : json_object());
    json_object_set_new(o, "case_id", json_string(c->case_id));
    json_object_set_new(o, "median_us", real_or_null(c->median_us));
    json_object_set_new(o, "interval_us", json_pack("[oo]", real_or_null(c->lo_us), real_or_null(c->hi_us)));
    json_object_set_new(o, "confidence", json_string(c->noisy ? "noise" : c->tie ? "tie" : "clear"));
    if (c->noisy) {   /* no winner: the leader is kept for the record, never as a choice */
        json_object_set_new(o, "no_winner", json_string("noise: the leader's noise is above the bound"));
        json_object_set_new(o, "leader_variant", json_incref(json_object_get(o, "variant")));
        json_object_set_new(o, "variant", json_null());
    }
    json_object_set_new(o, "within_noise", json_integer(c->n_tied));
    json_object_set_new(o, "runners_up", json_string(c->tied));
    json_object_set_new(o, "timing", json_string(c->key.emulator ? "cpu" : "gpu"));
    json_object_set_new(o, "emulator", json_boolean(c->key.emulator));
    json_object_set_new(gpu, "name", json_string(c->key.device));
    json_object_set_new(gpu, "sm", json_integer(c->key.sm));
    json_object_set_new(gpu, "sm_count", json_integer(c->key.sm_count));
    json_object_set_new(gpu, "silicon", json_string(c->key.silicon));
    json_object_set_new(o, "gpu", gpu);
    json_object_set_new(o, "driver", json_string(c->key.driver));
    json_object_set_new(o, "toolchain", json_string(c->key.toolchain));
    json_object_set_new(o, "source_hash", json_string(c->source));
    json_object_set_new(o, "strategy", json_string(c->strategy));
    json_object_set_new(o, "evaluations", json_integer(c->evaluations));
    json_object_set_new(o, "space", json_integer(c->space));
    json_object_set_new(o, "time", json_string(c->time));
    if (c->lookup[0])
        json_object_set_new(o, "lookup", json_string(c->lookup));
    return o;
}

static kb_status dump(json_t *doc, FILE *out, kb_sb *err)
{
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF) {
        kb_sb_printf(err, "write error");
        return KB_ERR_IO;
    }
    return KB_OK;
}

kb_status kb_tune_export_json(const kb_tune_choice_row *rows, int n, FILE *out, kb_sb *err)
{
    json_t *doc = json_object(), *arr = json_array();
    json_object_set_new(doc, "kbench_tuning", json_integer(1));
    for (int i = 0; i < n; i++) {
        kb_tune_problem_parts pp;
        if (kb_tune_problem_parse(rows[i].problem, &pp) != 0) {
            kb_sb_printf(err, "'%s' is not a problem key", rows[i].problem);
            json_decref(arr);
            json_decref(doc);
            return KB_ERR_INPUT;
        }
        json_array_append_new(arr, choice_json(&rows[i], &pp));
    }
    json_object_set_new(doc, "choices", arr);
    return dump(doc, out, err);
}

/* Kernel Tuner's word for a configuration that has no time. */
static const char *kt_failure(const kb_tune_entry *e)
{
    if (strcmp(e->status, "skipped") == 0)
        return "InvalidConfig";
    return strcmp(e->status, "compile_error") == 0 ? "CompilationFailedConfig" : "RuntimeFailedConfig";
}

/* One cache entry of e (its params without the variant) keyed by the comma-joined values;
 * each value joins its param's list in tp (first-seen order). */
static void kt_entry(json_t *tp, json_t *cache, const kb_tune_entry *e, json_t *params)
{
    kb_sb k;
    kb_sb_init(&k);
    json_t *entry = json_object();
    const char *name;
    json_t *v;
    json_object_foreach(params, name, v) {
        json_t *list = json_object_get(tp, name);
        size_t i;
        json_t *x;
        int seen = 0;
        json_array_foreach(list, i, x) seen |= json_equal(x, v);
        if (!seen)
            json_array_append(list, v);
        if (json_is_integer(v))
            kb_sb_printf(&k, "%s%lld", k.len ? "," : "", (long long)json_integer_value(v));
        else
            kb_sb_printf(&k, "%s%s", k.len ? "," : "", json_string_value(v));
        json_object_set(entry, name, v);
    }
    if (strcmp(e->status, "ok") == 0 && isfinite(e->median_us))
        json_object_set_new(entry, "time", json_real(e->median_us / 1000.0));   /* Kernel Tuner: ms */
    else
        json_object_set_new(entry, "time", json_string(kt_failure(e)));
    json_object_set_new(entry, "kbench_case_id", json_string(e->case_id));
    json_object_set_new(cache, k.s, entry);
    kb_sb_free(&k);
}

kb_status kb_tune_export_kerneltuner(const kb_tune_choice_row *c, const kb_tune_entry *e, int n, FILE *out,
                                     kb_sb *err)
{
    kb_tune_problem_parts pp;
    json_t *win = json_loads(c->params, 0, NULL);
    if (kb_tune_problem_parse(c->problem, &pp) != 0 || !json_is_object(win)) {
        kb_sb_printf(err, "'%s' is not a problem key with params", c->problem);
        json_decref(win);
        return KB_ERR_INPUT;
    }
    const char *variant = json_string_value(json_object_get(win, "variant"));
    json_t *doc = json_object(), *keys = json_array(), *tp = json_object(), *cache = json_object();
    const char *name;
    json_t *v;
    json_object_foreach(win, name, v) {
        if (strcmp(name, "variant") != 0) {
            json_array_append_new(keys, json_string(name));
            json_object_set_new(tp, name, json_array());
        }
    }
    for (int i = 0; i < n; i++) {
        json_t *p = json_loads(e[i].params, 0, NULL);
        const char *pv = json_string_value(json_object_get(p, "variant"));
        if (p && pv && variant && strcmp(pv, variant) == 0) {
            json_object_del(p, "variant");
            kt_entry(tp, cache, &e[i], p);
        }
        json_decref(p);
    }
    json_t *size = json_array();
    for (int d = 0; d < pp.n_dims; d++)
        json_array_append_new(size, json_integer(pp.dims[d]));
    kb_sb kname;
    kb_sb_init(&kname);
    kb_sb_printf(&kname, "%s/%s %s%s", pp.op, variant ? variant : "?", pp.dtype,
                 c->key.emulator ? " (kbench emulator: CPU timings)" : "");
    json_object_set_new(doc, "schema_version", json_string("1.0.0"));
    json_object_set_new(doc, "device_name", json_string(c->key.device));
    json_object_set_new(doc, "kernel_name", json_string(kname.s));
    json_object_set_new(doc, "problem_size", size);
    json_object_set_new(doc, "tune_params_keys", keys);
    json_object_set_new(doc, "tune_params", tp);
    json_object_set_new(doc, "objective", json_string("time"));
    json_object_set_new(doc, "cache", cache);
    kb_sb_free(&kname);
    json_decref(win);
    return dump(doc, out, err);
}

/* ---- the C header ---- */

static const char header_head[] =
    "\n#include <string.h>\n\n"
    "typedef struct { const char *name; long long value; } kbench_tuned_param;\n\n"
    "typedef struct {\n"
    "    const char *problem;      /* kbench's problem key */\n"
    "    const char *op;           /* family and the params that define the operation */\n"
    "    const char *dtype;\n"
    "    int n_dims;\n"
    "    long long dims[4];\n"
    "    int pad;\n"
    "    const char *launch;       /* eager or graph */\n"
    "    const char *variant;      /* the chosen configuration: variant and params */\n"
    "    int n_params;\n"
    "    kbench_tuned_param params[KBENCH_TUNED_MAX_PARAMS];\n"
    "    int sm, sm_count;         /* the GPU it was tuned on: compute capability x10, SMs */\n"
    "    const char *gpu, *driver, *toolchain, *tuned_at;\n"
    "    double median_us, lo_us, hi_us; /* [us] the median and its 95% interval */\n"
    "    const char *confidence;   /* clear: beyond the noise of every other; tie: not */\n"
    "    int cpu_timing;           /* 1: measured on kbench's CPU emulator - NOT a GPU choice */\n"
    "} kbench_tuned;\n\n";

static const char header_tail[] =
    "#define KBENCH_TUNED_COUNT ((int)(sizeof kbench_tuned_table / sizeof kbench_tuned_table[0]))\n\n"
    "/* The value of param name in t, or def. */\n"
    "static inline long long kbench_tuned_param_value(const kbench_tuned *t, const char *name, long long def)\n{\n"
    "    for (int i = 0; t && i < t->n_params; i++)\n"
    "        if (strcmp(t->params[i].name, name) == 0)\n"
    "            return t->params[i].value;\n"
    "    return def;\n}\n\n"
    "/* How far shape a is from b: the sum over dims of max(a/b, b/a) - 1 (0: the same shape). */\n"
    "static inline double kbench_tuned_shape_distance(const long long *a, const long long *b, int n)\n{\n"
    "    double d = 0;\n"
    "    for (int i = 0; i < n; i++)\n"
    "        d += (a[i] > b[i] ? (double)a[i] / (double)b[i] : (double)b[i] / (double)a[i]) - 1.0;\n"
    "    return d;\n}\n\n"
    "/* The entry for op and dtype at dims on a GPU (sm, sm_count): entries of the same sm first\n"
    " * (nearest SM count), else any GPU (the default); among them the exact shape, else the\n"
    " * nearest tuned shape. NULL when no entry has this op and dtype. */\n"
    "static inline const kbench_tuned *kbench_tuned_lookup(const char *op, const char *dtype, const long long *dims,\n"
    "                                                      int n_dims, int sm, int sm_count)\n{\n"
    "    const kbench_tuned *best = NULL;\n"
    "    double best_cost = 0;\n"
    "    for (int i = 0; i < KBENCH_TUNED_COUNT; i++) {\n"
    "        const kbench_tuned *t = &kbench_tuned_table[i];\n"
    "        if (strcmp(t->op, op) != 0 || strcmp(t->dtype, dtype) != 0 || t->n_dims != n_dims)\n"
    "            continue;\n"
    "        int dsm = t->sm_count > sm_count ? t->sm_count - sm_count : sm_count - t->sm_count;\n"
    "        double cost = (t->sm == sm ? 0.0 : 1e12) + 1e6 * kbench_tuned_shape_distance(t->dims, dims, n_dims) + dsm;\n"
    "        if (!best || cost < best_cost) {\n"
    "            best = t;\n"
    "            best_cost = cost;\n"
    "        }\n"
    "    }\n"
    "    return best;\n}\n\n#endif /* KBENCH_TUNED_H */\n";

/* s as a C string literal's contents. */
static void c_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if ((unsigned char)*s >= 32 && *s != 127)
            fputc(*s, out);
    }
    fputc('"', out);
}

static double finite_or_0(double v) { return isfinite(v) ? v : 0.0; }

static void header_entry(FILE *out, const kb_tune_choice_row *c, const kb_tune_problem_parts *pp, json_t *params)
{
    fprintf(out, "    { ");
    c_str(out, c->problem);
    fprintf(out, ", ");
    c_str(out, pp->op);
    fprintf(out, ", \"%s\", %d, { ", pp->dtype, pp->n_dims);
    for (int d = 0; d < pp->n_dims; d++)
        fprintf(out, "%s%lldLL", d ? ", " : "", pp->dims[d]);
    fprintf(out, " }, %d, \"%s\",\n      ", pp->pad, pp->launch);
    const char *variant = json_string_value(json_object_get(params, "variant"));
    c_str(out, variant ? variant : "");
    const char *name;
    json_t *v;
    int n_int = 0, first = 1;
    json_object_foreach(params, name, v)
        n_int += strcmp(name, "variant") != 0 && json_is_integer(v);   /* what the list below holds */
    fprintf(out, ", %d, { ", n_int);
    json_object_foreach(params, name, v) {
        if (strcmp(name, "variant") == 0 || !json_is_integer(v))
            continue;
        fprintf(out, "%s{ \"%s\", %lldLL }", first ? "" : ", ", name, (long long)json_integer_value(v));
        first = 0;
    }
    fprintf(out, " },\n      %d, %d, ", c->key.sm, c->key.sm_count);
    c_str(out, c->key.device);
    fprintf(out, ", ");
    c_str(out, c->key.driver);
    fprintf(out, ", ");
    c_str(out, c->key.toolchain);
    fprintf(out, ", \"%s\",\n      %.6g, %.6g, %.6g, \"%s\", %d },\n", c->time, finite_or_0(c->median_us),
            finite_or_0(c->lo_us), finite_or_0(c->hi_us), c->tie ? "tie" : "clear", c->key.emulator);
}

/* The header's opening comment: what it is and where every entry was measured. */
static void header_comment(FILE *out, const kb_tune_choice_row *rows, int n)
{
    int cpu = 0;
    for (int i = 0; i < n; i++)
        cpu += rows[i].key.emulator;
    fprintf(out, "/* kbench_tuned.h - tile configurations chosen by `kbench tune`, written by `kbench export\n"
                 " * --format header`; do not edit. %d entries. Each keeps where it was measured (GPU, driver,\n"
                 " * toolchain, time) and how sure the choice is (median, 95%% interval, clear or tie).\n", n);
    if (cpu)
        fprintf(out, " * WARNING: %d entries were measured on kbench's CPU emulator (cpu_timing = 1): CPU\n"
                     " * timings, not GPU measurements - they are not GPU choices.\n", cpu);
    fprintf(out, " * Use: kbench_tuned_lookup(op, dtype, dims, n_dims, sm, sm_count), then\n"
                 " * kbench_tuned_param_value(t, \"BM\", default). */\n");
}

kb_status kb_tune_export_header(const kb_tune_choice_row *rows, int n, FILE *out, kb_sb *err)
{
    int winners = 0;
    for (int i = 0; i < n; i++)
        winners += !rows[i].noisy;
    if (winners == 0) {
        kb_sb_printf(err, "no winner to export: %s", n ? "every problem's leader is within its noise (verdict noise)"
                                                       : "no choice");
        return KB_ERR_INPUT;
    }
    header_comment(out, rows, n);
    fprintf(out, "#ifndef KBENCH_TUNED_H\n#define KBENCH_TUNED_H\n\n#define KBENCH_TUNED_MAX_PARAMS %d\n", KB_MAX_PARAMS);
    fputs(header_head, out);
    fputs("static const kbench_tuned kbench_tuned_table[] = {\n", out);
    for (int i = 0; i < n; i++) {
        const kb_tune_choice_row *c = &rows[i];
        if (c->noisy) {
            fprintf(out, "    /* no winner (noise): ");
            for (const char *p = c->problem; *p; p++)
                fputc(*p == '*' || *p == '/' ? '_' : *p, out);
            fprintf(out, " */\n");
            continue;
        }
        kb_tune_problem_parts pp;
        json_t *params = json_loads(c->params, 0, NULL);
        if (kb_tune_problem_parse(c->problem, &pp) != 0 || !json_is_object(params) || json_object_size(params) > 17) {
            kb_sb_printf(err, "'%s': not a problem key with at most 16 params", c->problem);
            json_decref(params);
            return KB_ERR_INPUT;
        }
        if (i == 0 || c->key.sm != rows[i - 1].key.sm || c->key.sm_count != rows[i - 1].key.sm_count ||
            strcmp(c->key.device, rows[i - 1].key.device) != 0)
            fprintf(out, "    /* ---- sm_%d, %d SMs: %s%s ---- */\n", c->key.sm, c->key.sm_count, c->key.device,
                    c->key.emulator ? " (CPU emulator timings)" : "");
        if (c->lookup[0])
            fprintf(out, "    /* %s */\n", c->lookup);
        header_entry(out, c, &pp, params);
        json_decref(params);
    }
    fputs("};\n\n", out);
    fputs(header_tail, out);
    if (ferror(out)) {
        kb_sb_printf(err, "write error");
        return KB_ERR_IO;
    }
    return KB_OK;
}
