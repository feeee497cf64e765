/* export.c - JSON, a C header and Kernel Tuner's cache from the tuning choices (export.h). */
#include "tune/export.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* A param's value as JSON: a choice param's name, else the integer. */
static json_t *param_json(const kb_tune_param *p)
{
    return p->choice[0] ? json_string(p->choice) : json_integer((json_int_t)p->value);
}

static json_t *params_json(const kb_tune_config_desc *cfg)
{
    json_t *o = json_object();
    for (int i = 0; i < cfg->n_params; i++)
        json_object_set_new(o, cfg->params[i].name, param_json(&cfg->params[i]));
    return o;
}

static json_t *gpu_json(const kb_tune_key *k)
{
    json_t *gpu = json_object();
    json_object_set_new(gpu, "name", json_string(k->device));
    json_object_set_new(gpu, "sm", k->emulator ? json_null() : json_integer(k->sm));   /* the emulator is no GPU */
    json_object_set_new(gpu, "sm_count", k->emulator ? json_null() : json_integer(k->sm_count));
    json_object_set_new(gpu, "arch", json_integer(k->arch));
    json_object_set_new(gpu, "silicon", json_string(k->silicon));
    return gpu;
}

static json_t *choice_json(const kb_tune_choice_row *c)
{
    const kb_tune_problem_desc *pp = &c->prob;
    json_t *o = json_object(), *dims = json_array();
    for (int d = 0; d < pp->n_dims; d++)
        json_array_append_new(dims, json_integer((json_int_t)pp->dims[d]));
    json_object_set_new(o, "problem", json_string(c->problem));
    json_object_set_new(o, "family", json_string(pp->family));
    json_object_set_new(o, "op", json_string(pp->op));
    json_object_set_new(o, "dtype", json_string(pp->dtype));
    json_object_set_new(o, "dims", dims);
    json_object_set_new(o, "pad", json_integer(pp->pad));
    json_object_set_new(o, "launch", json_string(pp->launch));
    json_object_set_new(o, "variant", json_string(c->cfg.variant));
    json_object_set_new(o, "params", params_json(&c->cfg));
    json_object_set_new(o, "case_id", json_string(c->case_id));
    json_object_set_new(o, "median_us", real_or_null(c->median_us));
    json_object_set_new(o, "interval_us", json_pack("[oo]", real_or_null(c->lo_us), real_or_null(c->hi_us)));
    json_object_set_new(o, "confidence", json_string(c->noisy ? "noise" : c->tie ? "tie" : "clear"));
    if (c->noisy) {   /* no winner: the leader is kept for the record, never as a choice */
        json_object_set_new(o, "no_winner", json_string("noise: the leader's noise is above the bound"));
        json_object_set_new(o, "leader_variant", json_incref(json_object_get(o, "variant")));
        json_object_set_new(o, "variant", json_null());
        json_object_set_new(o, "leader_params", json_incref(json_object_get(o, "params")));
        json_object_set_new(o, "params", json_null());
    }
    json_object_set_new(o, "within_noise", json_integer(c->n_tied));
    json_object_set_new(o, "runners_up", json_string(c->tied));
    json_object_set_new(o, "timing", json_string(c->key.emulator ? "cpu" : "gpu"));
    json_object_set_new(o, "emulator", json_boolean(c->key.emulator));
    json_object_set_new(o, "cpu_timing", json_boolean(c->key.emulator));
    json_object_set_new(o, "gpu", gpu_json(&c->key));
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
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, choice_json(&rows[i]));
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

/* One cache entry of e (its params) keyed by the comma-joined values; each value joins its
 * param's list in tp (first-seen order). */
static void kt_entry(json_t *tp, json_t *cache, const kb_tune_entry *e)
{
    kb_sb k;
    kb_sb_init(&k);
    json_t *entry = json_object();
    for (int i = 0; i < e->cfg.n_params; i++) {
        const kb_tune_param *p = &e->cfg.params[i];
        json_t *v = param_json(p), *list = json_object_get(tp, p->name), *x;
        size_t j;
        int seen = 0;
        json_array_foreach(list, j, x) seen |= json_equal(x, v);
        if (!seen && list)
            json_array_append(list, v);
        if (p->choice[0])
            kb_sb_printf(&k, "%s%s", k.len ? "," : "", p->choice);
        else
            kb_sb_printf(&k, "%s%lld", k.len ? "," : "", (long long)p->value);
        json_object_set_new(entry, p->name, v);
    }
    if (strcmp(e->status, "ok") == 0 && isfinite(e->median_us))
        json_object_set_new(entry, "time", json_real(e->median_us / 1000.0));   /* Kernel Tuner: ms */
    else
        json_object_set_new(entry, "time", json_string(kt_failure(e)));
    json_object_set_new(entry, "kbench_case_id", json_string(e->case_id));
    json_object_set_new(cache, k.s ? k.s : "", entry);
    kb_sb_free(&k);
}

