/*
 * torchao_0_13_0_16.c - recipe `torchao-0.13-0.16`: torchao's NVFP4Tensor
 * two-level quantization as released in torchao 0.13.0 through 0.16.0, whose
 * encode divides by the total scale g * s, pytorch/ao
 * torchao/prototype/mx_formats/nvfp4_tensor.py at v0.13.0 (commit
 * e318546f9be8c6dd1340157cd14e5cbc6ffa1f65, _nvfp4_quantize) and v0.16.0
 * (commit 3c1065ca6ff2eb8a48262bd7c31ded2fffe0d15e, nvfp4_quantize);
 * per_tensor_amax_to_scale = amax / (448 * 6) since v0.13.0 (v0.12.0 had
 * clamp(amax / 448)). Replaced in v0.17.0 by x * ((1/g)/s) (recipe `torchao`).
 *
 *   g     = amax / 2688                                   (per_tensor_scale, division)
 *   s     = e4m3(clamp((block_amax / 6) / g, 2^-6, 448))  (two divisions; lower clamp E4M3_EPS = 2^-6)
 *   y     = clamp(x / (g * (float)s), -6, 6)              (total_scale = per_tensor_scale * fp8 scale)
 *   q     = f32_to_f4_unpacked(y)                         (RNE; -0 -> 0x8; NaN -> 0x3)
 *   deq   = fp4(q) * (g * (float)s)
 * Same scales, dequantization and NaN rules as `torchao`; the codes differ
 * where x / (g*s) and x * ((1/g)/s) round to different sides of an E2M1
 * midpoint (about one element in a million on normal data) and where
 * g <= 2^-128, whose reciprocal is +Inf in `torchao` (here x / (g * s)).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_torchao_0_13_0_16 = {
    .info = {.name = "torchao-0.13-0.16",
             .summary = "torchao 0.13-0.16 NVFP4Tensor (divisions, encode x / (g*s), scale clamp [2^-6, 448])",
             .provenance = "pytorch/ao v0.16.0 (3c1065ca) torchao/prototype/mx_formats/nvfp4_tensor.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_DECODE_DIV,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_DIV,
             .enc_rule = NVFP4_CORE_ENC_DIV_TOTAL,
             .special = NVFP4_CORE_SPECIAL_TORCHAO,
             .dequant_rule = NVFP4_CORE_DEQ_GLOBAL_MUL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0x1p-6f,
             .pow2_scale_min = 0.0f},
};
