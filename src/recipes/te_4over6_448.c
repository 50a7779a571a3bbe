/*
 * te_4over6_448.c - recipe `te-4over6-448`: 4over6 (MAE) with the standard
 * NVFP4 E4M3 bound 448 instead of 256, TransformerEngine's
 * NVFP4BlockScaling(nvfp4_4over6=..., nvfp4_4over6_e4m3_use_256="none")
 * (environment NVTE_NVFP4_4OVER6_E4M3_USE_256=none), NVIDIA/TransformerEngine
 * d0067d0d: common/recipe/__init__.py, pytorch/quantization.py (nvfp4_e4m3_max
 * = 448), common/cast/nvfp4/quantize_4over6_nvfp4.cuh (compute_scale_pair<448>,
 * accumulate_dequant_error<.., 448, ..>), dequantize_nvfp4.cuh (E4M3_MAX 448).
 *
 *   S_enc = fminf(2688/amax, FLT_MAX), 1 if amax == 0 or S_enc == 0 (as `te`)
 *   base  = (block_amax / 6) * S_enc
 *   s6    = e4m3_rn(fminf(base, 448)),  s4 = e4m3_rn(fminf(base * 1.5, 448))
 *   err_c = sum_k |((fp4(q_c) * s_c) * amax) / 2688 - x|, keep s4 iff err_4 < err_6
 *   deq   = fp4(q) * (((float)s * amax) * fl(1/2688))   (as `te`)
 * Blocks with base * 1.5 > 448 (block amax above 2/3 of the tensor amax)
 * get a map-to-4 scale clamped to 448 before the cast: that candidate no
 * longer maps the block max to 4 (at base >= 448 both candidates are 0x7E),
 * but it stays a candidate and is kept when its error is lower. Other rules
 * as te-4over6 (te_4over6.h): RN only, 1x16 and 16x16, ties keep map-to-6.
 */
#include "recipes/te_4over6.h"

const nvfp4_recipe nvfp4_recipe_te_4over6_448 = {
    .info = TE_4OVER6_INFO("te-4over6-448",
                           "TE 4over6 (MAE) with the usual E4M3 bound 448 (nvfp4_4over6_e4m3_use_256=none)"),
    .core = {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_E4M3,
             .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE, .bscale_rule = NVFP4_CORE_BSCALE_4OVER6_MAE,
             .enc_rule = NVFP4_CORE_ENC_TE_RECIP, .special = NVFP4_CORE_SPECIAL_CUDA, .dequant_rule = NVFP4_CORE_DEQ_TE,
             .amax_nan_propagates = 0, .block_len = 16, .emax_elem = 2, .elem_max = 6.0f, .scale_lo = 0.0f,
             .pow2_scale_min = 0.0f},
};
