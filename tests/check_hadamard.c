/* check_hadamard.c - the random Hadamard transform (src/core/hadamard.h,
 * src/hadamard.c) and the exact accumulator it rests on
 * (src/core/exact_sum.h): matrix, constants, sign vectors, hand-computed
 * vectors, single rounding on adversarial inputs, specials, round trips,
 * the fast binary64 path against the exact path, the public API's errors
 * and thread-count independence. */
#include <check.h>
#include "support/check_main.h"
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "core/hadamard.h"

static uint32_t bits(float x) { return nvfp4_core_f32_bits(x); }
static float fbits(uint32_t u) { return nvfp4_core_f32_from_bits(u); }

/* xorshift64*: the tests' own seeded generator. */
static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A random finite fp32 with a binade in [center - spread, center + spread]
 * (clamped to the fp32 range; bottom binade gives subnormals). */
static float rand_f32(int center, int spread)
{
    int e = center - spread + (int)(rng() % (uint64_t)(2 * spread + 1));
    if (e < 0) e = 0;
    if (e > 254) e = 254;
    uint32_t u = ((uint32_t)rng() & 0x807FFFFFu) | ((uint32_t)e << 23);
    return fbits(u);
}

/* ---- matrix, constants, signs -------------------------------------------- */

START_TEST(hadamard_orthogonal)
{
    for (unsigned d = 4; d <= 128; d *= 2)
        for (unsigned i = 0; i < d; i++)
            for (unsigned k = 0; k < d; k++) {
                long dot = 0;
                for (unsigned j = 0; j < d; j++)
                    dot += (nvfp4_core_hadamard_neg(i, j) ? -1 : 1) * (nvfp4_core_hadamard_neg(k, j) ? -1 : 1);
                ck_assert_int_eq(dot, i == k ? (long)d : 0);
            }
    /* Sylvester layout: first row and column all +1, H[1][1] = -1, H[3][5] = -1 (3&5 = 1) */
    ck_assert_int_eq(nvfp4_core_hadamard_neg(0, 77), 0);
    ck_assert_int_eq(nvfp4_core_hadamard_neg(1, 1), 1);
    ck_assert_int_eq(nvfp4_core_hadamard_neg(3, 5), 1);
    ck_assert_int_eq(nvfp4_core_hadamard_neg(3, 7), 0);
}
END_TEST

START_TEST(scale_constants)
{
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(4)), 0x3F000000u);
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(8)), 0x3EB504F3u);
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(16)), 0x3E800000u);
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(32)), 0x3E3504F3u);
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(64)), 0x3E000000u);
    ck_assert_uint_eq(bits(nvfp4_core_rht_scale(128)), 0x3DB504F3u);
    /* each is 1/sqrt(d) correctly rounded to fp32 */
    for (unsigned d = 4; d <= 128; d *= 2) {
        double exact = 1.0 / sqrt((double)d);
        ck_assert_uint_eq(bits(nvfp4_core_rht_scale(d)), bits((float)exact));
    }
}
END_TEST

START_TEST(te_signs)
{
    static const float expect[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    ck_assert_uint_eq(c.size, 16);
    ck_assert_int_eq(c.signs, NVFP4_RHT_SIGNS_TE);
    ck_assert(!c.keep_fp32);
    float s[16];
    ck_assert_int_eq(nvfp4_rht_signs_fill(&c, s, NULL), NVFP4_OK);
    for (int i = 0; i < 16; i++) ck_assert_float_eq(s[i], expect[i]);
    ck_assert_uint_eq(NVFP4_RHT_TE_MASK, 0xD7E8u);
}
END_TEST

/* Seeded signs are the words of Philox4x32-10(ctr 0, key seed): for seed 0
 * the Random123 known answer {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}. */
START_TEST(seeded_signs)
{
    static const uint32_t kat[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    c.signs = NVFP4_RHT_SIGNS_SEEDED;
    c.sign_seed = 0;
    c.size = 128;
    float s[128];
    ck_assert_int_eq(nvfp4_rht_signs_fill(&c, s, NULL), NVFP4_OK);
    for (unsigned i = 0; i < 128; i++) ck_assert_float_eq(s[i], ((kat[i / 32] >> (i % 32)) & 1u) ? -1.0f : 1.0f);
    /* 0x...d5 = 1101 0101b: s[0] = -1, s[1] = +1, s[2] = -1, s[3] = +1, s[4] = -1, s[5] = +1, s[6] = -1, s[7] = -1 */
    ck_assert_float_eq(s[0], -1.0f);
    ck_assert_float_eq(s[1], 1.0f);
    ck_assert_float_eq(s[7], -1.0f);
    c.size = 8;
    ck_assert_int_eq(nvfp4_rht_signs_fill(&c, s, NULL), NVFP4_OK);
    ck_assert_float_eq(s[5], 1.0f);
    c.signs = NVFP4_RHT_SIGNS_NONE;
    ck_assert_int_eq(nvfp4_rht_signs_fill(&c, s, NULL), NVFP4_OK);
    for (unsigned i = 0; i < 8; i++) ck_assert_float_eq(s[i], 1.0f);
}
END_TEST

/* ---- hand-computed vectors ------------------------------------------------- */

static void forward16(const float *x, float *y, int fp32)
{
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    c.keep_fp32 = fp32 != 0;
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, 1, 16, y, NULL), NVFP4_OK);
}

