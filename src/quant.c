/*
 * quant.c - tensor quantization: option resolution, then one of two paths.
 * The reference path builds the stored-orientation buffers (transpose, zero
 * padding, RHT), takes global and block amaxes and runs the row loops that
 * call the kernels of quant_kernels.h, which evaluate the recipe math of
 * src/core/recipe.h. The fast path (te chain with vector kernels active,
 * docs/performance.md) hands the caller's input to the whole-tensor drivers
 * of src/simd, which compute the same bytes. Normative description:
 * docs/semantics.md ("Recipes", "Tensor layout", "Stochastic rounding").
 *
 * Determinism: every row of the stored orientation is computed from its own
 * data, its scale bytes and its row index alone, and amaxes are exact
 * maxima, so neither the OpenMP thread count nor the schedule changes a
 * byte.
 */
#include "nvfp4/quant.h"

#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "quant_kernels.h"
#include "simd/simd_hook.h"
#include "quant_rht.h"
#include "recipes/recipe.h"

#define PARALLEL_MIN_ELEMS 32768

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

/* ---- option checks ------------------------------------------------------ */

static size_t block_len_of(nvfp4_block b) { return b == NVFP4_BLOCK_1X32 ? 32 : 16; }

static nvfp4_status resolve_opts(const nvfp4_quant_opts *in, const nvfp4_recipe **rp, nvfp4_quant_opts *o,
                                 nvfp4_error *err)
{
    if (in) *o = *in;
    else nvfp4_quant_opts_init(o);
    const nvfp4_recipe *r = nvfp4_recipe_find(o->recipe);
    if (!r) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%s' (see nvfp4_recipe_at for the list)", o->recipe);
    o->recipe = r->info.name;
    if (o->block == NVFP4_BLOCK_DEFAULT) o->block = r->info.default_block;
    if (o->block != NVFP4_BLOCK_1X16 && o->block != NVFP4_BLOCK_16X16 && o->block != NVFP4_BLOCK_1X32)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown block shape %d", (int)o->block);
    if (o->rounding != NVFP4_RN && o->rounding != NVFP4_RZ && o->rounding != NVFP4_SR)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown rounding mode %d", (int)o->rounding);
    if (o->rounding != NVFP4_RN && !r->info.supports_sr)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' supports round-to-nearest only (asked: %s)",
                               r->info.name, nvfp4_rounding_name(o->rounding));
    if (!o->rowwise && !o->columnwise) o->rowwise = true;
    if (o->rht) {
        if (!o->columnwise)
            return nvfp4_error_set(err, NVFP4_EINVAL, "RHT applies to the columnwise output, which was not asked for");
        if (o->block != NVFP4_BLOCK_1X16)
            return nvfp4_error_set(err, NVFP4_EINVAL, "RHT needs 1x16 blocks (asked: %s)", nvfp4_block_name(o->block));
        if (o->rht_signs != NVFP4_RHT_SIGNS_TE && o->rht_signs != NVFP4_RHT_SIGNS_SEEDED &&
            o->rht_signs != NVFP4_RHT_SIGNS_NONE)
            return nvfp4_error_set(err, NVFP4_EINVAL, "unknown RHT sign choice %d", (int)o->rht_signs);
    }
    *rp = r;
    return NVFP4_OK;
}

