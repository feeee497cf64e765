/* gemm_valid.h - legality of GEMM cases (gemm_valid.c). */
#ifndef KB_GEMM_VALID_H
#define KB_GEMM_VALID_H

#include "gemm_model.h"

/* The family's valid(): 1 when case c can run on target t, else 0 with the reason in
 * why[0..n) (which param, which limit, in words). */
int kb_gemm_valid(const kb_case *c, const kb_target *t, char *why, size_t n);

#endif
