/*
 * fakequant.c - quantize-then-dequantize of one GEMM operand for the
 * training simulator (docs/studies.md): NVFP4 and MXFP4
 * with every scale rule the studies compare, RN or SR elements, an optional
 * randomized Hadamard transform along the reduction axis; FP8 (per-tensor
 * current scaling), MXFP8, bf16 and fp32.
 *
 * No rounding rule is written here. Where the library's quantizer supports
 * a configuration, the operand goes through it (a plan, nvfp4_quantize_into
 * on per-thread buffers reused across steps, then nvfp4_dequantize, and so
 * through the fast kernels where they apply):
 *   e4m3 scales, 1x16 or 16x16 blocks       recipe te (RHT-16 on 1x16: its columnwise RHT)
 *   ue8m0-ceil scales, 1x32 blocks           recipe mxfp4-rceil
 *   ue8m0-floor scales, 1x32 blocks          recipe mxfp4-floor
 * MXFP8 (recipe mxfp8's bytes) and FP8 compose the core rules in one
 * vectorized pass (fq_mxfp8_rows, fq_fp8_tensor), as does everything else
 * (the e4m3-up and fp32-scale rules, other blocks, the 3/4
 * pre-scale), which composes the scalar rules of src/core/ (recipe.h, and
 * scale_variants.h for the scale rules no recipe uses); other RHT sizes and
 * sign policies go through the public nvfp4_rht_forward first.
 *
 * SR bits: the Philox contract of docs/semantics.md with a seed derived from
 * (seed, layer, GEMM, operand) and the counter base 4*step for the
 * operand's own (stored) orientation, so the bits never depend on the
 * thread count, the order of evaluation or which path quantized it.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/hadamard.h"
#include "nvfp4/philox.h"
#include "nvfp4/quant.h"
#include "nvfp4/study.h"

#include "core/bf16.h"
#include "core/e4m3.h"
#include "core/e2m1.h"
#include "core/hadamard.h"
#include "core/recipe.h"
#include "core/scale_variants.h"
#include "study/fakequant.h"
#include "study/scratch.h"

void nvfp4_sq_cfg_fp32(nvfp4_sq_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->format = NVFP4_SQ_FP32;
    c->block = NVFP4_BLOCK_DEFAULT;
    c->scale = NVFP4_SS_DEFAULT;
    c->rounding = NVFP4_RN;
    c->rht_signs = NVFP4_SQ_RHT_FIXED;
}

void nvfp4_sq_cfg_nvfp4(nvfp4_sq_cfg *c)
{
    nvfp4_sq_cfg_fp32(c);
    c->format = NVFP4_SQ_NVFP4;
    c->block = NVFP4_BLOCK_1X16;
    c->scale = NVFP4_SS_E4M3;
}

void nvfp4_sq_cfg_mxfp4(nvfp4_sq_cfg *c)
{
    nvfp4_sq_cfg_fp32(c);
    c->format = NVFP4_SQ_MXFP4;
    c->block = NVFP4_BLOCK_1X32;
    c->scale = NVFP4_SS_UE8M0_CEIL;
}

static const char *const scale_names[] = {"e4m3", "e4m3-up", "fp32-scale", "ue8m0-floor", "ue8m0-ceil", "default"};

void nvfp4_sq_cfg_describe(const nvfp4_sq_cfg *c, char *buf, size_t n)
{
    static const char *const plain[] = {"fp32", "bf16", NULL, NULL, "fp8", "mxfp8"};
    if (c->format != NVFP4_SQ_NVFP4 && c->format != NVFP4_SQ_MXFP4) {
        snprintf(buf, n, "%s", plain[c->format]);
        return;
    }
    char rht[32] = "";
    if (c->rht)
        snprintf(rht, sizeof rht, "/rht%u%s%s", c->rht,
                 c->rht_signs == NVFP4_SQ_RHT_PER_STEP ? "-perstep" : (c->rht_signs == NVFP4_SQ_RHT_NOSIGN ? "-nosign" : ""),
                 c->rht_fp32 ? "-fp32" : "");
    snprintf(buf, n, "%s/%s/%s/%s%s%s", c->format == NVFP4_SQ_NVFP4 ? "nvfp4" : "mxfp4",
             sq_qblock_name(sq_qblock_resolved(c)), scale_names[sq_scale_resolved(c)],
             c->rounding == NVFP4_SR ? "sr" : "rn", c->prescale34 ? "/pre34" : "", rht);
}

bool nvfp4_sq_cfg_parse(const char *s, nvfp4_sq_cfg *c)
{
    char buf[128];
    if (!s || strlen(s) >= sizeof buf) return false;
    strcpy(buf, s);
    nvfp4_sq_cfg_fp32(c);
    char *save = NULL;
    bool first = true;
    for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save), first = false) {
        unsigned d;
        char extra[32];
        if (first) {
            if (!strcmp(t, "fp32")) c->format = NVFP4_SQ_FP32;
            else if (!strcmp(t, "bf16")) c->format = NVFP4_SQ_BF16;
            else if (!strcmp(t, "fp8")) c->format = NVFP4_SQ_FP8;
            else if (!strcmp(t, "mxfp8")) {
                c->format = NVFP4_SQ_MXFP8;
                c->block = NVFP4_BLOCK_1X32;
            }            else if (!strcmp(t, "nvfp4")) nvfp4_sq_cfg_nvfp4(c);
            else if (!strcmp(t, "mxfp4")) nvfp4_sq_cfg_mxfp4(c);
            else return false;
            continue;
        }
        if (!strcmp(t, "rn")) c->rounding = NVFP4_RN;
        else if (!strcmp(t, "sr")) c->rounding = NVFP4_SR;
        else if (!strcmp(t, "pre34")) c->prescale34 = true;
        else if (!strcmp(t, "1x16")) c->block = NVFP4_BLOCK_1X16;
        else if (!strcmp(t, "16x16")) c->block = NVFP4_BLOCK_16X16;
        else if (!strcmp(t, "1x32")) c->block = NVFP4_BLOCK_1X32;
        else if (sscanf(t, "rht%u%31s", &d, extra) >= 1) {
            c->rht = d;
            const char *rest = t + 3;
            while (*rest >= '0' && *rest <= '9') rest++;
            if (strstr(rest, "-perstep")) c->rht_signs = NVFP4_SQ_RHT_PER_STEP;
            if (strstr(rest, "-nosign")) c->rht_signs = NVFP4_SQ_RHT_NOSIGN;
            if (strstr(rest, "-fp32")) c->rht_fp32 = true;
        } else {
            bool found = false;
            for (int i = 0; i < 5; i++)
                if (!strcmp(t, scale_names[i])) { c->scale = (nvfp4_sq_scale)i; found = true; }
            if (!found) return false;
        }
    }
    return true;
}

/* Our own names: the study must not depend on quant.c being linked. */
const char *sq_qblock_name(nvfp4_block b)
{
    return b == NVFP4_BLOCK_16X16 ? "16x16" : (b == NVFP4_BLOCK_1X32 ? "1x32" : "1x16");
}

