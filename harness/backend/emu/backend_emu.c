/* backend_emu.c - the emu backend: the same kernel source the GPU runs, compiled by the
 * host C++ compiler into a shared object and executed on the CPU (emu_exec.c).
 *
 * Device memory is host memory (kb_dptr is the address), poisoned with 0xFF bytes (NaN
 * in every float format) so a read before a write shows. Timings are CPU timings.
 * Graph capture records launches and replays them in order.
 *
 * Test hooks (fault injection, docs/acceptance.md): KBENCH_EMU_SLOWDOWN=F multiplies every
 * timed interval by F (1..1000: a slow GPU); KBENCH_EMU_CORRUPT=1 overwrites the first 4
 * bytes of every download with 0xFF (a GPU that computes wrong results). Unset: no effect.
 */
#include "backend/backend.h"
#include "backend/emu/emu_build.h"
#include "backend/emu/emu_exec.h"
#include "backend/emu/emu_host.h"
#include "backend/emu/emu_tmap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EMU_SPARES 4                       /* freed large blocks kept for reuse */
#define EMU_SPARE_MIN_BYTES (1u << 20)

struct kb_backend_ctx {
    kb_emu_cxx cxx;                   /* the host C++ compiler */
    int sm;                           /* emulated arch x10 */
    int n_workers;
    size_t shmem_limit_bytes;
    kb_emu_exec *exec;                /* started at the first launch */
    struct timespec t0;
    kb_graph *capture;                /* non-NULL between graph_begin and graph_end */
    int ffi_only;                     /* KBENCH_EMU_FFI=1: every call through libffi */
    double slowdown;                  /* KBENCH_EMU_SLOWDOWN: timed intervals x this (test hook) */
    int corrupt;                      /* KBENCH_EMU_CORRUPT=1: downloads corrupted (test hook) */
    kb_emu_schedule schedule;         /* --emu-schedule */
    uint64_t seed;
    unsigned checks;                  /* KB_EMU_CHECK_* built into the modules */
    kb_emu_heap heap;                 /* KB_EMU_CHECK_INIT: the written bytes of every allocation */
    unsigned char *spare[EMU_SPARES]; /* freed blocks >= EMU_SPARE_MIN_BYTES (header included) */
    char err[1024];
};

struct kb_module {
    void *dl;
    kb_emu_thread **(*tls_slot)(void);
    int sm90_user;                    /* the module uses the async proxy (kb_device_emu.h) */
};

typedef struct {
    kb_module *m;
    char *entry;
    kb_geom g;
    kb_arg *args;
    int nargs;
} graph_node;

struct kb_graph {
    graph_node *nodes;
    int n, cap;
};

static kb_status fail(kb_backend_ctx *x, kb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static kb_status fail(kb_backend_ctx *x, kb_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
    return st;
}

/* The fault-injection test hooks (see the top of this file); a malformed value is a
 * setup error naming the variable. */
static kb_status read_fault_hooks(kb_backend_ctx *x, char *err, size_t errlen)
{
    const char *slow = getenv("KBENCH_EMU_SLOWDOWN"), *bad = getenv("KBENCH_EMU_CORRUPT");
    char *end = NULL;
    x->slowdown = slow && *slow ? strtod(slow, &end) : 1.0;
    if (slow && *slow && (*end || !(x->slowdown >= 1 && x->slowdown <= 1000))) {
        snprintf(err, errlen, "KBENCH_EMU_SLOWDOWN=%s: expected a factor in [1, 1000] (a test hook)", slow);
        return KB_ERR_SETUP;
    }
    if (bad && *bad && strcmp(bad, "0") && strcmp(bad, "1")) {
        snprintf(err, errlen, "KBENCH_EMU_CORRUPT=%s: expected 0 or 1 (a test hook)", bad);
        return KB_ERR_SETUP;
    }
    x->corrupt = bad && !strcmp(bad, "1");
    return KB_OK;
}

static kb_status emu_init(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t errlen)
{
    kb_backend_ctx *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "emu: out of memory");
        return KB_ERR_OOM;
    }
    kb_status st = kb_emu_cxx_init(&x->cxx, err, errlen);   /* no GPU needed, only a compiler */
    if (st != KB_OK) {
        free(x);
        return st;
    }
    x->sm = o && o->sm_override ? o->sm_override : 90;   /* the emulated arch's code (core/arch.h) */
    if (!kb_arch_get(x->sm)) {
        snprintf(err, errlen, "emu: no architecture of code %d in kbench's table", x->sm);
        kb_emu_cxx_free(&x->cxx);
        free(x);
        return KB_ERR_INPUT;
    }
    x->shmem_limit_bytes = (size_t)kb_arch_max_shmem_optin(x->sm); /* the emulated arch's limits */
    x->n_workers = o && o->emu_threads > 0 ? o->emu_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (x->n_workers < 1)
        x->n_workers = 1;
    const char *ffi = getenv("KBENCH_EMU_FFI");
    x->ffi_only = ffi && strcmp(ffi, "1") == 0;
    if (read_fault_hooks(x, err, errlen) != KB_OK) {
        kb_emu_cxx_free(&x->cxx);
        free(x);
        return KB_ERR_SETUP;
    }
    if (kb_emu_parse_schedule(o ? o->emu_schedule : NULL, &x->schedule, &x->seed) != 0) {
        snprintf(err, errlen, "emu: unknown schedule '%s' (lockstep, warp-ahead, random or random:SEED)",
                 o->emu_schedule);
        kb_emu_cxx_free(&x->cxx);
        free(x);
        return KB_ERR_INPUT;
    }
    x->checks = o ? o->emu_checks : 0;
    kb_emu_cxx_set_checks(&x->cxx, x->checks);
    *out = x;
    return KB_OK;
}

