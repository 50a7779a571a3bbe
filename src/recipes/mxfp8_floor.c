/*
 * mxfp8_floor.c - recipe `mxfp8-floor`: MXFP8 (E4M3 elements, 1x32 blocks,
 * UE8M0 scale by the OCP FLOOR rule) as torchao's to_mx computes it with
 * ScaleCalculationMode.FLOOR and elem_dtype float8_e4m3fn, and its to_dtype
 * dequantizes it, pytorch/ao v0.18.0 (commit
 * 5f2baf9d575cf732362594c998c399902942531f) torchao/prototype/mx_formats/
 * mx_tensor.py (to_mx, get_fp_scale, to_dtype). The recipe `mxfp8` is
 * NVIDIA's round-up rule (TransformerEngine's cvt.rp of amax/448).
 *
 *   e     = clamp(expbits(block_amax) - 127 - 8, -127, 128) + 127   (NaN amax -> 0xFF)
 *   sf    = max(fp32 with exponent field e, 2^-126)   (e = 0 -> 2^-126, e = 0xFF -> +Inf)
 *   q     = e4m3_rn(clamp(x / sf, -448, 448))         (torch's cast to float8_e4m3fn; NaN -> 0x7F)
 *   deq   = e4m3(q) * 2^(e-127)                       (0x00: 2^-127, 0xFF: NaN)
 * The amax propagates NaN (torch.amax): a block with a NaN gets 0xFF, its
 * finite elements become +-0 (0x00 / 0x80) and its NaN and Inf elements NaN.
 * torch keeps a NaN's sign in the E4M3 cast (0xFF for a negative NaN, and
 * x86's Inf/Inf is negative); this recipe writes 0x7F for every NaN. An
 * element byte per element (no packing); RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp8_floor = {
    .info = {.name = "mxfp8-floor",
             .summary = "MXFP8: E4M3 elements, UE8M0 scale by the OCP floor rule (torchao to_mx FLOOR)",
             .provenance = "pytorch/ao v0.18.0 (5f2baf9d) torchao/prototype/mx_formats/mx_tensor.py to_mx (FLOOR, e4m3)",
             .elem = NVFP4_ELEM_E4M3,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E4M3,
             .scale_format = NVFP4_CORE_SCALE_UE8M0,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
             .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_FLOOR,
             .enc_rule = NVFP4_CORE_ENC_POW2_FP32,
             .special = NVFP4_CORE_SPECIAL_TORCHAO,
             .dequant_rule = NVFP4_CORE_DEQ_POW2,
             .amax_nan_propagates = 1,
             .block_len = 32,
             .emax_elem = 8,
             .elem_max = 448.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0x1p-126f},
};
