/*
 * trace.c - one block walked through its recipe (nvfp4/trace.h): the plan
 * resolves the options, src/core/recipe.h computes every number, in the
 * same order as the scalar reference path (reference.c). Nothing here
 * rounds a value by itself; it only records the intermediate values the
 * quantizer does not keep, and says each rule in words.
 */
#include <string.h>

#include "core/bf16.h"
#include "core/philox.h"
#include "nvfp4/trace.h"
#include "quant/quant_internal.h"

/* ---- the rules in words ------------------------------------------------- */

static nvfp4_trace_global global_of(const nvfp4_core_recipe *r)
{
    if (r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE || r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256 ||
        r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_ROW || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP ||
        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_FI || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT ||
        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16 ||
        r->global_rule == NVFP4_CORE_GLOBAL_RECIP_OF_DECODE || r->global_rule == NVFP4_CORE_GLOBAL_UNIT)
        return NVFP4_TRACE_GLOBAL_ENCODE;
    if (r->global_rule == NVFP4_CORE_GLOBAL_DECODE_DIV) return NVFP4_TRACE_GLOBAL_DECODE;
    return NVFP4_TRACE_GLOBAL_NONE;
}

static const char *scale_formula(const nvfp4_core_recipe *r)
{
    if (r->scale_format == NVFP4_CORE_SCALE_UE5M3) return "block_amax * (S_enc * fl(1/6)), UE5M3 RN satfinite";
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL: return "block_amax * (S_enc * fl(1/6)), E4M3 RN satfinite";
    case NVFP4_CORE_BSCALE_DIV_DIV: return "(block_amax / 6) / g, clamped, E4M3 RN";
    case NVFP4_CORE_BSCALE_DIV_PRODUCT: return "block_amax / (6 * g) (0 -> 1), clamped, E4M3 RN";
    case NVFP4_CORE_BSCALE_UE8M0_FLOOR: return "UE8M0 floor(log2(block_amax)) - emax(elem)";
    case NVFP4_CORE_BSCALE_UE8M0_CEIL: return "UE8M0 ceil(log2(block_amax)) - emax(elem) (torchao CEIL)";
    case NVFP4_CORE_BSCALE_UE8M0_EVEN: return "UE8M0 floor(log2(block_amax rounded to mbits(elem), half up)) - emax(elem)";
    case NVFP4_CORE_BSCALE_GGML: return "ggml_fp32_to_ue4m3(block_amax / 6) (llama.cpp rounding)";
    case NVFP4_CORE_BSCALE_4OVER6_MAE:
    case NVFP4_CORE_BSCALE_4OVER6_MSE:
    case NVFP4_CORE_BSCALE_4OVER6_MAE_FP16:
    case NVFP4_CORE_BSCALE_4OVER6_MSE_FP16:
        return "4over6: (block_amax / 6) * S_enc (map-to-6) or that * 1.5 (map-to-4), E4M3 RN, the lower-error one";
    case NVFP4_CORE_BSCALE_UE8M0_DIV_RCEIL: return "UE8M0 ceil(log2(block_amax / 6)), exact (TE pow_2_scales)";
    case NVFP4_CORE_BSCALE_GLOBAL_FIRST: return "S_enc * (block_amax * fl(1/6)), clamped to 448, E4M3 RN";
    case NVFP4_CORE_BSCALE_CT: return "S_enc * (block_amax / 6), clamped to 448, E4M3 RN (0 -> 0.125)";
    case NVFP4_CORE_BSCALE_CT_BF16: return "S_enc * bf16(block_amax / 6), clamped to 448, E4M3 RN (0 -> 0.125)";
    case NVFP4_CORE_BSCALE_CT_FP16: return "S_enc * fp16(block_amax / 6), clamped to 448, E4M3 RN (0 -> 0.125)";
    case NVFP4_CORE_BSCALE_UE8M0_LOG2: return "UE8M0 floorf(log2f(block_amax)) - emax(elem) (llama.cpp)";
    case NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL: return "(block_amax / 6) * S_enc, clamped to [2^-16, 448], E4M3 RN";
    default: return "UE8M0 round-up of block_amax / max(elem)";
    }
}

