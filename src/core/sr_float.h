/*
 * sr_float.h - proportional stochastic rounding of an fp32 value to a
 * binary floating-point format with p significand bits (implicit bit
 * included), minimum normal exponent emin and largest finite value max_finite
 * (subnormals kept): the only place where the studies round to fp16 / bf16 /
 * E4M3 / E5M2 stochastically (CPFloat's CPFLOAT_RND_SP; Connolly, Higham,
 * Mary 2021).
 *
 * With q the spacing of the format at |x| and lo = |x| truncated to a
 * multiple of q, the result is lo + q with probability (|x| - lo) / q, decided
 * by one 32-bit random word r: up iff r < frac * 2^32. Every step is exact in
 * fp32/double, so the rule is bit-reproducible. Results above max_finite
 * saturate to it when `saturate`, else become Inf.
 */
#ifndef NVFP4_CORE_SR_FLOAT_H
#define NVFP4_CORE_SR_FLOAT_H

#include "nvfp4_core.h"

NVFP4_HD static inline float nvfp4_core_sr_pbits(float x, int p, int emin, float max_finite, int saturate,
                                                 uint32_t r)
{
    if (nvfp4_core_isnan(x)) return x;
    float a = nvfp4_core_fabs(x);
    if (a == 0.0f) return x;
    float res;
    if (!(a <= max_finite * 2.0f) && !saturate) {
        res = nvfp4_core_f32_from_bits(0x7F800000u);
    } else {
        int e;
        uint32_t au = nvfp4_core_f32_bits(a);
        if (au >= 0x7F800000u) { /* Inf */
            res = saturate ? max_finite : a;
        } else {
            e = (int)(au >> 23) - 127;
            if ((au >> 23) == 0) e = -127; /* fp32 subnormal: below every emin we use */
            int qe = (e > emin ? e : emin) - (p - 1);
            float q = nvfp4_core_exp2i(qe);
            float lo = floorf(a / q) * q;
            float frac = (a - lo) / q;
            int up = (double)r < (double)frac * 4294967296.0;
            res = up ? lo + q : lo;
            if (res > max_finite) res = saturate ? max_finite : nvfp4_core_f32_from_bits(0x7F800000u);
        }
    }
    return nvfp4_core_signbit(x) ? -res : res;
}

#endif /* NVFP4_CORE_SR_FLOAT_H */
