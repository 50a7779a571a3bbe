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

static bool is_nvfp4_algo(const char *a)
{
    /* modelopt 0.47 torch/export/quant_utils.py process_layer_quant_config: the
     * NVFP4-weight algorithms whose weight_scale_2 is amax/2688 (W4A8_NVFP4_FP8
     * uses amax/448 and is not read here). */
    return a && (!strcmp(a, "NVFP4") || !strcmp(a, "NVFP4_AWQ") || !strcmp(a, "NVFP4_SVD") ||
                 !strcmp(a, "W4A16_NVFP4"));
}

bool ckpt_name_matches(nvfp4_ckpt_convention conv, const char *name, const char *pattern)
{
    if (conv == NVFP4_CKPT_MODELOPT) return fnmatch(pattern, name, 0) == 0;
    if (strncmp(pattern, "re:", 3) != 0) return strcmp(pattern, name) == 0;
    /* Python's re.match anchors at the start only; POSIX ERE covers the
     * patterns these configs hold (., *, +, ?, [], |, groups) once \d and
     * (?: are spelled [0-9] and (. A pattern that still does not compile
     * matches nothing. */
    const char *p = pattern + 3;
    size_t n = 5 * strlen(p) + 4;
    char *anch = malloc(n);
    if (!anch) return false;
    size_t k = 0;
    anch[k++] = '^';
    anch[k++] = '(';
    for (; *p; p++) {
        if (p[0] == '\\' && p[1] == 'd') {
            memcpy(anch + k, "[0-9]", 5);
            k += 5;
            p++;
        } else if (p[0] == '(' && p[1] == '?' && p[2] == ':') {
            anch[k++] = '(';
            p += 2;
        } else {
            if (p[0] == '\\' && p[1]) anch[k++] = *p++;
            anch[k++] = *p;
        }
    }
    anch[k++] = ')';
    anch[k] = 0;
    regex_t re;
    bool m = false;
    if (regcomp(&re, anch, REG_EXTENDED | REG_NOSUB) == 0) {
        m = regexec(&re, name, 0, NULL, 0) == 0;
        regfree(&re);
    }
    free(anch);
    return m;
}

bool ckpt_name_matches_any(nvfp4_ckpt_convention conv, const char *name, const json_t *patterns)
{
    size_t i;
    const json_t *v;
    if (json_is_array(patterns)) json_array_foreach(patterns, i, v)
        if (json_is_string(v) && ckpt_name_matches(conv, name, json_string_value(v))) return true;
    return false;
}

/* A compressed-tensors target is a module name, a "re:" pattern, or a
 * class name ("Linear"): a class matches every module, as we cannot see
 * classes in a checkpoint. */
static bool ct_target_matches(const char *name, const char *target)
{
    if (strncmp(target, "re:", 3) != 0 && !strchr(target, '.')) return true;
    return ckpt_name_matches(NVFP4_CKPT_COMPRESSED_TENSORS, name, target);
}

/* compressed-tensors: the config group whose targets match the module
 * (compressed_tensors/quantization/quant_config.py, config_groups), or NULL. */
static const json_t *ct_group_of(const nvfp4_ckpt *c, const char *module)
{
    const json_t *groups = json_object_get(c->qcfg, "config_groups");
    const char *k;
    const json_t *g;
    if (json_is_object(groups)) json_object_foreach((json_t *)groups, k, g) {
        const json_t *targets = json_object_get(g, "targets");
        size_t i;
        const json_t *t;
        if (json_is_array(targets)) json_array_foreach(targets, i, t)
            if (json_is_string(t) && ct_target_matches(module, json_string_value(t))) return g;
    }
    return NULL;
}

