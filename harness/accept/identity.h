/* identity.h - accept's names for the launcher identity, which lives in core/identity.h
 * (the collectives' rendezvous reads it too). One-line forwards only: the reading, the
 * validation (a malformed launcher variable is refused, naming it) and the device choice
 * are core/identity.c's. */
#ifndef KB_ACCEPT_IDENTITY_H
#define KB_ACCEPT_IDENTITY_H

#include "core/identity.h"

typedef kb_identity kb_acc_identity;

/* kb_identity_read: 0, or -1 with "NAME=VALUE: why" in err. */
static inline int kb_acc_identity_read(char *(*get)(void *user, const char *name), void *user, const char *host,
                                       kb_acc_identity *id, char *err, size_t n)
{
    return kb_identity_read(get, user, host, id, err, n);
}
static inline int kb_acc_pick_device(int explicit_index, const char *cuda_visible, int local_rank)
{
    return kb_identity_pick_device(explicit_index, cuda_visible, local_rank);
}
static inline void kb_acc_rank_key(const kb_acc_identity *id, int pid, char *out, size_t size)
{
    kb_identity_rank_key(id, pid, out, size);
}

#endif /* KB_ACCEPT_IDENTITY_H */
