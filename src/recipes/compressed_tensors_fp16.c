/*
 * compressed_tensors_fp16.c - recipe `compressed-tensors-fp16`: the NVFP4
 * weights llm-compressor writes through compressed-tensors for a model held
 * in fp16 (compressed-tensors 0.19 and 0.20.1: the same code). The formulas
 * are recipe `compressed-tensors-bf16`'s with fp16 in place of bf16:
 *
 *   gs    = fp16(fp16(1/max(amax, 2^-14)) * 2688), stored as fp32
 *           (quantization/utils/helpers.py generate_gparam: the clamp to
 *           torch.finfo(float16).tiny, then 2688.0 / an fp16 tensor, an fp16
 *           reciprocal and an fp16 product); NaN or +-Inf -> 1. fp16 ends at
 *           65504, so every amax below about 0.041 overflows and gets gs = 1:
 *           its block scales are then e4m3(block_amax / 6) itself, down in
 *           E4M3's subnormals, and a block with block_amax below 6 * 2^-10
 *           gets scale 0.125 and every code 0. Many fp16 layers have such
 *           an amax; compressed-tensors 0.20.1 does this.
 *   s     = e4m3(clamp(gs * fp16(block_amax / 6), 448)); s == 0 -> 0.125
 *   y     = clamp(x / (s / gs), -6, 6) in fp32
 *   q     as recipe `compressed-tensors`; a NaN y gives 0x0: torch's fp32 ->
 *           fp16 conversion writes a NaN without its sign (unlike bf16's 0xFFFF)
 *   deq   as recipe `compressed-tensors`.
 *
 * Checked byte for byte against compressed-tensors' own functions on fp16
 * tensors (tests/py/test_production_oracles.py).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_compressed_tensors_fp16 = {
    .info = {.name = "compressed-tensors-fp16",
             .summary = "compressed-tensors NVFP4 on an fp16 model: gs and block_amax/6 rounded to fp16 (gs = 1 below "
                        "amax 0.041)",
             .provenance = "compressed-tensors 0.19/0.20.1 quantization/utils/helpers.py, lifecycle/forward_helpers.py "
                           "on fp16 weights",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16,
             .bscale_rule = NVFP4_CORE_BSCALE_CT_FP16,
             .enc_rule = NVFP4_CORE_ENC_DIV_SCALE_GLOBAL,
             .special = NVFP4_CORE_SPECIAL_PYREF,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