/* The fp32 value each block-scale rule hands to its rounding: the same
 * expressions as nvfp4_core_block_scale, kept for display (the byte itself
 * is always nvfp4_core_block_scale's). The floor rule rounds no quotient:
 * its input is the block amax. */
static float scale_unrounded(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float bamax)
{
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL: return bamax * (g->s_enc * NVFP4_CORE_INV6);
    case NVFP4_CORE_BSCALE_DIV_DIV: return (bamax / r->elem_max) / g->g;
    case NVFP4_CORE_BSCALE_DIV_PRODUCT: return bamax / (r->elem_max * g->g);
    case NVFP4_CORE_BSCALE_UE8M0_RCEIL: return bamax * (1.0f / r->elem_max);
    case NVFP4_CORE_BSCALE_GGML: return bamax / r->elem_max;
    case NVFP4_CORE_BSCALE_UE8M0_DIV_RCEIL: return bamax / r->elem_max;
    case NVFP4_CORE_BSCALE_GLOBAL_FIRST: return g->s_enc * (bamax * NVFP4_CORE_INV6);
    case NVFP4_CORE_BSCALE_CT: return g->s_enc * (bamax / r->elem_max);
    case NVFP4_CORE_BSCALE_CT_BF16: return g->s_enc * nvfp4_core_round_bf16(bamax / r->elem_max);
    case NVFP4_CORE_BSCALE_CT_FP16: return g->s_enc * nvfp4_core_round_fp16(bamax / r->elem_max);
    case NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL: return (bamax / r->elem_max) * g->s_enc;
    case NVFP4_CORE_BSCALE_4OVER6_MAE:
    case NVFP4_CORE_BSCALE_4OVER6_MSE:
    case NVFP4_CORE_BSCALE_4OVER6_MAE_FP16:
    case NVFP4_CORE_BSCALE_4OVER6_MSE_FP16: return (bamax / r->elem_max) * g->s_enc; /* the map-to-6 value */
    default: return bamax;
    }
}

static const char *encode_formula(const nvfp4_core_recipe *r)
{
    switch (r->enc_rule) {
    case NVFP4_CORE_ENC_TE_RECIP: return "x * inv, inv = fminf(1/(s*S_dec), FLT_MAX)";
    case NVFP4_CORE_ENC_DIV_TOTAL: return "x / (g*s)";
    case NVFP4_CORE_ENC_EXACT: return "nearest code to the real x/D (exact comparison)";
    case NVFP4_CORE_ENC_RECIP_DIV: return "x * ((1/g)/s)";
    case NVFP4_CORE_ENC_POW2_FP32: return "x / max(fp32 bits e << 23, 2^-126)";
    case NVFP4_CORE_ENC_TE_BF16: return "fma(x, c, 0), c = bf16(fminf(S_enc/s, BF16_MAX)) (TE fast math)";
    case NVFP4_CORE_ENC_GGML_NEAREST: return "the code k of least fabsf(fp4(k)*s - x), first k of 0..15 on ties";
    case NVFP4_CORE_ENC_SAFE_RECIP: return "x * r(s * r(S_enc)), r(v) = 1/v, r(0) = fl(1/1e8)";
    case NVFP4_CORE_ENC_DIV_SCALE_GLOBAL: return "x / (s / S_enc)";
    case NVFP4_CORE_ENC_GLOBAL_OVER_SCALE: return "x * fminf(S_enc / s, FLT_MAX)";
    default: return "x / 2^e";
    }
}

bool nvfp4_trace_e2m1_is_tie(float y)
{
    float a = nvfp4_core_fabs(y);
    for (uint32_t k = 0; k < 7u; k++) {
        float mid = (nvfp4_core_e2m1_mag_value(k) + nvfp4_core_e2m1_mag_value(k + 1u)) * 0.5f;
        if (a == mid) return true;
    }
    return false;
}

/* ---- the block ---------------------------------------------------------- */

typedef struct {
    const void *x;
    nvfp4_dtype dtype;
    size_t rows, cols;
} trace_input;

/* Element (r, c) as fp32; zero outside the tensor (the quantizer's padding). */
static float x_at(const trace_input *in, size_t r, size_t c)
{
    if (r >= in->rows || c >= in->cols) return 0.0f;
    size_t i = r * in->cols + c;
    if (in->dtype == NVFP4_DTYPE_BF16) return nvfp4_core_bf16_decode(((const uint16_t *)in->x)[i]);
    return ((const float *)in->x)[i];
}

