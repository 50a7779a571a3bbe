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
 * Lane-wise re-expression of the `te` chain (src/core/recipe.h) and of the
 * codecs in src/core/ (each helper names the scalar function it matches):
 *   - E2M1 RN as one IEEE addition (nvfp4_core_e2m1_rn_mag): the FPU's RNE
 *     of min(|y|, 6) + C with C = 2^22, 2^23 or 2^24 by binade, whose ulp
 *     is E2M1's step there (see e2m1_rn_mag_onestep16);
 *   - E2M1 SR: t = trunc(|y| * 2^k) with 2^k = 256/step, so t>>8 is the
 *     round-toward-zero position and t & 255 = floor(256*frac)
 *     (nvfp4_core_e2m1_sr_mag, exact since the scalings are by powers of two);
 *   - E4M3 RN satfinite: integer round-to-nearest-even on the fp32 pattern
 *     for normals, the FPU's RNE of |v|*2^9 for subnormals
 *     (nvfp4_core_e4m3_encode);
 *   - Philox4x32-10 over 16 counters at once (nvfp4_core_philox4x32_10):
 *     mulhi from vpmuludq on even and odd lanes.
 *   - RHT-16: exact butterflies on s[i]*x/4 chosen per 16x16 tile by the
 *     exponent spread of each column's nonzero inputs (all need biased
 *     exponents >= 3): one fp32 butterfly for bf16 inputs within 13 binades
 *     (rht16_bf16_exact), an fp32 hi/lo split within 17 (33 for bf16 inputs,
 *     rht16_split), binary64 within 25 (rht16_f64), a binary64 split with
 *     round-to-odd within 75 (rht16_split_f64), the scalar exact
 *     accumulator for anything else (Inf, NaN, tiny inputs);
 *   - UE8M0 floor / rceil for MXFP4 (nvfp4_core_ue8m0_floor_scale,
 *     nvfp4_core_ue8m0_cvt).
 * These are the leaves; the kernels' loops, chunks, phases and instances
 * are simd_te_skel.h's, included once at the end of this file (16 lanes).
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

/* nvfp4_core_e4m3_encode(v, satfinite) for v >= 0, not NaN (Inf allowed). */
T512 static inline __m512i e4m3_encode16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 20), _mm512_set1_epi32(1));
    __m512i n = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFFF)), lsb), 20);
    n = _mm512_sub_epi32(n, _mm512_set1_epi32(960)); /* (biased exponent - 120) << 3 | mantissa */
    __m512i s = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v, _mm512_set1_ps(512.0f)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __mmask16 sub = _mm512_cmp_ps_mask(v, _mm512_set1_ps(0x1p-6f), _CMP_LT_OQ);
    __m512i code = _mm512_mask_blend_epi32(sub, n, s);
    return _mm512_min_epu32(code, _mm512_set1_epi32(0x7E));
}

/* nvfp4_core_e4m3_decode for codes 0..0x7E. */
T512 static inline __m512 e4m3_decode16(__m512i code)
{
    __m512 normal = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(code, _mm512_set1_epi32(960)), 20));
    __m512 sub = _mm512_mul_ps(_mm512_cvtepi32_ps(code), _mm512_set1_ps(0x1p-9f));
    __mmask16 is_sub = _mm512_cmp_epi32_mask(code, _mm512_set1_epi32(8), _MM_CMPINT_LT);
    return _mm512_mask_blend_ps(is_sub, normal, sub);
}

/* te block scale bytes from block amaxes (nvfp4_core_block_scale, TE_MUL). */
T512 static inline __m512i te_scale16(const nvfp4_simd_te_consts *k, __m512 bamax)
{
    return e4m3_encode16(_mm512_mul_ps(bamax, _mm512_set1_ps(k->m)));
}

/* te encode multiplier from scale bytes (nvfp4_core_block_prepare, TE_RECIP). */
T512 static inline __m512 te_inv16(const nvfp4_simd_te_consts *k, __m512i sb)
{
    __m512 d = _mm512_mul_ps(e4m3_decode16(sb), _mm512_set1_ps(k->s_dec));
    __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), d);
    return _mm512_min_ps(inv, _mm512_set1_ps(FLT_MAX)); /* 1/0 = Inf -> FLT_MAX; no NaN possible */
}

/* Sign bit (as 8) and the NaN override of nvfp4_core_e2m1_encode: mag is
 * already 7 for NaN lanes, whose sign is dropped (NaN gives +6, 0x7). */
T512 static inline __m512i e2m1_finish16(__m512i u, __m512i au, __m512i mag)
{
    __mmask16 not_nan = _mm512_cmp_epu32_mask(au, _mm512_set1_epi32(0x7F800000), _MM_CMPINT_LE);
    __m512i sign = _mm512_maskz_srli_epi32(not_nan, u, 28);
    return _mm512_ternarylogic_epi32(mag, sign, _mm512_set1_epi32(8), 0xF8); /* mag | (sign & 8) */
}

/*
 * E2M1 RN magnitude (nvfp4_core_e2m1_rn_mag) of 16 lanes in one FPU
 * rounding of a = min(|y|, 6) (6 for NaN: 7, NaN's magnitude; Inf and
 * anything past 6 saturate to 7). E2M1's grid is
 * step 0.5 below 2, 1 in [2, 4), 2 in [4, 6]; C = 2^22, 2^23, 2^24 by a's
 * binade (biased exponent <= 127, 128, 129) puts a + C in a binade whose
 * ulp is that step (a < C, so C <= a + C < 2C), so fl(a + C) = C + a
 * rounded to the step with ties to even (ties land on even multiples of the
 * step: exactly the even E2M1 codes), and bits(fl(a + C)) - bits(C) is the
 * multiple k (0..4, 2..4, 2..3). The code is k, k + 2, k + 4: one
 * subtraction of X = bits(C) - 0, - 2, - 4. C and X come from 16-entry
 * tables indexed by the exponent's low 4 bits (127 -> 15, 128 -> 0,
 * 129 -> 1; max(E, 127) folds every smaller binade, subnormals and zero
 * included, into the first). Checked against nvfp4_core_e2m1_encode for
 * all 2^32 fp32 patterns while written; tests/check_simd.c's e2m1_grid
 * test keeps every threshold and its neighbours covered.
 */
