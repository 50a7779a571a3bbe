/*
 * torchao.c - recipe `torchao`: torchao's NVFP4Tensor two-level quantization
 * with a dynamic per-tensor scale (use_dynamic_per_tensor_scale), pytorch/ao
 * torchao/prototype/mx_formats/nvfp4_tensor.py (stored versions 02a1bc44 and
 * 0367cd81: nvfp4_quantize / _nvfp4_quantize, per_tensor_amax_to_scale,
 * to_dtype), f32_to_f4_unpacked from torchao/prototype/custom_fp_utils.py.
 *
 *   g     = amax / 2688                                   (per_tensor_scale, division)
 *   s     = e4m3(clamp((block_amax / 6) / g, 2^-6, 448))  (two divisions; lower clamp E4M3_EPS = 2^-6)
 *   y     = clamp(x / (g * (float)s), -6, 6)              (a division by the total scale)
 *   q     = f32_to_f4_unpacked(y)                         (RNE; -0 -> 0x8; NaN -> 0x3, see below)
 *   deq   = fp4(q) * (g * (float)s)
 * Differences from `te`: divisions instead of TE's multiply-by-reciprocal
 * chain (different scale bytes in a small fraction of blocks, different
 * encode factors), scales never below 2^-6 (never 0 or subnormal), no amax-0
 * guard (amax 0 gives g = 0, scale NaN 0x7F, codes of NaN), torch.amax
 * propagates NaN (one NaN element makes the whole tensor NaN: scales 0x7F),
 * and NaN codes are 0x3 (+1.5), an artifact of _f32_to_floatx_unpacked.
 * torchao gives 0xB for a NaN with the sign bit set; the sign of a NaN
 * produced by arithmetic differs between CPUs (x86 0/0 is -NaN), so this
 * recipe canonicalises to 0x3. The research notes (nvfp4-semantics.md 3.8)
 * describe a later `(1/g)/s` encode; the stored source divides by g*s.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_torchao = {
    .info = {.name = "torchao",
             .summary = "torchao NVFP4Tensor (divisions, scale clamp [2^-6, 448])",
             .provenance = "pytorch/ao 0367cd81 torchao/prototype/mx_formats/nvfp4_tensor.py",
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
