/* coll_shm.c - the per-node shared-memory segment and its rings (see coll_shm.h). */
#include "collective/coll_shm.h"

#include "collective/rdv_common.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x6b62636f6c6c3031ull   /* "kbcoll01" */
#define LINE 64

typedef struct {
    uint64_t magic;
    _Atomic uint32_t ready;
    uint32_t nlocal;
    uint64_t ring_bytes;
} seg_header;

typedef struct {
    _Atomic uint64_t head;              /* bytes written (producer) */
    char pad0[LINE - sizeof(uint64_t)];
    _Atomic uint64_t tail;              /* bytes read (consumer) */
    char pad1[LINE - sizeof(uint64_t)];
} ring_header;

static size_t ring_stride(const kb_shm *s) { return sizeof(ring_header) + (s->ring_bytes + LINE - 1) / LINE * LINE; }

static _Atomic uint32_t *bell_of(kb_shm *s, int i) { return (_Atomic uint32_t *)((char *)s->base + LINE * (1 + i)); }

static ring_header *ring_of(kb_shm *s, int from, int to)
{
    size_t pair = (size_t)from * (size_t)s->nlocal + (size_t)to;
    size_t off = (size_t)LINE * (1 + (size_t)s->nlocal) + pair * ring_stride(s);
    return (ring_header *)((char *)s->base + off);
}

static kb_status map(kb_shm *s, int fd, char *err, size_t n)
{
    s->base = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->base == MAP_FAILED) {
        s->base = NULL;
        snprintf(err, n, "shared memory %s: mmap of %zu bytes: %s", s->name, s->bytes, strerror(errno));
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

static kb_status create(kb_shm *s, char *err, size_t n)
{
    int fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)s->bytes) != 0) {
        snprintf(err, n, "shared memory %s (%zu bytes): %s", s->name, s->bytes, strerror(errno));
        if (fd >= 0) {
            close(fd);
            shm_unlink(s->name);
        }
        return KB_ERR_SETUP;
    }
    s->linked = 1;
    kb_status st = map(s, fd, err, n);
    close(fd);
    if (st != KB_OK)
        return st;
    seg_header *h = s->base;   /* the file is zero-filled: counters and bells start at 0 */
    h->magic = MAGIC;
    h->nlocal = (uint32_t)s->nlocal;
    h->ring_bytes = s->ring_bytes;
    atomic_store_explicit(&h->ready, 1, memory_order_release);
    return KB_OK;
}

/* Open the creator's segment once it is ready, polling until the deadline. */
static kb_status attach(kb_shm *s, double deadline, char *err, size_t n)
{
    for (;;) {
        int fd = shm_open(s->name, O_RDWR, 0600);
        struct stat st;
        if (fd >= 0) {
            if (fstat(fd, &st) == 0 && st.st_size == (off_t)s->bytes) {   /* ftruncate'd already */
                kb_status r = map(s, fd, err, n);
                close(fd);
                if (r != KB_OK)
                    return r;
                seg_header *h = s->base;
                if (atomic_load_explicit(&h->ready, memory_order_acquire) && h->magic == MAGIC)
                    return KB_OK;
                munmap(s->base, s->bytes);
                s->base = NULL;
            } else {
                close(fd);
            }
        }
        if (kb_rdv_now() > deadline) {
            snprintf(err, n, "shared memory %s: the node's first rank never created it (ranks with the same node "
                     "name must share /dev/shm: on different machines or containers they need distinct names)",
                     s->name);
            return KB_ERR_TIMEOUT;
        }
        usleep(2000);
    }
}

kb_status kb_shm_open(kb_shm *s, const char *name, int nlocal, int creator, size_t ring_bytes, double deadline,
                      char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->nlocal = nlocal;
    s->creator = creator;
    s->ring_bytes = ring_bytes;
    s->bytes = (size_t)LINE * (1 + (size_t)nlocal) + (size_t)nlocal * (size_t)nlocal * ring_stride(s);
    return creator ? create(s, err, n) : attach(s, deadline, err, n);
}

void kb_shm_unlink(kb_shm *s)
{
    if (s->creator && s->linked)
        shm_unlink(s->name);
    s->linked = 0;
}

void kb_shm_close(kb_shm *s)
{
    kb_shm_unlink(s);
    if (s->base)
        munmap(s->base, s->bytes);
    s->base = NULL;
}

size_t kb_shm_put(kb_shm *s, int from, int to, const void *src, size_t len)
{
    ring_header *r = ring_of(s, from, to);
    char *data = (char *)(r + 1);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t room = s->ring_bytes - (size_t)(head - tail), k = len < room ? len : room;
    size_t at = (size_t)(head % s->ring_bytes), first = k < s->ring_bytes - at ? k : s->ring_bytes - at;
    memcpy(data + at, src, first);
    memcpy(data, (const char *)src + first, k - first);
    atomic_store_explicit(&r->head, head + k, memory_order_release);
    return k;
}

size_t kb_shm_get(kb_shm *s, int from, int to, void *dst, size_t len)
{
    ring_header *r = ring_of(s, from, to);
    const char *data = (const char *)(r + 1);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t have = (size_t)(head - tail), k = len < have ? len : have;
    size_t at = (size_t)(tail % s->ring_bytes), first = k < s->ring_bytes - at ? k : s->ring_bytes - at;
    memcpy(dst, data + at, first);
    memcpy((char *)dst + first, data, k - first);
    atomic_store_explicit(&r->tail, tail + k, memory_order_release);
    return k;
}

uint32_t kb_shm_bell(kb_shm *s, int i) { return atomic_load_explicit(bell_of(s, i), memory_order_acquire); }

void kb_shm_ring(kb_shm *s, int i)
{
    atomic_fetch_add_explicit(bell_of(s, i), 1, memory_order_acq_rel);
    syscall(SYS_futex, (uint32_t *)bell_of(s, i), FUTEX_WAKE, 1, NULL, NULL, 0);
}

void kb_shm_wait(kb_shm *s, int i, uint32_t seen, int timeout_ms)
{
    struct timespec t = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
    syscall(SYS_futex, (uint32_t *)bell_of(s, i), FUTEX_WAIT, seen, &t, NULL, 0);
}
