/* identity.h - who this kbench process is in a fleet run, and which GPU it takes.
 *
 * One process per GPU, started by a launcher that never coordinates with kbench: Slurm
 * (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_JOB_ID, SLURM_STEP_ID,
 * SLURMD_NODENAME), Open MPI (OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE), PMI/PMIx
 * (PMI_RANK, PMIX_RANK, PMI_SIZE), or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX); the
 * first found wins, in that order. Without any, the process is rank 0 of 1 ("none").
 *
 * Device choice: an explicit --device wins; else with CUDA_VISIBLE_DEVICES listing one
 * device (srun --gpus-per-task=1) that device, index 0; listing several, the local rank
 * modulo their count; unset, the local rank. CUDA_DEVICE_ORDER=PCI_BUS_ID (set when
 * unset) makes CUDA's numbering NVML's and nvidia-smi's.
 */
#ifndef KB_ACCEPT_IDENTITY_H
#define KB_ACCEPT_IDENTITY_H

#include <stddef.h>

typedef struct {
    char launcher[16];      /* "slurm", "openmpi", "pmix", "pmi", "k8s", "none" */
    int rank;               /* global rank, 0.. */
    int local_rank;         /* rank on this node */
    int node_id;            /* -1 when the launcher does not say */
    int world_size;         /* -1 when unknown */
    char job_id[64];        /* "" when none */
    char step_id[32];
    char host[128];         /* SLURMD_NODENAME, else the host name given */
    char cuda_visible[128]; /* CUDA_VISIBLE_DEVICES as the launcher set it ("" unset) */
} kb_acc_identity;

/* Fill *id from the environment read through get (getenv, or a test's table; user is
 * passed through) and the host name host. Malformed numbers count as absent. */
void kb_acc_identity_read(char *(*get)(void *user, const char *name), void *user, const char *host,
                          kb_acc_identity *id);

/* The device index to open: explicit >= 0 wins; else from cuda_visible (may be NULL) and
 * the local rank as above. */
int kb_acc_pick_device(int explicit_index, const char *cuda_visible, int local_rank);

/* A file-name-safe key of this rank: "r<rank>-<host>" under a launcher, else
 * "<host>-<pid>" (pid given). */
void kb_acc_rank_key(const kb_acc_identity *id, int pid, char *out, size_t size);

#endif /* KB_ACCEPT_IDENTITY_H */
