/* accept.c - `kbench accept` (see accept.h): identity, device (a session's), spec, the
 * accept suite run through kb_cmd_run (the session's one walk, pipeline and record
 * sinks), then the verdict. */
#include "cli/accept.h"

#include "accept/health.h"
#include "accept/sysnode.h"
#include "accept/system.h"
#include "cli/accept_system.h"
#include "accept/identity.h"
#include "accept/verdict_io.h"
#include "core/fsutil.h"
#include "core/paths.h"
#include "results/record.h"
#include "results/record_json.h"

#include <dirent.h>
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
    char stamp[40];             /* "<UTC time>-<pid>": this run's records files */
    kb_sb records, verdict_path, junit_path;
    int n_checks;               /* kernel check suites run */
    char **checks;              /* their records files (as many as there are suites) */
    kb_health health;           /* read after the suite ran (health_after_run) */
    char why[1024];             /* NOT_CHECKED: why no GPU could be checked */
} accept_ctx;

#define NOT_CHECKED (-2)        /* device_and_spec: no usable GPU (x->why) */

static char *env_get(void *user, const char *name) { return getenv(name); }

/* The device, its peaks and its spec. An exit code, -1 to go on, or NOT_CHECKED with
 * x->why: no usable GPU. --backend auto is a GPU or nothing here: accept never falls back
 * to the emulator unasked (its CPU run would judge nothing of this node); --backend emu
 * asks for the emulator. */
static int device_and_spec(accept_ctx *x)
{
    kb_run_opts *r = &x->o->run;
    kb_session_opts so;
    if (kb_run_session_opts(r, &so) != 0)
        return KB_EXIT_INPUT;
    so.keep_unusable = 1;    /* judged below, before anything runs */
    if (!strcmp(so.backend, "auto"))
        so.backend = "cuda";
    kb_session *s;
    kb_sb msg;
    kb_sb_init(&msg);
    kb_status st = kb_session_open(&so, &s, &msg);
    if (st == KB_ERR_SETUP)
        snprintf(x->why, sizeof x->why, "no usable GPU: %s", msg.s);
    if (st != KB_OK) {
        if (st != KB_ERR_SETUP)
            fprintf(stderr, "kbench: %s\n", msg.s);
        kb_sb_free(&msg);
        return st == KB_ERR_SETUP ? NOT_CHECKED : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    }
    x->dev = *kb_session_device(s);
    if (x->dev.toolchain_unusable) {
        snprintf(x->why, sizeof x->why, "no usable GPU: %.127s: %.700s", x->dev.name, x->dev.toolchain_note);
        kb_session_close(s);
        kb_sb_free(&msg);
        return NOT_CHECKED;
    }
    x->backend = kb_session_backend_name(s);   /* a static name: it outlives the session */
    r->backend = x->backend;   /* the run opens the same backend, without a second "auto" banner */
    if (x->dev.caps & KB_CAP_ROOFLINE)
        x->have_peaks = kb_session_datasheet_peaks(s, &x->peaks, NULL) == KB_OK;
    kb_session_close(s);
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
    return st == KB_ERR_SETUP || st == KB_ERR_OOM ? KB_EXIT_SETUP : KB_EXIT_INPUT;
}

/* Where this rank's files go: DIR/<key>/records-<time>-<pid>.jsonl (its directory made
 * when records is set), DIR/<key>.verdict.json, DIR/<key>.junit.xml. An exit code, or -1 to
 * go on. */
static int plan_files(accept_ctx *x, int records)
{
    const char *dir = x->o->out_dir ? x->o->out_dir : "results/accept";
    kb_acc_rank_key(&x->id, (int)getpid(), x->key, sizeof x->key);
    char ts[20];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(x->stamp, sizeof x->stamp, "%s-%d", ts, (int)getpid());
    kb_sb_printf(&x->records, "%s/%s/records-%s.jsonl", dir, x->key, x->stamp);
    kb_sb_printf(&x->verdict_path, "%s/%s.verdict.json", dir, x->key);
    kb_sb_printf(&x->junit_path, "%s/%s.junit.xml", dir, x->key);
    if ((records ? kb_fs_mkdir_parent(x->records.s) : kb_fs_mkdir_p(dir)) != KB_OK || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "kbench accept: --out-dir %s: not a directory kbench can write to\n", dir);
        return KB_EXIT_SETUP;
    }
    return -1;
}

/* ---- the console table ---- */

