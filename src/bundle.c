/* bundle.c - the golden bundle (docs/file-formats.md): one quantization as a
 * tensor set. Components per orientation (suffix "" rowwise, "_t"
 * columnwise): data (U8 codes, element 2j in the low nibble of byte j;
 * E4M3 elements one per byte), scale (U8, linear [scale_rows, scale_cols]),
 * scale_swizzled (U8, the scale layout the metadata "scale_swizzle" names,
 * cuBLAS 128x4 unless it names another (nvfp4/layout.h), padding zero), amax (F32 [1],
 * NVFP4 recipes only), dequant (F32, logical shape); plus x (the input) and
 * string metadata that records how to regenerate every byte. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nvfp4_core.h"
#include "core/swizzle.h"
#include "recipes/recipe.h"
#include "nvfp4/io.h"

#define BUNDLE_FORMAT NVFP4_BUNDLE_FORMAT

/* ---- metadata ----------------------------------------------------------------- */

static nvfp4_status meta_u64(nvfp4_tensor_set *s, const char *k, unsigned long long v, nvfp4_error *err)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    return nvfp4_tset_meta_set(s, k, b, err);
}

static nvfp4_status write_metadata(const nvfp4_quantized *q, nvfp4_dtype dtype, size_t rows, size_t cols,
                                   nvfp4_tensor_set *s, nvfp4_error *err)
{
    const nvfp4_quant_opts *o = &q->opts;
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q->recipe);
    const struct {
        const char *k, *v;
    } kv[] = {
        {"format", BUNDLE_FORMAT},
        {"format_version", NVFP4_BUNDLE_FORMAT_VERSION},
        {"tool", "nvfp4kit"},
        {"tool_version", nvfp4_version()},
        {"recipe", info->name},
        {"rounding", nvfp4_rounding_name(o->rounding)},
        {"block", nvfp4_block_name(o->block)},
        {"rowwise", q->has_row ? "true" : "false"},
        {"columnwise", q->has_col ? "true" : "false"},
        {"rht", o->rht ? "true" : "false"},
        {"rht_signs", nvfp4_rht_signs_name(o->rht_signs)},
        {"rht_output", o->rht_fp32 ? "fp32" : "bf16"},
        {"pad", o->pad ? "true" : "false"},
        {"x_dtype", dtype == NVFP4_DTYPE_BF16 ? "BF16" : "F32"},
        {"elem", info->elem == NVFP4_ELEM_E4M3 ? "e4m3" : "e2m1"},
        {"scale_format", nvfp4_scale_format_name(info->scale_format)},
        {"data_layout", "row-major; e2m1: element 2j in the low nibble of byte j"},
        {"scale_swizzle", nvfp4_scale_layout_name(NVFP4_SCALE_LAYOUT_128X4)}, /* nvfp4_bundle_relayout changes it */
    };
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 0; !st && i < sizeof kv / sizeof kv[0]; i++) st = nvfp4_tset_meta_set(s, kv[i].k, kv[i].v, err);
    if (!st) st = meta_u64(s, "seed", o->seed, err);
    if (!st) st = meta_u64(s, "offset", o->offset, err);
    if (!st) st = meta_u64(s, "rht_sign_seed", o->rht_sign_seed, err);
    if (!st) st = meta_u64(s, "rows", rows, err);
    if (!st) st = meta_u64(s, "cols", cols, err);
    /* only when set: bundles without it keep their bytes */
    if (!st && o->global_scale_inverted) st = nvfp4_tset_meta_set(s, "global_scale_inverted", "true", err);
    return st;
}

/* ---- components ----------------------------------------------------------------- */

/* Whether the recipe dequantizes with a per-token scale (flashinfer-pertoken):
 * its bundle carries `per_token_scale` beside the row amaxes. */
static bool has_per_token_scale(const nvfp4_recipe *r)
{
    return r && nvfp4_recipe_core(r)->dequant_rule == NVFP4_CORE_DEQ_PER_TOKEN;
}

bool nvfp4_per_token_scales(const nvfp4_recipe *r, const float *row_amax, size_t n, float *out)
{
    if (!has_per_token_scale(r)) return false;
    for (size_t i = 0; i < n; i++) {
        nvfp4_core_global g = nvfp4_core_global_from_amax(nvfp4_recipe_core(r), row_amax[i]);
        out[i] = nvfp4_core_per_token_scale(&g);
    }
    return true;
}

