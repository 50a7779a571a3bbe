/* scan.c - the layers of a checkpoint and one pass over each: which module
 * prefixes hold NVFP4 codes, what the configuration says of them, and the
 * statistics of their codes and block scales. Codes decode through
 * nvfp4_e2m1_to_f32 and scale bytes through nvfp4_e4m3_to_f32 (src/core);
 * this file only counts and takes maxima. */
#include "ckpt_internal.h"

#include <fnmatch.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"

static bool has_suffix(const char *s, const char *suf, size_t *prefix_len)
{
    size_t n = strlen(s), m = strlen(suf);
    if (n <= m + 1 || s[n - m - 1] != '.' || strcmp(s + n - m, suf) != 0) return false;
    *prefix_len = n - m - 1;
    return true;
}

/* One float of a one-element tensor of any float dtype; false if it has
 * more elements or is not a float. */
static bool read_scalar(nvfp4_ckpt *c, const ckpt_tensor *t, double *v, nvfp4_error *err, bool *io_failed)
{
    size_t n = nvfp4_tdtype_size(t->e->dtype);
    *io_failed = false;
    if (t->e->nbytes != n) return false;
    const uint8_t *p = ckpt_bytes(c, t, err);
    if (!p) {
        *io_failed = true;
        return false;
    }
    switch (t->e->dtype) {
    case NVFP4_T_F32: { float f; memcpy(&f, p, 4); *v = f; return true; }
    case NVFP4_T_F64: memcpy(v, p, 8); return true;
    case NVFP4_T_BF16: { uint16_t b; memcpy(&b, p, 2); *v = nvfp4_bf16_to_f32(b); return true; }
    case NVFP4_T_F16: { uint16_t b; memcpy(&b, p, 2); *v = nvfp4_fp16_to_f32(b); return true; }
    default: return false;
    }
}

/* The decode multiplier D of a stored global scale: modelopt's
 * weight_scale_2 multiplies (dequantize: fp4 * weight_scale * weight_scale_2);
 * compressed-tensors' weight_global_scale divides (forward_helpers.py
 * _dequantize: x_q * (scale / global_scale)). */
static double decode_mult(nvfp4_ckpt_convention conv, double g)
{
    return conv == NVFP4_CKPT_MODELOPT ? g : 1.0 / g;
}

static bool scale_dtype_ok(nvfp4_tdtype t) { return t == NVFP4_T_F8_E4M3 || t == NVFP4_T_U8; }

/* Codes and scales agree: codes [..., k/2] U8, scales [..., k/16] E4M3 bytes,
 * the same leading dimensions. */
static bool shapes_agree(const nvfp4_st_entry *w, const nvfp4_st_entry *s)
{
    if (w->ndim < 2 || s->ndim != w->ndim || w->dtype != NVFP4_T_U8 || !scale_dtype_ok(s->dtype)) return false;
    for (unsigned d = 0; d + 1 < w->ndim; d++)
        if (w->shape[d] != s->shape[d]) return false;
    size_t half = w->shape[w->ndim - 1];
    return half % 8 == 0 && s->shape[s->ndim - 1] == half / 8;
}

static nvfp4_status scan_layer(nvfp4_ckpt *c, const char *module, nvfp4_ckpt_layer *l, nvfp4_error *err)
{
    const ckpt_tensor *w = ckpt_find2(c, module, ckpt_weight_suffix(c)), *s = ckpt_find2(c, module, "weight_scale"),
                      *g = ckpt_find2(c, module, ckpt_global_suffix(c)), *in = ckpt_find2(c, module, ckpt_input_suffix(c));
    bool io_failed;
    if (g) {
        l->has_global = read_scalar(c, g, &l->global_scale, err, &io_failed);
        if (io_failed) return err->status;
        if (l->has_global) {
            l->decode_mult = decode_mult(c->conv, l->global_scale);
            l->amax_implied = CKPT_GLOBAL_CONST * l->decode_mult;
        }
    }
    if (in) {
        l->has_input_scale = read_scalar(c, in, &l->input_scale, err, &io_failed);
        if (io_failed) return err->status;
    }
    const nvfp4_st_entry *we = w->e;
    l->cols = 2 * we->shape[we->ndim - 1];
    l->rows = 1;
    for (unsigned d = 0; d + 1 < we->ndim; d++) l->rows *= we->shape[d];
    if (!s || !shapes_agree(we, s->e)) return NVFP4_OK; /* not decodable: checks.c says why */
    const uint8_t *codes = ckpt_bytes(c, w, err), *scales = codes ? ckpt_bytes(c, s, err) : NULL;
    if (!scales) return err->status;
    ckpt_scan_blocks(codes, scales, s->e->nbytes, l->has_global ? l->decode_mult : 1.0, l);
    l->decoded = true;
    ckpt_release(c, w);
    ckpt_release(c, s);
    return NVFP4_OK;
}

/* A module holds NVFP4 codes when its weight tensor is U8 codes
 * (modelopt "weight", compressed-tensors "weight_packed") next to a
 * weight_scale, or when the configuration lists it as NVFP4 and it has
 * such a weight tensor. */
static bool is_layer(const nvfp4_ckpt *c, const ckpt_tensor *t, char *module, size_t cap)
{
    size_t n;
    if (!has_suffix(t->e->name, ckpt_weight_suffix(c), &n) || n + 1 > cap) return false;
    memcpy(module, t->e->name, n);
    module[n] = 0;
    if (t->e->ndim < 2) return false;
    if (c->conv == NVFP4_CKPT_COMPRESSED_TENSORS) return true;
    return t->e->dtype == NVFP4_T_U8 && ckpt_find2(c, module, "weight_scale") != NULL;
}

nvfp4_status nvfp4_ckpt_scan(nvfp4_ckpt *c, nvfp4_ckpt_progress progress, void *ctx, nvfp4_ckpt_report *rep,
                             nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->convention = c->conv;
    rep->nfiles = c->nfiles;
    if (!(rep->scheme = strdup(c->scheme))) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (c->conv == NVFP4_CKPT_GGUF) return ckpt_scan_gguf(c, progress, ctx, rep, err);
    char module[1024];
    size_t n = 0;
    for (size_t i = 0; i < c->ntensors; i++) n += is_layer(c, &c->tensors[i], module, sizeof module);
    rep->layers = calloc(n ? n : 1, sizeof *rep->layers);
    if (!rep->layers) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->ntensors; i++) {
        if (!is_layer(c, &c->tensors[i], module, sizeof module)) continue;
        nvfp4_ckpt_layer *l = &rep->layers[rep->nlayers++];
        bool wo;
        const char *algo = ckpt_layer_algo(c, module, &wo);
        l->name = strdup(module);
        l->weight_tensor = strdup(c->tensors[i].e->name);
        l->algo = strdup(algo ? algo : "(not listed)");
        l->weight_only = wo;
        if (!l->name || !l->weight_tensor || !l->algo) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        nvfp4_status st = scan_layer(c, module, l, err);
        if (st) return st;
        rep->bytes_scanned += c->tensors[i].e->nbytes;
        if (!ckpt_check_layer(c, l, rep)) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        if (progress) progress(rep->nlayers, n, module, ctx);
    }
    return ckpt_check_layers(c, rep, err);
}

