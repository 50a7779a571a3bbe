/*
 * nvidia_host.cpp - thin extern "C" wrappers around NVIDIA's host conversion
 * code (cuda_fp4.hpp, cuda_fp8.hpp, cuda_bf16.hpp, cuda_fp16.hpp) and
 * cuRAND's host Philox generator, used as independent oracles by the tests.
 * Compiled with g++ (not nvcc), so every conversion runs NVIDIA's portable
 * host branch (__CUDA_ARCH__ undefined).
 */
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>
#include <curand.h>

#include "oracles.h"

extern "C" uint8_t oracle_e2m1_from_f32(float x, int rz)
{
    return (uint8_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, rz ? cudaRoundZero : cudaRoundNearest);
}

extern "C" uint8_t oracle_e4m3_from_f32(float x, int saturate)
{
    return (uint8_t)__nv_cvt_float_to_fp8(x, saturate ? __NV_SATFINITE : __NV_NOSAT, __NV_E4M3);
}

extern "C" uint8_t oracle_ue8m0_from_f32(float x, int round_up)
{
    return (uint8_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, round_up ? cudaRoundPosInf : cudaRoundZero);
}

extern "C" uint16_t oracle_bf16_from_f32(float x)
{
    __nv_bfloat16_raw r = __float2bfloat16_rn(x);
    return r.x;
}

extern "C" uint16_t oracle_fp16_from_f32(float x)
{
    __half_raw r = __float2half_rn(x);
    return r.x;
}

static float half_raw_to_float(__half_raw h) { return __half2float(__half(h)); }

extern "C" float oracle_e2m1_to_f32(uint8_t code)
{
    return half_raw_to_float(__nv_cvt_fp4_to_halfraw((__nv_fp4_storage_t)code, __NV_E2M1));
}

extern "C" float oracle_e4m3_to_f32(uint8_t code)
{
    return half_raw_to_float(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, __NV_E4M3));
}

extern "C" float oracle_ue8m0_to_f32(uint8_t code)
{
    return __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)code)));
}

extern "C" float oracle_bf16_to_f32(uint16_t bits)
{
    __nv_bfloat16_raw r;
    r.x = bits;
    return __bfloat162float(__nv_bfloat16(r));
}

extern "C" float oracle_fp16_to_f32(uint16_t bits)
{
    __half_raw r;
    r.x = bits;
    return half_raw_to_float(r);
}

extern "C" int oracle_curand_philox_host(uint64_t seed, uint64_t offset, int ordering, uint32_t *out, size_t n)
{
    curandGenerator_t g;
    curandStatus_t s = curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10);
    if (s != CURAND_STATUS_SUCCESS) return (int)s;
    s = curandSetPseudoRandomGeneratorSeed(g, (unsigned long long)seed);
    if (s == CURAND_STATUS_SUCCESS) s = curandSetGeneratorOffset(g, (unsigned long long)offset);
    if (s == CURAND_STATUS_SUCCESS && ordering != 0) s = curandSetGeneratorOrdering(g, (curandOrdering_t)ordering);
    if (s == CURAND_STATUS_SUCCESS) s = curandGenerate(g, out, n);
    curandDestroyGenerator(g);
    return (int)s;
}
