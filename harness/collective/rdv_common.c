/* rdv_common.c - the rendezvous transports' shared pieces (see rdv_common.h). */
#include "collective/rdv_common.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

double kb_rdv_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int kb_rdv_header(const kb_rdv *r, int rank, size_t bytes, char *buf, size_t n)
{
    return snprintf(buf, n, "kbench-rdv 1 %s %d %d %zu\n", r->key, r->size, rank, bytes);
}

int kb_rdv_header_check(const kb_rdv *r, const char *hdr, size_t bytes, int *rank, char *err, size_t n)
{
    char key[160];
    int version, size;
    size_t got;
    if (sscanf(hdr, "kbench-rdv %d %159s %d %d %zu", &version, key, &size, rank, &got) != 5 || version != 1) {
        snprintf(err, n, "not a kbench rendezvous record");
        return -1;
    }
    if (strcmp(key, r->key)) {
        snprintf(err, n, "a record of another job (key %s, this job's %s)", key, r->key);
        return -1;
    }
    if (size != r->size) {
        snprintf(err, n, "rank %d counts %d ranks, rank %d counts %d: the ranks' launcher variables disagree", *rank,
                 size, r->rank, r->size);
        return -1;
    }
    if (*rank < 0 || *rank >= r->size || got != bytes) {
        snprintf(err, n, "a record of rank %d with %zu bytes (expected a rank below %d with %zu bytes)", *rank, got,
                 r->size, bytes);
        return -1;
    }
    return 0;
}

void kb_rdv_missing(const unsigned char *arrived, int size, char *buf, size_t n)
{
    size_t len = 0;
    int listed = 0, total = 0;
    buf[0] = 0;
    for (int i = 0; i < size; i++) {
        if (arrived[i])
            continue;
        int j = i;
        while (j + 1 < size && !arrived[j + 1])
            j++;
        total += j - i + 1;
        if (listed++ < 8 && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%d", listed > 1 ? ", " : "", i);
        if (j > i && listed <= 8 && len < n)
            len += (size_t)snprintf(buf + len, n - len, "-%d", j);
        i = j;
    }
    if (len < n)
        snprintf(buf + len, n - len, "%s (%d of %d)", listed > 8 ? ", ..." : "", total, size);
}
