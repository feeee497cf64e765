/* coll_sock.c - TCP links between ranks on different nodes (see coll_sock.h). */
#include "collective/coll_sock.h"

#include "collective/rdv_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELLO_MAGIC 0x6b62636f6c6c6869ull   /* "kbcollhi" */

typedef struct {
    uint64_t magic, nonce;
    int32_t rank, pad;
} hello;

int kb_sock_listen(int *port, char *err, size_t n)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        snprintf(err, n, "emu transport: cannot listen on a TCP port: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

void kb_sock_local_addr(const char *override, char *buf, size_t n)
{
    snprintf(buf, n, "127.0.0.1");
    if (override && *override) {
        snprintf(buf, n, "%s", override);
        return;
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, (socklen_t)n);
        break;
    }
    freeifaddrs(ifs);
}

/* Blocking-with-deadline move of len bytes (hello). 0, or -1. */
static int io_all(int fd, void *buf, size_t len, int out, double deadline)
{
    char *p = buf;
    while (len > 0) {
        long k = kb_sock_try(fd, p, len, out);
        if (k < 0)
            return -1;
        p += k;
        len -= (size_t)k;
        struct pollfd pf = { fd, (short)(out ? POLLOUT : POLLIN), 0 };
        double left = deadline - kb_rdv_now();
        if (len > 0 && (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) == 0))
            return -1;
    }
    return 0;
}

static void tune(int fd)
{
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int kb_sock_dial(const char *addr, int port, int rank, uint64_t nonce, double deadline, char *err, size_t n)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        snprintf(err, n, "emu transport: %s is not an IPv4 address (KBENCH_COLL_ADDR)", addr);
        return -1;
    }
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            tune(fd);
            hello h = { HELLO_MAGIC, nonce, rank, 0 };
            if (io_all(fd, &h, sizeof h, 1, deadline) == 0)
                return fd;
        }
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (kb_rdv_now() > deadline) {
            snprintf(err, n, "emu transport: rank %d cannot connect to %s:%d: %s", rank, addr, port, strerror(e));
            return -1;
        }
        usleep(20000);
    }
}

int kb_sock_accept(int lfd, uint64_t nonce, double deadline, int *rank, char *err, size_t n)
{
    for (;;) {
        struct pollfd pf = { lfd, POLLIN, 0 };
        double left = deadline - kb_rdv_now();
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) == 0) {
            snprintf(err, n, "emu transport: a peer never connected");
            return -1;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        tune(fd);
        hello h;
        if (io_all(fd, &h, sizeof h, 0, deadline) == 0 && h.magic == HELLO_MAGIC && h.nonce == nonce) {
            *rank = h.rank;
            return fd;
        }
        close(fd);   /* a stray or stale connection: not one of this run's ranks */
    }
}

long kb_sock_try(int fd, void *buf, size_t len, int out)
{
    ssize_t k = out ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, buf, len, MSG_DONTWAIT);
    if (k > 0)
        return (long)k;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (k == 0 && len == 0)
        return 0;
    if (k == 0)
        errno = ECONNRESET;
    return -1;
}