/* The per-token scale of stored row i, as FlashInfer returns it: 1/S_enc of
 * the row's amax, 0 for a zero row (nvfp4_core_per_token_scale). */
static float per_token_scale_of(const nvfp4_recipe *r, const nvfp4_qtensor *t, size_t i)
{
    float a = t->row_amax ? t->row_amax[i] : t->amax, p = 0.0f;
    (void)nvfp4_per_token_scales(r, &a, 1, &p);
    return p;
}

/* `per_token_scale` (F32 [prows]) for a per-token recipe; nothing otherwise. */
static nvfp4_status add_per_token_scale(const nvfp4_quantized *q, const nvfp4_qtensor *t, const char *sfx,
                                        nvfp4_tensor_set *s, nvfp4_error *err)
{
    if (!has_per_token_scale(q->recipe)) return NVFP4_OK;
    char name[32];
    size_t n = t->prows;
    nvfp4_tensor *p;
    snprintf(name, sizeof name, "per_token_scale%s", sfx);
    nvfp4_status st = nvfp4_tset_add(s, name, NVFP4_T_F32, 1, &n, NULL, &p, err);
    if (st) return st;
    float *v = (float *)(void *)p->data;
    for (size_t i = 0; i < n; i++) v[i] = per_token_scale_of(q->recipe, t, i);
    return NVFP4_OK;
}

/* own (NULL: copy): q's code and scale buffers of this orientation, handed to the set (each slot
 * NULL once handed over: taken, or freed by a failed add). */
static nvfp4_status add_orientation(const nvfp4_quantized *q, bool colwise, nvfp4_tensor_set *s, uint8_t **own,
                                    nvfp4_error *err)
{
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q->recipe);
    const char *sfx = colwise ? "_t" : "";
    char name[32];
    size_t row_bytes = info->elem == NVFP4_ELEM_E4M3 ? t->pcols : t->pcols / 2;
    size_t shp[2] = {t->prows, row_bytes};
    snprintf(name, sizeof name, "data%s", sfx);
    nvfp4_status st = own ? nvfp4_tset_add_taken(s, name, NVFP4_T_U8, 2, shp, own[0], err)
                          : nvfp4_tset_add(s, name, NVFP4_T_U8, 2, shp, t->data, NULL, err);
    if (own) own[0] = NULL;
    if (st) return st;
    size_t ssh[2] = {t->scale_rows, t->scale_cols};
    snprintf(name, sizeof name, "scale%s", sfx);
    st = own ? nvfp4_tset_add_taken(s, name, NVFP4_T_U8, 2, ssh, own[1], err)
             : nvfp4_tset_add(s, name, NVFP4_T_U8, 2, ssh, t->scale, NULL, err);
    if (own) own[1] = NULL;
    if (st) return st;
    size_t zsh[2];
    nvfp4_tensor *z;
    (void)nvfp4_core_swizzle_padded_shape(t->scale_rows, t->scale_cols, &zsh[0], &zsh[1]); /* planned: no overflow */
    snprintf(name, sizeof name, "scale%s_swizzled", sfx);
    if ((st = nvfp4_tset_add(s, name, NVFP4_T_U8, 2, zsh, NULL, &z, err))) return st;
    nvfp4_scale_to_layout(NVFP4_SCALE_LAYOUT_128X4, t->scale, t->scale_rows, t->scale_cols, z->data);
    if (info->has_global_amax) {
        /* row-scaled recipes: one amax per stored row (docs/file-formats.md) */
        size_t n = t->row_amax ? t->prows : 1;
        snprintf(name, sizeof name, "amax%s", sfx);
        if ((st = nvfp4_tset_add(s, name, NVFP4_T_F32, 1, &n, t->row_amax ? t->row_amax : &t->amax, NULL, err)))
            return st;
    }
    if ((st = add_per_token_scale(q, t, sfx, s, err))) return st;
    size_t dsh[2] = {t->rows, t->cols};
    nvfp4_tensor *d;
    snprintf(name, sizeof name, "dequant%s", sfx);
    if ((st = nvfp4_tset_add(s, name, NVFP4_T_F32, 2, dsh, NULL, &d, err))) return st;
    return nvfp4_dequantize(q, colwise, (float *)(void *)d->data, err);
}

