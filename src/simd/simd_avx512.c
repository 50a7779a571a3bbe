/*
 * simd_avx512.c - AVX-512 kernels of the fast CPU path: F, BW, VL, DQ, VBMI
 * and VBMI2, the Ice Lake-class set (Ice Lake, Sapphire Rapids, Zen 4 and
 * later; simdjson's "icelake" kernel asks for the same, simdjson/simdjson
 * include/simdjson/icelake/implementation.h). Skylake-SP/Cascade Lake lack
 * VBMI and VBMI2 and run the avx2 variant.
 *
 * Compiled for every x86-64 build through function target attributes (no
 * per-file flags) and only called after __builtin_cpu_supports said yes
 * (simd_dispatch.c). No FMA instruction is used: every product is rounded
 * before the sum that uses it, as in the scalar reference.
 *
 * The codecs, Philox rounds, MXFP4 scale rules and RHT paths are
 * simd_te_lanes.h's, over this file's vector operations (16 lanes); the
 * kernels' loops, chunks, phases and instances are simd_te_skel.h's,
 * included once at the end of this file. Here: those operations and the
 * leaves measured per ISA (loads, packing, the rowwise and 16x16 group
 * steps, a columnwise strip's tiles and their transpose, the exact RHT
 * tile amax and the binary64 split with round-to-odd).
 */
#include "simd/simd_kernels.h"

#if defined(__GNUC__) && defined(__x86_64__)

#include <float.h>
#include <immintrin.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/philox.h"
#include "core/recipe.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512vbmi2")))
/* Full unrolling keeps a tile's 16 vectors in registers (gcc -O2 would
 * otherwise keep the arrays on the stack). */
#define SIMD_UNROLL _Pragma("GCC unroll 16")

/* ---- the vector operations of simd_te_lanes.h and simd_te_skel.h (16 lanes) ---- */

#define SK_FN T512
#define SK_W 16
#define SK_ALL 0xFFFF
#define SK_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
typedef __m512 sk_vf;
typedef __m512i sk_vi;
typedef __mmask16 sk_mask;
#define sk_zero() _mm512_setzero_ps()
#define sk_set1(f) _mm512_set1_ps(f)
#define sk_add(a, b) _mm512_add_ps(a, b)
#define sk_add_rne(a, b) _mm512_add_round_ps(a, b, SK_RNE)
#define sk_sub(a, b) _mm512_sub_ps(a, b)
#define sk_mul(a, b) _mm512_mul_ps(a, b)
#define sk_div(a, b) _mm512_div_ps(a, b)
#define sk_min(a, b) _mm512_min_ps(a, b)
#define sk_max(a, b) _mm512_max_ps(a, b) /* b when either is NaN */
#define sk_abs(v) abs16(v)
#define sk_load(x, bf16, i) load16(x, bf16, i)
#define sk_zero_i() _mm512_setzero_si512()
#define sk_set1_i(c) _mm512_set1_epi32((int)(c))
#define sk_iota() _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define sk_as_i(v) _mm512_castps_si512(v)
#define sk_as_f(v) _mm512_castsi512_ps(v)
#define sk_and_i(a, b) _mm512_and_si512(a, b)
#define sk_or_i(a, b) _mm512_or_si512(a, b)
#define sk_add_i(a, b) _mm512_add_epi32(a, b)
#define sk_sub_i(a, b) _mm512_sub_epi32(a, b)
#define sk_srli(v, n) _mm512_srli_epi32(v, n)
#define sk_slli(v, n) _mm512_slli_epi32(v, n)
#define sk_min_u(a, b) _mm512_min_epu32(a, b)
#define sk_max_u(a, b) _mm512_max_epu32(a, b)
#define sk_max_s(a, b) _mm512_max_epi32(a, b)
#define sk_cvt_i(v) _mm512_cvt_roundps_epi32(v, SK_RNE)
#define sk_cvt_rne_i(v) _mm512_cvt_roundps_epi32(v, SK_RNE)
#define sk_cvtt_i(v) _mm512_cvtt_roundps_epi32(v, _MM_FROUND_NO_EXC)
#define sk_cvt_f(v) _mm512_cvtepi32_ps(v)
#define sk_cvt_rne_f(v) _mm512_cvt_roundepi32_ps(v, SK_RNE)
#define sk_perm_i(tab, idx) _mm512_permutexvar_epi32(idx, tab)
/* indexed by the exponent's low 4 bits: 127 -> 15, 128 -> 0, 129 -> 1 */
#define SK_EXP_TABLE(t127, t128, t129) _mm512_setr_epi32(t128, t129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, t127)
#define sk_gt_i(a, b) _mm512_cmpgt_epi32_mask(a, b)
#define sk_lt_i(a, b) _mm512_cmplt_epi32_mask(a, b)
#define sk_eq_i(a, b) _mm512_cmpeq_epi32_mask(a, b)
#define sk_lt_u(a, b) _mm512_cmp_epu32_mask(a, b, _MM_CMPINT_LT)
#define sk_lt_f(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define sk_isnan(v) _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)
#define sk_test_i(a, bits) _mm512_test_epi32_mask(a, _mm512_set1_epi32(bits))
#define sk_mand(a, b) ((__mmask16)((a) & (b)))
#define sk_mbits(m) ((int)(m))
#define sk_blend_i(m, a, b) _mm512_mask_blend_epi32(m, a, b)
#define sk_blend_f(m, a, b) _mm512_mask_blend_ps(m, a, b)
#define sk_add_where(v, m) _mm512_mask_add_epi32(v, m, v, _mm512_set1_epi32(1))
#define sk_xor3(a, b, c) _mm512_ternarylogic_epi32(a, b, c, 0x96) /* a ^ b ^ c in one instruction */
#define sk_mulhilo(a, m, hi, lo) mulhilo16(a, m, hi, lo)
#define sk_e2m1_finish(u, au, mag) e2m1_finish16(u, au, mag)
#define sk_sr_bytes_aos(w, buf) sr_bytes_aos16(w, buf)
#define sk_store_f(p, v) _mm512_store_ps(p, v)
#define sk_load_f(p) _mm512_load_ps(p)
#define sk_load_u32(p) _mm512_load_si512(p)
/* binary64: half the lanes */
typedef __m512d sk_vd;
typedef __m256 sk_vh;
#define sk_add_d(a, b) _mm512_add_pd(a, b)
#define sk_sub_d(a, b) _mm512_sub_pd(a, b)
#define sk_to_pd(v, half)                                                                                       \
    _mm512_cvtps_pd((half) ? _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(v), 1))         \
                           : _mm512_castps512_ps256(v))