static size_t roundup(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* Padded stored shape of one orientation (srows x scols as stored), or an
 * NVFP4_ESHAPE error naming the dimension. */
static nvfp4_status stored_shape(const nvfp4_quant_opts *o, size_t srows, size_t scols, const char *what,
                                 size_t *prows, size_t *pcols, nvfp4_error *err)
{
    size_t bl = block_len_of(o->block);
    int two_d = o->block == NVFP4_BLOCK_16X16;
    *prows = two_d ? roundup(srows, 16) : srows;
    *pcols = roundup(scols, bl);
    if (*prows < srows || *pcols < scols) return nvfp4_error_set(err, NVFP4_ENOMEM, "tensor shape overflows size_t");
    if (!o->pad && (*pcols != scols || *prows != srows)) {
        if (two_d)
            return nvfp4_error_set(err, NVFP4_ESHAPE,
                                   "%s: %zu x %zu is not a multiple of the 16x16 block in both dimensions "
                                   "(set the pad option to zero-pad)", what, srows, scols);
        return nvfp4_error_set(err, NVFP4_ESHAPE,
                               "%s: the block dimension %zu is not a multiple of the block length %zu "
                               "(set the pad option to zero-pad)", what, scols, bl);
    }
    return NVFP4_OK;
}

/* ---- stored-orientation buffers ----------------------------------------- */

static float load(const void *x, nvfp4_dtype dt, size_t i)
{
    if (dt == NVFP4_DTYPE_BF16) return nvfp4_core_bf16_decode(((const uint16_t *)x)[i]);
    return ((const float *)x)[i];
}

/* The rowwise stored tensor: x itself when it is fp32 and needs no padding,
 * otherwise a padded fp32 copy (bf16 widens exactly). */
static float *rowwise_buffer(const void *x, nvfp4_dtype dt, size_t rows, size_t cols, size_t prows, size_t pcols,
                             int *owned)
{
    *owned = 0;
    if (dt == NVFP4_DTYPE_F32 && rows == prows && cols == pcols) return (float *)(uintptr_t)x;
    float *b = calloc(prows * pcols, sizeof *b);
    if (!b) return NULL;
    *owned = 1;
#pragma omp parallel for schedule(static) if (rows * cols >= PARALLEL_MIN_ELEMS)
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) b[i * pcols + j] = load(x, dt, i * cols + j);
    return b;
}

/* The columnwise stored tensor: the transpose, zero padded. */
static float *columnwise_buffer(const void *x, nvfp4_dtype dt, size_t rows, size_t cols, size_t prows, size_t pcols)
{
    float *b = calloc(prows * pcols, sizeof *b);
    if (!b) return NULL;
#pragma omp parallel for schedule(static) if (rows * cols >= PARALLEL_MIN_ELEMS)
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++) b[j * pcols + i] = load(x, dt, i * cols + j);
    return b;
}

/* Tensor amax with the recipe's NaN rule (a canonical quiet NaN when a NaN
 * element propagates). */
static float tensor_amax(const float *b, size_t n, int nanprop)
{
    if (nanprop) {
        int any_nan = 0;
#pragma omp parallel for reduction(| : any_nan) schedule(static) if (n >= PARALLEL_MIN_ELEMS)
        for (size_t i = 0; i < n; i++) any_nan |= nvfp4_core_isnan(b[i]);
        if (any_nan) return nvfp4_core_f32_from_bits(0x7FC00000u);
    }
    if (!nvfp4_quant_kernels_scalar_forced()) return nvfp4_simd_amax(b, 0, n);
    return nvfp4_amax_f32(b, n);
}

/* ---- one orientation ---------------------------------------------------- */

static void tile_scales(const nvfp4_qk_ctx *c, const float *b, size_t prows, uint8_t *scale)
{
    size_t nbc = c->cols / 16, ntr = prows / 16;
    int nanprop = c->core->amax_nan_propagates;
#pragma omp parallel for schedule(static) if (prows * c->cols >= PARALLEL_MIN_ELEMS)
    for (size_t t = 0; t < ntr * nbc; t++) {
        size_t ti = t / nbc, tj = t % nbc;
        float amax = 0.0f;
        for (size_t r = 0; r < 16; r++)
            for (size_t k = 0; k < 16; k++) amax = nvfp4_core_amax_step(amax, b[(ti * 16 + r) * c->cols + tj * 16 + k], nanprop);
        uint8_t s = nvfp4_core_block_scale(c->core, &c->global, amax);
        for (size_t r = 0; r < 16; r++) scale[(ti * 16 + r) * nbc + tj] = s;
    }
}

