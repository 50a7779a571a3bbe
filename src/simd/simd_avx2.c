/*
 * simd_avx2.c - AVX2 kernels of the fast CPU path (8 lanes; a 16-element
 * block is two registers). The codecs, Philox rounds, MXFP4 scale rules and
 * RHT paths are simd_te_lanes.h's, over this file's vector operations;
 * differences from simd_avx512.c:
 *   - AVX2 has no embedded rounding, so the FPU roundings (min(|y|, 6) + C
 *     of the one-rounding E2M1 RN magnitude, |v|*2^9 for E4M3 subnormals,
 *     binary64 -> fp32, fp32 -> int32 in the RHT integer paths) use the
 *     MXCSR mode, which the whole library requires to be the default
 *     round-to-nearest-even without FTZ/DAZ (as the scalar code does);
 *   - E2M1 decode uses an 8-entry magnitude table plus the sign bit;
 *   - columnwise tiles are 16 rows x 8 columns, in two phases per strip;
 *   - the RHT takes the integer and binary64 paths only (SK_RHT_FP32_PATHS).
 * Selected for CPUs with AVX2 and FMA (the kernels use no FMA instruction:
 * every product is rounded before its sum, as in the scalar reference).
 * The kernels' loops, chunks, phases and instances are simd_te_skel.h's,
 * included once near the end of this file; the generic driver's AVX2
 * leaves (simd_generic.c's) are here too.
 */
#include "simd/simd_kernels.h"

#if defined(__GNUC__) && defined(__x86_64__)

#include <float.h>
#include <immintrin.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/philox.h"
#include "core/recipe.h"

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
#define SK_PREFETCH_L1 0 /* see col_strip8 */
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

T256 static inline __m256i blendv_i(__m256i a, __m256i b, __m256i mask)
{
    return _mm256_blendv_epi8(a, b, mask);
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

/* ---- rowwise ---------------------------------------------------------------- */

T256 static inline void store_bytes8(__m256i v, size_t n, uint8_t *out)
{
    if (n == 8) { /* the low bytes of the 8 lanes (values <= 0x7E) */
        __m256i w = _mm256_packus_epi32(v, v); /* words 0-3 | 4-7, twice */
        __m128i b = _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
        _mm_storel_epi64((__m128i *)out, _mm_unpacklo_epi32(b, _mm_srli_si128(b, 8)));
        return;
    }
    _Alignas(32) uint32_t t[8];
    _mm256_store_si256((__m256i *)t, v);
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)t[i];
}


/* The amax of the 16x16 tile at x + e0 (rows stride apart) per lane pair
 * (lane maxima, for hmax8x8), as integer maxima of the |x| patterns: the
 * float order when no lane is NaN (bf16: 16-bit maxima, the pairs folded
 * and shifted up to fp32 patterns). */
T256 static inline __attribute__((always_inline)) __m256i tile_amax_bits8(const void *x, const int bf16,
                                                                          size_t stride, size_t e0)
{
    __m256i m0 = _mm256_setzero_si256(), m1 = _mm256_setzero_si256();
    if (bf16) {
        const __m256i absm = _mm256_set1_epi16(0x7FFF);
        SIMD_UNROLL
        for (size_t r = 0; r < 16; r += 2) {
            const uint16_t *p = (const uint16_t *)x + r * stride + e0;
            m0 = _mm256_max_epu16(m0, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)p), absm));
            m1 = _mm256_max_epu16(m1, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(p + stride)), absm));
        }
        m0 = _mm256_max_epu16(m0, m1);
        return _mm256_slli_epi32(_mm256_max_epu16(m0, _mm256_srli_epi32(m0, 16)), 16);
    }
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
    SIMD_UNROLL
    for (size_t r = 0; r < 16; r++) {
        const float *p = (const float *)x + r * stride + e0;
        m0 = _mm256_max_epu32(m0, _mm256_and_si256(_mm256_castps_si256(_mm256_loadu_ps(p)), absm));
        m1 = _mm256_max_epu32(m1, _mm256_and_si256(_mm256_castps_si256(_mm256_loadu_ps(p + 8)), absm));
    }
    return _mm256_max_epu32(m0, m1);
}

/* The amaxes of 16x16 tiles b0 .. b0+n-1 (n <= 8; 0 past n) per lane
 * pair (lane maxima, for hmax8x8): integer maxima (tile_amax_bits8); a
 * group of 8 tiles with a NaN (a pattern above Inf's) is redone with
 * vmaxps, which drops NaN by its operand order. */
T256 static inline __attribute__((always_inline)) void tile_group_amax8(const void *x, const int bf16, size_t stride,
                                                                         size_t b0, size_t n, __m256 a[8])
{
    __m256i mx = _mm256_setzero_si256();
    SIMD_UNROLL
    for (size_t i = 0; i < 8; i++) {
        __m256i m = i < n ? tile_amax_bits8(x, bf16, stride, 16 * (b0 + i)) : _mm256_setzero_si256();
        a[i] = _mm256_castsi256_ps(m);
        mx = _mm256_max_epu32(mx, m);
    }
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(mx, _mm256_set1_epi32(0x7F800000)), _mm256_set1_epi32(-1)))
        SIMD_UNROLL
        for (size_t i = 0; i < 8; i++) {
            __m256 m = _mm256_setzero_ps();
            if (i < n)
                for (size_t r = 0; r < 16; r++) {
                    size_t e = r * stride + 16 * (b0 + i);
                    m = _mm256_max_ps(abs8(load8(x, bf16, e)), m);
                    m = _mm256_max_ps(abs8(load8(x, bf16, e + 8)), m);
                }
            a[i] = m;
        }
}


/* Magnitude codes of two blocks (a0: elements 0-7 of the first, a1: 8-15;
 * b0, b1 of the second) and their sign words sa = vpackssdw(ya0, ya1), sb
 * = vpackssdw(yb0, yb1) of the y patterns the codes came from (NaN-free)
 * -> their 16 packed bytes. Signed saturation keeps each lane's sign
 * through the two packs (-0's 0x80000000 included), so a byte below zero
 * gives E2M1's 8, joined at byte level: per two blocks 3 packs, a compare,
 * an and and an or instead of 4 x (shift, and, or) on the codes. */
T256 static inline void pack8x4_signs(__m256i a0, __m256i a1, __m256i b0, __m256i b1, __m256i sa, __m256i sb,
                                      uint8_t *out)
{
    __m256i by = _mm256_packus_epi16(_mm256_packus_epi32(a0, a1), _mm256_packus_epi32(b0, b1));
    __m256i sg = _mm256_cmpgt_epi8(_mm256_setzero_si256(), _mm256_packs_epi16(sa, sb));
    by = _mm256_or_si256(by, _mm256_and_si256(sg, _mm256_set1_epi8(8)));
    by = _mm256_permutevar8x32_epi32(by, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    __m256i p = _mm256_maddubs_epi16(by, _mm256_set1_epi16(0x1001));
    p = _mm256_packus_epi16(p, p);
    _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(_mm256_permute4x64_epi64(p, 0x08)));
}