#define sk_pd_round(u) _mm512_cvt_roundpd_ps(u, SK_RNE)
#define sk_join_halves(lo, hi) \
    _mm512_castsi512_ps(_mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(lo)), _mm256_castps_si256(hi), 1))
#define SK_RHT_FP32_PATHS 1
#define SK_PREFETCH_L1 1
#define SK_RHT_WIDE_INLINE inline __attribute__((always_inline))
/* the binary64 split with round-to-odd (below) */
T512 static __attribute__((noinline)) void rht16_split_f64(const nvfp4_simd_col_job *j, __m512 v[16], __m512i emax);
#define SK_RHT_SPLIT_F64(j, v, emax) rht16_split_f64(j, v, emax)

/* ---- loads ------------------------------------------------------------- */

T512 static inline __m512 load16(const void *x, int bf16, size_t i)
{
    if (bf16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)x + i));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    return _mm512_loadu_ps((const float *)x + i);
}

T512 static inline __m512 abs16(__m512 v)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF)));
}

/* |v| with NaN lanes replaced by 0: vmaxps returns its second operand when
 * the first is NaN, which is fmaxf's "NaN loses" for a non-NaN accumulator. */
T512 static inline __m512 absnn16(__m512 v) { return _mm512_max_ps(abs16(v), _mm512_setzero_ps()); }

/* Maximum of non-negative, NaN-free floats as unsigned integer maxima of
 * their bit patterns (the same order): vpmaxud issues on twice as many
 * Zen 4 pipes as vmaxps, which shares its pipe with the shifts and
 * conversions of the codecs. */
T512 static inline __m512 maxnn16(__m512 a, __m512 b)
{
    return _mm512_castsi512_ps(_mm512_max_epu32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

/* Lane i of the result = max over the 16 lanes of v[i] (v[i] >= 0 or +0,
 * NaN-free). */
T512 static inline __m512 hmax16x16(const __m512 v[16])
{
    __m512 w[8], z[4];
    SIMD_UNROLL
    for (int i = 0; i < 8; i++) {
        __m512 a = v[2 * i], b = v[2 * i + 1];
        w[i] = maxnn16(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    }
    SIMD_UNROLL
    for (int i = 0; i < 4; i++) {
        __m512 a = w[2 * i], b = w[2 * i + 1];
        z[i] = maxnn16(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD));
    }
    /* z[i] 128-bit unit u now holds 4 partial maxima of input 4i+u */
    __m512 m01 = maxnn16(_mm512_shuffle_ps(z[0], z[1], 0x88), _mm512_shuffle_ps(z[0], z[1], 0xDD));
    __m512 m23 = maxnn16(_mm512_shuffle_ps(z[2], z[3], 0x88), _mm512_shuffle_ps(z[2], z[3], 0xDD));
    __m512 r = maxnn16(_mm512_shuffle_ps(m01, m23, 0x88), _mm512_shuffle_ps(m01, m23, 0xDD));
    /* lane 4u+k of r holds input 4k+u */
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, r);
}

/* ---- codecs -------------------------------------------------------------- */

/* Sign bit (as 8) and the NaN override of nvfp4_core_e2m1_encode: mag is
 * already 7 for NaN lanes, whose sign is dropped (NaN gives +6, 0x7). */
T512 static inline __m512i e2m1_finish16(__m512i u, __m512i au, __m512i mag)
{
    __mmask16 not_nan = _mm512_cmp_epu32_mask(au, _mm512_set1_epi32(0x7F800000), _MM_CMPINT_LE);
    __m512i sign = _mm512_maskz_srli_epi32(not_nan, u, 28);
    return _mm512_ternarylogic_epi32(mag, sign, _mm512_set1_epi32(8), 0xF8); /* mag | (sign & 8) */
}


/* The codes of 8 blocks (c[b]: one code per lane) -> their 64 packed
 * bytes, in 10 operations instead of 8 x 3 (shift, or, vpmovqb): two
 * packing rounds put 4 codes of each block in every 128-bit unit (unit u:
 * elements 4u..4u+3), vpmaddubsw joins code pairs into bytes (c_even +
 * 16 c_odd), a third pack leaves 16-bit word (u, b) = bytes 2u, 2u+1 of
 * block b, and vpermw moves it to word 4b + u. */
T512 static inline void pack16x8(const __m512i c[8], uint8_t *out)
{
    __m512i w01 = _mm512_packus_epi32(c[0], c[1]), w23 = _mm512_packus_epi32(c[2], c[3]);
    __m512i w45 = _mm512_packus_epi32(c[4], c[5]), w67 = _mm512_packus_epi32(c[6], c[7]);
    const __m512i nib = _mm512_set1_epi16(0x1001); /* bytes 1, 16 */
    __m512i m0 = _mm512_maddubs_epi16(_mm512_packus_epi16(w01, w23), nib);
    __m512i m1 = _mm512_maddubs_epi16(_mm512_packus_epi16(w45, w67), nib);
    const __m512i idx = _mm512_set_epi16(31, 23, 15, 7, 30, 22, 14, 6, 29, 21, 13, 5, 28, 20, 12, 4, 27, 19, 11, 3,
                                         26, 18, 10, 2, 25, 17, 9, 1, 24, 16, 8, 0);
    _mm512_storeu_si512((void *)out, _mm512_permutexvar_epi16(idx, _mm512_packus_epi16(m0, m1)));
}

/* 16 codes (one per lane, element 2j in lane 2j) -> 8 packed bytes. */
T512 static inline void pack16(__m512i code, uint8_t *out)
{
    __m512i p = _mm512_or_si512(code, _mm512_srli_epi64(code, 28));
    _mm_storel_epi64((__m128i *)out, _mm512_cvtepi64_epi8(p));
}

/* ---- Philox4x32-10 over 16 lanes -------------------------------------- */

/* hi and lo 32 bits of a x m lane-wise: the even lanes' 64-bit products
 * (vpmuludq), the odd lanes' (their dwords swapped into even position),
 * and the halves interleaved by two masked dword swaps. No vpmulld, and
 * one multiply fewer per product pair than mulhi plus mullo
 * (docs/performance.md, "Measured design choices"). */
T512 static inline void mulhilo16(__m512i a, __m512i m, __m512i *hi, __m512i *lo)
{
    __m512i even = _mm512_mul_epu32(a, m), odd = _mm512_mul_epu32(_mm512_shuffle_epi32(a, _MM_PERM_CDAB), m);
    *hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_CDAB);
    *lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);
}