START_TEST(unit_vectors)
{
    float x[16] = {0}, y[16];
    x[0] = 1.0f; /* s[0] = +1, H[0][j] = +1 */
    forward16(x, y, 0);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(bits(y[j]), bits(0.25f));
    x[0] = 0.0f;
    x[3] = 1.0f; /* s[3] = -1, H[3][j] = (-1)^popcount(j & 3): + - - + repeated */
    forward16(x, y, 0);
    for (int j = 0; j < 16; j++) {
        float e = (j % 4 == 0 || j % 4 == 3) ? -0.25f : 0.25f;
        ck_assert_uint_eq(bits(y[j]), bits(e));
    }
}
END_TEST

/* All ones: y[j] = (sum_i s[i] H[i][j]) / 4, the Walsh spectrum of the TE
 * sign vector; y[0] = (6 - 10)/4 and y[15] = -8/4 worked by hand. */
START_TEST(ones_vector)
{
    static const float expect[16] = {-1, 0, 1, 0, 1, 0, -1, 0, 1, 2, 1, 0, 1, 0, 1, -2};
    float x[16], y[16];
    for (int i = 0; i < 16; i++) x[i] = 1.0f;
    forward16(x, y, 1);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(bits(y[j]), bits(expect[j]));
    /* zero sums are +0 (tensor-core accumulator starting from +0) */
    ck_assert_uint_eq(bits(y[1]), 0u);
}
END_TEST

START_TEST(bf16_rounding)
{
    float x[16] = {0}, y[16];
    x[0] = 1.0f + 0x1p-10f; /* 0.25 * x is exact in fp32, not in bf16 */
    forward16(x, y, 1);
    ck_assert_uint_eq(bits(y[5]), bits(0x1.004p-2f));
    forward16(x, y, 0);
    ck_assert_uint_eq(bits(y[5]), bits(0.25f));
    x[0] = 1.0f + 0x1p-7f + 0x1p-8f; /* bf16 tie between 1+2^-7 and 1+2^-6: to even */
    forward16(x, y, 0);
    ck_assert_uint_eq(bits(y[0]), bits(0.25f * (1.0f + 0x1p-6f)));
}
END_TEST

static void group(const float *x, float *y, unsigned d, int sign_kind)
{
    uint32_t m[4];
    if (sign_kind == 0) nvfp4_core_rht_mask_none(m);
    else nvfp4_core_rht_mask_te(m);
    nvfp4_core_rht_forward_group(x, y, d, m, 0);
}

/* Single rounding of the exact sum: cases a binary64 sum gets wrong. */
START_TEST(single_rounding)
{
    float y[16];
    /* (2^24 + 1)/2 = 2^23 + 0.5 is an fp32 tie: to even 2^23 */
    float a[4] = {0x1p24f, 1.0f, 0, 0};
    group(a, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), bits(0x1p23f));
    ck_assert_uint_eq(bits(y[1]), bits(8388607.5f));
    /* + 2^-100 breaks the tie upwards: a double sum would lose it */
    float b[4] = {0x1p24f, 1.0f, 0x1p-100f, 0};
    group(b, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), bits(8388609.0f));
    ck_assert_uint_eq(bits(y[1]), bits(8388607.5f)); /* (2^24 - 1 + 2^-100)/2 rounds down to 2^23 - 0.5 */
    ck_assert_uint_eq(bits(y[2]), bits(8388608.0f)); /* (2^24 + 1 - 2^-100)/2: just below the tie */
    /* huge spread: 2^100 + 2^-100 - 2^100 = 2^-100 */
    float c[4] = {0x1p100f, 0x1p-100f, 0x1p100f, 0};
    group(c, y, 4, 0);
    /* y[1] = (x0 - x1 + x2 - x3)/2 = 2^100 - 2^-101 -> 2^100; y[3] = (x0 - x1 - x2 + x3)/2 = -2^-101 */
    ck_assert_uint_eq(bits(y[1]), bits(0x1p100f));
    ck_assert_uint_eq(bits(y[3]), bits(-0x1p-101f));
    /* d = 8: RN(c_8 * sum) from the exact product: 3 * c_8 */
    float e[8] = {1, 1, 1, 0, 0, 0, 0, 0};
    group(e, y, 8, 0);
    double p = 3.0 * (double)nvfp4_core_rht_scale(8); /* exact in double */
    ck_assert_uint_eq(bits(y[0]), bits((float)p));
}
END_TEST

