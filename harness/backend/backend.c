/* backend.c - choosing and opening a backend (auto: cuda when a device is present). */
#include "backend/backend.h"

#include "core/report.h"

#include <stdio.h>
#include <string.h>

const kb_backend *kb_backend_find(const char *name)
{
    if (!strcmp(name, "cuda"))
        return &kb_backend_cuda;
    if (!strcmp(name, "emu"))
        return &kb_backend_emu;
    return NULL;
}

unsigned kb_backend_caps_of(const char *name)
{
    if (!strcmp(name, "auto"))
        return kb_backend_emu.caps;
    const kb_backend *b = kb_backend_find(name);
    return b ? b->caps : 0;
}

kb_status kb_backend_open_table(const kb_backend *b, const kb_backend *fallback, const kb_backend_opts *bo,
                                const kb_backend **be, kb_backend_ctx **bx, char *err, size_t errlen)
{
    if (kb_backend_check(b, err, errlen) != 0)
        return KB_ERR_INTERNAL;
    kb_status st = b->init(bo, bx, err, errlen);
    /* auto falls back only where no GPU can be used (KB_ERR_SETUP: no driver, no device);
     * a GPU that refuses the request (an --arch it cannot run) is the user's to fix */
    if (st == KB_OK || !fallback || st != KB_ERR_SETUP) {
        *be = b;
        return st;
    }
    /* auto: no usable GPU, so the emulator, and one line that says so */
    kb_report(KB_REPORT_INFO, "%s; using the CPU emulator (timings are CPU time, not GPU numbers)", err);
    return kb_backend_open_table(fallback, NULL, bo, be, bx, err, errlen);
}

kb_status kb_backend_open(const char *name, const kb_backend_opts *bo, const kb_backend **be,
                          kb_backend_ctx **bx, char *err, size_t errlen)
{
    int is_auto = !strcmp(name, "auto");
    const kb_backend *b = is_auto ? &kb_backend_cuda : kb_backend_find(name);
    if (!b) {
        snprintf(err, errlen, "unknown backend '%s' (expected auto, cuda or emu)", name);
        return KB_ERR_INPUT;
    }
    return kb_backend_open_table(b, is_auto ? &kb_backend_emu : NULL, bo, be, bx, err, errlen);
}

/* ---- the promises of a table ---- */

/* The OPTIONAL slots a capability bit stands for: all of them set with the bit, none without. */
#define SLOT(field) { #field, offsetof(kb_backend, field) }
typedef struct {
    const char *name;
    size_t at;                   /* offsetof the slot in kb_backend */
} slot;

static const struct {
    unsigned cap;
    const char *cap_name;
    slot slots[4];
    int n;
} cap_slots[] = {
    { KB_CAP_GRAPHS, "KB_CAP_GRAPHS",
      { SLOT(graph_begin), SLOT(graph_end), SLOT(graph_launch), SLOT(graph_free) }, 4 },
    { KB_CAP_VENDOR_LIBS, "KB_CAP_VENDOR_LIBS", { SLOT(vendor_plan), SLOT(vendor_run), SLOT(vendor_free) }, 3 },
    { KB_CAP_TELEMETRY, "KB_CAP_TELEMETRY", { SLOT(telemetry) }, 1 },
    { KB_CAP_RESOURCES, "KB_CAP_RESOURCES", { SLOT(resources) }, 1 },
    { KB_CAP_TMA, "KB_CAP_TMA", { SLOT(tmap_encode) }, 1 },
};

/* The slots every table sets. */
static const slot required[] = {
    SLOT(init), SLOT(fini), SLOT(last_error), SLOT(device_info), SLOT(build), SLOT(load), SLOT(unload),
    SLOT(alloc), SLOT(free), SLOT(upload), SLOT(download), SLOT(fill), SLOT(launch), SLOT(sync),
    SLOT(timer_start), SLOT(timer_stop),
};

static int slot_set(const kb_backend *b, const slot *s)
{
    void (*fn)(void);
    memcpy(&fn, (const char *)b + s->at, sizeof fn);   /* every slot is a function pointer */
    return fn != NULL;
}

int kb_backend_check(const kb_backend *b, char *err, size_t errlen)
{
    const char *name = b->name ? b->name : "(unnamed)";
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!slot_set(b, &required[i])) {
            snprintf(err, errlen, "backend %s: its %s slot is not set", name, required[i].name);
            return -1;
        }
    for (size_t c = 0; c < sizeof cap_slots / sizeof cap_slots[0]; c++) {
        int has = (b->caps & cap_slots[c].cap) != 0;
        for (int k = 0; k < cap_slots[c].n; k++)
            if (slot_set(b, &cap_slots[c].slots[k]) != has) {
                snprintf(err, errlen, "backend %s: %s %s, but its %s slot is %s", name, cap_slots[c].cap_name,
                         has ? "is set" : "is not set", cap_slots[c].slots[k].name, has ? "NULL" : "set");
                return -1;
            }
    }
    if ((b->caps & (KB_CAP_CUBLASLT | KB_CAP_CUDNN)) && !(b->caps & KB_CAP_VENDOR_LIBS)) {
        snprintf(err, errlen, "backend %s: a vendor library bit (KB_CAP_CUBLASLT, KB_CAP_CUDNN) without "
                 "KB_CAP_VENDOR_LIBS", name);
        return -1;
    }
    return 0;
}

