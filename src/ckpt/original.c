/* original.c - `ckpt check --original`: each scanned layer against the
 * unquantized weights it was made from (docs/checkpoints.md, "--original").
 * Per layer: the decoded error, the same error under two misreadings (the
 * nibbles of each byte swapped; the scales in cuBLAS's 128x4 layout), the
 * error of a correct quantization (the convention writer's recipe from the
 * library's registry), and which writer's rule, if any, gives exactly the
 * stored bytes. Codes and scales decode through src/core's tables
 * (nvfp4_e2m1_to_f32, nvfp4_e4m3_to_f32); the writers' rules are the
 * library's recipes `modelopt` and `compressed-tensors` (src/recipes/), their
 * global scale through nvfp4_core_global_from_amax: nothing here rounds.
 * A GGUF layer is compared through the original modules llama.cpp's
 * converter made it of (one, or each expert of a merged tensor), its q/k
 * rows read back in the original's order. */
#include "ckpt_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
#include "nvfp4/ggml.h"
#include "nvfp4/quant.h"
#include "recipes/recipe.h"

/* decode-error when the layer's relative RMS error exceeds this many times
 * that of a correct quantization of the same weights. A correct writer's
 * bytes give a ratio of 1 (its own rule) or about 1 (another writer's rule,
 * or a fused group's amax: the E4M3 block scale rounds the same relative
 * amount at any global scale); a misread layer is off by the size of the
 * weights (swapped nibbles: about 1.4 relative RMS against 0.1). */
#define DECODE_ERROR_FACTOR 2.0

/* The writers' rules, each convention's own first (index 0 modelopt, 1
 * to 3 compressed-tensors). compressed-tensors computes in the weight's
 * dtype: a bf16 (fp16) model's global scale and block_amax / 6 round to
 * bf16 (fp16) (recipes compressed-tensors-bf16, -fp16), an fp32 model's do
 * not. llm-compressor 0.14 (compressed-tensors 0.19) and compressed-tensors
 * 0.20.1 write the same bytes. */
#define NWRITERS 4
static const char *const writer_label[NWRITERS] = {"modelopt 0.47", "compressed-tensors 0.20.1",
                                                   "compressed-tensors 0.20.1 (bf16 weights)",
                                                   "compressed-tensors 0.20.1 (fp16 weights)"};
static const char *const writer_recipe[NWRITERS] = {"modelopt", "compressed-tensors", "compressed-tensors-bf16",
                                                    "compressed-tensors-fp16"};

/* The original's tensor of module P: P.weight, or for a Mixtral expert
 * (P = ...experts.N.gate_proj, up_proj, down_proj, the names llm-compressor
 * and modelopt write) the name Mixtral's own checkpoints give it,
 * ...experts.N.w1, w3, w2 (transformers' MixtralForCausalLM.save_pretrained
 * writes those). */
static const ckpt_tensor *find_original(const nvfp4_ckpt *o, const char *module)
{
    const ckpt_tensor *t = ckpt_find2(o, module, "weight");
    const char *leaf = ckpt_leaf(module);
    int proj = ckpt_expert_proj(leaf);
    if (t || proj < 0 || !strstr(module, ".experts.") || strcmp(leaf, ckpt_expert_proj_name(proj, 0)) != 0) return t;
    char buf[1024];
    int len = (int)(leaf - module);
    if ((size_t)snprintf(buf, sizeof buf, "%.*s%s.weight", len, module, ckpt_expert_proj_name(proj, 1)) >= sizeof buf)
        return NULL;
    return ckpt_find(o, buf);
}

/* Tensor t of the original as n floats (F32, BF16 or F16; the caller
 * checked the dtype). */
static nvfp4_status load_floats(nvfp4_ckpt *o, const ckpt_tensor *t, size_t n, float **out, nvfp4_error *err)
{
    const uint8_t *p = ckpt_bytes(o, t, err);
    if (!p) return err->status;
    float *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_tdtype dt = t->e->dtype;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        if (dt == NVFP4_T_F32) memcpy(&x[i], p + 4 * i, 4);
        else {
            memcpy(&h, p + 2 * i, 2);
            x[i] = dt == NVFP4_T_BF16 ? nvfp4_bf16_to_f32(h) : nvfp4_fp16_to_f32(h);
        }
    }
    ckpt_release(o, t);
    *out = x;
    return NVFP4_OK;
}