static void emu_fini(kb_backend_ctx *x)
{
    if (!x)
        return;
    kb_emu_exec_destroy(x->exec);
    for (int i = 0; i < EMU_SPARES; i++)
        free(x->spare[i]);
    kb_emu_heap_fini(&x->heap);
    kb_emu_cxx_free(&x->cxx);
    free(x);
}

static const char *emu_last_error(kb_backend_ctx *x) { return x->err; }

static kb_status emu_device_info(kb_backend_ctx *x, kb_device_info *out)
{
    char cpu[96];
    kb_emu_cpu_name(cpu, sizeof cpu);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "kbench CPU emulator (%s)", cpu);
    snprintf(out->uuid, sizeof out->uuid, "emu");
    out->sm = kb_arch_cc(x->sm);      /* the emulated compute capability; */
    out->target_sm = x->sm;           /* its target, sm_90a included */
    out->sm_count = x->n_workers;
    out->l2_bytes = (int)kb_emu_l2_bytes(NULL);  /* the host cache a cold flush evicts */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->total_mem_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;  /* host memory */
    out->max_shmem_per_block_optin = (int)x->shmem_limit_bytes;
    out->caps = kb_backend_emu.caps;
    return KB_OK;
}

static const char *emu_toolchain_id(kb_backend_ctx *x) { return kb_emu_cxx_id(&x->cxx); }

static kb_status emu_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log)
{
    /* compile workers call this from several threads at once: the failure's one line
     * goes to this build's own log, never to the shared x->err */
    char err[512] = "";
    kb_status st = kb_emu_cxx_build(&x->cxx, req, x->sm, out_path, log, err, sizeof err);
    if (st != KB_OK && err[0])
        kb_sb_printf(log, "%s\n", err);
    return st;
}

static kb_status emu_load(kb_backend_ctx *x, const char *artifact_path, kb_module **out)
{
    kb_module *m = calloc(1, sizeof *m);
    if (!m)
        return fail(x, KB_ERR_OOM, "emu: out of memory");
    m->dl = dlopen(artifact_path, RTLD_NOW | RTLD_LOCAL);
    if (!m->dl) {
        fail(x, KB_ERR_SETUP, "emu: dlopen %s: %s", artifact_path, dlerror());
        goto fail;
    }
    void (*bind)(const kb_emu_rt *) = (void (*)(const kb_emu_rt *))dlsym(m->dl, "kb_emu_bind");
    const unsigned *abi = dlsym(m->dl, "kb_emu_abi_version");
    m->tls_slot = (kb_emu_thread * *(*)(void)) dlsym(m->dl, "kb_emu_tls_slot");
    if (!bind || !abi || !m->tls_slot) {
        fail(x, KB_ERR_SETUP, "emu: %s was not built with kb_device.h (no kb_emu_bind)", artifact_path);
        goto fail;
    }
    if (*abi != KB_EMU_ABI_VERSION) {
        fail(x, KB_ERR_SETUP, "emu: %s was built for emulator ABI %u, this kbench speaks %u", artifact_path,
             *abi, KB_EMU_ABI_VERSION);
        goto fail;
    }
    bind(kb_emu_exec_rt());
    const int *user = dlsym(m->dl, "kb_emu_sm90_user_");   /* set by its initialisers at dlopen */
    m->sm90_user = user && *user;
    *out = m;
    return KB_OK;
fail:
    if (m->dl)
        dlclose(m->dl);
    free(m);
    return KB_ERR_SETUP;
}

