/*
 * reference.c - the scalar reference path: the stored orientation as an
 * fp32 buffer (transposed, zero padded, RHT'd as asked), then row loops that
 * evaluate the recipe's chain of src/core/recipe.h element by element. It
 * calls no vector kernel: it is the oracle that every fast path is compared
 * with (tests/check_libpath.c, tests/check_simd.c), and the path of every
 * recipe the fast kernels do not implement.
 *
 * Determinism: every stored row is computed from its own data, its scale
 * bytes and its row index alone, and amaxes are exact maxima, so neither
 * the OpenMP thread count nor the schedule changes a byte.
 */
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/parallel.h"
#include "core/philox.h"
#include "quant/quant_internal.h"

/* ---- stored-orientation buffers ----------------------------------------- */

static float load(const void *x, nvfp4_dtype dt, size_t i)
{
    if (dt == NVFP4_DTYPE_BF16) return nvfp4_core_bf16_decode(((const uint16_t *)x)[i]);
    return ((const float *)x)[i];
}

float *nvfp4_quant_stored_f32(const nvfp4_quant_plan *p, const void *x, bool columnwise, int *owned)
{
    const nvfp4_quant_layout *l = columnwise ? &p->col : &p->row;
    size_t rows = p->rows, cols = p->cols;
    *owned = 0;
    if (!columnwise && p->dtype == NVFP4_DTYPE_F32 && l->prows == rows && l->pcols == cols)
        return (float *)(uintptr_t)x;
    float *b = calloc(l->prows * l->pcols, sizeof *b);
    if (!b) return NULL;
    *owned = 1;
    size_t pc = l->pcols;
    if (columnwise) {
        NVFP4_PAR_FOR_IF(rows * cols >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
            for (size_t j = 0; j < cols; j++) {
                for (size_t i = 0; i < rows; i++) b[j * pc + i] = load(x, p->dtype, i * cols + j);
            });
    } else {
        NVFP4_PAR_FOR_IF(rows * cols >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
            for (size_t i = 0; i < rows; i++) {
                for (size_t j = 0; j < cols; j++) b[i * pc + j] = load(x, p->dtype, i * cols + j);
            });
    }
    return b;
}

/* RHT-16 on the columnwise stored tensor: in TE's storage it is X^T, and the
 * transform mixes 16 consecutive elements of each of its rows, i.e. 16
 * consecutive original rows (tokens) of one column, exactly the 1x16
 * quantization block (docs/semantics.md, "Random Hadamard transform"). */
static void rht_rows(const nvfp4_quant_plan *p, float *b, size_t rows, size_t cols)
{
    int round_bf16 = !p->opts.rht_fp32;
    size_t groups = rows * (cols / 16);
    NVFP4_PAR_FOR_IF(groups >= 2048, "omp parallel for schedule(static)",
        for (size_t g = 0; g < groups; g++) nvfp4_core_rht_forward_group(b + g * 16, b + g * 16, 16u, p->rht_mask, round_bf16));
}

/* Tensor amax with the recipe's NaN rule (a canonical quiet NaN when a NaN
 * element propagates). */
static float tensor_amax(const float *b, size_t n, int nanprop)
{
    if (nanprop) {
        int any_nan = 0;
        NVFP4_PAR_FOR_IF(n >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for reduction(| : any_nan) schedule(static)",
            for (size_t i = 0; i < n; i++) any_nan |= nvfp4_core_isnan(b[i]));
        if (any_nan) return nvfp4_core_f32_from_bits(0x7FC00000u);
    }
    return nvfp4_amax_f32(b, n);
}

/* ---- one stored orientation -------------------------------------------- */

typedef struct {
    const nvfp4_core_recipe *core;
    const nvfp4_quant_layout *l;
    nvfp4_core_global global;  /* derived from this orientation's amax */
    int mode;                  /* NVFP4_CORE_RN, _RZ or _SR */
    uint64_t seed;
} stored_ctx;