T512 static inline __m512i e2m1_rn_mag_onestep16(__m512 y)
{
    const __m512i tc = _mm512_setr_epi32(0x4B000000, 0x4B800000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x4A800000);
    const __m512i tx =
        _mm512_setr_epi32(0x4B000000 - 2, 0x4B800000 - 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x4A800000);
    /* min(|y|, 6) on the bit patterns: the float order for |y| <= Inf, and
     * a NaN's pattern is above 6's, so NaN also gives 6 (as vminps with 6
     * second); vpminud issues on more Zen 4 pipes than vminps */
    __m512 a = _mm512_castsi512_ps(
        _mm512_min_epu32(_mm512_castps_si512(abs16(y)), _mm512_set1_epi32(0x40C00000)));
    __m512i e = _mm512_max_epu32(_mm512_srli_epi32(_mm512_castps_si512(a), 23), _mm512_set1_epi32(127));
    __m512 sum = _mm512_add_round_ps(a, _mm512_castsi512_ps(_mm512_permutexvar_epi32(e, tc)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_sub_epi32(_mm512_castps_si512(sum), _mm512_permutexvar_epi32(e, tx));
}

/* nvfp4_core_e2m1_encode(y, RN): the magnitude above, then the sign and
 * NaN's override. */
T512 static inline __m512i e2m1_rn16(__m512 y)
{
    __m512i u = _mm512_castps_si512(y);
    __m512i au = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
    return e2m1_finish16(u, au, e2m1_rn_mag_onestep16(y));
}

/* r: the 16 random bytes, one per 32-bit lane. */
/* E2M1 SR magnitude (nvfp4_core_e2m1_sr_mag; r: one random byte per lane).
 * a = min(|y|, 6) (vminps gives 6 for NaN: magnitude 7), then with
 * 2^k = 256/step (512, 256, 128 for a's binade <= 127, 128, 129: 16-entry
 * tables by the exponent's low 4 bits, as e2m1_rn_mag_onestep16)
 * t = trunc(a * 2^k) is exact, t >> 8 the round-toward-zero position in
 * the binade and t & 255 = floor(256 * frac): the code is
 * ((t + r) >> 8) + the binade's first code (0, 2, 4), one more iff
 * (t & 255) + r >= 256. a = 6 gives t = 768: 3 + 4 = 7 whatever r, so the
 * clamp to 6 is the saturation (and NaN's 7). 11 operations instead of 17
 * (simd_avx2.c's formulation). */
T512 static inline __m512i e2m1_sr_mag16(__m512 y, __m512i r)
{
    const __m512i tm = _mm512_setr_epi32(0x43800000, 0x43000000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x44000000);
    const __m512i tf = _mm512_setr_epi32(2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 a = _mm512_castsi512_ps( /* as in e2m1_rn_mag_onestep16 */
        _mm512_min_epu32(_mm512_castps_si512(abs16(y)), _mm512_set1_epi32(0x40C00000)));
    __m512i e = _mm512_max_epu32(_mm512_srli_epi32(_mm512_castps_si512(a), 23), _mm512_set1_epi32(127));
    __m512i t = _mm512_cvtt_roundps_epi32(_mm512_mul_ps(a, _mm512_castsi512_ps(_mm512_permutexvar_epi32(e, tm))),
                                          _MM_FROUND_NO_EXC);
    return _mm512_add_epi32(_mm512_srli_epi32(_mm512_add_epi32(t, r), 8), _mm512_permutexvar_epi32(e, tf));
}

/* nvfp4_core_e2m1_encode(y, SR) with random byte r per lane. */
T512 static inline __m512i e2m1_sr16(__m512 y, __m512i r)
{
    __m512i u = _mm512_castps_si512(y);
    __m512i au = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
    return e2m1_finish16(u, au, e2m1_sr_mag16(y, r));
}


/* nvfp4_core_e2m1_encode(y, RN) for y not NaN: the sign bit (as 8) needs
 * no NaN mask. */
T512 static inline __m512i e2m1_rn16_nonan(__m512 y)
{
    return _mm512_ternarylogic_epi32(e2m1_rn_mag_onestep16(y), _mm512_srli_epi32(_mm512_castps_si512(y), 28),
                                     _mm512_set1_epi32(8), 0xF8); /* mag | (sign & 8) */
}

T512 static inline __m512i e2m1_sr16_nonan(__m512 y, __m512i r)
{
    return _mm512_ternarylogic_epi32(e2m1_sr_mag16(y, r), _mm512_srli_epi32(_mm512_castps_si512(y), 28),
                                     _mm512_set1_epi32(8), 0xF8);
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

/* w[0..3] = Philox(ctr = {c0, c1, c2, c3}, key) lane-wise. */
T512 static inline void philox16(__m512i c0, __m512i c1, __m512i c2, __m512i c3, uint64_t seed, __m512i w[4])
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    const __m512i m0 = _mm512_set1_epi32((int)NVFP4_PHILOX_M0), m1 = _mm512_set1_epi32((int)NVFP4_PHILOX_M1);
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k0 += NVFP4_PHILOX_W0;
            k1 += NVFP4_PHILOX_W1;
        }
        __m512i hi0, lo0, hi1, lo1;
        mulhilo16(c0, m0, &hi0, &lo0);
        mulhilo16(c2, m1, &hi1, &lo1);
        /* 0x96: a ^ b ^ c in one instruction */
        __m512i n0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32((int)k0), 0x96);
        __m512i n2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32((int)k1), 0x96);
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

/* The SR words of 16 blocks with linear indices given as lo/hi lanes. */
T512 static inline void sr_words16(const nvfp4_simd_sr *sr, __m512i blo, __m512i bhi, __m512i w[4])
{
    philox16(_mm512_set1_epi32((int)(uint32_t)sr->offset), _mm512_set1_epi32((int)(uint32_t)(sr->offset >> 32)), blo,
             bhi, sr->seed, w);
}

/* Blocks block0 .. block0+15 (consecutive, 64-bit carry handled). */
T512 static inline void sr_words16_seq(const nvfp4_simd_sr *sr, uint64_t block0, __m512i w[4])
{
    __m512i base = _mm512_set1_epi32((int)(uint32_t)block0);
    __m512i lo = _mm512_add_epi32(base, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    __mmask16 carry = _mm512_cmp_epu32_mask(lo, base, _MM_CMPINT_LT);
    __m512i hi = _mm512_set1_epi32((int)(uint32_t)(block0 >> 32));
    hi = _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1));
    sr_words16(sr, lo, hi, w);
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

/* ---- amax -------------------------------------------------------------- */



/* ---- rowwise ------------------------------------------------------------ */

T512 static inline void store_scales(__m512i sb, size_t n, uint8_t *scale)
{
    _mm_mask_storeu_epi8(scale, (__mmask16)((1u << n) - 1u), _mm512_cvtepi32_epi8(sb));
}


T512 static inline __attribute__((always_inline)) __m512i row_code16(__m512 y, const uint8_t *rb, int plain)
{
    if (rb) {
        __m512i r = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)rb));
        return plain ? e2m1_sr16_nonan(y, r) : e2m1_sr16(y, r);
    }
    return plain ? e2m1_rn16_nonan(y) : e2m1_rn16(y);
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
    __m512i sb = te_scale16(k, hmax16x16(a));
    store_scales(sb, n, scale + b0);
    _mm512_store_ps(inv, te_inv16(k, sb));
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

T512 static inline __m512 bf16_round16(__m512 v)
{
    /* nvfp4_core_round_bf16 for non-NaN v (Inf passes through unchanged) */
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    u = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb);
    return _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32((int)0xFFFF0000u)));
}

/* The exponent range of a tile's 16 columns (lanes): biased exponents of
 * the largest |x| and of the smallest nonzero |x| (255 when all are zero).
 * For non-negative floats integer order is float order. */
