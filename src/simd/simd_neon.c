/*
 * simd_neon.c - aarch64 Advanced SIMD (NEON) leaves of the fast CPU path
 * (4 lanes; a 16-element block is four registers), for Grace (GB200/GB300
 * hosts) and every other ARMv8-A CPU. Each leaf computes what the scalar
 * variant (simd_scalar.c, simd_generic.c) computes, byte for byte, with the
 * same fp32 operations in the same order as src/core/:
 *   - no fused multiply-add anywhere (vfmaq rounds once where the reference
 *     rounds twice; the build's -ffp-contract=off keeps the compiler from
 *     forming one); vdivq_f32, vaddq_f32 and vcvt*_f64 round as IEEE in the
 *     FPCR mode, which the library requires to be the default
 *     round-to-nearest-even without flush-to-zero (as on x86, MXCSR);
 *   - the amaxes are integer maxima of the |x| bit patterns with NaN lanes
 *     zeroed: the fmaxf order of non-NaN magnitudes, free of FMAX/FMAXNM's
 *     NaN rules;
 *   - what is decided once per block (the scale byte's encode state, the
 *     dequantization scale) is the src/core/ call the scalar code makes;
 *     the te scale byte is encoded lane-wise (e4m3_encode4, the integer
 *     form of simd_te_lanes.h's sk_e4m3_encode);
 *   - E2M1 RN in one FPU addition (nvfp4_core_e2m1_rn_mag) and SR by the
 *     exact truncation of simd_te_lanes.h's sk_e2m1_sr_mag (the proof is
 *     there);
 *   - Philox4x32-10 with one block per lane (nvfp4_core_sr_block_bytes).
 * First version: the RHT kernels (rht_amax, rht_apply, and col_quant with
 * RHT) are the scalar ones. Tested byte for
 * byte against the scalar reference under qemu-aarch64 (make check-aarch64);
 * its speed has not been measured on ARM hardware.
 */
#include "simd/simd_kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>
#include <float.h>
#include <string.h>

#include "core/bf16.h"
#include "core/e2m1.h"
#include "core/philox.h"
#include "core/recipe.h"

static const nvfp4_core_recipe te_chain = NVFP4_CORE_CHAIN_TE;
static const nvfp4_core_recipe mx_floor_chain = NVFP4_CORE_CHAIN_MXFP4_FLOOR;
static const nvfp4_core_recipe mx_rceil_chain = NVFP4_CORE_CHAIN_MXFP4_RCEIL;


/* ---- loads and amax -------------------------------------------------------- */

/* The fp32 bit patterns of 4 elements at x + i (bf16: shifted up). */
static inline uint32x4_t load_bits4(const void *x, int bf16, size_t i)
{
    if (bf16) return vshll_n_u16(vld1_u16((const uint16_t *)x + i), 16);
    return vreinterpretq_u32_f32(vld1q_f32((const float *)x + i));
}

/* |x| as a bit pattern, 0 for NaN: the unsigned order of these is the
 * fmaxf order of the magnitudes (NaN ignored, Inf counts). */
static inline uint32x4_t abs_bits_nonan4(uint32x4_t u)
{
    uint32x4_t au = vandq_u32(u, vdupq_n_u32(0x7FFFFFFFu));
    return vandq_u32(au, vcleq_u32(au, vdupq_n_u32(0x7F800000u)));
}

static inline float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float amax_bits(const void *x, int bf16, size_t n)
{
    uint32x4_t a0 = vdupq_n_u32(0), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = vmaxq_u32(a0, abs_bits_nonan4(load_bits4(x, bf16, i)));
        a1 = vmaxq_u32(a1, abs_bits_nonan4(load_bits4(x, bf16, i + 4)));
        a2 = vmaxq_u32(a2, abs_bits_nonan4(load_bits4(x, bf16, i + 8)));
        a3 = vmaxq_u32(a3, abs_bits_nonan4(load_bits4(x, bf16, i + 12)));
    }
    for (; i + 4 <= n; i += 4) a0 = vmaxq_u32(a0, abs_bits_nonan4(load_bits4(x, bf16, i)));
    float m = bits_to_f32(vmaxvq_u32(vmaxq_u32(vmaxq_u32(a0, a1), vmaxq_u32(a2, a3))));
    for (; i < n; i++) {
        float v = bf16 ? nvfp4_core_bf16_decode(((const uint16_t *)x)[i]) : ((const float *)x)[i];
        m = nvfp4_core_amax_step(m, v, 0);
    }
    return m;
}

static float neon_amax_f32(const float *x, size_t n) { return amax_bits(x, 0, n); }
static float neon_amax_bf16(const uint16_t *x, size_t n) { return amax_bits(x, 1, n); }

