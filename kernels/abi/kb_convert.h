/* kb_convert.h - bit-exact conversions between float and the narrow formats
 * (fp16, bf16, fp8 e4m3, fp8 e5m2, fp6 e2m3 / e3m2, fp4 e2m1, and the scale formats
 * UE8M0 and UE4M3), round to nearest even.
 *
 * Plain C, static inline: the host side of every family (C) and the emulator's
 * device types (C++ under KB_EMU) use these same functions, so the emulator rounds
 * exactly as the reference generator does and as the hardware does (cvt.rn).
 * fp8 conversions saturate to the largest finite value (cvt.rn.satfinite), as
 * the __nv_cvt_float_to_fp8(.., __NV_SATFINITE, ..) path does; fp16/bf16 overflow to inf.
 * fp6 and fp4 (OCP Microscaling Formats (MX) Specification v1.0, section 5.3.3) have
 * neither infinities nor NaN: out-of-range values saturate to the largest magnitude and a
 * NaN input becomes +max, as cuda_fp6.h / cuda_fp4.h's __nv_cvt_float_to_fp6/fp4 say.
 */
#ifndef KB_CONVERT_H
#define KB_CONVERT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* nan_free: no NaN code either (fp6, fp4): every code is a finite value. */
typedef struct { int ebits, mbits, bias, has_inf, satfinite, nan_free; } kb_fmt;

static const kb_fmt KB_FMT_FP16 = { 5, 10, 15, 1, 0, 0 };
static const kb_fmt KB_FMT_BF16 = { 8, 7, 127, 1, 0, 0 };
static const kb_fmt KB_FMT_E4M3 = { 4, 3, 7, 0, 1, 0 };   /* "fn": no inf, S.1111.111 is NaN, max 448 */
static const kb_fmt KB_FMT_E5M2 = { 5, 2, 15, 1, 1, 0 };  /* IEEE-like, max finite 57344 */
static const kb_fmt KB_FMT_E3M2 = { 3, 2, 3, 0, 1, 1 };   /* fp6: max 28, smallest subnormal 2^-4 */
static const kb_fmt KB_FMT_E2M3 = { 2, 3, 1, 0, 1, 1 };   /* fp6: max 7.5, smallest subnormal 2^-3 */
static const kb_fmt KB_FMT_E2M1 = { 2, 1, 1, 0, 1, 1 };   /* fp4: 0, 0.5, 1, 1.5, 2, 3, 4, 6 */

/* The largest finite code of f (sign clear). */
static inline uint32_t kb_fmt_max_code(kb_fmt f)
{
    uint32_t emax_field = (1u << f.ebits) - 1u, mant_all = (1u << f.mbits) - 1u;
    if (f.has_inf)
        return ((emax_field - 1u) << f.mbits) | mant_all;
    return (emax_field << f.mbits) | (f.nan_free ? mant_all : mant_all - 1u); /* e4m3 keeps S.1111.111 for NaN */
}

/* Encode x into the format's bit pattern (in the low 1+ebits+mbits bits). */
static inline uint32_t kb_fmt_encode(kb_fmt f, float x)
{
    uint32_t sign = signbit(x) ? 1u << (f.ebits + f.mbits) : 0u;
    uint32_t emax_field = (1u << f.ebits) - 1u;
    uint32_t mant_all = (1u << f.mbits) - 1u;
    uint32_t max_code = kb_fmt_max_code(f);
    if (isnan(x))   /* canonical NaN, positive; a format without NaN gives +max */
        return f.nan_free ? max_code : (emax_field << f.mbits) | mant_all;
    double a = fabs((double)x);
    if (isinf(x))
        return sign | (f.satfinite || !f.has_inf ? max_code : emax_field << f.mbits);
    if (a == 0.0)
        return sign;
    int ex;
    frexp(a, &ex);                 /* a = m * 2^ex, m in [0.5, 1) */
    int e = ex - 1;                /* a in [2^e, 2^(e+1)) */
    int emin = 1 - f.bias;
    uint32_t code;
    if (e < emin) {                /* subnormal: fixed quantum 2^(emin - mbits) */
        double q = nearbyint(ldexp(a, f.mbits - emin));
        code = (uint32_t)q;        /* q == 2^mbits rolls into the smallest normal */
    } else {
        double q = nearbyint(ldexp(a, f.mbits - e)); /* in [2^mbits, 2^(mbits+1)] */
        if (q >= (double)(1u << (f.mbits + 1))) { q = (double)(1u << f.mbits); e++; }
        uint32_t efield = (uint32_t)(e + f.bias);
        if (efield > emax_field || (f.has_inf && efield == emax_field))
            code = f.satfinite || !f.has_inf ? max_code + 1u : emax_field << f.mbits; /* overflow */
        else
            code = (efield << f.mbits) | ((uint32_t)q - (1u << f.mbits));
    }
    if (code > max_code)
        code = (f.satfinite || !f.has_inf) ? max_code : emax_field << f.mbits;
    return sign | code;
}

