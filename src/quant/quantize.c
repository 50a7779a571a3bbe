/*
 * quantize.c - the library calls: nvfp4_quantize (plan, allocate, run) and
 * nvfp4_quantize_into (a plan and the caller's buffers), nvfp4_dequantize.
 * The result's shapes come from the plan alone (describe); a path only
 * writes bytes and amaxes: the fast CPU path where it handles the plan, the
 * scalar reference otherwise (quant_internal.h).
 */
#include <stdlib.h>
#include <string.h>

#include "quant/quant_internal.h"

/* One orientation's result as the plan lays it out, on the given buffers. */
static void describe(const nvfp4_quant_layout *l, bool rht, uint8_t *data, uint8_t *scale, nvfp4_qtensor *t)
{
    t->rows = l->rows;
    t->cols = l->cols;
    t->prows = l->prows;
    t->pcols = l->pcols;
    t->data = data;
    t->data_bytes = l->data_bytes;
    t->scale = scale;
    t->scale_rows = l->scale_rows;
    t->scale_cols = l->scale_cols;
    t->amax = 0.0f;
    t->rht = rht;
}

static nvfp4_status run(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err)
{
    /* the fast kernels derive te's S_enc themselves: a global scale handed inverted is the reference's */
    bool fast = nvfp4_quant_fast_handles(p) && !p->opts.global_scale_inverted;
    nvfp4_status st = fast ? nvfp4_quant_fast(p, x, out, err) : nvfp4_quant_reference(p, x, out, err);
    /* MX recipes have no global amax: the orientations report 0 */
    if (!st && !p->recipe->info.has_global_amax) out->row.amax = out->col.amax = 0.0f;
    return st;
}

/* Row-scaled recipes: one amax per stored row, always the library's own
 * (nvfp4_quantized_free releases it, borrowed or not). */
static nvfp4_status alloc_row_amax(const nvfp4_quant_plan *p, nvfp4_quantized *out, nvfp4_error *err)
{
    if (!nvfp4_core_recipe_row_scaled(&p->recipe->core)) return NVFP4_OK;
    if (p->has_row && !(out->row.row_amax = malloc(p->row.prows * sizeof(float))))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu row amaxes", p->row.prows);
    if (p->has_col && !(out->col.row_amax = malloc(p->col.prows * sizeof(float))))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu row amaxes", p->col.prows);
    return NVFP4_OK;
}

static void start_result(const nvfp4_quant_plan *p, nvfp4_quantized *out)
{
    memset(out, 0, sizeof *out);
    out->recipe = p->recipe;
    out->opts = p->opts;
    out->has_row = p->has_row;
    out->has_col = p->has_col;
}

nvfp4_status nvfp4_quantize_into(const nvfp4_quant_plan *p, const void *x, const nvfp4_quant_buffers *bufs,
                                 nvfp4_quantized *out, nvfp4_error *err)
{
    if (!out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_into: no output");
    memset(out, 0, sizeof *out);
    if (!p || !p->recipe) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_into: no plan");
    if (!x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_into: no input");
    if (!bufs || (p->has_row && (!bufs->row_data || !bufs->row_scale)) ||
        (p->has_col && (!bufs->col_data || !bufs->col_scale)))
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_into: an output buffer the plan needs is missing");
    start_result(p, out);
    out->borrowed = true;
    if (p->has_row) describe(&p->row, false, bufs->row_data, bufs->row_scale, &out->row);
    if (p->has_col) describe(&p->col, p->opts.rht, bufs->col_data, bufs->col_scale, &out->col);
    nvfp4_status st = alloc_row_amax(p, out, err);
    if (!st) st = run(p, x, out, err);
    if (st) nvfp4_quantized_free(out);
    return st;
}

nvfp4_status nvfp4_quantize(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                            const nvfp4_quant_opts *opts, nvfp4_quantized *out, nvfp4_error *err)
{
    if (!out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: no output");
    memset(out, 0, sizeof *out);
    if (!x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize: no input");
    nvfp4_quant_plan p;
    nvfp4_status st = nvfp4_quant_plan_init(&p, opts, dtype, rows, cols, err);
    if (st) return st;
    start_result(&p, out);
    /* every byte is written by the path (padding elements encode as codes) */
    if (p.has_row)
        describe(&p.row, false, nvfp4_quant_alloc_output(p.row.data_bytes),
                 nvfp4_quant_alloc_output(p.row.scale_rows * p.row.scale_cols), &out->row);
    if (p.has_col)
        describe(&p.col, p.opts.rht, nvfp4_quant_alloc_output(p.col.data_bytes),
                 nvfp4_quant_alloc_output(p.col.scale_rows * p.col.scale_cols), &out->col);
    if ((p.has_row && (!out->row.data || !out->row.scale)) || (p.has_col && (!out->col.data || !out->col.scale))) {
        const nvfp4_quant_layout *l = p.has_row ? &p.row : &p.col;
        st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu x %zu codes", l->prows, l->pcols);
    } else {
        st = alloc_row_amax(&p, out, err);
        if (!st) st = run(&p, x, out, err);
    }
    if (st) nvfp4_quantized_free(out);
    return st;
}

void nvfp4_quantized_free(nvfp4_quantized *q)
{
    if (!q) return;
    if (!q->borrowed) {
        free(q->row.data);
        free(q->row.scale);
        free(q->col.data);
        free(q->col.scale);
    }
    free(q->row.row_amax); /* the library's own even when borrowed */
    free(q->col.row_amax);
    memset(q, 0, sizeof *q);
}

nvfp4_status nvfp4_dequantize(const nvfp4_quantized *q, bool columnwise, float *out, nvfp4_error *err)
{
    if (!q || !out || !q->recipe) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_dequantize: missing argument");
    if (columnwise ? !q->has_col : !q->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_dequantize: the %s output was not computed",
                               columnwise ? "columnwise" : "rowwise");
    if (q->opts.global_scale_inverted || !nvfp4_quant_fast_dequantize(q, columnwise, out))
        nvfp4_quant_reference_dequantize(q, columnwise, out);
    return NVFP4_OK;
}