/* E2M1 magnitude of one vector: RN, or SR with the 8 random bytes at r8. */
T256 static inline __attribute__((always_inline)) __m256i row_mag8(__m256 y, const int use_sr, const uint8_t *r8)
{
    if (use_sr) return sk_e2m1_sr_mag(y, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)r8)));
    return sk_e2m1_rn_mag(y);
}

/* Codes of n < 8 blocks (a row's last) without NaN held in v[2i],
 * v[2i+1], with encode multipliers inv[i] and (SR) random bytes rb + 16 i:
 * their sign bits need no NaN mask. */
T256 static inline __attribute__((always_inline)) void row_codes8_nonan(const __m256 v[16], const float inv[8],
                                                                         const int use_sr, const uint8_t *rb,
                                                                         size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        __m256 f = _mm256_set1_ps(inv[i]);
        __m256 y0 = _mm256_mul_ps(v[2 * i], f), y1 = _mm256_mul_ps(v[2 * i + 1], f);
        pack8x2(_mm256_or_si256(row_mag8(y0, use_sr, use_sr ? rb + 16 * i : NULL), sign_code8(y0)),
                _mm256_or_si256(row_mag8(y1, use_sr, use_sr ? rb + 16 * i + 8 : NULL), sign_code8(y1)), out + 8 * i);
    }
}

T256 static void row_codes8(const __m256 v[16], const float inv[8], const uint8_t *rb, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        __m256 f = _mm256_set1_ps(inv[i]);
        __m256 y0 = _mm256_mul_ps(v[2 * i], f), y1 = _mm256_mul_ps(v[2 * i + 1], f);
        __m256i c0, c1;
        if (rb) {
            c0 = sk_e2m1_sr(y0, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(rb + 16 * i))));
            c1 = sk_e2m1_sr(y1, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(rb + 16 * i + 8))));
        } else {
            c0 = sk_e2m1_rn(y0);
            c1 = sk_e2m1_rn(y1);
        }
        pack8x2(c0, c1, out + 8 * i);
    }
}

/* A bf16 block (16 elements at x + e) as two fp32 vectors in "unpack
 * order": lo holds elements 0-3, 8-11 and hi 4-7, 12-15 (one load and two
 * unpacks instead of two widening loads and two shifts). */
T256 static inline void load_bf16_block_u(const void *x, size_t e, __m256 *lo, __m256 *hi)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)x + e));
    *lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), h));
    *hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), h));
}

/* The 16 random bytes of a block at r as two vectors of one byte per lane
 * in unpack order (load_bf16_block_u). */
T256 static inline void rand_block_u(const uint8_t *r, __m256i *r0, __m256i *r1)
{
    __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)r));
    *r0 = _mm256_unpacklo_epi16(w, _mm256_setzero_si256());
    *r1 = _mm256_unpackhi_epi16(w, _mm256_setzero_si256());
}

/* pack8x4_signs for blocks in unpack order (a0, b0: elements 0-3, 8-11;
 * a1, b1: 4-7, 12-15): the packs already leave each block's elements in
 * order within each 128-bit half, so one dword permutation at the end
 * replaces pack8x4_signs's two. */
T256 static inline void pack8x4_signs_u(__m256i a0, __m256i a1, __m256i b0, __m256i b1, __m256i sa, __m256i sb,
                                        uint8_t *out)
{
    __m256i by = _mm256_packus_epi16(_mm256_packus_epi32(a0, a1), _mm256_packus_epi32(b0, b1));
    __m256i sg = _mm256_cmpgt_epi8(_mm256_setzero_si256(), _mm256_packs_epi16(sa, sb));
    by = _mm256_or_si256(by, _mm256_and_si256(sg, _mm256_set1_epi8(8)));
    /* bytes: a 0-7, b 0-7 | a 8-15, b 8-15 -> words of e[2j] + 16*e[2j+1] */
    __m256i p = _mm256_maddubs_epi16(by, _mm256_set1_epi16(0x1001));
    p = _mm256_packus_epi16(p, p); /* dwords: a lo, b lo, (copy) | a hi, b hi, (copy) */
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5));
    _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(p));
}

/* Codes of the 8 blocks at x + 16*b0, without NaN, with encode
 * multipliers inv[i] and (SR) random bytes rb + 16 i: loaded here two
 * blocks at a time and packed as they are done (computing all 16 code
 * vectors first, from 16 loaded vectors, spilled them). bf16 blocks are
 * loaded in unpack order. */
T256 static inline __attribute__((always_inline)) void row_codes8x8(const void *x, const int bf16, size_t b0,
                                                                     const float inv[8], const int use_sr,
                                                                     const uint8_t *rb, uint8_t *out)
{
    SIMD_UNROLL
    for (size_t i = 0; i < 8; i += 2) {
        __m256 f0 = _mm256_set1_ps(inv[i]), f1 = _mm256_set1_ps(inv[i + 1]);
        size_t e = 16 * (b0 + i);
        __m256 xa0, xa1, xb0, xb1;
        if (bf16) {
            load_bf16_block_u(x, e, &xa0, &xa1);
            load_bf16_block_u(x, e + 16, &xb0, &xb1);
        } else {
            xa0 = load8(x, 0, e);
            xa1 = load8(x, 0, e + 8);
            xb0 = load8(x, 0, e + 16);
            xb1 = load8(x, 0, e + 24);
        }
        __m256 ya0 = _mm256_mul_ps(xa0, f0), ya1 = _mm256_mul_ps(xa1, f0);
        __m256 yb0 = _mm256_mul_ps(xb0, f1), yb1 = _mm256_mul_ps(xb1, f1);
        /* the sign words first: computed last, gcc spilled more */
        __m256i sa = _mm256_packs_epi32(_mm256_castps_si256(ya0), _mm256_castps_si256(ya1));
        __m256i sb = _mm256_packs_epi32(_mm256_castps_si256(yb0), _mm256_castps_si256(yb1));
        __m256i ma0, ma1, mb0, mb1;
        if (use_sr && !bf16) {
            const uint8_t *r = rb + 16 * i;
            ma0 = row_mag8(ya0, 1, r);
            ma1 = row_mag8(ya1, 1, r + 8);
            mb0 = row_mag8(yb0, 1, r + 16);
            mb1 = row_mag8(yb1, 1, r + 24);
        } else if (use_sr) {
            __m256i ra0, ra1, rb0, rb1;
            rand_block_u(rb + 16 * i, &ra0, &ra1);
            rand_block_u(rb + 16 * i + 16, &rb0, &rb1);
            ma0 = sk_e2m1_sr_mag(ya0, ra0);
            ma1 = sk_e2m1_sr_mag(ya1, ra1);
            mb0 = sk_e2m1_sr_mag(yb0, rb0);
            mb1 = sk_e2m1_sr_mag(yb1, rb1);
        } else {
            ma0 = sk_e2m1_rn_mag(ya0);
            ma1 = sk_e2m1_rn_mag(ya1);
            mb0 = sk_e2m1_rn_mag(yb0);
            mb1 = sk_e2m1_rn_mag(yb1);
        }
        if (bf16) pack8x4_signs_u(ma0, ma1, mb0, mb1, sa, sb, out + 8 * i);
        else pack8x4_signs(ma0, ma1, mb0, mb1, sa, sb, out + 8 * i);
    }
}