T512 static inline void rht_exp_range(const __m512 v[16], __m512i *emax, __m512i *emin)
{
    __m512i mx = _mm512_setzero_si512(), mn = _mm512_set1_epi32(-1);
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), one = _mm512_set1_epi32(1);
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) {
        __m512i au = _mm512_and_si512(_mm512_castps_si512(v[i]), absm);
        mx = _mm512_max_epu32(mx, au);
        mn = _mm512_min_epu32(mn, _mm512_sub_epi32(au, one)); /* zero wraps to the maximum */
    }
    *emax = _mm512_srli_epi32(mx, 23);
    *emin = _mm512_srli_epi32(_mm512_add_epi32(mn, one), 23);
    /* all zero: mn + 1 wrapped to 0; make emin large so the spread is negative */
    *emin = _mm512_mask_mov_epi32(*emin, _mm512_cmpeq_epi32_mask(mn, _mm512_set1_epi32(-1)), _mm512_set1_epi32(255));
}

/* Lanes whose nonzero inputs have biased exponents E with 3 <= E, Emax <= 250
 * and Emax - Emin <= spread: s[i]*x/4 is then exact in fp32 and normal. */
T512 static inline __mmask16 rht_lanes_within(__m512i emax, __m512i emin, int spread)
{
    __mmask16 small = _mm512_cmp_epi32_mask(emax, _mm512_set1_epi32(NVFP4_CORE_RHT_EMAX_HIGH), _MM_CMPINT_LE);
    __mmask16 close = _mm512_cmp_epi32_mask(_mm512_sub_epi32(emax, emin), _mm512_set1_epi32(spread), _MM_CMPINT_LE);
    __mmask16 big = _mm512_cmp_epi32_mask(emin, _mm512_set1_epi32(NVFP4_CORE_RHT_EMIN_LOW), _MM_CMPINT_NLT);
    return (__mmask16)(small & close & big);
}

/* In-place butterfly v <- v H over 16 vectors (lanes independent). */
T512 static inline __attribute__((always_inline)) void fwht16_ps(__m512 v[16])
{
    SIMD_UNROLL
    for (unsigned h = 1; h < 16; h <<= 1) {
        SIMD_UNROLL
        for (unsigned q = 0; q < 16; q++) {
            if (q & h) continue; /* q is the lower index of the pair (q, q + h) */
            {
                __m512 a = v[q], b = v[q + h];
                v[q] = _mm512_add_ps(a, b);
                v[q + h] = _mm512_sub_ps(a, b);
            }
        }
    }
}

/* In-place butterfly over 16 vectors of int32 (lanes independent). */
T512 static inline __attribute__((always_inline)) void fwht16_epi32(__m512i v[16])
{
    SIMD_UNROLL
    for (unsigned h = 1; h < 16; h <<= 1) {
        SIMD_UNROLL
        for (unsigned q = 0; q < 16; q++) {
            if (q & h) continue;
            __m512i a = v[q], b = v[q + h];
            v[q] = _mm512_add_epi32(a, b);
            v[q + h] = _mm512_sub_epi32(a, b);
        }
    }
}

/* The job with its RHT weights s[i]/4 filled in (a local copy): a
 * broadcast from memory per row instead of testing the sign mask. */
T512 static inline const nvfp4_simd_col_job *with_rht_weights(const nvfp4_simd_col_job *job, nvfp4_simd_col_job *copy)
{
    if (!job->rht) return job;
    *copy = *job;
    for (unsigned i = 0; i < 16; i++) copy->rht_w[i] = ((job->rht_mask[0] >> i) & 1u) ? -0.25f : 0.25f;
    return copy;
}

/* The columnwise quantizer's copy of the job: RHT weights (if any) and the
 * te encode multiplier of every scale byte (nvfp4_simd_te_inv_table). */
T512 static inline const nvfp4_simd_col_job *prepared_col_job(const nvfp4_simd_col_job *job, nvfp4_simd_col_job *copy)
{
    *copy = *with_rht_weights(job, copy);
    nvfp4_simd_te_inv_table(&job->k, copy->inv_tab);
    return copy;
}

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

T512 static inline __m512 rht_quarter(const nvfp4_simd_col_job *j, unsigned i, __m512 x)
{
    return _mm512_mul_ps(x, _mm512_set1_ps(j->rht_w[i]));
}

/*
 * RHT-16 in fp32 arithmetic only, exact (src/core/hadamard.h's definition:
 * the exact 16-term sum times 1/4, rounded once), for lanes accepted by
 * rht_lanes_within(.., NVFP4_CORE_RHT_SPLIT_SPREAD). Notation: u_i = s_i x_i / 4 (exact,
 * normal: E >= 3), e = the largest unbiased exponent of the u_i, q = 2^(e-19).
 *
 *  1. Split u_i = h_i + l_i with h_i = (u_i + C) - C, C = 1.5 * 2^(e+4).
 *     |u_i| < 2^(e+1), so u_i + C lies in [22, 26] * 2^e, inside the binade
 *     [16, 32) * 2^e whose ulp is q: fl(u_i + C) = C + (u_i rounded to a
 *     multiple of q), and subtracting C is exact (Sterbenz). So h_i is u_i
 *     rounded to a multiple of q, |h_i| <= 2^(e+1), and l_i = u_i - h_i is
 *     exact: |l_i| <= q/2 and l_i is a multiple of ulp(u_i) (if |u_i| < q/2,
 *     h_i = 0 and l_i = u_i; otherwise |l_i| / ulp(u_i) <= 2^23).
 *  2. Every partial sum of the butterfly over the h_i (any subset, any
 *     signs) is a multiple of q of magnitude <= 16 * 2^(e+1) = 2^24 q:
 *     representable, so every add/sub is exact. No h_i is -0 (x - x = +0),
 *     so no partial sum is -0 either.
 *  3. Every partial sum over the l_i is a multiple of 2^(emin-23) (emin the
 *     smallest unbiased exponent of the nonzero u_i) of magnitude
 *     <= 16 * q/2 = 2^(e-16) = 2^(e-emin+7) * 2^(emin-23): exact when
 *     e - emin + 7 <= 24, i.e. a spread of at most 17 binades. For bf16
 *     inputs (8-bit significands) the unit is 2^(emin-7), so the bound is
 *     e - emin - 9 <= 24: a spread of at most 33. (Spreads 18 and 34
 *     can fail: tests/check_simd.c has such groups.)
 *  4. y_j = fl(H_j + L_j) is then one IEEE addition of the two exact partial
 *     results: the exact sum rounded once. An exact zero sum gives +0 (H_j is
 *     never -0). Emax <= 250 keeps C and every partial sum finite (partial
 *     sums below 2^(e+5) <= 2^128 that are multiples of 2^(e-19) are at most
 *     FLT_MAX); the final addition overflows to +-Inf only if the exact
 *     result does.
 */
