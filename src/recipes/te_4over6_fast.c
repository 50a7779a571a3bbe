/*
 * te_4over6_fast.c - recipe `te-4over6-fast`: 4over6, MAE measured in the fp16 scaled domain
 * (nvfp4_4over6_err_use_fast_math: |fp4(q)*s - x*S_enc|, the kernel's
 * accumulate_fp16_scaled_error_pair); the bytes differ from `te-4over6`
 * wherever the two measures rank the candidates differently.
 * Rules and provenance: te_4over6.h (NVIDIA/TransformerEngine d0067d0d
 * common/cast/nvfp4/quantize_4over6_nvfp4.cuh, pytorch/custom_recipes/reference_nvfp4.py).
 */
#include "recipes/te_4over6.h"

const nvfp4_recipe nvfp4_recipe_te_4over6_fast = {
    .info = TE_4OVER6_INFO("te-4over6-fast", "TE 4over6, MAE in the fp16 scaled domain (err_use_fast_math)"),
    .core = TE_4OVER6_CORE(NVFP4_CORE_BSCALE_4OVER6_MAE_FP16),
};