kb_status kb_tune_export_kerneltuner(const kb_tune_choice_row *c, const kb_tune_entry *e, int n, FILE *out,
                                     kb_sb *err)
{
    const kb_tune_problem_desc *pp = &c->prob;
    json_t *doc = json_object(), *keys = json_array(), *tp = json_object(), *cache = json_object();
    for (int i = 0; i < c->cfg.n_params; i++) {
        json_array_append_new(keys, json_string(c->cfg.params[i].name));
        json_object_set_new(tp, c->cfg.params[i].name, json_array());
    }
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].cfg.variant, c->cfg.variant) == 0)
            kt_entry(tp, cache, &e[i]);
    json_t *size = json_array();
    for (int d = 0; d < pp->n_dims; d++)
        json_array_append_new(size, json_integer((json_int_t)pp->dims[d]));
    kb_sb kname;
    kb_sb_init(&kname);
    kb_sb_printf(&kname, "%s/%s %s%s", pp->op, c->cfg.variant, pp->dtype,
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
    return dump(doc, out, err);
}

/* ---- the C header ---- */

static const char header_head[] =
    "\n#include <string.h>\n\n"
    "/* A param of a configuration: a choice param's value also by name (NULL for an integer). */\n"
    "typedef struct { const char *name; long long value; const char *choice; } kbench_tuned_param;\n\n"
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
    "    int sm, sm_count;         /* the GPU it was tuned on: compute capability x10, SMs (0, 0: the emulator) */\n"
    "    int arch;                 /* what its kernels were compiled for (x10) */\n"
    "    const char *gpu, *driver, *toolchain, *tuned_at;\n"
    "    double median_us, lo_us, hi_us; /* [us] the median and its 95% interval */\n"
    "    const char *confidence;   /* clear: beyond the noise of every other; tie: not */\n"
    "    int cpu_timing;           /* 1: measured on kbench's CPU emulator - NOT a GPU choice */\n"
    "} kbench_tuned;\n\n";

