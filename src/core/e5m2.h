/*
 * e5m2.h - FP8 E5M2 encode/decode (round to nearest even): the only place
 * where an fp32 value is rounded to E5M2 (used by the arithmetic studies).
 *
 * Follows cuda_fp8.hpp (CUDA 13.0) __nv_cvt_float_to_fp8 with __NV_E5M2:
 * RNE everywhere (subnormals in units of 2^-16), |x| <= 2^-17 gives a signed
 * zero (2^-17 is a tie to 0); with saturate, values above 57344 that would
 * round past it (|x| >= 61440) and +-Inf give +-57344 (0x7B|s); without,
 * they give +-Inf (0x7C|s). NaN gives 0x7F.
 */
#ifndef NVFP4_CORE_E5M2_H
#define NVFP4_CORE_E5M2_H

#include "nvfp4_core.h"

#define NVFP4_E5M2_MAX 57344.0f

NVFP4_HD static inline uint8_t nvfp4_core_e5m2_encode(float x, int saturate)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t au = u & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0x7Fu;                              /* NaN */
    if (au >= 0x47700000u) return (uint8_t)(sign | (saturate ? 0x7Bu : 0x7Cu)); /* >= 61440, Inf */
    if (au <= 0x37000000u) return (uint8_t)sign;                     /* <= 2^-17 */
    int e = (int)(au >> 23) - 127;                                   /* -17 .. 15 */
    uint32_t sig = (au & 0x7FFFFFu) | 0x800000u;
    uint32_t code;
    if (e >= -14) code = ((uint32_t)(e + 15) << 2) + nvfp4_core_shift_rne(sig, 21) - 4u;
    else code = nvfp4_core_shift_rne(sig, (unsigned)(7 - e));       /* units of 2^-16 */
    return (uint8_t)(sign | code);
}

NVFP4_HD static inline float nvfp4_core_e5m2_decode(uint8_t code)
{
    uint32_t e = (code >> 2) & 0x1Fu, m = code & 3u;
    uint32_t sign = (uint32_t)(code & 0x80u) << 24;
    if (e == 0x1Fu) return nvfp4_core_f32_from_bits(sign | 0x7F800000u | (m << 21));
    float v = (e == 0) ? (float)m * nvfp4_core_exp2i(-16) : nvfp4_core_exp2i((int)e - 15) * (1.0f + 0.25f * (float)m);
    return sign ? -v : v;
}

#endif /* NVFP4_CORE_E5M2_H */
