/*
 * check_explain.h - the CPU verifier's explanation of a CUDA check
 * (nvfp4_cuda_check_quantized): the reasons of the first mismatches and the
 * cause lines, as `nvfp4 verify` reports them (src/cuda/check_explain.cu).
 */
#ifndef NVFP4_CUDA_CHECK_EXPLAIN_H
#define NVFP4_CUDA_CHECK_EXPLAIN_H

#include "nvfp4/cuda.h"

/* t: our device result of the orientation; x, codes, scales: device; amax: host. */
nvfp4_status nvfp4_cu_check_explain(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                    const nvfp4_cuda_quantized *q, bool columnwise, const uint8_t *codes,
                                    const uint8_t *scales, bool scales_swizzled, const float *amax,
                                    nvfp4_cuda_check_report *rep, nvfp4_error *err);

#endif /* NVFP4_CUDA_CHECK_EXPLAIN_H */
