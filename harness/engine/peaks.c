/* peaks.c - datasheet peaks (data/peaks.json) matched by device name, clock-based
 * peaks from the device attributes, and their description for `kbench devices`. */
#include "engine/peaks.h"

#include "core/fsutil.h"
#include "core/paths.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>


/* Dense ops per clock per SM (FMA = 2), docs/references.md "GPU peaks": sm_80 from the A100
 * whitepaper, sm_89 from the Ada whitepaper (L4/L40S), sm_90 from the H100 whitepaper.
 * Other architectures are left out rather than guessed. */
static const struct { int sm; int ops[KB_DT_COUNT]; } ops_table[] = {
    /*          fp32  tf32  fp16  bf16  int8  e4m3  e5m2 */
    { 80, {     128, 1024, 2048, 2048, 4096,    0,    0 } },
    { 89, {     256,  512, 1024, 1024, 2048, 2048, 2048 } },
    { 90, {     256, 2048, 4096, 4096, 8192, 8192, 8192 } },
};

int kb_peaks_ops_per_clock(int sm, kb_dtype dt)
{
    if ((unsigned)dt >= KB_DT_COUNT)
        return 0;
    for (size_t i = 0; i < sizeof ops_table / sizeof ops_table[0]; i++)
        if (ops_table[i].sm == sm)
            return ops_table[i].ops[dt];
    return 0;
}

const char *kb_peaks_default_path(void)
{
    const char *env = getenv("KBENCH_PEAKS");
    if (env && *env)
        return env;
    static char path[4096];
    snprintf(path, sizeof path, "%s/data/peaks.json", kb_data_root());
    return path;
}

/* " nvidia a100 sxm4 80gb ": lower case, every run of non-alphanumerics one space,
 * padded with spaces so that a phrase matches whole tokens (" l4 " is not in " l40s "). */
static void normalise(const char *in, char *out, size_t n)
{
    size_t o = 0;
    if (n < 3) { if (n) out[0] = 0; return; }
    out[o++] = ' ';
    for (const char *p = in; *p && o + 2 < n; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c))
            out[o++] = (char)tolower(c);
        else if (out[o - 1] != ' ')
            out[o++] = ' ';
    }
    if (out[o - 1] != ' ')
        out[o++] = ' ';
    out[o] = 0;
}

/* Does any phrase of the JSON array occur, as whole tokens, in the normalised name? */
static int any_phrase(json_t *arr, const char *name_norm)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        char ph[160];
        if (!json_is_string(v))
            continue;
        normalise(json_string_value(v), ph, sizeof ph);
        if (strlen(ph) > 2 && strstr(name_norm, ph))
            return 1;
    }
    return 0;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* Fill the datasheet part of p from entry g. */
static void take_sheet(kb_peaks *p, json_t *g)
{
    p->have_sheet = 1;
    copy_str(p->sku, sizeof p->sku, json_string_value(json_object_get(g, "sku")));
    copy_str(p->source, sizeof p->source, json_string_value(json_object_get(g, "source")));
    p->sheet_gbps = json_number_value(json_object_get(g, "mem_gbps"));
    p->tensor_mhz = json_number_value(json_object_get(g, "tensor_mhz"));
    json_t *t = json_object_get(g, "tflops");
    const char *key;
    json_t *v;
    json_object_foreach(t, key, v) {
        kb_dtype dt;
        if (!json_is_number(v) || kb_dtype_parse(key, &dt) != 0)
            continue;
        p->sheet_tflops[dt] = json_number_value(v);
        if (strcmp(key, "fp8") == 0)   /* one published fp8 figure covers both encodings */
            p->sheet_tflops[KB_DT_FP8E5M2] = json_number_value(v);
    }
}

/* The peaks file parsed: read as every input is (core/fsutil.h: without blocking, a
 * regular file of at most KB_LIMIT_PEAKS_BYTES). *root, or NULL with err = "path: why"
 * and *unreadable set when the file could not be read at all (rather than parsed). */
