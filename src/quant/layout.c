/* layout.c - the scale layouts of nvfp4/layout.h: for each, its padding rule
 * and its offset function (row, block) -> byte, written once here (the
 * 128x4 layout's in core/swizzle.h, which the CUDA kernels share).
 *
 * cuBLAS / CUTLASS 128x4: TE common/cast/mxfp8/swizzle.cuh
 *   gemm_swizzled_scale_idx; CUTLASS sm100_blockscaled_layout.hpp SfKMajorAtom;
 *   FlashInfer 0.7.4 csrc/nv_internal/tensorrt_llm/kernels/quantization_utils.cuh
 *   get_sf_out_offset_128x4 (the same function as TRT-LLM's).
 * FlashInfer / TRT-LLM 8x4: the same file, get_sf_out_offset_8x4, selected by
 *   fp4_quantize(..., is_sf_8x4_layout=True) (flashinfer/quantization/
 *   fp4_quantization.py; QuantizationSFLayout::SWIZZLED_8x4); padded by
 *   quantize_with_block_size to roundup(rows, 8) rows and roundup(cols, 4)
 *   blocks, padding bytes written 0 (quantization.cuh, "Set the SF padding
 *   to 0").
 * FlashInfer / TRT-LLM NVFP4 KV cache (trtllm-kv-v): FlashInfer 0.7.4
 *   flashinfer/quantization/fp4_quantization.py nvfp4_quantize_paged_kv_cache
 *   (FlashInfer #3042): K scales keep the linear layout; V scales of each
 *   [page_size, head_dim/16] tile are permuted "output[(t//4)*4*S + s*4 +
 *   t%4] = input[t*S + s]" (reshape (P/4, 4, 4, S/4), permute, the comment
 *   says TRT-LLM's quantizeAndWriteFP4KVCache() V swizzle). page_size is a
 *   multiple of 4 there, so over a stack of tiles of one head the offset
 *   depends on the token index only: no page_size parameter.
 * This file must not round anything: it only moves bytes. */
#include "nvfp4/layout.h"

#include <string.h>

#include "core/nvfp4_core.h"
#include "core/swizzle.h"

static const char *const layout_names[NVFP4_SCALE_LAYOUT_COUNT] = {"cublas-128x4", "linear", "flashinfer-8x4",
                                                                   "trtllm-kv-v"};
static const char *const layout_short[NVFP4_SCALE_LAYOUT_COUNT] = {"128x4", "linear", "8x4", "kv-v"};

const char *nvfp4_scale_layout_name(nvfp4_scale_layout l)
{
    return (unsigned)l < NVFP4_SCALE_LAYOUT_COUNT ? layout_names[l] : "?";
}

bool nvfp4_scale_layout_parse(const char *s, nvfp4_scale_layout *out)
{
    if (s && (strcmp(s, "kv-k") == 0 || strcmp(s, "trtllm-kv-k") == 0)) { /* the KV cache's K scales */
        *out = NVFP4_SCALE_LAYOUT_LINEAR;
        return true;
    }
    for (unsigned i = 0; s && i < NVFP4_SCALE_LAYOUT_COUNT; i++)
        if (strcmp(s, layout_names[i]) == 0 || strcmp(s, layout_short[i]) == 0) {
            *out = (nvfp4_scale_layout)i;
            return true;
        }
    return false;
}

/* The padded shape of layout l: 128x4's rule is core/swizzle.h's; 8x4 pads
 * rows to 8 and blocks to 4; kv-v pads tokens to 4 (a group of the
 * interleave); linear does not pad. 0: a dimension overflows. */
static int padded_shape(nvfp4_scale_layout l, size_t rows, size_t cols, size_t *r, size_t *c)
{
    if (l == NVFP4_SCALE_LAYOUT_128X4) return nvfp4_core_swizzle_padded_shape(rows, cols, r, c);
    size_t tr = l == NVFP4_SCALE_LAYOUT_8X4 ? 8 : l == NVFP4_SCALE_LAYOUT_KV_V ? 4 : 1;
    size_t tc = l == NVFP4_SCALE_LAYOUT_8X4 ? 4 : 1;
    *r = nvfp4_core_roundup(rows, tr);
    *c = nvfp4_core_roundup(cols, tc);
    return *r >= rows && *c >= cols;
}

