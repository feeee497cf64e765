/* backend_emu.c - the emu backend: the same kernel source the GPU runs, compiled by the
 * host C++ compiler into a shared object and executed on the CPU (emu_exec.c).
 *
 * Device memory is host memory (kb_dptr is the address), poisoned with 0xFF bytes (NaN
 * in every float format) so a read before a write shows. Timings are CPU timings.
 * Graph capture records launches and replays them in order.
 */
#include "backend.h"
#include "emu_exec.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_CXX_WORDS 16

struct kb_backend_ctx {
    char *cxx_words;                  /* $CXX or KB_CXX_COMPILER, split on spaces in place */
    char *cxx_argv[MAX_CXX_WORDS];
    int n_cxx;
    char toolchain[256];              /* first line of `cxx --version`, computed once */
    int sm;                           /* emulated arch x10 */
    int n_workers;
    size_t shmem_limit_bytes;
    kb_emu_exec *exec;                /* started at the first launch */
    struct timespec t0;
    kb_graph *capture;                /* non-NULL between graph_begin and graph_end */
    int ffi_only;                     /* KBENCH_EMU_FFI=1: every call through libffi */
    char err[1024];
};

struct kb_module {
    void *dl;
    kb_emu_thread **(*tls_slot)(void);
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

/* Per-block shared memory opt-in limit of the emulated arch [bytes] (REFERENCE.md). */
static size_t shmem_limit_for(int sm)
{
    if (sm >= 90) return 227u * 1024u;
    if (sm >= 86) return 99u * 1024u;
    return 163u * 1024u;
}

/* 1 when the program named by word can be run: a path, or found on PATH. */
static int program_exists(const char *word)
{
    if (strchr(word, '/'))
        return access(word, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char buf[4096];
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0 && snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, word) < (int)sizeof buf &&
            access(buf, X_OK) == 0)
            return 1;
        p += n + (end ? 1 : 0);
    }
    return 0;
}

static kb_status emu_init(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t errlen)
{
    kb_backend_ctx *x = calloc(1, sizeof *x);
    const char *cxx = getenv("CXX");
    if (!x) {
        snprintf(err, errlen, "emu: out of memory");
        return KB_ERR_OOM;
    }
    if (!cxx || !*cxx)
        cxx = KB_CXX_COMPILER;
    x->cxx_words = strdup(cxx);
    for (char *s = strtok(x->cxx_words, " \t"); s && x->n_cxx < MAX_CXX_WORDS - 1; s = strtok(NULL, " \t"))
        x->cxx_argv[x->n_cxx++] = s;
    if (x->n_cxx == 0 || !program_exists(x->cxx_argv[0])) {
        snprintf(err, errlen, "emu: C++ compiler '%s' not found: install g++ or set CXX", cxx);
        free(x->cxx_words);
        free(x);
        return KB_ERR_SETUP;
    }
    x->sm = o && o->sm_override ? o->sm_override : 90;
    x->shmem_limit_bytes = shmem_limit_for(x->sm);
    x->n_workers = o && o->emu_threads > 0 ? o->emu_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (x->n_workers < 1)
        x->n_workers = 1;
    const char *ffi = getenv("KBENCH_EMU_FFI");
    x->ffi_only = ffi && strcmp(ffi, "1") == 0;
    *out = x;
    return KB_OK;
}

static void emu_fini(kb_backend_ctx *x)
{
    if (!x)
        return;
    kb_emu_exec_destroy(x->exec);
    free(x->cxx_words);
    free(x);
}

static const char *emu_last_error(kb_backend_ctx *x) { return x->err; }

static kb_status emu_device_info(kb_backend_ctx *x, kb_device_info *out)
{
    char cpu[96] = "unknown CPU", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(cpu, sizeof cpu, "%s", colon + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "kbench CPU emulator (%s)", cpu);
    snprintf(out->uuid, sizeof out->uuid, "emu");
    out->sm = x->sm;
    out->sm_count = x->n_workers;
    out->max_shmem_per_block_optin = (int)x->shmem_limit_bytes;
    out->is_emulator = 1;
    return KB_OK;
}

/* Run argv, appending its stdout+stderr to log. Returns the exit status (0..255),
 * or -1 with x->err set when it could not be started. */
