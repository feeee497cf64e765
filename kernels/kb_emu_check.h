/* kb_emu_check.h - the hooks of a checked emulator module (--emu-check; built with
 * -fsanitize=thread -DKB_EMU_CHECKED, linked without the thread sanitizer's runtime).
 * The compiler calls __tsan_readN/__tsan_writeN around every load and store of the
 * module and __tsan_atomic* for every atomic: these definitions forward each access to
 * the emulator runtime (kb_emu_rt.access) with the code address that made it, and do the
 * atomics themselves. Included once, by kb_device_emu.h, only under KB_EMU_CHECKED. */
#ifndef KB_EMU_CHECK_H
#define KB_EMU_CHECK_H

#define KB_EMU_HOOK_ extern "C" __attribute__((visibility("default"), no_sanitize_thread, noinline))

/* One access by kernel code; outside an emulated thread (module set-up) there is nothing
 * to check. */
__attribute__((no_sanitize_thread)) inline void kb_emu_access_(const void *p, unsigned n, int w, const void *pc)
{
    if (kb_emu_self_ && kb_emu_rt_->access)
        kb_emu_rt_->access(kb_emu_self_, p, n, w, pc);
}

KB_EMU_HOOK_ void __tsan_init(void) {}
KB_EMU_HOOK_ void __tsan_func_entry(void *pc) { (void)pc; }
KB_EMU_HOOK_ void __tsan_func_exit(void) {}
KB_EMU_HOOK_ void __tsan_vptr_update(void **p, void *v) { (void)p; (void)v; }
KB_EMU_HOOK_ void __tsan_vptr_read(void **p) { (void)p; }
KB_EMU_HOOK_ void __tsan_read_range(void *p, unsigned long n) { kb_emu_access_(p, (unsigned)n, KB_EMU_ACCESS_READ, __builtin_return_address(0)); }
KB_EMU_HOOK_ void __tsan_write_range(void *p, unsigned long n) { kb_emu_access_(p, (unsigned)n, KB_EMU_ACCESS_WRITE, __builtin_return_address(0)); }

#define KB_EMU_RW_(n)                                                                                       \
    KB_EMU_HOOK_ void __tsan_read##n(void *p) { kb_emu_access_(p, n, KB_EMU_ACCESS_READ, __builtin_return_address(0)); }    \
    KB_EMU_HOOK_ void __tsan_write##n(void *p) { kb_emu_access_(p, n, KB_EMU_ACCESS_WRITE, __builtin_return_address(0)); }   \
    KB_EMU_HOOK_ void __tsan_unaligned_read##n(void *p) { kb_emu_access_(p, n, KB_EMU_ACCESS_READ, __builtin_return_address(0)); } \
    KB_EMU_HOOK_ void __tsan_unaligned_write##n(void *p) { kb_emu_access_(p, n, KB_EMU_ACCESS_WRITE, __builtin_return_address(0)); }
KB_EMU_RW_(1)
KB_EMU_RW_(2)
KB_EMU_RW_(4)
KB_EMU_RW_(8)
KB_EMU_RW_(16)
#undef KB_EMU_RW_

/* Atomics synchronise, so they are never half of a race; they do write (the bytes count
 * as initialised). Done here; the memory order argument is ignored (sequentially
 * consistent, which is at least what any order asks). */
#define KB_EMU_AT_(a) kb_emu_access_((const void *)(a), sizeof *(a), KB_EMU_ACCESS_ATOMIC, __builtin_return_address(0))
#define KB_EMU_ATOMICS_(bits, T)                                                                              \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_load(const volatile T *a, int mo) { KB_EMU_AT_(a); return __atomic_load_n(a, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ void __tsan_atomic##bits##_store(volatile T *a, T v, int mo) { KB_EMU_AT_(a); __atomic_store_n(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_exchange(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_add(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_sub(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_and(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_or(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_xor(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_fetch_nand(volatile T *a, T v, int mo) { KB_EMU_AT_(a); return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST); } \
    KB_EMU_HOOK_ int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)       \
    { KB_EMU_AT_(a); return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }         \
    KB_EMU_HOOK_ int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)         \
    { KB_EMU_AT_(a); return __atomic_compare_exchange_n(a, c, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }          \
    KB_EMU_HOOK_ T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)            \
    { KB_EMU_AT_(a); __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c; }
KB_EMU_ATOMICS_(8, char)
KB_EMU_ATOMICS_(16, short)
KB_EMU_ATOMICS_(32, int)
KB_EMU_ATOMICS_(64, long)
#undef KB_EMU_ATOMICS_
#undef KB_EMU_AT_
KB_EMU_HOOK_ void __tsan_atomic_thread_fence(int mo) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
KB_EMU_HOOK_ void __tsan_atomic_signal_fence(int mo) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

#undef KB_EMU_HOOK_
#endif /* KB_EMU_CHECK_H */
