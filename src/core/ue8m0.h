/*
 * ue8m0.h - UE8M0 (unsigned power-of-two) scales for MXFP4/MXFP8: the only
 * place where a value is rounded to a power of two.
 *
 * Code e means 2^(e-127) for e = 0..254; 0xFF is NaN; there is no zero and no
 * sign. The scalar conversion reproduces cuda_fp8.hpp (CUDA 13.0)
 * __nv_cvt_float_to_e8m0 with __NV_SATFINITE: cudaRoundZero ("rz", the
 * exponent bits, i.e. floor(log2|x|)) and cudaRoundPosInf ("rp", one more
 * when any mantissa bit is set and |x| > 2^-127). Both ignore the sign,
 * give 0xFF for NaN, 0xFE for +-Inf and finite overflow, 0x00 for zero.
 */
#ifndef NVFP4_CORE_UE8M0_H
#define NVFP4_CORE_UE8M0_H

#include "nvfp4_core.h"

/* cvt.rz.satfinite.ue8m0 / cvt.rp.satfinite.ue8m0 of an fp32 value. The host
 * path first narrows to bf16 (RZ, or RU of |x| for rp) and then reads the
 * exponent; narrowing with RU can carry into the exponent, which is why rp
 * here looks at the full fp32 mantissa. */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_cvt(float x, int round_up)
{
    uint32_t au = nvfp4_core_f32_bits(x) & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0xFFu;       /* NaN */
    if (au == 0x7F800000u) return 0xFEu;      /* Inf saturates */
    uint32_t e = au >> 23;
    if (round_up && (au & 0x7FFFFFu) != 0u) {
        /* bf16 RU of |x|: any nonzero low 16 bits round the bf16 mantissa
         * up; the e8m0 rp then adds one if the bf16 mantissa is nonzero and
         * the bf16 value exceeds 2^-127 (bf16 bits 0x0040). */
        uint32_t b = (au >> 16) + ((au & 0xFFFFu) ? 1u : 0u);
        e = b >> 7;
        if ((b & 0x7Fu) && b > 0x40u && b < 0x7F80u) e += 1u;
    }
    if (e >= 0xFFu) e = 0xFEu;                /* satfinite */
    return (uint8_t)e;
}

/* floor(log2 a) and the 23 fraction bits below the leading one, for a
 * finite a > 0 (fp32 subnormals included). */
NVFP4_HD static inline int nvfp4_core_log2_split(uint32_t au, uint32_t *frac23)
{
    int e = (int)(au >> 23);
    uint32_t m = au & 0x7FFFFFu;
    if (e == 0) { /* subnormal: normalize */
        e = 1;
        while (!(m & 0x800000u)) { m <<= 1; e--; }
        m &= 0x7FFFFFu;
    }
    *frac23 = m;
    return e - 127;
}

NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_clamp(int e)
{
    int c = e + 127;
    if (c < 0) c = 0;
    if (c > 254) c = 254;
    return (uint8_t)c;
}

/* CEIL: ceil(log2|x|) exactly; EVEN: the nearest power of two, a tie
 * (|x| = 1.5*2^e) going to the even code. Same special values as the cvt. */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_exact(float x, int even)
{
    uint32_t au = nvfp4_core_f32_bits(x) & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0xFFu;
    if (au == 0x7F800000u) return 0xFEu;
    if (au == 0u) return 0u;
    uint32_t f;
    int e = nvfp4_core_log2_split(au, &f);
    if (!even) return nvfp4_core_ue8m0_clamp(e + (f != 0u));
    if (f > 0x400000u) return nvfp4_core_ue8m0_clamp(e + 1);
    if (f < 0x400000u) return nvfp4_core_ue8m0_clamp(e);
    uint8_t lo = nvfp4_core_ue8m0_clamp(e), hi = nvfp4_core_ue8m0_clamp(e + 1);
    return (lo & 1u) ? hi : lo;
}

/* Round to nearest, ties up (1.5 * 2^e goes to 2^(e+1)): the cast of fp32 to
 * float8_e8m0fnu in ml_dtypes (torch_rule 0) and in torch (torch_rule 1;
 * c10 fp8e8m0fnu_from_fp32_value, an RNE on the exponent whose "last bit" is
 * the implicit one, so a tie of a normal input always rounds up). They agree
 * on every positive normal fp32; x >= 1.5 * 2^127 rounds to 0xFF (NaN: E8M0
 * has no infinity and no saturation here). Elsewhere:
 *   ml_dtypes: nearest also for fp32 subnormals (x >= 1.5 * 2^-127 -> 0x01,
 *     smaller ones 0x00); +-0, every negative value, +-Inf and NaN -> 0xFF
 *     (E8M0 has no zero and no sign).
 *   torch: the sign bit is ignored; an exponent field of 0 rounds up as soon
 *     as the fraction exceeds 0x400000 (every subnormal above 2^-127 -> 0x01);
 *     +-0 -> 0x00; +-Inf and NaN -> 0xFF. */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_rn(float x, int torch_rule)
{
    uint32_t bits = nvfp4_core_f32_bits(x);
    uint32_t au = torch_rule ? (bits & 0x7FFFFFFFu) : bits;
    /* ml_dtypes: zero, a set sign bit, Inf and NaN all give NaN */
    if (!torch_rule && (au == 0u || au > 0x7F7FFFFFu)) return 0xFFu;
    uint32_t e = au >> 23, f = au & 0x7FFFFFu;
    if (e == 0xFFu) return 0xFFu;
    uint32_t up;
    if (e != 0u) up = f >= 0x400000u;
    else up = torch_rule ? (f > 0x400000u) : (f >= 0x600000u);
    return (uint8_t)(e + up); /* 254 + 1 = 0xFF: overflow is NaN */
}

NVFP4_HD static inline float nvfp4_core_ue8m0_decode(uint8_t code)
{
    if (code == 0xFFu) return nvfp4_core_f32_from_bits(0x7FC00000u);
    if (code == 0u) return nvfp4_core_f32_from_bits(0x00400000u); /* 2^-127 */
    return nvfp4_core_f32_from_bits((uint32_t)code << 23);
}

#endif /* NVFP4_CORE_UE8M0_H */
