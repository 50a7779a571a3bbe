/*
 * mxfp4_floor.c - recipe `mxfp4-floor`: OCP MX v1.0 MXFP4 (E2M1 elements,
 * 1x32 blocks, UE8M0 scale by the FLOOR rule) as torchao's to_mx computes it
 * with ScaleCalculationMode.FLOOR, pytorch/ao
 * torchao/prototype/mx_formats/mx_tensor.py (to_mx, get_fp_scale).
 *
 *   e     = clamp(expbits(block_amax) - 127 - 2, -127, 128) + 127   (NaN amax -> 0xFF)
 *   sf    = max(2^(e-127), 2^-126)        (torchao clamps the fp32 scale to the smallest normal)
 *   q     = f32_to_f4_unpacked(clamp(x / sf, -6, 6))   (RNE; NaN -> 0x3 canonical, as `torchao`)
 *   deq   = fp4(q) * sf
 * torch.amax propagates NaN, so a NaN element gives the block scale 0xFF and
 * NaN codes. Differences from `te`: no global scale, power-of-two scales,
 * 32-element blocks.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp4_floor = {
    .info = {.name = "mxfp4-floor",
             .summary = "MXFP4, UE8M0 scale by the OCP floor rule (torchao to_mx FLOOR)",
             .provenance = "pytorch/ao torchao/prototype/mx_formats/mx_tensor.py to_mx (FLOOR)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = true},
    /* the chain the fast CPU kernels implement (src/core/recipe.h lists its rules) */
    .core = NVFP4_CORE_CHAIN_MXFP4_FLOOR,
};