static nvfp4_status quantize_stored(const nvfp4_recipe *rc, const nvfp4_quant_opts *o, const float *b, size_t rows,
                                    size_t cols, size_t prows, size_t pcols, float amax, uint64_t sr_offset,
                                    nvfp4_qtensor *t, nvfp4_error *err)
{
    const nvfp4_core_recipe *core = &rc->core;
    nvfp4_qk_ctx c;
    c.core = core;
    c.global = nvfp4_core_global_from_amax(core, amax);
    c.mode = o->rounding == NVFP4_SR ? NVFP4_CORE_SR : (o->rounding == NVFP4_RZ ? NVFP4_CORE_RZ : NVFP4_CORE_RN);
    c.seed = o->seed;
    c.offset = sr_offset;
    c.cols = pcols;
    c.block_len = block_len_of(o->block);

    int e4m3 = core->elem == NVFP4_CORE_ELEM_E4M3;
    size_t n = prows * pcols;
    t->rows = rows;
    t->cols = cols;
    t->prows = prows;
    t->pcols = pcols;
    t->data_bytes = e4m3 ? n : n / 2;
    t->scale_rows = prows;
    t->scale_cols = pcols / c.block_len;
    t->amax = rc->info.has_global_amax ? amax : 0.0f;
    size_t scale_bytes = t->scale_rows * t->scale_cols;
    /* every byte is written below (padding elements encode as codes) */
    t->data = nvfp4_quant_alloc_output(t->data_bytes);
    t->scale = nvfp4_quant_alloc_output(scale_bytes);
    if (!t->data || !t->scale) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu x %zu codes", prows, pcols);

    const nvfp4_quant_kernels *k = nvfp4_quant_kernels_select(&c);
    int two_d = o->block == NVFP4_BLOCK_16X16;
    if (two_d) tile_scales(&c, b, prows, t->scale);
    size_t row_bytes = e4m3 ? pcols : pcols / 2;
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ELEMS)
    for (size_t i = 0; i < prows; i++) {
        uint8_t *srow = t->scale + i * t->scale_cols;
        if (!two_d) k->row_scales(&c, b + i * pcols, srow);
        k->row_encode(&c, b + i * pcols, i, srow, t->data + i * row_bytes);
    }
    return NVFP4_OK;
}

/* The reference path: the stored orientation as an fp32 buffer (transposed,
 * padded, RHT'd as asked), then the row kernels of quant_kernels.h (the
 * vector ones where nvfp4_quant_kernels_select has them), plus the fused
 * columnwise hook for unpadded shapes. Buffers already attached to out are
 * released by the caller on error. */
static nvfp4_status quantize_reference(const nvfp4_recipe *rc, const nvfp4_quant_opts *po, const void *x,
                                       nvfp4_dtype dtype, size_t rows, size_t cols, size_t rpr, size_t rpc,
                                       size_t cpr, size_t cpc, nvfp4_quantized *out, nvfp4_error *err)
{
    const nvfp4_quant_opts o = *po;
    nvfp4_status st = NVFP4_OK;
    int nanprop = rc->core.amax_nan_propagates;
    /* MX recipes have no global scale: nothing reads the tensor amax (the
     * orientations store 0), so its pass over the tensor is skipped */
    int uses_amax = rc->core.global_rule != NVFP4_CORE_GLOBAL_NONE;
    float row_amax = 0.0f;
    int have_row_amax = 0;

    if (o.rowwise) {
        int owned = 0;
        float *b = rowwise_buffer(x, dtype, rows, cols, rpr, rpc, &owned);
        if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", rpr, rpc);
        row_amax = uses_amax ? tensor_amax(b, rpr * rpc, nanprop) : 0.0f;
        have_row_amax = 1;
        st = quantize_stored(rc, &o, b, rows, cols, rpr, rpc, row_amax, o.offset, &out->row, err);
        if (owned) free(b);
        out->has_row = true;
        if (st) return st;
    }
    if (o.columnwise && !nvfp4_quant_kernels_scalar_forced() &&
        nvfp4_simd_quantize_columnwise(&rc->core, x, dtype, rows, cols, &o, have_row_amax && !o.rht ? &row_amax : NULL,
                                       &out->col, &st, err)) {
        /* the fused transpose(+RHT)+quantize pass of src/simd handled it */
        out->has_col = true;
        out->col.rht = o.rht;
        return st;
    }
    if (o.columnwise) {
        float *b = columnwise_buffer(x, dtype, rows, cols, cpr, cpc);
        if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", cpr, cpc);
        if (o.rht && (st = nvfp4_quant_rht_rows(&o, b, cpr, cpc, err))) {
            free(b);
            return st;
        }
        /* Without RHT the columnwise amax is the rowwise one (TE copies it);
         * with RHT it is taken after the transform. */
        float amax = (have_row_amax && !o.rht) ? row_amax : uses_amax ? tensor_amax(b, cpr * cpc, nanprop) : 0.0f;
        uint64_t off = o.offset + (block_len_of(o.block) == 32 ? 2u : 1u);
        st = quantize_stored(rc, &o, b, cols, rows, cpr, cpc, amax, off, &out->col, err);
        free(b);
        out->has_col = true;
        out->col.rht = o.rht;
    }
    return st;
}

