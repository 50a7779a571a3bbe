/*
 * recipe.h - the per-block math of every quantization recipe, shared
 * verbatim by the CPU tensor loops (src/quant/) and the CUDA kernels.
 *
 * A recipe is a small POD descriptor (nvfp4_core_recipe) naming one rule for
 * each step of the chain
 *
 *     global amax -> global state -> block amax -> block scale byte
 *                 -> per-block encode state -> element codes -> dequant
 *
 * and the functions below evaluate that chain. Every rounding goes through
 * src/core/e2m1.h, e4m3.h, ue5m3.h or ue8m0.h; nothing here narrows a value by
 * itself except the `exact` rule's comparison against scale*boundary, whose
 * boundaries are derived from nvfp4_core_e2m1_mag_value (no second table).
 * Each public recipe (src/recipes/<name>.c) is one descriptor; the formulas
 * are normative in docs/semantics.md ("Recipes").
 *
 * Plain C11 that nvcc compiles as CUDA C++: no libc beyond math.h/string.h,
 * every product that feeds a sum is stored first (no FMA contraction).
 */
#ifndef NVFP4_CORE_RECIPE_H
#define NVFP4_CORE_RECIPE_H

#include "nvfp4_core.h"
#include "e2m1.h"
#include "e4m3.h"
#include "ue5m3.h"
#include "ue8m0.h"
#include "bf16.h"

#define NVFP4_CORE_FLT_MAX 0x1.fffffep127f
/* fp32 constants of TransformerEngine (core_nvfp4.cuh, dequantize_nvfp4.cuh):
 * 1.0f/6.0f = 0x3E2AAAAB and 1.0f/(6.0f*448.0f) = 0x39C30C31. */
#define NVFP4_CORE_INV6 0x1.555556p-3f
#define NVFP4_CORE_INV2688 0x1.861862p-12f
#define NVFP4_CORE_2688 2688.0f
/* The same with TE's 4over6 E4M3 bound of 256: 6*256 = 1536 and fl(1/1536) = 0x3A2AAAAB. */
#define NVFP4_CORE_1536 1536.0f
#define NVFP4_CORE_INV1536 0x1.555556p-11f
/* The same with TE's UE5M3 bound 114688 (NVFP4ScaleTraits<fp8ue5m3>): 6*114688 = 688128 and
 * fl(1/688128) = 0x35C30C31, the dequantizer's factor_inv. */
#define NVFP4_CORE_688128 688128.0f
#define NVFP4_CORE_INV688128 0x1.861862p-20f
#define NVFP4_CORE_BF16_MAX 0x1.fep127f
/* compressed-tensors: generate_gparam's lower clamp (torch.finfo(float32).tiny) and the value _get_dtype_eps gives a
 * zero FP8 scale; vLLM get_reciprocal's substitute for 1/0, 1/(0 + 1e8) in fp32 (1e8 is exact in fp32). */
#define NVFP4_CORE_FLT_MIN 0x1p-126f
#define NVFP4_CORE_CT_ZERO_SCALE 0.125f
#define NVFP4_CORE_SAFE_RECIP_OF_ZERO (1.0f / 100000000.0f)

/* Element formats and scale formats. */
enum { NVFP4_CORE_ELEM_E2M1 = 0, NVFP4_CORE_ELEM_E4M3 = 1 };
/* UE5M3 (prototype): the TE_* rules evaluate with the UE5M3 codec and its maximum 114688 in place of E4M3 and 448,
 * as TE's kernels templated on ScaleType do (nvfp4_core_scale_decode, nvfp4_core_scale_max). */
enum { NVFP4_CORE_SCALE_E4M3 = 0, NVFP4_CORE_SCALE_UE8M0 = 1, NVFP4_CORE_SCALE_UE5M3 = 2 };

/* Global (per-tensor) rule: what is derived from the tensor amax. */
enum {
    NVFP4_CORE_GLOBAL_NONE = 0,      /* MX: no global scale */
    NVFP4_CORE_GLOBAL_TE_ENCODE = 1, /* S_enc = fminf(2688/amax, FLT_MAX), 1 if amax==0 or S_enc==0; S_dec = 1/S_enc */
    NVFP4_CORE_GLOBAL_DECODE_DIV = 2, /* g = amax / 2688 (a stored decode scale, torchao/modelopt) */
    NVFP4_CORE_GLOBAL_TE_ENCODE_256 = 3, /* TE 4over6: TE_ENCODE with the E4M3 bound 256, S_enc = fminf(1536/amax, FLT_MAX),
                                            so that the 1.5x map-to-4 scale stays below 448 */
    NVFP4_CORE_GLOBAL_TE_ENCODE_ROW = 4, /* TE row_scaled_nvfp4: TE_ENCODE of each stored row's own amax (the loops derive
                                            one nvfp4_core_global per stored row, nvfp4_core_recipe_row_scaled) */
    /* torch's `2688.0 / amax` on a tensor, which Tensor.__rtruediv__ evaluates as reciprocal(amax) * 2688: S_enc =
     * fl(fl(1/amax) * 2688), 1 ulp below 2688/amax for about a quarter of amaxes (nvfp4_core_torch_global_encode) */
    NVFP4_CORE_GLOBAL_TORCH_RECIP = 5,    /* no guard: amax 0 gives +Inf, +Inf gives 0, NaN NaN (vLLM's tests) */
    NVFP4_CORE_GLOBAL_TORCH_RECIP_FI = 6, /* amax 0 gives FLT_MAX (FlashInfer make_nvfp4_global_scale) */
    NVFP4_CORE_GLOBAL_TORCH_RECIP_CT = 7, /* compressed-tensors generate_gparam: amax raised to 2^-126 first, a NaN or
                                             infinite result replaced by 1 (amax +Inf still gives 0) */
    NVFP4_CORE_GLOBAL_RECIP_OF_DECODE = 8, /* torchao's g = amax / 2688, then S_enc = 1/g (mslk_quantize_nvfp4 passes
                                             per_tensor_scale.reciprocal()); both kept: g dequantizes */
    /* TE disable_second_level_scale (no amax tensor): S_enc = S_dec = 1 whatever the data, and the dequantizer's amax
     * is 6 * the scale maximum (dequantize_nvfp4.cuh unit_global_scale_amax), so DEQ_TE multiplies by
     * (s * 6 * max) * fl(1/(6 * max)) */
    NVFP4_CORE_GLOBAL_UNIT = 9,
    /* compressed-tensors generate_gparam on a bf16 weight: torch evaluates 2688 / amax in the tensor's dtype, so
     * S_enc = bf16(bf16(1/max(amax, 2^-126)) * 2688), then nan_to_num as GLOBAL_TORCH_RECIP_CT; the checkpoint stores
     * it as fp32 (nvfp4_core_ct_bf16_global_encode) */
    NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 = 10,
    /* the same on an fp16 weight: S_enc = fp16(fp16(1/max(amax, 2^-14)) * 2688) (torch.finfo(float16).tiny), then
     * nan_to_num: every amax below about 0.041 overflows fp16 (2688 / amax > 65504) and gets S_enc = 1
     * (nvfp4_core_ct_fp16_global_encode) */
    NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16 = 11
};

