/*
 * te_rowscaled.c - recipe `te-rowscaled`: TransformerEngine's row-scaled
 * NVFP4 (row_scaled_nvfp4: one global amax per row instead of one per
 * tensor), NVIDIA/TransformerEngine commit d0067d0d:
 * transformer_engine/common/cast/nvfp4/specialized/quantize_transpose_nvfp4_tuned_1D.cuh
 * (rowwise_scaling / colwise_scaling with ROW_SCALED_NVFP4: S_enc of
 * amax_rowwise[row], of amax_colwise[col] for the transpose),
 * dequantize_nvfp4.cuh (tensor_amax[y]) and the Python reference
 * pytorch/custom_recipes/reference_nvfp4.py (row_scaled_nvfp4: global_amax_row
 * = torch.max(|x|, dim=1), global_amax_col the same of the transpose);
 * docs/semantics.md, "Recipes".
 *
 *   a_i   = max_j |x_ij| over stored row i       (columnwise: over an original column)
 *   S_enc = fminf(2688/a_i, FLT_MAX), 1 if a_i == 0 or S_enc == 0; S_dec = 1/S_enc
 *   s, q  = the `te` chain with that row's S_enc
 *   deq   = fp4(q) * (((float)s * a_i) * fl(1/2688))
 * Every stored row carries its own amax (nvfp4_qtensor.row_amax, bundle
 * component `amax` of shape [rows]). Amaxes use fmaxf (NaN ignored) as
 * `te`; the Python reference's torch.max propagates a NaN into its row.
 * 1x16 blocks only (TE: row-scaled NVFP4 does not support 2D quantization).
 */
#include "recipes/recipe.h"

const nvfp4_recipe nvfp4_recipe_te_rowscaled = {
    .info = {.name = "te-rowscaled",
             .summary = "TE row-scaled NVFP4: the te chain with one global amax per stored row",
             .provenance = "NVIDIA/TransformerEngine d0067d0d common/cast/nvfp4/specialized/"
                           "quantize_transpose_nvfp4_tuned_1D.cuh",
             .elem = NVFP4_ELEM_E2M1,
             .scale_format = NVFP4_SCALEFMT_E4M3,
             .default_block = NVFP4_BLOCK_1X16,
             .has_global_amax = true,
             .supports_sr = true},
    .core = NVFP4_RECIPE_ROWSCALED_CORE(NVFP4_CORE_DEQ_TE),
};