size_t nvfp4_scale_layout_shape(nvfp4_scale_layout l, size_t rows, size_t cols, size_t *prows, size_t *pcols)
{
    size_t r, c, n;
    *prows = *pcols = 0;
    if ((unsigned)l >= NVFP4_SCALE_LAYOUT_COUNT) return 0;
    if (!padded_shape(l, rows, cols, &r, &c) || !nvfp4_mul_size(r, c, &n)) return 0;
    *prows = r;
    *pcols = c;
    return n;
}

/* 8x4: tiles of 32 bytes, row-of-tiles major; inside one, row-major 8 x 4. */
static size_t offset_8x4(size_t r, size_t c, size_t cols)
{
    size_t n_col_tiles = (cols + 3) / 4;
    return ((r / 8) * n_col_tiles + c / 4) * 32 + (r % 8) * 4 + (c % 4);
}

/* kv-v: groups of 4 tokens (4 * cols bytes), block-major inside a group,
 * the 4 tokens of one block adjacent. */
static size_t offset_kv_v(size_t t, size_t c, size_t cols)
{
    return (t / 4) * 4 * cols + c * 4 + t % 4;
}

size_t nvfp4_scale_layout_offset(nvfp4_scale_layout l, size_t r, size_t c, size_t cols)
{
    switch (l) {
    case NVFP4_SCALE_LAYOUT_8X4: return offset_8x4(r, c, cols);
    case NVFP4_SCALE_LAYOUT_KV_V: return offset_kv_v(r, c, cols);
    case NVFP4_SCALE_LAYOUT_LINEAR: return r * cols + c;
    default: return nvfp4_core_swizzle_offset(r, c, cols);
    }
}

bool nvfp4_scale_layout_position(nvfp4_scale_layout l, size_t offset, size_t rows, size_t cols, size_t *r, size_t *c)
{
    size_t n_col_tiles = (cols + 3) / 4, pr, pc, n = nvfp4_scale_layout_shape(l, rows, cols, &pr, &pc);
    switch (l) {
    case NVFP4_SCALE_LAYOUT_8X4: {
        size_t tile = offset / 32, in_tile = offset % 32;
        *r = (tile / n_col_tiles) * 8 + in_tile / 4;
        *c = (tile % n_col_tiles) * 4 + in_tile % 4;
        break;
    }
    case NVFP4_SCALE_LAYOUT_KV_V: {
        size_t group = cols ? offset / (4 * cols) : 0, in_group = cols ? offset % (4 * cols) : 0;
        *r = group * 4 + in_group % 4;
        *c = in_group / 4;
        break;
    }
    case NVFP4_SCALE_LAYOUT_LINEAR:
        *r = cols ? offset / cols : 0;
        *c = cols ? offset % cols : 0;
        break;
    default: { /* the inverse of nvfp4_core_swizzle_offset */
        size_t tile = offset / NVFP4_CORE_SWIZZLE_TILE_BYTES, in_tile = offset % NVFP4_CORE_SWIZZLE_TILE_BYTES;
        *r = (tile / n_col_tiles) * NVFP4_CORE_SWIZZLE_TILE_ROWS + ((in_tile % 16) / 4) * 32 + in_tile / 16;
        *c = (tile % n_col_tiles) * NVFP4_CORE_SWIZZLE_TILE_COLS + in_tile % 4;
        break;
    }
    }
    return offset < n && *r < rows && *c < cols;
}

void nvfp4_scale_to_layout(nvfp4_scale_layout l, const uint8_t *linear, size_t rows, size_t cols, uint8_t *out)
{
    size_t pr, pc;
    memset(out, 0, nvfp4_scale_layout_shape(l, rows, cols, &pr, &pc));
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) out[nvfp4_scale_layout_offset(l, r, c, cols)] = linear[r * cols + c];
}

void nvfp4_scale_from_layout(nvfp4_scale_layout l, const uint8_t *in, size_t rows, size_t cols, uint8_t *linear)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) linear[r * cols + c] = in[nvfp4_scale_layout_offset(l, r, c, cols)];
}