T512 static inline __attribute__((always_inline)) void rht16_split(const nvfp4_simd_col_job *j, __m512 v[16],
                                                                    __m512i emax)
{
    /* C = 1.5 * 2^(e+4): biased exponent (Emax - 2) + 4 */
    const __m512 c = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_slli_epi32(_mm512_add_epi32(emax, _mm512_set1_epi32(2)), 23), _mm512_set1_epi32(0x00400000)));
    __m512 lo[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 u = rht_quarter(j, i, v[i]);
        __m512 h = _mm512_sub_ps(_mm512_add_ps(u, c), c);
        lo[i] = _mm512_sub_ps(u, h);
        v[i] = h;
    }
    fwht16_ps(v);
    fwht16_ps(lo);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 f = _mm512_add_ps(v[i], lo[i]);
        v[i] = j->rht_round_bf16 ? bf16_round16(f) : f;
    }
}

/* A broadcast of v's bit pattern (a vbroadcastss from memory). */
T512 static inline __m512i _mm512_set1_ps_bits(float v) { return _mm512_castps_si512(_mm512_set1_ps(v)); }

/* s_i x scale for the integer RHT paths: the sign of weight i applied as a
 * sign-bit flip (exact), then the power-of-two scaling (exact on their
 * lanes). */
T512 static inline __m512 rht_signed_scaled(const nvfp4_simd_col_job *j, unsigned i, __m512 x, __m512 scale)
{
    /* x ^ (w_i & sign bit) in one ternary op (0x78: A ^ (B & C)) */
    __m512i sx = _mm512_ternarylogic_epi32(_mm512_castps_si512(x), _mm512_set1_ps_bits(j->rht_w[i]),
                                           _mm512_set1_epi32((int)0x80000000u), 0x78);
    return _mm512_mul_ps(_mm512_castsi512_ps(sx), scale);
}

/*
 * The hi/lo split of rht16_split with the hi part in integers, which take
 * half of its floating-point additions off the FP adders (the bottleneck:
 * 2 x 64 butterfly add/subs per tile). Same lanes as rht16_split
 * (rht_lanes_within(.., NVFP4_CORE_RHT_SPLIT_SPREAD or _BF16)), plus every lane's
 * Emax >= 22 or all zero (rht_split_int_ok), so the power-of-two scalings
 * below are normal. With e the largest unbiased exponent of the x_i:
 *
 *  1. s_i = +-x_i * 2^(19-e): exact (a power of two, normal result),
 *     |s_i| < 2^20. h_i = RNE(s_i) as an int32 (|h_i| <= 2^20) and
 *     l_i = s_i - h_i, exact (vreduceps: s_i minus its RNE integer).
 *  2. The butterfly over the h_i in int32: exact (|sums| <= 16 * 2^20 =
 *     2^24), and the sums convert to fp32 exactly.
 *  3. The l_i are multiples of ulp(s_min) = 2^(emin-23) * 2^(19-e) with
 *     |l_i| <= 1/2: every partial sum is below 8 = 2^(e-emin+7) such units,
 *     exact when e - emin <= 17 (bf16 inputs: units of 2^(emin-7+19-e),
 *     exact up to a spread of 33), as in rht16_split.
 *  4. y = fl(H_j + L_j) * 2^(e-21): the addition is the single rounding of
 *     the exact sum (times 4 * 2^(19-e)); the scaling is exact, since a
 *     rounded y is at least 2^(emin-1) >= 2^-125 (normal) and an unrounded
 *     one is a multiple of 2^-149. H_j (from an int) is never -0, so an
 *     exact zero is +0.
 */
T512 static inline __attribute__((always_inline)) void rht16_split_int(const nvfp4_simd_col_job *j, __m512 v[16],
                                                                        __m512i emax)
{
    /* 2^(19-e) has biased exponent 19 - (Emax - 127) + 127 = 273 - Emax;
     * 2^(e-21): Emax - 21. All-zero lanes (Emax = 0) take Emax = 22. */
    __m512i ec = _mm512_max_epi32(emax, _mm512_set1_epi32(22));
    const __m512 up = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(273), ec), 23));
    const __m512 down = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(ec, _mm512_set1_epi32(21)), 23));
    __m512i h[16];
    __m512 lo[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 si = rht_signed_scaled(j, i, v[i], up);
        h[i] = _mm512_cvt_roundps_epi32(si, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        lo[i] = _mm512_reduce_round_ps(si, _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_NO_EXC);
    }
    fwht16_epi32(h);
    fwht16_ps(lo);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 f = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(h[i]), lo[i]), down);
        v[i] = j->rht_round_bf16 ? bf16_round16(f) : f;
    }
}

/*
 * RHT-16 of bf16 inputs as one int32 butterfly, for lanes with a spread of
 * at most 19 binades, Emin >= 10 and Emax <= 250 (rht_bf16_int_ok). With emin the
 * smallest unbiased exponent of the nonzero x_i of a lane, every x_i is a
 * multiple of 2^(emin-7) (8-bit significands): s_i = +-x_i * 2^(7-emin) is
 * an integer below 2^(spread+8), so the 16-term sums stay below
 * 2^(spread+12) <= 2^31 and are exact in int32. Converting a sum to fp32
 * (RNE) is the single rounding of the exact sum; times 2^(emin-9) (the
 * 1/4 and the scaling back) is exact: a nonzero sum is at least one unit,
 * 2^(emin-9) >= 2^-126 with Emin >= 10, so the result is normal. Zero sums
 * convert to +0. All-zero lanes (Emin = 255) scale by 2^6 and 2^119.
 */
T512 static inline __attribute__((always_inline)) void rht16_bf16_int(const nvfp4_simd_col_job *j, __m512 v[16],
                                                                       __m512i emin)
{
    /* 2^(7-emin): biased 7 - (Emin - 127) + 127 = 261 - Emin; 2^(emin-9): Emin - 9 */
    const __m512 up = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(261), emin), 23));
    const __m512 down = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(emin, _mm512_set1_epi32(9)), 23));
    __m512i h[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 si = rht_signed_scaled(j, i, v[i], up);
        h[i] = _mm512_cvt_roundps_epi32(si, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); /* exact */
    }
    fwht16_epi32(h);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m512 f = _mm512_mul_ps(_mm512_cvt_roundepi32_ps(h[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), down);
        v[i] = j->rht_round_bf16 ? bf16_round16(f) : f;
    }
}

/* rht16_bf16_int's lanes: spread <= 19, Emin >= 10, Emax <= 250 (finite;
 * all-zero lanes: Emin 255, spread negative). */
T512 static inline int rht_bf16_int_ok(__m512i emax, __m512i emin)
{
    __mmask16 close = _mm512_cmp_epi32_mask(_mm512_sub_epi32(emax, emin), _mm512_set1_epi32(NVFP4_CORE_RHT_BF16_INT_SPREAD),
                                            _MM_CMPINT_LE);
    __mmask16 big = _mm512_cmp_epi32_mask(emin, _mm512_set1_epi32(NVFP4_CORE_RHT_BF16_INT_EMIN_LOW), _MM_CMPINT_NLT);
    __mmask16 finite = _mm512_cmp_epi32_mask(emax, _mm512_set1_epi32(NVFP4_CORE_RHT_EMAX_HIGH), _MM_CMPINT_LE);
    return (__mmask16)(close & big & finite) == 0xFFFF;
}

