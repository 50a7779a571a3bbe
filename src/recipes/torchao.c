/*
 * torchao.c - recipe `torchao`: torchao's NVFP4Tensor two-level quantization
 * with a dynamic per-tensor scale (use_dynamic_per_tensor_scale) as released
 * since torchao 0.17 (checked against 0.18.0), pytorch/ao v0.18.0 (commit
 * 5f2baf9d575cf732362594c998c399902942531f)
 * torchao/prototype/mx_formats/nvfp4_tensor.py (nvfp4_quantize,
 * per_tensor_amax_to_scale, NVFP4Tensor.dequantize, get_hp_scales),
 * f32_to_f4_unpacked from torchao/prototype/custom_fp_utils.py. The encode
 * became a multiplication by (1/g)/s in 5c0c814879588ec552cdb0d69c4699d31108ec35
 * ("hook up mslk's to_nvfp4 kernel", first released in v0.17.0); the
 * division of 0.13-0.16 is the recipe `torchao-0.13-0.16`.
 *
 *   g     = amax / 2688                                   (per_tensor_scale, division)
 *   s     = e4m3(clamp((block_amax / 6) / g, 2^-6, 448))  (two divisions; lower clamp E4M3_EPS = 2^-6)
 *   y     = clamp(x * ((1/g) / (float)s), -6, 6)          (1.0 / per_tensor_scale is reciprocal(g): 1/g rounded)
 *   q     = f32_to_f4_unpacked(y)                         (RNE; -0 -> 0x8; NaN -> 0x3, see below)
 *   deq   = fp4(q) * (g * (float)s)
 * Differences from `te`: divisions for g and s, the encode factor (1/g)/s
 * (te: 1/(s * S_dec)), scales never below 2^-6 (never 0 or subnormal), no
 * amax-0 guard (amax 0 gives g = 0, scale NaN 0x7F, codes of NaN), torch.amax
 * propagates NaN (one NaN element makes the whole tensor NaN: scales 0x7F),
 * no clamp of 1/g: g <= 2^-128 (amax <= 2688 * 2^-128) gives 1/g = +Inf, so
 * every nonzero element becomes +-6 and every zero 0 * Inf = NaN.
 * NaN codes: torchao takes the code from the NaN's bit pattern
 * (f32_to_f4_unpacked treats it as a normal number: 0x7FC00000 -> 0x3,
 * 0xFFC00000 -> 0xB, 0xFFFFFFFF -> 0xC) and its NaN scale byte keeps the
 * sign (0xFF for a negative NaN); which NaN arises depends on the device
 * (x86: 0/0 and 0*Inf are 0xFFC00000, torch.max of a NaN tensor is
 * 0xFFFFFFFF). This recipe writes the canonical +NaN's 0x3 and scale 0x7F.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_torchao = {
    .info = {.name = "torchao",
             .summary = "torchao >= 0.17 NVFP4Tensor (divisions, encode x * ((1/g)/s), scale clamp [2^-6, 448])",
             .provenance = "pytorch/ao v0.18.0 (5f2baf9d) torchao/prototype/mx_formats/nvfp4_tensor.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_DECODE_DIV,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_DIV,
             .enc_rule = NVFP4_CORE_ENC_RECIP_DIV,
             .special = NVFP4_CORE_SPECIAL_TORCHAO,
             .dequant_rule = NVFP4_CORE_DEQ_GLOBAL_MUL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0x1p-6f,
             .pow2_scale_min = 0.0f},
};
