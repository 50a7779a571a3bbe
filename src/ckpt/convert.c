/* convert.c - `nvfp4 ckpt convert`: a checkpoint rewritten in the other
 * convention (docs/checkpoints.md, "convert"). Codes and block scales are
 * copied byte for byte; the per-tensor floats change meaning (modelopt's
 * weight_scale_2 and input_scale multiply, compressed-tensors'
 * weight_global_scale and input_global_scale divide), so each becomes its
 * fp32 reciprocal, as compressed-tensors' own converter computes it
 * (entrypoints/convert/converters/modelopt_nvfp4.py: "1 / weight_scale_2 ->
 * weight_global_scale", "1 / input_scale -> input_global_scale"). A
 * reciprocal is not exact in fp32, so the largest change of a decoded weight
 * is measured over the (scale byte, code) pairs each layer holds, each
 * decoded by the two conventions' rules (src/core nvfp4_core_dequant_value
 * with the recipes `modelopt` and `compressed-tensors`). Every other tensor
 * and file is copied; the configuration is written as each writer writes it.
 * The output folder appears whole or not at all (nvfp4_dir_txn). */
#include "ckpt_decode.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


/* ---- names ---------------------------------------------------------------- */

static const char *suffix_in(nvfp4_ckpt_convention conv, int kind)
{
    static const char *const names[2][3] = {{"weight", "weight_scale_2", "input_scale"},
                                            {"weight_packed", "weight_global_scale", "input_global_scale"}};
    return names[conv][kind];
}

enum { KIND_CODES = 0, KIND_GLOBAL = 1, KIND_INPUT = 2, KIND_OTHER = 3 };

/* The layer a tensor belongs to and its role, by the source's names. */
static int tensor_kind(const nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, const char *name,
                       const nvfp4_ckpt_layer **lay)
{
    const char *d = strrchr(name, '.');
    if (!d) return KIND_OTHER;
    size_t plen = (size_t)(d - name);
    for (int k = 0; k < 3; k++) {
        if (strcmp(d + 1, suffix_in(c->conv, k)) != 0) continue;
        for (size_t i = 0; i < rep->nlayers; i++)
            if (strlen(rep->layers[i].name) == plen && strncmp(rep->layers[i].name, name, plen) == 0) {
                *lay = &rep->layers[i];
                return k;
            }
    }
    return KIND_OTHER;
}

/* ---- the decoded change of a reciprocal global scale ----------------------- */

/* GGUF's per-tensor .scale is modelopt's multiplier (weight_scale_2). */
const nvfp4_core_recipe *ckpt_conv_core(nvfp4_ckpt_convention conv)
{
    return &nvfp4_recipe_find(conv == NVFP4_CKPT_COMPRESSED_TENSORS ? "compressed-tensors" : "modelopt")->core;
}

/* The global of a stored per-tensor float, as the convention's dequantization reads it. */
nvfp4_core_global ckpt_stored_global(nvfp4_ckpt_convention conv, float v)
{
    nvfp4_core_global g = {.amax = 0, .s_enc = 1, .s_dec = 1, .g = 1};
    if (conv != NVFP4_CKPT_COMPRESSED_TENSORS) g.g = v;
    else g.s_enc = v;
    return g;
}

/* The largest |decoded weight change| over the (scale byte, code) pairs the
 * layer holds, decoded with v_from by the source rule and v_to by the target's. */
static double decode_change(nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_convention to, float v_from,
                            float v_to, nvfp4_error *err, bool *ok)
{
    *ok = false;
    const ckpt_tensor *w = ckpt_find(c, l->weight_tensor), *s = ckpt_find2(c, l->name, "weight_scale");
    const uint8_t *codes = ckpt_bytes(c, w, err), *scales = codes ? ckpt_bytes(c, s, err) : NULL;
    if (!scales) return 0;
    uint16_t seen[256] = {0}; /* bit m: code m occurs under this scale byte */
    for (size_t b = 0; b < s->e->nbytes; b++)
        for (size_t j = 0; j < 8; j++) {
            uint8_t q = codes[8 * b + j];
            seen[scales[b]] |= (uint16_t)(1u << (q & 15) | 1u << (q >> 4));
        }
    const nvfp4_core_recipe *rf = ckpt_conv_core(c->conv), *rt = ckpt_conv_core(to);
    nvfp4_core_global gf = ckpt_stored_global(c->conv, v_from), gt = ckpt_stored_global(to, v_to);
    double worst = 0;
    for (int sb = 0; sb < 256; sb++)
        for (int m = 0; m < 16; m++)
            if (seen[sb] >> m & 1) {
                double a = nvfp4_core_dequant_value(rf, &gf, (uint8_t)sb, (uint8_t)m);
                double b = nvfp4_core_dequant_value(rt, &gt, (uint8_t)sb, (uint8_t)m);
                if (fabs(a - b) > worst) worst = fabs(a - b);
            }
    ckpt_release(c, w);
    ckpt_release(c, s);
    *ok = true;
    return worst;
}

