/*
 * mslk_stacked.c - recipe `mslk-stacked`: mslk-cuda 1.1.0's MoE pipeline,
 * calculate_group_max then nvfp4_quantize_stacked
 * (mslk/quantize/triton/fp4_quantize.py: calculate_group_max line 5170,
 * _calculate_group_max line 5034; _nvfp4_quantize_stacked_kernel line 2189),
 * applied to one group; with `--groups` (nvfp4/grouped.h) each expert.
 *
 *   S_enc = 2688 / amax                                  (one fp32 division: _calculate_group_max's
 *                                                         448.0 * 6.0 / group_max, the minimum over rows)
 *   s     = e4m3_rn_sat(clamp((block_amax / 6) * S_enc, 2^-16, 448))  (as `mslk`)
 *   y     = x * fminf(S_enc / s, FLT_MAX)                (as `mslk`)
 *   deq   = fp4(q) * (s / S_enc)                         (mslk's grouped GEMM scales by 1 / S_enc)
 * It is the recipe `mslk` but for the global scale: torchao's 1 / (amax / 2688)
 * (two roundings) there, mslk's own single division here; the two S_enc differ
 * by one ulp for some amaxes, and then a few codes and scales differ
 * (tests/py/test_grouped_oracle.py runs both pipelines). As `te`, an amax of 0
 * gives S_enc = 1 (mslk: 2688 / 1e-8, whose zero blocks all end as mslk's
 * +Inf-factor defect, codes 0x7, which no recipe copies: the codes are 0 either
 * way here) and a quotient above FLT_MAX gives FLT_MAX (amax < 7.9e-36). Not
 * reproduced: an expert whose amax is below 1e-8 and that has an all-zero
 * row, where mslk takes 2688 / 1e-8. A NaN element is ignored by the amaxes
 * (the GPU's max.f32, which tl.max compiles to; not tested: the Triton
 * interpreter propagates NaN).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mslk_stacked = {
    .info = {.name = "mslk-stacked",
             .summary = "mslk-cuda 1.1.0 MoE: calculate_group_max S_enc = 2688/amax, then the mslk block chain",
             .provenance = "mslk-cuda 1.1.0 mslk/quantize/triton/fp4_quantize.py calculate_group_max, "
                           "_nvfp4_quantize_stacked_kernel",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL,
             .enc_rule = NVFP4_CORE_ENC_GLOBAL_OVER_SCALE,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0x1p-16f,
             .pow2_scale_min = 0.0f},
};
