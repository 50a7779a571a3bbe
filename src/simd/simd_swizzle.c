/*
 * simd_swizzle.c - the cuBLAS 128x4 block-scale layout for whole scale
 * matrices, behind the library's nvfp4_scale_swizzle (src/quant/swizzle.c):
 * a 4x4 transpose of 4-byte units per 16 output bytes, bands of 128 rows in
 * parallel; the same bytes as nvfp4_scale_to_layout (src/quant/layout.c,
 * tests/check_swizzle_fast.c).
 *
 * Layout (src/quant/layout.c): row band t (rows 128t..128t+127) and column group
 * c4 (columns 4c4..4c4+3) form a 512-byte tile; byte (r, c) of the band
 * sits at (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4 of its tile. So the
 * 16 bytes at offset 16i of tile c4 are the 4 bytes of column group c4 of
 * rows i, i+32, i+64 and i+96: four 16-byte loads (column groups c4..c4+3
 * of those rows) and a 4x4 transpose of 32-bit units give 16 bytes for each
 * of four tiles. Padding (rows past the matrix, columns past cols) is zero,
 * as TE's swizzle kernel writes it.
 */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/parallel.h"
#include "core/swizzle.h"
#include "simd/simd_kernels.h"

/* Scale bytes below which one thread does the whole matrix. */
#define SWIZZLE_PARALLEL_MIN ((size_t)1 << 20)

/* Bytes 4*c4 .. 4*c4+3 of row r of the matrix, zero-padded, as 32 bits. */
static uint32_t group_bytes(const uint8_t *linear, size_t rows, size_t cols, size_t r, size_t c4)
{
    uint32_t v = 0;
    if (r < rows) {
        size_t n = cols - 4 * c4 < 4 ? cols - 4 * c4 : 4;
        memcpy(&v, linear + r * cols + 4 * c4, n); /* little-endian byte order, as the layout */
    }
    return v;
}

/* One tile row (16 bytes at offset 16i of tile c4 of band t), any shape. */
static void tile_row_generic(const uint8_t *linear, size_t rows, size_t cols, size_t t, size_t i, size_t c4,
                             uint8_t *out)
{
    for (size_t q = 0; q < 4; q++) {
        uint32_t v = group_bytes(linear, rows, cols, 128 * t + 32 * q + i, c4);
        memcpy(out + 4 * q, &v, 4);
    }
}

#if defined(__SSE2__)
/* Column groups c4..c4+3 of a row (16 bytes), zeros for a row past the matrix. */
static inline __m128i chunk16(const uint8_t *row, size_t c4)
{
    return row ? _mm_loadu_si128((const __m128i *)(row + 4 * c4)) : _mm_setzero_si128();
}
#endif

/* Band t: nct tiles of 512 bytes at band. Whole 16-byte column chunks go
 * through the vector transpose (rows past the matrix, in a partial last
 * band, read as zeros); the last column groups byte-exactly through
 * tile_row_generic. */
static void swizzle_band(const uint8_t *linear, size_t rows, size_t cols, size_t t, uint8_t *band)
{
    size_t nct = (cols + 3) / 4, c4_vec = 0;
#if defined(__SSE2__)
    c4_vec = cols / 16 * 4; /* column groups in whole 16-byte chunks */
#endif
    for (size_t i = 0; i < 32; i++) {
        uint8_t *row_out = band + 16 * i;
#if defined(__SSE2__)
        const uint8_t *p[4]; /* rows i, i+32, i+64, i+96 of the band; NULL past the matrix */
        for (size_t q = 0; q < 4; q++) {
            size_t r = 128 * t + 32 * q + i;
            p[q] = r < rows ? linear + r * cols : NULL;
        }
        for (size_t c4 = 0; c4 < c4_vec; c4 += 4) {
            __m128i va = chunk16(p[0], c4), vb = chunk16(p[1], c4), vc = chunk16(p[2], c4), vd = chunk16(p[3], c4);
            __m128i ab0 = _mm_unpacklo_epi32(va, vb), ab1 = _mm_unpackhi_epi32(va, vb); /* a0 b0 a1 b1 | a2 b2 a3 b3 */
            __m128i cd0 = _mm_unpacklo_epi32(vc, vd), cd1 = _mm_unpackhi_epi32(vc, vd);
            _mm_storeu_si128((__m128i *)(row_out + (c4 + 0) * 512), _mm_unpacklo_epi64(ab0, cd0)); /* a0 b0 c0 d0 */
            _mm_storeu_si128((__m128i *)(row_out + (c4 + 1) * 512), _mm_unpackhi_epi64(ab0, cd0));
            _mm_storeu_si128((__m128i *)(row_out + (c4 + 2) * 512), _mm_unpacklo_epi64(ab1, cd1));
            _mm_storeu_si128((__m128i *)(row_out + (c4 + 3) * 512), _mm_unpackhi_epi64(ab1, cd1));
        }
#endif
        for (size_t c4 = c4_vec; c4 < nct; c4++) tile_row_generic(linear, rows, cols, t, i, c4, row_out + c4 * 512);
    }
}

void nvfp4_simd_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz)
{
    size_t prows, pcols; /* the caller sized swz from the same rule, so it cannot overflow here */
    (void)nvfp4_core_swizzle_padded_shape(rows, cols, &prows, &pcols);
    size_t ntr = prows / NVFP4_CORE_SWIZZLE_TILE_ROWS, nct = pcols / NVFP4_CORE_SWIZZLE_TILE_COLS;
    NVFP4_PAR_FOR_IF(rows * cols >= SWIZZLE_PARALLEL_MIN, "omp parallel for schedule(static)",
        for (size_t t = 0; t < ntr; t++) swizzle_band(linear, rows, cols, t, swz + t * nct * 512));
}