/* own: NULL (copy), or q's four buffers (row data, row scale, col data, col scale) to hand over. */
static nvfp4_status build(const nvfp4_quantized *q, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                          nvfp4_tensor_set *out, uint8_t **own, nvfp4_error *err)
{
    size_t xs[2] = {rows, cols};
    nvfp4_status st = nvfp4_tset_add(out, "x", dtype == NVFP4_DTYPE_BF16 ? NVFP4_T_BF16 : NVFP4_T_F32, 2, xs, x,
                                     NULL, err);
    if (!st && q->has_row) st = add_orientation(q, false, out, own, err);
    if (!st && q->has_col) st = add_orientation(q, true, out, own ? own + 2 : NULL, err);
    if (!st) st = write_metadata(q, dtype, rows, cols, out, err);
    return st;
}

nvfp4_status nvfp4_bundle_build(const nvfp4_quantized *q, const void *x, nvfp4_dtype dtype, size_t rows,
                                size_t cols, nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (!q || !q->recipe || !x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_bundle_build: missing argument");
    return build(q, x, dtype, rows, cols, out, NULL, err);
}

nvfp4_status nvfp4_bundle_build_taking(nvfp4_quantized *q, const void *x, nvfp4_dtype dtype, size_t rows,
                                       size_t cols, nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (!q || !q->recipe || !x) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_bundle_build: missing argument");
    if (q->borrowed) return build(q, x, dtype, rows, cols, out, NULL, err);
    uint8_t *own[4] = {q->row.data, q->row.scale, q->col.data, q->col.scale};
    q->borrowed = true; /* from here each buffer belongs to the set, or is freed below */
    nvfp4_status st = build(q, x, dtype, rows, cols, out, own, err);
    for (int i = 0; i < 4; i++) free(own[i]); /* those a failure left unhanded (NULL once handed over) */
    if (st) q->row.data = q->row.scale = q->col.data = q->col.scale = NULL; /* some were freed: point at none */
    return st;
}

/* ---- scale layout ------------------------------------------------------------------ */

nvfp4_status nvfp4_bundle_scale_layout(const nvfp4_tensor_set *s, const char *fname, nvfp4_scale_layout *l,
                                       nvfp4_error *err)
{
    /* absent: a bundle written before the key was normative, whose scale_swizzled is 128x4 */
    const char *v = nvfp4_tset_meta_get(s, "scale_swizzle");
    *l = NVFP4_SCALE_LAYOUT_128X4;
    if (v && !nvfp4_scale_layout_parse(v, l))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata scale_swizzle '%s' is not a known scale "
                               "layout (cublas-128x4, flashinfer-8x4, linear)", fname, v);
    return NVFP4_OK;
}

/* One orientation's scale_swizzled rewritten in layout l from its linear scale. */
static nvfp4_status relayout_orientation(nvfp4_tensor_set *s, const char *sfx, nvfp4_scale_layout l,
                                         nvfp4_error *err)
{
    char n[32];
    snprintf(n, sizeof n, "scale%s", sfx);
    const nvfp4_tensor *sc = nvfp4_tset_find(s, n);
    snprintf(n, sizeof n, "scale%s_swizzled", sfx);
    if (!sc || sc->ndim != 2)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_bundle_relayout: the bundle lacks 'scale%s'", sfx);
    size_t rows = sc->shape[0], cols = sc->shape[1], zsh[2];
    if (!nvfp4_scale_layout_shape(l, rows, cols, &zsh[0], &zsh[1]))
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_bundle_relayout: %zu x %zu scales overflow", rows, cols);
    uint8_t *keep = malloc(rows * cols + 1); /* the table moves when a tensor is added; +1: never malloc(0) */
    if (!keep) return nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_bundle_relayout: out of memory");
    memcpy(keep, sc->data, rows * cols);
    nvfp4_tset_remove(s, n);
    nvfp4_tensor *z;
    nvfp4_status st = nvfp4_tset_add(s, n, NVFP4_T_U8, 2, zsh, NULL, &z, err);
    if (!st) nvfp4_scale_to_layout(l, keep, rows, cols, z->data);
    free(keep);
    return st;
}

