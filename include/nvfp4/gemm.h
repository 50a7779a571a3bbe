/*
 * nvfp4/gemm.h - emulated block-scaled GEMM D = alpha * A * B^T from two
 * quantized K-major operands (A: [M, K] rowwise, B: [N, K] rowwise), as the
 * tensor cores take them (docs/semantics.md, "Emulated GEMM").
 */
#ifndef NVFP4_GEMM_H
#define NVFP4_GEMM_H

#include "nvfp4/common.h"
#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

typedef enum {
    NVFP4_GEMM_TE = 0,   /* exact block partials, sequential fp32 sum over k, then alpha (bit-reproducible) */
    NVFP4_GEMM_EXACT = 1, /* exact block partials, exact (binary64 or better) sum, one final rounding */
    /* other fp32 orders a kernel may use (gemm-check names the one that reproduces a kernel's bytes): */
    NVFP4_GEMM_REVERSE = 2, /* sequential fp32 sum over k from the last block partial to the first */
    NVFP4_GEMM_PAIRWISE = 3 /* recursive halving: sum(first n/2) + sum(rest), each half likewise */
} nvfp4_gemm_order;

/* TE's GEMM alpha, left to right in fp32:
 * ((alpha_in * amax_a) * amax_b) * fl32(1/7225344)  (constant 0x34149B93). */
float nvfp4_gemm_alpha(float alpha_in, float amax_a, float amax_b);

/* D[M, N] (row-major fp32) = alpha * A * B^T. a and b are one orientation
 * each (columnwise selects the transposed output) of tensors quantized
 * with an NVFP4 recipe (E2M1 elements, E4M3 scales, global amax; 1x16 or
 * 16x16 blocks) or both with an MXFP4 recipe (UE8M0 scales, 1x32 blocks,
 * alpha = alpha_in): A is [M, K], B is [N, K], K (and the padded K) equal.
 * mxfp8 gives NVFP4_EUNSUPPORTED. Each orientation's own amax enters alpha
 * (the post-RHT amax for RHT'd columnwise data). Bytes do not depend on the
 * thread count. */
nvfp4_status nvfp4_gemm(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b, bool b_columnwise,
                        float alpha_in, nvfp4_gemm_order order, float *d, nvfp4_error *err);

/* A rigorous per-element bound: |D_any[i,j] - exact[i,j]| <= bound[i,j]
 * for D_any = fl32(alpha * S^) where S^ is the sum of the K/16 exact block
 * partials in ANY order with round-to-nearest fp32 (or wider) additions,
 * alpha = nvfp4_gemm_alpha(alpha_in, amax_A, amax_B). bound[i,j] =
 * (1+2^-48) (|alpha| (gamma_{n-1} T (1+u) + u |S|) + 2^-150 + 2^-52 |exact|)
 * with u = 2^-24, n = K/16 (K/32 for MXFP4), S = sum p_k, T = sum |p_k|; +Inf where no
 * guarantee exists (non-finite values, possible overflow). docs/semantics.md
 * proves it. exact[M*N] (may be NULL) receives alpha * S (exact) rounded
 * once to binary64. */
nvfp4_status nvfp4_gemm_error_bound(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                    bool b_columnwise, float alpha_in, double *bound, double *exact,
                                    nvfp4_error *err);

/* The exact block partials p_k of output (i, j) (for verifiers and
 * accumulation-order studies): *n receives their number K/16 (K/32 for
 * MXFP4); p (may be NULL) needs that many floats. */
nvfp4_status nvfp4_gemm_partials(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                 bool b_columnwise, size_t i, size_t j, float *p, size_t *n, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_GEMM_H */
