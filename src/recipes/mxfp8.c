/*
 * mxfp8.c - recipe `mxfp8`: MXFP8 (E4M3 elements, 1x32 blocks, UE8M0 scale
 * rounded up) as TransformerEngine's MXFP8 kernels compute it
 * (NVIDIA/TransformerEngine d0067d0d transformer_engine/common/util/
 * ptx_arch_spec.cuh float_to_e8m0, cast/mxfp8/quantize_mxfp8.cuh).
 *
 *   e     = ue8m0_rp(block_amax * fl(1/448))   (NaN -> 0xFF, Inf -> 0xFE, 0 -> 0x00)
 *   q     = e4m3_rn_satfinite(x / 2^(e-127))   (|y| > 464 -> +-448, NaN -> 0x7F)
 *   deq   = e4m3(q) * 2^(e-127)
 * Element bytes are stored one per element (no nibble packing). RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp8 = {
    .info = {.name = "mxfp8",
             .summary = "MXFP8: E4M3 elements, UE8M0 scale rounded up (cvt.rp of amax*(1/448))",
             .provenance = "NVIDIA/TransformerEngine d0067d0d common/util/ptx_arch_spec.cuh float_to_e8m0",
             .elem = NVFP4_ELEM_E4M3,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = false},
    .core = NVFP4_CORE_CHAIN_MXFP8,
};