START_TEST(subnormals_and_zero_signs)
{
    float y[16], x[16] = {0};
    x[0] = 3 * 0x1p-149f; /* 0.75 * 2^-149 rounds to 2^-149 */
    group(x, y, 16, 1);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(bits(y[j]), 1u);
    memset(x, 0, sizeof x);
    x[3] = 0x1p-148f; /* s[3] = -1: outputs -+2^-150, ties to even: signed zeros */
    group(x, y, 16, 1);
    ck_assert_uint_eq(bits(y[0]), 0x80000000u);
    ck_assert_uint_eq(bits(y[1]), 0x00000000u);
    ck_assert_uint_eq(bits(y[3]), 0x80000000u);
    /* all -0 inputs: exact zero sums are +0 */
    for (int i = 0; i < 16; i++) x[i] = -0.0f;
    group(x, y, 16, 1);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(bits(y[j]), 0u);
    /* subnormal sums stay exact */
    float s[4] = {0x1p-149f, 0x1p-149f, 0, 0};
    group(s, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), 1u);
    ck_assert_uint_eq(bits(y[1]), 0u);
}
END_TEST

START_TEST(specials)
{
    float y[4];
    float a[4] = {INFINITY, -INFINITY, 0, 0};
    group(a, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), 0x7FFFFFFFu); /* Inf + -Inf */
    ck_assert_uint_eq(bits(y[1]), 0x7F800000u); /* Inf - (-Inf) */
    ck_assert_uint_eq(bits(y[2]), 0x7FFFFFFFu);
    ck_assert_uint_eq(bits(y[3]), 0x7F800000u);
    float b[4] = {1.0f, fbits(0xFFC01234u), 2.0f, 3.0f};
    group(b, y, 4, 0);
    for (int j = 0; j < 4; j++) ck_assert_uint_eq(bits(y[j]), 0x7FFFFFFFu);
    float c[4] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX}; /* 2 FLT_MAX overflows; differences are 0 */
    group(c, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), 0x7F800000u);
    ck_assert_uint_eq(bits(y[1]), 0u);
    float d[4] = {-FLT_MAX, -FLT_MAX, 0, 0}; /* -FLT_MAX exactly, no overflow */
    group(d, y, 4, 0);
    ck_assert_uint_eq(bits(y[0]), bits(-FLT_MAX));
    /* bf16 output of the canonical NaN is bf16's canonical NaN */
    uint32_t m[4];
    nvfp4_core_rht_mask_none(m);
    nvfp4_core_rht_forward_group(a, y, 4, m, 1);
    ck_assert_uint_eq(bits(y[0]), 0x7FFF0000u);
    ck_assert_uint_eq(bits(y[1]), 0x7F800000u);
}
END_TEST

/* ---- round trips ----------------------------------------------------------- */

/* Integers below 2^16: every sum is an integer below 2^24 and every scaling a
 * power of two, so nothing rounds and the inverse returns the input. */
