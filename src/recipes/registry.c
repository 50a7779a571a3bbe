/* registry.c - the list of named recipes (nvfp4_recipe_find and friends). */
#include <string.h>

#include "recipes/recipe.h"

static const nvfp4_recipe *const all_recipes[] = {
    &nvfp4_recipe_te,          &nvfp4_recipe_te_pyref,    &nvfp4_recipe_torchao,     &nvfp4_recipe_torchao_0_13_0_16,
    &nvfp4_recipe_modelopt,    &nvfp4_recipe_exact,       &nvfp4_recipe_mxfp4_floor, &nvfp4_recipe_mxfp4_rceil,
    &nvfp4_recipe_mxfp8,
    &nvfp4_recipe_torchao_1level, &nvfp4_recipe_mxfp4_ceil, &nvfp4_recipe_mxfp4_even, &nvfp4_recipe_mxfp8_floor, &nvfp4_recipe_ggml,
    &nvfp4_recipe_te_4over6,   &nvfp4_recipe_te_4over6_mse, &nvfp4_recipe_te_4over6_fast, &nvfp4_recipe_te_4over6_mse_fast,
    &nvfp4_recipe_te_rowscaled, &nvfp4_recipe_te_pow2,     &nvfp4_recipe_fast_math,
    &nvfp4_recipe_te_4over6_448, &nvfp4_recipe_compressed_tensors, &nvfp4_recipe_vllm, &nvfp4_recipe_flashinfer,
    &nvfp4_recipe_ggml_mxfp4, &nvfp4_recipe_mslk,      &nvfp4_recipe_te_ue5m3,   &nvfp4_recipe_te_ue5m3_1level,
    &nvfp4_recipe_flashinfer_pertoken, &nvfp4_recipe_fbgemm, &nvfp4_recipe_mslk_stacked, &nvfp4_recipe_compressed_tensors_bf16,
    &nvfp4_recipe_compressed_tensors_fp16,
};

size_t nvfp4_recipe_count(void) { return sizeof all_recipes / sizeof all_recipes[0]; }

const nvfp4_recipe *nvfp4_recipe_at(size_t i) { return i < nvfp4_recipe_count() ? all_recipes[i] : NULL; }

const nvfp4_recipe *nvfp4_recipe_find(const char *name)
{
    if (name == NULL) return &nvfp4_recipe_te;
    for (size_t i = 0; i < nvfp4_recipe_count(); i++)
        if (strcmp(all_recipes[i]->info.name, name) == 0) return all_recipes[i];
    return NULL;
}

const nvfp4_recipe_info *nvfp4_recipe_get_info(const nvfp4_recipe *r) { return r ? &r->info : NULL; }

const nvfp4_core_recipe *nvfp4_recipe_core(const nvfp4_recipe *r) { return r ? &r->core : NULL; }
