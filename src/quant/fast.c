/*
 * fast.c - the fast CPU path: plans whose recipe is one of the chains the
 * vector kernels implement (src/core/recipe.h: NVFP4_CORE_CHAIN_TE with 1x16
 * or 16x16 blocks, the two MXFP4 chains with 1x32 blocks; every other
 * E2M1 recipe the generic driver supports (nvfp4_simd_gen_supports: the
 * E4M3-scaled NVFP4 recipes, te-pow2, the other MXFP4 recipes) with any
 * block shape and no RHT; RN or SR)
 * go to the plain-array drivers of src/simd/ when a vector variant is
 * active. Same
 * bytes as the reference path (tests/check_libpath.c compares them for every
 * configuration this file accepts); this file decides which driver runs and
 * with which counters and amaxes, and computes nothing itself.
 *
 * te: the drivers read the caller's fp32 or bf16 input directly (no fp32
 * copy), the input amax is taken once for both orientations (together with
 * the post-RHT amax when that needs a pass of its own), and each orientation
 * is one fused pass. Shapes that need padding get a zero-padded copy in the
 * input's own dtype and orientation first, which is what the reference path
 * quantizes too (zeros change no amax, and the stored orientation's row and
 * block indices, hence the SR counters, are those of the padded shape).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/recipe.h"
#include "quant/quant_internal.h"
#include "simd/simd_kernels.h"

static const nvfp4_core_recipe te_chain = NVFP4_CORE_CHAIN_TE;
static const nvfp4_core_recipe mx_floor_chain = NVFP4_CORE_CHAIN_MXFP4_FLOOR;
static const nvfp4_core_recipe mx_rceil_chain = NVFP4_CORE_CHAIN_MXFP4_RCEIL;

static int is_te_chain(const nvfp4_core_recipe *r) { return nvfp4_core_recipe_equal(r, &te_chain); }

/* Which MXFP4 rule (NVFP4_SIMD_MX_*) a descriptor is, or -1. */
static int mx_rule(const nvfp4_core_recipe *r)
{
    if (nvfp4_core_recipe_equal(r, &mx_floor_chain)) return NVFP4_SIMD_MX_FLOOR;
    if (nvfp4_core_recipe_equal(r, &mx_rceil_chain)) return NVFP4_SIMD_MX_RCEIL;
    return -1;
}

static bool handles_te(const nvfp4_quant_plan *p)
{
    return is_te_chain(&p->recipe->core) && (p->opts.block == NVFP4_BLOCK_1X16 || p->opts.block == NVFP4_BLOCK_16X16);
}

static bool handles_mx(const nvfp4_quant_plan *p)
{
    return mx_rule(&p->recipe->core) >= 0 && p->opts.block == NVFP4_BLOCK_1X32;
}

/* Every other recipe the generic driver implements (E2M1 elements, the
 * encode rules of nvfp4_simd_gen_supports), any block shape the plan
 * accepts, without RHT; nvfp4_quant_fast tries the two above first. */
static bool handles_generic(const nvfp4_quant_plan *p)
{
    return nvfp4_simd_gen_supports(&p->recipe->core) && !p->opts.rht;
}

bool nvfp4_quant_fast_handles(const nvfp4_quant_plan *p)
{
    if (nvfp4_simd_active() == NVFP4_SIMD_SCALAR) return false;
    if (p->opts.rounding != NVFP4_RN && p->opts.rounding != NVFP4_SR) return false;
    if (p->opts.rht && p->opts.block == NVFP4_BLOCK_16X16) return false; /* RHT on 16x16 tiles: reference path */
    return handles_te(p) || handles_mx(p) || handles_generic(p);
}

/* ---- te ----------------------------------------------------------------- */

/* x [rows, cols] of esize-byte elements, zero padded (+0 is all-zero bytes
 * in fp32 and bf16) to [prows, pcols]: every byte written. */
static void *padded_copy(const void *x, size_t esize, size_t rows, size_t cols, size_t prows, size_t pcols)
{
    unsigned char *b = nvfp4_quant_alloc_output(prows * pcols * esize);
    if (!b) return NULL;
    const unsigned char *src = x;
    size_t in_row = cols * esize, out_row = pcols * esize;
    NVFP4_PAR_FOR_IF(prows * pcols >= NVFP4_QUANT_PARALLEL_MIN, "omp parallel for schedule(static)",
        for (size_t i = 0; i < prows; i++) {
            unsigned char *dst = b + i * out_row;
            size_t copied = i < rows ? in_row : 0;
            if (copied) memcpy(dst, src + i * in_row, copied);
            memset(dst + copied, 0, out_row - copied);
        });
    return b;
}

