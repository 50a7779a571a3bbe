/* original.c - `ckpt check --original`: each scanned layer against the
 * unquantized weights it was made from (docs/checkpoints.md, "--original").
 * Per layer: the decoded error, the same error under two misreadings (the
 * nibbles of each byte swapped; the scales in cuBLAS's 128x4 layout), the
 * error of a correct quantization (the convention writer's recipe from the
 * library's registry), and which writer's rule, if any, gives exactly the
 * stored bytes. Codes and scales decode through src/core's tables
 * (nvfp4_e2m1_to_f32, nvfp4_e4m3_to_f32); the writers' rules are the
 * library's recipes `modelopt` and `compressed-tensors` (src/recipes/), their
 * global scale through nvfp4_core_global_from_amax: nothing here rounds. */
#include "ckpt_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
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
 * and 2 compressed-tensors). compressed-tensors computes in the weight's
 * dtype: a bf16 model's global scale and block_amax / 6 round to bf16
 * (recipe compressed-tensors-bf16), an fp32 model's do not. llm-compressor
 * 0.14 (compressed-tensors 0.19) and compressed-tensors 0.20.1 write the
 * same bytes. */
#define NWRITERS 3
static const char *const writer_label[NWRITERS] = {"modelopt 0.47", "compressed-tensors 0.20.1",
                                                   "compressed-tensors 0.20.1 (bf16 weights)"};
static const char *const writer_recipe[NWRITERS] = {"modelopt", "compressed-tensors", "compressed-tensors-bf16"};

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

/* The original P.weight as floats (NULL when the original lacks it). */
static nvfp4_status load_weight(nvfp4_ckpt *o, const char *module, size_t rows, size_t cols, float **out,
                                nvfp4_error *err)
{
    *out = NULL;
    const ckpt_tensor *t = find_original(o, module);
    if (!t) return NVFP4_OK;
    const nvfp4_st_entry *e = t->e;
    const char *file = o->files[t->file];
    if (e->dtype != NVFP4_T_F32 && e->dtype != NVFP4_T_BF16 && e->dtype != NVFP4_T_F16)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s.weight is %s; an original is F32, BF16 or F16", file,
                               module, nvfp4_tdtype_name(e->dtype));
    size_t n = e->ndim ? 1 : 0;
    for (unsigned d = 0; d < e->ndim; d++) n *= e->shape[d];
    if (e->ndim < 2 || e->shape[e->ndim - 1] != cols || n != rows * cols)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: %s.weight has %zu elements (last dimension %zu); the checkpoint's layer is "
                               "[%zu, %zu]", file, module, n, e->ndim ? e->shape[e->ndim - 1] : 0, rows, cols);
    const uint8_t *p = ckpt_bytes(o, t, err);
    if (!p) return err->status;
    float *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        if (e->dtype == NVFP4_T_F32) memcpy(&x[i], p + 4 * i, 4);
        else {
            memcpy(&h, p + 2 * i, 2);
            x[i] = e->dtype == NVFP4_T_BF16 ? nvfp4_bf16_to_f32(h) : nvfp4_fp16_to_f32(h);
        }
    }
    ckpt_release(o, t);
    *out = x;
    return NVFP4_OK;
}

/* How a layer's bytes are read: as stored, nibbles swapped, or the scales
 * through the 128x4 swizzle. */
enum { READ_STORED = 0, READ_SWAPPED, READ_SWIZZLED, NREADS };

typedef struct {
    double sse, max_abs;
} err_acc;

/* The decoded weights of each reading against x: sum of squared errors and
 * largest |error|. D is the decode multiplier of the global scale. */
