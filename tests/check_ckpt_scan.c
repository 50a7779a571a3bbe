/*
 * check_ckpt_scan.c - the statistics `nvfp4 ckpt` gathers over a layer's
 * codes and scale bytes (ckpt_scan_blocks, src/ckpt/blocks.c: the subset
 * counts of the AVX2 path, the byte tables of the portable one) against a
 * byte-by-byte count written here: code histogram, scale zeros, NaNs,
 * minimum and maximum, the largest decoded magnitude; under every SIMD
 * variant this CPU has, at one and two threads, on lengths with a tail of
 * 1-3 blocks after the groups of 4 and over several 64K-block chunks.
 */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_internal.h"
#include "nvfp4.h"
#include "nvfp4/simd.h"
#include "support/check_main.h"

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33);
}

/* The statistics one byte and one block at a time. */
static void reference(const uint8_t *codes, const uint8_t *scales, size_t nblocks, double dmult, nvfp4_ckpt_layer *l)
{
    memset(l, 0, sizeof *l);
    double smin = INFINITY, smax = 0, bmax = 0;
    for (size_t b = 0; b < nblocks; b++) {
        int mag = 0;
        for (int j = 0; j < 8; j++) {
            uint8_t byte = codes[8 * b + (size_t)j];
            l->code_hist[byte & 15]++;
            l->code_hist[byte >> 4]++;
            if ((byte & 7) > mag) mag = byte & 7;
            if ((byte >> 4 & 7) > mag) mag = byte >> 4 & 7;
        }
        double s = nvfp4_e4m3_to_f32(scales[b]);
        if (s != s) {
            l->scale_nan++;
            continue;
        }
        if (s == 0) l->scale_zero++;
        else if (s < smin) smin = s;
        if (s > smax) smax = s;
        double v = (double)nvfp4_e2m1_to_f32((uint8_t)mag) * s;
        if (v > bmax) bmax = v;
    }
    l->scale_count = nblocks;
    l->scale_min = isinf(smin) ? 0 : smin;
    l->scale_max = smax;
    l->amax_decoded = bmax * fabs(dmult);
}

/* Random blocks with what a checkpoint can hold: zero blocks, blocks whose
 * largest magnitude is below 7 (1-5 codes drawn from a smaller range), NaN
 * (0x7F, 0xFF), zero and negative scale bytes. */
static void fill(uint8_t *codes, uint8_t *scales, size_t nblocks)
{
    for (size_t b = 0; b < nblocks; b++) {
        uint32_t kind = rnd() % 8;
        for (int j = 0; j < 8; j++) {
            uint8_t byte = (uint8_t)rnd();
            if (kind == 0) byte = 0;
            else if (kind <= 3) byte &= (uint8_t)(0x88u | (0x11u * ((1u << kind) - 1u))); /* magnitudes < 2^kind */
            codes[8 * b + (size_t)j] = byte;
        }
        uint32_t s = rnd() % 16;
        scales[b] = s == 0 ? 0x00 : s == 1 ? 0x7F : s == 2 ? 0xFF : s == 3 ? (uint8_t)(0x80u | rnd() % 0x7F)
                                                                         : (uint8_t)(rnd() % 0x7F);
    }
}

static void check_length(size_t nblocks, int threads)
{
    uint8_t *codes = malloc(8 * nblocks + 1), *scales = malloc(nblocks + 1);
    ck_assert(codes && scales);
    fill(codes, scales, nblocks);
    nvfp4_ckpt_layer want;
    reference(codes, scales, nblocks, -0.25, &want);
    omp_set_num_threads(threads);
    for (int v = NVFP4_SIMD_SCALAR; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
        ck_assert_int_eq(nvfp4_simd_set((nvfp4_simd_variant)v, NULL), NVFP4_OK);
        nvfp4_ckpt_layer got;
        memset(&got, 0, sizeof got);
        ckpt_scan_blocks(codes, scales, nblocks, -0.25, &got);
        for (int c = 0; c < 16; c++)
            if (got.code_hist[c] != want.code_hist[c])
                ck_abort_msg("%s, %zu blocks, %d threads: code 0x%X counted %llu times, reference %llu",
                             nvfp4_simd_name((nvfp4_simd_variant)v), nblocks, threads, c,
                             (unsigned long long)got.code_hist[c], (unsigned long long)want.code_hist[c]);
        ck_assert_uint_eq(got.scale_count, want.scale_count);
        ck_assert_uint_eq(got.scale_zero, want.scale_zero);
        ck_assert_uint_eq(got.scale_nan, want.scale_nan);
        ck_assert(got.scale_min == want.scale_min && got.scale_max == want.scale_max);
        ck_assert_msg(got.amax_decoded == want.amax_decoded, "%s: amax %.17g, reference %.17g",
                      nvfp4_simd_name((nvfp4_simd_variant)v), got.amax_decoded, want.amax_decoded);
    }
    ck_assert_int_eq(nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL), NVFP4_OK);
    free(codes);
    free(scales);
}

START_TEST(tails_and_slices)
{
    /* 0-7 blocks, around the 4-block groups, the 2048-block slices and their 15- and 120-group folds */
    static const size_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 59, 60, 61, 479, 480, 481, 2047, 2048, 2049, 5001};
    rng_state = 11;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) check_length(lengths[i], 1);
}
END_TEST

START_TEST(chunks_and_threads)
{
    rng_state = 12;
    check_length(3 * 65536 + 7, 1);
    check_length(3 * 65536 + 7, 2);
}
END_TEST

START_TEST(all_codes_one_value)
{
    /* each of the 16 codes alone: inclusion-exclusion must give all of them to one bin */
    for (int c = 0; c < 16; c++) {
        uint8_t codes[8 * 64], scales[64];
        memset(codes, c | c << 4, sizeof codes);
        memset(scales, 0x38, sizeof scales); /* 1.0 */
        nvfp4_ckpt_layer got;
        memset(&got, 0, sizeof got);
        ckpt_scan_blocks(codes, scales, 64, 1.0, &got);
        for (int k = 0; k < 16; k++) ck_assert_uint_eq(got.code_hist[k], k == c ? 1024u : 0u);
        ck_assert(got.amax_decoded == (double)fabsf(nvfp4_e2m1_to_f32((uint8_t)c)));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ckpt_scan");
    TCase *tc = tcase_create("counts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tails_and_slices);
    tcase_add_test(tc, chunks_and_threads);
    tcase_add_test(tc, all_codes_one_value);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
