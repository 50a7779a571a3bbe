/*
 * plan.c - the quantization plan: options resolved and checked, stored and
 * padded shapes of both orientations, SR counter bases, the RHT sign mask,
 * output sizes. The one place where these are decided (CPFloat's habit of
 * validating one options struct once); the CPU paths, the CUDA path, the
 * bundle writer and the verifier all take the plan. Normative description:
 * docs/semantics.md ("Tensor layout", "Stochastic rounding").
 */
#include <string.h>

#include "core/nvfp4_core.h"
#include "quant/quant_internal.h"

void nvfp4_quant_opts_init(nvfp4_quant_opts *o)
{
    memset(o, 0, sizeof *o);
    o->recipe = NULL;
    o->block = NVFP4_BLOCK_DEFAULT;
    o->rounding = NVFP4_RN;
    o->rowwise = true;
    o->rht_signs = NVFP4_RHT_SIGNS_TE;
}

/* ---- names ------------------------------------------------------------ */

const char *nvfp4_block_name(nvfp4_block b)
{
    switch (b) {
    case NVFP4_BLOCK_1X16: return "1x16";
    case NVFP4_BLOCK_16X16: return "16x16";
    case NVFP4_BLOCK_1X32: return "1x32";
    case NVFP4_BLOCK_DEFAULT: return "default";
    }
    return "?";
}

const char *nvfp4_scale_format_name(nvfp4_scale_format f)
{
    switch (f) {
    case NVFP4_SCALEFMT_E4M3: return "e4m3";
    case NVFP4_SCALEFMT_UE8M0: return "ue8m0";
    case NVFP4_SCALEFMT_UE5M3: return "ue5m3";
    }
    return "?";
}

bool nvfp4_block_parse(const char *s, nvfp4_block *out)
{
    static const struct { const char *name; nvfp4_block b; } names[] = {
        {"1x16", NVFP4_BLOCK_1X16}, {"16x16", NVFP4_BLOCK_16X16}, {"1x32", NVFP4_BLOCK_1X32},
        {"default", NVFP4_BLOCK_DEFAULT}};
    if (!s) return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].b;
            return true;
        }
    return false;
}

const char *nvfp4_rht_signs_name(nvfp4_rht_signs s)
{
    switch (s) {
    case NVFP4_RHT_SIGNS_TE: return "te";
    case NVFP4_RHT_SIGNS_SEEDED: return "seeded";
    case NVFP4_RHT_SIGNS_NONE: return "none";
    }
    return "?";
}

/* ---- options ------------------------------------------------------------ */

/* The RHT's sign mask through the Hadamard module's own check (one switch
 * over the sign choices in the library). */
static nvfp4_status rht_mask_of(const nvfp4_quant_opts *o, uint32_t mask[4], nvfp4_error *err)
{
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    c.signs = o->rht_signs;
    c.sign_seed = o->rht_sign_seed;
    c.keep_fp32 = o->rht_fp32;
    if (o->rht_signs != NVFP4_RHT_SIGNS_TE && o->rht_signs != NVFP4_RHT_SIGNS_SEEDED &&
        o->rht_signs != NVFP4_RHT_SIGNS_NONE)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown RHT sign choice %d", (int)o->rht_signs);
    return nvfp4_rht_sign_mask(&c, mask, err);
}

static nvfp4_status resolve_opts(const nvfp4_quant_opts *in, nvfp4_quant_plan *p, nvfp4_error *err)
{
    nvfp4_quant_opts *o = &p->opts;
    if (in) *o = *in;
    else nvfp4_quant_opts_init(o);
    const nvfp4_recipe *r = nvfp4_recipe_find(o->recipe);
    if (!r) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%s' (see nvfp4_recipe_at for the list)", o->recipe);
    o->recipe = r->info.name;
    if (o->block == NVFP4_BLOCK_DEFAULT) o->block = r->info.default_block;
    if (o->block != NVFP4_BLOCK_1X16 && o->block != NVFP4_BLOCK_16X16 && o->block != NVFP4_BLOCK_1X32)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown block shape %d", (int)o->block);
    if (nvfp4_core_is_4over6(&r->core) && o->block == NVFP4_BLOCK_1X32)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' chooses between two scales per 1x16 or 16x16 block "
                               "(asked: 1x32)", r->info.name);
    if (nvfp4_core_recipe_row_scaled(&r->core) && o->block != NVFP4_BLOCK_1X16)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' (one amax per row) needs 1x16 blocks (asked: %s)",
                               r->info.name, nvfp4_block_name(o->block));
    if (o->rounding != NVFP4_RN && o->rounding != NVFP4_RZ && o->rounding != NVFP4_SR)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown rounding mode %d", (int)o->rounding);
    if (o->rounding != NVFP4_RN && !r->info.supports_sr)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' supports round-to-nearest only (asked: %s)",
                               r->info.name, nvfp4_rounding_name(o->rounding));
    if (o->global_scale_inverted && !nvfp4_core_global_is_encode_scale(&r->core))
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' has no encode global scale S_enc to hand over inverted "
                               "(global_scale_inverted: te, te-pyref, flashinfer and the other S_enc recipes)",
                               r->info.name);
    if (!o->rowwise && !o->columnwise) o->rowwise = true;
    if (o->rht) {
        if (!o->columnwise)
            return nvfp4_error_set(err, NVFP4_EINVAL, "RHT applies to the columnwise output, which was not asked for");
        /* 16x16: TE's reference applies the 16-point transform along the
         * columnwise rows and then quantizes 16x16 tiles of the result */
        if (o->block != NVFP4_BLOCK_1X16 && o->block != NVFP4_BLOCK_16X16)
            return nvfp4_error_set(err, NVFP4_EINVAL, "RHT needs 1x16 or 16x16 blocks (asked: %s)",
                                   nvfp4_block_name(o->block));
        nvfp4_status st = rht_mask_of(o, p->rht_mask, err);
        if (st) return st;
    }
    p->recipe = r;
    return NVFP4_OK;
}