/* x [rows, cols] of esize-byte elements, zero padded (+0 is all-zero bytes
 * in fp32 and bf16) to [prows, pcols]: every byte written. */
static void *padded_copy(const void *x, size_t esize, size_t rows, size_t cols, size_t prows, size_t pcols)
{
    unsigned char *b = nvfp4_quant_alloc_output(prows * pcols * esize);
    if (!b) return NULL;
    const unsigned char *src = x;
    size_t in_row = cols * esize, out_row = pcols * esize;
#pragma omp parallel for schedule(static) if (prows * pcols >= PARALLEL_MIN_ELEMS)
    for (size_t i = 0; i < prows; i++) {
        unsigned char *dst = b + i * out_row;
        size_t copied = i < rows ? in_row : 0;
        if (copied) memcpy(dst, src + i * in_row, copied);
        memset(dst + copied, 0, out_row - copied);
    }
    return b;
}

/* The fast path for configurations nvfp4_simd_te_handles accepts: the
 * whole-tensor drivers of src/simd read the caller's fp32 or bf16 input
 * directly (no fp32 copy), the input amax is taken once for both
 * orientations (together with the post-RHT amax when that needs a pass of
 * its own), and each orientation is one fused pass. Shapes that need
 * padding get a zero-padded copy in the input's own dtype and orientation
 * first, which is what the reference path quantizes too (zeros change no
 * amax, and the stored orientation's row and block indices, hence the SR
 * counters, are those of the padded shape). Same bytes as
 * quantize_reference (tests/check_libpath.c). */
static nvfp4_status quantize_te_fast(const nvfp4_recipe *rc, const nvfp4_quant_opts *o, const void *x,
                                     nvfp4_dtype dtype, size_t rows, size_t cols, size_t rpr, size_t rpc,
                                     size_t cpr, size_t cpc, nvfp4_quantized *out, nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    int bf16 = dtype == NVFP4_DTYPE_BF16;
    size_t esize = bf16 ? sizeof(uint16_t) : sizeof(float);
    /* The columnwise RHT output takes its amax after the transform. With
     * both outputs on a large unpadded input, one pass gives both amaxes
     * (the RHT one otherwise costs a pass of its own). */
    float amax = 0.0f, rht_amax = 0.0f;
    int have_rht_amax = o->rowwise && o->columnwise && o->rht && cpc == rows && cpr == cols &&
                        nvfp4_simd_te_amaxes_for_rht(&rc->core, x, dtype, rows, cols, o, &amax, &rht_amax);
    if (!have_rht_amax && (o->rowwise || !o->rht)) amax = nvfp4_simd_amax(x, bf16, rows * cols);
    const float *col_amax = !o->rht ? &amax : have_rht_amax ? &rht_amax : NULL;
    void *pad = NULL;
    size_t pad_rows = 0, pad_cols = 0;

    if (o->rowwise) {
        const void *src = x;
        if (rpr != rows || rpc != cols) {
            if (!(pad = padded_copy(x, esize, rows, cols, rpr, rpc)))
                return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", rpr, rpc);
            src = pad;
            pad_rows = rpr;
            pad_cols = rpc;
        }
        out->has_row = true;
        if (!nvfp4_simd_quantize_rowwise(&rc->core, src, dtype, rpr, rpc, o, amax, &out->row, &st, err))
            st = nvfp4_error_set(err, NVFP4_EUNSUPPORTED,
                                 "nvfp4_quantize: internal: the fast rowwise path refused %zu x %zu", rpr, rpc);
        out->row.rows = rows;
        out->row.cols = cols;
        if (st) goto done;
    }
    if (o->columnwise) {
        /* stored [cpr, cpc] = the transpose of the input padded to [cpc, cpr] */
        const void *src = x;
        if (cpc != rows || cpr != cols) {
            if (pad_rows != cpc || pad_cols != cpr) {
                free(pad);
                pad_rows = pad_cols = 0;
                if (!(pad = padded_copy(x, esize, rows, cols, cpc, cpr))) {
                    st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", cpc, cpr);
                    goto done;
                }
            }
            src = pad;
        }
        out->has_col = true;
        out->col.rht = o->rht;
        if (!nvfp4_simd_quantize_columnwise(&rc->core, src, dtype, cpc, cpr, o, col_amax, &out->col, &st, err))
            st = nvfp4_error_set(err, NVFP4_EUNSUPPORTED,
                                 "nvfp4_quantize: internal: the fast columnwise path refused %zu x %zu", cpr, cpc);
        out->col.rows = cols;
        out->col.cols = rows;
    }
done:
    free(pad);
    if (!st && !rc->info.has_global_amax) out->row.amax = out->col.amax = 0.0f; /* as quantize_stored */
    return st;
}

