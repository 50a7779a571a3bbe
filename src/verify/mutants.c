/*
 * mutants.c - the mutant catalog: plausible kernel bugs, each the recipe
 * chain of src/core/recipe.h with one step replaced (src/verify/mutant.h).
 * One entry per mutant: its name, the step it replaces, the formula the
 * buggy kernel computes, and where the bug comes from (a public report, a
 * reference implementation that differs, or the mechanism). The hooks
 * below are the bugs; every correct rounding they call is src/core/'s.
 * docs/verify.md ("Mutants") lists them; `nvfp4 table --mutants` prints them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/philox.h"
#include "core/swizzle.h"
#include "nvfp4/trace.h"
#include "recipes/recipe.h"
#include "verify/mutant.h"

#define R_TE "te,te-pyref"
#define R_NVFP4 "te,te-pyref,torchao,torchao-0.13-0.16,modelopt"
#define R_E2M1 "te,te-pyref,torchao,torchao-0.13-0.16,modelopt,mxfp4-floor,mxfp4-rceil"
#define R_TORCHAO "torchao,torchao-0.13-0.16"
/* te plus mslk (te's chain with torch's global scale and x * fminf(S_enc / s, FLT_MAX)): the encode-factor
 * deviations that are not mslk's own rule apply to its chain as they do to te's */
#define R_TE_MSLK "te,te-pyref,mslk"

/* ---- shared pieces ---------------------------------------------------------- */

static float te_divisor(const nvfp4_core_global *g, uint8_t s) { return nvfp4_core_e4m3_decode(s) * g->s_dec; }

/* The value the te block scale casts to E4M3. */
static float te_scale_value(const nvfp4_core_global *g, float bamax)
{
    float m = g->s_enc * NVFP4_CORE_INV6;
    return bamax * m;
}

static uint8_t e4m3_step(uint8_t code, int up)
{
    uint8_t mag = code & 0x7Fu, sign = code & 0x80u;
    if (mag == 0x7Fu) return code;
    if (up && mag < 0x7Eu) mag++;
    if (!up && mag > 0) mag--;
    return (uint8_t)(sign | mag);
}

/* E4M3 with rounding toward zero / toward +Inf: the nearest code, moved one
 * code when it lies on the wrong side of v. */
static uint8_t e4m3_directed(float v, int up)
{
    uint8_t c = nvfp4_core_e4m3_encode(v, 1);
    if (nvfp4_core_isnan(v)) return c;
    float d = nvfp4_core_e4m3_decode(c), a = nvfp4_core_fabs(v), ad = nvfp4_core_fabs(d);
    if (!up && ad > a) return e4m3_step(c, 0);
    if (up && d < v) return e4m3_step(c, 1);
    return c;
}

/* y as the mutant being run scales it: a composed encode-factor step shows in every element hook */
static float scaled(const nvfp4_mctx *c, const nvfp4_core_block *b, float x) { return nvfp4_mutant_y(c, b, x); }

static uint8_t cast_rn(const nvfp4_mctx *c, float y) { return nvfp4_core_e2m1_cast(c->r, y, NVFP4_CORE_RN, 0); }

/* ---- encode factor (te) ------------------------------------------------------ */

static nvfp4_core_block prep_divisor(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, te_divisor(g, s)};
    return b;
}
static float y_divide(const nvfp4_mctx *c, const nvfp4_core_block *b, float x)
{
    (void)c;
    return x / b->factor;
}

static nvfp4_core_block prep_senc_over_s(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, nvfp4_core_fminf(g->s_enc / nvfp4_core_e4m3_decode(s), NVFP4_CORE_FLT_MAX)};
    return b;
}

/* rcp.approx.ftz.f32 has at most 1 ulp error; modelled as the reciprocal
 * rounded toward zero (one ulp below the correctly rounded one when that
 * lies above 1/d; the product of two floats is exact in binary64). */
static nvfp4_core_block prep_approx_recip(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    float d = te_divisor(g, s), r = 1.0f / d;
    if (isfinite(r) && (double)r * (double)d > 1.0) r = nextafterf(r, 0.0f);
    nvfp4_core_block b = {s, nvfp4_core_fminf(r, NVFP4_CORE_FLT_MAX)};
    return b;
}

static nvfp4_core_block prep_bf16_factor(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    nvfp4_core_block b = nvfp4_core_block_prepare(c->r, g, s);
    b.factor = nvfp4_core_round_bf16(b.factor);
    return b;
}

static nvfp4_core_block prep_no_clamp(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, 1.0f / te_divisor(g, s)};
    return b;
}

/* S_dec taken as amax * fl(1/2688) (the dequant's product) instead of 1/S_enc. */
static nvfp4_core_block prep_sdec_from_amax(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    float sdec = g->amax * NVFP4_CORE_INV2688, d = nvfp4_core_e4m3_decode(s) * sdec;
    nvfp4_core_block b = {s, nvfp4_core_fminf(1.0f / d, NVFP4_CORE_FLT_MAX)};
    return b;
}

/* ---- block scale (te) ------------------------------------------------------------ */

static uint8_t bs_div6_then_senc(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    float t = bamax / 6.0f;
    return nvfp4_core_e4m3_encode(t * g->s_enc, 1);
}
static uint8_t bs_inv6_then_senc(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    float t = bamax * NVFP4_CORE_INV6;
    return nvfp4_core_e4m3_encode(t * g->s_enc, 1);
}
static uint8_t bs_rz(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    return e4m3_directed(te_scale_value(g, bamax), 0);
}
static uint8_t bs_ru(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    return e4m3_directed(te_scale_value(g, bamax), 1);
}
static uint8_t bs_no_satfinite(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    return nvfp4_core_e4m3_encode(te_scale_value(g, bamax), 0);
}
static uint8_t bs_flush_subnormal(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    uint8_t s = nvfp4_core_block_scale(c->r, g, bamax);
    return (s & 0x78u) == 0 ? (uint8_t)(s & 0x80u) : s;
}
static uint8_t bs_via_fp16(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    float h = nvfp4_core_round_fp16(te_scale_value(g, bamax));
    return nvfp4_core_e4m3_encode(h, 1);
}

/* ---- global scale and amax ------------------------------------------------------ */

/* The compressed-tensors convention (global scale = 6*448/amax, stored as
 * the divisor) mixed up with TE's / torchao's (amax/(6*448)). */
static nvfp4_core_global gl_inverted(const nvfp4_mctx *c, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(c->r, amax);
    if (c->r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE) {
        g.s_enc = amax / NVFP4_CORE_2688;
        if (amax == 0.0f || !(g.s_enc > 0.0f) || isinf(g.s_enc)) g.s_enc = 1.0f;
        g.s_dec = 1.0f / g.s_enc;
    } else {
        g.g = NVFP4_CORE_2688 / amax;
    }
    return g;
}

static float amax_range(const nvfp4_mctx *c, size_t r0, size_t r1, size_t c0, size_t c1)
{
    float a = 0.0f;
    for (size_t r = r0; r < r1 && r < c->l->prows; r++)
        for (size_t k = c0; k < c1; k++) a = nvfp4_core_amax_step(a, c->b[r * c->l->pcols + k], c->r->amax_nan_propagates);
    return a;
}
static float la_per_row(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    (void)bcol;
    return amax_range(c, row, row + 1, 0, c->l->pcols);
}
static float la_per_block(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    return nvfp4_mutant_default_block_amax(c, row, bcol);
}
static float la_per_128_rows(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    (void)bcol;
    return amax_range(c, row / 128 * 128, row / 128 * 128 + 128, 0, c->l->pcols);
}
static float ta_nan_propagates(const nvfp4_mctx *c)
{
    return nvfp4_mutant_tensor_amax_of(c->b, c->l->prows * c->l->pcols, 1);
}
static float ta_nan_ignored(const nvfp4_mctx *c) { return nvfp4_mutant_tensor_amax_of(c->b, c->l->prows * c->l->pcols, 0); }
static float ta_pre_rht(const nvfp4_mctx *c)
{
    return nvfp4_mutant_tensor_amax_of(c->pre, c->l->prows * c->l->pcols, c->r->amax_nan_propagates);
}
static float ta_signed(const nvfp4_mctx *c)
{
    float a = 0.0f;
    for (size_t i = 0; i < c->l->prows * c->l->pcols; i++) a = nvfp4_core_fmaxf(a, c->b[i]);
    return a;
}

/* ---- block amax ------------------------------------------------------------------ */

static float block_cells(const nvfp4_mctx *c, size_t row, size_t bcol, size_t *r0, size_t *r1, size_t *c0, size_t *c1)
{
    size_t bl = c->l->block_len;
    *r0 = c->l->tile16 ? row / 16 * 16 : row;
    *r1 = c->l->tile16 ? *r0 + 16 : row + 1;
    *c0 = bcol * (c->l->tile16 ? 16 : bl);
    *c1 = *c0 + (c->l->tile16 ? 16 : bl);
    return 0.0f;
}
static float ba_signed(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    size_t r0, r1, c0, c1;
    float a = block_cells(c, row, bcol, &r0, &r1, &c0, &c1);
    for (size_t r = r0; r < r1 && r < c->l->prows; r++)
        for (size_t k = c0; k < c1; k++) a = nvfp4_core_fmaxf(a, c->b[r * c->l->pcols + k]);
    return a;
}
static float ba_nan_rule(const nvfp4_mctx *c, size_t row, size_t bcol, int nanprop)
{
    size_t r0, r1, c0, c1;
    float a = block_cells(c, row, bcol, &r0, &r1, &c0, &c1);
    for (size_t r = r0; r < r1 && r < c->l->prows; r++)
        for (size_t k = c0; k < c1; k++) a = nvfp4_core_amax_step(a, c->b[r * c->l->pcols + k], nanprop);
    return a;
}
static float ba_nan_propagates(const nvfp4_mctx *c, size_t row, size_t bcol) { return ba_nan_rule(c, row, bcol, 1); }
static float ba_nan_ignored(const nvfp4_mctx *c, size_t row, size_t bcol) { return ba_nan_rule(c, row, bcol, 0); }
static float ba_tile_first_row(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    return amax_range(c, row / 16 * 16, row / 16 * 16 + 1, bcol * 16, bcol * 16 + 16);
}

