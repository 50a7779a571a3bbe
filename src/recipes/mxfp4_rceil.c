/*
 * mxfp4_rceil.c - recipe `mxfp4-rceil`: MXFP4 with NVIDIA's round-up UE8M0
 * scale, as TransformerEngine's MX kernels compute it (NVIDIA/TransformerEngine
 * d0067d0d transformer_engine/common/util/ptx_arch_spec.cuh float_to_e8m0,
 * utils.cuh max_norm_rcp): e = cvt.rp.satfinite.ue8m0x2.f32(block_amax *
 * fl(1/6)); elements are scaled by 2^(127-e) and cast with
 * cvt.rn.satfinite.e2m1 (cuda_fp4.hpp semantics: -0 -> 0x8, NaN -> 0x7).
 *
 *   e     = ue8m0_rp(block_amax * fl(1/6))     (NaN -> 0xFF, Inf -> 0xFE, 0 -> 0x00)
 *   q     = e2m1_rn_satfinite(x / 2^(e-127))   (exact power-of-two scaling)
 *   deq   = fp4(q) * 2^(e-127)
 * Amaxes use fmaxf (NaN ignored). torchao's RCEIL mode computes
 * ceil(log2(amax/6)) with a float log2 instead and can differ for block
 * amaxes just above a power of two times 6.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mxfp4_rceil = {
    .info = {.name = "mxfp4-rceil",
             .summary = "MXFP4, UE8M0 scale rounded up (cvt.rp of amax*(1/6), NVIDIA rule)",
             .provenance = "NVIDIA/TransformerEngine d0067d0d common/util/ptx_arch_spec.cuh float_to_e8m0",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE8M0,
             .default_block = NVFP4_BLOCK_1X32,
             .has_global_amax = false,
             .supports_sr = true},
    /* the chain the fast CPU kernels implement (src/core/recipe.h lists its rules) */
    .core = NVFP4_CORE_CHAIN_MXFP4_RCEIL,
};