static bool is_float_dtype(nvfp4_tdtype dt) { return dt == NVFP4_T_F32 || dt == NVFP4_T_BF16 || dt == NVFP4_T_F16; }

static size_t elements(const nvfp4_st_entry *e)
{
    size_t n = e->ndim ? 1 : 0;
    for (unsigned d = 0; d < e->ndim; d++) n *= e->shape[d];
    return n;
}

/* The original tensor t (named module.weight) as floats, checked to be a
 * [rows, cols] float matrix. */
static nvfp4_status load_matrix(nvfp4_ckpt *o, const ckpt_tensor *t, const char *module, size_t rows, size_t cols,
                                float **out, nvfp4_error *err)
{
    *out = NULL;
    const nvfp4_st_entry *e = t->e;
    const char *file = o->files[t->file];
    if (!is_float_dtype(e->dtype))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s.weight is %s; an original is F32, BF16 or F16", file,
                               module, nvfp4_tdtype_name(e->dtype));
    size_t n = elements(e);
    if (e->ndim < 2 || e->shape[e->ndim - 1] != cols || n != rows * cols)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: %s.weight has %zu elements (last dimension %zu); the checkpoint's layer is "
                               "[%zu, %zu]", file, module, n, e->ndim ? e->shape[e->ndim - 1] : 0, rows, cols);
    return load_floats(o, t, n, out, err);
}

/* How a layer's bytes are read: as stored, nibbles swapped, or the scales
 * through the 128x4 swizzle. */
enum { READ_STORED = 0, READ_SWAPPED, READ_SWIZZLED, NREADS };

typedef struct {
    double sse, max_abs;
} err_acc;

/* The decoded weights of each reading against x, added into acc: sums of
 * squared errors and largest |error|. D is the decode multiplier of the
 * global scale. The swapped reading swaps the two nibbles of each stored
 * byte: elements 2i and 2i+1 in safetensors; in a GGUF block of 16,
 * element j (low nibble) and j+8 (high), so the linear code of j ^ 8. */
static void decode_errors(const uint8_t *codes, const uint8_t *scales, size_t rows, size_t cols, double D,
                          const float *x, bool swizzled, bool gguf_nibbles, err_acc acc[NREADS])
{
    float fp4[16], e4m3[256];
    for (int i = 0; i < 16; i++) fp4[i] = nvfp4_e2m1_to_f32((uint8_t)i);
    for (int i = 0; i < 256; i++) e4m3[i] = nvfp4_e4m3_to_f32((uint8_t)i);
    size_t kb = cols / 16;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < cols; j++) {
            size_t at = r * cols + j, alt = gguf_nibbles ? r * cols + (j ^ 8) : at ^ 1;
            uint8_t code = at % 2 ? codes[at / 2] >> 4 : codes[at / 2] & 15;
            uint8_t other = alt % 2 ? codes[alt / 2] >> 4 : codes[alt / 2] & 15;
            double s = e4m3[scales[r * kb + j / 16]], xv = x[r * cols + j];
            double d[NREADS] = {fp4[code] * s * D, fp4[other] * s * D, 0};
            if (swizzled) d[READ_SWIZZLED] = fp4[code] * (double)e4m3[scales[nvfp4_swizzle_offset(r, j / 16, kb)]] * D;
            for (int k = 0; k < (swizzled ? NREADS : READ_SWIZZLED); k++) {
                double e = d[k] - xv;
                acc[k].sse += e * e;
                if (fabs(e) > acc[k].max_abs || e != e) acc[k].max_abs = e != e ? INFINITY : fabs(e);
            }
        }
}

static double sum_sq(const float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return s;
}

static double rel_rms(double sse, double ssx) { return ssx > 0 ? sqrt(sse / ssx) : sqrt(sse); }

