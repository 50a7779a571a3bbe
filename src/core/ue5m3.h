/*
 * ue5m3.h - UE5M3 (unsigned, 5 exponent bits, 3 mantissa bits) encode and
 * decode: the only place where an fp32 value is rounded to UE5M3, the
 * prototype NVFP4 block-scale format. Nothing else here.
 *
 * The grid (settled from three public sources that agree):
 *   code = eeeeemmm, bias 15, no sign bit; e = 0: m * 2^-17 (subnormal);
 *   e = 1..31: 2^(e-15) * (1 + m/8); 0xFF is NaN (the only one); no infinity.
 *   Largest finite 0xFE = 1.75 * 2^16 = 114688; smallest subnormal 2^-17;
 *   smallest normal 2^-14.
 * Sources: NVIDIA/TransformerEngine commit db0957bb05a92cf21ea11bba2c1cab2b5c9d5f43
 * (the UE5M3 prototype branch, PR #3325) transformer_engine/common/common.h
 * (TypeExtrema<fp8ue5m3>::max = 114688.f, fp8ue5m3 = __nv_fp8_ue5m3 of CUDA
 * 13.4); CUDA 13.4 Math API, struct __nv_fp8_ue5m3 ("no sign, 5 exponent,
 * 1 implicit and 3 explicit mantissa bits ... doesn't support Infinity. NaNs
 * are limited to 0xFF values"; its float constructor is __NV_SATFINITE with
 * cudaRoundNearest); ml_dtypes 0.7.0 float8_e5m3fnu (same grid).
 *
 * Two conversions, both round to nearest even (subnormals too):
 *   satfinite (NVFP4_CORE_UE5M3_SATFINITE, the __nv_fp8_ue5m3(float)
 *     constructor TE's block-scale cast uses): every x > 114688 and +Inf
 *     give 0xFE; NaN gives 0xFF; x <= 2^-18 gives 0x00 (2^-18, half the
 *     smallest subnormal, is a tie to the even 0). Negative inputs (and
 *     -Inf) give 0x00: clamped to the format's range. That last rule is an
 *     assumption (the CUDA 13.4 header body was not available to us); TE
 *     never passes a negative value (block amax times a positive scale).
 *   ml_dtypes (NVFP4_CORE_UE5M3_ML_DTYPES, numpy astype(float8_e5m3fnu)):
 *     no saturation: x > 118784 (halfway to the missing 1.875 * 2^16) and
 *     +-Inf give 0xFF, 118784 itself ties to 0xFE; every negative nonzero
 *     value gives 0xFF; -0 gives 0x00; NaN 0xFF.
 */
#ifndef NVFP4_CORE_UE5M3_H
#define NVFP4_CORE_UE5M3_H

#include "nvfp4_core.h"

#define NVFP4_UE5M3_MAX 114688.0f
#define NVFP4_UE5M3_NAN_CODE 0xFFu

enum { NVFP4_CORE_UE5M3_SATFINITE = 0, NVFP4_CORE_UE5M3_ML_DTYPES = 1 };

/* Round a finite positive magnitude (fp32 bits au, 2^-18 < au <= 118784)
 * to the nearest code, ties to even; 118784 gives 0xFE. */
NVFP4_HD static inline uint8_t nvfp4_core_ue5m3_round_mag(uint32_t au)
{
    int e = (int)(au >> 23) - 127; /* -18 .. 16 */
    uint32_t sig = (au & 0x7FFFFFu) | 0x800000u;
    if (e >= -14) /* normal: 3 mantissa bits; a carry moves to the next binade */
        return (uint8_t)(((uint32_t)(e + 15) << 3) + nvfp4_core_shift_rne(sig, 20) - 8u);
    /* subnormal: units of 2^-17, value = sig * 2^(e-23) = (sig >> (6-e)) units */
    return (uint8_t)nvfp4_core_shift_rne(sig, (unsigned)(6 - e));
}

NVFP4_HD static inline uint8_t nvfp4_core_ue5m3_encode(float x, int mode)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    uint32_t au = u & 0x7FFFFFFFu;
    int ml = mode == NVFP4_CORE_UE5M3_ML_DTYPES;
    if (au > 0x7F800000u) return (uint8_t)NVFP4_UE5M3_NAN_CODE;  /* NaN */
    if (au == 0u) return 0x00u;                                  /* +-0 */
    if (u >> 31) return ml ? (uint8_t)NVFP4_UE5M3_NAN_CODE : 0x00u; /* negative (and -Inf) */
    if (ml) {
        if (au > 0x47E80000u) return (uint8_t)NVFP4_UE5M3_NAN_CODE; /* > 118784, +Inf */
    } else if (au > 0x47E00000u) {
        return 0xFEu; /* > 114688, +Inf: satfinite */
    }
    if (au <= 0x36800000u) return 0x00u; /* <= 2^-18 */
    return nvfp4_core_ue5m3_round_mag(au);
}

NVFP4_HD static inline float nvfp4_core_ue5m3_decode(uint8_t code)
{
    uint32_t e = (uint32_t)code >> 3, m = code & 7u;
    if (code == NVFP4_UE5M3_NAN_CODE) return nvfp4_core_f32_from_bits(0x7FC00000u);
    if (e == 0) return (float)m * nvfp4_core_exp2i(-17);
    return nvfp4_core_exp2i((int)e - 15) * (1.0f + 0.125f * (float)m);
}

#endif /* NVFP4_CORE_UE5M3_H */