/* Loads the n <= 8 blocks at x + 16*b0 (zeros past n) into v and returns
 * whether any lane is NaN (an |x| pattern above Inf's). */
T256 static inline __attribute__((always_inline)) int row_load8(const void *x, const int bf16, size_t b0, size_t n,
                                                                 __m256 v[16])
{
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i mx = _mm256_setzero_si256();
    SIMD_UNROLL
    for (size_t i = 0; i < 8; i++) {
        size_t e = 16 * (b0 + i);
        v[2 * i] = i < n ? load8(x, bf16, e) : _mm256_setzero_ps();
        v[2 * i + 1] = i < n ? load8(x, bf16, e + 8) : _mm256_setzero_ps();
        mx = _mm256_max_epu32(mx, _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(v[2 * i]), absm),
                                                   _mm256_and_si256(_mm256_castps_si256(v[2 * i + 1]), absm)));
    }
    return !_mm256_testz_si256(_mm256_cmpgt_epi32(mx, _mm256_set1_epi32(0x7F800000)), absm);
}

/* Whether any of the n <= 8 blocks at x + 16*b0 holds a NaN (bf16: on the
 * 16-bit patterns, 0x7F80 being Inf's). */
T256 static inline __attribute__((always_inline)) int row_nan8(const void *x, const int bf16, size_t b0, size_t n)
{
    if (bf16) {
        __m256i mx = _mm256_setzero_si256();
        SIMD_UNROLL
        for (size_t i = 0; i < 8; i++)
            if (i < n)
                mx = _mm256_max_epu16(mx, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)((const uint16_t *)x +
                                                                                                 16 * (b0 + i))),
                                                           _mm256_set1_epi16(0x7FFF)));
        return !_mm256_testz_si256(_mm256_cmpgt_epi16(mx, _mm256_set1_epi16(0x7F80)), _mm256_set1_epi16(-1));
    }
    __m256 v[16];
    return row_load8(x, 0, b0, n, v);
}

/* a[i] = the amax of block b0 + i (0 past n) with NaN ignored, and whether
 * any lane is NaN: integer maxima of the |x| patterns (the float order)
 * when there is no NaN, float maxima of reloaded blocks otherwise (every
 * loop unrolled: one with a variable index kept the blocks and a[] on the
 * stack). */
T256 static inline __attribute__((always_inline)) int row_amax8(const void *x, const int bf16, size_t b0, size_t n,
                                                                 __m256 a[8])
{
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i mx = _mm256_setzero_si256();
    SIMD_UNROLL
    for (size_t i = 0; i < 8; i++) {
        size_t e = 16 * (b0 + i);
        __m256i m = _mm256_setzero_si256();
        if (i < n && bf16) { /* pairs of |x| patterns as 16-bit maxima, shifted up to fp32 patterns */
            __m256i h = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)((const uint16_t *)x + e)),
                                         _mm256_set1_epi16(0x7FFF));
            m = _mm256_slli_epi32(_mm256_max_epu16(h, _mm256_srli_epi32(h, 16)), 16);
        } else if (i < n) {
            m = _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(load8(x, 0, e)), absm),
                                 _mm256_and_si256(_mm256_castps_si256(load8(x, 0, e + 8)), absm));
        }
        a[i] = _mm256_castsi256_ps(m);
        mx = _mm256_max_epu32(mx, m);
    }
    int has_nan = !_mm256_testz_si256(_mm256_cmpgt_epi32(mx, _mm256_set1_epi32(0x7F800000)), absm);
    if (has_nan)
        SIMD_UNROLL
        for (size_t i = 0; i < 8; i++) {
            size_t e = 16 * (b0 + i);
            a[i] = i < n ? _mm256_max_ps(absnn8(load8(x, bf16, e)), absnn8(load8(x, bf16, e + 8))) : _mm256_setzero_ps();
        }
    return has_nan;
}

/* Phase 1 of the row kernels (simd_te_skel.h) for blocks b0 .. b0+n-1 (n
 * <= 8): scale bytes, encode multipliers inv[0..7], whether a lane is NaN. */
T256 static inline __attribute__((always_inline)) int row_group_scales8(const nvfp4_simd_te_consts *k, const void *x,
                                                                         const int bf16, size_t b0, size_t n,
                                                                         uint8_t *scale, float *inv)
{
    __m256 a[8];
    int nan = row_amax8(x, bf16, b0, n, a);
    __m256i sb = sk_te_scale(k, hmax8x8(a));
    store_bytes8(sb, n, scale + b0);
    _mm256_store_ps(inv, sk_te_inv(k, sb));
    return nan;
}

/* Phase 3: codes of blocks b0 .. b0+n-1 (multipliers inv[], SR bytes rb +
 * 16 i): NaN-free full groups by row_codes8x8. */
T256 static inline __attribute__((always_inline)) void row_group_codes8(const void *x, const int bf16, size_t b0,
                                                                         size_t n, const float *inv, const uint8_t *rb,
                                                                         const int use_sr, int has_nan, uint8_t *out)
{
    if (!has_nan && n == 8) {
        row_codes8x8(x, bf16, b0, inv, use_sr, rb, out + 8 * b0);
        return;
    }
    __m256 v[16];
    (void)row_load8(x, bf16, b0, n, v);
    if (has_nan) row_codes8(v, inv, use_sr ? rb : NULL, n, out + 8 * b0);
    else row_codes8_nonan(v, inv, use_sr, rb, n, out + 8 * b0);
}

/* ---- columnwise --------------------------------------------------------------- */

/* The 16 rows of group g, columns c0 .. c0 + 8m - 1 (m <= 4 tiles) as fp32,
 * tile u's row i in kept[16u + i], for the RHT tiles: row by row, each
 * row's 8m columns (one 64-byte line when aligned) read together. Tile by
 * tile, the 16 rows, which share L1 sets when the row stride is a multiple
 * of 4 KiB, can evict each other's lines before the next tile of the line
 * reads them (RHT + quantize per core in cache: fp32 +5%, bf16 +11%; the
 * plain columnwise kernel did not gain and loads its tiles directly). */
T256 static inline __attribute__((always_inline)) void col_copy_rows8(const nvfp4_simd_col_job *j, const int bf16,
                                                                       size_t g, size_t c0, size_t m, __m256 *kept)
{
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) {
        size_t e = (16 * g + i) * j->cols + c0;
        SIMD_UNROLL
        for (size_t u = 0; u < 4; u++)
            if (u < m) kept[16 * u + i] = load8(j->x, bf16, e + 8 * u);
    }
}

