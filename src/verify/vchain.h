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

/* ---- chain inference (src/verify/chain.c, docs/verify.md "identify") -------------------
 * A kernel's chain: a base recipe plus at most one catalogued deviation per
 * step. The search goes step by step (coordinate descent over the steps, each
 * step's candidates tried with the other steps fixed, until a pass changes
 * nothing), so it costs a few passes over the catalog, not the product of its
 * steps. The pass that changes nothing is also the per-step test: a step is
 * proven when, with the other steps as inferred, every other candidate for it
 * gives different bytes (the deciding element of the nearest one is cited). */

#include "nvfp4/verify.h"

#define NVFP4_CHAIN_NSTEPS 8
#define NVFP4_CHAIN_MAX_ALTS 8

typedef enum {
    NVFP4_CHAIN_PROVEN = 0,     /* exact chain, every other candidate of the step excluded */
    NVFP4_CHAIN_AMBIGUOUS,      /* exact chain, other candidates give the same bytes */
    NVFP4_CHAIN_BEST_FIT,       /* the chain is not exact: the step's best candidate, nothing proven */
    NVFP4_CHAIN_NOT_EXPLAINED   /* no candidate of the step explains these elements */
} nvfp4_chain_status;

typedef struct {
    const char *step;                    /* global-scale, block-scale, ... (nvfp4_mutant_step_id) */
    const nvfp4_mutant_info *chosen;     /* NULL: the base recipe's own rule */
    nvfp4_chain_status status;
    size_t n_candidates;                 /* catalogued alternatives fitted (besides the recipe's rule) */
    /* what the final pass compared the chosen rule with (the status's scope): the rules of
     * this step of the other registered recipes (distinct formulas only) and the catalogued
     * mutants of this step of any base, each with the other steps as inferred */
    size_t n_recipe_rules, n_mutants;
    char alts[NVFP4_CHAIN_MAX_ALTS][64]; /* same bytes as chosen: a mutant, "R's rule", "" the recipe's rule */
    size_t n_alts;
    char rule_recipes[160];              /* chosen NULL: the recipes whose rule of this step is the base's */
    char evidence[512];
} nvfp4_chain_step;

/* A step's rule as a formula, comparable across bases: the chosen mutant, or the base recipe's
 * fields of that step (steps with no fields of their own: the same for every base). */
bool nvfp4_chain_same_rule(const nvfp4_chain_step *a, const nvfp4_core_recipe *base_a, const nvfp4_chain_step *b,
                           const nvfp4_core_recipe *base_b);

typedef struct {
    char base[64];                       /* "te rn 1x16" */
    nvfp4_chain_step steps[NVFP4_CHAIN_NSTEPS];
    size_t n_steps;                      /* steps with at least one candidate */
    bool exact;
    size_t data_mismatch, scale_mismatch, data_total, scale_total;
    size_t evaluations;                  /* chains quantized */
    nvfp4_core_recipe core;              /* the base recipe's descriptor */
} nvfp4_chain_result;

/* Infers the chain of the kernel output `actual` (data and/or scale, scale_swizzled, amax of one
 * orientation) from input x (rows x cols fp32) and a base variant's options (recipe, rounding,
 * block, RHT; rowwise or columnwise as colwise). 0, or -1 out of memory. */
int nvfp4_chain_infer(const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base, const char *base_name,
                      bool colwise, const nvfp4_vview *actual, nvfp4_chain_result *res);
const char *nvfp4_chain_status_name(nvfp4_chain_status s);
/* The number of deviations (steps whose rule is not the recipe's). */
size_t nvfp4_chain_deviations(const nvfp4_chain_result *r);

#endif /* NVFP4_VERIFY_VCHAIN_H */
