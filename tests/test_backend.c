/* test_backend.c - the backend table's promises (kb_backend_check): the KB_CAP_* bits
 * agree with the OPTIONAL slots they name, and kb_backend_open_table refuses a table that
 * breaks them before initialising it; the accessors of the OPTIONAL slots give their
 * defaults on a table without them and call through on one with them; the reporting
 * hook (core/report.h) receives the auto fallback's line. */
#include "check.h"
#include "backend/backend.h"
#include "core/report.h"

#include <string.h>

/* ---- a complete fake table: every required slot, counted init ---- */
static int inits;
static kb_status f_init(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t n)
{
    inits++;
    *out = (kb_backend_ctx *)&inits;
    return KB_OK;
}
static kb_status f_init_nodevice(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t n)
{
    inits++;
    snprintf(err, n, "no device here (test)");
    return KB_ERR_SETUP;
}
static void f_fini(kb_backend_ctx *x) {}
static const char *f_err(kb_backend_ctx *x) { return "fake"; }
static kb_status f_info(kb_backend_ctx *x, kb_device_info *d) { return KB_OK; }
static kb_status f_build(kb_backend_ctx *x, const kb_compile_req *r, const char *p, kb_sb *log) { return KB_OK; }
static kb_status f_load(kb_backend_ctx *x, const char *p, kb_module **m) { return KB_OK; }
static void f_unload(kb_backend_ctx *x, kb_module *m) {}
static kb_status f_alloc(kb_backend_ctx *x, size_t n, kb_dptr *p) { return KB_OK; }
static void f_free(kb_backend_ctx *x, kb_dptr p) {}
static kb_status f_copy_in(kb_backend_ctx *x, kb_dptr d, const void *s, size_t n) { return KB_OK; }
static kb_status f_copy_out(kb_backend_ctx *x, void *d, kb_dptr s, size_t n) { return KB_OK; }
static kb_status f_fill(kb_backend_ctx *x, kb_dptr d, uint8_t b, size_t n) { return KB_OK; }
static kb_status f_launch(kb_backend_ctx *x, kb_module *m, const char *e, const kb_geom *g, const kb_arg *a, int n)
{
    return KB_OK;
}
static kb_status f_sync(kb_backend_ctx *x) { return KB_OK; }
static kb_status f_tstart(kb_backend_ctx *x) { return KB_OK; }
static kb_status f_tstop(kb_backend_ctx *x, double *us) { return KB_OK; }

static int graph_calls;
static kb_status f_gbegin(kb_backend_ctx *x) { graph_calls++; return KB_OK; }
static kb_status f_gend(kb_backend_ctx *x, kb_graph **g) { graph_calls++; *g = (kb_graph *)&graph_calls; return KB_OK; }
static kb_status f_glaunch(kb_backend_ctx *x, kb_graph *g) { graph_calls++; return KB_OK; }
static void f_gfree(kb_backend_ctx *x, kb_graph *g) { graph_calls++; }
static void f_tel(kb_backend_ctx *x, kb_telemetry *t) { memset(t, 0, sizeof *t); t->available = 1; }
static kb_status f_res(kb_backend_ctx *x, kb_module *m, const char *e, kb_resources *r)
{
    memset(r, 0, sizeof *r);
    r->registers = 40;
    return KB_OK;
}
static kb_status f_vplan(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **p, kb_vendor_info *i)
{
    return KB_OK;
}
static kb_status f_vrun(kb_backend_ctx *x, kb_vendor_plan *p) { return KB_OK; }
static void f_vfree(kb_backend_ctx *x, kb_vendor_plan *p) {}

static const kb_backend base = {
    .name = "fake", .caps = 0, .init = f_init, .fini = f_fini, .last_error = f_err, .device_info = f_info,
    .build = f_build, .load = f_load, .unload = f_unload, .alloc = f_alloc, .free = f_free, .upload = f_copy_in,
    .download = f_copy_out, .fill = f_fill, .launch = f_launch, .sync = f_sync, .timer_start = f_tstart,
    .timer_stop = f_tstop,
};

