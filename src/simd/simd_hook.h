/*
 * simd_hook.h - internal: what src/quant.c and src/quant_kernels.c call to
 * use the fast CPU path. Each entry point returns "not handled" (NULL / 0)
 * for configurations it does not accelerate or when the active variant is
 * scalar; the caller then runs its own scalar code. Handled configurations
 * give byte-identical results (tests/check_simd.c).
 *
 * Accelerated: recipes whose core descriptor is the `te` chain (global
 * TE_ENCODE, block scale TE_MUL, encode TE_RECIP, CUDA specials, fmaxf
 * amaxes, E2M1 elements), 1x16 and 16x16 blocks, RN and SR, fp32 and bf16
 * input, with or without RHT-16 on the columnwise output; and the row
 * kernels of the MXFP4 recipes mxfp4-floor and mxfp4-rceil (1x32, RN and
 * SR).
 */
#ifndef NVFP4_SIMD_HOOK_H
#define NVFP4_SIMD_HOOK_H

#include "nvfp4/quant.h"
#include "quant_kernels.h"

/* For nvfp4_quant_kernels_select: the vector row kernels for this context,
 * or NULL. */
const nvfp4_quant_kernels *nvfp4_simd_quant_kernels(const nvfp4_qk_ctx *c);

/* Global amax (fmaxf semantics) of n fp32 or bf16 elements, vectorized and
 * OpenMP-parallel with the active variant (any variant: same value). */
float nvfp4_simd_amax(const void *x, int bf16, size_t n);

/* Whether the whole-tensor te drivers below handle this configuration
 * (resolved options) with the active variant: a `te` chain recipe, 1x16 or
 * 16x16 blocks, RN or SR, vector kernels active. Then src/quant.c sends
 * both orientations to nvfp4_simd_quantize_rowwise and
 * nvfp4_simd_quantize_columnwise, padding the input first when the shape
 * needs it, and computes the input amax once with nvfp4_simd_amax. */
int nvfp4_simd_te_handles(const nvfp4_core_recipe *core, const nvfp4_quant_opts *o);

/* The whole rowwise output of [rows, cols] (fp32, or bf16 bits) in one
 * fused pass per row (scales and codes; 16x16: tile scales, then codes),
 * filling t as src/quant.c's quantize_stored does for an unpadded shape
 * (t->data and t->scale from nvfp4_quant_alloc_output, every byte written).
 * amax: the tensor's global amax. Returns 1 when handled (status in *st:
 * NVFP4_OK or NVFP4_ENOMEM with err set), 0 when the caller must do it
 * (not nvfp4_simd_te_handles, cols % 16 != 0, or rows % 16 != 0 with
 * 16x16 blocks). */
int nvfp4_simd_quantize_rowwise(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                size_t cols, const nvfp4_quant_opts *o, float amax, nvfp4_qtensor *t,
                                nvfp4_status *st, nvfp4_error *err);

/* Rowwise plus RHT columnwise on an input too large to keep its transform
 * (nvfp4_simd_rht_transforms_twice): the input amax and the post-RHT amax
 * in one pass over the input (rows % 16 == 0, no padding). Returns 1 with
 * both set, or 0 (not handled, or small enough for the stored-transform
 * path: the caller takes the amaxes separately). */
int nvfp4_simd_te_amaxes_for_rht(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                 size_t cols, const nvfp4_quant_opts *o, float *input_amax, float *rht_amax);

/* The whole columnwise output in one fused pass (transpose, optional
 * RHT-16, amax after RHT, scales, codes), filling t exactly as
 * src/quant.c's quantize_stored does (t->data and t->scale from
 * nvfp4_quant_alloc_output, every byte written; the caller sets t->rht).
 * o must be resolved (block and recipe filled in). known_amax: the amax
 * of what is quantized when already computed (the input's; with RHT the
 * post-RHT one), or NULL. Returns 1 when handled (status in *st: NVFP4_OK
 * or NVFP4_ENOMEM with err set), 0 when the caller must do it. */
int nvfp4_simd_quantize_columnwise(const nvfp4_core_recipe *core, const void *x, nvfp4_dtype dtype, size_t rows,
                                   size_t cols, const nvfp4_quant_opts *o, const float *known_amax,
                                   nvfp4_qtensor *t, nvfp4_status *st, nvfp4_error *err);

/* nvfp4_dequantize for a te-chain orientation without padding (1x16 or
 * 16x16 scales, one byte per 16 elements of a row): 1 when handled. */
int nvfp4_simd_dequantize(const nvfp4_quantized *q, bool columnwise, float *out);

#endif /* NVFP4_SIMD_HOOK_H */
