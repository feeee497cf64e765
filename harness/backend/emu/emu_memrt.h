/* emu_memrt.h - private to the emulator: the runtime's memory-side calls. cp.async as
 * pending copies (emu_async.h), and, for checked modules (--emu-check), every load and
 * store of kernel code checked against the block's shared-memory shadow (emu_shadow.h):
 * races between warps within a barrier epoch, reads of bytes never written, reads of a
 * pending cp.async destination. A finding fails the launch with both code locations. */
#ifndef KB_EMU_MEMRT_H
#define KB_EMU_MEMRT_H

#include "backend/emu/emu_block.h"

/* The kb_emu_rt slots (kb_emu_abi.h) */
void kb_emu_rt_cp_async(kb_emu_thread *p, void *smem, const void *gmem, int src_bytes);
void kb_emu_rt_cp_async_commit(kb_emu_thread *p);
void kb_emu_rt_cp_async_wait(kb_emu_thread *p, int n);
void kb_emu_rt_shared_read(kb_emu_thread *p, const void *addr, unsigned bytes);
void kb_emu_rt_access(kb_emu_thread *p, const void *addr, unsigned bytes, int kind, const void *pc);

#endif /* KB_EMU_MEMRT_H */
