/* cuda_graph.h - the cuda backend's graph slots: stream capture into a CUDA Graph,
 * instantiate, replay (see kb_backend's graph_* slots in backend.h). */
#ifndef KB_CUDA_GRAPH_H
#define KB_CUDA_GRAPH_H

#include "backend/backend.h"

kb_status kb_cuda_graph_begin(kb_backend_ctx *x);
kb_status kb_cuda_graph_end(kb_backend_ctx *x, kb_graph **out);
kb_status kb_cuda_graph_launch(kb_backend_ctx *x, kb_graph *g);
void kb_cuda_graph_free(kb_backend_ctx *x, kb_graph *g);

#endif /* KB_CUDA_GRAPH_H */
