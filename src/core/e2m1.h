/*
 * e2m1.h - FP4 E2M1 encode/decode: the only place where an fp32 value is
 * rounded to an E2M1 code.
 *
 * Reproduces NVIDIA's host conversion __nv_cvt_double_to_fp4 in
 * cuda_fp4.hpp (CUDA 13.0), which __nv_cvt_float_to_fp4 reaches by exact
 * widening: satfinite, the sign is always kept (-0.0 and negative values
 * that round to zero give 0x8), |x| > 6 and +-Inf give +-6, NaN gives +6
 * (0x7). The RN boundaries below are that routine's RNE boundaries written
 * as comparisons (ties go to the even codes 0, 2, 4, 6).
 * Code layout: s ee m, exponent bias 1; element 2j is the low nibble of
 * byte j when packed (docs/semantics.md, "Scalar codecs").
 */
#ifndef NVFP4_CORE_E2M1_H
#define NVFP4_CORE_E2M1_H

#include "nvfp4_core.h"

#define NVFP4_E2M1_MAX 6.0f
#define NVFP4_E2M1_NAN_CODE 0x7u

/* Magnitude codes 0..7 decode to these values. */
NVFP4_HD static inline float nvfp4_core_e2m1_mag_value(uint32_t mag)
{
    /* 0, 0.5, 1, 1.5, 2, 3, 4, 6 without a table (device friendly) and
     * without a branch (a select: lanes of a GPU warp decode different
     * codes). Every operation is exact. */
    uint32_t e = (mag >> 1) & 3u, m = mag & 1u;
    float sub = 0.5f * (float)m;
    float nrm = nvfp4_core_exp2i((int)e - 1) * (1.0f + sub);
    return e == 0 ? sub : nrm;
}

NVFP4_HD static inline float nvfp4_core_e2m1_decode(uint8_t code)
{
    float v = nvfp4_core_e2m1_mag_value(code & 7u);
    return (code & 8u) ? -v : v;
}

/* Magnitude ladders: the code is the number of thresholds a has passed.
 * Written as a sum of comparisons, not as a chain of early returns, so that
 * it compiles to selects rather than branches (on a GPU, neighbouring lanes
 * hold different magnitudes and a branch ladder serializes the warp); the
 * result is the same for every a, the thresholds being increasing. */

/* Round-to-nearest-even magnitude for a = |x|, a not NaN: ties (0.25, 0.75,
 * ..., 5) go to the even codes, hence <= on the even-to-odd thresholds. */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_rn_mag(float a)
{
    return (uint32_t)(a > 0.25f) + (uint32_t)(a >= 0.75f) + (uint32_t)(a > 1.25f) + (uint32_t)(a >= 1.75f) +
           (uint32_t)(a > 2.5f) + (uint32_t)(a >= 3.5f) + (uint32_t)(a > 5.0f);
}

/* Round-toward-zero magnitude, saturating at 6 as cuda_fp4.hpp does. */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_rz_mag(float a)
{
    return (uint32_t)(a >= 0.5f) + (uint32_t)(a >= 1.0f) + (uint32_t)(a >= 1.5f) + (uint32_t)(a >= 2.0f) +
           (uint32_t)(a >= 3.0f) + (uint32_t)(a >= 4.0f) + (uint32_t)(a >= 6.0f);
}

/* Width of the E2M1 step that contains a (a < 6): 0.5 below 2, 1 below 4,
 * 2 above. */
NVFP4_HD static inline float nvfp4_core_e2m1_step(float a)
{
    return a >= 4.0f ? 2.0f : (a >= 2.0f ? 1.0f : 0.5f);
}

/* floor(256 * frac) where frac is the position of a inside its E2M1 step:
 * the 8 bits that stochastic rounding compares against. Every operation is
 * exact in fp32 for a < 6: a - lo is exact by Sterbenz (lo >= a/2) or
 * because lo = 0, and scaling by 256/step is a power-of-two scaling. */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_frac8(float a)
{
    /* lo = a rounded toward zero onto the grid; 256/step is a power of two,
     * so multiplying by it is exact and needs no division (which costs a
     * full-precision divide per element on a GPU). */
    float lo = nvfp4_core_e2m1_mag_value(nvfp4_core_e2m1_rz_mag(a));
    float per_step = a >= 4.0f ? 128.0f : (a >= 2.0f ? 256.0f : 512.0f);
    return (uint32_t)floorf((a - lo) * per_step);
}

/* Stochastic rounding with 8 random bits r (docs/semantics.md, "Scalar codecs"): round away from
 * zero iff floor(256*frac) + r >= 256; saturate at 6. This is the carry rule
 * of PTX cvt.rs (LLVM NVPTX docs) in exact integer form; it differs from
 * TransformerEngine's fmaf software fallback
 * (transformer_engine/common/util/ptx.cuh, stochastic_round_fp4_e2m1) only for
 * |y| < 0.25 just below multiples of 2^-9 (docs/semantics.md, "E2M1 (FP4)"). */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_sr_mag(float a, uint8_t r)
{
    if (!(a < NVFP4_E2M1_MAX)) return 7; /* >= 6 and +Inf saturate */
    uint32_t down = nvfp4_core_e2m1_rz_mag(a);
    return (nvfp4_core_e2m1_frac8(a) + (uint32_t)r >= 256u) ? down + 1u : down;
}

typedef enum { NVFP4_CORE_RN = 0, NVFP4_CORE_RZ = 1, NVFP4_CORE_SR = 2 } nvfp4_core_rounding;

/* fp32 -> E2M1 code (4 bits) with the cuda_fp4.hpp special values. */
NVFP4_HD static inline uint8_t nvfp4_core_e2m1_encode(float x, int mode, uint8_t rbits)
{
    if (nvfp4_core_isnan(x)) return (uint8_t)NVFP4_E2M1_NAN_CODE;
    uint32_t sign = (uint32_t)nvfp4_core_signbit(x) << 3;
    float a = nvfp4_core_fabs(x);
    uint32_t mag;
    if (mode == NVFP4_CORE_RZ) mag = nvfp4_core_e2m1_rz_mag(a);
    else if (mode == NVFP4_CORE_SR) mag = nvfp4_core_e2m1_sr_mag(a, rbits);
    else mag = nvfp4_core_e2m1_rn_mag(a);
    return (uint8_t)(sign | mag);
}

#endif /* NVFP4_CORE_E2M1_H */
