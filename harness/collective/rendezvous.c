/* rendezvous.c - the rendezvous's settings and dispatch (see rendezvous.h). */
#include "collective/rendezvous.h"

#include "collective/rdv_dir.h"
#include "collective/rdv_tcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TIMEOUT_S 120.0

static int parse_timeout(const char *s, double *out, char *err, size_t n)
{
    if (!s || !*s) {
        *out = DEFAULT_TIMEOUT_S;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v > 0 && v <= 86400)) {
        snprintf(err, n, "KBENCH_RENDEZVOUS_TIMEOUT=%.40s: expected seconds in (0, 86400]", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* "tcp:HOST:PORT" (HOST may be [v6]); 0, or -1 with err. */
static int parse_tcp(const char *v, kb_rdv *r, char *err, size_t n)
{
    const char *h = v + 4, *colon = strrchr(h, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    size_t hl = colon ? (size_t)(colon - h) : 0;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (!colon || hl == 0 || hl >= sizeof r->host || !colon[1] || *end || port < 1 || port > 65535) {
        snprintf(err, n, "KBENCH_RENDEZVOUS=%.200s: expected tcp:HOST:PORT (HOST rank 0's node, PORT in [1, 65535])",
                 v);
        return -1;
    }
    memcpy(r->host, h, hl);
    r->host[hl] = 0;
    r->port = (int)port;
    r->kind = KB_RDV_TCP;
    return 0;
}

/* The spec (the variable's value, or the default for one node); 0, or -1 with err. */
static int parse_spec(const char *v, const kb_identity *id, char *(*get)(void *, const char *), void *user,
                      kb_rdv *r, char *err, size_t n)
{
    if (!v || !*v) {
        if (!kb_identity_one_node(id)) {
            snprintf(err, n, "KBENCH_RENDEZVOUS is not set and the %d ranks (%s) may span nodes: set it to "
                     "dir:PATH (a directory every node shares) or tcp:HOST:PORT (HOST: rank 0's node)",
                     id->world_size, id->launcher);
            return -1;
        }
        const char *tmp = get(user, "TMPDIR");
        snprintf(r->path, sizeof r->path, "%s", tmp && *tmp ? tmp : "/tmp");
        snprintf(r->spec, sizeof r->spec, "dir:%s (the default for one node)", r->path);
        r->kind = KB_RDV_DIR;
        return 0;
    }
    snprintf(r->spec, sizeof r->spec, "%s", v);
    if (!strncmp(v, "tcp:", 4))
        return parse_tcp(v, r, err, n);
    if (!strncmp(v, "dir:", 4) && v[4] && strlen(v + 4) < sizeof r->path - 64) {
        snprintf(r->path, sizeof r->path, "%s", v + 4);
        r->kind = KB_RDV_DIR;
        return 0;
    }
    snprintf(err, n, "KBENCH_RENDEZVOUS=%.200s: expected dir:PATH or tcp:HOST:PORT", v);
    return -1;
}

int kb_rdv_setup(char *(*get)(void *user, const char *name), void *user, const kb_identity *id, kb_rdv *out,
                 char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    out->rank = id->rank;
    out->size = id->world_size;
    if (parse_timeout(get(user, "KBENCH_RENDEZVOUS_TIMEOUT"), &out->timeout_s, err, n) != 0)
        return -1;
    if (id->world_size == 1)
        return 0;   /* KB_RDV_NONE */
    if (id->world_size < 1) {
        const char *var = !strcmp(id->launcher, "k8s") ? "KBENCH_WORLD_SIZE (the Indexed Job's completions)"
                          : !strcmp(id->launcher, "slurm")  ? "SLURM_NTASKS"
                          : !strcmp(id->launcher, "openmpi") ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
        snprintf(err, n, "the launcher (%s) gives no number of ranks: set %s", id->launcher, var);
        return -1;
    }
    if (parse_spec(get(user, "KBENCH_RENDEZVOUS"), id, get, user, out, err, n) != 0)
        return -1;
    snprintf(out->key, sizeof out->key, "%s", id->job_key[0] ? id->job_key : "none");
    if (out->kind == KB_RDV_DIR && !id->job_key[0]) {
        snprintf(err, n, "rendezvous %s needs a job-unique key and the launcher (%s) gives none: set KBENCH_JOB_KEY "
                 "(Kubernetes: the Job's controller-uid)", out->spec, id->launcher);
        return -1;
    }
    return 0;
}

kb_status kb_rdv_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n)
{
    switch (r->kind) {
    case KB_RDV_DIR: return kb_rdv_dir_exchange(r, mine, bytes, all, err, n);
    case KB_RDV_TCP: return kb_rdv_tcp_exchange(r, mine, bytes, all, err, n);
    default: memcpy(all, mine, bytes); return KB_OK;
    }
}
