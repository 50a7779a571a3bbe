/*
 * simd_avx2_ops.h - internal: the AVX2 vector operations (8 lanes) and the
 * lane-wise functions over them, shared by the two AVX2 files, each with
 * one job: simd_avx2.c (the `te` kernels) and simd_avx2_generic.c (the
 * generic driver's leaves). Not a header to include anywhere else; each of
 * the two includes it once, inside its x86-64 GCC/clang branch. It holds:
 *   - T256, the target attribute every function here and in both files
 *     carries (the files are compiled without -mavx2, like the rest of the
 *     library: the dispatcher selects them only on CPUs with AVX2 and FMA);
 *   - the operations simd_te_lanes.h and simd_te_skel.h are written over,
 *     with this ISA's RHT path set and prefetch choice;
 *   - the small helpers both files call (loads, |x|, horizontal maxima, the
 *     E2M1 sign and packing, Philox's mulhi and byte layout);
 *   - simd_te_lanes.h itself (the codecs, Philox rounds, MXFP4 scale rules
 *     and RHT paths), all static inline: a file emits only what it calls.
 * AVX2 has no embedded rounding, so the FPU roundings (min(|y|, 6) + C of
 * the one-rounding E2M1 RN magnitude, |v|*2^9 for E4M3 subnormals, binary64
 * -> fp32, fp32 -> int32 in the RHT integer paths) use the MXCSR mode,
 * which the whole library requires to be the default round-to-nearest-even
 * without FTZ/DAZ (as the scalar code does).
 */
#ifndef NVFP4_SIMD_AVX2_OPS_H
#define NVFP4_SIMD_AVX2_OPS_H

#include <float.h>
#include <immintrin.h>

#include "core/hadamard.h"
#include "core/philox.h"
#include "simd/simd_kernels.h"

#define T256 __attribute__((target("avx2,fma")))
/* Full unrolling keeps a tile's 16 vectors in registers (gcc -O2 would
 * otherwise keep the arrays on the stack). */
#define SIMD_UNROLL _Pragma("GCC unroll 16")

/* ---- the vector operations of simd_te_lanes.h and simd_te_skel.h (8 lanes) ---- */

#define SK_FN T256
#define SK_W 8
#define SK_ALL 0xFF
typedef __m256 sk_vf;
typedef __m256i sk_vi;
typedef __m256i sk_mask; /* all-ones lanes */
#define sk_zero() _mm256_setzero_ps()
#define sk_set1(f) _mm256_set1_ps(f)
#define sk_add(a, b) _mm256_add_ps(a, b)
#define sk_add_rne(a, b) _mm256_add_ps(a, b) /* MXCSR: RNE (see the top of this file) */
#define sk_sub(a, b) _mm256_sub_ps(a, b)
#define sk_mul(a, b) _mm256_mul_ps(a, b)
#define sk_div(a, b) _mm256_div_ps(a, b)
#define sk_min(a, b) _mm256_min_ps(a, b)
#define sk_max(a, b) _mm256_max_ps(a, b) /* b when either is NaN */
#define sk_abs(v) abs8(v)
#define sk_load(x, bf16, i) load8(x, bf16, i)
#define sk_zero_i() _mm256_setzero_si256()
#define sk_set1_i(c) _mm256_set1_epi32((int)(c))
#define sk_iota() _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define sk_as_i(v) _mm256_castps_si256(v)
#define sk_as_f(v) _mm256_castsi256_ps(v)
#define sk_and_i(a, b) _mm256_and_si256(a, b)
#define sk_or_i(a, b) _mm256_or_si256(a, b)
#define sk_add_i(a, b) _mm256_add_epi32(a, b)
#define sk_sub_i(a, b) _mm256_sub_epi32(a, b)
#define sk_srli(v, n) _mm256_srli_epi32(v, n)
#define sk_slli(v, n) _mm256_slli_epi32(v, n)
#define sk_min_u(a, b) _mm256_min_epu32(a, b)
#define sk_max_u(a, b) _mm256_max_epu32(a, b)
#define sk_max_s(a, b) _mm256_max_epi32(a, b)
#define sk_cvt_i(v) _mm256_cvtps_epi32(v) /* MXCSR: RNE */
#define sk_cvt_rne_i(v) _mm256_cvttps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define sk_cvtt_i(v) _mm256_cvttps_epi32(v)
#define sk_cvt_f(v) _mm256_cvtepi32_ps(v)
#define sk_cvt_rne_f(v) _mm256_cvtepi32_ps(v) /* MXCSR: RNE */
#define sk_perm_i(tab, idx) _mm256_permutevar8x32_epi32(tab, idx)
/* indexed by the exponent's low 3 bits: 127 -> 7, 128 -> 0, 129 -> 1 */
#define SK_EXP_TABLE(t127, t128, t129) _mm256_setr_epi32(t128, t129, 0, 0, 0, 0, 0, t127)
#define sk_gt_i(a, b) _mm256_cmpgt_epi32(a, b)
#define sk_lt_i(a, b) _mm256_cmpgt_epi32(b, a)
#define sk_eq_i(a, b) _mm256_cmpeq_epi32(a, b)
/* unsigned a < b as a signed compare with the top bits flipped */
#define sk_lt_u(a, b) \
    _mm256_cmpgt_epi32(_mm256_xor_si256(b, _mm256_set1_epi32((int)0x80000000u)), \
                       _mm256_xor_si256(a, _mm256_set1_epi32((int)0x80000000u)))
