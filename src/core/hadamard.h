/*
 * hadamard.h - the random Hadamard transform (RHT) of one group of d
 * consecutive values (d = 4, 8, 16, 32, 64, 128): the only place where the
 * RHT's arithmetic and sign vectors are defined (C library and CUDA kernels).
 *
 * Forward (TransformerEngine's y = x_block @ (diag(s) H_d / sqrt(d)),
 * transformer_engine/pytorch/tensor/nvfp4_tensor.py get_rht_matrix and
 * transformer_engine/common/hadamard_transform/hadamard_transform_utils.cuh):
 *
 *     y[j] = RN_f32( c_d * sum_i s[i] * H[i][j] * x[i] )
 *     H[i][j] = (-1)^popcount(i & j)        (Sylvester; symmetric; H H^T = d I)
 *     c_d = RN_f32(1/sqrt(d))               (exactly 1/sqrt(d) = 1/2, 1/4, 1/8
 *                                            for d = 4, 16, 64; the fp32
 *                                            constant 0x3EB504F3, 0x3E3504F3,
 *                                            0x3DB504F3 for d = 8, 32, 128)
 *
 * The sum times c_d is evaluated EXACTLY and rounded ONCE to fp32 (nearest,
 * ties to even, subnormals kept, overflow to +-Inf), then optionally rounded
 * to bf16 (RN, src/core/bf16.h), which is TE's default: its kernels sum the
 * exact bf16 x (+-0.25) products in the tensor core's fp32 accumulator and
 * cast with cvt.rn.bf16x2.f32. For d = 16 and TE's fixed signs this is TE's
 * transform; for d = 8, 32, 128 the single rounding is of the exact product
 * (sum) * fp32(1/sqrt(d)), so forward then inverse scales by d * c_d^2,
 * which differs from 1 by less than 2^-23.
 *
 * Inverse (the transpose, since (diag(s) H c)(H diag(s) c) = d c^2 I):
 *     x[i] = s[i] * RN_f32( c_d * sum_j H[i][j] * y[j] )
 *
 * Specials: a NaN term, or +Inf and -Inf terms in one sum, give the
 * canonical NaN 0x7FFFFFFF (bf16: 0x7FFF); otherwise an Inf term gives the signed Inf
 * (src/core/exact_sum.h). An exact zero sum is +0 whatever the signs of the
 * zero inputs, as the tensor core's fp32 sum with a C = +0 accumulator gives
 * in TE's kernels (so an all-zero group gives +0 outputs; the inverse then
 * applies s[i] and gives -0 where s[i] = -1); a nonzero sum that rounds to
 * zero (possible only for d >= 64 or a non-power-of-two c_d) keeps its sign.
 *
 * Signs, as a 128-bit mask (bit i of word i/32 set: s[i] = -1, the sign of
 * INPUT index i of the forward transform):
 *   - te:     {0xD7E8, 0, 0, 0}, i.e. s = [+1,+1,+1,-1,+1,-1,-1,-1,-1,-1,-1,
 *             +1,-1,+1,-1,-1] (TE's fixed vector, only for d = 16);
 *   - seeded: the four words of Philox4x32-10(ctr = {0, 0, 0, 0},
 *             key = {lo(seed), hi(seed)}) (= curand_init(seed, 0, 0) then
 *             curand4()); s[i] = -1 iff bit (i % 32) of word (i / 32) is set,
 *             so d <= 32 uses word 0 only. (This is the same stream as the SR
 *             bytes of block 0, offset 0 for an equal seed: use a sign seed
 *             different from the SR seed.)
 *   - none:   all +1 (plain H c_d).
 *
 * Exactness: when every input is finite and their binades are close enough
 * that the signed sums fit 53 bits (checked per group, see
 * nvfp4_core_rht_double_exact), the sums are done in binary64 by the fast
 * Walsh-Hadamard butterfly, which is then exact; otherwise each output is
 * accumulated in the exact accumulator. Both give the same bits.
 */
#ifndef NVFP4_CORE_HADAMARD_H
#define NVFP4_CORE_HADAMARD_H

#include "nvfp4_core.h"
#include "philox.h"
#include "bf16.h"
#include "exact_sum.h"

#define NVFP4_RHT_MAX_SIZE 128u
#define NVFP4_RHT_TE_SIGN_MASK 0xD7E8u

