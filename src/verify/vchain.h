/*
 * vchain.h - the te recipe chain as the verifier needs it, and the known
 * wrong variants of it that kernels implement by mistake. Everything is
 * composed from src/core/recipe.h and the scalar codecs; no rounding rule
 * is written here (docs/semantics.md, "Scalar codecs"). Internal to src/verify and the tests.
 */
#ifndef NVFP4_VERIFY_VCHAIN_H
#define NVFP4_VERIFY_VCHAIN_H

#include "core/recipe.h"
#include "nvfp4/trace.h"
#include "recipes/recipe.h"

/* TransformerEngine's default (non-fast-math) path, docs/semantics.md, "Recipes":
 * the registry's own descriptor (src/recipes/te.c). */
static inline nvfp4_core_recipe nvfp4_vchain_te(void)
{
    return nvfp4_recipe_te.core;
}

/* te scaled value x * inv_b for scale byte s under global amax. */
static inline float nvfp4_vchain_te_scaled(float x, uint8_t s, float amax)
{
    nvfp4_core_recipe r = nvfp4_vchain_te();
    nvfp4_core_global g = nvfp4_core_global_from_amax(&r, amax);
    nvfp4_core_block b = nvfp4_core_block_prepare(&r, &g, s);
    return nvfp4_core_scaled(&r, &b, x);
}

/* The te block scale byte for a block amax. */
static inline uint8_t nvfp4_vchain_te_block_scale(float bamax, float amax)
{
    nvfp4_core_recipe r = nvfp4_vchain_te();
    nvfp4_core_global g = nvfp4_core_global_from_amax(&r, amax);
    return nvfp4_core_block_scale(&r, &g, bamax);
}

/* Wrong variant: (bamax / 6) * S_enc rounds twice (docs/semantics.md, "Recipes"). */
static inline uint8_t nvfp4_vchain_scale_div6_then_senc(float bamax, float amax)
{
    float s_enc = nvfp4_core_te_global_encode(amax);
    float t = bamax / 6.0f;
    return nvfp4_core_e4m3_encode(t * s_enc, 1);
}

/* Wrong variant: encode factor S_enc / s instead of 1 / (s * S_dec). */
static inline float nvfp4_vchain_factor_senc_over_s(uint8_t s, float amax)
{
    float s_enc = nvfp4_core_te_global_encode(amax);
    return nvfp4_core_fminf(s_enc / nvfp4_core_e4m3_decode(s), NVFP4_CORE_FLT_MAX);
}

/* E2M1 midpoints (exact ties): the trace's test, so that explain-block and
 * the verifier name the same elements ties. */
static inline int nvfp4_vchain_is_e2m1_tie(float y) { return nvfp4_trace_e2m1_is_tie(y); }

/* Distance of |y| to the nearest E2M1 midpoint in units of its ulp
 * (so 0 means an exact tie); large when far from every boundary. */
static inline float nvfp4_vchain_ulps_to_boundary(float y)
{
    float a = nvfp4_core_fabs(y), best = INFINITY;
    for (uint32_t k = 0; k < 7u; k++) {
        float mid = (nvfp4_core_e2m1_mag_value(k) + nvfp4_core_e2m1_mag_value(k + 1u)) * 0.5f;
        float ulp = nextafterf(mid, INFINITY) - mid;
        float d = fabsf(a - mid) / ulp;
        if (d < best) best = d;
    }
    return best;
}

#endif /* NVFP4_VERIFY_VCHAIN_H */