static void emu_unload(kb_backend_ctx *x, kb_module *m)
{
    if (!m)
        return;
    dlclose(m->dl);
    free(m);
}

static kb_status emu_resources(kb_backend_ctx *x, kb_module *m, const char *entry, kb_resources *out)
{
    if (!dlsym(m->dl, entry))
        return fail(x, KB_ERR_LAUNCH, "emu: no kernel entry '%s' in the module", entry);
    out->registers = out->spill_store_bytes = out->spill_load_bytes = out->stack_bytes = -1;
    out->static_shmem_bytes = -1;  /* known only once a block has run */
    out->max_threads = KB_EMU_MAX_THREADS;
    return KB_OK;
}

/* ---- memory: host memory, poisoned ----
 * Each block carries its size in a 256-byte header, so that free() can keep large blocks
 * for reuse: the harness allocates and frees the same big buffers case after case (the
 * L2-flush buffer is 64 MiB), and fresh pages from the OS cost a page fault each. */
#define ALLOC_ALIGN 256u                   /* cudaMalloc's alignment */

static kb_status emu_alloc(kb_backend_ctx *x, size_t bytes, kb_dptr *out)
{
    size_t n;
    unsigned char *p = NULL;
    if (bytes > SIZE_MAX - 2 * ALLOC_ALIGN)   /* the rounding and the header would wrap */
        return fail(x, KB_ERR_OOM, "emu: cannot allocate %zu bytes", bytes);
    n = (bytes + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
    if (n == 0)
        n = ALLOC_ALIGN;
    for (int i = 0; i < EMU_SPARES && n >= EMU_SPARE_MIN_BYTES; i++)
        if (x->spare[i] && *(size_t *)x->spare[i] == n) {
            p = x->spare[i];
            x->spare[i] = NULL;
            break;
        }
    if (!p && !(p = aligned_alloc(ALLOC_ALIGN, n + ALLOC_ALIGN)))
        return fail(x, KB_ERR_OOM, "emu: cannot allocate %zu bytes", bytes);
    *(size_t *)p = n;
    memset(p + ALLOC_ALIGN, 0xff, n);      /* poison: NaN in every float format */
    if ((x->checks & KB_EMU_CHECK_INIT) && kb_emu_heap_add(&x->heap, p + ALLOC_ALIGN, bytes) != 0) {
        free(p);
        return fail(x, KB_ERR_OOM, "emu: cannot track %zu bytes for --emu-check init", bytes);
    }
    *out = (kb_dptr)(uintptr_t)(p + ALLOC_ALIGN);
    return KB_OK;
}

static void emu_free(kb_backend_ctx *x, kb_dptr d)
{
    if (!d)
        return;
    unsigned char *p = (unsigned char *)(uintptr_t)d - ALLOC_ALIGN;
    kb_emu_heap_remove(&x->heap, (void *)(uintptr_t)d);
    if (*(size_t *)p >= EMU_SPARE_MIN_BYTES)
        for (int i = 0; i < EMU_SPARES; i++)
            if (!x->spare[i]) {
                x->spare[i] = p;
                return;
            }
    free(p);
}

static kb_status emu_upload(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t bytes)
{
    memcpy((void *)(uintptr_t)dst, src, bytes);
    kb_emu_heap_mark(&x->heap, (void *)(uintptr_t)dst, bytes);
    return KB_OK;
}

static kb_status emu_download(kb_backend_ctx *x, void *dst, kb_dptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    if (x->corrupt)
        memset(dst, 0xFF, bytes < 4 ? bytes : 4);
    return KB_OK;
}

static kb_status emu_fill(kb_backend_ctx *x, kb_dptr dst, uint8_t byte, size_t bytes)
{
    memset((void *)(uintptr_t)dst, byte, bytes);
    kb_emu_heap_mark(&x->heap, (void *)(uintptr_t)dst, bytes);
    return KB_OK;
}

/* ---- launch ---- */
/* Classify args for kb_emu_direct: integer-class args fill rdi..r9 then the stack slots
 * in order, floats fill xmm0..7. More than that (9+ floats, 17+ integers) -> libffi. A
 * tensor map is the address of the launch's copy (map_ptr, in argument order): the emulator's
 * kb_tmap is one pointer, an integer-class argument. */
static void prepare_direct(kb_backend_ctx *x, const kb_arg *args, int nargs, const void *const *map_ptr,
                           kb_emu_direct *d)
{
    int ng = 0, nx = 0, nm = 0;
    memset(d, 0, sizeof *d);
#if defined(__x86_64__)
    if (x->ffi_only)
        return;
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind == KB_ARG_F32) {
            uint64_t bits = 0;
            if (nx == 8)
                return;
            memcpy(&bits, &args[i].v.f32, 4);
            memcpy(&d->sse[nx++], &bits, 8);
            continue;
        }
        if (ng == 6 + KB_EMU_DIRECT_STACK_SLOTS)
            return;
        d->gpr[ng++] = args[i].kind == KB_ARG_I32 ? (uint64_t)(int64_t)args[i].v.i32
                     : args[i].kind == KB_ARG_I64 ? (uint64_t)args[i].v.i64
                     : args[i].kind == KB_ARG_TMAP ? (uint64_t)(uintptr_t)map_ptr[nm++] : args[i].v.ptr;
    }
    d->ok = 1;
