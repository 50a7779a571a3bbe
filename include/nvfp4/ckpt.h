/*
 * nvfp4/ckpt.h - NVFP4 model checkpoints (docs/checkpoints.md): a Hugging Face
 * folder (config.json, hf_quant_config.json, *.safetensors, single or sharded
 * through model.safetensors.index.json) written in the modelopt or the
 * compressed-tensors convention. Opening reads the configuration and the
 * safetensors headers only; the scan reads each quantized layer once,
 * memory-mapped, one layer at a time (memory: the headers plus what the page
 * cache holds), and gives per-layer statistics and findings.
 *
 * Conventions (settled from the writers' source; docs/checkpoints.md cites them):
 *   modelopt           P.weight U8 [n, k/2] (element 2i in the low nibble),
 *                      P.weight_scale F8_E4M3 [n, k/16] (linear),
 *                      P.weight_scale_2 F32 = amax/2688 (a multiplier),
 *                      P.input_scale F32 = activation amax/2688 (W4A4 only).
 *   compressed-tensors P.weight_packed U8 [n, k/2], P.weight_scale F8_E4M3 [n, k/16],
 *                      P.weight_global_scale F32 [1] = 2688/amax (a divisor),
 *                      P.input_global_scale F32 [1] = 2688/activation amax.
 * Either way a weight decodes as fp4(code) * scale * D, D the decode multiplier
 * of the global scale (weight_scale_2, or 1/weight_global_scale).
 */
#ifndef NVFP4_CKPT_H
#define NVFP4_CKPT_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

typedef enum {
    NVFP4_CKPT_MODELOPT = 0,
    NVFP4_CKPT_COMPRESSED_TENSORS = 1,
    NVFP4_CKPT_GGUF = 2 /* llama.cpp's GGUF file (read only: inspect, check) */
} nvfp4_ckpt_convention;
const char *nvfp4_ckpt_convention_name(nvfp4_ckpt_convention c); /* "modelopt", "compressed-tensors", "gguf" */

typedef enum { NVFP4_CKPT_ERROR = 0, NVFP4_CKPT_HAZARD = 1 } nvfp4_ckpt_severity;
const char *nvfp4_ckpt_severity_name(nvfp4_ckpt_severity s); /* "error", "hazard" */

/* One NVFP4 layer (a module prefix P holding packed codes and block scales). */
typedef struct {
    char *name;            /* module prefix, e.g. "model.layers.0.self_attn.q_proj" */
    char *weight_tensor;   /* "P.weight" or "P.weight_packed" */
    char *algo;            /* modelopt quant_algo ("NVFP4", "W4A16_NVFP4", ...) or "NVFP4"/"NVFP4A16" */
    bool weight_only;      /* the configuration says W4A16: no activation quantization */
    size_t rows, cols;     /* logical weight shape (rows: every dimension but the last) */
    bool decoded;          /* codes and scales had consistent shapes and were read */
    /* global scale as stored, the decode multiplier D it means in this
     * convention, and the weight amax it implies: 2688 * D */
    bool has_global;
    double global_scale, decode_mult, amax_implied;
    /* E4M3 block scales: smallest nonzero and largest finite value, zero and
     * NaN (0x7F/0xFF) counts, count */
    double scale_min, scale_max;
    uint64_t scale_zero, scale_nan, scale_count;
    /* largest |decoded weight| = max over blocks of |fp4(code)| * scale * D */
    double amax_decoded;
    uint64_t code_hist[16]; /* nibble counts, index = 4-bit code */
    bool has_input_scale;
    double input_scale;     /* as stored (modelopt input_scale or compressed-tensors input_global_scale) */
    /* Set by nvfp4_ckpt_compare when the original holds P.weight: the decoded
     * weights against it (relative RMS error sqrt(sum d^2 / sum x^2), largest
     * |d|), the relative RMS error with the two nibbles of each byte swapped
     * and with the scales read in cuBLAS's 128x4 layout (-1 where the shape
     * has none), and that of a correct quantization: the convention writer's
     * recipe on the original with the layer's own amax. written_by names the
     * writer's rule whose codes, block scales and global scale equal the
     * checkpoint's bytes ("modelopt 0.47", "compressed-tensors 0.20.1"), with
     * the layer's own amax or its fused group's; NULL when none does. */
    bool compared;
    double err_rel_rms, err_max_abs, err_swapped_rel_rms, err_swizzled_rel_rms, ref_rel_rms;
    const char *written_by;
    bool written_group_amax;
} nvfp4_ckpt_layer;

typedef struct {
    char *tensor;          /* the tensor (or module prefix) the finding is about */
    const char *category;  /* "global-scale-reciprocal", "scale-nonfinite", ... (docs/checkpoints.md) */
    nvfp4_ckpt_severity severity;
    char *message;         /* evidence and fix */
} nvfp4_ckpt_finding;

typedef struct {
    nvfp4_ckpt_convention convention;
    char *scheme;          /* "NVFP4", "W4A16_NVFP4", "MIXED_PRECISION", "nvfp4-pack-quantized (NVFP4)" ... */
    nvfp4_ckpt_layer *layers;
    size_t nlayers;
    nvfp4_ckpt_finding *findings;
    size_t nfindings, findings_cap;
    size_t nfiles;         /* safetensors files read */
    uint64_t bytes_scanned;
} nvfp4_ckpt_report;

typedef struct nvfp4_ckpt nvfp4_ckpt;