/* ---- one output shard -------------------------------------------------------- */

typedef struct {
    const ckpt_tensor *src;
    char *name;       /* output name */
    float value;      /* a converted per-tensor float (src is then a scalar) */
    bool converted;
    bool scalar_shape; /* modelopt []: true; compressed-tensors [1] */
} out_tensor;

static int cmp_out(const void *a, const void *b)
{
    return strcmp(((const out_tensor *)a)->name, ((const out_tensor *)b)->name);
}

static size_t out_bytes(const out_tensor *t) { return t->converted ? 4 : t->src->e->nbytes; }

static json_t *out_header(const out_tensor *ts, size_t n)
{
    json_t *h = json_object(), *meta = json_object();
    json_object_set_new(meta, "format", json_string("pt"));
    json_object_set_new(h, "__metadata__", meta);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const nvfp4_st_entry *e = ts[i].src->e;
        json_t *o = json_object(), *shape = json_array(), *offs = json_array();
        json_object_set_new(o, "dtype", json_string(ts[i].converted ? "F32" : nvfp4_tdtype_name(e->dtype)));
        if (ts[i].converted) {
            if (!ts[i].scalar_shape) json_array_append_new(shape, json_integer(1));
        } else
            for (unsigned d = 0; d < e->ndim; d++) json_array_append_new(shape, json_integer((json_int_t)e->shape[d]));
        json_object_set_new(o, "shape", shape);
        json_array_append_new(offs, json_integer((json_int_t)off));
        off += out_bytes(&ts[i]);
        json_array_append_new(offs, json_integer((json_int_t)off));
        json_object_set_new(o, "data_offsets", offs);
        json_object_set_new(h, ts[i].name, o);
    }
    return h;
}

/* Streams one safetensors file: 8-byte header length, the JSON header padded
 * with spaces to a multiple of 8, the data in header order. */
static nvfp4_status write_shard(nvfp4_ckpt *c, const char *path, out_tensor *ts, size_t n, nvfp4_error *err)
{
    qsort(ts, n, sizeof *ts, cmp_out);
    json_t *h = out_header(ts, n);
    char *text = json_dumps(h, JSON_PRESERVE_ORDER | JSON_COMPACT);
    json_decref(h);
    if (!text) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    size_t hl = strlen(text), pad = (8 - hl % 8) % 8;
    FILE *f = fopen(path, "wb");
    nvfp4_status st = NVFP4_OK;
    if (!f) st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create the file: %s", path, strerror(errno));
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)(hl + pad) >> (8 * i));
    if (!st && (fwrite(len, 1, 8, f) != 8 || fwrite(text, 1, hl, f) != hl || fwrite("        ", 1, pad, f) != pad))
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", path);
    free(text);
    for (size_t i = 0; !st && i < n; i++) {
        if (ts[i].converted) {
            if (fwrite(&ts[i].value, 1, 4, f) != 4) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", path);
            continue;
        }
        const uint8_t *p = ckpt_bytes(c, ts[i].src, err);
        if (!p) st = err->status;
        else if (fwrite(p, 1, ts[i].src->e->nbytes, f) != ts[i].src->e->nbytes)
            st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", path);
        else ckpt_release(c, ts[i].src);
    }
    if (f && fclose(f) != 0 && !st) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", path);
    return st;
}

/* ---- configuration ------------------------------------------------------------ */

static bool all_same_precision(const nvfp4_ckpt_report *rep, bool *weight_only)
{
    *weight_only = rep->nlayers && rep->layers[0].weight_only;
    for (size_t i = 0; i < rep->nlayers; i++)
        if (rep->layers[i].weight_only != *weight_only) return false;
    return true;
}

