/*
 * nvfp4/ggml.h - llama.cpp's NVFP4 block layout (GGML_TYPE_NVFP4,
 * block_nvfp4 in ggml/src/ggml-common.h): the bytes of the recipe `ggml`
 * (or any recipe with E2M1 codes, one E4M3 byte per 1x16 block and no
 * global scale) as ggml stores them in a tensor's data, and back.
 *
 * Each row of cols elements (cols a multiple of 64) is cols/64 blocks of 36
 * bytes: the 4 scale bytes of its 16-element sub-blocks, then 32 code
 * bytes, 8 per sub-block, byte j of sub-block s holding element j in its low
 * nibble and element j + 8 in its high nibble (docs/file-formats.md, "ggml
 * NVFP4 blocks"). Rows follow each other, as in a row-major ggml tensor.
 */
#ifndef NVFP4_GGML_H
#define NVFP4_GGML_H

#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

#define NVFP4_GGML_NVFP4_BLOCK 64       /* elements per block_nvfp4 (QK_NVFP4) */
#define NVFP4_GGML_NVFP4_BLOCK_BYTES 36 /* sizeof(block_nvfp4) */

/* Bytes of the layout of a rows x cols tensor: rows * cols/64 * 36; 0 when
 * cols is not a multiple of 64 or the size overflows. */
size_t nvfp4_ggml_nvfp4_size(size_t rows, size_t cols);

/* Writes the orientation t (E2M1 codes packed two per byte, element 2j in
 * the low nibble; one scale byte per 16 elements of a row; t->cols a
 * multiple of 64, no padding) into out[n], n >= nvfp4_ggml_nvfp4_size.
 * Errors (NVFP4_EINVAL): a NULL pointer, cols not a multiple of 64, a
 * tensor that is not laid out that way, n too small. */
nvfp4_status nvfp4_ggml_nvfp4_pack(const nvfp4_qtensor *t, uint8_t *out, size_t n, nvfp4_error *err);

/* The inverse: n bytes of block_nvfp4 blocks of a rows x cols tensor into
 * data[rows*cols/2] (the library's packing) and scale[rows*cols/16]. Errors
 * (NVFP4_EINVAL): a NULL pointer, cols not a multiple of 64, n not exactly
 * nvfp4_ggml_nvfp4_size(rows, cols). */
nvfp4_status nvfp4_ggml_nvfp4_unpack(const uint8_t *in, size_t n, size_t rows, size_t cols, uint8_t *data,
                                     uint8_t *scale, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_GGML_H */