static const char header_lookup[] =
    "#define KBENCH_TUNED_COUNT ((int)(sizeof kbench_tuned_table / sizeof kbench_tuned_table[0]))\n\n"
    "/* kbench_tuned_lookup's flags: also entries measured on kbench's CPU emulator (cpu_timing = 1;\n"
    " * CPU timings, not GPU choices). Without it they are never returned. */\n"
    "#define KBENCH_TUNED_ALLOW_CPU 1u\n\n"
    "#ifndef KBENCH_TUNED_MAX_SHAPE_DISTANCE\n"
    "/* The farthest tuned shape a lookup falls back to, in kbench_tuned_shape_distance: 1.0 is one\n"
    " * dim at twice (or half) its tuned size, or three dims each within 1.33x. A tile tuned for\n"
    " * 64x64x64 says nothing of 2048x4096x4096 (distance 157). Define it before including this\n"
    " * header to change it. */\n"
    "#define KBENCH_TUNED_MAX_SHAPE_DISTANCE 1.0\n"
    "#endif\n\n"
    "/* How a lookup matched: the entry's shape distance (0: the tuned shape itself), whether it\n"
    " * was tuned on this compute capability, and how far its SM count is. With no entry\n"
    " * returned, shape_distance is the nearest refused one's (beyond the bound), or -1 when\n"
    " * no entry has this op, dtype and number of dims. */\n"
    "typedef struct { double shape_distance; int same_sm; int sm_count_delta; } kbench_tuned_match;\n\n"
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
    "/* The entry for op and dtype at dims on a GPU (sm, sm_count), or NULL: among the entries\n"
    " * within KBENCH_TUNED_MAX_SHAPE_DISTANCE of dims (cpu_timing ones only with\n"
    " * KBENCH_TUNED_ALLOW_CPU in flags), those of the same sm first (the nearest SM count),\n"
    " * else any GPU's (the default); among them the nearest shape. match (may be NULL) says\n"
    " * how it matched. */\n"
    "static inline const kbench_tuned *kbench_tuned_lookup(const char *op, const char *dtype, const long long *dims,\n"
    "                                                      int n_dims, int sm, int sm_count, unsigned flags,\n"
    "                                                      kbench_tuned_match *match)\n{\n"
    "    const kbench_tuned *best = NULL;\n"
    "    double best_cost = 0, best_dist = 0, nearest = -1;\n"
    "    for (int i = 0; i < KBENCH_TUNED_COUNT; i++) {\n"
    "        const kbench_tuned *t = &kbench_tuned_table[i];\n"
    "        if (strcmp(t->op, op) != 0 || strcmp(t->dtype, dtype) != 0 || t->n_dims != n_dims)\n"
    "            continue;\n"
    "        if (t->cpu_timing && !(flags & KBENCH_TUNED_ALLOW_CPU))\n"
    "            continue;\n"
    "        double dist = kbench_tuned_shape_distance(t->dims, dims, n_dims);\n"
    "        if (nearest < 0 || dist < nearest)\n"
    "            nearest = dist;\n"
    "        if (!(dist <= KBENCH_TUNED_MAX_SHAPE_DISTANCE))\n"
    "            continue;\n"
    "        int dsm = t->sm_count > sm_count ? t->sm_count - sm_count : sm_count - t->sm_count;\n"
    "        double cost = (t->sm == sm ? 0.0 : 1e12) + 1e6 * dist + dsm;\n"
    "        if (!best || cost < best_cost) {\n"
    "            best = t;\n"
    "            best_cost = cost;\n"
    "            best_dist = dist;\n"
    "        }\n"
    "    }\n"
    "    if (match) {\n"
    "        match->shape_distance = best ? best_dist : nearest;\n"
    "        match->same_sm = best && best->sm == sm;\n"
    "        match->sm_count_delta = !best ? 0 : best->sm_count > sm_count ? best->sm_count - sm_count\n"
    "                                                                      : sm_count - best->sm_count;\n"
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

/* The entry's params: { name, value, choice }..., or one empty param when it has none (an
 * empty initializer is not C11). */
static void header_params(FILE *out, const kb_tune_config_desc *cfg)
{
    fprintf(out, ", %d, { ", cfg->n_params);
    for (int i = 0; i < cfg->n_params; i++) {
        const kb_tune_param *p = &cfg->params[i];
        fprintf(out, "%s{ ", i ? ", " : "");
        c_str(out, p->name);
        fprintf(out, ", %lldLL, ", (long long)p->value);
        if (p->choice[0])
            c_str(out, p->choice);
        else
            fputs("NULL", out);
        fputs(" }", out);
    }
    fputs(cfg->n_params ? " }" : "{ NULL, 0LL, NULL } }", out);
}

static void header_entry(FILE *out, const kb_tune_choice_row *c)
{
    const kb_tune_problem_desc *pp = &c->prob;
    fprintf(out, "    { ");
    c_str(out, c->problem);
    fprintf(out, ", ");
    c_str(out, pp->op);
    fprintf(out, ", ");
    c_str(out, pp->dtype);
    fprintf(out, ", %d, { ", pp->n_dims);
    for (int d = 0; d < pp->n_dims; d++)
        fprintf(out, "%s%lldLL", d ? ", " : "", (long long)pp->dims[d]);
    fprintf(out, "%s }, %d, ", pp->n_dims ? "" : "0", pp->pad);
    c_str(out, pp->launch);
    fputs(",\n      ", out);
    c_str(out, c->cfg.variant);
    header_params(out, &c->cfg);
    fprintf(out, ",\n      %d, %d, %d, ", c->key.sm, c->key.sm_count, c->key.arch);
    c_str(out, c->key.device);
    fprintf(out, ", ");
    c_str(out, c->key.driver);
    fprintf(out, ", ");
    c_str(out, c->key.toolchain);
    fprintf(out, ", ");
    c_str(out, c->time);
    fprintf(out, ",\n      %.6g, %.6g, %.6g, \"%s\", %d },\n", finite_or_0(c->median_us), finite_or_0(c->lo_us),
            finite_or_0(c->hi_us), c->tie ? "tie" : "clear", c->key.emulator);
}

