/*
 * quant_kernels.h - internal: the row-level kernels that src/quant.c calls,
 * and the hook through which a faster implementation (src/simd/) replaces
 * them for the configurations it supports.
 *
 * The scalar kernels in quant_kernels.c are the reference: any other kernel
 * must produce identical bytes for every input (tests compare them). A row
 * is one row of the *stored* orientation (for columnwise output, one row of
 * the transposed, padded, possibly RHT'd tensor), already in fp32.
 */
#ifndef NVFP4_QUANT_KERNELS_H
#define NVFP4_QUANT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "core/recipe.h"

typedef struct {
    const nvfp4_core_recipe *core; /* the recipe's per-block math */
    nvfp4_core_global global;      /* derived from this orientation's amax */
    int mode;                      /* NVFP4_CORE_RN, NVFP4_CORE_RZ or NVFP4_CORE_SR */
    uint64_t seed;                 /* SR key */
    uint64_t offset;               /* SR counter base of this orientation (offset; +1 or +2 columnwise) */
    size_t cols;                   /* stored row length (padded), a multiple of block_len */
    size_t block_len;              /* 16 or 32: elements per scale along the row */
} nvfp4_qk_ctx;

/* Block scale bytes of one row for 1D blocks: scale[b], b < cols/block_len. */
typedef void (*nvfp4_qk_row_scales_fn)(const nvfp4_qk_ctx *c, const float *x, uint8_t *scale);

/* Codes of row `row` (its index in the stored orientation, which keys the SR
 * bits) given its scale bytes: E2M1 packs element 2j into the low nibble of
 * out[j] (cols/2 bytes); E4M3 writes cols bytes. */
typedef void (*nvfp4_qk_row_encode_fn)(const nvfp4_qk_ctx *c, const float *x, size_t row, const uint8_t *scale,
                                       uint8_t *out);

typedef struct {
    const char *name;
    nvfp4_qk_row_scales_fn row_scales;
    nvfp4_qk_row_encode_fn row_encode;
} nvfp4_quant_kernels;

/* The scalar reference kernels. */
const nvfp4_quant_kernels *nvfp4_quant_kernels_scalar(void);

/* The kernels quant.c uses for a configuration. Today: always the scalar
 * ones unless the SIMD dispatcher (src/simd/simd_hook.h) has vector
 * kernels for this configuration and the active CPU variant. */
const nvfp4_quant_kernels *nvfp4_quant_kernels_select(const nvfp4_qk_ctx *c);

/* Tests: force the scalar kernels whatever select would pick (not thread
 * safe; set it before quantizing). */
void nvfp4_quant_kernels_force_scalar(int on);
/* Whether force_scalar is on: quant.c then also skips the fused SIMD paths. */
int nvfp4_quant_kernels_scalar_forced(void);

/* An output buffer of `bytes` bytes (at least 1) that the caller writes in
 * full before anyone reads it (contents undefined until then), released
 * with free(). Buffers of 2 MiB and more are 2 MiB aligned and, on Linux,
 * marked MADV_HUGEPAGE: first-touch page faults are then one per 2 MiB
 * instead of one per 4 KiB (32 MiB: about 2 ms instead of 12 ms on the
 * development machine, more than a third of the 1x16 quantize itself).
 * NULL when out of memory. */
void *nvfp4_quant_alloc_output(size_t bytes);

#endif /* NVFP4_QUANT_KERNELS_H */
