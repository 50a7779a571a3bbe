/*
 * simd_scalar.c - the scalar variant of the fast-path kernels: the `te`
 * recipe evaluated through src/core/recipe.h and src/core/hadamard.h, with
 * no rounding rule of its own. It is the portable fallback, the remainder
 * and fallback path of the vector kernels, and (besides the library's own
 * nvfp4_quantize) what tests/check_simd.c compares them with.
 */
#include <string.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/philox.h"
#include "core/recipe.h"
#include "simd/simd_kernels.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The chains the kernels implement (src/core/recipe.h); the quantizer sends
 * a recipe here only when its descriptor equals one of them. */
static const nvfp4_core_recipe te_chain = NVFP4_CORE_CHAIN_TE;
static const nvfp4_core_recipe mx_floor_chain = NVFP4_CORE_CHAIN_MXFP4_FLOOR;
static const nvfp4_core_recipe mx_rceil_chain = NVFP4_CORE_CHAIN_MXFP4_RCEIL;

static const nvfp4_core_recipe *te(void) { return &te_chain; }

void nvfp4_simd_te_consts_init(nvfp4_simd_te_consts *k, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(te(), amax);
    k->amax = amax;
    k->s_enc = g.s_enc;
    k->s_dec = g.s_dec;
    k->m = g.s_enc * NVFP4_CORE_INV6; /* as nvfp4_core_block_scale forms it */
}


void nvfp4_simd_te_inv_table(const nvfp4_simd_te_consts *k, float tab[128])
{
    nvfp4_core_global g = nvfp4_simd_te_global(k);
    for (unsigned s = 0; s < 0x7F; s++) tab[s] = nvfp4_core_block_prepare(te(), &g, (uint8_t)s).factor;
    tab[0x7F] = 0.0f;
}

static float load_elem(const void *x, int bf16, size_t i)
{
    if (bf16) return nvfp4_core_bf16_decode(((const uint16_t *)x)[i]);
    return ((const float *)x)[i];
}

static void scalar_row_scales(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, uint8_t *scale)
{
    nvfp4_core_global g = nvfp4_simd_te_global(k);
    for (size_t b = 0; b < nb; b++) {
        float a = 0.0f;
        for (size_t i = 0; i < 16; i++) a = nvfp4_core_amax_step(a, load_elem(x, bf16, 16 * b + i), 0);
        scale[b] = nvfp4_core_block_scale(te(), &g, a);
    }
}

static void scalar_tile_scales(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t stride, size_t nb,
                               uint8_t *scale)
{
    nvfp4_core_global g = nvfp4_simd_te_global(k);
    for (size_t b = 0; b < nb; b++) {
        float a = 0.0f;
        for (size_t r = 0; r < 16; r++)
            for (size_t i = 0; i < 16; i++) a = nvfp4_core_amax_step(a, load_elem(x, bf16, r * stride + 16 * b + i), 0);
        scale[b] = nvfp4_core_block_scale(te(), &g, a);
    }
}

/* One block of 16 values with its scale byte -> 8 packed bytes. */
static void encode_block(const nvfp4_core_global *g, const float v[16], uint8_t s, const uint8_t *rbits,
                         uint8_t out[8])
{
    nvfp4_core_block blk = nvfp4_core_block_prepare(te(), g, s);
    uint8_t q[16];
    for (int i = 0; i < 16; i++)
        q[i] = nvfp4_core_encode_elem(te(), &blk, v[i], rbits ? NVFP4_CORE_SR : NVFP4_CORE_RN, rbits ? rbits[i] : 0);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(q[2 * i] | (q[2 * i + 1] << 4));
}

static void scalar_row_encode(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const uint8_t *scale,
                              const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out)
{
    nvfp4_core_global g = nvfp4_simd_te_global(k);
    for (size_t b = 0; b < nb; b++) {
        float v[16];
        uint8_t rb[16];
        for (size_t i = 0; i < 16; i++) v[i] = load_elem(x, bf16, 16 * b + i);
        if (sr) nvfp4_core_sr_block_bytes(sr->seed, sr->offset, block0 + b, rb);
        encode_block(&g, v, scale[b], sr ? rb : NULL, out + 8 * b);
    }
}