/* 1 when d is a supported group size: a power of two from 4 to 128. */
NVFP4_HD static inline int nvfp4_core_rht_size_ok(unsigned d)
{
    return d >= 4u && d <= NVFP4_RHT_MAX_SIZE && (d & (d - 1u)) == 0;
}

NVFP4_HD static inline unsigned nvfp4_core_log2u(unsigned d)
{
    unsigned k = 0;
    while ((1u << k) < d) k++;
    return k;
}

/* c_d = RN_f32(1/sqrt(d)). 1/sqrt(2) rounds to 0x3F3504F3; the odd powers
 * of two only shift its exponent. */
NVFP4_HD static inline float nvfp4_core_rht_scale(unsigned d)
{
    unsigned k = nvfp4_core_log2u(d);
    if ((k & 1u) == 0) return nvfp4_core_exp2i(-(int)(k / 2u));
    return nvfp4_core_f32_from_bits(0x3F3504F3u - ((k / 2u) << 23));
}

/* 1 when H[i][j] = -1: popcount(i & j) is odd. */
NVFP4_HD static inline int nvfp4_core_hadamard_neg(unsigned i, unsigned j)
{
    unsigned v = i & j;
    v ^= v >> 16;
    v ^= v >> 8;
    v ^= v >> 4;
    v ^= v >> 2;
    v ^= v >> 1;
    return (int)(v & 1u);
}

NVFP4_HD static inline void nvfp4_core_rht_mask_none(uint32_t mask[4])
{
    mask[0] = mask[1] = mask[2] = mask[3] = 0;
}

NVFP4_HD static inline void nvfp4_core_rht_mask_te(uint32_t mask[4])
{
    nvfp4_core_rht_mask_none(mask);
    mask[0] = NVFP4_RHT_TE_SIGN_MASK;
}