/* rht16_split_int's extra condition: every lane's Emax >= 22 or 0. */
T512 static inline int rht_split_int_ok(__m512i emax)
{
    /* unsigned: Emax = 0 wraps to the top */
    return _mm512_cmp_epu32_mask(_mm512_sub_epi32(emax, _mm512_set1_epi32(1)),
                                 _mm512_set1_epi32(NVFP4_CORE_RHT_SPLIT_INT_EMAX_LOW - 1),
                                 _MM_CMPINT_LT) == 0;
}

/*
 * RHT-16 of bf16-representable inputs (8-bit significands) as one fp32
 * butterfly, for lanes accepted by rht_lanes_within(.., NVFP4_CORE_RHT_BF16_SPREAD):
 * every u_i = s_i x_i / 4 is exact and a multiple of 2^(emin-7) (emin the
 * smallest unbiased exponent of the nonzero u_i). Before the last stage a
 * partial sum has at most 8 terms, so it is below 8 * 2^(e+1) =
 * 2^(e-emin+11) * 2^(emin-7) (e the largest exponent): exact in fp32 when
 * e - emin + 11 <= 24, i.e. a spread of at most 13 binades. The last stage
 * adds two exact partial sums: one IEEE addition, the single rounding of
 * the exact 16-term sum that the definition asks for. (Spread 14 can fail:
 * tests/check_simd.c has such a group.) Adding +0 turns -0 inputs into +0,
 * so every exact zero sum is +0.
 */
T512 static inline __attribute__((always_inline)) void rht16_bf16_exact(const nvfp4_simd_col_job *j, __m512 v[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = _mm512_add_ps(rht_quarter(j, i, v[i]), _mm512_setzero_ps());
    fwht16_ps(v);
    if (j->rht_round_bf16)
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) v[i] = bf16_round16(v[i]);
}

/* In-place butterfly over 16 vectors of 8 doubles. */
T512 static inline __attribute__((always_inline)) void fwht16_pd(__m512d v[16])
{
    SIMD_UNROLL
    for (unsigned h = 1; h < 16; h <<= 1) {
        SIMD_UNROLL
        for (unsigned q = 0; q < 16; q++) {
            if (q & h) continue; /* q is the lower index of the pair (q, q + h) */
            __m512d a = v[q], b = v[q + h];
            v[q] = _mm512_add_pd(a, b);
            v[q + h] = _mm512_sub_pd(a, b);
        }
    }
}

/* v_i <- u_i = s_i x_i / 4 (+0 turns -0 into +0), in place: computed once
 * per tile, then split into the two binary64 halves. */
T512 static inline __attribute__((always_inline)) void rht_quarters16(const nvfp4_simd_col_job *j, __m512 v[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = _mm512_add_ps(rht_quarter(j, i, v[i]), _mm512_setzero_ps());
}

/* The 16 u_i of 8 lanes (half 0: lanes 0-7, half 1: lanes 8-15) as
 * binary64, from rht_quarters16's output. */
T512 static inline __attribute__((always_inline)) void rht_quarters_pd(const __m512 s[16], int half, __m512d u[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        __m256 h = half ? _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(s[i]), 1))
                        : _mm512_castps512_ps256(s[i]);
        u[i] = _mm512_cvtps_pd(h);
    }
}

T512 static inline __m512 join_halves(__m256 lo, __m256 hi)
{
    return _mm512_castsi512_ps(
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(lo)), _mm256_castps_si256(hi), 1));
}

/* The binary64 butterfly on s_i x_i / 4: exact on the lanes accepted by
 * rht_lanes_within(.., 25) bar its Emax <= 250 (every partial sum is an
 * integer multiple of the smallest input's last bit 2^(emin-25) below
 * 16 * 2^(emax-1), i.e. below 2^53 such units; the bound of
 * nvfp4_core_rht_double_exact), then rounded once to fp32. */
T512 static inline __attribute__((always_inline)) void rht16_f64(const nvfp4_simd_col_job *j, __m512 v[16])
{
    __m256 r[2][16];
    rht_quarters16(j, v);
    for (int half = 0; half < 2; half++) {
        __m512d u[16];
        rht_quarters_pd(v, half, u);
        fwht16_pd(u);
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++)
            r[half][i] = _mm512_cvt_roundpd_ps(u[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = join_halves(r[0][i], r[1][i]);
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
    rht_quarters16(j, v);
    for (int half = 0; half < 2; half++) {
        __m256i eh = half ? _mm512_extracti64x4_epi64(emax, 1) : _mm512_castsi512_si256(emax);
        /* binary64 biased exponent of 2^(e+4): (Emax - 2 - 127) + 4 + 1023 */
        __m512i cb = _mm512_slli_epi64(_mm512_add_epi64(_mm512_cvtepu32_epi64(eh), _mm512_set1_epi64(898)), 52);
        const __m512d c = _mm512_castsi512_pd(_mm512_or_si512(cb, _mm512_set1_epi64(0x0008000000000000ll)));
        __m512d hi[16], lo[16];
        rht_quarters_pd(v, half, hi);
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) {
            __m512d h = _mm512_sub_pd(_mm512_add_pd(hi[i], c), c);
            lo[i] = _mm512_sub_pd(hi[i], h);
            hi[i] = h;
        }
        fwht16_pd(hi);
        fwht16_pd(lo);
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
    for (unsigned i = 0; i < 16; i++) v[i] = join_halves(r[0][i], r[1][i]);
}

/* The scalar exact accumulator for the lanes (columns) not in `done`. */
T512 static __attribute__((noinline)) void rht16_scalar_lanes(const nvfp4_simd_col_job *j, size_t g, size_t c0,
                                                             __m512 v[16], __mmask16 done)
{
    _Alignas(64) float t[16][16];
    for (int i = 0; i < 16; i++) _mm512_store_ps(t[i], v[i]);
    for (unsigned c = 0; c < 16; c++)
        if (!((done >> c) & 1u)) {
            float y[16];
            nvfp4_simd_col_group(j, g, c0 + c, y);
            for (int i = 0; i < 16; i++) t[i][c] = y[i];
        }
    for (int i = 0; i < 16; i++) v[i] = _mm512_load_ps(t[i]);
}

/* Tiles with a lane beyond the fp32 split's spread: the plain binary64
 * butterfly when every lane allows it, else the binary64 split, else (Inf,
 * NaN, inputs below 2^-124, spreads beyond 75) the scalar exact accumulator
 * for those lanes. Then RN to bf16 if asked. */
T512 static inline __attribute__((always_inline)) void rht16_wide(const nvfp4_simd_col_job *j, size_t g, size_t c0,
                                                                   __m512 v[16], __m512i emax, __m512i emin)
{
    __mmask16 finite = _mm512_cmp_epi32_mask(emax, _mm512_set1_epi32(255), _MM_CMPINT_LT);
    __mmask16 big = _mm512_cmp_epi32_mask(emin, _mm512_set1_epi32(NVFP4_CORE_RHT_EMIN_LOW), _MM_CMPINT_NLT);
    __m512i spread = _mm512_sub_epi32(emax, emin);
    __mmask16 d25 =
        finite & big & _mm512_cmp_epi32_mask(spread, _mm512_set1_epi32(NVFP4_CORE_RHT_F64_SPREAD), _MM_CMPINT_LE);
    __mmask16 d75 = finite & big & _mm512_cmp_epi32_mask(spread, _mm512_set1_epi32(NVFP4_CORE_RHT_SPLIT64_SPREAD), _MM_CMPINT_LE);
    __mmask16 exact = d75;
    if (d25 == 0xFFFF) {
        exact = d25;
        rht16_f64(j, v);
    } else {
        rht16_split_f64(j, v, emax);
    }
    if (j->rht_round_bf16) {
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) v[i] = bf16_round16(v[i]);
    }
    if (exact != 0xFFFF) rht16_scalar_lanes(j, g, c0, v, exact);
}

/* The 16 rows of group g, columns c0..c0+15, RHT'd in place when asked:
 * one fp32 butterfly when the input is bf16 and the spread allows it, the
 * exact hi/lo split otherwise, the binary64 path for wide spreads. All give
 * nvfp4_core_rht_forward_group's bits. */
T512 static inline __attribute__((always_inline)) void col_load_group(const nvfp4_simd_col_job *j, const int bf16,
                                                                       size_t g, size_t c0, __m512 v[16])
{
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) v[i] = load16(j->x, bf16, (16 * g + i) * j->cols + c0);
    if (!j->rht) return;
    __m512i emax, emin;
    rht_exp_range(v, &emax, &emin);
    if (bf16 && rht_bf16_int_ok(emax, emin)) rht16_bf16_int(j, v, emin);
    else if (bf16 && rht_lanes_within(emax, emin, NVFP4_CORE_RHT_BF16_SPREAD) == 0xFFFF) rht16_bf16_exact(j, v);
    else if (rht_lanes_within(emax, emin, bf16 ? NVFP4_CORE_RHT_SPLIT_SPREAD_BF16 : NVFP4_CORE_RHT_SPLIT_SPREAD) == 0xFFFF) {
        if (rht_split_int_ok(emax)) rht16_split_int(j, v, emax);
        else rht16_split(j, v, emax);
    }
    else rht16_wide(j, g, c0, v, emax, emin);
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
    __m512i sb = te_scale16(k, am);
    *sb_out = sb;
    *inv_out = inv_lookup16(j->inv_tab, sb); /* te_inv16 without its division */
    return has_nan;
}

