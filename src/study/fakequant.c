/*
 * fakequant.c - quantize-then-dequantize of one GEMM operand for the
 * training simulator (research/error-accumulation.md 6.1): NVFP4 and MXFP4
 * with every scale rule the studies compare, RN or SR elements, an optional
 * randomized Hadamard transform along the reduction axis; bf16 and fp32.
 *
 * The element and scale roundings are the shared ones of src/core/ (E2M1,
 * E4M3, UE8M0, BF16); this file only composes them. The `te` chain for
 * NVFP4 with E4M3 scales is DESIGN.md 3.2 (TransformerEngine's kernel path):
 *   S_enc = fminf(2688/amax, FLT_MAX) (1 when amax or S_enc is 0)
 *   s_b   = e4m3_rn_sat(block_amax * (S_enc * fl(1/6)))
 *   q     = e2m1(x * fminf(1/(s_b * S_dec), FLT_MAX))
 *   y     = fp4(q) * ((s_b * amax) * fl(1/2688))
 * SR bits: the Philox contract of DESIGN.md 3.3 (nvfp4_sr_block_bytes) with a
 * seed derived from (seed, layer, GEMM, operand) and offset 4*step, so the
 * bits never depend on the thread count or the order of evaluation.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/philox.h"
#include "nvfp4/study.h"

#include "core/bf16.h"
#include "core/e2m1.h"
#include "core/e4m3.h"
#include "core/hadamard.h"
#include "core/ue8m0.h"
#include "study/study_internal.h"

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
    if (c->format == NVFP4_SQ_FP32 || c->format == NVFP4_SQ_BF16) {
        snprintf(buf, n, "%s", c->format == NVFP4_SQ_FP32 ? "fp32" : "bf16");
        return;
    }
    char rht[32] = "";
    if (c->rht)
        snprintf(rht, sizeof rht, "/rht%u%s%s", c->rht,
                 c->rht_signs == NVFP4_SQ_RHT_PER_STEP ? "-perstep" : (c->rht_signs == NVFP4_SQ_RHT_NOSIGN ? "-nosign" : ""),
                 c->rht_fp32 ? "-fp32" : "");
    snprintf(buf, n, "%s/%s/%s/%s%s%s", c->format == NVFP4_SQ_NVFP4 ? "nvfp4" : "mxfp4",
             sq_block_name(sq_block_resolved(c)), scale_names[sq_scale_resolved(c)],
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
            else if (!strcmp(t, "nvfp4")) nvfp4_sq_cfg_nvfp4(c);
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
const char *sq_block_name(nvfp4_block b)
{
    return b == NVFP4_BLOCK_16X16 ? "16x16" : (b == NVFP4_BLOCK_1X32 ? "1x32" : "1x16");
}

nvfp4_block sq_block_resolved(const nvfp4_sq_cfg *c)
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

/* ---- scales ------------------------------------------------------------- */
typedef struct {
    float enc; /* multiply x by this before E2M1 */
    float dec; /* multiply the E2M1 value by this */
} block_scale;

/* Next E4M3 code up for a positive code (448 stays 448). */
static uint8_t e4m3_next_up(uint8_t code) { return code < 0x7Eu ? (uint8_t)(code + 1u) : code; }

