/*
 * torchao_1level.c - recipe `torchao-1level`: torchao's NVFP4 with the E4M3
 * block scale alone (single-level scaling: nvfp4_quantize with
 * per_tensor_scale None, NVFP4Tensor.to_nvfp4 without a per-tensor scale),
 * pytorch/ao v0.18.0 (commit 5f2baf9d575cf732362594c998c399902942531f)
 * torchao/prototype/mx_formats/nvfp4_tensor.py (nvfp4_quantize,
 * NVFP4Tensor.dequantize, get_hp_scales).
 *
 *   s     = e4m3(clamp(block_amax / 6, 2^-6, 448))   (one division; lower clamp E4M3_EPS)
 *   y     = clamp(x * (1 / (float)s), -6, 6)         (the reciprocal rounded first, like torchao)
 *   q     = f32_to_f4_unpacked(y)                    (RNE; -0 -> 0x8; NaN -> 0x3, as `torchao`)
 *   deq   = fp4(q) * (float)s
 * It is `torchao` with g = 1: no tensor amax is taken and none is stored.
 * torch.amax propagates NaN, so a block holding a NaN gets the scale 0x7F
 * (torchao: 0xFF for a negative NaN) and every element of it the code of a
 * NaN (0x3 here; torchao the code of the NaN's bits, see `torchao`). An Inf
 * element gives its block the scale 448 (0x7E) and itself +-6. A block whose
 * amax is below 6 * 2^-6 = 0.09375 keeps the scale 2^-6: values below 2^-8
 * (half of the smallest nonzero code times 2^-6) become +-0, and a block of
 * zeros gets 0x08 rather than a zero scale.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_torchao_1level = {
    .info = {.name = "torchao-1level",
             .summary = "torchao NVFP4Tensor without a per-tensor scale (E4M3 block scale alone, clamp [2^-6, 448])",
             .provenance = "pytorch/ao v0.18.0 (5f2baf9d) torchao/prototype/mx_formats/nvfp4_tensor.py (per_tensor_scale None)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = false,
             .supports_sr = true},
    /* torchao's rules with the global state of a recipe without one (g = 1:
     * (v/6)/1, (1/1)/s and 1*s are exactly torchao's v/6, 1/s and s) */
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
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
