/* identity.c - launcher identity from the environment (see identity.h). */
#include "core/identity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*env_fn)(void *, const char *);

/* A decimal integer in [lo, hi] from s, into *out. 0, or -1 when s is not one. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '+'))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Variable name (when set) into *out: -1 when unset (out untouched), 0 when read, -2
 * with err filled when set and malformed. */
static int env_int(env_fn get, void *user, const char *name, int lo, int hi, int *out, char *err, size_t n)
{
    const char *s = name ? get(user, name) : NULL;
    if (!s || !*s)
        return -1;
    if (parse_int(s, lo, hi, out) == 0)
        return 0;
    snprintf(err, n, "%s=%.64s: expected an integer in [%d, %d]", name, s, lo, hi);
    return -2;
}

static void env_str(env_fn get, void *user, const char *name, char *out, size_t size)
{
    const char *s = get(user, name);
    if (s && *s)
        snprintf(out, size, "%s", s);
}

/* The launchers, in the order they are tried: name, rank, local rank, size, local size. */
static const struct {
    const char *launcher, *rank, *local, *size, *local_size;
} launchers[] = {
    { "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", NULL },
    { "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
      "OMPI_COMM_WORLD_LOCAL_SIZE" },
    { "pmix", "PMIX_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS" },
    { "pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS" },
    { "k8s", "JOB_COMPLETION_INDEX", NULL, "KBENCH_WORLD_SIZE", NULL },
};

/* A key made file-name safe: other characters become '_'. */
static void safe_key(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        out[k++] = ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
                    *s == '-' || *s == '_') ? *s : '_';
    out[k] = 0;
}

/* The job-unique key: KBENCH_JOB_KEY, else one the launcher gives ("" when none). */
static void job_key(env_fn get, void *user, kb_identity *id)
{
    char raw[160] = "";
    const char *k = get(user, "KBENCH_JOB_KEY");
    if (k && *k) {
        snprintf(raw, sizeof raw, "%s", k);
    } else if (!strcmp(id->launcher, "slurm") && id->job_id[0]) {
        const char *restart = get(user, "SLURM_RESTART_COUNT");
        snprintf(raw, sizeof raw, "slurm-%.60s.%.30s.%.8s", id->job_id, id->step_id[0] ? id->step_id : "x",
                 restart && *restart ? restart : "0");
    } else if (!strcmp(id->launcher, "openmpi") && (k = get(user, "OMPI_MCA_ess_base_jobid")) && *k) {
        snprintf(raw, sizeof raw, "ompi-%.100s", k);
    } else if ((k = get(user, "PMIX_NAMESPACE")) && *k) {
        snprintf(raw, sizeof raw, "pmix-%.100s", k);
    }
    safe_key(raw, id->job_key, sizeof id->job_key);
}

/* Slurm's extras: node id, job and step, node name, nodes of the step. */
static int read_slurm(env_fn get, void *user, kb_identity *id, char *err, size_t n)
{
    if (env_int(get, user, "SLURM_NODEID", 0, KB_IDENTITY_MAX_RANKS - 1, &id->node_id, err, n) == -2)
        return -1;
    int r = env_int(get, user, "SLURM_STEP_NUM_NODES", 1, KB_IDENTITY_MAX_RANKS, &id->nodes, err, n);
    if (r == -1)
        r = env_int(get, user, "SLURM_NNODES", 1, KB_IDENTITY_MAX_RANKS, &id->nodes, err, n);
    if (r == -2)
        return -1;
    env_str(get, user, "SLURM_JOB_ID", id->job_id, sizeof id->job_id);
    env_str(get, user, "SLURM_STEP_ID", id->step_id, sizeof id->step_id);
    env_str(get, user, "SLURMD_NODENAME", id->host, sizeof id->host);
    return 0;
}

/* Launcher i's variables; 0, or -1 with err. */
static int read_launcher(env_fn get, void *user, int i, kb_identity *id, char *err, size_t n)
{
    const int max = KB_IDENTITY_MAX_RANKS;
    snprintf(id->launcher, sizeof id->launcher, "%s", launchers[i].launcher);
    id->world_size = -1;
    if (env_int(get, user, launchers[i].size, 1, max, &id->world_size, err, n) == -2 ||
        env_int(get, user, launchers[i].local, 0, max - 1, &id->local_rank, err, n) == -2 ||
        env_int(get, user, launchers[i].local_size, 1, max, &id->local_size, err, n) == -2)
        return -1;
    if (id->world_size > 0 && id->rank >= id->world_size) {
        snprintf(err, n, "%s=%d: not below %s=%d", launchers[i].rank, id->rank, launchers[i].size, id->world_size);
        return -1;
    }
    if (id->local_size > 0 && id->local_rank >= id->local_size) {
        snprintf(err, n, "%s=%d: not below %s=%d", launchers[i].local, id->local_rank, launchers[i].local_size,
                 id->local_size);
        return -1;
    }
    if (!strcmp(id->launcher, "k8s")) {   /* one pod per index, each alone on its node */
        id->local_size = 1;
        id->nodes = id->world_size;
    }
    return !strcmp(id->launcher, "slurm") ? read_slurm(get, user, id, err, n) : 0;
}

int kb_identity_read(char *(*get)(void *user, const char *name), void *user, const char *host, kb_identity *id,
                     char *err, size_t n)
{
    memset(id, 0, sizeof *id);
    snprintf(id->launcher, sizeof id->launcher, "none");
    id->node_id = -1;
    id->world_size = id->local_size = id->nodes = 1;
    snprintf(id->host, sizeof id->host, "%s", host && *host ? host : "localhost");
    env_str(get, user, "CUDA_VISIBLE_DEVICES", id->cuda_visible, sizeof id->cuda_visible);
    int rc = 0;
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        int r = env_int(get, user, launchers[i].rank, 0, KB_IDENTITY_MAX_RANKS - 1, &id->rank, err, n);
        if (r == -1)
            continue;
        id->local_size = id->nodes = -1;
        rc = r == -2 ? -1 : read_launcher(get, user, (int)i, id, err, n);
        break;
    }
    job_key(get, user, id);
    return rc;
}

int kb_identity_one_node(const kb_identity *id)
{
    return id->world_size == 1 || id->nodes == 1 || (id->local_size > 0 && id->local_size == id->world_size);
}

int kb_identity_pick_device(int explicit_index, const char *cuda_visible, int local_rank)
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

void kb_identity_rank_key(const kb_identity *id, int pid, char *out, size_t size)
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

int kb_fault_rank_selected(const char *list, int rank, char *err, size_t n)
{
    if (!list || !*list)
        return 1;
    int hit = 0;
    for (const char *p = list;;) {
        char item[32];
        size_t len = strcspn(p, ",");
        int r;
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item - 1 ? len : sizeof item - 1), p);
        if (len >= sizeof item || parse_int(item, 0, KB_IDENTITY_MAX_RANKS - 1, &r) != 0 || item[0] == '-' ||
            item[0] == '+') {
            snprintf(err, n, "KBENCH_FAULT_RANKS=%.64s: expected a comma-separated list of ranks (integers in [0, %d])",
                     list, KB_IDENTITY_MAX_RANKS - 1);
            return -1;
        }
        hit |= r == rank;
        if (!p[len])
            break;
        p += len + 1;
    }
    return hit;
}