void nvfp4_quantized_free(nvfp4_quantized *q)
{
    if (!q) return;
    free(q->row.data);
    free(q->row.scale);
    free(q->col.data);
    free(q->col.scale);
    memset(q, 0, sizeof *q);
}

nvfp4_status nvfp4_quantize(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                            const nvfp4_quant_opts *opts, nvfp4_quantized *out, nvfp4_error *err)
{
    if (!out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: no output");
    memset(out, 0, sizeof *out);
    if (!x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: no input");
    if (dtype != NVFP4_DTYPE_F32 && dtype != NVFP4_DTYPE_BF16)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: unknown input dtype %d", (int)dtype);
    if (rows == 0 || cols == 0)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "nvfp4_quantize: empty tensor (%zu x %zu)", rows, cols);

    const nvfp4_recipe *rc = NULL;
    nvfp4_quant_opts o;
    nvfp4_status st = resolve_opts(opts, &rc, &o, err);
    if (st) return st;

    size_t rpr = 0, rpc = 0, cpr = 0, cpc = 0, n;
    if (!nvfp4_mul_size(rows, cols, &n) || n > (SIZE_MAX / 8))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "tensor of %zu x %zu elements overflows size_t", rows, cols);
    if (o.rowwise && (st = stored_shape(&o, rows, cols, "rowwise", &rpr, &rpc, err))) return st;
    if (o.columnwise && (st = stored_shape(&o, cols, rows, "columnwise", &cpr, &cpc, err))) return st;
    if ((rpr && rpc > SIZE_MAX / 8 / rpr) || (cpr && cpc > SIZE_MAX / 8 / cpr))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "padded tensor overflows size_t");

    out->recipe = rc;
    out->opts = o;
    if (!nvfp4_quant_kernels_scalar_forced() && nvfp4_simd_te_handles(&rc->core, &o))
        st = quantize_te_fast(rc, &o, x, dtype, rows, cols, rpr, rpc, cpr, cpc, out, err);
    else
        st = quantize_reference(rc, &o, x, dtype, rows, cols, rpr, rpc, cpr, cpc, out, err);
    if (st) nvfp4_quantized_free(out);
    return st;
}

nvfp4_status nvfp4_dequantize(const nvfp4_quantized *q, bool columnwise, float *out, nvfp4_error *err)
{
    if (!q || !out || !q->recipe) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_dequantize: missing argument");
    if (columnwise ? !q->has_col : !q->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_dequantize: the %s output was not computed",
                               columnwise ? "columnwise" : "rowwise");
    if (!nvfp4_quant_kernels_scalar_forced() && nvfp4_simd_dequantize(q, columnwise, out)) return NVFP4_OK;
    const nvfp4_qtensor *t = columnwise ? &q->col : &q->row;
    const nvfp4_core_recipe *core = &q->recipe->core;
    nvfp4_core_global g = nvfp4_core_global_from_amax(core, t->amax);
    int e4m3 = core->elem == NVFP4_CORE_ELEM_E4M3;
#pragma omp parallel for schedule(static) if (t->rows * t->cols >= PARALLEL_MIN_ELEMS)
    for (size_t i = 0; i < t->rows; i++) {
        for (size_t j = 0; j < t->cols; j++) {
            size_t k = i * t->pcols + j;
            uint8_t code = e4m3 ? t->data[k] : (uint8_t)((t->data[k >> 1] >> (4 * (k & 1u))) & 0xFu);
            uint8_t s = t->scale[i * t->scale_cols + j * t->scale_cols / t->pcols];
            out[i * t->cols + j] = nvfp4_core_dequant_elem(core, nvfp4_core_dequant_scale(core, &g, s), code);
        }
    }
    return NVFP4_OK;
}
