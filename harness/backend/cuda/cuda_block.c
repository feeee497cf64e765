/* cuda_block.c - the blocking kernel that keeps host latency out of timed windows
 * (see cuda_block.h). */
#include "backend/cuda/cuda_block.h"

#include "backend/cuda/cuda_ctx.h"
#include "backend/cuda/kb_nvrtc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel: one thread spins until the host sets *flag or timeout_ns pass on the GPU's
 * global timer. The flag is volatile (re-read every iteration, from host memory over the
 * bus); __nanosleep keeps the spin from hammering the bus. */
static const char block_src[] =
    "extern \"C\" __global__ void kb_block_stream(volatile int *flag, int *timed_out,\n"
    "                                             unsigned long long timeout_ns)\n"
    "{\n"
    "    unsigned long long start, now;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(start));\n"
    "    while (!*flag) {\n"
    "        __nanosleep(1000);\n"
    "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now));\n"
    "        if (now - start > timeout_ns) {\n"
    "            *(volatile int *)timed_out = 1;\n"
    "            break;\n"
    "        }\n"
    "    }\n"
    "}\n";

/* Build, load and give the kernel its flag. 0, or -1 with why filled. */
static int block_build(kb_backend_ctx *x)
{
    void *cubin = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_sb_init(&log);
    kb_status st = kb_nvrtc_compile(block_src, "kb_block_stream.cu", NULL, 0, NULL, 0, kb_target_sm(&x->info),
                                    &cubin, &bytes, &log);
    if (st != KB_OK) {
        snprintf(x->block.why, sizeof x->block.why, "NVRTC: %.200s", log.s);
        kb_sb_free(&log);
        return -1;
    }
    kb_sb_free(&log);
    st = CU(x, x->api.ModuleLoadData(&x->block.mod, cubin));
    free(cubin);
    if (st != KB_OK) {
        x->block.mod = NULL;
        goto fail;
    }
    if ((st = CU(x, x->api.ModuleGetFunction(&x->block.fn, x->block.mod, "kb_block_stream"))) != KB_OK)
        goto fail;
    void *host = NULL;
    if ((st = CU(x, x->api.MemHostAlloc(&host, 2 * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE))) != KB_OK)
        goto fail;
    x->block.host = host;
    if ((st = CU(x, x->api.MemHostGetDevicePointer(&x->block.d_flag, host, 0))) != KB_OK ||
        (st = CU(x, x->api.MemHostGetDevicePointer(&x->block.d_timed_out, x->block.host + 1, 0))) != KB_OK)
        goto fail;
    return 0;
fail:
    snprintf(x->block.why, sizeof x->block.why, "%.250s", x->err);
    x->err[0] = 0;
    return -1;
}

kb_status kb_cuda_block_hold(kb_backend_ctx *x)
{
    if (!x->block.tried) {
        x->block.tried = 1;
        x->block.ok = block_build(x) == 0;
    }
    if (!x->block.ok)
        return KB_OK;
    volatile int *h = x->block.host;
    h[0] = 0;
    h[1] = 0;
    __sync_synchronize();
    unsigned long long timeout = KB_BLOCK_TIMEOUT_NS;
    void *params[] = { &x->block.d_flag, &x->block.d_timed_out, &timeout };
    kb_status st = CU(x, x->api.LaunchKernel(x->block.fn, 1, 1, 1, 1, 1, 1, 0, x->stream, params, NULL));
    x->block.held = st == KB_OK;
    return st;
}

void kb_cuda_block_release(kb_backend_ctx *x)
{
    if (!x->block.held)
        return;
    __sync_synchronize();
    ((volatile int *)x->block.host)[0] = 1;
    __sync_synchronize();
}

void kb_cuda_block_abandon(kb_backend_ctx *x)
{
    kb_cuda_block_release(x);
    x->block.held = 0;
}

int kb_cuda_block_done(kb_backend_ctx *x)
{
    if (!x->block.held)
        return 0;
    x->block.held = 0;
    x->block.windows++;
    if (!((volatile int *)x->block.host)[1])
        return 0;
    x->block.timeouts++;
    return 1;
}

const char *kb_cuda_timing_method(kb_backend_ctx *x)
{
    if (!x->block.tried)
        snprintf(x->block.method, sizeof x->block.method, "cuda events");
    else if (!x->block.ok)
        snprintf(x->block.method, sizeof x->block.method, "cuda events (no blocking kernel: %.200s)", x->block.why);
    else if (x->block.timeouts)
        snprintf(x->block.method, sizeof x->block.method,
                 "cuda events behind a blocking kernel (%ld of %ld windows timed out after %llu ms: they may "
                 "hold launch latency)", x->block.timeouts, x->block.windows, KB_BLOCK_TIMEOUT_NS / 1000000ull);
    else
        snprintf(x->block.method, sizeof x->block.method, "cuda events behind a blocking kernel");
    return x->block.method;
}

void kb_cuda_block_free(kb_backend_ctx *x)
{
    if (x->block.host)
        x->api.MemFreeHost(x->block.host);
    if (x->block.mod)
        x->api.ModuleUnload(x->block.mod);
    memset(&x->block, 0, sizeof x->block);
}