/* fmaxf amax of the 16 elements at x + e (as a bit pattern). */
static inline uint32_t block_amax_bits(const void *x, int bf16, size_t e)
{
    uint32x4_t a = vmaxq_u32(abs_bits_nonan4(load_bits4(x, bf16, e)), abs_bits_nonan4(load_bits4(x, bf16, e + 4)));
    uint32x4_t b = vmaxq_u32(abs_bits_nonan4(load_bits4(x, bf16, e + 8)), abs_bits_nonan4(load_bits4(x, bf16, e + 12)));
    return vmaxvq_u32(vmaxq_u32(a, b));
}

/* ---- codecs ------------------------------------------------------------------ */

/* nvfp4_core_e4m3_encode(v, satfinite) for v >= 0, not NaN (simd_te_lanes.h's
 * sk_e4m3_encode): normals by integer RNE at 3 mantissa bits, subnormals
 * (v < 2^-6) as v * 2^9 rounded to the nearest even integer (exact scaling,
 * one rounding), both clamped to 0x7E. */
static inline uint32x4_t e4m3_encode4(float32x4_t v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 20), vdupq_n_u32(1));
    uint32x4_t n = vshrq_n_u32(vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7FFFFu)), lsb), 20);
    n = vsubq_u32(n, vdupq_n_u32(960));
    uint32x4_t s = vcvtq_u32_f32(vrndnq_f32(vmulq_f32(v, vdupq_n_f32(512.0f))));
    uint32x4_t sub = vcltq_f32(v, vdupq_n_f32(0x1p-6f));
    return vminq_u32(vbslq_u32(sub, s, n), vdupq_n_u32(0x7E));
}

/* The te scale bytes (nvfp4_core_block_scale, BSCALE_TE_MUL) of 4 block
 * amaxes: e4m3(bamax * m), one rounding for the product. */
static inline uint32x4_t te_scale4(const nvfp4_simd_te_consts *k, uint32x4_t bamax_bits)
{
    return e4m3_encode4(vmulq_f32(vreinterpretq_f32_u32(bamax_bits), vdupq_n_f32(k->m)));
}

/* Selects by the biased exponent e (>= 127): e == 127, 128, else (129). */
static inline uint32x4_t by_binade(uint32x4_t e, uint32_t v127, uint32_t v128, uint32_t v129)
{
    uint32x4_t r = vbslq_u32(vceqq_u32(e, vdupq_n_u32(128)), vdupq_n_u32(v128), vdupq_n_u32(v129));
    return vbslq_u32(vceqq_u32(e, vdupq_n_u32(127)), vdupq_n_u32(v127), r);
}

/* min(|y|, 6) as the unsigned minimum of the bit patterns (NaN and Inf -> 6). */
static inline uint32x4_t abs_min6_bits4(float32x4_t y)
{
    uint32x4_t au = vandq_u32(vreinterpretq_u32_f32(y), vdupq_n_u32(0x7FFFFFFFu));
    return vminq_u32(au, vdupq_n_u32(0x40C00000u));
}

static inline uint32x4_t binade4(uint32x4_t a) { return vmaxq_u32(vshrq_n_u32(a, 23), vdupq_n_u32(127)); }

/* nvfp4_core_e2m1_rn_mag: fl(m + C) - bits(C) + first, C = 2^22, 2^23, 2^24. */
static inline uint32x4_t e2m1_rn_mag4(float32x4_t y)
{
    uint32x4_t a = abs_min6_bits4(y);
    uint32x4_t e = binade4(a);
    uint32x4_t c = by_binade(e, 0x4A800000u, 0x4B000000u, 0x4B800000u);
    uint32x4_t first = by_binade(e, 0u, 2u, 4u);
    float32x4_t sum = vaddq_f32(vreinterpretq_f32_u32(a), vreinterpretq_f32_u32(c));
    return vaddq_u32(vsubq_u32(vreinterpretq_u32_f32(sum), c), first);
}

/* nvfp4_core_e2m1_sr_mag (r: one random byte per lane): t = trunc(a * 2^k)
 * (exact; 2^k = 512, 256, 128 by binade), the code ((t + r) >> 8) + first;
 * a = 6 (also Inf and NaN) gives 7 whatever r (simd_te_lanes.h sk_e2m1_sr_mag). */
static inline uint32x4_t e2m1_sr_mag4(float32x4_t y, uint32x4_t r)
{
    uint32x4_t a = abs_min6_bits4(y);
    uint32x4_t e = binade4(a);
    uint32x4_t mul = by_binade(e, 0x44000000u, 0x43800000u, 0x43000000u); /* 512, 256, 128 */
    uint32x4_t first = by_binade(e, 0u, 2u, 4u);
    uint32x4_t t = vcvtq_u32_f32(vmulq_f32(vreinterpretq_f32_u32(a), vreinterpretq_f32_u32(mul)));
    return vaddq_u32(vshrq_n_u32(vaddq_u32(t, r), 8), first);
}

