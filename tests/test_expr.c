/* test_expr.c - the where-expression language: precedence, names, errors, safety. */
#include <string.h>

#include "check.h"
#include "suite/expr.h"

static const char *const dtype_names[] = { "fp32", "tf32", "fp16", "bf16" };
static const char *const form_names[] = { "erf", "tanh" };
static const char *const variant_names[] = { "naive", "vec" };

/* Slots: 0 dtype (names), 1 VEC, 2 n, 3 form (names), 4 variant (names), 5 unused, 6 form2 (same names as form). */
static const kb_expr_slot slots[] = {
    { "dtype", dtype_names, 4 },
    { "VEC", NULL, 0 },
    { "n", NULL, 0 },
    { "form", form_names, 2 },
    { "variant", variant_names, 2 },
    { NULL, NULL, 0 },
    { "form2", form_names, 2 },
};
#define N_SLOTS ((int)(sizeof slots / sizeof slots[0]))

/* Compile text, evaluate with vals; returns the value, or -999 on compile error and
 * -777 when evaluation fails (division by zero, overflow). */
static int64_t ev(const char *text, const int64_t *vals)
{
    kb_expr *e = NULL;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_expr_compile(text, slots, N_SLOTS, &e, &err);
    if (st) {
        fprintf(stderr, "  (compile of \"%s\": %s)\n", text, err.s);
        kb_sb_free(&err);
        return -999;
    }
    int64_t v;
    int rc = kb_expr_eval(e, vals, &v);
    kb_expr_free(e);
    kb_sb_free(&err);
    return rc ? -777 : v;
}

/* Compile text expecting an error; returns 1 if the message contains want. */
static int compile_error_contains(const char *text, const char *want)
{
    kb_expr *e = (kb_expr *)1;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_expr_compile(text, slots, N_SLOTS, &e, &err);
    int ok = st == KB_ERR_INPUT && e == NULL && strstr(err.s, want) != NULL;
    if (!ok) fprintf(stderr, "  \"%s\" -> status %d, message \"%s\" (wanted \"%s\")\n", text, st, err.s, want);
    kb_sb_free(&err);
    return ok;
}

static void test_arithmetic_and_precedence(void)
{
    int64_t vals[7] = { 0, 4, 1000, 0, 0, 0, 0 };
    CHECK(ev("1 + 2 * 3", vals) == 7);
    CHECK(ev("(1 + 2) * 3", vals) == 9);
    CHECK(ev("10 - 3 - 2", vals) == 5);          /* left associative */
    CHECK(ev("100 / 10 / 5", vals) == 2);
    CHECK(ev("17 % 5", vals) == 2);
    CHECK(ev("-3 + 5", vals) == 2);
    CHECK(ev("- -3", vals) == 3);
    CHECK(ev("VEC * 2 + n", vals) == 1008);
    CHECK(ev("n % VEC == 0", vals) == 1);
    CHECK(ev("1 + 2 == 3", vals) == 1);           /* arithmetic binds tighter than == */
    CHECK(ev("1 < 2 == 1", vals) == 1);           /* relational tighter than equality */
    CHECK(ev("VEC <= 4 && n > 999", vals) == 1);
    CHECK(ev("VEC > 4 || n == 1000", vals) == 1);
    CHECK(ev("0 || 0 && 1", vals) == 0);
    CHECK(ev("1 || 0 && 0", vals) == 1);          /* && binds tighter than || */
    CHECK(ev("!0", vals) == 1);
    CHECK(ev("!VEC", vals) == 0);
    CHECK(ev("!(VEC == 4)", vals) == 0);
    CHECK(ev("3 != 4", vals) == 1);
    CHECK(ev("5 >= 5 && 5 <= 5 && !(5 < 5) && !(5 > 5)", vals) == 1);
    CHECK(ev("  n\t>\n1 ", vals) == 1);
    CHECK(ev("9223372036854775807", vals) == INT64_MAX);
}

static void test_names_compare_by_name(void)
{
    int64_t vals[7] = { 2 /* fp16 */, 8, 64, 1 /* tanh */, 0 /* naive */, 0, 1 /* tanh */ };
    CHECK(ev("dtype == fp16", vals) == 1);
    CHECK(ev("dtype == fp32", vals) == 0);
    CHECK(ev("fp16 == dtype", vals) == 1);        /* either side */
    CHECK(ev("dtype != bf16", vals) == 1);
    CHECK(ev("dtype == 'fp16'", vals) == 1);      /* quoted strings too */
    CHECK(ev("dtype == \"fp16\"", vals) == 1);
    CHECK(ev("form == tanh && variant == naive", vals) == 1);
    CHECK(ev("form == form2", vals) == 1);        /* slots sharing a name table */
    CHECK(ev("VEC <= 4 || dtype == fp16", vals) == 1);
    vals[0] = 0;
    CHECK(ev("VEC <= 4 || dtype == fp16", vals) == 0);
    /* A named slot holding an index with no name (an inline shape: -1) matches nothing. */
    vals[4] = -1;
    CHECK(ev("variant == naive || variant == vec", vals) == 0);
    CHECK(ev("variant != naive", vals) == 1);
}

