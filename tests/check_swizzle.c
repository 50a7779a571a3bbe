/* check_swizzle.c - the cuBLAS/CUTLASS 128x4 scale layout
 * (nvfp4-semantics.md 6): known offsets, padding, round trip. */
#include <check.h>
#include "support/check_main.h"
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"

START_TEST(known_offsets)
{
    /* 8 scale columns -> 2 column tiles of 4. */
    size_t cols = 8;
    ck_assert_uint_eq(nvfp4_swizzle_offset(0, 0, cols), 0);
    ck_assert_uint_eq(nvfp4_swizzle_offset(1, 0, cols), 16);   /* r % 32 steps 16 bytes */
    ck_assert_uint_eq(nvfp4_swizzle_offset(31, 0, cols), 496);
    ck_assert_uint_eq(nvfp4_swizzle_offset(32, 0, cols), 4);   /* (r % 128)/32 steps 4 bytes */
    ck_assert_uint_eq(nvfp4_swizzle_offset(96, 0, cols), 12);
    ck_assert_uint_eq(nvfp4_swizzle_offset(0, 1, cols), 1);
    ck_assert_uint_eq(nvfp4_swizzle_offset(0, 3, cols), 3);
    ck_assert_uint_eq(nvfp4_swizzle_offset(0, 4, cols), 512);  /* next column tile */
    ck_assert_uint_eq(nvfp4_swizzle_offset(128, 0, cols), 1024); /* 512 * n_col_tiles */
    ck_assert_uint_eq(nvfp4_swizzle_offset(127, 7, cols), 512 + 31 * 16 + 3 * 4 + 3);
    ck_assert_uint_eq(nvfp4_swizzle_offset(128 + 33, 5, cols), 1024 + 512 + 16 + 4 + 1);
    /* 3 scale columns pad to one 4-wide tile. */
    ck_assert_uint_eq(nvfp4_swizzle_offset(128, 0, 3), 512);
    ck_assert_uint_eq(nvfp4_swizzled_size(1, 1), 512);
    ck_assert_uint_eq(nvfp4_swizzled_size(128, 4), 512);
    ck_assert_uint_eq(nvfp4_swizzled_size(129, 5), 256 * 8);
    ck_assert_uint_eq(nvfp4_swizzled_size(SIZE_MAX / 2, SIZE_MAX / 2), 0);
}
END_TEST

START_TEST(round_trip_and_padding)
{
    size_t shapes[][2] = {{1, 1}, {5, 3}, {128, 4}, {130, 9}, {300, 17}};
    for (size_t k = 0; k < 5; k++) {
        size_t rows = shapes[k][0], cols = shapes[k][1];
        size_t n = rows * cols, sz = nvfp4_swizzled_size(rows, cols);
        uint8_t *lin = malloc(n), *back = malloc(n), *swz = malloc(sz);
        for (size_t i = 0; i < n; i++) lin[i] = (uint8_t)(1 + (i * 37) % 255); /* never 0 */
        memset(swz, 0xAA, sz);
        nvfp4_scale_swizzle(lin, rows, cols, swz);
        size_t nonzero = 0;
        for (size_t i = 0; i < sz; i++) nonzero += swz[i] != 0;
        ck_assert_uint_eq(nonzero, n); /* every padding byte is 0 */
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) ck_assert_uint_eq(swz[nvfp4_swizzle_offset(r, c, cols)], lin[r * cols + c]);
        memset(back, 0, n);
        nvfp4_scale_unswizzle(swz, rows, cols, back);
        ck_assert_mem_eq(back, lin, n);
        free(lin), free(back), free(swz);
    }
}
END_TEST

START_TEST(position_inverts_offset)
{
    /* every byte of the padded layout maps back to the one (r, c) whose offset it is; the data bytes are
     * exactly those with r < rows and c < cols (verify's padding test, which builds no map) */
    size_t shapes[][2] = {{1, 1}, {5, 3}, {128, 4}, {130, 9}, {300, 17}};
    for (size_t k = 0; k < 5; k++) {
        size_t rows = shapes[k][0], cols = shapes[k][1], sz = nvfp4_swizzled_size(rows, cols), data = 0;
        for (size_t i = 0; i < sz; i++) {
            size_t r, c;
            nvfp4_swizzle_position(i, cols, &r, &c);
            ck_assert_uint_lt(r, (rows + 127) / 128 * 128);
            ck_assert_uint_lt(c, (cols + 3) / 4 * 4);
            ck_assert_uint_eq(nvfp4_swizzle_offset(r, c, cols), i);
            data += r < rows && c < cols;
        }
        ck_assert_uint_eq(data, rows * cols);
    }
    size_t r, c;
    nvfp4_swizzle_position(512 + 31 * 16 + 3 * 4 + 3, 8, &r, &c);
    ck_assert_uint_eq(r, 127);
    ck_assert_uint_eq(c, 7);
}
END_TEST

START_TEST(torchao_to_blocked_order)
{
    /* torchao to_blocked: view (nRB,128,nCB,4) -> permute(0,2,1,3) ->
     * reshape(-1,4,32,4) -> transpose(1,2) -> flatten. Reproduce that index
     * map independently for a 256 x 8 matrix and compare. */
    size_t rows = 256, cols = 8, ncb = 2;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t rb = r / 128, i128 = r % 128, cb = c / 4, j4 = c % 4;
            size_t tile = rb * ncb + cb;           /* after permute: (rb, cb, i128, j4) */
            size_t a = i128 / 32, b = i128 % 32;   /* reshape(-1,4,32,4): (tile, a, b, j4) */
            size_t flat = ((tile * 32 + b) * 4 + a) * 4 + j4; /* transpose(1,2): (tile, b, a, j4) */
            ck_assert_uint_eq(nvfp4_swizzle_offset(r, c, cols), flat);
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("swizzle");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, known_offsets);
    tcase_add_test(tc, round_trip_and_padding);
    tcase_add_test(tc, position_inverts_offset);
    tcase_add_test(tc, torchao_to_blocked_order);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