static int run_capture(kb_backend_ctx *x, char *const argv[], kb_sb *log)
{
    int fds[2], status = 0;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fail(x, KB_ERR_SETUP, "emu: pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fail(x, KB_ERR_SETUP, "emu: cannot run C++ compiler '%s': %s", argv[0], strerror(rc));
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (log)
            kb_sb_append(log, buf, (size_t)n);
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static const char *emu_toolchain_id(kb_backend_ctx *x)
{
    if (!x->toolchain[0]) {
        char *argv[MAX_CXX_WORDS + 1];
        kb_sb out;
        int i;
        for (i = 0; i < x->n_cxx; i++)
            argv[i] = x->cxx_argv[i];
        argv[i++] = "--version";
        argv[i] = NULL;
        kb_sb_init(&out);
        if (run_capture(x, argv, &out) == 0 && out.len > 0)
            snprintf(x->toolchain, sizeof x->toolchain, "%.*s", (int)strcspn(out.s, "\n"), out.s);
        else
            snprintf(x->toolchain, sizeof x->toolchain, "%s (version unknown)", x->cxx_argv[0]);
        kb_sb_free(&out);
    }
    return x->toolchain;
}

static kb_status emu_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log)
{
    /* argv, never a shell string: paths and defines are passed through untouched */
    int n_args = x->n_cxx + 16 + req->n_defines;
    char **argv = calloc((size_t)n_args, sizeof *argv);
    char **owned = calloc((size_t)req->n_defines + 3, sizeof *owned);
    int n = 0, n_owned = 0, rc;
    kb_status st = KB_OK;
    if (!argv || !owned) {
        st = fail(x, KB_ERR_OOM, "emu: out of memory");
        goto done;
    }
    for (int i = 0; i < x->n_cxx; i++)
        argv[n++] = x->cxx_argv[i];
    argv[n++] = "-std=c++17";
    argv[n++] = "-O2";
    argv[n++] = "-fPIC";
    argv[n++] = "-shared";
    argv[n++] = "-fno-strict-aliasing";   /* kernels reinterpret memory the way CUDA code does */
    argv[n++] = "-fvisibility=hidden";    /* only entries (__global__) and the ABI are exported */
    argv[n++] = "-DKB_EMU";
    if (asprintf(&owned[n_owned], "-DKB_EMU_ARCH=%d", req->sm ? req->sm : x->sm) < 0)
        goto oom;
    argv[n++] = owned[n_owned++];
    for (int i = 0; i < req->n_defines; i++) {
        if (asprintf(&owned[n_owned], "-D%s", req->defines[i]) < 0)
            goto oom;
        argv[n++] = owned[n_owned++];
    }
    if (req->include_dir) {
        if (asprintf(&owned[n_owned], "-I%s", req->include_dir) < 0)
            goto oom;
        argv[n++] = owned[n_owned++];
    }
    argv[n++] = "-x";
    argv[n++] = "c++";
    argv[n++] = (char *)req->source_path;
    argv[n++] = "-o";
    argv[n++] = (char *)out_path;
    argv[n] = NULL;
    rc = run_capture(x, argv, log);
    if (rc < 0)
        st = KB_ERR_SETUP;
    else if (rc != 0) {
        kb_sb_printf(log, "emu: %s exited with status %d compiling %s\n", x->cxx_argv[0], rc, req->source_path);
        st = fail(x, KB_ERR_COMPILE, "emu: %s failed on %s (status %d), see the compile log", x->cxx_argv[0],
                  req->source_path, rc);
    }
    goto done;
oom:
    st = fail(x, KB_ERR_OOM, "emu: out of memory");
done:
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(argv);
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

/* ---- memory: host memory, poisoned ---- */
static kb_status emu_alloc(kb_backend_ctx *x, size_t bytes, kb_dptr *out)
{
    size_t n = (bytes + 255) / 256 * 256;   /* cudaMalloc's 256-byte alignment */
    void *p = aligned_alloc(256, n ? n : 256);
    if (!p)
        return fail(x, KB_ERR_OOM, "emu: cannot allocate %zu bytes", bytes);
    memset(p, 0xff, n ? n : 256);
    *out = (kb_dptr)(uintptr_t)p;
    return KB_OK;
}

static void emu_free(kb_backend_ctx *x, kb_dptr p) { free((void *)(uintptr_t)p); }

static kb_status emu_upload(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t bytes)
{
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return KB_OK;
}

static kb_status emu_download(kb_backend_ctx *x, void *dst, kb_dptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return KB_OK;
}

static kb_status emu_fill(kb_backend_ctx *x, kb_dptr dst, uint8_t byte, size_t bytes)
{
    memset((void *)(uintptr_t)dst, byte, bytes);
    return KB_OK;
}

/* ---- launch ---- */
/* Classify args for kb_emu_direct: integer-class args fill rdi..r9 then the stack slots
 * in order, floats fill xmm0..7. More than that (9+ floats, 17+ integers) -> libffi. */
static void prepare_direct(kb_backend_ctx *x, const kb_arg *args, int nargs, kb_emu_direct *d)
{
    int ng = 0, nx = 0;
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
                     : args[i].kind == KB_ARG_I64 ? (uint64_t)args[i].v.i64 : args[i].v.ptr;
    }
    d->ok = 1;
#else
    (void)x; (void)args; (void)nargs; (void)ng; (void)nx;
#endif
}

static kb_status launch_now(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                            const kb_arg *args, int nargs)
{
    ffi_type *types[64];
    void *values[64];
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
    }
    kb_emu_launch l = {
        .cif = &cif,
        .avalues = values,
        .tls_slot = m->tls_slot,
        .grid = { g->grid[0], g->grid[1], g->grid[2] },
        .block = { g->block[0], g->block[1], g->block[2] },
        .dyn_shmem_bytes = g->shmem_bytes,
    };
    prepare_direct(x, args, nargs, &l.direct);
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
    if (x->capture)
        return record_launch(x, m, entry, g, args, nargs);
    return launch_now(x, m, entry, g, args, nargs);
}

static kb_status emu_sync(kb_backend_ctx *x) { return KB_OK; }

static kb_status emu_timer_start(kb_backend_ctx *x)
{
    clock_gettime(CLOCK_MONOTONIC, &x->t0);
    return KB_OK;
}

static kb_status emu_timer_stop(kb_backend_ctx *x, double *elapsed_us)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *elapsed_us = (double)(t1.tv_sec - x->t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - x->t0.tv_nsec) * 1e-3;
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
};
