/*
 * ggml_mxfp4.c - recipe `ggml-mxfp4`: llama.cpp's MXFP4 (GGML_TYPE_MXFP4,
 * block_mxfp4) as its reference quantizer quantize_row_mxfp4_ref and
 * dequantize_row_mxfp4 compute it: ggml-org/llama.cpp ggml/src/ggml-quants.c
 * (quantize_row_mxfp4_ref, best_index_mxfp4, dequantize_row_mxfp4),
 * ggml/src/ggml-impl.h (ggml_e8m0_to_fp32_half), ggml/src/ggml-common.h
 * (QK_MXFP4 = 32, kvalues_mxfp4), the same commits as `ggml`; gguf-py 0.19.0
 * gguf/quants.py class MXFP4 (quantize_blocks, dequantize_blocks) is its
 * numpy port.
 *
 *   e     = floorf(log2f(block_amax)) - 2 + 127, 0 for block_amax 0   (32-element blocks; NaN
 *           elements ignored by the amax; a few ulps below a power of two log2f rounds up to the
 *           integer, so e is one above the OCP floor of `mxfp4-floor`: 7456 fp32 amaxes)
 *   q     = argmin_k fabsf(fp4(k) * 2^(e-127) - x), k = 0..15, first minimum kept
 *           (ties to the smaller magnitude, never 0x8; NaN, Inf -> 0x0)
 *   deq   = fp4(q) * 2^(e-127)   (ggml: the doubled value times 2^(e-128); code 0x8 is +0)
 * Not modelled: where ggml converts an out-of-range float to uint8_t (block
 * amax below 2^-125, or +Inf), which C leaves undefined (x86-64 gcc wraps
 * -2 to 0xFE and gives 0x00 for +Inf): this recipe clamps e to [0, 254]
 * instead. RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_ggml_mxfp4 = {
    .info = {.name = "ggml-mxfp4",
             .summary = "llama.cpp GGML_TYPE_MXFP4: e = floorf(log2f(amax)) - 2, nearest code by fp32 error",
             .provenance = "ggml-org/llama.cpp ggml/src/ggml-quants.c quantize_row_mxfp4_ref, ggml-impl.h (00966469)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_UE8M0,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
             .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_LOG2,
             .enc_rule = NVFP4_CORE_ENC_GGML_NEAREST,
             .special = NVFP4_CORE_SPECIAL_GGML,
             .dequant_rule = NVFP4_CORE_DEQ_POW2,
             .amax_nan_propagates = 0,
             .block_len = 32,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