nvfp4_status nvfp4_bundle_relayout(nvfp4_tensor_set *s, nvfp4_scale_layout l, nvfp4_error *err)
{
    if ((unsigned)l >= NVFP4_SCALE_LAYOUT_COUNT)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_bundle_relayout: unknown scale layout %d", (int)l);
    nvfp4_status st = NVFP4_OK;
    const char *rw = nvfp4_tset_meta_get(s, "rowwise"), *cw = nvfp4_tset_meta_get(s, "columnwise");
    if (rw && strcmp(rw, "true") == 0) st = relayout_orientation(s, "", l, err);
    if (!st && cw && strcmp(cw, "true") == 0) st = relayout_orientation(s, "_t", l, err);
    if (!st) st = nvfp4_tset_meta_set(s, "scale_swizzle", nvfp4_scale_layout_name(l), err);
    return st;
}

/* ---- reading -------------------------------------------------------------------- */

static nvfp4_status need_meta(const nvfp4_tensor_set *s, const char *fname, const char *k, const char **v,
                              nvfp4_error *err)
{
    *v = nvfp4_tset_meta_get(s, k);
    if (!*v) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata lacks \"%s\"", fname, k);
    return NVFP4_OK;
}

static nvfp4_status meta_bool(const nvfp4_tensor_set *s, const char *fname, const char *k, bool *out,
                              nvfp4_error *err)
{
    const char *v;
    nvfp4_status st = need_meta(s, fname, k, &v, err);
    if (st) return st;
    if (strcmp(v, "true") == 0) *out = true;
    else if (strcmp(v, "false") == 0) *out = false;
    else return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata \"%s\" is '%s', not true/false", fname, k, v);
    return NVFP4_OK;
}

static nvfp4_status meta_ull(const nvfp4_tensor_set *s, const char *fname, const char *k, unsigned long long *out,
                             nvfp4_error *err)
{
    const char *v;
    nvfp4_status st = need_meta(s, fname, k, &v, err);
    if (st) return st;
    /* Digits only, the whole uint64 range (2^64-1 included: the writers
     * accept it); ERANGE, not the value ULLONG_MAX, marks an overflow. */
    char *end;
    if (*v < '0' || *v > '9') goto bad;
    errno = 0;
    *out = strtoull(v, &end, 10);
    if (*end != '\0' || errno == ERANGE) goto bad;
    return NVFP4_OK;
bad:
    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata \"%s\" is '%s', not a decimal integer", fname, k,
                           v);
}

