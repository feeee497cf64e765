/* modules.h - the compile stage of a run: one module per distinct (source, defines,
 * arch), built through the persistent compile cache and loaded once per run, optionally
 * by a pool of compile workers that builds announced modules ahead of their use.
 * kb_modules_get, _resources and _free are called from one thread (the one whose device
 * context loads the modules); the workers only build. */
#ifndef KB_MODULES_H
#define KB_MODULES_H

#include "backend/backend.h"
#include "engine/family.h"

typedef struct kb_modules kb_modules;

typedef struct {
    kb_module *mod;        /* loaded module, NULL when the compile failed */
    kb_status status;      /* KB_OK, or the compile/load failure */
    const char *log;       /* compiler log (ptxas info on cuda); never NULL */
    int cache_hit;         /* 1: the artefact came from the cache */
    double compile_ms;     /* [ms] the build's own time (in whichever thread built it) + load time;
                            * 0 on a repeat within the run */
    char note[512];        /* "" or one line for the operator (the cache rebuilt a damaged entry) */
    const char *artifact;  /* the built artefact's file in the compile cache (a .cubin, .ptx, .so), owned
                            * by the table; NULL when the build failed. Read it, never write it. */
} kb_module_ref;

/* A run's module table over backend be. cache_dir NULL: the default cache. */
kb_modules *kb_modules_new(const kb_backend *be, kb_backend_ctx *bx, const char *cache_dir,
                           const char *kernels_dir);
/* The same, building into the cache only and never loading — `kbench compile`, which
 * needs no device (bx may be NULL for the cuda backend, whose build is NVRTC alone).
 * Its refs carry the status and the compile log, with mod NULL. */
kb_modules *kb_modules_new_build_only(const kb_backend *be, kb_backend_ctx *bx, const char *cache_dir,
                                      const char *kernels_dir);
/* Start jobs compile workers (jobs <= 1: none, everything is built when asked for).
 * Returns the number running, which may be fewer when threads cannot be created. */
int kb_modules_start(kb_modules *ms, int jobs);
/* Announce a module a later kb_modules_get will ask for: queued for the workers in the
 * order announced (nothing when no workers run or it is already known). */
void kb_modules_prefetch(kb_modules *ms, const char *source, const char *defines, int sm);
/* The same for the module case c's variant is compiled into (nothing for a vendor call). */
void kb_modules_prefetch_case(kb_modules *ms, const kb_case *c, int sm);
/* Get (compile and load on first use; wait for a worker building it) the module of source (relative to kernels_dir)
 * with the given "\n"-joined defines for sm. The returned ref lives as long as ms. */
const kb_module_ref *kb_modules_get(kb_modules *ms, const char *source, const char *defines, int sm);
/* The resources of entry in a loaded module: what the backend's resources slot reports,
 * with what only the build log tells (spills) from its build_resources slot. KB_OK with
 * out filled (-1 where unknown); KB_ERR_SETUP when the backend reports none. */
kb_status kb_modules_resources(kb_modules *ms, const kb_module_ref *ref, const char *entry, kb_resources *out);

/* Distinct modules asked for so far. */
int kb_modules_count(const kb_modules *ms);
/* Stop the workers (a build in progress finishes, queued ones are dropped), unload every
 * module and free the table. */
void kb_modules_free(kb_modules *ms);

/* The kernels directory: $KBENCH_KERNELS_DIR, else the source tree's (compile-time). */
const char *kb_kernels_dir(void);

#endif
