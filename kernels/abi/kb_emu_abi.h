/* kb_emu_abi.h - the C ABI between the emulator runtime (harness/backend/emu/) and a kernel
 * module built by the host C++ compiler with -DKB_EMU (kernels/kb_device_emu.h).
 *
 * Plain C, included from both sides. A module never links against kbench: it reaches
 * the runtime only through the kb_emu_rt table it is handed at load, so no -rdynamic
 * and no exported symbols are needed in the executable.
 *
 * A module (one translation unit that includes kb_device.h) exports, extern "C":
 *   kb_emu_abi_version   const unsigned == KB_EMU_ABI_VERSION of the header it was built with;
 *                        the runtime refuses a module built against another version.
 *   kb_emu_bind(rt)      stores the runtime table; called once, right after dlopen.
 *   kb_emu_tls_slot()    the address of the module's thread-local "current thread" pointer
 *                        for the calling OS thread. The runtime writes it before it runs or
 *                        resumes an emulated thread; threadIdx, blockIdx, ... read through it.
 *   <kernel entries>     extern "C" functions, called once per emulated thread.
 */
#ifndef KB_EMU_ABI_H
#define KB_EMU_ABI_H

#include <stddef.h>

#define KB_EMU_ABI_VERSION 4u
#define KB_EMU_WARP_SIZE 32
/* kb_emu_rt.access kinds: an atomic writes (the bytes are initialised) but synchronises,
 * so it is never half of a race */
#define KB_EMU_ACCESS_READ 0
#define KB_EMU_ACCESS_WRITE 1
#define KB_EMU_ACCESS_ATOMIC 2
/* Largest per-lane payload of one warp exchange [bytes]: room for WMMA / mma.sync
 * fragments (an fp32 16x16 accumulator is 8 floats per lane). */
#define KB_EMU_XCHG_MAX_BYTES 256

typedef struct { unsigned x, y, z; } kb_emu_dim3;

/* What every thread of one block shares. Owned by the runtime, read-only to modules. */
typedef struct kb_emu_block {
    kb_emu_dim3 block_idx;
    kb_emu_dim3 block_dim;
    kb_emu_dim3 grid_dim;
    unsigned char *dyn_shared;   /* the launch's dynamic shared memory, 16-byte aligned */
    size_t dyn_shared_bytes;     /* [bytes] */
} kb_emu_block;

/* One emulated thread, as a module sees it. The runtime embeds it at the start of
 * its own per-thread record, so the pointer a module passes back identifies the thread. */
typedef struct kb_emu_thread {
    kb_emu_dim3 thread_idx;
    unsigned linear;             /* x + y*bx + z*bx*by: the order warps are cut in */
    unsigned lane;               /* linear % 32 */
    const kb_emu_block *block;
} kb_emu_thread;

/* Kinds of error a module reports through fault(). */
enum {
    KB_EMU_FAULT_MEMORY = 1,     /* a GPU would fault: misaligned vector access, ... -> KB_ERR_FAULT */
    KB_EMU_FAULT_LAUNCH = 2      /* the launch is invalid: shared memory over the limit -> KB_ERR_LAUNCH */
};

/* mbarrier waits (kb_emu_rt.mbar_wait) */
#define KB_EMU_MBAR_TEST 0       /* mbarrier.test_wait: never blocks */
#define KB_EMU_MBAR_TRY 1        /* mbarrier.try_wait: may block until the phase completes */
#define KB_EMU_MBAR_PARITY 2     /* or-ed in: arg is a phase parity, not a state token */

/* wgmma operand types and accumulator types (kb_emu_wgmma_op) */
enum { KB_EMU_WG_F16 = 1, KB_EMU_WG_BF16, KB_EMU_WG_TF32, KB_EMU_WG_E4M3, KB_EMU_WG_E5M2, KB_EMU_WG_S8 };
enum { KB_EMU_WG_ACC_F32 = 1, KB_EMU_WG_ACC_F16, KB_EMU_WG_ACC_S32 };

/* One thread's share of one wgmma.mma_async (PTX ISA 9.7.15.5.2): every thread of the
 * warpgroup passes the same shape, types, immediates and descriptors, its own registers. */
typedef struct {
    int type;                    /* KB_EMU_WG_*: A and B */
    int acc;                     /* KB_EMU_WG_ACC_* */
    int n;                       /* the N of m64nNkK */
    int neg_a, neg_b;            /* imm-scale-a/b = -1 */
    int trans_a, trans_b;        /* imm-trans-a/b = 1: the operand is MN-major (f16/bf16 only) */
    int scale_d;                 /* 0: D = A*B; else D = A*B + D */
    unsigned long long desc_a;   /* shared-memory descriptor of A (unused with a_regs) */
    unsigned long long desc_b;
    const unsigned *a_regs;      /* the register form: this thread's 4 A registers, else NULL */
    void *d;                     /* this thread's accumulator registers (N/2 or N/4 words) */
} kb_emu_wgmma_op;