nvfp4_block sq_qblock_resolved(const nvfp4_sq_cfg *c)
{
    if (c->block != NVFP4_BLOCK_DEFAULT) return c->block;
    return c->format == NVFP4_SQ_MXFP4 ? NVFP4_BLOCK_1X32 : NVFP4_BLOCK_1X16;
}

nvfp4_sq_scale sq_scale_resolved(const nvfp4_sq_cfg *c)
{
    if (c->scale != NVFP4_SS_DEFAULT) return c->scale;
    return c->format == NVFP4_SQ_MXFP4 ? NVFP4_SS_UE8M0_CEIL : NVFP4_SS_E4M3;
}

/* A 64-bit value derived from the seed and three tags by one Philox block. */
uint64_t sq_derive(uint64_t seed, uint32_t a, uint32_t b, uint32_t c, uint32_t tag)
{
    uint32_t ctr[4] = {a, b, c, tag}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, o[4];
    nvfp4_philox4x32_10(ctr, key, o);
    return (uint64_t)o[0] | ((uint64_t)o[1] << 32);
}


/* ---- per-thread scratch ---------------------------------------------------- */
/* Buffers reused across calls (scratch.c); the quantized bytes are written in
 * full by nvfp4_quantize_into each time. */
static float *fq_scratch(st_scratch_slot slot, size_t n, nvfp4_error *err)
{
    float *p = st_scratch(slot, n * sizeof *p);
    if (!p) nvfp4_error_set(err, NVFP4_ENOMEM, "fakequant: out of memory");
    return p;
}

static uint8_t *fq_bytes(st_scratch_slot slot, size_t n, nvfp4_error *err)
{
    uint8_t *p = st_scratch(slot, n);
    if (!p) nvfp4_error_set(err, NVFP4_ENOMEM, "fakequant: out of memory");
    return p;
}

/* One 16x16 tile of st_transpose, from a[r0.., c0..] to t[c0.., r0..]. Its
 * inner loop walks r: each column of the tile is one 64-byte run of t, and
 * constant bounds let the compiler vectorize it. Storing row by row
 * instead wrote 16 lines one row-stride apart: with 1,024 rows that stride
 * is 4 KiB, every line of a tile fell in one cache set, and the transpose
 * ran 6-9x slower (3 ns per element; the largest single item of an
 * s8-regime arm's step, 6.7%, from its BF16 layers' Wgrad operands). */
static inline void transpose_tile16(const float *a, size_t rows, size_t cols, float *t, size_t r0, size_t c0)
{
    for (size_t c = 0; c < 16; c++)
        for (size_t r = 0; r < 16; r++) t[(c0 + c) * rows + r0 + r] = a[(r0 + r) * cols + c0 + c];
}

