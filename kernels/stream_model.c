/* stream_model.c - the traffic of streaming kernels (stream_model.h). */
#include "stream_model.h"

#include <string.h>

int kb_stream_traffic(const kb_family *f, const kb_case *c, const kb_stream_shape *s, kb_traffic *t)
{
    kb_work w = f->work(c);
    double compulsory = w.bytes_read + w.bytes_written;
    double moved = w.bytes_moved > compulsory ? w.bytes_moved : compulsory;
    double esz = (double)kb_dtype_size(c->dtype);
    memset(t, 0, sizeof *t);
    t->blocks = s->blocks;
    t->threads = s->threads;
    t->dyn_smem_bytes = s->dyn_smem_bytes;
    t->launches = 1;
    t->simt_flops = w.flops;
    t->dram_bytes = compulsory;
    t->l2_bytes = moved;
    t->write_bytes = w.bytes_written;
    t->warp_insts = (moved / s->access_bytes * 4.0 + moved / esz * 2.0 + w.flops / 2.0) / 32.0;
    t->inflight_bytes = s->in_flight * s->access_bytes;
    return 1;
}
