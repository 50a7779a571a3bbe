/*
 * device.cu - the device layer of the CUDA path: whether a GPU is there,
 * the emulation switch (the self-test's kernels run on the CPU through the
 * same items), allocation, host<->device copies and zeroing, and the
 * translation of CUDA errors. Everything else in src/cuda calls down into
 * it; it calls nothing there.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/internal.h"

static bool g_emulate = false;
extern "C" void nvfp4_cuda_set_emulation(bool on) { g_emulate = on; }
extern "C" bool nvfp4_cuda_emulation(void) { return g_emulate; }

/* ---- errors -------------------------------------------------------------- */
nvfp4_status nvfp4_cu_fail(nvfp4_error *err, cudaError_t e, const char *what)
{
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "no CUDA device: %s (%s)", cudaGetErrorString(e), what);
    if (e == cudaErrorMemoryAllocation)
        return nvfp4_error_set(err, NVFP4_ENOMEM, "CUDA out of memory (%s)", what);
    return nvfp4_error_set(err, NVFP4_EIO, "CUDA error in %s: %s", what, cudaGetErrorString(e));
}


extern "C" int nvfp4_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

nvfp4_status nvfp4_cu_need_device(nvfp4_error *err)
{
    if (g_emulate) return NVFP4_OK;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "no CUDA device: %s",
                               e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
    }
    return NVFP4_OK;
}

extern "C" nvfp4_status nvfp4_cuda_device_describe(char *buf, size_t n, nvfp4_error *err)
{
    if (g_emulate) {
        snprintf(buf, n, "host emulation (no GPU; kernel bodies run on the CPU)");
        return NVFP4_OK;
    }
    nvfp4_status st = nvfp4_cu_need_device(err);
    if (st) return st;
    int dev = 0, drv = 0, rt = 0;
    cudaDeviceProp prop;
    CU_TRY(cudaGetDevice(&dev), "cudaGetDevice");
    CU_TRY(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    CU_TRY(cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
    CU_TRY(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    snprintf(buf, n, "%s (sm_%d%d, %d SMs, %.0f GiB), CUDA driver %d.%d, runtime %d.%d", prop.name, prop.major,
             prop.minor, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
             drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
    return NVFP4_OK;
}

/* ---- memory ----------------------------------------------------------------- */
extern "C" nvfp4_status nvfp4_cuda_alloc(void **dptr, size_t bytes, nvfp4_error *err)
{
    *dptr = NULL;
    if (bytes == 0) bytes = 1;
    if (g_emulate) {
        *dptr = calloc(1, bytes);
        return *dptr ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory (%zu bytes)", bytes);
    }
    nvfp4_status st = nvfp4_cu_need_device(err);
    if (st) return st;
    CU_TRY(cudaMalloc(dptr, bytes), "cudaMalloc");
    return NVFP4_OK;
}

extern "C" void nvfp4_cuda_free(void *dptr)
{
    if (!dptr) return;
    if (g_emulate) free(dptr);
    else (void)cudaFree(dptr);
}

static nvfp4_status copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, nvfp4_error *err)
{
    if (bytes == 0) return NVFP4_OK;
    if (g_emulate) {
        memcpy(dst, src, bytes);
        return NVFP4_OK;
    }
    CU_TRY(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
    return NVFP4_OK;
}

extern "C" nvfp4_status nvfp4_cuda_upload(void *dst, const void *src, size_t bytes, nvfp4_error *err)
{
    return copy(dst, src, bytes, cudaMemcpyHostToDevice, err);
}

extern "C" nvfp4_status nvfp4_cuda_download(void *dst, const void *src, size_t bytes, nvfp4_error *err)
{
    return copy(dst, src, bytes, cudaMemcpyDeviceToHost, err);
}

nvfp4_status nvfp4_cu_memset0(void *p, size_t bytes, nvfp4_error *err)
{
    if (g_emulate) {
        memset(p, 0, bytes);
        return NVFP4_OK;
    }
    CU_TRY(cudaMemset(p, 0, bytes), "cudaMemset");
    return NVFP4_OK;
}
