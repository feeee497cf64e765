/* gemm_wgmma.h - host side of gemm/wgmma (gemm_wgmma.c): its TMA tensor maps and its
 * persistent grid. The kernel: gemm_wgmma.cuh. */
#ifndef KB_GEMM_WGMMA_H
#define KB_GEMM_WGMMA_H

#include "engine/exec.h"
#include "gemm_model.h"

/* The four tensor-map arguments of the kernel (A, B, C, D, in its argument order) for case
 * r->c with operands at a, b, c (== d when beta is 0) and d: A and B as K-major boxes of
 * min(128, BK * esz) bytes of K by BM / BN rows, swizzled by that span; C and D as one
 * unswizzled BN x BM box. KB_OK, or the backend's status with the message in the case
 * (a backend without tensor maps: KB_ERR_INPUT). */
kb_status kb_gemm_wgmma_maps(kb_run *r, const kb_gemm_geo *g, kb_dptr a, kb_dptr b, kb_dptr c, kb_dptr d,
                             kb_arg out[4]);

/* The persistent grid of case r->c: min(output tiles, the device's SMs) blocks in x, in whole
 * clusters (cluster 2x1 / 1x2: a multiple of 2, tiles counted per cluster unit, at least one
 * cluster); the rest of the launch (the cluster shape) from kb_gemm_geom. */
kb_geom kb_gemm_wgmma_geom(kb_run *r);

#endif
