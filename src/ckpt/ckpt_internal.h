/* ckpt_internal.h - what the files of src/ckpt/ share: the open checkpoint
 * (configuration, shard headers, the tensor directory sorted by name, the
 * memory maps) and the finding builder. Nothing here rounds or decodes a
 * number of its own: codes and scales decode through src/core's tables
 * (nvfp4_e2m1_to_f32, nvfp4_e4m3_to_f32). */
#ifndef NVFP4_CKPT_INTERNAL_H
#define NVFP4_CKPT_INTERNAL_H

#include <jansson.h>

#include "nvfp4/ckpt.h"
#include "nvfp4/io.h"

/* The global-scale constant of NVFP4 weights: E2M1 max 6 times E4M3 max 448
 * (modelopt nvfp4_tensor.py get_weights_scaling_factor_2: amax / (6 * 448);
 * compressed-tensors helpers.py generate_gparam: 448 * 6 / amax). */
#define CKPT_GLOBAL_CONST 2688.0

typedef struct {
    const nvfp4_st_entry *e;
    size_t file;
} ckpt_tensor;

struct nvfp4_ckpt {
    char *dir;
    nvfp4_ckpt_convention conv;
    json_t *qcfg;           /* modelopt: hf_quant_config.json "quantization"; c-t: quantization_config */
    char *scheme;
    char **files;           /* full paths */
    nvfp4_st_index *idx;
    const uint8_t **map;    /* whole-file read-only maps (NULL until mapped) */
    size_t nfiles;
    ckpt_tensor *tensors;   /* sorted by name */
    size_t ntensors;
};

const ckpt_tensor *ckpt_find(const nvfp4_ckpt *c, const char *name);
const ckpt_tensor *ckpt_find2(const nvfp4_ckpt *c, const char *prefix, const char *suffix);
/* The bytes of a tensor (maps its file on first use); NULL with err set. */
const uint8_t *ckpt_bytes(nvfp4_ckpt *c, const ckpt_tensor *t, nvfp4_error *err);
/* Lets the kernel drop a tensor's pages from this process (the page cache keeps them). */
void ckpt_release(nvfp4_ckpt *c, const ckpt_tensor *t);

/* Appends a finding (message printf-style); false when out of memory. */
bool ckpt_add_finding(nvfp4_ckpt_report *rep, const char *tensor, const char *category, nvfp4_ckpt_severity sev,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Does module name P match a modelopt exclude_modules pattern (fnmatch
 * wildcards) or a compressed-tensors ignore/targets entry ("re:" regex
 * anchored at the start, as Python's re.match, or the exact name)? */
bool ckpt_name_matches(nvfp4_ckpt_convention conv, const char *name, const char *pattern);
bool ckpt_name_matches_any(nvfp4_ckpt_convention conv, const char *name, const json_t *patterns);

/* The checks that look across layers and at the configuration (checks.c). */
nvfp4_status ckpt_check_layers(nvfp4_ckpt *c, nvfp4_ckpt_report *rep, nvfp4_error *err);
/* The per-layer checks on one scanned layer. */
bool ckpt_check_layer(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep);

/* The layer's configured algorithm: modelopt quant_algo of the layer, or
 * "NVFP4" / "NVFP4A16" for compressed-tensors; NULL when the configuration
 * does not quantize the module to NVFP4. weight_only as the config says. */
const char *ckpt_layer_algo(const nvfp4_ckpt *c, const char *module, bool *weight_only);

/* Does the module's scheme store a static activation global scale? */
bool ckpt_needs_input_scale(const nvfp4_ckpt *c, const char *module, bool weight_only);
/* The suffixes of the convention: weight codes, global scale, input scale. */
const char *ckpt_weight_suffix(const nvfp4_ckpt *c);
const char *ckpt_global_suffix(const nvfp4_ckpt *c);
const char *ckpt_input_suffix(const nvfp4_ckpt *c);

/* The unquantized weights of --original (a .safetensors file or a folder
 * of them): the tensor directory only, no configuration (original.c). */
nvfp4_status ckpt_open_weights(const char *path, nvfp4_ckpt **out, nvfp4_error *err);

/* GGUF (gguf.c): opening a .gguf file into c (files, index, map, tensors
 * directory built by the caller), scanning its NVFP4 tensors, and the
 * prec_a4 marking of a tensor. */
nvfp4_status ckpt_open_gguf(nvfp4_ckpt *c, const char *path, nvfp4_error *err);
nvfp4_status ckpt_scan_gguf(nvfp4_ckpt *c, nvfp4_ckpt_progress progress, void *ctx, nvfp4_ckpt_report *rep,
                            nvfp4_error *err);
bool ckpt_gguf_weight_only(const nvfp4_ckpt *c, const char *name);
bool ckpt_gguf_is_nvfp4(const nvfp4_ckpt *c, const char *name);
void ckpt_gguf_heads(const nvfp4_ckpt *c, size_t *n_head, size_t *n_head_kv);
bool ckpt_gguf_qk_permuted(const nvfp4_ckpt *c);
/* The GGUF name of a safetensors module "model.layers.N.M" (blk.N.attn_q,
 * blk.N.ffn_gate_exps...) and, for an expert of a merged tensor, its index
 * (-1 otherwise); false for a name the converter's llama/Mixtral tensor map
 * has no entry for. */
bool ckpt_gguf_name_of(const char *hf, char *out, size_t cap, int *expert);
/* map[r] = the GGUF row of safetensors row r of a q/k tensor of `rows` rows
 * (one expert's or the tensor's) in llama.cpp's RoPE order; NULL for other
 * tensors, files not permuted, or rows the head count does not divide (and
 * on running out of memory: *oom set, err set). Freed by the caller. */
size_t *ckpt_gguf_rope_rowmap(const nvfp4_ckpt *g, const char *gguf_name, size_t rows, nvfp4_error *err, bool *oom);
/* The decode multiplier of expert e (-1: the tensor's) from NAME.scale: 1
 * where the converter left it out; NaN when it is not an F32 holding e
 * (*ok false only when reading it failed, err set). */
float ckpt_gguf_multiplier(nvfp4_ckpt *g, const char *name, int e, nvfp4_error *err, bool *ok);

/* scan.c: the statistics of nblocks linear blocks (codes, one scale byte per
 * 16 codes) decoded with multiplier dmult, into l (hist, counts added;
 * minima, maxima set); merging two layers' statistics. */
void ckpt_scan_blocks(const uint8_t *codes, const uint8_t *scales, size_t nblocks, double dmult, nvfp4_ckpt_layer *l);
void ckpt_merge_stats(nvfp4_ckpt_layer *into, const nvfp4_ckpt_layer *part);

/* Fused groups (checks.c): the index of the group a module's last name
 * component belongs to (q/k/v, gate/up, w1/w3), -1 for none, and the
 * members of group g (NULL-terminated). */
int ckpt_fused_set_of(const char *leaf);
const char *const *ckpt_fused_members(int set);
/* A MoE expert's projection from its last name component: 0 gate (gate_proj
 * or Mixtral's w1), 1 up (up_proj, w3), 2 down (down_proj, w2), -1 none; and
 * its name in spelling 0 (gate_proj...), 1 (Mixtral's w1...) or 2 (the GGUF
 * merged tensor, ffn_gate_exps...). */
int ckpt_expert_proj(const char *leaf);
const char *ckpt_expert_proj_name(int proj, int spelling);
const char *ckpt_leaf(const char *name);

#endif
