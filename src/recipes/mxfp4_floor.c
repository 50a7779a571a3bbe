/*
 * mxfp4_floor.c - recipe `mxfp4-floor`: OCP MX v1.0 MXFP4 (E2M1 elements,
 * 1x32 blocks, UE8M0 scale by the FLOOR rule) as torchao's to_mx computes it
 * with ScaleCalculationMode.FLOOR and its to_dtype dequantizes it, pytorch/ao
 * v0.18.0 (commit 5f2baf9d575cf732362594c998c399902942531f)
 * torchao/prototype/mx_formats/mx_tensor.py (to_mx, get_fp_scale, to_dtype).
 *
 *   e     = clamp(expbits(block_amax) - 127 - 2, -127, 128) + 127   (NaN amax -> 0xFF)
 *   sf    = max(fp32 with exponent field e, 2^-126)  (e << 23 viewed as fp32, clamped to F32_MIN_NORMAL:
 *                                                     e = 0 -> 2^-126, e = 0xFF -> +Inf)
 *   q     = f32_to_f4_unpacked(x / sf)     (RNE, saturating; NaN -> 0x3 canonical, as `torchao`)
 *   deq   = fp4(q) * 2^(e-127)             (get_fp_scale: pow(2, e - 127), NaN for 0xFF)
 * torch.amax propagates NaN, so a NaN element gives its block the scale 0xFF,
 * whose fp32 scale is +Inf: the block's finite elements become +-0 (0x0 /
 * 0x8), its NaN and Inf elements NaN (0x3 here; torchao: the code of the
 * NaN's bits, e.g. 0xB for the 0xFFC00000 that x86 gives for Inf/Inf), and
 * it dequantizes to NaN. A scale-0x00 block is quantized with 2^-126 but
 * dequantized with 2^-127 (so a round trip halves it), as torchao's two
 * functions do. Differences from `te`: no global scale, power-of-two
 * scales, 32-element blocks.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp4_floor = {
    .info = {.name = "mxfp4-floor",
             .summary = "MXFP4, UE8M0 scale by the OCP floor rule (torchao to_mx FLOOR)",
             .provenance = "pytorch/ao v0.18.0 (5f2baf9d) torchao/prototype/mx_formats/mx_tensor.py to_mx (FLOOR)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = true},
    /* the chain the fast CPU kernels implement (src/core/recipe.h lists its rules) */
    .core = NVFP4_CORE_CHAIN_MXFP4_FLOOR,
};