static json_t *load_json(const char *path, int *unreadable, kb_sb *err)
{
    char *text = NULL;
    size_t len = 0;
    *unreadable = 0;
    kb_sb why;
    kb_sb_init(&why);
    kb_status st = kb_fs_read_input(path, KB_LIMIT_PEAKS_BYTES, "peaks file", &text, &len, &why);
    json_t *root = NULL;
    json_error_t je;
    if (st != KB_OK) {
        *unreadable = 1;
        if (err) kb_sb_printf(err, "%s", why.s);
    } else if (!(root = json_loadb(text, len, 0, &je))) {
        if (err) kb_sb_printf(err, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
    }
    free(text);
    kb_sb_free(&why);
    return root;
}

/* Look d's name up in the file; KB_ERR_INPUT only when the file is malformed. */
static kb_status load_sheet(kb_peaks *p, const char *path, kb_sb *err)
{
    int unreadable;
    kb_sb why;
    kb_sb_init(&why);
    json_t *root = load_json(path, &unreadable, &why);
    if (!root) {
        if (err && unreadable)
            kb_sb_printf(err, "%s; clock-based peaks only", why.s);
        else if (err)
            kb_sb_printf(err, "%s", why.s);
        kb_sb_free(&why);
        return unreadable ? KB_OK : KB_ERR_INPUT;
    }
    kb_sb_free(&why);
    json_t *gpus = json_object_get(root, "gpus");
    if (!json_is_array(gpus)) {
        if (err) kb_sb_printf(err, "%s: no \"gpus\" array", path);
        json_decref(root);
        return KB_ERR_INPUT;
    }
    char name[160];
    normalise(p->device, name, sizeof name);
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        if (any_phrase(json_object_get(g, "match"), name) &&
            !any_phrase(json_object_get(g, "exclude"), name)) {
            take_sheet(p, g);
            break;
        }
    }
    json_decref(root);
    return KB_OK;
}

kb_status kb_peaks_check_file(const char *path, kb_sb *err)
{
    int unreadable;
    json_t *root = load_json(path, &unreadable, err);
    kb_status st = KB_OK;
    if (!root)
        return KB_ERR_SETUP;
    json_t *gpus = json_object_get(root, "gpus"), *g;
    size_t i;
    if (!json_is_array(gpus)) {
        kb_sb_printf(err, "%s: not a peaks file (expected an object with a \"gpus\" array, as data/peaks.json)", path);
        st = KB_ERR_SETUP;
    }
    json_array_foreach(gpus, i, g) {   /* the architecture table decides which compute capabilities exist */
        json_t *sm = json_object_get(g, "sm");
        if (st == KB_OK && json_is_integer(sm) && !kb_arch_runs_any((int)json_integer_value(sm))) {
            kb_sb_printf(err, "%s: entry %zu (%s): sm %lld is no compute capability kbench runs on (core/arch.h)",
                         path, i, json_string_value(json_object_get(g, "sku")) ? json_string_value(json_object_get(g, "sku"))
                         : "?", (long long)json_integer_value(sm));
            st = KB_ERR_SETUP;
        }
    }
    json_decref(root);
    return st;
}

static void compute_clock_peaks(kb_peaks *p)
{
    for (int dt = 0; dt < KB_DT_COUNT; dt++) {
        int ops = kb_peaks_ops_per_clock(p->sm, (kb_dtype)dt);
        /* tensor-core dtypes run at the SKU's tensor clock where one is published */
        double mhz = dt != KB_DT_FP32 && p->tensor_mhz > 0 ? p->tensor_mhz : p->clock_mhz;
        p->clock_tflops[dt] = (double)p->sm_count * mhz * ops / 1e6;  /* MHz*ops = 1e6 op/s */
    }
    /* DDR: two transfers per memory clock; bus width in bits */
    p->clock_gbps = p->mem_clock_mhz * 1e6 * 2.0 * p->mem_bus_bits / 8.0 / 1e9;
}

kb_status kb_peaks_for_device(const kb_device_info *d, const char *path, kb_peaks *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    copy_str(out->device, sizeof out->device, d->name);
    out->no_roof = !(d->caps & KB_CAP_ROOFLINE);
    out->sm = d->sm;
    if (out->no_roof)
        return KB_OK;                /* CPU timings: no GPU ceiling applies */
    out->sm_count = d->sm_count;
    out->clock_mhz = d->clock_khz / 1000.0;
    out->mem_clock_mhz = d->mem_clock_khz / 1000.0;
    out->mem_bus_bits = d->mem_bus_bits;
    kb_status st = load_sheet(out, path ? path : kb_peaks_default_path(), err);
    compute_clock_peaks(out);
    return st;
}