static inline float kb_fmt_decode(kb_fmt f, uint32_t bits)
{
    uint32_t mant_all = (1u << f.mbits) - 1u;
    uint32_t emax_field = (1u << f.ebits) - 1u;
    uint32_t m = bits & mant_all;
    uint32_t e = (bits >> f.mbits) & emax_field;
    int neg = (bits >> (f.ebits + f.mbits)) & 1u;
    double v;
    if (f.has_inf && e == emax_field)
        v = m ? NAN : INFINITY;
    else if (!f.has_inf && !f.nan_free && e == emax_field && m == mant_all)
        v = NAN;
    else if (e == 0)
        v = ldexp((double)m, 1 - f.bias - f.mbits);
    else
        v = ldexp(1.0 + (double)m / (double)(1u << f.mbits), (int)e - f.bias);
    return (float)(neg ? -v : v);
}

static inline uint16_t kb_f32_to_f16_bits(float x) { return (uint16_t)kb_fmt_encode(KB_FMT_FP16, x); }
static inline float kb_f16_bits_to_f32(uint16_t b) { return kb_fmt_decode(KB_FMT_FP16, b); }
static inline uint8_t kb_f32_to_e4m3_bits(float x) { return (uint8_t)kb_fmt_encode(KB_FMT_E4M3, x); }
static inline float kb_e4m3_bits_to_f32(uint8_t b) { return kb_fmt_decode(KB_FMT_E4M3, b); }
static inline uint8_t kb_f32_to_e5m2_bits(float x) { return (uint8_t)kb_fmt_encode(KB_FMT_E5M2, x); }
static inline float kb_e5m2_bits_to_f32(uint8_t b) { return kb_fmt_decode(KB_FMT_E5M2, b); }

/* fp6 and fp4 codes in the low 6 / 4 bits of a byte (kbench's storage of them: one
 * element per byte, as cuda_fp6.h / cuda_fp4.h store a single value). */
static inline uint8_t kb_f32_to_e2m3_bits(float x) { return (uint8_t)kb_fmt_encode(KB_FMT_E2M3, x); }
static inline float kb_e2m3_bits_to_f32(uint8_t b) { return kb_fmt_decode(KB_FMT_E2M3, b & 0x3fu); }
static inline uint8_t kb_f32_to_e3m2_bits(float x) { return (uint8_t)kb_fmt_encode(KB_FMT_E3M2, x); }
static inline float kb_e3m2_bits_to_f32(uint8_t b) { return kb_fmt_decode(KB_FMT_E3M2, b & 0x3fu); }
static inline uint8_t kb_f32_to_e2m1_bits(float x) { return (uint8_t)kb_fmt_encode(KB_FMT_E2M1, x); }
static inline float kb_e2m1_bits_to_f32(uint8_t b) { return kb_fmt_decode(KB_FMT_E2M1, b & 0x0fu); }

/* Scale formats (MX spec v1.0 5.4, E8M0; NVIDIA's NVFP4: an unsigned E4M3).
 * UE8M0 code c: 2^(c - 127), c = 255 is NaN; no zero, no sign. UE4M3 code c: the E4M3
 * value of c with the sign bit clear, 0x7f NaN (the sign bit of c is ignored). */
static inline float kb_ue8m0_to_f32(uint8_t c) { return c == 255u ? NAN : ldexpf(1.0f, (int)c - 127); }
static inline float kb_ue4m3_to_f32(uint8_t c) { return kb_fmt_decode(KB_FMT_E4M3, c & 0x7fu); }

/* bf16 is the top half of an fp32: exact bit tricks are both simpler and faster. */
static inline uint16_t kb_f32_to_bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fffu;  /* canonical NaN, as kb_fmt_encode gives fp16 and CUDA's __float2bfloat16_rn */
    u += 0x7fffu + ((u >> 16) & 1u);                     /* round to nearest even */
    return (uint16_t)(u >> 16);
}
static inline float kb_bf16_bits_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* tf32: fp32 storage, 10 mantissa bits kept (cvt.rna.tf32.f32 rounds half away from zero). */
static inline float kb_f32_round_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u;          /* half of the 13 dropped bits: ties away from zero */
        u &= 0xffffe000u;
    }
    memcpy(&x, &u, 4);
    return x;
}

#endif /* KB_CONVERT_H */
