/* coll_sock.h - the emu transport between ranks on different nodes: one TCP connection
 * per pair (TCP_NODELAY, non-blocking once set up), the higher rank connecting to the
 * lower one's listening port and introducing itself with a hello (a magic, its rank and
 * the run's nonce, so a stray connection is refused). */
#ifndef KB_COLL_SOCK_H
#define KB_COLL_SOCK_H

#include "core/kb.h"

/* Listen on every address, an ephemeral port: the socket and *port, or -1 with err. */
int kb_sock_listen(int *port, char *err, size_t n);

/* The IPv4 address peers reach this node at, into buf: override when non-empty
 * (KBENCH_COLL_ADDR), else the first up, non-loopback IPv4 interface's, else 127.0.0.1. */
void kb_sock_local_addr(const char *override, char *buf, size_t n);

/* Connect to addr:port (retrying until the monotonic deadline) and send the hello of rank
 * with nonce. The connected socket, non-blocking; or -1 with err. */
int kb_sock_dial(const char *addr, int port, int rank, uint64_t nonce, double deadline, char *err, size_t n);

/* Accept one connection on lfd and read its hello before the deadline: the socket
 * (non-blocking) and *rank; -1 with err on a timeout, or a hello of another run (nonce). */
int kb_sock_accept(int lfd, uint64_t nonce, double deadline, int *rank, char *err, size_t n);

/* Move up to len bytes without waiting (send when out): the bytes moved (0 when the socket
 * would block), or -1 when the peer closed or failed (errno set). */
long kb_sock_try(int fd, void *buf, size_t len, int out);

#endif /* KB_COLL_SOCK_H */
