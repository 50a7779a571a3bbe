/* diff.c - `nvfp4 ckpt diff A B`: are two NVFP4 checkpoints of the same
 * model the same numbers (docs/checkpoints.md, "diff")? Layers are paired
 * by module name (the same in both safetensors conventions); for each pair
 * the shares of equal code bytes and scale bytes, whether the global scales
 * decode alike, and the decoded weights compared value by value, each side
 * decoded by its own convention's rule (ckpt_decode.h: the recipes'
 * dequantization in src/core), so a modelopt and a compressed-tensors copy
 * of the same bytes differ only by what their global scales' readings do. */
#include "ckpt_decode.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "nvfp4/ggml.h"

static const nvfp4_ckpt_layer *find_layer(const nvfp4_ckpt_report *r, const char *name)
{
    for (size_t i = 0; i < r->nlayers; i++)
        if (!strcmp(r->layers[i].name, name)) return &r->layers[i];
    return NULL;
}

static bool comparable(const nvfp4_ckpt_layer *l)
{
    return l && l->decoded && l->has_global && isfinite(l->global_scale) && l->global_scale > 0;
}

/* The decoded value of every (scale byte, code) pair of one side, once. */
static void decode_table(nvfp4_ckpt_convention conv, double v, float tab[256][16])
{
    const nvfp4_core_recipe *r = ckpt_conv_core(conv);
    nvfp4_core_global g = ckpt_stored_global(conv, (float)v);
    for (int s = 0; s < 256; s++)
        for (int q = 0; q < 16; q++) tab[s][q] = nvfp4_core_dequant_value(r, &g, (uint8_t)s, (uint8_t)q);
}

static nvfp4_ckpt_diff_layer *add(nvfp4_ckpt_diff *d, const char *name, nvfp4_error *err);

/* One side of a pair: linear codes and scale bytes of `cols` columns, row r
 * of the layer at row row0 + (rowmap ? rowmap[r] : r) of the arrays (a
 * merged GGUF expert's offset, its q/k row order), and its decode table. */
typedef struct {
    const uint8_t *codes, *scales;
    size_t row0;
    const size_t *rowmap;
    float (*tab)[16];
} diff_side;

static void compare_rows(const diff_side *a, const diff_side *b, size_t rows, size_t cols, nvfp4_ckpt_diff_layer *d)
{
    uint64_t ceq = 0, seq = 0, diff = 0;
    double sse = 0, ssa = 0, maxd = 0;
    size_t kb = cols / 16;
    for (size_t r = 0; r < rows; r++) {
        size_t ra = a->row0 + (a->rowmap ? a->rowmap[r] : r), rb = b->row0 + (b->rowmap ? b->rowmap[r] : r);
        const uint8_t *ca = a->codes + ra * cols / 2, *cb = b->codes + rb * cols / 2;
        const uint8_t *ka = a->scales + ra * kb, *kbs = b->scales + rb * kb;
        for (size_t k = 0; k < kb; k++) {
            seq += ka[k] == kbs[k];
            for (size_t j = 0; j < 8; j++) {
                size_t i = 8 * k + j;
                ceq += ca[i] == cb[i];
                for (int h = 0; h < 2; h++) {
                    double x = a->tab[ka[k]][h ? ca[i] >> 4 : ca[i] & 15], y = b->tab[kbs[k]][h ? cb[i] >> 4 : cb[i] & 15];
                    double e = x - y;
                    diff += x != y;
                    sse += e * e;
                    ssa += x * x;
                    if (fabs(e) > maxd) maxd = fabs(e);
                }
            }
        }
    }
    size_t ncode = rows * cols / 2, nscale = rows * kb;
    d->compared = true;
    d->code_equal = ncode ? (double)ceq / (double)ncode : 1;
    d->scale_equal = nscale ? (double)seq / (double)nscale : 1;
    d->elements = 2 * (uint64_t)ncode;
    d->elements_differ = diff;
    d->rel_rms_diff = ssa > 0 ? sqrt(sse / ssa) : sqrt(sse);
    d->max_abs_diff = maxd;
}

static nvfp4_status compare_pair(nvfp4_ckpt *a, const nvfp4_ckpt_layer *la, nvfp4_ckpt *b,
                                 const nvfp4_ckpt_layer *lb, nvfp4_ckpt_diff_layer *d, nvfp4_error *err)
{
    const ckpt_tensor *wa = ckpt_find(a, la->weight_tensor), *sa = ckpt_find2(a, la->name, "weight_scale"),
                      *wb = ckpt_find(b, lb->weight_tensor), *sb = ckpt_find2(b, lb->name, "weight_scale");
    const uint8_t *ca = ckpt_bytes(a, wa, err), *ka = ca ? ckpt_bytes(a, sa, err) : NULL,
                  *cb = ka ? ckpt_bytes(b, wb, err) : NULL, *kb = cb ? ckpt_bytes(b, sb, err) : NULL;
    if (!kb) return err->status;
    float (*ta)[16] = malloc(2 * 256 * sizeof *ta), (*tb)[16] = ta ? ta + 256 : NULL;
    if (!ta) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    decode_table(a->conv, la->global_scale, ta);
    decode_table(b->conv, lb->global_scale, tb);
    diff_side A = {ca, ka, 0, NULL, ta}, B = {cb, kb, 0, NULL, tb};
    compare_rows(&A, &B, la->rows, la->cols, d);
    d->decode_mult_a = la->decode_mult;
    d->decode_mult_b = lb->decode_mult;
    free(ta);
    ckpt_release(a, wa);
    ckpt_release(a, sa);
    ckpt_release(b, wb);
    ckpt_release(b, sb);
    return NVFP4_OK;
}

