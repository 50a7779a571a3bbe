/*
 * check_swizzle_fast.c - nvfp4_simd_scale_swizzle (src/simd/simd_swizzle.c,
 * the vector transpose behind nvfp4_scale_swizzle and `nvfp4 bench`'s
 * scale_swizzle) against the byte-by-byte layout nvfp4_scale_to_layout
 * (src/quant/layout.c): every byte, padding included, on shapes around the
 * 128-row bands and 16-byte column chunks, one and two threads.
 */
#include <check.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "simd/simd_kernels.h"
#include "support/check_main.h"

static uint32_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* rows x cols random scale bytes through both swizzles; the fast one's
 * output starts as 0xA5 so that an unwritten byte shows. */
static void check_shape(size_t rows, size_t cols, int threads)
{
    size_t n = rows * cols, nswz = nvfp4_swizzled_size(rows, cols);
    uint8_t *lin = malloc(n ? n : 1), *want = malloc(nswz), *got = malloc(nswz);
    ck_assert(lin && want && got);
    for (size_t i = 0; i < n; i++) lin[i] = (uint8_t)(rnd() | 1u); /* nonzero: padding must read 0 */
    nvfp4_scale_to_layout(NVFP4_SCALE_LAYOUT_128X4, lin, rows, cols, want);
    memset(got, 0xA5, nswz);
    omp_set_num_threads(threads);
    nvfp4_simd_scale_swizzle(lin, rows, cols, got);
    ck_assert_int_eq(memcmp(got, want, nswz), 0);
    memset(got, 0xA5, nswz);
    nvfp4_scale_swizzle(lin, rows, cols, got); /* the library's path */
    for (size_t i = 0; i < nswz; i++)
        if (got[i] != want[i])
            ck_abort_msg("%zu x %zu, %d threads: byte %zu of %zu is 0x%02x, reference 0x%02x", rows, cols, threads, i,
                         nswz, got[i], want[i]);
    free(lin);
    free(want);
    free(got);
}

START_TEST(shapes_around_bands_and_chunks)
{
    static const size_t shapes[][2] = {{1, 1},    {1, 16},    {31, 5},    {127, 3},   {128, 4},  {128, 16},
                                       {129, 16}, {200, 17},  {256, 31},  {256, 32},  {300, 67}, {384, 100},
                                       {1024, 512}, {2048, 640}, {2100, 515}};
    rng_state = 77;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int th = 1; th <= 2; th++) check_shape(shapes[s][0], shapes[s][1], th);
}
END_TEST

START_TEST(random_shapes)
{
    rng_state = 4711;
    for (int k = 0; k < 60; k++) check_shape(1 + rnd() % 700, 1 + rnd() % 90, 1 + k % 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("swizzle_fast");
    TCase *tc = tcase_create("bytes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shapes_around_bands_and_chunks);
    tcase_add_test(tc, random_shapes);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