/* ---- shapes ------------------------------------------------------------- */

/* The layout of one orientation stored as srows x scols, or an NVFP4_ESHAPE
 * error naming the dimension. Sizes are checked against overflow with a
 * factor 8 of headroom (fp32 working buffers of the padded shape). */
static nvfp4_status layout_of(const nvfp4_quant_plan *p, size_t srows, size_t scols, bool columnwise,
                              nvfp4_quant_layout *l, nvfp4_error *err)
{
    const nvfp4_quant_opts *o = &p->opts;
    const char *what = columnwise ? "columnwise" : "rowwise";
    memset(l, 0, sizeof *l);
    l->block_len = o->block == NVFP4_BLOCK_1X32 ? 32 : 16;
    l->tile16 = o->block == NVFP4_BLOCK_16X16;
    l->rows = srows;
    l->cols = scols;
    l->prows = l->tile16 ? nvfp4_core_roundup(srows, 16) : srows;
    l->pcols = nvfp4_core_roundup(scols, l->block_len);
    if (l->prows < srows || l->pcols < scols) return nvfp4_error_set(err, NVFP4_ENOMEM, "tensor shape overflows size_t");
    if (!o->pad && (l->pcols != scols || l->prows != srows)) {
        if (l->tile16)
            return nvfp4_error_set(err, NVFP4_ESHAPE,
                                   "%s: %zu x %zu is not a multiple of the 16x16 block in both dimensions "
                                   "(set the pad option to zero-pad)", what, srows, scols);
        return nvfp4_error_set(err, NVFP4_ESHAPE,
                               "%s: the block dimension %zu is not a multiple of the block length %zu "
                               "(set the pad option to zero-pad)", what, scols, l->block_len);
    }
    if (l->prows && l->pcols > SIZE_MAX / 8 / l->prows)
        return nvfp4_error_set(err, NVFP4_ENOMEM, "padded tensor overflows size_t");
    size_t n = l->prows * l->pcols;
    l->data_bytes = p->recipe->core.elem == NVFP4_CORE_ELEM_E4M3 ? n : n / 2;
    l->scale_rows = l->prows;
    l->scale_cols = l->pcols / l->block_len;
    /* docs/semantics.md, "The SR bit contract": columnwise takes the next counter (the next two for
     * 32-element blocks, whose halves use two) */
    l->sr_offset = o->offset + (columnwise ? (l->block_len == 32 ? 2u : 1u) : 0u);
    return NVFP4_OK;
}

nvfp4_status nvfp4_quant_plan_init(nvfp4_quant_plan *p, const nvfp4_quant_opts *opts, nvfp4_dtype dtype,
                                   size_t rows, size_t cols, nvfp4_error *err)
{
    if (!p) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quant_plan_init: no plan");
    memset(p, 0, sizeof *p);
    if (dtype != NVFP4_DTYPE_F32 && dtype != NVFP4_DTYPE_BF16)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: unknown input dtype %d", (int)dtype);
    if (rows == 0 || cols == 0)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "nvfp4_quantize: empty tensor (%zu x %zu)", rows, cols);
    nvfp4_status st = resolve_opts(opts, p, err);
    if (st) return st;
    size_t n;
    if (!nvfp4_mul_size(rows, cols, &n) || n > (SIZE_MAX / 8))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "tensor of %zu x %zu elements overflows size_t", rows, cols);
    p->dtype = dtype;
    p->rows = rows;
    p->cols = cols;
    p->has_row = p->opts.rowwise;
    p->has_col = p->opts.columnwise;
    if (p->has_row && (st = layout_of(p, rows, cols, false, &p->row, err))) return st;
    if (p->has_col && (st = layout_of(p, cols, rows, true, &p->col, err))) return st;
    return NVFP4_OK;
}
