/*
 * e4m3.h - FP8 E4M3 ("e4m3fn") encode/decode: the only place where an fp32
 * value is rounded to E4M3 (NVFP4 block scales, MXFP8 elements).
 *
 * Reproduces NVIDIA's host conversion __nv_cvt_double_to_fp8 in
 * cuda_fp8.hpp (CUDA 13.0) reached through __nv_cvt_float_to_fp8 with
 * __NV_E4M3: round to nearest even everywhere (subnormals too); |x| <= 2^-10
 * gives a signed zero (2^-10 itself is a tie to 0); NaN gives 0x7F whatever
 * its sign; |x| > 464 (including +-Inf) gives +-448 (0x7E|s) with
 * __NV_SATFINITE and 0x7F|s (NaN) with __NV_NOSAT; 464 itself rounds to 448.
 * TransformerEngine's block-scale cast static_cast<__nv_fp8_e4m3>(float) is
 * the satfinite variant.
 */
#ifndef NVFP4_CORE_E4M3_H
#define NVFP4_CORE_E4M3_H

#include "nvfp4_core.h"

#define NVFP4_E4M3_MAX 448.0f

NVFP4_HD static inline uint8_t nvfp4_core_e4m3_encode(float x, int saturate)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint32_t sign = (u >> 24) & 0x80u;
    uint32_t au = u & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0x7Fu;                          /* NaN */
    if (au > 0x43E80000u) return (uint8_t)(sign | (saturate ? 0x7Eu : 0x7Fu)); /* > 464 */
    if (au <= 0x3A800000u) return (uint8_t)sign;                 /* <= 2^-10 */
    int e = (int)(au >> 23) - 127;                               /* -10 .. 8 */
    uint32_t sig = (au & 0x7FFFFFu) | 0x800000u;
    uint32_t code;
    if (e >= -6) {
        /* normal: keep 3 mantissa bits; a carry out of the mantissa moves
         * to the next binade by itself. */
        code = ((uint32_t)(e + 7) << 3) + nvfp4_core_shift_rne(sig, 20) - 8u;
    } else {
        /* subnormal: units of 2^-9, value = sig * 2^(e-14). */
        code = nvfp4_core_shift_rne(sig, (unsigned)(14 - e));
    }
    return (uint8_t)(sign | code);
}

NVFP4_HD static inline float nvfp4_core_e4m3_decode(uint8_t code)
{
    uint32_t e = (code >> 3) & 0xFu, m = code & 7u;
    float v;
    if ((code & 0x7Fu) == 0x7Fu) return nvfp4_core_f32_from_bits(0x7FC00000u | ((uint32_t)(code & 0x80u) << 24));
    if (e == 0) v = (float)m * nvfp4_core_exp2i(-9);
    else v = nvfp4_core_exp2i((int)e - 7) * (1.0f + 0.125f * (float)m);
    return (code & 0x80u) ? -v : v;
}

/* nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1)), the satfinite
 * round trip, computed in the float domain so that a loop over it
 * vectorizes (the lab's FP8 fake quantizer): the same bits for every one of
 * the 2^32 inputs (tests/long_e4m3_round.c; a sample in check_formats.c).
 * Normal results (|x| >= 2^-6): round to nearest even at 3 mantissa bits in
 * the integer image, a carry moving to the next binade by itself; smaller
 * ones: round to nearest even at a multiple of 2^-9, by adding and removing
 * 1.5 * 2^14 (the sum's unit in the last place is 2^-9; needs the default
 * rounding mode and no contraction, as all golden-path code); then the
 * saturation at 448 (inputs above 464, and infinities, round past it); NaN
 * gives the decoder's +NaN. */
NVFP4_HD static inline float nvfp4_core_e4m3_round_sat(float x)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint32_t sign = u & 0x80000000u, au = u & 0x7FFFFFFFu;
    float a = nvfp4_core_f32_from_bits(au);
    uint32_t normal = (au + 0x7FFFFu + ((au >> 20) & 1u)) & 0xFFF00000u;
    uint32_t sub = nvfp4_core_f32_bits((a + 24576.0f) - 24576.0f);
    /* Branch-free: the two candidates are combined by a mask, the
     * saturation compares bit patterns (for non-negative floats up to +Inf
     * their order is the values'; 448 is 0x43E00000), and NaN takes the
     * canonical pattern by a mask too. With plain selects GCC moved the
     * float addition into a branch, which it may not then
     * execute speculatively (-ftrapping-math): the lab's FP8 loop stayed
     * scalar. */
    uint32_t is_sub = 0u - (uint32_t)(au < 0x3C800000u); /* 2^-6 */
    uint32_t v = (sub & is_sub) | (normal & ~is_sub);
    v = v > 0x43E00000u ? 0x43E00000u : v;
    uint32_t is_nan = 0u - (uint32_t)(au > 0x7F800000u);
    return nvfp4_core_f32_from_bits((0x7FC00000u & is_nan) | ((v | sign) & ~is_nan));
}

#endif /* NVFP4_CORE_E4M3_H */
