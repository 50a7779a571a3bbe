/*
 * te_4over6_mse.c - recipe `te-4over6-mse`: 4over6 with the MSE criterion (err_mode "MSE").
 * Rules and provenance: te_4over6.h (NVIDIA/TransformerEngine d0067d0d
 * common/cast/nvfp4/quantize_4over6_nvfp4.cuh, pytorch/custom_recipes/reference_nvfp4.py).
 */
#include "recipes/te_4over6.h"

const nvfp4_recipe nvfp4_recipe_te_4over6_mse = {
    .info = TE_4OVER6_INFO("te-4over6-mse", "TE 4over6 with the MSE criterion (err_mode MSE)"),
    .core = TE_4OVER6_CORE(NVFP4_CORE_BSCALE_4OVER6_MSE),
};
