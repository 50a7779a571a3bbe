/*
 * compressed_tensors.c - recipe `compressed-tensors`: the NVFP4 weights that
 * llm-compressor writes through compressed-tensors 0.20.1 (PyPI
 * compressed-tensors==0.20.1, vllm-project/compressed-tensors), its CPU path
 * on float32 tensors: quantization/utils/helpers.py generate_gparam (line 324)
 * and calculate_qparams (line 52, scheme NVFP4 of quant_scheme.py line 184:
 * scale_dtype float8_e4m3fn), quantization/lifecycle/forward_helpers.py
 * _quantize (line 523) and _dequantize (line 548), quantization/utils/fp4_utils.py
 * cast_to_fp4 (line 77) and compressors/nvfp4/helpers.py
 * quantize_and_pack_fp4 / pack_fp4_to_uint8 (CPU fallbacks).
 *
 *   amax  = torch.amax semantics (a NaN element makes it NaN)
 *   gs    = fl(fl(1/max(amax, 2^-126)) * 2688)   (2688 / tensor is reciprocal * 2688 in torch);
 *           NaN or +-Inf -> 1 (nan_to_num); amax +Inf gives 0 and stays 0
 *   s     = e4m3(clamp(gs * (block_amax / 6), 448));  s == 0 -> 0.125 (0x20)
 *   y     = clamp(x / (s / gs), -6, 6)                 (two divisions: the scale divided by gs first)
 *   q     = RNE on the E2M1 grid; sign from torch.sign(y): +-0 -> 0x0, a negative y that rounds to
 *           zero -> 0x8 (-0.0), NaN -> 0x0 (the NaN's int8 cast in pack_fp4_to_uint8 is 0)
 *   deq   = fp4(q) * (s / gs)                          (0x8 gives -0.0)
 * This is the "x / (s / S_enc)" encode with torch's global scale,
 * a scale floor of 0.125 for zero blocks and underflowing blocks instead of
 * te's zero scale, and NaN propagation. The checkpoint stores gs as
 * weight_global_scale (a divisor) and s as weight_scale. The Triton kernel
 * of the same package (_quantize_and_pack_fp4_kernel, GPU only) computes
 * the same divisions with tl.div_rn. A bf16 weight makes torch round
 * bamax/6 and the global scale to bf16 first: recipe
 * `compressed-tensors-bf16` (compressed_tensors_bf16.c).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_compressed_tensors = {
    .info = {.name = "compressed-tensors",
             .summary = "compressed-tensors 0.20.1 NVFP4 (llm-compressor): gs = fl(1/amax)*2688, x / (s/gs), zero scale -> 0.125",
             .provenance = "compressed-tensors 0.20.1 quantization/utils/helpers.py, lifecycle/forward_helpers.py, utils/fp4_utils.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP_CT,
             .bscale_rule = NVFP4_CORE_BSCALE_CT,
             .enc_rule = NVFP4_CORE_ENC_DIV_SCALE_GLOBAL,
             .special = NVFP4_CORE_SPECIAL_PYREF,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