#else
    (void)x; (void)args; (void)nargs; (void)ng; (void)nx; (void)nm; (void)map_ptr;
#endif
}

static kb_status launch_now(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                            const kb_arg *args, int nargs)
{
    ffi_type *types[64];
    void *values[64];
    /* tensor maps: the launch's own copy of each (64-byte aligned, read-only to the kernel, as a
     * __grid_constant__ parameter is), passed as the address kernels/kb_tma.h's kb_tmap holds */
    struct { _Alignas(64) unsigned char b[KB_TMAP_BYTES]; } maps[8];
    const void *map_ptr[8];
    int n_maps = 0;
    ffi_cif cif;
    kb_status st;
    if (nargs < 0 || nargs > 64)
        return fail(x, KB_ERR_LAUNCH, "emu: %d kernel arguments (at most 64)", nargs);
    void *fn = dlsym(m->dl, entry);
    if (!fn)
        return fail(x, KB_ERR_LAUNCH, "emu: no kernel entry '%s' in the module", entry);
    for (int i = 0; i < nargs; i++) {
        switch (args[i].kind) {
        case KB_ARG_PTR: types[i] = &ffi_type_pointer; values[i] = (void *)&args[i].v.ptr; break;
        case KB_ARG_I32: types[i] = &ffi_type_sint32; values[i] = (void *)&args[i].v.i32; break;
        case KB_ARG_I64: types[i] = &ffi_type_sint64; values[i] = (void *)&args[i].v.i64; break;
        case KB_ARG_F32: types[i] = &ffi_type_float; values[i] = (void *)&args[i].v.f32; break;
        case KB_ARG_TMAP:
            if (n_maps == 8)
                return fail(x, KB_ERR_LAUNCH, "emu: more than 8 tensor-map arguments");
            memcpy(maps[n_maps].b, args[i].v.tmap, KB_TMAP_BYTES);
            map_ptr[n_maps] = maps[n_maps].b;
            types[i] = &ffi_type_pointer;
            values[i] = (void *)&map_ptr[n_maps++];
            break;
        default: return fail(x, KB_ERR_LAUNCH, "emu: argument %d has an unknown kind %d", i, (int)args[i].kind);
        }
    }
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)nargs, &ffi_type_void, types) != FFI_OK)
        return fail(x, KB_ERR_INTERNAL, "emu: ffi_prep_cif failed for %s", entry);
    if (!x->exec) {
        char err[256];
        st = kb_emu_exec_create(x->n_workers, x->sm, x->shmem_limit_bytes, &x->exec, err, sizeof err);
        if (st != KB_OK)
            return fail(x, st, "%s", err);
        kb_emu_exec_settings(x->exec, x->schedule, x->seed, x->checks, x->checks & KB_EMU_CHECK_INIT ? &x->heap : NULL);
    }
    kb_emu_launch l = {
        .cif = &cif,
        .avalues = values,
        .tls_slot = m->tls_slot,
        .grid = { g->grid[0], g->grid[1], g->grid[2] },
        .block = { g->block[0], g->block[1], g->block[2] },
        .dyn_shmem_bytes = g->shmem_bytes,
        .sm90_user = m->sm90_user,
    };
    prepare_direct(x, args, nargs, map_ptr, &l.direct);
    *(void **)&l.fn = fn;   /* object pointer to function pointer, as dlsym requires */
    st = kb_emu_exec_run(x->exec, &l, x->err, sizeof x->err);
    return st;
}