/* t[c][r] = a[r][c]: whole 16x16 tiles, then the ragged right and bottom edges. */
void st_transpose(const float *a, size_t rows, size_t cols, float *t)
{
    size_t rt = rows - rows % 16, ct = cols - cols % 16;
    for (size_t r0 = 0; r0 < rt; r0 += 16)
        for (size_t c0 = 0; c0 < ct; c0 += 16) transpose_tile16(a, rows, cols, t, r0, c0);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = r < rt ? ct : 0; c < cols; c++) t[c * rows + r] = a[r * cols + c];
}

/* ---- what keys the random bits ------------------------------------------------ */
static uint64_t fq_sr_seed(const nvfp4_sq_key *key)
{
    return sq_derive(key ? key->seed : 0, key ? key->layer : 0, key ? key->gemm : 0, key ? key->operand : 0,
                     0x53525354u);
}

static uint64_t fq_sr_base(const nvfp4_sq_key *key) { return 4u * (key ? key->step : 0); }

/* The sign vector of an RHT policy. Both Wgrad operands must share the
 * signs (H^T H = I), so the operand is never part of the key. */
static void fq_rht_config(unsigned d, nvfp4_sq_rht_signs policy, bool keep_fp32, const nvfp4_sq_key *key,
                          nvfp4_rht_config *rc)
{
    uint64_t seed = key ? key->seed : 0;
    nvfp4_rht_config_init(rc);
    rc->size = d;
    rc->keep_fp32 = keep_fp32;
    if (policy == NVFP4_SQ_RHT_NOSIGN) {
        rc->signs = NVFP4_RHT_SIGNS_NONE;
    } else if (policy == NVFP4_SQ_RHT_FIXED && d == 16) {
        rc->signs = NVFP4_RHT_SIGNS_TE;
    } else if (policy == NVFP4_SQ_RHT_FIXED) {
        rc->signs = NVFP4_RHT_SIGNS_SEEDED;
        rc->sign_seed = sq_derive(seed, 0, 0, 0, 0x52485446u);
    } else {
        rc->signs = NVFP4_RHT_SIGNS_SEEDED;
        rc->sign_seed = sq_derive(seed, key ? key->layer : 0, key ? (uint32_t)key->step : 0, key ? key->gemm : 0,
                                  0x52485400u);
    }
}

/* ---- which path quantizes a configuration ------------------------------------------ */
typedef struct {
    const char *lib_recipe;  /* the library recipe that implements it, or NULL: the core path */
    nvfp4_core_recipe chain; /* the core rules of its scale rule (core path, clip counts) */
    nvfp4_sq_scale rule;
    nvfp4_block qblock;      /* the quantization block shape */
    size_t qblock_len;       /* 16 or 32 */
    bool lib_rht;            /* the library's columnwise RHT-16 does the transform too */
} fq_route;

static fq_route fq_route_of(const nvfp4_sq_cfg *c)
{
    static const nvfp4_core_recipe te = NVFP4_CORE_CHAIN_TE, rceil = NVFP4_CORE_CHAIN_MXFP4_RCEIL,
                                   floor_ = NVFP4_CORE_CHAIN_MXFP4_FLOOR;
    fq_route r;
    memset(&r, 0, sizeof r);
    r.rule = sq_scale_resolved(c);
    r.qblock = sq_qblock_resolved(c);
    r.qblock_len = r.qblock == NVFP4_BLOCK_1X32 ? 32 : 16;
    r.chain = r.rule == NVFP4_SS_UE8M0_FLOOR ? floor_ : (r.rule == NVFP4_SS_UE8M0_CEIL ? rceil : te);
    if (c->format == NVFP4_SQ_MXFP8) {
        r.lib_recipe = "mxfp8";
        r.qblock = NVFP4_BLOCK_1X32;
        r.qblock_len = 32;
        return r;
    }
    if (c->format != NVFP4_SQ_NVFP4 && c->format != NVFP4_SQ_MXFP4) return r;
    if (!c->prescale34) {
        if (r.rule == NVFP4_SS_E4M3 && r.qblock != NVFP4_BLOCK_1X32) r.lib_recipe = "te";
        else if (r.rule == NVFP4_SS_UE8M0_CEIL && r.qblock == NVFP4_BLOCK_1X32) r.lib_recipe = "mxfp4-rceil";
        else if (r.rule == NVFP4_SS_UE8M0_FLOOR && r.qblock == NVFP4_BLOCK_1X32) r.lib_recipe = "mxfp4-floor";
    }
    r.lib_rht = r.lib_recipe && c->rht == 16 && r.rule == NVFP4_SS_E4M3 && r.qblock == NVFP4_BLOCK_1X16;
    return r;
}