START_TEST(round_trip_exact)
{
    rng_state = 0x9E3779B97F4A7C15ull;
    const unsigned ds[3] = {4, 16, 64};
    for (int t = 0; t < 3; t++) {
        unsigned d = ds[t];
        nvfp4_rht_config c;
        nvfp4_rht_config_init(&c);
        c.size = d;
        c.signs = d == 16 ? NVFP4_RHT_SIGNS_TE : NVFP4_RHT_SIGNS_SEEDED;
        c.sign_seed = 42;
        c.keep_fp32 = true;
        const size_t rows = 5, cols = 2 * d;
        float x[5 * 128], y[5 * 128], z[5 * 128];
        for (size_t i = 0; i < rows * cols; i++) x[i] = (float)((int)(rng() % (1u << 17)) - (1 << 16));
        ck_assert_int_eq(nvfp4_rht_forward(&c, x, rows, cols, y, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_rht_inverse(&c, y, rows, cols, z, NULL), NVFP4_OK);
        for (size_t i = 0; i < rows * cols; i++) {
            if (x[i] != 0) ck_assert_uint_eq(bits(z[i]), bits(x[i]));
            else ck_assert(z[i] == 0); /* +0 times s[i] */
        }
    }
}
END_TEST

/* General inputs: each forward output is within u |y| of the exact transform
 * (u = 2^-24 fp32, 2^-8 bf16) and the inverse adds its own rounding, so
 * |z_i - x_i| <= u_out |z_i| + c sum_j u_f |y_j| (1 + 2^-20) + |d c^2 - 1| |x_i| + 2^-149. */
START_TEST(round_trip_rounded)
{
    rng_state = 12345;
    for (unsigned d = 4; d <= 128; d *= 2)
        for (int bf = 0; bf < 2; bf++) {
            nvfp4_rht_config c;
            nvfp4_rht_config_init(&c);
            c.size = d;
            c.signs = NVFP4_RHT_SIGNS_SEEDED;
            c.sign_seed = d;
            c.keep_fp32 = true;
            float x[128], y[128], z[128];
            for (int rep = 0; rep < 200; rep++) {
                for (unsigned i = 0; i < d; i++) x[i] = rand_f32(127, 10);
                c.keep_fp32 = !bf;
                ck_assert_int_eq(nvfp4_rht_forward(&c, x, 1, d, y, NULL), NVFP4_OK);
                c.keep_fp32 = true;
                ck_assert_int_eq(nvfp4_rht_inverse(&c, y, 1, d, z, NULL), NVFP4_OK);
                double cd = nvfp4_core_rht_scale(d), uf = bf ? 0x1p-8 : 0x1p-24, sy = 0;
                for (unsigned j = 0; j < d; j++) sy += fabs((double)y[j]);
                for (unsigned i = 0; i < d; i++) {
                    double tol = 0x1p-24 * fabs((double)z[i]) + cd * uf * sy * (1 + 0x1p-20) +
                                 fabs((double)d * cd * cd - 1.0) * fabs((double)x[i]) + 0x1p-149;
                    double err = fabs((double)z[i] - (double)x[i]);
                    ck_assert_msg(err <= tol, "d=%u bf16=%d: |%a - %a| > %a", d, bf, (double)z[i], (double)x[i], tol);
                }
            }
        }
}
END_TEST

/* ---- fast path against the exact path, exact path against __float128 ------- */

START_TEST(fast_path_matches_exact_path)
{
    rng_state = 777;
    long fast = 0, total = 0;
    for (int rep = 0; rep < 3000; rep++) {
        unsigned d = 4u << (rng() % 6);
        int spread = (int)(rng() % 24);
        float x[128], y[128];
        uint32_t m[4];
        nvfp4_core_rht_mask_seeded(rng(), m);
        for (unsigned i = 0; i < d; i++) x[i] = rng() % 9 == 0 ? (rng() & 1 ? -0.0f : 0.0f) : rand_f32(127, spread);
        fast += nvfp4_core_rht_double_exact(x, d);
        total++;
        for (int fwd = 0; fwd < 2; fwd++) {
            if (fwd) nvfp4_core_rht_forward_group(x, y, d, m, 0);
            else nvfp4_core_rht_inverse_group(x, y, d, m, 0);
            float c = nvfp4_core_rht_scale(d);
            for (unsigned j = 0; j < d; j++) {
                float e = nvfp4_core_rht_output_exact(x, d, m, fwd, j, c);
                if (!fwd && nvfp4_core_rht_sign_neg(m, j)) e = nvfp4_core_f32_negate(e);
                ck_assert_msg(bits(e) == bits(y[j]), "d=%u j=%u fwd=%d: %a vs %a", d, j, fwd, (double)e, (double)y[j]);
            }
        }
    }
    ck_assert(fast > total / 4); /* both paths were exercised */
    ck_assert(fast < total);
}
END_TEST

#ifdef __SIZEOF_FLOAT128__
/* Terms within a 60-binade window: the exact sum of up to 64 terms needs at
 * most 24 + 60 + 6 < 113 bits, so __float128 sums exactly and its conversion
 * rounds once: an independent reference. */
START_TEST(xsum_vs_float128)
{
    rng_state = 2024;
    for (int rep = 0; rep < 20000; rep++) {
        int center = 1 + (int)(rng() % 253), spread = (int)(rng() % 30);
        if (rep % 5 == 0) center = (int)(rng() % 4); /* subnormal neighbourhood */
        int n = 1 + (int)(rng() % 64);
        nvfp4_xsum a;
        nvfp4_core_xsum_init(&a);
        __float128 ref = -0.0; /* -0 + t is t, and -0 + -0 = -0: the IEEE sum of the terms */
        float terms[64];
        for (int i = 0; i < n; i++) {
            float t = rand_f32(center, spread);
            if (i > 0 && rng() % 3 == 0) t = -terms[rng() % (unsigned)i]; /* cancellation */
            terms[i] = t;
            nvfp4_core_xsum_add_f32(&a, t);
            ref += (__float128)t;
        }
        ck_assert_uint_eq(bits(nvfp4_core_xsum_round_f32(&a)), bits((float)ref));
        double d64 = nvfp4_core_xsum_round_f64(&a), r64 = (double)ref;
        ck_assert(memcmp(&d64, &r64, sizeof d64) == 0);
    }
}
END_TEST

/* d = 8, 32, 128 on the binary64 path: inputs crafted so that c_d * sum lies
 * within 2^-50 (relative) of an fp32 midpoint, where rounding the binary64
 * product to fp32 would double-round; the round-to-odd step must agree with
 * the exact accumulator every time, and the naive rounding must be wrong in
 * some of them (else the test would not be sharp). */
START_TEST(odd_sizes_near_midpoints)
{
    rng_state = 4242;
    long naive_wrong = 0, fast = 0;
    for (int rep = 0; rep < 40000; rep++) {
        unsigned d = 8u << (2 * (rng() % 3));
        float c = nvfp4_core_rht_scale(d);
        float f = fbits(((uint32_t)(2 + rng() % 250) << 23) | (uint32_t)(rng() & 0x7FFFFF));
        __float128 mid = ((__float128)f + (__float128)fbits(bits(f) + 1)) / 2, target = mid / (__float128)c;
        float x[128] = {0}, y[128];
        x[0] = (float)target;
        int e0;
        (void)nvfp4_core_f32_split(x[0], &e0);
        __float128 unit = 1; /* the second input keeps bits down to 2^(e0 - 26): the binary64 path's reach */
        for (int q = 0; q < 26 - e0; q++) unit /= 2;
        for (int q = 0; q < e0 - 26; q++) unit *= 2;
        x[1] = (float)((__float128)(long long)((target - (__float128)x[0]) / unit) * unit);
        uint32_t m[4];
        nvfp4_core_rht_mask_none(m);
        fast += nvfp4_core_rht_double_exact(x, d);
        nvfp4_core_rht_forward_group(x, y, d, m, 0);
        float e = nvfp4_core_rht_output_exact(x, d, m, 1, 0, c);
        ck_assert_msg(bits(e) == bits(y[0]), "d=%u: %a vs %a", d, (double)e, (double)y[0]);
        double v = (double)x[0] + (double)x[1];
        if (nvfp4_core_rht_double_exact(x, d) && bits((float)(v * (double)c)) != bits(e)) naive_wrong++;
    }
    ck_assert(fast > 10000);
    ck_assert(naive_wrong > 20);
}
END_TEST

/* Exact fp32 products (48 bits) summed, against __float128. */
START_TEST(xsum_products_vs_float128)
{
    rng_state = 99;
    for (int rep = 0; rep < 20000; rep++) {
        int center = 60 + (int)(rng() % 130), spread = (int)(rng() % 12);
        int n = 1 + (int)(rng() % 16);
        nvfp4_xsum a;
        nvfp4_core_xsum_init(&a);
        __float128 ref = 0;
        for (int i = 0; i < n; i++) {
            float x = rand_f32(center, spread), y = rand_f32(254 - center, spread);
            int neg = (int)(rng() & 1);
            nvfp4_core_xsum_add_prod_f32(&a, x, y, neg);
            __float128 p = (__float128)x * (__float128)y;
            ref += neg ? -p : p;
        }
        ck_assert_uint_eq(bits(nvfp4_core_xsum_round_f32(&a)), bits((float)ref));
        double d64 = nvfp4_core_xsum_round_f64(&a);
        ck_assert(d64 == (double)ref);
    }
}
END_TEST
#endif

static float xsum_of(const float *t, int n)
{
    nvfp4_xsum a;
    nvfp4_core_xsum_init(&a);
    for (int i = 0; i < n; i++) nvfp4_core_xsum_add_f32(&a, t[i]);
    return nvfp4_core_xsum_round_f32(&a);
}

/* Spreads beyond any binary floating format, ties, overflow threshold. */
START_TEST(xsum_adversarial)
{
    float t1[3] = {0x1p127f, 0x1p-149f, -0x1p127f}; /* the whole fp32 range */
    ck_assert_uint_eq(bits(xsum_of(t1, 3)), 1u);
    float t2[2] = {1.0f, 0x1p-24f}; /* tie: to even */
    ck_assert_uint_eq(bits(xsum_of(t2, 2)), bits(1.0f));
    float t3[3] = {1.0f, 0x1p-24f, 0x1p-149f}; /* sticky bit 125 binades down */
    ck_assert_uint_eq(bits(xsum_of(t3, 3)), bits(1.0f + 0x1p-23f));
    float t4[3] = {1.0f, 0x1p-24f, -0x1p-149f};
    ck_assert_uint_eq(bits(xsum_of(t4, 3)), bits(1.0f));
    float t5[2] = {1.0f + 0x1p-23f, 0x1p-24f}; /* tie to even, upwards */
    ck_assert_uint_eq(bits(xsum_of(t5, 2)), bits(1.0f + 0x1p-22f));
    float t6[2] = {FLT_MAX, 0x1p103f}; /* exactly the overflow threshold: Inf */
    ck_assert_uint_eq(bits(xsum_of(t6, 2)), 0x7F800000u);
    float t7[3] = {FLT_MAX, 0x1p103f, -0x1p-149f}; /* just below it */
    ck_assert_uint_eq(bits(xsum_of(t7, 3)), bits(FLT_MAX));
    float t8[3] = {-FLT_MAX, -FLT_MAX, FLT_MAX}; /* intermediate beyond fp32, result finite */
    ck_assert_uint_eq(bits(xsum_of(t8, 3)), bits(-FLT_MAX));
    float t9[2] = {-0.0f, -0.0f};
    ck_assert_uint_eq(bits(xsum_of(t9, 2)), 0x80000000u);
    float t10[2] = {-0.0f, 0.0f};
    ck_assert_uint_eq(bits(xsum_of(t10, 2)), 0u);
    float t11[2] = {0x1p-126f, -0x1p-149f}; /* subnormal result, exact */
    ck_assert_uint_eq(bits(xsum_of(t11, 2)), 0x007FFFFFu);
    ck_assert_uint_eq(bits(xsum_of(NULL, 0)), 0u);
    /* products: smallest and largest */
    nvfp4_xsum a;
    nvfp4_core_xsum_init(&a);
    nvfp4_core_xsum_add_prod_f32(&a, 0x1p-149f, 0x1p-149f, 0);
    nvfp4_core_xsum_add_prod_f32(&a, FLT_MAX, FLT_MAX, 0);
    nvfp4_core_xsum_add_prod_f32(&a, FLT_MAX, FLT_MAX, 1);
    ck_assert(nvfp4_core_xsum_round_f64(&a) == 0x1p-298);
    ck_assert_uint_eq(bits(nvfp4_core_xsum_round_f32(&a)), 0u);
    nvfp4_core_xsum_add_prod_f32(&a, INFINITY, 0.0f, 0); /* Inf * 0 */
    ck_assert_uint_eq(bits(nvfp4_core_xsum_round_f32(&a)), 0x7FFFFFFFu);
    nvfp4_core_xsum_init(&a);
    nvfp4_core_xsum_add_prod_f32(&a, -INFINITY, 2.0f, 1);
    ck_assert_uint_eq(bits(nvfp4_core_xsum_round_f32(&a)), 0x7F800000u);
}
END_TEST

/* More additions than the normalization interval (2^26): no limb overflows. */
START_TEST(xsum_many_terms)
{
    nvfp4_xsum a;
    nvfp4_core_xsum_init(&a);
    const long n = (1L << 26) + 3;
    for (long i = 0; i < n; i++) nvfp4_core_xsum_add_prod_f32(&a, FLT_MAX, -FLT_MAX, 0);
    double expect = -(double)n * (double)FLT_MAX * (double)FLT_MAX; /* n < 2^27: exact? n*F^2 has 27+48 bits */
    double got = nvfp4_core_xsum_round_f64(&a);
    ck_assert(fabs(got - expect) <= 0x1p-52 * fabs(expect));
    /* and exactly: subtract n - 1 copies again, one product remains */
    for (long i = 0; i < n - 1; i++) nvfp4_core_xsum_add_prod_f32(&a, FLT_MAX, FLT_MAX, 0);
    ck_assert(nvfp4_core_xsum_round_f64(&a) == -(double)FLT_MAX * (double)FLT_MAX);
}
END_TEST

/* ---- public API ------------------------------------------------------------- */

/* ---- the vector paths' exactness limits (NVFP4_CORE_RHT_*) --------------- */

/* A lane of 16 random fp32 values whose binades span exactly [emin, emin +
 * spread] (biased), signs random: the limits' edge. */
static void lane_at_spread(int emin, int spread, int bf16, float v[16])
{
    for (unsigned i = 0; i < 16; i++) {
        int e = emin + (int)(rng() % (uint64_t)(spread + 1));
        if (i == 0) e = emin;
        if (i == 1) e = emin + spread;
        uint32_t mant = (uint32_t)rng() & (bf16 ? 0x007F0000u : 0x007FFFFFu);
        v[i] = fbits(((uint32_t)rng() & 0x80000000u) | ((uint32_t)e << 23) | mant);
    }
}

START_TEST(rht16_exp_range)
{
    float z[16] = {0}, v[16] = {0};
    int emax, emin;
    nvfp4_core_rht16_exp_range(z, &emax, &emin);
    ck_assert_int_eq(emax, 0);
    ck_assert_int_eq(emin, 255);
    ck_assert(nvfp4_core_rht16_lane_within(emax, emin, 0)); /* all zero: spread -255, every path takes it */
    v[3] = -2.0f;      /* biased 128 */
    v[7] = 0.5f;       /* 126 */
    v[9] = 0x1p-140f;  /* subnormal: biased 0 */
    v[11] = -0.0f;     /* a zero is not the smallest nonzero */
    nvfp4_core_rht16_exp_range(v, &emax, &emin);
    ck_assert_int_eq(emax, 128);
    ck_assert_int_eq(emin, 0);
    ck_assert(!nvfp4_core_rht16_lane_within(emax, emin, NVFP4_CORE_RHT_SPLIT64_SPREAD)); /* Emin < 3 */
    v[9] = 0.0f;
    nvfp4_core_rht16_exp_range(v, &emax, &emin);
    ck_assert_int_eq(emin, 126);
    ck_assert(nvfp4_core_rht16_lane_within(emax, emin, 2));
    ck_assert(!nvfp4_core_rht16_lane_within(emax, emin, 1));
    v[0] = 0x1p124f; /* biased 251 > 250 */
    nvfp4_core_rht16_exp_range(v, &emax, &emin);
    ck_assert_int_eq(emax, 251);
    ck_assert(!nvfp4_core_rht16_lane_within(emax, emin, 200));
}
END_TEST

/* NVFP4_CORE_RHT_F64_SPREAD: on lanes at the limit the binary64 butterfly
 * of s_i x_i / 4, rounded once, gives the exact accumulator's bits (the
 * rht16_f64 path's claim), for every binade offset tried. Random lanes
 * rarely meet a double rounding, so a lane built for one shows that a
 * limit is needed: {1, 2^-24, 2^-60} (spread 60; TE's signs are + there)
 * sums to 1 + 2^-24 + 2^-60, which binary64 rounds to the fp32 midpoint 1 +
 * 2^-24, whose tie then goes to 1 instead of 1 + 2^-23. */
START_TEST(rht16_f64_limit_exact)
{
    uint32_t mask[4];
    nvfp4_core_rht_mask_te(mask);
    float adv[16] = {1.0f, 0x1p-24f, 0x1p-60f};
    int ea, eb;
    nvfp4_core_rht16_exp_range(adv, &ea, &eb);
    ck_assert(!nvfp4_core_rht16_lane_within(ea, eb, NVFP4_CORE_RHT_F64_SPREAD));
    double ua[16];
    for (unsigned i = 0; i < 16; i++) ua[i] = (nvfp4_core_rht_sign_neg(mask, i) ? -0.25 : 0.25) * (double)adv[i];
    nvfp4_core_fwht_f64(ua, 16);
    ck_assert_uint_eq(bits((float)ua[0]), bits(0.25f));
    ck_assert_uint_eq(bits(nvfp4_core_rht_output_exact(adv, 16, mask, 1, 0, 0.25f)), bits(0.25f + 0x1p-25f));
    rng_state = 0x5EEDF64ull;
    for (int t = 0; t < 4000; t++) {
        float v[16];
        int emin = NVFP4_CORE_RHT_EMIN_LOW + (int)(rng() % 200u);
        int spread = t % 2 ? NVFP4_CORE_RHT_F64_SPREAD : (int)(rng() % (NVFP4_CORE_RHT_F64_SPREAD + 1));
        if (emin + spread > NVFP4_CORE_RHT_EMAX_HIGH) emin = NVFP4_CORE_RHT_EMAX_HIGH - spread;
        lane_at_spread(emin, spread, 0, v);
        int emax, emn;
        nvfp4_core_rht16_exp_range(v, &emax, &emn);
        ck_assert(nvfp4_core_rht16_lane_within(emax, emn, NVFP4_CORE_RHT_F64_SPREAD));
        double u[16];
        for (unsigned i = 0; i < 16; i++) u[i] = (nvfp4_core_rht_sign_neg(mask, i) ? -0.25 : 0.25) * (double)v[i];
        nvfp4_core_fwht_f64(u, 16);
        for (unsigned k = 0; k < 16; k++) {
            float want = nvfp4_core_rht_output_exact(v, 16, mask, 1, k, 0.25f);
            float got = u[k] == 0.0 ? 0.0f : (float)u[k];
            ck_assert_msg(bits(got) == bits(want), "trial %d output %u: %08x != %08x", t, k, bits(got), bits(want));
        }
    }
}
END_TEST

/* NVFP4_CORE_RHT_BF16_INT_SPREAD and _EMIN_LOW: bf16 lanes at the limit
 * scaled by 2^(7 - e_min) are integers whose 16-term signed sums fit int32
 * (rht16_bf16_int's claim); converted once to fp32 and scaled by 2^(e_min
 * - 9) they give the exact accumulator's bits. */
START_TEST(rht16_bf16_int_limit_exact)
{
    uint32_t mask[4];
    nvfp4_core_rht_mask_te(mask);
    rng_state = 0xB16B16ull;
    for (int t = 0; t < 4000; t++) {
        float v[16];
        int emin = NVFP4_CORE_RHT_BF16_INT_EMIN_LOW + (int)(rng() % 200u);
        int spread = NVFP4_CORE_RHT_BF16_INT_SPREAD;
        if (emin + spread > NVFP4_CORE_RHT_EMAX_HIGH) emin = NVFP4_CORE_RHT_EMAX_HIGH - spread;
        lane_at_spread(emin, spread, 1, v);
        int64_t h[16];
        for (unsigned i = 0; i < 16; i++) {
            double s = ldexp((double)v[i], 7 - (emin - 127));
            ck_assert(s == floor(s));
            h[i] = (int64_t)(nvfp4_core_rht_sign_neg(mask, i) ? -s : s);
        }
        for (unsigned k = 0; k < 16; k++) {
            int64_t sum = 0;
            for (unsigned i = 0; i < 16; i++) sum += nvfp4_core_hadamard_neg(i, k) ? -h[i] : h[i];
            ck_assert(sum < INT64_C(2147483648) && sum >= -INT64_C(2147483648));
            float got = (float)(int32_t)sum * ldexpf(1.0f, emin - 127 - 9);
            float want = nvfp4_core_rht_output_exact(v, 16, mask, 1, k, 0.25f);
            ck_assert_msg(bits(got) == bits(want), "trial %d output %u: %08x != %08x", t, k, bits(got), bits(want));
        }
    }
}
END_TEST

START_TEST(api_errors)
{
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    nvfp4_error e;
    float x[48] = {0}, y[48];
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, 2, 24, y, &e), NVFP4_ESHAPE);
    ck_assert(strstr(e.message, "24 columns") != NULL);
    c.size = 8;
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, 2, 24, y, &e), NVFP4_EINVAL); /* TE signs need d = 16 */
    ck_assert(strstr(e.message, "16 entries") != NULL);
    c.signs = NVFP4_RHT_SIGNS_NONE;
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, 2, 24, y, &e), NVFP4_OK);
    c.size = 12;
    ck_assert_int_eq(nvfp4_rht_inverse(&c, x, 2, 24, y, &e), NVFP4_EINVAL);
    c.size = 256;
    ck_assert_int_eq(nvfp4_rht_signs_fill(&c, y, &e), NVFP4_EINVAL);
    c.size = 16;
    ck_assert_int_eq(nvfp4_rht_forward(&c, NULL, 3, 16, y, &e), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_rht_forward(&c, NULL, 0, 16, NULL, &e), NVFP4_OK); /* empty */
    ck_assert_int_eq(nvfp4_rht_forward(NULL, x, 3, 16, y, &e), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, SIZE_MAX / 2, 16, y, &e), NVFP4_ENOMEM);
}
END_TEST

