/* expr.c - compile and evaluate `where:` expressions (see expr.h).
 *
 * Recursive descent with C precedence, from loosest to tightest:
 *   ||   &&   == !=   < <= > >=   + -   * / %   unary ! -   primary
 * The result is a tree stored in one array (children by index), evaluated
 * recursively; names were resolved to integers at compile time.
 */
#include "suite/expr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OP_CONST, OP_SLOT, OP_NOT, OP_NEG, OP_OR, OP_AND,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD
};

typedef struct {
    int op;
    int a, b;        /* children (node indices), -1 when absent */
    int64_t v;       /* OP_CONST: the value; OP_SLOT: the slot index */
} node;

struct kb_expr {
    node *nodes;
    int n;
    int root;
};

enum {
    T_END, T_INT, T_IDENT, T_STR, T_LP, T_RP, T_OR, T_AND, T_NOT,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_ADD, T_SUB, T_MUL, T_DIV, T_MOD
};

/* What a sub-expression is while compiling: a number, a value of a named slot (the
 * slot tells which name table applies), or a word still waiting for the slot it is
 * compared with to give it a meaning. */
enum { K_INT, K_NAME, K_WORD };
typedef struct {
    int kind;
    int node;         /* K_INT, K_NAME: its node; K_WORD: -1 */
    int slot;         /* K_NAME: the slot whose names apply */
    int col;          /* 1-based column where it starts */
    size_t w_start, w_len; /* K_WORD: the word in the text (without quotes) */
    int quoted;
} val;

/* Bounds so hostile input cannot exhaust the stack: parentheses and unary operators
 * nest at most MAX_DEPTH deep, and a text of MAX_TEXT bytes makes a tree at most
 * about MAX_TEXT / 2 deep (a long chain like a+a+a+...), which recursion handles. */
#define MAX_DEPTH 64
#define MAX_TEXT 4096

typedef struct {
    const char *text;
    size_t pos;                     /* next unread byte */
    int tok; size_t t_start, t_len; /* current token */
    int64_t t_int;
    const kb_expr_slot *slots; int n_slots;
    node *nodes; int n, cap;
    kb_sb *err; int failed;
    int depth;
} parser;

static void fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *p, const char *fmt, ...)
{
    if (p->failed) return;  /* the first error is the one worth reading */
    p->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kb_sb_clear(p->err);
    kb_sb_printf(p->err, "%s", msg);
}

static int col_of(const parser *p, size_t pos) { return (int)pos + 1; }

static int is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_ident_char(int c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static void lex(parser *p)
{
    const char *s = p->text;
    while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')
        p->pos++;
    size_t st = p->pos;
    p->t_start = st;
    p->t_len = 1;
    int c = (unsigned char)s[st];
    if (c == 0) { p->tok = T_END; p->t_len = 0; return; }
    if (c >= '0' && c <= '9') {
        uint64_t v = 0;
        size_t i = st;
        while (s[i] >= '0' && s[i] <= '9') {
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > (uint64_t)INT64_MAX) {
                fail(p, "syntax error at column %d: integer too large", col_of(p, st));
                p->tok = T_END;
                return;
            }
            i++;
        }
        if (is_ident_start((unsigned char)s[i])) {
            fail(p, "syntax error at column %d: malformed number", col_of(p, st));
            p->tok = T_END;
            return;
        }
        p->tok = T_INT; p->t_int = (int64_t)v; p->t_len = i - st; p->pos = i;
        return;
    }
    if (is_ident_start(c)) {
        size_t i = st;
        while (is_ident_char((unsigned char)s[i])) i++;
        p->tok = T_IDENT; p->t_len = i - st; p->pos = i;
        return;
    }
    if (c == '"' || c == '\'') {
        size_t i = st + 1;
        while (s[i] && s[i] != c) i++;
        if (!s[i]) {
            fail(p, "syntax error at column %d: unterminated string", col_of(p, st));
            p->tok = T_END;
            return;
        }
        p->tok = T_STR; p->t_start = st + 1; p->t_len = i - st - 1; p->pos = i + 1;
        return;
    }
    int c2 = (unsigned char)s[st + 1];
    static const struct { char a, b; int tok; } ops[] = {
        { '|', '|', T_OR }, { '&', '&', T_AND }, { '=', '=', T_EQ }, { '!', '=', T_NE },
        { '<', '=', T_LE }, { '>', '=', T_GE }, { '<', 0, T_LT }, { '>', 0, T_GT },
        { '!', 0, T_NOT }, { '+', 0, T_ADD }, { '-', 0, T_SUB }, { '*', 0, T_MUL },
        { '/', 0, T_DIV }, { '%', 0, T_MOD }, { '(', 0, T_LP }, { ')', 0, T_RP },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (ops[i].a != c) continue;
        if (ops[i].b && ops[i].b != c2) continue;
        p->tok = ops[i].tok;
        p->t_len = ops[i].b ? 2 : 1;
        p->pos = st + p->t_len;
        return;
    }
    if (c == '=' || c == '&' || c == '|')
        fail(p, "syntax error at column %d: unexpected '%c' (did you mean '%c%c'?)",
             col_of(p, st), c, c, c);
    else
        fail(p, "syntax error at column %d: unexpected character '%c'", col_of(p, st), c);
    p->tok = T_END;
}