/* The input as the drivers read it for one orientation: x itself, or a
 * padded copy of shape [in_rows, in_cols] (the stored orientation's padded
 * shape, untransposed), kept in *pad for the other orientation when its
 * shape is the same. */
typedef struct {
    void *buf;
    size_t rows, cols;
} pad_cache;

static const void *input_for(const nvfp4_quant_plan *p, const void *x, size_t in_rows, size_t in_cols, pad_cache *pad,
                             nvfp4_error *err, nvfp4_status *st)
{
    if (in_rows == p->rows && in_cols == p->cols) return x;
    if (pad->buf && pad->rows == in_rows && pad->cols == in_cols) return pad->buf;
    free(pad->buf);
    size_t esize = p->dtype == NVFP4_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    pad->buf = padded_copy(x, esize, p->rows, p->cols, in_rows, in_cols);
    pad->rows = in_rows;
    pad->cols = in_cols;
    if (!pad->buf) *st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", in_rows, in_cols);
    return pad->buf;
}

/* The columnwise job over an input of [rows, cols] (rows % 16 == 0): the key
 * lives in *sr, which must outlive the job. */
static void col_job_setup(const nvfp4_quant_plan *p, const void *x, size_t rows, size_t cols, nvfp4_simd_col_job *j,
                          nvfp4_simd_sr *sr)
{
    memset(j, 0, sizeof *j);
    sr->seed = p->opts.seed;
    sr->offset = p->col.sr_offset;
    j->x = x;
    j->bf16 = p->dtype == NVFP4_DTYPE_BF16;
    j->rows = rows;
    j->cols = cols;
    j->sr = p->opts.rounding == NVFP4_SR ? sr : NULL;
    j->tile16 = p->col.tile16;
    j->rht = p->opts.rht;
    if (p->opts.rht) {
        memcpy(j->rht_mask, p->rht_mask, sizeof j->rht_mask);
        j->rht_round_bf16 = !p->opts.rht_fp32;
    }
}

/* Whether the RHT columnwise output transforms twice (too large to keep
 * its transform): asked of the driver once per tensor, for the columnwise
 * job te_fast runs (the input padded to [pcols, prows]). */
static int te_rht_twice(const nvfp4_quant_plan *p)
{
    if (!p->has_col || !p->opts.rht) return 0;
    nvfp4_simd_col_job j;
    nvfp4_simd_sr sr;
    col_job_setup(p, NULL, p->col.pcols, p->col.prows, &j, &sr);
    return nvfp4_simd_rht_transforms_twice(&j);
}

/* The input amax, and when the RHT transforms twice on an unpadded input
 * with both orientations the post-RHT amax from the same pass over the
 * input (*have_rht set). */
static float te_amaxes(const nvfp4_quant_plan *p, const void *x, int rht_twice, float *rht_amax, int *have_rht)
{
    int bf16 = p->dtype == NVFP4_DTYPE_BF16;
    *have_rht = 0;
    if (rht_twice && p->has_row && p->col.pcols == p->rows && p->col.prows == p->cols) {
        nvfp4_simd_col_job j;
        nvfp4_simd_sr sr;
        col_job_setup(p, x, p->rows, p->cols, &j, &sr);
        float input_amax = 0.0f;
        *rht_amax = nvfp4_simd_rht_amax_and_input_amax(&j, &input_amax);
        *have_rht = 1;
        return input_amax;
    }
    return (p->has_row || !p->opts.rht) ? nvfp4_simd_amax(x, bf16, p->rows * p->cols) : 0.0f;
}

/* Bytes of one strip's padded input (te_columnwise_strips): small next to any tensor worth striping. */
#define COL_STRIP_BYTES ((size_t)4 << 20)

/* Whether the columnwise output is computed in strips of input columns: when the input needs padding
 * that no buffer already holds (the rowwise pass may have made the same one), in RN without RHT. SR
 * keys each block by its index in the whole output and the RHT amax is taken over the whole transform
 * first; a strip's job knows neither, so those keep the padded copy. */
static bool col_in_strips(const nvfp4_quant_plan *p, const pad_cache *pad)
{
    const nvfp4_quant_layout *l = &p->col;
    if (l->pcols == p->rows && l->prows == p->cols) return false; /* x itself is read */
    if (pad->buf && pad->rows == l->pcols && pad->cols == l->prows) return false;
    return p->opts.rounding == NVFP4_RN && !p->opts.rht;
}