/* The sum of squared errors of a correct quantization: the writer's recipe
 * on x with x's own amax, dequantized by the recipe's own rule. */
static nvfp4_status reference_sse(const char *recipe, const float *x, size_t rows, size_t cols, double *out,
                                  nvfp4_error *err)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_quantized q;
    nvfp4_status st = nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, err);
    if (st) return st;
    float *y = malloc(rows * cols * sizeof *y);
    if (!y) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else st = nvfp4_dequantize(&q, false, y, err);
    if (!st) {
        double sse = 0;
        for (size_t i = 0; i < rows * cols; i++) sse += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
        *out = sse;
    }
    free(y);
    nvfp4_quantized_free(&q);
    return st;
}

/* Which global scale a checkpoint stores: modelopt's weight_scale_2 (g =
 * amax / 2688), compressed-tensors' weight_global_scale (S_enc = 2688 /
 * amax), or a GGUF .scale, which llama.cpp's converter copies from
 * weight_scale_2 or computes as 1 / weight_global_scale in fp32
 * (conversion/base.py prepare_tensors inverse_scale), and leaves out (read:
 * 1) within 1e-6 of 1 (_scale_is_trivial; 1e-6 + 1e-5 for merged experts,
 * np.allclose's tolerance). */
typedef enum { GLOBAL_MODELOPT, GLOBAL_CT, GLOBAL_GGUF } global_kind;

static bool global_matches(global_kind kind, nvfp4_core_global g, float stored)
{
    if (kind == GLOBAL_MODELOPT) return memcmp(&g.g, &stored, sizeof stored) == 0;
    if (kind == GLOBAL_CT) return memcmp(&g.s_enc, &stored, sizeof stored) == 0;
    float recip = 1.0f / g.s_enc;
    if (stored == 1.0f && (fabs(g.g - 1.0) <= 1.1e-5 || fabs(recip - 1.0) <= 1.1e-5)) return true;
    return memcmp(&g.g, &stored, sizeof stored) == 0 || memcmp(&recip, &stored, sizeof stored) == 0;
}

/* Does recipe, given the weight amax `amax` (>= x's own), write exactly the
 * layer's codes, block scales and global scale? An amax above x's own is
 * given by one extra row holding it (1x16 blocks are row-local, so the
 * other rows' bytes are those of a quantization with that amax). */
static nvfp4_status writes_same_bytes(const nvfp4_recipe *rec, global_kind kind, const float *x, size_t rows,
                                      size_t cols, float amax, float own, const uint8_t *codes,
                                      const uint8_t *scales, float stored_global, bool *same, nvfp4_error *err)
{
    *same = false;
    size_t qrows = rows + (amax > own);
    float *xx = calloc(qrows * cols, sizeof *xx);
    if (!xx) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    memcpy(xx, x, rows * cols * sizeof *xx);
    if (qrows > rows) xx[rows * cols] = amax;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = rec->info.name;
    nvfp4_quantized q;
    nvfp4_status st = nvfp4_quantize(xx, NVFP4_DTYPE_F32, qrows, cols, &o, &q, err);
    free(xx);
    if (st) return st;
    nvfp4_core_global g = nvfp4_core_global_from_amax(&rec->core, q.row.amax);
    *same = global_matches(kind, g, stored_global) && memcmp(q.row.data, codes, rows * cols / 2) == 0 &&
            memcmp(q.row.scale, scales, rows * cols / 16) == 0;
    nvfp4_quantized_free(&q);
    return NVFP4_OK;
}

/* The amax a fused group shares in the original: the largest of the
 * original's PARENT.M.weight for M in the module's set (q/k/v, gate/up,
 * w1/w3; `module` named as in the original); `own` when it is in none. */