static void decode_errors(const uint8_t *codes, const uint8_t *scales, size_t rows, size_t cols, double D,
                          const float *x, bool swizzled, err_acc acc[NREADS])
{
    float fp4[16], e4m3[256];
    for (int i = 0; i < 16; i++) fp4[i] = nvfp4_e2m1_to_f32((uint8_t)i);
    for (int i = 0; i < 256; i++) e4m3[i] = nvfp4_e4m3_to_f32((uint8_t)i);
    size_t kb = cols / 16;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < cols; j++) {
            uint8_t b = codes[(r * cols + j) / 2];
            uint8_t code = j % 2 ? b >> 4 : b & 15, other = j % 2 ? b & 15 : b >> 4;
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

/* The relative RMS error of a correct quantization: the writer's recipe on
 * x with x's own amax, dequantized by the recipe's own rule. */
static nvfp4_status reference_error(const char *recipe, const float *x, size_t rows, size_t cols, double ssx,
                                    double *out, nvfp4_error *err)
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
        *out = rel_rms(sse, ssx);
    }
    free(y);
    nvfp4_quantized_free(&q);
    return st;
}

/* Does recipe, given the weight amax `amax` (>= x's own), write exactly the
 * layer's codes, block scales and global scale? An amax above x's own is
 * given by one extra row holding it (1x16 blocks are row-local, so the
 * other rows' bytes are those of a quantization with that amax). */
static nvfp4_status writes_same_bytes(const nvfp4_recipe *rec, bool modelopt_global, const float *x, size_t rows,
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
    float want = modelopt_global ? g.g : g.s_enc;
    *same = memcmp(&want, &stored_global, sizeof want) == 0 && memcmp(q.row.data, codes, rows * cols / 2) == 0 &&
            memcmp(q.row.scale, scales, rows * cols / 16) == 0;
    nvfp4_quantized_free(&q);
    return NVFP4_OK;
}

/* The amax a fused group shares in the original: the largest of its
 * members' (modules under the same parent in the same group); x's own when
 * the layer is in no group. */
static nvfp4_status group_amax(nvfp4_ckpt *o, const nvfp4_ckpt_report *rep, const nvfp4_ckpt_layer *l, float own,
                               float *out, nvfp4_error *err)
{
    *out = own;
    const char *lf = ckpt_leaf(l->name);
    int set = ckpt_fused_set_of(lf);
    if (set < 0) return NVFP4_OK;
    for (size_t i = 0; i < rep->nlayers; i++) {
        const nvfp4_ckpt_layer *m = &rep->layers[i];
        const char *mf = ckpt_leaf(m->name);
        if (m == l || ckpt_fused_set_of(mf) != set || mf - m->name != lf - l->name ||
            strncmp(m->name, l->name, (size_t)(lf - l->name)) != 0)
            continue;
        float *y;
        nvfp4_status st = load_weight(o, m->name, m->rows, m->cols, &y, err);
        if (st) return st;
        if (!y) continue;
        float a = nvfp4_amax_f32(y, m->rows * m->cols);
        if (a > *out) *out = a;
        free(y);
    }
    return NVFP4_OK;
}

/* Which writer's rule gives the stored bytes: the convention's own writer
 * first, with the layer's own amax, then its group's. */
