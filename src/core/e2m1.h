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

/* Round-to-nearest-even magnitude for a = |x|, a not NaN: one IEEE
 * addition does the rounding. With m = min(a, 6), adding C = 2^22, 2^23 or
 * 2^24 for m < 2, 2 <= m < 4 and m >= 4 leaves in m + C a last place worth
 * 0.5, 1 or 2, which is E2M1's step in that binade, so fl(m + C) (RNE) is
 * m rounded to the E2M1 grid with ties to even grid points, and those are
 * the even codes (0, 1, 2, 4 and 0, 2, 4, 6 steps; the tie at 5 goes to 4 =
 * code 6). bits(fl(m + C)) - bits(C) counts the steps above C's binade
 * start, and the binade's first code (0, 2, 4) is added. The same as the
 * comparison ladder (a > 0.25) + (a >= 0.75) + (a > 1.25) + (a >= 1.75) +
 * (a > 2.5) + (a >= 3.5) + (a > 5) for every a, checked on all 2^32 fp32
 * inputs against NVIDIA's cuda_fp4.hpp (make check-long) and the ladder;
 * about a third of the instructions, with no branch. */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_rn_mag(float a)
{
    uint32_t m = nvfp4_core_f32_bits(a);
    m = m < 0x40C00000u ? m : 0x40C00000u;  /* min(a, 6); +Inf -> 6 */
    uint32_t e = m >> 23;                     /* biased exponent: <= 127 below 2 */
    uint32_t c = e <= 127u ? 0x4A800000u : (e == 128u ? 0x4B000000u : 0x4B800000u); /* 2^22, 2^23, 2^24 */
    uint32_t first = e <= 127u ? 0u : (e == 128u ? 2u : 4u);
    float sum = nvfp4_core_f32_from_bits(m) + nvfp4_core_f32_from_bits(c);
    return nvfp4_core_f32_bits(sum) - c + first;
}

/* Round-toward-zero magnitude, saturating at 6 as cuda_fp4.hpp does: the
 * number of grid points a has reached, a sum of comparisons rather than a
 * chain of early returns, so that it compiles to selects (on a GPU,
 * neighbouring lanes hold different magnitudes and a branch ladder
 * serializes the warp). */
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
    /* >= 6, +Inf (and NaN) saturate to 7; the rounding is computed on 0 for
     * them (frac8 needs a < 6) and discarded: selects, not a branch */
    int saturates = !(a < NVFP4_E2M1_MAX);
    float in_range = saturates ? 0.0f : a;
    uint32_t down = nvfp4_core_e2m1_rz_mag(in_range);
    uint32_t rounded = (nvfp4_core_e2m1_frac8(in_range) + (uint32_t)r >= 256u) ? down + 1u : down;
    return saturates ? 7u : rounded;
}

typedef enum { NVFP4_CORE_RN = 0, NVFP4_CORE_RZ = 1, NVFP4_CORE_SR = 2 } nvfp4_core_rounding;

/* fp32 -> E2M1 code (4 bits) with the cuda_fp4.hpp special values. */
NVFP4_HD static inline uint8_t nvfp4_core_e2m1_encode(float x, int mode, uint8_t rbits)
{
    uint32_t sign = (uint32_t)nvfp4_core_signbit(x) << 3;
    float a = nvfp4_core_fabs(x);
    uint32_t mag;
    if (mode == NVFP4_CORE_RZ) mag = nvfp4_core_e2m1_rz_mag(a);
    else if (mode == NVFP4_CORE_SR) mag = nvfp4_core_e2m1_sr_mag(a, rbits);
    else mag = nvfp4_core_e2m1_rn_mag(a);
    /* NaN: the code is chosen last, as a select (a NaN a makes every ladder
     * comparison false, harmlessly), so a GPU lane with a NaN element does
     * not branch away from its warp */
    return nvfp4_core_isnan(x) ? (uint8_t)NVFP4_E2M1_NAN_CODE : (uint8_t)(sign | mag);
}

#endif /* NVFP4_CORE_E2M1_H */
