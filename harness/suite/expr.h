/* expr.h - the `where:` expression language of suites.
 *
 * A small C-like language over 64-bit integers:
 *   integers, identifiers (slots: axis and dim names), bare words and quoted strings
 *   (names of values: dtypes, variants, choices, launch modes, shape presets),
 *   operators  || && ! == != < <= > >= + - * / %  and parentheses, with C precedence.
 *
 * An expression is compiled once against a table of slots; identifiers are resolved
 * to slot indices and every name (bare word or string) to the index of a value of the
 * slot it is compared with, so evaluating it per case is integer work only.
 *
 * Typing keeps names honest: a slot with a value-name table (dtype, variant, ...) can
 * only be compared with == / != against one of its names or a slot sharing the same
 * table; `dtype == 0` or `dtype < fp16` is a compile error, not a silent surprise.
 */
#ifndef KB_EXPR_H
#define KB_EXPR_H

#include "core/kb.h"

typedef struct kb_expr kb_expr;

/* One variable an expression may read. */
typedef struct {
    const char *name;                 /* identifier as written; NULL = unused slot */
    const char *const *values;        /* names of the values: value i is called values[i]; NULL for an integer slot */
    int n_values;
} kb_expr_slot;

/* Compile text against slots[0..n_slots). On success *out owns a compiled expression
 * (free with kb_expr_free). On failure returns KB_ERR_INPUT, *out is NULL and err
 * holds one message (without a location prefix), e.g.
 * "syntax error at column 9: expected ')'" or "unknown name 'VECX' (column 1)". */
kb_status kb_expr_compile(const char *text, const kb_expr_slot *slots, int n_slots,
                          kb_expr **out, kb_sb *err);

/* Evaluate with slot values vals[] (same indexing as the compile-time slots; a named
 * slot holds the index of its value, any other number, e.g. -1, matches no name).
 * Returns 0 and the value in *value, or -1 when the evaluation divided by zero or
 * overflowed (the clause then counts as false). Logical and comparison operators
 * give 0 or 1; && and || short-circuit. No allocation, no string work. */
int kb_expr_eval(const kb_expr *e, const int64_t *vals, int64_t *value);

/* 1 when the expression holds for vals (non-zero and evaluated without error). */
static inline int kb_expr_holds(const kb_expr *e, const int64_t *vals)
{ int64_t v; return kb_expr_eval(e, vals, &v) == 0 && v != 0; }

void kb_expr_free(kb_expr *e); /* NULL is fine */

#endif /* KB_EXPR_H */
