/*
 * exact_sum.h - an exact accumulator for sums of fp32 values and of exact
 * products of two fp32 values, rounded ONCE (to nearest, ties to even) to
 * fp32 or binary64 at the end. Used by the random Hadamard transform (each
 * output is an exact d-term sum rounded once) and by the emulated GEMM (the
 * exact accumulation order and the reference for the error bound).
 *
 * Why not a double sum: a double holds 53 bits, but the exact sum of two fp32
 * values can need up to 277 bits (2^127 + 2^-149), so a double sum is exact
 * only for a limited exponent spread. This accumulator is exact for ANY
 * finite inputs.
 *
 * Representation (a Kulisch-style fixed-point long accumulator): the value is
 *     sum_k limb[k] * 2^(32k + NVFP4_XSUM_BASE)
 * with signed 64-bit limbs that each receive 32-bit digits. Adding a term
 * touches three limbs and never propagates carries; carries are resolved
 * (normalize) before rounding and every 2^26 additions, so no limb can
 * overflow (each addition changes a limb by less than 2^33). The window
 * covers bit weights 2^-320 .. 2^352: the smallest bit of a product of two
 * fp32 subnormals is 2^-298, the largest product is below 2^256, and 2^96
 * more terms of that size still fit.
 *
 * Inf and NaN terms are counted apart and give the IEEE result of the sum:
 * NaN if any term is NaN (or a product is Inf*0) or if +Inf and -Inf both
 * occur, otherwise the signed Inf. A NaN result is the canonical NaN of
 * NVIDIA GPUs, 0x7FFFFFFF (binary64: 0x7FFFFFFFFFFFFFFF), whatever the input
 * payloads: PTX f32 arithmetic returns it for every NaN result, IEEE 754
 * leaves the payload open, and one fixed value keeps CPU and GPU
 * bit-identical (src/core/bf16.h maps it to bf16 0x7FFF, as the device
 * cvt does). A finite exact sum of magnitude >= the overflow threshold
 * (fp32: 2^128 - 2^103) rounds to signed Inf, as IEEE RN does. An exact zero
 * sum is +0 except when every term was -0 (or the sum of no terms: +0), as
 * IEEE addition in round-to-nearest gives (x + (-x) = +0, -0 + -0 = -0);
 * setting zero_plus after init makes every exact zero sum +0, as an fp32
 * accumulator that starts from +0 (a tensor core's C = 0) gives. A nonzero
 * sum that rounds to zero keeps its sign in both modes.
 *
 * Plain C11, `NVFP4_HD static inline`, integers only: the CUDA kernels use
 * the same code.
 */
#ifndef NVFP4_CORE_EXACT_SUM_H
#define NVFP4_CORE_EXACT_SUM_H

#include "nvfp4_core.h"

#define NVFP4_XSUM_LIMBS 21
#define NVFP4_XSUM_BASE (-320)
#define NVFP4_XSUM_NORMALIZE_EVERY (1u << 26)

typedef struct {
    int64_t limb[NVFP4_XSUM_LIMBS];
    uint32_t pending;   /* additions since the last normalization */
    uint8_t nan, pinf, ninf;
    uint8_t all_negzero; /* 1 while every term so far was -0 (and at least one) */
    uint8_t any;         /* at least one term */
    uint8_t zero_plus;   /* exact zero sums give +0 whatever the terms' zero signs */
} nvfp4_xsum;

NVFP4_HD static inline void nvfp4_core_xsum_init(nvfp4_xsum *a)
{
    for (int i = 0; i < NVFP4_XSUM_LIMBS; i++) a->limb[i] = 0;
    a->pending = 0;
    a->nan = a->pinf = a->ninf = 0;
    a->all_negzero = 0;
    a->any = 0;
    a->zero_plus = 0;
}

/* Resolve carries: afterwards limbs 0..N-2 are in [0, 2^32) and the top limb
 * carries the sign of the whole value. */
NVFP4_HD static inline void nvfp4_core_xsum_normalize(nvfp4_xsum *a)
{
    int64_t carry = 0;
    for (int i = 0; i < NVFP4_XSUM_LIMBS - 1; i++) {
        int64_t v = a->limb[i] + carry;
        int64_t low = (int64_t)((uint64_t)v & 0xFFFFFFFFu);
        a->limb[i] = low;
        carry = (v - low) / 4294967296LL; /* exact: v - low is a multiple of 2^32 */
    }
    a->limb[NVFP4_XSUM_LIMBS - 1] += carry;
    a->pending = 0;
}

