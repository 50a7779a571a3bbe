/*
 * te_pow2.c - recipe `te-pow2`: TransformerEngine's Python reference
 * quantizer with power-of-two scales (NVFP4QuantizerRef(pow_2_scales=True),
 * quant_tile_shape (1, 32)), NVIDIA/TransformerEngine commit d0067d0d
 * transformer_engine/pytorch/custom_recipes/reference_nvfp4.py
 * (_quantize_blockwise_reference, cast_to_e8, cast_to_fp4x2);
 * docs/semantics.md, "Recipes".
 *
 *   d     = block_amax / 6                                (torch.div: a true division)
 *   e     = clamp(ceil(log2(d)), -127, 127)               (cast_to_e8; exact here, see below)
 *   q     = cast_to_fp4x2(clamp(x * 2^-e, -6, 6))         (RNE; -0 -> 0x0, NaN -> 0x0)
 *   deq   = fp4(q) * 2^e                                  (stored as the UE8M0 byte e + 127)
 * No global scale. Amaxes are torch.amax: a NaN element makes its block's
 * scale NaN (byte 0xFF) and every code of that block 0x0. d = 0 gives
 * e = -127 (byte 0x00); d = Inf gives e = 127 (0xFE). Not reproduced:
 * torch.log2 is an fp32 function, and for d a few fp32 ulps above a power
 * of two 2^k (k != 0; the closer to 2^k the larger |k|) it returns exactly
 * k, so TE takes e = k where this recipe takes the exact k + 1 (TE's block
 * maximum then saturates to +-6). TE accepts only 1x32 blocks
 * for this mode; the library allows the others too. RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te_pow2 = {
    .info = {.name = "te-pow2",
             .summary = "TE Python reference, pow_2_scales: UE8M0 2^ceil(log2(amax/6)), 1x32",
             .provenance = "NVIDIA/TransformerEngine d0067d0d pytorch/custom_recipes/reference_nvfp4.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_UE8M0,
             .global_rule = NVFP4_CORE_GLOBAL_NONE,
             .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_DIV_RCEIL,
             .enc_rule = NVFP4_CORE_ENC_POW2,
             .special = NVFP4_CORE_SPECIAL_PYREF,
             .dequant_rule = NVFP4_CORE_DEQ_POW2,
             .amax_nan_propagates = 1,
             .block_len = 32,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