static void row_scales(const stored_ctx *c, const float *x, uint8_t *scale)
{
    size_t bl = c->l->block_len, nb = c->l->pcols / bl;
    int nanprop = c->core->amax_nan_propagates;
    int four_over_six = nvfp4_core_is_4over6(c->core);
    for (size_t b = 0; b < nb; b++) {
        float amax = 0.0f;
        for (size_t i = 0; i < bl; i++) amax = nvfp4_core_amax_step(amax, x[b * bl + i], nanprop);
        scale[b] = four_over_six ? nvfp4_core_4over6_seg(c->core, &c->global, amax, x + b * bl)
                                 : nvfp4_core_block_scale(c->core, &c->global, amax);
    }
}

/* 4over6 on a 16x16 tile (rows at stride pc): the two candidates' row
 * errors, summed in TE's warp-tree order, pick the tile's byte. */
static uint8_t tile_4over6(const stored_ctx *c, const float *t, size_t pc, float amax)
{
    uint8_t s4, s6;
    float e4[16], e6[16];
    nvfp4_core_4over6_scales(c->core, &c->global, amax, &s4, &s6);
    for (size_t r = 0; r < 16; r++) {
        e4[r] = nvfp4_core_4over6_seg_error(c->core, &c->global, s4, t + r * pc);
        e6[r] = nvfp4_core_4over6_seg_error(c->core, &c->global, s6, t + r * pc);
    }
    return nvfp4_core_4over6_pick(nvfp4_core_4over6_tile_sum(e4), nvfp4_core_4over6_tile_sum(e6), s4, s6);
}

static void tile_scales(const stored_ctx *c, const float *b, uint8_t *scale)
{
    size_t pc = c->l->pcols, nbc = pc / 16, ntr = c->l->prows / 16;
    int nanprop = c->core->amax_nan_propagates;
    NVFP4_PAR_FOR_IF(c->l->prows * pc >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
        for (size_t t = 0; t < ntr * nbc; t++) {
            size_t ti = t / nbc, tj = t % nbc;
            float amax = 0.0f;
            for (size_t r = 0; r < 16; r++)
                for (size_t k = 0; k < 16; k++) amax = nvfp4_core_amax_step(amax, b[(ti * 16 + r) * pc + tj * 16 + k], nanprop);
            uint8_t s = nvfp4_core_is_4over6(c->core) ? tile_4over6(c, b + ti * 16 * pc + tj * 16, pc, amax)
                                                      : nvfp4_core_block_scale(c->core, &c->global, amax);
            for (size_t r = 0; r < 16; r++) scale[(ti * 16 + r) * nbc + tj] = s;
        });
}

/* Codes of stored row `row`, whose index keys the SR bits (docs/semantics.md, "The SR bit contract":
 * block b of the row is segment row*nb + b; a 32-element block takes its
 * second 16 bytes from the next counter). E2M1 packs element 2j into the
 * low nibble of out[j]. */
static void row_encode(const stored_ctx *c, const float *x, size_t row, const uint8_t *scale, uint8_t *out)
{
    size_t bl = c->l->block_len, nb = c->l->pcols / bl;
    int e4m3 = c->core->elem == NVFP4_CORE_ELEM_E4M3;
    uint8_t rb[16] = {0};
    for (size_t b = 0; b < nb; b++) {
        nvfp4_core_block blk = nvfp4_core_block_prepare(c->core, &c->global, scale[b]);
        uint64_t sr_block = (uint64_t)row * nb + b;
        for (size_t i = 0; i < bl; i++) {
            size_t j = b * bl + i;
            if (c->mode == NVFP4_CORE_SR && (i & 15u) == 0)
                nvfp4_core_sr_block_bytes(c->seed, c->l->sr_offset + (i >> 4), sr_block, rb);
            uint8_t q = nvfp4_core_encode_elem(c->core, &blk, x[j], c->mode, rb[i & 15u]);
            if (e4m3) out[j] = q;
            else if (j & 1u) out[j >> 1] = (uint8_t)(out[j >> 1] | (q << 4));
            else out[j >> 1] = q;
        }
    }
}

/* The recipe's global scale for amax, handed over inverted when the options say so. */
static nvfp4_core_global global_of(const nvfp4_core_recipe *r, const nvfp4_quant_opts *o, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, amax);
    return o->global_scale_inverted ? nvfp4_core_global_handed_inverted(g) : g;
}

