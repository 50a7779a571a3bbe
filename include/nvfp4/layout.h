/*
 * nvfp4/layout.h - the byte layouts in which kernels store a [rows, cols]
 * matrix of block scales (one byte per block), each as one function
 * (row, block) -> byte offset plus its padded shape. Every other place that
 * lays out or reads back scales (the bundle, the verifier, the CLI) goes
 * through these; the padding rule of each layout is written here once.
 *
 * Normative description, with the public source of each layout:
 * docs/semantics.md, "Scale layouts".
 */
#ifndef NVFP4_LAYOUT_H
#define NVFP4_LAYOUT_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

/* The layouts. 0 is the cuBLAS layout, so that a zeroed struct that carries
 * a layout (nvfp4_vview) means what it meant before layouts were named. */
typedef enum {
    NVFP4_SCALE_LAYOUT_128X4 = 0, /* cuBLAS / CUTLASS 128x4: 512-byte tiles of 128 rows x 4 blocks,
                                     row r = 32a + b of a tile at b*16 + a*4; rows padded to 128,
                                     blocks to 4 */
    NVFP4_SCALE_LAYOUT_LINEAR = 1, /* row-major [rows, cols], no padding */
    NVFP4_SCALE_LAYOUT_8X4 = 2,   /* FlashInfer / TRT-LLM 8x4 (is_sf_8x4_layout): 32-byte tiles of
                                     8 rows x 4 blocks, row-major inside a tile, tiles row-of-tiles
                                     major; rows padded to 8, blocks to 4 */
    NVFP4_SCALE_LAYOUT_KV_V = 3,  /* FlashInfer / TRT-LLM NVFP4 KV cache, V scales: the 4-token
                                     interleave, token t = 4a + i of block c at a*4*cols + c*4 + i;
                                     rows (tokens) padded to 4, blocks not padded. The K scales of
                                     the same cache are linear (parse alias "kv-k") */
    NVFP4_SCALE_LAYOUT_COUNT
} nvfp4_scale_layout;

/* "cublas-128x4", "linear", "flashinfer-8x4", "trtllm-kv-v" (the bundle's
 * scale_swizzle metadata value); "?" for an unknown value. */
const char *nvfp4_scale_layout_name(nvfp4_scale_layout l);
/* Accepts the names above, the short forms "128x4", "8x4", "kv-v", and
 * "kv-k" / "trtllm-kv-k" for linear (the K scales of the KV cache). */
bool nvfp4_scale_layout_parse(const char *s, nvfp4_scale_layout *out);

/* The padded shape [*prows, *pcols] of a [rows, cols] scale matrix in layout
 * l; returns its size in bytes, 0 on overflow (or an unknown layout). */
size_t nvfp4_scale_layout_shape(nvfp4_scale_layout l, size_t rows, size_t cols, size_t *prows, size_t *pcols);
/* Byte offset of scale (r, c), r < rows, c < cols, of a matrix with cols
 * columns (no layout's offset depends on the row count). */
size_t nvfp4_scale_layout_offset(nvfp4_scale_layout l, size_t r, size_t c, size_t cols);
/* Its inverse: the (r, c) of the padded matrix that byte `offset` holds.
 * Returns true for a scale of the [rows, cols] matrix, false for a padding
 * byte (or an offset past the layout's size). */
bool nvfp4_scale_layout_position(nvfp4_scale_layout l, size_t offset, size_t rows, size_t cols, size_t *r, size_t *c);
/* linear[rows*cols] -> out[nvfp4_scale_layout_shape(l, rows, cols)], padding zeroed. */
void nvfp4_scale_to_layout(nvfp4_scale_layout l, const uint8_t *linear, size_t rows, size_t cols, uint8_t *out);
/* in (layout l) -> linear[rows*cols], padding ignored. */
void nvfp4_scale_from_layout(nvfp4_scale_layout l, const uint8_t *in, size_t rows, size_t cols, uint8_t *linear);

NVFP4_END_DECLS

#endif
