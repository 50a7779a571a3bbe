/*
 * te_4over6.h - the shared rules of the recipes `te-4over6`, `te-4over6-mse`, `te-4over6-fast` and
 * `te-4over6-mse-fast`: TransformerEngine's NVFP4 "Four Over Six"
 * quantization (arXiv 2512.02010), NVIDIA/TransformerEngine commit d0067d0d:
 * transformer_engine/common/cast/nvfp4/quantize_4over6_nvfp4.cuh (the
 * kernels) and transformer_engine/pytorch/custom_recipes/reference_nvfp4.py
 * (NVFP4QuantizerRef with nvfp4_use_4over6=True, nvfp4_e4m3_max=256,
 * nvfp4_4over6_err_mode "MAE" / "MSE", nvfp4_4over6_err_use_fast_math);
 * docs/semantics.md, "Recipes".
 *
 *   S_enc = fminf(1536/amax, FLT_MAX), 1 if amax == 0 or S_enc == 0; S_dec = 1/S_enc
 *   base  = (block_amax / 6) * S_enc
 *   s6    = e4m3_rn(fminf(base, 448))          (map-to-6)
 *   s4    = e4m3_rn(fminf(base * 1.5, 448))    (map-to-4: the block max lands on 4)
 *   q_c   = e2m1_rn_satfinite(x * fminf(1/((float)s_c * S_dec), FLT_MAX))   (each candidate, as `te`)
 *   err_c = sum_k |((fp4(q_c) * s_c) * amax) / 1536 - x|        (MSE: the squares; -fast: fp4(q_c)*s_c - x*S_enc)
 *   keep s4 iff err_4 < err_6 (ties and NaN: s6); 16x16: the tile's 16 row errors summed as a warp tree
 *   deq   = fp4(q) * (((float)s * amax) * fl(1/1536))
 * The cast follows the kernel's cvt.rn.satfinite (-0 -> 0x8, NaN -> 0x7);
 * the Python reference gives 0x0 for y = -0 and takes block amaxes with
 * torch.amax (a NaN element makes its block NaN), see docs/semantics.md.
 * RN only (TE: 4over6 does not support stochastic rounding). One file per
 * recipe (te_4over6.c, te_4over6_mse.c, te_4over6_fast.c,
 * te_4over6_mse_fast.c) differs only in the error rule.
 */
#ifndef NVFP4_RECIPES_TE_4OVER6_H
#define NVFP4_RECIPES_TE_4OVER6_H

#include "recipes/recipe.h"

#define TE_4OVER6_CORE(BSCALE)                                                                                    \
    {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_E4M3,                                         \
     .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE_256, .bscale_rule = (BSCALE), .enc_rule = NVFP4_CORE_ENC_TE_RECIP, \
     .special = NVFP4_CORE_SPECIAL_CUDA, .dequant_rule = NVFP4_CORE_DEQ_TE_256, .amax_nan_propagates = 0,        \
     .block_len = 16, .emax_elem = 2, .elem_max = 6.0f, .scale_lo = 0.0f, .pow2_scale_min = 0.0f}

#define TE_4OVER6_INFO(NAME, SUMMARY)                                                                             \
    {.name = (NAME), .summary = (SUMMARY),                                                                        \
     .provenance = "NVIDIA/TransformerEngine d0067d0d common/cast/nvfp4/quantize_4over6_nvfp4.cuh",              \
     .elem = NVFP4_ELEM_E2M1, .scale_format = NVFP4_SCALEFMT_E4M3, .default_block = NVFP4_BLOCK_1X16,            \
     .has_global_amax = true, .supports_sr = false}

#endif /* NVFP4_RECIPES_TE_4OVER6_H */