/* The header's opening comment: what it is and where every entry was measured. */
static void header_comment(FILE *out, const kb_tune_choice_row *rows, int n)
{
    int cpu = 0, noisy = 0;
    for (int i = 0; i < n; i++) {
        noisy += rows[i].noisy;
        cpu += rows[i].key.emulator && !rows[i].noisy;
    }
    fprintf(out, "/* kbench_tuned.h - tile configurations chosen by `kbench tune`, written by `kbench export\n"
                 " * --format header`; do not edit. %d entries. Each keeps where it was measured (GPU, driver,\n"
                 " * toolchain, time) and how sure the choice is (median, 95%% interval, clear or tie).\n", n - noisy);
    if (noisy)
        fprintf(out, " * %d problem%s without a winner (verdict noise: the leader's noise above the bound) %s left out.\n",
                noisy, noisy == 1 ? "" : "s", noisy == 1 ? "is" : "are");
    if (cpu)
        fprintf(out, " * WARNING: %d entries were measured on kbench's CPU emulator (cpu_timing = 1, sm 0): CPU\n"
                     " * timings, not GPU measurements - they are not GPU choices, and a lookup returns them only\n"
                     " * with KBENCH_TUNED_ALLOW_CPU.\n", cpu);
    fprintf(out, " * Use: kbench_tuned_lookup(op, dtype, dims, n_dims, sm, sm_count, flags, &match), then\n"
                 " * kbench_tuned_param_value(t, \"BM\", default); NULL when no entry within\n"
                 " * KBENCH_TUNED_MAX_SHAPE_DISTANCE of the shape (match.shape_distance says how far). */\n");
}

kb_status kb_tune_export_header(const kb_tune_choice_row *rows, int n, FILE *out, kb_sb *err)
{
    int winners = 0;
    for (int i = 0; i < n; i++)
        winners += !rows[i].noisy;
    if (n > 0 && winners == 0) {   /* none at all is an empty table; only noise is refused */
        kb_sb_printf(err, "no winner to export: every problem's leader is within its noise (verdict noise)");
        return KB_ERR_INPUT;
    }
    header_comment(out, rows, n);
    fprintf(out, "#ifndef KBENCH_TUNED_H\n#define KBENCH_TUNED_H\n\n#include <stddef.h>\n\n"
                 "#define KBENCH_TUNED_MAX_PARAMS %d\n", KB_MAX_PARAMS);
    fputs(header_head, out);
    fputs("static const kbench_tuned kbench_tuned_table[] = {\n", out);
    int last = -1;
    for (int i = 0; i < n; i++) {
        const kb_tune_choice_row *c = &rows[i];
        if (c->noisy) {
            fprintf(out, "    /* no winner (noise): ");
            for (const char *p = c->problem; *p; p++)
                fputc(*p == '*' || *p == '/' ? '_' : *p, out);
            fprintf(out, " */\n");
            continue;
        }
        const kb_tune_choice_row *prev = last >= 0 ? &rows[last] : NULL;   /* the last entry written */
        if (!prev || c->key.sm != prev->key.sm || c->key.sm_count != prev->key.sm_count ||
            strcmp(c->key.device, prev->key.device) != 0) {
            if (c->key.emulator)
                fprintf(out, "    /* ---- %s: CPU emulator timings, sm 0 (no GPU): NOT GPU choices ---- */\n",
                        c->key.device);
            else
                fprintf(out, "    /* ---- sm_%d, %d SMs: %s ---- */\n", c->key.sm, c->key.sm_count, c->key.device);
        }
        if (c->lookup[0])
            fprintf(out, "    /* %s */\n", c->lookup);
        header_entry(out, c);
        last = i;
    }
    if (winners == 0)
        fputs("    { \"\", \"\", \"\", 0, { 0 }, 0, \"\", \"\", 0, { { NULL, 0LL, NULL } }, 0, 0, 0, \"\", \"\", \"\", "
              "\"\", 0, 0, 0, \"\", 0 },   /* no entry: an empty table is not C11 */\n", out);
    fputs("};\n\n", out);
    fputs(header_lookup, out);
    if (ferror(out)) {
        kb_sb_printf(err, "write error");
        return KB_ERR_IO;
    }
    return KB_OK;
}