/* ---- a safetensors checkpoint against the GGUF llama.cpp's converter made of it ---------------------------- */

/* The safetensors layer la against its tensor in the GGUF (an expert's rows
 * of a merged one), the q/k rows put back in their order. */
static nvfp4_status compare_with_gguf(nvfp4_ckpt *a, const nvfp4_ckpt_layer *la, nvfp4_ckpt *g,
                                      const nvfp4_ckpt_layer *lg, int expert, nvfp4_ckpt_diff_layer *d,
                                      nvfp4_error *err)
{
    size_t experts = lg->rows / (la->rows ? la->rows : 1);
    if (la->cols != lg->cols || !la->rows || (expert < 0 ? lg->rows != la->rows
                                                         : lg->rows % la->rows || (size_t)expert >= experts))
        return NVFP4_OK; /* not compared: the shapes do not fit */
    bool ok, oom;
    float mult = ckpt_gguf_multiplier(g, lg->name, expert, err, &ok);
    if (!ok) return err->status;
    if (!(mult > 0) || !isfinite(mult)) return NVFP4_OK;
    const ckpt_tensor *wa = ckpt_find(a, la->weight_tensor), *sa = ckpt_find2(a, la->name, "weight_scale"),
                      *wg = ckpt_find(g, lg->weight_tensor);
    const uint8_t *ca = ckpt_bytes(a, wa, err), *ka = ca ? ckpt_bytes(a, sa, err) : NULL,
                  *blocks = ka ? ckpt_bytes(g, wg, err) : NULL;
    if (!blocks) return err->status;
    size_t n = lg->rows * lg->cols;
    uint8_t *codes = malloc(n / 2 + 1), *scales = malloc(n / 16 + 1);
    float (*ta)[16] = malloc(2 * 256 * sizeof *ta);
    size_t *map = ckpt_gguf_rope_rowmap(g, lg->name, la->rows, err, &oom);
    nvfp4_status st = oom ? err->status : NVFP4_OK;
    if (!st && (!codes || !scales || !ta)) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (!st) st = nvfp4_ggml_nvfp4_unpack(blocks, wg->e->nbytes, lg->rows, lg->cols, codes, scales, err);
    if (!st) {
        decode_table(a->conv, la->global_scale, ta);
        decode_table(NVFP4_CKPT_GGUF, mult, ta + 256);
        diff_side A = {ca, ka, 0, NULL, ta}, G = {codes, scales, expert < 0 ? 0 : (size_t)expert * la->rows, map,
                                                   ta + 256};
        compare_rows(&A, &G, la->rows, la->cols, d);
        d->decode_mult_a = la->decode_mult;
        d->decode_mult_b = mult;
    }
    free(codes);
    free(scales);
    free(ta);
    free(map);
    ckpt_release(a, wa);
    ckpt_release(a, sa);
    ckpt_release(g, wg);
    return st;
}

/* A (safetensors) against G (GGUF): A's layers in its order, each with the
 * GGUF tensor it maps to, then the GGUF tensors no layer of A mapped to. */
static nvfp4_status diff_with_gguf(nvfp4_ckpt *a, const nvfp4_ckpt_report *ra, nvfp4_ckpt *g,
                                   const nvfp4_ckpt_report *rg, bool gguf_is_a, nvfp4_ckpt_diff *out,
                                   nvfp4_error *err)
{
    bool *used = calloc(rg->nlayers ? rg->nlayers : 1, sizeof *used);
    if (!used) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 0; !st && i < ra->nlayers; i++) {
        const nvfp4_ckpt_layer *la = &ra->layers[i];
        char gname[1100];
        int expert;
        const nvfp4_ckpt_layer *lg = ckpt_gguf_name_of(la->name, gname, sizeof gname, &expert) ? find_layer(rg, gname) : NULL;
        nvfp4_ckpt_diff_layer *d = add(out, la->name, err);
        if (!d) st = err->status;
        else {
            d->in_a = gguf_is_a ? lg != NULL : true;
            d->in_b = gguf_is_a ? true : lg != NULL;
            if (lg) used[lg - rg->layers] = true;
            if (lg && comparable(la) && comparable(lg)) st = compare_with_gguf(a, la, g, lg, expert, d, err);
            if (gguf_is_a) { /* the GGUF is A: its multiplier is side A's */
                double t = d->decode_mult_a;
                d->decode_mult_a = d->decode_mult_b;
                d->decode_mult_b = t;
            }
        }
    }
    for (size_t i = 0; !st && i < rg->nlayers; i++) {
        if (used[i]) continue;
        nvfp4_ckpt_diff_layer *d = add(out, rg->layers[i].name, err);
        if (!d) st = err->status;
        else d->in_a = gguf_is_a, d->in_b = !gguf_is_a;
    }
    free(used);
    return st;
}

