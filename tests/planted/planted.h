/*
 * planted.h - deliberately wrong NVFP4 "kernels" for the planted-bug tests
 * (issue 4 item 10). Each one takes the correct te output, or re-runs the
 * te chain built from the core functions (src/core/recipe.h) with exactly
 * one step changed, so a test can assert that `verify` / `sr-test` names the
 * cause. Header-only: included by tests/check_verify.c.
 *
 * The correct chain here is a second, independent driver of the core
 * functions (1x16 rowwise, fp32 input), so these tests do not depend on the
 * tensor quantizer; tests/check_verify.c also checks it against
 * nvfp4_quantize where that is available.
 */
#ifndef NVFP4_TESTS_PLANTED_H
#define NVFP4_TESTS_PLANTED_H

#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "core/recipe.h"
#include "nvfp4/verify.h"
#include "verify/vchain.h"

typedef enum {
    PLANT_NONE = 0,
    PLANT_TIES_AWAY,        /* ties rounded away from zero */
    PLANT_SCALE_DIV6,       /* block scale (amax/6)*S_enc */
    PLANT_ENC_SENC_OVER_S,  /* encode factor S_enc/s */
    PLANT_SWAP_NIBBLES,     /* element 2j in the high nibble */
    PLANT_NEGZERO,          /* -0 written as +0 */
    PLANT_LINEAR_SCALES,    /* linear scales in the swizzled slot */
    PLANT_PAD_127,          /* swizzle padding filled with 127 */
    PLANT_NAN_ZERO,         /* NaN written as code 0 */
    PLANT_UNDERFLOW_ZERO    /* encode factor 0 when the scale underflows (TE's C++ test reference) */
} plant_kind;

typedef struct {
    size_t rows, cols, scols;
    float *x;
    uint8_t *data, *scale, *swz;
    size_t data_bytes, scale_bytes, swz_bytes;
    float amax;
    float *dequant;
} plant_out;