/* Track the IEEE sign of an exact zero sum. */
NVFP4_HD static inline void nvfp4_core_xsum_note_term(nvfp4_xsum *a, int is_negzero)
{
    a->all_negzero = (uint8_t)((a->any ? a->all_negzero : 1u) & (is_negzero ? 1u : 0u));
    a->any = 1;
}

/* Add (neg ? -1 : 1) * m * 2^e exactly, for m < 2^48 and
 * NVFP4_XSUM_BASE <= e <= 256. */
NVFP4_HD static inline void nvfp4_core_xsum_add_scaled(nvfp4_xsum *a, uint64_t m, int e, int neg)
{
    if (m == 0) return;
    int shift = e - NVFP4_XSUM_BASE;
    int k = shift >> 5;
    unsigned r = (unsigned)(shift & 31);
    uint64_t t0 = (m & 0xFFFFFFFFu) << r; /* < 2^63 */
    uint64_t t1 = (m >> 32) << r;         /* < 2^47 */
    int64_t d0 = (int64_t)(t0 & 0xFFFFFFFFu);
    int64_t d1 = (int64_t)(t0 >> 32) + (int64_t)(t1 & 0xFFFFFFFFu);
    int64_t d2 = (int64_t)(t1 >> 32);
    if (neg) {
        d0 = -d0;
        d1 = -d1;
        d2 = -d2;
    }
    a->limb[k] += d0;
    a->limb[k + 1] += d1;
    a->limb[k + 2] += d2;
    if (++a->pending >= NVFP4_XSUM_NORMALIZE_EVERY) nvfp4_core_xsum_normalize(a);
}

/* Split a finite fp32 into its integer significand (< 2^24) and the weight
 * of its last bit: |x| = sig * 2^exp. */
NVFP4_HD static inline uint32_t nvfp4_core_f32_split(float x, int *exp)
{
    uint32_t u = nvfp4_core_f32_bits(x) & 0x7FFFFFFFu;
    uint32_t be = u >> 23, frac = u & 0x7FFFFFu;
    if (be == 0) {
        *exp = -149;
        return frac;
    }
    *exp = (int)be - 150;
    return frac | 0x800000u;
}

NVFP4_HD static inline int nvfp4_core_f32_isinf(float x)
{
    return (nvfp4_core_f32_bits(x) & 0x7FFFFFFFu) == 0x7F800000u;
}

NVFP4_HD static inline void nvfp4_core_xsum_note_inf(nvfp4_xsum *a, int negative)
{
    if (negative) a->ninf = 1;
    else a->pinf = 1;
}

/* sum += x, exactly. */
NVFP4_HD static inline void nvfp4_core_xsum_add_f32(nvfp4_xsum *a, float x)
{
    int neg = nvfp4_core_signbit(x);
    if (nvfp4_core_isnan(x)) {
        a->nan = 1;
        nvfp4_core_xsum_note_term(a, 0);
        return;
    }
    if (nvfp4_core_f32_isinf(x)) {
        nvfp4_core_xsum_note_inf(a, neg);
        nvfp4_core_xsum_note_term(a, 0);
        return;
    }
    int e;
    uint32_t sig = nvfp4_core_f32_split(x, &e);
    nvfp4_core_xsum_note_term(a, sig == 0 && neg);
    nvfp4_core_xsum_add_scaled(a, sig, e, neg);
}

/* sum += (negate ? -1 : 1) * x * y, with the product taken exactly (an fp32
 * product has at most 48 significant bits). IEEE special cases of the
 * product: NaN operand or Inf*0 gives NaN; Inf*finite gives signed Inf; the
 * sign of a zero product is the xor of the signs. */
NVFP4_HD static inline void nvfp4_core_xsum_add_prod_f32(nvfp4_xsum *a, float x, float y, int negate)
{
    int neg = nvfp4_core_signbit(x) ^ nvfp4_core_signbit(y) ^ (negate ? 1 : 0);
    int xi = nvfp4_core_f32_isinf(x), yi = nvfp4_core_f32_isinf(y);
    int ex, ey;
    if (nvfp4_core_isnan(x) || nvfp4_core_isnan(y)) {
        a->nan = 1;
        nvfp4_core_xsum_note_term(a, 0);
        return;
    }
    if (xi || yi) {
        float other = xi ? y : x;
        if ((nvfp4_core_f32_bits(other) & 0x7FFFFFFFu) == 0) a->nan = 1; /* Inf * 0 */
        else nvfp4_core_xsum_note_inf(a, neg);
        nvfp4_core_xsum_note_term(a, 0);
        return;
    }
    uint32_t sx = nvfp4_core_f32_split(x, &ex), sy = nvfp4_core_f32_split(y, &ey);
    uint64_t m = (uint64_t)sx * sy;
    nvfp4_core_xsum_note_term(a, m == 0 && neg);
    nvfp4_core_xsum_add_scaled(a, m, ex + ey, neg);
}