/* mag | sign * 8, with no sign on NaN lanes (whose magnitude is already 7). */
static inline uint32x4_t e2m1_finish4(float32x4_t y, uint32x4_t mag)
{
    uint32x4_t u = vreinterpretq_u32_f32(y);
    uint32x4_t au = vandq_u32(u, vdupq_n_u32(0x7FFFFFFFu));
    uint32x4_t nan = vcgtq_u32(au, vdupq_n_u32(0x7F800000u));
    uint32x4_t sign = vandq_u32(vshrq_n_u32(u, 28), vdupq_n_u32(8));
    return vorrq_u32(mag, vbicq_u32(sign, nan));
}

/* nvfp4_core_e2m1_encode(y, RN or SR) of 4 lanes; r NULL: RN. */
static inline uint32x4_t e2m1_code4(float32x4_t y, const uint8_t *r)
{
    if (!r) return e2m1_finish4(y, e2m1_rn_mag4(y));
    uint32_t w;
    memcpy(&w, r, sizeof w);
    uint32x4_t rb = vmovl_u16(vget_low_u16(vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(w)))));
    return e2m1_finish4(y, e2m1_sr_mag4(y, rb));
}

/* 16 codes (4 lanes each, elements 0..15) -> 8 packed bytes, element 2j in
 * the low nibble of byte j. */
static inline void pack16(const uint32x4_t c[4], uint8_t *out)
{
    uint16x8_t w0 = vcombine_u16(vmovn_u32(c[0]), vmovn_u32(c[1]));
    uint16x8_t w1 = vcombine_u16(vmovn_u32(c[2]), vmovn_u32(c[3]));
    uint16x8_t pairs = vreinterpretq_u16_u8(vcombine_u8(vmovn_u16(w0), vmovn_u16(w1)));
    /* each 16-bit lane holds e[2j] | e[2j+1] << 8 (codes < 16) */
    vst1_u8(out, vmovn_u16(vorrq_u16(pairs, vshrq_n_u16(pairs, 4))));
}

/* ---- Philox4x32-10, one block per lane ----------------------------------------- */

static inline uint32x4_t mulhi4(uint32x4_t a, uint32_t m)
{
    uint64x2_t lo = vmull_n_u32(vget_low_u32(a), m), hi = vmull_high_n_u32(a, m);
    return vuzp2q_u32(vreinterpretq_u32_u64(lo), vreinterpretq_u32_u64(hi));
}

/* nvfp4_core_sr_block_bytes of the blocks bl[0..3]: 64 bytes, 16 per block
 * in that order. */
static void sr_bytes4_of(const nvfp4_simd_sr *sr, const uint64_t bl[4], uint8_t out[64])
{
    uint32_t lo[4], hi[4];
    for (int i = 0; i < 4; i++) {
        lo[i] = (uint32_t)bl[i];
        hi[i] = (uint32_t)(bl[i] >> 32);
    }
    uint32x4_t c0 = vdupq_n_u32((uint32_t)sr->offset), c1 = vdupq_n_u32((uint32_t)(sr->offset >> 32));
    uint32x4_t c2 = vld1q_u32(lo), c3 = vld1q_u32(hi);
    uint32_t k0 = (uint32_t)sr->seed, k1 = (uint32_t)(sr->seed >> 32);
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k0 += NVFP4_PHILOX_W0;
            k1 += NVFP4_PHILOX_W1;
        }
        uint32x4_t hi0 = mulhi4(c0, NVFP4_PHILOX_M0), lo0 = vmulq_n_u32(c0, NVFP4_PHILOX_M0);
        uint32x4_t hi1 = mulhi4(c2, NVFP4_PHILOX_M1), lo1 = vmulq_n_u32(c2, NVFP4_PHILOX_M1);
        uint32x4_t n0 = veorq_u32(veorq_u32(hi1, c1), vdupq_n_u32(k0));
        uint32x4_t n2 = veorq_u32(veorq_u32(hi0, c3), vdupq_n_u32(k1));
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    uint32x4x4_t w = {{c0, c1, c2, c3}};
    vst4q_u32((uint32_t *)(void *)out, w); /* block b: words 0..3 of lane b, little-endian bytes */
}

/* The same for blocks block0 .. block0 + 3. */
static void sr_bytes4(const nvfp4_simd_sr *sr, uint64_t block0, uint8_t out[64])
{
    uint64_t bl[4] = {block0, block0 + 1u, block0 + 2u, block0 + 3u};
    sr_bytes4_of(sr, bl, out);
}

static void sr_bytes_n(const nvfp4_simd_sr *sr, uint64_t block0, size_t nb, uint8_t *rb)
{
    uint8_t buf[64];
    for (size_t b0 = 0; b0 < nb; b0 += 4) {
        size_t n = nb - b0 < 4 ? nb - b0 : 4;
        if (n == 4) {
            sr_bytes4(sr, block0 + b0, rb + 16 * b0);
            continue;
        }
        sr_bytes4(sr, block0 + b0, buf);
        memcpy(rb + 16 * b0, buf, 16 * n);
    }
}

