/* swizzle.c - the cuBLAS/CUTLASS 128x4 block-scale layout
 * (docs/semantics.md, "Tensor layout"; TE common/cast/mxfp8/swizzle.cuh
 * gemm_swizzled_scale_idx, torchao mx_formats/utils.py to_blocked, CUTLASS
 * sm100_blockscaled_layout.hpp SfKMajorAtom). The scale matrix is padded to
 * multiples of 128 rows and 4 columns; each 128x4 tile is 512 contiguous
 * bytes, tiles row-of-tiles major; inside a tile row r = 32a + b goes to
 * b*16 + a*4 + c. Padding bytes are zero (TE's swizzle kernel writes zeros). */
#include "nvfp4/quant.h"

#include <string.h>

#include "core/nvfp4_core.h"

size_t nvfp4_swizzled_size(size_t rows, size_t cols)
{
    size_t r = nvfp4_core_roundup(rows, 128), c = nvfp4_core_roundup(cols, 4), n;
    if (r < rows || c < cols || !nvfp4_mul_size(r, c, &n)) return 0;
    return n;
}

size_t nvfp4_swizzle_offset(size_t r, size_t c, size_t cols)
{
    size_t n_col_tiles = (cols + 3) / 4;
    return ((r / 128) * n_col_tiles + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

void nvfp4_swizzle_position(size_t offset, size_t cols, size_t *r, size_t *c)
{
    size_t n_col_tiles = (cols + 3) / 4, tile = offset / 512, in_tile = offset % 512;
    *r = (tile / n_col_tiles) * 128 + ((in_tile % 16) / 4) * 32 + in_tile / 16;
    *c = (tile % n_col_tiles) * 4 + in_tile % 4;
}

void nvfp4_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz)
{
    memset(swz, 0, nvfp4_swizzled_size(rows, cols));
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) swz[nvfp4_swizzle_offset(r, c, cols)] = linear[r * cols + c];
}

void nvfp4_scale_unswizzle(const uint8_t *swz, size_t rows, size_t cols, uint8_t *linear)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) linear[r * cols + c] = swz[nvfp4_swizzle_offset(r, c, cols)];
}
