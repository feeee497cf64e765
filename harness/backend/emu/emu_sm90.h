/* emu_sm90.h - the emulator's model of Hopper's asynchronous machinery, one module per
 * mechanism (emu_mbar, emu_tma, emu_wgmma, emu_proxy, emu_sync90), tied together here: the
 * kb_emu_rt slots kernels/kb_mbarrier.h, kb_tma.h, kb_sync90.h and kb_wgmma.h call, and the
 * scheduler extension (kb_emu_ext) that lands TMA copies at scheduling points and reports a
 * deadlock by what every thread waits for.
 *
 * Off the hot path: a worker allocates this state at the first sm_90 call of a kernel, and
 * the scheduler calls the extension only in blocks that made one; today's kernels never do.
 */
#ifndef KB_EMU_SM90_H
#define KB_EMU_SM90_H

#include "backend/emu/emu_block.h"

/* The kb_emu_rt slots (kb_emu_abi.h). */
void kb_emu_rt_mbar_init(kb_emu_thread *p, void *bar, unsigned count);
void kb_emu_rt_mbar_inval(kb_emu_thread *p, void *bar);
unsigned long long kb_emu_rt_mbar_arrive(kb_emu_thread *p, void *bar, unsigned count, unsigned tx_bytes);
void kb_emu_rt_mbar_tx(kb_emu_thread *p, void *bar, int sign, unsigned bytes);
int kb_emu_rt_mbar_wait(kb_emu_thread *p, void *bar, int how, unsigned long long arg);
void kb_emu_rt_tma_load(kb_emu_thread *p, void *smem, const void *tmap, const int *coords, void *bar);
void kb_emu_rt_tma_store(kb_emu_thread *p, const void *tmap, const void *smem, const int *coords);
void kb_emu_rt_bulk_commit(kb_emu_thread *p);
void kb_emu_rt_bulk_wait(kb_emu_thread *p, int n, int read_only);
void kb_emu_rt_fence_proxy_async(kb_emu_thread *p);
void kb_emu_rt_named_barrier(kb_emu_thread *p, unsigned id, unsigned n, int arrive_only);
void kb_emu_rt_setmaxnreg(kb_emu_thread *p, int inc, unsigned regs);
void kb_emu_rt_wgmma_fence(kb_emu_thread *p);
void kb_emu_rt_wgmma(kb_emu_thread *p, const kb_emu_wgmma_op *op);
void kb_emu_rt_wgmma_commit(kb_emu_thread *p);
void kb_emu_rt_wgmma_wait(kb_emu_thread *p, int n);

/* The launch is a checked one of a module that uses the async proxy: record generic shared
 * writes for the fence.proxy.async rule (emu_memrt.c). Called per launch by the worker;
 * KB_ERR_OOM when the tables cannot be had. */
kb_status kb_emu_sm90_begin(kb_emu_worker *w, int record_proxy);
/* A checked generic write of shared memory at off by thread t (emu_memrt.c): recorded for the
 * fence rule; into a TMA destination not landed or a wgmma operand in flight, the launch fails. */
void kb_emu_sm90_generic_write(kb_emu_thr *t, uint32_t off, unsigned bytes);
/* A read of shared memory a TMA load has not landed in: the launch fails (emu_memrt.c). */
void kb_emu_sm90_check_read(kb_emu_thr *t, uint32_t off, unsigned bytes);

#endif /* KB_EMU_SM90_H */