static int add_node(parser *p, int op, int a, int b, int64_t v)
{
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        node *nn = realloc(p->nodes, (size_t)cap * sizeof *nn);
        if (!nn) kb_out_of_memory("an expression", (size_t)cap * sizeof *nn);
        p->nodes = nn;
        p->cap = cap;
    }
    p->nodes[p->n] = (node){ op, a, b, v };
    return p->n++;
}

static val mk_int(int nodeix, int col) { val v = { K_INT, nodeix, -1, col, 0, 0, 0 }; return v; }

/* Report a word that could not be given a meaning. */
static void fail_word(parser *p, const val *w)
{
    if (w->quoted)
        fail(p, "string '%.*s' (column %d) can only be compared with == or != to a named axis",
             (int)w->w_len, p->text + w->w_start, w->col);
    else
        fail(p, "unknown name '%.*s' (column %d)", (int)w->w_len, p->text + w->w_start, w->col);
}

/* Operands of arithmetic, ordering and logic must be numbers. */
static int need_int(parser *p, const val *v)
{
    if (v->kind == K_INT) return 1;
    if (v->kind == K_WORD) fail_word(p, v);
    else fail(p, "'%s' (column %d) holds names; compare it with == or !=",
              p->slots[v->slot].name, v->col);
    return 0;
}

/* Give word w the index of its name in slot's value table. */
static int resolve_word(parser *p, const val *w, int slot, val *out)
{
    const kb_expr_slot *s = &p->slots[slot];
    for (int i = 0; i < s->n_values; i++) {
        if (strlen(s->values[i]) == w->w_len && memcmp(s->values[i], p->text + w->w_start, w->w_len) == 0) {
            *out = (val){ K_NAME, add_node(p, OP_CONST, -1, -1, i), slot, w->col, 0, 0, 0 };
            return 1;
        }
    }
    kb_sb msg;
    kb_sb_init(&msg);
    for (int i = 0; i < s->n_values; i++)
        kb_sb_printf(&msg, "%s%s", i ? ", " : "", s->values[i]);
    fail(p, "unknown value '%.*s' (column %d) for '%s' (expected one of: %s)",
         (int)w->w_len, p->text + w->w_start, w->col, s->name, msg.s);
    kb_sb_free(&msg);
    return 0;
}

static int same_names(const parser *p, int s1, int s2)
{
    return p->slots[s1].values == p->slots[s2].values && p->slots[s1].n_values == p->slots[s2].n_values;
}

/* == and != : numbers with numbers, names with names of the same table. */
static val equality(parser *p, int op, val l, val r, int col)
{
    val bad = mk_int(-1, col);
    if (l.kind == K_WORD && r.kind == K_NAME && !resolve_word(p, &l, r.slot, &l)) return bad;
    if (r.kind == K_WORD && l.kind == K_NAME && !resolve_word(p, &r, l.slot, &r)) return bad;
    if (l.kind == K_WORD) { fail_word(p, &l); return bad; }
    if (r.kind == K_WORD) { fail_word(p, &r); return bad; }
    if (l.kind != r.kind || (l.kind == K_NAME && !same_names(p, l.slot, r.slot))) {
        const val *nm = l.kind == K_NAME ? &l : &r;
        const val *other = l.kind == K_NAME ? &r : &l;
        if (other->kind == K_INT)
            fail(p, "'%s' (column %d) holds names; compare it with one of its names, not a number",
                 p->slots[nm->slot].name, nm->col);
        else
            fail(p, "cannot compare '%s' with '%s' (column %d)", p->slots[l.slot].name,
                 p->slots[r.slot].name, col);
        return bad;
    }
    return mk_int(add_node(p, op, l.node, r.node, 0), l.col);
}