static float amax_over(const trace_input *in, size_t r0, size_t r1, size_t c0, size_t c1, int nanprop)
{
    float a = 0.0f;
    for (size_t i = r0; i < r1; i++)
        for (size_t j = c0; j < c1; j++) a = nvfp4_core_amax_step(a, x_at(in, i, j), nanprop);
    return a;
}

static void trace_scale(const nvfp4_core_recipe *r, const nvfp4_core_global *g, nvfp4_trace_block *t)
{
    t->scale_formula = scale_formula(r);
    t->scale_unrounded = scale_unrounded(r, g, t->block_amax);
    t->scale = nvfp4_core_block_scale(r, g, t->block_amax);
    t->scale_value = r->scale_format == NVFP4_CORE_SCALE_UE8M0 ? nvfp4_core_pow2_scale(r, t->scale)
                                                               : nvfp4_core_scale_decode(r, t->scale);
}

/* The elements, as reference.c's row_encode takes them: the random bytes of
 * 16-element segment i/16 from counter sr_offset + i/16. */
static void trace_elems(const nvfp4_core_recipe *r, const nvfp4_core_global *g, const trace_input *in,
                        const nvfp4_quant_plan *p, nvfp4_trace_block *t)
{
    nvfp4_core_block b = nvfp4_core_block_prepare(r, g, t->scale);
    int mode = nvfp4_quant_core_mode(p->opts.rounding);
    t->encode_formula = encode_formula(r);
    t->factor = b.factor;
    t->dequant_scale = nvfp4_core_dequant_scale(r, g, t->scale);
    /* exact and ggml pick a code by comparison: no scaled value is rounded */
    t->scaled_then_rounded = r->enc_rule != NVFP4_CORE_ENC_EXACT && r->enc_rule != NVFP4_CORE_ENC_GGML_NEAREST;
    bool e2m1_rounded = t->scaled_then_rounded && r->elem == NVFP4_CORE_ELEM_E2M1;
    uint8_t rb[16] = {0};
    for (size_t i = 0; i < t->block_len; i++) {
        nvfp4_trace_elem *e = &t->elem[i];
        if (mode == NVFP4_CORE_SR && (i & 15u) == 0)
            nvfp4_core_sr_block_bytes(p->opts.seed, p->row.sr_offset + (i >> 4), t->sr_block, rb);
        e->col = t->block_index * t->block_len + i;
        e->x = x_at(in, t->row, e->col);
        e->rbits = mode == NVFP4_CORE_SR ? rb[i & 15u] : 0u;
        e->code = nvfp4_core_encode_elem(r, &b, e->x, mode, e->rbits);
        e->value = nvfp4_core_elem_value(r, e->code);
        e->dequant = nvfp4_core_dequant_value(r, g, t->scale, e->code);
        e->scaled = t->scaled_then_rounded ? nvfp4_core_scaled(r, &b, e->x) : e->x / t->dequant_scale;
        e->tie = e2m1_rounded && nvfp4_trace_e2m1_is_tie(e->scaled);
        e->saturates = e2m1_rounded && nvfp4_core_fabs(e->scaled) > 6.0f;
    }
}

/* The plan of the rowwise output, padded so that a partial last block can
 * be traced whatever opts->pad says. */
static nvfp4_status trace_plan(const nvfp4_quant_opts *opts, nvfp4_dtype dtype, size_t rows, size_t cols,
                               nvfp4_quant_plan *p, nvfp4_error *err)
{
    nvfp4_quant_opts o;
    if (opts) o = *opts;
    else nvfp4_quant_opts_init(&o);
    if (o.columnwise || o.rht)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace: traces the rowwise output only (no columnwise, no RHT)");
    if (o.global_scale_inverted)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace: traces the recipe's own global scale (no "
                               "global_scale_inverted)");
    o.rowwise = true;
    o.pad = true;
    return nvfp4_quant_plan_init(p, &o, dtype, rows, cols, err);
}

