/* rdv_tcp.c - the rendezvous through a TCP server on rank 0 (see rdv_tcp.h).
 *
 * Wire: the client sends a 256-byte header (rdv_common.h's line, NUL-padded) and its
 * record; the server answers 'K' and the table (size x bytes), or 'E' and a 256-byte
 * reason. */
#include "collective/rdv_tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HDR 256
#define HELLO_WAIT_S 5.0     /* a connected client has this long to send its header */

/* Move len bytes over fd (send when out, else receive) before the deadline end. 0, or -1
 * (errno ETIMEDOUT when the deadline passed, ECONNRESET when the peer closed). */
static int io_all(int fd, void *buf, size_t len, int out, double end)
{
    char *p = buf;
    while (len > 0) {
        double left = end - kb_rdv_now();
        struct pollfd pf = { fd, (short)(out ? POLLOUT : POLLIN), 0 };
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t k = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (k == 0)
            errno = ECONNRESET;
        if (k <= 0 && !(k < 0 && (errno == EINTR || errno == EAGAIN)))
            return -1;
        if (k > 0) {
            p += k;
            len -= (size_t)k;
        }
    }
    return 0;
}

static void refuse(int fd, const char *why)
{
    char msg[1 + HDR] = "E";
    snprintf(msg + 1, HDR, "%s", why);
    io_all(fd, msg, sizeof msg, 1, kb_rdv_now() + 1.0);
    close(fd);
}