/* ---- te rowwise ------------------------------------------------------------------- */

static void neon_row_scales(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, uint8_t *scale)
{
    size_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        uint32_t a[4];
        for (size_t i = 0; i < 4; i++) a[i] = block_amax_bits(x, bf16, 16 * (b + i));
        uint32x4_t s = te_scale4(k, vld1q_u32(a));
        uint32_t t[4];
        vst1q_u32(t, s);
        for (size_t i = 0; i < 4; i++) scale[b + i] = (uint8_t)t[i];
    }
    for (; b < nb; b++) {
        uint32x4_t s = te_scale4(k, vdupq_n_u32(block_amax_bits(x, bf16, 16 * b)));
        scale[b] = (uint8_t)vgetq_lane_u32(s, 0);
    }
}

static void neon_tile_scales(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t stride, size_t nb,
                             uint8_t *scale)
{
    for (size_t b = 0; b < nb; b++) {
        uint32_t a = 0;
        for (size_t r = 0; r < 16; r++) {
            uint32_t m = block_amax_bits(x, bf16, r * stride + 16 * b);
            a = m > a ? m : a;
        }
        scale[b] = (uint8_t)vgetq_lane_u32(te_scale4(k, vdupq_n_u32(a)), 0);
    }
}

/* Codes of the 16 elements at x + e times the encode multiplier f; rb: the
 * block's 16 SR bytes, or NULL for RN. */
static inline void encode_block_mul(const void *x, int bf16, size_t e, float f, const uint8_t *rb, uint8_t *out)
{
    float32x4_t fv = vdupq_n_f32(f);
    uint32x4_t c[4];
    for (int q = 0; q < 4; q++) {
        float32x4_t y = vmulq_f32(vreinterpretq_f32_u32(load_bits4(x, bf16, e + 4u * (unsigned)q)), fv);
        c[q] = e2m1_code4(y, rb ? rb + 4 * q : NULL);
    }
    pack16(c, out);
}

/* Codes of nb blocks given their scale bytes; SR bytes in chunks of 4 blocks. */
static void te_encode_blocks(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const uint8_t *scale,
                             const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out)
{
    nvfp4_core_global g = nvfp4_simd_te_global(k);
    uint8_t rb[64];
    for (size_t b0 = 0; b0 < nb; b0 += 4) {
        size_t n = nb - b0 < 4 ? nb - b0 : 4;
        if (sr) sr_bytes4(sr, block0 + b0, rb);
        for (size_t i = 0; i < n; i++) {
            size_t b = b0 + i;
            float f = nvfp4_core_block_prepare(&te_chain, &g, scale[b]).factor;
            encode_block_mul(x, bf16, 16 * b, f, sr ? rb + 16 * i : NULL, out + 8 * b);
        }
    }
}

static void neon_row_encode(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const uint8_t *scale,
                            const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out)
{
    te_encode_blocks(k, x, bf16, nb, scale, sr, block0, out);
}

/* Scales and codes in steps of 64 blocks (a 1024-element stretch stays in
 * L1 between the two passes). */
static void neon_row_fused(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const nvfp4_simd_sr *sr,
                           uint64_t block0, uint8_t *out, uint8_t *scale)
{
    size_t esz = bf16 ? 2 : 4;
    for (size_t b0 = 0; b0 < nb; b0 += 64) {
        size_t n = nb - b0 < 64 ? nb - b0 : 64;
        const void *xs = (const char *)x + 16 * b0 * esz;
        neon_row_scales(k, xs, bf16, n, scale + b0);
        te_encode_blocks(k, xs, bf16, n, scale + b0, sr, block0 + b0, out + 8 * b0);
    }
}

/* te dequantize: each element's E2M1 value (nvfp4_core_e2m1_decode, as four
 * byte tables indexed by the code and interleaved into fp32 patterns) times
 * the block's nvfp4_core_dequant_scale, one rounding. */