nvfp4_status nvfp4_trace(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols, const nvfp4_quant_opts *opts,
                         size_t row, size_t block_index, nvfp4_trace_block *out, nvfp4_error *err)
{
    if (!x || !out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace: no input or no output");
    nvfp4_quant_plan p;
    nvfp4_status st = trace_plan(opts, dtype, rows, cols, &p, err);
    if (st) return st;
    const nvfp4_quant_layout *l = &p.row;
    size_t nblk = l->pcols / l->block_len;
    if (row >= rows) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace: row %zu is outside the %zu rows", row, rows);
    if (block_index >= nblk)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace: block %zu is outside the %zu blocks of a row",
                               block_index, nblk);
    const nvfp4_core_recipe *r = &p.recipe->core;
    trace_input in = {x, dtype, rows, cols};
    memset(out, 0, sizeof *out);
    out->recipe = p.recipe;
    out->block = p.opts.block;
    out->rounding = p.opts.rounding;
    out->row = row;
    out->block_index = block_index;
    out->block_len = l->block_len;
    out->tile_rows = l->tile16 ? 16 : 1;
    out->tile_row0 = row / out->tile_rows * out->tile_rows;
    out->sr_block = (uint64_t)row * nblk + block_index; /* reference.c: segment row * nb + b */
    /* row-scaled recipes: the global state of the traced row alone */
    size_t ar0 = nvfp4_core_recipe_row_scaled(r) ? row : 0, ar1 = nvfp4_core_recipe_row_scaled(r) ? row + 1 : rows;
    out->amax = amax_over(&in, ar0, ar1, 0, cols, r->amax_nan_propagates);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, out->amax);
    out->global_rule = global_of(r);
    out->s_enc = g.s_enc;
    out->s_dec = g.s_dec;
    out->g = g.g;
    size_t c0 = block_index * l->block_len;
    out->block_amax = amax_over(&in, out->tile_row0, out->tile_row0 + out->tile_rows, c0, c0 + l->block_len,
                                r->amax_nan_propagates);
    trace_scale(r, &g, out);
    if (nvfp4_core_is_4over6(r)) {
        /* the byte the quantizer keeps: the candidate of lower error over
         * the block (16x16: over its tile's rows, in TE's sum order) */
        uint8_t s4, s6;
        float e4[16], e6[16], seg[16];
        nvfp4_core_4over6_scales(r, &g, out->block_amax, &s4, &s6);
        for (size_t i = 0; i < out->tile_rows; i++) {
            for (size_t k = 0; k < 16; k++) seg[k] = x_at(&in, out->tile_row0 + i, c0 + k);
            e4[i] = nvfp4_core_4over6_seg_error(r, &g, s4, seg);
            e6[i] = nvfp4_core_4over6_seg_error(r, &g, s6, seg);
        }
        out->scale = out->tile_rows == 16
                         ? nvfp4_core_4over6_pick(nvfp4_core_4over6_tile_sum(e4), nvfp4_core_4over6_tile_sum(e6), s4, s6)
                         : nvfp4_core_4over6_pick(e4[0], e6[0], s4, s6);
        out->scale_value = nvfp4_core_e4m3_decode(out->scale);
    }
    trace_elems(r, &g, &in, &p, out);
    return NVFP4_OK;
}

/* ---- scaled values of a whole orientation ------------------------------- */

nvfp4_status nvfp4_trace_scaled(const nvfp4_recipe *rec, float amax, const uint8_t *scale, size_t rows, size_t cols,
                                size_t block_len, const float *x, float *y, nvfp4_error *err)
{
    if (!rec) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace_scaled: no recipe");
    const nvfp4_core_recipe *r = &rec->core;
    if (r->enc_rule == NVFP4_CORE_ENC_EXACT || r->enc_rule == NVFP4_CORE_ENC_GGML_NEAREST || r->elem != NVFP4_CORE_ELEM_E2M1)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "recipe %s has no scaled value to round stochastically",
                               rec->info.name);
    if (block_len == 0 || cols % block_len != 0)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_trace_scaled: %zu columns are not a multiple of the block length %zu",
                               cols, block_len);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, amax);
    size_t scols = cols / block_len;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            nvfp4_core_block b = nvfp4_core_block_prepare(r, &g, scale[i * scols + j / block_len]);
            y[i * cols + j] = nvfp4_core_scaled(r, &b, x[i * cols + j]);
        }
    return NVFP4_OK;
}
