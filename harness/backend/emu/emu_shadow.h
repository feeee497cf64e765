/* emu_shadow.h - the emulator's counterpart of compute-sanitizer's racecheck and
 * initcheck for shared memory, fed by checked modules (every load and store of kernel
 * code, kb_emu_check.h).
 *
 * Races: per byte of the block's shared memory (distinct bytes never race, even within
 * one word: a bf16 or int8 store of one warp beside another's is fine), the last write (thread, code
 * address, barrier epoch) and the warps that read it in the current epoch. Within one
 * epoch (between two __syncthreads of the block), an access that meets an access of a
 * thread of another warp is a hazard: read after write, write after read, write after
 * write. Threads of one warp are not compared (their warp collectives order them).
 * Atomics never reach here.
 * Initcheck: per byte, whether anything wrote it in this block; a read of a byte no
 * thread (and no landed cp.async) wrote is reported, whatever its type - integer kernels
 * show no NaN poison.
 * Epochs and blocks are sequence numbers: nothing is cleared between blocks.
 */
#ifndef KB_EMU_SHADOW_H
#define KB_EMU_SHADOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t w_seq;             /* epoch of the last write; 0: none in this block */
    uint64_t r_seq;             /* epoch of the reads in readers */
    uint32_t readers;           /* warps (bit per warp) that read the byte in r_seq */
    uint16_t writer, reader;    /* thread linear ids of the last write and one read */
    const void *w_pc, *r_pc;    /* code addresses of those accesses */
} kb_emu_cell;

typedef struct {
    kb_emu_cell *cells;         /* [bytes] */
    uint32_t *written;          /* [bytes] block generation of the last write */
    size_t bytes;
    uint32_t block;             /* generation of the current block (from 1) */
    uint64_t seq;               /* current epoch: block << 32 | barriers so far */
} kb_emu_shadow;

typedef enum { KB_HAZ_NONE = 0, KB_HAZ_RAW, KB_HAZ_WAR, KB_HAZ_WAW, KB_HAZ_UNINIT } kb_emu_hazard_kind;

typedef struct {
    kb_emu_hazard_kind kind;
    uint32_t off;               /* [bytes] where, in shared memory */
    unsigned other;             /* the other thread (races) */
    const void *other_pc;       /* and its code address */
} kb_emu_hazard;

/* What each kind is called in a report: "read after write", ... */
const char *kb_emu_hazard_name(kb_emu_hazard_kind k);

/* Shadow of an arena of bytes. 0, or -1 when out of memory. */
int kb_emu_shadow_init(kb_emu_shadow *s, size_t bytes);
void kb_emu_shadow_fini(kb_emu_shadow *s);
/* A new block: every byte unwritten, every byte's history forgotten. */
void kb_emu_shadow_block(kb_emu_shadow *s);
/* A __syncthreads released the block: a new epoch. */
void kb_emu_shadow_barrier(kb_emu_shadow *s);

/* Thread (linear id) accesses [off, off + bytes) at pc. races/init: which checks to
 * apply. Returns 1 with *h filled for the first hazard, else 0 (and records the access). */
int kb_emu_shadow_access(kb_emu_shadow *s, uint32_t off, unsigned bytes, int is_write, unsigned thread,
                         const void *pc, int races, int init, kb_emu_hazard *h);

/* The runtime wrote [off, off + bytes) on a thread's behalf (a cp.async landing): written,
 * and a write of that thread for the race check. */
void kb_emu_shadow_wrote(kb_emu_shadow *s, uint32_t off, unsigned bytes, unsigned thread, const void *pc);

#endif /* KB_EMU_SHADOW_H */