/* ---- zero and clip counts ------------------------------------------------------------- */
/* src: what the quantizer saw (rows x k, after any RHT); out: its
 * dequantized result; t: the stored quantization, in the same orientation.
 * A block's scaled values come back from its stored scale byte through the
 * core rules of the route's chain. */
static void fq_count_library(const fq_route *rt, const nvfp4_qtensor *t, const float *src, const float *out,
                             size_t rows, size_t k, nvfp4_sq_stats *st)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(&rt->chain, t->amax);
    uint64_t zeros = 0, clips = 0, in_zeros = 0, scale_zeros = 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t j0 = 0; j0 < k; j0 += rt->qblock_len) {
            uint8_t byte = t->scale[r * t->scale_cols + j0 / rt->qblock_len];
            nvfp4_core_block b = nvfp4_core_block_prepare(&rt->chain, &g, byte);
            bool zero_scale = nvfp4_core_dequant_scale(&rt->chain, &g, byte) == 0.0f;
            size_t j1 = j0 + rt->qblock_len < k ? j0 + rt->qblock_len : k;
            for (size_t j = j0; j < j1; j++) {
                float xi = src[r * k + j];
                bool flushed = (xi != 0.0f) & (out[r * k + j] == 0.0f);
                clips += nvfp4_core_fabs(nvfp4_core_scaled(&rt->chain, &b, xi)) > NVFP4_E2M1_MAX;
                zeros += flushed;
                in_zeros += xi == 0.0f;
                scale_zeros += flushed & zero_scale;
            }
        }
    st->zeros += zeros;
    st->clips += clips;
    st->in_zeros += in_zeros;
    st->scale_zeros += scale_zeros;
}

/* ---- the library path ---------------------------------------------------------------- */
/* h[i] = the BF16 pattern of x[i] when every x[i] is a BF16 value (its low
 * 16 bits zero, NaN payloads included: widening h gives x's bits back);
 * false, with h partly written, at the first chunk holding one that is
 * not. */
static bool fq_narrow_bf16(const float *x, size_t n, uint16_t *h)
{
    enum { CHUNK = 4096 };
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t i1 = n - i0 < CHUNK ? n : i0 + CHUNK;
        uint32_t low = 0;
        /* without the pragma the loop stays scalar at -O2, and this pass
         * cost as much as the transform it feeds */
#pragma omp simd reduction(| : low)
        for (size_t i = i0; i < i1; i++) {
            uint32_t u;
            memcpy(&u, x + i, sizeof u);
            low |= u & 0xFFFFu;
            h[i] = (uint16_t)(u >> 16);
        }
        if (low) return false;
    }
    return true;
}

/* Quantizes and dequantizes through nvfp4_quantize: the operand is x
 * ([xr x xc]) itself, or with columnwise its transpose, the library's
 * columnwise output (with RHT-16 when rt->lib_rht and c->rht). out gets the
 * operand; q keeps the quantization (for the counts; the caller frees it). */
static nvfp4_status fq_library(const fq_route *rt, const nvfp4_sq_cfg *c, const float *x, size_t xr, size_t xc,
                               bool columnwise, const nvfp4_sq_key *key, float *out, nvfp4_quantized *q,
                               nvfp4_error *err)
{
    /* x in BF16 storage when every value is a BF16 value (a bf16_training
     * model's operands): the same values, so the same bytes (the library's
     * contract: tests/check_quant.c bf16_input_equals_widened_fp32), and the
     * columnwise RHT then takes its one-integer-butterfly BF16 path and reads
     * half the bytes. Only for the RHT, where that pays for the narrowing. */
    const void *in = x;
    nvfp4_dtype dtype = NVFP4_DTYPE_F32;
    if (columnwise && c->rht && rt->lib_rht) {
        uint16_t *h = (uint16_t *)fq_bytes(ST_SCR_FQ_BF16, xr * xc * sizeof *h, err);
        if (!h) return NVFP4_ENOMEM;
        if (fq_narrow_bf16(x, xr * xc, h)) {
            in = h;
            dtype = NVFP4_DTYPE_BF16;
        }
    }
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = rt->lib_recipe;
    o.block = rt->qblock;
    o.rounding = c->rounding;
    o.pad = true; /* a short last block is its own block, as on the core path */
    o.seed = fq_sr_seed(key);
    o.offset = fq_sr_base(key);
    if (columnwise) {
        /* The library counts the columnwise counters from offset+1 (offset+2
         * for 1x32 blocks, docs/semantics.md); the operand's own base stays
         * 4*step, whichever orientation it was handed in. */
        o.offset -= rt->qblock_len == 32 ? 2u : 1u;
        o.rowwise = false;
        o.columnwise = true;
        if (c->rht && rt->lib_rht) {
            nvfp4_rht_config rc;
            fq_rht_config(c->rht, c->rht_signs, c->rht_fp32, key, &rc);
            o.rht = true;
            o.rht_signs = rc.signs;
            o.rht_sign_seed = rc.sign_seed;
            o.rht_fp32 = c->rht_fp32;
        }
    }
    nvfp4_quant_plan plan;
    nvfp4_status s = nvfp4_quant_plan_init(&plan, &o, dtype, xr, xc, err);
    if (s != NVFP4_OK) return s;
    const nvfp4_quant_layout *l = columnwise ? &plan.col : &plan.row;
    uint8_t *data = fq_bytes(ST_SCR_FQ_DATA, l->data_bytes, err);
    uint8_t *scale = data ? fq_bytes(ST_SCR_FQ_SCALE, l->scale_rows * l->scale_cols, err) : NULL;
    if (!scale) return NVFP4_ENOMEM;
    nvfp4_quant_buffers b = {NULL, NULL, NULL, NULL};
    if (columnwise) {
        b.col_data = data;
        b.col_scale = scale;
    } else {
        b.row_data = data;
        b.row_scale = scale;
    }
    s = nvfp4_quantize_into(&plan, in, &b, q, err);
    if (s == NVFP4_OK) s = nvfp4_dequantize(q, columnwise, out, err);
    return s;
}