/* Opens the checkpoint folder at path: detects the convention (a
 * hf_quant_config.json, or config.json's quantization_config.quant_method
 * "modelopt" or "compressed-tensors"), reads the shard list and every
 * safetensors header; or a GGUF file (path a regular file: its header and
 * tensor infos). NVFP4_EIO / NVFP4_EFORMAT with a message naming the
 * file when something cannot be read or is malformed. */
nvfp4_status nvfp4_ckpt_open(const char *path, nvfp4_ckpt **out, nvfp4_error *err);
void nvfp4_ckpt_close(nvfp4_ckpt *c);

/* Called after each layer is scanned (done of total, the layer's name). */
typedef void (*nvfp4_ckpt_progress)(size_t done, size_t total, const char *what, void *ctx);

/* Reads every quantized layer once and fills rep (initialized here, freed
 * with nvfp4_ckpt_report_free): the layers with their statistics and the
 * findings of every check that needs no original weights. */
nvfp4_status nvfp4_ckpt_scan(nvfp4_ckpt *c, nvfp4_ckpt_progress progress, void *ctx, nvfp4_ckpt_report *rep,
                             nvfp4_error *err);
void nvfp4_ckpt_report_free(nvfp4_ckpt_report *rep);

/* Compares the scanned layers with the unquantized weights at original (a
 * .safetensors file or a folder of them, P.weight for each layer P, F32,
 * BF16 or F16): fills each layer's compared fields and adds the findings
 * decode-error and nibble-order (docs/checkpoints.md, "--original"). A GGUF
 * tensor is compared with the modules llama.cpp's converter made it of (each
 * expert of a merged tensor; q/k rows in the original's order). A layer
 * the original lacks is left uncompared. NVFP4_EIO / NVFP4_EFORMAT naming the
 * file when the original cannot be read, or holds P.weight of another shape
 * or dtype. */
nvfp4_status nvfp4_ckpt_compare(nvfp4_ckpt *c, const char *original, nvfp4_ckpt_report *rep, nvfp4_error *err);

/* What nvfp4_ckpt_convert did: tensors written, per-tensor floats converted
 * (global and input scales), and the largest change of a decoded weight that
 * the fp32 reciprocal of a global scale causes (0 when every reciprocal is
 * exact), with its layer. */
typedef struct {
    size_t tensors, layers, files, scales_converted;
    double max_decode_change;
    char max_change_layer[512];
} nvfp4_ckpt_convert_result;

/* Writes the checkpoint c, scanned into rep, to the new folder out in the
 * convention `to` (docs/checkpoints.md, "convert"): codes and block scales
 * byte for byte, each global and input scale as the fp32 reciprocal where the
 * conventions differ, renamed tensors (weight <-> weight_packed,
 * weight_scale_2 <-> weight_global_scale, input_scale <-> input_global_scale),
 * the same shards and index, the configuration as the target's writer writes
 * it, every other file copied. The folder appears complete or not at all;
 * NVFP4_EIO when out exists. */
nvfp4_status nvfp4_ckpt_convert(nvfp4_ckpt *c, const nvfp4_ckpt_report *rep, nvfp4_ckpt_convention to,
                                const char *out, nvfp4_ckpt_convert_result *res, nvfp4_error *err);

/* One layer of nvfp4_ckpt_diff_run: in A, in B, and where both decode with
 * the same shape, the shares of equal code and scale bytes, each side's
 * decode multiplier, and the decoded weights (each by its convention's rule)
 * compared: elements whose values differ, relative RMS difference
 * sqrt(sum (a-b)^2 / sum a^2), largest |a-b|. */
typedef struct {
    char *name;
    bool in_a, in_b, compared;
    double code_equal, scale_equal;
    double decode_mult_a, decode_mult_b;
    uint64_t elements, elements_differ;
    double rel_rms_diff, max_abs_diff;
} nvfp4_ckpt_diff_layer;

typedef struct {
    nvfp4_ckpt_diff_layer *layers; /* A's layers in its order, then those only in B */
    size_t nlayers;
} nvfp4_ckpt_diff;

/* Compares the scanned checkpoints a (report ra) and b (rb) layer by layer
 * (docs/checkpoints.md, "diff"). One may be a GGUF made of the other by
 * llama.cpp's converter (layers paired by its tensor names, merged experts
 * by their rows, llama q/k rows in RoPE order put back); NVFP4_EUNSUPPORTED
 * for two GGUF files. */
nvfp4_status nvfp4_ckpt_diff_run(nvfp4_ckpt *a, const nvfp4_ckpt_report *ra, nvfp4_ckpt *b,
                                 const nvfp4_ckpt_report *rb, nvfp4_ckpt_diff *out, nvfp4_error *err);
void nvfp4_ckpt_diff_free(nvfp4_ckpt_diff *d);
/* One line on a layer: "same numbers", "same codes and scales; ...", "different codes or scales ...",
 * "only in A" ... */
const char *nvfp4_ckpt_diff_verdict(const nvfp4_ckpt_diff_layer *l);
/* {"layers": [{"name", "in_a", "in_b", "verdict", "code_bytes_equal", ...}]}; free with nvfp4_free. */
char *nvfp4_ckpt_diff_json(const nvfp4_ckpt_diff *d);

/* Counts of findings by severity; with strict, hazards count as errors. */
size_t nvfp4_ckpt_report_errors(const nvfp4_ckpt_report *rep, bool strict);

/* The report as JSON text: {"convention", "scheme", "findings": [{"tensor",
 * "category", "severity", "message"}], "layers": [...]}; free with nvfp4_free.
 * NULL when out of memory. */
char *nvfp4_ckpt_report_json(const nvfp4_ckpt_report *rep);

NVFP4_END_DECLS
#endif /* NVFP4_CKPT_H */