NVFP4_HD static inline void nvfp4_core_rht_mask_seeded(uint64_t seed, uint32_t mask[4])
{
    uint32_t ctr[4] = {0, 0, 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    nvfp4_core_philox4x32_10(ctr, key, mask);
}

/* 1 when s[i] = -1. */
NVFP4_HD static inline int nvfp4_core_rht_sign_neg(const uint32_t mask[4], unsigned i)
{
    return (int)((mask[i >> 5] >> (i & 31u)) & 1u);
}

NVFP4_HD static inline float nvfp4_core_f32_negate(float x)
{
    if (nvfp4_core_isnan(x)) return x; /* keep the canonical NaN */
    return nvfp4_core_f32_from_bits(nvfp4_core_f32_bits(x) ^ 0x80000000u);
}

/* Whether the signed sums of x[0..d) are exact in binary64 in any order:
 * all inputs finite, and with every nonzero |x| a multiple of 2^lo_i below
 * 2^hi_i, (max hi + log2 d) - (min lo) <= 53, so every partial sum of any
 * subset with any signs is an integer multiple of 2^min_lo below 2^53 times
 * that unit. */
NVFP4_HD static inline int nvfp4_core_rht_double_exact(const float *x, unsigned d)
{
    int lo = 1000, hi = -1000;
    for (unsigned i = 0; i < d; i++) {
        uint32_t au = nvfp4_core_f32_bits(x[i]) & 0x7FFFFFFFu;
        if (au >= 0x7F800000u) return 0;
        if (au == 0) continue;
        int e;
        (void)nvfp4_core_f32_split(x[i], &e);
        if (e < lo) lo = e;
        if (e + 24 > hi) hi = e + 24;
    }
    if (hi < lo) return 1; /* all zero */
    return hi + (int)nvfp4_core_log2u(d) - lo <= 53;
}

/* RN_f32(c * v), once, for an exactly computed double v (|v| in
 * [2^-160, 2^136] or 0: a signed sum of at most 128 fp32 values).
 *
 * Power-of-two c: c*v is exact in binary64 and the conversion rounds once.
 * Otherwise: Dekker's product (Veltkamp splitting; exact here because
 * nothing comes near the binary64 overflow or underflow) gives v*c = hi + lo
 * exactly; hi is then rounded to odd (if lo != 0: hi toward zero by one ulp
 * when lo points toward zero, then the last bit set), and rounding the
 * round-to-odd value to fp32 equals rounding v*c directly, since binary64
 * keeps 53 >= 24 + 2 bits (Boldo and Melquiond, "Emulation of FMA and
 * correctly rounded sums: proved algorithms using rounding to odd", IEEE
 * Trans. Computers 57(4), 2008). CUDA builds must not contract these
 * products into FMAs (nvcc --fmad=false), like everything in src/core/. */
NVFP4_HD static inline float nvfp4_core_rht_scale_round(double v, float c, int c_pow2)
{
    double cd = (double)c;
    double hi = v * cd;
    if (c_pow2) return (float)hi;
    const double split = 134217729.0; /* 2^27 + 1 */
    double t = split * v, vh = t - (t - v), vl = v - vh;
    double t2 = split * cd, ch = t2 - (t2 - cd), cl = cd - ch;
    double lo = ((vh * ch - hi) + vh * cl + vl * ch) + vl * cl;
    if (lo != 0.0) {
        uint64_t hb;
        memcpy(&hb, &hi, sizeof hb);
        if ((lo < 0.0) != (hi < 0.0)) hb -= 1u; /* |v c| < |hi|: toward zero */
        hb |= 1u;
        memcpy(&hi, &hb, sizeof hi);
    }
    return (float)hi;
}

/* One output through the exact accumulator:
 * RN_f32(c * sum_i (-1)^(H[i][j] ^ in_sign_i) x[i]). */
NVFP4_HD static inline float nvfp4_core_rht_output_exact(const float *x, unsigned d, const uint32_t mask[4],
                                                        int sign_on_input, unsigned j, float c)
{
    nvfp4_xsum acc;
    nvfp4_core_xsum_init(&acc);
    acc.zero_plus = 1;
    for (unsigned i = 0; i < d; i++) {
        int neg = nvfp4_core_hadamard_neg(i, j) ^ (sign_on_input ? nvfp4_core_rht_sign_neg(mask, i) : 0);
        nvfp4_core_xsum_add_prod_f32(&acc, x[i], c, neg);
    }
    return nvfp4_core_xsum_round_f32(&acc);
}

/* In-place fast Walsh-Hadamard transform of v[0..d): v <- v H (H symmetric).
 * Exact when nvfp4_core_rht_double_exact holds. */
NVFP4_HD static inline void nvfp4_core_fwht_f64(double *v, unsigned d)
{
    for (unsigned h = 1; h < d; h <<= 1)
        for (unsigned i = 0; i < d; i += 2u * h)
            for (unsigned k = i; k < i + h; k++) {
                double a = v[k], b = v[k + h];
                v[k] = a + b;
                v[k + h] = a - b;
            }
}

/* The shared body: sign_on_input = 1 for the forward transform (s on the
 * input index), 0 for the inverse (s on the output index). y may alias x. */
NVFP4_HD static inline void nvfp4_core_rht_group(const float *x, float *y, unsigned d, const uint32_t mask[4],
                                                int sign_on_input, int round_bf16)
{
    float in[NVFP4_RHT_MAX_SIZE];
    float c = nvfp4_core_rht_scale(d);
    int c_pow2 = (nvfp4_core_log2u(d) & 1u) == 0;
    for (unsigned i = 0; i < d; i++) in[i] = x[i];
    if (nvfp4_core_rht_double_exact(in, d)) {
        double v[NVFP4_RHT_MAX_SIZE];
        for (unsigned i = 0; i < d; i++) {
            double xi = (double)in[i];
            v[i] = sign_on_input && nvfp4_core_rht_sign_neg(mask, i) ? -xi : xi;
        }
        nvfp4_core_fwht_f64(v, d);
        for (unsigned j = 0; j < d; j++)
            if (v[j] == 0.0) v[j] = 0.0; /* exact zero sum: +0 */
        for (unsigned j = 0; j < d; j++) y[j] = nvfp4_core_rht_scale_round(v[j], c, c_pow2);
    } else {
        for (unsigned j = 0; j < d; j++) y[j] = nvfp4_core_rht_output_exact(in, d, mask, sign_on_input, j, c);
    }
    for (unsigned j = 0; j < d; j++) {
        float r = y[j];
        if (!sign_on_input && nvfp4_core_rht_sign_neg(mask, j)) r = nvfp4_core_f32_negate(r);
        if (round_bf16) r = nvfp4_core_round_bf16(r);
        y[j] = r;
    }
}

/* Forward RHT of one group: y[j] = RN(c_d sum_i s[i] H[i][j] x[i]), then
 * RN to bf16 if round_bf16. y may alias x. */
NVFP4_HD static inline void nvfp4_core_rht_forward_group(const float *x, float *y, unsigned d, const uint32_t mask[4],
                                                        int round_bf16)
{
    nvfp4_core_rht_group(x, y, d, mask, 1, round_bf16);
}

/* Inverse RHT of one group: x[i] = s[i] RN(c_d sum_j H[i][j] y[j]). */
NVFP4_HD static inline void nvfp4_core_rht_inverse_group(const float *y, float *x, unsigned d, const uint32_t mask[4],
                                                        int round_bf16)
{
    nvfp4_core_rht_group(y, x, d, mask, 0, round_bf16);
}

/* ---- exactness limits of the vector RHT-16 paths (src/simd/) ------------
 *
 * The vector kernels transform 16 rows x one column per lane and choose,
 * per tile, the cheapest path that is exact for every lane; the proofs are
 * at the paths (src/simd/simd_avx512.c) and in docs/performance.md. A
 * lane is described by Emax and Emin, the biased exponents of its largest
 * |x| and of its smallest nonzero |x| (Emin 255 when all are zero, so the
 * spread Emax - Emin is negative). The limits live here, once, so every
 * ISA's kernels and the scalar tests (tests/check_hadamard.c) agree. */

/* Any path: u_i = s_i x_i / 4 exact and normal needs Emin >= 3, and the
 * butterfly of finite lanes stays below 2^126 when Emax <= 250. */
#define NVFP4_CORE_RHT_EMIN_LOW 3
#define NVFP4_CORE_RHT_EMAX_HIGH 250
/* fp32 inputs: the hi/lo split butterflies (sk_rht_split, sk_rht_split_int). */
#define NVFP4_CORE_RHT_SPLIT_SPREAD 17
/* bf16 inputs (8-bit significands): the same split. */
#define NVFP4_CORE_RHT_SPLIT_SPREAD_BF16 33
/* sk_rht_split_int also needs every lane's Emax >= 22 or 0 (all zero). */
#define NVFP4_CORE_RHT_SPLIT_INT_EMAX_LOW 22
/* bf16 inputs as int32 (sk_rht_bf16_int): spread <= 19 and Emin >= 10, so
 * s_i x_i 2^(7-Emin) are integers below 2^27 and 16-term sums fit int32. */
#define NVFP4_CORE_RHT_BF16_INT_SPREAD 19
#define NVFP4_CORE_RHT_BF16_INT_EMIN_LOW 10
/* bf16 inputs as one fp32 butterfly (sk_rht_bf16_exact). */
#define NVFP4_CORE_RHT_BF16_SPREAD 13
/* The binary64 butterfly (sk_rht_f64): 24-bit significands over 25 binades
 * plus 4 bits of growth fit 53 bits. */
#define NVFP4_CORE_RHT_F64_SPREAD 25
/* The binary64 hi/lo split (rht16_split_f64). */
#define NVFP4_CORE_RHT_SPLIT64_SPREAD 75

/* Emax and Emin of one lane (the 16 values of a column of a row group). */
static inline void nvfp4_core_rht16_exp_range(const float v[16], int *emax, int *emin)
{
    uint32_t mx = 0u, mn = 0xFFFFFFFFu;
    for (unsigned i = 0; i < 16; i++) {
        uint32_t au = nvfp4_core_f32_bits(v[i]) & 0x7FFFFFFFu;
        if (au > mx) mx = au;
        if (au != 0u && au < mn) mn = au;
    }
    *emax = (int)(mx >> 23);
    *emin = mn == 0xFFFFFFFFu ? 255 : (int)(mn >> 23);
}

/* Whether a lane is within a path's spread: Emax <= 250, Emin >= 3 and
 * Emax - Emin <= spread (the vector kernels' sk_rht_lanes_within). */
static inline int nvfp4_core_rht16_lane_within(int emax, int emin, int spread)
{
    return emax <= NVFP4_CORE_RHT_EMAX_HIGH && emin >= NVFP4_CORE_RHT_EMIN_LOW && emax - emin <= spread;
}

#endif /* NVFP4_CORE_HADAMARD_H */