/* The library quantizes the operand [rows x k] given as xt = its transpose
 * ([k x rows]); with stats, the quantizer's input is rebuilt in the
 * operand's orientation (and transformed like the library did) to count. */
static nvfp4_status fq_library_t(const fq_route *rt, const nvfp4_sq_cfg *c, const float *xt, size_t k, size_t rows,
                                 const nvfp4_sq_key *key, float *out, nvfp4_sq_stats *st, nvfp4_error *err)
{
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    nvfp4_status s = fq_library(rt, c, xt, k, rows, true, key, out, &q, err);
    if (s == NVFP4_OK && st && c->format != NVFP4_SQ_MXFP8) { /* counts: the E2M1 formats only */
        float *src = fq_scratch(ST_SCR_FQ_SRC, rows * k, err);
        if (!src) s = NVFP4_ENOMEM;
        if (s == NVFP4_OK) st_transpose(xt, k, rows, src);
        if (s == NVFP4_OK && c->rht) {
            nvfp4_rht_config rc;
            fq_rht_config(c->rht, c->rht_signs, c->rht_fp32, key, &rc);
            s = nvfp4_rht_forward(&rc, src, rows, k, src, err);
        }
        if (s == NVFP4_OK) fq_count_library(rt, &q.col, src, out, rows, k, st);
    }
    if (s == NVFP4_OK || q.has_row || q.has_col) nvfp4_quantized_free(&q);
    return s;
}

/* ---- the core path ---------------------------------------------------------------------- */
typedef struct {
    nvfp4_core_block b; /* b.factor: what nvfp4_core_scaled applies */
    float dscale;       /* what the element value is multiplied by */
} fq_scale;

static fq_scale fq_block_scale(const fq_route *rt, const nvfp4_core_global *g, float bamax)
{
    fq_scale s;
    uint8_t byte;
    if (rt->rule == NVFP4_SS_FP32) {
        /* the TE chain's nvfp4_core_scaled multiplies by the factor */
        s.b.scale = 0;
        nvfp4_core_f32_block_scale(bamax, &s.b.factor, &s.dscale);
        return s;
    }
    if (rt->rule == NVFP4_SS_E4M3_UP) byte = nvfp4_core_te_block_scale_up(g, bamax);
    else byte = nvfp4_core_block_scale(&rt->chain, g, bamax);
    s.b = nvfp4_core_block_prepare(&rt->chain, g, byte);
    s.dscale = nvfp4_core_dequant_scale(&rt->chain, g, byte);
    return s;
}

typedef struct {
    const fq_route *rt;
    nvfp4_core_global g;
    int mode;      /* NVFP4_CORE_RN or NVFP4_CORE_SR */
    bool pre34;    /* Tseng: x 3/4 before the cast, x 4/3 after */
    uint64_t sr_seed, sr_base;
} fq_core_ctx;

/* Quantizes n (<= 32) elements sharing one scale; block: the SR counter's block index. */
static void fq_core_segment(const fq_core_ctx *q, const float *x, float *y, size_t n, const fq_scale *s,
                            uint64_t block, nvfp4_sq_stats *st)
{
    uint8_t rb[32] = {0};
    if (q->mode == NVFP4_CORE_SR) {
        nvfp4_sr_block_bytes(q->sr_seed, q->sr_base, block, rb);
        if (q->rt->qblock_len > 16) nvfp4_sr_block_bytes(q->sr_seed, q->sr_base + 1u, block, rb + 16);
    }
    const nvfp4_core_recipe *r = &q->rt->chain;
    uint64_t clips = 0, zeros = 0, in_zeros = 0;
    for (size_t i = 0; i < n; i++) {
        float xi = x[i]; /* read before y[i] is written: x and y may alias */
        float v = nvfp4_core_scaled(r, &s->b, xi);
        if (q->pre34) v *= 0.75f;
        float d = nvfp4_core_dequant_elem(r, s->dscale, nvfp4_core_e2m1_cast(r, v, q->mode, rb[i]));
        if (q->pre34) d *= 4.0f / 3.0f;
        y[i] = d;
        clips += nvfp4_core_fabs(v) > NVFP4_E2M1_MAX;
        zeros += (xi != 0.0f) & (d == 0.0f);
        in_zeros += xi == 0.0f;
    }
    st->clips += clips;
    st->zeros += zeros;
    st->in_zeros += in_zeros;
    if (s->dscale == 0.0f) st->scale_zeros += zeros; /* the whole block dequantizes to 0 */
}