/*
 * Columnwise tiles of 16 rows x 8 columns, in two phases per (group, strip)
 * as the row kernel (avx2_row_fused): first every tile's amax, scale bytes
 * and encode multipliers, then every tile's codes. One pass per tile chains
 * loads, RHT, amax, scale, multiplier and codes in one iteration, longer
 * than the out-of-order window; split, the iterations of each phase are
 * independent. The codes phase reloads the input (in L1) or, with RHT, the
 * transform kept by the first phase.
 */

/* Phase 1 of a tile: its 16 rows loaded into keep[] (RHT: put there by
 * col_copy_rows8 and transformed in place), the per-column amax with NaN
 * ignored (returned) and whether a lane holds NaN (*nan). The amax is
 * integer maxima of the |v| patterns (the float order) in 4 chains: a lane
 * above Inf's pattern holds a NaN, and then the float maxima, which drop
 * NaN, are taken instead (every loop unrolled or reading keep[]: a loop
 * over a local v[] made gcc keep a copy of the whole tile on the stack). */
T256 static inline __attribute__((always_inline)) __m256 col_tile_amax8(const nvfp4_simd_col_job *j, const int bf16,
                                                                         const int rht, size_t g, size_t c0,
                                                                         __m256 *keep, int *nan)
{
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i t[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    if (rht) {
        __m256 v[16];
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) v[i] = keep[i];
        sk_rht_tile(j, bf16, g, c0, v);
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) {
            keep[i] = v[i];
            t[i & 3] = _mm256_max_epu32(t[i & 3], _mm256_and_si256(_mm256_castps_si256(v[i]), absm));
        }
    } else { /* straight from the input into keep[] */
        SIMD_UNROLL
        for (size_t i = 0; i < 16; i++) {
            __m256 x = load8(j->x, bf16, (16 * g + i) * j->cols + c0);
            keep[i] = x;
            t[i & 3] = _mm256_max_epu32(t[i & 3], _mm256_and_si256(_mm256_castps_si256(x), absm));
        }
    }
    t[0] = _mm256_max_epu32(_mm256_max_epu32(t[0], t[1]), _mm256_max_epu32(t[2], t[3]));
    *nan = !_mm256_testz_si256(_mm256_cmpgt_epi32(t[0], _mm256_set1_epi32(0x7F800000)), _mm256_set1_epi32(-1));
    if (!*nan) return _mm256_castsi256_ps(t[0]);
    __m256 am = _mm256_setzero_ps();
    for (int i = 0; i < 16; i++) am = _mm256_max_ps(abs8(keep[i]), am);
    return am;
}

/* Phase 2 of a tile: codes of the 8 blocks (columns) from the rows in
 * kept, the multipliers inv, into the stage. */
T256 static inline __attribute__((always_inline)) void col_tile_codes8(const nvfp4_simd_col_job *j, const int use_sr,
                                                                        size_t g, size_t c0, const __m256 *kept,
                                                                        __m256 inv, int has_nan, uint64_t q[8])
{
    const __m256 *v = kept; /* read in place: a local copy went through the stack */
    /* nibble i&7 of word i>>3 of each lane = code of row i: the lane's 8
     * output bytes, element 2p in the low nibble */
    __m256i wd[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    if (use_sr) {
        __m256i w[4];
        sk_col_sr_words(j, g, c0, w);
        if (!has_nan)
            SIMD_UNROLL
            for (int i = 0; i < 16; i++) {
                __m256 y = _mm256_mul_ps(v[i], inv);
                __m256i r = _mm256_and_si256(_mm256_srli_epi32(w[i >> 2], 8 * (i & 3)), _mm256_set1_epi32(255));
                __m256i c = _mm256_or_si256(sk_e2m1_sr_mag(y, r), sign_code8(y));
                wd[i >> 3] = _mm256_or_si256(wd[i >> 3], _mm256_slli_epi32(c, 4 * (i & 7)));
            }
        else
            for (int i = 0; i < 16; i++) {
                __m256 y = _mm256_mul_ps(v[i], inv);
                __m256i r = _mm256_and_si256(_mm256_srli_epi32(w[i >> 2], 8 * (i & 3)), _mm256_set1_epi32(255));
                wd[i >> 3] = _mm256_or_si256(wd[i >> 3], _mm256_slli_epi32(sk_e2m1_sr(y, r), 4 * (i & 7)));
            }
    } else if (!has_nan) {
        /* RN without NaN: magnitudes in one rounding; each row's code
         * built in the top nibble (mag << 28 | sign bit of y) and shifted in
         * from the top (wd >> 4 | code): after rows 8h..8h+7 in order, row
         * 8h+p sits in nibble p. One constant instead of 8 sign masks. */
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) {
            __m256 y = _mm256_mul_ps(v[i], inv);
            __m256i top = _mm256_or_si256(_mm256_slli_epi32(sk_e2m1_rn_mag(y), 28),
                                          _mm256_and_si256(_mm256_castps_si256(y), _mm256_set1_epi32((int)0x80000000u)));
            wd[i >> 3] = _mm256_or_si256(_mm256_srli_epi32(wd[i >> 3], 4), top);
        }
    } else {
        for (int i = 0; i < 16; i++) {
            __m256 y = _mm256_mul_ps(v[i], inv);
            wd[i >> 3] = _mm256_or_si256(wd[i >> 3], _mm256_slli_epi32(sk_e2m1_rn(y), 4 * (i & 7)));
        }
    }
    /* column c's 8 bytes: word c of wd[0] (rows 0-7), then of wd[1];
     * col_tiles_flush transposes them into the output rows */
    _mm256_store_si256((__m256i *)q, _mm256_unpacklo_epi32(wd[0], wd[1]));       /* columns 0, 1 | 4, 5 */
    _mm256_store_si256((__m256i *)(q + 4), _mm256_unpackhi_epi32(wd[0], wd[1])); /* columns 2, 3 | 6, 7 */
}

/* Tiles per (group, strip): NVFP4_SIMD_STAGE_COLS / 8. */
#define COL_TILES (NVFP4_SIMD_STAGE_COLS / 8)

/* A strip's quantized tiles in tile order (as simd_avx512.c's col_tiles):
 * each tile's 8 blocks as two vector stores and its 8 scale bytes as one
 * store, instead of 16 scattered stores into the output rows' stage;
 * col_tiles_flush transposes a column of tiles into whole output lines. */
typedef struct {
    _Alignas(32) uint64_t q[COL_TILES][8][8]; /* [tile][group slot][qword] */
    _Alignas(32) uint8_t scale[COL_TILES][8][8];
} col_tiles;