/* The tile's codes and scale bytes into the stage. */
T512 static inline __attribute__((always_inline)) void col_tile_emit(const nvfp4_simd_col_job *j, const int use_sr,
                                                                   size_t g, size_t c0, const __m512 v[16],
                                                                   __m512i sb, __m512 inv, int has_nan,
                                                                   col_tiles *tb, size_t ct, size_t gslot)
{
    size_t nbr = j->rows / 16;
    __m512i w[4];
    if (use_sr) {
        _Alignas(64) uint32_t lo[16], hi[16];
        for (size_t c = 0; c < 16; c++) {
            uint64_t b = (c0 + c) * nbr + g;
            lo[c] = (uint32_t)b;
            hi[c] = (uint32_t)(b >> 32);
        }
        sr_words16(j->sr, _mm512_load_si512(lo), _mm512_load_si512(hi), w);
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
            wd[i >> 3] = _mm512_shrdi_epi32(wd[i >> 3], e2m1_rn_mag_onestep16(y[i]), 4);
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
                code = e2m1_sr16(y, r);
            } else {
                code = e2m1_rn16(y);
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
    if (rht) col_load_group(j, bf16, g, c0, v);
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

/* Output rows s0..s1-1 (columns of the input), groups g0..g1-1, from the
 * strip's tiles: per column of tiles, two 8x8 transposes of 64-bit words
 * make its 16 output lines and one two-table byte permute its scale bytes.
 * Whole aligned 64-byte lines go out as streaming stores; other strips
 * (fewer than 8 groups, unaligned rows) through the stage and
 * nvfp4_simd_col_stage_flush. */
T512 static void col_tiles_flush(const nvfp4_simd_col_job *j, const col_tiles *tb, size_t s0, size_t s1, size_t g0,
                                 size_t g1, nvfp4_simd_col_stage *st)
{
    size_t nbr = j->rows / 16;
    int lines = nvfp4_simd_col_whole_lines(j, g0, g1);
    /* byte 8c + t of the result: tile t's scale byte of column c (c < 8; the
     * second permute takes columns 8..15): tables tb->scale[ct][0..3] and [4..7] */
    _Alignas(64) uint8_t perm[2][64];
    for (int h = 0; h < 2; h++)
        for (int c = 0; c < 8; c++)
            for (int t = 0; t < 8; t++) perm[h][8 * c + t] = (uint8_t)(16 * t + 8 * h + c);
    for (size_t c0 = s0; c0 < s1; c0 += 16) {
        size_t ct = (c0 - s0) / 16;
        __m512i r[8], lines_lo[8], lines_hi[8];
        SIMD_UNROLL
        for (int t = 0; t < 8; t++) r[t] = _mm512_load_si512(tb->q[ct][t]);
        transpose8x8_epi64(r, lines_lo);
        SIMD_UNROLL
        for (int t = 0; t < 8; t++) r[t] = _mm512_load_si512(tb->q[ct][t] + 8);
        transpose8x8_epi64(r, lines_hi);
        __m512i s_lo = _mm512_load_si512(tb->scale[ct][0]), s_hi = _mm512_load_si512(tb->scale[ct][4]);
        _Alignas(64) uint8_t sc[2][64];
        SIMD_UNROLL
        for (int h = 0; h < 2; h++)
            _mm512_store_si512(sc[h], _mm512_permutex2var_epi8(s_lo, _mm512_load_si512(perm[h]), s_hi));
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) {
            size_t c = c0 + 4 * (size_t)(k / 2) + (size_t)(k % 2); /* qword k of the low unpack */
            __m512i l[2] = {lines_lo[k], lines_hi[k]};
            SIMD_UNROLL
            for (size_t h = 0; h < 2; h++) {
                size_t cc = c + 2 * h, cl = cc - c0;
                if (lines)
                    _mm512_stream_si512((void *)(j->data + cc * (j->rows / 2) + 8 * g0), l[h]);
                else
                    _mm512_store_si512((void *)st->data[cc - s0], l[h]);
                /* 8 bytes (the stage's scale rows are 8 wide; lines have 8 groups) */
                memcpy(lines ? j->scale + cc * nbr + g0 : st->scale[cc - s0], &sc[cl / 8][8 * (cl % 8)], 8);
            }
        }
    }
    if (lines)
        _mm_sfence();
    else
        nvfp4_simd_col_stage_flush(j, st, s0, s1, g0, g1);
}

/* RHT tiles transformed (into an L1 buffer) before any of them is
 * quantized: the transform and the quantization of one tile form a chain
 * too long for the out-of-order window to overlap with the next tile's
 * (the row kernel's finding); split, each phase's tiles are independent.
 * 8 tiles (8 KiB): RHT + quantize +6% per core on a 4 MiB input (4 tiles
 * +4%, 16 +5%; also moving the tile scales into the first phase: slower). */
#define RHT_PHASE_TILES 8
/* Prefetches for the tile at group g, columns c0..c0+15 of the strip
 * ending at s1: into L2, the rows this tile position needs two groups
 * later (for the strip's last two groups: the first two of the next
 * strip), which leaves time for DRAM; into L1, the next tile's rows,
 * already in L2. always_inline: as a plain static helper GCC 12 at -O1
 * and above deleted every call to it (a void function whose only
 * statements are __builtin_prefetch counts as free of side effects), which
 * goes unnoticed in cache and shows only on inputs larger than the caches
 * (docs/performance.md, "Measured design choices"). */
T512 static inline __attribute__((always_inline)) void col_prefetch(const nvfp4_simd_col_job *j, size_t g, size_t g0,
                                                                     size_t g1, size_t c0, size_t s1)
{
    size_t ncol16 = j->cols / 16 * 16, es = j->bf16 ? 2u : 4u;
    size_t pg = g + 2 < g1 ? g + 2 : g0 + (g + 2 - g1), pc = g + 2 < g1 ? c0 : c0 + NVFP4_SIMD_STAGE_COLS;
    if (pc + 16 <= ncol16)
        for (size_t i = 0; i < 16; i++)
            _mm_prefetch((const char *)j->x + ((16 * pg + i) * j->cols + pc) * es, _MM_HINT_T1);
    if (c0 + 16 < s1)
        for (size_t i = 0; i < 16; i++)
            _mm_prefetch((const char *)j->x + ((16 * g + i) * j->cols + c0 + 16) * es, _MM_HINT_T0);
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
                col_prefetch(j, g, g0, g1, c0, s1);
                __m512 v[16];
                col_load_group(j, bf16, g, c0, v);
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
            col_prefetch(j, g, g0, g1, c0, s1);
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
    rht_exp_range(v, &emax, &emin);
    int fp32_ok = j->bf16 ? rht_lanes_within(emax, emin, NVFP4_CORE_RHT_SPLIT_SPREAD_BF16) == 0xFFFF
                          : rht_lanes_within(emax, emin, NVFP4_CORE_RHT_SPLIT_SPREAD) == 0xFFFF;
    __mmask16 finite = _mm512_cmp_epi32_mask(emax, _mm512_set1_epi32(255), _MM_CMPINT_LT);
    __mmask16 big = _mm512_cmp_epi32_mask(emin, _mm512_set1_epi32(NVFP4_CORE_RHT_EMIN_LOW), _MM_CMPINT_NLT);
    __mmask16 d25 = finite & big &
                    _mm512_cmp_epi32_mask(_mm512_sub_epi32(emax, emin), _mm512_set1_epi32(NVFP4_CORE_RHT_F64_SPREAD),
                                          _MM_CMPINT_LE);
    if (fp32_ok || d25 != 0xFFFF) {
        if (j->bf16 && rht_bf16_int_ok(emax, emin)) rht16_bf16_int(j, v, emin);
        else if (j->bf16 && rht_lanes_within(emax, emin, NVFP4_CORE_RHT_BF16_SPREAD) == 0xFFFF) rht16_bf16_exact(j, v);
        else if (fp32_ok && rht_split_int_ok(emax)) rht16_split_int(j, v, emax);
        else if (fp32_ok) rht16_split(j, v, emax);
        else rht16_wide(j, g, c0, v, emax, emin);
        __m512 am = _mm512_setzero_ps();
        SIMD_UNROLL
        for (int i = 0; i < 16; i++) am = _mm512_max_ps(abs16(v[i]), am);
        return am;
    }
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    __m256 r[2];
    rht_quarters16(j, v);
    for (int half = 0; half < 2; half++) {
        __m512d u[16];
        rht_quarters_pd(v, half, u);
        fwht16_pd(u);
        __m512i m = _mm512_setzero_si512();
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) m = _mm512_max_epu64(m, _mm512_and_si512(_mm512_castpd_si512(u[i]), absm));
        r[half] = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(m), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    __m512 am = join_halves(r[0], r[1]);
    return j->rht_round_bf16 ? bf16_round16(am) : am;
}

/*
 * An upper bound, per lane, of max |RHT(x)| over a tile's 16 outputs as
 * rounded, from the plain fp32 butterfly (about 2.4 times cheaper than the
 * exact paths). With e the largest unbiased exponent of the lane's x_i
 * (Emax <= 250): u_i = s_i x_i / 4 is exact, or off by at most 2^-150
 * below 2^-124; each butterfly output went through 4 roundings, so
 * |y~_j - y_j| <= gamma_4 * sum |u_i| < 2^-21.99 * 16 * 2^(e-1) < 2^(e-18)
 * (additions in the subnormal range are exact). E' = 2^(max(Emax - 16, 17)
 * - 127) is at least 4 * 2^(e-18) and 2^-110, and fl(M~ + E') (M~ = max_j
 * |y~_j|) loses at most (M~ + E') * 2^-24 < 2^(e-20) < E' / 2 to rounding:
 * it bounds max_j |y_j| from above, and so (rounding to fp32 and bf16 is
 * monotonic) the rounded maximum. Lanes with Emax > 250 (Inf, NaN, or
 * too large for the argument) get +Inf.
 */
T512 static inline __attribute__((always_inline)) __m512 rht16_tile_amax_bound(const nvfp4_simd_col_job *j, size_t g,
                                                                                size_t c0)
{
    __m512 v[16];
    __m512i mx = _mm512_setzero_si512();
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) {
        v[i] = load16(j->x, j->bf16, (16 * g + i) * j->cols + c0);
        mx = _mm512_max_epu32(mx, _mm512_and_si512(_mm512_castps_si512(v[i]), _mm512_set1_epi32(0x7FFFFFFF)));
        v[i] = rht_quarter(j, (unsigned)i, v[i]);
    }
    __m512i emax = _mm512_srli_epi32(mx, 23);
    fwht16_ps(v);
    __m512 m = _mm512_setzero_ps();
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) m = _mm512_max_ps(abs16(v[i]), m);
    __m512i eb = _mm512_max_epi32(_mm512_sub_epi32(emax, _mm512_set1_epi32(16)), _mm512_set1_epi32(17));
    __m512 ub = _mm512_add_ps(m, _mm512_castsi512_ps(_mm512_slli_epi32(eb, 23)));
    return _mm512_mask_mov_ps(ub, _mm512_cmp_epi32_mask(emax, _mm512_set1_epi32(NVFP4_CORE_RHT_EMAX_HIGH), _MM_CMPINT_GT),
                              _mm512_set1_ps(INFINITY));
}