/* Block-scale rule: block amax -> scale byte. */
enum {
    NVFP4_CORE_BSCALE_TE_MUL = 0,       /* e4m3_rn_sat(bamax * (S_enc * fl(1/6))) (UE5M3: ue5m3 satfinite) */
    NVFP4_CORE_BSCALE_DIV_DIV = 1,      /* torchao: e4m3(clamp((bamax/6)/g, lo, 448)) */
    NVFP4_CORE_BSCALE_DIV_PRODUCT = 2,  /* modelopt: v = bamax/(6*g); v==0 -> 1; e4m3(clamp(v, lo, 448)) */
    NVFP4_CORE_BSCALE_UE8M0_FLOOR = 3,  /* OCP / torchao FLOOR: exponent(bamax) - emax_elem */
    NVFP4_CORE_BSCALE_UE8M0_RCEIL = 4,  /* NVIDIA: cvt.rp.satfinite.ue8m0(bamax * fl(1/max_elem)) */
    /* TE 4over6 (quantize_4over6_nvfp4.cuh): two candidate scales, map-to-6 e4m3(fminf((bamax/6)*S_enc, 448)) and
     * map-to-4 e4m3(fminf(((bamax/6)*S_enc)*1.5, 448)); the block keeps the one whose error sum is strictly lower
     * (ties and NaN: map-to-6), nvfp4_core_4over6_*. nvfp4_core_block_scale alone gives the map-to-6 scale. */
    NVFP4_CORE_BSCALE_4OVER6_MAE = 5,      /* error: sum |((fp4(q)*s)*amax)/(6*256) - x| */
    NVFP4_CORE_BSCALE_4OVER6_MSE = 6,      /* error: sum of the squares of the same differences */
    NVFP4_CORE_BSCALE_4OVER6_MAE_FP16 = 7, /* err_use_fast_math: sum |fp4(q)*s - x*S_enc| (the fp16 product domain) */
    NVFP4_CORE_BSCALE_4OVER6_MSE_FP16 = 8, /* err_use_fast_math, squares */
    NVFP4_CORE_BSCALE_UE8M0_DIV_RCEIL = 9, /* TE reference pow_2_scales: 2^ceil(log2(bamax/max_elem)) (a division),
                                              exponent clamped to [-127, 127]: ue8m0 rp of bamax/max_elem */
    /* torchao to_mx CEIL and EVEN (nvfp4_core_ue8m0_torchao_scale); the ggml UE4M3 rule (nvfp4_core_ggml_ue4m3) */
    NVFP4_CORE_BSCALE_UE8M0_CEIL = 10,  /* exponent(bamax) + (fraction != 0) - emax_elem */
    NVFP4_CORE_BSCALE_UE8M0_EVEN = 11,  /* exponent(bits(bamax) + 2^(22 - mbits(elem))) - emax_elem */
    NVFP4_CORE_BSCALE_GGML = 12,        /* llama.cpp ggml_fp32_to_ue4m3(bamax / 6) */
    NVFP4_CORE_BSCALE_GLOBAL_FIRST = 13, /* vLLM ref_nvfp4_quant: e4m3(clamp(S_enc * (bamax * fl(1/6)), 448)): the
                                            product with fl(1/6) rounds first, then the one with S_enc (te: the
                                            other order) */
    NVFP4_CORE_BSCALE_CT = 14,          /* compressed-tensors calculate_qparams: e4m3(clamp(S_enc * (bamax / 6), 448)),
                                            a zero scale replaced by 0.125 (0x20, _get_dtype_eps of FP8) */
    NVFP4_CORE_BSCALE_UE8M0_LOG2 = 15,  /* llama.cpp MXFP4: floorf(log2f(bamax)) - emax_elem + 127, 0 for bamax 0,
                                            clamped to [0, 254] (nvfp4_core_ue8m0_log2_scale) */
    NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL = 16, /* mslk triton_quantize_nvfp4: e4m3(clamp((bamax / 6) * S_enc, lo, 448)),
                                              lo = scale_lo (2^-16, which rounds to E4M3 0 all the same) */
    NVFP4_CORE_BSCALE_CT_BF16 = 17, /* BSCALE_CT on a bf16 weight: bamax / 6 is a bf16 division (bf16(fl(bamax / 6))),
                                      its product with the fp32 [1] global scale an fp32 one:
                                      e4m3(clamp(S_enc * bf16(bamax / 6), 448)), 0 -> 0.125 */
    NVFP4_CORE_BSCALE_CT_FP16 = 18  /* the same on an fp16 weight: e4m3(clamp(S_enc * fp16(bamax / 6), 448)), 0 -> 0.125
                                      (fp16(bamax / 6) subnormal below 6 * 2^-14) */
};

/* Encode rule: how an element is brought onto the element grid. */
enum {
    NVFP4_CORE_ENC_TE_RECIP = 0,  /* y = x * fminf(1/((float)s*S_dec), FLT_MAX) */
    NVFP4_CORE_ENC_DIV_TOTAL = 1, /* y = x / (g * (float)s) (torchao 0.13-0.16) */
    NVFP4_CORE_ENC_EXACT = 2,     /* nearest code to the real x/D, D = dequant scale, by comparison */
    NVFP4_CORE_ENC_POW2 = 3,      /* y = x / 2^(e-127) (exact power-of-two scaling; 0xFF: NaN) */
    NVFP4_CORE_ENC_RECIP_DIV = 4, /* y = x * ((1/g) / (float)s) (torchao >= 0.17; no clamp of 1/g) */
    NVFP4_CORE_ENC_POW2_FP32 = 5, /* y = x / max(sf, pow2_scale_min), sf = the fp32 with exponent field e and
                                     mantissa 0 (e = 0: +0, e = 0xFF: +Inf), torchao to_mx */
    NVFP4_CORE_ENC_TE_BF16 = 6,   /* TE fast math (quantize_transpose_nvfp4_tuned_1D.cuh): c = bf16_rn(fminf(S_enc /
                                     (float)s, BF16_MAX)), y = fma.rn.f32.bf16(x, c, +0): x*c rounded once, an
                                     exactly zero product is +0 */
    NVFP4_CORE_ENC_GGML_NEAREST = 7, /* llama.cpp best_index_mxfp4: the code k minimizing fabsf(fp4(k)*s - x) in fp32, k
                                       tried 0..15, the first minimum kept (ties: the smaller magnitude, and +0 before
                                       -0); NaN and +-Inf elements give 0x0 */
    NVFP4_CORE_ENC_SAFE_RECIP = 8,   /* vLLM ref_nvfp4_quant: y = x * r(s * r(S_enc)), r(v) = 1/v and r(0) =
                                        fl(1/1e8) (get_reciprocal's 1/(v + (v == 0) * 1e8)) */
    NVFP4_CORE_ENC_DIV_SCALE_GLOBAL = 9, /* compressed-tensors _quantize: y = x / ((float)s / S_enc) */
    NVFP4_CORE_ENC_GLOBAL_OVER_SCALE = 10 /* mslk: y = x * fminf(S_enc / (float)s, FLT_MAX); mslk itself has no
                                             clamp (s = 0 gives +Inf and 0 * Inf = NaN: a defect, not this rule) */
};

/* Special-value policy of the final E2M1 cast (applied to y). */
enum {
    NVFP4_CORE_SPECIAL_CUDA = 0,     /* cuda_fp4.hpp: sign kept (-0 -> 0x8), NaN -> 0x7 */
    NVFP4_CORE_SPECIAL_PYREF = 1,    /* TE Python reference: +-0 -> 0x0, NaN -> 0x0 */
    NVFP4_CORE_SPECIAL_TORCHAO = 2,  /* torchao _f32_to_floatx_unpacked: NaN -> 0x3 (canonical +NaN) */
    NVFP4_CORE_SPECIAL_MODELOPT = 3, /* modelopt _cast_fp4: sign from y < 0 (-0 -> 0x0), NaN -> 0x7;
                                        its decode table (e2m1_values) gives +0 for code 0x8 */
    NVFP4_CORE_SPECIAL_GGML = 4,     /* llama.cpp: codes come from ENC_GGML_NEAREST; its decode table (kvalues_mxfp4)
                                        gives +0 for code 0x8 */
    NVFP4_CORE_SPECIAL_PYREF_BF16 = 5 /* compressed-tensors on a bf16 weight: +-0 -> 0x0 as PYREF, NaN -> 0x8: the fp32
                                         E2M1 values are cast back to bf16, and torch's fp32 -> bf16 conversion on
                                         x86 writes a NaN as 0xFFFF, whose sign bit pack_fp4_to_uint8 reads */
};

/* Dequantization rule. */
enum {
    NVFP4_CORE_DEQ_TE = 0,        /* v * (((float)s * amax) * fl(1/2688)) (UE5M3: fl(1/688128)) */
    NVFP4_CORE_DEQ_GLOBAL_MUL = 1,/* v * (g * (float)s) */
    NVFP4_CORE_DEQ_POW2 = 2,      /* v * 2^(e-127); 0x00 is 2^-127, 0xFF NaN (no clamp: torchao to_dtype) */
    NVFP4_CORE_DEQ_TE_256 = 3,    /* TE 4over6: v * (((float)s * amax) * fl(1/1536)) */
    NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL = 4, /* v * ((float)s / S_enc) (compressed-tensors _dequantize, vLLM
                                           ref_nvfp4_quant_dequant) */
    NVFP4_CORE_DEQ_PER_TOKEN = 5  /* FlashInfer per-token: (v * (float)s) * p, p the row's per-token scale
                                     (nvfp4_core_per_token_scale); nvfp4_core_dequant_value applies p */
};