static inline size_t plant_roundup(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* cuBLAS 128x4 layout, written out again here as an independent check of
 * the verifier's own (nvfp4-semantics.md 6). */
static inline size_t plant_swz_offset(size_t r, size_t c, size_t cols)
{
    size_t tiles = (cols + 3) / 4;
    return ((r / 128) * tiles + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

static inline void plant_free(plant_out *o)
{
    free(o->x);
    free(o->data);
    free(o->scale);
    free(o->swz);
    free(o->dequant);
    memset(o, 0, sizeof *o);
}

/* The te chain over x [rows, cols] (cols a multiple of 16), with one step
 * replaced as `kind` says (only the chain-level kinds act here). */
static inline void plant_quantize(const float *x, size_t rows, size_t cols, plant_kind kind, plant_out *o)
{
    nvfp4_core_recipe r = nvfp4_vchain_te();
    memset(o, 0, sizeof *o);
    o->rows = rows;
    o->cols = cols;
    o->scols = cols / 16;
    o->x = malloc(rows * cols * sizeof(float));
    memcpy(o->x, x, rows * cols * sizeof(float));
    o->data_bytes = rows * cols / 2;
    o->scale_bytes = rows * o->scols;
    o->swz_bytes = plant_roundup(rows, 128) * plant_roundup(o->scols, 4);
    o->data = calloc(o->data_bytes, 1);
    o->scale = calloc(o->scale_bytes, 1);
    o->swz = calloc(o->swz_bytes, 1);
    o->dequant = calloc(rows * cols, sizeof(float));
    float amax = 0.0f;
    for (size_t i = 0; i < rows * cols; i++) amax = nvfp4_core_amax_step(amax, x[i], 0);
    o->amax = amax;
    nvfp4_core_global g = nvfp4_core_global_from_amax(&r, amax);
    for (size_t row = 0; row < rows; row++) {
        for (size_t b = 0; b < o->scols; b++) {
            const float *xb = x + row * cols + b * 16;
            float bamax = 0.0f;
            for (int k = 0; k < 16; k++) bamax = nvfp4_core_amax_step(bamax, xb[k], 0);
            uint8_t s = kind == PLANT_SCALE_DIV6 ? nvfp4_vchain_scale_div6_then_senc(bamax, amax)
                                                 : nvfp4_core_block_scale(&r, &g, bamax);
            o->scale[row * o->scols + b] = s;
            nvfp4_core_block blk = nvfp4_core_block_prepare(&r, &g, s);
            if (kind == PLANT_ENC_SENC_OVER_S) blk.factor = nvfp4_vchain_factor_senc_over_s(s, amax);
            float dscale = nvfp4_core_dequant_scale(&r, &g, s);
            for (int k = 0; k < 16; k++) {
                size_t i = row * cols + b * 16 + (size_t)k;
                uint8_t code = nvfp4_core_encode_elem(&r, &blk, xb[k], NVFP4_CORE_RN, 0);
                if (kind == PLANT_TIES_AWAY && nvfp4_vchain_is_e2m1_tie(nvfp4_core_scaled(&r, &blk, xb[k])))
                    code = nvfp4_core_e2m1_encode(nvfp4_core_scaled(&r, &blk, xb[k]), NVFP4_CORE_SR, 128); /* carry at 1/2 */
                if (kind == PLANT_NAN_ZERO && nvfp4_core_isnan(xb[k])) code = 0;
                if (kind == PLANT_UNDERFLOW_ZERO && (s & 0x7Fu) == 0)
                    code = nvfp4_core_e2m1_encode(xb[k] * 0.0f, NVFP4_CORE_RN, 0);
                o->data[i / 2] |= (uint8_t)(code << (4 * (i & 1)));
                o->dequant[i] = nvfp4_core_dequant_elem(&r, dscale, code);
            }
        }
    }
    for (size_t row = 0; row < rows; row++)
        for (size_t b = 0; b < o->scols; b++) o->swz[plant_swz_offset(row, b, o->scols)] = o->scale[row * o->scols + b];
}

/* Output-level corruptions of a correct result. */
static inline void plant_corrupt(plant_out *o, plant_kind kind)
{
    switch (kind) {
    case PLANT_SWAP_NIBBLES:
        for (size_t i = 0; i < o->data_bytes; i++) o->data[i] = (uint8_t)((o->data[i] >> 4) | (o->data[i] << 4));
        break;
    case PLANT_NEGZERO:
        for (size_t i = 0; i < o->data_bytes; i++) {
            if ((o->data[i] & 0x0Fu) == 0x8u) o->data[i] &= 0xF0u;
            if ((o->data[i] & 0xF0u) == 0x80u) o->data[i] &= 0x0Fu;
        }
        break;
    case PLANT_LINEAR_SCALES:
        memset(o->swz, 0, o->swz_bytes);
        memcpy(o->swz, o->scale, o->scale_bytes);
        break;
    case PLANT_PAD_127: {
        uint8_t *used = calloc(o->swz_bytes, 1);
        for (size_t row = 0; row < o->rows; row++)
            for (size_t b = 0; b < o->scols; b++) used[plant_swz_offset(row, b, o->scols)] = 1;
        for (size_t i = 0; i < o->swz_bytes; i++)
            if (!used[i]) o->swz[i] = 127;
        free(used);
        break;
    }
    default:
        break;
    }
}

static inline nvfp4_vview plant_view(const plant_out *o)
{
    nvfp4_vview v;
    memset(&v, 0, sizeof v);
    v.rows = o->rows;
    v.cols = o->cols;
    v.block_rows = 1;
    v.block_cols = 16;
    v.x = o->x;
    v.data = o->data;
    v.data_bytes = o->data_bytes;
    v.scale = o->scale;
    v.scale_bytes = o->scale_bytes;
    v.scale_swizzled = o->swz;
    v.scale_swizzled_bytes = o->swz_bytes;
    v.amax = &o->amax;
    v.dequant = o->dequant;
    v.dequant_count = o->rows * o->cols;
    return v;
}

/* ---- SR kernels ------------------------------------------------------------ */
typedef enum {
    PLANT_SR_CONTRACT = 0,   /* our Philox contract (correct) */
    PLANT_SR_BYTE_ORDER,     /* bytes of each 32-bit word taken high to low */
    PLANT_SR_BIASED,         /* r + 32 (saturating): rounds up too often */
    PLANT_SR_OWN_RNG,        /* a different (but fair) generator: splitmix64 */
    PLANT_SR_ANTITHETIC      /* odd offsets reuse the even offset's bytes as 255 - r */
} plant_sr_kind;

static inline uint64_t plant_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One SR sample of scaled values y[n] (n a multiple of 16) into codes[n]. */
static inline void plant_sr_sample(const float *y, size_t n, plant_sr_kind kind, uint64_t seed, uint64_t offset,
                                   uint8_t *codes)
{
    uint64_t st = seed * 0x100000001B3ull + offset;
    for (size_t b = 0; b < n / 16; b++) {
        uint8_t bytes[16];
        nvfp4_core_sr_block_bytes(seed, kind == PLANT_SR_ANTITHETIC ? offset & ~(uint64_t)1 : offset, b, bytes);
        for (size_t k = 0; k < 16; k++) {
            uint8_t r = bytes[k];
            if (kind == PLANT_SR_BYTE_ORDER) r = bytes[(k & ~(size_t)3) + 3 - (k & 3)];
            if (kind == PLANT_SR_BIASED) r = (uint8_t)(bytes[k] > 223 ? 255 : bytes[k] + 32);
            if (kind == PLANT_SR_OWN_RNG) r = (uint8_t)plant_splitmix(&st);
            if (kind == PLANT_SR_ANTITHETIC && (offset & 1u)) r = (uint8_t)(255u - r);
            codes[b * 16 + k] = nvfp4_core_e2m1_encode(y[b * 16 + k], NVFP4_CORE_SR, r);
        }
    }
}

#endif /* NVFP4_TESTS_PLANTED_H */
