/*
 * bundle_grouped.c - the golden bundle of a grouped (MoE) quantization
 * (docs/file-formats.md, 3.7 "Grouped bundles"): the ordinary rowwise bundle of
 * the stacked tensor (x, data, scale, metadata: nvfp4_bundle_build on a view
 * of the stacked outputs) whose scale_swizzled is the per-group padded
 * layout, whose amax holds one value per group, whose dequant uses each
 * group's amax, plus m_sizes (I64) and the metadata key "groups". Reading
 * one back: validation and reconstruction. No numerics here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

/* ---- building ------------------------------------------------------------------ */

/* The stacked outputs as one rowwise nvfp4_quantized (borrowed), whose amax
 * is the largest group amax: what nvfp4_bundle_build lays out before the
 * grouped components replace its per-tensor ones. */
static void stacked_view(const nvfp4_grouped *g, nvfp4_quantized *q)
{
    memset(q, 0, sizeof *q);
    q->recipe = g->recipe;
    q->opts = g->opts;
    q->has_row = true;
    q->borrowed = true;
    nvfp4_qtensor *t = &q->row;
    t->rows = t->prows = g->rows;
    t->cols = t->pcols = g->cols;
    t->data = g->data;
    t->data_bytes = g->data_bytes;
    t->scale = g->scale;
    t->scale_rows = g->rows;
    t->scale_cols = g->scale_cols;
    for (size_t i = 0; i < g->ngroups; i++)
        if (g->amax[i] > t->amax) t->amax = g->amax[i];
}

static nvfp4_status add_grouped_components(const nvfp4_grouped *g, nvfp4_tensor_set *s, nvfp4_error *err)
{
    size_t zc = (g->scale_cols + 3) / 4 * 4, zsh[2] = {g->swizzled_bytes / zc, zc}, n = g->ngroups;
    nvfp4_tensor *t;
    nvfp4_tset_remove(s, "scale_swizzled");
    nvfp4_tset_remove(s, "amax");
    nvfp4_tset_remove(s, "dequant");
    nvfp4_status st = nvfp4_tset_add(s, "scale_swizzled", NVFP4_T_U8, 2, zsh, g->scale_swizzled, NULL, err);
    if (!st) st = nvfp4_tset_add(s, "amax", NVFP4_T_F32, 1, &n, g->amax, NULL, err);
    if (!st) st = nvfp4_tset_add(s, "m_sizes", NVFP4_T_I64, 1, &n, NULL, &t, err);
    if (st) return st;
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)g->m_sizes[i];
        memcpy(t->data + i * sizeof v, &v, sizeof v);
    }
    size_t dsh[2] = {g->rows, g->cols};
    if ((st = nvfp4_tset_add(s, "dequant", NVFP4_T_F32, 2, dsh, NULL, &t, err))) return st;
    return nvfp4_grouped_dequantize(g, (float *)(void *)t->data, err);
}

static nvfp4_status add_grouped_metadata(const nvfp4_grouped *g, nvfp4_tensor_set *s, nvfp4_error *err)
{
    size_t cap = g->ngroups * 21 + 1;
    char *text = malloc(cap);
    if (!text) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu group sizes", g->ngroups);
    nvfp4_status st = nvfp4_grouped_sizes_format(g->m_sizes, g->ngroups, text, cap)
                          ? nvfp4_tset_meta_set(s, "groups", text, err)
                          : nvfp4_error_set(err, NVFP4_EINVAL, "group sizes do not format");
    free(text);
    if (!st) st = nvfp4_tset_meta_set(s, "group_scale_padding", "128", err);
    return st;
}

nvfp4_status nvfp4_grouped_bundle_build(const nvfp4_grouped *g, const void *x, nvfp4_dtype dtype,
                                        nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (!g || !g->recipe || !x || !out)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_grouped_bundle_build: missing argument");
    nvfp4_quantized q;
    stacked_view(g, &q);
    nvfp4_status st = nvfp4_bundle_build(&q, x, dtype, g->rows, g->cols, out, err);
    if (!st) st = add_grouped_components(g, out, err);
    if (!st) st = add_grouped_metadata(g, out, err);
    return st;
}

/* ---- reading ------------------------------------------------------------------- */

static nvfp4_status meta_size(const nvfp4_tensor_set *s, const char *fname, const char *k, size_t *out,
                              nvfp4_error *err)
{
    const char *v = nvfp4_tset_meta_get(s, k);
    char *end = NULL;
    errno = 0;
    unsigned long long u = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
    if (!v || !end || *end || errno || u > SIZE_MAX)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: grouped bundle metadata '%s' is %s (expected a row count)",
                               fname, k, v ? "not a number" : "missing");
    *out = (size_t)u;
    return NVFP4_OK;
}

/* The group sizes of a grouped bundle: its "groups" metadata, which m_sizes
 * (when present) must repeat. */
static nvfp4_status bundle_sizes(const nvfp4_tensor_set *s, const char *fname, size_t **m, size_t *n,
                                 nvfp4_error *err)
{
    char what[300];
    snprintf(what, sizeof what, "%s: metadata \"groups\"", fname);
    nvfp4_status st = nvfp4_grouped_sizes_parse(nvfp4_tset_meta_get(s, "groups"), what, m, n, err);
    if (st) return st;
    const nvfp4_tensor *t = nvfp4_tset_find(s, "m_sizes");
    if (!t) return NVFP4_OK;
    bool same = t->dtype == NVFP4_T_I64 && t->ndim == 1 && t->shape[0] == *n;
    for (size_t i = 0; same && i < *n; i++) {
        int64_t v;
        memcpy(&v, t->data + i * sizeof v, sizeof v);
        same = v >= 0 && (uint64_t)v == (*m)[i];
    }
    if (same) return NVFP4_OK;
    free(*m);
    *m = NULL;
    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component 'm_sizes' is not I64 [%zu] holding the metadata groups "
                           "'%s'", fname, *n, nvfp4_tset_meta_get(s, "groups"));
}