typedef struct {
    uint8_t elem;            /* NVFP4_CORE_ELEM_* */
    uint8_t scale_format;    /* NVFP4_CORE_SCALE_* */
    uint8_t global_rule;     /* NVFP4_CORE_GLOBAL_* */
    uint8_t bscale_rule;     /* NVFP4_CORE_BSCALE_* */
    uint8_t enc_rule;        /* NVFP4_CORE_ENC_* */
    uint8_t special;         /* NVFP4_CORE_SPECIAL_* */
    uint8_t dequant_rule;    /* NVFP4_CORE_DEQ_* */
    uint8_t amax_nan_propagates; /* torch.amax semantics: a NaN element makes the (block/global) amax NaN */
    uint8_t block_len;       /* 16 or 32: the recipe's own 1D block length */
    uint8_t emax_elem;       /* floor(log2(max element)): 2 for E2M1, 8 for E4M3 (UE8M0 floor) */
    float elem_max;          /* 6 or 448 */
    float scale_lo;          /* lower clamp of the block scale before the cast (0: none) */
    float pow2_scale_min;    /* ENC_POW2_FP32: the encode divisor is at least this (torchao: 2^-126; 0: none) */
} nvfp4_core_recipe;

/* The chains the fast CPU kernels (src/simd/) re-express lane-wise. A
 * recipe descriptor (src/recipes/) takes the fast path exactly when it
 * equals one of these (nvfp4_core_recipe_equal), so a recipe that changes a
 * rule leaves the fast path by itself instead of running kernels that
 * implement the old rule. */
#define NVFP4_CORE_CHAIN_TE                                                                                     \
    {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_E4M3, .global_rule = NVFP4_CORE_GLOBAL_TE_ENCODE, \
     .bscale_rule = NVFP4_CORE_BSCALE_TE_MUL, .enc_rule = NVFP4_CORE_ENC_TE_RECIP, .special = NVFP4_CORE_SPECIAL_CUDA, \
     .dequant_rule = NVFP4_CORE_DEQ_TE, .amax_nan_propagates = 0, .block_len = 16, .emax_elem = 2,              \
     .elem_max = 6.0f, .scale_lo = 0.0f, .pow2_scale_min = 0.0f}
/* torchao to_mx FLOOR: a NaN in a block makes its scale 0xFF, whose encode
 * divisor is +Inf (finite elements give +-0, NaN and Inf elements 0x3); the
 * encode divisor is at least 2^-126; dequantization uses 2^(e-127). */
#define NVFP4_CORE_CHAIN_MXFP4_FLOOR                                                                            \
    {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_UE8M0, .global_rule = NVFP4_CORE_GLOBAL_NONE,  \
     .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_FLOOR, .enc_rule = NVFP4_CORE_ENC_POW2_FP32,                        \
     .special = NVFP4_CORE_SPECIAL_TORCHAO, .dequant_rule = NVFP4_CORE_DEQ_POW2, .amax_nan_propagates = 1,      \
     .block_len = 32, .emax_elem = 2, .elem_max = 6.0f, .scale_lo = 0.0f, .pow2_scale_min = 0x1p-126f}
/* NVIDIA cvt.rp.satfinite.ue8m0 of bamax * fl(1/6); NaN elements ignored. */
#define NVFP4_CORE_CHAIN_MXFP4_RCEIL                                                                            \
    {.elem = NVFP4_CORE_ELEM_E2M1, .scale_format = NVFP4_CORE_SCALE_UE8M0, .global_rule = NVFP4_CORE_GLOBAL_NONE,  \
     .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_RCEIL, .enc_rule = NVFP4_CORE_ENC_POW2,                             \
     .special = NVFP4_CORE_SPECIAL_CUDA, .dequant_rule = NVFP4_CORE_DEQ_POW2, .amax_nan_propagates = 0,         \
     .block_len = 32, .emax_elem = 2, .elem_max = 6.0f, .scale_lo = 0.0f, .pow2_scale_min = 0.0f}
/* MXFP8: E4M3 elements, NVIDIA cvt.rp.satfinite.ue8m0 of bamax * fl(1/448); NaN elements ignored. */
#define NVFP4_CORE_CHAIN_MXFP8                                                                                  \
    {.elem = NVFP4_CORE_ELEM_E4M3, .scale_format = NVFP4_CORE_SCALE_UE8M0, .global_rule = NVFP4_CORE_GLOBAL_NONE,  \
     .bscale_rule = NVFP4_CORE_BSCALE_UE8M0_RCEIL, .enc_rule = NVFP4_CORE_ENC_POW2,                             \
     .special = NVFP4_CORE_SPECIAL_CUDA, .dequant_rule = NVFP4_CORE_DEQ_POW2, .amax_nan_propagates = 0,         \
     .block_len = 32, .emax_elem = 8, .elem_max = 448.0f, .scale_lo = 0.0f, .pow2_scale_min = 0.0f}

/* Whether two descriptors name the same rules (floats compared by bits). */
NVFP4_HD static inline int nvfp4_core_recipe_equal(const nvfp4_core_recipe *a, const nvfp4_core_recipe *b)
{
    return a->elem == b->elem && a->scale_format == b->scale_format && a->global_rule == b->global_rule &&
           a->bscale_rule == b->bscale_rule && a->enc_rule == b->enc_rule && a->special == b->special &&
           a->dequant_rule == b->dequant_rule && a->amax_nan_propagates == b->amax_nan_propagates &&
           a->block_len == b->block_len && a->emax_elem == b->emax_elem &&
           nvfp4_core_f32_bits(a->elem_max) == nvfp4_core_f32_bits(b->elem_max) &&
           nvfp4_core_f32_bits(a->scale_lo) == nvfp4_core_f32_bits(b->scale_lo) &&
           nvfp4_core_f32_bits(a->pow2_scale_min) == nvfp4_core_f32_bits(b->pow2_scale_min);
}

/* What each block needs from the tensor: derived once from the global amax. */
typedef struct {
    float amax;   /* the tensor amax (post-RHT for RHT outputs) */
    float s_enc;  /* TE: global encode scale */
    float s_dec;  /* TE: 1/S_enc */
    float g;      /* DIV rules: amax/2688 */
} nvfp4_core_global;

/* Per-block state derived from the scale byte. */
typedef struct {
    uint8_t scale;   /* the stored byte */
    float factor;    /* ENC_TE_RECIP: multiplier; DIV_TOTAL / POW2: divisor; EXACT: dequant scale D */
} nvfp4_core_block;

/* ---- amax ------------------------------------------------------------- */

/* Running max of |x|: fmaxf semantics (a NaN element is ignored, Inf counts),
 * or torch.amax semantics (NaN wins) when nan_propagates. */
NVFP4_HD static inline float nvfp4_core_amax_step(float acc, float x, int nan_propagates)
{
    float a = nvfp4_core_fabs(x);
    if (nan_propagates) {
        if (nvfp4_core_isnan(acc)) return acc;
        if (nvfp4_core_isnan(a)) return a;
    }
    return nvfp4_core_fmaxf(acc, a);
}

/* ---- global ----------------------------------------------------------- */

/* TE core_nvfp4.cuh compute_global_encode_scaling_factor_FP4: correctly
 * rounded division, fminf (a NaN amax gives FLT_MAX), then 1 for amax 0 and
 * for an encode scale that is 0 (amax = Inf). */
NVFP4_HD static inline float nvfp4_core_te_global_encode_bound(float amax, float fp4_times_e4m3_max)
{
    float s = nvfp4_core_fminf(fp4_times_e4m3_max / amax, NVFP4_CORE_FLT_MAX);
    if (amax == 0.0f || s == 0.0f) s = 1.0f;
    return s;
}

