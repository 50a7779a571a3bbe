/*
 * nvfp4/bench.h - the fast CPU kernels as `nvfp4 bench` times them: a table
 * of named kernels (the te recipe's rowwise, 16x16, columnwise, RHT and
 * dequantize kernels, MXFP4, amax, the scale swizzle), each with the bytes
 * it reads and writes per element, run on the caller's buffers with the
 * active SIMD variant (nvfp4/simd.h) and OpenMP threads.
 *
 * The caller owns every buffer (so it decides alignment and page size) and
 * the timing; the library owns what each kernel is. Results are the fast
 * path's bytes, but this is a measuring tool: use nvfp4_quantize for data.
 */
#ifndef NVFP4_BENCH_H
#define NVFP4_BENCH_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

/* The kernels' buffers, all rows x cols elements of one tensor (cols a
 * multiple of 32, rows a multiple of 16). */
typedef struct {
    size_t rows, cols;
    const float *x;            /* the input, row-major fp32 */
    const uint16_t *x_bf16;    /* the same tensor as bf16 bits (the bf16-input kernels) */
    float *f32_out;            /* rows*cols floats: dequantize writes here */
    uint8_t *data, *scale;     /* rowwise codes (rows*cols/2 bytes) and scales (rows*cols/16) */
    uint8_t *col_data, *col_scale; /* columnwise codes and scales, the same sizes */
    uint8_t *swizzled;         /* nvfp4_swizzled_size(rows, cols/16) bytes */
} nvfp4_bench_buffers;

typedef struct nvfp4_bench nvfp4_bench; /* prepared state (amaxes, columnwise jobs) */

size_t nvfp4_bench_kernel_count(void);
/* Kernel k's name, e.g. "quant_1x16_rn" (NULL past the end). */
const char *nvfp4_bench_kernel_name(size_t k);
/* Bytes kernel k reads and writes per input element (the input once, each
 * output once). */
double nvfp4_bench_kernel_in_bytes(size_t k);
double nvfp4_bench_kernel_out_bytes(size_t k);

/* Prepares the kernels on bufs (which must outlive the result): global and
 * RHT amaxes, the columnwise jobs, and rowwise codes and scales in data and
 * scale for the dequantize and swizzle kernels. NULL with err set on a bad
 * shape or when out of memory. */
nvfp4_bench *nvfp4_bench_prepare(const nvfp4_bench_buffers *bufs, nvfp4_error *err);
/* Runs kernel k once over the whole tensor. */
void nvfp4_bench_run(nvfp4_bench *b, size_t k);
void nvfp4_bench_free(nvfp4_bench *b);

NVFP4_END_DECLS
#endif /* NVFP4_BENCH_H */