static float fq_seg_amax(const fq_core_ctx *q, const float *x, size_t n, float m)
{
    for (size_t i = 0; i < n; i++) m = nvfp4_core_amax_step(m, x[i], q->rt->chain.amax_nan_propagates);
    return m;
}

static void fq_core_rows_1d(const fq_core_ctx *q, const float *x, size_t rows, size_t k, float *out,
                            nvfp4_sq_stats *st)
{
    size_t b = q->rt->qblock_len, nb = (k + b - 1) / b;
    uint64_t zeros = 0, clips = 0, in_zeros = 0, scale_zeros = 0;
#pragma omp parallel for reduction(+ : zeros, clips, in_zeros, scale_zeros) schedule(static)
    for (size_t r = 0; r < rows; r++) {
        nvfp4_sq_stats ls = {0, 0, 0, 0, 0};
        for (size_t j = 0; j < nb; j++) {
            size_t c0 = j * b, n = (c0 + b <= k) ? b : k - c0;
            const float *xs = x + r * k + c0;
            fq_scale s = fq_block_scale(q->rt, &q->g, fq_seg_amax(q, xs, n, 0.0f));
            fq_core_segment(q, xs, out + r * k + c0, n, &s, (uint64_t)(r * nb + j), &ls);
        }
        zeros += ls.zeros;
        clips += ls.clips;
        in_zeros += ls.in_zeros;
        scale_zeros += ls.scale_zeros;
    }
    st->zeros += zeros;
    st->clips += clips;
    st->in_zeros += in_zeros;
    st->scale_zeros += scale_zeros;
}

/* 16x16 tiles: one scale per tile from the tile amax; SR bits per 1x16 row
 * segment (block index r*nb + j as in the 1D case). */
static void fq_core_rows_2d(const fq_core_ctx *q, const float *x, size_t rows, size_t k, float *out,
                            nvfp4_sq_stats *st)
{
    size_t nb = (k + 15) / 16, nt = (rows + 15) / 16;
    uint64_t zeros = 0, clips = 0, in_zeros = 0, scale_zeros = 0;
#pragma omp parallel for reduction(+ : zeros, clips, in_zeros, scale_zeros) schedule(static)
    for (size_t t = 0; t < nt; t++) {
        nvfp4_sq_stats ls = {0, 0, 0, 0, 0};
        size_t r0 = t * 16, r1 = r0 + 16 <= rows ? r0 + 16 : rows;
        for (size_t j = 0; j < nb; j++) {
            size_t c0 = j * 16, n = (c0 + 16 <= k) ? 16 : k - c0;
            float m = 0.0f;
            for (size_t r = r0; r < r1; r++) m = fq_seg_amax(q, x + r * k + c0, n, m);
            fq_scale s = fq_block_scale(q->rt, &q->g, m);
            for (size_t r = r0; r < r1; r++)
                fq_core_segment(q, x + r * k + c0, out + r * k + c0, n, &s, (uint64_t)(r * nb + j), &ls);
        }
        zeros += ls.zeros;
        clips += ls.clips;
        in_zeros += ls.in_zeros;
        scale_zeros += ls.scale_zeros;
    }
    st->zeros += zeros;
    st->clips += clips;
    st->in_zeros += in_zeros;
    st->scale_zeros += scale_zeros;
}

static void fq_core(const fq_route *rt, const nvfp4_sq_cfg *c, const float *x, size_t rows, size_t k,
                    const nvfp4_sq_key *key, float *out, nvfp4_sq_stats *st)
{
    fq_core_ctx q;
    q.rt = rt;
    q.mode = c->rounding == NVFP4_SR ? NVFP4_CORE_SR : NVFP4_CORE_RN;
    q.pre34 = c->prescale34;
    q.sr_seed = fq_sr_seed(key);
    q.sr_base = fq_sr_base(key);
    /* only the E4M3 rules read the tensor amax (through S_enc) */
    bool uses_amax = rt->rule == NVFP4_SS_E4M3 || rt->rule == NVFP4_SS_E4M3_UP;
    q.g = nvfp4_core_global_from_amax(&rt->chain, uses_amax ? nvfp4_amax_f32(x, rows * k) : 0.0f);
    if (rt->qblock == NVFP4_BLOCK_16X16) fq_core_rows_2d(&q, x, rows, k, out, st);
    else fq_core_rows_1d(&q, x, rows, k, out, st);
}