/* modelopt's exclude_modules are shell wildcards; compressed-tensors' ignore
 * takes a name or "re:" and a Python regex matched at the start. */
static json_t *wildcard_to_ct(const char *pat)
{
    if (!strpbrk(pat, "*?[")) return json_string(pat);
    size_t n = strlen(pat);
    char *re = malloc(2 * n + 8);
    if (!re) return NULL;
    size_t k = (size_t)sprintf(re, "re:");
    for (const char *p = pat; *p; p++) {
        if (*p == '*') { re[k++] = '.'; re[k++] = '*'; }
        else if (*p == '?') re[k++] = '.';
        else if (strchr(".+()|^$\\{}", *p)) { re[k++] = '\\'; re[k++] = *p; }
        else re[k++] = *p;
    }
    re[k++] = '$';
    re[k] = 0;
    json_t *s = json_string(re);
    free(re);
    return s;
}

/* The module names of float weights the source leaves unquantized (what
 * modelopt lists in exclude_modules). */
static json_t *unquantized_modules(const nvfp4_ckpt *c, const nvfp4_ckpt_report *rep)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->ntensors; i++) {
        const nvfp4_st_entry *e = c->tensors[i].e;
        size_t n = strlen(e->name);
        if (n < 8 || strcmp(e->name + n - 7, ".weight") != 0 || e->ndim < 2 ||
            !(e->dtype == NVFP4_T_BF16 || e->dtype == NVFP4_T_F16 || e->dtype == NVFP4_T_F32))
            continue;
        bool layer = false;
        for (size_t k = 0; !layer && k < rep->nlayers; k++)
            layer = strlen(rep->layers[k].name) == n - 7 && strncmp(rep->layers[k].name, e->name, n - 7) == 0;
        if (!layer) json_array_append_new(a, json_stringn(e->name, n - 7));
    }
    return a;
}

/* compressed-tensors 0.20.1's NVFP4 / NVFP4A16 scheme (quant_scheme.py), as
 * QuantizationConfig.model_dump writes it. */
static json_t *ct_scheme(bool weight_only, json_t *targets)
{
    json_t *w = json_pack("{s:i, s:s, s:b, s:i, s:s, s:b, s:s}", "num_bits", 4, "type", "float", "symmetric", 1,
                          "group_size", 16, "strategy", "tensor_group", "dynamic", 0, "scale_dtype",
                          "torch.float8_e4m3fn");
    json_t *in = weight_only ? json_null()
                             : json_pack("{s:i, s:s, s:b, s:i, s:s, s:s, s:s, s:s}", "num_bits", 4, "type", "float",
                                         "symmetric", 1, "group_size", 16, "strategy", "tensor_group", "dynamic",
                                         "local", "scale_dtype", "torch.float8_e4m3fn", "observer", "static_minmax");
    return json_pack("{s:o, s:o, s:o, s:n, s:s}", "targets", targets, "weights", w, "input_activations", in,
                     "output_activations", "format", "nvfp4-pack-quantized");
}

static json_t *layer_names(const nvfp4_ckpt_report *rep, bool weight_only)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rep->nlayers; i++)
        if (rep->layers[i].weight_only == weight_only) json_array_append_new(a, json_string(rep->layers[i].name));
    return a;
}

/* config.json's quantization_config for compressed-tensors: one group with
 * targets ["Linear"] when every layer has the same precision and the source
 * names its exclusions, else one group per precision naming its layers. */
static json_t *ct_config(const nvfp4_ckpt *c, const nvfp4_ckpt_report *rep)
{
    if (c->conv == NVFP4_CKPT_COMPRESSED_TENSORS) return json_deep_copy(c->qcfg);
    bool wo, uniform = all_same_precision(rep, &wo);
    bool mixed = json_is_object(json_object_get(c->qcfg, "quantized_layers"));
    json_t *groups = json_object(), *ignore = json_array();
    const json_t *ex = json_object_get(c->qcfg, "exclude_modules");
    size_t i;
    const json_t *v;
    if (json_is_array(ex)) json_array_foreach(ex, i, v)
        if (json_is_string(v)) json_array_append_new(ignore, wildcard_to_ct(json_string_value(v)));
    if (uniform && !mixed) json_object_set_new(groups, "group_0", ct_scheme(wo, json_pack("[s]", "Linear")));
    else {
        int g = 0;
        for (int w = 0; w < 2; w++) {
            json_t *names = layer_names(rep, w);
            char key[32];
            snprintf(key, sizeof key, "group_%d", g);
            if (json_array_size(names)) {
                json_object_set_new(groups, key, ct_scheme(w, names));
                g++;
            } else json_decref(names);
        }
    }
    return json_pack("{s:o, s:s, s:n, s:s, s:s, s:n, s:o, s:n}", "config_groups", groups, "quant_method",
                     "compressed-tensors", "kv_cache_scheme", "format", "nvfp4-pack-quantized",
                     "quantization_status", "compressed", "global_compression_ratio", "ignore", ignore,
                     "moe_sparsity_config");
}

