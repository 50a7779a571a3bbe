/*
 * te.c - recipe `te` (the default): TransformerEngine's default NVFP4 kernel
 * path (not fast-math), NVIDIA/TransformerEngine commit d0067d0d:
 * transformer_engine/common/cast/nvfp4/core_nvfp4.cuh
 * (compute_global_encode_scaling_factor_FP4, compute_decoding_scaling_factor),
 * quantize_transpose_nvfp4.cuh, specialized/quantize_transpose_nvfp4_tuned_1D.cuh,
 * dequantize_nvfp4.cuh; docs/semantics.md, "Recipes".
 *
 *   S_enc = fminf(2688/amax, FLT_MAX), 1 if amax == 0 or S_enc == 0; S_dec = 1/S_enc
 *   s     = e4m3_rn_satfinite(block_amax * (S_enc * fl(1/6)))     (no lower clamp: s may be 0)
 *   inv   = fminf(1/((float)s * S_dec), FLT_MAX)                  (s == 0: FLT_MAX)
 *   q     = e2m1_rn_satfinite(x * inv)   (cuda_fp4.hpp: -0 -> 0x8, NaN -> 0x7, Inf -> +-6)
 *   deq   = fp4(q) * (((float)s * amax) * fl(1/2688))
 * Amaxes use fmaxf (NaN elements ignored). Edge cases reproduced: amax 0 or
 * Inf -> S_enc 1; amax NaN cannot arise (fmaxf); all-zero block -> scale 0x00
 * and codes 0x0/0x8; a block whose scale underflows E4M3 stores 0x00 and
 * codes +-6 (dequantizing to 0); an Inf element -> scale 448 and +-6.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te = {
    .info = {.name = "te",
             .summary = "TransformerEngine default NVFP4 kernels (E4M3 scale RN, encode 1/(s*S_dec))",
             .provenance = "NVIDIA/TransformerEngine d0067d0d common/cast/nvfp4/core_nvfp4.cuh",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    /* the chain the fast CPU kernels implement (src/core/recipe.h lists its rules) */
    .core = NVFP4_CORE_CHAIN_TE,
};