/* FP8 E4M3 with per-tensor current scaling, as TransformerEngine's
 * Float8CurrentScaling: scale = 448 / amax (1 when amax is 0 or not
 * finite, FLT_MAX when the quotient overflows; compute_scale_from_amax in
 * transformer_engine/common/recipe/recipe_common.cuh), the element
 * x * scale cast to E4M3 RN with saturation (src/core/e4m3.h), dequantized
 * by the fp32 scale_inv = 1 / scale. */
static void fq_fp8_tensor(const float *x, size_t n, float *out)
{
    float amax = nvfp4_amax_f32(x, n), scale = 1.0f;
    if (amax > 0.0f && isfinite(amax)) {
        scale = NVFP4_E4M3_MAX / amax;
        if (isinf(scale)) scale = FLT_MAX;
    }
    float inv = 1.0f / scale;
    /* the round trip in the float domain (the same bits: src/core/e4m3.h) vectorizes */
#pragma omp simd
    for (size_t i = 0; i < n; i++) out[i] = nvfp4_core_e4m3_round_sat(x[i] * scale) * inv;
}

/* MXFP8 (the library's recipe `mxfp8`: E4M3 elements, 1x32 blocks along
 * rows, UE8M0 scales) quantized and dequantized in one pass, with the
 * recipe's own core rules for the block amax, scale byte and encode
 * divisor: the element is nvfp4_core_e4m3_round_sat of the scaled value
 * (decode(encode(y, satfinite)) on every fp32 input) times the block's
 * dequantization scale, NaN canonical, as nvfp4_dequantize gives it
 * (tests/check_study.c mxfp8_equals_library compares them). The library's
 * reference path, which the lab used, took 4.5 times an FP32 step. A short
 * last block is its own block (the library's pad). */
static const nvfp4_core_recipe fq_mxfp8_chain = NVFP4_CORE_CHAIN_MXFP8; /* the recipe's (src/recipes/mxfp8.c) */

/* One block of n <= 32 elements. The rules are read from the file-level
 * chain, which the compiler folds: through a pointer shared into the
 * OpenMP region they stayed run-time branches and the loop scalar. */
static void fq_mxfp8_block(const float *xs, size_t n, float *ys)
{
    const nvfp4_core_recipe *r = &fq_mxfp8_chain;
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f); /* no global scale: amax unused */
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = nvfp4_core_amax_step(m, xs[i], r->amax_nan_propagates);
    uint8_t byte = nvfp4_core_block_scale(r, &g, m);
    nvfp4_core_block b = nvfp4_core_block_prepare(r, &g, byte);
    float d = nvfp4_core_dequant_scale(r, &g, byte);
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        float v = nvfp4_core_e4m3_round_sat(nvfp4_core_scaled(r, &b, xs[i])) * d;
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        uint32_t is_nan = 0u - (uint32_t)((u & 0x7FFFFFFFu) > 0x7F800000u);
        u = (NVFP4_CORE_CANONICAL_NAN & is_nan) | (u & ~is_nan);
        memcpy(ys + i, &u, sizeof u);
    }
}

static void fq_mxfp8_rows(const float *x, size_t rows, size_t k, float *out)
{
    size_t bl = fq_mxfp8_chain.block_len, nb = (k + bl - 1) / bl;
#pragma omp parallel for schedule(static) if (rows * k >= 65536)
    for (size_t row = 0; row < rows; row++)
        for (size_t j = 0; j < nb; j++) {
            size_t c0 = j * bl;
            fq_mxfp8_block(x + row * k + c0, c0 + bl <= k ? bl : k - c0, out + row * k + c0);
        }
}

/* The transform runs in whole groups along the reduction axis. */
static nvfp4_status fq_rht_check(const nvfp4_sq_cfg *c, size_t k, nvfp4_error *err)
{
    if (!c->rht) return NVFP4_OK;
    if (!nvfp4_core_rht_size_ok(c->rht))
        return nvfp4_error_set(err, NVFP4_EINVAL, "RHT size %u is not a power of two in 4..128", c->rht);
    if (k % c->rht)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "RHT size %u does not divide the reduction length %zu", c->rht, k);
    return NVFP4_OK;
}

