/* selftest_compare.h - the selftest's element-wise comparison of two sides' outputs. */
#ifndef KB_SELFTEST_COMPARE_H
#define KB_SELFTEST_COMPARE_H

#include "selftest/selftest_side.h"

/* Compare out.npy of every case both sides verified ok: element i passes when
 * |gpu - emu| <= 2 (atol + rtol |emu|), each side's own tolerance twice (both are within
 * it of the same reference). Returns 0 when all agree, 1 when a case differs (detail names
 * the first case and element), 2 when no case was ok on both; detail says so. */
int kb_st_compare_outputs(const kb_st_side *emu, const kb_st_side *gpu, char *detail, size_t n);

#endif /* KB_SELFTEST_COMPARE_H */
