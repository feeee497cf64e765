/* cuda_graph.c - CUDA Graph capture and replay for the cuda backend (see cuda_graph.h). */
#include "backend/cuda/cuda_graph.h"

#include "backend/cuda/cuda_ctx.h"

#include <stdio.h>
#include <stdlib.h>

/* Capture mode THREAD_LOCAL (see cuThreadExchangeStreamCaptureMode in cuda.h):
 * - it still forbids "potentially unsafe" calls on this thread while capturing
 *   (a synchronous cuMemcpy or cuMemAlloc is not recorded into the graph, so a
 *   graph that depended on it would replay wrongly): such a mistake fails loudly;
 * - unlike GLOBAL, a capture here does not also forbid those calls on every other
 *   thread of the process (a telemetry thread, a library's worker), which have
 *   nothing to do with the graph.
 * kbench begins and ends a capture on the same thread, as every non-RELAXED mode
 * requires. Between begin and end, only launches and fills belong: an upload or
 * download (synchronous, on the legacy stream) invalidates the capture. */
kb_status kb_cuda_graph_begin(kb_backend_ctx *x)
{
    return CU(x, x->api.StreamBeginCapture(x->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
}

kb_status kb_cuda_graph_end(kb_backend_ctx *x, kb_graph **out)
{
    kb_status st;
    CUgraph graph = NULL;
    kb_graph *g = NULL;

    *out = NULL;
    /* Always end the capture, even after a failed launch invalidated it: that is
     * what returns the stream to normal mode. */
    if ((st = CU(x, x->api.StreamEndCapture(x->stream, &graph))) != KB_OK)
        goto fail;
    if (!(g = calloc(1, sizeof *g))) {
        snprintf(x->err, sizeof x->err, "cuda: out of memory");
        st = KB_ERR_OOM;
        goto fail;
    }
    if ((st = CU(x, x->api.GraphInstantiate(&g->exec, graph, 0))) != KB_OK)
        goto fail;
    g->graph = graph;
    /* Upload now, so the first replay (a sample when warm-up is 0) does not carry it. */
    if ((st = CU(x, x->api.GraphUpload(g->exec, x->stream))) != KB_OK) {
        x->api.GraphExecDestroy(g->exec);
        g->graph = NULL;
        goto fail;
    }
    *out = g;
    return KB_OK;
fail:
    free(g);
    if (graph)
        x->api.GraphDestroy(graph);
    return st;
}

kb_status kb_cuda_graph_launch(kb_backend_ctx *x, kb_graph *g)
{
    return CU(x, x->api.GraphLaunch(g->exec, x->stream));
}

void kb_cuda_graph_free(kb_backend_ctx *x, kb_graph *g)
{
    if (!g)
        return;
    if (g->exec)
        x->api.GraphExecDestroy(g->exec);
    if (g->graph)
        x->api.GraphDestroy(g->graph);
    free(g);
}

