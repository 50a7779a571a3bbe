/*
 * exact.c - recipe `exact`: TE's global and block scales (as `te`), then for
 * each element the E2M1 code whose dequantized value is nearest to x: the
 * correctly rounded code of the real quotient x / D with
 * D = ((float)s * amax) * fl(1/2688) (te's dequantization scale), ties to
 * the even code. It is found by comparing |x| with D * boundary in binary64
 * (exact), so no division or reciprocal rounds. Not a public implementation:
 * the yardstick that shows how often te's rounded encode factor
 * 1/((float)s * S_dec) picks a different code.
 * Special values: sign kept (-0 -> 0x8), NaN -> 0x7, +-Inf -> +-6, D = 0 (a
 * zero or underflowing block) -> +-6 for nonzero x, as te. RN only.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_exact = {
    .info = {.name = "exact",
             .summary = "te scales, then the correctly rounded code of x / (dequant scale)",
             .provenance = "nvfp4kit (definition; te scales from TransformerEngine d0067d0d)",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE,
             .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,
             .enc_rule = NVFP4_CORE_ENC_EXACT,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_TE,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