static void scalar_row_fused(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const nvfp4_simd_sr *sr,
                             uint64_t block0, uint8_t *out, uint8_t *scale)
{
    scalar_row_scales(k, x, bf16, nb, scale);
    scalar_row_encode(k, x, bf16, nb, scale, sr, block0, out);
}

float nvfp4_simd_col_load(const nvfp4_simd_col_job *j, size_t r, size_t c)
{
    return load_elem(j->x, j->bf16, r * j->cols + c);
}

void nvfp4_simd_col_group(const nvfp4_simd_col_job *j, size_t g, size_t c, float v[16])
{
    for (size_t i = 0; i < 16; i++) v[i] = nvfp4_simd_col_load(j, 16 * g + i, c);
    if (j->rht) nvfp4_core_rht_forward_group(v, v, 16u, j->rht_mask, j->rht_round_bf16);
}

void nvfp4_simd_scalar_col_block(const nvfp4_simd_col_job *j, size_t g, size_t c, float tile_amax)
{
    nvfp4_core_global gl = nvfp4_simd_te_global(&j->k);
    size_t nbr = j->rows / 16; /* blocks per output row */
    size_t blk = c * nbr + g;
    float v[16];
    uint8_t rb[16];
    nvfp4_simd_col_group(j, g, c, v);
    float a = tile_amax;
    if (a < 0.0f) {
        a = 0.0f;
        for (int i = 0; i < 16; i++) a = nvfp4_core_amax_step(a, v[i], 0);
    }
    uint8_t s = nvfp4_core_block_scale(te(), &gl, a);
    if (j->sr) nvfp4_core_sr_block_bytes(j->sr->seed, j->sr->offset, blk, rb);
    j->scale[blk] = s;
    encode_block(&gl, v, s, j->sr ? rb : NULL, j->data + 8 * blk);
}

/* The amax of the 16x16 tile of group g starting at column c0 (no RHT:
 * tiles and RHT do not combine). */
static float col_tile_amax(const nvfp4_simd_col_job *j, size_t g, size_t c0)
{
    float a = 0.0f;
    for (size_t i = 0; i < 16; i++)
        for (size_t c = c0; c < c0 + 16; c++) a = nvfp4_core_amax_step(a, nvfp4_simd_col_load(j, 16 * g + i, c), 0);
    return a;
}

static void scalar_col_quant(const nvfp4_simd_col_job *j, size_t g0, size_t g1)
{
    for (size_t g = g0; g < g1; g++)
        for (size_t c = 0; c < j->cols; c++) {
            float ta = j->tile16 ? col_tile_amax(j, g, c - c % 16) : -1.0f;
            nvfp4_simd_scalar_col_block(j, g, c, ta);
        }
}

static float scalar_rht_amax(const nvfp4_simd_col_job *j, size_t g0, size_t g1)
{
    float a = 0.0f;
    for (size_t g = g0; g < g1; g++)
        for (size_t c = 0; c < j->cols; c++) {
            float v[16];
            nvfp4_simd_col_group(j, g, c, v);
            for (int i = 0; i < 16; i++) a = nvfp4_core_amax_step(a, v[i], 0);
        }
    return a;
}

static float scalar_rht_apply(const nvfp4_simd_col_job *j, size_t g0, size_t g1, void *out)
{
    float a = 0.0f;
    for (size_t g = g0; g < g1; g++)
        for (size_t c = 0; c < j->cols; c++) {
            float v[16];
            nvfp4_simd_col_group(j, g, c, v);
            for (size_t i = 0; i < 16; i++) {
                size_t e = (16 * g + i) * j->cols + c;
                a = nvfp4_core_amax_step(a, v[i], 0);
                if (j->rht_round_bf16) ((uint16_t *)out)[e] = nvfp4_core_bf16_encode(v[i]); /* exact: v is bf16 */
                else ((float *)out)[e] = v[i];
            }
        }
    return a;
}

static float scalar_amax_f32(const float *x, size_t n)
{
    float a = 0.0f;
    for (size_t i = 0; i < n; i++) a = nvfp4_core_amax_step(a, x[i], 0);
    return a;
}

static float scalar_amax_bf16(const uint16_t *x, size_t n)
{
    float a = 0.0f;
    for (size_t i = 0; i < n; i++) a = nvfp4_core_amax_step(a, nvfp4_core_bf16_decode(x[i]), 0);
    return a;
}

