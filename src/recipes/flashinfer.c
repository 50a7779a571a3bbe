/*
 * flashinfer.c - recipe `flashinfer`: FlashInfer's batch-invariant NVFP4
 * quantization as its CPU reference specifies it, flashinfer-python 0.7.4
 * (PyPI flashinfer-python==0.7.4): flashinfer/batch_invariant/quantization/
 * nvfp4_spec.py (sf_value line 90, inv_scale line 100, block_chain line 107,
 * quant_elem line 119), nvfp4_reference.py (quantize_reference line 261,
 * amax_ignoring_nan, e4m3_round, e2m1_round), with the global scale of
 * flashinfer/quantization/nvfp4_quantization_utils.py make_nvfp4_global_scale
 * (line 341; per tensor, no 4over6).
 *
 *   amax  = input.abs().max() (torch: a NaN element makes it NaN)
 *   gs    = FLT_MAX if amax == 0, else fl(fl(1/amax) * 2688)   (torch's 2688 / tensor)
 *   s     = e4m3_rn_sat(block_amax * (gs * fl(1/6)))           (as te)
 *   inv   = fmin(1 / (s * (1/gs)), FLT_MAX)                    (as te; fmin(NaN, FLT_MAX) = FLT_MAX)
 *   q     = e2m1_rn_sat(x * inv)   (sign kept, NaN -> 0x7, as te)
 *   deq   = fp4(q) * (s / gs)      (the reference's dequantize is q * s / gs in binary64)
 * It is `te` with torch's global scale (1 ulp below te's S_enc for about a
 * quarter of amaxes) and NaN propagation into the global scale: one NaN
 * element makes gs NaN, every scale byte 0x7F and every element x * FLT_MAX.
 * The reference's block amax ignores NaN elements (NaN only when the whole
 * block is NaN), which only matters once gs is NaN already.
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_flashinfer = {
    .info = {.name = "flashinfer",
             .summary = "FlashInfer 0.7.4 batch-invariant NVFP4 reference: te's chain with gs = fl(1/amax)*2688",
             .provenance = "flashinfer-python 0.7.4 flashinfer/batch_invariant/quantization/nvfp4_spec.py, nvfp4_reference.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP_FI,
             .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL,
             .enc_rule = NVFP4_CORE_ENC_TE_RECIP,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