static void neon_row_dequant(const uint8_t *data, const uint8_t *scale, size_t nb, float amax, int stream, float *out)
{
    (void)stream; /* plain stores: NEON has no streaming store worth its ordering cost here */
    nvfp4_core_global g = nvfp4_core_global_from_amax(&te_chain, amax);
    uint8_t tb[4][16];
    for (uint8_t c = 0; c < 16; c++) {
        float v = nvfp4_core_e2m1_decode(c);
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        for (int k = 0; k < 4; k++) tb[k][c] = (uint8_t)(u >> (8 * k));
    }
    uint8x16_t t0 = vld1q_u8(tb[0]), t1 = vld1q_u8(tb[1]), t2 = vld1q_u8(tb[2]), t3 = vld1q_u8(tb[3]);
    for (size_t b = 0; b < nb; b++) {
        float d = nvfp4_core_dequant_scale(&te_chain, &g, scale[b]);
        uint8x8_t p = vld1_u8(data + 8 * b);
        uint8x8x2_t z = vzip_u8(vand_u8(p, vdup_n_u8(0xF)), vshr_n_u8(p, 4));
        uint8x16_t codes = vcombine_u8(z.val[0], z.val[1]); /* element order */
        uint8x16x4_t bytes = {{vqtbl1q_u8(t0, codes), vqtbl1q_u8(t1, codes), vqtbl1q_u8(t2, codes),
                               vqtbl1q_u8(t3, codes)}};
        uint8_t v[64];
        vst4q_u8(v, bytes);
        float32x4_t dv = vdupq_n_f32(d);
        for (int q = 0; q < 4; q++)
            vst1q_f32(out + 16 * b + 4 * q, vmulq_f32(vreinterpretq_f32_u8(vld1q_u8(v + 16 * q)), dv));
    }
}

/* ---- columnwise --------------------------------------------------------------------- */

/* The amax (as a bit pattern) of the 16x16 tile of row group g at columns
 * c0 .. c0 + 15 (tiles and RHT do not combine). */
static uint32_t col_tile_amax_bits(const nvfp4_simd_col_job *j, size_t g, size_t c0)
{
    uint32x4_t am = vdupq_n_u32(0);
    for (size_t i = 0; i < 16; i++)
        for (size_t q = 0; q < 16; q += 4)
            am = vmaxq_u32(am, abs_bits_nonan4(load_bits4(j->x, j->bf16, (16 * g + i) * j->cols + c0 + q)));
    return vmaxvq_u32(am);
}

/* The columnwise blocks (1x16, or 16x16 tiles) of columns c .. c + 3 in row group g, one block
 * per lane: the 16 rows of the group are 16 vectors, the block amax a
 * lane-wise maximum over them, and block (column c + l, group g) has the
 * index (c + l) * nbr + g in the transposed output, as in
 * nvfp4_simd_scalar_col_block. */
static void col_blocks4(const nvfp4_simd_col_job *j, const nvfp4_core_global *gl, size_t g, size_t c)
{
    size_t nbr = j->rows / 16;
    uint32x4_t xb[16], am = vdupq_n_u32(0);
    for (size_t i = 0; i < 16; i++) {
        xb[i] = load_bits4(j->x, j->bf16, (16 * g + i) * j->cols + c);
        am = vmaxq_u32(am, abs_bits_nonan4(xb[i]));
    }
    if (j->tile16) /* every block of a 16x16 tile takes the tile's amax */
        am = vdupq_n_u32(col_tile_amax_bits(j, g, c - c % 16));
    uint32_t sv[4];
    vst1q_u32(sv, te_scale4(&j->k, am));
    uint64_t blk[4];
    float f[4];
    for (size_t l = 0; l < 4; l++) {
        blk[l] = (c + l) * nbr + g;
        f[l] = nvfp4_core_block_prepare(&te_chain, gl, (uint8_t)sv[l]).factor;
    }
    uint8_t rb[64];
    if (j->sr) sr_bytes4_of(j->sr, blk, rb);
    float32x4_t fv = vld1q_f32(f);
    uint32_t code[16][4];
    for (size_t i = 0; i < 16; i++) {
        float32x4_t y = vmulq_f32(vreinterpretq_f32_u32(xb[i]), fv);
        uint32x4_t mag;
        if (j->sr) {
            uint32_t r[4] = {rb[i], rb[16 + i], rb[32 + i], rb[48 + i]};
            mag = e2m1_sr_mag4(y, vld1q_u32(r));
        } else {
            mag = e2m1_rn_mag4(y);
        }
        vst1q_u32(code[i], e2m1_finish4(y, mag));
    }
    for (size_t l = 0; l < 4; l++) {
        j->scale[blk[l]] = (uint8_t)sv[l];
        for (size_t k = 0; k < 8; k++)
            j->data[8 * blk[l] + k] = (uint8_t)(code[2 * k][l] | (code[2 * k + 1][l] << 4));
    }
}

/* Columnwise without RHT four columns at a time (16x16 tiles: when the
 * tiles are whole, cols % 16 == 0); RHT groups, other tile shapes and the
 * last cols % 4 columns: the scalar kernel in this first version. */
static void neon_col_quant(const nvfp4_simd_col_job *j, size_t g0, size_t g1)
{
    if (j->rht || (j->tile16 && j->cols % 16 != 0)) {
        nvfp4_simd_kernels_scalar.col_quant(j, g0, g1);
        return;
    }
    nvfp4_core_global gl = nvfp4_simd_te_global(&j->k);
    for (size_t g = g0; g < g1; g++) {
        size_t c = 0;
        for (; c + 4 <= j->cols; c += 4) col_blocks4(j, &gl, g, c);
        for (; c < j->cols; c++) nvfp4_simd_scalar_col_block(j, g, c, -1.0f);
    }
}

