/* fleet_md.c - the fleet verdict as markdown (see fleet_md.h). */
#include "accept/fleet_md.h"

#include "accept/fleet_stats.h"

#include <string.h>

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* A table cell: '|' and newlines would break the row. */
static void cell(FILE *out, const char *s)
{
    fputs(" ", out);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else
            fputc(*s == '\n' ? ' ' : *s, out);
    }
    fputs(" |", out);
}

static void gpu_rows(json_t *gpus, FILE *out)
{
    fputs("| node | rank | GPU | UUID | PCI bus id | spec | verdict | tests not passed |\n"
          "|---|---|---|---|---|---|---|---|\n", out);
    size_t i, j;
    json_t *v, *t;
    json_array_foreach(gpus, i, v) {
        json_t *id = json_object_get(v, "identity"), *gpu = json_object_get(v, "gpu");
        char rank[16], bad[512] = "";
        snprintf(rank, sizeof rank, "%lld", json_integer_value(json_object_get(id, "rank")));
        json_array_foreach(json_object_get(v, "tests"), j, t) {
            const char *st = jstr(t, "status");
            if (strcmp(st, "FAIL") && strcmp(st, "WARN"))
                continue;
            size_t n = strlen(bad);
            snprintf(bad + n, sizeof bad - n, "%s%s %s", n ? ", " : "", jstr(t, "name"), st);
        }
        fputs("|", out);
        const char *cells[] = { jstr(id, "host"), rank, jstr(gpu, "name"), jstr(gpu, "uuid"), jstr(gpu, "pci_bus_id"),
                                jstr(json_object_get(v, "spec"), "name"), jstr(v, "verdict"), bad };
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++)
            cell(out, cells[c]);
        fputs("\n", out);
    }
}

static void failures(json_t *gpus, FILE *out)
{
    size_t i, j;
    json_t *v, *t;
    int any = 0;
    json_array_foreach(gpus, i, v) {
        json_t *id = json_object_get(v, "identity");
        json_array_foreach(json_object_get(v, "tests"), j, t) {
            const char *st = jstr(t, "status");
            if (strcmp(st, "FAIL") && strcmp(st, "WARN"))
                continue;
            if (!any++)
                fputs("\n## Findings\n\n", out);
            fprintf(out, "- **%s** %s rank %lld (%s) `%s`: %s\n", st, jstr(id, "host"),
                    json_integer_value(json_object_get(id, "rank")), jstr(json_object_get(v, "gpu"), "uuid"),
                    jstr(t, "name"), jstr(t, "reason"));
        }
    }
}

static void groups(json_t *g, FILE *out)
{
    if (!json_object_size(g))
        return;
    fputs("\n## Distributions (per SKU and timing clock)\n\n| spec | test | GPUs | median | MAD | outlier bound |\n"
          "|---|---|---|---|---|---|\n", out);   /* CPU groups: MAD shown, the bound is the factor's */
    const char *spec, *test;
    json_t *tests, *d;
    json_object_foreach(g, spec, tests) {
        json_object_foreach(tests, test, d) {
            int lower = !strcmp(test, "launch_latency");
            fprintf(out, "| %s | %s | %lld | %.4g | %.3g | %s %.4g |\n", spec, test,
                    json_integer_value(json_object_get(d, "n")), json_real_value(json_object_get(d, "median")),
                    json_real_value(json_object_get(d, "mad")), lower ? "<=" : ">=",
                    json_real_value(json_object_get(d, lower ? "high" : "low")));
        }
    }
}

/* 1 when a distribution of g is of CPU timings (its key says so). */
static int has_cpu_group(json_t *g)
{
    const char *key;
    json_t *v;
    json_object_foreach(g, key, v)
        if (strstr(key, " (cpu timings)"))
            return 1;
    return 0;
}

kb_status kb_fleet_markdown(json_t *fj, FILE *out)
{
    json_t *c = json_object_get(fj, "counts");
    fprintf(out, "# kbench fleet: %s\n\nVerdict **%s** (exit code %lld)%s%s: %lld GPUs, %lld pass, %lld warn, %lld "
            "fail, %lld not checked. Outliers: beyond median - k x max(1.4826 MAD, %.3g x median) (latency: above "
            "median + k x ...), k = %.3g",
            jstr(fj, "dir"), jstr(fj, "verdict"), json_integer_value(json_object_get(fj, "exit_code")),
            *jstr(fj, "not_checked") ? " - " : "", jstr(fj, "not_checked"),
            json_integer_value(json_object_get(c, "gpus")), json_integer_value(json_object_get(c, "pass")),
            json_integer_value(json_object_get(c, "warn")), json_integer_value(json_object_get(c, "fail")),
            json_integer_value(json_object_get(c, "not_checked")), json_real_value(json_object_get(fj, "rel_floor")),
            json_real_value(json_object_get(fj, "k")));
    if (has_cpu_group(json_object_get(fj, "groups")))
        fprintf(out, "; CPU timings (emulator): beyond a factor of %.0f from the median", KB_FLEET_CPU_FACTOR);
    fputs(". An outlier FAILs whatever its own status was.\n", out);
    json_t *p = json_object_get(fj, "problems"), *s;
    size_t i;
    if (json_array_size(p)) {
        fputs("\n## Problems\n\n", out);
        json_array_foreach(p, i, s)
            fprintf(out, "- %s\n", json_string_value(s));
    }
    fputs("\n## GPUs\n\n", out);
    gpu_rows(json_object_get(fj, "gpus"), out);
    failures(json_object_get(fj, "gpus"), out);
    groups(json_object_get(fj, "groups"), out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