static void test_division_by_zero_is_false(void)
{
    int64_t vals[7] = { 0, 0, 10, 0, 0, 0, 0 };
    CHECK(ev("n / VEC > 1", vals) == -777);
    CHECK(ev("n % VEC == 0", vals) == -777);
    kb_expr *e;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_expr_compile("n / VEC > 1 || 1", slots, N_SLOTS, &e, &err) == KB_OK);
    CHECK(!kb_expr_holds(e, vals));               /* the whole clause, not just the term */
    vals[1] = 2;
    CHECK(kb_expr_holds(e, vals));
    kb_expr_free(e);
    /* Short-circuit: the guard keeps the division from running. */
    CHECK(kb_expr_compile("VEC != 0 && n / VEC > 1", slots, N_SLOTS, &e, &err) == KB_OK);
    vals[1] = 0;
    int64_t v = 5;
    CHECK(kb_expr_eval(e, vals, &v) == 0 && v == 0);
    kb_expr_free(e);
    CHECK(kb_expr_compile("VEC == 0 || n / VEC > 1", slots, N_SLOTS, &e, &err) == KB_OK);
    CHECK(kb_expr_holds(e, vals));
    kb_expr_free(e);
    kb_sb_free(&err);
    /* Overflow is treated like division by zero rather than wrapping. */
    CHECK(ev("9223372036854775807 + 1 > 0", vals) == -777);
    CHECK(ev("9223372036854775807 * 2 > 0", vals) == -777);
    CHECK(ev("-9223372036854775807 - 1 - 1 < 0", vals) == -777);
}

static void test_compile_errors(void)
{
    CHECK(compile_error_contains("(VEC <= 4", "syntax error at column 10: expected ')'"));
    CHECK(compile_error_contains("VEC <= 4)", "syntax error at column 9: unexpected ')'"));
    CHECK(compile_error_contains("VECX <= 4", "unknown name 'VECX' (column 1)"));
    CHECK(compile_error_contains("VEC <= 4 && fp32", "unknown name 'fp32' (column 13)"));
    CHECK(compile_error_contains("dtype == fp33", "unknown value 'fp33' (column 10) for 'dtype' (expected one of: fp32, tf32, fp16, bf16)"));
    CHECK(compile_error_contains("form == fp32", "unknown value 'fp32'"));
    CHECK(compile_error_contains("dtype == 0", "'dtype' (column 1) holds names"));
    CHECK(compile_error_contains("dtype < fp16", "'dtype' (column 1) holds names"));
    CHECK(compile_error_contains("dtype + 1 == 2", "holds names"));
    CHECK(compile_error_contains("dtype", "holds names"));        /* a bare name is not a condition */
    CHECK(compile_error_contains("dtype == form", "cannot compare 'dtype' with 'form'"));
    CHECK(compile_error_contains("VEC == 'x'", "string 'x' (column 8)"));
    CHECK(compile_error_contains("VEC = 4", "syntax error at column 5: unexpected '=' (did you mean '=='?)"));
    CHECK(compile_error_contains("VEC & 4", "did you mean '&&'"));
    CHECK(compile_error_contains("VEC <= 4 $", "unexpected character '$'"));
    CHECK(compile_error_contains("VEC <=", "syntax error at column 7: expected a value"));
    CHECK(compile_error_contains("", "syntax error at column 1: expected a value"));
    CHECK(compile_error_contains("dtype == 'fp16", "unterminated string"));
    CHECK(compile_error_contains("99999999999999999999 > 1", "integer too large"));
    CHECK(compile_error_contains("4VEC > 1", "malformed number"));
    CHECK(compile_error_contains("VEC 4", "unexpected '4'"));
}

static void test_resource_bounds(void)
{
    /* Deep nesting is refused, not recursed into. */
    char deep[400];
    int n = 0;
    for (int i = 0; i < 150; i++) deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 150; i++) deep[n++] = ')';
    deep[n] = 0;
    CHECK(compile_error_contains(deep, "nested too deeply"));
    char bangs[200];
    memset(bangs, '!', 150);
    strcpy(bangs + 150, "1");
    CHECK(compile_error_contains(bangs, "nested too deeply"));
    /* A long flat chain within the length limit compiles and evaluates. */
    static char chain[4097];
    n = 0;
    chain[n++] = '1';
    while (n + 2 <= 4095) { chain[n++] = '+'; chain[n++] = '1'; }
    chain[n] = 0;
    int64_t vals[7] = { 0 };
    CHECK(ev(chain, vals) == (n + 1) / 2);
    static char too_long[5000];
    memset(too_long, ' ', sizeof too_long - 2);
    too_long[sizeof too_long - 2] = '1';
    CHECK(compile_error_contains(too_long, "longer than"));
}

int main(void)
{
    RUN(test_arithmetic_and_precedence);
    RUN(test_names_compare_by_name);
    RUN(test_division_by_zero_is_false);
    RUN(test_compile_errors);
    RUN(test_resource_bounds);
    TEST_MAIN_END();
}
