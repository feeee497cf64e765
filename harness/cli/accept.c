/* accept.c - `kbench accept` (see accept.h): identity, device, spec, the accept suite run
 * through kb_cmd_run (the one walk, pipeline and record writer), then the verdict. */
#include "cli/accept.h"

#include "accept/identity.h"
#include "accept/verdict_io.h"
#include "core/fsutil.h"
#include "core/paths.h"
#include "engine/peaks.h"
#include "results/record.h"
#include "results/record_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    kb_accept_opts *o;
    kb_acc_identity id;
    kb_device_info dev;
    const char *backend;        /* the backend's name */
    kb_peaks peaks;
    int have_peaks;
    kb_acc_spec spec;
    const char *matched_by;
    char key[200];              /* this rank's file-name key */
    kb_sb records, verdict_path, junit_path;
} accept_ctx;

static char *env_get(void *user, const char *name) { return getenv(name); }

/* The device, its peaks and its spec. An exit code, or -1 to go on. */
static int device_and_spec(accept_ctx *x)
{
    kb_run_opts *r = &x->o->run;
    char err[1024] = "";
    kb_backend_opts bo;
    if (kb_run_backend_opts(r, &bo) != 0)
        return KB_EXIT_INPUT;
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_status st = kb_backend_open(r->backend, &bo, &be, &bx, err, sizeof err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    }
    st = be->device_info(bx, &x->dev);
    x->backend = be->name;
    r->backend = be->name;   /* the run opens the same backend, without a second "auto" banner */
    if (st != KB_OK)
        fprintf(stderr, "kbench: device query: %s\n", be->last_error(bx));
    be->fini(bx);
    if (st != KB_OK)
        return KB_EXIT_SETUP;
    if (x->dev.caps & KB_CAP_ROOFLINE)
        x->have_peaks = kb_peaks_for_device(&x->dev, NULL, &x->peaks, NULL) == KB_OK;
    kb_sb msg;
    kb_sb_init(&msg);
    kb_acc_gpu g = { x->dev.name, x->dev.sm, x->dev.sm_count, 0 };
    if (x->o->spec_path) {
        st = kb_acc_spec_load(x->o->spec_path, &x->spec, &msg);
        x->matched_by = "--spec";
    } else {
        st = kb_acc_spec_find(kb_acc_spec_dir(), &g, &x->spec, &x->matched_by, &msg);
    }
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", msg.s);
    kb_sb_free(&msg);
    if (st == KB_OK)
        return -1;
    return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
}

/* Where this rank's files go: DIR/<key>/records-<time>-<pid>.jsonl, DIR/<key>.verdict.json,
 * DIR/<key>.junit.xml. An exit code, or -1 to go on. */
static int plan_files(accept_ctx *x)
{
    const char *dir = x->o->out_dir ? x->o->out_dir : "results/accept";
    kb_acc_rank_key(&x->id, (int)getpid(), x->key, sizeof x->key);
    char ts[20];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    kb_sb_printf(&x->records, "%s/%s/records-%s-%d.jsonl", dir, x->key, ts, (int)getpid());
    kb_sb_printf(&x->verdict_path, "%s/%s.verdict.json", dir, x->key);
    kb_sb_printf(&x->junit_path, "%s/%s.junit.xml", dir, x->key);
    if (kb_fs_mkdir_parent(x->records.s) != KB_OK || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "kbench accept: --out-dir %s: not a directory kbench can write to\n", dir);
        return KB_EXIT_SETUP;
    }
    return -1;
}

/* ---- the console table ---- */

