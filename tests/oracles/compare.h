/*
 * compare.h - the table of (our encoder, NVIDIA's host encoder) pairs that
 * the Check suite (sampled) and tests/long_oracle.c (exhaustive) compare bit
 * for bit. Only meaningful with NVFP4_HAVE_CUDA_ORACLES.
 */
#ifndef NVFP4_TESTS_ORACLES_COMPARE_H
#define NVFP4_TESTS_ORACLES_COMPARE_H

#include "nvfp4.h"
#include "oracles/oracles.h"

typedef struct {
    const char *name;
    uint32_t (*ours)(float);
    uint32_t (*nvidia)(float);
} oracle_encoder_pair;

static uint32_t ours_e2m1_rn(float x) { return nvfp4_e2m1_from_f32(x, NVFP4_RN, 0); }
static uint32_t ours_e2m1_rz(float x) { return nvfp4_e2m1_from_f32(x, NVFP4_RZ, 0); }
static uint32_t ours_e4m3_sat(float x) { return nvfp4_e4m3_from_f32(x, true); }
static uint32_t ours_e4m3_nosat(float x) { return nvfp4_e4m3_from_f32(x, false); }
static uint32_t ours_ue8m0_floor(float x) { return nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_FLOOR); }
static uint32_t ours_ue8m0_rceil(float x) { return nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RCEIL); }
static uint32_t ours_bf16(float x) { return nvfp4_bf16_from_f32(x); }
static uint32_t ours_fp16(float x) { return nvfp4_fp16_from_f32(x); }

static uint32_t nv_e2m1_rn(float x) { return oracle_e2m1_from_f32(x, 0); }
static uint32_t nv_e2m1_rz(float x) { return oracle_e2m1_from_f32(x, 1); }
static uint32_t nv_e4m3_sat(float x) { return oracle_e4m3_from_f32(x, 1); }
static uint32_t nv_e4m3_nosat(float x) { return oracle_e4m3_from_f32(x, 0); }
static uint32_t nv_ue8m0_rz(float x) { return oracle_ue8m0_from_f32(x, 0); }
static uint32_t nv_ue8m0_rp(float x) { return oracle_ue8m0_from_f32(x, 1); }
static uint32_t nv_bf16(float x) { return oracle_bf16_from_f32(x); }
static uint32_t nv_fp16(float x) { return oracle_fp16_from_f32(x); }

static const oracle_encoder_pair oracle_encoders[] = {
    {"e2m1 rn (__nv_cvt_float_to_fp4 cudaRoundNearest)", ours_e2m1_rn, nv_e2m1_rn},
    {"e2m1 rz (__nv_cvt_float_to_fp4 cudaRoundZero)", ours_e2m1_rz, nv_e2m1_rz},
    {"e4m3 satfinite (__nv_cvt_float_to_fp8 __NV_SATFINITE)", ours_e4m3_sat, nv_e4m3_sat},
    {"e4m3 nosat (__nv_cvt_float_to_fp8 __NV_NOSAT)", ours_e4m3_nosat, nv_e4m3_nosat},
    {"ue8m0 floor (__nv_cvt_float_to_e8m0 satfinite cudaRoundZero)", ours_ue8m0_floor, nv_ue8m0_rz},
    {"ue8m0 rceil (__nv_cvt_float_to_e8m0 satfinite cudaRoundPosInf)", ours_ue8m0_rceil, nv_ue8m0_rp},
    {"bf16 (__float2bfloat16_rn)", ours_bf16, nv_bf16},
    {"fp16 (__float2half_rn)", ours_fp16, nv_fp16},
};
enum { ORACLE_N_ENCODERS = (int)(sizeof oracle_encoders / sizeof oracle_encoders[0]) };

#endif /* NVFP4_TESTS_ORACLES_COMPARE_H */