nvfp4_status nvfp4_bundle_opts(const nvfp4_tensor_set *s, const char *fname, nvfp4_quant_opts *o, nvfp4_error *err)
{
    nvfp4_quant_opts_init(o);
    /* docs/file-formats.md section 4: every reader of a bundle, partial or
     * complete, rejects one whose "format" is missing or another's. */
    const char *v = nvfp4_tset_meta_get(s, "format");
    if (!v || strcmp(v, BUNDLE_FORMAT) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a golden bundle (metadata \"format\" is %s%s%s, not \"%s\")",
                               fname, v ? "'" : "", v ? v : "missing", v ? "'" : "", BUNDLE_FORMAT);
    nvfp4_status st = need_meta(s, fname, "format_version", &v, err);
    if (st) return st;
    if (strcmp(v, NVFP4_BUNDLE_FORMAT_VERSION) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle format_version '%s' (this tool reads '%s')", fname, v,
                               NVFP4_BUNDLE_FORMAT_VERSION);
    if ((st = need_meta(s, fname, "recipe", &v, err))) return st;
    if (!nvfp4_recipe_find(v))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: unknown recipe '%s' in the bundle metadata", fname, v);
    o->recipe = v;
    if ((st = need_meta(s, fname, "block", &v, err))) return st;
    if (!nvfp4_block_parse(v, &o->block) || o->block == NVFP4_BLOCK_DEFAULT)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata block '%s' is not 1x16, 16x16 or 1x32", fname, v);
    if ((st = need_meta(s, fname, "rounding", &v, err))) return st;
    if (!nvfp4_rounding_parse(v, &o->rounding))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata rounding '%s' is unknown", fname, v);
    unsigned long long u;
    if ((st = meta_ull(s, fname, "seed", &u, err))) return st;
    o->seed = u;
    if ((st = meta_ull(s, fname, "offset", &u, err))) return st;
    o->offset = u;
    if ((st = meta_bool(s, fname, "rowwise", &o->rowwise, err))) return st;
    if ((st = meta_bool(s, fname, "columnwise", &o->columnwise, err))) return st;
    if (!o->rowwise && !o->columnwise)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle has neither a rowwise nor a columnwise output", fname);
    if ((st = meta_bool(s, fname, "rht", &o->rht, err))) return st;
    if ((st = meta_bool(s, fname, "pad", &o->pad, err))) return st;
    if ((st = need_meta(s, fname, "rht_signs", &v, err))) return st;
    if (strcmp(v, "te") == 0) o->rht_signs = NVFP4_RHT_SIGNS_TE;
    else if (strcmp(v, "seeded") == 0) o->rht_signs = NVFP4_RHT_SIGNS_SEEDED;
    else if (strcmp(v, "none") == 0) o->rht_signs = NVFP4_RHT_SIGNS_NONE;
    else return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata rht_signs '%s' is unknown", fname, v);
    if ((st = meta_ull(s, fname, "rht_sign_seed", &u, err))) return st;
    o->rht_sign_seed = u;
    if ((st = need_meta(s, fname, "rht_output", &v, err))) return st;
    if (strcmp(v, "fp32") != 0 && strcmp(v, "bf16") != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle metadata rht_output '%s' is not bf16 or fp32", fname, v);
    o->rht_fp32 = strcmp(v, "fp32") == 0;
    o->global_scale_inverted = false; /* optional: absent in bundles written before it existed */
    if (nvfp4_tset_meta_get(s, "global_scale_inverted") &&
        (st = meta_bool(s, fname, "global_scale_inverted", &o->global_scale_inverted, err)))
        return st;
    return NVFP4_OK;
}

/* The stored geometry of one orientation (srows x scols logical). */
typedef struct {
    size_t rows, cols, prows, pcols, row_bytes, scale_rows, scale_cols, zrows, zcols;
} geometry;

/* One orientation's geometry from the quantizer's plan of it, plus the
 * shape of scale_swizzled: the scale matrix padded as layout sl pads it. */
static void geometry_of(const nvfp4_quant_layout *l, nvfp4_scale_layout sl, geometry *g)
{
    g->rows = l->rows;
    g->cols = l->cols;
    g->prows = l->prows;
    g->pcols = l->pcols;
    g->row_bytes = l->data_bytes / l->prows;
    g->scale_rows = l->scale_rows;
    g->scale_cols = l->scale_cols;
    (void)nvfp4_scale_layout_shape(sl, g->scale_rows, g->scale_cols, &g->zrows, &g->zcols);
}

/* torch's byte dtypes mean the same bytes as U8 for codes and scales
 * (float8_e4m3fn, float8_e8m0fnu; float4_e2m1fn_x2 as F4, whose shape
 * counts two elements per byte). */
static bool same_bytes_as_u8(const nvfp4_tensor *t, size_t cols_bytes)
{
    if (t->dtype == NVFP4_T_F8_E4M3 || t->dtype == NVFP4_T_F8_E8M0) return t->shape[1] == cols_bytes;
    if (t->dtype == NVFP4_T_F4) return t->shape[1] == 2 * cols_bytes;
    return false;
}

static nvfp4_status check_component(const nvfp4_tensor_set *s, const char *fname, const char *name,
                                    nvfp4_tdtype dt, unsigned ndim, size_t d0, size_t d1, bool need,
                                    nvfp4_error *err)
{
    const nvfp4_tensor *t = nvfp4_tset_find(s, name);
    if (!t) return need ? nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks the component '%s'", fname, name)
                        : NVFP4_OK;
    bool ok = t->dtype == dt && t->ndim == ndim && t->shape[0] == d0 && (ndim < 2 || t->shape[1] == d1);
    if (!ok && dt == NVFP4_T_U8 && t->ndim == ndim && ndim == 2 && t->shape[0] == d0)
        ok = same_bytes_as_u8(t, d1);
    if (!ok) {
        char got[64];
        if (t->ndim == 2) snprintf(got, sizeof got, "%s [%zu, %zu]", nvfp4_tdtype_name(t->dtype), t->shape[0], t->shape[1]);
        else if (t->ndim == 1) snprintf(got, sizeof got, "%s [%zu]", nvfp4_tdtype_name(t->dtype), t->shape[0]);
        else snprintf(got, sizeof got, "%s with %u dimensions", nvfp4_tdtype_name(t->dtype), t->ndim);
        if (ndim == 2)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component '%s' is %s, expected %s [%zu, %zu]", fname, name,
                                   got, nvfp4_tdtype_name(dt), d0, d1);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component '%s' is %s, expected %s [%zu]", fname, name, got,
                               nvfp4_tdtype_name(dt), d0);
    }
    return NVFP4_OK;
}

