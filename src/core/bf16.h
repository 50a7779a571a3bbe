/*
 * bf16.h - bfloat16 and IEEE binary16 round-to-nearest-even conversions: the
 * only place where fp32 is narrowed to a 16-bit float (RHT output, studies).
 *
 * bf16 reproduces cuda_bf16.hpp __float2bfloat16_rn (and PyTorch's
 * c10::BFloat16 round_to_nearest_even for non-NaN inputs): RNE on the low
 * 16 bits, overflow to +-Inf. fp16 reproduces cuda_fp16.hpp __float2half_rn:
 * RNE including the subnormal range, overflow to +-Inf.
 * Every NaN, whatever its sign and payload, gives the canonical NaN 0x7FFF
 * in both formats: that is what NVIDIA's host code returns
 * (__internal_float2bfloat16, __internal_float2half) and what PTX
 * cvt.rn.{bf16,f16}.f32 produces on the device. (PyTorch's c10::BFloat16
 * returns 0x7FC0 instead.)
 */
#ifndef NVFP4_CORE_BF16_H
#define NVFP4_CORE_BF16_H

#include "nvfp4_core.h"

NVFP4_HD static inline uint16_t nvfp4_core_bf16_encode(float x)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFFu; /* canonical NaN */
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7FFFu + lsb) >> 16);
}

NVFP4_HD static inline float nvfp4_core_bf16_decode(uint16_t h)
{
    return nvfp4_core_f32_from_bits((uint32_t)h << 16);
}

/* fp32 rounded to the nearest bf16 value and widened back:
 * nvfp4_core_bf16_decode(nvfp4_core_bf16_encode(x)), written with a select
 * instead of the early return so that loops over it vectorize (the lab
 * rounds every operand and activation of its BF16 layers with it;
 * check_formats compares the two). */
NVFP4_HD static inline float nvfp4_core_round_bf16(float x)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    return nvfp4_core_f32_from_bits((u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFF0000u : r);
}

NVFP4_HD static inline uint16_t nvfp4_core_fp16_encode(float x)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t au = u & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0x7FFFu;                        /* canonical NaN */
    if (au >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);    /* >= 65520: Inf */
    int e = (int)(au >> 23) - 127;
    uint32_t sig = (au & 0x7FFFFFu) | 0x800000u;
    if (e >= -14) {
        uint32_t h = ((uint32_t)(e + 15) << 10) + nvfp4_core_shift_rne(sig, 13) - 0x400u;
        return (uint16_t)(sign | h);
    }
    if (e < -25) return sign;                                     /* < 2^-25: rounds to 0 */
    /* subnormal: units of 2^-24, value = sig * 2^(e-23+24) */
    return (uint16_t)(sign | nvfp4_core_shift_rne(sig, (unsigned)(-1 - e)));
}

NVFP4_HD static inline float nvfp4_core_fp16_decode(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return nvfp4_core_f32_from_bits(sign | 0x7F800000u | (m << 13));
    if (e == 0) {
        float v = (float)m * nvfp4_core_exp2i(-24);
        return (h & 0x8000u) ? -v : v;
    }
    return nvfp4_core_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

/* fp32 rounded to the nearest fp16 value and widened back. */
NVFP4_HD static inline float nvfp4_core_round_fp16(float x)
{
    return nvfp4_core_fp16_decode(nvfp4_core_fp16_encode(x));
}

#endif /* NVFP4_CORE_BF16_H */