/* ---- element casts (RN kernels) ------------------------------------------------------ */

static uint8_t el_ties_away(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    (void)rbits;
    float y = scaled(c, b, x);
    uint8_t q = cast_rn(c, y);
    if (!nvfp4_core_isnan(y) && nvfp4_trace_e2m1_is_tie(y))
        q = (uint8_t)((q & 8u) | (nvfp4_core_e2m1_rz_mag(nvfp4_core_fabs(y)) + 1u));
    return q;
}
static uint8_t el_rz(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    (void)rbits;
    return nvfp4_core_e2m1_cast(c->r, scaled(c, b, x), NVFP4_CORE_RZ, 0);
}
static uint8_t el_ru(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    (void)rbits;
    float y = scaled(c, b, x);
    uint8_t q = nvfp4_core_e2m1_cast(c->r, y, NVFP4_CORE_RZ, 0);
    if (y > 0.0f && y < 6.0f && nvfp4_core_e2m1_decode(q) != y && (q & 7u) < 7u) q++;
    return q;
}
/* ---- special values: rewrites of the rounded code q (x the input, y its scaled value) ---- */

static uint8_t sp_negzero_dropped(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)x, (void)y;
    return q == 0x8u ? 0x0u : q;
}
static uint8_t sp_nan_zero(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)x;
    return nvfp4_core_isnan(y) ? 0x0u : q;
}
static uint8_t sp_nan_0x7(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)x;
    return nvfp4_core_isnan(y) ? 0x7u : q;
}
static uint8_t sp_nan_signed(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)y;
    return nvfp4_core_isnan(x) && nvfp4_core_signbit(x) ? (uint8_t)(q | 8u) : q;
}
static uint8_t sp_sat_to_zero(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)x;
    if (!nvfp4_core_isnan(y) && !(nvfp4_core_fabs(y) <= 6.0f)) return (uint8_t)(nvfp4_core_signbit(y) << 3);
    return q;
}

/* ---- stochastic rounding bytes ------------------------------------------------------- */

static void rb_default(const nvfp4_mctx *c, size_t blk, size_t half, uint8_t rb[16])
{
    nvfp4_core_sr_block_bytes(c->seed, c->l->sr_offset + half, blk, rb);
}
static void rb_byte_order(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)row;
    uint8_t t[16];
    rb_default(c, blk, half, t);
    for (unsigned i = 0; i < 16; i++) rb[i] = t[(i & ~3u) | (3u - (i & 3u))];
}
static void rb_counter_per_row(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)blk;
    rb_default(c, row, half, rb);
}
static void rb_reused_word(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)row;
    uint8_t t[16];
    rb_default(c, blk, half, t);
    for (unsigned i = 0; i < 16; i++) rb[i] = t[i & 3u];
}
static void rb_fewer_bits(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)row;
    rb_default(c, blk, half, rb);
    for (unsigned i = 0; i < 16; i++) rb[i] &= 0xF0u;
}
static void rb_colwise_same_offset(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)row;
    nvfp4_core_sr_block_bytes(c->seed, c->p->opts.offset + half, blk, rb);
}
static void rb_counter_swapped(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16])
{
    (void)row;
    nvfp4_core_sr_block_bytes(c->seed, blk, c->l->sr_offset + half, rb);
}
static void op_rn(nvfp4_quant_opts *o) { o->rounding = NVFP4_RN; }

/* ---- layouts ----------------------------------------------------------------------- */

static void ly_nibble_swap(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c, (void)swz, (void)n;
    for (size_t i = 0; i < t->data_bytes; i++) t->data[i] = (uint8_t)((t->data[i] >> 4) | (t->data[i] << 4));
}
static void ly_scale_transposed(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c, (void)n;
    size_t R = t->scale_rows, C = t->scale_cols, RC = R * C;
    uint8_t *tmp = malloc(RC ? RC : 1);
    if (!tmp) return;
    for (size_t r = 0; r < R; r++)
        for (size_t k = 0; k < C; k++) tmp[k * R + r] = t->scale[r * C + k];
    memcpy(t->scale, tmp, R * C);
    free(tmp);
    nvfp4_scale_swizzle(t->scale, R, C, swz);
}
static bool is_padding(const nvfp4_qtensor *t, size_t off, size_t *r, size_t *k)
{
    size_t C = t->scale_cols, tiles_c = (C + 3) / 4, tile = off / 512, in = off % 512;
    size_t rr = (tile / tiles_c) * 128 + ((in % 16) / 4) * 32 + in / 16, cc = (tile % tiles_c) * 4 + in % 4;
    *r = rr;
    *k = cc;
    return rr >= t->scale_rows || cc >= C;
}
static void ly_pad_7f(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    size_t r, k;
    for (size_t i = 0; i < n; i++)
        if (is_padding(t, i, &r, &k)) swz[i] = 0x7Fu;
}
/* A loader that clamps out-of-range indices (as a TMA box at the edge
 * does) instead of zero filling: padding repeats the nearest scale. */
static void ly_pad_clamped(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    size_t r, k;
    for (size_t i = 0; i < n; i++)
        if (is_padding(t, i, &r, &k)) {
            if (r >= t->scale_rows) r = t->scale_rows - 1;
            if (k >= t->scale_cols) k = t->scale_cols - 1;
            swz[i] = t->scale[r * t->scale_cols + k];
        }
}
static void ly_cols_unpadded(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    memset(swz, 0, n);
    size_t C = t->scale_cols, tiles_c = C / 4;
    for (size_t r = 0; r < t->scale_rows; r++)
        for (size_t k = 0; k < C; k++) {
            size_t off = ((r / 128) * tiles_c + k / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (k % 4);
            if (off < n) swz[off] = t->scale[r * C + k];
        }
}
static void ly_plain_tile(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    memset(swz, 0, n);
    size_t C = t->scale_cols, tiles_c = (C + 3) / 4;
    for (size_t r = 0; r < t->scale_rows; r++)
        for (size_t k = 0; k < C; k++) swz[((r / 128) * tiles_c + k / 4) * 512 + (r % 128) * 4 + k % 4] = t->scale[r * C + k];
}
static void ly_colwise_not_transposed(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)swz, (void)n;
    if (!c->colwise || c->r->elem != NVFP4_CORE_ELEM_E2M1) return;
    size_t R = t->prows, C = t->pcols;
    uint8_t *tmp = calloc(t->data_bytes ? t->data_bytes : 1, 1);
    if (!tmp) return;
    for (size_t i = 0; i < R; i++)
        for (size_t j = 0; j < C; j++) {
            size_t k = i * C + j, d = j * R + i;
            uint8_t q = (uint8_t)((t->data[k >> 1] >> (4 * (k & 1u))) & 0xFu);
            tmp[d >> 1] = (uint8_t)(tmp[d >> 1] | (q << (4 * (d & 1u))));
        }
    memcpy(t->data, tmp, t->data_bytes);
    free(tmp);
}

/* ---- RHT ---------------------------------------------------------------------------- */

static void op_no_rht(nvfp4_quant_opts *o) { o->rht = false; }
static void op_rht_fp32(nvfp4_quant_opts *o) { o->rht_fp32 = true; }
static void tr_no_signs(const nvfp4_mctx *c, float *b)
{
    uint32_t m[4];
    nvfp4_core_rht_mask_none(m);
    nvfp4_mutant_default_rht(c, b, m);
}
static void tr_signs_reversed(const nvfp4_mctx *c, float *b)
{
    uint32_t m[4] = {0, 0, 0, 0};
    for (unsigned i = 0; i < 16; i++)
        if (nvfp4_core_rht_sign_neg(c->p->rht_mask, i)) m[0] |= 1u << (15u - i);
    nvfp4_mutant_default_rht(c, b, m);
}
static void tr_other_axis(const nvfp4_mctx *c, float *b)
{
    size_t R = c->l->prows, C = c->l->pcols;
    float g[16];
    for (size_t j = 0; j < C; j++)
        for (size_t r0 = 0; r0 + 16 <= R; r0 += 16) {
            for (size_t k = 0; k < 16; k++) g[k] = b[(r0 + k) * C + j];
            nvfp4_core_rht_forward_group(g, g, 16u, c->p->rht_mask, !c->p->opts.rht_fp32);
            for (size_t k = 0; k < 16; k++) b[(r0 + k) * C + j] = g[k];
        }
}

/* ---- 2D ------------------------------------------------------------------------------- */

static void op_1x16(nvfp4_quant_opts *o) { o->block = NVFP4_BLOCK_1X16; }

/* ---- recipe-specific block scales ------------------------------------------------------ */

static uint8_t bs_torchao_product(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float d = c->r->elem_max * g->g, v = bamax / d;
    return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, c->r->scale_lo, NVFP4_E4M3_MAX), 1);
}
static uint8_t bs_torchao_no_lo(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float v = (bamax / c->r->elem_max) / g->g;
    return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, 0.0f, NVFP4_E4M3_MAX), 1);
}
static uint8_t bs_modelopt_zero_kept(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float d = c->r->elem_max * g->g, v = bamax / d;
    return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, c->r->scale_lo, NVFP4_E4M3_MAX), 1);
}
static uint8_t bs_modelopt_div_div(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float v = (bamax / c->r->elem_max) / g->g;
    if (v == 0.0f) v = 1.0f;
    return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, c->r->scale_lo, NVFP4_E4M3_MAX), 1);
}
static uint8_t bs_rceil_rz(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    float inv = 1.0f / c->r->elem_max;
    return nvfp4_core_ue8m0_cvt(bamax * inv, 0);
}
static uint8_t bs_floor_of_div6(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    if (nvfp4_core_isnan(bamax)) return 0xFFu;
    float inv = 1.0f / c->r->elem_max;
    return nvfp4_core_ue8m0_cvt(bamax * inv, 0);
}

