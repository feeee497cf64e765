/* fake_core.c - the driver double's state: settings, handles, allocations and the virtual
 * clock (fake_state.h; the contract: fake_cuda.h). */
#include "fake_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- handles: every object the double made, by kind ---- */

#define MAX_OBJS 4096
static void *objs[MAX_OBJS];
static int kinds[MAX_OBJS];

void *obj_new(int kind, size_t bytes)
{
    for (int i = 0; i < MAX_OBJS; i++)
        if (!objs[i]) {
            if (!(objs[i] = calloc(1, bytes)))
                return NULL;
            kinds[i] = kind;
            return objs[i];
        }
    return NULL;
}

int obj_ok(const void *p, int kind)
{
    for (int i = 0; p && i < MAX_OBJS; i++)
        if (objs[i] == p)
            return kinds[i] == kind;
    return 0;
}

void obj_free_functions_of(const void *module)
{
    for (int i = 0; i < MAX_OBJS; i++)
        if (objs[i] && kinds[i] == K_FUNC && ((ffunc *)objs[i])->mod == module) {
            free(objs[i]);
            objs[i] = NULL;
        }
}

void obj_free(void *p)
{
    for (int i = 0; p && i < MAX_OBJS; i++)
        if (objs[i] == p) {
            objs[i] = NULL;
            free(p);
        }
}

/* ---- settings ---- */

static double env_num(const char *name, double def)
{
    const char *e = getenv(name);
    return e && *e ? atof(e) : def;
}

int arch(void) { return (int)env_num("KBENCH_FAKE_CUDA_ARCH", 90); }
int driver(void) { return (int)env_num("KBENCH_FAKE_CUDA_DRIVER", 13000); }
int sm_count(void) { return (int)env_num("KBENCH_FAKE_CUDA_SMS", 4); }
double slowdown(void) { return env_num("KBENCH_FAKE_CUDA_SLOWDOWN", 1.0); }
double kernel_ns(void) { return env_num("KBENCH_FAKE_CUDA_KERNEL_NS", 10000.0); }
long fault_at(void)
{
    long n = (long)env_num("KBENCH_FAKE_CUDA_FAULT", 0);
    return n ? n : (long)env_num("FAKE_CUDA_FAULT", 0);
}

/* fn is an entry of the comma-separated list in the environment variable env. */
static int listed(const char *env, const char *fn)
{
    const char *list = getenv(env);
    size_t n = strlen(fn);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        if (!strncmp(p, fn, n) && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

int fails(const char *fn) { return listed("KBENCH_FAKE_CUDA_FAIL", fn); }
int missing(const char *fn) { return listed("KBENCH_FAKE_CUDA_MISSING", fn); }

/* ---- the device's state ---- */

int initialised;
char primary_ctx_obj;            /* the primary context's handle */
int primary_refs;                /* its retain count */
__thread CUcontext current;      /* the calling thread's current context */
fstream legacy;                  /* the NULL stream */
int upload_unordered;            /* see fake_state.h */
double host_ns = 1e9;            /* the virtual host clock */

/* How long the GPU has had nothing to do [ns]: 0 while a stream holds queued or running
 * work (or is held by the blocking kernel), else the time since the last work ended. The
 * NVML double reads it to report an idle GPU as a real one does (fake_nvml.c). */
__attribute__((visibility("default"))) double fake_cuda_idle_ns(void);
double fake_cuda_idle_ns(void)
{
    double last = legacy.tail;
    if (legacy.blocked)
        return 0;
    for (int i = 0; i < n_streams; i++) {
        if (streams[i]->blocked)
            return 0;
        if (streams[i]->tail > last)
            last = streams[i]->tail;
    }
    return last >= host_ns ? 0 : host_ns - last;
}

/* The virtual host clock, for tests that assert how long the host waited [ns]. */
__attribute__((visibility("default"))) double fake_cuda_host_ns(void);
double fake_cuda_host_ns(void) { return host_ns; }
CUresult sticky;                 /* a sticky fault */
long launches;                   /* launches so far (fault injection) */
int fault_pending;
fstream *streams[64];
int n_streams;

/* ---- device memory: allocations, for validation ---- */

#define MAX_ALLOCS 65536
uintptr_t alloc_base[MAX_ALLOCS];
size_t alloc_size[MAX_ALLOCS];
unsigned alloc_host_flags[MAX_ALLOCS];

int alloc_find(uintptr_t p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (alloc_base[i] && p >= alloc_base[i] && p < alloc_base[i] + alloc_size[i] + (alloc_size[i] == 0))
            return i;
    return -1;
}

int range_ok(uintptr_t p, size_t n)
{
    int i = alloc_find(p);
    return i >= 0 && p + n <= alloc_base[i] + alloc_size[i];
}

CUresult alloc_add(void *m, size_t n)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!alloc_base[i]) {
            alloc_base[i] = (uintptr_t)m;
            alloc_size[i] = n;
            alloc_host_flags[i] = 0;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- the virtual clock ---- */

double gpu(double ns) { return ns * slowdown(); }

/* What a launch call costs the host: FAKE_LAUNCH_HOST_NS on the virtual clock, and with
 * KBENCH_FAKE_CUDA_HOST_LAUNCH_US set that many microseconds of real time as well (a slow
 * launch path - a debugger, a virtualised GPU - as the host's own clock sees it). */
void host_launch(void)
{
    double us = env_num("KBENCH_FAKE_CUDA_HOST_LAUNCH_US", 0);
    host_ns += FAKE_LAUNCH_HOST_NS + us * 1e3;
    if (us <= 0)
        return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) * 1e-3 < us);
}

