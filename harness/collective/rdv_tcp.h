/* rdv_tcp.h - the rendezvous through a TCP server on rank 0 (KBENCH_RENDEZVOUS=
 * tcp:HOST:PORT, HOST being rank 0's node: what torchrun calls MASTER_ADDR:MASTER_PORT).
 *
 * Rank 0 listens on PORT (every address), accepts one connection per other rank, reads its
 * header (rdv_common.h: key, world size, rank, record size) and record, refuses a
 * connection that disagrees (another job's key, another world size, a rank seen twice:
 * the client is told why), and when every rank has arrived sends each the whole table.
 * The others connect to HOST:PORT, retrying every 50 ms while the server is not up yet.
 * Everything is bounded by the timeout: no rank waits forever for one that never comes.
 */
#ifndef KB_RDV_TCP_H
#define KB_RDV_TCP_H

#include "collective/rdv_common.h"

/* As kb_rdv_dir_exchange, through r->host:r->port (r->kind == KB_RDV_TCP). KB_ERR_SETUP
 * also when rank 0 cannot listen on the port or HOST does not resolve, or rank 0 refused
 * this rank (its reason in err). */
kb_status kb_rdv_tcp_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n);

#endif /* KB_RDV_TCP_H */
