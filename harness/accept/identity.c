/* identity.c - fleet identity from the launcher's environment (see identity.h). */
#include "accept/identity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative decimal integer, or -1. */
static int env_int(char *(*get)(void *, const char *), void *user, const char *name)
{
    const char *s = get(user, name);
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return (*end || errno || v < 0 || v > 1 << 30) ? -1 : (int)v;
}

static void env_str(char *(*get)(void *, const char *), void *user, const char *name, char *out, size_t size)
{
    const char *s = get(user, name);
    if (s && *s)
        snprintf(out, size, "%s", s);
}

/* The launchers, in the order they are tried: name, rank, local rank, size variables. */
static const struct {
    const char *launcher, *rank, *local, *size;
} launchers[] = {
    { "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
    { "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE" },
    { "pmix", "PMIX_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },
    { "pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },
    { "k8s", "JOB_COMPLETION_INDEX", NULL, NULL },
};

void kb_acc_identity_read(char *(*get)(void *user, const char *name), void *user, const char *host,
                          kb_acc_identity *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->launcher, sizeof id->launcher, "none");
    id->node_id = -1;
    id->world_size = 1;
    snprintf(id->host, sizeof id->host, "%s", host && *host ? host : "localhost");
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        int rank = env_int(get, user, launchers[i].rank);
        if (rank < 0)
            continue;
        snprintf(id->launcher, sizeof id->launcher, "%s", launchers[i].launcher);
        id->rank = rank;
        /* a Kubernetes Indexed Job runs one pod per index: each is alone on its node */
        int local = launchers[i].local ? env_int(get, user, launchers[i].local) : 0;
        id->local_rank = local >= 0 ? local : 0;
        id->world_size = launchers[i].size ? env_int(get, user, launchers[i].size) : -1;
        break;
    }
    env_str(get, user, "CUDA_VISIBLE_DEVICES", id->cuda_visible, sizeof id->cuda_visible);
    if (!strcmp(id->launcher, "slurm")) {
        id->node_id = env_int(get, user, "SLURM_NODEID");
        env_str(get, user, "SLURM_JOB_ID", id->job_id, sizeof id->job_id);
        env_str(get, user, "SLURM_STEP_ID", id->step_id, sizeof id->step_id);
        env_str(get, user, "SLURMD_NODENAME", id->host, sizeof id->host);
    }
}

int kb_acc_pick_device(int explicit_index, const char *cuda_visible, int local_rank)
{
    if (explicit_index >= 0)
        return explicit_index;
    if (!cuda_visible || !*cuda_visible)
        return local_rank;
    int n = 1;
    for (const char *p = cuda_visible; *p; p++)
        n += *p == ',';
    return n == 1 ? 0 : local_rank % n;
}

void kb_acc_rank_key(const kb_acc_identity *id, int pid, char *out, size_t size)
{
    char host[64];
    size_t k = 0;
    for (const char *p = id->host; *p && k + 1 < sizeof host; p++)
        host[k++] = (*p == '/' || *p == ' ' || *p == '\\') ? '_' : *p;
    host[k] = 0;
    if (strcmp(id->launcher, "none"))
        snprintf(out, size, "r%05d-%s", id->rank, host);
    else
        snprintf(out, size, "%s-%d", host, pid);
}