typedef struct kb_emu_rt {
    unsigned abi_version;        /* KB_EMU_ABI_VERSION */

    /* Block barrier (__syncthreads). Returns once every thread of the block has
     * arrived; a barrier some threads never reach fails the launch (the caller never
     * returns then). */
    void (*syncthreads)(kb_emu_thread *t);

    /* Warp exchange, the one primitive every warp collective is built on: copy `bytes`
     * (<= KB_EMU_XCHG_MAX_BYTES) from src into this lane's slot, wait until every lane of
     * `mask` that exists in the block has done the same, and return the exchange area:
     * lane i's bytes start at area + i*bytes. *members receives the lanes that took part
     * (mask & lanes present). The area stays valid until this lane's next call. Every
     * participating lane must pass the same mask and size; a lane of the mask that exited
     * or waits elsewhere fails the launch. */
    const void *(*warp_exchange)(kb_emu_thread *t, unsigned mask, const void *src,
                                 unsigned bytes, unsigned *members);

    /* Static __shared__ storage of this block for the declaration identified by key
     * (the address of a static object unique to the declaration). The first thread of
     * the block to ask allocates it (poisoned with 0xFF); later callers get the same
     * address. Aligned to max(16, align). Over the arch's per-block limit: fails the
     * launch with KB_ERR_LAUNCH. */
    void *(*shared_static)(kb_emu_thread *t, const void *key, size_t bytes, size_t align);

    /* Fail the launch: kind is KB_EMU_FAULT_*, msg says what happened (the runtime
     * appends the block and thread). Never returns. */
    void (*fault)(kb_emu_thread *t, int kind, const char *msg);

    /* cp.async, modelled (harness/backend/emu/emu_async.h): issue a 16-byte copy of
     * src_bytes (0..16, the rest zero-filled) from global gmem to shared smem, pending
     * until this thread's cp_async_wait retires its group; commit closes the thread's
     * open group; wait(n) lets all but the n most recent committed groups land. The
     * destination holds poison while pending. smem outside shared memory fails the launch. */
    void (*cp_async)(kb_emu_thread *t, void *smem, const void *gmem, int src_bytes);
    void (*cp_async_commit)(kb_emu_thread *t);
    void (*cp_async_wait)(kb_emu_thread *t, int n);

    /* A read of [addr, addr + bytes) of shared memory the module performs through a
     * primitive (ldmatrix rows): fails the launch, naming the copy, when a pending cp.async
     * covers it - a wait count one too small. */
    void (*shared_read)(kb_emu_thread *t, const void *addr, unsigned bytes);

    /* Every load, store and atomic of a checked module's kernel code (kb_emu_check.h):
     * bytes at addr, kind KB_EMU_ACCESS_*, pc the code address that made it. The runtime
     * checks shared-memory races, reads of memory never written and reads of pending
     * cp.async destinations as asked (--emu-check), and fails the launch on a finding. */
    void (*access)(kb_emu_thread *t, const void *addr, unsigned bytes, int kind, const void *pc);

    /* ---- Hopper (sm_90) asynchronous machinery: kernels/kb_hopper.h ----
     * mbarrier (harness/backend/emu/emu_mbar.h): bar is 8-byte aligned shared memory.
     * arrive decrements the pending arrivals by count after adding tx_bytes to the
     * transaction count (arrive.expect_tx; 0 for a plain arrive) and returns the state
     * token of the phase it arrived on; tx adds (expect_tx, sign +1) or removes
     * (complete_tx, sign -1) transaction bytes; wait tests (KB_EMU_MBAR_TEST) or waits
     * (KB_EMU_MBAR_TRY) for the phase of a state token, or with KB_EMU_MBAR_PARITY of a
     * parity, and returns 1 when it completed. Rule breaks fail the launch. */
    void (*mbar_init)(kb_emu_thread *t, void *bar, unsigned count);
    void (*mbar_inval)(kb_emu_thread *t, void *bar);
    unsigned long long (*mbar_arrive)(kb_emu_thread *t, void *bar, unsigned count, unsigned tx_bytes);
    void (*mbar_tx)(kb_emu_thread *t, void *bar, int sign, unsigned bytes);
    int (*mbar_wait)(kb_emu_thread *t, void *bar, int how, unsigned long long arg);

    /* TMA (emu_tma.h): cp.async.bulk.tensor tile mode. tmap is the kernel's 128-byte tensor
     * map (kb_tmap), coords its rank's box origin (elements, innermost first). A load lands
     * in smem at a scheduling point of the runtime's choosing and then completes its bytes
     * on bar; a store reads smem and writes global memory by the thread's bulk wait. */
    void (*tma_load)(kb_emu_thread *t, void *smem, const void *tmap, const int *coords, void *bar);
    void (*tma_store)(kb_emu_thread *t, const void *tmap, const void *smem, const int *coords);
    void (*bulk_commit)(kb_emu_thread *t);
    void (*bulk_wait)(kb_emu_thread *t, int n, int read_only);

    /* fence.proxy.async.shared::cta: this thread's earlier generic writes of shared memory
     * become visible to the async proxy (TMA, wgmma) (emu_proxy.h). */
    void (*fence_proxy_async)(kb_emu_thread *t);
    /* bar.sync / bar.arrive id, n (emu_sync90.h); setmaxnreg.inc (inc = 1) / .dec. */
    void (*named_barrier)(kb_emu_thread *t, unsigned id, unsigned n, int arrive_only);
    void (*setmaxnreg)(kb_emu_thread *t, int inc, unsigned regs);

    /* wgmma (emu_wgmma.h): fence, one mma_async (a warpgroup rendezvous), commit_group,
     * wait_group n. */
    void (*wgmma_fence)(kb_emu_thread *t);
    void (*wgmma)(kb_emu_thread *t, const kb_emu_wgmma_op *op);
    void (*wgmma_commit)(kb_emu_thread *t);
    void (*wgmma_wait)(kb_emu_thread *t, int n);
} kb_emu_rt;

#endif /* KB_EMU_ABI_H */
