/* swizzle.c - the cuBLAS/CUTLASS 128x4 block-scale layout
 * (docs/semantics.md, "Tensor layout"; TE common/cast/mxfp8/swizzle.cuh
 * gemm_swizzled_scale_idx, torchao mx_formats/utils.py to_blocked, CUTLASS
 * sm100_blockscaled_layout.hpp SfKMajorAtom). The scale matrix is padded to
 * multiples of 128 rows and 4 columns; each 128x4 tile is 512 contiguous
 * bytes, tiles row-of-tiles major; inside a tile row r = 32a + b goes to
 * b*16 + a*4 + c. Padding bytes are zero (TE's swizzle kernel writes zeros).
 * The layout itself lives in layout.c with the other scale layouts. */
#include "nvfp4/quant.h"

#include "nvfp4/layout.h"
#include "simd/simd_kernels.h"

/* The 128x4 layout of nvfp4/layout.h under its historical names. */
size_t nvfp4_swizzled_size(size_t rows, size_t cols)
{
    size_t pr, pc;
    return nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_128X4, rows, cols, &pr, &pc);
}

size_t nvfp4_swizzle_offset(size_t r, size_t c, size_t cols)
{
    return nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_128X4, r, c, cols);
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
