/*
 * swizzle.h - the cuBLAS / CUTLASS 128x4 block-scale layout, written once:
 * its padding rule (how many rows and blocks the padded scale matrix has)
 * and the byte that holds scale (r, c). The C library (src/quant/layout.c,
 * src/bundle.c, the SIMD swizzle) and the CUDA kernels (src/cuda/) all use
 * these two functions; nothing else writes 128, 4 or 512 for this layout.
 *
 * Sources: TE common/cast/mxfp8/swizzle.cuh gemm_swizzled_scale_idx; CUTLASS
 * sm100_blockscaled_layout.hpp SfKMajorAtom; torchao mx_formats/utils.py
 * to_blocked (docs/semantics.md, "Tensor layout"). The scale matrix is padded
 * to multiples of 128 rows and 4 blocks; each 128x4 tile is 512 contiguous
 * bytes, tiles row-of-tiles major; inside a tile, row 32a + b and block c sit
 * at b*16 + a*4 + c. Padding bytes are zero (TE's swizzle kernel writes zeros).
 * This file moves no bytes and rounds no values.
 */
#ifndef NVFP4_CORE_SWIZZLE_H
#define NVFP4_CORE_SWIZZLE_H

#include <stddef.h>

#include "nvfp4_core.h"

#define NVFP4_CORE_SWIZZLE_TILE_ROWS 128u /* scale rows of one tile */
#define NVFP4_CORE_SWIZZLE_TILE_COLS 4u   /* scale blocks (columns) of one tile */
#define NVFP4_CORE_SWIZZLE_TILE_BYTES 512u

/* The padding rule: the [*prows, *pcols] shape that a [rows, cols] scale
 * matrix occupies in the 128x4 layout (rows up to a multiple of 128, blocks
 * up to a multiple of 4). Returns 0 when a padded dimension overflows size_t
 * (callers given untrusted sizes check), else 1. */
NVFP4_HD static inline int nvfp4_core_swizzle_padded_shape(size_t rows, size_t cols, size_t *prows, size_t *pcols)
{
    *prows = nvfp4_core_roundup(rows, NVFP4_CORE_SWIZZLE_TILE_ROWS);
    *pcols = nvfp4_core_roundup(cols, NVFP4_CORE_SWIZZLE_TILE_COLS);
    return *prows >= rows && *pcols >= cols;
}

/* The byte offset of scale (r, c) of a matrix with `cols` blocks per row:
 * its tile (row-of-tiles major over the padded matrix), then its place in
 * the tile, row r % 128 = 32a + b at b*16 + a*4 + c % 4. */
NVFP4_HD static inline size_t nvfp4_core_swizzle_offset(size_t r, size_t c, size_t cols)
{
    size_t col_tiles = nvfp4_core_roundup(cols, NVFP4_CORE_SWIZZLE_TILE_COLS) / NVFP4_CORE_SWIZZLE_TILE_COLS;
    size_t tile = (r / NVFP4_CORE_SWIZZLE_TILE_ROWS) * col_tiles + c / NVFP4_CORE_SWIZZLE_TILE_COLS;
    size_t in_tile = (r % 32) * 16 + ((r % NVFP4_CORE_SWIZZLE_TILE_ROWS) / 32) * 4 + c % NVFP4_CORE_SWIZZLE_TILE_COLS;
    return tile * NVFP4_CORE_SWIZZLE_TILE_BYTES + in_tile;
}

#endif