static nvfp4_status group_amax(nvfp4_ckpt *o, const char *module, float own, float *out, nvfp4_error *err)
{
    *out = own;
    const char *lf = ckpt_leaf(module);
    int set = ckpt_fused_set_of(lf);
    if (set < 0) return NVFP4_OK;
    for (const char *const *m = ckpt_fused_members(set); *m; m++) {
        char name[1100];
        if (!strcmp(*m, lf) ||
            (size_t)snprintf(name, sizeof name, "%.*s%s.weight", (int)(lf - module), module, *m) >= sizeof name)
            continue;
        const ckpt_tensor *t = ckpt_find(o, name);
        if (!t || !is_float_dtype(t->e->dtype)) continue;
        float *y;
        size_t n = elements(t->e);
        nvfp4_status st = load_floats(o, t, n, &y, err);
        if (st) return st;
        float a = nvfp4_amax_f32(y, n);
        if (a > *out) *out = a;
        free(y);
    }
    return NVFP4_OK;
}

/* One matrix of the checkpoint in the original's row order (a layer, or an
 * expert's rows of a merged GGUF tensor) beside the original's weights. */
typedef struct {
    const char *module; /* the original's name, without .weight */
    const float *x;
    size_t rows, cols;
    const uint8_t *codes, *scales;
    float stored_global;
} slice;

/* Which writer's rule gives the slice's bytes (index into writer_label, -1
 * for none), and whether with its fused group's amax: the convention's own
 * writer first, each with the module's own amax, then its group's. */
static nvfp4_status find_writer(nvfp4_ckpt *o, global_kind kind, const slice *s, int *writer, bool *by_group,
                                nvfp4_error *err)
{
    *writer = -1;
    *by_group = false;
    float own = nvfp4_amax_f32(s->x, s->rows * s->cols), grp;
    nvfp4_status st = group_amax(o, s->module, own, &grp, err);
    if (st) return st;
    int first = kind == GLOBAL_CT ? 1 : 0;
    for (int k = 0; k < NWRITERS; k++) {
        int w = (first + k) % NWRITERS;
        const nvfp4_recipe *rec = nvfp4_recipe_find(writer_recipe[w]);
        for (int ga = 0; ga < 1 + (grp > own); ga++) {
            bool same;
            st = writes_same_bytes(rec, kind, s->x, s->rows, s->cols, ga ? grp : own, own, s->codes, s->scales,
                                   s->stored_global, &same, err);
            if (st) return st;
            if (same) {
                *writer = w;
                *by_group = ga;
                return NVFP4_OK;
            }
        }
    }
    return NVFP4_OK;
}

/* A finding already explains the layer (a wrong global scale, NaN scales...). */
static bool layer_has_error(const nvfp4_ckpt_report *rep, const nvfp4_ckpt_layer *l)
{
    size_t n = strlen(l->name);
    for (size_t i = 0; i < rep->nfindings; i++) {
        const nvfp4_ckpt_finding *f = &rep->findings[i];
        if (f->severity == NVFP4_CKPT_ERROR && strncmp(f->tensor, l->name, n) == 0 && f->tensor[n] == '.') return true;
    }
    return false;
}

static int reference_writer(const nvfp4_ckpt *c) { return c->conv == NVFP4_CKPT_COMPRESSED_TENSORS ? 1 : 0; }