static void quantize_stored(const nvfp4_quant_plan *p, const nvfp4_quant_layout *l, const float *b, float amax,
                            nvfp4_qtensor *t)
{
    stored_ctx c;
    c.core = &p->recipe->core;
    c.l = l;
    c.global = global_of(c.core, &p->opts, amax);
    c.mode = nvfp4_quant_core_mode(p->opts.rounding);
    c.seed = p->opts.seed;
    if (l->tile16) tile_scales(&c, b, t->scale);
    size_t row_bytes = l->data_bytes / l->prows;
    int row_scaled = nvfp4_core_recipe_row_scaled(c.core);
    NVFP4_PAR_FOR_IF(l->prows * l->pcols >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
        for (size_t i = 0; i < l->prows; i++) {
            uint8_t *srow = t->scale + i * l->scale_cols;
            stored_ctx rc = c;
            if (row_scaled) {
                /* TE row_scaled_nvfp4: this row's own amax and global scale */
                t->row_amax[i] = tensor_amax(b + i * l->pcols, l->pcols, c.core->amax_nan_propagates);
                rc.global = global_of(c.core, &p->opts, t->row_amax[i]);
            }
            if (!l->tile16) row_scales(&rc, b + i * l->pcols, srow);
            row_encode(&rc, b + i * l->pcols, i, srow, t->data + i * row_bytes);
        });
    t->amax = amax;
}

nvfp4_status nvfp4_quant_reference(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    int nanprop = p->recipe->core.amax_nan_propagates;
    /* MX recipes have no global scale: nothing reads the tensor amax, so its
     * pass over the tensor is skipped */
    int uses_amax = p->recipe->core.global_rule != NVFP4_CORE_GLOBAL_NONE;
    float row_amax = 0.0f;
    int owned;
    if (p->has_row) {
        float *b = nvfp4_quant_stored_f32(p, x, false, &owned);
        if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", p->row.prows, p->row.pcols);
        row_amax = uses_amax ? tensor_amax(b, p->row.prows * p->row.pcols, nanprop) : 0.0f;
        quantize_stored(p, &p->row, b, row_amax, &out->row);
        if (owned) free(b);
    }
    if (p->has_col) {
        float *b = nvfp4_quant_stored_f32(p, x, true, &owned);
        if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", p->col.prows, p->col.pcols);
        if (p->opts.rht) rht_rows(p, b, p->col.prows, p->col.pcols);
        /* Without RHT the columnwise amax is the rowwise one (TE copies it);
         * with RHT it is taken after the transform. */
        float amax = (p->has_row && !p->opts.rht) ? row_amax
                     : uses_amax                  ? tensor_amax(b, p->col.prows * p->col.pcols, nanprop)
                                                  : 0.0f;
        quantize_stored(p, &p->col, b, amax, &out->col);
        free(b);
    }
    return NVFP4_OK;
}

void nvfp4_quant_reference_dequantize(const nvfp4_quantized *q, bool columnwise, float *out)
{
    const nvfp4_qtensor *t = columnwise ? &q->col : &q->row;
    const nvfp4_core_recipe *core = &q->recipe->core;
    nvfp4_core_global g0 = global_of(core, &q->opts, t->amax);
    int e4m3 = core->elem == NVFP4_CORE_ELEM_E4M3;
    int row_scaled = nvfp4_core_recipe_row_scaled(core) && t->row_amax;
    NVFP4_PAR_FOR_IF(t->rows * t->cols >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
        for (size_t i = 0; i < t->rows; i++) {
            nvfp4_core_global g = row_scaled ? global_of(core, &q->opts, t->row_amax[i]) : g0;
            for (size_t j = 0; j < t->cols; j++) {
                size_t k = i * t->pcols + j;
                uint8_t code = e4m3 ? t->data[k] : (uint8_t)((t->data[k >> 1] >> (4 * (k & 1u))) & 0xFu);
                uint8_t s = t->scale[i * t->scale_cols + j * t->scale_cols / t->pcols];
                out[i * t->cols + j] = nvfp4_core_dequant_value(core, &g, s, code);
            }
        });
}