#define sk_lt_f(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define sk_isnan(v) _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#define sk_test_i(a, bits) \
    _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_and_si256(a, _mm256_set1_epi32(bits)), _mm256_setzero_si256()), \
                     _mm256_set1_epi32(-1))
#define sk_mand(a, b) _mm256_and_si256(a, b)
#define sk_mbits(m) _mm256_movemask_ps(_mm256_castsi256_ps(m))
#define sk_blend_i(m, a, b) _mm256_blendv_epi8(a, b, m)
#define sk_blend_f(m, a, b) _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m))
#define sk_add_where(v, m) _mm256_sub_epi32(v, m) /* m lanes are -1 */
#define sk_xor3(a, b, c) _mm256_xor_si256(_mm256_xor_si256(a, b), c)
#define sk_e2m1_finish(u, au, mag) e2m1_finish8(u, au, mag)
#define sk_sr_bytes_aos(w, buf) sr_bytes_aos8(w, buf)
#define sk_store_f(p, v) _mm256_store_ps(p, v)
#define sk_load_f(p) _mm256_load_ps(p)
#define sk_load_u32(p) _mm256_load_si256((const __m256i *)(p))
/* binary64: half the lanes */
typedef __m256d sk_vd;
typedef __m128 sk_vh;
#define sk_add_d(a, b) _mm256_add_pd(a, b)
#define sk_sub_d(a, b) _mm256_sub_pd(a, b)
#define sk_to_pd(v, half) _mm256_cvtps_pd((half) ? _mm256_extractf128_ps(v, 1) : _mm256_castps256_ps128(v))
#define sk_pd_round(u) _mm256_cvtpd_ps(u) /* MXCSR: RNE */
#define sk_join_halves(lo, hi) _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1)
#define SK_RHT_FP32_PATHS 0 /* AVX2: the integer and binary64 paths only (docs/performance.md) */
#define SK_PREFETCH_L1 0 /* see simd_avx2.c col_strip8 */
#define SK_RHT_WIDE_INLINE __attribute__((noinline))

/* ---- loads and small helpers ---------------------------------------------- */

T256 static inline __m256 load8(const void *x, int bf16, size_t i)
{
    if (bf16) {
        __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)x + i));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    return _mm256_loadu_ps((const float *)x + i);
}

T256 static inline __m256 abs8(__m256 v)
{
    return _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7FFFFFFF)));
}

/* vmaxps returns its second operand when the first is NaN: NaN loses. */
T256 static inline __m256 absnn8(__m256 v) { return _mm256_max_ps(abs8(v), _mm256_setzero_ps()); }

