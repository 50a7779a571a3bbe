/*
 * simd_avx2_generic.c - the generic driver's AVX2 leaves: simd_generic.c
 * is the driver (one skeleton for every recipe the `te` kernels do not
 * cover, over a table of per-ISA leaves); this file fills its AVX2 table,
 * nvfp4_simd_gen_leaves_avx2, which the avx2 and avx512 variants both use.
 *
 * Each leaf re-expresses, lane-wise, the src/core/ function named in its
 * comment with the same fp32 (or binary64) operations in the same order;
 * the per-block state (factor) comes from nvfp4_core_block_prepare. The
 * E2M1 codecs and Philox words (sk_e2m1_rn, sk_e2m1_sr, sk_sr_words_seq)
 * are simd_te_lanes.h's over simd_avx2_ops.h's operations, the ones the
 * AVX2 `te` kernels (simd_avx2.c) use.
 */
#include "simd/simd_kernels.h"

#if defined(__GNUC__) && defined(__x86_64__)

#include <float.h>
#include <string.h>

#include "core/recipe.h"
#include "simd/simd_avx2_ops.h"

T256 static inline __m256i blendv_i(__m256i a, __m256i b, __m256i mask)
{
    return _mm256_blendv_epi8(a, b, mask);
}

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

const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_avx2 = {avx2_gen_block_amax, avx2_gen_amax_nan, avx2_gen_sr_bytes,
                                                          avx2_gen_encode, avx2_gen_err_4over6};

#else /* not x86-64 GCC/clang: simd_generic.c sees a null encode and takes the scalar leaves */

const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_avx2 = {0, 0, 0, 0, 0};

#endif