static void print_table(const accept_ctx *x, const kb_acc_verdict *v)
{
    printf("kbench accept: %s (%s, %s) on %s, rank %d (%s); spec %s (%s)\n", x->dev.name, x->dev.uuid,
           *x->dev.pci_bus_id ? x->dev.pci_bus_id : "no PCI bus id", x->id.host, x->id.rank, x->id.launcher,
           x->spec.name, x->matched_by);
    printf("%-17s %-5s %20s %12s  %s\n", "test", "", "value", "threshold", "reason");
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        const kb_acc_result *r = &v->r[t];
        char val[40] = "-", thr[40] = "-";
        if (r->have_value)
            snprintf(val, sizeof val, "%.4g %s%s", r->value, kb_acc_test_unit((kb_acc_test)t),
                     !strcmp(r->clock, "cpu") ? " cpu" : "");
        if (r->have_threshold)
            snprintf(thr, sizeof thr, "%s %.4g", kb_acc_test_kind((kb_acc_test)t) == KB_ACC_KIND_LIMIT ? "<=" : ">=",
                     r->threshold);
        printf("%-17s %-5s %20s %12s  %s\n", kb_acc_test_name((kb_acc_test)t), kb_acc_status_name(r->status), val,
               thr, r->reason);
    }
    if (!v->gpu_thresholds)
        printf("kbench accept: GPU thresholds were not applied (no GPU timing: %s timings are CPU time)\n",
               x->backend);
    printf("kbench accept: verdict %s\n", kb_acc_status_name(v->worst));
}

/* ---- verdict ---- */

static kb_status write_outputs(accept_ctx *x, json_t *vj)
{
    kb_sb err;
    kb_sb_init(&err);
    json_t *arr = json_pack("[O]", vj);
    kb_status st = kb_acc_write_json(x->verdict_path.s, vj, &err);
    if (st == KB_OK)
        st = kb_acc_junit_file(x->junit_path.s, arr, "kbench accept", &err);
    if (st == KB_OK && x->o->json_path)
        st = kb_acc_write_json(x->o->json_path, vj, &err);
    if (st == KB_OK && x->o->junit_path)
        st = kb_acc_junit_file(x->o->junit_path, arr, "kbench accept", &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench accept: %s\n", err.s);
    else
        fprintf(stderr, "kbench accept: verdict in %s, JUnit in %s, records in %s\n", x->verdict_path.s,
                x->junit_path.s, x->records.s);
    json_decref(arr);
    kb_sb_free(&err);
    return st;
}

/* Judge the records and write the verdict. The exit code. */
static int judge(accept_ctx *x)
{
    json_t **objs = NULL;
    size_t n = 0;
    kb_sb err;
    kb_sb_init(&err);
    if (kb_record_load(x->records.s, &objs, &n, &err) != KB_OK) {
        fprintf(stderr, "kbench accept: %s\n", err.s);
        kb_sb_free(&err);
        return KB_EXIT_SETUP;
    }
    kb_sb_free(&err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(arr, objs[i]);
    kb_record_free_all(objs, n);
    kb_acc_verdict v;
    kb_acc_evaluate(&x->spec, x->have_peaks ? &x->peaks : NULL, arr, &v);
    json_decref(arr);
    char when[32];
    kb_record_time_now(when);
    kb_acc_context c = { &x->id, &x->dev, x->backend, &x->spec, x->matched_by, x->records.s, when };
    json_t *vj = kb_acc_verdict_json(&c, &v);
    if (!vj)
        return KB_EXIT_SETUP;
    int rc = (int)json_integer_value(json_object_get(vj, "exit_code"));
    print_table(x, &v);
    if (write_outputs(x, vj) != KB_OK)
        rc = rc > KB_EXIT_SETUP ? rc : KB_EXIT_SETUP;
    json_decref(vj);
    return rc;
}

/* Test hook: with KBENCH_FAULT_RANKS="2,5" the emulator's fault injection
 * (KBENCH_EMU_SLOWDOWN, KBENCH_EMU_CORRUPT) applies to those ranks only - srun gives
 * every task the same environment. */
static void fault_hooks_for_rank(int rank)
{
    const char *ranks = getenv("KBENCH_FAULT_RANKS");
    if (!ranks)
        return;
    for (const char *p = ranks; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end != p && r == rank)
            return;
        p = *end ? end + 1 : end;
    }
    unsetenv("KBENCH_EMU_SLOWDOWN");
    unsetenv("KBENCH_EMU_CORRUPT");
}

static int accept_main(void *opts)
{
    accept_ctx x;
    memset(&x, 0, sizeof x);
    x.o = opts;
    kb_sb_init(&x.records);
    kb_sb_init(&x.verdict_path);
    kb_sb_init(&x.junit_path);
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    kb_acc_identity_read(env_get, NULL, host, &x.id);
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);   /* CUDA's numbering = NVML's */
    fault_hooks_for_rank(x.id.rank);
    kb_run_opts *r = &x.o->run;
    r->device_index = kb_acc_pick_device(r->device_index, getenv("CUDA_VISIBLE_DEVICES"), x.id.local_rank);
    int rc = device_and_spec(&x);
    if (rc < 0)
        rc = plan_files(&x);
    if (rc < 0) {
        static char suite[1100];
        snprintf(suite, sizeof suite, "%s/suites/accept.yaml", kb_data_root());
        r->suite_path = x.o->suite ? x.o->suite : suite;
        r->out_path = x.records.s;
        rc = kb_cmd_run(r);
        /* 0 and 1 (a case failed: the verdict says which) go on to the verdict */
        rc = rc == KB_EXIT_OK || rc == KB_EXIT_WRONG ? judge(&x) : rc;
    }
    kb_sb_free(&x.records);
    kb_sb_free(&x.verdict_path);
    kb_sb_free(&x.junit_path);
    return rc;
}

