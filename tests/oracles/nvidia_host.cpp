/*
 * nvidia_host.cpp - thin extern "C" wrappers around NVIDIA's host conversion
 * code (cuda_fp4.hpp, cuda_fp8.hpp, cuda_bf16.hpp, cuda_fp16.hpp) and
 * cuRAND's host Philox generator, used as independent oracles by the tests.
 * Compiled with g++ (not nvcc), so every conversion runs NVIDIA's portable
 * host branch (__CUDA_ARCH__ undefined).
 *
 * libcurand is opened with dlopen at the first use rather than relied on at
 * load time, so a toolkit without a usable libcurand makes the cuRAND tests
 * skip (oracle_curand_philox_host returns an error status) instead of
 * stopping the whole test binary.
 */
#include <cstring>

#include <dlfcn.h>

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

typedef curandStatus_t (*create_fn)(curandGenerator_t *, curandRngType_t);
typedef curandStatus_t (*seed_fn)(curandGenerator_t, unsigned long long);
typedef curandStatus_t (*offset_fn)(curandGenerator_t, unsigned long long);
typedef curandStatus_t (*ordering_fn)(curandGenerator_t, curandOrdering_t);
typedef curandStatus_t (*generate_fn)(curandGenerator_t, unsigned int *, size_t);
typedef curandStatus_t (*destroy_fn)(curandGenerator_t);

struct curand_api {
    create_fn create;
    seed_fn seed;
    offset_fn offset;
    ordering_fn ordering;
    generate_fn generate;
    destroy_fn destroy;
};

/* The host-generator entry points, or NULL when no libcurand can be opened. */
static const curand_api *curand_host_api(void)
{
    static curand_api api;
    static int state = 0; /* 0 untried, 1 ok, -1 unusable */
    if (state == 0) {
        state = -1;
        const char *names[] = {"libcurand.so", "libcurand.so.10"};
        void *h = NULL;
        for (const char *n : names)
            if ((h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) != NULL) break;
        if (h) {
            api.create = (create_fn)dlsym(h, "curandCreateGeneratorHost");
            api.seed = (seed_fn)dlsym(h, "curandSetPseudoRandomGeneratorSeed");
            api.offset = (offset_fn)dlsym(h, "curandSetGeneratorOffset");
            api.ordering = (ordering_fn)dlsym(h, "curandSetGeneratorOrdering");
            api.generate = (generate_fn)dlsym(h, "curandGenerate");
            api.destroy = (destroy_fn)dlsym(h, "curandDestroyGenerator");
            if (api.create && api.seed && api.offset && api.ordering && api.generate && api.destroy) state = 1;
        }
    }
    return state == 1 ? &api : NULL;
}

extern "C" int oracle_curand_philox_host(uint64_t seed, uint64_t offset, int ordering, uint32_t *out, size_t n)
{
    const curand_api *api = curand_host_api();
    if (!api) return -1;
    curandGenerator_t g;
    curandStatus_t s = api->create(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10);
    if (s != CURAND_STATUS_SUCCESS) return (int)s;
    s = api->seed(g, (unsigned long long)seed);
    if (s == CURAND_STATUS_SUCCESS) s = api->offset(g, (unsigned long long)offset);
    if (s == CURAND_STATUS_SUCCESS && ordering != 0) s = api->ordering(g, (curandOrdering_t)ordering);
    if (s == CURAND_STATUS_SUCCESS) s = api->generate(g, out, n);
    api->destroy(g);
    return (int)s;
}
