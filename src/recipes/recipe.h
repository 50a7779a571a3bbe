/*
 * recipes/recipe.h - the registry's view of a recipe: its public info and
 * the core descriptor (src/core/recipe.h) that the CPU loops and the CUDA
 * kernels evaluate. One file per recipe under src/recipes/ defines one
 * `const nvfp4_recipe nvfp4_recipe_NAME`.
 */
#ifndef NVFP4_RECIPES_RECIPE_H
#define NVFP4_RECIPES_RECIPE_H

#include "nvfp4/quant.h"
#include "core/recipe.h"

struct nvfp4_recipe {
    nvfp4_recipe_info info;
    nvfp4_core_recipe core;
};

/* The core descriptor of a recipe (internal; CUDA code uses it too). */
const nvfp4_core_recipe *nvfp4_recipe_core(const nvfp4_recipe *r);

extern const nvfp4_recipe nvfp4_recipe_te;
extern const nvfp4_recipe nvfp4_recipe_te_pyref;
extern const nvfp4_recipe nvfp4_recipe_torchao;
extern const nvfp4_recipe nvfp4_recipe_torchao_0_13_0_16;
extern const nvfp4_recipe nvfp4_recipe_modelopt;
extern const nvfp4_recipe nvfp4_recipe_exact;
extern const nvfp4_recipe nvfp4_recipe_mxfp4_floor;
extern const nvfp4_recipe nvfp4_recipe_mxfp4_rceil;
extern const nvfp4_recipe nvfp4_recipe_mxfp8;
extern const nvfp4_recipe nvfp4_recipe_torchao_1level;
extern const nvfp4_recipe nvfp4_recipe_mxfp4_ceil;
extern const nvfp4_recipe nvfp4_recipe_mxfp4_even;
extern const nvfp4_recipe nvfp4_recipe_mxfp8_floor;
extern const nvfp4_recipe nvfp4_recipe_ggml;
extern const nvfp4_recipe nvfp4_recipe_te_4over6;
extern const nvfp4_recipe nvfp4_recipe_te_4over6_mse;
extern const nvfp4_recipe nvfp4_recipe_te_4over6_fast;
extern const nvfp4_recipe nvfp4_recipe_te_4over6_mse_fast;
extern const nvfp4_recipe nvfp4_recipe_te_4over6_448;
extern const nvfp4_recipe nvfp4_recipe_te_rowscaled;
extern const nvfp4_recipe nvfp4_recipe_te_pow2;
extern const nvfp4_recipe nvfp4_recipe_fast_math;
extern const nvfp4_recipe nvfp4_recipe_compressed_tensors;
extern const nvfp4_recipe nvfp4_recipe_compressed_tensors_bf16;
extern const nvfp4_recipe nvfp4_recipe_compressed_tensors_fp16;
extern const nvfp4_recipe nvfp4_recipe_vllm;
extern const nvfp4_recipe nvfp4_recipe_fbgemm;
extern const nvfp4_recipe nvfp4_recipe_flashinfer;
extern const nvfp4_recipe nvfp4_recipe_ggml_mxfp4;
extern const nvfp4_recipe nvfp4_recipe_mslk;
extern const nvfp4_recipe nvfp4_recipe_mslk_stacked;
extern const nvfp4_recipe nvfp4_recipe_te_ue5m3;
extern const nvfp4_recipe nvfp4_recipe_te_ue5m3_1level;
extern const nvfp4_recipe nvfp4_recipe_flashinfer_pertoken;

/* TE's row-scaled chain (te_rowscaled.c: one TE_ENCODE global per stored
 * row), shared by `te-rowscaled` and `flashinfer-pertoken`, which differ
 * only in the dequantization rule `deq`. */
#define NVFP4_RECIPE_ROWSCALED_CORE(deq)                                                                        \
    {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_E4M3,                                       \
     .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE_ROW, .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,                   \
     .enc_rule = NVFP4_CORE_ENC_TE_RECIP, .special = NVFP4_CORE_SPECIAL_CUDA, .dequant_rule = (deq),            \
     .amax_nan_propagates = 0, .block_len = 16, .emax_elem = 2, .elem_max = 6.0f, .scale_lo = 0.0f,           \
     .pow2_scale_min = 0.0f}

#endif /* NVFP4_RECIPES_RECIPE_H */
