/*
 * simd_hook.c - the fast CPU path behind src/quant.c: row kernels for
 * quant_kernels.h's selection hook and the fused columnwise quantizer.
 */
#include <stdlib.h>
#include <string.h>

#include "core/hadamard.h"
#include "core/recipe.h"
#include "recipes/recipe.h"
#include "simd/simd_hook.h"
#include "simd/simd_kernels.h"

/* The descriptor fields that make a recipe the `te` chain the vector
 * kernels implement (src/recipes/te.c). */
static int is_te_chain(const nvfp4_core_recipe *r)
{
    return r->elem == NVFP4_CORE_ELEM_E2M1 && r->scale_format == NVFP4_CORE_SCALE_E4M3 &&
           r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE && r->bscale_rule == NVFP4_CORE_BSCALE_TE_MUL &&
           r->enc_rule == NVFP4_CORE_ENC_TE_RECIP && r->special == NVFP4_CORE_SPECIAL_CUDA &&
           r->amax_nan_propagates == 0;
}

static const nvfp4_simd_kernels *vector_kernels(void)
{
    nvfp4_simd_variant v = nvfp4_simd_active();
    return v == NVFP4_SIMD_SCALAR ? NULL : nvfp4_simd_kernels_for(v);
}

static void consts_of(const nvfp4_qk_ctx *c, nvfp4_simd_te_consts *k)
{
    k->amax = c->global.amax;
    k->s_enc = c->global.s_enc;
    k->s_dec = c->global.s_dec;
    k->m = c->global.s_enc * NVFP4_CORE_INV6; /* as nvfp4_core_block_scale forms it */
}

static void hook_row_scales(const nvfp4_qk_ctx *c, const float *x, uint8_t *scale)
{
    nvfp4_simd_te_consts k;
    consts_of(c, &k);
    nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO)->row_scales(&k, x, 0, c->cols / 16, scale);
}

static void hook_row_encode(const nvfp4_qk_ctx *c, const float *x, size_t row, const uint8_t *scale, uint8_t *out)
{
    nvfp4_simd_te_consts k;
    consts_of(c, &k);
    nvfp4_simd_sr sr = {c->seed, c->offset};
    size_t nb = c->cols / 16;
    nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO)
        ->row_encode(&k, x, 0, nb, scale, c->mode == NVFP4_CORE_SR ? &sr : NULL, (uint64_t)row * nb, out);
}

static const nvfp4_quant_kernels hook_kernels = {"simd", hook_row_scales, hook_row_encode};

/* Which MXFP4 rule (NVFP4_SIMD_MX_*) a descriptor is, or -1. */
static int mx_rule(const nvfp4_core_recipe *r)
{
    if (r->elem != NVFP4_CORE_ELEM_E2M1 || r->scale_format != NVFP4_CORE_SCALE_UE8M0 ||
        r->global_rule != NVFP4_CORE_GLOBAL_NONE || r->enc_rule != NVFP4_CORE_ENC_POW2 || r->emax_elem != 2 ||
        r->elem_max != 6.0f)
        return -1;
    if (r->bscale_rule == NVFP4_CORE_BSCALE_UE8M0_FLOOR && r->special == NVFP4_CORE_SPECIAL_TORCHAO &&
        r->amax_nan_propagates == 1 && r->pow2_scale_min == 0x1p-126f)
        return NVFP4_SIMD_MX_FLOOR;
    if (r->bscale_rule == NVFP4_CORE_BSCALE_UE8M0_RCEIL && r->special == NVFP4_CORE_SPECIAL_CUDA &&
        r->amax_nan_propagates == 0 && r->pow2_scale_min == 0.0f)
        return NVFP4_SIMD_MX_RCEIL;
    return -1;
}

static void hook_mx_row_scales(const nvfp4_qk_ctx *c, const float *x, uint8_t *scale)
{
    nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO)->mx_row_scales(mx_rule(c->core), x, c->cols / 32, scale);
}

static void hook_mx_row_encode(const nvfp4_qk_ctx *c, const float *x, size_t row, const uint8_t *scale, uint8_t *out)
{
    nvfp4_simd_sr sr = {c->seed, c->offset};
    size_t nb = c->cols / 32;
    nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO)
        ->mx_row_encode(mx_rule(c->core), x, nb, scale, c->mode == NVFP4_CORE_SR ? &sr : NULL, (uint64_t)row * nb, out);
}

static const nvfp4_quant_kernels hook_mx_kernels = {"simd-mx", hook_mx_row_scales, hook_mx_row_encode};

const nvfp4_quant_kernels *nvfp4_simd_quant_kernels(const nvfp4_qk_ctx *c)
{
    if (!vector_kernels()) return NULL;
    if (c->mode != NVFP4_CORE_RN && c->mode != NVFP4_CORE_SR) return NULL;
    if (is_te_chain(c->core) && c->block_len == 16) return &hook_kernels;
    if (mx_rule(c->core) >= 0 && c->block_len == 32) return &hook_mx_kernels;
    return NULL;
}

int nvfp4_simd_te_handles(const nvfp4_core_recipe *core, const nvfp4_quant_opts *o)
{
    if (!vector_kernels() || !is_te_chain(core)) return 0;
    if (o->block != NVFP4_BLOCK_1X16 && o->block != NVFP4_BLOCK_16X16) return 0;
    if (o->rounding != NVFP4_RN && o->rounding != NVFP4_SR) return 0;
    return !(o->rht && o->block == NVFP4_BLOCK_16X16); /* resolve_opts refuses it anyway */
}

/* Both outputs of one orientation, or an ENOMEM status (t's buffers are
 * released by the caller's nvfp4_quantized_free). */