/* kb_backend_check's verdict on b, and its message contains want (NULL: accepted). */
static int judged(const kb_backend *b, const char *want)
{
    char err[256] = "";
    int rc = kb_backend_check(b, err, sizeof err);
    if (!want)
        return rc == 0 && err[0] == 0;
    if (rc == 0 || !strstr(err, want))
        fprintf(stderr, "  check said %d: '%s' (wanted '%s')\n", rc, err, want);
    return rc != 0 && strstr(err, want) != NULL;
}

static void test_shipped_tables_keep_their_promises(void)
{
    CHECK(judged(&kb_backend_cuda, NULL));
    CHECK(judged(&kb_backend_emu, NULL));
    CHECK(judged(&base, NULL));   /* no optional slot, no bit */
}

static void test_bits_and_slots_must_agree(void)
{
    kb_backend b = base;
    b.caps = KB_CAP_GRAPHS;   /* the bit, three of the four slots */
    b.graph_begin = f_gbegin, b.graph_end = f_gend, b.graph_launch = f_glaunch;
    CHECK(judged(&b, "KB_CAP_GRAPHS is set, but its graph_free slot is NULL"));
    b.graph_free = f_gfree;
    CHECK(judged(&b, NULL));
    b.caps = 0;               /* all four slots, no bit */
    CHECK(judged(&b, "KB_CAP_GRAPHS is not set, but its graph_begin slot is set"));

    b = base;
    b.vendor_plan = f_vplan, b.vendor_run = f_vrun;
    CHECK(judged(&b, "KB_CAP_VENDOR_LIBS is not set, but its vendor_plan slot is set"));
    b.caps = KB_CAP_VENDOR_LIBS;
    CHECK(judged(&b, "its vendor_free slot is NULL"));
    b.vendor_free = f_vfree;
    CHECK(judged(&b, NULL));

    b = base;
    b.caps = KB_CAP_TELEMETRY;
    CHECK(judged(&b, "KB_CAP_TELEMETRY is set, but its telemetry slot is NULL"));
    b = base;
    b.resources = f_res;
    CHECK(judged(&b, "KB_CAP_RESOURCES is not set, but its resources slot is set"));
    b = base;
    b.caps = KB_CAP_CUBLASLT;  /* a library without vendor calls */
    CHECK(judged(&b, "without KB_CAP_VENDOR_LIBS"));
    b = base;
    b.sync = NULL;
    CHECK(judged(&b, "its sync slot is not set"));
}

static kb_report_level got_level = KB_REPORT_LEVEL_COUNT;
static char got[512];
static void catch_report(void *user, kb_report_level level, const char *msg)
{
    got_level = level;
    snprintf(got, sizeof got, "%s", msg);
}

static void test_open_refuses_an_inconsistent_table(void)
{
    kb_backend bad = base;
    bad.caps = KB_CAP_TELEMETRY;   /* promises telemetry it cannot read */
    const kb_backend *be = NULL;
    kb_backend_ctx *bx = NULL;
    kb_backend_opts bo;
    memset(&bo, 0, sizeof bo);
    char err[256] = "";
    inits = 0;
    CHECK(kb_backend_open_table(&bad, NULL, &bo, &be, &bx, err, sizeof err) == KB_ERR_INTERNAL);
    CHECK(inits == 0 && strstr(err, "KB_CAP_TELEMETRY"));   /* refused before init */
    CHECK(kb_backend_open_table(&base, NULL, &bo, &be, &bx, err, sizeof err) == KB_OK && be == &base && inits == 1);

    /* a fallback (auto) is checked too, and the line saying so reaches the hook */
    kb_backend nodev = base;
    nodev.init = f_init_nodevice;
    kb_report_set(catch_report, NULL);
    inits = 0;
    CHECK(kb_backend_open_table(&nodev, &bad, &bo, &be, &bx, err, sizeof err) == KB_ERR_INTERNAL && inits == 1);
    CHECK(got_level == KB_REPORT_INFO && strstr(got, "no device here (test); using the CPU emulator"));
    CHECK(kb_backend_open_table(&nodev, &base, &bo, &be, &bx, err, sizeof err) == KB_OK && be == &base);
    kb_report_set(NULL, NULL);
}

