/* config.c - what a checkpoint's configuration says of a layer: the
 * convention's name patterns (modelopt's fnmatch globs, compressed-tensors'
 * `re:` targets), the quantization algorithm and weight-only intent of a
 * module (hf_quant_config.json, quantization_config, GGUF's tensor_extra),
 * and the tensor-name suffixes of each convention. Reads the parsed
 * configuration only, never tensor data. */
#include "ckpt_internal.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Is tensor `name` marked prec_a4 false (W4A16) in general.tensor_extra? */
bool ckpt_gguf_weight_only(const nvfp4_ckpt *c, const char *name)
{
    const json_t *kv = json_object_get(c->qcfg, "kv"), *names = json_object_get(kv, "general.tensor_extra.name"),
                 *a4 = json_object_get(kv, "general.tensor_extra.prec_a4");
    size_t i;
    const json_t *v;
    json_array_foreach(names, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), name)) return json_is_false(json_array_get(a4, i));
    return false;
}

bool ckpt_gguf_is_nvfp4(const nvfp4_ckpt *c, const char *name)
{
    return json_object_get(json_object_get(c->qcfg, "nvfp4"), name) != NULL;
}