/* hf_quant_config.json for modelopt 0.47 (quant_utils.py
 * process_layer_quant_config / unified_export_hf.py _write_hf_export_config). */
static json_t *modelopt_config(const nvfp4_ckpt *c, const nvfp4_ckpt_report *rep)
{
    if (c->conv == NVFP4_CKPT_MODELOPT) return json_pack("{s:{s:s,s:s}, s:O}", "producer", "name", "modelopt",
                                                         "version", "0.47.0", "quantization", c->qcfg);
    bool wo, uniform = all_same_precision(rep, &wo);
    json_t *q = json_object();
    if (uniform) json_object_set_new(q, "quant_algo", json_string(wo ? "W4A16_NVFP4" : "NVFP4"));
    else {
        json_t *ql = json_object();
        for (size_t i = 0; i < rep->nlayers; i++)
            json_object_set_new(ql, rep->layers[i].name,
                                json_pack("{s:s, s:i}", "quant_algo",
                                          rep->layers[i].weight_only ? "W4A16_NVFP4" : "NVFP4", "group_size", 16));
        json_object_set_new(q, "quant_algo", json_string("MIXED_PRECISION"));
        json_object_set_new(q, "quantized_layers", ql);
    }
    json_object_set_new(q, "kv_cache_quant_algo", json_null());
    json_object_set_new(q, "group_size", json_integer(16));
    json_object_set_new(q, "exclude_modules", unquantized_modules(c, rep));
    return json_pack("{s:{s:s,s:s}, s:o}", "producer", "name", "modelopt", "version", "0.47.0", "quantization", q);
}

/* config.json's quantization_config as modelopt 0.47 embeds it
 * (convert_hf_config.py convert_hf_quant_config_format, NVFP4, W4A16_NVFP4
 * and MIXED_PRECISION branches). */
static json_t *modelopt_embedded(const json_t *hq)
{
    const json_t *q = json_object_get(hq, "quantization");
    const char *algo = json_string_value(json_object_get(q, "quant_algo"));
    json_t *w = json_pack("{s:b, s:i, s:s, s:i}", "dynamic", 0, "num_bits", 4, "type", "float", "group_size", 16);
    json_t *in = json_pack("{s:b, s:i, s:s, s:i}", "dynamic", 0, "num_bits", 4, "type", "float", "group_size", 16);
    json_t *groups = json_object(), *out = json_object();
    if (algo && strcmp(algo, "MIXED_PRECISION") == 0) {
        json_t *a4 = json_array(), *a16 = json_array();
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(q, "quantized_layers"), k, v)
            json_array_append_new(strcmp(json_string_value(json_object_get(v, "quant_algo")), "NVFP4") ? a16 : a4,
                                  json_string(k));
        int g = 0;
        char key[32];
        if (json_array_size(a4)) {
            snprintf(key, sizeof key, "group_%d", g++);
            json_object_set_new(groups, key, json_pack("{s:O, s:O, s:o}", "input_activations", in, "weights", w,
                                                       "targets", a4));
        } else json_decref(a4);
        if (json_array_size(a16)) {
            snprintf(key, sizeof key, "group_%d", g);
            json_object_set_new(groups, key, json_pack("{s:O, s:o}", "weights", w, "targets", a16));
        } else json_decref(a16);
        json_object_set(out, "quantized_layers", json_object_get(q, "quantized_layers"));
    } else if (algo && strcmp(algo, "W4A16_NVFP4") == 0)
        json_object_set_new(groups, "group_0", json_pack("{s:O, s:[s]}", "weights", w, "targets", "Linear"));
    else json_object_set_new(groups, "group_0", json_pack("{s:O, s:O, s:[s]}", "input_activations", in, "weights", w,
                                                          "targets", "Linear"));
    json_decref(w);
    json_decref(in);
    json_object_set_new(out, "config_groups", groups);
    json_object_set(out, "ignore", json_object_get(q, "exclude_modules"));
    json_object_set_new(out, "quant_algo", json_string(algo ? algo : "NVFP4"));
    json_object_set(out, "producer", json_object_get(hq, "producer"));
    json_object_set_new(out, "quant_method", json_string("modelopt"));
    return out;
}

