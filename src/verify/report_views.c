/* report_views.c - bundles and kernel tensor sets as verifier views; recipe
 * variants (moved here from the CLI so that the reports live in the library). */
#include "verify/report_views.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/trace.h"

/* Sets err and returns 2 (the CLI's exit code for an input error). */
static int fail(nvfp4_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail(nvfp4_error *err, const char *fmt, ...)
{
    char msg[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    nvfp4_error_set(err, NVFP4_EINVAL, "%s", msg);
    return VREP_ERROR;
}

/* A decimal size (metadata rows / cols): digits only, no overflow. */
static bool parse_size(const char *s, size_t *out)
{
    if (!s || !*s) return false;
    size_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        size_t d = (size_t)(*p - '0');
        if (v > (SIZE_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

float *vrep_tensor_f32(const nvfp4_tensor *t)
{
    size_t n = nvfp4_tensor_numel(t);
    float *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return NULL;
    if (t->dtype == NVFP4_T_F32) {
        memcpy(x, t->data, n * sizeof *x);
    } else if (t->dtype == NVFP4_T_BF16 || t->dtype == NVFP4_T_U16) {
        for (size_t i = 0; i < n; i++) {
            uint16_t b = (uint16_t)(t->data[2 * i] | (t->data[2 * i + 1] << 8));
            x[i] = nvfp4_bf16_to_f32(b);
        }
    } else {
        free(x);
        return NULL;
    }
    return x;
}

int vrep_bundle_load(const nvfp4_tensor_set *set, const char *path, vrep_bundle *b, nvfp4_error *err)
{
    memset(b, 0, sizeof *b);
    b->set = set;
    b->path = path;
    if (nvfp4_bundle_opts(set, path, &b->opts, err)) return VREP_ERROR;
    b->info = nvfp4_recipe_get_info(nvfp4_recipe_find(b->opts.recipe));
    if (nvfp4_bundle_scale_layout(set, path, &b->scale_layout, err)) return VREP_ERROR;
    const char *r = nvfp4_tset_meta_get(b->set, "rows"), *c = nvfp4_tset_meta_get(b->set, "cols");
    if (!r || !c || !parse_size(r, &b->rows) || !parse_size(c, &b->cols))
        return fail(err, "%s: bundle metadata lacks rows/cols", path);
    const nvfp4_tensor *x = nvfp4_tset_find(b->set, "x");
    if (x && x->dtype == NVFP4_T_F32 && (uintptr_t)x->data % _Alignof(float) == 0) {
        b->x = (const float *)(const void *)x->data; /* read in place: a copy cost the input's size again */
    } else if (x) {
        b->x = b->x_owned = vrep_tensor_f32(x);
        if (!b->x) return fail(err, "%s: input 'x' is %s, not F32 or BF16", path, nvfp4_tdtype_name(x->dtype));
    }
    return 0;
}

void vrep_bundle_free(vrep_bundle *b)
{
    free(b->x_owned);
    memset(b, 0, sizeof *b);
}

bool vrep_bundle_has(const vrep_bundle *b, bool colwise) { return colwise ? b->opts.columnwise : b->opts.rowwise; }

void vrep_view_free(vrep_view *v)
{
    free(v->swz_owned);
    free(v->dq_owned);
    memset(v, 0, sizeof *v);
}

/* x in the stored orientation, zero-padded to prows x pcols. */
static float *oriented_x(const float *x, size_t rows, size_t cols, bool colwise, size_t prows, size_t pcols)
{
    size_t n = prows * pcols;
    float *o = calloc(n ? n : 1, sizeof *o);
    if (!o) return NULL;
    size_t sr = colwise ? cols : rows, sc = colwise ? rows : cols;
    for (size_t r = 0; r < sr; r++)
        for (size_t c = 0; c < sc; c++) o[r * pcols + c] = colwise ? x[c * cols + r] : x[r * cols + c];
    return o;
}

static void geometry_view(const nvfp4_qtensor *t, const nvfp4_recipe_info *info, nvfp4_block blk, nvfp4_vview *v)
{
    memset(v, 0, sizeof *v);
    v->rows = t->prows;
    v->cols = t->pcols;
    v->block_rows = blk == NVFP4_BLOCK_16X16 ? 16 : 1;
    v->block_cols = blk == NVFP4_BLOCK_1X32 ? 32 : 16;
    v->e4m3_elements = info->elem == NVFP4_ELEM_E4M3;
    v->ue8m0_scales = info->scale_format == NVFP4_SCALEFMT_UE8M0;
    v->ue5m3_scales = info->scale_format == NVFP4_SCALEFMT_UE5M3;
    v->dequant_cols = t->cols;
}

nvfp4_status nvfp4_vview_from_quantized(const nvfp4_quantized *q, bool colwise, nvfp4_vview *v, uint8_t **swizzled,
                                        nvfp4_error *err)
{
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q->recipe);
    geometry_view(t, info, q->opts.block, v);
    *swizzled = NULL;
    v->data = t->data;
    v->data_bytes = t->data_bytes;
    v->scale = t->scale;
    v->scale_bytes = t->scale_rows * t->scale_cols;
    size_t zn = nvfp4_swizzled_size(t->scale_rows, t->scale_cols);
    uint8_t *z = malloc(zn ? zn : 1);
    if (!z) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory for %zu swizzled scale bytes", zn);
    nvfp4_scale_swizzle(t->scale, t->scale_rows, t->scale_cols, z);
    v->scale_swizzled = z;
    v->scale_swizzled_bytes = zn;
    if (info->has_global_amax) v->amax = t->row_amax ? t->row_amax : &t->amax;
    if (t->row_amax) v->amax_count = t->prows; /* row-scaled: one per stored row */
    *swizzled = z;
    return NVFP4_OK;
}

int vrep_view_from_q(const nvfp4_quantized *q, bool colwise, vrep_view *out)
{
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    nvfp4_error err;
    memset(out, 0, sizeof *out);
    if (nvfp4_vview_from_quantized(q, colwise, &out->v, &out->swz_owned, &err)) return VREP_ERROR;
    out->srows = t->rows;
    out->scols = t->cols;
    out->any = true;
    return 0;
}

static const nvfp4_tensor *find2(const nvfp4_tensor_set *s, const char *a, const char *b)
{
    const nvfp4_tensor *t = nvfp4_tset_find(s, a);
    return t ? t : (b ? nvfp4_tset_find(s, b) : NULL);
}

int vrep_expected_view(const vrep_bundle *b, bool colwise, vrep_view *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    const char *sfx = colwise ? "_t" : "";
    char n1[40], n2[40];
    snprintf(n1, sizeof n1, "data%s", sfx);
    const nvfp4_tensor *d = nvfp4_tset_find(b->set, n1);
    snprintf(n1, sizeof n1, "scale%s", sfx);
    const nvfp4_tensor *sc = nvfp4_tset_find(b->set, n1);
    snprintf(n1, sizeof n1, "scale_swizzled%s", sfx);
    snprintf(n2, sizeof n2, "scale%s_swizzled", sfx);
    const nvfp4_tensor *sz = find2(b->set, n1, n2);
    snprintf(n1, sizeof n1, "amax%s", sfx);
    const nvfp4_tensor *am = nvfp4_tset_find(b->set, n1);
    /* flashinfer-pertoken: the per-row number a kernel returns is the per-token scale, so the
     * amax component compares `per_token_scale` (docs/verify.md) */
    snprintf(n2, sizeof n2, "per_token_scale%s", sfx);
    if (nvfp4_tset_find(b->set, n2)) am = nvfp4_tset_find(b->set, n2);
    snprintf(n1, sizeof n1, "dequant%s", sfx);
    const nvfp4_tensor *dq = nvfp4_tset_find(b->set, n1);
    if (!d || !sc || !sz || !dq || (b->info->has_global_amax && !am))
        return fail(err, "%s: the %s output of the bundle is incomplete", b->path, colwise ? "columnwise" : "rowwise");
    /* the stored and padded shapes as the quantizer planned them */
    nvfp4_quant_plan plan;
    nvfp4_error e;
    if (nvfp4_quant_plan_init(&plan, &b->opts, NVFP4_DTYPE_F32, b->rows, b->cols, &e) != NVFP4_OK)
        return fail(err, "%s: %s", b->path, e.message);
    const nvfp4_quant_layout *l = colwise ? &plan.col : &plan.row;
    size_t srows = l->rows, scols = l->cols;
    nvfp4_qtensor t;
    memset(&t, 0, sizeof t);
    t.rows = srows;
    t.cols = scols;
    t.prows = l->prows;
    t.pcols = l->pcols;
    geometry_view(&t, b->info, b->opts.block, &out->v);
    out->srows = srows;
    out->scols = scols;
    out->v.data = d->data;
    out->v.data_bytes = d->nbytes;
    out->v.scale = sc->data;
    out->v.scale_bytes = sc->nbytes;
    out->v.scale_swizzled = sz->data;
    out->v.scale_swizzled_bytes = sz->nbytes;
    out->v.scale_layout = b->scale_layout;
    out->v.amax = am ? (const float *)(const void *)am->data : NULL;
    out->v.amax_count = am ? nvfp4_tensor_numel(am) : 0; /* [prows] for a row-scaled recipe */
    out->v.dequant = (const float *)(const void *)dq->data;
    out->v.dequant_count = nvfp4_tensor_numel(dq);
    /* the input in this orientation, unless it is in the Hadamard domain: the bundle's x read in place,
     * transposed by strides for the columnwise output, its padding read as 0 (a copy cost the input's
     * size again, and 16 times it for a 1 x N input padded to one block per stored row) */
    if (b->x && !(colwise && b->opts.rht)) {
        out->v.x = b->x;
        out->v.x_row_stride = colwise ? 1 : b->cols;
        out->v.x_col_stride = colwise ? b->cols : 1;
        out->v.x_rows = colwise ? b->cols : b->rows;
        out->v.x_cols = colwise ? b->rows : b->cols;
    }
    out->any = true;
    return 0;
}

float *vrep_view_x_dense(const vrep_bundle *b, bool colwise, const vrep_view *v)
{
    if (!v->v.x) return NULL;
    return oriented_x(b->x, b->rows, b->cols, colwise, v->v.rows, v->v.cols);
}

int vrep_actual_view(const char *fname, const nvfp4_tensor_set *s, bool colwise,
                     const nvfp4_vview *geom, nvfp4_vcomponent lone, vrep_view *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    out->v = *geom;
    out->v.x = NULL;
    out->v.data = out->v.scale = out->v.scale_swizzled = NULL;
    out->v.amax = out->v.dequant = NULL;
    out->v.data_bytes = out->v.scale_bytes = out->v.scale_swizzled_bytes = out->v.dequant_count = 0;
    const char *sfx = colwise ? "_t" : "";
    static const char *const base[NVFP4_VC_COUNT] = {"data", "scale", "scale_swizzled", "amax", "dequant"};
    const nvfp4_tensor *t[NVFP4_VC_COUNT];
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) {
        char n1[40], n2[40];
        snprintf(n1, sizeof n1, "%s%s", base[c], sfx);
        snprintf(n2, sizeof n2, "scale%s_swizzled", sfx);
        t[c] = find2(s, n1, c == NVFP4_VC_SCALE_SWIZZLED ? n2 : NULL);
    }
    char np[40]; /* a kernel's per-token scales stand in the amax slot (vrep_expected_view) */
    snprintf(np, sizeof np, "per_token_scale%s", sfx);
    if (nvfp4_tset_find(s, np)) t[NVFP4_VC_AMAX] = nvfp4_tset_find(s, np);
    bool none = true;
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) none = none && !t[c];
    if (none && s->count == 1 && !colwise) t[lone] = &s->tensors[0]; /* a bare kernel output, e.g. one .npy */
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) {
        if (!t[c]) continue;
        bool f32 = c == NVFP4_VC_AMAX || c == NVFP4_VC_DEQUANT;
        bool half = c == NVFP4_VC_DEQUANT && (t[c]->dtype == NVFP4_T_BF16 || t[c]->dtype == NVFP4_T_F16);
        if (f32 && t[c]->dtype != NVFP4_T_F32 && !half)
            return fail(err, "%s: component '%s' is %s; it must be F32%s", fname, t[c]->name,
                            nvfp4_tdtype_name(t[c]->dtype), c == NVFP4_VC_DEQUANT ? " (or BF16, F16)" : "");
        if (!f32 && nvfp4_tdtype_size(t[c]->dtype) != 1)
            return fail(err, "%s: component '%s' is %s; codes and scales are bytes (U8)", fname, t[c]->name,
                            nvfp4_tdtype_name(t[c]->dtype));
        /* a count other than the golden's (a per-row amax where one is expected) is not an input
         * error: nvfp4_verify records it as a size mismatch and compares the other components;
         * an empty amax is (a view's amax_count 0 means one value) */
        if (c == NVFP4_VC_AMAX && nvfp4_tensor_numel(t[c]) == 0)
            return fail(err, "%s: component '%s' holds no value", fname, t[c]->name);
        out->any = true;
    }
    if (t[0]) out->v.data = t[0]->data, out->v.data_bytes = t[0]->nbytes;
    if (t[1]) out->v.scale = t[1]->data, out->v.scale_bytes = t[1]->nbytes;
    if (t[2]) out->v.scale_swizzled = t[2]->data, out->v.scale_swizzled_bytes = t[2]->nbytes;
    if (t[3]) out->v.amax = (const float *)(const void *)t[3]->data, out->v.amax_count = nvfp4_tensor_numel(t[3]);
    out->dequant_dtype = NVFP4_T_F32;
    if (t[4] && t[4]->dtype != NVFP4_T_F32) {
        size_t n = nvfp4_tensor_numel(t[4]);
        out->dq_owned = malloc((n ? n : 1) * sizeof *out->dq_owned);
        if (!out->dq_owned) return fail(err, "out of memory");
        for (size_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(t[4]->data[2 * i] | (t[4]->data[2 * i + 1] << 8));
            out->dq_owned[i] = t[4]->dtype == NVFP4_T_BF16 ? nvfp4_bf16_to_f32(h) : nvfp4_fp16_to_f32(h);
        }
        out->dequant_dtype = t[4]->dtype;
        out->v.dequant = out->dq_owned, out->v.dequant_count = n;
    } else if (t[4]) {
        out->v.dequant = (const float *)(const void *)t[4]->data, out->v.dequant_count = nvfp4_tensor_numel(t[4]);
    }
    return 0;
}

int vrep_round_dequant(vrep_view *e, const vrep_view *a, nvfp4_error *err)
{
    if (!e->v.dequant || !a->v.dequant || a->dequant_dtype == NVFP4_T_F32) return 0;
    float *r = malloc((e->v.dequant_count ? e->v.dequant_count : 1) * sizeof *r);
    if (!r) return fail(err, "out of memory");
    bool bf = a->dequant_dtype == NVFP4_T_BF16;
    for (size_t i = 0; i < e->v.dequant_count; i++) {
        float v = e->v.dequant[i];
        r[i] = bf ? nvfp4_bf16_to_f32(nvfp4_bf16_from_f32(v)) : nvfp4_fp16_to_f32(nvfp4_fp16_from_f32(v));
    }
    free(e->dq_owned);
    e->dq_owned = r;
    e->v.dequant = r;
    return 0;
}

int vrep_variants(const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base,
                  bool colwise, bool all_blocks, vrep_variant **out, size_t *n, nvfp4_error *err)
{
    static const nvfp4_block blocks[3] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
    size_t nr = nvfp4_recipe_count(), cap = nr * 2 * 3, k = 0;
    vrep_variant *v = calloc(cap, sizeof *v);
    if (!v) return fail(err, "out of memory");
    for (size_t i = 0; i < nr; i++) {
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_at(i));
        for (int rnd = 0; rnd < 2; rnd++) {
            if (rnd == 1 && !info->supports_sr) continue;
            for (int bi = 0; bi < 3; bi++) {
                nvfp4_quant_opts o = *base;
                o.recipe = info->name;
                o.rounding = rnd ? NVFP4_SR : NVFP4_RN;
                o.rowwise = !colwise;
                o.columnwise = colwise;
                if (all_blocks) o.block = blocks[bi];
                else if (bi > 0) break;
                nvfp4_error e;
                if (nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &v[k].q, &e) != NVFP4_OK) continue;
                if (vrep_view_from_q(&v[k].q, colwise, &v[k].view)) {
                    nvfp4_quantized_free(&v[k].q);
                    continue;
                }
                snprintf(v[k].name, sizeof v[k].name, "%s %s %s", info->name, nvfp4_rounding_name(o.rounding),
                         nvfp4_block_name(v[k].q.opts.block));
                k++;
            }
        }
    }
    *out = v;
    *n = k;
    return 0;
}

void vrep_variants_free(vrep_variant *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vrep_view_free(&v[i].view);
        nvfp4_quantized_free(&v[i].q);
    }
    free(v);
}

int vrep_scaled_values(const nvfp4_recipe *rec, float amax, const uint8_t *scale, size_t rows,
                       size_t cols, size_t block_len, const float *x, float *y, nvfp4_error *err)
{
    if (nvfp4_trace_scaled(rec, amax, scale, rows, cols, block_len, x, y, err) != NVFP4_OK) return VREP_ERROR;
    return 0;
}

/* Whether the kernel's tensor set holds only columnwise components. */
bool vrep_only_columnwise(const nvfp4_tensor_set *act)
{
    static const char *const row[] = {"data", "scale", "scale_swizzled"};
    static const char *const col[] = {"data_t", "scale_t", "scale_swizzled_t", "scale_t_swizzled"};
    for (size_t i = 0; i < 3; i++)
        if (nvfp4_tset_find(act, row[i])) return false;
    for (size_t i = 0; i < 4; i++)
        if (nvfp4_tset_find(act, col[i])) return true;
    return false;
}
