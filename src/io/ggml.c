/* ggml.c - llama.cpp's block_nvfp4 layout (nvfp4/ggml.h): a pure
 * rearrangement of code nibbles and scale bytes; nothing is rounded here.
 * Layout from ggml-org/llama.cpp ggml/src/ggml-common.h (block_nvfp4,
 * commit 01243c587feceaa5d6a6c2305535ef2f549c48b8) and ggml-quants.c
 * (quantize_row_nvfp4_ref: qs[s*8 + j] = q[j] | q[j+8] << 4). */
#include "nvfp4/ggml.h"

#include <stdint.h>

enum { SUB = 16, SUBS = NVFP4_GGML_NVFP4_BLOCK / SUB };

size_t nvfp4_ggml_nvfp4_size(size_t rows, size_t cols)
{
    if (cols % NVFP4_GGML_NVFP4_BLOCK != 0) return 0;
    size_t per_row = cols / NVFP4_GGML_NVFP4_BLOCK * NVFP4_GGML_NVFP4_BLOCK_BYTES;
    if (rows != 0 && per_row > SIZE_MAX / rows) return 0;
    return rows * per_row;
}

static uint8_t nibble(const uint8_t *packed, size_t i) { return (uint8_t)((packed[i >> 1] >> (4 * (i & 1u))) & 0xFu); }

static void put_nibble(uint8_t *packed, size_t i, uint8_t q)
{
    unsigned shift = 4u * (unsigned)(i & 1u);
    packed[i >> 1] = (uint8_t)((packed[i >> 1] & ~(0xFu << shift)) | ((unsigned)q << shift));
}

nvfp4_status nvfp4_ggml_nvfp4_pack(const nvfp4_qtensor *t, uint8_t *out, size_t n, nvfp4_error *err)
{
    if (!t || !out || !t->data || !t->scale) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_ggml_nvfp4_pack: NULL argument");
    size_t need = nvfp4_ggml_nvfp4_size(t->rows, t->cols);
    if (need == 0)
        return nvfp4_error_set(err, NVFP4_EINVAL, "the ggml NVFP4 layout needs a multiple of 64 columns, not %zu", t->cols);
    if (t->pcols != t->cols || t->prows != t->rows || t->scale_cols * SUB != t->pcols ||
        t->scale_rows != t->prows || t->data_bytes != t->prows * t->pcols / 2)
        return nvfp4_error_set(err, NVFP4_EINVAL,
                               "the ggml NVFP4 layout takes E2M1 codes with one scale byte per 16 elements of a row, unpadded");
    if (n < need) return nvfp4_error_set(err, NVFP4_EINVAL, "ggml NVFP4 output of %zu bytes, %zu needed", n, need);
    size_t nb = t->cols / NVFP4_GGML_NVFP4_BLOCK;
    for (size_t i = 0; i < t->rows; i++)
        for (size_t b = 0; b < nb; b++) {
            uint8_t *blk = out + (i * nb + b) * NVFP4_GGML_NVFP4_BLOCK_BYTES;
            for (size_t s = 0; s < SUBS; s++) {
                size_t sb = b * SUBS + s, e0 = i * t->pcols + sb * SUB;
                blk[s] = t->scale[i * t->scale_cols + sb];
                for (size_t j = 0; j < SUB / 2; j++)
                    blk[SUBS + s * (SUB / 2) + j] =
                        (uint8_t)(nibble(t->data, e0 + j) | (nibble(t->data, e0 + j + SUB / 2) << 4));
            }
        }
    return NVFP4_OK;
}

nvfp4_status nvfp4_ggml_nvfp4_unpack(const uint8_t *in, size_t n, size_t rows, size_t cols, uint8_t *data,
                                     uint8_t *scale, nvfp4_error *err)
{
    if (!in || !data || !scale) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_ggml_nvfp4_unpack: NULL argument");
    size_t need = nvfp4_ggml_nvfp4_size(rows, cols);
    if (need == 0)
        return nvfp4_error_set(err, NVFP4_EINVAL, "the ggml NVFP4 layout needs a multiple of 64 columns, not %zu", cols);
    if (n != need)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%zu bytes of ggml NVFP4 blocks for %zu x %zu elements: %zu expected", n,
                               rows, cols, need);
    size_t nb = cols / NVFP4_GGML_NVFP4_BLOCK;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < nb; b++) {
            const uint8_t *blk = in + (i * nb + b) * NVFP4_GGML_NVFP4_BLOCK_BYTES;
            for (size_t s = 0; s < SUBS; s++) {
                size_t sb = b * SUBS + s, e0 = i * cols + sb * SUB;
                scale[i * (cols / SUB) + sb] = blk[s];
                for (size_t j = 0; j < SUB / 2; j++) {
                    uint8_t q = blk[SUBS + s * (SUB / 2) + j];
                    put_nibble(data, e0 + j, (uint8_t)(q & 0xFu));
                    put_nibble(data, e0 + j + SUB / 2, (uint8_t)(q >> 4));
                }
            }
        }
    return NVFP4_OK;
}