static void scalar_row_dequant(const uint8_t *data, const uint8_t *scale, size_t nb, float amax, int stream, float *out)
{
    (void)stream;
    nvfp4_core_global g = nvfp4_core_global_from_amax(te(), amax);
    for (size_t b = 0; b < nb; b++) {
        float d = nvfp4_core_dequant_scale(te(), &g, scale[b]);
        for (size_t i = 0; i < 16; i++) {
            size_t e = 16 * b + i;
            uint8_t q = (uint8_t)((data[e >> 1] >> (4 * (e & 1u))) & 0xFu);
            out[e] = nvfp4_core_dequant_elem(te(), d, q);
        }
    }
}

static const nvfp4_core_recipe *mx(int rule)
{
    return rule == NVFP4_SIMD_MX_FLOOR ? &mx_floor_chain : &mx_rceil_chain;
}

static void scalar_mx_row_scales(int rule, const float *x, size_t nb, uint8_t *scale)
{
    const nvfp4_core_recipe *r = mx(rule);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f);
    for (size_t b = 0; b < nb; b++) {
        float a = 0.0f;
        for (size_t i = 0; i < 32; i++) a = nvfp4_core_amax_step(a, x[32 * b + i], r->amax_nan_propagates);
        scale[b] = nvfp4_core_block_scale(r, &g, a);
    }
}

static void scalar_mx_row_encode(int rule, const float *x, size_t nb, const uint8_t *scale, const nvfp4_simd_sr *sr,
                                 uint64_t block0, uint8_t *out)
{
    const nvfp4_core_recipe *r = mx(rule);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f);
    for (size_t b = 0; b < nb; b++) {
        nvfp4_core_block blk = nvfp4_core_block_prepare(r, &g, scale[b]);
        uint8_t rb[32] = {0}, q[32];
        if (sr) {
            nvfp4_core_sr_block_bytes(sr->seed, sr->offset, block0 + b, rb);
            nvfp4_core_sr_block_bytes(sr->seed, sr->offset + 1u, block0 + b, rb + 16);
        }
        for (size_t i = 0; i < 32; i++)
            q[i] = nvfp4_core_encode_elem(r, &blk, x[32 * b + i], sr ? NVFP4_CORE_SR : NVFP4_CORE_RN, rb[i]);
        for (size_t i = 0; i < 16; i++) out[16 * b + i] = (uint8_t)(q[2 * i] | (q[2 * i + 1] << 4));
    }
}

/* Defined here, beside the pieces every kernel and driver calls down into
 * (simd_kernels.h says what it decides). */
size_t nvfp4_simd_stream_min_bytes = (size_t)16 << 20;

/* The columnwise stage's write-out (simd_kernels.h): a piece the vector
 * kernels share, here so that they call only down into this file, never
 * into the drivers that call them. */
void nvfp4_simd_col_stage_flush(const nvfp4_simd_col_job *j, const nvfp4_simd_col_stage *st, size_t s0, size_t s1,
                                size_t g0, size_t g1)
{
    size_t nbr = j->rows / 16, len = 8 * (g1 - g0);
#if defined(__SSE2__)
    int stream = nvfp4_simd_col_streams(j);
#endif
    for (size_t c = s0; c < s1; c++) {
        uint8_t *dst = j->data + c * (j->rows / 2) + 8 * g0;
#if defined(__SSE2__)
        /* whole lines of a large output, written once: streaming stores skip
         * the read-for-ownership */
        if (stream && len == 64 && ((uintptr_t)dst & 15u) == 0) {
            const __m128i *src = (const __m128i *)st->data[c - s0];
            for (int q = 0; q < 4; q++) _mm_stream_si128((__m128i *)dst + q, _mm_load_si128(src + q));
        } else
#endif
            memcpy(dst, st->data[c - s0], len);
        memcpy(j->scale + c * nbr + g0, st->scale[c - s0], g1 - g0);
    }
#if defined(__SSE2__)
    if (stream) _mm_sfence();
#endif
}

const nvfp4_simd_kernels nvfp4_simd_kernels_scalar = {
    "scalar",           scalar_amax_f32,      scalar_amax_bf16, scalar_row_scales,  scalar_tile_scales,
    scalar_row_encode,  scalar_row_fused, scalar_col_quant,     scalar_rht_amax,  scalar_rht_apply, scalar_row_dequant, scalar_mx_row_scales,
    scalar_mx_row_encode,
};