/* ---- the operand -------------------------------------------------------------------------- */
nvfp4_status nvfp4_sq_fakequant(const nvfp4_sq_cfg *c, const float *x, size_t rows, size_t k,
                                const nvfp4_sq_key *key, float *out, nvfp4_sq_stats *stats, nvfp4_error *err)
{
    size_t n;
    if (!nvfp4_mul_size(rows, k, &n)) return nvfp4_error_set(err, NVFP4_ENOMEM, "fakequant: %zu x %zu overflows", rows, k);
    if (stats) stats->n += n;
    if (c->format == NVFP4_SQ_FP32 || n == 0) {
        if (out != x && n) memcpy(out, x, n * sizeof *out);
        return NVFP4_OK;
    }
    nvfp4_status s = fq_rht_check(c, k, err);
    if (s != NVFP4_OK) return s;
    fq_route rt = fq_route_of(c);
    if (rt.lib_rht) {
        /* the library's RHT-16 runs on its columnwise output: hand it x^T */
        float *xt = fq_scratch(ST_SCR_FQ_T, n, err);
        if (!xt) return NVFP4_ENOMEM;
        st_transpose(x, rows, k, xt);
        return fq_library_t(&rt, c, xt, k, rows, key, out, stats, err);
    }
    const float *src = x;
    if (c->rht) {
        float *h = fq_scratch(ST_SCR_FQ_SRC, n, err);
        if (!h) return NVFP4_ENOMEM;
        nvfp4_rht_config rc;
        fq_rht_config(c->rht, c->rht_signs, c->rht_fp32, key, &rc);
        s = nvfp4_rht_forward(&rc, x, rows, k, h, err);
        if (s != NVFP4_OK) return s;
        src = h;
    }
    if (c->format == NVFP4_SQ_BF16) {
        /* out may be src (in place): element i reads and writes only index i */
#pragma omp simd
        for (size_t i = 0; i < n; i++) out[i] = nvfp4_core_round_bf16(src[i]);
        return NVFP4_OK;
    }
    if (c->format == NVFP4_SQ_FP8) {
        fq_fp8_tensor(src, n, out);
        return NVFP4_OK;
    }
    if (c->format == NVFP4_SQ_MXFP8) {
        fq_mxfp8_rows(src, rows, k, out);
        return NVFP4_OK;
    }
    nvfp4_sq_stats local = {0, 0, 0, 0, 0};
    nvfp4_sq_stats *st = stats ? stats : &local;
    if (!rt.lib_recipe) {
        fq_core(&rt, c, src, rows, k, key, out, st);
        return NVFP4_OK;
    }
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    s = fq_library(&rt, c, src, rows, k, false, key, out, &q, err);
    if (s == NVFP4_OK && stats && c->format != NVFP4_SQ_MXFP8) fq_count_library(&rt, &q.row, src, out, rows, k, stats);
    if (s == NVFP4_OK || q.has_row || q.has_col) nvfp4_quantized_free(&q);
    return s;
}

/* Whether a configuration quantizes every element on its own (FP32, BF16,
 * FP8 with its one scale per tensor; no RHT across elements), so that
 * nvfp4_sq_fakequant may run in place. */
static bool fq_elementwise(const nvfp4_sq_cfg *c)
{
    return (c->format == NVFP4_SQ_FP32 || c->format == NVFP4_SQ_BF16 || c->format == NVFP4_SQ_FP8) && !c->rht;
}

nvfp4_status st_fakequant_t(const nvfp4_sq_cfg *c, const float *xt, size_t k, size_t rows, const nvfp4_sq_key *key,
                            float *out, nvfp4_sq_stats *stats, nvfp4_error *err)
{
    size_t n;
    if (!nvfp4_mul_size(rows, k, &n)) return nvfp4_error_set(err, NVFP4_ENOMEM, "fakequant: %zu x %zu overflows", rows, k);
    fq_route rt = fq_route_of(c);
    /* MXFP8: rowwise on the transpose (the library's columnwise MXFP8 is that) */
    if (n && rt.lib_recipe && c->format != NVFP4_SQ_MXFP8 && (!c->rht || rt.lib_rht)) {
        nvfp4_status s = fq_rht_check(c, k, err);
        if (s != NVFP4_OK) return s;
        if (stats) stats->n += n;
        return fq_library_t(&rt, c, xt, k, rows, key, out, stats, err);
    }
    if (fq_elementwise(c) && out != xt) {
        /* transposed straight into out and quantized there, in place (each
         * element reads and writes only itself once FP8's amax is taken):
         * no scratch copy to write and read back (an output that is the
         * input itself still goes through the copy) */
        if (n) st_transpose(xt, k, rows, out);
        return nvfp4_sq_fakequant(c, out, rows, k, key, out, stats, err);
    }
    float *x = fq_scratch(ST_SCR_FQ_T, n, err);
    if (!x && n) return NVFP4_ENOMEM;
    if (n) st_transpose(xt, k, rows, x);
    return nvfp4_sq_fakequant(c, x, rows, k, key, out, stats, err);
}

nvfp4_status nvfp4_sq_rht_rows(float *x, size_t rows, size_t k, unsigned d, nvfp4_sq_rht_signs signs,
                               const nvfp4_sq_key *key, nvfp4_error *err)
{
    nvfp4_rht_config rc;
    fq_rht_config(d, signs, true, key, &rc);
    return nvfp4_rht_forward(&rc, x, rows, k, x, err);
}
