/* coll_rank.c - one rank of the emu collectives as a launcher starts it (srun, mpirun, a
 * Kubernetes pod): the identity and the rendezvous from the environment, the transport,
 * then every op in fp32, bf16 and int8 at 1, 37 and 65537 elements (sum, and avg for
 * all_reduce), each verified. For tests/coll_slurm.sh under a real Slurm. One line per
 * size:
 *   rank R launcher L op dtype redop count C bytes B busbw X wrong W suspects S busiest K
 * (S: the named ranks joined by ',' or '-'). Exit 0 when every size verified, 6 when some
 * were wrong (kbench accept's "incorrect"), 3 on a setup or transport error.
 * Options: --sockets (TCP between every pair). */
#include "collective/coll_bench.h"
#include "collective/rendezvous.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *env_get(void *user, const char *name) { return getenv(name); }

static int run_all(kb_coll_comm *c, const kb_identity *id)
{
    static const kb_dtype dts[] = { KB_DT_FP32, KB_DT_BF16, KB_DT_INT8 };
    static const size_t counts[] = { 1, 37, 65537 };
    int wrong = 0;
    for (int op = 0; op < KB_COLL_OP_COUNT; op++)
        for (int t = 0; t < 3; t++)
            for (int ro = 0; ro < (op == KB_COLL_ALL_REDUCE ? 2 : 1); ro++)
                for (int k = 0; k < 3; k++) {
                    kb_coll_desc d = { (kb_coll_op)op, dts[t], ro ? KB_REDOP_AVG : KB_REDOP_SUM, c->size, 0,
                                       counts[k], 7u + (unsigned)k };
                    kb_coll_result r;
                    kb_status st = kb_coll_bench(c, &d, 1, 3, &r);
                    if (st != KB_OK) {
                        fprintf(stderr, "rank %d: %s: %s\n", c->rank, kb_status_name(st), c->err);
                        return 3;
                    }
                    char sus[64] = "-";
                    for (int i = 0, len = 0; i < r.n_suspects; i++)
                        len += snprintf(sus + len, sizeof sus - (size_t)len, "%s%d", i ? "," : "", r.suspects[i]);
                    printf("rank %d launcher %s %s %s %s count %zu bytes %llu busbw %.4f wrong %lld suspects %s "
                           "busiest %d\n", c->rank, id->launcher, kb_coll_op_name(d.op), kb_dtype_name(d.dtype),
                           kb_coll_redop_name(d.redop), d.count, (unsigned long long)r.size_bytes, r.busbw_gbs,
                           (long long)r.wrong_all, sus, r.busiest);
                    wrong |= r.wrong_all != 0;
                }
    return wrong ? 6 : 0;
}

int main(int argc, char **argv)
{
    char host[128] = "", err[1024];
    gethostname(host, sizeof host - 1);
    kb_identity id;
    kb_rdv rdv;
    kb_coll_comm_opts o = { &rdv, NULL, getenv("KBENCH_COLL_ADDR"), argc > 1 && !strcmp(argv[1], "--sockets"), 0, 0,
                            1, 0 };
    kb_coll_comm *c = NULL;
    if (kb_identity_read(env_get, NULL, host, &id, err, sizeof err) != 0 ||
        kb_rdv_setup(env_get, NULL, &id, &rdv, err, sizeof err) != 0 ||
        kb_coll_faults_read(env_get, NULL, id.rank, &o.slowdown, &o.corrupt, err, sizeof err) != 0 ||
        kb_coll_comm_init((o.node = id.host, &o), &c, err, sizeof err) != KB_OK) {
        fprintf(stderr, "coll_rank: %s\n", err);
        return 3;
    }
    int rc = run_all(c, &id);
    kb_coll_comm_free(c);
    return rc;
}