static nvfp4_status dump_json(json_t *j, const char *dir, const char *name, nvfp4_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!j || json_dump_file(j, path, JSON_INDENT(4) | JSON_PRESERVE_ORDER) != 0)
        return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot write the file", path);
    return NVFP4_OK;
}

static nvfp4_status write_configs(const nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, nvfp4_ckpt_convention to,
                                  const char *dir, nvfp4_error *err)
{
    char src[4096];
    snprintf(src, sizeof src, "%s/config.json", c->dir);
    json_error_t je;
    json_t *cfg = json_load_file(src, 0, &je);
    if (!json_is_object(cfg)) {
        json_decref(cfg);
        cfg = json_object();
    }
    nvfp4_status st = NVFP4_OK;
    if (to == NVFP4_CKPT_COMPRESSED_TENSORS) json_object_set_new(cfg, "quantization_config", ct_config(c, rep));
    else {
        json_t *hq = modelopt_config(c, rep);
        st = dump_json(hq, dir, "hf_quant_config.json", err);
        json_object_set_new(cfg, "quantization_config", modelopt_embedded(hq));
        json_decref(hq);
    }
    if (!st) st = dump_json(cfg, dir, "config.json", err);
    json_decref(cfg);
    return st;
}

/* Every other regular file of the source folder (tokenizer, generation
 * config...), byte for byte. */
static bool regenerated(const char *name)
{
    size_t n = strlen(name);
    return name[0] == '.' || (n > 12 && strcmp(name + n - 12, ".safetensors") == 0) ||
           !strcmp(name, "config.json") || !strcmp(name, "hf_quant_config.json") ||
           !strcmp(name, "model.safetensors.index.json");
}

static nvfp4_status copy_file(const char *from, const char *to, nvfp4_error *err)
{
    FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
    nvfp4_status st = NVFP4_OK;
    if (!a) st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot read the file", from);
    else if (!b) st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create the file", to);
    char buf[1 << 16];
    size_t k;
    while (!st && (k = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, k, b) != k) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", to);
    if (a && ferror(a) && !st) st = nvfp4_error_set(err, NVFP4_EIO, "%s: read failed", from);
    if (a) fclose(a);
    if (b && fclose(b) != 0 && !st) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed", to);
    return st;
}

static nvfp4_status copy_other_files(const nvfp4_ckpt *c, const char *dir, nvfp4_error *err)
{
    DIR *d = opendir(c->dir);
    if (!d) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot list the folder", c->dir);
    nvfp4_status st = NVFP4_OK;
    struct dirent *de;
    char from[4096], to[4096];
    struct stat sb;
    while (!st && (de = readdir(d))) {
        snprintf(from, sizeof from, "%s/%s", c->dir, de->d_name);
        if (regenerated(de->d_name) || stat(from, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        snprintf(to, sizeof to, "%s/%s", dir, de->d_name);
        st = copy_file(from, to, err);
    }
    closedir(d);
    return st;
}

/* ---- the conversion ------------------------------------------------------------ */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The output tensors of one source shard; NULL names on out of memory. */
static nvfp4_status plan_shard(nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, nvfp4_ckpt_convention to, size_t file,
                               out_tensor **out, size_t *nout, nvfp4_ckpt_convert_result *res, nvfp4_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ntensors; i++) n += c->tensors[i].file == file;
    out_tensor *ts = calloc(n ? n : 1, sizeof *ts);
    if (!ts) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    size_t k = 0;
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 0; !st && i < c->ntensors; i++) {
        const ckpt_tensor *t = &c->tensors[i];
        if (t->file != file) continue;
        out_tensor *o = &ts[k++];
        o->src = t;
        const nvfp4_ckpt_layer *l = NULL;
        int kind = tensor_kind(c, rep, t->e->name, &l);
        if (kind == KIND_OTHER) {
            o->name = strdup(t->e->name);
        } else {
            size_t need = strlen(l->name) + 24;
            o->name = malloc(need);
            if (o->name) snprintf(o->name, need, "%s.%s", l->name, suffix_in(to, kind));
        }
        if (!o->name) {
            st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
            break;
        }
        if (kind == KIND_GLOBAL || kind == KIND_INPUT) {
            float v = (float)(kind == KIND_GLOBAL ? l->global_scale : l->input_scale);
            /* the other convention's value is the fp32 reciprocal (torch 1 / x) */
            o->value = to == c->conv ? v : 1.0f / v;
            o->converted = true;
            o->scalar_shape = to == NVFP4_CKPT_MODELOPT;
            res->scales_converted++;
            if (kind == KIND_GLOBAL) {
                bool ok;
                double ch = decode_change(c, l, to, v, o->value, err, &ok);
                if (!ok) st = err->status;
                else if (ch > res->max_decode_change || !res->max_change_layer[0]) {
                    res->max_decode_change = ch;
                    snprintf(res->max_change_layer, sizeof res->max_change_layer, "%s", l->name);
                }
            }
        }
    }
    *out = ts;
    *nout = k;
    return st;
}