static val parse_or(parser *p);

static val parse_primary(parser *p)
{
    int col = col_of(p, p->t_start);
    val bad = mk_int(-1, col);
    if (p->failed) return bad;
    switch (p->tok) {
    case T_INT: {
        val v = mk_int(add_node(p, OP_CONST, -1, -1, p->t_int), col);
        lex(p);
        return v;
    }
    case T_IDENT: case T_STR: {
        if (p->tok == T_STR) col--;  /* point at the opening quote */
        val v = { K_WORD, -1, -1, col, p->t_start, p->t_len, p->tok == T_STR };
        if (p->tok == T_IDENT) {
            for (int i = 0; i < p->n_slots; i++) {
                const char *nm = p->slots[i].name;
                if (nm && strlen(nm) == p->t_len && memcmp(nm, p->text + p->t_start, p->t_len) == 0) {
                    v = (val){ p->slots[i].values ? K_NAME : K_INT,
                               add_node(p, OP_SLOT, -1, -1, i), i, col, 0, 0, 0 };
                    break;
                }
            }
        }
        lex(p);
        return v;
    }
    case T_LP: {
        if (++p->depth > MAX_DEPTH) {
            fail(p, "expression nested too deeply at column %d", col);
            return bad;
        }
        lex(p);
        val v = parse_or(p);
        if (p->failed) return bad;
        if (p->tok != T_RP) {
            fail(p, "syntax error at column %d: expected ')'", col_of(p, p->t_start));
            return bad;
        }
        p->depth--;
        lex(p);
        return v;
    }
    case T_END:
        fail(p, "syntax error at column %d: expected a value", col);
        return bad;
    default:
        fail(p, "syntax error at column %d: unexpected '%.*s'", col, (int)p->t_len, p->text + p->t_start);
        return bad;
    }
}

static val parse_unary(parser *p)
{
    if (p->tok == T_NOT || p->tok == T_SUB) {
        int op = p->tok == T_NOT ? OP_NOT : OP_NEG, col = col_of(p, p->t_start);
        if (++p->depth > MAX_DEPTH) {
            fail(p, "expression nested too deeply at column %d", col);
            return mk_int(-1, col);
        }
        lex(p);
        val v = parse_unary(p);
        p->depth--;
        if (p->failed || !need_int(p, &v)) return mk_int(-1, col);
        return mk_int(add_node(p, op, v.node, -1, 0), col);
    }
    return parse_primary(p);
}

/* One left-associative binary level: ops[] maps its tokens to node ops. */
typedef val (*level_fn)(parser *p);
static val binary_level(parser *p, level_fn next, const int *toks, const int *ops, int nops, int is_eq)
{
    val l = next(p);
    for (;;) {
        if (p->failed) return l;
        int k = -1;
        for (int i = 0; i < nops; i++)
            if (p->tok == toks[i]) k = i;
        if (k < 0) return l;
        int col = col_of(p, p->t_start);
        lex(p);
        val r = next(p);
        if (p->failed) return l;
        if (is_eq) {
            l = equality(p, ops[k], l, r, col);
        } else {
            if (!need_int(p, &l) || !need_int(p, &r)) return l;
            l = mk_int(add_node(p, ops[k], l.node, r.node, 0), l.col);
        }
    }
}

