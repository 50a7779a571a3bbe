/*
 * mxfp4_even.c - recipe `mxfp4-even`: MXFP4 (E2M1 elements, 1x32 blocks, UE8M0
 * scale) with torchao's ScaleCalculationMode.EVEN, as to_mx computes it and
 * to_dtype dequantizes it, pytorch/ao v0.18.0 (commit
 * 5f2baf9d575cf732362594c998c399902942531f) torchao/prototype/mx_formats/
 * mx_tensor.py (to_mx, get_fp_scale, to_dtype; the modes in config.py).
 *
 *   e     = clamp(expbits(bits(block_amax) + 2^21) - 127 - 2, -127, 128) + 127
 *                                                      (amax rounded to one fraction bit, half up, then
 *                                                      floor(log2) - 2: amax >= 1.75 * 2^k counts as 2^(k+1);
 *                                                      NaN amax -> 0xFF)
 *   sf    = max(fp32 with exponent field e, 2^-126)    (e = 0 -> 2^-126, e = 0xFF -> +Inf)
 *   q     = f32_to_f4_unpacked(x / sf)                 (RNE, saturating; NaN -> 0x3 canonical, as `torchao`)
 *   deq   = fp4(q) * 2^(e-127)                         (0x00: 2^-127, 0xFF: NaN)
 * Everything but e is `mxfp4-floor`: a NaN element makes its block's
 * scale 0xFF (encode divisor +Inf: finite elements +-0, NaN and Inf
 * elements NaN), and a scale-0x00 block is encoded with 2^-126 but decoded
 * with 2^-127, as torchao's two functions do.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp4_even = {
    .info = {.name = "mxfp4-even",
             .summary = "MXFP4, UE8M0 scale from amax rounded to 1 fraction bit, then floor (torchao to_mx EVEN)",
             .provenance = "pytorch/ao v0.18.0 (5f2baf9d) torchao/prototype/mx_formats/mx_tensor.py to_mx (EVEN)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_UE8M0,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
             .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_EVEN,
             .enc_rule = NVFP4_CORE_ENC_POW2_FP32,
             .special = NVFP4_CORE_SPECIAL_TORCHAO,
             .dequant_rule = NVFP4_CORE_DEQ_POW2,
             .amax_nan_propagates = 1,
             .block_len = 32,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0x1p-126f},
};