/* ---- 4over6 selection (TE quantize_4over6_nvfp4.cuh) ------------------------------------ */

#define R_4OVER6 "te-4over6,te-4over6-fast,te-4over6-mse,te-4over6-mse-fast,te-4over6-448"

static uint8_t pick_of(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s4, uint8_t s6, int ties_to_4)
{
    float e4 = nvfp4_core_4over6_seg_error(c->r, g, s4, c->block_x), e6 = nvfp4_core_4over6_seg_error(c->r, g, s6, c->block_x);
    if (ties_to_4) return e4 <= e6 ? s4 : s6;
    return nvfp4_core_4over6_pick(e4, e6, s4, s6);
}
static uint8_t bs_4o6_ties_to_4(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    uint8_t s4, s6;
    nvfp4_core_4over6_scales(c->r, g, bamax, &s4, &s6);
    return pick_of(c, g, s4, s6, 1);
}
static uint8_t bs_4o6_always_6(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    uint8_t s4, s6;
    nvfp4_core_4over6_scales(c->r, g, bamax, &s4, &s6);
    return s6;
}
/* both candidates from te's bamax * (S_enc * fl(1/6)) instead of TE 4over6's (bamax / 6) * S_enc */
static uint8_t bs_4o6_te_order(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float base = te_scale_value(g, bamax), expanded = base * 1.5f;
    uint8_t s4 = nvfp4_core_e4m3_encode(nvfp4_core_fminf(expanded, NVFP4_E4M3_MAX), 1);
    uint8_t s6 = nvfp4_core_e4m3_encode(nvfp4_core_fminf(base, NVFP4_E4M3_MAX), 1);
    return pick_of(c, g, s4, s6, 0);
}
/* 16x16 tiles: each row picks its own candidate (the 1D selection on the tile's amax) */
static uint8_t bs_4o6_2d_per_row(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    return nvfp4_core_4over6_seg(c->r, g, bamax, c->block_x);
}
/* 16x16 tiles: the tile sums compared with <= (ties and equal sums to map-to-4) */
static uint8_t bs_4o6_2d_ties_to_4(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float e4[16], e6[16];
    uint8_t s4, s6;
    nvfp4_mutant_4over6_tile_errors(c, g, bamax, e4, e6, &s4, &s6);
    return nvfp4_core_4over6_tile_sum(e4) <= nvfp4_core_4over6_tile_sum(e6) ? s4 : s6;
}

/* te-4over6-448 computed with the bound 256 (te-4over6's global scale and error denominator) */
static const nvfp4_core_recipe *core_256(void) { return nvfp4_recipe_core(&nvfp4_recipe_te_4over6); }
static nvfp4_core_global gl_4o6_256(const nvfp4_mctx *c, float amax)
{
    (void)c;
    return nvfp4_core_global_from_amax(core_256(), amax);
}
static uint8_t bs_4o6_256(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    return nvfp4_core_4over6_seg(core_256(), g, bamax, c->block_x);
}

/* ---- te-rowscaled (TE row_scaled_nvfp4) ------------------------------------------------- */

#define R_PERTOKEN "te-rowscaled,flashinfer-pertoken"
#define R_UE5M3 "te-ue5m3,te-ue5m3-1level"

static float la_rs_tensor(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    (void)row, (void)bcol;
    return c->amax;
}
/* columnwise: stored row j (an original column) scaled by original row j's amax, the rowwise vector */
static float la_rs_rowwise_vector(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    (void)bcol;
    if (!c->colwise) return nvfp4_mutant_row_amax(c, row);
    size_t pc = c->l->pcols;
    if (row >= pc) return 0.0f; /* past the rowwise vector: its zero padding */
    float a = 0.0f;
    for (size_t i = 0; i < c->l->prows; i++) a = nvfp4_core_amax_step(a, c->b[i * pc + row], c->r->amax_nan_propagates);
    return a;
}
/* ---- per-token scales (te-rowscaled, flashinfer-pertoken) and UE5M3 block scales ------- */

/* rowwise: stored row i scaled by the amax of input column i, the reduction over dim 0 where the
 * per-token convention reduces over dim 1 (columnwise: the right axis, each original column) */
static float la_pt_column_amax(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    (void)bcol;
    if (c->colwise) return nvfp4_mutant_row_amax(c, row);
    size_t pc = c->l->pcols;
    if (row >= pc) return 0.0f; /* past the column vector: its zero padding */
    float a = 0.0f;
    for (size_t i = 0; i < c->l->prows; i++) a = nvfp4_core_amax_step(a, c->b[i * pc + row], c->r->amax_nan_propagates);
    return a;
}

/* The value TE's UE5M3 chain casts (te's product order; S_enc = 688128/amax or 1). */
static float ue5m3_scale_value(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)c;
    return te_scale_value(g, bamax);
}
/* the E4M3 cast where the template wanted __nv_fp8_ue5m3: values above 448 saturate to 0x7E */
static uint8_t bs_ue5m3_as_e4m3(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    return nvfp4_core_e4m3_encode(ue5m3_scale_value(c, g, bamax), 1);
}
/* the encode factor of a byte read as E4M3: 1 / (e4m3(s) * S_dec) */
static nvfp4_core_block prep_ue5m3_read_e4m3(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, nvfp4_core_fminf(1.0f / (nvfp4_core_e4m3_decode(s) * g->s_dec), NVFP4_CORE_FLT_MAX)};
    return b;
}
/* UE5M3 with the 3 mantissa bits truncated (round toward zero): the nearest code, one code down
 * when it lies above v (the grid is monotone in the code, subnormals included) */
static uint8_t bs_ue5m3_rz(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float v = ue5m3_scale_value(c, g, bamax);
    uint8_t s = nvfp4_core_ue5m3_encode(v, NVFP4_CORE_UE5M3_SATFINITE);
    if (s > 0 && s < NVFP4_UE5M3_NAN_CODE && nvfp4_core_ue5m3_decode(s) > v) s--;
    return s;
}
/* UE5M3 with ties away from zero (a hand codec adding half a unit, then truncating): the even
 * neighbour RN keeps on a tie becomes the upper one */
static uint8_t bs_ue5m3_ties_away(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float v = ue5m3_scale_value(c, g, bamax);
    uint8_t s = nvfp4_core_ue5m3_encode(v, NVFP4_CORE_UE5M3_SATFINITE);
    if (s >= 0xFEu) return s;
    double lo = nvfp4_core_ue5m3_decode(s), hi = nvfp4_core_ue5m3_decode((uint8_t)(s + 1));
    if (lo < v && 2.0 * (double)v == lo + hi) s++; /* exact in binary64: a tie */
    return s;
}
/* UE5M3 without subnormals (an FTZ cast or a codec with only the normal grid): results below the
 * smallest normal 2^-14 (codes 0x01..0x07) give 0x00 */
static uint8_t bs_ue5m3_subnormal_flush(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    uint8_t s = nvfp4_core_ue5m3_encode(ue5m3_scale_value(c, g, bamax), NVFP4_CORE_UE5M3_SATFINITE);
    return s < 0x08u ? 0x00u : s;
}
/* ml_dtypes' float8_e5m3fnu cast (numpy astype) for __nv_fp8_ue5m3's satfinite one: values above
 * 118784 and +Inf give 0xFF, the NaN byte */
static uint8_t bs_ue5m3_no_satfinite(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    return nvfp4_core_ue5m3_encode(ue5m3_scale_value(c, g, bamax), NVFP4_CORE_UE5M3_ML_DTYPES);
}

/* ---- te-pow2 (TE reference pow_2_scales) ------------------------------------------------ */

static uint8_t bs_pow2_floor(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    return nvfp4_core_ue8m0_cvt(bamax / c->r->elem_max, 0);
}
/* ceil(log2(v)) of an fp32 log2: the correctly rounded binary32 log2 (through binary64), which is
 * exactly k for v a few ulps above 2^k (k != 0) */
static uint8_t bs_pow2_log2_f32(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    float v = bamax / c->r->elem_max;
    if (!(v > 0.0f) || v > NVFP4_CORE_FLT_MAX) return nvfp4_core_block_scale(c->r, g, bamax); /* 0, NaN, Inf: as TE */
    int e = nvfp4_core_log2_f32_rounded(v, 1);
    if (e < -127) e = -127;
    if (e > 127) e = 127;
    return (uint8_t)(e + 127);
}

/* ---- ggml (llama.cpp GGML_TYPE_NVFP4) ------------------------------------------------- */

static uint8_t bs_ggml_e4m3_rn(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    return nvfp4_core_e4m3_encode(bamax / c->r->elem_max, 1);
}
static uint8_t el_ggml_last_min(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    (void)c, (void)rbits;
    uint8_t best = 0u;
    float best_err = nvfp4_core_fabs(0.0f - x);
    for (uint8_t k = 1u; k < 16u; k++) {
        float err = nvfp4_core_fabs(nvfp4_core_e2m1_decode(k) * b->factor - x);
        if (err <= best_err) best = k, best_err = err;
    }
    return best;
}
static uint8_t el_ggml_cvt_rn(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    (void)c, (void)rbits;
    return nvfp4_core_e2m1_encode(x / b->factor, NVFP4_CORE_RN, 0);
}

/* ---- torchao to_mx CEIL / EVEN ---------------------------------------------------------- */