/* sum += (negate ? -1 : 1) * s * c exactly, for a FINITE binary64 s and a
 * finite fp32 c (used to scale an exactly computed double sum by the RHT
 * constant with a single rounding). The 53-bit significand of s is split in
 * three 18-bit pieces so that each piece times c's 24 bits stays below 2^48. */
NVFP4_HD static inline void nvfp4_core_xsum_add_prod_f64_f32(nvfp4_xsum *a, double s, float c, int negate)
{
    uint64_t u;
    memcpy(&u, &s, sizeof u);
    int neg = (int)(u >> 63) ^ nvfp4_core_signbit(c) ^ (negate ? 1 : 0);
    uint64_t be = (u >> 52) & 0x7FFu, ms = u & 0xFFFFFFFFFFFFFull;
    int es = be == 0 ? -1074 : (int)be - 1075;
    if (be != 0) ms |= 1ull << 52;
    int ec;
    uint32_t sc = nvfp4_core_f32_split(c, &ec);
    nvfp4_core_xsum_note_term(a, (ms == 0 || sc == 0) && neg);
    for (int piece = 0; piece < 3; piece++) {
        uint64_t m = (ms >> (18 * piece)) & 0x3FFFFu;
        nvfp4_core_xsum_add_scaled(a, m * sc, es + ec + 18 * piece, neg);
    }
}

/* ---- reading the normalized magnitude ---------------------------------- */

/* Bits [pos, pos + n) (absolute weights 2^pos ..), n <= 63, of a
 * normalized non-negative accumulator. */
NVFP4_HD static inline uint64_t nvfp4_core_xsum_bits(const nvfp4_xsum *a, int pos, int n)
{
    uint64_t r = 0;
    int i = 0;
    while (i < n) {
        int b = pos + i - NVFP4_XSUM_BASE;
        if (b < 0) { /* below the window: zero bits */
            i += -b < n - i ? -b : n - i;
            continue;
        }
        int k = b >> 5, off = b & 31;
        if (k >= NVFP4_XSUM_LIMBS) break;
        int take = 32 - off < n - i ? 32 - off : n - i;
        uint64_t chunk = ((uint64_t)a->limb[k] >> off) & ((1ull << take) - 1u);
        r |= chunk << i;
        i += take;
    }
    return r;
}

/* Whether any bit of weight below 2^pos is set. */
NVFP4_HD static inline int nvfp4_core_xsum_sticky_below(const nvfp4_xsum *a, int pos)
{
    int b = pos - NVFP4_XSUM_BASE;
    if (b <= 0) return 0;
    int k = b >> 5;
    for (int i = 0; i < k && i < NVFP4_XSUM_LIMBS; i++)
        if (a->limb[i] != 0) return 1;
    if (k < NVFP4_XSUM_LIMBS && (b & 31) != 0) {
        uint64_t mask = (1ull << (b & 31)) - 1u;
        if (((uint64_t)a->limb[k] & mask) != 0) return 1;
    }
    return 0;
}

/* Weight of the highest set bit of a normalized non-negative accumulator,
 * or INT32_MIN for zero. */
NVFP4_HD static inline int nvfp4_core_xsum_top_bit(const nvfp4_xsum *a)
{
    for (int i = NVFP4_XSUM_LIMBS - 1; i >= 0; i--) {
        uint64_t v = (uint64_t)a->limb[i];
        if (v == 0) continue;
        int t = 63;
        while (!((v >> t) & 1u)) t--;
        return NVFP4_XSUM_BASE + 32 * i + t;
    }
    return INT32_MIN;
}

/* Normalize, and make the value non-negative; returns 1 if it was negative. */
NVFP4_HD static inline int nvfp4_core_xsum_abs(nvfp4_xsum *a)
{
    nvfp4_core_xsum_normalize(a);
    if (a->limb[NVFP4_XSUM_LIMBS - 1] >= 0) return 0;
    for (int i = 0; i < NVFP4_XSUM_LIMBS; i++) a->limb[i] = -a->limb[i];
    nvfp4_core_xsum_normalize(a);
    return 1;
}

