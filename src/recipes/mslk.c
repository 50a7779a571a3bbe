/*
 * mslk.c - recipe `mslk`: the Triton NVFP4 quantize kernel of mslk-cuda 1.1.0
 * (PyPI mslk-cuda==1.1.0, mslk/quantize/triton/fp4_quantize.py:
 * triton_quantize_nvfp4 line 5317, triton_quantize_nvfp4_kernel line 5407
 * with USE_PRECISE_MATH, convert_fp32_to_fp4_packed line 5564) with the global
 * scale torchao 0.18 passes it (torchao/prototype/mx_formats/kernels.py
 * mslk_quantize_nvfp4: per_tensor_scale.reciprocal(), per_tensor_scale =
 * nvfp4_tensor.py per_tensor_amax_to_scale = amax / 2688).
 *
 *   g     = amax / 2688;  S_enc = 1/g                      (two roundings; amax 0 gives +Inf)
 *   s     = e4m3_rn_sat(clamp((block_amax / 6) * S_enc, 2^-16, 448))  (tl.div_rn, then the product)
 *   y     = x * fminf(S_enc / s, FLT_MAX)                  (tl.div_rn(global_scale, scale))
 *   q     = cvt.rn.satfinite.e2m1x2.f32(y)                 (sign kept, NaN -> 0x7, as te)
 *   deq   = fp4(q) * (g * s)                               (torchao NVFP4Tensor.dequantize)
 * The FLT_MAX clamp is this recipe's, not mslk's: mslk's factor for a block
 * whose scale rounds to E4M3 0 (all zeros, or bamax * S_enc / 6 < 2^-10) is
 * +Inf, so its zero elements become 0 * Inf = NaN, code 0x7 (+6) instead of
 * 0x0, and its nonzero elements +-6 even where x * FLT_MAX would not reach
 * them. That is a defect, and the only place mslk and this recipe differ
 * (tests/py/test_triton_oracles.py checks both). The scales are written in
 * the cuBLAS 128x4 layout with zero padding (the bundle's scale_swizzled).
 * Compared with `te`: torchao's g and its reciprocal for S_enc, the block
 * scale (bamax / 6) * S_enc (te: bamax * (S_enc * fl(1/6))), the encode
 * factor S_enc / s (te: 1 / (s * (1 / S_enc))).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_mslk = {
    .info = {.name = "mslk",
             .summary = "mslk-cuda 1.1.0 Triton NVFP4 (torchao 0.18's path): S_enc = 1/(amax/2688), s = (bamax/6)*S_enc, x*(S_enc/s)",
             .provenance = "mslk-cuda 1.1.0 mslk/quantize/triton/fp4_quantize.py triton_quantize_nvfp4_kernel; torchao 0.18.0",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_RECIP_OF_DECODE,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL,
             .enc_rule = NVFP4_CORE_ENC_GLOBAL_OVER_SCALE,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_GLOBAL_MUL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0x1p-16f,
             .pow2_scale_min = 0.0f},
};
