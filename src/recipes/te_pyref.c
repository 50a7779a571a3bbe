/*
 * te_pyref.c - recipe `te-pyref`: TransformerEngine's Python reference
 * quantizer, NVIDIA/TransformerEngine commit d0067d0d
 * transformer_engine/pytorch/custom_recipes/reference_nvfp4.py
 * (NVFP4QuantizerRef._quantize_blockwise_reference, cast_to_fp4x2).
 *
 * Same chain as `te` (global scale, block scale, encode factor, dequant).
 * Differs from `te` only in the final cast: cast_to_fp4x2 matches an interval
 * table with `x >= 0.0`, so -0.0 gives 0x0 (te: 0x8) and NaN matches no
 * interval and gives 0x0 (te: 0x7). Negative values in [-0.25, -0) still
 * give 0x8. The policy is applied to y = x * inv.
 * Not reproduced: the reference's torch.amax propagates a NaN element into
 * the block and global amax; here amaxes ignore NaN as in `te`, so only the
 * NaN element itself is affected (code 0x0).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te_pyref = {
    .info = {.name = "te-pyref",
             .summary = "TransformerEngine Python reference (te chain; -0.0 -> +0, NaN -> 0)",
             .provenance = "NVIDIA/TransformerEngine d0067d0d pytorch/custom_recipes/reference_nvfp4.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE,
             .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,
             .enc_rule = NVFP4_CORE_ENC_TE_RECIP,
             .special = NVFP4_CORE_SPECIAL_PYREF,
             .dequant_rule = NVFP4_CORE_DEQ_TE,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