NVFP4_HD static inline float nvfp4_core_te_global_encode(float amax)
{
    return nvfp4_core_te_global_encode_bound(amax, NVFP4_CORE_2688);
}

/* `2688.0 / amax` on a torch tensor: Python float / Tensor is
 * Tensor.__rtruediv__, i.e. amax.reciprocal() * 2688, two roundings
 * (torch/_tensor.py __rdiv__). 0 -> +Inf, +Inf -> 0, NaN -> NaN. */
NVFP4_HD static inline float nvfp4_core_torch_global_encode(float amax)
{
    float r = 1.0f / amax;
    return r * NVFP4_CORE_2688;
}

/* compressed-tensors generate_gparam (quantization/utils/helpers.py):
 * torch.clamp(amax, min=FLT_MIN) (NaN passes), 2688 / it as torch
 * evaluates it, then torch.nan_to_num(nan=1, posinf=1, neginf=1). An amax
 * below 2688/FLT_MAX (about 7.9e-36) overflows to +Inf and gives 1; amax
 * +Inf gives 0, which nan_to_num keeps. */
NVFP4_HD static inline float nvfp4_core_ct_global_encode(float amax)
{
    float a = (!nvfp4_core_isnan(amax) && amax < NVFP4_CORE_FLT_MIN) ? NVFP4_CORE_FLT_MIN : amax;
    float s = nvfp4_core_torch_global_encode(a);
    if (nvfp4_core_isnan(s) || nvfp4_core_fabs(s) > NVFP4_CORE_FLT_MAX) s = 1.0f;
    return s;
}

/* The same on a bf16 amax (compressed-tensors on a bf16 model): the
 * reciprocal and the product with the Python scalar 2688 each round to
 * bf16 (torch computes a bf16 op in fp32 and rounds once), so S_enc is a
 * bf16 value, stored as fp32. bf16's overflow threshold is below FLT_MAX:
 * amaxes up to about 7.9e-36 give +Inf here, then 1. */
NVFP4_HD static inline float nvfp4_core_ct_bf16_global_encode(float amax)
{
    float a = (!nvfp4_core_isnan(amax) && amax < NVFP4_CORE_FLT_MIN) ? NVFP4_CORE_FLT_MIN : amax;
    float r = nvfp4_core_round_bf16(1.0f / a);
    float s = nvfp4_core_round_bf16(r * NVFP4_CORE_2688);
    if (nvfp4_core_isnan(s) || nvfp4_core_fabs(s) > NVFP4_CORE_FLT_MAX) s = 1.0f;
    return s;
}

/* The same on an fp16 amax (compressed-tensors on an fp16 model): the
 * reciprocal and the product round to fp16, amax is first raised to fp16's
 * smallest normal 2^-14. fp16's largest value is 65504, so 2688 / amax
 * overflows for every amax below about 0.041 and nan_to_num makes S_enc 1:
 * such a layer's block scales are bamax / 6 in E4M3 itself (blocks whose
 * bamax / 6 is below E4M3's smallest subnormal 2^-9 get 0.125 and codes
 * 0), which compressed-tensors 0.20.1 does. */
NVFP4_HD static inline float nvfp4_core_ct_fp16_global_encode(float amax)
{
    float tiny = nvfp4_core_exp2i(-14);
    float a = (!nvfp4_core_isnan(amax) && amax < tiny) ? tiny : amax;
    float r = nvfp4_core_round_fp16(1.0f / a);
    float s = nvfp4_core_round_fp16(r * NVFP4_CORE_2688);
    if (nvfp4_core_isnan(s) || nvfp4_core_fabs(s) > NVFP4_CORE_FLT_MAX) s = 1.0f;
    return s;
}

/* FlashInfer make_nvfp4_global_scale (quantization/nvfp4_quantization_utils.py):
 * FLT_MAX for amax 0, else the torch division above. */
NVFP4_HD static inline float nvfp4_core_fi_global_encode(float amax)
{
    return amax == 0.0f ? NVFP4_CORE_FLT_MAX : nvfp4_core_torch_global_encode(amax);
}

/* vLLM get_reciprocal on a tensor (nvfp4_emulation_utils.py):
 * 1.0 / (v + (v == 0) * 1e8), so 0 (either sign) gives fl(1/1e8) rather
 * than Inf; every other v its correctly rounded reciprocal. */
NVFP4_HD static inline float nvfp4_core_safe_recip(float v)
{
    return v == 0.0f ? NVFP4_CORE_SAFE_RECIP_OF_ZERO : 1.0f / v;
}

/* Whether the recipe derives its global state per stored row (TE's
 * row_scaled_nvfp4): the tensor loops then keep one amax per stored row. */
NVFP4_HD static inline int nvfp4_core_recipe_row_scaled(const nvfp4_core_recipe *r)
{
    return r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_ROW;
}

/* The block-scale format's largest finite value: 448 (E4M3) or 114688
 * (UE5M3), TE's TypeExtrema<ScaleType>::max. */
NVFP4_HD static inline float nvfp4_core_scale_max(const nvfp4_core_recipe *r)
{
    return r->scale_format == NVFP4_CORE_SCALE_UE5M3 ? NVFP4_UE5M3_MAX : NVFP4_E4M3_MAX;
}

/* 6 * scale max as TE's constexpr fp8_max * fp4_max: 2688 or 688128 (exact). */
NVFP4_HD static inline float nvfp4_core_te_bound(const nvfp4_core_recipe *r)
{
    return r->scale_format == NVFP4_CORE_SCALE_UE5M3 ? NVFP4_CORE_688128 : NVFP4_CORE_2688;
}

/* The value of a non-UE8M0 block-scale byte: E4M3, or UE5M3. */
NVFP4_HD static inline float nvfp4_core_scale_decode(const nvfp4_core_recipe *r, uint8_t s)
{
    return r->scale_format == NVFP4_CORE_SCALE_UE5M3 ? nvfp4_core_ue5m3_decode(s) : nvfp4_core_e4m3_decode(s);
}

/* static_cast<ScaleType>(v) of TE's compute_decoding_scaling_factor: RN,
 * satfinite, in the recipe's scale format. */
NVFP4_HD static inline uint8_t nvfp4_core_scale_encode_sat(const nvfp4_core_recipe *r, float v)
{
    return r->scale_format == NVFP4_CORE_SCALE_UE5M3 ? nvfp4_core_ue5m3_encode(v, NVFP4_CORE_UE5M3_SATFINITE)
                                                     : nvfp4_core_e4m3_encode(v, 1);
}

NVFP4_HD static inline nvfp4_core_global nvfp4_core_global_from_amax(const nvfp4_core_recipe *r, float amax)
{
    nvfp4_core_global g;
    g.amax = amax;
    g.s_enc = 1.0f;
    g.s_dec = 1.0f;
    g.g = 1.0f;
    if (r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE || r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_ROW) {
        g.s_enc = nvfp4_core_te_global_encode_bound(amax, nvfp4_core_te_bound(r));
        g.s_dec = 1.0f / g.s_enc;
    } else if (r->global_rule == NVFP4_CORE_GLOBAL_UNIT) {
        g.amax = nvfp4_core_te_bound(r);
    } else if (r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256) {
        g.s_enc = nvfp4_core_te_global_encode_bound(amax, NVFP4_CORE_1536);
        g.s_dec = 1.0f / g.s_enc;
    } else if (r->global_rule == NVFP4_CORE_GLOBAL_DECODE_DIV) {
        g.g = amax / NVFP4_CORE_2688;
    } else if (r->global_rule == NVFP4_CORE_GLOBAL_RECIP_OF_DECODE) {
        g.g = amax / NVFP4_CORE_2688;
        g.s_enc = 1.0f / g.g; /* torch reciprocal(): amax 0 gives +Inf */
        g.s_dec = g.g;
    } else if (r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_FI ||
               r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT ||
               r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 ||
               r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16) {
        g.s_enc = r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP           ? nvfp4_core_torch_global_encode(amax)
                  : r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_FI      ? nvfp4_core_fi_global_encode(amax)
                  : r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT      ? nvfp4_core_ct_global_encode(amax)
                  : r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 ? nvfp4_core_ct_bf16_global_encode(amax)
                                                                            : nvfp4_core_ct_fp16_global_encode(amax);
        g.s_dec = 1.0f / g.s_enc; /* FlashInfer's div(1, gs); the other two rules do not use it */
    }
    return g;
}

