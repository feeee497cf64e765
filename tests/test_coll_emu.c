/* test_coll_emu.c - the emu transport with forked rank processes: every op x dtype x
 * reduction op at sizes that n does not divide (and 0 and 1 element), verified element by
 * element on every rank, over shared memory (2, 3 and 4 ranks on one node), over sockets
 * (each rank its own "node" on loopback) and mixed (two "nodes" of two ranks); a slowed
 * rank shows as the busiest, a corrupting rank is named by every rank; a rank that dies or
 * stalls is an error naming it within the timeout, never a hang. */
#include "check.h"
#include "collective/coll_bench.h"
#include "collective/rendezvous.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char work[256];
static int scenario_id;

typedef struct {
    int n;
    const char *nodes[8];   /* node name per rank; NULL: all "node0" */
    int force_sockets;
    size_t ring_bytes;
    int full;               /* every op x dtype x redop at the edge sizes; else a few */
    int corrupt_rank, slow_rank;
    int die_rank, stall_rank;   /* leaves after the setup / sleeps instead of the collective */
} scenario;

static char *table_get(void *user, const char *name)
{
    for (char **kv = user; *kv; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

static FILE *msg;

/* One call: run and check it; 0 or 1 failure. */
static int one(kb_coll_comm *c, kb_coll_op op, kb_dtype dt, kb_coll_redop ro, size_t count, int want_bad)
{
    kb_coll_desc d = { op, dt, ro, c->size, c->size - 1, count, 1000u + (unsigned)count };
    kb_coll_result r;
    kb_status st = kb_coll_bench(c, &d, 1, 2, &r);
    kb_coll_counts cn;
    kb_coll_counts_of(op, count, c->size, &cn);
    int bad = st != KB_OK || r.check.checked != (int64_t)cn.recv_count || (want_bad < 0) != (r.wrong_all == 0);
    if (want_bad >= 0 && !bad)   /* a corrupting rank: every rank names it, and only it */
        bad = r.n_suspects != 1 || r.suspects[0] != want_bad;
    if (bad)
        fprintf(msg, "rank %d: %s %s %s count %zu: %s wrong %lld/%lld (first %lld got %g want %g) "
                "suspects %d [%d] %s\n",
                c->rank, kb_coll_op_name(op), kb_dtype_name(dt), kb_coll_redop_name(ro), count, kb_status_name(st),
                (long long)r.check.wrong, (long long)r.wrong_all, (long long)r.check.first_wrong, r.check.got_at_first,
                r.check.want_at_first, r.n_suspects, r.suspects[0], c->err);
    return bad;
}

static int sweep(kb_coll_comm *c, const scenario *sc)
{
    static const kb_dtype dts[] = { KB_DT_FP32, KB_DT_BF16, KB_DT_FP16, KB_DT_INT8 };
    size_t full[] = { 0, 1, 5, 37, 1031 }, few[] = { 1, 37, 70001 };
    size_t *counts = sc->full ? full : few;
    int nc = sc->full ? 5 : 3, fails = 0;
    for (int op = 0; op < KB_COLL_OP_COUNT; op++)
        for (int t = 0; t < 4; t++)
            for (int ro = 0; ro < (kb_coll_op_reduces((kb_coll_op)op) ? KB_REDOP_COUNT : 1); ro++)
                for (int k = 0; k < nc; k++) {
                    if (!sc->full && (t == 1 || ro > 1))
                        continue;
                    fails += one(c, (kb_coll_op)op, dts[t], (kb_coll_redop)ro, counts[k], -1);
                }
    return fails;
}

/* The fault scenarios' checks on one rank. */
static int faults(kb_coll_comm *c, const scenario *sc)
{
    int fails = 0;
    if (sc->corrupt_rank >= 0) {
        fails += one(c, KB_COLL_ALL_REDUCE, KB_DT_FP32, KB_REDOP_SUM, 1000, sc->corrupt_rank);
        fails += one(c, KB_COLL_ALL_GATHER, KB_DT_BF16, KB_REDOP_SUM, 100, sc->corrupt_rank);
        fails += one(c, KB_COLL_REDUCE_SCATTER, KB_DT_INT8, KB_REDOP_SUM, 64, sc->corrupt_rank);
    }
    for (int i = 0; sc->slow_rank >= 0 && i < 3; i++) {
        kb_coll_desc d = { KB_COLL_ALL_REDUCE, KB_DT_FP32, KB_REDOP_SUM, c->size, 0, 200000, 5 };
        kb_coll_result r;
        kb_status st = kb_coll_bench(c, &d, 1, 3, &r);
        if (st != KB_OK || r.wrong_all || r.busiest != sc->slow_rank) {
            fprintf(msg, "rank %d: slow rank %d: %s wrong %lld busiest %d (%.0f us, mine %.0f us)\n", c->rank,
                    sc->slow_rank, kb_status_name(st), (long long)r.wrong_all, r.busiest, r.busy_us_max, r.busy_us);
            fails++;
        }
    }
    return fails;
}

/* A rank process: identity, rendezvous, transport, then the scenario. Exit 0 when all
 * held; its messages in work/msg-<rank>. */
static int rank_main(const scenario *sc, int r)
{
    char path[400], rs[16], ns[16], key[64], spec[300], slow[16], bad[16], err[1024] = "";
    snprintf(path, sizeof path, "%s/msg-%d", work, r);
    msg = fopen(path, "w");
    snprintf(rs, sizeof rs, "%d", r);
    snprintf(ns, sizeof ns, "%d", sc->n);
    snprintf(key, sizeof key, "emu-%d-%d", (int)getppid(), scenario_id);
    snprintf(spec, sizeof spec, "dir:%s", work);
    snprintf(slow, sizeof slow, "%d", sc->slow_rank);
    snprintf(bad, sizeof bad, "%d", sc->corrupt_rank);
    char *env[] = { "OMPI_COMM_WORLD_RANK", rs, "OMPI_COMM_WORLD_SIZE", ns, "KBENCH_JOB_KEY", key,
                    "KBENCH_RENDEZVOUS", spec, "KBENCH_RENDEZVOUS_TIMEOUT", "20",
                    "KBENCH_EMU_SLOWDOWN", sc->slow_rank >= 0 ? "40" : "",
                    "KBENCH_EMU_CORRUPT", sc->corrupt_rank >= 0 ? "1" : "",
                    "KBENCH_FAULT_RANKS", sc->slow_rank >= 0 ? slow : sc->corrupt_rank >= 0 ? bad : "", NULL };
    kb_identity id;
    kb_rdv rdv;
    /* no progress for 2 s is an error where a rank dies or stalls on purpose; 30 s elsewhere (a loaded
     * machine may deschedule a rank for long) */
    double timeout = sc->die_rank >= 0 || sc->stall_rank >= 0 ? 2.0 : 30.0;
    kb_coll_comm_opts o = { &rdv, sc->nodes[0] ? sc->nodes[r] : "node0", NULL, sc->force_sockets, sc->ring_bytes,
                            timeout, 1, 0 };
    kb_coll_comm *c = NULL;
    int fails = 1;
    if (kb_identity_read(table_get, env, "h", &id, err, sizeof err) == 0 &&
        kb_rdv_setup(table_get, env, &id, &rdv, err, sizeof err) == 0 &&
        kb_coll_faults_read(table_get, env, r, &o.slowdown, &o.corrupt, err, sizeof err) == 0 &&
        kb_coll_comm_init(&o, &c, err, sizeof err) == KB_OK) {
        if (r == sc->die_rank)
            _exit(0);   /* gone without a word */
        if (r == sc->stall_rank) {
            sleep(6);   /* alive, silent: the others give up after their 2 s */
            _exit(0);
        }
        if (sc->die_rank >= 0 || sc->stall_rank >= 0) {
            kb_coll_desc d = { KB_COLL_ALL_REDUCE, KB_DT_FP32, KB_REDOP_SUM, c->size, 0, 100000, 1 };
            kb_coll_result res;
            kb_status st = kb_coll_bench(c, &d, 0, 1, &res);
            fprintf(msg, "%s: %s\n", kb_status_name(st), c->err);
            fails = st == KB_OK;
        } else {
            int faulty = sc->corrupt_rank >= 0 || sc->slow_rank >= 0;
            fails = faulty ? faults(c, sc) : sweep(c, sc);
        }
    } else {
        fprintf(msg, "setup: %s\n", err);
    }
    kb_coll_comm_free(c);
    fclose(msg);
    return fails ? 1 : 0;
}

/* Run sc's ranks; 0 when every rank held. The messages of failing ranks go to stderr. */
static int run(const scenario *sc, double *secs, char *first_msg, size_t n)
{
    pid_t pids[8];
    scenario_id++;
    double t0 = kb_rdv_now();
    for (int r = 0; r < sc->n; r++)
        if ((pids[r] = fork()) == 0)
            _exit(rank_main(sc, r));
    int bad = 0, statuses[8];
    for (int left = sc->n; left > 0; left--) {   /* reap in any order: a dead rank is no zombie */
        int status;
        pid_t p = waitpid(-1, &status, 0);
        for (int r = 0; r < sc->n; r++)
            if (pids[r] == p)
                statuses[r] = status;
    }
    for (int r = 0; r < sc->n; r++) {
        int status = statuses[r];
        char path[400];
        snprintf(path, sizeof path, "%s/msg-%d", work, r);
        FILE *f = fopen(path, "r");
        char line[2048] = "";
        size_t k = f ? fread(line, 1, sizeof line - 1, f) : 0;
        line[k] = 0;
        if (f)
            fclose(f);
        if (r == 0 && first_msg)
            snprintf(first_msg, n, "%s", line);
        if (!WIFEXITED(status) || WEXITSTATUS(status)) {
            bad++;
            if (!first_msg)
                fprintf(stderr, "rank %d (status %d):\n%s", r, status, line);
        }
    }
    if (secs)
        *secs = kb_rdv_now() - t0;
    return bad;
}

static void test_shared_memory_every_op(void)
{
    for (int n = 2; n <= 4; n++) {
        scenario sc = { n, { NULL }, 0, n == 3 ? 4096 : 0, 1, -1, -1, -1, -1 };   /* 3 ranks: small rings wrap */
        CHECK_MSG(run(&sc, NULL, NULL, 0) == 0, "%d ranks", n);
    }
}

static void test_sockets_and_mixed(void)
{
    scenario socks = { 3, { NULL }, 1, 0, 0, -1, -1, -1, -1 };
    CHECK(run(&socks, NULL, NULL, 0) == 0);
    scenario mixed = { 4, { "nodeA", "nodeA", "nodeB", "nodeB" }, 0, 8192, 0, -1, -1, -1, -1 };
    CHECK(run(&mixed, NULL, NULL, 0) == 0);
    scenario full2 = { 2, { NULL }, 1, 0, 1, -1, -1, -1, -1 };   /* every op x dtype x redop over TCP */
    CHECK(run(&full2, NULL, NULL, 0) == 0);
}

static void test_faults_named(void)
{
    scenario bad = { 4, { NULL }, 0, 0, 0, 2, -1, -1, -1 };
    CHECK(run(&bad, NULL, NULL, 0) == 0);
    scenario bad_sock = { 3, { NULL }, 1, 0, 0, 0, -1, -1, -1 };
    CHECK(run(&bad_sock, NULL, NULL, 0) == 0);
    scenario slow = { 4, { NULL }, 0, 0, 0, -1, 1, -1, -1 };
    CHECK(run(&slow, NULL, NULL, 0) == 0);
}

static void test_dead_and_stalled_ranks(void)
{
    char first[2048];
    double secs;
    scenario dead = { 3, { NULL }, 0, 0, 0, -1, -1, 2, -1 };
    CHECK(run(&dead, &secs, first, sizeof first) == 0);
    CHECK_MSG(strstr(first, "rank 2 (pid") && strstr(first, "is gone"), "%s", first);
    CHECK(secs < 10);
    scenario dead_sock = { 3, { NULL }, 1, 0, 0, -1, -1, 1, -1 };
    CHECK(run(&dead_sock, &secs, first, sizeof first) == 0);
    CHECK_MSG(strstr(first, "rank 1"), "%s", first);
    scenario stall = { 3, { NULL }, 0, 0, 0, -1, -1, -1, 1 };
    CHECK(run(&stall, &secs, first, sizeof first) == 0);
    CHECK_MSG(strstr(first, "timeout: ") && strstr(first, "no progress from rank"), "%s", first);
    CHECK(secs < 12);
}

static void test_fault_hooks_read(void)
{
    double slow;
    int bad;
    char err[256];
    char *a[] = { "KBENCH_EMU_SLOWDOWN", "5", "KBENCH_FAULT_RANKS", "1,3", NULL };
    CHECK(kb_coll_faults_read(table_get, a, 3, &slow, &bad, err, sizeof err) == 0 && slow == 5 && !bad);
    CHECK(kb_coll_faults_read(table_get, a, 2, &slow, &bad, err, sizeof err) == 0 && slow == 1);
    char *b[] = { "KBENCH_EMU_SLOWDOWN", "0.5", NULL };
    CHECK(kb_coll_faults_read(table_get, b, 0, &slow, &bad, err, sizeof err) == -1);
    CHECK(strstr(err, "KBENCH_EMU_SLOWDOWN=0.5"));
    char *c[] = { "KBENCH_EMU_CORRUPT", "yes", NULL };
    CHECK(kb_coll_faults_read(table_get, c, 0, &slow, &bad, err, sizeof err) == -1);
    CHECK(strstr(err, "KBENCH_EMU_CORRUPT=yes"));
    char *d[] = { "KBENCH_EMU_CORRUPT", "1", "KBENCH_FAULT_RANKS", "x", NULL };
    CHECK(kb_coll_faults_read(table_get, d, 0, &slow, &bad, err, sizeof err) == -1);
    CHECK(strstr(err, "KBENCH_FAULT_RANKS=x"));
}

int main(void)
{
    snprintf(work, sizeof work, "/tmp/kb_test_coll_%d", (int)getpid());
    mkdir(work, 0700);
    signal(SIGPIPE, SIG_IGN);
    RUN(test_fault_hooks_read);
    RUN(test_shared_memory_every_op);
    RUN(test_sockets_and_mixed);
    RUN(test_faults_named);
    RUN(test_dead_and_stalled_ranks);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", work);
    TEST_MAIN_END();
}