/* Entries of a bundle's amax component: none without a global scale, one
 * per stored row for a row-scaled recipe (te-rowscaled), else one. */
static size_t amax_count(const nvfp4_recipe_info *info, const geometry *g)
{
    if (!info->has_global_amax) return 0;
    const nvfp4_recipe *r = nvfp4_recipe_find(info->name);
    return r && nvfp4_core_recipe_row_scaled(nvfp4_recipe_core(r)) ? g->prows : 1;
}

static nvfp4_status check_orientation(const nvfp4_tensor_set *s, const char *fname, const char *sfx,
                                      const geometry *g, size_t namax, bool need, nvfp4_error *err)
{
    bool has_amax = namax > 0;
    char n[32];
    nvfp4_status st;
    snprintf(n, sizeof n, "data%s", sfx);
    if ((st = check_component(s, fname, n, NVFP4_T_U8, 2, g->prows, g->row_bytes, need, err))) return st;
    snprintf(n, sizeof n, "scale%s", sfx);
    if ((st = check_component(s, fname, n, NVFP4_T_U8, 2, g->scale_rows, g->scale_cols, need, err))) return st;
    snprintf(n, sizeof n, "scale%s_swizzled", sfx);
    if ((st = check_component(s, fname, n, NVFP4_T_U8, 2, g->zrows, g->zcols, need, err))) return st;
    snprintf(n, sizeof n, "amax%s", sfx);
    if (has_amax && (st = check_component(s, fname, n, NVFP4_T_F32, 1, namax, 0, need, err))) return st;
    if (!has_amax && nvfp4_tset_find(s, n))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component '%s' present but the recipe has no global amax",
                               fname, n);
    snprintf(n, sizeof n, "dequant%s", sfx);
    return check_component(s, fname, n, NVFP4_T_F32, 2, g->rows, g->cols, need, err);
}

/* What a bundle's metadata says it holds: its options and recipe, the
 * input's shape, the layout of scale_swizzled, and the geometry of each
 * orientation it has. Read once per call (bundle_layout) and then only looked at. */
typedef struct {
    nvfp4_quant_opts o;
    const nvfp4_recipe_info *info;
    size_t rows, cols;
    nvfp4_scale_layout sl;
    geometry row, col;
} bundle_desc;