/* Whether r's global scale is an encode scale S_enc with S_dec = 1/S_enc
 * (te's and the torch-style rules): the ones a kernel can be handed either
 * way (FlashInfer's is_global_scale_inversed). */
NVFP4_HD static inline int nvfp4_core_global_is_encode_scale(const nvfp4_core_recipe *r)
{
    return r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE || r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256 ||
           r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_FI ||
           r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT || r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 ||
           r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16;
}

/* FlashInfer's is_global_scale_inversed=True used as meant: the caller hands
 * the kernel fl(1/S_enc) and the kernel inverts it again (quantization.cuh
 * USE_INVERSE_SCALE __fdiv_rn(1, SFScale); the batch-invariant entry point's
 * gs = 1.0 / global_scale), so it works with S_enc' = fl(1/fl(1/S_enc)),
 * which is not S_enc for about one fp32 value in eight, and S_dec' =
 * fl(1/S_enc'). */
NVFP4_HD static inline nvfp4_core_global nvfp4_core_global_handed_inverted(nvfp4_core_global g)
{
    float handed = 1.0f / g.s_enc;
    g.s_enc = 1.0f / handed;
    g.s_dec = 1.0f / g.s_enc;
    return g;
}

/* ---- block scale ------------------------------------------------------ */

/* torch.clamp(v, lo, hi): NaN stays NaN; lo = 0 means no lower clamp. */
NVFP4_HD static inline float nvfp4_core_clamp_nanprop(float v, float lo, float hi)
{
    if (nvfp4_core_isnan(v)) return v;
    if (lo > 0.0f && v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

/* OCP MX FLOOR as torchao to_mx computes it: the biased fp32 exponent bits of
 * bamax minus emax_elem, clamped to the E8M0 range; NaN -> 0xFF. The exponent
 * bits of +Inf (255) are used as they are, like torchao's bit extraction. */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_floor_scale(float bamax, int emax_elem)
{
    uint32_t au = nvfp4_core_f32_bits(bamax) & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0xFFu;
    int e = (au == 0x7F800000u) ? 255 : (int)nvfp4_core_ue8m0_cvt(bamax, 0);
    int b = e - emax_elem;
    if (b < 0) b = 0;
    if (b > 255) b = 255;
    return (uint8_t)b;
}

/* torchao to_mx CEIL and EVEN, on the fp32 bits of bamax as torchao
 * computes them (pytorch/ao v0.18.0 mx_tensor.py): CEIL takes the exponent
 * bits plus one when any fraction bit is set; EVEN first adds half an
 * element ulp at bamax's exponent, 2^(22 - elem_mbits), to the bits (a
 * carry into the exponent rounds bamax up to the next power of two) and
 * then takes the exponent bits. The exponent minus emax_elem is clamped to
 * [-127, 128] and biased; NaN -> 0xFF. +Inf has the exponent bits 255 like
 * any number (FLOOR does the same). */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_torchao_biased(int e, int emax_elem)
{
    int b = e - 127 - emax_elem;
    if (b < -127) b = -127;
    if (b > 128) b = 128;
    return (uint8_t)(b + 127);
}

/* The exponent bits of bamax after adding `add` to its fp32 bits (a carry
 * into the exponent rounds bamax up to the next power of two), minus
 * emax_elem, clamped and biased as torchao's: torchao's EVEN adds
 * 2^(22 - elem_mbits), so an amax whose fraction is exactly the midpoint
 * (1.75 * 2^k for E2M1) rounds up; fbgemm's MX4 "even" adds one less
 * (ties down). NaN -> 0xFF. */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_round_add_scale(float bamax, int emax_elem, uint32_t add)
{
    uint32_t au = nvfp4_core_f32_bits(bamax) & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0xFFu;
    return nvfp4_core_ue8m0_torchao_biased((int)((au + add) >> 23), emax_elem);
}

NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_torchao_scale(float bamax, int emax_elem, int even, int elem_mbits)
{
    uint32_t au = nvfp4_core_f32_bits(bamax) & 0x7FFFFFFFu;
    if (au > 0x7F800000u) return 0xFFu;
    if (even) return nvfp4_core_ue8m0_round_add_scale(bamax, emax_elem, 1u << (22 - elem_mbits));
    return nvfp4_core_ue8m0_torchao_biased((int)(au >> 23) + ((au & 0x7FFFFFu) != 0u), emax_elem);
}

/* floor (up = 0) or ceil (up = 1) of log2(v) rounded to binary32 first, as
 * code that takes an exponent from log2f (C) or torch.log2 (an fp32 tensor)
 * computes it, for a finite v > 0. The binary32 log2 is modelled as the
 * correctly rounded one (through binary64). It is not the exponent of v: a
 * v a few ulps below 2^k (|k| >= 2) has log2 exactly k in binary32, so its
 * floor is k where the exponent bits give k - 1; a v a few ulps above 2^k
 * has ceil k, not k + 1. */
NVFP4_HD static inline int nvfp4_core_log2_f32_rounded(float v, int up)
{
    double l = (double)(float)log2((double)v);
    return (int)(up ? ceil(l) : floor(l));
}

/* llama.cpp ggml_fp32_to_ue4m3 (ggml/src/ggml-impl.h): its own UE4M3
 * rounding, not the E4M3 RNE of e4m3.h. Not positive (0, NaN) -> 0; above
 * 448 -> 448; below 2^-6 the subnormal code (int)(v*512 + 0.5f) in fp32,
 * 0 if under 1, at most 7 (never 0x08); otherwise the top three fraction
 * bits plus fraction bit 19 (half up on the bits), a carry going into the
 * exponent; every v >= 256 gives 0x7E (448). */
NVFP4_HD static inline uint8_t nvfp4_core_ggml_ue4m3(float v)
{
    if (!(v > 0.0f)) return 0u;
    if (v > 448.0f) v = 448.0f;
    uint32_t bits = nvfp4_core_f32_bits(v);
    int e = (int)(bits >> 23) - 127 + 7;
    if (e <= 0) {
        float t = v * 512.0f; /* exact: a power-of-two scaling */
        t = t + 0.5f;         /* rounded in fp32 before the truncation */
        int m = (int)t;
        if (m > 7) m = 7;
        return m < 1 ? 0u : (uint8_t)m;
    }
    if (e >= 15) return 0x7Eu;
    int m = (int)((bits >> 20) & 7u) + (int)((bits >> 19) & 1u);
    if (m > 7) {
        m = 0;
        if (++e >= 15) return 0x7Eu;
    }
    return (uint8_t)((e << 3) | m);
}

/* floor(fl32(log2(x))) for a positive finite fp32 x, with fl32 the correctly
 * rounded binary32 logarithm (glibc's log2f gives the same floor for every
 * such x), computed without a logarithm: a libm log2 is not the same
 * routine on the host and on a GPU, and this is integer work plus one
 * comparison. Let 2^k be the power of two just above x and n the number of
 * x's ulps between x and 2^k (x = 2^k (1 - n ulp/2^k)). Then log2(x) is
 * k - n (ulp/2^k) / ln 2 to first order, and fl32 rounds it up to k exactly
 * when that distance is below half the binary32 spacing next to k on the
 * side of x, 2^(E-24) with E = floor(log2 |k|), one binade finer below a
 * positive power of two k (|k| >= 2; for k = -1, 0, 1
 * the spacing is too fine for any x to round to k): n < ln2 2^E 2^k / (2^24
 * ulp). The bound is never within 0.09 of an integer for the E that occur
 * (0 to 7), far beyond the second-order term (about 1e-11 relative). */
NVFP4_HD static inline int nvfp4_core_floor_log2_f32(float x)
{
    uint32_t u = nvfp4_core_f32_bits(x);
    int e;           /* x in [2^e, 2^(e+1)) */
    uint32_t m, top; /* x = m ulp, 2^(e+1) = top ulp */
    if (u >= 0x00800000u) {
        e = (int)(u >> 23) - 127;
        m = (u & 0x7FFFFFu) | 0x800000u;
        top = 1u << 24;
    } else { /* subnormal: ulp 2^-149 */
        int b = 31;
        while (!(u >> b)) b--;
        e = b - 149;
        m = u;
        top = 1u << (b + 1);
    }
    int k = e + 1, ak = k < 0 ? -k : k;
    if (ak < 2) return e;
    int E = 0;
    while ((2 << E) <= ak) E++;
    if (k > 0 && ak == (1 << E)) E--; /* below a power of two k the spacing is the finer binade's */
    double bound = 0.69314718055994530942 * (double)(1u << E) * (double)top / 16777216.0;
    return (double)(top - m) < bound ? k : e;
}

/* llama.cpp quantize_row_mxfp4_ref (ggml/src/ggml-quants.c):
 * e = amax > 0 ? (uint8_t)(floorf(log2f(amax)) - 2 + 127) : 0, with the
 * floor of the rounded logarithm from nvfp4_core_floor_log2_f32: it differs
 * from the exponent field for values a few ulps below a power of two whose
 * fl(log2) is the next integer (7456 fp32 values), so e is one higher than
 * the OCP floor there. Where ggml's cast to uint8_t is undefined (bamax below
 * 2^-125, +Inf) this rule clamps to [0, 254] instead; NaN gives 0 (ggml's
 * amax skips NaN elements, so only an all-NaN block, amax 0, reaches here). */
NVFP4_HD static inline uint8_t nvfp4_core_ue8m0_log2_scale(float bamax, int emax_elem)
{
    if (!(bamax > 0.0f)) return 0u;
    if (bamax > NVFP4_CORE_FLT_MAX) return 254u;
    int e = nvfp4_core_floor_log2_f32(bamax) - emax_elem + 127;
    if (e < 0) e = 0;
    if (e > 254) e = 254;
    return (uint8_t)e;
}

NVFP4_HD static inline uint8_t nvfp4_core_block_scale(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float bamax)
{
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL: {
        /* One rounding inside the parentheses (S_enc * 1/6) first. */
        float m = g->s_enc * NVFP4_CORE_INV6;
        return nvfp4_core_scale_encode_sat(r, bamax * m);
    }
    case NVFP4_CORE_BSCALE_DIV_DIV: {
        float v = (bamax / r->elem_max) / g->g;
        return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, r->scale_lo, NVFP4_E4M3_MAX), 1);
    }
    case NVFP4_CORE_BSCALE_DIV_PRODUCT: {
        float d = r->elem_max * g->g;
        float v = bamax / d;
        if (v == 0.0f) v = 1.0f; /* modelopt: per_block_scale[per_block_scale == 0] = 1.0 */
        return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, r->scale_lo, NVFP4_E4M3_MAX), 1);
    }
    case NVFP4_CORE_BSCALE_UE8M0_FLOOR:
        return nvfp4_core_ue8m0_floor_scale(bamax, r->emax_elem);
    case NVFP4_CORE_BSCALE_UE8M0_RCEIL: {
        float inv = 1.0f / r->elem_max;
        return nvfp4_core_ue8m0_cvt(bamax * inv, 1);
    }
    case NVFP4_CORE_BSCALE_UE8M0_DIV_RCEIL:
        /* torch.ceil(torch.log2(bamax/6)) taken exactly: the rp cast of the
         * quotient is the smallest power of two >= it (0 and values below
         * 2^-127 give 0x00, Inf 0xFE = exponent 127, NaN 0xFF) */
        return nvfp4_core_ue8m0_cvt(bamax / r->elem_max, 1);
    case NVFP4_CORE_BSCALE_UE8M0_CEIL:
    case NVFP4_CORE_BSCALE_UE8M0_EVEN:
        return nvfp4_core_ue8m0_torchao_scale(bamax, r->emax_elem, r->bscale_rule == NVFP4_CORE_BSCALE_UE8M0_EVEN,
                                              r->elem == NVFP4_CORE_ELEM_E4M3 ? 3 : 1);
    case NVFP4_CORE_BSCALE_GGML:
        return nvfp4_core_ggml_ue4m3(bamax / r->elem_max);
    case NVFP4_CORE_BSCALE_UE8M0_LOG2:
        return nvfp4_core_ue8m0_log2_scale(bamax, r->emax_elem);
    case NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL: {
        float q = bamax / r->elem_max; /* tl.div_rn(block_amax, 6.0) */
        float v = q * g->s_enc;
        return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, r->scale_lo, NVFP4_E4M3_MAX), 1);
    }
    case NVFP4_CORE_BSCALE_GLOBAL_FIRST: {
        /* vec_max * FLOAT4_E2M1_MAX_RECIPROCAL: torch multiplies a float32
         * tensor by the Python scalar 1/6 rounded to fp32 */
        float m = bamax * NVFP4_CORE_INV6;
        float v = g->s_enc * m;
        return nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, 0.0f, NVFP4_E4M3_MAX), 1);
    }
    case NVFP4_CORE_BSCALE_CT:
    case NVFP4_CORE_BSCALE_CT_BF16:
    case NVFP4_CORE_BSCALE_CT_FP16: {
        float q = bamax / r->elem_max;
        if (r->bscale_rule == NVFP4_CORE_BSCALE_CT_BF16) q = nvfp4_core_round_bf16(q);
        if (r->bscale_rule == NVFP4_CORE_BSCALE_CT_FP16) q = nvfp4_core_round_fp16(q);
        float v = g->s_enc * q;
        uint8_t s = nvfp4_core_e4m3_encode(nvfp4_core_clamp_nanprop(v, 0.0f, NVFP4_E4M3_MAX), 1);
        /* scales == 0 after the FP8 rounding (a NaN scale is not 0) */
        return nvfp4_core_e4m3_decode(s) == 0.0f ? nvfp4_core_e4m3_encode(NVFP4_CORE_CT_ZERO_SCALE, 1) : s;
    }
    case NVFP4_CORE_BSCALE_4OVER6_MAE:
    case NVFP4_CORE_BSCALE_4OVER6_MSE:
    case NVFP4_CORE_BSCALE_4OVER6_MAE_FP16:
    case NVFP4_CORE_BSCALE_4OVER6_MSE_FP16:
    default: { /* the map-to-6 candidate (the loops choose with nvfp4_core_4over6_*) */
        float base = (bamax / r->elem_max) * g->s_enc;
        return nvfp4_core_e4m3_encode(nvfp4_core_fminf(base, NVFP4_E4M3_MAX), 1);
    }
    }
}