static void test_accessors_default_without_slots(void)
{
    const kb_backend *b = &base;
    CHECK(strcmp(kb_be_toolchain_id(b, NULL), "") == 0 && strcmp(kb_be_artifact_ext(b), "") == 0);
    kb_resources r;
    CHECK(kb_be_resources(b, NULL, NULL, "k", &r) == KB_ERR_SETUP && r.registers == -1 && r.max_threads == -1);
    CHECK(kb_be_build_resources(b, "log", "k", &r) == -1 && r.spill_store_bytes == -1);
    kb_telemetry t;
    kb_be_telemetry(b, NULL, &t);
    CHECK(!t.available && strstr(t.why, "the fake backend reads no telemetry"));
    kb_graph *g = (kb_graph *)&t;
    CHECK(kb_be_graph_begin(b, NULL) == KB_ERR_LAUNCH && kb_be_graph_end(b, NULL, &g) == KB_ERR_LAUNCH && !g);
    CHECK(kb_be_graph_launch(b, NULL, NULL) == KB_ERR_LAUNCH);
    kb_be_graph_free(b, NULL, NULL);   /* nothing to free: no crash */
    kb_vendor_plan *p = (kb_vendor_plan *)&t;
    kb_vendor_info vi;
    CHECK(kb_be_vendor_plan(b, NULL, NULL, &p, &vi) == KB_ERR_SETUP && !p);
    CHECK(kb_be_vendor_run(b, NULL, NULL) == KB_ERR_SETUP);
    CHECK(strcmp(kb_be_timing_method(b, NULL), "host monotonic clock around each window") == 0);
    int mhz = 7, max = 7;
    CHECK(kb_be_sample_clock(b, NULL, &mhz, &max) == 0 && mhz == 7 && max == 7);
    kb_health h;
    kb_be_health(b, NULL, &h);
    CHECK(!h.available && strstr(h.why, "the fake backend reads no GPU health") && !h.f[KB_H_PCIE_GEN].read);
}

static void test_accessors_call_through(void)
{
    kb_backend b = base;
    b.caps = KB_CAP_GRAPHS | KB_CAP_TELEMETRY | KB_CAP_RESOURCES;
    b.graph_begin = f_gbegin, b.graph_end = f_gend, b.graph_launch = f_glaunch, b.graph_free = f_gfree;
    b.telemetry = f_tel;
    b.resources = f_res;
    CHECK(judged(&b, NULL));
    graph_calls = 0;
    kb_graph *g = NULL;
    CHECK(kb_be_graph_begin(&b, NULL) == KB_OK && kb_be_graph_end(&b, NULL, &g) == KB_OK && g != NULL);
    CHECK(kb_be_graph_launch(&b, NULL, g) == KB_OK);
    kb_be_graph_free(&b, NULL, g);
    CHECK(graph_calls == 4);
    kb_telemetry t;
    kb_be_telemetry(&b, NULL, &t);
    CHECK(t.available == 1);
    kb_resources r;
    CHECK(kb_be_resources(&b, NULL, NULL, "k", &r) == KB_OK && r.registers == 40);
    CHECK(strcmp(kb_be_artifact_ext(&kb_backend_cuda), ".cubin") == 0);
}

int main(void)
{
    RUN(test_shipped_tables_keep_their_promises);
    RUN(test_bits_and_slots_must_agree);
    RUN(test_open_refuses_an_inconsistent_table);
    RUN(test_accessors_default_without_slots);
    RUN(test_accessors_call_through);
    TEST_MAIN_END();
}
