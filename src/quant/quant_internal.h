/*
 * quant_internal.h - the quantizer's room (src/quant/): what its files share.
 *
 * nvfp4_quantize (quantize.c) makes the plan (plan.c), lays the outputs out
 * from it, and hands the plan to one of two paths that only write bytes and
 * amaxes: the scalar reference (reference.c, the oracle of every other
 * path) or the fast CPU path (fast.c, which calls the plain-array kernels of
 * src/simd/). Nothing here depends on the OpenMP thread count.
 */
#ifndef NVFP4_QUANT_INTERNAL_H
#define NVFP4_QUANT_INTERNAL_H

#include "nvfp4/quant.h"
#include "recipes/recipe.h"

/* Below this many elements an OpenMP region costs more than it saves. */
#define NVFP4_QUANT_PARALLEL_MIN 32768

/* The E2M1 / E4M3 rounding mode of src/core/ for a public one (RN, RZ, SR
 * have the same values in both enums; this keeps the mapping explicit). */
static inline int nvfp4_quant_core_mode(nvfp4_rounding r)
{
    return r == NVFP4_SR ? NVFP4_CORE_SR : r == NVFP4_RZ ? NVFP4_CORE_RZ : NVFP4_CORE_RN;
}

/* An output buffer of `bytes` bytes (at least 1), contents undefined until
 * written, released with free(). Buffers of 2 MiB and more are 2 MiB
 * aligned and, on Linux, advised onto transparent huge pages: first-touch
 * page faults are then one per 2 MiB instead of one per 4 KiB
 * (docs/performance.md). NULL when out of memory. */
void *nvfp4_quant_alloc_output(size_t bytes);

/* ---- the two paths (out: shapes and buffers laid out from the plan; a path
 * writes every code and scale byte and sets row.amax / col.amax) ---------- */

nvfp4_status nvfp4_quant_reference(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err);
/* Dequantize of one orientation with src/core/ only. */
void nvfp4_quant_reference_dequantize(const nvfp4_quantized *q, bool columnwise, float *out);

/* Whether the fast path handles the plan with the active SIMD variant
 * (never with the scalar variant: NVFP4_SIMD=scalar or nvfp4_simd_set then
 * run the reference path). */
bool nvfp4_quant_fast_handles(const nvfp4_quant_plan *p);
nvfp4_status nvfp4_quant_fast(const nvfp4_quant_plan *p, const void *x, nvfp4_quantized *out, nvfp4_error *err);
/* 1 when the fast path dequantized (te chain, no padding), 0 otherwise. */
int nvfp4_quant_fast_dequantize(const nvfp4_quantized *q, bool columnwise, float *out);

/* The stored orientation of x as an fp32 buffer of the layout's padded
 * shape (transposed for the columnwise one, zero padded, bf16 widened
 * exactly). *owned = 0 when that is x itself (fp32 rowwise, no padding).
 * NULL when out of memory. */
float *nvfp4_quant_stored_f32(const nvfp4_quant_plan *p, const void *x, bool columnwise, int *owned);

#endif /* NVFP4_QUANT_INTERNAL_H */