/* Transposes the SoA words into 16 bytes per block, stored at
 * sr_block_bytes(buf, b) (element i of the block takes byte i): after two
 * unpack rounds the 128-bit unit u of vector k holds block 4u + k, and the
 * four vectors are stored whole rather than split into 16 stores. */
T512 static inline void sr_bytes_aos16(const __m512i w[4], uint8_t buf[256])
{
    __m512i a = _mm512_unpacklo_epi32(w[0], w[1]), b = _mm512_unpackhi_epi32(w[0], w[1]);
    __m512i c = _mm512_unpacklo_epi32(w[2], w[3]), d = _mm512_unpackhi_epi32(w[2], w[3]);
    _mm512_store_si512(buf, _mm512_unpacklo_epi64(a, c));
    _mm512_store_si512(buf + 64, _mm512_unpackhi_epi64(a, c));
    _mm512_store_si512(buf + 128, _mm512_unpacklo_epi64(b, d));
    _mm512_store_si512(buf + 192, _mm512_unpackhi_epi64(b, d));
}

/* The 16 random bytes of block b (0..15) in sr_bytes_aos16's buffer. */
static inline const uint8_t *sr_block_bytes(const uint8_t buf[256], size_t b)
{
    return buf + 64 * (b & 3) + 16 * (b >> 2);
}

/* The RHT's s_i x 2^(bexp-127): the sign of weight i applied as a
 * sign-bit flip (exact; x ^ (w_i & sign bit) in one ternary op, 0x78:
 * A ^ (B & C)), then the power-of-two scaling (exact on their lanes). */
#define sk_rht_scaler(bexp) _mm512_castsi512_ps(_mm512_slli_epi32(bexp, 23))
T512 static inline __m512 sk_rht_signed_scaled(const nvfp4_simd_col_job *j, unsigned i, __m512 x, __m512 scale)
{
    __m512i sx = _mm512_ternarylogic_epi32(_mm512_castps_si512(x), _mm512_castps_si512(_mm512_set1_ps(j->rht_w[i])),
                                           _mm512_set1_epi32((int)0x80000000u), 0x78);
    return _mm512_mul_ps(_mm512_castsi512_ps(sx), scale);
}
/* s - RNE(s) (vreduceps), exact */
#define sk_rne_frac(s, h) _mm512_reduce_round_ps(s, _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_NO_EXC)

#include "simd/simd_te_lanes.h"

/* nvfp4_core_e2m1_encode(y, RN) for y not NaN: the sign bit (as 8) needs
 * no NaN mask. */
T512 static inline __m512i e2m1_rn16_nonan(__m512 y)
{
    return _mm512_ternarylogic_epi32(sk_e2m1_rn_mag(y), _mm512_srli_epi32(_mm512_castps_si512(y), 28),
                                     _mm512_set1_epi32(8), 0xF8); /* mag | (sign & 8) */
}

T512 static inline __m512i e2m1_sr16_nonan(__m512 y, __m512i r)
{
    return _mm512_ternarylogic_epi32(sk_e2m1_sr_mag(y, r), _mm512_srli_epi32(_mm512_castps_si512(y), 28),
                                     _mm512_set1_epi32(8), 0xF8);
}

/* ---- rowwise ------------------------------------------------------------ */

T512 static inline void store_scales(__m512i sb, size_t n, uint8_t *scale)
{
    _mm_mask_storeu_epi8(scale, (__mmask16)((1u << n) - 1u), _mm512_cvtepi32_epi8(sb));
}


T512 static inline __attribute__((always_inline)) __m512i row_code16(__m512 y, const uint8_t *rb, int plain)
{
    if (rb) {
        __m512i r = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)rb));
        return plain ? e2m1_sr16_nonan(y, r) : sk_e2m1_sr(y, r);
    }
    return plain ? e2m1_rn16_nonan(y) : sk_e2m1_rn(y);
}

/* Codes of blocks b0 .. b0+n-1 (n <= 16) with encode multipliers iv[] and
 * (SR) their random bytes in rb: 8 blocks at a time packed by pack16x8,
 * the rest one by one. plain: no NaN among them (the codes skip the NaN
 * mask). */