static void accept_defaults(void *o)
{
    kb_run_opts_defaults(o);
    ((kb_accept_opts *)o)->run.device_index = -1;  /* chosen from the rank unless --device */
    ((kb_accept_opts *)o)->run.quiet = 1;
}

static const kb_opt accept_opts[] = {
    { "--spec", NULL, KB_OPT_STR, offsetof(kb_accept_opts, spec_path), "FILE",
      "the acceptance spec (default: the one under data/acceptance/ matching the GPU, else generic)", 0, 0, 0, NULL,
      0 },
    { "--out-dir", NULL, KB_OPT_STR, offsetof(kb_accept_opts, out_dir), "DIR",
      "verdict, JUnit and records of this rank under DIR (shared by a fleet's ranks; default results/accept)", 0, 0,
      0, NULL, 0 },
    { "--json", NULL, KB_OPT_STR, offsetof(kb_accept_opts, json_path), "FILE", "a copy of the verdict JSON", 0, 0,
      0, NULL, 0 },
    { "--junit", NULL, KB_OPT_STR, offsetof(kb_accept_opts, junit_path), "FILE", "a copy of the JUnit XML", 0, 0,
      0, NULL, 0 },
    { "--suite", NULL, KB_OPT_STR, offsetof(kb_accept_opts, suite), "FILE",
      "the cases to run (default suites/accept.yaml)", 0, 0, 0, NULL, 0 },
    KB_ROW_BACKEND,
    KB_ROW_ARCH,
    KB_ROW_DEVICE,
    KB_ROW_CACHE_DIR,
    KB_ROW_THREADS,
    { "--verbose", "-v", KB_OPT_SET, offsetof(kb_run_opts, quiet), NULL, "print a row per case", 0, 0, 0, NULL, 0 },
};

const kb_command kb_command_accept = {
    "accept", "", 0, 0, 0,
    "hardware acceptance of the local GPU: verdict per test (PASS/WARN/FAIL/SKIP), JSON, JUnit",
    "Exit codes: 0 every test that ran passed; 5 a performance floor missed; 6 wrong results or a hardware\n"
    "error; 3 setup error or nothing could be checked; 2 bad command line or spec. Under srun, the highest\n"
    "code of the tasks (the worst GPU) is the step's. docs/acceptance.md describes the tests and specs.",
    accept_opts, (int)(sizeof accept_opts / sizeof accept_opts[0]), sizeof(kb_accept_opts), accept_defaults,
    accept_main,
};
