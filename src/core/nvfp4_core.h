/*
 * nvfp4_core.h - the one place for the host/device macro and bit casts that
 * every header in src/core/ uses.
 *
 * Everything in src/core/ is plain C11 that nvcc can also compile as CUDA
 * C++: functions are `NVFP4_HD static inline`, use only fixed-width integers,
 * float arithmetic that is exactly rounded (no FMA contraction is possible in
 * what we write: every product feeding a sum is stored first), and memcpy
 * for bit casts (valid in both C and CUDA device code).
 */
#ifndef NVFP4_CORE_H
#define NVFP4_CORE_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__CUDACC__)
#define NVFP4_HD __host__ __device__
#else
#define NVFP4_HD
#endif

NVFP4_HD static inline uint32_t nvfp4_core_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

NVFP4_HD static inline float nvfp4_core_f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* |x| by clearing the sign bit: exact for every input, NaN included. */
NVFP4_HD static inline float nvfp4_core_fabs(float x)
{
    return nvfp4_core_f32_from_bits(nvfp4_core_f32_bits(x) & 0x7FFFFFFFu);
}

NVFP4_HD static inline int nvfp4_core_isnan(float x)
{
    return (nvfp4_core_f32_bits(x) & 0x7FFFFFFFu) > 0x7F800000u;
}

/* The one NaN that dequantization returns (nvfp4_core_dequant_scaled): the
 * IEEE 754 default quiet NaN, positive, no payload. */
#define NVFP4_CORE_CANONICAL_NAN 0x7FC00000u

NVFP4_HD static inline int nvfp4_core_signbit(float x)
{
    return (int)(nvfp4_core_f32_bits(x) >> 31);
}

/* C99 fminf/fmaxf semantics (a NaN operand loses) without calling libm, so
 * that host and device agree and no -ffast-math assumption can creep in.
 * Written as selects, not early returns: the same result for every pair
 * (a NaN a gives b, else a NaN b gives a, else the comparison), and no
 * divergent branch per element on a GPU. */
NVFP4_HD static inline float nvfp4_core_fminf(float a, float b)
{
    float r = a < b ? a : b;
    r = nvfp4_core_isnan(b) ? a : r;
    return nvfp4_core_isnan(a) ? b : r;
}

NVFP4_HD static inline float nvfp4_core_fmaxf(float a, float b)
{
    float r = a > b ? a : b;
    r = nvfp4_core_isnan(b) ? a : r;
    return nvfp4_core_isnan(a) ? b : r;
}

/* v rounded up to a multiple of m (m > 0); a result below v means size_t
 * overflowed, which callers that take untrusted sizes check. */
NVFP4_HD static inline size_t nvfp4_core_roundup(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* 2^e for e in [-149, 127], exactly, built from bits. */
NVFP4_HD static inline float nvfp4_core_exp2i(int e)
{
    if (e >= -126) return nvfp4_core_f32_from_bits((uint32_t)(e + 127) << 23);
    return nvfp4_core_f32_from_bits(1u << (e + 149));
}

/* Round the integer significand `sig` right by `shift` bits (1..31),
 * to nearest with ties to even. Shared by every encoder that narrows a
 * mantissa, so the tie rule lives in one place. */
NVFP4_HD static inline uint32_t nvfp4_core_shift_rne(uint32_t sig, unsigned shift)
{
    uint32_t q = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q += 1u;
    return q;
}

#endif /* NVFP4_CORE_H */