T512 static inline __attribute__((always_inline)) void row_codes16(const void *x, const int bf16, size_t b0, size_t n,
                                                                  const float *iv, const uint8_t *rb, const int use_sr,
                                                                  const int plain, uint8_t *out)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i c[8];
        SIMD_UNROLL
        for (size_t h = 0; h < 8; h++) {
            __m512 y = _mm512_mul_ps(load16(x, bf16, 16 * (b0 + i + h)), _mm512_set1_ps(iv[i + h]));
            c[h] = row_code16(y, use_sr ? sr_block_bytes(rb, i + h) : NULL, plain);
        }
        pack16x8(c, out + 8 * (b0 + i));
    }
    for (; i < n; i++) {
        __m512 y = _mm512_mul_ps(load16(x, bf16, 16 * (b0 + i)), _mm512_set1_ps(iv[i]));
        pack16(row_code16(y, use_sr ? sr_block_bytes(rb, i) : NULL, plain), out + 8 * (b0 + i));
    }
}

/* The amaxes of 16x16 tiles b0 .. b0+n-1 (n <= 16; 0 past n): per block,
 * the integer maximum of the |x| patterns over the 16 rows (the float
 * order without NaN; a block holding NaN is redone with vmaxps, which
 * ignores it). */
T512 static inline __attribute__((always_inline)) void tile_group_amax16(const void *x, const int bf16, size_t stride,
                                                                          size_t b0, size_t n, __m512 a[16])
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF);
    SIMD_UNROLL /* a[] in registers, as in the skeleton's row_scales */
    for (size_t i = 0; i < 16; i++) {
        __m512i m = _mm512_setzero_si512();
        if (i < n)
            for (size_t r = 0; r < 16; r++)
                m = _mm512_max_epu32(
                    _mm512_and_si512(_mm512_castps_si512(load16(x, bf16, r * stride + 16 * (b0 + i))), absm), m);
        a[i] = _mm512_castsi512_ps(m);
        if (_mm512_cmp_epu32_mask(m, _mm512_set1_epi32(0x7F800000), _MM_CMPINT_NLE)) {
            __m512 f = _mm512_setzero_ps();
            for (size_t r = 0; r < 16; r++) f = _mm512_max_ps(abs16(load16(x, bf16, r * stride + 16 * (b0 + i))), f);
            a[i] = f;
        }
    }
}


/* Phase 1 of the row kernels (simd_te_skel.h): block amaxes as integer
 * maxima of the |x| patterns (the float order when no lane is NaN; a group
 * with NaN is redone with vmaxps, which ignores it). */

/* For blocks b0 .. b0+n-1 (n <= 16): scale bytes, encode multipliers, and
 * whether a lane is NaN (0 or 1). */
T512 static inline __attribute__((always_inline)) int row_scales16(const nvfp4_simd_te_consts *k, const void *x,
                                                                   int bf16, size_t b0, size_t n, uint8_t *scale,
                                                                   float *inv)
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF);
    __m512 a[16];
    __m512i mx = _mm512_setzero_si512();
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) {
        __m512i u = i < n ? _mm512_and_si512(_mm512_castps_si512(load16(x, bf16, 16 * (b0 + i))), absm)
                          : _mm512_setzero_si512();
        a[i] = _mm512_castsi512_ps(u);
        mx = _mm512_max_epu32(mx, u);
    }
    int special = _mm512_cmp_epu32_mask(mx, _mm512_set1_epi32(0x7F800000), _MM_CMPINT_NLE) != 0;
    if (special)
        SIMD_UNROLL
        for (size_t i = 0; i < 16; i++) a[i] = absnn16(a[i]); /* the zeros past n stay +0 */
    __m512i sb = sk_te_scale(k, hmax16x16(a));
    store_scales(sb, n, scale + b0);
    _mm512_store_ps(inv, sk_te_inv(k, sb));
    return special;
}




/* Phase 3: codes of blocks b0 .. b0+n-1; groups without NaN skip the NaN mask. */
T512 static inline __attribute__((always_inline)) void row_group_codes16(const void *x, const int bf16, size_t b0,
                                                                          size_t n, const float *iv, const uint8_t *rb,
                                                                          const int use_sr, int has_nan, uint8_t *out)
{
    if (has_nan) row_codes16(x, bf16, b0, n, iv, rb, use_sr, 0, out);
    else row_codes16(x, bf16, b0, n, iv, rb, use_sr, 1, out);
}

/* ---- columnwise ----------------------------------------------------------- */

/* tab[sb] per lane (sb in 0..127): four two-table permutes pick by bits
 * 0-4, two blends by bit 5, one by bit 6. */
T512 static inline __m512 inv_lookup16(const float tab[128], __m512i sb)
{
    __m512 a = _mm512_permutex2var_ps(_mm512_loadu_ps(tab), sb, _mm512_loadu_ps(tab + 16));
    __m512 b = _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 32), sb, _mm512_loadu_ps(tab + 48));
    __m512 c = _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 64), sb, _mm512_loadu_ps(tab + 80));
    __m512 d = _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 96), sb, _mm512_loadu_ps(tab + 112));
    __mmask16 b5 = _mm512_test_epi32_mask(sb, _mm512_set1_epi32(32));
    __mmask16 b6 = _mm512_test_epi32_mask(sb, _mm512_set1_epi32(64));
    return _mm512_mask_blend_ps(b6, _mm512_mask_blend_ps(b5, a, b), _mm512_mask_blend_ps(b5, c, d));
}

/*
 * The hi/lo split of rht16_split in binary64, for spreads up to 75 binades
 * (lanes with all inputs finite and nonzero biased exponents E >= 3). With
 * e the largest unbiased exponent of the u_i and Q = 2^(e-48): C = 1.5 *
 * 2^(e+4) puts every u_i + C in the binade [16, 32) * 2^e of ulp Q, so
 * H_i = (u_i + C) - C is u_i rounded to a multiple of Q (|H_i| <= 2^(e+1))
 * and L_i = u_i - H_i is exact with |L_i| <= Q/2. The butterfly over the H_i
 * stays a multiple of Q below 2^(e+5) = 2^53 Q: exact. Over the L_i: a
 * multiple of 2^(emin-23) below 16 Q/2 = 2^(e-45) = 2^(e-emin-22) units:
 * exact for e - emin <= 75. The exact result H + L is then rounded once to
 * fp32 by rounding it to odd in binary64 (TwoSum gives s + t = H + L
 * exactly; if t != 0, s moved one ulp toward zero when it lies beyond the
 * exact value, and its last bit set) and converting: binary64 keeps
 * 53 >= 24 + 2 bits, so the conversion's rounding equals rounding the exact
 * sum (Boldo and Melquiond 2008, as in nvfp4_core_rht_scale_round). H_i is
 * never -0 and u_i never -0, so an exact zero result is +0.
 */
