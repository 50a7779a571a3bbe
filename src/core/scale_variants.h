/*
 * scale_variants.h - block-scale rules that no public recipe uses but the
 * error-accumulation studies compare with the recipes' (docs/studies.md,
 * "scale rule"): TE's E4M3 block scale rounded up instead of to nearest, and
 * the unrounded fp32 scale. They sit here, beside the recipes' rules in
 * recipe.h, so that every rounding of a scale still lives in src/core/.
 *
 * Plain C11 that nvcc compiles as CUDA C++, like the rest of src/core/.
 */
#ifndef NVFP4_CORE_SCALE_VARIANTS_H
#define NVFP4_CORE_SCALE_VARIANTS_H

#include "nvfp4_core.h"
#include "e4m3.h"
#include "recipe.h"

/* The E4M3 code of the smallest E4M3 value >= v, for v >= 0: the RN code,
 * moved one code up when it rounded down; 448 (0x7E) stays, as a satfinite
 * cast would give it. NaN gives 0x7F. */
NVFP4_HD static inline uint8_t nvfp4_core_e4m3_encode_up(float v)
{
    uint8_t code = nvfp4_core_e4m3_encode(v, 1);
    if (code < 0x7Eu && nvfp4_core_e4m3_decode(code) < v) code = (uint8_t)(code + 1u);
    return code;
}

/* TE's block scale (NVFP4_CORE_BSCALE_TE_MUL: bamax * (S_enc * fl(1/6)))
 * rounded up to E4M3, so that a block's largest element never scales past
 * 6 and SR never clips it (study scale rule e4m3-up). The encode factor
 * and the dequantization scale of the byte are TE's (nvfp4_core_block_prepare
 * and nvfp4_core_dequant_scale with NVFP4_CORE_CHAIN_TE). */
NVFP4_HD static inline uint8_t nvfp4_core_te_block_scale_up(const nvfp4_core_global *g, float bamax)
{
    float m = g->s_enc * NVFP4_CORE_INV6;
    return nvfp4_core_e4m3_encode_up(bamax * m);
}

/* The exact fp32 scale bamax/6, no scale rounding at all (study scale rule
 * fp32-scale): elements are multiplied by *enc = 6/bamax and codes by
 * *dec = bamax/6; a block whose amax is not positive (all zero, or NaN)
 * takes 1 and 1. */
NVFP4_HD static inline void nvfp4_core_f32_block_scale(float bamax, float *enc, float *dec)
{
    *enc = 1.0f;
    *dec = 1.0f;
    if (bamax > 0.0f) {
        *dec = bamax / 6.0f;
        *enc = 6.0f / bamax;
    }
}

#endif /* NVFP4_CORE_SCALE_VARIANTS_H */