static bool add_error_finding(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    double lim = DECODE_ERROR_FACTOR * l->ref_rel_rms;
    const char *ref = writer_label[reference_writer(c)];
    bool gguf = c->conv == NVFP4_CKPT_GGUF;
    if (l->err_rel_rms <= lim || layer_has_error(rep, l)) return true;
    if (l->err_swapped_rel_rms <= lim)
        return ckpt_add_finding(rep, l->weight_tensor, "nibble-order", NVFP4_CKPT_ERROR,
                                "%s decodes with relative RMS error %.4g against the original, above %g x %.4g (a "
                                "correct quantization, %s's rule); with the two nibbles of each byte swapped it "
                                "decodes with %.4g: %s. Fix: swap the nibbles of every %sbyte ((b << 4) | (b >> 4))",
                                l->weight_tensor, l->err_rel_rms, DECODE_ERROR_FACTOR, l->ref_rel_rms, ref,
                                l->err_swapped_rel_rms,
                                gguf ? "element j of each 16 is in the high nibble, ggml's NVFP4 block puts it in "
                                       "the low one (j + 8 in the high)"
                                     : "element 2i is in the high nibble, the convention puts it in the low one",
                                gguf ? "code byte of each 36-byte block (the 32 after the 4 scale bytes), every " : "");
    char sn[1100];
    snprintf(sn, sizeof sn, "%s.weight_scale", l->name);
    if (l->err_swizzled_rel_rms >= 0 && l->err_swizzled_rel_rms <= lim)
        return ckpt_add_finding(rep, sn, "scale-layout", NVFP4_CKPT_ERROR,
                                "%s decodes %s with relative RMS error %.4g against the original, above %g x %.4g (a "
                                "correct quantization); read in cuBLAS's 128x4 swizzled layout the scales decode it "
                                "with %.4g: they are swizzled (the shape [%zu, %zu] is the same either way). Fix: "
                                "unswizzle the scales to the linear layout", sn, l->weight_tensor, l->err_rel_rms,
                                DECODE_ERROR_FACTOR, l->ref_rel_rms, l->err_swizzled_rel_rms, l->rows, l->cols / 16);
    return ckpt_add_finding(rep, l->weight_tensor, "decode-error", NVFP4_CKPT_ERROR,
                            "%s decodes with relative RMS error %.4g (largest |error| %.4g) against the original, "
                            "above %g x %.4g, the error of a correct quantization of the same weights (%s's rule); "
                            "neither swapped nibbles (%.4g) nor swizzled scales explain it. Fix: re-export the layer "
                            "from the original weights", l->weight_tensor, l->err_rel_rms, l->err_max_abs,
                            DECODE_ERROR_FACTOR, l->ref_rel_rms, ref, l->err_swapped_rel_rms);
}

/* What the slices of one layer add up to. */
typedef struct {
    err_acc acc[NREADS];
    double ssx, ref_sse;
    int writer;    /* the writer of every slice so far; -1 none, -2 before the first */
    bool by_group; /* some slice's bytes come from its group's amax */
    bool partial;  /* a slice was left out (no usable multiplier, or missing from the original) */
} layer_acc;

static nvfp4_status add_slice(nvfp4_ckpt *o, global_kind kind, const char *ref_recipe, const slice *s, bool swz,
                              bool gguf_nibbles, double D, layer_acc *a, nvfp4_error *err)
{
    decode_errors(s->codes, s->scales, s->rows, s->cols, D, s->x, swz, gguf_nibbles, a->acc);
    a->ssx += sum_sq(s->x, s->rows * s->cols);
    double ref;
    nvfp4_status st = reference_sse(ref_recipe, s->x, s->rows, s->cols, &ref, err);
    if (st) return st;
    a->ref_sse += ref;
    int w;
    bool g;
    if ((st = find_writer(o, kind, s, &w, &g, err))) return st;
    a->writer = a->writer == -2 || a->writer == w ? w : -1;
    a->by_group |= w >= 0 && g;
    return NVFP4_OK;
}

static void store_layer(nvfp4_ckpt_layer *l, const layer_acc *a, bool swz)
{
    l->err_rel_rms = rel_rms(a->acc[READ_STORED].sse, a->ssx);
    l->err_max_abs = a->acc[READ_STORED].max_abs;
    l->err_swapped_rel_rms = rel_rms(a->acc[READ_SWAPPED].sse, a->ssx);
    l->err_swizzled_rel_rms = swz ? rel_rms(a->acc[READ_SWIZZLED].sse, a->ssx) : -1;
    l->ref_rel_rms = rel_rms(a->ref_sse, a->ssx);
    l->written_by = a->writer >= 0 ? writer_label[a->writer] : NULL;
    l->written_group_amax = a->writer >= 0 && a->by_group;
    l->compared = true;
}