T512 static __attribute__((noinline)) void rht16_split_f64(const nvfp4_simd_col_job *j, __m512 v[16], __m512i emax)
{
    __m256 r[2][16];
    const __m512i one = _mm512_set1_epi64(1), signm = _mm512_set1_epi64((long long)0x8000000000000000ull);
    sk_rht_quarters(j, v);
    for (int half = 0; half < 2; half++) {
        __m256i eh = half ? _mm512_extracti64x4_epi64(emax, 1) : _mm512_castsi512_si256(emax);
        /* binary64 biased exponent of 2^(e+4): (Emax - 2 - 127) + 4 + 1023 */
        __m512i cb = _mm512_slli_epi64(_mm512_add_epi64(_mm512_cvtepu32_epi64(eh), _mm512_set1_epi64(898)), 52);
        const __m512d c = _mm512_castsi512_pd(_mm512_or_si512(cb, _mm512_set1_epi64(0x0008000000000000ll)));
        __m512d hi[16], lo[16];
        sk_rht_quarters_pd(v, half, hi);
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) {
            __m512d h = _mm512_sub_pd(_mm512_add_pd(hi[i], c), c);
            lo[i] = _mm512_sub_pd(hi[i], h);
            hi[i] = h;
        }
        sk_fwht16_d(hi);
        sk_fwht16_d(lo);
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) {
            __m512d s = _mm512_add_pd(hi[i], lo[i]), bb = _mm512_sub_pd(s, hi[i]);
            __m512d t = _mm512_add_pd(_mm512_sub_pd(hi[i], _mm512_sub_pd(s, bb)), _mm512_sub_pd(lo[i], bb));
            __m512i sbits = _mm512_castpd_si512(s);
            __mmask8 inexact = _mm512_cmp_pd_mask(t, _mm512_setzero_pd(), _CMP_NEQ_OQ);
            __mmask8 beyond = inexact & _mm512_test_epi64_mask(_mm512_xor_si512(sbits, _mm512_castpd_si512(t)), signm);
            sbits = _mm512_mask_sub_epi64(sbits, beyond, sbits, one);
            sbits = _mm512_mask_or_epi64(sbits, inexact, sbits, one);
            r[half][i] = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(sbits), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        }
    }
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = sk_join_halves(r[0][i], r[1][i]);
}

/* A strip's quantized tiles in tile order: each tile's 16 blocks (8 bytes
 * each) as two vector stores and its 16 scale bytes as one, instead of 32
 * scattered stores into the output rows' stage (a quarter of the plain
 * columnwise kernel's time in cache); col_tiles_flush transposes a column
 * of tiles into whole output lines. 18 KiB, as the stage it replaces. */
typedef struct {
    _Alignas(64) uint64_t q[NVFP4_SIMD_STAGE_COLS / 16][8][16]; /* [column tile][group slot][qword] */
    _Alignas(64) uint8_t scale[NVFP4_SIMD_STAGE_COLS / 16][8][16];
} col_tiles;

/* Where a tile's 16 rows lie in memory (row i at element e0 + i * stride
 * of p, fp32 or bf16), for the rare NaN redo: reloading them, rather than
 * looping over the caller's v[], keeps v[] out of memory (GCC 12 stored
 * every tile's 16 vectors to the stack for that loop). */
typedef struct {
    const void *p;
    size_t e0, stride;
    int bf16;
} col_tile_rows;

/* The tile's scale bytes and encode multipliers (per lane: column);
 * returns whether a lane holds NaN. */
T512 static inline __attribute__((always_inline)) int col_tile_scale(const nvfp4_simd_col_job *j, const __m512 v[16],
                                                                    col_tile_rows rows, __m512i *sb_out,
                                                                    __m512 *inv_out)
{
    const nvfp4_simd_te_consts *k = &j->k;
    /* amax on the integer patterns (the float order for |v|): a lane above
     * Inf's pattern holds a NaN, which the float amax below ignores. A
     * tree: this starts the tile's longest dependency chain. */
    __m512i t[16];
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) t[i] = _mm512_and_si512(_mm512_castps_si512(v[i]), _mm512_set1_epi32(0x7FFFFFFF));
    SIMD_UNROLL
    for (int h = 8; h > 0; h >>= 1)
        SIMD_UNROLL
        for (int i = 0; i < h; i++) t[i] = _mm512_max_epu32(t[i], t[i + h]);
    __m512i ami = t[0];
    int has_nan = _mm512_cmp_epu32_mask(ami, _mm512_set1_epi32(0x7F800000), _MM_CMPINT_NLE) != 0;
    __m512 am = _mm512_castsi512_ps(ami);
    if (has_nan) {
        am = _mm512_setzero_ps();
        for (size_t i = 0; i < 16; i++)
            am = _mm512_max_ps(abs16(load16(rows.p, rows.bf16, rows.e0 + i * rows.stride)), am);
    }
    if (j->tile16) am = _mm512_set1_ps(_mm512_reduce_max_ps(am));
    __m512i sb = sk_te_scale(k, am);
    *sb_out = sb;
    *inv_out = inv_lookup16(j->inv_tab, sb); /* sk_te_inv without its division */
    return has_nan;
}