/* ---- RHT: the scalar kernels in this first version ------------------------------------ */

static float neon_rht_amax(const nvfp4_simd_col_job *j, size_t g0, size_t g1)
{
    return nvfp4_simd_kernels_scalar.rht_amax(j, g0, g1);
}

static float neon_rht_apply(const nvfp4_simd_col_job *j, size_t g0, size_t g1, void *out)
{
    return nvfp4_simd_kernels_scalar.rht_apply(j, g0, g1, out);
}

/* ---- generic driver leaves ------------------------------------------------------- */

enum { GEN_MUL = 0, GEN_DIV = 1, GEN_BF16 = 2 };

static int gen_enc_class(int enc)
{
    if (enc == NVFP4_CORE_ENC_DIV_TOTAL || enc == NVFP4_CORE_ENC_POW2 || enc == NVFP4_CORE_ENC_POW2_FP32) return GEN_DIV;
    if (enc == NVFP4_CORE_ENC_TE_BF16) return GEN_BF16;
    return GEN_MUL;
}

/* nvfp4_core_scaled for the cast encodes: x * f, x / f, or ENC_TE_BF16's
 * binary64 product (exact) plus +0, rounded once to fp32. */
static inline float32x4_t gen_scaled4(int cls, float32x4_t x, float32x4_t f)
{
    if (cls == GEN_MUL) return vmulq_f32(x, f);
    if (cls == GEN_DIV) return vdivq_f32(x, f);
    float64x2_t c = vcvt_f64_f32(vget_low_f32(f)), z = vdupq_n_f64(0.0);
    float64x2_t lo = vaddq_f64(vmulq_f64(vcvt_f64_f32(vget_low_f32(x)), c), z);
    float64x2_t hi = vaddq_f64(vmulq_f64(vcvt_high_f64_f32(x), c), z);
    return vcvt_high_f32_f64(vcvt_f32_f64(lo), hi);
}

/* nvfp4_core_e2m1_cast's special-value policies on top of the cuda-fp4 code. */
static inline uint32x4_t gen_special4(int special, float32x4_t y, uint32x4_t code)
{
    uint32x4_t nan = vmvnq_u32(vceqq_f32(y, y));
    uint32x4_t zero = vceqq_f32(y, vdupq_n_f32(0.0f));
    switch (special) {
    case NVFP4_CORE_SPECIAL_PYREF: return vbicq_u32(code, vorrq_u32(nan, zero));
    case NVFP4_CORE_SPECIAL_TORCHAO: return vbslq_u32(nan, vdupq_n_u32(3), code);
    case NVFP4_CORE_SPECIAL_MODELOPT: return vbicq_u32(code, zero);
    default: return code;
    }
}

/* Codes of the 16 fp32 elements at x under a cast encode. */
static inline void gen_cast_block(int cls, int special, const float *x, float f, const uint8_t *rb, uint8_t *out)
{
    float32x4_t fv = vdupq_n_f32(f);
    uint32x4_t c[4];
    for (int q = 0; q < 4; q++) {
        float32x4_t y = gen_scaled4(cls, vld1q_f32(x + 4 * q), fv);
        c[q] = gen_special4(special, y, e2m1_code4(y, rb ? rb + 4 * q : NULL));
    }
    pack16(c, out);
}

/* The sign of x as E2M1's 8. */
static inline uint32x4_t sign_code4(float32x4_t x)
{
    return vandq_u32(vshrq_n_u32(vreinterpretq_u32_f32(x), 28), vdupq_n_u32(8));
}

/* ENC_EXACT (nvfp4_core_e2m1_exact_mag): the magnitude is the number of
 * boundaries D*mid below |x| plus one where |x| equals an odd-indexed
 * boundary (the ties that go to the even code above), compared in binary64
 * like the core (every D*mid is exact; simd_avx2_generic.c
 * gen_encode_exact). Valid for 0 < D <= FLT_MAX, where the boundaries
 * increase; other blocks take the core per element. */
static inline uint32x4_t exact_code4(float32x4_t x, const float64x2_t bound[7])
{
    float32x4_t ax = vabsq_f32(x);
    float64x2_t a[2] = {vcvt_f64_f32(vget_low_f32(ax)), vcvt_high_f64_f32(ax)};
    uint64x2_t n[2] = {vdupq_n_u64(0), vdupq_n_u64(0)};
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 7; k++) {
            n[h] = vsubq_u64(n[h], vcltq_f64(bound[k], a[h])); /* a mask is -1: subtracting counts it */
            if (k & 1) n[h] = vsubq_u64(n[h], vceqq_f64(a[h], bound[k]));
        }
    uint32x4_t mag = vcombine_u32(vmovn_u64(n[0]), vmovn_u64(n[1]));
    uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
    return vbslq_u32(nan, vdupq_n_u32(NVFP4_E2M1_NAN_CODE), vorrq_u32(mag, sign_code4(x)));
}