static kb_status record_launch(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                               const kb_arg *args, int nargs)
{
    kb_graph *gr = x->capture;
    if (gr->n == gr->cap) {
        int cap = gr->cap ? gr->cap * 2 : 16;
        graph_node *nodes = realloc(gr->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return fail(x, KB_ERR_OOM, "emu: out of memory recording a graph");
        gr->nodes = nodes;
        gr->cap = cap;
    }
    graph_node *nd = &gr->nodes[gr->n];
    nd->m = m;
    nd->g = *g;
    nd->nargs = nargs;
    nd->entry = strdup(entry);
    nd->args = malloc((size_t)(nargs > 0 ? nargs : 1) * sizeof *nd->args);
    if (!nd->entry || !nd->args) {
        free(nd->entry);
        free(nd->args);
        return fail(x, KB_ERR_OOM, "emu: out of memory recording a graph");
    }
    if (nargs > 0)
        memcpy(nd->args, args, (size_t)nargs * sizeof *args);
    gr->n++;
    return KB_OK;
}

static kb_status emu_launch(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                            const kb_arg *args, int nargs)
{
    if (kb_geom_cluster_blocks(g) > 1)   /* refused before capture too: the replay could not run it */
        return fail(x, KB_ERR_LAUNCH, "emu: %s: a %ux%ux%u thread block cluster launch: the emulator does not "
                    "model clusters (distributed shared memory, cluster barriers) yet", entry, g->cluster[0],
                    g->cluster[1], g->cluster[2]);
    if (x->capture)
        return record_launch(x, m, entry, g, args, nargs);
    return launch_now(x, m, entry, g, args, nargs);
}

static kb_status emu_sync(kb_backend_ctx *x) { return KB_OK; }

static kb_status emu_tmap_encode(kb_backend_ctx *x, const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES])
{
    char why[200];
    if (kb_emu_tmap_encode(d, out, why, sizeof why) != 0)
        return fail(x, KB_ERR_INPUT, "emu: %s", why);
    return KB_OK;
}

/* A timing window holds the CPU for the kernel alone: the compile workers' builds in
 * flight are paused while it is open (emu_build.h). */
static kb_status emu_timer_start(kb_backend_ctx *x)
{
    kb_emu_cxx_pause(&x->cxx, 1);
    clock_gettime(CLOCK_MONOTONIC, &x->t0);
    return KB_OK;
}

static kb_status emu_timer_stop(kb_backend_ctx *x, double *elapsed_us)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    kb_emu_cxx_pause(&x->cxx, 0);
    *elapsed_us = (double)(t1.tv_sec - x->t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - x->t0.tv_nsec) * 1e-3;
    *elapsed_us *= x->slowdown;
    return KB_OK;
}

/* ---- graphs: record, then replay in order ---- */
static void emu_graph_free(kb_backend_ctx *x, kb_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++) {
        free(g->nodes[i].entry);
        free(g->nodes[i].args);
    }
    free(g->nodes);
    free(g);
}

static kb_status emu_graph_begin(kb_backend_ctx *x)
{
    if (x->capture)
        return fail(x, KB_ERR_INTERNAL, "emu: graph_begin while already capturing");
    x->capture = calloc(1, sizeof *x->capture);
    return x->capture ? KB_OK : fail(x, KB_ERR_OOM, "emu: out of memory");
}

static kb_status emu_graph_end(kb_backend_ctx *x, kb_graph **out)
{
    if (!x->capture)
        return fail(x, KB_ERR_INTERNAL, "emu: graph_end without graph_begin");
    *out = x->capture;
    x->capture = NULL;
    return KB_OK;
}

static kb_status emu_graph_launch(kb_backend_ctx *x, kb_graph *g)
{
    for (int i = 0; i < g->n; i++) {
        const graph_node *nd = &g->nodes[i];
        kb_status st = launch_now(x, nd->m, nd->entry, &nd->g, nd->args, nd->nargs);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

const kb_backend kb_backend_emu = {
    .name = "emu",
    .caps = KB_CAP_GRAPHS | KB_CAP_RESOURCES | KB_CAP_TMA, /* CPU timings, no roofline, check shapes, no vendor libraries */
    .init = emu_init,
    .fini = emu_fini,
    .last_error = emu_last_error,
    .device_info = emu_device_info,
    .toolchain_id = emu_toolchain_id,
    .artifact_ext = ".so",
    .build = emu_build,
    .load = emu_load,
    .unload = emu_unload,
    .resources = emu_resources,
    .alloc = emu_alloc,
    .free = emu_free,
    .upload = emu_upload,
    .download = emu_download,
    .fill = emu_fill,
    .launch = emu_launch,
    .sync = emu_sync,
    .timer_start = emu_timer_start,
    .timer_stop = emu_timer_stop,
    .graph_begin = emu_graph_begin,
    .graph_end = emu_graph_end,
    .graph_launch = emu_graph_launch,
    .graph_free = emu_graph_free,
    .tmap_encode = emu_tmap_encode,
};
