/* modules.c - compile + load, cached on disk across runs and in memory within one; with
 * kb_modules_start, a pool of compile workers builds modules announced by
 * kb_modules_prefetch ahead of the thread that loads and uses them.
 *
 * A slot moves QUEUED -> BUILDING -> BUILT -> DONE. Workers take QUEUED slots in the
 * order they were announced and only ever build (kb_cache_get: NVRTC is thread-safe,
 * the emulator's host compiler is a child process). Loading, which needs the calling
 * thread's device context, and everything after BUILT happen in kb_modules_get. A slot
 * asked for while still QUEUED is built by the asking thread at once. One mutex guards
 * the table and the states; one condition variable says "a slot was queued or built". */
#include "engine/modules.h"

#include "core/paths.h"
#include "engine/cache.h"
#include "engine/defines.h"
#include "kernels/families.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEFINES 128
#define MAX_JOBS 256

enum { S_QUEUED, S_BUILDING, S_BUILT, S_DONE };

typedef struct {
    char *key;             /* source "\n" sm "\n" defines */
    char *source, *defines;
    int sm;
    int state;             /* S_*, under the lock */
    kb_status build_status;
    kb_cache_entry ce;     /* the build's result, until DONE */
    double build_ms;       /* [ms] the build's own wall time, whichever thread ran it */
    int handed;            /* 1: returned by kb_modules_get before */
    kb_module_ref ref;
    char *log;
    char *artifact;        /* the cache file, for ref.artifact */
} slot;

struct kb_modules {
    const kb_backend *be;
    kb_backend_ctx *bx;
    const char *cache_dir;
    const char *kernels_dir;
    int load;           /* 0: build into the cache only */
    slot **slots;       /* each slot allocated alone: refs handed out stay valid as the table grows */
    int n, cap;
    int scan;           /* slots before this index are not QUEUED */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t workers[MAX_JOBS];
    int n_workers, stop;
};

const char *kb_kernels_dir(void)
{
    static char dir[4096];
    const char *d = getenv("KBENCH_KERNELS_DIR");
    if (d && *d)
        return d;
    snprintf(dir, sizeof dir, "%s/kernels", kb_data_root());
    return dir;
}

static kb_modules *modules_new(const kb_backend *be, kb_backend_ctx *bx, const char *cache_dir,
                               const char *kernels_dir, int load)
{
    kb_modules *ms = calloc(1, sizeof *ms);
    if (!ms)
        return NULL;
    ms->be = be;
    ms->bx = bx;
    ms->cache_dir = cache_dir;
    ms->kernels_dir = kernels_dir;
    ms->load = load;
    pthread_mutex_init(&ms->lock, NULL);
    pthread_cond_init(&ms->cond, NULL);
    return ms;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- the table (callers hold the lock) ---- */

static slot *find(kb_modules *ms, const char *key)
{
    for (int i = 0; i < ms->n; i++)
        if (!strcmp(ms->slots[i]->key, key))
            return ms->slots[i];
    return NULL;
}

/* A new slot in state; key is owned by the slot from here. NULL when out of memory
 * (key freed). */
static slot *add(kb_modules *ms, char *key, const char *source, const char *defines, int sm, int state)
{
    if (ms->n == ms->cap) {
        int cap = ms->cap ? ms->cap * 2 : 16;
        slot **grown = realloc(ms->slots, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(key);
            return NULL;
        }
        ms->slots = grown;
        ms->cap = cap;
    }
    slot *s = calloc(1, sizeof *s);
    char *src = strdup(source), *defs = strdup(defines);
    if (!s || !src || !defs) {
        free(s);
        free(src);
        free(defs);
        free(key);
        return NULL;
    }
    *s = (slot){ .key = key, .source = src, .defines = defs, .sm = sm, .state = state };
    ms->slots[ms->n++] = s;
    return s;
}

static char *key_of(const char *source, const char *defines, int sm)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_sb_printf(&key, "%s\n%d\n%s", source, sm, defines);
    return key.s;
}

/* ---- building (no lock held: any thread) ---- */

