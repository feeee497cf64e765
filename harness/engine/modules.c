/* modules.c - compile + load, cached on disk across runs and in memory within one. */
#include "engine/modules.h"

#include "core/paths.h"
#include "engine/cache.h"
#include "engine/defines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEFINES 128

typedef struct {
    char *key;             /* source "\n" sm "\n" defines */
    kb_module_ref ref;
    char *log;
} slot;

struct kb_modules {
    const kb_backend *be;
    kb_backend_ctx *bx;
    const char *cache_dir;
    const char *kernels_dir;
    int load;           /* 0: build into the cache only */
    slot **slots;       /* each slot allocated alone: refs handed out stay valid as the table grows */
    int n, cap;
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
    return ms;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

const kb_module_ref *kb_modules_get(kb_modules *ms, const char *source, const char *defines, int sm)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_sb_printf(&key, "%s\n%d\n%s", source, sm, defines);
    for (int i = 0; i < ms->n; i++)
        if (!strcmp(ms->slots[i]->key, key.s)) {
            kb_sb_free(&key);
            ms->slots[i]->ref.compile_ms = 0;
            return &ms->slots[i]->ref;
        }
    if (ms->n == ms->cap) {
        int cap = ms->cap ? ms->cap * 2 : 16;
        slot **grown = realloc(ms->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            abort();
        ms->slots = grown;
        ms->cap = cap;
    }
    slot *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    ms->slots[ms->n++] = s;
    s->key = key.s; /* owned by the slot now */

    double t0 = now_ms();
    char *defs = strdup(defines);
    const char *dv[MAX_DEFINES];
    int nd = kb_defines_split(defs, dv, MAX_DEFINES);
    kb_sb path;
    kb_sb_init(&path);
    kb_sb_printf(&path, "%s/%s", ms->kernels_dir, source);
    kb_compile_req req = { path.s, ms->kernels_dir, dv, nd, sm };
    kb_cache_entry ce;
    s->ref.status = kb_cache_get(ms->be, ms->bx, &req, ms->cache_dir, &ce);
    s->ref.cache_hit = ce.hit;
    snprintf(s->ref.note, sizeof s->ref.note, "%s", ce.note);
    s->log = ce.log ? strdup(ce.log) : strdup("");
    if (s->ref.status == KB_OK && ms->load) {
        s->ref.status = ms->be->load(ms->bx, ce.path, &s->ref.mod);
        if (s->ref.status != KB_OK) {
            kb_sb l;
            kb_sb_init(&l);
            kb_sb_printf(&l, "%sload %s: %s\n", s->log, ce.path, ms->be->last_error(ms->bx));
            free(s->log);
            s->log = l.s;
        }
    }
    s->ref.log = s->log;
    s->ref.compile_ms = now_ms() - t0;
    kb_cache_entry_free(&ce);
    kb_sb_free(&path);
    free(defs);
    return &s->ref;
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

void kb_modules_free(kb_modules *ms)
{
    if (!ms)
        return;
    for (int i = ms->n - 1; i >= 0; i--) {
        if (ms->slots[i]->ref.mod)
            ms->be->unload(ms->bx, ms->slots[i]->ref.mod);
        free(ms->slots[i]->key);
        free(ms->slots[i]->log);
        free(ms->slots[i]);
    }
    free(ms->slots);
    free(ms);
}

kb_status kb_modules_resources(kb_modules *ms, const kb_module_ref *ref, const char *entry, kb_resources *out)
{
    const kb_backend *be = ms->be;
    if (!be->resources || !ref->mod || be->resources(ms->bx, ref->mod, entry, out) != KB_OK)
        return KB_ERR_SETUP;
    kb_resources logged;
    if (be->build_resources && be->build_resources(ref->log, entry, &logged) == 0) {
        out->spill_store_bytes = logged.spill_store_bytes;
        out->spill_load_bytes = logged.spill_load_bytes;
    }
    return KB_OK;
}