/* Lane i = max over the 8 lanes of v[i] (NaN-free inputs). */
T256 static inline __m256 hmax8x8(const __m256 v[8])
{
    __m256 w[4];
    SIMD_UNROLL /* w[] (and the caller's v[]) in registers: not unrolled, GCC 12 kept both in memory */
    for (int i = 0; i < 4; i++) {
        __m256 a = v[2 * i], b = v[2 * i + 1];
        w[i] = _mm256_max_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    }
    __m256 m01 = _mm256_max_ps(_mm256_shuffle_ps(w[0], w[1], 0x88), _mm256_shuffle_ps(w[0], w[1], 0xDD));
    __m256 m23 = _mm256_max_ps(_mm256_shuffle_ps(w[2], w[3], 0x88), _mm256_shuffle_ps(w[2], w[3], 0xDD));
    __m256 r = _mm256_max_ps(_mm256_shuffle_ps(m01, m23, 0x88), _mm256_shuffle_ps(m01, m23, 0xDD));
    /* lane 4u+k of r holds input 2k+u */
    return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

T256 static inline float hmax8(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

/* ---- codecs -------------------------------------------------------------- */

/* mag | sign*8, NaN lanes with no sign: mag is already 7 for them (both
 * encoders saturate NaN to 7), so only the sign is masked. */
T256 static inline __m256i e2m1_finish8(__m256i u, __m256i au, __m256i mag)
{
    __m256i nan = _mm256_cmpgt_epi32(au, _mm256_set1_epi32(0x7F800000));
    __m256i sign = _mm256_and_si256(_mm256_srli_epi32(u, 28), _mm256_set1_epi32(8));
    return _mm256_or_si256(mag, _mm256_andnot_si256(nan, sign));
}

/* The sign bit of y as E2M1's 8 (y not NaN). */
T256 static inline __m256i sign_code8(__m256 y)
{
    return _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(y), 28), _mm256_set1_epi32(8));
}

/* Codes of elements 0..7 (a) and 8..15 (b) -> 8 packed bytes. */
T256 static inline void pack8x2(__m256i a, __m256i b, uint8_t *out)
{
    __m256i w = _mm256_packus_epi32(a, b);                   /* a0-3 b0-3 | a4-7 b4-7 */
    __m256i by = _mm256_packus_epi16(w, w);                  /* low 8 bytes of each half */
    __m128i e = _mm_unpacklo_epi32(_mm256_castsi256_si128(by), _mm256_extracti128_si256(by, 1)); /* e0..e15 */
    __m128i p = _mm_maddubs_epi16(e, _mm_set1_epi16(0x1001));  /* e[2j] + 16*e[2j+1] */
    _mm_storel_epi64((__m128i *)out, _mm_packus_epi16(p, p));
}

/* ---- Philox4x32-10 over 8 lanes ------------------------------------------- */

T256 static inline __m256i mulhi8(__m256i a, __m256i m)
{
    __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(a, m), 32);
    __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    return _mm256_blend_epi32(even, odd, 0xAA);
}

/* 16 bytes per block at buf + 16*b, b < 8. */
T256 static inline void sr_bytes_aos8(const __m256i w[4], uint8_t buf[128])
{
    __m256i a = _mm256_unpacklo_epi32(w[0], w[1]), b = _mm256_unpackhi_epi32(w[0], w[1]);
    __m256i c = _mm256_unpacklo_epi32(w[2], w[3]), d = _mm256_unpackhi_epi32(w[2], w[3]);
    __m256i t[4] = {_mm256_unpacklo_epi64(a, c), _mm256_unpackhi_epi64(a, c), _mm256_unpacklo_epi64(b, d),
                    _mm256_unpackhi_epi64(b, d)};
    for (int k = 0; k < 4; k++) {
        _mm_storeu_si128((__m128i *)(buf + 16 * k), _mm256_castsi256_si128(t[k]));
        _mm_storeu_si128((__m128i *)(buf + 16 * (4 + k)), _mm256_extracti128_si256(t[k], 1));
    }
}

T256 static inline void sk_mulhilo(__m256i a, __m256i m, __m256i *hi, __m256i *lo)
{
    *hi = mulhi8(a, m);
    *lo = _mm256_mullo_epi32(a, m);
}

/* The RHT's s_i x 2^(bexp-127): the weights w_i = s_i / 4 of the prepared
 * job times 4 * 2^(bexp-127) (exact), a broadcast from memory, where
 * taking bit i of the sign mask cost five scalar and vector operations per
 * row. x * (s_i up) = (s_i x) * up bit for bit (products are symmetric in
 * sign, -0 included). */
#define sk_rht_scaler(bexp) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(bexp, _mm256_set1_epi32(2)), 23))
#define sk_rht_signed_scaled(j, i, x, up4) _mm256_mul_ps(x, _mm256_mul_ps(_mm256_set1_ps((j)->rht_w[i]), up4))
/* s - RNE(s) given h = RNE(s) as int32: exact (AVX2 has no vreduceps) */
#define sk_rne_frac(s, h) _mm256_sub_ps(s, _mm256_cvtepi32_ps(h))

#include "simd/simd_te_lanes.h"

#endif /* NVFP4_SIMD_AVX2_OPS_H */
