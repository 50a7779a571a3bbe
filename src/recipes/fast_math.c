/*
 * fast_math.c - recipe `fast-math`: TransformerEngine's NVFP4 cast with
 * use_fast_math (NVTE_USE_FAST_MATH=1), NVIDIA/TransformerEngine commit
 * d0067d0d transformer_engine/common/cast/nvfp4/specialized/
 * quantize_transpose_nvfp4_tuned_1D.cuh (SCALING_COEFFICIENT_TYPE<true> =
 * bf16, compute_nvfp4_scaling_coefficient<bf16>) and
 * common/util/ptx_arch_spec.cuh (mul_cvt_bf16_to_fp4_8x_round_to_nearest<bf16>:
 * fma.rn.f32.bf16 with a zero addend, then cvt.rn.satfinite.e2m1x2.f32);
 * docs/semantics.md, "Recipes".
 *
 *   S_enc, s  as `te`
 *   c     = bf16_rn(fminf(S_enc / (float)s, BF16_MAX))   (div.rn.f32: no approximate reciprocal here)
 *   y     = fma(x, c, +0)       (x*c rounded once to fp32; an exactly zero product, x = -0 included, is +0)
 *   q     = e2m1_rn_satfinite(y)                        (-0 -> 0x8, NaN -> 0x7; x = -0 gives 0x0 here)
 *   deq   = as `te`
 * Every step is specified bit for bit, so the CPU reproduces the kernel
 * exactly. TE itself takes this path only for bf16 inputs (the tuned 1D
 * kernel); its fp32 inputs run the default kernel (bytes of `te`), while
 * this recipe applies the rule to either dtype. TE's fused RHT cast
 * (hadamard_transform_cast_fusion.cu, kUseFastMath) is another fast-math
 * path: it takes cutlass::reciprocal_approximate_ftz (rcp.approx.ftz.f32,
 * not specified bit for bit by PTX) of s * S_dec and skips the bf16 rounding
 * of the RHT output; it is not modelled: `fast-math` with --rht computes
 * the columnwise output with the rule above, and a kernel using rcp.approx
 * may differ from it in the blocks whose reciprocal is not correctly rounded.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_fast_math = {
    .info = {.name = "fast-math",
             .summary = "TE fast-math NVFP4 cast: bf16 coefficient bf16(S_enc/s), y = fma(x, c, 0)",
             .provenance = "NVIDIA/TransformerEngine d0067d0d common/cast/nvfp4/specialized/"
                           "quantize_transpose_nvfp4_tuned_1D.cuh",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE,
             .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,
             .enc_rule = NVFP4_CORE_ENC_TE_BF16,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_TE,
             .amax_nan_propagates = 0,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