static void build(kb_modules *ms, slot *s)
{
    double t0 = now_ms();
    char *defs = strdup(s->defines);
    const char *dv[MAX_DEFINES];
    int nd = defs ? kb_defines_split(defs, dv, MAX_DEFINES) : 0;
    kb_sb path;
    kb_sb_init(&path);
    kb_sb_printf(&path, "%s/%s", ms->kernels_dir, s->source);
    kb_compile_req req = { path.s, ms->kernels_dir, dv, nd, s->sm };
    s->build_status = defs ? kb_cache_get(ms->be, ms->bx, &req, ms->cache_dir, &s->ce) : KB_ERR_OOM;
    s->build_ms = now_ms() - t0;
    kb_sb_free(&path);
    free(defs);
}

static void build_and_publish(kb_modules *ms, slot *s)
{
    build(ms, s);
    pthread_mutex_lock(&ms->lock);
    s->state = S_BUILT;
    pthread_cond_broadcast(&ms->cond);
    pthread_mutex_unlock(&ms->lock);
}

static slot *next_queued(kb_modules *ms)
{
    for (; ms->scan < ms->n; ms->scan++)
        if (ms->slots[ms->scan]->state == S_QUEUED)
            return ms->slots[ms->scan];
    return NULL;
}

static void *worker(void *arg)
{
    kb_modules *ms = arg;
    pthread_mutex_lock(&ms->lock);
    for (;;) {
        slot *s = NULL;
        while (!ms->stop && !(s = next_queued(ms)))
            pthread_cond_wait(&ms->cond, &ms->lock);
        if (ms->stop)
            break;
        s->state = S_BUILDING;
        pthread_mutex_unlock(&ms->lock);
        build_and_publish(ms, s);
        pthread_mutex_lock(&ms->lock);
    }
    pthread_mutex_unlock(&ms->lock);
    return NULL;
}

/* ---- after the build (the asking thread) ---- */

/* BUILT -> DONE: load, keep the log, the compile time this ref reports. */
static void finish(kb_modules *ms, slot *s)
{
    double t0 = now_ms();
    kb_cache_entry *ce = &s->ce;
    s->ref.status = s->build_status;
    s->ref.cache_hit = ce->hit;
    snprintf(s->ref.note, sizeof s->ref.note, "%s", ce->note);
    s->log = strdup(ce->log ? ce->log : (s->build_status == KB_ERR_OOM ? "out of memory\n" : ""));
    if (s->ref.status == KB_OK && ms->load) {
        s->ref.status = ms->be->load(ms->bx, ce->path, &s->ref.mod);
        if (s->ref.status != KB_OK) {
            kb_sb l;
            kb_sb_init(&l);
            kb_sb_printf(&l, "%sload %s: %s\n", s->log ? s->log : "", ce->path, ms->be->last_error(ms->bx));
            free(s->log);
            s->log = l.s;
        }
    }
    s->ref.log = s->log ? s->log : "out of memory\n";
    s->ref.compile_ms = s->build_ms + (now_ms() - t0);
    s->artifact = ce->path && s->build_status == KB_OK ? strdup(ce->path) : NULL;
    s->ref.artifact = s->artifact;
    kb_cache_entry_free(ce);
}

/* The slot of key, built by this thread when nobody has started it; NULL when out of memory. */
static slot *claim(kb_modules *ms, const char *source, const char *defines, int sm)
{
    char *key = key_of(source, defines, sm);
    if (!key)
        return NULL;
    pthread_mutex_lock(&ms->lock);
    slot *s = find(ms, key);
    int mine = 0;
    if (!s) {
        s = add(ms, key, source, defines, sm, S_BUILDING);
        mine = s != NULL;
    } else {
        free(key);
        if (s->state == S_QUEUED) {
            s->state = S_BUILDING;
            mine = 1;
        }
    }
    pthread_mutex_unlock(&ms->lock);
    if (mine)
        build_and_publish(ms, s);
    pthread_mutex_lock(&ms->lock);
    while (s && s->state == S_BUILDING)
        pthread_cond_wait(&ms->cond, &ms->lock);
    pthread_mutex_unlock(&ms->lock);
    return s;
}

static const kb_module_ref oom_ref = { NULL, KB_ERR_OOM, "out of memory\n", 0, 0, "", NULL };