/* 4x4 transpose of 64-bit words: out[k] = {r[0][k], ..., r[3][k]}. */
T256 static inline __attribute__((always_inline)) void transpose4x4_epi64(const __m256i r[4], __m256i out[4])
{
    __m256i t0 = _mm256_unpacklo_epi64(r[0], r[1]), t1 = _mm256_unpackhi_epi64(r[0], r[1]); /* words 0,2 / 1,3 */
    __m256i t2 = _mm256_unpacklo_epi64(r[2], r[3]), t3 = _mm256_unpackhi_epi64(r[2], r[3]);
    out[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    out[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    out[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    out[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* 8x8 transpose of bytes: row t of in (8 bytes at in + 8t) -> column t of
 * out (byte 8c + t of out = byte c of row t). */
T256 static inline __attribute__((always_inline)) void transpose8x8_bytes(const uint8_t in[64], uint8_t out[64])
{
    __m128i r[8], t[4], u[4];
    SIMD_UNROLL
    for (int i = 0; i < 8; i++) r[i] = _mm_loadl_epi64((const __m128i *)(in + 8 * i));
    SIMD_UNROLL
    for (int i = 0; i < 4; i++) t[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]); /* rows 2i, 2i+1 interleaved */
    u[0] = _mm_unpacklo_epi16(t[0], t[1]); /* columns 0-3 of rows 0-3 */
    u[1] = _mm_unpackhi_epi16(t[0], t[1]); /* columns 4-7 of rows 0-3 */
    u[2] = _mm_unpacklo_epi16(t[2], t[3]);
    u[3] = _mm_unpackhi_epi16(t[2], t[3]);
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi32(u[0], u[2]));      /* columns 0, 1 */
    _mm_storeu_si128((__m128i *)(out + 16), _mm_unpackhi_epi32(u[0], u[2])); /* columns 2, 3 */
    _mm_storeu_si128((__m128i *)(out + 32), _mm_unpacklo_epi32(u[1], u[3])); /* columns 4, 5 */
    _mm_storeu_si128((__m128i *)(out + 48), _mm_unpackhi_epi32(u[1], u[3])); /* columns 6, 7 */
}

/* A column of tiles' 8 output lines (l[c]: column c0 + c, groups 0-3 and
 * 4-7) by four 4x4 transposes of 64-bit words, and their scale bytes (8
 * per column at sc + 8c) by an 8x8 byte transpose. */
typedef struct {
    __m256i v[2];
} col_line;
T256 static inline __attribute__((always_inline)) void col_tile_lines8(const col_tiles *tb, size_t t, col_line l[8],
                                                                        uint8_t sc[64])
{
    SIMD_UNROLL
    for (int u = 0; u < 2; u++)
        SIMD_UNROLL
        for (int h = 0; h < 2; h++) {
            __m256i r[4], out[4];
            SIMD_UNROLL
            for (int i = 0; i < 4; i++) r[i] = _mm256_load_si256((const __m256i *)(tb->q[t][4 * h + i] + 4 * u));
            transpose4x4_epi64(r, out);
            SIMD_UNROLL
            for (int k = 0; k < 4; k++) l[4 * (k / 2) + k % 2 + 2 * u].v[h] = out[k]; /* qword k of unpack u */
        }
    transpose8x8_bytes(tb->scale[t][0], sc);
}

T256 static inline void col_store_line8(void *p, col_line l, int stream)
{
    if (stream) {
        _mm256_stream_si256((__m256i *)p, l.v[0]);
        _mm256_stream_si256((__m256i *)p + 1, l.v[1]);
    } else {
        _mm256_store_si256((__m256i *)p, l.v[0]);
        _mm256_store_si256((__m256i *)p + 1, l.v[1]);
    }
}

/* The tiles of one strip (columns s0..s1-1, groups g0..g1-1), in two
 * phases per group: every tile's amax, scale bytes and encode multipliers,
 * then every tile's codes (see above), with simd_avx512.c's L2 prefetch:
 * per 64-byte line of the input rows (16 fp32 or 32 bf16 columns), the
 * rows this position needs two groups later. Its L1 prefetch of the next
 * tile's rows is left out: the 16 rows share L1 sets when the row stride is
 * a multiple of 4 KiB, and the kernel was faster without it
 * (docs/performance.md, "Measured design choices"). */
T256 static inline __attribute__((always_inline)) void col_strip8(const nvfp4_simd_col_job *j, const int bf16,
                                                                   const int rht, const int use_sr, size_t g0,
                                                                   size_t g1, size_t s0, size_t s1, col_tiles *tb)
{
    size_t es = bf16 ? 2u : 4u, nt = (s1 - s0) / 8;
    __m256 am[COL_TILES], inv[COL_TILES];
    int nan[COL_TILES];
    /* the strip's tiles (RHT'd) as phase 1 loaded them, 16 KiB: a reload
     * from the input would miss L1, whose sets the 16 rows of a tile share
     * when the row stride is a multiple of 4 KiB */
    __m256 kept[16 * COL_TILES];
    for (size_t g = g0; g < g1; g++) {
        for (size_t t = 0; t < nt; t++) {
            size_t c0 = s0 + 8 * t;
            if ((8 * t * es) % 64 == 0) sk_col_prefetch(j, bf16, g, g0, g1, c0, s1); /* once per 64-byte line */
            if (rht && t % (8 / es) == 0) /* the tiles of one 64-byte line of each row (aligned rows) */
                col_copy_rows8(j, bf16, g, c0, nt - t < 8 / es ? nt - t : 8 / es, kept + 16 * t);
            am[t] = col_tile_amax8(j, bf16, rht, g, c0, kept + 16 * t, &nan[t]);
        }
        if (j->tile16) /* cols % 16 == 0: tiles 2u, 2u+1 share one scale */
            for (size_t t = 0; t < nt; t += 2) am[t] = am[t + 1] = _mm256_set1_ps(hmax8(_mm256_max_ps(am[t], am[t + 1])));
        for (size_t t = 0; t < nt; t++) {
            __m256i sb = sk_te_scale(&j->k, am[t]);
            inv[t] = _mm256_i32gather_ps(j->inv_tab, sb, 4); /* sk_te_inv without its division */
            /* the 8 scale bytes (each < 256) packed: lane 0's words 0-3, lane 1's */
            __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(sb, sb), _mm256_setzero_si256());
            _mm_storel_epi64((__m128i *)tb->scale[t][g - g0],
                             _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)));
        }
        for (size_t t = 0; t < nt; t++)
            col_tile_codes8(j, use_sr, g, s0 + 8 * t, kept + 16 * t, inv[t], nan[t], tb->q[t][g - g0]);
    }
}



/* ---- dequantize ------------------------------------------------------------ */


/* ---- MXFP4 1x32 (as simd_avx512.c's mx_* helpers) ----------------------------- */



/* ---- generic driver (simd_generic.c's leaves) -----------------------------------
 *
 * Each leaf re-expresses, lane-wise, the src/core/ function named in its
 * comment with the same fp32 (or binary64) operations in the same order;
 * the per-block state (factor) comes from nvfp4_core_block_prepare. The
 * avx512 variant uses these leaves too. */

/* nvfp4_core_scaled for the cast encodes: x * factor (ENC_TE_RECIP,
 * ENC_RECIP_DIV), x / factor (ENC_DIV_TOTAL, and ENC_POW2 / ENC_POW2_FP32
 * with their power-of-two divisors), or ENC_TE_BF16's fma(x, c,
 * +0) as the core computes it: the binary64 product (exact: 24 x 8
 * significant bits) plus +0, rounded once to fp32. */