/* ---- dequantize -------------------------------------------------------- */


/* ---- MXFP4 1x32 ------------------------------------------------------------ */

/* UE8M0 block scales from 16 block amaxes (not NaN; Inf possible):
 * FLOOR = nvfp4_core_ue8m0_floor_scale(bamax, 2) (exponent bits, Inf as
 * 255, minus 2, at least 0); RCEIL = nvfp4_core_ue8m0_cvt(bamax * fl(1/6),
 * round up), whose bf16 round-up step is reproduced on the bit pattern. */
T512 static inline __m512i mx_scale16(int rule, __m512 bam)
{
    const __m512i one = _mm512_set1_epi32(1);
    if (rule == NVFP4_SIMD_MX_FLOOR) {
        __m512i e = _mm512_srli_epi32(_mm512_castps_si512(bam), 23);
        return _mm512_max_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(2)), _mm512_setzero_si512());
    }
    __m512i au = _mm512_castps_si512(_mm512_mul_ps(bam, _mm512_set1_ps(NVFP4_CORE_INV6)));
    __mmask16 frac = _mm512_test_epi32_mask(au, _mm512_set1_epi32(0x7FFFFF));
    __m512i b = _mm512_srli_epi32(au, 16);
    b = _mm512_mask_add_epi32(b, _mm512_test_epi32_mask(au, _mm512_set1_epi32(0xFFFF)), b, one);
    __mmask16 bump = _mm512_test_epi32_mask(b, _mm512_set1_epi32(0x7F)) &
                     _mm512_cmp_epi32_mask(b, _mm512_set1_epi32(0x40), _MM_CMPINT_NLE) &
                     _mm512_cmp_epi32_mask(b, _mm512_set1_epi32(0x7F80), _MM_CMPINT_LT);
    __m512i e2 = _mm512_srli_epi32(b, 7);
    e2 = _mm512_mask_add_epi32(e2, bump, e2, one);
    __m512i e = _mm512_mask_blend_epi32(frac, _mm512_srli_epi32(au, 23), e2);
    return _mm512_min_epu32(e, _mm512_set1_epi32(0xFE));
}