/* "verdict: PASS"; NOT CHECKED with why (exit 3: nothing was checked, nothing passed). */
static void print_verdict_line(const kb_acc_verdict *v)
{
    if (v->worst == KB_ACC_NOT_CHECKED)
        printf("kbench accept: %s\n", v->not_checked);
    printf("kbench accept: verdict: %s\n", kb_acc_status_name(v->worst));
}

static void print_table(const accept_ctx *x, const kb_acc_verdict *v)
{
    printf("kbench accept: %s (%s, %s) on %s, rank %d (%s); spec %s (%s)\n", x->dev.name, x->dev.uuid,
           *x->dev.pci_bus_id ? x->dev.pci_bus_id : "no PCI bus id", x->id.host, x->id.rank, x->id.launcher,
           x->spec.name, x->matched_by);
    printf("%-17s %-5s %20s %12s  %s\n", "test", "", "value", "threshold", "reason");
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        if (!kb_acc_verdict_has(v, (kb_acc_test)t))
            continue;
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
    if (!v->gpu_thresholds && v->worst != KB_ACC_NOT_CHECKED && strcmp(x->backend, "emu"))
        printf("kbench accept: GPU thresholds were not applied: no test was timed on the GPU\n");
    else if (!v->gpu_thresholds && v->worst != KB_ACC_NOT_CHECKED)
        printf("kbench accept: GPU thresholds were not applied (no GPU timing: %s timings are CPU time)\n",
               x->backend);
    print_verdict_line(v);
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
        fprintf(stderr, "kbench accept: verdict in %s, JUnit in %s%s%s\n", x->verdict_path.s, x->junit_path.s,
                x->records.len ? ", records in " : "", x->records.s);
    json_decref(arr);
    kb_sb_free(&err);
    return st;
}

