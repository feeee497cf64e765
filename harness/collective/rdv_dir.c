/* rdv_dir.c - the rendezvous through a shared directory (see rdv_dir.h). */
#include "collective/rdv_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POLL_US 20000
#define DONE_WAIT_S 10.0

static void file_of(const kb_rdv *r, const char *what, int rank, char *buf, size_t n)
{
    snprintf(buf, n, "%s/kbench-rdv-%s/%s-%d", r->path, r->key, what, rank);
}

/* Write bytes to path through a temporary file and a rename. 0, or -1 with err. */
static int write_atomic(const char *path, const char *hdr, const void *data, size_t bytes, char *err, size_t n)
{
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f && fputs(hdr, f) >= 0 && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
    ok = f && fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, n, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Read rank q's record into dst when its file is complete: 1 read, 0 not there yet, -1
 * with err when it is there but disagrees. */
static int read_record(const kb_rdv *r, int q, void *dst, size_t bytes, char *err, size_t n)
{
    char path[700], hdr[300], why[400];
    file_of(r, "rank", q, path, sizeof path);
    /* without blocking, and a regular file only: a FIFO planted in the directory must not
     * hang the rank (core/output.h: the rendezvous directory is kbench's own) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    FILE *f = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
            close(fd);
            snprintf(err, n, "rendezvous %s: %s: not a regular file", r->spec, path);
            return -1;
        }
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int rank = -1, rc = -1;
    if (!fgets(hdr, sizeof hdr, f))
        snprintf(why, sizeof why, "no header");
    else if (kb_rdv_header_check(r, hdr, bytes, &rank, why, sizeof why) != 0)
        ;   /* why says what disagrees */
    else if (rank != q)
        snprintf(why, sizeof why, "it says rank %d", rank);
    else if (fread(dst, 1, bytes, f) != bytes)
        snprintf(why, sizeof why, "cut short");
    else
        rc = 1;
    fclose(f);
    if (rc < 0)
        snprintf(err, n, "rendezvous %s: %s: %s", r->spec, path, why);
    return rc;
}

/* Rank 0: wait for every done file, then remove the directory. */
static void cleanup(const kb_rdv *r)
{
    char path[700];
    double end = kb_rdv_now() + DONE_WAIT_S;
    for (int q = 0; q < r->size;) {
        file_of(r, "done", q, path, sizeof path);
        if (access(path, F_OK) == 0) {
            q++;
        } else if (kb_rdv_now() > end) {
            return;   /* a rank left early: leave the files (the next run with this key says so) */
        } else {
            usleep(POLL_US);
        }
    }
    for (int q = 0; q < r->size; q++) {
        file_of(r, "rank", q, path, sizeof path);
        unlink(path);
        file_of(r, "done", q, path, sizeof path);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/kbench-rdv-%s", r->path, r->key);
    rmdir(path);
}

/* Create the key's directory (it may exist: another rank made it). 0, or -1 with err. */
static int make_dir(const kb_rdv *r, char *err, size_t n)
{
    struct stat st;
    if (stat(r->path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, n, "KBENCH_RENDEZVOUS=%s: %s is not a directory", r->spec, r->path);
        return -1;
    }
    char dir[700];
    snprintf(dir, sizeof dir, "%s/kbench-rdv-%s", r->path, r->key);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, n, "KBENCH_RENDEZVOUS=%s: cannot create %s: %s", r->spec, dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Poll until every rank's record is read into all. */
static kb_status gather(const kb_rdv *r, size_t bytes, void *all, char *err, size_t n)
{
    unsigned char *arrived = calloc((size_t)r->size, 1);
    if (!arrived) {
        snprintf(err, n, "rendezvous: out of memory");
        return KB_ERR_OOM;
    }
    arrived[r->rank] = 1;
    int left = r->size - 1;
    double end = kb_rdv_now() + r->timeout_s;
    kb_status st = KB_OK;
    while (left > 0 && st == KB_OK) {
        for (int q = 0; q < r->size && st == KB_OK; q++) {
            if (arrived[q])
                continue;
            int got = read_record(r, q, (char *)all + (size_t)q * bytes, bytes, err, n);
            st = got < 0 ? KB_ERR_SETUP : KB_OK;
            arrived[q] = got > 0;
            left -= got > 0;
        }
        if (left > 0 && st == KB_OK && kb_rdv_now() > end) {
            char miss[256];
            kb_rdv_missing(arrived, r->size, miss, sizeof miss);
            snprintf(err, n, "rendezvous %s (key %s): after %g s, ranks %s never arrived (no %s/kbench-rdv-%s/rank-N)",
                     r->spec, r->key, r->timeout_s, miss, r->path, r->key);
            st = KB_ERR_TIMEOUT;
        } else if (left > 0 && st == KB_OK) {
            usleep(POLL_US);
        }
    }
    free(arrived);
    return st;
}

kb_status kb_rdv_dir_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n)
{
    char path[700], hdr[300];
    if (make_dir(r, err, n) != 0)
        return KB_ERR_SETUP;
    file_of(r, "rank", r->rank, path, sizeof path);
    if (access(path, F_OK) == 0) {
        snprintf(err, n, "rendezvous %s: %s is left from an earlier run with the key %s: remove %s/kbench-rdv-%s "
                 "or set KBENCH_JOB_KEY to a fresh key", r->spec, path, r->key, r->path, r->key);
        return KB_ERR_SETUP;
    }
    kb_rdv_header(r, r->rank, bytes, hdr, sizeof hdr);
    if (write_atomic(path, hdr, mine, bytes, err, n) != 0)
        return KB_ERR_IO;
    memcpy((char *)all + (size_t)r->rank * bytes, mine, bytes);
    kb_status st = gather(r, bytes, all, err, n);
    if (st != KB_OK)
        return st;
    file_of(r, "done", r->rank, path, sizeof path);
    char ignore[64];
    write_atomic(path, "", NULL, 0, ignore, sizeof ignore);
    if (r->rank == 0)
        cleanup(r);
    return KB_OK;
}
