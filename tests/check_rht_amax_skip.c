/*
 * check_rht_amax_skip.c - the post-RHT amax pass skips a tile when an upper
 * bound from the plain fp32 butterfly (simd_avx512.c's
 * rht16_tile_amax_bound) is below an exact tile maximum already seen. This
 * test (which runs every variant; simd_avx2.c has the same filter) builds
 * the case where that bound's error margin matters: tile A's
 * exact maximum L lies strictly between tile B's plain-butterfly maximum
 * and its exact maximum. Without the margin, B is skipped and the amax
 * comes out as L; with it, the amax must be B's exact maximum, bit for bit.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hadamard.h"
#include "nvfp4.h"
#include "simd/simd_kernels.h"
#include "support/check_main.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* max |y_j| of one column by the plain fp32 butterfly on s_i x_i / 4, in
 * fwht16_ps's order (stages h = 1, 2, 4, 8). */
static float plain_butterfly_max(const float x[16], const uint32_t mask[4])
{
    float v[16];
    for (unsigned i = 0; i < 16; i++) v[i] = x[i] * (nvfp4_core_rht_sign_neg(mask, i) ? -0.25f : 0.25f);
    for (unsigned h = 1; h < 16; h <<= 1)
        for (unsigned q = 0; q < 16; q++)
            if (!(q & h)) {
                float a = v[q], b = v[q + h];
                v[q] = a + b;
                v[q + h] = a - b;
            }
    float m = 0.0f;
    for (unsigned i = 0; i < 16; i++) m = fmaxf(m, fabsf(v[i]));
    return m;
}

static float exact_max(const float x[16], const uint32_t mask[4])
{
    float y[16], m = 0.0f;
    nvfp4_core_rht_forward_group(x, y, 16, mask, 0);
    for (unsigned i = 0; i < 16; i++) m = fmaxf(m, fabsf(y[i]));
    return m;
}

START_TEST(margin_is_needed_and_kept)
{
    uint32_t mask[4];
    nvfp4_core_rht_mask_te(mask);
    /* a column whose plain-butterfly maximum is at least two floats below the exact one */
    float col[16], approx = 0.0f, exact = 0.0f;
    int found = 0;
    for (long t = 0; t < 2000000 && !found; t++) {
        for (unsigned i = 0; i < 16; i++) {
            float m = 1.0f + (float)(rnd() & 0x7FFFFF) * 0x1p-23f;
            col[i] = ldexpf((rnd() & 1) ? -m : m, (int)(rnd() % 9) - 4);
        }
        approx = plain_butterfly_max(col, mask);
        exact = exact_max(col, mask);
        found = nextafterf(approx, INFINITY) < exact;
    }
    ck_assert_msg(found, "no column with a plain-butterfly maximum two floats low in 2e6 tries");
    float L = nextafterf(approx, INFINITY); /* approx < L < exact */

    /* 16 rows x 32 columns: tile A (columns 0-15) has the single value 4L at
     * row 0 of column 0, so its exact maximum is L; tile B (16-31) holds the
     * column in column 16. Everything else is zero. */
    const size_t rows = 16, cols = 32;
    float *x = calloc(rows * cols, sizeof *x);
    ck_assert(x != NULL);
    x[0] = 4.0f * L;
    for (unsigned i = 0; i < 16; i++) x[i * cols + 16] = col[i];

    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.rows = rows;
    j.cols = cols;
    j.rht = 1;
    memcpy(j.rht_mask, mask, sizeof mask);
    j.rht_round_bf16 = 0;
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
        float got = nvfp4_simd_kernels_for((nvfp4_simd_variant)v)->rht_amax(&j, 0, 1);
        ck_assert_msg(memcmp(&got, &exact, 4) == 0, "variant %s: RHT amax %a, exact %a (tile A's %a, B's plain %a)",
                      nvfp4_simd_name((nvfp4_simd_variant)v), (double)got, (double)exact, (double)L,
                      (double)approx);
    }
    free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rht_amax_skip");
    TCase *tc = tcase_create("bound");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, margin_is_needed_and_kept);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