static nvfp4_status compare_layer(nvfp4_ckpt *c, nvfp4_ckpt *o, nvfp4_ckpt_report *rep, nvfp4_ckpt_layer *l,
                                  nvfp4_error *err)
{
    if (!l->decoded || !l->has_global || !isfinite(l->decode_mult)) return NVFP4_OK;
    const ckpt_tensor *ot = find_original(o, l->name);
    if (!ot) return NVFP4_OK;
    float *x;
    nvfp4_status st = load_matrix(o, ot, l->name, l->rows, l->cols, &x, err);
    if (st) return st;
    const ckpt_tensor *w = ckpt_find(c, l->weight_tensor), *s = ckpt_find2(c, l->name, "weight_scale");
    const uint8_t *codes = ckpt_bytes(c, w, err), *scales = codes ? ckpt_bytes(c, s, err) : NULL;
    char *module = strndup(ot->e->name, strlen(ot->e->name) - strlen(".weight"));
    if (!scales) st = err->status;
    else if (!module) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    bool swz = l->rows % 128 == 0 && (l->cols / 16) % 4 == 0;
    global_kind kind = c->conv == NVFP4_CKPT_MODELOPT ? GLOBAL_MODELOPT : GLOBAL_CT;
    layer_acc a = {.writer = -2};
    slice sl = {module, x, l->rows, l->cols, codes, scales, (float)l->global_scale};
    if (!st) st = add_slice(o, kind, writer_recipe[reference_writer(c)], &sl, swz, false, l->decode_mult, &a, err);
    free(x);
    free(module);
    if (st) return st;
    store_layer(l, &a, swz);
    ckpt_release(c, w);
    ckpt_release(c, s);
    return add_error_finding(c, l, rep) ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
}

/* ---- GGUF: a layer made of one or several original modules --------------------------------------------------- */

/* The original modules llama.cpp's converter made GGUF layer `name` of: the
 * original's tensors whose GGUF name it is (ckpt_gguf_name_of), each with
 * its expert index (-1 for a plain layer). */
typedef struct {
    const ckpt_tensor *t;
    int expert;
} gguf_part;

static size_t gguf_parts(const nvfp4_ckpt *o, const char *name, gguf_part *parts, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < o->ntensors; i++) {
        const char *tn = o->tensors[i].e->name;
        size_t len = strlen(tn);
        char module[1024], gname[1100];
        int expert;
        if (len <= 7 || strcmp(tn + len - 7, ".weight") || len - 7 >= sizeof module) continue;
        memcpy(module, tn, len - 7);
        module[len - 7] = 0;
        if (!ckpt_gguf_name_of(module, gname, sizeof gname, &expert) || strcmp(gname, name)) continue;
        if (n < cap) parts[n] = (gguf_part){&o->tensors[i], expert};
        n++;
    }
    return n;
}

/* Rows rows of cols columns of the unpacked GGUF (codes, scales), from row
 * row0 + map[r], into the original's order. */
static void gather_rows(const uint8_t *codes, const uint8_t *scales, size_t row0, const size_t *map, size_t rows,
                        size_t cols, uint8_t *out_codes, uint8_t *out_scales)
{
    for (size_t r = 0; r < rows; r++) {
        size_t g = row0 + (map ? map[r] : r);
        memcpy(out_codes + r * cols / 2, codes + g * cols / 2, cols / 2);
        memcpy(out_scales + r * cols / 16, scales + g * cols / 16, cols / 16);
    }
}

/* One original module of a GGUF layer (the whole layer, or expert e's
 * rows), added into a. */