static int listen_on(const kb_rdv *r, char *err, size_t n)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1, off = 0;
    int v6 = fd >= 0;
    if (!v6)
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)r->port) };
    struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)r->port) };
    if (v6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);   /* IPv4 clients too */
    if (fd < 0 || bind(fd, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4, v6 ? sizeof a6 : sizeof a4) != 0 ||
        listen(fd, 128) != 0) {
        snprintf(err, n, "KBENCH_RENDEZVOUS=%s: rank 0 cannot listen on port %d: %s", r->spec, r->port,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Read one client's header and record; its rank, or -1 (the client was told why). */
static int take_client(const kb_rdv *r, int fd, const int *fds, void *all, size_t bytes)
{
    char hdr[HDR + 1], why[400];
    int q = -1;
    double end = kb_rdv_now() + HELLO_WAIT_S;
    hdr[HDR] = 0;
    if (io_all(fd, hdr, HDR, 0, end) != 0) {
        close(fd);
        return -1;
    }
    if (kb_rdv_header_check(r, hdr, bytes, &q, why, sizeof why) != 0 || q == 0 || fds[q] >= 0) {
        if (q >= 0 && q < r->size && (q == 0 || fds[q] >= 0))
            snprintf(why, sizeof why, "rank %d arrived twice: two processes claim it", q);
        refuse(fd, why);
        return -1;
    }
    if (io_all(fd, (char *)all + (size_t)q * bytes, bytes, 0, end) != 0) {
        close(fd);
        return -1;
    }
    return q;
}

static kb_status serve(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n)
{
    int lfd = listen_on(r, err, n);
    if (lfd < 0)
        return KB_ERR_SETUP;
    int *fds = malloc((size_t)r->size * sizeof *fds);
    unsigned char *arrived = calloc((size_t)r->size, 1);
    kb_status st = fds && arrived ? KB_OK : KB_ERR_OOM;
    for (int q = 0; fds && q < r->size; q++)
        fds[q] = -1;
    memcpy(all, mine, bytes);
    int left = r->size - 1;
    double end = kb_rdv_now() + r->timeout_s;
    if (arrived)
        arrived[0] = 1;
    while (st == KB_OK && left > 0) {
        double wait = end - kb_rdv_now();
        struct pollfd pf = { lfd, POLLIN, 0 };
        if (wait <= 0 || poll(&pf, 1, (int)(wait * 1000) + 1) == 0) {
            char miss[256];
            kb_rdv_missing(arrived, r->size, miss, sizeof miss);
            snprintf(err, n, "rendezvous %s (key %s): after %g s, ranks %s never connected to rank 0", r->spec,
                     r->key, r->timeout_s, miss);
            st = KB_ERR_TIMEOUT;
            break;
        }
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        int q = c >= 0 ? take_client(r, c, fds, all, bytes) : -1;
        if (q > 0) {
            fds[q] = c;
            arrived[q] = 1;
            left--;
        }
    }
    close(lfd);
    for (int q = 1; fds && q < r->size; q++) {
        if (fds[q] < 0)
            continue;
        char ok = 'K';
        if (st != KB_OK)
            refuse(fds[q], err);
        else if (io_all(fds[q], &ok, 1, 1, end + 5) != 0 || io_all(fds[q], all, (size_t)r->size * bytes, 1, end + 5))
            close(fds[q]);   /* the client finds out by its own deadline */
        else
            close(fds[q]);
    }
    free(fds);
    free(arrived);
    if (st == KB_ERR_OOM)
        snprintf(err, n, "rendezvous: out of memory");
    return st;
}

/* Connect to HOST:PORT, retrying until the deadline. The socket, or -1 with err. */
static int dial(const kb_rdv *r, double end, char *err, size_t n)
{
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int g = getaddrinfo(r->host, port, &hints, &ai);
    if (g != 0) {
        snprintf(err, n, "KBENCH_RENDEZVOUS=%s: host %s: %s", r->spec, r->host, gai_strerror(g));
        return -1;
    }
    int fd = -1;
    while (fd < 0 && kb_rdv_now() < end) {
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
            fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
            if (fd < 0)
                continue;
            int rc = connect(fd, a->ai_addr, a->ai_addrlen), e = 0;
            socklen_t el = sizeof e;
            struct pollfd pf = { fd, POLLOUT, 0 };
            if (rc != 0 && errno == EINPROGRESS && poll(&pf, 1, 1000) == 1)
                rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0 ? 0 : -1;
            if (rc != 0) {
                close(fd);
                fd = -1;
            }
        }
        if (fd < 0)
            usleep(50000);
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, n, "rendezvous %s (key %s): after %g s, rank 0 never answered on %s:%d (is %s rank 0's node?)",
                 r->spec, r->key, r->timeout_s, r->host, r->port, r->host);
    return fd;
}

static kb_status join(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n)
{
    double end = kb_rdv_now() + r->timeout_s;
    int fd = dial(r, end, err, n);
    if (fd < 0)
        return strstr(err, "never answered") ? KB_ERR_TIMEOUT : KB_ERR_SETUP;
    char hdr[HDR] = "", status = 0;
    kb_rdv_header(r, r->rank, bytes, hdr, sizeof hdr);
    /* rank 0 may wait up to the whole timeout for the last rank after this one arrived */
    double reply = end + r->timeout_s + 5;
    kb_status st = KB_OK;
    if (io_all(fd, hdr, HDR, 1, end) != 0 || io_all(fd, (void *)mine, bytes, 1, end) != 0 ||
        io_all(fd, &status, 1, 0, reply) != 0) {
        snprintf(err, n, "rendezvous %s: rank 0 at %s:%d closed or did not answer: %s", r->spec, r->host, r->port,
                 strerror(errno));
        st = errno == ETIMEDOUT ? KB_ERR_TIMEOUT : KB_ERR_SETUP;
    } else if (status != 'K') {
        char why[HDR + 1] = "";
        io_all(fd, why, HDR, 0, kb_rdv_now() + 1.0);
        why[HDR] = 0;
        snprintf(err, n, "rendezvous %s: rank 0 refused rank %d: %s", r->spec, r->rank, why);
        st = strstr(why, "never connected") ? KB_ERR_TIMEOUT : KB_ERR_SETUP;
    } else if (io_all(fd, all, (size_t)r->size * bytes, 0, reply) != 0) {
        snprintf(err, n, "rendezvous %s: the table from rank 0 was cut: %s", r->spec, strerror(errno));
        st = KB_ERR_SETUP;
    }
    close(fd);
    return st;
}

kb_status kb_rdv_tcp_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n)
{
    return r->rank == 0 ? serve(r, mine, bytes, all, err, n) : join(r, mine, bytes, all, err, n);
}
