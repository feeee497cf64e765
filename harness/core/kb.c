/* kb.c - implementations of the small shared pieces declared in kb.h:
 * status and dtype names, the string buffer, the PRNG and the hash. */
#include "core/kb.h"

#include "core/report.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    "ok", "input", "setup", "compile_error", "launch_error", "oom",
    "fault", "timeout", "io", "internal", "interrupted",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == KB_STATUS_COUNT,
               "status_names out of sync with kb_status");

static volatile sig_atomic_t interrupt_sig;

void kb_interrupt_set(int sig) { interrupt_sig = sig; }
int kb_interrupted(void) { return interrupt_sig; }

static void on_interrupt(int sig)
{
    interrupt_sig = sig;
    signal(sig, SIG_DFL);   /* a second Ctrl-C ends the process at once */
}

void kb_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

const char *kb_status_name(kb_status s)
{
    if ((unsigned)s >= KB_STATUS_COUNT)
        return "unknown";
    return status_names[s];
}

static const struct { const char *name, *ctype; size_t size; int bits; } dtypes[] = {
    [KB_DT_FP32] = { "fp32", "float", 4, 32 },
    [KB_DT_TF32] = { "tf32", "float", 4, 32 },
    [KB_DT_FP16] = { "fp16", "kb_half", 2, 16 },
    [KB_DT_BF16] = { "bf16", "kb_bf16", 2, 16 },
    [KB_DT_INT8] = { "int8", "int8_t", 1, 8 },
    [KB_DT_FP8E4M3] = { "fp8e4m3", "kb_fp8e4m3", 1, 8 },
    [KB_DT_FP8E5M2] = { "fp8e5m2", "kb_fp8e5m2", 1, 8 },
    /* raw codes: kernels decode them (kb_mma.h), there is no arithmetic type */
    [KB_DT_FP6E2M3] = { "fp6e2m3", "uint8_t", 1, 6 },
    [KB_DT_FP6E3M2] = { "fp6e3m2", "uint8_t", 1, 6 },
    [KB_DT_FP4E2M1] = { "fp4e2m1", "uint8_t", 1, 4 },
};
_Static_assert(sizeof dtypes / sizeof dtypes[0] == KB_DT_COUNT, "dtypes out of sync with kb_dtype");

const char *kb_dtype_name(kb_dtype d) { return (unsigned)d < KB_DT_COUNT ? dtypes[d].name : "?"; }
const char *kb_dtype_ctype(kb_dtype d) { return (unsigned)d < KB_DT_COUNT ? dtypes[d].ctype : "?"; }
size_t kb_dtype_size(kb_dtype d) { return (unsigned)d < KB_DT_COUNT ? dtypes[d].size : 0; }
int kb_dtype_bits(kb_dtype d) { return (unsigned)d < KB_DT_COUNT ? dtypes[d].bits : 0; }

int kb_dtype_parse(const char *s, kb_dtype *out)
{
    for (int i = 0; i < KB_DT_COUNT; i++)
        if (strcmp(s, dtypes[i].name) == 0) { *out = (kb_dtype)i; return 0; }
    if (strcmp(s, "fp8") == 0) { *out = KB_DT_FP8E4M3; return 0; }
    if (strcmp(s, "fp4") == 0) { *out = KB_DT_FP4E2M1; return 0; }
    return -1;
}

const char *kb_launch_name(kb_launch_mode m)
{
    return m == KB_LAUNCH_GRAPH ? "graph" : m == KB_LAUNCH_EAGER ? "eager" : "?";
}

void kb_out_of_memory(const char *what, size_t bytes)
{
    kb_report(KB_REPORT_ERROR, "out of memory (%s, %zu bytes)", what, bytes);
    exit(KB_EXIT_SETUP);
}

/* ---- string buffer ---- */
void kb_sb_init(kb_sb *b)
{
    b->cap = 64;
    b->len = 0;
    b->s = malloc(b->cap);
    if (!b->s) kb_out_of_memory("a string", b->cap);
    b->s[0] = 0;
}

void kb_sb_free(kb_sb *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

static void sb_reserve(kb_sb *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    while (b->len + extra + 1 > b->cap)
        b->cap *= 2;
    char *grown = realloc(b->s, b->cap);
    if (!grown) kb_out_of_memory("a string", b->cap);
    b->s = grown;
}

void kb_sb_append(kb_sb *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void kb_sb_printf(kb_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= b->cap - b->len) {
        sb_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void kb_sb_clear(kb_sb *b)
{
    b->len = 0;
    b->s[0] = 0;
}

/* ---- PRNG: splitmix64 expands the seed, xoshiro128** generates ---- */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kb_rng_seed(kb_rng *r, uint64_t seed)
{
    uint64_t a = splitmix64(&seed), b = splitmix64(&seed);
    r->s[0] = (uint32_t)a; r->s[1] = (uint32_t)(a >> 32);
    r->s[2] = (uint32_t)b; r->s[3] = (uint32_t)(b >> 32) | 1u; /* never all zero */
}

static inline uint32_t rotl32(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

uint32_t kb_rng_u32(kb_rng *r)
{
    uint32_t *s = r->s;
    uint32_t result = rotl32(s[1] * 5, 7) * 9;
    uint32_t t = s[1] << 9;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl32(s[3], 11);
    return result;
}

float kb_rng_uniform(kb_rng *r, float lo, float hi)
{
    float u = (float)(kb_rng_u32(r) >> 8) * (1.0f / 16777216.0f); /* 24 bits: [0,1) */
    return lo + (hi - lo) * u;
}

uint64_t kb_hash64(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#ifdef KB_SANITIZE
/* The sanitizer build's defaults (KB_SANITIZE; the environment's ASAN_OPTIONS still win).
 * intercept_tls_get_addr=0: the emulator's kernel modules are uninstrumented shared
 * objects with thread-local storage, and gcc 12's LeakSanitizer records bogus dynamic-TLS
 * ranges for them, then crashes scanning them at exit ("Tracer caught signal 11").
 * allocator_may_return_null=1: an absurd allocation is an out-of-memory the caller
 * handles (the emulator's device allocator is tested with SIZE_MAX), not an abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "intercept_tls_get_addr=0:allocator_may_return_null=1:detect_leaks=1";
}
#endif