/* 1 / nvfp4_core_pow2_scale(r, s): a power of two (exact reciprocal, so
 * x * it equals the reference's x / factor); code 0 is 2^-127, raised to
 * 2^-126 by FLOOR's lower clamp; 0xFF is NaN for RCEIL and +Inf for FLOOR
 * (torchao's fp32 scale, whose reciprocal +0 gives x * 0 = x / Inf: +-0 for
 * finite x, NaN for NaN and Inf). */
T512 static inline __m512 mx_recip16(int rule, __m512i sc)
{
    __m512i bits = _mm512_slli_epi32(sc, 23);
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmp_epi32_mask(sc, _mm512_setzero_si512(), _MM_CMPINT_EQ),
                                 _mm512_set1_epi32(rule == NVFP4_SIMD_MX_FLOOR ? 0x00800000 : 0x00400000));
    if (rule != NVFP4_SIMD_MX_FLOOR)
        bits = _mm512_mask_mov_epi32(bits, _mm512_cmp_epi32_mask(sc, _mm512_set1_epi32(0xFF), _MM_CMPINT_EQ),
                                     _mm512_set1_epi32(0x7FC00000));
    return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_castsi512_ps(bits));
}

/* FLOOR's torchao special: a NaN y gives 0x3 instead of 0x7. */
T512 static inline __m512i mx_fix_nan(int rule, __m512 y, __m512i code)
{
    if (rule != NVFP4_SIMD_MX_FLOOR) return code;
    return _mm512_mask_mov_epi32(code, _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q), _mm512_set1_epi32(3));
}



/* ---- the skeleton kernels (simd_te_skel.h) over this file's leaves ------------- */

#define SK_FN T512
#define SK_W 16
#define SK_NAME(n) avx512_##n
typedef __m512 sk_vf;
typedef __m512i sk_vi;
#define sk_zero() _mm512_setzero_ps()
#define sk_set1(f) _mm512_set1_ps(f)
#define sk_mul(a, b) _mm512_mul_ps(a, b)
#define sk_abs(v) abs16(v)
#define sk_absnn(v) absnn16(v)
#define sk_te_scale(k, v) te_scale16(k, v)
#define sk_te_inv(k, sb) te_inv16(k, sb)
#define SK_ROW_CHUNK 128
typedef col_tiles sk_col_tiles;
#define sk_col_strip(j, bf16, rht, use_sr, g0, g1, s0, s1, tb) col_strip16(j, bf16, rht, use_sr, g0, g1, s0, s1, tb)
#define sk_col_tiles_flush(j, tb, s0, s1, g0, g1, st) col_tiles_flush(j, tb, s0, s1, g0, g1, st)
#define sk_col_job(job, copy) prepared_col_job(job, copy)
#define sk_tile_group_amax(x, bf16, stride, b0, n, a) tile_group_amax16(x, bf16, stride, b0, n, a)
#define sk_row_group_scales(k, x, bf16, b0, n, scale, inv) row_scales16(k, x, bf16, b0, n, scale, inv)
/* the NaN-aware codes whenever the row's NaN are not known (16x16 rows) */
#define sk_row_group_nan(x, bf16, b0, n) 1
#define sk_row_group_codes(x, bf16, b0, n, inv, rb, use_sr, nan, out) \
    row_group_codes16(x, bf16, b0, n, inv, rb, use_sr, nan, out)
#define sk_max(a, b) _mm512_max_ps(a, b)
#define sk_hmax(v) _mm512_reduce_max_ps(v)
#define sk_hmax_blocks(a) hmax16x16(a)
typedef __mmask16 sk_nanacc;
#define sk_nan_none() ((__mmask16)0)
#define sk_nan_or(acc, v) ((__mmask16)((acc) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)))
#define sk_nan_any(acc) ((acc) != 0)
#define sk_all_lt(a, b) (_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) == 0xFFFF)
#define sk_all_ordered(v) (_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q) == 0xFFFF)
#define sk_load(x, bf16, i) load16(x, bf16, i)
#define sk_store_f(p, v) _mm512_store_ps(p, v)
#define sk_load_bytes(p, n) _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8((__mmask16)((1u << (n)) - 1u), p))
#define sk_store_bytes(v, n, p) store_scales(v, n, p)
#define sk_e2m1_rn(y) e2m1_rn16(y)
#define sk_e2m1_sr(y, r) e2m1_sr16(y, r)
#define sk_rand(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define sk_pack_block(c, out) pack16((c)[0], out)
#define sk_sr_block(buf, b) sr_block_bytes(buf, b)
#define sk_e4m3_decode(v) e4m3_decode16(v)
#define sk_mx_scale(rule, v) mx_scale16(rule, v)
#define sk_mx_recip(rule, v) mx_recip16(rule, v)
#define sk_mx_fix_nan(rule, y, c) mx_fix_nan(rule, y, c)
#define sk_rht_job(job, copy) with_rht_weights(job, copy)
#define sk_col_load_group(j, g, c0, v) col_load_group(j, (j)->bf16, g, c0, v)
#define sk_tile_amax_bound(j, g, c0) rht16_tile_amax_bound(j, g, c0)
#define sk_tile_amax(j, g, c0) rht16_tile_amax(j, g, c0)

T512 static inline void sk_sr_blocks(const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *buf)
{
    __m512i w[4];
    sr_words16_seq(sr, block0, w);
    sr_bytes_aos16(w, buf);
}

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