/* The layout of a bundle from its metadata; fails on malformed metadata. */
static nvfp4_status bundle_layout(const nvfp4_tensor_set *s, const char *fname, bundle_desc *b, nvfp4_error *err)
{
    memset(b, 0, sizeof *b);
    nvfp4_quant_opts *o = &b->o;
    nvfp4_status st = nvfp4_bundle_opts(s, fname, o, err);
    if (st) return st;
    b->info = nvfp4_recipe_get_info(nvfp4_recipe_find(o->recipe));
    unsigned long long r = 0, c = 0; /* set by meta_ull on success; zero keeps gcc -O3 from warning */
    if ((st = meta_ull(s, fname, "rows", &r, err)) || (st = meta_ull(s, fname, "cols", &c, err))) return st;
    if (r == 0 || c == 0 || r > SIZE_MAX || c > SIZE_MAX)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle shape %llu x %llu is empty or too large", fname, r, c);
    b->rows = (size_t)r;
    b->cols = (size_t)c;
    if (b->rows > ((size_t)1 << 40) || b->cols > ((size_t)1 << 40))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle shape %zu x %zu is too large", fname, b->rows, b->cols);
    /* the shapes the quantizer plans for these options: the bundle's must be those */
    nvfp4_quant_plan plan;
    nvfp4_error perr;
    if ((st = nvfp4_quant_plan_init(&plan, o, NVFP4_DTYPE_F32, b->rows, b->cols, &perr))) {
        if (st == NVFP4_ESHAPE)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle shape %zu x %zu is not a multiple of the %s block "
                                   "and pad is false", fname, b->rows, b->cols, nvfp4_block_name(plan.opts.block));
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle options: %s", fname, perr.message);
    }
    if ((st = nvfp4_bundle_scale_layout(s, fname, &b->sl, err))) return st;
    if (o->rowwise) geometry_of(&plan.row, b->sl, &b->row);
    if (o->columnwise) geometry_of(&plan.col, b->sl, &b->col);
    return NVFP4_OK;
}

/* Every component's dtype and shape against the layout b. */
static nvfp4_status check_components(const nvfp4_tensor_set *s, const char *fname, bool need_all, const bundle_desc *b,
                                     nvfp4_error *err)
{
    nvfp4_status st;
    const nvfp4_tensor *x = nvfp4_tset_find(s, "x");
    if (x) {
        nvfp4_tdtype want = NVFP4_T_F32;
        const char *xd = nvfp4_tset_meta_get(s, "x_dtype");
        if (xd && strcmp(xd, "BF16") == 0) want = NVFP4_T_BF16;
        if ((st = check_component(s, fname, "x", want, 2, b->rows, b->cols, true, err))) return st;
    } else if (need_all) {
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks the input 'x'", fname);
    }
    if (b->o.rowwise && (st = check_orientation(s, fname, "", &b->row, amax_count(b->info, &b->row), need_all, err)))
        return st;
    if (b->o.columnwise &&
        (st = check_orientation(s, fname, "_t", &b->col, amax_count(b->info, &b->col), need_all, err)))
        return st;
    return NVFP4_OK;
}

nvfp4_status nvfp4_bundle_validate(const nvfp4_tensor_set *s, const char *fname, bool need_all, nvfp4_error *err)
{
    if (nvfp4_tset_meta_get(s, "groups"))
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: a grouped bundle (metadata \"groups\"): validate it with "
                               "nvfp4_grouped_bundle_validate (nvfp4_bundle_load does)", fname);
    bundle_desc b;
    nvfp4_status st = bundle_layout(s, fname, &b, err);
    return st ? st : check_components(s, fname, need_all, &b, err);
}

/* A per-token recipe's `per_token_scale`, when present, must be F32 [prows]
 * and hold, bit for bit, the scale each row's amax implies (a scale taken
 * from the wrong axis, or a row amax stored in its place, is an error that
 * names the row); other recipes must not carry one. */
static nvfp4_status check_per_token_scale(const nvfp4_tensor_set *s, const char *fname, const char *sfx,
                                          const nvfp4_recipe *r, const nvfp4_qtensor *t, nvfp4_error *err)
{
    char n[40];
    snprintf(n, sizeof n, "per_token_scale%s", sfx);
    const nvfp4_tensor *p = nvfp4_tset_find(s, n);
    if (!p) return NVFP4_OK;
    if (!has_per_token_scale(r))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: component '%s' present but recipe %s has no per-token scale",
                               fname, n, nvfp4_recipe_get_info(r)->name);
    nvfp4_status st = check_component(s, fname, n, NVFP4_T_F32, 1, t->prows, 0, true, err);
    if (st) return st;
    const float *v = (const float *)(const void *)p->data;
    for (size_t i = 0; i < t->prows; i++) {
        float want = per_token_scale_of(r, t, i);
        if (memcmp(&v[i], &want, sizeof want) != 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT,
                                   "%s: %s[%zu] is %.9g, but the row's amax %.9g gives %.9g (1/S_enc, 0 for a zero row)",
                                   fname, n, i, (double)v[i], (double)(t->row_amax ? t->row_amax[i] : t->amax),
                                   (double)want);
    }
    return NVFP4_OK;
}