/* The power-of-two divisor of a UE8M0 block's element encode. ENC_POW2:
 * 2^(e-127), NaN for 0xFF. ENC_POW2_FP32 (torchao to_mx): the fp32 whose
 * exponent field is e (e << 23: +0 for 0x00, +Inf for 0xFF), raised to
 * pow2_scale_min (torchao clamps it to the smallest normal, 2^-126). */
NVFP4_HD static inline float nvfp4_core_pow2_scale(const nvfp4_core_recipe *r, uint8_t e)
{
    if (r->enc_rule != NVFP4_CORE_ENC_POW2_FP32) return nvfp4_core_ue8m0_decode(e);
    float s = nvfp4_core_f32_from_bits((uint32_t)e << 23);
    if (s < r->pow2_scale_min) s = r->pow2_scale_min;
    return s;
}

/* The dequantization scale of one block (what fp4(q) is multiplied by). */
NVFP4_HD static inline float nvfp4_core_dequant_scale(const nvfp4_core_recipe *r, const nvfp4_core_global *g, uint8_t s)
{
    switch (r->dequant_rule) {
    case NVFP4_CORE_DEQ_TE: {
        float t = nvfp4_core_scale_decode(r, s) * g->amax;
        return t * (r->scale_format == NVFP4_CORE_SCALE_UE5M3 ? NVFP4_CORE_INV688128 : NVFP4_CORE_INV2688);
    }
    case NVFP4_CORE_DEQ_GLOBAL_MUL:
        return g->g * nvfp4_core_e4m3_decode(s);
    case NVFP4_CORE_DEQ_POW2:
        return nvfp4_core_ue8m0_decode(s);
    case NVFP4_CORE_DEQ_TE_256: {
        float t = nvfp4_core_e4m3_decode(s) * g->amax;
        return t * NVFP4_CORE_INV1536;
    }
    case NVFP4_CORE_DEQ_SCALE_DIV_GLOBAL:
        return nvfp4_core_e4m3_decode(s) / g->s_enc;
    case NVFP4_CORE_DEQ_PER_TOKEN:
        return nvfp4_core_scale_decode(r, s); /* the per-token factor comes after: nvfp4_core_dequant_value */
    }
    return 0.0f;
}