/* The columnwise output of an input that needs padding, in strips of input columns, each padded into one
 * small buffer, instead of a padded copy of the whole input (for a 1 x N input padded to 16 rows, 16
 * times the input). The strip [c0, c0 + w) of the padded [pcols, prows] input is stored rows c0..c0+w:
 * contiguous codes and scales at row c0 of the output; every block is computed from the same 16 values
 * with the same tensor amax as from the whole copy, so the bytes are the same. */
static nvfp4_status te_columnwise_strips(const nvfp4_quant_plan *p, const void *x, float amax, nvfp4_qtensor *t,
                                         nvfp4_error *err)
{
    const nvfp4_quant_layout *l = &p->col;
    size_t in_rows = l->pcols, in_cols = l->prows; /* the padded input */
    size_t esize = p->dtype == NVFP4_DTYPE_BF16 ? sizeof(uint16_t) : sizeof(float);
    size_t strip = COL_STRIP_BYTES / (in_rows * esize) / 16 * 16;
    if (strip < 16) strip = 16;
    if (strip > in_cols) strip = in_cols;
    unsigned char *buf = nvfp4_quant_alloc_output(in_rows * strip * esize);
    if (!buf) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", in_rows, strip);
    const unsigned char *src = x;
    for (size_t c0 = 0; c0 < in_cols; c0 += strip) {
        size_t w = in_cols - c0 < strip ? in_cols - c0 : strip;
        size_t have = c0 < p->cols ? (p->cols - c0 < w ? p->cols - c0 : w) : 0; /* columns of x in the strip */
        for (size_t i = 0; i < in_rows; i++) {
            unsigned char *dst = buf + i * w * esize;
            size_t copied = i < p->rows ? have * esize : 0;
            if (copied) memcpy(dst, src + (i * p->cols + c0) * esize, copied);
            memset(dst + copied, 0, w * esize - copied);
        }
        nvfp4_simd_col_job j;
        nvfp4_simd_sr sr;
        col_job_setup(p, buf, in_rows, w, &j, &sr);
        j.data = t->data + c0 * (in_rows / 2);
        j.scale = t->scale + c0 * (in_rows / 16);
        nvfp4_simd_te_consts_init(&j.k, amax);
        nvfp4_simd_te_columnwise(&j);
    }
    free(buf);
    t->amax = amax;
    return NVFP4_OK;
}

static nvfp4_status te_fast(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    int bf16 = p->dtype == NVFP4_DTYPE_BF16;
    float rht_amax = 0.0f;
    int have_rht_amax;
    int rht_twice = te_rht_twice(p);
    float amax = te_amaxes(p, x, rht_twice, &rht_amax, &have_rht_amax);
    pad_cache pad = {NULL, 0, 0};

    if (p->has_row) {
        const nvfp4_quant_layout *l = &p->row;
        const void *src = input_for(p, x, l->prows, l->pcols, &pad, err, &st);
        if (!src) goto done;
        nvfp4_simd_sr sr = {p->opts.seed, l->sr_offset};
        nvfp4_simd_te_rowwise(src, bf16, l->prows, l->pcols, amax, l->tile16, p->opts.rounding == NVFP4_SR ? &sr : NULL,
                              out->row.data, out->row.scale);
        out->row.amax = amax;
    }
    if (p->has_col && col_in_strips(p, &pad)) {
        st = te_columnwise_strips(p, x, amax, &out->col, err);
    } else if (p->has_col) {
        /* stored [prows, pcols] = the transpose of the input padded to [pcols, prows] */
        const nvfp4_quant_layout *l = &p->col;
        const void *src = input_for(p, x, l->pcols, l->prows, &pad, err, &st);
        if (!src) goto done;
        nvfp4_simd_col_job j;
        nvfp4_simd_sr sr;
        col_job_setup(p, src, l->pcols, l->prows, &j, &sr);
        j.data = out->col.data;
        j.scale = out->col.scale;
        if (!p->opts.rht || have_rht_amax) {
            float a = p->opts.rht ? rht_amax : amax;
            nvfp4_simd_te_consts_init(&j.k, a);
            nvfp4_simd_te_columnwise(&j); /* with RHT: transforms as it quantizes */
            out->col.amax = a;
        } else {
            out->col.amax = nvfp4_simd_te_columnwise_rht(&j, rht_twice); /* amax after the transform */
        }
    }
done:
    free(pad.buf);
    return st;
}

/* ---- MXFP4 -------------------------------------------------------------- */

