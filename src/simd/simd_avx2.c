/*
 * simd_avx2.c - the `te` kernels of the fast CPU path over AVX2 (8 lanes; a
 * 16-element block is two registers). The vector operations, the helpers
 * and simd_te_lanes.h's codecs, Philox rounds, MXFP4 scale rules and RHT
 * paths come from simd_avx2_ops.h (shared with simd_avx2_generic.c, the
 * generic driver's AVX2 leaves); this file adds the kernels' own leaves
 * (row groups, columnwise tiles and their transposes). Differences from
 * simd_avx512.c:
 *   - AVX2 has no embedded rounding: the FPU roundings use the MXCSR mode
 *     (simd_avx2_ops.h says which and why that is exact);
 *   - E2M1 decode uses an 8-entry magnitude table plus the sign bit;
 *   - columnwise tiles are 16 rows x 8 columns, in two phases per strip;
 *   - the RHT takes the integer and binary64 paths only (SK_RHT_FP32_PATHS).
 * Selected for CPUs with AVX2 and FMA (the kernels use no FMA instruction:
 * every product is rounded before its sum, as in the scalar reference).
 * The kernels' loops, chunks, phases and instances are simd_te_skel.h's,
 * included once near the end of this file.
 */
#include "simd/simd_kernels.h"

#if defined(__GNUC__) && defined(__x86_64__)

#include "core/bf16.h"
#include "core/recipe.h"
#include "simd/simd_avx2_ops.h"

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

const nvfp4_simd_kernels nvfp4_simd_kernels_avx2 = {
    "avx2",          avx2_amax_f32,  avx2_amax_bf16, avx2_row_scales,  avx2_tile_scales,
    avx2_row_encode, avx2_row_fused, avx2_col_quant, avx2_rht_amax,  avx2_rht_apply, avx2_row_dequant, avx2_mx_row_scales,
    avx2_mx_row_encode,
};

#else /* not x86-64 GCC/clang: the dispatcher never selects this table */

const nvfp4_simd_kernels nvfp4_simd_kernels_avx2 = {"avx2", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

#endif
