/*
 * te_ue5m3_1level.c - recipe `te-ue5m3-1level` (PROTOTYPE format):
 * TransformerEngine's NVFP4 with UE5M3 block scales and no second-level
 * scale (NVFP4Quantizer(scale_dtype=kFloat8UE5M3,
 * disable_second_level_scale=True), which TE's nvfp4_ue5m3 test recipe uses
 * for activations: tests/pytorch/utils.py make_nvfp4_ue5m3_quantizer),
 * NVIDIA/TransformerEngine PR #3325, commit db0957bb05a92cf21ea11bba2c1cab2b5c9d5f43:
 * cast/nvfp4/quantize_transpose_nvfp4.cuh (S_enc = 1 when the amax pointer
 * is null), dequantize_nvfp4.cuh (amax = unit_global_scale_amax = 6 *
 * 114688 when tensor_amax is null); docs/semantics.md, "Recipes".
 *
 *   S_enc = S_dec = 1 (no amax is computed or stored)
 *   s     = ue5m3_rn_satfinite(block_amax * fl(1/6))
 *   inv   = fminf(1/(float)s, FLT_MAX)
 *   q     = e2m1_rn_satfinite(x * inv)
 *   deq   = fp4(q) * (((float)s * 688128) * fl(1/688128))
 * The last factor equals (float)s for all 255 finite scales (checked in
 * check_recipes_ue5m3), so deq = fp4(q) * s. Blocks whose amax is above 6 * 114688
 * saturate at 0xFE; blocks below 6 * 2^-18 get scale 0 (codes +-6 that
 * dequantize to 0), as in `te`.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te_ue5m3_1level = {
    .info = {.name = "te-ue5m3-1level",
             .summary = "PROTOTYPE: TE NVFP4 with UE5M3 block scales only (disable_second_level_scale)",
             .provenance = "NVIDIA/TransformerEngine PR #3325 db0957bb common/cast/nvfp4/quantize_transpose_nvfp4.cuh",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE5M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = false,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_UE5M3,
             .global_rule = NVFP4_CORE_GLOBAL_UNIT,
             .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,
             .enc_rule = NVFP4_CORE_ENC_TE_RECIP,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_TE,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