static nvfp4_status find_writer(nvfp4_ckpt *c, nvfp4_ckpt *o, const nvfp4_ckpt_report *rep, nvfp4_ckpt_layer *l,
                                const float *x, const uint8_t *codes, const uint8_t *scales, nvfp4_error *err)
{
    float own = nvfp4_amax_f32(x, l->rows * l->cols), grp;
    nvfp4_status st = group_amax(o, rep, l, own, &grp, err);
    if (st) return st;
    int first = c->conv == NVFP4_CKPT_MODELOPT ? 0 : 1;
    for (int k = 0; k < NWRITERS; k++) {
        int w = (first + k) % NWRITERS;
        const nvfp4_recipe *rec = nvfp4_recipe_find(writer_recipe[w]);
        for (int ga = 0; ga < 1 + (grp > own); ga++) {
            bool same;
            st = writes_same_bytes(rec, c->conv == NVFP4_CKPT_MODELOPT, x, l->rows, l->cols, ga ? grp : own, own,
                                   codes, scales, (float)l->global_scale, &same, err);
            if (st) return st;
            if (same) {
                l->written_by = writer_label[w];
                l->written_group_amax = ga;
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

static bool add_error_finding(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    double lim = DECODE_ERROR_FACTOR * l->ref_rel_rms;
    const char *ref = writer_label[c->conv == NVFP4_CKPT_MODELOPT ? 0 : 1];
    if (l->err_rel_rms <= lim || layer_has_error(rep, l)) return true;
    if (l->err_swapped_rel_rms <= lim)
        return ckpt_add_finding(rep, l->weight_tensor, "nibble-order", NVFP4_CKPT_ERROR,
                                "%s decodes with relative RMS error %.4g against the original, above %g x %.4g (a "
                                "correct quantization, %s's rule); with the two nibbles of each byte swapped it "
                                "decodes with %.4g: element 2i is in the high nibble, the convention puts it in the "
                                "low one. Fix: swap the nibbles of every byte ((b << 4) | (b >> 4))",
                                l->weight_tensor, l->err_rel_rms, DECODE_ERROR_FACTOR, l->ref_rel_rms, ref,
                                l->err_swapped_rel_rms);
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

static nvfp4_status compare_layer(nvfp4_ckpt *c, nvfp4_ckpt *o, nvfp4_ckpt_report *rep, nvfp4_ckpt_layer *l,
                                  nvfp4_error *err)
{
    if (!l->decoded || !l->has_global || !isfinite(l->decode_mult)) return NVFP4_OK;
    float *x;
    nvfp4_status st = load_weight(o, l->name, l->rows, l->cols, &x, err);
    if (st || !x) return st;
    const ckpt_tensor *w = ckpt_find(c, l->weight_tensor), *s = ckpt_find2(c, l->name, "weight_scale");
    const uint8_t *codes = ckpt_bytes(c, w, err), *scales = codes ? ckpt_bytes(c, s, err) : NULL;
    if (!scales) st = err->status;
    size_t n = l->rows * l->cols;
    double ssx = sum_sq(x, n);
    if (!st) {
        err_acc acc[NREADS] = {{0, 0}};
        bool swz = l->rows % 128 == 0 && (l->cols / 16) % 4 == 0;
        decode_errors(codes, scales, l->rows, l->cols, l->decode_mult, x, swz, acc);
        l->err_rel_rms = rel_rms(acc[READ_STORED].sse, ssx);
        l->err_max_abs = acc[READ_STORED].max_abs;
        l->err_swapped_rel_rms = rel_rms(acc[READ_SWAPPED].sse, ssx);
        l->err_swizzled_rel_rms = swz ? rel_rms(acc[READ_SWIZZLED].sse, ssx) : -1;
        st = reference_error(writer_recipe[c->conv == NVFP4_CKPT_MODELOPT ? 0 : 1], x, l->rows, l->cols, ssx,
                             &l->ref_rel_rms, err);
    }
    if (!st) st = find_writer(c, o, rep, l, x, codes, scales, err);
    free(x);
    if (st) return st;
    l->compared = true;
    ckpt_release(c, w);
    ckpt_release(c, s);
    return add_error_finding(c, l, rep) ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
}

nvfp4_status nvfp4_ckpt_compare(nvfp4_ckpt *c, const char *original, nvfp4_ckpt_report *rep, nvfp4_error *err)
{
    if (c->conv == NVFP4_CKPT_GGUF)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: --original is not read for GGUF files yet (their tensor "
                               "names and q/k rows differ from the original's)", c->dir);
    nvfp4_ckpt *o;
    nvfp4_status st = ckpt_open_weights(original, &o, err);
    for (size_t i = 0; !st && i < rep->nlayers; i++) st = compare_layer(c, o, rep, &rep->layers[i], err);
    nvfp4_ckpt_close(o);
    return st;
}
