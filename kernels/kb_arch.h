/* kb_arch.h - the one place kernels' feature macros are derived from the target arch.
 * Included first by kb_device.h; kernels test the KB_HAS_* macros, never an arch number.
 *
 * The harness passes -DKB_ARCH=<compute capability x 10> and -DKB_ARCH_SPECIFIC=0|1 (1 for
 * the arch-specific targets sm_90a, sm_100a, sm_120a: their CUBINs load on that exact
 * compute capability only) to every module on both backends, from the architecture table
 * (harness/core/arch.h, kb_arch_defines). This header is the one place KB_ARCH is defined
 * when they are absent (a test's own compile): KB_ARCH from __CUDA_ARCH__ (NVRTC) or
 * KB_EMU_ARCH (the emulator, 90 by default), KB_ARCH_SPECIFIC 0.
 *
 *   KB_HAS_TMA        cp.async.bulk(.tensor), mbarrier expect_tx/try_wait, fence.proxy.async,
 *                     elect.sync, bar.sync with a count    - sm_90 and later (PTX ISA 9.7.9.25,
 *                     9.7.13.15, 9.7.13.4, 9.7.13.1)
 *   KB_HAS_WGMMA      wgmma.mma_async and its fence/commit/wait - sm_90a only (PTX ISA 9.7.15:
 *                     "requires sm_90a"; sm_100a replaced it with tcgen05)
 *   KB_HAS_SETMAXNREG setmaxnreg.inc/dec                    - sm_90a (PTX ISA 9.7.19.5), and the
 *                     arch-specific sm_100a
 * A use outside its arch fails to compile with a static_assert that names the instruction,
 * the arch it needs and the macros that select it (kb_hopper.h).
 */
#ifndef KB_ARCH_H
#define KB_ARCH_H

#ifndef KB_ARCH
#if defined(__CUDA_ARCH__)
#define KB_ARCH (__CUDA_ARCH__ / 10)
#elif defined(KB_EMU_ARCH)
#define KB_ARCH KB_EMU_ARCH
#else
#define KB_ARCH 90
#endif
#endif

#ifndef KB_ARCH_SPECIFIC
#define KB_ARCH_SPECIFIC 0
#endif

/* The harness's -DKB_ARCH must name the architecture NVRTC compiles for (the build's
 * --gpu-architecture comes from the same row of harness/core/arch.h). */
#if defined(__CUDA_ARCH__) && KB_ARCH != __CUDA_ARCH__ / 10
#error "kb_arch.h: KB_ARCH disagrees with the --gpu-architecture NVRTC compiles for"
#endif

/* NVRTC says whether it compiles for the arch-specific target: a mismatch would otherwise
 * surface as a ptxas error far from its cause. */
#if defined(__CUDACC_RTC__) && KB_ARCH_SPECIFIC && KB_ARCH == 90 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "kb_arch.h: KB_ARCH_SPECIFIC=1 with KB_ARCH=90 needs --gpu-architecture=sm_90a (compute_90a)"
#endif

#define KB_HAS_TMA (KB_ARCH >= 90)
#define KB_HAS_WGMMA (KB_ARCH == 90 && KB_ARCH_SPECIFIC)
#define KB_HAS_SETMAXNREG (KB_ARCH_SPECIFIC && (KB_ARCH == 90 || KB_ARCH == 100))

#endif /* KB_ARCH_H */