static void gen_encode_exact(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor, uint8_t *out)
{
    double mid[7];
    for (uint32_t k = 0; k < 7u; k++)
        mid[k] = ((double)nvfp4_core_e2m1_mag_value(k) + (double)nvfp4_core_e2m1_mag_value(k + 1u)) * 0.5;
    for (size_t b = 0; b < nb; b++) {
        float d = factor[b];
        if (!(d > 0.0f && d <= FLT_MAX)) {
            nvfp4_simd_gen_leaves_scalar.encode(r, x + 16 * b, 1, factor + b, NULL, out + 8 * b);
            continue;
        }
        float64x2_t bound[7];
        for (int k = 0; k < 7; k++) bound[k] = vdupq_n_f64((double)d * mid[k]);
        uint32x4_t c[4];
        for (int q = 0; q < 4; q++) c[q] = exact_code4(vld1q_f32(x + 16 * b + 4 * q), bound);
        pack16(c, out + 8 * b);
    }
}

/* ENC_GGML_NEAREST (nvfp4_core_ggml_nearest): the same fp32 errors in the
 * same order over the magnitudes k = 0..7 of |x|, a candidate taken only
 * when its error is strictly lower (NaN never wins), then x's sign unless
 * k = 0 (simd_avx2_generic.c gen_encode_ggml gives why the other eight
 * codes never win). The running minimum is a select on the comparison, not vminq_f32,
 * whose NaN rule differs. */
static void gen_encode_ggml(const float *x, size_t nb, const float *factor, uint8_t *out)
{
    for (size_t b = 0; b < nb; b++) {
        float32x4_t p[8];
        for (uint8_t k = 1u; k < 8u; k++) p[k] = vdupq_n_f32(nvfp4_core_e2m1_decode(k) * factor[b]);
        uint32x4_t c[4];
        for (int q = 0; q < 4; q++) {
            float32x4_t v = vld1q_f32(x + 16 * b + 4 * q), a = vabsq_f32(v);
            float32x4_t best_err = a; /* |0 - x| */
            uint32x4_t best = vdupq_n_u32(0);
            for (uint32_t k = 1; k < 8; k++) {
                float32x4_t e = vabsq_f32(vsubq_f32(p[k], a));
                uint32x4_t lt = vcltq_f32(e, best_err);
                best = vbslq_u32(lt, vdupq_n_u32(k), best);
                best_err = vbslq_f32(lt, e, best_err);
            }
            uint32x4_t nz = vmvnq_u32(vceqq_u32(best, vdupq_n_u32(0)));
            c[q] = vorrq_u32(best, vandq_u32(sign_code4(v), nz));
        }
        pack16(c, out + 8 * b);
    }
}

static void neon_gen_encode(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor,
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
    int cls = gen_enc_class(r->enc_rule);
    for (size_t b = 0; b < nb; b++)
        gen_cast_block(cls, r->special, x + 16 * b, factor[b], rb ? rb + 16 * b : NULL, out + 8 * b);
}

/* Block amaxes with fmaxf semantics; with nan_propagates a block holding a
 * NaN is folded again by the core (the first NaN, made positive, wins). */
static void neon_gen_block_amax(const float *x, size_t nb, int nanprop, float *bamax)
{
    for (size_t b = 0; b < nb; b++) {
        const float *xb = x + 16 * b;
        bamax[b] = bits_to_f32(block_amax_bits(xb, 0, 0));
        if (!nanprop) continue;
        uint32x4_t nan = vdupq_n_u32(0);
        for (int q = 0; q < 4; q++) {
            float32x4_t v = vld1q_f32(xb + 4 * q);
            nan = vorrq_u32(nan, vmvnq_u32(vceqq_f32(v, v)));
        }
        if (vmaxvq_u32(nan)) {
            float acc = 0.0f;
            for (size_t k = 0; k < 16; k++) acc = nvfp4_core_amax_step(acc, xb[k], 1);
            bamax[b] = acc;
        }
    }
}

static float neon_gen_amax_nan(const float *x, size_t n, int *any_nan)
{
    uint32x4_t nan = vdupq_n_u32(0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        nan = vorrq_u32(nan, vmvnq_u32(vceqq_f32(v, v)));
    }
    int any = vmaxvq_u32(nan) != 0;
    for (; i < n; i++) any |= nvfp4_core_isnan(x[i]);
    *any_nan = any;
    return amax_bits(x, 0, n);
}