/* A component of `numel` elements of `size` bytes each (any dtype of that
 * width: U8 or F8_E4M3 scales), when present; required with need. */
static nvfp4_status check_sized(const nvfp4_tensor_set *s, const char *fname, const char *name, size_t size,
                                size_t numel, bool need, nvfp4_error *err)
{
    const nvfp4_tensor *t = nvfp4_tset_find(s, name);
    if (!t) return need ? nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks the component '%s'", fname, name)
                        : NVFP4_OK;
    if (nvfp4_tdtype_size(t->dtype) != size || nvfp4_tensor_numel(t) != numel || t->nbytes != size * numel)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component '%s' holds %zu bytes where the grouped layout has "
                               "%zu (%zu elements of %zu bytes)", fname, name, t->nbytes, size * numel, numel, size);
    return NVFP4_OK;
}

/* The plan of the stacked tensor a grouped bundle describes. */
static nvfp4_status bundle_plan(const nvfp4_tensor_set *s, const char *fname, nvfp4_quant_plan *p, nvfp4_error *err)
{
    nvfp4_quant_opts o;
    size_t rows, cols;
    nvfp4_status st = nvfp4_bundle_opts(s, fname, &o, err);
    if (!st) st = meta_size(s, fname, "rows", &rows, err);
    if (!st) st = meta_size(s, fname, "cols", &cols, err);
    if (st) return st;
    if (o.columnwise)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: a grouped bundle is rowwise, but its metadata says columnwise",
                               fname);
    const char *xd = nvfp4_tset_meta_get(s, "x_dtype");
    nvfp4_dtype dt = xd && strcmp(xd, "BF16") == 0 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
    nvfp4_error why = {0};
    if (nvfp4_quant_plan_init(p, &o, dt, rows, cols, &why))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s", fname, why.message);
    return NVFP4_OK;
}

nvfp4_status nvfp4_grouped_bundle_validate(const nvfp4_tensor_set *s, const char *fname, bool need_all,
                                           nvfp4_error *err)
{
    size_t *m = NULL, n = 0;
    nvfp4_quant_plan p;
    nvfp4_status st = bundle_plan(s, fname, &p, err);
    if (!st) st = bundle_sizes(s, fname, &m, &n, err);
    if (st) return st;
    size_t sum = 0;
    bool overflow = false;
    for (size_t i = 0; i < n; i++) {
        overflow |= m[i] > SIZE_MAX - sum;
        sum += overflow ? 0 : m[i];
    }
    size_t sc = p.row.scale_cols, zb = overflow ? 0 : nvfp4_grouped_swizzled_size(m, n, sc);
    free(m);
    if (overflow)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the group sizes (metadata \"groups\") overflow", fname);
    if (sum != p.rows)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the group sizes (metadata \"groups\") sum to %zu rows but "
                               "the bundle has %zu", fname, sum, p.rows);
    size_t xsize = p.dtype == NVFP4_DTYPE_BF16 ? 2 : 4;
    if (!st) st = check_sized(s, fname, "x", xsize, p.rows * p.cols, need_all, err);
    if (!st) st = check_sized(s, fname, "data", 1, p.row.data_bytes, need_all, err);
    if (!st) st = check_sized(s, fname, "scale", 1, p.rows * sc, need_all, err);
    if (!st) st = check_sized(s, fname, "scale_swizzled", 1, zb, need_all, err);
    if (!st) st = check_sized(s, fname, "amax", 4, n, need_all, err);
    if (!st) st = check_sized(s, fname, "dequant", 4, p.rows * p.cols, need_all, err);
    return st;
}

nvfp4_status nvfp4_bundle_to_grouped(const nvfp4_tensor_set *s, const char *fname, nvfp4_grouped *g,
                                     nvfp4_error *err)
{
    memset(g, 0, sizeof *g);
    nvfp4_quant_plan p;
    nvfp4_status st = nvfp4_grouped_bundle_validate(s, fname, false, err);
    if (!st) st = bundle_plan(s, fname, &p, err);
    if (!st) st = bundle_sizes(s, fname, &g->m_sizes, &g->ngroups, err);
    if (st) return st;
    const nvfp4_tensor *d = nvfp4_tset_find(s, "data"), *sc = nvfp4_tset_find(s, "scale"),
                       *a = nvfp4_tset_find(s, "amax");
    if (!d || !sc || !a) {
        nvfp4_grouped_free(g);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: a grouped bundle needs data, scale and amax", fname);
    }
    g->recipe = p.recipe;
    g->opts = p.opts;
    g->rows = p.rows;
    g->cols = p.cols;
    g->data_bytes = d->nbytes;
    g->scale_cols = p.row.scale_cols;
    g->swizzled_bytes = nvfp4_grouped_swizzled_size(g->m_sizes, g->ngroups, g->scale_cols);
    g->amax = malloc(a->nbytes);
    g->data = malloc(d->nbytes);
    g->scale = malloc(sc->nbytes);
    g->scale_swizzled = calloc(g->swizzled_bytes ? g->swizzled_bytes : 1, 1);
    if (!g->amax || !g->data || !g->scale || !g->scale_swizzled) {
        nvfp4_grouped_free(g);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    }
    memcpy(g->amax, a->data, a->nbytes);
    memcpy(g->data, d->data, d->nbytes);
    memcpy(g->scale, sc->data, sc->nbytes);
    nvfp4_grouped_scale_swizzle(g->scale, g->m_sizes, g->ngroups, g->scale_cols, g->scale_swizzled);
    return NVFP4_OK;
}
