/* identity.h - who this kbench process is among the ranks a launcher started, which GPU
 * it takes, and which ranks a test hook selects. Every layer may ask (accept's verdicts,
 * the collectives' rendezvous), so it lives in core.
 *
 * One process per GPU, started by a launcher that never coordinates with kbench: Slurm
 * (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_NTASKS, SLURM_STEP_NUM_NODES /
 * SLURM_NNODES, SLURM_JOB_ID, SLURM_STEP_ID, SLURM_RESTART_COUNT, SLURMD_NODENAME), Open MPI
 * (OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE / _LOCAL_SIZE, OMPI_MCA_ess_base_jobid),
 * PMIx (PMIX_RANK, PMIX_NAMESPACE), PMI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID,
 * MPI_LOCALNRANKS), or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX; one pod per index,
 * alone on its node; the Job's size in KBENCH_WORLD_SIZE when the collectives need it).
 * The first launcher whose rank variable is set wins, in that order. Without any, the
 * process is rank 0 of 1 ("none"). KBENCH_JOB_KEY, when set, is the job-unique key.
 *
 * A variable that is set but makes no sense is refused with its name and value (issue 28):
 * a rank or local id that is not a decimal integer in [0, 2^24), a size that is not one in
 * [1, 2^24], a rank not below its size, a local rank not below the local size.
 *
 * Device choice: an explicit --device wins; else with CUDA_VISIBLE_DEVICES listing one
 * device (srun --gpus-per-task=1) that device, index 0; listing several, the local rank
 * modulo their count; unset, the local rank. CUDA_DEVICE_ORDER=PCI_BUS_ID (set by the
 * caller when unset) makes CUDA's numbering NVML's and nvidia-smi's.
 */
#ifndef KB_CORE_IDENTITY_H
#define KB_CORE_IDENTITY_H

#include <stddef.h>

#define KB_IDENTITY_MAX_RANKS (1 << 24)   /* ranks, sizes and indices are below this */

typedef struct {
    char launcher[16];      /* "slurm", "openmpi", "pmix", "pmi", "k8s", "none" */
    int rank;               /* global rank, 0.. */
    int local_rank;         /* rank on this node */
    int node_id;            /* -1 when the launcher does not say */
    int world_size;         /* -1 when unknown */
    int local_size;         /* ranks on this node; -1 when unknown */
    int nodes;              /* nodes the ranks span; -1 when unknown */
    char job_id[64];        /* "" when none */
    char step_id[32];
    char job_key[128];      /* job-unique, file-name safe ([A-Za-z0-9._-]); "" when none */
    char host[128];         /* SLURMD_NODENAME, else the host name given */
    char cuda_visible[128]; /* CUDA_VISIBLE_DEVICES as the launcher set it ("" unset) */
} kb_identity;

/* Fill *id from the environment read through get (getenv, or a test's table; user is
 * passed through) and the host name host. 0; or -1 with "NAME=VALUE: why" in err (n bytes)
 * when a variable of the chosen launcher is malformed (id then holds what was read). */
int kb_identity_read(char *(*get)(void *user, const char *name), void *user, const char *host, kb_identity *id,
                     char *err, size_t n);

/* 1 when the ranks' placement is known to be one node (nodes == 1, or local_size equal to
 * world_size, or a single rank); 0 when unknown or several. */
int kb_identity_one_node(const kb_identity *id);

/* The device index to open: explicit >= 0 wins; else from cuda_visible (may be NULL) and
 * the local rank as above. */
int kb_identity_pick_device(int explicit_index, const char *cuda_visible, int local_rank);

/* A file-name-safe key of this rank: "r<rank>-<host>" under a launcher, else
 * "<host>-<pid>" (pid given). */
void kb_identity_rank_key(const kb_identity *id, int pid, char *out, size_t size);

/* The test hook KBENCH_FAULT_RANKS="2,5" (docs/acceptance.md, Fault injection): whether
 * list (the variable's value; NULL or "" = unset) selects rank. 1 when it is unset or names
 * rank; 0 when it names other ranks only; -1 with "KBENCH_FAULT_RANKS=...: why" in err when
 * it is not a comma-separated list of ranks in [0, 2^24). */
int kb_fault_rank_selected(const char *list, int rank, char *err, size_t n);

#endif /* KB_CORE_IDENTITY_H */