/* FlashInfer's per-token FP32 scale of a row whose amax is `amax`: 1/S_enc
 * (S_enc the `te` rule of that amax), and 0 for an all-zero row.
 * flashinfer-ai/flashinfer fb28d72 tests/utils/test_fp4_quantize.py
 * (expected_per_token_scale = where(amax == 0, 0, nvfp4_global_decode_scale_te(amax))). */
NVFP4_HD static inline float nvfp4_core_per_token_scale(const nvfp4_core_global *g)
{
    return g->amax == 0.0f ? 0.0f : g->s_dec;
}

NVFP4_HD static inline nvfp4_core_block nvfp4_core_block_prepare(const nvfp4_core_recipe *r, const nvfp4_core_global *g, uint8_t s)
{
    nvfp4_core_block b;
    b.scale = s;
    switch (r->enc_rule) {
    case NVFP4_CORE_ENC_TE_RECIP: {
        float d = nvfp4_core_scale_decode(r, s) * g->s_dec;
        b.factor = nvfp4_core_fminf(1.0f / d, NVFP4_CORE_FLT_MAX); /* s = 0: 1/0 = Inf -> FLT_MAX */
        break;
    }
    case NVFP4_CORE_ENC_DIV_TOTAL:
        b.factor = g->g * nvfp4_core_e4m3_decode(s);
        break;
    case NVFP4_CORE_ENC_RECIP_DIV: {
        /* torchao: reciprocal_scale = (1.0 / per_tensor_scale) / fp8_scale;
         * g <= 2^-128 gives 1/g = +Inf (nonzero x -> +-6, zero x -> NaN). */
        float inv_g = 1.0f / g->g;
        b.factor = inv_g / nvfp4_core_e4m3_decode(s);
        break;
    }
    case NVFP4_CORE_ENC_EXACT:
    case NVFP4_CORE_ENC_GGML_NEAREST:
        b.factor = nvfp4_core_dequant_scale(r, g, s);
        break;
    case NVFP4_CORE_ENC_SAFE_RECIP: {
        float d = nvfp4_core_e4m3_decode(s) * nvfp4_core_safe_recip(g->s_enc);
        b.factor = nvfp4_core_safe_recip(d);
        break;
    }
    case NVFP4_CORE_ENC_DIV_SCALE_GLOBAL:
        b.factor = nvfp4_core_e4m3_decode(s) / g->s_enc; /* scale / global_scale, then x / that */
        break;
    case NVFP4_CORE_ENC_GLOBAL_OVER_SCALE:
        b.factor = nvfp4_core_fminf(g->s_enc / nvfp4_core_e4m3_decode(s), NVFP4_CORE_FLT_MAX);
        break;
    case NVFP4_CORE_ENC_TE_BF16: {
        /* S_enc / s correctly rounded (s = 0: Inf -> BF16_MAX), then bf16 RN */
        float c = nvfp4_core_fminf(g->s_enc / nvfp4_core_e4m3_decode(s), NVFP4_CORE_BF16_MAX);
        b.factor = nvfp4_core_round_bf16(c);
        break;
    }
    default: /* NVFP4_CORE_ENC_POW2, NVFP4_CORE_ENC_POW2_FP32 */
        b.factor = nvfp4_core_pow2_scale(r, s);
        break;
    }
    return b;
}

/* ---- elements --------------------------------------------------------- */

/* The value that is cast to the element format. */
NVFP4_HD static inline float nvfp4_core_scaled(const nvfp4_core_recipe *r, const nvfp4_core_block *b, float x)
{
    if (r->enc_rule == NVFP4_CORE_ENC_TE_RECIP || r->enc_rule == NVFP4_CORE_ENC_RECIP_DIV ||
        r->enc_rule == NVFP4_CORE_ENC_SAFE_RECIP || r->enc_rule == NVFP4_CORE_ENC_GLOBAL_OVER_SCALE)
        return x * b->factor;
    if (r->enc_rule == NVFP4_CORE_ENC_TE_BF16) {
        /* fma(x, c, +0) rounds the exact product once; in binary64 the
         * product of an fp32 and a bf16 is exact, and + 0.0 turns only an
         * exact -0 product into +0, as the fma's zero addend does */
        double p = (double)x * (double)b->factor;
        return (float)(p + 0.0);
    }
    return x / b->factor;
}

/* E2M1 magnitude of the real quotient |x|/D, correctly rounded (ties to the
 * even code), decided by comparing |x| with D*boundary in binary64, which is
 * exact: D has 24 significant bits and every boundary (a midpoint of two
 * adjacent E2M1 values) at most 3. D = 0 sends every nonzero |x| to 6. */
NVFP4_HD static inline uint32_t nvfp4_core_e2m1_exact_mag(float ax, float d)
{
    double a = (double)ax, dd = (double)d;
    for (uint32_t k = 0; k < 7u; k++) {
        double mid = ((double)nvfp4_core_e2m1_mag_value(k) + (double)nvfp4_core_e2m1_mag_value(k + 1u)) * 0.5;
        double bound = dd * mid;
        if (a < bound) return k;
        if (a == bound) return (k & 1u) ? k + 1u : k;
    }
    return 7u;
}

/* Final E2M1 cast of y with the recipe's special-value policy. */
NVFP4_HD static inline uint8_t nvfp4_core_e2m1_cast(const nvfp4_core_recipe *r, float y, int mode, uint8_t rbits)
{
    int nan = nvfp4_core_isnan(y);
    switch (r->special) {
    case NVFP4_CORE_SPECIAL_PYREF:
        if (nan || y == 0.0f) return 0x0u;
        break;
    case NVFP4_CORE_SPECIAL_PYREF_BF16:
        if (nan) return 0x8u;
        if (y == 0.0f) return 0x0u;
        break;
    case NVFP4_CORE_SPECIAL_TORCHAO:
        if (nan) return 0x3u;
        break;
    case NVFP4_CORE_SPECIAL_MODELOPT:
        if (y == 0.0f) return 0x0u;
        break;
    default:
        break;
    }
    return nvfp4_core_e2m1_encode(y, mode, rbits);
}

/* llama.cpp best_index_mxfp4 with d = s/2 and its doubled value table: the
 * products fp4(k)*s are exact, so each error is the fp32 fabsf(fp4(k)*s - x)
 * (an FMA gives the same); the first smallest error wins, and NaN errors
 * never win (a NaN or infinite x gives 0x0). */
NVFP4_HD static inline uint8_t nvfp4_core_ggml_nearest(float x, float s)
{
    uint8_t best = 0u;
    float best_err = nvfp4_core_fabs(0.0f - x);
    for (uint8_t k = 1u; k < 16u; k++) {
        float p = nvfp4_core_e2m1_decode(k) * s;
        float err = nvfp4_core_fabs(p - x);
        if (err < best_err) {
            best = k;
            best_err = err;
        }
    }
    return best;
}

/* One element -> its code (E2M1: 4 bits; E4M3: 8 bits). mode is an
 * nvfp4_core_rounding (RN or SR); rbits are the element's 8 random bits. */
NVFP4_HD static inline uint8_t nvfp4_core_encode_elem(const nvfp4_core_recipe *r, const nvfp4_core_block *b, float x, int mode,
                                                      uint8_t rbits)
{
    if (r->enc_rule == NVFP4_CORE_ENC_EXACT) {
        if (nvfp4_core_isnan(x)) return (uint8_t)NVFP4_E2M1_NAN_CODE;
        uint32_t sign = (uint32_t)nvfp4_core_signbit(x) << 3;
        return (uint8_t)(sign | nvfp4_core_e2m1_exact_mag(nvfp4_core_fabs(x), b->factor));
    }
    if (r->enc_rule == NVFP4_CORE_ENC_GGML_NEAREST) return nvfp4_core_ggml_nearest(x, b->factor);
    float y = nvfp4_core_scaled(r, b, x);
    if (r->elem == NVFP4_CORE_ELEM_E4M3) return nvfp4_core_e4m3_encode(y, 1);
    return nvfp4_core_e2m1_cast(r, y, mode, rbits);
}

