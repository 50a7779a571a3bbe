/*
 * vllm.c - recipe `vllm`: vLLM's reference NVFP4 quantizer ref_nvfp4_quant
 * and ref_nvfp4_quant_dequant, vLLM 0.33.0 (PyPI vllm==0.33.0,
 * vllm-project/vllm vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py:
 * get_reciprocal line 685, cast_to_fp4 line 695, ref_nvfp4_quant line 709,
 * ref_nvfp4_quant_dequant line 726),
 * with the global scale its kernel tests compute
 * (tests/kernels/quantization/test_nvfp4_quant.py: (448 * 6) / amax).
 *
 *   amax  = torch.max semantics (a NaN element makes it NaN)
 *   gs    = fl(fl(1/amax) * 2688)             (torch's 2688 / tensor; no guard: amax 0 -> +Inf)
 *   s     = e4m3(clamp(gs * (block_amax * fl(1/6)), 448))   (bamax * fl(1/6) first; te multiplies
 *                                                            bamax by (S_enc * fl(1/6)))
 *   r(v)  = 1/v, and r(0) = fl(1/1e8)           (get_reciprocal: 1.0 / (v + (v == 0) * 1e8))
 *   y     = clamp(x * r(s * r(gs)), -6, 6)
 *   q     = RNE on the E2M1 grid; +-0 -> 0x0, a negative y that rounds to zero -> 0x8, NaN -> 0x0
 *   deq   = fp4(q) * (s / gs)
 * ref_nvfp4_quant returns E2M1 values, not codes: the code of a value is its
 * magnitude index with the sign bit of the value (torch.sign(y) * |q| gives
 * +0 for y = +-0 and -0 for a negative y rounding to zero); a NaN y has no
 * code there, and this recipe writes 0x0 for it. A block scale of 0 gives
 * the factor fl(1/1e8), so its elements become +-0 (te: FLT_MAX and +-6).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_vllm = {
    .info = {.name = "vllm",
             .summary = "vLLM 0.33.0 ref_nvfp4_quant: s = gs*(bamax*fl(1/6)), y = x*r(s*r(gs)), r(0) = 1e-8",
             .provenance = "vllm 0.33.0 vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP,
             .bscale_rule = NVFP4_CORE_BSCALE_GLOBAL_FIRST,
             .enc_rule = NVFP4_CORE_ENC_SAFE_RECIP,
             .special = NVFP4_CORE_SPECIAL_PYREF,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
