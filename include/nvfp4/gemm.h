/*
 * nvfp4/gemm.h - emulated block-scaled GEMM D = alpha * A * B^T from two
 * quantized K-major operands (A: [M, K] rowwise, B: [N, K] rowwise), as the
 * tensor cores take them (DESIGN.md 3.5).
 */
#ifndef NVFP4_GEMM_H
#define NVFP4_GEMM_H

#include "nvfp4/common.h"
#include "nvfp4/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NVFP4_GEMM_TE = 0,   /* exact block partials, sequential fp32 sum over k, then alpha (bit-reproducible) */
    NVFP4_GEMM_EXACT = 1 /* exact block partials, exact (binary64 or better) sum, one final rounding */
} nvfp4_gemm_order;

/* D[M, N] (row-major fp32). a and b are one orientation of a quantized
 * tensor with the same recipe and block width along K. alpha_in multiplies
 * as TE's alpha: ((alpha_in * amax_A) * amax_B) * fl(1/(36*448*448)). */
nvfp4_status nvfp4_gemm(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b, bool b_columnwise,
                        float alpha_in, nvfp4_gemm_order order, float *d, nvfp4_error *err);

/* A rigorous per-element bound: |fl_any_order(D) - D_exact| <= bound[i,j] for
 * fp32 accumulation of the block partials in any order (plus the alpha
 * multiply), docs/semantics.md gives the formula. Also fills exact[M*N]
 * (may be NULL) with the exactly accumulated result rounded once to fp32. */
nvfp4_status nvfp4_gemm_error_bound(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                    bool b_columnwise, float alpha_in, double *bound, double *exact,
                                    nvfp4_error *err);

#ifdef __cplusplus
}
#endif
#endif /* NVFP4_GEMM_H */