static nvfp4_ckpt_diff_layer *add(nvfp4_ckpt_diff *d, const char *name, nvfp4_error *err)
{
    nvfp4_ckpt_diff_layer *nl = realloc(d->layers, (d->nlayers + 1) * sizeof *nl);
    if (!nl) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    d->layers = nl;
    nvfp4_ckpt_diff_layer *l = memset(&nl[d->nlayers], 0, sizeof *nl);
    if (!(l->name = strdup(name))) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    d->nlayers++;
    return l;
}

nvfp4_status nvfp4_ckpt_diff_run(nvfp4_ckpt *a, const nvfp4_ckpt_report *ra, nvfp4_ckpt *b,
                                 const nvfp4_ckpt_report *rb, nvfp4_ckpt_diff *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    if (a->conv == NVFP4_CKPT_GGUF && b->conv == NVFP4_CKPT_GGUF)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s and %s: diff compares a GGUF with the safetensors "
                               "checkpoint it was converted from, not two GGUF files", a->dir, b->dir);
    if (a->conv == NVFP4_CKPT_GGUF) return diff_with_gguf(b, rb, a, ra, true, out, err);
    if (b->conv == NVFP4_CKPT_GGUF) return diff_with_gguf(a, ra, b, rb, false, out, err);
    for (size_t i = 0; i < ra->nlayers + rb->nlayers; i++) {
        const nvfp4_ckpt_layer *l = i < ra->nlayers ? &ra->layers[i] : &rb->layers[i - ra->nlayers];
        const nvfp4_ckpt_layer *la = find_layer(ra, l->name), *lb = find_layer(rb, l->name);
        if (i >= ra->nlayers && la) continue; /* paired already */
        nvfp4_ckpt_diff_layer *d = add(out, l->name, err);
        if (!d) return err->status;
        d->in_a = la != NULL;
        d->in_b = lb != NULL;
        if (!comparable(la) || !comparable(lb) || la->rows != lb->rows || la->cols != lb->cols) continue;
        nvfp4_status st = compare_pair(a, la, b, lb, d, err);
        if (st) return st;
    }
    return NVFP4_OK;
}

void nvfp4_ckpt_diff_free(nvfp4_ckpt_diff *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nlayers; i++) free(d->layers[i].name);
    free(d->layers);
    memset(d, 0, sizeof *d);
}

const char *nvfp4_ckpt_diff_verdict(const nvfp4_ckpt_diff_layer *l)
{
    if (!l->in_a) return "only in B";
    if (!l->in_b) return "only in A";
    if (!l->compared) return "not compared (not decodable, or different shapes)";
    if (l->elements_differ == 0) return "same numbers";
    if (l->code_equal == 1 && l->scale_equal == 1)
        return "same codes and scales; the global scales decode differently (a reciprocal rounded in fp32, or "
               "another amax)";
    return "different codes or scales (another writer's rule, or other weights)";
}

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

char *nvfp4_ckpt_diff_json(const nvfp4_ckpt_diff *d)
{
    json_t *root = json_object(), *ls = json_array();
    for (size_t i = 0; i < d->nlayers; i++) {
        const nvfp4_ckpt_diff_layer *l = &d->layers[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(l->name));
        json_object_set_new(o, "in_a", json_boolean(l->in_a));
        json_object_set_new(o, "in_b", json_boolean(l->in_b));
        json_object_set_new(o, "verdict", json_string(nvfp4_ckpt_diff_verdict(l)));
        if (l->compared) {
            json_object_set_new(o, "code_bytes_equal", json_real(l->code_equal));
            json_object_set_new(o, "scale_bytes_equal", json_real(l->scale_equal));
            json_object_set_new(o, "decode_mult_a", json_real(l->decode_mult_a));
            json_object_set_new(o, "decode_mult_b", json_real(l->decode_mult_b));
            json_object_set_new(o, "elements", json_integer((json_int_t)l->elements));
            json_object_set_new(o, "elements_differ", json_integer((json_int_t)l->elements_differ));
            json_object_set_new(o, "rel_rms_diff", jnum(l->rel_rms_diff));
            json_object_set_new(o, "max_abs_diff", jnum(l->max_abs_diff));
        }
        json_array_append_new(ls, o);
    }
    json_object_set_new(root, "layers", ls);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}