static uint8_t bs_mx_rceil(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    if (nvfp4_core_isnan(bamax)) return 0xFFu;
    float inv = 1.0f / c->r->elem_max;
    return nvfp4_core_ue8m0_cvt(bamax * inv, 1);
}
static uint8_t bs_mx_floor(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    return nvfp4_core_ue8m0_floor_scale(bamax, c->r->emax_elem);
}
static uint8_t bs_mx_even_fp8_bits(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    return nvfp4_core_ue8m0_torchao_scale(bamax, c->r->emax_elem, 1, 3);
}


/* ---- MX (UE8M0) steps learned from third-party code -----------------------------------
 * The catalog entries name the repository, path, line and version. */

/* The element encode of a block whose scale byte is 0x00 with another divisor d0 (the
 * recipe's for every other byte): the byte means 2^-127, torchao's to_mx encodes with
 * 2^-126, TE <= 2.12 and torchao's RCEIL multiply by a reciprocal of 1. */
static nvfp4_core_block mx_byte0_divisor(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s, float d0)
{
    nvfp4_core_block b = nvfp4_core_block_prepare(c->r, g, s);
    if (s == 0x00u) b.factor = d0; /* POW2 encodes divide: x / 1 is x * 1 */
    return b;
}
static nvfp4_core_block prep_mx_rcp_byte0_one(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    return mx_byte0_divisor(c, g, s, 1.0f);
}
static nvfp4_core_block prep_mx_byte0_min_normal(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    return mx_byte0_divisor(c, g, s, 0x1p-126f);
}
static nvfp4_core_block prep_mx_byte0_exact(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    return mx_byte0_divisor(c, g, s, 0x1p-127f);
}
/* fbgemm MX4 "even": the rounding add one less than torchao's (2^21 - 1 for E2M1) */
static uint8_t bs_mx_even_add_less_one(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    return nvfp4_core_ue8m0_round_add_scale(bamax, c->r->emax_elem, (1u << 21) - 1u);
}
/* llama.cpp quantize_row_mxfp4_ref: floor(log2f(amax)) - 2 for the exponent bits of FLOOR.
 * Zero, NaN and Inf amaxes keep the recipe's byte, so that only the log2 rounding differs. */
static uint8_t bs_mx_floor_log2f(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    if (!(bamax > 0.0f) || bamax > NVFP4_CORE_FLT_MAX) return nvfp4_mutant_default_scale(c, g, bamax);
    return nvfp4_core_ue8m0_torchao_biased(nvfp4_core_log2_f32_rounded(bamax, 0) + 127, c->r->emax_elem);
}
/* torchao _to_mx_rceil without the PTX: clamp(ceil(torch.log2(amax / max_pos)), -127, 127) + 127,
 * NaN -> 0xFF, Inf -> 0xFE (a zero amax: log2 = -Inf, clamped to byte 0) */
static uint8_t bs_mx_rceil_log2f(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    (void)g;
    float d = bamax / c->r->elem_max;
    if (nvfp4_core_isnan(d)) return 0xFFu;
    if (d > NVFP4_CORE_FLT_MAX) return 0xFEu;
    int e = d > 0.0f ? nvfp4_core_log2_f32_rounded(d, 1) : -127;
    if (e < -127) e = -127;
    if (e > 127) e = 127;
    return (uint8_t)(e + 127);
}

/* ---- learned from third-party quantizers ------------------------------------------------
 * Each hook below is one step of a real implementation that differs from te
 * (the catalog entry names the repository, path, line and version). */

/* te's special cases around a global encode scale computed in another order. */
static nvfp4_core_global te_global_with(float amax, float s_enc)
{
    nvfp4_core_global g;
    g.amax = amax;
    g.g = 1.0f;
    g.s_enc = nvfp4_core_fminf(s_enc, NVFP4_CORE_FLT_MAX);
    if (amax == 0.0f || g.s_enc == 0.0f) g.s_enc = 1.0f;
    g.s_dec = 1.0f / g.s_enc;
    return g;
}
/* torch's `2688.0 / amax` on a tensor: Tensor.__rtruediv__ is reciprocal() * 2688 */
static nvfp4_core_global gl_torch_rdiv(const nvfp4_mctx *c, float amax)
{
    (void)c;
    float r = 1.0f / amax;
    return te_global_with(amax, r * NVFP4_CORE_2688);
}
/* torchao's per_tensor_scale = amax / 2688 (a true division on the CPU), then reciprocal() */
static nvfp4_core_global gl_recip_of_div(const nvfp4_mctx *c, float amax)
{
    (void)c;
    float t = amax / NVFP4_CORE_2688;
    return te_global_with(amax, 1.0f / t);
}
/* the same on CUDA, where torch divides by a CPU scalar as a multiply by its reciprocal */
static nvfp4_core_global gl_recip_of_mul(const nvfp4_mctx *c, float amax)
{
    (void)c;
    float t = amax * NVFP4_CORE_INV2688;
    return te_global_with(amax, 1.0f / t);
}
/* compressed-tensors generate_gparam: nan_to_num(2688 / amax, nan=1, posinf=1), no FLT_MAX clamp */
static nvfp4_core_global gl_nonfinite_to_1(const nvfp4_mctx *c, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(c->r, amax);
    float s = NVFP4_CORE_2688 / amax;
    if (!isfinite(s)) s = 1.0f;
    if (s == 0.0f) s = 1.0f; /* amax = Inf: te's rule, kept so that one step differs */
    g.s_enc = s;
    g.s_dec = 1.0f / s;
    return g;
}
/* 2688/amax kept as it is: +Inf for amax 0 or an amax so small that the quotient overflows (below about
 * 7.9e-36), 0 for amax +Inf, NaN for NaN; te clamps to FLT_MAX and replaces 0 by 1 */
static nvfp4_core_global gl_unguarded(const nvfp4_mctx *c, float amax)
{
    (void)c;
    nvfp4_core_global g;
    g.amax = amax;
    g.g = 1.0f;
    g.s_enc = NVFP4_CORE_2688 / amax;
    g.s_dec = 1.0f / g.s_enc;
    return g;
}
/* y = x / (s / S_enc): the divisor s / S_enc, correctly rounded (s = 0: x / 0) */
static nvfp4_core_block prep_s_over_senc(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, nvfp4_core_e4m3_decode(s) / g->s_enc};
    return b;
}
/* y = x * (S_enc / s) without the FLT_MAX clamp: Inf when s = 0, so 0 * Inf = NaN */
static nvfp4_core_block prep_senc_over_s_unclamped(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s)
{
    (void)c;
    nvfp4_core_block b = {s, g->s_enc / nvfp4_core_e4m3_decode(s)};
    return b;
}
/* compressed-tensors calculate_qparams: scales == 0 replaced by the E4M3 eps 0.125 (byte 0x20) */
static uint8_t bs_zero_to_eighth(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    uint8_t s = nvfp4_mutant_default_scale(c, g, bamax);
    return (s & 0x7Fu) == 0 ? 0x20u : s;
}
/* a midpoint goes to the smaller magnitude: the RZ cast where y is an exact tie */
static uint8_t el_ties_toward_zero(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    float y = scaled(c, b, x);
    if (!nvfp4_core_isnan(y) && nvfp4_trace_e2m1_is_tie(y)) return nvfp4_core_e2m1_cast(c->r, y, NVFP4_CORE_RZ, 0);
    return nvfp4_mutant_default_elem(c, b, x, rbits);
}
/* the sign from y < 0 before rounding, the packer's sign from the rounded value's
 * sign bit: an exact -0 input gives 0x0, a negative value that rounds to zero 0x8 */
static uint8_t sp_negzero_input_dropped(const nvfp4_mctx *c, float x, float y, uint8_t q)
{
    (void)c, (void)x;
    return q == 0x8u && y == 0.0f ? 0x0u : q;
}
/* the swizzled offset of scale (r, k) taken from the flat index r * C + k
 * decoded with the padded column count as the row stride */
static void ly_swizzle_padded_stride(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    memset(swz, 0, n);
    size_t C = t->scale_cols, R, Cp;
    (void)nvfp4_core_swizzle_padded_shape(t->scale_rows, C, &R, &Cp);
    for (size_t r = 0; r < t->scale_rows; r++)
        for (size_t k = 0; k < C; k++) {
            size_t f = r * C + k, rr = f / Cp, kk = f % Cp; /* the mutant: Cp as the stride */
            size_t off = nvfp4_core_swizzle_offset(rr, kk, C);
            if (off < n) swz[off] = t->scale[r * C + k];
        }
}

/* ---- the scale conventions of FlashInfer's kernels (docs/semantics.md, "Scale layouts") ------ */

/* FlashInfer's fp4_quantize(..., is_global_scale_inversed) with the global scale of the other
 * convention: the kernel inverts what it is handed (quantization.cuh USE_INVERSE_SCALE: __fdiv_rn(1,
 * SFScale); the batch-invariant class 1.0 / global_scale), so it works with fl(1/S_enc) where S_enc
 * was meant; both directions of the mix-up give the same bytes. Dequantizing, it divides by its S_enc. */
static nvfp4_core_global gl_passed_inverted(const nvfp4_mctx *c, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(c->r, amax);
    g.s_enc = 1.0f / g.s_enc;
    g.s_dec = 1.0f / g.s_enc;
    return g;
}

/* The other is_global_scale_inversed convention than the golden's: the scale handed over inverted
 * and inverted back (fl(1/fl(1/S_enc))) where it was handed over as it is, or the reverse. */
static nvfp4_core_global gl_convention_swapped(const nvfp4_mctx *c, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(c->r, amax);
    return c->p && c->p->opts.global_scale_inverted ? g : nvfp4_core_global_handed_inverted(g);
}

/* The V scales of the NVFP4 KV cache written without their 4-token interleave, row-major like K's,
 * into the buffer of the trtllm-kv-v layout (its padding, if any, left 0). */
static void ly_kv_v_as_k(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t n)
{
    (void)c;
    size_t m = t->scale_rows * t->scale_cols;
    memset(swz, 0, n);
    memcpy(swz, t->scale, m < n ? m : n);
}