/* The tile's codes and scale bytes into the stage. */
T512 static inline __attribute__((always_inline)) void col_tile_emit(const nvfp4_simd_col_job *j, const int use_sr,
                                                                   size_t g, size_t c0, const __m512 v[16],
                                                                   __m512i sb, __m512 inv, int has_nan,
                                                                   col_tiles *tb, size_t ct, size_t gslot)
{
    __m512i w[4];
    if (use_sr) {
        sk_col_sr_words(j, g, c0, w);
    }
    /* nibble i&7 of word i>>3 of each lane = code of row i: the lane's 8
     * output bytes, element 2p in the low nibble */
    __m512i wd[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    if (!use_sr && !has_nan) {
        /* RN without NaN: magnitudes in one rounding, shifted in from the
         * top by vpshrdd (wd >> 4 | mag << 28: after rows 8h..8h+7 in order,
         * row 8h+p sits in nibble p); the top 4 bits of y (its sign at bit
         * 3) shifted in from the bottom by vpshldd (sg << 4 | y >> 28, rows
         * in reverse order, so row 8h+p also lands in nibble p); one ternary
         * op keeps the sign bits (A | (B & C)). 2 ops per row instead of 4. */
        __m512i sg[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
        __m512 y[16];
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) {
            y[i] = _mm512_mul_ps(v[i], inv);
            wd[i >> 3] = _mm512_shrdi_epi32(wd[i >> 3], sk_e2m1_rn_mag(y[i]), 4);
        }
        SIMD_UNROLL
        for (int i = 15; i >= 0; i--) sg[i >> 3] = _mm512_shldi_epi32(sg[i >> 3], _mm512_castps_si512(y[i]), 4);
        wd[0] = _mm512_ternarylogic_epi32(wd[0], sg[0], _mm512_set1_epi32((int)0x88888888u), 0xF8);
        wd[1] = _mm512_ternarylogic_epi32(wd[1], sg[1], _mm512_set1_epi32((int)0x88888888u), 0xF8);
    } else {
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) {
            __m512 y = _mm512_mul_ps(v[i], inv);
            __m512i code;
            if (use_sr) {
                __m512i r = _mm512_and_si512(_mm512_srlv_epi32(w[i >> 2], _mm512_set1_epi32(8 * (i & 3))),
                                             _mm512_set1_epi32(255));
                code = sk_e2m1_sr(y, r);
            } else {
                code = sk_e2m1_rn(y);
            }
            wd[i >> 3] = _mm512_shrdi_epi32(wd[i >> 3], code, 4); /* as above */
        }
    }
    /* qword k of the unpacks: column 4(k/2) + (k%2) (lo) or + 2 (hi);
     * col_tiles_flush transposes them into the output rows */
    uint64_t *q = tb->q[ct][gslot];
    _mm512_store_si512(q, _mm512_unpacklo_epi32(wd[0], wd[1]));
    _mm512_store_si512(q + 8, _mm512_unpackhi_epi32(wd[0], wd[1]));
    _mm_store_si128((__m128i *)tb->scale[ct][gslot], _mm512_cvtepi32_epi8(sb));
}

/* The rest of a tile once its 16 vectors (RHT'd when asked) are loaded. */
T512 static inline __attribute__((always_inline)) void col_tile_as_loaded(const nvfp4_simd_col_job *j, const int use_sr,
                                                                        size_t g, size_t c0, const __m512 v[16],
                                                                        col_tile_rows rows, col_tiles *tb, size_t ct,
                                                                        size_t gslot)
{
    __m512i sb;
    __m512 inv;
    int has_nan = col_tile_scale(j, v, rows, &sb, &inv);
    col_tile_emit(j, use_sr, g, c0, v, sb, inv, has_nan, tb, ct, gslot);
}

T512 static inline __attribute__((always_inline)) void col_tile_as(const nvfp4_simd_col_job *j, const int bf16,
                                                                 const int rht, const int use_sr, size_t g, size_t c0,
                                                                 col_tiles *tb, size_t ct, size_t gslot)
{
    __m512 v[16];
    if (rht) sk_col_load_group(j, bf16, g, c0, v);
    else /* inline: the plain loads stay in registers */
        SIMD_UNROLL
        for (size_t i = 0; i < 16; i++) v[i] = load16(j->x, bf16, (16 * g + i) * j->cols + c0);
    col_tile_rows rows = {j->x, 16 * g * j->cols + c0, j->cols, bf16};
    col_tile_as_loaded(j, use_sr, g, c0, v, rows, tb, ct, gslot);
}

/* The 8x8 transpose of 64-bit words: out[k] = {r[0][k], ..., r[7][k]}. */
T512 static inline __attribute__((always_inline)) void transpose8x8_epi64(const __m512i r[8], __m512i out[8])
{
    __m512i t[8], u[8];
    SIMD_UNROLL
    for (int p = 0; p < 4; p++) {
        t[2 * p] = _mm512_unpacklo_epi64(r[2 * p], r[2 * p + 1]);     /* words 0,2,4,6 of rows 2p, 2p+1 */
        t[2 * p + 1] = _mm512_unpackhi_epi64(r[2 * p], r[2 * p + 1]); /* words 1,3,5,7 */
    }
    SIMD_UNROLL
    for (int p = 0; p < 2; p++)
        SIMD_UNROLL
        for (int o = 0; o < 2; o++) {
            /* 128-bit lanes 0,2 (words 0,4 or 1,5) and 1,3 (words 2,6 or 3,7) of rows 4p..4p+3 */
            u[4 * p + o] = _mm512_shuffle_i64x2(t[4 * p + o], t[4 * p + 2 + o], 0x88);
            u[4 * p + 2 + o] = _mm512_shuffle_i64x2(t[4 * p + o], t[4 * p + 2 + o], 0xDD);
        }
    SIMD_UNROLL
    for (int m = 0; m < 4; m++) { /* u[m], u[4 + m]: words m and m + 4 of rows 0-3, 4-7 */
        out[m] = _mm512_shuffle_i64x2(u[m], u[4 + m], 0x88);
        out[m + 4] = _mm512_shuffle_i64x2(u[m], u[4 + m], 0xDD);
    }
}