const kb_module_ref *kb_modules_get(kb_modules *ms, const char *source, const char *defines, int sm)
{
    slot *s = claim(ms, source, defines, sm);
    if (!s)
        return &oom_ref;
    if (s->state == S_BUILT) {   /* only the asking thread moves a slot on from BUILT */
        finish(ms, s);
        pthread_mutex_lock(&ms->lock);
        s->state = S_DONE;
        pthread_mutex_unlock(&ms->lock);
    }
    if (s->handed)
        s->ref.compile_ms = 0;   /* a repeat within the run */
    s->handed = 1;
    return &s->ref;
}

void kb_modules_prefetch(kb_modules *ms, const char *source, const char *defines, int sm)
{
    if (ms->n_workers == 0)
        return;
    char *key = key_of(source, defines, sm);
    if (!key)
        return;
    pthread_mutex_lock(&ms->lock);
    if (find(ms, key))
        free(key);
    else if (add(ms, key, source, defines, sm, S_QUEUED))
        pthread_cond_broadcast(&ms->cond);
    pthread_mutex_unlock(&ms->lock);
}

void kb_modules_prefetch_case(kb_modules *ms, const kb_case *c, int sm)
{
    const kb_family *f = kb_families[c->family];
    if (ms->n_workers == 0 || !f->variants[c->variant].entry)
        return;   /* a vendor library call compiles nothing of kbench's */
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(f, c, &defs);
    kb_modules_prefetch(ms, f->source, defs.s, sm);
    kb_sb_free(&defs);
}

int kb_modules_start(kb_modules *ms, int jobs)
{
    if (jobs > MAX_JOBS)
        jobs = MAX_JOBS;
    for (int i = ms->n_workers; jobs > 1 && i < jobs; i++) {
        if (pthread_create(&ms->workers[i], NULL, worker, ms) != 0)
            break;
        ms->n_workers++;
    }
    return ms->n_workers;
}

kb_modules *kb_modules_new(const kb_backend *be, kb_backend_ctx *bx, const char *cache_dir,
                           const char *kernels_dir)
{
    return modules_new(be, bx, cache_dir, kernels_dir, 1);
}

kb_modules *kb_modules_new_build_only(const kb_backend *be, kb_backend_ctx *bx, const char *cache_dir,
                                      const char *kernels_dir)
{
    return modules_new(be, bx, cache_dir, kernels_dir, 0);
}

int kb_modules_count(const kb_modules *ms) { return ms->n; }

static void stop_workers(kb_modules *ms)
{
    pthread_mutex_lock(&ms->lock);
    ms->stop = 1;
    pthread_cond_broadcast(&ms->cond);
    pthread_mutex_unlock(&ms->lock);
    for (int i = 0; i < ms->n_workers; i++)
        pthread_join(ms->workers[i], NULL);
    ms->n_workers = 0;
}

void kb_modules_free(kb_modules *ms)
{
    if (!ms)
        return;
    stop_workers(ms);   /* a build in progress finishes; queued ones never start */
    for (int i = ms->n - 1; i >= 0; i--) {
        slot *s = ms->slots[i];
        if (s->ref.mod)
            ms->be->unload(ms->bx, s->ref.mod);
        kb_cache_entry_free(&s->ce);
        free(s->key);
        free(s->source);
        free(s->defines);
        free(s->log);
        free(s->artifact);
        free(s);
    }
    free(ms->slots);
    pthread_cond_destroy(&ms->cond);
    pthread_mutex_destroy(&ms->lock);
    free(ms);
}

kb_status kb_modules_resources(kb_modules *ms, const kb_module_ref *ref, const char *entry, kb_resources *out)
{
    const kb_backend *be = ms->be;
    if (!ref->mod || kb_be_resources(be, ms->bx, ref->mod, entry, out) != KB_OK)
        return KB_ERR_SETUP;
    kb_resources logged;
    if (kb_be_build_resources(be, ref->log, entry, &logged) == 0) {
        out->spill_store_bytes = logged.spill_store_bytes;
        out->spill_load_bytes = logged.spill_load_bytes;
    }
    return KB_OK;
}