/* ---- the catalog ----------------------------------------------------------------------- */

#define M(name, step, formula, source, recipes, needs) {name, step, formula, source, recipes, needs}

const nvfp4_mutant nvfp4_mutant_catalog[] = {
    /* encode factor */
    {.info = M("encode-division", "encode factor", "y = x / (s * S_dec)",
               "a division where TE multiplies by the reciprocal (core_nvfp4.cuh compute_scale_inv); differs near "
               "E2M1 boundaries",
               R_TE_MSLK, 0),
     .prepare = prep_divisor, .scaled = y_divide},
    {.info = M("encode-senc-over-s", "encode factor", "y = x * (S_enc / s)",
               "the algebraically equal S_enc/s for 1/(s*S_dec): two different roundings (a numpy kernel written from the formulas)",
               R_TE, 0),
     .prepare = prep_senc_over_s},
    {.info = M("encode-approx-recip", "encode factor", "y = x * rcp.approx(s * S_dec)",
               "__frcp_rn replaced by rcp.approx.ftz.f32 / fast-math __fdividef (1 ulp); modelled as the reciprocal "
               "rounded toward zero",
               R_TE_MSLK, 0),
     .prepare = prep_approx_recip},
    {.info = M("encode-bf16-factor", "encode factor", "y = x * bf16(1 / (s * S_dec))",
               "the encode factor kept in a bf16 register (kernels that carry scales in the input dtype)", R_TE_MSLK, 0),
     .prepare = prep_bf16_factor},
    {.info = M("encode-no-flt-max-clamp", "encode factor", "y = x * (1 / (s * S_dec)), Inf when s = 0",
               "the fminf(..., FLT_MAX) of TE's compute_scale_inv dropped: 0 * Inf = NaN in underflowing blocks",
               R_TE_MSLK, 0),
     .prepare = prep_no_clamp},
    {.info = M("encode-sdec-from-amax", "encode factor", "y = x / (s * (amax * fl(1/2688)))",
               "the dequantization's S_dec = amax/2688 (dequantize_nvfp4.cuh) reused for the encode, not 1/S_enc",
               R_TE_MSLK, 0),
     .prepare = prep_sdec_from_amax},
    /* block scale */
    {.info = M("scale-div6-then-senc", "block scale", "s = e4m3((block_amax / 6) * S_enc)",
               "TE's Python reference order (two roundings) instead of block_amax * (S_enc * fl(1/6))", R_TE, 0),
     .bscale = bs_div6_then_senc},
    {.info = M("scale-inv6-then-senc", "block scale", "s = e4m3((block_amax * fl(1/6)) * S_enc)",
               "amax/6 first, as a multiply: the same constants associated the other way", R_TE, 0),
     .bscale = bs_inv6_then_senc},
    {.info = M("scale-rz", "block scale", "s = e4m3_rz(block_amax * S_enc / 6)",
               "cvt.rz instead of cvt.rn.satfinite.e4m3x2 (or a truncating software cast)", R_TE, 0),
     .bscale = bs_rz},
    {.info = M("scale-ru", "block scale", "s = e4m3_ru(block_amax * S_enc / 6)",
               "rounding the scale up so that no element saturates (an MX-style ceiling applied to E4M3)", R_TE, 0),
     .bscale = bs_ru},
    {.info = M("scale-no-satfinite", "block scale", "s = e4m3(v) without satfinite: NaN (0x7F) beyond 464",
               "cvt.rn.e4m3x2 without .satfinite; shows when S_enc is clamped (amax Inf or subnormal)", R_TE, 0),
     .bscale = bs_no_satfinite},
    {.info = M("scale-subnormal-flush", "block scale", "s = e4m3(v), subnormal results flushed to 0",
               "an FTZ cast or a hand-written E4M3 encoder without subnormals", R_TE, 0),
     .bscale = bs_flush_subnormal},
    {.info = M("scale-via-fp16", "block scale", "s = e4m3(fp16(block_amax * S_enc / 6))",
               "the scale computed in __half arithmetic, then cast to E4M3: a double rounding", R_TE, 0),
     .bscale = bs_via_fp16},
    /* global scale and amax */
    {.info = M("global-inverted", "global scale", "S_enc = amax/2688 (te); g = 2688/amax (torchao, modelopt)",
               "the compressed-tensors convention (global scale 6*448/amax) swapped with amax/(6*448)", R_NVFP4, 0),
     .global = gl_inverted},
    {.info = M("amax-per-row", "global amax", "amax = max |x| over the stored row",
               "a row-local reduction where the tensor's was meant (one CTA per row, no grid reduction)", R_NVFP4, 0),
     .local_amax = la_per_row, .local_amax_per_row = true},
    {.info = M("amax-per-block", "global amax", "amax = the block's own amax",
               "the per-tensor scale computed per block: every scale becomes 448", R_NVFP4, 0),
     .local_amax = la_per_block},
    {.info = M("amax-per-128-rows", "global amax", "amax = max |x| over the 128-row tile",
               "a CTA-local amax (one 128-row tile per CTA) without the cross-CTA reduction", R_NVFP4, 0),
     .local_amax = la_per_128_rows, .local_amax_per_row = true},
    {.info = M("amax-nan-propagates", "global amax", "amax = torch.amax(|x|): NaN when any element is NaN",
               "torch.amax semantics in a kernel that should ignore NaN as fmaxf does (TE)", "te,te-pyref", 0),
     .tensor_amax = ta_nan_propagates},
    {.info = M("amax-nan-ignored", "global amax", "amax = fmaxf reduction: NaN elements ignored",
               "fmaxf in a kernel that should follow torch.amax (torchao, modelopt: NaN propagates)",
               "torchao,torchao-0.13-0.16,modelopt", 0),
     .tensor_amax = ta_nan_ignored},
    {.info = M("amax-pre-rht", "global amax", "columnwise amax = max |x| before the RHT",
               "the rowwise amax reused for the RHT'd columnwise output (TE computes it after the transform)", R_TE,
               NVFP4_MUTANT_NEEDS_RHT),
     .tensor_amax = ta_pre_rht},
    {.info = M("amax-signed", "global amax", "amax = max x (no absolute value)",
               "a max reduction that forgot fabsf: negative outliers are missed", R_NVFP4, 0),
     .tensor_amax = ta_signed},
    /* block amax */
    {.info = M("block-amax-signed", "block amax", "block_amax = max x over the block (no absolute value)",
               "a block max that forgot fabsf", R_E2M1, 0),
     .block_amax = ba_signed},
    {.info = M("block-amax-nan-propagates", "block amax", "block_amax = NaN when the block holds a NaN",
               "torch.amax semantics in a kernel whose recipe ignores NaN (fmaxf)", "te,te-pyref,mxfp4-rceil", 0),
     .block_amax = ba_nan_propagates},
    {.info = M("block-amax-nan-ignored", "block amax", "block_amax = fmaxf over the block: NaN ignored",
               "fmaxf in a kernel whose recipe follows torch.amax (NaN propagates; with a global amax the NaN "
               "reaches every scale anyway, so only MX shows it)",
               "mxfp4-floor", 0),
     .block_amax = ba_nan_ignored},
    /* element rounding */
    {.info = M("elem-ties-away", "element cast", "E2M1 ties rounded away from zero",
               "round-half-away (C round(), a >= instead of > at the midpoint) instead of cvt.rn's ties-to-even", R_E2M1,
               NVFP4_MUTANT_NEEDS_RN),
     .elem = el_ties_away},
    {.info = M("elem-rz", "element cast", "E2M1 rounded toward zero",
               "truncation (a bucket search with < at both ends) instead of round to nearest", R_E2M1,
               NVFP4_MUTANT_NEEDS_RN),
     .elem = el_rz},
    {.info = M("elem-ru", "element cast", "E2M1 rounded toward +Inf",
               "ceil-style rounding (an off-by-one bucket index for positive values)", R_E2M1, NVFP4_MUTANT_NEEDS_RN),
     .elem = el_ru},
    {.info = M("elem-negzero-dropped", "element cast", "-0 results written as +0 (0x8 -> 0x0)",
               "the sign taken from y < 0 (TE's Python reference, modelopt) in a kernel that keeps it (cuda_fp4.hpp)",
               "te,torchao,torchao-0.13-0.16,mxfp4-floor,mxfp4-rceil", 0),
     .special = sp_negzero_dropped},
    {.info = M("elem-nan-zero", "element cast", "NaN elements written as 0x0",
               "NaN mapped to 0 (TE's Python reference) where cvt.rn.satfinite gives 0x7", "te,mxfp4-rceil,modelopt", 0),
     .special = sp_nan_zero},
    {.info = M("elem-nan-0x7", "element cast", "NaN elements written as 0x7 (+6)",
               "cvt.rn.satfinite's NaN code in a kernel that follows torchao (NaN -> 0x3)",
               "torchao,torchao-0.13-0.16,mxfp4-floor", 0),
     .special = sp_nan_0x7},
    {.info = M("elem-nan-signed", "element cast", "a NaN keeps its sign bit: -NaN -> 0xF",
               "a software cast that copies the sign bit before testing for NaN", "te,mxfp4-rceil,modelopt", 0),
     .special = sp_nan_signed},
    {.info = M("elem-sat-to-zero", "element cast", "|y| > 6 (or Inf) written as 0",
               "a bucket search over the 8 magnitudes that finds no bucket above 6 (no satfinite)", R_E2M1, 0),
     .special = sp_sat_to_zero},
    /* stochastic rounding */
    {.info = M("sr-byte-order", "SR bits", "element 4w+k uses byte 3-k of word w",
               "the 32-bit Philox words read from the high byte down (big-endian extraction)", R_E2M1,
               NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_byte_order},
    {.info = M("sr-counter-per-row", "SR bits", "Philox counter = row (all blocks of a row share bytes)",
               "the block index missing from the counter: one curand state per row", R_E2M1, NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_counter_per_row},
    {.info = M("sr-reused-word", "SR bits", "element 4w+k uses byte k of word 0",
               "one curand() word shared by the 16 elements (curand4 result not unpacked)", R_E2M1,
               NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_reused_word},
    {.info = M("sr-fewer-bits", "SR bits", "only the top 4 of the 8 random bits used",
               "a 4-bit random field (the probability quantized to 1/16)", R_E2M1, NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_fewer_bits},
    {.info = M("sr-rn", "SR bits", "round to nearest instead of stochastic rounding",
               "the SR flag not plumbed through to the cast (cvt.rn instead of cvt.rs)", R_E2M1,
               NVFP4_MUTANT_NEEDS_SR),
     .opts = op_rn},
    {.info = M("sr-colwise-same-offset", "SR bits", "columnwise output uses the rowwise Philox offset",
               "the +1 offset of the columnwise stream forgotten: both outputs draw the same numbers", R_E2M1,
               NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_colwise_same_offset},
    {.info = M("sr-counter-swapped", "SR bits", "Philox counter {block, offset} instead of {offset, block}",
               "curand_init(seed, subsequence, offset) arguments swapped", R_E2M1, NVFP4_MUTANT_NEEDS_SR),
     .rbytes = rb_counter_swapped},
    /* layouts */
    {.info = M("layout-nibble-swap", "layout", "element 2j in the high nibble of byte j",
               "the packing order of cvt.rn.satfinite.e2m1x2 (first operand in the high nibble) taken the wrong way",
               R_E2M1, 0),
     .layout = ly_nibble_swap},
    {.info = M("layout-scale-transposed", "layout", "scale matrix written column-major",
               "the scale index computed as col * rows + row", R_E2M1, 0),
     .layout = ly_scale_transposed},
    {.info = M("layout-swizzle-pad-7f", "layout", "swizzle padding bytes 0x7F",
               "padding filled with 1.0 in UE8M0 (0x7F), or an uninitialised buffer, instead of zeros", R_E2M1, NVFP4_MUTANT_NEEDS_128X4),
     .layout = ly_pad_7f},
    {.info = M("layout-swizzle-pad-clamped", "layout", "swizzle padding repeats the nearest scale",
               "an edge loader that clamps out-of-range indices (TMA-style) instead of writing zeros", R_E2M1, NVFP4_MUTANT_NEEDS_128X4),
     .layout = ly_pad_clamped},
    {.info = M("layout-swizzle-cols-unpadded", "layout", "tiles per row of tiles = scale_cols / 4 (rounded down)",
               "the swizzle's column count not padded to 4 (K not a multiple of 64 elements): tiles overlap",
               R_E2M1, NVFP4_MUTANT_NEEDS_128X4),
     .layout = ly_cols_unpadded},
    {.info = M("layout-swizzle-plain-tile", "layout", "inside a 128x4 tile: row * 4 + col",
               "the 32x4x4 interleave of the cuBLAS layout skipped inside each tile", R_E2M1, NVFP4_MUTANT_NEEDS_128X4),
     .layout = ly_plain_tile},
    {.info = M("layout-colwise-not-transposed", "layout", "columnwise codes stored in the input's orientation",
               "the columnwise blocks quantized along the columns but written untransposed", R_E2M1, 0),
     .layout = ly_colwise_not_transposed},
    /* RHT */
    {.info = M("rht-missing", "RHT", "columnwise output quantized without the RHT", "the transform skipped",
               R_TE, NVFP4_MUTANT_NEEDS_RHT),
     .opts = op_no_rht},
    {.info = M("rht-no-signs", "RHT", "plain H/4, no random signs",
               "the sign vector dropped (all +1)", R_TE, NVFP4_MUTANT_NEEDS_RHT),
     .transform = tr_no_signs},
    {.info = M("rht-signs-bit-reversed", "RHT", "sign of input i from bit 15-i of the mask",
               "the 16-bit sign mask read MSB first", R_TE, NVFP4_MUTANT_NEEDS_RHT),
     .transform = tr_signs_reversed},
    {.info = M("rht-fp32", "RHT", "the RHT output kept in fp32 (not rounded to bf16)",
               "TE's kernels cast the transform to bf16 (cvt.rn.bf16x2.f32) before quantizing", R_TE,
               NVFP4_MUTANT_NEEDS_RHT),
     .opts = op_rht_fp32},
    {.info = M("rht-other-axis", "RHT", "RHT over 16 stored rows of each column (the other axis)",
               "the transform applied along the wrong dimension of the transposed tensor", R_TE,
               NVFP4_MUTANT_NEEDS_RHT),
     .transform = tr_other_axis},
    /* 2D */
    {.info = M("2d-1x16-scales", "2D scaling", "1x16 block scales where 16x16 tiles were asked",
               "the weight's 2D recipe flag ignored", R_NVFP4, NVFP4_MUTANT_NEEDS_2D),
     .opts = op_1x16},
    {.info = M("2d-tile-amax-first-row", "2D scaling", "tile amax = amax of the tile's first row",
               "a 16x16 tile reduction that covers one row (missing the cross-row shuffle)", R_NVFP4,
               NVFP4_MUTANT_NEEDS_2D),
     .block_amax = ba_tile_first_row},
    /* recipe-specific */
    {.info = M("torchao-scale-product", "block scale", "s = e4m3(clamp(block_amax / (6 * g)))",
               "modelopt's order in a torchao kernel (torchao divides twice: (block_amax/6)/g)", R_TORCHAO, 0),
     .bscale = bs_torchao_product},
    {.info = M("torchao-no-scale-floor", "block scale", "s = e4m3(min((block_amax/6)/g, 448)), no lower clamp",
               "torchao's clamp(min=E4M3_EPS) dropped: zero blocks get scale 0 and 0 * Inf = NaN codes", R_TORCHAO, 0),
     .bscale = bs_torchao_no_lo},
    {.info = M("modelopt-zero-scale-kept", "block scale", "s = e4m3(block_amax / (6 g)), 0 kept for zero blocks",
               "modelopt's per_block_scale[per_block_scale == 0] = 1.0 missing", "modelopt", 0),
     .bscale = bs_modelopt_zero_kept},
    {.info = M("modelopt-scale-div-div", "block scale", "s = e4m3((block_amax / 6) / g)",
               "torchao's order in a modelopt kernel (modelopt divides once by 6*g)", "modelopt", 0),
     .bscale = bs_modelopt_div_div},
    {.info = M("mxfp4-rceil-scale-rz", "block scale", "s = cvt.rz.ue8m0(block_amax * fl(1/6))",
               "cvt.rz instead of cvt.rp for the UE8M0 scale (NVIDIA's RCEIL rounds up)", "mxfp4-rceil", 0),
     .bscale = bs_rceil_rz},
    {.info = M("mxfp4-floor-of-div6", "block scale", "s = floor(log2(block_amax * fl(1/6))) + 127",
               "the RCEIL formula with truncation instead of OCP FLOOR's exponent(block_amax) - 2", "mxfp4-floor", 0),
     .bscale = bs_floor_of_div6},
    /* 4over6 selection */
    {.info = M("4over6-ties-to-4", "block scale", "map-to-4 kept when its error equals map-to-6's (err4 <= err6)",
               "TE keeps map-to-6 on ties and NaN errors (pick_map4 = err_map4 < err_map6)", R_4OVER6,
               NVFP4_MUTANT_NEEDS_1D),
     .bscale = bs_4o6_ties_to_4},
    {.info = M("4over6-always-6", "block scale", "the map-to-6 candidate only (no per-block choice)",
               "the 4over6 selection skipped: plain NVFP4 scaling with the 4over6 global scale", R_4OVER6,
               NVFP4_MUTANT_NEEDS_1D),
     .bscale = bs_4o6_always_6},
    {.info = M("4over6-te-scale-order", "block scale", "candidates from block_amax * (S_enc * fl(1/6)) (te's order)",
               "the te chain's product reused; TE's 4over6 kernel computes (block_amax / 6) * S_enc", R_4OVER6,
               NVFP4_MUTANT_NEEDS_1D),
     .bscale = bs_4o6_te_order},
    {.info = M("4over6-2d-per-row", "block scale", "16x16 tiles: each row keeps its own lower-error candidate",
               "the 1D selection reused on 2D weights; TE sums the 16 row errors of the tile (reduce_group_sum_16) and "
               "the whole tile takes one byte",
               R_4OVER6, NVFP4_MUTANT_NEEDS_2D),
     .bscale = bs_4o6_2d_per_row},
    {.info = M("4over6-2d-ties-to-4", "block scale", "16x16 tiles: map-to-4 kept when the tile sums are equal",
               "TE's pick_map4 = err_map4 < err_map6 on the tile sums: ties keep map-to-6", R_4OVER6,
               NVFP4_MUTANT_NEEDS_2D),
     .bscale = bs_4o6_2d_ties_to_4},
    {.info = M("4over6-448-bound-256", "global scale", "S_enc = 1536/amax and errors over 1536 (the bound 256)",
               "NVTE_NVFP4_4OVER6_E4M3_USE_256 left at its default 'all' where 'none' (the bound 448) was asked",
               "te-4over6-448", NVFP4_MUTANT_NEEDS_1D),
     .global = gl_4o6_256, .bscale = bs_4o6_256},
    /* te-rowscaled */
    {.info = M("rowscaled-tensor-amax", "global amax", "S_enc of every row from the tensor amax",
               "the row_scaled_nvfp4 flag not reaching the kernel: TE's per-tensor amax path (one amax for all rows)",
               R_PERTOKEN, 0),
     .local_amax = la_rs_tensor, .local_amax_per_row = true},
    {.info = M("rowscaled-colwise-row-amax", "global amax", "columnwise row j scaled by the amax of input row j",
               "the rowwise amax vector reused for the transpose; TE takes each original column's amax (amax_colwise)",
               R_PERTOKEN, 0),
     .local_amax = la_rs_rowwise_vector, .local_amax_per_row = true},
    /* per-token scales (te-rowscaled, flashinfer-pertoken) and UE5M3 block scales (te-ue5m3, -1level) */
    {.info = M("pertoken-column-amax", "global amax", "rowwise row i scaled by the amax of input column i",
               "the per-token amax reduced over the wrong axis (amax(dim=0) where TE's row_scaled_nvfp4 and "
               "FlashInfer's per_token_activation reduce each row, dim=1)",
               R_PERTOKEN, 0),
     .local_amax = la_pt_column_amax, .local_amax_per_row = true},
    {.info = M("ue5m3-scale-as-e4m3", "block scale", "s = e4m3_rn_sat(block_amax * (S_enc * fl(1/6))) with the UE5M3 chain's S_enc; y = x / (e4m3(s) * S_dec)",
               "the block-scale cast instantiated with __nv_fp8_e4m3 while the global scale and the reader use "
               "UE5M3 (TE's core_nvfp4.cuh is templated on ScaleType): scales above 448 saturate to 0x7E, "
               "the byte written as E4M3 and read as UE5M3",
               R_UE5M3, 0),
     .bscale = bs_ue5m3_as_e4m3, .prepare = prep_ue5m3_read_e4m3},
    {.info = M("ue5m3-scale-read-e4m3", "encode factor", "y = x * 1/(e4m3(s) * S_dec) of the UE5M3 byte s",
               "the right UE5M3 byte decoded as E4M3 for the encode factor: a float8_e4m3fn view of the scale "
               "tensor, the dtype of every other NVFP4 recipe's scales (the mechanism; no public report)",
               R_UE5M3, 0),
     .prepare = prep_ue5m3_read_e4m3},
    {.info = M("ue5m3-scale-rz", "block scale", "s = ue5m3 with the mantissa truncated (toward zero)",
               "a hand-written UE5M3 cast that keeps the top 3 mantissa bits; __nv_fp8_ue5m3(float) rounds to "
               "nearest even (CUDA 13.4 Math API)",
               R_UE5M3, 0),
     .bscale = bs_ue5m3_rz},
    {.info = M("ue5m3-scale-ties-away", "block scale", "s = ue5m3 rounded to nearest, ties away from zero",
               "a hand-written UE5M3 cast adding half a unit of the last place before truncating; "
               "__nv_fp8_ue5m3(float) breaks ties to even",
               R_UE5M3, 0),
     .bscale = bs_ue5m3_ties_away},
    {.info = M("ue5m3-scale-no-satfinite", "block scale", "s = ue5m3 without saturation: > 118784 and Inf give 0xFF (NaN)",
               "a CPU emulation casting with numpy astype(ml_dtypes.float8_e5m3fnu) (ml_dtypes 0.7.0), which does "
               "not saturate, where TE's __nv_fp8_ue5m3(float) is satfinite (> 114688 gives 0xFE)",
               R_UE5M3, 0),
     .bscale = bs_ue5m3_no_satfinite},
    {.info = M("ue5m3-scale-subnormal-flush", "block scale", "s = ue5m3(v), subnormal results (below 2^-14) flushed to 0",
               "an FTZ cast or a hand-written UE5M3 encoder without subnormals (codes 0x01-0x07, 2^-17 to 7 * "
               "2^-17): with te-ue5m3's S_enc, blocks below about 2^-31 of the tensor amax get a zero scale",
               R_UE5M3, 0),
     .bscale = bs_ue5m3_subnormal_flush},
    /* te-pow2 */
    {.info = M("pow2-floor", "block scale", "e = floor(log2(block_amax / 6))",
               "OCP MX FLOOR's rounding where TE's pow_2_scales takes ceil: the block max saturates to 6", "te-pow2", 0),
     .bscale = bs_pow2_floor},
    {.info = M("pow2-log2-fp32", "block scale", "e = ceil(fl32(log2(block_amax / 6)))",
               "TE's Python reference (torch.log2 in fp32): a quotient a few ulps above 2^k gives k, not k + 1",
               "te-pow2", 0),
     .bscale = bs_pow2_log2_f32},
    /* ggml */
    {.info = M("ggml-scale-e4m3-rn", "block scale", "s = e4m3_rn_sat(block_amax / 6)",
               "the E4M3 cvt.rn.satfinite of a CUDA port instead of ggml_fp32_to_ue4m3 (half up on the truncated bits, "
               "v >= 256 -> 448)",
               "ggml", 0),
     .bscale = bs_ggml_e4m3_rn},
    {.info = M("ggml-ties-last", "element cast", "the last code of least error (<= in the search)",
               "best_index_mxfp4 keeps the first minimum (<): with <= ties go to the larger magnitude and 0 to -0 (0x8)",
               "ggml", 0),
     .elem = el_ggml_last_min},
    {.info = M("ggml-codes-cvt-rn", "element cast", "q = cvt.rn.satfinite.e2m1(x / s)",
               "a GPU port casting x / s with the hardware cvt (ties to even, NaN -> 0x7, -0 -> 0x8) instead of ggml's "
               "nearest-value search",
               "ggml", 0),
     .elem = el_ggml_cvt_rn},
    /* torchao to_mx CEIL and EVEN */
    {.info = M("mxfp4-ceil-as-rceil", "block scale", "s = cvt.rp.ue8m0(block_amax * fl(1/6))",
               "NVIDIA's RCEIL (ceiling of amax/6) where torchao's CEIL (ceiling of amax's exponent, minus 2) is asked",
               "mxfp4-ceil", 0),
     .bscale = bs_mx_rceil},
    {.info = M("mxfp4-ceil-no-fraction-test", "block scale", "s = exponent(block_amax) - 2 (the + (fraction != 0) dropped)",
               "torchao's CEIL written as FLOOR: amaxes that are not powers of two get half the scale", "mxfp4-ceil", 0),
     .bscale = bs_mx_floor},
    {.info = M("mxfp4-even-no-round", "block scale", "s = exponent(block_amax) - 2 (no 2^21 added before the shift)",
               "torchao's EVEN without its rounding add, i.e. FLOOR", "mxfp4-even", 0),
     .bscale = bs_mx_floor},
    {.info = M("mxfp4-even-fp8-bits", "block scale", "s = exponent(bits(block_amax) + 2^19) - 2",
               "the rounding add of MXFP8 (1 << (23 - 3 - 1)) reused for FP4, whose mantissa has 1 bit (1 << 21)",
               "mxfp4-even", 0),
     .bscale = bs_mx_even_fp8_bits},
    /* MX (UE8M0) steps learned from third-party code */
    {.info = M("mx-rcp-byte0-one", "encode factor", "y = x * rcp(s), rcp(0x00) = 1 instead of 2^127",
               "TransformerEngine v2.12 (5671fd36) transformer_engine/common/util/ptx.cuh:330-333 exp2f_rcp "
               "(biased_exp == 0 ? 1 : ...), used by cast/mxfp8/quantize_mxfp8.cuh:281, fixed in v2.13 (71971e33, "
               "PR #2647); torchao v0.18.0 (5f2baf9d) prototype/mx_formats/mx_tensor.py:197-199 _to_mx_rceil "
               "(rcp 1.0 where exponent == 0): blocks with amax <= max_elem * 2^-127 are not scaled up",
               "mxfp4-rceil,mxfp8", 0),
     .prepare = prep_mx_rcp_byte0_one},
    {.info = M("mx-byte0-encode-min-normal", "encode factor", "y = x / 2^-126 where s = 0x00 (2^-127)",
               "torchao v0.18.0 (5f2baf9d) prototype/mx_formats/mx_tensor.py:359 to_mx: "
               "torch.clamp(scale_fp32, min=F32_MIN_NORMAL) (2^-127 flushed to 0 under Triton): byte-0 blocks "
               "encoded with twice their scale",
               "mxfp4-rceil,mxfp8", 0),
     .prepare = prep_mx_byte0_min_normal},
    {.info = M("mx-byte0-encode-exact", "encode factor", "y = x / 2^-127 where s = 0x00 (torchao: 2^-126)",
               "the byte's own value where torchao's to_mx clamps the encode divisor to 2^-126: llama.cpp "
               "(01243c58) ggml/src/ggml-impl.h ggml_e8m0_to_fp32 / _half (x == 0: 2^-127, 2^-128 with the doubled "
               "kvalues) used by ggml/src/ggml-quants.c:371 quantize_row_mxfp4_ref; fbgemm (71d6f8b2) "
               "fbgemm_gpu/triton/quantize.py:235 (2.0**-127)",
               "mxfp4-floor,mxfp4-ceil,mxfp4-even,mxfp8-floor", 0),
     .prepare = prep_mx_byte0_exact},
    {.info = M("mxfp4-even-add-less-one", "block scale", "s = exponent(bits(block_amax) + 2^21 - 1) - 2",
               "fbgemm v1.8.0 (99a76f4e) fbgemm_gpu/fbgemm_gpu/triton/quantize.py:61,71-73 _compute_exp "
               "RoundingMode.even: M_ROUND = (1 << (23 - MBITS - 1)) - 1, one less than torchao's 2^21, so a "
               "block amax of exactly 1.75 * 2^k keeps 2^k (ties down)",
               "mxfp4-even", 0),
     .bscale = bs_mx_even_add_less_one},
    {.info = M("mx-floor-log2f", "block scale", "s = floor(fl32(log2(block_amax))) - 2 + 127",
               "llama.cpp (01243c58) ggml/src/ggml-quants.c:369 quantize_row_mxfp4_ref: floorf(log2f(amax)) - 2 + "
               "127; log2f of an amax a few ulps below 2^k (|k| >= 2) rounds to k, one above the exponent bits",
               "mxfp4-floor", 0),
     .bscale = bs_mx_floor_log2f},
    {.info = M("mx-rceil-log2f", "block scale", "s = clamp(ceil(fl32(log2(block_amax / max_elem))), -127, 127) + 127",
               "torchao v0.18.0 (5f2baf9d) prototype/mx_formats/mx_tensor.py:133,167-181 _to_mx_rceil without the "
               "PTX (eager, CPU, pre-SM100): torch.log2 in fp32 of amax / max_pos; a quotient a few ulps above 2^k "
               "gives k, not k + 1 (then the block max saturates)",
               "mxfp4-rceil,mxfp8", 0),
     .bscale = bs_mx_rceil_log2f},
    /* learned from third-party quantizers (docs/verify.md, "Mutants") */
    {.info = M("global-torch-rdiv", "global scale", "S_enc = fl(fl(1/amax) * 2688)",
               "torch's `2688.0 / amax` on a tensor (Tensor.__rtruediv__ = reciprocal() * 2688): compressed-tensors "
               "0.20.1 quantization/utils/helpers.py:344 generate_gparam, mslk v1.1.0 "
               "mslk/quantize/triton/fp4_quantize.py:5260",
               R_TE, 0),
     .global = gl_torch_rdiv},
    {.info = M("global-recip-of-div", "global scale", "S_enc = fl(1 / fl(amax / 2688))",
               "torchao 0.18 prototype/mx_formats/kernels.py:1192 mslk_quantize_nvfp4 passes "
               "per_tensor_scale.reciprocal(), per_tensor_scale = amax / 2688 (nvfp4_tensor.py:769, CPU division)",
               R_TE, 0),
     .global = gl_recip_of_div},
    {.info = M("global-recip-of-mul", "global scale", "S_enc = fl(1 / fl(amax * fl(1/2688)))",
               "torchao 0.18 kernels.py:1192 on CUDA, where torch divides a tensor by a CPU scalar as a multiply by "
               "its reciprocal (pytorch aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu)",
               R_TE, 0),
     .global = gl_recip_of_mul},
    {.info = M("global-nonfinite-to-1", "global scale", "S_enc = 2688/amax, 1 where it is Inf or NaN (no FLT_MAX clamp)",
               "compressed-tensors 0.20.1 quantization/utils/helpers.py:351 generate_gparam: "
               "torch.nan_to_num(global_scale, nan=1.0, posinf=1.0) where te clamps to FLT_MAX (tiny amax)",
               R_TE, 0),
     .global = gl_nonfinite_to_1},
    {.info = M("global-unguarded", "global scale",
               "S_enc = 2688/amax with no FLT_MAX clamp and no 0 -> 1: +Inf for amax 0 or below about 7.9e-36, 0 "
               "for amax +Inf",
               "fbgemm-gpu-genai 1.9.0 experimental/gen_ai/bench/quantize_ops.py:2372 and "
               "experimental/gemm/triton_gemm/fp4_quantize.py:5618 get_nvfp4_global_scales_naive pass (448.0 * 6.0) "
               "/ amax to the kernel unguarded (where it overflows, or amax is 0 or +Inf, torch's and te's "
               "division orders give the same non-finite value, which this keeps)",
               R_TE, 0),
     .global = gl_unguarded},
    {.info = M("encode-s-over-senc", "encode factor", "y = x / (s / S_enc)",
               "compressed-tensors 0.20.1 quantization/lifecycle/forward_helpers.py:185-187 (scale = scale / "
               "global_scale; x / scale): one divisor s/S_enc",
               R_TE_MSLK, 0),
     .prepare = prep_s_over_senc, .scaled = y_divide},
    {.info = M("encode-senc-over-s-no-clamp", "encode factor", "y = x * div_rn(S_enc, s), Inf when s = 0",
               "mslk v1.1.0 mslk/quantize/triton/fp4_quantize.py:5496 total_scale = tl.div_rn(global_scale, scales): "
               "no FLT_MAX clamp, so zero-scale blocks give 0 * Inf = NaN codes",
               R_TE_MSLK, 0),
     .prepare = prep_senc_over_s_unclamped},
    {.info = M("scale-zero-to-eighth", "block scale", "s = 0x20 (0.125) where the scale byte would be 0",
               "compressed-tensors 0.20.1 quantization/utils/helpers.py:117-128 calculate_qparams: scales == 0 "
               "replaced by _get_dtype_eps(float8_e4m3fn) = 0.125",
               R_TE, 0),
     .bscale = bs_zero_to_eighth},
    {.info = M("elem-ties-toward-zero", "element cast", "E2M1 ties rounded to the smaller magnitude",
               "a threshold search with > at every midpoint (compressed-tensors 0.20.1 "
               "quantization/utils/fp4_utils.py:23-35 _round_to_fp4 mixes >= and > to get ties to even)",
               R_E2M1, NVFP4_MUTANT_NEEDS_RN),
     .elem = el_ties_toward_zero},
    {.info = M("elem-negzero-input-dropped", "element cast", "an exact -0 gives 0x0; negative underflow keeps 0x8",
               "compressed-tensors 0.20.1 quantization/utils/fp4_utils.py:19 sign = tl.where(x < 0.0, -32.0, 32.0) "
               "(-0.0 is not < 0), packed by its sign bit (compressors/nvfp4/helpers.py:63)",
               "te,torchao,torchao-0.13-0.16,mxfp4-floor,mxfp4-rceil", 0),
     .special = sp_negzero_input_dropped},
    {.info = M("layout-swizzle-padded-stride", "layout", "scale (r, k) placed as flat index r*C+k with row stride round_up(C, 4)",
               "the 128x4 swizzle indexed from the linear scale buffer with the padded group count as its row "
               "stride: wrong whenever K/16 is not a multiple of 4 (fbgemm-gpu-genai 1.9.0 "
               "experimental/gemm/triton_gemm/fp4_quantize.py:1463-1474)",
               R_E2M1 ",fbgemm", NVFP4_MUTANT_NEEDS_128X4),
     .layout = ly_swizzle_padded_stride},
    /* the scale conventions of FlashInfer's kernels (layouts, global-scale flag) */
    {.info = M("global-passed-inverted", "global scale",
               "global scale passed inverted: S_enc' = fl(1 / S_enc) (the kernel inverts a scale that was not)",
               "FlashInfer 0.7.4 fp4_quantize(..., is_global_scale_inversed=True) handed S_enc, or False handed "
               "1/S_enc: csrc/nv_internal/tensorrt_llm/kernels/quantization.cuh USE_INVERSE_SCALE SFScaleVal = "
               "__fdiv_rn(1, SFScale); batch_invariant/quantization/nvfp4_api.py gs = 1.0 / global_scale",
               "flashinfer", 0),
     .global = gl_passed_inverted},
    {.info = M("global-convention-swapped", "global scale",
               "the other is_global_scale_inversed convention: S_enc' = fl(1 / fl(1 / S_enc)) where S_enc was "
               "handed over as it is, or S_enc where the golden hands it over inverted (global_scale_inverted)",
               "FlashInfer 0.7.4 fp4_quantize(..., is_global_scale_inversed) with the scale inverted on both sides "
               "(or on neither) where the golden's convention is the other: the same S_enc but for one fp32 value "
               "in eight, so only scales on an E4M3 rounding boundary and flashinfer's dequant differ",
               "flashinfer", 0),
     .global = gl_convention_swapped},
    {.info = M("layout-kv-v-as-k", "layout",
               "the KV cache's V scales written linear (row-major, as K's) where the 4-token interleave was expected",
               "vLLM #50336: a KV-cache test that unswizzled both K and V passed at atol 1.5 / rtol 0.5 (relative "
               "error 0.76 instead of 0.1); FlashInfer 0.7.4 fp4_quantization.py nvfp4_quantize_paged_kv_cache "
               "interleaves V only",
               R_E2M1 ",flashinfer", NVFP4_MUTANT_NEEDS_KV_V),
     .layout = ly_kv_v_as_k},
};

const size_t nvfp4_mutant_catalog_size = sizeof nvfp4_mutant_catalog / sizeof nvfp4_mutant_catalog[0];

/* ---- the catalog by index, by name, and run by its public descriptor --------------------------
 * (here, beside the table: the quantizer in mutant_quant.c runs a descriptor and never reads the
 * table, so the two files depend one way) */

size_t nvfp4_mutant_count(void) { return nvfp4_mutant_catalog_size; }

const nvfp4_mutant_info *nvfp4_mutant_at(size_t i)
{
    return i < nvfp4_mutant_catalog_size ? &nvfp4_mutant_catalog[i].info : NULL;
}

const nvfp4_mutant_info *nvfp4_mutant_find(const char *name)
{
    for (size_t i = 0; name && i < nvfp4_mutant_catalog_size; i++)
        if (strcmp(nvfp4_mutant_catalog[i].info.name, name) == 0) return &nvfp4_mutant_catalog[i].info;
    return NULL;
}

static const nvfp4_mutant *of_info(const nvfp4_mutant_info *m)
{
    for (size_t i = 0; i < nvfp4_mutant_catalog_size; i++)
        if (&nvfp4_mutant_catalog[i].info == m) return &nvfp4_mutant_catalog[i];
    return NULL;
}

nvfp4_status nvfp4_mutant_quantize(const nvfp4_mutant_info *mi, const void *x, nvfp4_dtype dtype, size_t rows,
                                   size_t cols, const nvfp4_quant_opts *opts, nvfp4_mutant_output *out,
                                   nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    const nvfp4_mutant *m = of_info(mi);
    if (!m) return nvfp4_error_set(err, NVFP4_EINVAL, "mutant: not a catalogued mutant");
    return nvfp4_mutant_run(m, x, dtype, rows, cols, opts, out, err);
}