static nvfp4_status alloc_outputs(nvfp4_qtensor *t, size_t n, nvfp4_error *err)
{
    t->data = nvfp4_quant_alloc_output(n / 2);
    t->scale = nvfp4_quant_alloc_output(n / 16);
    if (!t->data || !t->scale)
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu x %zu codes", t->prows, t->pcols);
    return NVFP4_OK;
}

int nvfp4_simd_quantize_rowwise(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                size_t cols, const nvfp4_quant_opts *o, float amax, nvfp4_qtensor *t,
                                nvfp4_status *st, nvfp4_error *err)
{
    int tile16 = o->block == NVFP4_BLOCK_16X16;
    if (!nvfp4_simd_te_handles(core, o)) return 0;
    if (cols % 16 != 0 || (tile16 && rows % 16 != 0)) return 0; /* padding: the caller's */

    size_t n = rows * cols;
    t->rows = t->prows = t->scale_rows = rows;
    t->cols = t->pcols = cols;
    t->data_bytes = n / 2;
    t->scale_cols = cols / 16;
    t->amax = amax;
    if ((*st = alloc_outputs(t, n, err)) != NVFP4_OK) return 1;
    nvfp4_simd_sr sr = {o->seed, o->offset}; /* rowwise counter base, DESIGN.md 3.3 */
    nvfp4_simd_te_rowwise(x, dtype == NVFP4_DTYPE_BF16, rows, cols, amax, tile16,
                          o->rounding == NVFP4_SR ? &sr : NULL, t->data, t->scale);
    return 1;
}

/* The columnwise job of a configuration nvfp4_simd_te_handles accepts (the
 * key lives in *sr, which must outlive the job; outputs not set). */
static void col_job_setup(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols, const nvfp4_quant_opts *o,
                          nvfp4_simd_col_job *j, nvfp4_simd_sr *sr)
{
    memset(j, 0, sizeof *j);
    sr->seed = o->seed;
    sr->offset = o->offset + 1u; /* columnwise counter base, DESIGN.md 3.3 */
    j->x = x;
    j->bf16 = dtype == NVFP4_DTYPE_BF16;
    j->rows = rows;
    j->cols = cols;
    j->sr = o->rounding == NVFP4_SR ? sr : NULL;
    j->tile16 = o->block == NVFP4_BLOCK_16X16;
    j->rht = o->rht;
    if (o->rht) {
        switch (o->rht_signs) { /* as src/quant_rht.c */
        case NVFP4_RHT_SIGNS_TE: nvfp4_core_rht_mask_te(j->rht_mask); break;
        case NVFP4_RHT_SIGNS_SEEDED: nvfp4_core_rht_mask_seeded(o->rht_sign_seed, j->rht_mask); break;
        default: nvfp4_core_rht_mask_none(j->rht_mask); break;
        }
        j->rht_round_bf16 = !o->rht_fp32;
    }
}

int nvfp4_simd_te_amaxes_for_rht(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                 size_t cols, const nvfp4_quant_opts *o, float *input_amax, float *rht_amax)
{
    if (!nvfp4_simd_te_handles(core, o) || !o->rht || rows % 16 != 0) return 0;
    nvfp4_simd_col_job j;
    nvfp4_simd_sr sr;
    col_job_setup(x, dtype, rows, cols, o, &j, &sr);
    /* a stored transform (small tensors) is cheaper than a second transform */
    if (!nvfp4_simd_rht_transforms_twice(&j)) return 0;
    *rht_amax = nvfp4_simd_rht_amax_and_input_amax(&j, input_amax);
    return 1;
}

int nvfp4_simd_quantize_columnwise(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                   size_t cols, const nvfp4_quant_opts *o, const float *known_amax,
                                   nvfp4_qtensor *t, nvfp4_status *st, nvfp4_error *err)
{
    int tile16 = o->block == NVFP4_BLOCK_16X16;
    if (!nvfp4_simd_te_handles(core, o)) return 0;
    if (rows % 16 != 0 || (tile16 && cols % 16 != 0)) return 0; /* padding: the caller's path */

    nvfp4_simd_col_job j;
    nvfp4_simd_sr sr;
    col_job_setup(x, dtype, rows, cols, o, &j, &sr);
    float amax = 0.0f;
    if (known_amax || !o->rht) {
        amax = known_amax ? *known_amax : nvfp4_simd_amax(x, j.bf16, rows * cols);
        nvfp4_simd_te_consts_init(&j.k, amax);
    }

    size_t n = rows * cols;
    t->rows = cols;
    t->cols = rows;
    t->prows = cols;
    t->pcols = rows;
    t->data_bytes = n / 2;
    t->scale_rows = cols;
    t->scale_cols = rows / 16;
    if ((*st = alloc_outputs(t, n, err)) != NVFP4_OK) return 1;
    j.data = t->data;
    j.scale = t->scale;
    if (o->rht && !known_amax) amax = nvfp4_simd_te_columnwise_rht(&j); /* amax after the transform */
    else nvfp4_simd_te_columnwise(&j); /* with RHT: transforms as it quantizes */
    t->amax = amax;
    *st = NVFP4_OK;
    return 1;
}

int nvfp4_simd_dequantize(const nvfp4_quantized *q, bool columnwise, float *out)
{
    const nvfp4_qtensor *t = columnwise ? &q->col : &q->row;
    if (!vector_kernels() || !q->recipe || !is_te_chain(&q->recipe->core)) return 0;
    if (q->recipe->core.dequant_rule != NVFP4_CORE_DEQ_TE) return 0;
    if (t->prows != t->rows || t->pcols != t->cols || t->cols % 16 != 0 || t->scale_cols != t->cols / 16) return 0;
    nvfp4_simd_te_dequantize(t->data, t->scale, t->rows, t->cols, t->amax, out);
    return 1;
}