/* A column of tiles' 16 output lines (l[c]: column c0 + c) by two 8x8
 * transposes of 64-bit words, and their scale bytes (8 per column at sc +
 * 8c) by two two-table byte permutes: byte 8c + t of permute h is tile t's
 * scale byte of column 8h + c, from tb->scale[ct][0..3] and [4..7]. */
#define PERM8(h, c) 8 * h + c, 16 + 8 * h + c, 32 + 8 * h + c, 48 + 8 * h + c, 64 + 8 * h + c, 80 + 8 * h + c, \
                    96 + 8 * h + c, 112 + 8 * h + c
#define PERM64(h) PERM8(h, 0), PERM8(h, 1), PERM8(h, 2), PERM8(h, 3), PERM8(h, 4), PERM8(h, 5), PERM8(h, 6), PERM8(h, 7)
static const _Alignas(64) uint8_t scale_perm[2][64] = {{PERM64(0)}, {PERM64(1)}};
T512 static inline __attribute__((always_inline)) void col_tile_lines16(const col_tiles *tb, size_t ct, __m512i l[16],
                                                                         uint8_t sc[128])
{
    __m512i r[8], lo[8], hi[8];
    SIMD_UNROLL
    for (int t = 0; t < 8; t++) r[t] = _mm512_load_si512(tb->q[ct][t]);
    transpose8x8_epi64(r, lo);
    SIMD_UNROLL
    for (int t = 0; t < 8; t++) r[t] = _mm512_load_si512(tb->q[ct][t] + 8);
    transpose8x8_epi64(r, hi);
    SIMD_UNROLL
    for (int k = 0; k < 8; k++) { /* qword k of the unpacks */
        l[4 * (k / 2) + k % 2] = lo[k];
        l[4 * (k / 2) + k % 2 + 2] = hi[k];
    }
    __m512i s_lo = _mm512_load_si512(tb->scale[ct][0]), s_hi = _mm512_load_si512(tb->scale[ct][4]);
    SIMD_UNROLL
    for (int h = 0; h < 2; h++)
        _mm512_store_si512(sc + 64 * h, _mm512_permutex2var_epi8(s_lo, _mm512_load_si512(scale_perm[h]), s_hi));
}

T512 static inline void col_store_line16(void *p, __m512i l, int stream)
{
    if (stream) _mm512_stream_si512(p, l);
    else _mm512_store_si512(p, l);
}

/* RHT tiles are transformed (into an L1 buffer) before any of them is
 * quantized: the transform and the quantization of one tile form a chain
 * too long for the out-of-order window to overlap with the next tile's
 * (the row kernel's finding); split, each phase's tiles are independent.
 * 8 tiles (8 KiB) per phase was the best of 4, 8 and 16. Plain tiles stay
 * in one pass: their 16 vectors stored and reloaded cost more than the
 * overlap gains (docs/performance.md, "Measured design choices"). */
#define RHT_PHASE_TILES 8
T512 static inline __attribute__((always_inline)) void col_strip_rht(const nvfp4_simd_col_job *j, const int bf16,
                                                                      const int use_sr, size_t g0, size_t g1, size_t s0,
                                                                      size_t s1, col_tiles *tb)
{
    _Alignas(64) float tbuf[RHT_PHASE_TILES][256];
    for (size_t g = g0; g < g1; g++)
        for (size_t t0 = s0; t0 < s1; t0 += 16 * RHT_PHASE_TILES) {
            size_t t1 = t0 + 16 * RHT_PHASE_TILES < s1 ? t0 + 16 * RHT_PHASE_TILES : s1;
            for (size_t c0 = t0; c0 < t1; c0 += 16) {
                sk_col_prefetch(j, bf16, g, g0, g1, c0, s1);
                __m512 v[16];
                sk_col_load_group(j, bf16, g, c0, v);
                float *buf = tbuf[(c0 - t0) / 16];
                SIMD_UNROLL
                for (int i = 0; i < 16; i++) _mm512_store_ps(buf + 16 * i, v[i]);
            }
            /* the rows straight from the buffer (__m512 may alias float): a
             * local copy cost 16 more stores per tile (+1-3% without it) */
            for (size_t c0 = t0; c0 < t1; c0 += 16) {
                const float *buf = tbuf[(c0 - t0) / 16];
                col_tile_rows rows = {buf, 0, 16, 0};
                col_tile_as_loaded(j, use_sr, g, c0, (const __m512 *)buf, rows, tb, (c0 - s0) / 16, g - g0);
            }
        }
}

/* The tiles of one strip (columns s0..s1-1, groups g0..g1-1): RHT tiles
 * in phases (col_strip_rht), plain tiles in one pass each. */
T512 static inline __attribute__((always_inline)) void col_strip16(const nvfp4_simd_col_job *j, const int bf16,
                                                                    const int rht, const int use_sr, size_t g0,
                                                                    size_t g1, size_t s0, size_t s1, col_tiles *tb)
{
    if (rht) {
        col_strip_rht(j, bf16, use_sr, g0, g1, s0, s1, tb);
        return;
    }
    for (size_t g = g0; g < g1; g++)
        for (size_t c0 = s0; c0 < s1; c0 += 16) {
            sk_col_prefetch(j, bf16, g, g0, g1, c0, s1);
            col_tile_as(j, bf16, 0, use_sr, g, c0, tb, (c0 - s0) / 16, g - g0);
        }
}

/* max |RHT(x)| over the 16 columns of a tile, per lane. Rounding (to fp32,
 * then bf16) is monotonic and symmetric, so the largest rounded |output|
 * is the rounded largest exact |output|: on the binary64 path the maximum
 * is taken over the exact sums and rounded once, skipping 32 conversions
 * and 16 bf16 roundings per tile. */