double kb_peaks_tflops(const kb_peaks *p, kb_dtype dt, const char **source)
{
    if (source) *source = NULL;
    if (!p || p->no_roof || (unsigned)dt >= KB_DT_COUNT)
        return 0;
    if (p->sheet_tflops[dt] > 0) {
        if (source) *source = "datasheet";
        return p->sheet_tflops[dt];
    }
    if (p->clock_tflops[dt] > 0) {
        if (source) *source = "clock";
        return p->clock_tflops[dt];
    }
    return 0;
}

double kb_peaks_gbps(const kb_peaks *p, const char **source)
{
    if (source) *source = NULL;
    if (!p || p->no_roof)
        return 0;
    if (p->sheet_gbps > 0) {
        if (source) *source = "datasheet";
        return p->sheet_gbps;
    }
    if (p->clock_gbps > 0) {
        if (source) *source = "clock";
        return p->clock_gbps;
    }
    return 0;
}

int kb_peaks_kind_is_memory(const char *kind)
{
    return !strcmp(kind, "copy") || !strcmp(kind, "read") || !strcmp(kind, "write");
}

void kb_peaks_add_measured(kb_peaks *p, const char *kind, double value)
{
    if (!(value > 0))
        return;
    if (kb_peaks_kind_is_memory(kind) && value > p->measured_gbps)
        p->measured_gbps = value;
    for (int i = 0; i < p->n_measured; i++)
        if (!strcmp(p->measured[i].kind, kind)) {
            if (value > p->measured[i].value)
                p->measured[i].value = value;
            return;
        }
    if (p->n_measured == KB_PEAKS_MAX_MEASURED)
        return;
    copy_str(p->measured[p->n_measured].kind, sizeof p->measured[0].kind, kind);
    p->measured[p->n_measured++].value = value;
}

double kb_peaks_measured(const kb_peaks *p, const char *kind)
{
    for (int i = 0; p && i < p->n_measured; i++)
        if (!strcmp(p->measured[i].kind, kind))
            return p->measured[i].value;
    return 0;
}

/* "fp32 66.9  tf32 494.7 ..." for the non-zero entries of t. */
static void format_rates(kb_sb *out, const double *t)
{
    int any = 0;
    for (int dt = 0; dt < KB_DT_COUNT; dt++) {
        if (t[dt] <= 0)
            continue;
        kb_sb_printf(out, "%s%s %.1f", any ? "  " : "", kb_dtype_name((kb_dtype)dt), t[dt]);
        any = 1;
    }
    if (!any)
        kb_sb_printf(out, "none");
}

void kb_peaks_format(const kb_peaks *p, kb_sb *out)
{
    if (p->no_roof) {
        kb_sb_printf(out, "  peaks: none (emulator: timings are CPU timings, no GPU ceiling applies)\n");
        return;
    }
    if (p->have_sheet) {
        kb_sb_printf(out, "  datasheet peaks (%s; dense TFLOPS, TOPS for int8): ", p->sku);
        format_rates(out, p->sheet_tflops);
        if (p->sheet_gbps > 0)
            kb_sb_printf(out, "; memory %.0f GB/s", p->sheet_gbps);
        kb_sb_printf(out, "\n    source: %s\n", p->source);
    } else {
        kb_sb_printf(out, "  datasheet peaks: unknown GPU \"%s\" (not in the peaks file): clock-based numbers only\n",
                     p->device);
    }
    kb_sb_printf(out, "  clock-based peaks (%d SMs x %.0f MHz", p->sm_count, p->clock_mhz);
    if (p->tensor_mhz > 0 && p->tensor_mhz != p->clock_mhz)
        kb_sb_printf(out, ", tensor cores at %.0f MHz", p->tensor_mhz);
    kb_sb_printf(out, " x ops/clock/SM of sm_%d): ", p->sm);
    if (kb_peaks_ops_per_clock(p->sm, KB_DT_FP32) == 0)
        kb_sb_printf(out, "none (no ops-per-clock table for sm_%d)", p->sm);
    else
        format_rates(out, p->clock_tflops);
    if (p->clock_gbps > 0)
        kb_sb_printf(out, "; memory %.0f MHz x 2 x %d bit / 8 = %.0f GB/s\n",
                     p->mem_clock_mhz, p->mem_bus_bits, p->clock_gbps);
    else
        kb_sb_printf(out, "; memory: unknown (no memory clock or bus width)\n");
}

void kb_peaks_print(FILE *f, const kb_peaks *p)
{
    kb_sb b;
    kb_sb_init(&b);
    kb_peaks_format(p, &b);
    fputs(b.s, f);
    kb_sb_free(&b);
}
