/* rdv_common.h - what the rendezvous's two transports share (rendezvous.h is the
 * interface): the settings of one rendezvous, a monotonic deadline, the record header
 * every rank sends, and the list of ranks that never arrived. */
#ifndef KB_RDV_COMMON_H
#define KB_RDV_COMMON_H

#include "core/kb.h"

typedef enum { KB_RDV_NONE = 0, KB_RDV_DIR, KB_RDV_TCP } kb_rdv_kind;

/* One rendezvous: where, who, how long. */
typedef struct {
    kb_rdv_kind kind;        /* NONE: a single rank, nothing to exchange */
    char path[512];          /* DIR: the shared directory (KBENCH_RENDEZVOUS=dir:PATH) */
    char host[256];          /* TCP: rank 0's node (KBENCH_RENDEZVOUS=tcp:HOST:PORT) */
    int port;                /* TCP: 1..65535 */
    char key[128];           /* the job-unique key, file-name safe ("none" for tcp without one) */
    int rank, size;          /* this rank, the number of ranks (>= 1) */
    double timeout_s;        /* every rank must arrive within this [s] */
    char spec[600];          /* the variable as given, for messages ("dir:/shared", "default dir:/tmp/...") */
} kb_rdv;

/* Seconds on a monotonic clock. */
double kb_rdv_now(void);

/* The header of a record: "kbench-rdv 1 <key> <size> <rank> <bytes>\n" into buf (n >= 256);
 * its length. */
int kb_rdv_header(const kb_rdv *r, int rank, size_t bytes, char *buf, size_t n);

/* Check a received header against this rendezvous: 0 and *rank; -1 with err saying what
 * disagrees (another job's key, another world size, another record size, not a record). */
int kb_rdv_header_check(const kb_rdv *r, const char *hdr, size_t bytes, int *rank, char *err, size_t n);

/* "ranks 2, 5-7 (of 8)" for the ranks whose arrived[] is 0, into buf. */
void kb_rdv_missing(const unsigned char *arrived, int size, char *buf, size_t n);

#endif /* KB_RDV_COMMON_H */