static long json_int_or(const json_t *o, const char *key, long dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

const char *ckpt_layer_algo(const nvfp4_ckpt *c, const char *module, bool *weight_only)
{
    *weight_only = false;
    if (c->conv == NVFP4_CKPT_GGUF) { /* no configuration: the tensor's type says NVFP4 */
        char name[1100];
        snprintf(name, sizeof name, "%s.weight", module);
        *weight_only = ckpt_gguf_weight_only(c, name);
        return ckpt_gguf_is_nvfp4(c, name) ? "NVFP4" : NULL;
    }
    if (c->conv == NVFP4_CKPT_MODELOPT) {
        const char *algo;
        const json_t *ql = json_object_get(c->qcfg, "quantized_layers");
        if (json_is_object(ql)) { /* MIXED_PRECISION: only the listed layers */
            const json_t *l = json_object_get(ql, module);
            const json_t *a = json_object_get(l, "quant_algo");
            algo = json_is_string(a) ? json_string_value(a) : NULL;
        } else {
            if (ckpt_name_matches_any(c->conv, module, json_object_get(c->qcfg, "exclude_modules"))) return NULL;
            const json_t *a = json_object_get(c->qcfg, "quant_algo");
            algo = json_is_string(a) ? json_string_value(a) : NULL;
        }
        if (!is_nvfp4_algo(algo)) return NULL;
        *weight_only = strcmp(algo, "W4A16_NVFP4") == 0;
        return algo;
    }
    if (ckpt_name_matches_any(c->conv, module, json_object_get(c->qcfg, "ignore"))) return NULL;
    const json_t *g = ct_group_of(c, module);
    const json_t *w = json_object_get(g, "weights");
    const json_t *type = json_object_get(w, "type");
    if (!json_is_object(w) || json_int_or(w, "num_bits", 0) != 4 || !json_is_string(type) ||
        strcmp(json_string_value(type), "float") != 0 || json_int_or(w, "group_size", 0) != 16)
        return NULL;
    const json_t *in = json_object_get(g, "input_activations");
    *weight_only = !json_is_object(in) || json_int_or(in, "num_bits", 0) != 4;
    return *weight_only ? "NVFP4A16" : "NVFP4";
}

/* compressed-tensors: does the module's scheme need a static input global
 * scale (input_activations.dynamic false or "local", as in the NVFP4
 * preset of quant_scheme.py)? modelopt: every W4A4 NVFP4 layer exports
 * input_scale (unified_export_hf.py, get_activation_scaling_factor). */
bool ckpt_needs_input_scale(const nvfp4_ckpt *c, const char *module, bool weight_only)
{
    if (weight_only || c->conv == NVFP4_CKPT_GGUF) return false; /* GGUF omits an input scale of 1 */
    if (c->conv == NVFP4_CKPT_MODELOPT) return true;
    const json_t *in = json_object_get(ct_group_of(c, module), "input_activations");
    const json_t *dyn = json_object_get(in, "dynamic");
    return !json_is_true(dyn);
}

const char *ckpt_weight_suffix(const nvfp4_ckpt *c)
{
    return c->conv == NVFP4_CKPT_COMPRESSED_TENSORS ? "weight_packed" : "weight";
}
const char *ckpt_global_suffix(const nvfp4_ckpt *c)
{
    return c->conv == NVFP4_CKPT_MODELOPT ? "weight_scale_2"
           : c->conv == NVFP4_CKPT_GGUF   ? "scale"
                                          : "weight_global_scale";
}
const char *ckpt_input_suffix(const nvfp4_ckpt *c)
{
    return c->conv == NVFP4_CKPT_COMPRESSED_TENSORS ? "input_global_scale" : "input_scale";
}

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

/* Decode tables, built once from src/core's decoders: the E4M3 value of a
 * scale byte and the |E2M1 value| of a 3-bit magnitude (E2M1 magnitudes
 * grow with code & 7, so the largest field has the largest value). */
typedef struct {
    float e4m3[256];
    float fp4_mag[8];
} scan_tables;

static void scan_tables_init(scan_tables *t)
{
    for (int i = 0; i < 256; i++) t->e4m3[i] = nvfp4_e4m3_to_f32((uint8_t)i);
    for (int i = 0; i < 8; i++) t->fp4_mag[i] = nvfp4_e2m1_to_f32((uint8_t)i);
}

/* What one thread gathers over a range of blocks; every field is a count, a
 * min or a max, so the merged result is the same at any thread count. */
typedef struct {
    uint64_t hist[4][256]; /* code bytes by value; four tables so that equal bytes in a row do not
                              wait on each other's increment (one table ran at 1.6 GB/s a core) */
    uint64_t scale_hist[256]; /* scale bytes by value */
    uint8_t max_mag[256];     /* the largest code magnitude (code & 7) under each scale byte */
} scan_acc;

/* The largest 3-bit magnitude field (code & 7) of the 16 codes in w,
 * without a table lookup per byte (a lookup and a max per byte made this
 * loop run at 1.3 GB/s a core, this runs at 4-6): keep the fields whose top
 * bit is set if any is, then those whose middle bit is set, then test the
 * low bit. (t >> k) * 7 widens each surviving field's marker bit to all
 * three bits of its field (7 < 16: no carry into the next field). */
static uint8_t largest_magnitude_field(uint64_t w)
{
    uint64_t v = w & 0x7777777777777777u, t;
    uint8_t m = 0;
    if ((t = v & 0x4444444444444444u) != 0) {
        m = 4;
        v &= (t >> 2) * 7;
    }
    if ((t = v & 0x2222222222222222u) != 0) {
        m |= 2;
        v &= (t >> 1) * 7;
    }
    if (v & 0x1111111111111111u) m |= 1;
    return m;
}

/* Byte histogram of n code bytes into four tables (n a multiple of 8). */
static void count_bytes(const uint8_t *q, size_t n, scan_acc *a)
{
    for (size_t i = 0; i < n; i += 4) {
        a->hist[0][q[i]]++;
        a->hist[1][q[i + 1]]++;
        a->hist[2][q[i + 2]]++;
        a->hist[3][q[i + 3]]++;
    }
}

/* Blocks b0..b1: the histogram of a slice of codes first (a tight loop),
 * then each block's scale byte and largest code magnitude over the same
 * slice, still in the L1 cache, as integer counts and maxima per scale byte
 * (decoding each block's scale and product in double ran at 1.6 GB/s a
 * core; scan_blocks decodes the 256 possible bytes once at the end). */
static void scan_range(const uint8_t *codes, const uint8_t *scales, size_t b0, size_t b1, scan_acc *a)
{
    const size_t slice = 512; /* blocks: 4 KiB of codes */
    for (size_t s0 = b0; s0 < b1; s0 += slice) {
        size_t s1 = s0 + slice < b1 ? s0 + slice : b1;
        count_bytes(codes + 8 * s0, 8 * (s1 - s0), a);
        for (size_t b = s0; b < s1; b++) {
            uint64_t w;
            memcpy(&w, codes + 8 * b, 8);
            uint8_t sb = scales[b], m = largest_magnitude_field(w);
            a->scale_hist[sb]++;
            if (m > a->max_mag[sb]) a->max_mag[sb] = m;
        }
    }
}

/* One pass over codes and scales (OpenMP over ranges of blocks): code
 * histogram, scale statistics, decoded amax. */
void ckpt_scan_blocks(const uint8_t *codes, const uint8_t *scales, size_t nblocks, double dmult, nvfp4_ckpt_layer *l)
{
    scan_tables t;
    scan_tables_init(&t);
    static const scan_acc zero_acc;
    scan_acc all = zero_acc;
    const size_t chunk = (size_t)1 << 16;
    size_t nchunks = (nblocks + chunk - 1) / chunk;
#pragma omp parallel if (nchunks > 1)
    {
        scan_acc a = zero_acc;
#pragma omp for schedule(static)
        for (size_t c = 0; c < nchunks; c++) {
            size_t b0 = c * chunk, b1 = b0 + chunk < nblocks ? b0 + chunk : nblocks;
            scan_range(codes, scales, b0, b1, &a);
        }
        /* unnamed: a named critical makes a global lock symbol that the
         * shared libraries would export (test_install) */
#pragma omp critical
        {
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < 256; i++) all.hist[0][i] += a.hist[k][i];
            for (int i = 0; i < 256; i++) {
                all.scale_hist[i] += a.scale_hist[i];
                if (a.max_mag[i] > all.max_mag[i]) all.max_mag[i] = a.max_mag[i];
            }
        }
    }
    for (int i = 0; i < 256; i++) {
        l->code_hist[i & 0xF] += all.hist[0][i];
        l->code_hist[i >> 4] += all.hist[0][i];
    }
    /* the scale statistics and max |fp4(code)| * scale, from the bytes present */
    double smin = INFINITY, smax = 0, bmax = 0;
    for (int i = 0; i < 256; i++) {
        if (!all.scale_hist[i]) continue;
        double s = t.e4m3[i];
        if (s != s) { /* NaN scale byte 0x7F / 0xFF */
            l->scale_nan += all.scale_hist[i];
            continue;
        }
        if (s == 0) l->scale_zero += all.scale_hist[i];
        else if (s < smin) smin = s;
        if (s > smax) smax = s;
        double v = (double)t.fp4_mag[all.max_mag[i]] * s;
        if (v > bmax) bmax = v;
    }
    l->scale_count = nblocks;
    l->scale_min = isinf(smin) ? 0 : smin;
    l->scale_max = smax;
    l->amax_decoded = bmax * fabs(dmult);
}

void ckpt_merge_stats(nvfp4_ckpt_layer *into, const nvfp4_ckpt_layer *part)
{
    bool first = into->scale_count == 0;
    for (int i = 0; i < 16; i++) into->code_hist[i] += part->code_hist[i];
    into->scale_nan += part->scale_nan;
    into->scale_zero += part->scale_zero;
    into->scale_count += part->scale_count;
    if (first || (part->scale_min > 0 && (into->scale_min == 0 || part->scale_min < into->scale_min)))
        into->scale_min = part->scale_min;
    if (first || part->scale_max > into->scale_max) into->scale_max = part->scale_max;
    if (first || part->amax_decoded > into->amax_decoded) into->amax_decoded = part->amax_decoded;
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

