/*
 * oracles.h - independent oracles from NVIDIA's CUDA toolkit, as plain C
 * functions for the Check suites (the files tests/oracles/NAME.cpp are compiled with g++
 * against $(CUDA_HOME)/include and linked with -lcurand only where the
 * toolkit is present; the Makefile then defines NVFP4_HAVE_CUDA_ORACLES=1).
 *
 * Encoders call the host conversion code of cuda_fp4.hpp, cuda_fp8.hpp,
 * cuda_bf16.hpp and cuda_fp16.hpp; they are NVIDIA's code, not ours.
 */
#ifndef NVFP4_TESTS_ORACLES_H
#define NVFP4_TESTS_ORACLES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* __nv_cvt_float_to_fp4(x, __NV_E2M1, rz ? cudaRoundZero : cudaRoundNearest) */
uint8_t oracle_e2m1_from_f32(float x, int rz);
/* __nv_cvt_float_to_fp8(x, sat ? __NV_SATFINITE : __NV_NOSAT, __NV_E4M3) */
uint8_t oracle_e4m3_from_f32(float x, int saturate);
/* __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, rp ? cudaRoundPosInf : cudaRoundZero) */
uint8_t oracle_ue8m0_from_f32(float x, int round_up);
/* __float2bfloat16_rn(x) and __float2half_rn(x), as raw bits */
uint16_t oracle_bf16_from_f32(float x);
uint16_t oracle_fp16_from_f32(float x);

/* Decoders: fp4 -> halfraw -> float, fp8 e4m3 -> halfraw -> float,
 * e8m0 -> bf16raw -> float, bf16 -> float, half -> float. */
float oracle_e2m1_to_f32(uint8_t code);
float oracle_e4m3_to_f32(uint8_t code);
float oracle_ue8m0_to_f32(uint8_t code);
float oracle_bf16_to_f32(uint16_t bits);
float oracle_fp16_to_f32(uint16_t bits);

/* cuRAND's host generator CURAND_RNG_PSEUDO_PHILOX4_32_10: creates a host
 * generator, sets the seed, the offset and the ordering (a curandOrdering_t
 * value, 0 = leave the default), generates n 32-bit words with
 * curandGenerate into out. Returns 0 on success, else the curandStatus_t
 * of the first call that failed, or -1 when no libcurand could be opened. */
int oracle_curand_philox_host(uint64_t seed, uint64_t offset, int ordering, uint32_t *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* NVFP4_TESTS_ORACLES_H */