enum { GEN_MUL = 0, GEN_DIV = 1, GEN_BF16 = 2 };

static int gen_enc_class(int enc)
{
    if (enc == NVFP4_CORE_ENC_DIV_TOTAL || enc == NVFP4_CORE_ENC_POW2 || enc == NVFP4_CORE_ENC_POW2_FP32) return GEN_DIV;
    if (enc == NVFP4_CORE_ENC_TE_BF16) return GEN_BF16;
    return GEN_MUL;
}

T256 static inline __attribute__((always_inline)) __m256 gen_scaled8(const int cls, __m256 x, __m256 f)
{
    if (cls == GEN_MUL) return _mm256_mul_ps(x, f);
    if (cls == GEN_DIV) return _mm256_div_ps(x, f);
    __m256d c = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
    __m256d lo = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), c), _mm256_setzero_pd());
    __m256d hi = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), c), _mm256_setzero_pd());
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

/* nvfp4_core_e2m1_cast's special-value policies on top of the cuda-fp4
 * code (sk_e2m1_rn / sk_e2m1_sr: sign kept, NaN -> 0x7). */
T256 static inline __attribute__((always_inline)) __m256i gen_special8(const int special, __m256 y, __m256i code)
{
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(y, y, _CMP_UNORD_Q));
    __m256i zero = _mm256_castps_si256(_mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_EQ_OQ));
    switch (special) {
    case NVFP4_CORE_SPECIAL_PYREF: return _mm256_andnot_si256(_mm256_or_si256(nan, zero), code);
    case NVFP4_CORE_SPECIAL_TORCHAO: return blendv_i(code, _mm256_set1_epi32(3), nan);
    case NVFP4_CORE_SPECIAL_MODELOPT: return _mm256_andnot_si256(zero, code);
    default: return code;
    }
}

/* nvfp4_core_encode_elem of 8 lanes for a cast encode. */
T256 static inline __attribute__((always_inline)) __m256i gen_code8(const int cls, const int special, __m256 x, __m256 f,
                                                                    const uint8_t *r8)
{
    __m256 y = gen_scaled8(cls, x, f);
    __m256i c = r8 ? sk_e2m1_sr(y, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)r8))) : sk_e2m1_rn(y);
    return gen_special8(special, y, c);
}

T256 static inline __attribute__((always_inline)) void gen_encode_cast(const int cls, const int special, const float *x,
                                                                       size_t nb, const float *factor,
                                                                       const uint8_t *rb, uint8_t *out)
{
    for (size_t b = 0; b < nb; b++) {
        __m256 f = _mm256_set1_ps(factor[b]);
        const uint8_t *r = rb ? rb + 16 * b : NULL;
        __m256i c0 = gen_code8(cls, special, _mm256_loadu_ps(x + 16 * b), f, r);
        __m256i c1 = gen_code8(cls, special, _mm256_loadu_ps(x + 16 * b + 8), f, r ? r + 8 : NULL);
        pack8x2(c0, c1, out + 8 * b);
    }
}

/* ENC_EXACT (nvfp4_core_e2m1_exact_mag): the magnitude is the number of
 * boundaries D*mid below |x| plus one where |x| equals an odd-indexed
 * boundary (the ties that go to the even code above), compared in binary64
 * like the core (every D*mid is exact). Valid for 0 < D < Inf, where the
 * boundaries increase; other blocks take the core per element. */
T256 static inline __m256i exact_count4(__m256d a, const __m256d bound[7])
{
    __m256i n = _mm256_setzero_si256();
    for (int k = 0; k < 7; k++) {
        n = _mm256_sub_epi64(n, _mm256_castpd_si256(_mm256_cmp_pd(bound[k], a, _CMP_LT_OQ)));
        if (k & 1) n = _mm256_sub_epi64(n, _mm256_castpd_si256(_mm256_cmp_pd(a, bound[k], _CMP_EQ_OQ)));
    }
    return n;
}

T256 static inline __m256i exact_code8(__m256 x, const __m256d bound[7])
{
    __m256 ax = abs8(x);
    __m256i lo = exact_count4(_mm256_cvtps_pd(_mm256_castps256_ps128(ax)), bound);
    __m256i hi = exact_count4(_mm256_cvtps_pd(_mm256_extractf128_ps(ax, 1)), bound);
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i mag = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(lo, even), _mm256_permutevar8x32_epi32(hi, even), 0xF0);
    __m256i code = _mm256_or_si256(mag, sign_code8(x));
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return blendv_i(code, _mm256_set1_epi32((int)NVFP4_E2M1_NAN_CODE), nan);
}

T256 static void gen_encode_exact(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor,
                                  uint8_t *out)
{
    double mid[7];
    for (uint32_t k = 0; k < 7u; k++)
        mid[k] = ((double)nvfp4_core_e2m1_mag_value(k) + (double)nvfp4_core_e2m1_mag_value(k + 1u)) * 0.5;
    for (size_t b = 0; b < nb; b++) {
        float d = factor[b];
        if (!(d > 0.0f && d <= FLT_MAX)) {
            nvfp4_core_block blk = {0u, d};
            for (size_t i = 0; i < 16; i += 2)
                out[8 * b + i / 2] =
                    (uint8_t)(nvfp4_core_encode_elem(r, &blk, x[16 * b + i], NVFP4_CORE_RN, 0) |
                              (nvfp4_core_encode_elem(r, &blk, x[16 * b + i + 1], NVFP4_CORE_RN, 0) << 4));
            continue;
        }
        __m256d bound[7];
        for (int k = 0; k < 7; k++) bound[k] = _mm256_set1_pd((double)d * mid[k]);
        pack8x2(exact_code8(_mm256_loadu_ps(x + 16 * b), bound), exact_code8(_mm256_loadu_ps(x + 16 * b + 8), bound),
                out + 8 * b);
    }
}

/* ENC_GGML_NEAREST (nvfp4_core_ggml_nearest): the same fp32 errors in the
 * same order, a candidate taken only when its error is strictly lower (the
 * first minimum; NaN never wins), searched over the magnitudes k = 0..7 of
 * |x| and given x's sign unless k = 0. Why the other eight need no search:
 * p(k + 8) = -p(k) exactly; with q = p(k) > 0 the candidate of x's sign
 * has the error fl(|q - |x||) and the other fl(q + |x|), which is >= both
 * that error and |x| (rounding is monotone). For x >= 0 the negative
 * candidates thus never beat their earlier positive twins; for x < 0 the
 * positive ones never beat code 0, whose error |x| comes first. Codes 0
 * and 8 tie (|0 - x| = |-0 - x|): 0 wins, as in the core. */
