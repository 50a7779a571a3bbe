/* quant_rht.c - RHT-16 on the columnwise (Wgrad) operand before it is
 * quantized: in TE's storage the columnwise tensor is X^T, and the transform
 * mixes 16 consecutive elements of each of its rows, i.e. 16 consecutive
 * original rows (tokens) of one column, exactly the 1x16 quantization block
 * (nvfp4-semantics.md 4). */
#include "quant_rht.h"

#include "core/hadamard.h"

nvfp4_status nvfp4_quant_rht_rows(const nvfp4_quant_opts *o, float *b, size_t rows, size_t cols, nvfp4_error *err)
{
    uint32_t mask[4];
    if (cols % 16 != 0)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "RHT-16: row length %zu is not a multiple of 16", cols);
    switch (o->rht_signs) {
    case NVFP4_RHT_SIGNS_TE: nvfp4_core_rht_mask_te(mask); break;
    case NVFP4_RHT_SIGNS_SEEDED: nvfp4_core_rht_mask_seeded(o->rht_sign_seed, mask); break;
    default: nvfp4_core_rht_mask_none(mask); break;
    }
    int round_bf16 = !o->rht_fp32;
    size_t groups = rows * (cols / 16);
#pragma omp parallel for schedule(static) if (groups >= 2048)
    for (size_t g = 0; g < groups; g++) nvfp4_core_rht_forward_group(b + g * 16, b + g * 16, 16u, mask, round_bf16);
    return NVFP4_OK;
}