static block_scale nvfp4_e4m3_scale(float bamax, float amax, bool round_up)
{
    float s_enc = nvfp4_core_fminf(2688.0f / amax, FLT_MAX);
    if (amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
    float s_dec = 1.0f / s_enc;
    float v = bamax * (s_enc * (1.0f / 6.0f));
    uint8_t code = nvfp4_core_e4m3_encode(v, 1);
    if (round_up && nvfp4_core_e4m3_decode(code) < v) code = e4m3_next_up(code);
    float sb = nvfp4_core_e4m3_decode(code);
    block_scale s;
    s.enc = nvfp4_core_fminf(1.0f / (sb * s_dec), FLT_MAX);
    s.dec = (sb * amax) * (1.0f / 2688.0f);
    return s;
}

static block_scale pow2_scale(uint8_t code)
{
    block_scale s;
    s.dec = nvfp4_core_ue8m0_decode(code);
    s.enc = 1.0f / s.dec; /* exact: a power of two (2^127 at most) */
    return s;
}

static block_scale compute_scale(nvfp4_sq_scale rule, float bamax, float amax)
{
    block_scale s = {1.0f, 1.0f};
    switch (rule) {
    case NVFP4_SS_E4M3: return nvfp4_e4m3_scale(bamax, amax, false);
    case NVFP4_SS_E4M3_UP: return nvfp4_e4m3_scale(bamax, amax, true);
    case NVFP4_SS_FP32:
        if (bamax > 0.0f) {
            s.dec = bamax / 6.0f;
            s.enc = 6.0f / bamax;
        }
        return s;
    case NVFP4_SS_UE8M0_FLOOR: {
        /* OCP MX v1.0: shared exponent floor(log2 amax) - emax(E2M1) = -2. */
        if (!(bamax > 0.0f)) return pow2_scale(127);
        uint8_t e = nvfp4_core_ue8m0_cvt(bamax, 0);
        return pow2_scale(e >= 2u ? (uint8_t)(e - 2u) : 0u);
    }
    case NVFP4_SS_UE8M0_CEIL:
    case NVFP4_SS_DEFAULT:
        if (!(bamax > 0.0f)) return pow2_scale(127);
        return pow2_scale(nvfp4_core_ue8m0_cvt(bamax * (1.0f / 6.0f), 1));
    }
    return s;
}

/* ---- one row segment ------------------------------------------------------ */
typedef struct {
    const nvfp4_sq_cfg *c;
    nvfp4_sq_scale rule;
    float amax;
    uint64_t sr_seed, sr_offset;
    size_t bsize;
} quant_ctx;

static void sr_bytes(const quant_ctx *q, uint64_t block, size_t bsize, uint8_t bytes[32])
{
    nvfp4_sr_block_bytes(q->sr_seed, q->sr_offset, block, bytes);
    if (bsize > 16) nvfp4_sr_block_bytes(q->sr_seed, q->sr_offset + 1u, block, bytes + 16);
}

/* E2M1 code -> value (a table of the 16 code points, not a rounding rule:
 * the rounding is nvfp4_core_e2m1_encode). */
static const float e2m1_values[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                      -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

/* Quantizes n (<= 32) elements sharing one scale. */
static void quant_segment(const quant_ctx *q, const float *x, float *y, size_t n, block_scale s, uint64_t block,
                          nvfp4_sq_stats *st)
{
    uint8_t rb[32] = {0};
    int mode = q->c->rounding == NVFP4_SR ? NVFP4_CORE_SR : NVFP4_CORE_RN;
    if (mode == NVFP4_CORE_SR) sr_bytes(q, block, q->bsize, rb);
    uint64_t clips = 0, zeros = 0;
    if (!q->c->prescale34) {
        for (size_t i = 0; i < n; i++) {
            float xi = x[i]; /* read before y[i] is written: x and y may alias */
            float v = xi * s.enc;
            float d = e2m1_values[nvfp4_core_e2m1_encode(v, mode, rb[i])] * s.dec;
            y[i] = d;
            clips += nvfp4_core_fabs(v) > NVFP4_E2M1_MAX;
            zeros += (xi != 0.0f) & (d == 0.0f);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            float xi = x[i];
            float v = (xi * s.enc) * 0.75f;
            float d = (e2m1_values[nvfp4_core_e2m1_encode(v, mode, rb[i])] * s.dec) * (4.0f / 3.0f);
            y[i] = d;
            clips += nvfp4_core_fabs(v) > NVFP4_E2M1_MAX;
            zeros += (xi != 0.0f) & (d == 0.0f);
        }
    }
    st->clips += clips;
    st->zeros += zeros;
}

static float seg_amax(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = nvfp4_core_fmaxf(m, nvfp4_core_fabs(x[i]));
    return m;
}

static void quant_rows_1d(const quant_ctx *q, const float *x, size_t rows, size_t k, float *out, nvfp4_sq_stats *st)
{
    size_t b = q->bsize, nb = (k + b - 1) / b;
    uint64_t zeros = 0, clips = 0;
#pragma omp parallel for reduction(+ : zeros, clips) schedule(static)
    for (size_t r = 0; r < rows; r++) {
        nvfp4_sq_stats ls = {0, 0, 0};
        for (size_t j = 0; j < nb; j++) {
            size_t c0 = j * b, n = (c0 + b <= k) ? b : k - c0;
            const float *xs = x + r * k + c0;
            block_scale s = compute_scale(q->rule, seg_amax(xs, n), q->amax);
            quant_segment(q, xs, out + r * k + c0, n, s, (uint64_t)(r * nb + j), &ls);
        }
        zeros += ls.zeros;
        clips += ls.clips;
    }
    st->zeros += zeros;
    st->clips += clips;
}

/* 16x16 tiles: one scale per tile from the tile amax; SR bits per 1x16 row
 * segment (block index r*nb + j as in the 1D case). */
static void quant_rows_2d(const quant_ctx *q, const float *x, size_t rows, size_t k, float *out, nvfp4_sq_stats *st)
{
    size_t nb = (k + 15) / 16, nt = (rows + 15) / 16;
    uint64_t zeros = 0, clips = 0;
#pragma omp parallel for reduction(+ : zeros, clips) schedule(static)
    for (size_t t = 0; t < nt; t++) {
        nvfp4_sq_stats ls = {0, 0, 0};
        size_t r0 = t * 16, r1 = r0 + 16 <= rows ? r0 + 16 : rows;
        for (size_t j = 0; j < nb; j++) {
            size_t c0 = j * 16, n = (c0 + 16 <= k) ? 16 : k - c0;
            float m = 0.0f;
            for (size_t r = r0; r < r1; r++) m = nvfp4_core_fmaxf(m, seg_amax(x + r * k + c0, n));
            block_scale s = compute_scale(q->rule, m, q->amax);
            for (size_t r = r0; r < r1; r++)
                quant_segment(q, x + r * k + c0, out + r * k + c0, n, s, (uint64_t)(r * nb + j), &ls);
        }
        zeros += ls.zeros;
        clips += ls.clips;
    }
    st->zeros += zeros;
    st->clips += clips;
}

static float tensor_amax(const float *x, size_t n)
{
    float m = 0.0f;
#pragma omp parallel for reduction(max : m) schedule(static)
    for (size_t i = 0; i < n; i++) {
        float a = nvfp4_core_fabs(x[i]);
        if (a > m) m = a; /* max is order-independent: the same at any thread count */
    }
    return m;
}

nvfp4_status nvfp4_sq_fakequant(const nvfp4_sq_cfg *c, const float *x, size_t rows, size_t k,
                                const nvfp4_sq_key *key, float *out, nvfp4_sq_stats *stats, nvfp4_error *err)
{
    nvfp4_sq_stats local = {0, 0, 0};
    nvfp4_sq_stats *st = stats ? stats : &local;
    size_t n;
    if (!nvfp4_mul_size(rows, k, &n)) return nvfp4_error_set(err, NVFP4_ENOMEM, "fakequant: %zu x %zu overflows", rows, k);
    st->n += n;
    if (c->format == NVFP4_SQ_FP32) {
        if (out != x) memcpy(out, x, n * sizeof *out);
        return NVFP4_OK;
    }
    const float *src = x;
    if (c->rht) {
        memcpy(out, x, n * sizeof *out);
        nvfp4_status s = nvfp4_sq_rht_rows(out, rows, k, c->rht, c->rht_signs, key, err);
        if (s != NVFP4_OK) return s;
        if (!c->rht_fp32)
            for (size_t i = 0; i < n; i++) out[i] = nvfp4_core_round_bf16(out[i]);
        src = out; /* quantized in place below: each segment is read before written */
    }
    if (c->format == NVFP4_SQ_BF16) {
        for (size_t i = 0; i < n; i++) out[i] = nvfp4_core_round_bf16(src[i]);
        return NVFP4_OK;
    }
    quant_ctx q;
    q.c = c;
    q.rule = sq_scale_resolved(c);
    nvfp4_block blk = sq_block_resolved(c);
    q.bsize = blk == NVFP4_BLOCK_1X32 ? 32 : 16;
    q.amax = (q.rule == NVFP4_SS_E4M3 || q.rule == NVFP4_SS_E4M3_UP) ? tensor_amax(src, n) : 0.0f;
    uint64_t seed = key ? key->seed : 0, step = key ? key->step : 0;
    q.sr_seed = sq_derive(seed, key ? key->layer : 0, key ? key->gemm : 0, key ? key->operand : 0, 0x53525354u);
    q.sr_offset = 4u * step;
    if (blk == NVFP4_BLOCK_16X16) quant_rows_2d(&q, src, rows, k, out, st);
    else quant_rows_1d(&q, src, rows, k, out, st);
    return NVFP4_OK;
}

/* ---- randomized Hadamard transform ----------------------------------------- */
/* The sign mask of a policy. Both Wgrad operands must share the signs
 * (H^T H = I), so the operand is never part of the key. */
static void rht_mask(unsigned d, nvfp4_sq_rht_signs policy, const nvfp4_sq_key *key, uint32_t mask[4])
{
    uint64_t seed = key ? key->seed : 0;
    if (policy == NVFP4_SQ_RHT_NOSIGN) nvfp4_core_rht_mask_none(mask);
    else if (policy == NVFP4_SQ_RHT_FIXED && d == 16) nvfp4_core_rht_mask_te(mask);
    else if (policy == NVFP4_SQ_RHT_FIXED) nvfp4_core_rht_mask_seeded(sq_derive(seed, 0, 0, 0, 0x52485446u), mask);
    else
        nvfp4_core_rht_mask_seeded(
            sq_derive(seed, key ? key->layer : 0, key ? (uint32_t)key->step : 0, key ? key->gemm : 0, 0x52485400u),
            mask);
}

nvfp4_status nvfp4_sq_rht_rows(float *x, size_t rows, size_t k, unsigned d, nvfp4_sq_rht_signs signs,
                               const nvfp4_sq_key *key, nvfp4_error *err)
{
    if (!nvfp4_core_rht_size_ok(d))
        return nvfp4_error_set(err, NVFP4_EINVAL, "RHT size %u is not a power of two in 4..128", d);
    if (k % d) return nvfp4_error_set(err, NVFP4_ESHAPE, "RHT size %u does not divide the reduction length %zu", d, k);
    uint32_t mask[4];
    rht_mask(d, signs, key, mask);
    size_t groups = rows * (k / d);
#pragma omp parallel for schedule(static)
    for (size_t g = 0; g < groups; g++) nvfp4_core_rht_group(x + g * d, x + g * d, d, mask, 1, 0);
    return NVFP4_OK;
}
