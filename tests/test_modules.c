/* test_modules.c - the run's module table: one compile per distinct (source, defines,
 * sm), refs that stay valid while the table grows, failures kept per module; the compile
 * workers: builds really in parallel, each module built once, loads only in the asking
 * thread, a stop that drops what was queued. */
#include "check.h"
#include "engine/modules.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int builds, in_flight, max_in_flight, worker_builds, met;
static int loads;
static int load_off_thread;      /* a load ran outside the main thread */
static pthread_t main_thread;
static int slow_us;              /* each build sleeps this long */
static char last_err[64] = "";

static const char *fake_err(kb_backend_ctx *x) { return last_err; }
static const char *fake_tool(kb_backend_ctx *x) { return "fake 1"; }

/* "GATE=1" builds wait (up to 5 s) until two builds are in flight at once: with a pool
 * they meet, built one after the other they time out. */
static void gate(void)
{
    for (int i = 0; i < 5000 && !atomic_load(&met); i++)
        usleep(1000);
}

static int has_define(const kb_compile_req *req, const char *d)
{
    for (int i = 0; i < req->n_defines; i++)
        if (!strcmp(req->defines[i], d))
            return 1;
    return 0;
}

static kb_status fake_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out, kb_sb *log)
{
    atomic_fetch_add(&builds, 1);
    if (!pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add(&worker_builds, 1);
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    for (int m = atomic_load(&max_in_flight); now > m && !atomic_compare_exchange_weak(&max_in_flight, &m, now);)
        ;
    if (now >= 2)
        atomic_store(&met, 1);
    if (has_define(req, "GATE=1"))
        gate();
    if (slow_us)
        usleep((useconds_t)slow_us);
    atomic_fetch_sub(&in_flight, 1);
    if (has_define(req, "BROKEN=1")) {
        kb_sb_printf(log, "error: broken on purpose");
        return KB_ERR_COMPILE;
    }
    FILE *f = fopen(out, "w");
    fputs("artefact", f);
    fclose(f);
    kb_sb_printf(log, "built with %d defines", req->n_defines);
    return KB_OK;
}

static kb_status fake_load(kb_backend_ctx *x, const char *path, kb_module **out)
{
    if (!pthread_equal(pthread_self(), main_thread))
        load_off_thread = 1;
    *out = (kb_module *)(intptr_t)(++loads); /* a distinct non-NULL handle per load */
    return KB_OK;
}

static void fake_unload(kb_backend_ctx *x, kb_module *m) { loads--; }

static const kb_backend fake = {
    .name = "fake", .last_error = fake_err, .toolchain_id = fake_tool, .artifact_ext = ".bin",
    .build = fake_build, .load = fake_load, .unload = fake_unload,
};

static char cache[] = "/tmp/kbench-modules-XXXXXX";

static void test_refs_survive_growth_and_repeats_compile_once(void)
{
    builds = 0;
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *first = kb_modules_get(ms, "emu_block.cu", "A=0", 90);
    CHECK(first->status == KB_OK && first->mod != NULL);
    kb_module *first_mod = first->mod;
    char defs[32];
    for (int i = 1; i < 100; i++) {   /* far past the table's first growth */
        snprintf(defs, sizeof defs, "A=%d", i);
        CHECK(kb_modules_get(ms, "emu_block.cu", defs, 90)->status == KB_OK);
    }
    CHECK(first->mod == first_mod && first->status == KB_OK);   /* still readable, unchanged */
    CHECK(strstr(first->log, "built with 1 defines") != NULL);
    int before = atomic_load(&builds);
    CHECK(kb_modules_get(ms, "emu_block.cu", "A=0", 90) == first);
    CHECK(kb_modules_get(ms, "emu_block.cu", "A=0", 80) != first);  /* another arch is another module */
    CHECK(builds == before + 1);
    kb_modules_free(ms);
    CHECK(loads == 0);   /* every module unloaded */
}

static void test_compile_failure_is_kept(void)
{
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *r = kb_modules_get(ms, "emu_block.cu", "BROKEN=1", 90);
    CHECK(r->status == KB_ERR_COMPILE && r->mod == NULL);
    CHECK(strstr(r->log, "broken on purpose") != NULL);
    int before = atomic_load(&builds);
    CHECK(kb_modules_get(ms, "emu_block.cu", "BROKEN=1", 90) == r && atomic_load(&builds) == before);
    kb_modules_free(ms);
}

static void test_build_only_never_loads(void)
{
    int before_loads = loads, before_builds = atomic_load(&builds);
    kb_modules *ms = kb_modules_new_build_only(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *r = kb_modules_get(ms, "emu_block.cu", "B=1", 90);
    CHECK(r->status == KB_OK && r->mod == NULL && loads == before_loads);
    CHECK(strstr(r->log, "built with") != NULL && builds == before_builds + 1);
    CHECK(kb_modules_count(ms) == 1);
    kb_modules_free(ms);
}

static void reset_counts(void)
{
    atomic_store(&builds, 0);
    atomic_store(&max_in_flight, 0);
    atomic_store(&worker_builds, 0);
    atomic_store(&met, 0);
    slow_us = 0;
}

static void test_workers_build_in_parallel_and_once(void)
{
    reset_counts();
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    CHECK(kb_modules_start(ms, 2) == 2);
    kb_modules_prefetch(ms, "emu_block.cu", "GATE=1\nP=0", 90);
    kb_modules_prefetch(ms, "emu_block.cu", "GATE=1\nP=1", 90);
    kb_modules_prefetch(ms, "emu_block.cu", "P=2", 90);
    kb_modules_prefetch(ms, "emu_block.cu", "GATE=1\nP=0", 90);   /* announced twice: queued once */
    const kb_module_ref *r0 = kb_modules_get(ms, "emu_block.cu", "GATE=1\nP=0", 90);
    const kb_module_ref *r1 = kb_modules_get(ms, "emu_block.cu", "GATE=1\nP=1", 90);
    const kb_module_ref *r2 = kb_modules_get(ms, "emu_block.cu", "P=2", 90);
    CHECK(r0->status == KB_OK && r1->status == KB_OK && r2->status == KB_OK);
    CHECK(r0->mod && r1->mod && r2->mod && r0->mod != r1->mod);
    CHECK(atomic_load(&max_in_flight) == 2);     /* the gated pair met: built at the same time */
    CHECK(atomic_load(&builds) == 3);            /* each distinct module once */
    CHECK(atomic_load(&worker_builds) >= 1);
    CHECK(!load_off_thread);                     /* loads stay in the asking thread */
    CHECK(r0->compile_ms > 0 && strstr(r0->log, "built with 2 defines") != NULL);
    CHECK(kb_modules_get(ms, "emu_block.cu", "GATE=1\nP=0", 90) == r0 && r0->compile_ms == 0);  /* a repeat */
    CHECK(kb_modules_count(ms) == 3);
    kb_modules_free(ms);
    CHECK(loads == 0);
}

static void test_failures_and_unannounced_modules_with_workers(void)
{
    reset_counts();
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    CHECK(kb_modules_start(ms, 3) == 3);
    kb_modules_prefetch(ms, "emu_block.cu", "BROKEN=1\nW=1", 90);
    const kb_module_ref *bad = kb_modules_get(ms, "emu_block.cu", "BROKEN=1\nW=1", 90);
    CHECK(bad->status == KB_ERR_COMPILE && bad->mod == NULL && strstr(bad->log, "broken on purpose"));
    const kb_module_ref *late = kb_modules_get(ms, "emu_block.cu", "W=2", 90);   /* never announced */
    CHECK(late->status == KB_OK && late->mod != NULL);
    CHECK(atomic_load(&builds) == 2);
    kb_modules_free(ms);
}

static void test_no_workers_means_no_prefetch(void)
{
    reset_counts();
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    CHECK(kb_modules_start(ms, 1) == 0);         /* -j 1: built when asked for, in this thread */
    kb_modules_prefetch(ms, "emu_block.cu", "N=1", 90);
    CHECK(atomic_load(&builds) == 0 && kb_modules_count(ms) == 0);
    CHECK(kb_modules_get(ms, "emu_block.cu", "N=1", 90)->status == KB_OK);
    CHECK(atomic_load(&builds) == 1 && atomic_load(&worker_builds) == 0);
    kb_modules_free(ms);
}

static void test_free_drops_what_is_queued(void)
{
    reset_counts();
    slow_us = 20000;
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    CHECK(kb_modules_start(ms, 2) == 2);
    char defs[32];
    for (int i = 0; i < 40; i++) {
        snprintf(defs, sizeof defs, "Q=%d", i);
        kb_modules_prefetch(ms, "emu_block.cu", defs, 90);
    }
    kb_modules_free(ms);   /* builds in progress finish, the rest never start */
    CHECK(atomic_load(&builds) < 40);
    CHECK(atomic_load(&in_flight) == 0);
    slow_us = 0;
}

int main(void)
{
    main_thread = pthread_self();
    if (!mkdtemp(cache))
        return 2;
    RUN(test_refs_survive_growth_and_repeats_compile_once);
    RUN(test_compile_failure_is_kept);
    RUN(test_build_only_never_loads);
    RUN(test_workers_build_in_parallel_and_once);
    RUN(test_failures_and_unannounced_modules_with_workers);
    RUN(test_no_workers_means_no_prefetch);
    RUN(test_free_drops_what_is_queued);
    TEST_MAIN_END();
}
