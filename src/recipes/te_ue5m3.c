/*
 * te_ue5m3.c - recipe `te-ue5m3` (PROTOTYPE format): TransformerEngine's
 * NVFP4 with UE5M3 block scales and the second-level (per-tensor) scale,
 * NVIDIA/TransformerEngine PR #3325, commit db0957bb05a92cf21ea11bba2c1cab2b5c9d5f43
 * (branch nvfp4-ue5m3-prototype): transformer_engine/common/cast/nvfp4/core_nvfp4.cuh
 * (NVFP4ScaleTraits<fp8ue5m3>, compute_global_encode_scaling_factor_FP4 and
 * compute_decoding_scaling_factor templated on ScaleType = __nv_fp8_ue5m3),
 * quantize_transpose_nvfp4.cuh, dequantize_nvfp4.cuh; the quantizer
 * NVFP4Quantizer(scale_dtype=kFloat8UE5M3) of tests/pytorch/utils.py
 * (nvfp4_ue5m3: weights and gradients keep the second-level scale);
 * docs/semantics.md, "Recipes".
 *
 * The `te` chain with the UE5M3 codec (src/core/ue5m3.h, satfinite) and its
 * maximum 114688 in place of E4M3 and 448:
 *   S_enc = fminf(688128/amax, FLT_MAX), 1 if amax == 0 or S_enc == 0; S_dec = 1/S_enc
 *   s     = ue5m3_rn_satfinite(block_amax * (S_enc * fl(1/6)))
 *   inv   = fminf(1/((float)s * S_dec), FLT_MAX)
 *   q     = e2m1_rn_satfinite(x * inv)
 *   deq   = fp4(q) * (((float)s * amax) * fl(1/688128))
 * With S_enc = 688128/amax the largest block maps to 114688 = 0xFE, and the
 * scale's 2^-17 floor lets blocks 2^31 times smaller than the tensor amax
 * keep a nonzero scale (E4M3: 2^-9 against 448).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te_ue5m3 = {
    .info = {.name = "te-ue5m3",
             .summary = "PROTOTYPE: TE NVFP4 with UE5M3 block scales (max 114688) and a per-tensor scale",
             .provenance = "NVIDIA/TransformerEngine PR #3325 db0957bb common/cast/nvfp4/core_nvfp4.cuh",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_UE5M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_UE5M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE,
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
