/* swizzle.c - the cuBLAS/CUTLASS 128x4 block-scale layout under its
 * historical names (nvfp4/quant.h). The layout (padding rule and byte
 * offset, with its sources) is core/swizzle.h's; the generic scale-layout
 * calls of nvfp4/layout.h move the bytes. Nothing here restates the rule. */
#include "nvfp4/quant.h"

#include "nvfp4/layout.h"
#include "simd/simd_kernels.h"

#include "core/swizzle.h"

size_t nvfp4_swizzled_size(size_t rows, size_t cols)
{
    size_t pr, pc;
    return nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_128X4, rows, cols, &pr, &pc);
}

size_t nvfp4_swizzle_offset(size_t r, size_t c, size_t cols)
{
    return nvfp4_core_swizzle_offset(r, c, cols);
}

void nvfp4_swizzle_position(size_t offset, size_t cols, size_t *r, size_t *c)
{
    (void)nvfp4_scale_layout_position(NVFP4_SCALE_LAYOUT_128X4, offset, SIZE_MAX, cols, r, c);
}

/* The whole-matrix swizzle: the vectorized transpose (src/simd/simd_swizzle.c,
 * byte-identical to nvfp4_scale_to_layout's, tests/check_swizzle_fast.c). */
void nvfp4_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz)
{
    nvfp4_simd_scale_swizzle(linear, rows, cols, swz);
}

void nvfp4_scale_unswizzle(const uint8_t *swz, size_t rows, size_t cols, uint8_t *linear)
{
    nvfp4_scale_from_layout(NVFP4_SCALE_LAYOUT_128X4, swz, rows, cols, linear);
}