T512 static inline __attribute__((always_inline)) __m512 rht16_tile_amax(const nvfp4_simd_col_job *j, size_t g, size_t c0)
{
    __m512 v[16];
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) v[i] = load16(j->x, j->bf16, (16 * g + i) * j->cols + c0);
    __m512i emax, emin;
    sk_rht_exp_range(v, &emax, &emin);
    /* tiles whose every lane takes the plain binary64 butterfly in
     * sk_rht_tile_in take the maximum below instead */
    int fp32_ok = sk_rht_lanes_within(emax, emin, j->bf16 ? NVFP4_CORE_RHT_SPLIT_SPREAD_BF16
                                                          : NVFP4_CORE_RHT_SPLIT_SPREAD) == SK_ALL;
    if (fp32_ok || sk_rht_finite_within(emax, emin, NVFP4_CORE_RHT_F64_SPREAD) != SK_ALL) {
        sk_rht_tile_in(j, j->bf16, g, c0, v, emax, emin);
        __m512 am = _mm512_setzero_ps();
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) am = _mm512_max_ps(abs16(v[i]), am);
        return am;
    }
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    __m256 r[2];
    sk_rht_quarters(j, v);
    for (int half = 0; half < 2; half++) {
        __m512d u[16];
        sk_rht_quarters_pd(v, half, u);
        sk_fwht16_d(u);
        __m512i m = _mm512_setzero_si512();
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) m = _mm512_max_epu64(m, _mm512_and_si512(_mm512_castpd_si512(u[i]), absm));
        r[half] = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(m), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    __m512 am = sk_join_halves(r[0], r[1]);
    return j->rht_round_bf16 ? sk_bf16_round(am) : am;
}



/* ---- dequantize -------------------------------------------------------- */


/* ---- MXFP4 1x32 ------------------------------------------------------------ */



/* ---- the skeleton kernels (simd_te_skel.h) over this file's leaves ------------- */

#define SK_NAME(n) avx512_##n
#define sk_absnn(v) absnn16(v)
#define SK_ROW_CHUNK 128
typedef col_tiles sk_col_tiles;
#define sk_col_strip(j, bf16, rht, use_sr, g0, g1, s0, s1, tb) col_strip16(j, bf16, rht, use_sr, g0, g1, s0, s1, tb)
typedef __m512i sk_line;
#define sk_tile_lines(tb, t, l, sc) col_tile_lines16(tb, t, l, sc)
#define sk_store_line(p, l, stream) col_store_line16(p, l, stream)
#define sk_tile_group_amax(x, bf16, stride, b0, n, a) tile_group_amax16(x, bf16, stride, b0, n, a)
#define sk_row_group_scales(k, x, bf16, b0, n, scale, inv) row_scales16(k, x, bf16, b0, n, scale, inv)
/* the NaN-aware codes whenever the row's NaN are not known (16x16 rows) */
#define sk_row_group_nan(x, bf16, b0, n) 1
#define sk_row_group_codes(x, bf16, b0, n, inv, rb, use_sr, nan, out) \
    row_group_codes16(x, bf16, b0, n, inv, rb, use_sr, nan, out)
#define sk_hmax(v) _mm512_reduce_max_ps(v)
#define sk_hmax_blocks(a) hmax16x16(a)
typedef __mmask16 sk_nanacc;
#define sk_nan_none() ((__mmask16)0)
#define sk_nan_or(acc, v) ((__mmask16)((acc) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)))
#define sk_nan_any(acc) ((acc) != 0)
#define sk_all_lt(a, b) (_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) == 0xFFFF)
#define sk_all_ordered(v) (_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q) == 0xFFFF)
#define sk_load_bytes(p, n) _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8((__mmask16)((1u << (n)) - 1u), p))
#define sk_store_bytes(v, n, p) store_scales(v, n, p)
#define sk_rand(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define sk_pack_block(c, out) pack16((c)[0], out)
#define sk_sr_block(buf, b) sr_block_bytes(buf, b)
#define sk_tile_amax(j, g, c0) rht16_tile_amax(j, g, c0)

/* Codes q[0..7] (16 elements) -> values, from a 16-entry table (nvfp4_core_e2m1_decode's). */
T512 static inline __m512 sk_e2m1_decode_part(const uint8_t *q8)
{
    const __m512 tab = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f,
                                      -2.0f, -3.0f, -4.0f, -6.0f);
    __m512i q = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)q8));
    __m512i idx = _mm512_or_si512(q, _mm512_slli_epi64(q, 28)); /* lane 2j: low nibble, 2j+1: high */
    return _mm512_permutexvar_ps(idx, tab);
}

T512 static inline void sk_store_out(float *p, __m512 v, int stream)
{
    if (stream) _mm512_stream_ps(p, v);
    else _mm512_storeu_ps(p, v);
}

T512 static inline void sk_store_rht_row(const nvfp4_simd_col_job *j, void *out, size_t e, __m512 v)
{
    if (j->rht_round_bf16) /* the values are bf16 already: keep the high halves */
        _mm256_storeu_si256((__m256i *)((uint16_t *)out + e),
                            _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(v), 16)));
    else
        _mm512_storeu_ps((float *)out + e, v);
}

#include "simd/simd_te_skel.h"

const nvfp4_simd_kernels nvfp4_simd_kernels_avx512 = {
    "avx512",          avx512_amax_f32,  avx512_amax_bf16, avx512_row_scales,  avx512_tile_scales,
    avx512_row_encode, avx512_row_fused, avx512_col_quant, avx512_rht_amax,  avx512_rht_apply, avx512_row_dequant, avx512_mx_row_scales,
    avx512_mx_row_encode,
};

#else /* not x86-64 GCC/clang: the dispatcher never selects this table */

const nvfp4_simd_kernels nvfp4_simd_kernels_avx512 = {"avx512", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

#endif
