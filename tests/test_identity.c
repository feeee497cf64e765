/* test_identity.c - core/identity: each launcher's variables, the job key, and every
 * malformed value issue 28 lists refused with the variable named; KBENCH_FAULT_RANKS. */
#include "check.h"
#include "core/identity.h"

#include <string.h>

static char *table_get(void *user, const char *name)
{
    for (char **kv = user; *kv; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

static void test_launchers(void)
{
    kb_identity id;
    char err[256];
    char *slurm[] = { "SLURM_PROCID", "5", "SLURM_LOCALID", "1", "SLURM_NODEID", "2", "SLURM_NTASKS", "8",
                      "SLURM_STEP_NUM_NODES", "4", "SLURM_JOB_ID", "77", "SLURM_STEP_ID", "3",
                      "SLURMD_NODENAME", "gpu-n2", NULL };
    CHECK(kb_identity_read(table_get, slurm, "login", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "slurm") && id.rank == 5 && id.world_size == 8 && id.nodes == 4);
    CHECK(!strcmp(id.job_key, "slurm-77.3.0") && !kb_identity_one_node(&id));
    char *ompi[] = { "OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4",
                     "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "OMPI_MCA_ess_base_jobid", "1234@5", NULL };
    CHECK(kb_identity_read(table_get, ompi, "h", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "openmpi") && id.local_size == 4 && kb_identity_one_node(&id));
    CHECK(!strcmp(id.job_key, "ompi-1234_5"));   /* made file-name safe */
    char *k8s[] = { "JOB_COMPLETION_INDEX", "2", "KBENCH_WORLD_SIZE", "3", "KBENCH_JOB_KEY", "job/a b", NULL };
    CHECK(kb_identity_read(table_get, k8s, "pod-2", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "k8s") && id.rank == 2 && id.world_size == 3 && id.local_size == 1);
    CHECK(!strcmp(id.job_key, "job_a_b") && !kb_identity_one_node(&id));
    char *none[] = { NULL };
    CHECK(kb_identity_read(table_get, none, "box", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "none") && id.world_size == 1 && kb_identity_one_node(&id) && !id.job_key[0]);
}

/* Each table must be refused with a message naming want. */
static void refused(char **table, const char *want)
{
    kb_identity id;
    char err[256] = "";
    int rc = kb_identity_read(table_get, table, "h", &id, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, want), "want a refusal naming %s, got rc %d \"%s\"", want, rc, err);
}

static void test_bad_values_refused(void)
{
    char *a[] = { "SLURM_PROCID", "-1", NULL };
    refused(a, "SLURM_PROCID=-1");
    char *b[] = { "SLURM_PROCID", "abc", "OMPI_COMM_WORLD_RANK", "0", NULL };
    refused(b, "SLURM_PROCID=abc");   /* no silent fall-through to the next launcher */
    char *c[] = { "SLURM_PROCID", "4", "SLURM_NTASKS", "4", NULL };
    refused(c, "SLURM_PROCID=4: not below SLURM_NTASKS=4");
    char *d[] = { "SLURM_PROCID", "0", "SLURM_NTASKS", "0", NULL };
    refused(d, "SLURM_NTASKS=0");
    char *e[] = { "SLURM_PROCID", "0", "SLURM_LOCALID", "-2", NULL };
    refused(e, "SLURM_LOCALID=-2");
    char *f[] = { "OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "four", NULL };
    refused(f, "OMPI_COMM_WORLD_SIZE=four");
    char *g[] = { "JOB_COMPLETION_INDEX", "1e9", NULL };
    refused(g, "JOB_COMPLETION_INDEX=1e9");
    char *h[] = { "JOB_COMPLETION_INDEX", "999999999", NULL };
    refused(h, "JOB_COMPLETION_INDEX=999999999");   /* beyond 2^24 ranks */
    char *i[] = { "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_LOCAL_RANK", "2", "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
                  NULL };
    refused(i, "OMPI_COMM_WORLD_LOCAL_RANK=2: not below OMPI_COMM_WORLD_LOCAL_SIZE=2");
    char *j[] = { "SLURM_PROCID", "0", "SLURM_NODEID", "x", NULL };
    refused(j, "SLURM_NODEID=x");
    char *k[] = { "PMI_RANK", " 1", NULL };
    refused(k, "PMI_RANK= 1");
    char *l[] = { "JOB_COMPLETION_INDEX", "0", "KBENCH_WORLD_SIZE", "-3", NULL };
    refused(l, "KBENCH_WORLD_SIZE=-3");
}

static void test_fault_ranks(void)
{
    char err[256] = "";
    CHECK(kb_fault_rank_selected(NULL, 3, err, sizeof err) == 1);   /* unset: every rank */
    CHECK(kb_fault_rank_selected("2,5", 5, err, sizeof err) == 1);
    CHECK(kb_fault_rank_selected("2,5", 3, err, sizeof err) == 0);
    CHECK(kb_fault_rank_selected("7", 7, err, sizeof err) == 1);
    const char *bad[] = { "2,", "x", "1,-2", "1;2", ",", "99999999999", "+1", "1 " };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK_MSG(kb_fault_rank_selected(bad[i], 1, err, sizeof err) == -1 && strstr(err, "KBENCH_FAULT_RANKS="),
                  "%s accepted", bad[i]);
    }
}

int main(void)
{
    RUN(test_launchers);
    RUN(test_bad_values_refused);
    RUN(test_fault_ranks);
    TEST_MAIN_END();
}