/* In place equals out of place; bytes do not depend on the thread count. */
START_TEST(in_place_and_threads)
{
    const size_t rows = 300, cols = 256, n = rows * cols;
    float *x = malloc(n * sizeof *x), *y1 = malloc(n * sizeof *x), *y2 = malloc(n * sizeof *x);
    ck_assert(x && y1 && y2);
    rng_state = 5;
    for (size_t i = 0; i < n; i++) x[i] = rand_f32(127, i % 7 == 0 ? 40 : 8);
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    omp_set_num_threads(1);
    ck_assert_int_eq(nvfp4_rht_forward(&c, x, rows, cols, y1, NULL), NVFP4_OK);
    const int threads[2] = {2, 7};
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(threads[t]);
        memcpy(y2, x, n * sizeof *x);
        ck_assert_int_eq(nvfp4_rht_forward(&c, y2, rows, cols, y2, NULL), NVFP4_OK);
        ck_assert(memcmp(y1, y2, n * sizeof *x) == 0);
    }
    free(x);
    free(y1);
    free(y2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hadamard");
    TCase *tc = tcase_create("rht");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hadamard_orthogonal);
    tcase_add_test(tc, scale_constants);
    tcase_add_test(tc, te_signs);
    tcase_add_test(tc, seeded_signs);
    tcase_add_test(tc, unit_vectors);
    tcase_add_test(tc, ones_vector);
    tcase_add_test(tc, bf16_rounding);
    tcase_add_test(tc, single_rounding);
    tcase_add_test(tc, subnormals_and_zero_signs);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, round_trip_exact);
    tcase_add_test(tc, round_trip_rounded);
    tcase_add_test(tc, fast_path_matches_exact_path);
#ifdef __SIZEOF_FLOAT128__
    tcase_add_test(tc, xsum_vs_float128);
    tcase_add_test(tc, xsum_products_vs_float128);
    tcase_add_test(tc, odd_sizes_near_midpoints);
#endif
    tcase_add_test(tc, xsum_adversarial);
    tcase_add_test(tc, xsum_many_terms);
    tcase_add_test(tc, rht16_exp_range);
    tcase_add_test(tc, rht16_f64_limit_exact);
    tcase_add_test(tc, rht16_bf16_int_limit_exact);
    tcase_add_test(tc, api_errors);
    tcase_add_test(tc, in_place_and_threads);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
