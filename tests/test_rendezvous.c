/* test_rendezvous.c - collective/rendezvous with forked ranks under simulated Slurm,
 * Open MPI and Kubernetes Indexed Job variables: the directory and the TCP rendezvous hand
 * every rank every record; a rank that never arrives is a clear error within the timeout
 * (no hang); stale files, another job's key, disagreeing world sizes and a rank claimed
 * twice are refused; malformed settings name their variable. */
#include "check.h"
#include "collective/rendezvous.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REC 64

static char work[256];

static char *table_get(void *user, const char *name)
{
    for (char **kv = user; *kv; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

typedef struct {
    const char *launcher;   /* "slurm", "openmpi", "k8s" */
    char spec[300];
    const char *key;
    int size;               /* the world size every rank is told */
    double timeout_s;
    int size_of_last;       /* > 0: the last rank is told this size instead */
    int twice;              /* > 0: this rank is started a second time in place of the last */
} scenario;

/* The launcher's variables of rank r into kv (strings in s). */
static void env_of(const scenario *sc, int r, char **kv, char s[][320])
{
    int k = 0, size = sc->size_of_last > 0 && r == sc->size - 1 ? sc->size_of_last : sc->size;
#define SET(name, ...) (kv[k] = name, snprintf(s[k / 2], 320, __VA_ARGS__), kv[k + 1] = s[k / 2], k += 2)
    if (!strcmp(sc->launcher, "slurm")) {
        SET("SLURM_PROCID", "%d", r), SET("SLURM_NTASKS", "%d", size), SET("SLURM_LOCALID", "%d", r);
        SET("SLURM_STEP_NUM_NODES", "1"), SET("SLURM_JOB_ID", "%s", sc->key), SET("SLURM_STEP_ID", "0");
    } else if (!strcmp(sc->launcher, "openmpi")) {
        SET("OMPI_COMM_WORLD_RANK", "%d", r), SET("OMPI_COMM_WORLD_SIZE", "%d", size);
        SET("OMPI_COMM_WORLD_LOCAL_RANK", "%d", r), SET("OMPI_COMM_WORLD_LOCAL_SIZE", "%d", size);
        SET("OMPI_MCA_ess_base_jobid", "%s", sc->key);
    } else {
        SET("JOB_COMPLETION_INDEX", "%d", r), SET("KBENCH_WORLD_SIZE", "%d", size), SET("KBENCH_JOB_KEY", "%s", sc->key);
    }
    SET("KBENCH_RENDEZVOUS", "%s", sc->spec), SET("KBENCH_RENDEZVOUS_TIMEOUT", "%g", sc->timeout_s);
    SET("TMPDIR", "%s", work);
#undef SET
    kv[k] = NULL;
}

/* One rank: exchange "rank r of n" and check the table. Exit 0, 1 for a wrong table, 10 +
 * the status on an error (its message in work/msg-<r>). */
static int rank_main(const scenario *sc, int r, int slot)
{
    char *kv[40], s[20][320], err[1024] = "", path[400];
    env_of(sc, r, kv, s);
    kb_identity id;
    kb_rdv rdv;
    int rc = 0;
    char mine[REC] = "", all[16 * REC];
    if (kb_identity_read(table_get, kv, "node0", &id, err, sizeof err) != 0 ||
        kb_rdv_setup(table_get, kv, &id, &rdv, err, sizeof err) != 0) {
        rc = 9;
    } else {
        snprintf(mine, sizeof mine, "rank %d of %d", r, rdv.size);
        kb_status st = kb_rdv_exchange(&rdv, mine, REC, all, err, sizeof err);
        for (int q = 0; st == KB_OK && q < rdv.size; q++) {
            char want[REC] = "";
            snprintf(want, sizeof want, "rank %d of %d", q, rdv.size);
            rc |= memcmp(all + q * REC, want, REC) != 0;
        }
        rc = st != KB_OK ? 10 + (int)st : rc;
    }
    snprintf(path, sizeof path, "%s/msg-%d", work, slot);
    FILE *f = fopen(path, "w");
    fputs(err, f);
    fclose(f);
    return rc;
}

/* Start `started` ranks of sc; their exit codes into codes[], messages into msgs[]. The
 * wall time [s] into *secs. */
static void run(const scenario *sc, int started, int *codes, char msgs[][1024], double *secs)
{
    pid_t pids[16];
    double t0 = kb_rdv_now();
    for (int r = 0; r < started; r++) {
        int as = sc->twice > 0 && r == started - 1 ? sc->twice : r;
        if ((pids[r] = fork()) == 0)
            _exit(rank_main(sc, as, r));
    }
    for (int r = 0; r < started; r++) {
        int status;
        waitpid(pids[r], &status, 0);
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        char path[400];
        snprintf(path, sizeof path, "%s/msg-%d", work, r);
        FILE *f = fopen(path, "r");
        msgs[r][0] = 0;
        if (f) {
            size_t k = fread(msgs[r], 1, 1023, f);
            msgs[r][k] = 0;
            fclose(f);
        }
    }
    *secs = kb_rdv_now() - t0;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_dir_under_slurm(void)
{
    scenario sc = { "slurm", "", "4242", 4, 20, 0, 0 };
    snprintf(sc.spec, sizeof sc.spec, "dir:%s", work);
    int codes[16];
    char msgs[16][1024];
    double secs;
    run(&sc, 4, codes, msgs, &secs);
    for (int r = 0; r < 4; r++)
        CHECK_MSG(codes[r] == 0, "rank %d: %d %s", r, codes[r], msgs[r]);
    struct stat st;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/kbench-rdv-slurm-4242.0.0", work);
    CHECK(stat(dir, &st) != 0);   /* rank 0 cleaned up */
    sc.spec[0] = 0;               /* unset: one node, so the default directory ($TMPDIR) */
    sc.key = "4243";
    sc.timeout_s = 1.5;
    run(&sc, 3, codes, msgs, &secs);   /* only 3 of 4 ranks start... */
    for (int r = 0; r < 3; r++)
        CHECK_MSG(codes[r] == 10 + KB_ERR_TIMEOUT && strstr(msgs[r], "ranks 3 (1 of 4) never arrived"), "%d %s",
                  codes[r], msgs[r]);
    CHECK(secs < 10);             /* ...and each says so within the timeout: no hang */
    /* the stale files of that failed run make the next run with the key refuse */
    run(&sc, 1, codes, msgs, &secs);
    CHECK_MSG(codes[0] == 10 + KB_ERR_SETUP && strstr(msgs[0], "left from an earlier run"), "%s", msgs[0]);
}

static void test_tcp_under_openmpi_and_k8s(void)
{
    scenario sc = { "openmpi", "", "77", 3, 20, 0, 0 };
    snprintf(sc.spec, sizeof sc.spec, "tcp:127.0.0.1:%d", free_port());
    int codes[16];
    char msgs[16][1024];
    double secs;
    run(&sc, 3, codes, msgs, &secs);
    for (int r = 0; r < 3; r++)
        CHECK_MSG(codes[r] == 0, "rank %d: %d %s", r, codes[r], msgs[r]);
    scenario k8s = { "k8s", "", "uid-1", 5, 20, 0, 0 };
    snprintf(k8s.spec, sizeof k8s.spec, "tcp:localhost:%d", free_port());
    run(&k8s, 5, codes, msgs, &secs);
    for (int r = 0; r < 5; r++)
        CHECK_MSG(codes[r] == 0, "rank %d: %d %s", r, codes[r], msgs[r]);
    /* rank 2 of 3 never starts: rank 0 and rank 1 say so within the timeout */
    sc.timeout_s = 1.5;
    snprintf(sc.spec, sizeof sc.spec, "tcp:127.0.0.1:%d", free_port());
    run(&sc, 2, codes, msgs, &secs);
    CHECK_MSG(codes[0] == 10 + KB_ERR_TIMEOUT && strstr(msgs[0], "ranks 2 (1 of 3) never connected"), "%s", msgs[0]);
    CHECK_MSG(codes[1] == 10 + KB_ERR_TIMEOUT && strstr(msgs[1], "never connected"), "%s", msgs[1]);
    CHECK(secs < 8);
    /* rank 0 never starts: the others give up after the timeout */
    scenario late = sc;
    late.timeout_s = 1;
    snprintf(late.spec, sizeof late.spec, "tcp:127.0.0.1:%d", free_port());
    pid_t p = fork();
    if (p == 0)
        _exit(rank_main(&late, 1, 0));
    int status;
    waitpid(p, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 10 + KB_ERR_TIMEOUT);
}

/* Ranks that disagree: another size, the same rank twice. */
static void test_disagreements_refused(void)
{
    int codes[16];
    char msgs[16][1024];
    double secs;
    scenario sz = { "openmpi", "", "81", 3, 3, 4, 0 };   /* the last rank is told 4 ranks */
    snprintf(sz.spec, sizeof sz.spec, "tcp:127.0.0.1:%d", free_port());
    run(&sz, 3, codes, msgs, &secs);
    CHECK_MSG(codes[2] == 10 + KB_ERR_SETUP && strstr(msgs[2], "disagree"), "%d %s", codes[2], msgs[2]);
    scenario tw = { "slurm", "", "82", 3, 2, 0, 1 };     /* rank 1 twice, rank 2 missing */
    snprintf(tw.spec, sizeof tw.spec, "tcp:127.0.0.1:%d", free_port());
    run(&tw, 3, codes, msgs, &secs);
    CHECK_MSG(codes[0] == 10 + KB_ERR_TIMEOUT, "%d %s", codes[0], msgs[0]);
    CHECK_MSG((codes[1] == 10 + KB_ERR_SETUP && strstr(msgs[1], "twice")) ||
              (codes[2] == 10 + KB_ERR_SETUP && strstr(msgs[2], "twice")), "%s / %s", msgs[1], msgs[2]);
    scenario d = { "slurm", "", "83", 2, 3, 3, 0 };       /* dir: rank 1 told 3 ranks */
    snprintf(d.spec, sizeof d.spec, "dir:%s", work);
    run(&d, 2, codes, msgs, &secs);
    CHECK_MSG(codes[0] == 10 + KB_ERR_SETUP && strstr(msgs[0], "disagree"), "%d %s", codes[0], msgs[0]);
    CHECK_MSG(codes[1] == 10 + KB_ERR_SETUP && strstr(msgs[1], "disagree"), "%d %s", codes[1], msgs[1]);
}

/* Settings refused with the variable named. */
static void setup_refused(char **extra, const char *want)
{
    char *kv[30];
    int k = 0;
    char *base[] = { "SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_STEP_NUM_NODES", "2", "SLURM_JOB_ID", "9", NULL };
    for (char **p = base; *p; p++)
        kv[k++] = *p;
    for (char **p = extra; *p; p++)
        kv[k++] = *p;
    kv[k] = NULL;
    kb_identity id;
    kb_rdv r;
    char err[1024] = "";
    CHECK(kb_identity_read(table_get, kv, "h", &id, err, sizeof err) == 0);
    CHECK_MSG(kb_rdv_setup(table_get, kv, &id, &r, err, sizeof err) == -1 && strstr(err, want), "want %s: %s", want,
              err);
}

static void test_settings_refused(void)
{
    char *none[] = { NULL };
    setup_refused(none, "KBENCH_RENDEZVOUS is not set");            /* two nodes */
    char *a[] = { "KBENCH_RENDEZVOUS", "tcp:host", NULL };
    setup_refused(a, "KBENCH_RENDEZVOUS=tcp:host");
    char *b[] = { "KBENCH_RENDEZVOUS", "tcp:host:99999", NULL };
    setup_refused(b, "PORT in [1, 65535]");
    char *c[] = { "KBENCH_RENDEZVOUS", "tcp::80", NULL };
    setup_refused(c, "KBENCH_RENDEZVOUS=tcp::80");
    char *d[] = { "KBENCH_RENDEZVOUS", "nfs:/x", NULL };
    setup_refused(d, "expected dir:PATH or tcp:HOST:PORT");
    char *e[] = { "KBENCH_RENDEZVOUS", "dir:", NULL };
    setup_refused(e, "KBENCH_RENDEZVOUS=dir:");
    char *f[] = { "KBENCH_RENDEZVOUS", "dir:/tmp", "KBENCH_RENDEZVOUS_TIMEOUT", "abc", NULL };
    setup_refused(f, "KBENCH_RENDEZVOUS_TIMEOUT=abc");
    char *g[] = { "KBENCH_RENDEZVOUS", "dir:/tmp", "KBENCH_RENDEZVOUS_TIMEOUT", "0", NULL };
    setup_refused(g, "KBENCH_RENDEZVOUS_TIMEOUT=0");
    /* k8s: no world size; no key for a directory */
    char *kv[] = { "JOB_COMPLETION_INDEX", "1", "KBENCH_RENDEZVOUS", "dir:/tmp", NULL };
    kb_identity id;
    kb_rdv r;
    char err[1024];
    CHECK(kb_identity_read(table_get, kv, "pod", &id, err, sizeof err) == 0);
    CHECK(kb_rdv_setup(table_get, kv, &id, &r, err, sizeof err) == -1 && strstr(err, "KBENCH_WORLD_SIZE"));
    char *kv2[] = { "JOB_COMPLETION_INDEX", "1", "KBENCH_WORLD_SIZE", "2", "KBENCH_RENDEZVOUS", "dir:/tmp", NULL };
    CHECK(kb_identity_read(table_get, kv2, "pod", &id, err, sizeof err) == 0);
    CHECK(kb_rdv_setup(table_get, kv2, &id, &r, err, sizeof err) == -1 && strstr(err, "KBENCH_JOB_KEY"));
    char *kv3[] = { "JOB_COMPLETION_INDEX", "1", "KBENCH_WORLD_SIZE", "2", "KBENCH_RENDEZVOUS", "tcp:[::1]:5000", NULL };
    CHECK(kb_identity_read(table_get, kv3, "pod", &id, err, sizeof err) == 0);
    CHECK(kb_rdv_setup(table_get, kv3, &id, &r, err, sizeof err) == 0 && !strcmp(r.host, "::1") && r.port == 5000);
    /* a single process: nothing to exchange */
    char *one[] = { NULL };
    CHECK(kb_identity_read(table_get, one, "box", &id, err, sizeof err) == 0);
    CHECK(kb_rdv_setup(table_get, one, &id, &r, err, sizeof err) == 0 && r.kind == KB_RDV_NONE);
    char rec[4] = "abc", all[4];
    CHECK(kb_rdv_exchange(&r, rec, 4, all, err, sizeof err) == KB_OK && !strcmp(all, "abc"));
    unsigned char arrived[10] = { 1, 0, 1, 0, 0, 0, 1, 1, 1, 0 };
    kb_rdv_missing(arrived, 10, err, sizeof err);
    CHECK_MSG(!strcmp(err, "1, 3-5, 9 (5 of 10)"), "%s", err);
}

int main(void)
{
    snprintf(work, sizeof work, "/tmp/kb_test_rdv_%d", (int)getpid());
    mkdir(work, 0700);
    RUN(test_dir_under_slurm);
    RUN(test_tcp_under_openmpi_and_k8s);
    RUN(test_disagreements_refused);
    RUN(test_settings_refused);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", work);
    TEST_MAIN_END();
}