static void release(fstream *s, double t)
{
    s->blocked = 0;
    s->tail = t;
    for (int i = 0; i < s->n_pending; i++) {
        if (s->pending[i].ev) {
            s->pending[i].ev->stamp = s->tail;
            s->pending[i].ev->known = 1;
        } else {
            s->tail += s->pending[i].dur;
        }
    }
    s->n_pending = 0;
}

int still_held(const fstream *s)
{
    if (s->wait_value_mode)
        return (int32_t)((unsigned)*s->flag - s->wait_value) < 0;
    return !*s->flag;
}

/* The blocking kernel (or a stream memory wait) sees the host's flag, or times out. */
static void poll_stream(fstream *s)
{
    if (!s->blocked)
        return;
    if (!still_held(s))
        release(s, host_ns > s->block_start ? host_ns : s->block_start);
    else if (host_ns - s->block_start >= s->timeout_ns) {
        *s->timed_out = 1;
        release(s, s->block_start + s->timeout_ns);
    }
}

void poll_all(void)
{
    poll_stream(&legacy);
    for (int i = 0; i < n_streams; i++)
        poll_stream(streams[i]);
}

/* Queue work of dur ns, or an event record (ev), on s. Behind a held stream at most
 * FAKE_QUEUE_DEPTH operations wait; one more blocks the host until the stream drains, i.e.
 * until the blocking kernel gives up (the host cannot set the flag while it is blocked). */
void enqueue(fstream *s, double dur, fevent *ev)
{
    if (s->blocked && s->n_pending == FAKE_QUEUE_DEPTH)
        wait_stream(s);
    if (s->blocked) {
        s->pending[s->n_pending++] = (op){ dur, ev };
        if (ev)
            ev->known = 0;
        return;
    }
    if (!s->non_blocking)
        upload_unordered = 0;   /* a blocking stream is ordered after the legacy stream's upload */
    double start = s->tail > host_ns ? s->tail : host_ns;
    if (ev) {
        ev->stamp = start;
        ev->known = 1;
        return;
    }
    s->tail = start + dur;
}

/* The host waits for everything queued on s (a blocked stream: until the timeout). */
void wait_stream(fstream *s)
{
    if (s->blocked && still_held(s) && host_ns < s->block_start + s->timeout_ns)
        host_ns = s->block_start + s->timeout_ns;
    poll_stream(s);
    if (s->tail > host_ns)
        host_ns = s->tail;
}

void wait_legacy(void)
{
    wait_stream(&legacy);
    for (int i = 0; i < n_streams; i++)
        if (!streams[i]->non_blocking)
            wait_stream(streams[i]);
}

static int any_capturing(void)
{
    for (int i = 0; i < n_streams; i++)
        if (streams[i]->capturing)
            return 1;
    return legacy.capturing;
}

/* A call that may not run while a stream captures (THREAD_LOCAL/GLOBAL modes). */
CUresult capture_forbids(void)
{
    if (!any_capturing())
        return CUDA_SUCCESS;
    for (int i = 0; i < n_streams; i++)
        if (streams[i]->capturing)
            streams[i]->invalidated = 1;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult sync_point(void)
{
    if (sticky)
        return sticky;
    if (fault_pending)
        return sticky = (CUresult)fault_pending;
    return CUDA_SUCCESS;
}

fstream *stream_of(CUstream h)
{
    if (!h)
        return &legacy;
    return obj_ok(h, K_STREAM) ? (fstream *)h : NULL;
}
