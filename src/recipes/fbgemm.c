/*
 * fbgemm.c - recipe `fbgemm`: the Triton NVFP4 quantize kernel of
 * fbgemm-gpu-genai 1.9.0 (PyPI fbgemm-gpu-genai==1.9.0,
 * fbgemm_gpu/experimental/gemm/triton_gemm/fp4_quantize.py:
 * triton_scale_nvfp4_quant line 1498, _kernel_nvfp4_quantize line 1291)
 * with the global scale fbgemm's own callers pass
 * (fp4_quantize.py:5618 get_nvfp4_global_scales_naive and
 * experimental/gen_ai/bench/quantize_ops.py:2372: (448.0 * 6.0) /
 * torch.amax(torch.abs(x.flatten())), torch's Tensor.__rtruediv__).
 *
 *   amax  = torch.amax(|x|) (a NaN element makes it NaN)
 *   gs    = fl(fl(1/amax) * 2688), no guard: amax 0 (or below ~7.9e-36) gives
 *           +Inf, amax +Inf gives 0                               (quantize_ops.py:2372)
 *   s     = e4m3_rn_satfinite((bamax / 6.0) * gs)               (line 1405, 1407)
 *   y     = div_rn(x, s / gs)                                   (line 1412-1415)
 *   q     = cvt.rn.satfinite.e2m1x2.f32(y): x / 0 = +-Inf -> +-6, 0 / 0 = NaN -> 0x7
 *                                                               (line 1437)
 *   deq   = fp4(q) * (s / gs)  (fbgemm has no element dequantization: its GEMM
 *           multiplies the accumulated fp4(q) * s products by 1/(gs_x * gs_w);
 *           this is the per-element form compressed-tensors and vLLM use)
 * So it is `te` with torch's global scale (global-torch-rdiv), TE's Python
 * reference order of the block scale (scale-div6-then-senc) and one divisor
 * s / gs (encode-s-over-senc), with no FLT_MAX clamp anywhere: a block whose
 * scale byte is 0 divides by 0, so an all-zero block stores code 0x7 (+6,
 * decoding to 0 under scale 0) in every element, where te stores 0x0.
 *
 * Modelled with IEEE divisions. On an NVIDIA GPU both plain divisions of
 * the kernel (bamax / 6.0 and s / gs) are Triton's default fp32 division,
 * div.full.f32 (at most 2 ulp, not correctly rounded); its exact results
 * are not published, so bytes whose scale product or encode divisor lies
 * within an ulp or two of an E4M3 or E2M1 rounding boundary can differ on a
 * GPU. Under the Triton interpreter (TRITON_INTERPRET=1, divisions in
 * numpy) the kernel gives this recipe's bytes.
 *
 * Not part of the recipe (bugs of the kernel, which verify names): the
 * 128x4 scale layout indexed with the padded group count as the row length
 * (line 1463-1474; wrong whenever K/16 is not a multiple of 4, the catalog's
 * layout-swizzle-padded-stride), and padding cells of the scales taken from
 * torch.empty and never written (line 1560).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_fbgemm = {
    .info = {.name = "fbgemm",
             .summary = "fbgemm-gpu-genai 1.9.0 Triton NVFP4: s = e4m3((bamax/6)*gs), y = x/(s/gs), gs unguarded",
             .provenance = "fbgemm-gpu-genai 1.9.0 fbgemm_gpu/experimental/gemm/triton_gemm/fp4_quantize.py",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = false},
    .core = {.elem = NVFP4_CORE_ELEM_E2M1,
             .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TORCH_RECIP,
             .bscale_rule = NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL,
             .enc_rule = NVFP4_CORE_ENC_DIV_SCALE_GLOBAL,
             .special = NVFP4_CORE_SPECIAL_CUDA,
             .dequant_rule = NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL,
             .amax_nan_propagates = 1,
             .block_len = 16,
             .emax_elem = 2,
             .elem_max = 6.0f,
             .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
