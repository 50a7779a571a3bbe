/*
 * te_4over6.c - recipe `te-4over6`: 4over6 with the MAE criterion (TE default, NVTE_NVFP4_4OVER6_ERR_MODE=MAE).
 * Rules and provenance: te_4over6.h (NVIDIA/TransformerEngine d0067d0d
 * common/cast/nvfp4/quantize_4over6_nvfp4.cuh, pytorch/custom_recipes/reference_nvfp4.py).
 */
#include "recipes/te_4over6.h"

const nvfp4_recipe nvfp4_recipe_te_4over6 = {
    .info = TE_4OVER6_INFO("te-4over6", "TE 4over6: map-to-4 or map-to-6 scale per block, lower MAE kept (E4M3 bound 256)"),
    .core = TE_4OVER6_CORE(NVFP4_CORE_BSCALE_4OVER6_MAE),
};