/* Element code -> its value in the element format (before scaling), as the
 * recipe's decoder has it: modelopt's table holds +0 for code 0x8. */
NVFP4_HD static inline float nvfp4_core_elem_value(const nvfp4_core_recipe *r, uint8_t code)
{
    if (r->elem == NVFP4_CORE_ELEM_E4M3) return nvfp4_core_e4m3_decode(code);
    if ((r->special == NVFP4_CORE_SPECIAL_MODELOPT || r->special == NVFP4_CORE_SPECIAL_GGML) && code == 0x8u) return 0.0f;
    return nvfp4_core_e2m1_decode(code);
}

NVFP4_HD static inline float nvfp4_core_dequant_elem(const nvfp4_core_recipe *r, float dscale, uint8_t code)
{
    return nvfp4_core_elem_value(r, code) * dscale;
}

/* The dequantized value of one code under block-scale byte s: fp4(q) times
 * the block's dequantization scale, and for DEQ_PER_TOKEN (FlashInfer
 * e2m1_and_ufp8sf_scale_to_float then `dq *= per_token_scale`) the exact
 * product fp4(q) * (float)s times the row's per-token scale, rounded once. */
/* The same, given the block's dequantization scale d (nvfp4_core_dequant_scale):
 * for kernels that decode the scale once per block. */
/* Every NaN it returns is the one canonical quiet NaN 0x7FC00000 (sign and
 * payload dropped): the bits of a NaN made by an invalid product (0 * Inf)
 * are the hardware's default NaN (0xFFC00000 on x86, 0x7FC00000 on ARM,
 * 0x7FFFFFFF on an NVIDIA GPU) and which operand's payload a product of two
 * NaNs keeps is the compiler's choice, so without this the same bytes would
 * dequantize to different bits on each platform. */
NVFP4_HD static inline float nvfp4_core_dequant_scaled(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float d,
                                                       uint8_t code)
{
    float v = nvfp4_core_dequant_elem(r, d, code);
    if (r->dequant_rule == NVFP4_CORE_DEQ_PER_TOKEN) v *= nvfp4_core_per_token_scale(g);
    return nvfp4_core_isnan(v) ? nvfp4_core_f32_from_bits(NVFP4_CORE_CANONICAL_NAN) : v;
}

NVFP4_HD static inline float nvfp4_core_dequant_value(const nvfp4_core_recipe *r, const nvfp4_core_global *g, uint8_t s,
                                                      uint8_t code)
{
    return nvfp4_core_dequant_scaled(r, g, nvfp4_core_dequant_scale(r, g, s), code);
}

/* ---- 4over6: the per-block choice between two scales ---------------------
 *
 * TransformerEngine quantize_4over6_nvfp4.cuh (compute_scale_pair,
 * accumulate_dequant_error, accumulate_fp16_scaled_error_pair,
 * reduce_group_sum_16; NVIDIA/TransformerEngine d0067d0d) and its Python
 * reference _quantize_blockwise_4over6_reference (reference_nvfp4.py).
 * A tensor loop calls nvfp4_core_4over6_scales for the two candidate bytes,
 * nvfp4_core_4over6_seg_error for each candidate and each 16-element segment
 * of the block (1x16: one segment; 16x16: the tile's 16 rows, summed with
 * nvfp4_core_4over6_tile_sum), and keeps nvfp4_core_4over6_pick's byte; the
 * codes are then those of the chosen byte under the recipe's encode rule,
 * which are exactly the codes the error was measured on. */

NVFP4_HD static inline int nvfp4_core_is_4over6(const nvfp4_core_recipe *r)
{
    return r->bscale_rule >= NVFP4_CORE_BSCALE_4OVER6_MAE && r->bscale_rule <= NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
}

/* The map-to-4 (*s4) and map-to-6 (*s6) scale bytes: base = (bamax / 6) *
 * S_enc, a division and a product as TE writes them (not the `te` chain's
 * bamax * (S_enc * fl(1/6))); fminf sends Inf to 448; RN to E4M3. */
NVFP4_HD static inline void nvfp4_core_4over6_scales(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float bamax,
                                                     uint8_t *s4, uint8_t *s6)
{
    float base = (bamax / r->elem_max) * g->s_enc;
    float expanded = base * 1.5f;
    *s4 = nvfp4_core_e4m3_encode(nvfp4_core_fminf(expanded, NVFP4_E4M3_MAX), 1);
    *s6 = nvfp4_core_e4m3_encode(nvfp4_core_fminf(base, NVFP4_E4M3_MAX), 1);
}

/* The error of one 16-element segment x[0..15] quantized with scale byte s:
 * a left-to-right fp32 sum over the elements of |diff| (MAE) or diff*diff
 * (MSE), every operation rounded on its own. Exact path: diff = ((fp4(q) *
 * s) * amax) / (6 * E4M3 bound) - x, with a true division. FP16 path: diff
 * = fp4(q) * s - x * S_enc (the kernel's fp16 product of two such values is
 * exact: at most 8 significant bits, between 2^-10 and 2688). A NaN element
 * makes the sum NaN, so that candidate is never picked. */
NVFP4_HD static inline float nvfp4_core_4over6_seg_error(const nvfp4_core_recipe *r, const nvfp4_core_global *g, uint8_t s,
                                                         const float *x)
{
    nvfp4_core_block blk = nvfp4_core_block_prepare(r, g, s);
    int fp16 = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MAE_FP16 || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    int mse = r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE || r->bscale_rule == NVFP4_CORE_BSCALE_4OVER6_MSE_FP16;
    float denom = r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE_256 ? NVFP4_CORE_1536 : NVFP4_CORE_2688;
    float sf = nvfp4_core_e4m3_decode(s);
    float err = 0.0f;
    for (int k = 0; k < 16; k++) {
        float v = nvfp4_core_e2m1_decode(nvfp4_core_encode_elem(r, &blk, x[k], NVFP4_CORE_RN, 0));
        float cand = v * sf, diff;
        if (fp16) {
            float orig = x[k] * g->s_enc;
            diff = cand - orig;
        } else {
            float t = cand * g->amax;
            float val = t / denom;
            diff = val - x[k];
        }
        float e = mse ? diff * diff : nvfp4_core_fabs(diff);
        err = err + e;
    }
    return err;
}

/* The 16 row errors of a 16x16 tile summed in the order of TE's warp
 * reduction (__shfl_down_sync with offsets 8, 4, 2, 1; the Python reference
 * _sum_4over6_2d_error adds the same halves). */
NVFP4_HD static inline float nvfp4_core_4over6_tile_sum(const float e[16])
{
    float a[8];
    for (int i = 0; i < 8; i++) a[i] = e[i] + e[i + 8];
    for (int i = 0; i < 4; i++) a[i] = a[i] + a[i + 4];
    for (int i = 0; i < 2; i++) a[i] = a[i] + a[i + 2];
    return a[0] + a[1];
}

/* pick_map4 = err_map4 < err_map6: ties and NaN errors keep map-to-6. */
NVFP4_HD static inline uint8_t nvfp4_core_4over6_pick(float err4, float err6, uint8_t s4, uint8_t s6)
{
    return err4 < err6 ? s4 : s6;
}

/* The chosen byte of a 1x16 block x[0..15] whose amax is bamax. */
NVFP4_HD static inline uint8_t nvfp4_core_4over6_seg(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float bamax,
                                                     const float *x)
{
    uint8_t s4, s6;
    nvfp4_core_4over6_scales(r, g, bamax, &s4, &s6);
    float e4 = nvfp4_core_4over6_seg_error(r, g, s4, x);
    float e6 = nvfp4_core_4over6_seg_error(r, g, s6, x);
    return nvfp4_core_4over6_pick(e4, e6, s4, s6);
}

#endif /* NVFP4_CORE_RECIPE_H */
