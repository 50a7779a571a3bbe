/*
 * compressed_tensors_bf16.c - recipe `compressed-tensors-bf16`: the NVFP4
 * weights llm-compressor writes through compressed-tensors for a model held
 * in bf16, the usual case (llm-compressor 0.14 with compressed-tensors 0.19,
 * and compressed-tensors 0.20.1: the same code). The formulas are recipe
 * `compressed-tensors`'s; torch evaluates two of them in the weight's dtype:
 *
 *   gs    = bf16(bf16(1/max(amax, 2^-126)) * 2688), stored as fp32
 *           (quantization/utils/helpers.py generate_gparam: 2688.0 / a bf16
 *           tensor is a bf16 reciprocal and a bf16 product); NaN or +-Inf -> 1
 *   s     = e4m3(clamp(gs * bf16(block_amax / 6), 448)); s == 0 -> 0.125
 *           (calculate_qparams: max_val_pos / 6 is a bf16 division; the global
 *           scale is an fp32 tensor of shape [1], so the product is fp32)
 *   y     = clamp(x / (s / gs), -6, 6) in fp32   (forward_helpers.py _quantize:
 *           the fp32 scale tensor promotes the bf16 weight)
 *   q     as recipe `compressed-tensors`, but a NaN y gives 0x8: _quantize's
 *           fp32 E2M1 values are cast back to the weight's bf16
 *           (forward_helpers.py, output_dtype), and torch's fp32 -> bf16
 *           conversion writes a NaN as 0xFFFF, whose sign bit
 *           pack_fp4_to_uint8 (torch.signbit) puts in the code
 *   deq   as recipe `compressed-tensors`.
 *
 * Checked byte for byte against compressed-tensors' own functions on bf16
 * tensors (tests/py/test_production_oracles.py) and against checkpoints
 * llm-compressor's oneshot writes for a bf16 model (tests/py/test_ckpt.py).
 * The input is taken as given: on values that are not bf16 the amaxes are
 * not bf16 either, which no bf16 model produces.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_compressed_tensors_bf16 = {
    .info = {.name = "compressed-tensors-bf16",
             .summary = "compressed-tensors NVFP4 on a bf16 model (llm-compressor): gs and block_amax/6 rounded to bf16",
             .provenance = "compressed-tensors 0.19/0.20.1 quantization/utils/helpers.py, lifecycle/forward_helpers.py "
                           "on bf16 weights",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16,
             .bscale_rule = NVFP4_CORE_BSCALE_CT_BF16,
             .enc_rule = NVFP4_CORE_ENC_DIV_SCALE_GLOBAL,
             .special = NVFP4_CORE_SPECIAL_PYREF_BF16,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
