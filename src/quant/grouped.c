/*
 * grouped.c - grouped (MoE) quantization (nvfp4/grouped.h): one plan per
 * group, each group quantized by nvfp4_quantize_into straight into its rows
 * of the stacked outputs, so a group's bytes are by construction those of
 * nvfp4_quantize on its rows alone. No rounding happens here; this file
 * only places bytes (the stacked rows, the per-group 128x4 segments).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/grouped.h"

#include "quant/quant_internal.h"

/* ---- the layout of the stacked outputs ---------------------------------- */

size_t nvfp4_grouped_segment_offset(const size_t *m_sizes, size_t i, size_t scale_cols)
{
    size_t off = 0;
    for (size_t g = 0; g < i; g++)
        if (m_sizes[g]) off += nvfp4_swizzled_size(m_sizes[g], scale_cols);
    return off;
}

size_t nvfp4_grouped_swizzled_size(const size_t *m_sizes, size_t ngroups, size_t scale_cols)
{
    size_t total = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (!m_sizes[g]) continue;
        size_t seg = nvfp4_swizzled_size(m_sizes[g], scale_cols);
        if (!seg || total > SIZE_MAX - seg) return 0;
        total += seg;
    }
    return total;
}

void nvfp4_grouped_scale_swizzle(const uint8_t *linear, const size_t *m_sizes, size_t ngroups, size_t scale_cols,
                                 uint8_t *swz)
{
    size_t row = 0, off = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (!m_sizes[g]) continue;
        nvfp4_scale_swizzle(linear + row * scale_cols, m_sizes[g], scale_cols, swz + off);
        row += m_sizes[g];
        off += nvfp4_swizzled_size(m_sizes[g], scale_cols);
    }
}

/* ---- group sizes as text ------------------------------------------------- */

nvfp4_status nvfp4_grouped_sizes_parse(const char *text, const char *what, size_t **m_sizes, size_t *ngroups,
                                       nvfp4_error *err)
{
    *m_sizes = NULL;
    *ngroups = 0;
    if (!text || !*text) return nvfp4_error_set(err, NVFP4_EINVAL, "%s: no group sizes (expected M1,M2,...)", what);
    size_t n = 1;
    for (const char *p = text; *p; p++) n += *p == ',';
    size_t *m = calloc(n, sizeof *m);
    if (!m) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory for %zu group sizes", what, n);
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        char *end = (char *)p;
        unsigned long long v = 0;
        errno = 0;
        if (*p >= '0' && *p <= '9') v = strtoull(p, &end, 10); /* no sign, no blank: strtoull would take them */
        if (end == p || errno || (*end != ',' && *end) || v > SIZE_MAX) {
            free(m);
            return nvfp4_error_set(err, NVFP4_EINVAL,
                                   "%s: group size %zu of '%s' is not a row count (expected M1,M2,... with "
                                   "decimal integers >= 0)", what, i + 1, text);
        }
        m[i] = (size_t)v;
        p = end + (*end == ',');
    }
    *m_sizes = m;
    *ngroups = n;
    return NVFP4_OK;
}

bool nvfp4_grouped_sizes_format(const size_t *m_sizes, size_t ngroups, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (size_t g = 0; g < ngroups; g++) {
        int k = snprintf(buf + len, cap > len ? cap - len : 0, "%s%zu", g ? "," : "", m_sizes[g]);
        if (k < 0 || (size_t)k >= (cap > len ? cap - len : 0)) return false;
        len += (size_t)k;
    }
    return true;
}

/* ---- quantization --------------------------------------------------------- */

/* What a group cannot do is refused with the reason: the options before
 * the plan (a columnwise output would otherwise fail on its shape first),
 * the resolved block and the recipe after it. */
static nvfp4_status refuse(const char *why, nvfp4_error *err)
{
    return nvfp4_error_set(err, NVFP4_EUNSUPPORTED,
                           "grouped quantization is rowwise, RN, 1x16 or 1x32 blocks, one global amax per group: %s "
                           "is not supported with groups", why);
}

static nvfp4_status check_grouped_opts(const nvfp4_quant_opts *o, nvfp4_error *err)
{
    const char *why = !o                        ? NULL
                      : o->columnwise           ? "a columnwise output"
                      : o->rht                  ? "the RHT"
                      : o->rounding == NVFP4_SR ? "stochastic rounding"
                      : o->pad                  ? "padding"
                                                : NULL;
    return why ? refuse(why, err) : NVFP4_OK;
}

static nvfp4_status check_grouped_plan(const nvfp4_quant_plan *p, nvfp4_error *err)
{
    const char *why = p->row.tile16                                     ? "16x16 blocks"
                      : nvfp4_core_recipe_row_scaled(&p->recipe->core) ? "a per-row (per-token) recipe"
                                                                         : NULL;
    return why ? refuse(why, err) : NVFP4_OK;
}

static nvfp4_status check_sizes(const size_t *m_sizes, size_t ngroups, size_t rows, nvfp4_error *err)
{
    if (!m_sizes || !ngroups) return nvfp4_error_set(err, NVFP4_EINVAL, "grouped quantization: no groups");
    size_t sum = 0;
    for (size_t g = 0; g < ngroups; g++) {
        if (m_sizes[g] > SIZE_MAX - sum) return nvfp4_error_set(err, NVFP4_ESHAPE, "group sizes overflow");
        sum += m_sizes[g];
    }
    if (sum != rows)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "the %zu group sizes sum to %zu rows but the tensor has %zu rows",
                               ngroups, sum, rows);
    return NVFP4_OK;
}