static void free_plan(out_tensor *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) free(ts[i].name);
    free(ts);
}

static nvfp4_status write_index(nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, nvfp4_ckpt_convention to,
                                const char *dir, nvfp4_error *err)
{
    char ix[4096];
    snprintf(ix, sizeof ix, "%s/model.safetensors.index.json", c->dir);
    struct stat sb;
    if (stat(ix, &sb) != 0) return NVFP4_OK;
    json_t *wm = json_object();
    uint64_t total = 0;
    for (size_t i = 0; i < c->ntensors; i++) {
        const ckpt_tensor *t = &c->tensors[i];
        const nvfp4_ckpt_layer *l = NULL;
        int kind = tensor_kind(c, rep, t->e->name, &l);
        char name[1100];
        if (kind == KIND_OTHER) snprintf(name, sizeof name, "%s", t->e->name);
        else snprintf(name, sizeof name, "%s.%s", l->name, suffix_in(to, kind));
        json_object_set_new(wm, name, json_string(base_name(c->files[t->file])));
        total += kind == KIND_GLOBAL || kind == KIND_INPUT ? 4 : t->e->nbytes;
    }
    json_t *root = json_pack("{s:{s:I}, s:o}", "metadata", "total_size", (json_int_t)total, "weight_map", wm);
    nvfp4_status st = dump_json(root, dir, "model.safetensors.index.json", err);
    json_decref(root);
    return st;
}

nvfp4_status nvfp4_ckpt_convert(nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, nvfp4_ckpt_convention to,
                                const char *out, nvfp4_ckpt_convert_result *res, nvfp4_error *err)
{
    memset(res, 0, sizeof *res);
    if (c->conv == NVFP4_CKPT_GGUF || to == NVFP4_CKPT_GGUF)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: convert reads and writes modelopt and compressed-tensors "
                               "folders; GGUF is not converted yet", c->dir);
    struct stat sb;
    if (stat(out, &sb) == 0)
        return nvfp4_error_set(err, NVFP4_EIO, "%s: exists; convert writes a new folder (remove it or choose another)",
                               out);
    nvfp4_dir_txn txn;
    nvfp4_status st = nvfp4_dir_txn_begin(&txn, out, err);
    if (st) return st;
    for (size_t f = 0; !st && f < c->nfiles; f++) {
        out_tensor *ts = NULL;
        size_t n = 0;
        st = plan_shard(c, rep, to, f, &ts, &n, res, err);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", txn.tmp, base_name(c->files[f]));
        if (!st) st = write_shard(c, path, ts, n, err);
        res->tensors += n;
        free_plan(ts, n);
    }
    if (!st) st = write_index(c, rep, to, txn.tmp, err);
    if (!st) st = write_configs(c, rep, to, txn.tmp, err);
    if (!st) st = copy_other_files(c, txn.tmp, err);
    if (st) {
        nvfp4_dir_txn_abort(&txn);
        return st;
    }
    res->layers = rep->nlayers;
    res->files = c->nfiles;
    return nvfp4_dir_txn_commit(&txn, err);
}