T256 static void gen_encode_ggml(const float *x, size_t nb, const float *factor, uint8_t *out)
{
    for (size_t b = 0; b < nb; b++) {
        __m256 p[8];
        for (uint8_t k = 1u; k < 8u; k++) p[k] = _mm256_set1_ps(nvfp4_core_e2m1_decode(k) * factor[b]);
        __m256i c[2];
        for (int h = 0; h < 2; h++) {
            __m256 v = _mm256_loadu_ps(x + 16 * b + 8 * h), a = abs8(v);
            __m256 best_err = a; /* |0 - x| */
            __m256i best = _mm256_setzero_si256();
            for (int k = 1; k < 8; k++) {
                __m256 err = abs8(_mm256_sub_ps(p[k], a));
                __m256 lt = _mm256_cmp_ps(err, best_err, _CMP_LT_OQ);
                best = blendv_i(best, _mm256_set1_epi32(k), _mm256_castps_si256(lt));
                best_err = _mm256_min_ps(err, best_err); /* = the blend: err < best_err picks err, NaN keeps best_err */
            }
            __m256i nz = _mm256_xor_si256(_mm256_cmpeq_epi32(best, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
            c[h] = _mm256_or_si256(best, _mm256_and_si256(sign_code8(v), nz));
        }
        pack8x2(c[0], c[1], out + 8 * b);
    }
}

/* One instance per encode class, special-value policy and rounding: the
 * policy's compares and the SR loads are resolved at compile time. */
#define GEN_CAST_SPECIAL(cls, sp)                                                                              \
    case sp:                                                                                                   \
        if (rb) gen_encode_cast(cls, sp, x, nb, factor, rb, out);                                              \
        else gen_encode_cast(cls, sp, x, nb, factor, NULL, out);                                               \
        return;
#define GEN_CAST_FN(name, cls)                                                                                  \
    T256 static void name(int special, const float *x, size_t nb, const float *factor, const uint8_t *rb,      \
                          uint8_t *out)                                                                        \
    {                                                                                                          \
        switch (special) {                                                                                     \
            GEN_CAST_SPECIAL(cls, NVFP4_CORE_SPECIAL_PYREF)                                                    \
            GEN_CAST_SPECIAL(cls, NVFP4_CORE_SPECIAL_TORCHAO)                                                  \
            GEN_CAST_SPECIAL(cls, NVFP4_CORE_SPECIAL_MODELOPT)                                                 \
            GEN_CAST_SPECIAL(cls, NVFP4_CORE_SPECIAL_CUDA)                                                     \
        default: return; /* nvfp4_simd_gen_supports admits no other */                                        \
        }                                                                                                      \
    }
GEN_CAST_FN(gen_encode_mul, GEN_MUL)
GEN_CAST_FN(gen_encode_div, GEN_DIV)
GEN_CAST_FN(gen_encode_bf16, GEN_BF16)

T256 static void avx2_gen_encode(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor,
                                 const uint8_t *rb, uint8_t *out)
{
    if (r->enc_rule == NVFP4_CORE_ENC_EXACT) {
        gen_encode_exact(r, x, nb, factor, out);
        return;
    }
    if (r->enc_rule == NVFP4_CORE_ENC_GGML_NEAREST) {
        gen_encode_ggml(x, nb, factor, out);
        return;
    }
    switch (gen_enc_class(r->enc_rule)) {
    case GEN_DIV: gen_encode_div(r->special, x, nb, factor, rb, out); break;
    case GEN_BF16: gen_encode_bf16(r->special, x, nb, factor, rb, out); break;
    default: gen_encode_mul(r->special, x, nb, factor, rb, out); break;
    }
}

/* Block amaxes, 8 blocks at a time: fmaxf semantics (absnn8: NaN lanes
 * count as 0, Inf counts), then with nan_propagates the blocks holding a
 * NaN are folded again by the core (the first NaN, made positive, wins). */
T256 static void avx2_gen_block_amax(const float *x, size_t nb, int nanprop, float *bamax)
{
    for (size_t b0 = 0; b0 < nb; b0 += 8) {
        size_t n = nb - b0 < 8 ? nb - b0 : 8;
        __m256 a[8];
        int nan = 0;
        SIMD_UNROLL
        for (size_t i = 0; i < 8; i++) {
            a[i] = _mm256_setzero_ps();
            if (i < n) {
                __m256 v0 = _mm256_loadu_ps(x + 16 * (b0 + i)), v1 = _mm256_loadu_ps(x + 16 * (b0 + i) + 8);
                a[i] = _mm256_max_ps(absnn8(v0), absnn8(v1));
                if (nanprop && _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q),
                                                               _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q))))
                    nan |= 1 << i;
            }
        }
        _Alignas(32) float m[8];
        _mm256_store_ps(m, hmax8x8(a));
        for (size_t i = 0; i < n; i++) {
            bamax[b0 + i] = m[i];
            if ((nan >> i) & 1) {
                float acc = 0.0f;
                for (size_t k = 0; k < 16; k++) acc = nvfp4_core_amax_step(acc, x[16 * (b0 + i) + k], 1);
                bamax[b0 + i] = acc;
            }
        }
    }
}

T256 static float avx2_gen_amax_nan(const float *x, size_t n, int *any_nan)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, u0 = a0, u1 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        a0 = _mm256_max_ps(abs8(v0), a0); /* NaN loses: vmaxps returns the second operand */
        a1 = _mm256_max_ps(abs8(v1), a1);
        u0 = _mm256_or_ps(u0, _mm256_cmp_ps(v0, v0, _CMP_UNORD_Q));
        u1 = _mm256_or_ps(u1, _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q));
    }
    float m = hmax8(_mm256_max_ps(a0, a1));
    int nan = _mm256_movemask_ps(_mm256_or_ps(u0, u1)) != 0;
    for (; i < n; i++) {
        nan |= nvfp4_core_isnan(x[i]);
        m = nvfp4_core_amax_step(m, x[i], 0);
    }
    *any_nan = nan;
    return m;
}

T256 static void avx2_gen_sr_bytes(const nvfp4_simd_sr *sr, uint64_t block0, size_t nb, uint8_t *rb)
{
    _Alignas(32) uint8_t buf[128];
    for (size_t b0 = 0; b0 < nb; b0 += 8) {
        __m256i w[4];
        sk_sr_words_seq(sr, block0 + b0, w);
        size_t n = nb - b0 < 8 ? nb - b0 : 8;
        if (n == 8) {
            sr_bytes_aos8(w, rb + 16 * b0);
            continue;
        }
        sr_bytes_aos8(w, buf);
        memcpy(rb + 16 * b0, buf, 16 * n);
    }
}

/* E2M1 code -> value (nvfp4_core_e2m1_decode: 0x8 is -0). */
T256 static inline __m256 e2m1_decode8(__m256i code)
{
    const __m256 mag = _mm256_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f);
    __m256 v = _mm256_permutevar8x32_ps(mag, _mm256_and_si256(code, _mm256_set1_epi32(7)));
    __m256i sign = _mm256_slli_epi32(_mm256_and_si256(code, _mm256_set1_epi32(8)), 28);
    return _mm256_or_ps(v, _mm256_castsi256_ps(sign));
}