static val parse_mul(parser *p)
{
    static const int t[] = { T_MUL, T_DIV, T_MOD }, o[] = { OP_MUL, OP_DIV, OP_MOD };
    return binary_level(p, parse_unary, t, o, 3, 0);
}
static val parse_add(parser *p)
{
    static const int t[] = { T_ADD, T_SUB }, o[] = { OP_ADD, OP_SUB };
    return binary_level(p, parse_mul, t, o, 2, 0);
}
static val parse_rel(parser *p)
{
    static const int t[] = { T_LT, T_LE, T_GT, T_GE }, o[] = { OP_LT, OP_LE, OP_GT, OP_GE };
    return binary_level(p, parse_add, t, o, 4, 0);
}
static val parse_eq(parser *p)
{
    static const int t[] = { T_EQ, T_NE }, o[] = { OP_EQ, OP_NE };
    return binary_level(p, parse_rel, t, o, 2, 1);
}
static val parse_and(parser *p)
{
    static const int t[] = { T_AND }, o[] = { OP_AND };
    return binary_level(p, parse_eq, t, o, 1, 0);
}
static val parse_or(parser *p)
{
    static const int t[] = { T_OR }, o[] = { OP_OR };
    return binary_level(p, parse_and, t, o, 1, 0);
}

kb_status kb_expr_compile(const char *text, const kb_expr_slot *slots, int n_slots,
                          kb_expr **out, kb_sb *err)
{
    parser p = { 0 };
    kb_expr *e = NULL;
    p.text = text;
    p.slots = slots;
    p.n_slots = n_slots;
    p.err = err;
    *out = NULL;
    if (strlen(text) > MAX_TEXT) {
        fail(&p, "expression longer than %d characters", MAX_TEXT);
        goto fail;
    }
    lex(&p);
    val v = parse_or(&p);
    if (!p.failed && p.tok != T_END)
        fail(&p, "syntax error at column %d: unexpected '%.*s'", col_of(&p, p.t_start),
             (int)p.t_len, p.text + p.t_start);
    if (!p.failed)
        need_int(&p, &v);
    if (p.failed)
        goto fail;
    e = malloc(sizeof *e);
    if (!e) kb_out_of_memory("an expression", sizeof *e);
    e->nodes = p.nodes;
    e->n = p.n;
    e->root = v.node;
    *out = e;
    return KB_OK;
fail:
    free(p.nodes);
    return KB_ERR_INPUT;
}

/* Returns 0, or -1 on division by zero or overflow (the whole clause is then false). */
static int eval_node(const node *ns, int i, const int64_t *vals, int64_t *r)
{
    const node *n = &ns[i];
    int64_t a, b;
    switch (n->op) {
    case OP_CONST: *r = n->v; return 0;
    case OP_SLOT: *r = vals[n->v]; return 0;
    case OP_NOT:
        if (eval_node(ns, n->a, vals, &a)) return -1;
        *r = !a;
        return 0;
    case OP_NEG:
        if (eval_node(ns, n->a, vals, &a) || a == INT64_MIN) return -1;
        *r = -a;
        return 0;
    case OP_OR: case OP_AND:
        if (eval_node(ns, n->a, vals, &a)) return -1;
        if (n->op == OP_OR ? a != 0 : a == 0) { *r = n->op == OP_OR; return 0; }
        if (eval_node(ns, n->b, vals, &b)) return -1;
        *r = b != 0;
        return 0;
    default:
        break;
    }
    if (eval_node(ns, n->a, vals, &a) || eval_node(ns, n->b, vals, &b)) return -1;
    switch (n->op) {
    case OP_EQ: *r = a == b; return 0;
    case OP_NE: *r = a != b; return 0;
    case OP_LT: *r = a < b; return 0;
    case OP_LE: *r = a <= b; return 0;
    case OP_GT: *r = a > b; return 0;
    case OP_GE: *r = a >= b; return 0;
    case OP_ADD: return __builtin_add_overflow(a, b, r) ? -1 : 0;
    case OP_SUB: return __builtin_sub_overflow(a, b, r) ? -1 : 0;
    case OP_MUL: return __builtin_mul_overflow(a, b, r) ? -1 : 0;
    case OP_DIV: case OP_MOD:
        if (b == 0 || (a == INT64_MIN && b == -1)) return -1;
        *r = n->op == OP_DIV ? a / b : a % b;
        return 0;
    }
    return -1;
}

int kb_expr_eval(const kb_expr *e, const int64_t *vals, int64_t *value)
{
    *value = 0;
    return eval_node(e->nodes, e->root, vals, value);
}

void kb_expr_free(kb_expr *e)
{
    if (!e) return;
    free(e->nodes);
    free(e);
}