static void neon_gen_sr_bytes(const nvfp4_simd_sr *sr, uint64_t block0, size_t nb, uint8_t *rb)
{
    sr_bytes_n(sr, block0, nb, rb);
}

/* nvfp4_core_4over6_seg_error for the two candidates: the codes (the cast
 * encode, RN), their values (nvfp4_core_e2m1_decode), the lane-wise
 * differences and errors, then each candidate's left-to-right fp32 sum. */
static void neon_gen_err_4over6(const nvfp4_core_recipe *r, const nvfp4_core_global *g, const float *x,
                                const uint8_t s[2], const float fc[2], float err[2])
{
    int fp16 = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MAE_FP16 || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    int mse = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    float denom = r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256 ? NVFP4_CORE_1536 : NVFP4_CORE_2688;
    int cls = gen_enc_class(r->enc_rule);
    for (int c = 0; c < 2; c++) {
        float32x4_t f = vdupq_n_f32(fc[c]), sf = vdupq_n_f32(nvfp4_core_e4m3_decode(s[c]));
        float e[16];
        for (int q = 0; q < 4; q++) {
            float32x4_t xv = vld1q_f32(x + 4 * q);
            float32x4_t y = gen_scaled4(cls, xv, f);
            uint32_t code[4];
            vst1q_u32(code, gen_special4(r->special, y, e2m1_code4(y, NULL)));
            float v[4];
            for (int i = 0; i < 4; i++) v[i] = nvfp4_core_e2m1_decode((uint8_t)code[i]);
            float32x4_t cand = vmulq_f32(vld1q_f32(v), sf), diff;
            if (fp16) {
                diff = vsubq_f32(cand, vmulq_f32(xv, vdupq_n_f32(g->s_enc)));
            } else {
                float32x4_t t = vmulq_f32(cand, vdupq_n_f32(g->amax));
                diff = vsubq_f32(vdivq_f32(t, vdupq_n_f32(denom)), xv);
            }
            vst1q_f32(e + 4 * q, mse ? vmulq_f32(diff, diff) : vabsq_f32(diff));
        }
        float sum = 0.0f;
        for (int k = 0; k < 16; k++) sum = sum + e[k];
        err[c] = sum;
    }
}

const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_neon = {neon_gen_block_amax, neon_gen_amax_nan, neon_gen_sr_bytes,
                                                          neon_gen_encode, neon_gen_err_4over6};

/* ---- MXFP4 1x32 rows -------------------------------------------------------------- */

static const nvfp4_core_recipe *mx(int rule)
{
    return rule == NVFP4_SIMD_MX_FLOOR ? &mx_floor_chain : &mx_rceil_chain;
}

static void neon_mx_row_scales(int rule, const float *x, size_t nb, uint8_t *scale)
{
    const nvfp4_core_recipe *r = mx(rule);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f);
    float ba[2];
    for (size_t b = 0; b < nb; b++) {
        neon_gen_block_amax(x + 32 * b, 2, r->amax_nan_propagates, ba);
        /* the two halves' amaxes folded as the core's left-to-right step would */
        float a = nvfp4_core_amax_step(ba[0], ba[1], r->amax_nan_propagates);
        scale[b] = nvfp4_core_block_scale(r, &g, a);
    }
}

static void neon_mx_row_encode(int rule, const float *x, size_t nb, const uint8_t *scale, const nvfp4_simd_sr *sr,
                               uint64_t block0, uint8_t *out)
{
    const nvfp4_core_recipe *r = mx(rule);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f);
    int cls = gen_enc_class(r->enc_rule);
    for (size_t b = 0; b < nb; b++) {
        float f = nvfp4_core_block_prepare(r, &g, scale[b]).factor;
        uint8_t rb[32];
        if (sr) {
            nvfp4_simd_sr hi = {sr->seed, sr->offset + 1u};
            sr_bytes_n(sr, block0 + b, 1, rb);
            sr_bytes_n(&hi, block0 + b, 1, rb + 16);
        }
        gen_cast_block(cls, r->special, x + 32 * b, f, sr ? rb : NULL, out + 16 * b);
        gen_cast_block(cls, r->special, x + 32 * b + 16, f, sr ? rb + 16 : NULL, out + 16 * b + 8);
    }
}

const nvfp4_simd_kernels nvfp4_simd_kernels_neon = {
    "neon",          neon_amax_f32,  neon_amax_bf16, neon_row_scales, neon_tile_scales,
    neon_row_encode, neon_row_fused, neon_col_quant, neon_rht_amax,   neon_rht_apply,
    neon_row_dequant, neon_mx_row_scales, neon_mx_row_encode,
};

#else /* not aarch64: the dispatcher never selects this table */

const nvfp4_simd_kernels nvfp4_simd_kernels_neon = {"neon", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_neon = {0, 0, 0, 0, 0};

#endif
