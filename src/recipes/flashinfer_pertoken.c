/*
 * flashinfer_pertoken.c - recipe `flashinfer-pertoken`: FlashInfer's per-token
 * NVFP4 activation quantization, nvfp4_quantize(x, a_global_sf = 1/(448*6),
 * per_token_activation=True), flashinfer-python 0.7.4 (flashinfer-ai/flashinfer
 * fb28d72): flashinfer/quantization/fp4_quantization.py (nvfp4_quantize),
 * csrc/nv_internal/tensorrt_llm/kernels/quantization.cuh
 * (nvfp4QuantAndPerTokenScaleKernel, FLASHINFER_DISABLE_FP4_QUANT_FAST_MATH=1),
 * and the bitwise test tests/utils/test_fp4_quantize.py
 * (test_nvfp4_quantize_te_reference: codes and scale bytes equal
 * ref_fp4_quant_te(per_token_rowwise=True), the per-token scales equal
 * where(amax == 0, 0, 1/S_enc(amax)); test_nvfp4_quantize_roundtrip:
 * dequant = e2m1_and_ufp8sf_scale_to_float(q, s, 1) * per_token_scale);
 * docs/semantics.md, "Recipes".
 *
 *   codes, scale bytes  as `te-rowscaled` (the same chain, one S_enc per row)
 *   p_i   = 1/S_enc(a_i), 0 when a_i == 0      (the FP32 [M] per-token scale)
 *   deq   = (fp4(q) * (float)s) * p_i          (the product in parentheses is exact)
 * te-rowscaled stores the row amax a_i and dequantizes fp4(q) * ((s * a_i) *
 * fl(1/2688)); the bundle of this recipe carries both a_i (`amax`) and p_i
 * (`per_token_scale`). 1x16 blocks only (the kernel quantizes rows).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_flashinfer_pertoken = {
    .info = {.name = "flashinfer-pertoken",
             .summary = "FlashInfer per-token NVFP4: the te-rowscaled chain, FP32 per-token scale 1/S_enc(row amax)",
             .provenance = "flashinfer-ai/flashinfer fb28d72 (flashinfer-python 0.7.4) "
                           "csrc/nv_internal/tensorrt_llm/kernels/quantization.cuh nvfp4QuantAndPerTokenScaleKernel",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = NVFP4_RECIPE_ROWSCALED_CORE(NVFP4_CORE_DEQ_PER_TOKEN),
};
