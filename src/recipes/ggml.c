/*
 * ggml.c - recipe `ggml`: llama.cpp's NVFP4 (GGML_TYPE_NVFP4, block_nvfp4)
 * as its reference quantizer quantize_row_nvfp4_ref and dequantize_row_nvfp4
 * compute it: ggml-org/llama.cpp ggml/src/ggml-quants.c (quantize_row_nvfp4_ref,
 * best_index_mxfp4, dequantize_row_nvfp4), ggml/src/ggml-impl.h
 * (ggml_fp32_to_ue4m3, ggml_ue4m3_to_fp32; commit
 * 009664690cf1a25f488453af6a9e93ad7fa02cb6), ggml/src/ggml-common.h
 * (block_nvfp4, kvalues_mxfp4; commit 01243c587feceaa5d6a6c2305535ef2f549c48b8),
 * and gguf-py 0.19.0 gguf/quants.py (class NVFP4).
 *
 *   s     = ggml_ue4m3(block_amax / 6)   (16-element sub-blocks; no global scale; NaN elements ignored
 *                                         by the amax; its own rounding: half up on the bits, 0 below
 *                                         about 2^-10, 0x7E for every value >= 256; never 0x08)
 *   q     = argmin_k fabsf(fp4(k) * s - x), k = 0..15, first minimum kept
 *                                        (ties to the smaller magnitude, never 0x8; NaN, Inf -> 0x0)
 *   deq   = fp4(q) * s                   (code 0x8 is +0; ggml stores the doubled value times s/2)
 * The library's codes and scales are this recipe's; the ggml byte layout
 * (64-element super-blocks: 4 scale bytes then 32 code bytes, byte j of a
 * sub-block holding elements j and j+8) is written and read by
 * nvfp4_ggml_nvfp4_pack / nvfp4_ggml_nvfp4_unpack (nvfp4/ggml.h, docs/file-formats.md). RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_ggml = {
    .info = {.name = "ggml",
             .summary = "llama.cpp GGML_TYPE_NVFP4: UE4M3 scale of amax/6 (ggml rounding), nearest code by fp32 error",
             .provenance = "ggml-org/llama.cpp ggml/src/ggml-quants.c quantize_row_nvfp4_ref, ggml-impl.h (00966469)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = false,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
             .bscale_rule = NVFP4_CORE_BSCALE_GGML,
             .enc_rule = NVFP4_CORE_ENC_GGML_NEAREST,
             .special = NVFP4_CORE_SPECIAL_GGML,
             .dequant_rule = NVFP4_CORE_DEQ_GLOBAL_MUL,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