static nvfp4_status alloc_outputs(const nvfp4_quant_plan *p, const size_t *m_sizes, size_t ngroups,
                                  nvfp4_grouped *out, nvfp4_error *err)
{
    out->data_bytes = p->row.data_bytes;
    out->scale_cols = p->row.scale_cols;
    out->swizzled_bytes = nvfp4_grouped_swizzled_size(m_sizes, ngroups, out->scale_cols);
    out->m_sizes = malloc(ngroups * sizeof *out->m_sizes);
    out->amax = calloc(ngroups, sizeof *out->amax);
    out->data = malloc(out->data_bytes);
    out->scale = malloc(p->row.scale_rows * out->scale_cols);
    out->scale_swizzled = calloc(out->swizzled_bytes ? out->swizzled_bytes : 1, 1);
    if (!out->m_sizes || !out->amax || !out->data || !out->scale || !out->scale_swizzled || !out->swizzled_bytes)
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for a grouped %zu x %zu tensor", out->rows,
                               out->cols);
    memcpy(out->m_sizes, m_sizes, ngroups * sizeof *m_sizes);
    return NVFP4_OK;
}

/* Group g (its rows start at `row`) into its rows of the stacked outputs. */
static nvfp4_status quantize_group(const uint8_t *x, size_t elem_bytes, size_t row, size_t g, nvfp4_grouped *out,
                                   const nvfp4_quant_plan *whole, nvfp4_error *err)
{
    nvfp4_quant_plan p;
    nvfp4_status st = nvfp4_quant_plan_init(&p, &whole->opts, whole->dtype, out->m_sizes[g], out->cols, err);
    if (st) return st;
    size_t row_data = whole->row.data_bytes / whole->row.rows;
    nvfp4_quant_buffers b = {.row_data = out->data + row * row_data, .row_scale = out->scale + row * out->scale_cols};
    nvfp4_quantized q;
    st = nvfp4_quantize_into(&p, x + row * out->cols * elem_bytes, &b, &q, err);
    if (st) return st;
    out->amax[g] = q.row.amax;
    nvfp4_quantized_free(&q);
    return NVFP4_OK;
}

nvfp4_status nvfp4_quantize_grouped(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                    const size_t *m_sizes, size_t ngroups, const nvfp4_quant_opts *opts,
                                    nvfp4_grouped *out, nvfp4_error *err)
{
    if (!out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_grouped: no output");
    memset(out, 0, sizeof *out);
    if (!x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_quantize_grouped: no input");
    nvfp4_status st = check_sizes(m_sizes, ngroups, rows, err);
    if (!st) st = check_grouped_opts(opts, err);
    nvfp4_quant_plan whole;
    if (!st) st = nvfp4_quant_plan_init(&whole, opts, dtype, rows, cols, err);
    if (!st) st = check_grouped_plan(&whole, err);
    if (st) return st;
    out->recipe = whole.recipe;
    out->opts = whole.opts;
    out->rows = rows;
    out->cols = cols;
    out->ngroups = ngroups;
    st = alloc_outputs(&whole, m_sizes, ngroups, out, err);
    size_t elem_bytes = dtype == NVFP4_DTYPE_BF16 ? 2 : 4;
    for (size_t g = 0, row = 0; !st && g < ngroups; row += m_sizes[g], g++)
        if (m_sizes[g]) st = quantize_group(x, elem_bytes, row, g, out, &whole, err);
    if (!st) nvfp4_grouped_scale_swizzle(out->scale, out->m_sizes, ngroups, out->scale_cols, out->scale_swizzled);
    if (st) nvfp4_grouped_free(out);
    return st;
}

void nvfp4_grouped_free(nvfp4_grouped *g)
{
    if (!g) return;
    free(g->m_sizes);
    free(g->amax);
    free(g->data);
    free(g->scale);
    free(g->scale_swizzled);
    memset(g, 0, sizeof *g);
}

/* ---- views and dequantization --------------------------------------------- */

nvfp4_status nvfp4_grouped_view(const nvfp4_grouped *g, size_t i, nvfp4_quantized *view, nvfp4_error *err)
{
    memset(view, 0, sizeof *view);
    if (!g || i >= g->ngroups || !g->m_sizes[i])
        return nvfp4_error_set(err, NVFP4_EINVAL, "group %zu is %s", i,
                               g && i < g->ngroups ? "empty" : "out of range");
    size_t row = 0;
    for (size_t k = 0; k < i; k++) row += g->m_sizes[k];
    size_t row_data = g->data_bytes / g->rows;
    view->recipe = g->recipe;
    view->opts = g->opts;
    view->has_row = true;
    view->borrowed = true;
    nvfp4_qtensor *t = &view->row;
    t->rows = t->prows = g->m_sizes[i];
    t->cols = t->pcols = g->cols;
    t->data = g->data + row * row_data;
    t->data_bytes = g->m_sizes[i] * row_data;
    t->scale = g->scale + row * g->scale_cols;
    t->scale_rows = g->m_sizes[i];
    t->scale_cols = g->scale_cols;
    t->amax = g->amax[i];
    return NVFP4_OK;
}

nvfp4_status nvfp4_grouped_dequantize(const nvfp4_grouped *g, float *out, nvfp4_error *err)
{
    if (!g || !out || !g->recipe) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_grouped_dequantize: missing argument");
    size_t row = 0;
    for (size_t i = 0; i < g->ngroups; row += g->m_sizes[i], i++) {
        if (!g->m_sizes[i]) continue;
        nvfp4_quantized v;
        nvfp4_status st = nvfp4_grouped_view(g, i, &v, err);
        if (!st) st = nvfp4_dequantize(&v, false, out + row * g->cols, err);
        if (st) return st;
    }
    return NVFP4_OK;
}
