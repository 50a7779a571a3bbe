/*
 * internal.h - C++ entry points of nvfp4_cuda.cu that the benchmark
 * (nvfp4_gpu_main.cu) needs and the public C API does not offer: a quantize
 * split into prepare (options, shapes, global amax, allocation) and the bare
 * kernel launch, so that the timed region holds the kernel alone.
 */
#ifndef NVFP4_CUDA_INTERNAL_H
#define NVFP4_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include "nvfp4/cuda.h"
#include "cuda/items.cuh"

struct nvfp4_cu_prepared {
    nvfp4_cuda_quantized q; /* resolved options */
    nvfp4_cu_qparams p;     /* kernel parameters, amax and buffers filled in */
    nvfp4_cuda_qtensor t;   /* the one orientation's buffers (no swizzled copy) */
};

/* ---- the device layer (device.cu) ---- */
/* A CUDA error as an nvfp4 status: no device -> EUNSUPPORTED, out of memory -> ENOMEM, else EIO. */
nvfp4_status nvfp4_cu_fail(nvfp4_error *err, cudaError_t e, const char *what);
#define CU_TRY(call, what)                                          \
    do {                                                            \
        cudaError_t e_ = (call);                                    \
        if (e_ != cudaSuccess) return nvfp4_cu_fail(err, e_, what); \
    } while (0)
/* OK when emulating or a device is there, else EUNSUPPORTED naming why. */
nvfp4_status nvfp4_cu_need_device(nvfp4_error *err);
/* Zeroes bytes of device (or emulated) memory. */
nvfp4_status nvfp4_cu_memset0(void *p, size_t bytes, nvfp4_error *err);

/* Launches return without waiting when sync is off (default: on). */
void nvfp4_cu_set_sync(bool on);

nvfp4_status nvfp4_cu_quantize_prepare(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                       const nvfp4_quant_opts *opts, bool colwise, nvfp4_cu_prepared *pp,
                                       nvfp4_error *err);
nvfp4_status nvfp4_cu_quantize_launch(const nvfp4_cu_prepared *pp, nvfp4_error *err);
/* The amax pass alone into d_out (device uint32, zeroed by the caller). */
nvfp4_status nvfp4_cu_amax_launch(const void *x, nvfp4_dtype dtype, size_t n, uint32_t *d_out, nvfp4_error *err);
void nvfp4_cu_prepared_free(nvfp4_cu_prepared *pp);

#endif /* NVFP4_CUDA_INTERNAL_H */