/* Append every record of path to arr. 0, or -1 after saying why. */
static int load_records(const char *path, json_t *arr)
{
    json_t **objs = NULL;
    size_t n = 0;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_record_load(path, &objs, &n, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench accept: %s\n", err.s);
    kb_sb_free(&err);
    for (size_t i = 0; i < n; i++)
        json_array_append(arr, objs[i]);
    kb_record_free_all(objs, n);
    return st == KB_OK ? 0 : -1;
}

/* The GPU's health right after the suite ran (errors the run provoked count), through the
 * backend's health slot; unread with the reason where there is none (the emulator). */
static void health_after_run(accept_ctx *x)
{
    kb_session_opts so;
    if (kb_run_session_opts(&x->o->run, &so) == 0)   /* checked before the run: always */
        kb_session_health(&so, &x->health);
}

/* Judge the records and write the verdict. The exit code. */
static int judge(accept_ctx *x)
{
    json_t *arr = json_array();
    int bad = load_records(x->records.s, arr);
    for (int i = 0; i < x->n_checks && !bad; i++)
        bad = load_records(x->checks[i], arr);
    if (bad) {
        json_decref(arr);
        return KB_EXIT_SETUP;
    }
    kb_acc_verdict v;
    kb_acc_evaluate(&x->spec, x->have_peaks ? &x->peaks : NULL, arr, &v);
    json_decref(arr);
    health_after_run(x);
    kb_acc_verdict_health(&x->health, &v);
    char when[32];
    kb_record_time_now(when);
    kb_acc_context c = { &x->id, &x->dev, x->backend, &x->spec, x->matched_by, x->records.s, when,
                         (const char *const *)x->checks, x->n_checks, &x->health, NULL };
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

/* `--system`: the node's tests instead of the GPU's - the collectives across the job step's
 * ranks, the GPU pairs - judged against the system spec (accept/sysverdict.h), written as a
 * GPU's verdict is (its "spec" the system, a "system" block with the sweep). The exit code. */
static int judge_system(accept_ctx *x, const kb_acc_system *sys)
{
    char coll[1400];
    const char *slash = strrchr(x->records.s, '/');
    snprintf(coll, sizeof coll, "%.*scoll-%s.jsonl", slash ? (int)(slash - x->records.s + 1) : 0, x->records.s,
             x->stamp);
    json_t *sweep = json_array();
    kb_sys_coll c;
    kb_sys_node node;
    int rc = kb_accept_coll_measure(sys, &x->id, x->backend, x->o->run.device_index, coll, 0, &c, sweep);
    if (rc) {
        json_decref(sweep);
        return rc;
    }
    kb_acc_node_read(x->backend, x->id.local_rank, &node);
    kb_acc_verdict v;
    kb_acc_system_judge(sys, &c, &node, &v);
    json_t *block = kb_accept_system_block(sys, coll, sweep, &node);
    json_decref(sweep);
    memset(&x->spec, 0, sizeof x->spec);
    snprintf(x->spec.name, sizeof x->spec.name, "%s", sys->name);
    snprintf(x->spec.sku, sizeof x->spec.sku, "%.95s", sys->description);
    snprintf(x->spec.file, sizeof x->spec.file, "%s", sys->file);
    x->matched_by = "--system";
    kb_sb_clear(&x->records);
    kb_sb_printf(&x->records, "%s", coll);
    char when[32];
    kb_record_time_now(when);
    kb_acc_context ctx = { &x->id, &x->dev, x->backend, &x->spec, x->matched_by, coll, when, NULL, 0, NULL, block };
    json_t *vj = kb_acc_verdict_json(&ctx, &v);
    json_decref(block);
    if (!vj)
        return KB_EXIT_SETUP;
    rc = (int)json_integer_value(json_object_get(vj, "exit_code"));
    print_table(x, &v);
    if (write_outputs(x, vj) != KB_OK)
        rc = rc > KB_EXIT_SETUP ? rc : KB_EXIT_SETUP;
    json_decref(vj);
    return rc;
}

/* Whether the kernel check suites run: --check-suites yes|no, or auto: on a device that
 * runs at full speed (a GPU), not on the emulator (minutes of CPU there). */
static int want_checks(const accept_ctx *x)
{
    const char *c = x->o->check_suites;
    return !strcmp(c, "yes") || (!strcmp(c, "auto") && (x->dev.caps & KB_CAP_FULL_SPEED));
}

/* 1 for kernels_<family>.yaml (the family checks; kernels_<family>_<more>.yaml are inputs
 * of other tests). */
static int is_check_suite(const char *name)
{
    size_t n = strlen(name);
    return !strncmp(name, "kernels_", 8) && n > 13 && !strcmp(name + n - 5, ".yaml") &&
           !memchr(name + 8, '_', n - 13);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The kernel check suites of dir, sorted, into *out (n of them, all of them: no cap).
 * n, or -1 when out of memory (said). */
static int list_checks(const char *dir, char ***out)
{
    char **names = NULL;
    int n = 0, cap = 0, oom = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && !oom && (e = readdir(d))) {
        if (!is_check_suite(e->d_name))
            continue;
        if (n == cap) {
            char **grown = realloc(names, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *names);
            if (!(oom = !grown))
                names = grown;
        }
        if (!oom && !(oom = !(names[n] = strdup(e->d_name))))
            n++;
    }
    if (d)
        closedir(d);
    if (oom) {
        fprintf(stderr, "kbench accept: out of memory listing the kernel check suites of %s\n", dir);
        for (int i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return -1;
    }
    if (n)
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    *out = names;
    return n;
}

/* A check suite's records file whose name cannot be kept: its cases would go unjudged. */
static int oom_checks(const char *records)
{
    fprintf(stderr, "kbench accept: out of memory keeping the name of %s (its records would go unjudged)\n",
            records);
    return KB_EXIT_SETUP;
}

/* Run every kernel check suite (<data root>/tests/suites/kernels_<family>.yaml) into its
 * own records file. An exit code to stop with, or -1 to go on. */
static int run_checks(accept_ctx *x)
{
    char dir[1100], **names = NULL;
    snprintf(dir, sizeof dir, "%s/tests/suites", kb_data_root());
    int n = list_checks(dir, &names);
    if (n < 0)
        return KB_EXIT_SETUP;
    if (n && !(x->checks = calloc((size_t)n, sizeof *x->checks))) {
        fprintf(stderr, "kbench accept: out of memory for %d kernel check suites\n", n);
        for (int i = 0; i < n; i++)
            free(names[i]);
        free(names);
        return KB_EXIT_SETUP;
    }
    if (!n)
        fprintf(stderr, "kbench accept: no kernel check suites in %s (an installed kbench ships none); "
                "correctness is judged on suites/accept.yaml\n", dir);
    int rc = -1;
    for (int i = 0; i < n; i++) {
        char suite[1400], out[1400];
        snprintf(suite, sizeof suite, "%s/%s", dir, names[i]);
        snprintf(out, sizeof out, "%s", x->records.s);
        char *slash = strrchr(out, '/');
        snprintf(slash ? slash + 1 : out, sizeof out - (size_t)(slash ? slash + 1 - out : 0), "check-%.*s-%s.jsonl",
                 (int)(strlen(names[i]) - 13), names[i] + 8, x->stamp);
        if (rc < 0) {
            x->o->run.suite_path = suite;
            x->o->run.out_path = out;
            int r = kb_cmd_run(&x->o->run);
            if (r != KB_EXIT_OK && r != KB_EXIT_WRONG)
                rc = r;
            else if ((x->checks[x->n_checks] = strdup(out)))
                x->n_checks++;
            else
                rc = oom_checks(out);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

/* No usable GPU: nothing runs; the verdict NOT CHECKED (exit 3) is printed and written,
 * JSON and JUnit, where the rank's verdict goes, so a fleet counts the rank. The exit code. */
static int not_checked(accept_ctx *x)
{
    int rc = plan_files(x, 0);
    if (rc >= 0)
        return rc;
    kb_sb_clear(&x->records);   /* none: nothing ran */
    kb_acc_verdict v;
    kb_acc_verdict_not_checked(x->why, &v);
    snprintf(x->spec.name, sizeof x->spec.name, "none");
    snprintf(x->spec.sku, sizeof x->spec.sku, "no device");
    char when[32];
    kb_record_time_now(when);
    kb_acc_context c = { &x->id, &x->dev, x->backend ? x->backend : "cuda", &x->spec, "not matched: no usable GPU",
                         "", when, NULL, 0, NULL, NULL };
    json_t *vj = kb_acc_verdict_json(&c, &v);
    if (!vj)
        return KB_EXIT_SETUP;
    printf("kbench accept: no GPU checked on %s, rank %d (%s): nothing was run or judged (kbench accept --backend "
           "emu runs the flow on the CPU emulator, which checks nothing of this node)\n", x->id.host, x->id.rank,
           x->id.launcher);
    print_verdict_line(&v);
    write_outputs(x, vj);
    json_decref(vj);
    return KB_EXIT_SETUP;
}

/* Test hook: with KBENCH_FAULT_RANKS="2,5" the emulator's fault injection
 * (KBENCH_EMU_SLOWDOWN, KBENCH_EMU_CORRUPT) applies to those ranks only - srun gives
 * every task the same environment. 0, or -1 with err when the list is malformed. */
static int fault_hooks_for_rank(int rank, char *err, size_t n)
{
    int sel = kb_fault_rank_selected(getenv("KBENCH_FAULT_RANKS"), rank, err, n);
    if (sel == 0) {
        unsetenv("KBENCH_EMU_SLOWDOWN");
        unsetenv("KBENCH_EMU_CORRUPT");
    }
    return sel < 0 ? -1 : 0;
}

static int accept_main(void *opts)
{
    accept_ctx x;
    memset(&x, 0, sizeof x);
    x.o = opts;
    char host[128] = "", err[256];
    gethostname(host, sizeof host - 1);
    if (kb_acc_identity_read(env_get, NULL, host, &x.id, err, sizeof err) != 0 ||
        fault_hooks_for_rank(x.id.rank, err, sizeof err) != 0) {
        fprintf(stderr, "kbench accept: %s\n", err);
        return KB_EXIT_SETUP;
    }
    kb_sb_init(&x.records);
    kb_sb_init(&x.verdict_path);
    kb_sb_init(&x.junit_path);
    /* CUDA's numbering = nvidia-smi's for --device and the ordinals; --system's tables pair
     * CUDA's devices with NVML's by PCI bus id and do not depend on it (accept/sysnode.h) */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
    kb_run_opts *r = &x.o->run;
    r->device_index = kb_acc_pick_device(r->device_index, getenv("CUDA_VISIBLE_DEVICES"), x.id.local_rank);
    static kb_acc_system sys;
    int rc = -1;
    if (x.o->system) {
        kb_sb msg;
        kb_sb_init(&msg);
        kb_status st = kb_acc_system_find(x.o->system, &sys, &msg);
        if (st != KB_OK) {
            fprintf(stderr, "kbench accept: %s\n", msg.s);
            rc = st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
        }
        kb_sb_free(&msg);
    }
    if (rc == -1)
        rc = device_and_spec(&x);
    if (rc == NOT_CHECKED)
        rc = not_checked(&x);
    if (rc == -1)
        rc = plan_files(&x, 1);
    if (rc == -1 && x.o->system)
        rc = judge_system(&x, &sys);
    if (rc == -1) {
        static char suite[1100];
        snprintf(suite, sizeof suite, "%s/suites/accept.yaml", kb_data_root());
        r->suite_path = x.o->suite ? x.o->suite : suite;
        r->out_path = x.records.s;
        static char db[1100];   /* a rank's store beside its records: ranks never share one */
        const char *slash = strrchr(x.records.s, '/');
        snprintf(db, sizeof db, "%.*skbench.db", slash ? (int)(slash - x.records.s + 1) : 0, x.records.s);
        r->db_path = db;
        rc = kb_cmd_run(r);
        /* 0 and 1 (a case failed: the verdict says which) go on to the verdict */
        rc = rc == KB_EXIT_OK || rc == KB_EXIT_WRONG ? -1 : rc;
        if (rc < 0 && want_checks(&x))
            rc = run_checks(&x);
        if (rc < 0)
            rc = judge(&x);
    }
    for (int i = 0; i < x.n_checks; i++)
        free(x.checks[i]);
    free(x.checks);
    kb_sb_free(&x.records);
    kb_sb_free(&x.verdict_path);
    kb_sb_free(&x.junit_path);
    return rc;
}

static const char *const check_choices[] = { "auto", "yes", "no", NULL };

static void accept_defaults(void *o)
{
    kb_run_opts_defaults(o);
    ((kb_accept_opts *)o)->check_suites = "auto";
    ((kb_accept_opts *)o)->run.device_index = -1;  /* chosen from the rank unless --device */
    ((kb_accept_opts *)o)->run.quiet = 1;
    ((kb_accept_opts *)o)->run.brief = 1;   /* its verdict decides; the run summary is counts and paths */
}

static const kb_opt accept_opts[] = {
    { "--spec", NULL, KB_OPT_IN, offsetof(kb_accept_opts, spec_path), "FILE",
      "the acceptance spec (default: the one under data/acceptance/ matching the GPU, else generic)", 0, 0, 0, NULL,
      0 },
    { "--out-dir", NULL, KB_OPT_OUTDIR, offsetof(kb_accept_opts, out_dir), "DIR",
      "verdict, JUnit and records of this rank under DIR (shared by a fleet's ranks; default results/accept)", 0, 0,
      0, NULL, 0 },
    { "--json", NULL, KB_OPT_OUT, offsetof(kb_accept_opts, json_path), "FILE", "a copy of the verdict JSON", 0, 0,
      0, NULL, 0 },
    { "--junit", NULL, KB_OPT_OUT, offsetof(kb_accept_opts, junit_path), "FILE", "a copy of the JUnit XML", 0, 0,
      0, NULL, 0 },
    { "--system", NULL, KB_OPT_STR, offsetof(kb_accept_opts, system), "NAME|FILE",
      "judge the node instead of the GPU: collectives across the ranks, GPU pairs, NVLink, topology, against a "
      "system spec (data/acceptance/systems/NAME.yaml: hgx-h100-8, hgx-h200-8, hgx-b200-8, generic)", 0, 0, 0, NULL,
      0 },
    { "--suite", NULL, KB_OPT_IN, offsetof(kb_accept_opts, suite), "FILE",
      "the cases to run (default suites/accept.yaml)", 0, 0, 0, NULL, 0 },
    { "--check-suites", NULL, KB_OPT_CHOICE, offsetof(kb_accept_opts, check_suites), "auto|yes|no",
      "also verify every kernel check suite (tests/suites/kernels_*.yaml; auto: on a GPU, not on the emulator)", 0,
      0, 0, check_choices, 0 },
    { "--backend", NULL, KB_OPT_CHOICE, offsetof(kb_run_opts, backend), "auto|cuda|emu",
      "auto (default) and cuda: the GPU, else NOT CHECKED (exit 3); emu: the flow on the CPU emulator", 0, 0, 0,
      kb_run_backend_choices, 0 },
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
    "error; 3 setup error, or NOT CHECKED: no usable GPU (--backend auto never falls back to the emulator\n"
    "here; --backend emu runs the flow on it) or nothing could be checked; 2 bad command line or spec. Under\n"
    "srun, the highest code of the tasks (the worst GPU) is the step's. docs/acceptance.md describes the tests.",
    accept_opts, (int)(sizeof accept_opts / sizeof accept_opts[0]), sizeof(kb_accept_opts), accept_defaults,
    accept_main,
};
