/* rendezvous.h - handing every rank what the others published (the NCCL unique id on
 * cuda, the transport endpoints on emu), with no MPI linked in: the launcher (srun,
 * mpirun, a Kubernetes Indexed Job) only starts the processes and tells each its rank
 * (core/identity.h).
 *
 *   KBENCH_RENDEZVOUS=dir:PATH        a directory every rank sees (rdv_dir.h): local for
 *                                     one node, a shared file system (NFS, Lustre) across
 *                                     nodes; needs a job-unique key
 *   KBENCH_RENDEZVOUS=tcp:HOST:PORT   rank 0 serves on PORT of HOST, its node (rdv_tcp.h)
 *   unset                             one rank: nothing to exchange; ranks known to share
 *                                     one node: dir:$TMPDIR (else /tmp); otherwise refused,
 *                                     naming the variable
 *   KBENCH_RENDEZVOUS_TIMEOUT=S       every rank must arrive within S seconds (default 120,
 *                                     (0, 86400])
 *
 * The job-unique key (identity's job_key: KBENCH_JOB_KEY, else Slurm's job, step and
 * restart count, Open MPI's or PMIx's job id) names the directory's subfolder and is
 * checked in every record, so two jobs, or two steps of one job, never read each other's
 * records. A Kubernetes Indexed Job has no such variable: set KBENCH_JOB_KEY (from the
 * downward API: metadata.labels['batch.kubernetes.io/controller-uid']) and
 * KBENCH_WORLD_SIZE (the Job's completions).
 */
#ifndef KB_RENDEZVOUS_H
#define KB_RENDEZVOUS_H

#include "collective/rdv_common.h"
#include "core/identity.h"

/* The rendezvous of this rank from the variables above, read through get (getenv, or a
 * test's table) and the identity. 0; or -1 with the reason in err naming the variable
 * (a malformed value, ranks on several nodes without KBENCH_RENDEZVOUS, no world size, no
 * job key for dir:). */
int kb_rdv_setup(char *(*get)(void *user, const char *name), void *user, const kb_identity *id, kb_rdv *out,
                 char *err, size_t n);

/* Exchange fixed-size records: mine (bytes) in, every rank's in rank order out into all
 * (r->size x bytes, caller-allocated). Every rank calls it once per key. KB_OK;
 * KB_ERR_TIMEOUT naming the ranks that never arrived; KB_ERR_SETUP / KB_ERR_IO with the
 * reason in err. */
kb_status kb_rdv_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n);

#endif /* KB_RENDEZVOUS_H */