static nvfp4_status mx_orientation(const nvfp4_quant_plan *p, const void *x, bool columnwise, nvfp4_qtensor *t,
                                   nvfp4_error *err)
{
    const nvfp4_quant_layout *l = columnwise ? &p->col : &p->row;
    int owned;
    float *b = nvfp4_quant_stored_f32(p, x, columnwise, &owned);
    if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", l->prows, l->pcols);
    nvfp4_simd_sr sr = {p->opts.seed, l->sr_offset};
    nvfp4_simd_mx_rowwise(b, l->prows, l->pcols, mx_rule(&p->recipe->core), p->opts.rounding == NVFP4_SR ? &sr : NULL,
                          t->data, t->scale);
    if (owned) free(b);
    t->amax = 0.0f;
    return NVFP4_OK;
}

static nvfp4_status mx_fast(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    if (p->has_row) st = mx_orientation(p, x, false, &out->row, err);
    if (!st && p->has_col) st = mx_orientation(p, x, true, &out->col, err);
    return st;
}

/* ---- the other E4M3-scaled recipes ---------------------------------------- */

/* One orientation through the generic driver on the stored fp32 buffer
 * (the reference's own: x itself for unpadded fp32 rowwise). *amax: the
 * tensor amax to use, or -1 to take it from this buffer. */
static nvfp4_status generic_orientation(const nvfp4_quant_plan *p, const void *x, bool columnwise, float *amax,
                                        nvfp4_qtensor *t, nvfp4_error *err)
{
    const nvfp4_core_recipe *r = &p->recipe->core;
    const nvfp4_quant_layout *l = columnwise ? &p->col : &p->row;
    int owned;
    float *b = nvfp4_quant_stored_f32(p, x, columnwise, &owned);
    if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a %zu x %zu buffer", l->prows, l->pcols);
    /* as reference.c: MX-like recipes without a global scale read no amax;
     * without RHT the columnwise amax is the rowwise one */
    if (*amax < 0.0f)
        *amax = r->global_rule == NVFP4_CORE_GLOBAL_NONE
                    ? 0.0f
                    : nvfp4_simd_gen_tensor_amax(b, l->prows * l->pcols, r->amax_nan_propagates);
    nvfp4_simd_sr sr = {p->opts.seed, l->sr_offset};
    nvfp4_simd_gen_job j = {r,         b,        l->prows, l->pcols, l->block_len, l->tile16, *amax,
                            p->opts.rounding == NVFP4_SR ? &sr : NULL, t->data,  t->scale, t->row_amax};
    int rc = nvfp4_simd_gen_quantize(&j);
    if (owned) free(b);
    if (rc) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for the quantizer's row buffers");
    t->amax = *amax;
    return NVFP4_OK;
}

static nvfp4_status generic_fast(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    float amax = -1.0f;
    if (p->has_row) st = generic_orientation(p, x, false, &amax, &out->row, err);
    if (!st && p->has_col) st = generic_orientation(p, x, true, &amax, &out->col, err);
    return st;
}

nvfp4_status nvfp4_quant_fast(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    if (handles_te(p)) return te_fast(p, x, out, err);
    if (handles_mx(p)) return mx_fast(p, x, out, err);
    return generic_fast(p, x, out, err);
}

/* Whether every te dequantized value of t is finite: the amax times the
 * largest scale (448) does not overflow and no scale byte is E4M3's NaN. A
 * NaN must come out as the canonical one (nvfp4_core_dequant_scaled), which
 * the SIMD leaves do not write, so such tensors take the reference path. */
static bool dequant_is_finite(const nvfp4_qtensor *t)
{
    if (!isfinite(t->amax * 448.0f)) return false;
    for (size_t i = 0; i < t->rows * t->scale_cols; i++)
        if ((t->scale[i] & 0x7Fu) == 0x7Fu) return false;
    return true;
}

int nvfp4_quant_fast_dequantize(const nvfp4_quantized *q, bool columnwise, float *out)
{
    const nvfp4_qtensor *t = columnwise ? &q->col : &q->row;
    if (nvfp4_simd_active() == NVFP4_SIMD_SCALAR || !is_te_chain(&q->recipe->core)) return 0;
    if (t->prows != t->rows || t->pcols != t->cols || t->cols % 16 != 0 || t->scale_cols != t->cols / 16) return 0;
    if (!dequant_is_finite(t)) return 0;
    nvfp4_simd_te_dequantize(t->data, t->scale, t->rows, t->cols, t->amax, out);
    return 1;
}