/* Copies one orientation out of the set; scales from `scale`, or from
 * `scale_swizzled` when only that is present. */
static nvfp4_status take_orientation(const nvfp4_tensor_set *s, const char *fname, const char *sfx, const geometry *g,
                                     size_t namax, nvfp4_scale_layout sl, nvfp4_qtensor *t, nvfp4_error *err)
{
    bool has_amax = namax > 0;
    char n[32];
    snprintf(n, sizeof n, "data%s", sfx);
    const nvfp4_tensor *d = nvfp4_tset_find(s, n);
    if (!d) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks the component '%s'", fname, n);
    snprintf(n, sizeof n, "scale%s", sfx);
    const nvfp4_tensor *sc = nvfp4_tset_find(s, n);
    snprintf(n, sizeof n, "scale%s_swizzled", sfx);
    const nvfp4_tensor *sz = nvfp4_tset_find(s, n);
    if (!sc && !sz)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks both 'scale%s' and 'scale%s_swizzled'", fname, sfx,
                               sfx);
    snprintf(n, sizeof n, "amax%s", sfx);
    const nvfp4_tensor *a = nvfp4_tset_find(s, n);
    if (has_amax && !a) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: bundle lacks the component '%s'", fname, n);
    t->rows = g->rows;
    t->cols = g->cols;
    t->prows = g->prows;
    t->pcols = g->pcols;
    t->data_bytes = d->nbytes;
    t->scale_rows = g->scale_rows;
    t->scale_cols = g->scale_cols;
    size_t nscale = g->scale_rows * g->scale_cols;
    t->data = malloc(d->nbytes ? d->nbytes : 1);
    t->scale = malloc(nscale ? nscale : 1);
    if (!t->data || !t->scale) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    memcpy(t->data, d->data, d->nbytes);
    if (sc) memcpy(t->scale, sc->data, nscale);
    else nvfp4_scale_from_layout(sl, sz->data, g->scale_rows, g->scale_cols, t->scale);
    t->amax = 0.0f;
    if (a && namax > 1) {
        /* row-scaled: the rows' amaxes (checked [prows] by validate); amax is their maximum */
        if (!(t->row_amax = malloc(namax * sizeof *t->row_amax)))
            return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
        memcpy(t->row_amax, a->data, namax * sizeof *t->row_amax);
        for (size_t i = 0; i < namax; i++) t->amax = nvfp4_core_fmaxf(t->amax, t->row_amax[i]);
    } else if (a) {
        memcpy(&t->amax, a->data, sizeof t->amax);
    }
    return NVFP4_OK;
}

nvfp4_status nvfp4_bundle_to_quantized(const nvfp4_tensor_set *s, const char *fname, nvfp4_quantized *q,
                                       nvfp4_error *err)
{
    memset(q, 0, sizeof *q);
    if (nvfp4_tset_meta_get(s, "groups"))
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: a grouped bundle (one amax per group, metadata "
                               "\"groups\"): read it with nvfp4_bundle_to_grouped", fname);
    bundle_desc b;
    nvfp4_status st = bundle_layout(s, fname, &b, err);
    if (!st) st = check_components(s, fname, false, &b, err);
    if (st) return st;
    q->recipe = nvfp4_recipe_find(b.o.recipe);
    q->opts = b.o;
    q->opts.recipe = b.info->name; /* static, unlike b.o.recipe (points into s) */
    if (b.o.rowwise) {
        q->has_row = true;
        st = take_orientation(s, fname, "", &b.row, amax_count(b.info, &b.row), b.sl, &q->row, err);
    }
    if (!st && b.o.columnwise) {
        q->has_col = true;
        q->col.rht = b.o.rht;
        st = take_orientation(s, fname, "_t", &b.col, amax_count(b.info, &b.col), b.sl, &q->col, err);
    }
    if (!st && b.o.rowwise) st = check_per_token_scale(s, fname, "", q->recipe, &q->row, err);
    if (!st && b.o.columnwise) st = check_per_token_scale(s, fname, "_t", q->recipe, &q->col, err);
    if (st) nvfp4_quantized_free(q);
    return st;
}