static nvfp4_status compare_gguf_part(nvfp4_ckpt *c, nvfp4_ckpt *o, const nvfp4_ckpt_layer *l, const gguf_part *p,
                                      size_t rows, const uint8_t *codes, const uint8_t *scales, layer_acc *a,
                                      nvfp4_error *err)
{
    const char *tn = p->t->e->name;
    char module[1024];
    snprintf(module, sizeof module, "%.*s", (int)(strlen(tn) - 7), tn);
    bool ok, oom;
    float D = ckpt_gguf_multiplier(c, l->name, p->expert, err, &ok);
    if (!ok) return err->status;
    if (!(D > 0) || !isfinite(D)) { /* a finding of the scan explains it */
        a->partial = true;
        return NVFP4_OK;
    }
    float *x;
    nvfp4_status st = load_matrix(o, p->t, module, rows, l->cols, &x, err);
    if (st) return st;
    size_t *map = ckpt_gguf_rope_rowmap(c, l->name, rows, err, &oom);
    uint8_t *pc = malloc(rows * l->cols / 2 + 1), *ps = malloc(rows * l->cols / 16 + 1);
    if (oom) st = err->status;
    else if (!pc || !ps) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else {
        gather_rows(codes, scales, p->expert < 0 ? 0 : (size_t)p->expert * rows, map, rows, l->cols, pc, ps);
        slice s = {module, x, rows, l->cols, pc, ps, D};
        st = add_slice(o, GLOBAL_GGUF, writer_recipe[0], &s, false, true, D, a, err);
    }
    free(x);
    free(map);
    free(pc);
    free(ps);
    return st;
}

static nvfp4_status compare_gguf_layer(nvfp4_ckpt *c, nvfp4_ckpt *o, nvfp4_ckpt_report *rep, nvfp4_ckpt_layer *l,
                                       nvfp4_error *err)
{
    if (!l->decoded || !l->has_global || !isfinite(l->decode_mult)) return NVFP4_OK;
    size_t n = gguf_parts(o, l->name, NULL, 0);
    if (!n) return NVFP4_OK;
    gguf_part *parts = malloc(n * sizeof *parts);
    if (!parts) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    gguf_parts(o, l->name, parts, n);
    /* a plain layer is one module of the layer's shape; a merged one, one
     * module per expert, each of rows / experts rows */
    bool merged = parts[0].expert >= 0;
    size_t experts = merged ? l->rows / (parts[0].t->e->ndim ? parts[0].t->e->shape[0] : 1) : 1;
    size_t rows = merged ? l->rows / (experts ? experts : 1) : l->rows;
    for (size_t i = 0; i < n; i++)
        if ((parts[i].expert >= 0) != merged || (merged && (size_t)parts[i].expert >= experts) || (!merged && n > 1)) {
            free(parts);
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s: the original's %s does not fit it (%zu modules; "
                                   "a plain layer is one, a merged one one per expert)", c->dir, l->name,
                                   parts[i].t->e->name, n);
        }
    const ckpt_tensor *w = ckpt_find(c, l->weight_tensor);
    const uint8_t *blocks = ckpt_bytes(c, w, err);
    size_t nel = l->rows * l->cols;
    uint8_t *codes = malloc(nel / 2 + 1), *scales = malloc(nel / 16 + 1);
    nvfp4_status st = blocks ? NVFP4_OK : err->status;
    if (!st && (!codes || !scales)) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (!st) st = nvfp4_ggml_nvfp4_unpack(blocks, w->e->nbytes, l->rows, l->cols, codes, scales, err);
    layer_acc a = {.writer = -2};
    for (size_t i = 0; !st && i < n; i++) st = compare_gguf_part(c, o, l, &parts[i], rows, codes, scales, &a, err);
    free(codes);
    free(scales);
    free(parts);
    ckpt_release(c, w);
    if (st) return st;
    if (a.writer == -2) return NVFP4_OK; /* no part had a usable multiplier */
    if (a.partial || (merged && n < experts)) a.writer = -1; /* not every byte was checked */
    store_layer(l, &a, false);
    return add_error_finding(c, l, rep) ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
}

nvfp4_status nvfp4_ckpt_compare(nvfp4_ckpt *c, const char *original, nvfp4_ckpt_report *rep, nvfp4_error *err)
{
    nvfp4_ckpt *o;
    nvfp4_status st = ckpt_open_weights(original, &o, err);
    for (size_t i = 0; !st && i < rep->nlayers; i++)
        st = c->conv == NVFP4_CKPT_GGUF ? compare_gguf_layer(c, o, rep, &rep->layers[i], err)
                                        : compare_layer(c, o, rep, &rep->layers[i], err);
    nvfp4_ckpt_close(o);
    return st;
}