/* Round the finite exact value to a binary format with p-bit significands
 * (p <= 62) and least subnormal exponent emin_lsb, to nearest, ties to even.
 * Result: |value| ~= (*sig) * 2^(*lsb) with *sig <= 2^p (2^p only after a
 * carry out of the last binade, which the caller treats as the next binade).
 * Returns 0 (positive), 1 (negative; a tiny negative value that rounds to
 * *sig = 0 keeps its sign) or 2 (the exact sum is zero). Works on a copy:
 * the accumulator can keep receiving terms. */
NVFP4_HD static inline int nvfp4_core_xsum_round_sig(const nvfp4_xsum *acc, int p, int emin_lsb, uint64_t *sig,
                                                    int *lsb)
{
    nvfp4_xsum a = *acc;
    int neg = nvfp4_core_xsum_abs(&a);
    int top = nvfp4_core_xsum_top_bit(&a);
    if (top == INT32_MIN) {
        *sig = 0;
        *lsb = emin_lsb;
        return 2;
    }
    int q = top - (p - 1);
    if (q < emin_lsb) q = emin_lsb;
    uint64_t m = nvfp4_core_xsum_bits(&a, q, top - q + 1);
    uint64_t round = nvfp4_core_xsum_bits(&a, q - 1, 1);
    int sticky = nvfp4_core_xsum_sticky_below(&a, q - 1);
    if (round && (sticky || (m & 1u))) m += 1u;
    *sig = m;
    *lsb = q;
    return neg;
}

/* The sign of an exact zero sum (IEEE RN: -0 only if every term was -0). */
NVFP4_HD static inline int nvfp4_core_xsum_zero_sign(const nvfp4_xsum *a)
{
    return !a->zero_plus && a->any && a->all_negzero;
}

/* The exact sum rounded once to fp32 (RNE, subnormals kept, overflow to
 * +-Inf, specials as described at the top). */
NVFP4_HD static inline float nvfp4_core_xsum_round_f32(const nvfp4_xsum *a)
{
    if (a->nan || (a->pinf && a->ninf)) return nvfp4_core_f32_from_bits(0x7FFFFFFFu);
    if (a->pinf) return nvfp4_core_f32_from_bits(0x7F800000u);
    if (a->ninf) return nvfp4_core_f32_from_bits(0xFF800000u);
    uint64_t sig;
    int lsb;
    int neg = nvfp4_core_xsum_round_sig(a, 24, -149, &sig, &lsb);
    if (neg == 2) return nvfp4_core_f32_from_bits(nvfp4_core_xsum_zero_sign(a) ? 0x80000000u : 0u);
    uint32_t sbit = neg ? 0x80000000u : 0u;
    if (sig == (1u << 24)) {
        sig >>= 1;
        lsb += 1;
    }
    if (lsb > 104) return nvfp4_core_f32_from_bits(sbit | 0x7F800000u); /* >= 2^128 after rounding */
    /* sig < 2^24 and 2^lsb is an fp32 power of two: the product is the
     * representable result, so the multiplication is exact. */
    float v = (float)(uint32_t)sig * nvfp4_core_exp2i(lsb);
    return nvfp4_core_f32_from_bits(nvfp4_core_f32_bits(v) | sbit);
}

/* 2^e as a binary64, e in [-1074, 1023], built from bits. */
NVFP4_HD static inline double nvfp4_core_f64_exp2i(int e)
{
    uint64_t u = e >= -1022 ? (uint64_t)(e + 1023) << 52 : 1ull << (e + 1074);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The exact sum rounded once to binary64 (RNE). Finite fp32 terms and
 * products never come near the binary64 limits, so no subnormal or overflow
 * case arises; specials as for fp32. */
NVFP4_HD static inline double nvfp4_core_xsum_round_f64(const nvfp4_xsum *a)
{
    uint64_t bits;
    double d;
    if (a->nan || (a->pinf && a->ninf)) bits = 0x7FFFFFFFFFFFFFFFull;
    else if (a->pinf) bits = 0x7FF0000000000000ull;
    else if (a->ninf) bits = 0xFFF0000000000000ull;
    else {
        uint64_t sig;
        int lsb;
        int neg = nvfp4_core_xsum_round_sig(a, 53, -1074, &sig, &lsb);
        if (neg == 2) {
            bits = nvfp4_core_xsum_zero_sign(a) ? 0x8000000000000000ull : 0;
        } else {
            /* sig <= 2^53 and 2^lsb fit binary64 (lsb in [-350, 300]). */
            d = (double)sig * nvfp4_core_f64_exp2i(lsb);
            return neg ? -d : d;
        }
    }
    memcpy(&d, &bits, sizeof d);
    return d;
}

#endif /* NVFP4_CORE_EXACT_SUM_H */