/* nvfp4_core_4over6_seg_error for two candidates: the lane-wise
 * differences, then each candidate's left-to-right fp32 sum (the two sums
 * interleaved: independent chains). */
T256 static void avx2_gen_err_4over6(const nvfp4_core_recipe *r, const nvfp4_core_global *g, const float *x,
                                     const uint8_t s[2], const float fc[2], float err[2])
{
    int fp16 = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MAE_FP16 || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    int mse = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    float denom = r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256 ? NVFP4_CORE_1536 : NVFP4_CORE_2688;
    int cls = gen_enc_class(r->enc_rule);
    __m256 xv[2] = {_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8)};
    _Alignas(32) float e[2][16];
    for (int c = 0; c < 2; c++) {
        __m256 f = _mm256_set1_ps(fc[c]);
        __m256 sf = _mm256_set1_ps(nvfp4_core_e4m3_decode(s[c]));
        for (int h = 0; h < 2; h++) {
            __m256i code = cls == GEN_DIV    ? gen_code8(GEN_DIV, r->special, xv[h], f, NULL)
                           : cls == GEN_BF16 ? gen_code8(GEN_BF16, r->special, xv[h], f, NULL)
                                             : gen_code8(GEN_MUL, r->special, xv[h], f, NULL);
            __m256 cand = _mm256_mul_ps(e2m1_decode8(code), sf), diff;
            if (fp16) {
                diff = _mm256_sub_ps(cand, _mm256_mul_ps(xv[h], _mm256_set1_ps(g->s_enc)));
            } else {
                __m256 t = _mm256_mul_ps(cand, _mm256_set1_ps(g->amax));
                diff = _mm256_sub_ps(_mm256_div_ps(t, _mm256_set1_ps(denom)), xv[h]);
            }
            _mm256_store_ps(e[c] + 8 * h, mse ? _mm256_mul_ps(diff, diff) : abs8(diff));
        }
    }
    float a = 0.0f, b = 0.0f;
    for (int k = 0; k < 16; k++) {
        a = a + e[0][k];
        b = b + e[1][k];
    }
    err[0] = a;
    err[1] = b;
}

/* ---- the skeleton kernels (simd_te_skel.h) over this file's leaves ------------- */

#define SK_NAME(n) avx2_##n
#define sk_absnn(v) absnn8(v)
#define SK_ROW_CHUNK 64
typedef col_tiles sk_col_tiles;
#define sk_col_strip(j, bf16, rht, use_sr, g0, g1, s0, s1, tb) col_strip8(j, bf16, rht, use_sr, g0, g1, s0, s1, tb)
typedef col_line sk_line;
#define sk_tile_lines(tb, t, l, sc) col_tile_lines8(tb, t, l, sc)
#define sk_store_line(p, l, stream) col_store_line8(p, l, stream)
#define sk_tile_group_amax(x, bf16, stride, b0, n, a) tile_group_amax8(x, bf16, stride, b0, n, a)
#define sk_row_group_scales(k, x, bf16, b0, n, scale, inv) row_group_scales8(k, x, bf16, b0, n, scale, inv)
#define sk_row_group_nan(x, bf16, b0, n) row_nan8(x, bf16, b0, n)
#define sk_row_group_codes(x, bf16, b0, n, inv, rb, use_sr, nan, out) \
    row_group_codes8(x, bf16, b0, n, inv, rb, use_sr, nan, out)
#define sk_hmax(v) hmax8(v)
#define sk_hmax_blocks(a) hmax8x8(a)
typedef __m256 sk_nanacc;
#define sk_nan_none() _mm256_setzero_ps()
#define sk_nan_or(acc, v) _mm256_or_ps(acc, _mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#define sk_nan_any(acc) (_mm256_movemask_ps(acc) != 0)
#define sk_all_lt(a, b) (_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ)) == 0xFF)
#define sk_all_ordered(v) (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_ORD_Q)) == 0xFF)
#define sk_store_bytes(v, n, p) store_bytes8(v, n, p)
#define sk_rand(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define sk_pack_block(c, out) pack8x2((c)[0], (c)[1], out)
#define sk_sr_block(buf, b) ((buf) + 16 * (b))

T256 static inline __m256i sk_load_bytes(const uint8_t *p, size_t n)
{
    uint8_t s8[8] = {0};
    memcpy(s8, p, n);
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)s8));
}

/* Codes q[0..3] (8 elements) -> values: an 8-entry magnitude table plus the sign bit. */
T256 static inline __m256 sk_e2m1_decode_part(const uint8_t *q4)
{
    const __m256 tab = _mm256_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f);
    int32_t four;
    memcpy(&four, q4, 4);
    __m256i q = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four));
    __m256i idx = _mm256_or_si256(q, _mm256_slli_epi64(q, 28)); /* lane 2j: low nibble, 2j+1: high */
    __m256 v = _mm256_permutevar8x32_ps(tab, idx);                /* magnitude from bits 0..2 */
    return _mm256_or_ps(v, _mm256_castsi256_ps(_mm256_and_si256(_mm256_slli_epi32(idx, 28),
                                                                _mm256_set1_epi32((int)0x80000000u))));
}

T256 static inline void sk_store_out(float *p, __m256 v, int stream)
{
    if (stream) _mm256_stream_ps(p, v);
    else _mm256_storeu_ps(p, v);
}

T256 static inline __attribute__((always_inline)) __m256 sk_tile_amax(const nvfp4_simd_col_job *j, size_t g, size_t c0)
{
    __m256 v[16];
    sk_col_load_group(j, j->bf16, g, c0, v);
    __m256 t = _mm256_setzero_ps();
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) t = _mm256_max_ps(abs8(v[i]), t);
    return t;
}

T256 static inline void sk_store_rht_row(const nvfp4_simd_col_job *j, void *out, size_t e, __m256 v)
{
    if (j->rht_round_bf16) { /* the values are bf16 already: keep the high halves */
        __m256i hi = _mm256_srli_epi32(_mm256_castps_si256(v), 16);
        _mm_storeu_si128((__m128i *)((uint16_t *)out + e),
                         _mm_packus_epi32(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
    } else {
        _mm256_storeu_ps((float *)out + e, v);
    }
}

#include "simd/simd_te_skel.h"

const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_avx2 = {avx2_gen_block_amax, avx2_gen_amax_nan, avx2_gen_sr_bytes,
                                                          avx2_gen_encode, avx2_gen_err_4over6};


const nvfp4_simd_kernels nvfp4_simd_kernels_avx2 = {
    "avx2",          avx2_amax_f32,  avx2_amax_bf16, avx2_row_scales,  avx2_tile_scales,
    avx2_row_encode, avx2_row_fused, avx2_col_quant, avx2_rht_amax,  avx2_rht_apply, avx2_row_dequant, avx2_mx_row_scales,
    avx2_mx_row_encode,
};

#else /* not x86-64 GCC/clang: the dispatcher never selects this table */

const nvfp4_simd_kernels nvfp4_simd_kernels_avx2 = {"avx2", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_avx2 = {0, 0, 0, 0, 0};

#endif