/* ---- the accessors of the OPTIONAL slots ---- */

const char *kb_be_toolchain_id(const kb_backend *be, kb_backend_ctx *bx)
{
    return be->toolchain_id ? be->toolchain_id(bx) : "";
}

const char *kb_be_artifact_ext(const kb_backend *be) { return be->artifact_ext ? be->artifact_ext : ""; }

static void resources_unknown(kb_resources *out)
{
    out->registers = out->spill_store_bytes = out->spill_load_bytes = out->stack_bytes = -1;
    out->static_shmem_bytes = out->max_threads = -1;
}

kb_status kb_be_resources(const kb_backend *be, kb_backend_ctx *bx, kb_module *m, const char *entry,
                          kb_resources *out)
{
    if (be->resources)
        return be->resources(bx, m, entry, out);
    resources_unknown(out);
    return KB_ERR_SETUP;
}

int kb_be_compiles_for(const kb_backend *be, int code, char *why, size_t n)
{
    if (be->compiles_for)
        return be->compiles_for(code, why, n);
    if (kb_arch_get(code))
        return 1;
    snprintf(why, n, "no architecture of code %d in kbench's table (core/arch.h)", code);
    return 0;
}

int kb_be_build_resources(const kb_backend *be, const char *log, const char *entry, kb_resources *out)
{
    if (be->build_resources)
        return be->build_resources(log, entry, out);
    resources_unknown(out);
    return -1;
}

void kb_be_telemetry(const kb_backend *be, kb_backend_ctx *bx, kb_telemetry *out)
{
    if (be->telemetry) {
        be->telemetry(bx, out);
        return;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->why, sizeof out->why, "the %s backend reads no telemetry", be->name);
}

kb_status kb_be_graph_begin(const kb_backend *be, kb_backend_ctx *bx)
{
    return be->graph_begin ? be->graph_begin(bx) : KB_ERR_LAUNCH;
}

kb_status kb_be_graph_end(const kb_backend *be, kb_backend_ctx *bx, kb_graph **out)
{
    if (be->graph_end)
        return be->graph_end(bx, out);
    *out = NULL;
    return KB_ERR_LAUNCH;
}

kb_status kb_be_graph_launch(const kb_backend *be, kb_backend_ctx *bx, kb_graph *g)
{
    return be->graph_launch ? be->graph_launch(bx, g) : KB_ERR_LAUNCH;
}

void kb_be_graph_free(const kb_backend *be, kb_backend_ctx *bx, kb_graph *g)
{
    if (be->graph_free)
        be->graph_free(bx, g);
}

kb_status kb_be_vendor_plan(const kb_backend *be, kb_backend_ctx *bx, const kb_vendor_op *op, kb_vendor_plan **out,
                            kb_vendor_info *info)
{
    if (be->vendor_plan)
        return be->vendor_plan(bx, op, out, info);
    *out = NULL;
    return KB_ERR_SETUP;
}

kb_status kb_be_vendor_run(const kb_backend *be, kb_backend_ctx *bx, kb_vendor_plan *p)
{
    return be->vendor_run ? be->vendor_run(bx, p) : KB_ERR_SETUP;
}

void kb_be_vendor_free(const kb_backend *be, kb_backend_ctx *bx, kb_vendor_plan *p)
{
    if (be->vendor_free)
        be->vendor_free(bx, p);
}

const char *kb_be_timing_method(const kb_backend *be, kb_backend_ctx *bx)
{
    return be->timing_method ? be->timing_method(bx) : "host monotonic clock around each window";
}

int kb_be_sample_clock(const kb_backend *be, kb_backend_ctx *bx, int *sm_mhz, int *sm_max_mhz)
{
    return be->sample_clock ? be->sample_clock(bx, sm_mhz, sm_max_mhz) : 0;
}

void kb_be_health(const kb_backend *be, kb_backend_ctx *bx, kb_health *out)
{
    if (be->health) {
        be->health(bx, out);
        return;
    }
    char why[128];
    snprintf(why, sizeof why, "the %s backend reads no GPU health (no NVML)", be->name);
    kb_health_unread(out, why);
}

kb_status kb_backend_tmap_encode(const kb_backend *b, kb_backend_ctx *x, const kb_tmap_desc *d, kb_arg *out,
                                 char *err, size_t errlen)
{
    unsigned char map[KB_TMAP_BYTES];
    if (kb_tmap_validate(d, err, errlen) != 0)
        return KB_ERR_INPUT;
    if (!(b->caps & KB_CAP_TMA) || !b->tmap_encode) {
        snprintf(err, errlen, "the %s backend cannot encode tensor maps (no KB_CAP_TMA)", b->name);
        return KB_ERR_INPUT;
    }
    kb_status st = b->tmap_encode(x, d, map);
    if (st != KB_OK) {
        snprintf(err, errlen, "%s", b->last_error(x));
        return st;
    }
    *out = kb_arg_tmap(map);
    return KB_OK;
}
