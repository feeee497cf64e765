/* coll_shm.h - the emu transport between the ranks of one node: one POSIX shared-memory
 * segment per node, with a byte ring per ordered pair of its ranks and a doorbell per rank.
 *
 * Layout: a header (magic, ready flag, ranks, ring size), nlocal doorbells (a 32-bit word
 * each, on its own cache line), then nlocal x nlocal rings: ring (from, to) is written only
 * by `from` and read only by `to` (single producer, single consumer). A ring keeps two
 * monotonic byte counters, head (written) and tail (read), on separate cache lines; the
 * producer copies then publishes head with release order, the consumer reads head with
 * acquire order, copies, then publishes tail - so no lock is needed. After moving bytes a
 * rank rings the peer's doorbell (an atomic increment and a futex wake), and a rank with
 * nothing to do sleeps on its own doorbell (futex wait on the value it saw before trying),
 * so no wake-up is lost and idle ranks use no CPU.
 */
#ifndef KB_COLL_SHM_H
#define KB_COLL_SHM_H

#include "core/kb.h"

typedef struct {
    void *base;               /* the mapping; NULL when not open */
    size_t bytes;             /* its size */
    char name[160];           /* "/kbench-coll-..." (shm_open's name) */
    int creator;              /* this rank created it (and unlinks the name) */
    int linked;               /* the name still exists */
    int nlocal;               /* ranks on the node */
    size_t ring_bytes;        /* capacity of one ring [bytes] */
} kb_shm;

/* Create (creator) or open the segment name for nlocal ranks with rings of ring_bytes,
 * waiting for the creator until the monotonic deadline (kb_rdv_now's clock). KB_OK, or
 * KB_ERR_TIMEOUT / KB_ERR_SETUP with err. */
kb_status kb_shm_open(kb_shm *s, const char *name, int nlocal, int creator, size_t ring_bytes, double deadline,
                      char *err, size_t n);
/* Remove the name (the creator, once every rank has mapped it); the mapping stays. */
void kb_shm_unlink(kb_shm *s);
/* Unmap (and unlink when not yet done by the creator). Safe on a closed segment. */
void kb_shm_close(kb_shm *s);

/* Copy up to len bytes from src into ring (from, to) without waiting: the bytes moved. */
size_t kb_shm_put(kb_shm *s, int from, int to, const void *src, size_t len);
/* Copy up to len bytes out of ring (from, to) into dst without waiting: the bytes moved. */
size_t kb_shm_get(kb_shm *s, int from, int to, void *dst, size_t len);

/* The doorbell of local rank i: its value now, ring it (wakes a waiter), wait while it
 * still holds seen (at most timeout_ms). */
uint32_t kb_shm_bell(kb_shm *s, int i);
void kb_shm_ring(kb_shm *s, int i);
void kb_shm_wait(kb_shm *s, int i, uint32_t seen, int timeout_ms);

#endif /* KB_COLL_SHM_H */
