/* amax.c - global amax of fp32 and bf16 tensors (fmaxf semantics: NaN
 * elements are ignored, Inf counts). Max is exact and order-free, so the
 * OpenMP split cannot change the result. */
#include "nvfp4/quant.h"

#include "core/bf16.h"
#include "core/recipe.h"

#define AMAX_PARALLEL_MIN 65536

float nvfp4_amax_f32(const float *x, size_t n)
{
    float m = 0.0f;
#pragma omp parallel for reduction(max : m) schedule(static) if (n >= AMAX_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) m = nvfp4_core_amax_step(m, x[i], 0);
    return m;
}

float nvfp4_amax_bf16(const uint16_t *x, size_t n)
{
    float m = 0.0f;
#pragma omp parallel for reduction(max : m) schedule(static) if (n >= AMAX_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) m = nvfp4_core_amax_step(m, nvfp4_core_bf16_decode(x[i]), 0);
    return m;
}
