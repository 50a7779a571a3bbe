/*
 * modelopt.c - recipe `modelopt`: NVIDIA Model Optimizer's NVFP4QTensor,
 * nvidia-modelopt 0.47.0, NVIDIA/Model-Optimizer
 * modelopt/torch/quantization/qtensor/nvfp4_tensor.py
 * (get_weights_scaling_factor_2, get_weights_scaling_factor,
 * _cast_per_block_scale_to_fp8, quantize, _cast_fp4, dequantize; its decode
 * table e2m1_values is unchanged since commit
 * 4c611e47a4d7dcc1a2ad0fd5fee8ffff7b3b2c05).
 *
 *   g     = amax / 2688                              (weights_scaling_factor_2 = amax/(6*448))
 *   v     = block_amax / (6 * g)                     (6*g rounds first, then one division)
 *   v     = 1 if v == 0                              (per_block_scale[per_block_scale == 0] = 1.0)
 *   s     = e4m3(clamp(v, 2^-9, 448))
 *   y     = x / ((float)s * g)
 *   q     = _cast_fp4(y): RNE by searchsorted on the E2M1 midpoints with a
 *           bump at 0.75/1.75/3.5; sign from y < 0, so -0.0 -> 0x0; NaN -> 0x7
 *   deq   = e2m1_values[q] * ((float)s * g)    (the table holds +0 at index 8: code 0x8 -> +0.0)
 * Differences from `te`: divisions, zero scales replaced by 1, lower clamp
 * 2^-9 (a nonzero block never stores scale 0, so no +-6 underflow codes),
 * -0.0 -> 0x0 (a negative y that rounds to zero still gives 0x8, which
 * dequantizes to +0.0), reduce_amax propagates NaN (amax NaN -> scales 0x7F), amax 0
 * gives g = 0 and NaN scales (no guard in the source).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_modelopt = {
    .info = {.name = "modelopt",
             .summary = "NVIDIA Model Optimizer NVFP4QTensor (divisions, zero scale -> 1, clamp [2^-9, 448])",
             .provenance = "nvidia-modelopt 0.47.0, NVIDIA/Model-Optimizer modelopt/torch/quantization/qtensor/nvfp4_tensor.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_DECODE_DIV,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_PRODUCT,
             .enc_rule = NVFP4_CORE_ENC_DIV_TOTAL,
             .special = NVFP4_CORE_SPECIAL_MODELOPT,
             .dequant_rule = NVFP4_CORE_DEQ_GLOBAL_MUL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0x1p-9f,
             .pow2_scale_min = 0.0f},
};
