/* check_formats.c - scalar codecs: code tables, every E2M1 boundary and its
 * float neighbours, E4M3 saturation and subnormals, UE8M0 in all modes,
 * BF16/FP16 ties and overflow, stochastic rounding counted exactly over all
 * 256 random bytes, and (where the CUDA toolkit is installed) bit-for-bit
 * agreement with NVIDIA's host conversion code on a seeded 2^24 sample plus
 * every hard case of tests/hardcases.h. The exhaustive 2^32 comparison is
 * tests/long_oracle.c (`make check-long`). */
#include <check.h>
#include "support/check_main.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/e4m3.h"
#include "hardcases.h"
#include "nvfp4.h"
#include "ue5m3_ref.h"

#if NVFP4_HAVE_CUDA_ORACLES
#include "oracles/compare.h"
#endif

static float f32(uint32_t u) { return hc_f32(u); }
static uint32_t bits(float x) { return hc_bits(x); }

START_TEST(e2m1_decode_table)
{
    static const float v[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; c++) {
        float d = nvfp4_e2m1_to_f32((uint8_t)c);
        ck_assert_float_eq(fabsf(d), v[c & 7]);
        ck_assert_int_eq(signbit(d) != 0, (c & 8) != 0);
    }
}
END_TEST

START_TEST(e2m1_rn_specials)
{
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0.25f, NVFP4_RN, 0), 0x0);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0x3e800001), NVFP4_RN, 0), 0x1);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0.75f, NVFP4_RN, 0), 0x2);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(1.25f, NVFP4_RN, 0), 0x2);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(1.75f, NVFP4_RN, 0), 0x4);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(2.5f, NVFP4_RN, 0), 0x4);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(3.5f, NVFP4_RN, 0), 0x6);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(5.0f, NVFP4_RN, 0), 0x6);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0x40a00001), NVFP4_RN, 0), 0x7);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(INFINITY, NVFP4_RN, 0), 0x7);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(-INFINITY, NVFP4_RN, 0), 0xF);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(NAN, NVFP4_RN, 0), 0x7);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(-NAN, NVFP4_RN, 0), 0x7);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(-0.0f, NVFP4_RN, 0), 0x8);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(-0.1f, NVFP4_RN, 0), 0x8);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0.75f, NVFP4_RZ, 0), 0x1);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(1.75f, NVFP4_RZ, 0), 0x3);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(3.5f, NVFP4_RZ, 0), 0x5);
}
END_TEST

START_TEST(e4m3_specials)
{
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(448.0f, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(449.0f, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(464.0f, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(464.0f, false), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(464.0001f, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(464.0001f, false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(480.0f, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-INFINITY, true), 0xFE);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-INFINITY, false), 0xFF);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(NAN, true), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-NAN, true), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(ldexpf(1, -10), true), 0x00);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(0.00097657f, true), 0x01);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(ldexpf(1, -6), true), 0x08);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(ldexpf(7.5f, -9), true), 0x08); /* tie 7.5 -> 8 */
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(ldexpf(6.5f, -9), true), 0x06); /* tie 6.5 -> 6 */
    for (unsigned c = 0; c < 256; c++) {
        if ((c & 0x7F) == 0x7F) continue;
        ck_assert_uint_eq(nvfp4_e4m3_from_f32(nvfp4_e4m3_to_f32((uint8_t)c), true), c);
    }
}
END_TEST


/* The float-domain round trip of the lab's FP8 fake quantizer equals
 * decode(encode(x, 1)) bit for bit: every exponent and sign with the low 12
 * mantissa bits at the rounding edges (ties, one ulp either side, carries),
 * and the specials. tests/long_e4m3_round.c checks all 2^32 inputs. */
START_TEST(e4m3_round_sat_equals_round_trip)
{
    /* the top 20 bits take every value, so every rounding position (bit 19
     * for normals, higher for subnormals) sees its tie and both sides */
    static const uint32_t low[] = {0x000, 0x001, 0x7FF, 0x800, 0x801, 0xFFF};
    size_t n = 0, bad = 0;
    uint32_t first = 0;
    for (uint32_t hi = 0; hi < (1u << 20); hi++)
        for (size_t k = 0; k < sizeof low / sizeof *low; k++) {
            uint32_t u = (hi << 12) | low[k];
            float x = nvfp4_core_f32_from_bits(u);
            uint32_t want = nvfp4_core_f32_bits(nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1)));
            if (nvfp4_core_f32_bits(nvfp4_core_e4m3_round_sat(x)) != want && bad++ == 0) first = u;
            n++;
        }
    ck_assert_uint_eq(n, 6u << 20);
    ck_assert_msg(bad == 0, "%zu mismatches, the first at input 0x%08x", bad, first);
    ck_assert_float_eq(nvfp4_core_e4m3_round_sat(464.0f), 448.0f);   /* the tie rounds to 448 */
    ck_assert_float_eq(nvfp4_core_e4m3_round_sat(-1e30f), -448.0f);  /* saturates */
    ck_assert_float_eq(nvfp4_core_e4m3_round_sat(ldexpf(7.5f, -9)), ldexpf(1, -6)); /* subnormal tie up */
    ck_assert_float_eq(nvfp4_core_e4m3_round_sat(ldexpf(6.5f, -9)), ldexpf(6, -9)); /* tie to even */
    ck_assert_uint_eq(nvfp4_core_f32_bits(nvfp4_core_e4m3_round_sat(-ldexpf(1, -10))), 0x80000000u);
    ck_assert_uint_eq(nvfp4_core_f32_bits(nvfp4_core_e4m3_round_sat(-NAN)), 0x7FC00000u);
}
END_TEST

/* ---- E2M1: every midpoint and grid point with its two float neighbours ---- */

static const float e2m1_grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};

static float up(float x) { return nextafterf(x, INFINITY); }
static float down(float x) { return nextafterf(x, 0.0f); }

/* RN: the midpoint between codes i and i+1 goes to the even code; a float
 * below it to i, a float above it to i+1. Both signs; the sign bit is kept. */
START_TEST(e2m1_rn_midpoints)
{
    for (unsigned i = 0; i < 7; i++) {
        float m = 0.5f * (e2m1_grid[i] + e2m1_grid[i + 1]);
        unsigned even = (i % 2 == 0) ? i : i + 1;
        for (unsigned neg = 0; neg < 2; neg++) {
            float s = neg ? -1.0f : 1.0f;
            unsigned sb = neg ? 8u : 0u;
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * m, NVFP4_RN, 0), sb | even);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * down(m), NVFP4_RN, 0), sb | i);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * up(m), NVFP4_RN, 0), sb | (i + 1));
        }
    }
}
END_TEST

/* Grid points are fixed points of RN and RZ; RZ moves a float just below a
 * grid point one code down and keeps one just above it. */
START_TEST(e2m1_grid_points_rn_rz)
{
    for (unsigned i = 0; i < 8; i++) {
        float g = e2m1_grid[i];
        for (unsigned neg = 0; neg < 2; neg++) {
            float s = neg ? -1.0f : 1.0f;
            unsigned sb = neg ? 8u : 0u;
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * g, NVFP4_RN, 0), sb | i);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * g, NVFP4_RZ, 0), sb | i);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * up(g), NVFP4_RZ, 0), sb | i);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * up(g), NVFP4_RN, 0), sb | i);
            if (i > 0) {
                ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * down(g), NVFP4_RZ, 0), sb | (i - 1));
                ck_assert_uint_eq(nvfp4_e2m1_from_f32(s * down(g), NVFP4_RN, 0), sb | i);
            }
        }
    }
}
END_TEST

START_TEST(e2m1_special_inputs)
{
    static const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu};
    for (unsigned m = 0; m < 3; m++)
        for (size_t k = 0; k < sizeof nans / sizeof nans[0]; k++)
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(nans[k]), (nvfp4_rounding)m, 0xA5), 0x7);
    for (unsigned m = 0; m < 2; m++) {
        nvfp4_rounding r = (nvfp4_rounding)m;
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(0.0f, r, 0), 0x0);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(-0.0f, r, 0), 0x8);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0x00000001u), r, 0), 0x0); /* fp32 subnormals */
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0x807FFFFFu), r, 0), 0x8);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(FLT_MAX, r, 0), 0x7);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(-FLT_MAX, r, 0), 0xF);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(INFINITY, r, 0), 0x7);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(-INFINITY, r, 0), 0xF);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(6.5f, r, 0), 0x7);
    }
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(5.9f, NVFP4_RZ, 0), 0x6);
}
END_TEST

START_TEST(e2m1_packing_order)
{
    /* cuda_fp4.hpp packs float2{1.0, -6.0} to 0xF2: element 0 in the low nibble */
    uint8_t b = nvfp4_pack2(nvfp4_e2m1_from_f32(1.0f, NVFP4_RN, 0), nvfp4_e2m1_from_f32(-6.0f, NVFP4_RN, 0));
    ck_assert_uint_eq(b, 0xF2);
    uint8_t packed[2] = {0xF2, 0x1C};
    ck_assert_uint_eq(nvfp4_unpack(packed, 0), 0x2);
    ck_assert_uint_eq(nvfp4_unpack(packed, 1), 0xF);
    ck_assert_uint_eq(nvfp4_unpack(packed, 2), 0xC);
    ck_assert_uint_eq(nvfp4_unpack(packed, 3), 0x1);
}
END_TEST

/* ---- E2M1 stochastic rounding, counted exactly over all 256 bytes ---- */

/* Independent model in double: the grid neighbours of |y| and
 * floor(256 * frac); |y| - lo and the division by a power-of-two step are
 * exact in double. */
static unsigned sr_expected_ups(float y, unsigned *lo_code)
{
    double a = fabs((double)y);
    unsigned i = 0;
    while (i < 6 && a >= (double)e2m1_grid[i + 1]) i++;
    *lo_code = i;
    double frac = (a - (double)e2m1_grid[i]) / ((double)e2m1_grid[i + 1] - (double)e2m1_grid[i]);
    return (unsigned)floor(256.0 * frac);
}

/* Returns 0 when y passes, else prints the first problem and returns 1.
 * (No ck_assert in this hot loop: each Check assertion costs a syscall.) */
static unsigned check_sr_exact(float y)
{
    unsigned lo;
    unsigned want = sr_expected_ups(y, &lo);
    unsigned sb = signbit(y) ? 8u : 0u;
    unsigned ups = 0;
    for (unsigned r = 0; r < 256; r++) {
        unsigned c = nvfp4_e2m1_from_f32(y, NVFP4_SR, (uint8_t)r);
        unsigned is_up = c == (sb | (lo + 1));
        if (c != (sb | lo) && !is_up) {
            printf("y=%a r=%u: code %x is not a neighbour\n", (double)y, r, c);
            return 1;
        }
        /* the round-ups are exactly the largest `want` values of r */
        if (is_up != (r >= 256 - want)) {
            printf("y=%a r=%u: up=%u, want round-ups exactly for r >= %u\n", (double)y, r, is_up, 256 - want);
            return 1;
        }
        ups += is_up;
    }
    if (ups != want) {
        printf("y=%a: %u round-ups, want floor(256*frac) = %u\n", (double)y, ups, want);
        return 1;
    }
    return 0;
}

START_TEST(e2m1_sr_exact_counts)
{
    size_t n = 0, bad = 0;
    for (unsigned i = 0; i < 7; i++) {
        float lo = e2m1_grid[i], step = e2m1_grid[i + 1] - e2m1_grid[i];
        for (unsigned k = 0; k < 4096; k++) {
            float y = lo + step * ((float)k / 4096.0f); /* exact: 12-bit fractions of a small step */
            if (!(y < 6.0f)) continue;
            float ys[3] = {y, up(y), k ? down(y) : y};
            for (int j = 0; j < 3; j++) {
                bad += check_sr_exact(ys[j]);
                bad += check_sr_exact(-ys[j]);
                n += 2;
            }
        }
    }
    /* tiny |y| < 0.25, down to fp32 subnormals; 2^-9 - 2^-33 is where
     * TE's fmaf fallback would round up with r = 255 and the carry rule
     * must not */
    static const float tiny[] = {0x1p-149f, 0x1p-126f, 0x1p-9f - 0x1p-33f, 0x1p-9f, 0x1.fffffep-3f, 0x1p-3f, 1e-20f};
    for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++) {
        bad += check_sr_exact(tiny[k]);
        bad += check_sr_exact(-tiny[k]);
    }
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0x1p-9f - 0x1p-33f, NVFP4_SR, 255), 0x0);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0x1p-9f, NVFP4_SR, 255), 0x1);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(0x1p-9f, NVFP4_SR, 254), 0x0);
    /* just below 6: floor(256 * (1 - 2^-22)) = 255 round-ups */
    bad += check_sr_exact(down(6.0f));
    bad += check_sr_exact(-down(6.0f));
    ck_assert_msg(bad == 0, "%zu of %zu values break the SR rule", bad, n);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(down(6.0f), NVFP4_SR, 0), 0x6);
    ck_assert_uint_eq(nvfp4_e2m1_from_f32(down(6.0f), NVFP4_SR, 1), 0x7);
    ck_assert_uint_gt(n, 150000);
}
END_TEST

START_TEST(e2m1_sr_saturation_and_nan)
{
    static const float big[] = {6.0f, 0x1.000002p+2f * 1.5f, 7.0f, 1e38f, FLT_MAX, INFINITY};
    for (unsigned r = 0; r < 256; r++) {
        for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(big[k], NVFP4_SR, (uint8_t)r), 0x7);
            ck_assert_uint_eq(nvfp4_e2m1_from_f32(-big[k], NVFP4_SR, (uint8_t)r), 0xF);
        }
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0x7FC00000u), NVFP4_SR, (uint8_t)r), 0x7);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(f32(0xFFC00001u), NVFP4_SR, (uint8_t)r), 0x7);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(-0.0f, NVFP4_SR, (uint8_t)r), 0x8);
        ck_assert_uint_eq(nvfp4_e2m1_from_f32(0.0f, NVFP4_SR, (uint8_t)r), 0x0);
        /* grid points never move */
        for (unsigned i = 0; i < 8; i++) ck_assert_uint_eq(nvfp4_e2m1_from_f32(e2m1_grid[i], NVFP4_SR, (uint8_t)r), i);
    }
}
END_TEST

/* ---- E4M3 ------------------------------------------------------------- */

static float e4m3_value(unsigned c)
{
    unsigned e = (c >> 3) & 15u, m = c & 7u;
    float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, (int)e - 7);
    return (c & 0x80u) ? -v : v;
}

START_TEST(e4m3_decode_all_codes)
{
    for (unsigned c = 0; c < 256; c++) {
        float d = nvfp4_e4m3_to_f32((uint8_t)c);
        if ((c & 0x7F) == 0x7F) {
            ck_assert(isnan(d));
            continue;
        }
        ck_assert_uint_eq(bits(d), bits(e4m3_value(c)));
    }
}
END_TEST

/* Subnormals k*2^-9 and the ties between every pair of neighbouring codes,
 * both signs, with float neighbours. */
START_TEST(e4m3_subnormals_and_ties)
{
    for (unsigned k = 1; k < 8; k++) ck_assert_uint_eq(nvfp4_e4m3_from_f32(ldexpf((float)k, -9), true), k);
    for (unsigned c = 0; c < 0x7E; c++) {
        float m = 0.5f * (e4m3_value(c) + e4m3_value(c + 1));
        unsigned even = (c % 2 == 0) ? c : c + 1;
        for (unsigned neg = 0; neg < 2; neg++) {
            float s = neg ? -1.0f : 1.0f;
            unsigned sb = neg ? 0x80u : 0u;
            for (unsigned sat = 0; sat < 2; sat++) {
                ck_assert_uint_eq(nvfp4_e4m3_from_f32(s * m, sat), sb | even);
                ck_assert_uint_eq(nvfp4_e4m3_from_f32(s * down(m), sat), sb | c);
                ck_assert_uint_eq(nvfp4_e4m3_from_f32(s * up(m), sat), sb | (c + 1));
            }
        }
    }
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(up(ldexpf(1, -10)), true), 0x01);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-ldexpf(1, -10), true), 0x80);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(f32(0x80000001u), true), 0x80);
}
END_TEST

START_TEST(e4m3_overflow_edges)
{
    /* 464 = 448 + half an ulp (a tie to the even 448); 480 would be the next code */
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(down(464.0f), false), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(up(464.0f), true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(up(464.0f), false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-up(464.0f), false), 0xFF);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-464.0f, false), 0xFE);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(480.0f, false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(-480.0f, true), 0xFE);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(FLT_MAX, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(FLT_MAX, false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(INFINITY, true), 0x7E);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(INFINITY, false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(f32(0xFFC00000u), false), 0x7F);
    ck_assert_uint_eq(nvfp4_e4m3_from_f32(f32(0x7F800001u), true), 0x7F);
}
END_TEST

/* ---- UE5M3 (prototype block-scale format) ------------------------------- */

static uint8_t u53(float x, nvfp4_ue5m3_mode m) { return nvfp4_ue5m3_from_f32(x, m); }

/* All 256 codes against values written out by hand and the definition. */
START_TEST(ue5m3_decode_all_codes)
{
    ck_assert_uint_eq(bits(nvfp4_ue5m3_to_f32(0x00)), 0u);
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0x01), ldexpf(1, -17));  /* smallest subnormal */
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0x07), ldexpf(7, -17));  /* largest subnormal */
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0x08), ldexpf(1, -14));  /* smallest normal */
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0x78), 1.0f);            /* e = 15 */
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0x7B), 1.375f);
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0xF8), 65536.0f);        /* TE's 4over6 headroom bound */
    ck_assert_float_eq(nvfp4_ue5m3_to_f32(0xFE), 114688.0f);       /* TypeExtrema<fp8ue5m3>::max */
    ck_assert(isnan(nvfp4_ue5m3_to_f32(0xFF)));
    for (unsigned c = 0; c < 255; c++) {
        float d = nvfp4_ue5m3_to_f32((uint8_t)c);
        ck_assert_uint_eq(bits(d), bits((float)ue5m3_ref_value(c)));
        /* every finite code encodes back to itself in both modes */
        ck_assert_uint_eq(u53(d, NVFP4_UE5M3_SATFINITE), c);
        ck_assert_uint_eq(u53(d, NVFP4_UE5M3_ML_DTYPES), c);
    }
}
END_TEST

/* Every tie between neighbouring codes goes to the even code, its float
 * neighbours to the nearer one; both modes agree below 114688. */
START_TEST(ue5m3_ties_and_neighbours)
{
    for (unsigned c = 0; c < 0xFE; c++) {
        float m = (float)(0.5 * (ue5m3_ref_value(c) + ue5m3_ref_value(c + 1)));
        unsigned even = (c % 2 == 0) ? c : c + 1;
        for (int mode = 0; mode < 2; mode++) {
            ck_assert_uint_eq(u53(m, (nvfp4_ue5m3_mode)mode), even);
            ck_assert_uint_eq(u53(down(m), (nvfp4_ue5m3_mode)mode), c);
            ck_assert_uint_eq(u53(up(m), (nvfp4_ue5m3_mode)mode), c + 1);
        }
    }
}
END_TEST

/* Hand-computed edges: zero, the subnormal ties, 1 + 1/16, saturation,
 * infinities, negative values and NaN in each mode. */
START_TEST(ue5m3_edges)
{
    const nvfp4_ue5m3_mode S = NVFP4_UE5M3_SATFINITE, M = NVFP4_UE5M3_ML_DTYPES;
    ck_assert_uint_eq(u53(0.0f, S), 0x00);
    ck_assert_uint_eq(u53(-0.0f, S), 0x00);
    ck_assert_uint_eq(u53(-0.0f, M), 0x00);
    ck_assert_uint_eq(u53(f32(0x00000001u), S), 0x00);         /* fp32 subnormal */
    ck_assert_uint_eq(u53(ldexpf(1, -18), S), 0x00);           /* half of 2^-17: tie to the even 0 */
    ck_assert_uint_eq(u53(up(ldexpf(1, -18)), S), 0x01);
    ck_assert_uint_eq(u53(ldexpf(3, -18), S), 0x02);           /* 1.5 * 2^-17: tie 0x01/0x02 -> 0x02 */
    ck_assert_uint_eq(u53(ldexpf(5, -18), S), 0x02);           /* 2.5 * 2^-17: tie 0x02/0x03 -> 0x02 */
    ck_assert_uint_eq(u53(ldexpf(15, -18), S), 0x08);          /* 7.5 * 2^-17: tie 0x07/0x08 -> 2^-14 */
    ck_assert_uint_eq(u53(1.0625f, S), 0x78);                  /* tie 1 / 1.125 -> 1 (0x78) */
    ck_assert_uint_eq(u53(1.1875f, S), 0x7A);                  /* tie 1.125 / 1.25 -> 1.25 (0x7A) */
    ck_assert_uint_eq(u53(1.9375f, S), 0x80);                  /* tie 1.875 / 2 -> 2 (0x80) */
    ck_assert_uint_eq(u53(448.0f, S), 0xBE);                   /* 1.75 * 2^8: e = 23, m = 6 */
    ck_assert_uint_eq(u53(114688.0f, S), 0xFE);
    ck_assert_uint_eq(u53(118784.0f, S), 0xFE);                /* 1.8125 * 2^16: tie -> even 0xFE */
    ck_assert_uint_eq(u53(118784.0f, M), 0xFE);
    ck_assert_uint_eq(u53(up(118784.0f), S), 0xFE);            /* satfinite */
    ck_assert_uint_eq(u53(up(118784.0f), M), 0xFF);            /* ml_dtypes: overflow is NaN */
    ck_assert_uint_eq(u53(FLT_MAX, S), 0xFE);
    ck_assert_uint_eq(u53(FLT_MAX, M), 0xFF);
    ck_assert_uint_eq(u53(INFINITY, S), 0xFE);
    ck_assert_uint_eq(u53(INFINITY, M), 0xFF);
    ck_assert_uint_eq(u53(-INFINITY, S), 0x00);
    ck_assert_uint_eq(u53(-INFINITY, M), 0xFF);
    ck_assert_uint_eq(u53(-1.0f, S), 0x00);
    ck_assert_uint_eq(u53(-1.0f, M), 0xFF);
    ck_assert_uint_eq(u53(NAN, S), 0xFF);
    ck_assert_uint_eq(u53(f32(0xFFC00001u), M), 0xFF);
}
END_TEST

/* Every 4099th fp32 bit pattern (about 1.05M, all signs and exponents)
 * against the independent table search; the whole 2^32 is long_ue5m3.c. */
START_TEST(ue5m3_sampled_against_table_search)
{
    unsigned long n = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 4099u) {
        float x = f32((uint32_t)u);
        for (int mode = 0; mode < 2; mode++) {
            uint8_t got = u53(x, (nvfp4_ue5m3_mode)mode), want = ue5m3_ref_encode(x, mode);
            if (got != want) ck_abort_msg("ue5m3 mode %d of 0x%08x: 0x%02x, table search 0x%02x", mode,
                                          (unsigned)u, got, want);
        }
        n++;
    }
    ck_assert_uint_eq(n, 1047809u);
}
END_TEST

/* ---- UE8M0: floor, rceil, ceil, even ------------------------------------ */

static uint8_t ue(float x, nvfp4_ue8m0_mode m) { return nvfp4_ue8m0_from_f32(x, m); }

START_TEST(ue8m0_powers_of_two_and_neighbours)
{
    for (int e = -126; e <= 127; e++) {
        float p = ldexpf(1.0f, e);
        uint8_t c = (uint8_t)(e + 127);
        for (int neg = 0; neg < 2; neg++) {
            float s = neg ? -1.0f : 1.0f; /* the sign is ignored */
            for (int m = 0; m < 4; m++) ck_assert_uint_eq(ue(s * p, (nvfp4_ue8m0_mode)m), c);
            if (e < 127) {
                float a = s * up(p); /* 2^e (1 + 2^-23) */
                ck_assert_uint_eq(ue(a, NVFP4_UE8M0_FLOOR), c);
                ck_assert_uint_eq(ue(a, NVFP4_UE8M0_RCEIL), c + 1);
                ck_assert_uint_eq(ue(a, NVFP4_UE8M0_CEIL), c + 1);
                ck_assert_uint_eq(ue(a, NVFP4_UE8M0_EVEN), c);
                float t = s * ldexpf(1.5f, e); /* the tie of EVEN */
                ck_assert_uint_eq(ue(t, NVFP4_UE8M0_FLOOR), c);
                ck_assert_uint_eq(ue(t, NVFP4_UE8M0_RCEIL), c + 1);
                ck_assert_uint_eq(ue(t, NVFP4_UE8M0_CEIL), c + 1);
                ck_assert_uint_eq(ue(t, NVFP4_UE8M0_EVEN), (c % 2 == 0) ? c : c + 1);
                ck_assert_uint_eq(ue(s * up(ldexpf(1.5f, e)), NVFP4_UE8M0_EVEN), c + 1);
                ck_assert_uint_eq(ue(s * down(ldexpf(1.5f, e)), NVFP4_UE8M0_EVEN), c);
            }
            if (e > -126) {
                float b = s * down(p); /* just below 2^e */
                ck_assert_uint_eq(ue(b, NVFP4_UE8M0_FLOOR), c - 1);
                ck_assert_uint_eq(ue(b, NVFP4_UE8M0_CEIL), c);
                ck_assert_uint_eq(ue(b, NVFP4_UE8M0_EVEN), c);
                /* rceil goes through bf16 RU: 2^e (1 - 2^-24) rounds up to 2^e first */
                ck_assert_uint_eq(ue(b, NVFP4_UE8M0_RCEIL), c);
            }
        }
    }
}
END_TEST

START_TEST(ue8m0_specials)
{
    for (int m = 0; m < 4; m++) {
        nvfp4_ue8m0_mode md = (nvfp4_ue8m0_mode)m;
        ck_assert_uint_eq(ue(0.0f, md), 0x00);
        ck_assert_uint_eq(ue(-0.0f, md), 0x00);
        ck_assert_uint_eq(ue(INFINITY, md), 0xFE);
        ck_assert_uint_eq(ue(-INFINITY, md), 0xFE);
        ck_assert_uint_eq(ue(f32(0x7FC00000u), md), 0xFF);
        ck_assert_uint_eq(ue(f32(0xFF800001u), md), 0xFF);
        ck_assert_uint_eq(ue(ldexpf(1.0f, -127), md), 0x00); /* fp32 subnormal 2^-127: code 0 */
        ck_assert_uint_eq(ue(0x1p-149f, md), 0x00);          /* below 2^-127: clamps to code 0 */
    }
    /* FLT_MAX: floor 2^127, the rounding-up modes saturate at 0xFE */
    ck_assert_uint_eq(ue(FLT_MAX, NVFP4_UE8M0_FLOOR), 0xFE);
    ck_assert_uint_eq(ue(FLT_MAX, NVFP4_UE8M0_RCEIL), 0xFE);
    ck_assert_uint_eq(ue(FLT_MAX, NVFP4_UE8M0_CEIL), 0xFE);
    ck_assert_uint_eq(ue(FLT_MAX, NVFP4_UE8M0_EVEN), 0xFE);
    /* 1.5 * 2^-127 (a subnormal): rceil = 2^-126 (code 1), floor = code 0 */
    ck_assert_uint_eq(ue(0x1.8p-127f, NVFP4_UE8M0_FLOOR), 0x00);
    ck_assert_uint_eq(ue(0x1.8p-127f, NVFP4_UE8M0_RCEIL), 0x01);
    ck_assert_uint_eq(ue(0x1.8p-127f, NVFP4_UE8M0_CEIL), 0x01);
    ck_assert_uint_eq(ue(0x1.8p-127f, NVFP4_UE8M0_EVEN), 0x00); /* tie between codes 0 and 1 */
    /* decode */
    ck_assert_uint_eq(bits(nvfp4_ue8m0_to_f32(0x00)), 0x00400000u);
    ck_assert_float_eq(nvfp4_ue8m0_to_f32(127), 1.0f);
    ck_assert_float_eq(nvfp4_ue8m0_to_f32(0xFE), 0x1p127f);
    ck_assert(isnan(nvfp4_ue8m0_to_f32(0xFF)));
    for (unsigned c = 1; c < 255; c++) ck_assert_float_eq(nvfp4_ue8m0_to_f32((uint8_t)c), ldexpf(1.0f, (int)c - 127));
}
END_TEST

/* ---- BF16 and FP16 ------------------------------------------------------- */

START_TEST(bf16_ties_and_overflow)
{
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x3F808000u)), 0x3F80); /* tie, even kept */
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x3F818000u)), 0x3F82); /* tie, odd rounds up */
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x3F808001u)), 0x3F81);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x3F807FFFu)), 0x3F80);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0xBF818000u)), 0xBF82);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x7F7F7FFFu)), 0x7F7F); /* largest bf16 */
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x7F7F8000u)), 0x7F80); /* tie with odd 0x7F7F: Inf */
    ck_assert_uint_eq(nvfp4_bf16_from_f32(-FLT_MAX), 0xFF80);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(INFINITY), 0x7F80);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(-0.0f), 0x8000);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x00008000u)), 0x0000); /* subnormal tie to even 0 */
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x00018000u)), 0x0002);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0x7FC00000u)), 0x7FFF);
    ck_assert_uint_eq(nvfp4_bf16_from_f32(f32(0xFF800001u)), 0x7FFF); /* canonical NaN, sign dropped */
    ck_assert_uint_eq(bits(nvfp4_bf16_to_f32(0xC0A0)), 0xC0A00000u);
}
END_TEST

/* nvfp4_core_round_bf16 (a select, so that it vectorizes) is the round
 * trip through nvfp4_core_bf16_encode/decode: every 97th bit pattern, and
 * around every tie, NaN and Inf boundary of each sign and exponent. */
static void expect_round_bf16(uint32_t u)
{
    uint32_t want = bits(nvfp4_core_bf16_decode(nvfp4_core_bf16_encode(f32(u)))),
             got = bits(nvfp4_core_round_bf16(f32(u)));
    if (got != want) ck_abort_msg("round_bf16(0x%08X) = 0x%08X, encode/decode give 0x%08X", u, got, want);
}

START_TEST(bf16_round_trip_select)
{
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 97) expect_round_bf16((uint32_t)u);
    for (uint32_t top = 0; top < 0x10000u; top++)
        for (int d = -2; d <= 2; d++) {
            expect_round_bf16((top << 16) + 0x8000u + (uint32_t)d); /* ties and their neighbours */
            expect_round_bf16((top << 16) + (uint32_t)(d + 2));     /* a value's low end: 0x7F800001.. (NaN) */
            expect_round_bf16((top << 16) + 0xFFFDu + (uint32_t)(d + 2)); /* its high end: carries */
        }
}
END_TEST

START_TEST(fp16_ties_and_overflow)
{
    ck_assert_uint_eq(nvfp4_fp16_from_f32(65504.0f), 0x7BFF);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(down(65520.0f)), 0x7BFF);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(65520.0f), 0x7C00); /* tie with odd 0x7BFF: Inf */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(-65520.0f), 0xFC00);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(FLT_MAX), 0x7C00);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(-INFINITY), 0xFC00);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(1.0f + 0x1p-11f), 0x3C00);        /* tie, even kept */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(1.0f + 3 * 0x1p-11f), 0x3C02);    /* tie, odd rounds up */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(up(1.0f + 0x1p-11f)), 0x3C01);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1p-14f), 0x0400);               /* min normal */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1p-24f), 0x0001);               /* min subnormal */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1p-25f), 0x0000);               /* tie to even 0 */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(up(0x1p-25f)), 0x0001);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(-0x1p-25f), 0x8000);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1.8p-24f), 0x0002);             /* 1.5 ulp: tie to 2 */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1.4p-23f), 0x0002);             /* 2.5 ulp: tie to 2 */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(0x1.ffcp-15f), 0x0400);           /* 1023.5 ulp: tie to 1024 */
    ck_assert_uint_eq(nvfp4_fp16_from_f32(f32(0x7FC00000u)), 0x7FFF);
    ck_assert_uint_eq(nvfp4_fp16_from_f32(f32(0xFFC00000u)), 0x7FFF);
    ck_assert_uint_eq(bits(nvfp4_fp16_to_f32(0x0001)), bits(0x1p-24f));
    ck_assert_uint_eq(bits(nvfp4_fp16_to_f32(0xFBFF)), bits(-65504.0f));
    ck_assert(isinf(nvfp4_fp16_to_f32(0x7C00)));
}
END_TEST

/* ---- NVIDIA's host conversion code as the oracle ------------------------ */
#if NVFP4_HAVE_CUDA_ORACLES

enum { ORACLE_SAMPLE = 1 << 24 };
static const uint64_t ORACLE_SEED = 0x6e76667034ull; /* "nvfp4" */

START_TEST(oracle_encoders_sampled)
{
    const oracle_encoder_pair *p = &oracle_encoders[_i];
    size_t nh = hardcases_f32(NULL, 0);
    uint32_t *hard = malloc(nh * sizeof *hard);
    ck_assert_ptr_nonnull(hard);
    hardcases_f32(hard, nh);
    uint64_t state = ORACLE_SEED;
    size_t bad = 0;
    uint32_t first = 0;
    for (size_t i = 0; i < nh + ORACLE_SAMPLE; i++) {
        uint32_t u = i < nh ? hard[i] : (uint32_t)hc_splitmix64(&state);
        float x = f32(u);
        if (p->ours(x) != p->nvidia(x)) {
            if (!bad) first = u;
            bad++;
        }
    }
    free(hard);
    ck_assert_msg(bad == 0, "%s: %zu mismatches in %zu hard cases + 2^24 samples, first input 0x%08x (ours %x, NVIDIA %x)",
                  p->name, bad, nh, first, p->ours(f32(first)), p->nvidia(f32(first)));
}
END_TEST

static int same_value(float a, float b) { return (isnan(a) && isnan(b)) || bits(a) == bits(b); }

START_TEST(oracle_decoders_all_codes)
{
    size_t bad = 0;
    for (unsigned c = 0; c < 16; c++) bad += !same_value(nvfp4_e2m1_to_f32((uint8_t)c), oracle_e2m1_to_f32((uint8_t)c));
    ck_assert_msg(bad == 0, "e2m1 decoder: %zu codes differ", bad);
    for (unsigned c = 0; c < 256; c++) bad += !same_value(nvfp4_e4m3_to_f32((uint8_t)c), oracle_e4m3_to_f32((uint8_t)c));
    ck_assert_msg(bad == 0, "e4m3 decoder: %zu codes differ", bad);
    for (unsigned c = 0; c < 256; c++) bad += !same_value(nvfp4_ue8m0_to_f32((uint8_t)c), oracle_ue8m0_to_f32((uint8_t)c));
    ck_assert_msg(bad == 0, "ue8m0 decoder: %zu codes differ", bad);
    for (unsigned h = 0; h < 65536; h++) bad += !same_value(nvfp4_bf16_to_f32((uint16_t)h), oracle_bf16_to_f32((uint16_t)h));
    ck_assert_msg(bad == 0, "bf16 decoder: %zu codes differ", bad);
    for (unsigned h = 0; h < 65536; h++) bad += !same_value(nvfp4_fp16_to_f32((uint16_t)h), oracle_fp16_to_f32((uint16_t)h));
    ck_assert_msg(bad == 0, "fp16 decoder: %zu codes differ", bad);
}
END_TEST
#else
START_TEST(oracle_skipped)
{
    printf("SKIP oracle_encoders_sampled / oracle_decoders_all_codes: built without the CUDA toolkit\n");
}
END_TEST
#endif

/* nvfp4_format_f32_shortest: hand-checked strings, and on a sample of every
 * 65537th fp32 bit pattern: the string reads back as the same float, is the
 * same decimal number as the shortest %.Ng that does, and has no exponent
 * when that number lies in [1e-5, 1e6). */
START_TEST(format_f32_shortest)
{
    static const struct { float x; const char *s; } cases[] = {
        {240.0f, "240"}, {448.0f, "448"}, {0.0078125f, "0.0078125"}, {0.001953125f, "0.001953125"},
        {6.0f, "6"}, {-1.5f, "-1.5"}, {0.1f, "0.1"}, {0.0f, "0"}, {-0.0f, "-0"}, {300.0f, "300"},
        {320.0f, "320"}, {999999.0f, "999999"}, {1e6f, "1e+06"}, {1e-5f, "0.00001"},
        {0x1p-17f, "7.6293945e-06"}, {0x1p-16f, "0.000015258789"}, {16777216.0f, "1.6777216e+07"},
        {FLT_MAX, "3.4028235e+38"}, {0x1p-149f, "1e-45"}, {INFINITY, "inf"}, {-INFINITY, "-inf"},
        {NAN, "nan"}, {123456.7f, "123456.7"}, {0.3f, "0.3"}};
    char b[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_str_eq(nvfp4_format_f32_shortest(cases[i].x, b, sizeof b), cases[i].s);
    size_t checked = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 65537) {
        uint32_t bits = (uint32_t)u, back;
        float x;
        memcpy(&x, &bits, sizeof x);
        if (isnan(x)) continue;
        nvfp4_format_f32_shortest(x, b, sizeof b);
        float y = strtof(b, NULL);
        memcpy(&back, &y, sizeof back);
        ck_assert_msg(back == bits, "0x%08X printed as %s", bits, b);
        char g[64];
        for (int p = 1; p <= 9; p++) {
            snprintf(g, sizeof g, "%.*g", p, (double)x);
            if (strtof(g, NULL) == x) break;
        }
        ck_assert_msg(strtod(g, NULL) == strtod(b, NULL), "0x%08X printed as %s, shortest is %s", bits, b, g);
        double a = fabs(strtod(b, NULL));
        if (a >= 1e-5 && a < 1e6) ck_assert_msg(!strchr(b, 'e'), "0x%08X printed as %s", bits, b);
        checked++;
    }
    ck_assert_uint_gt(checked, 65000);
    /* a short buffer gets a terminated prefix */
    char s4[4];
    ck_assert_str_eq(nvfp4_format_f32_shortest(0.0078125f, s4, sizeof s4), "0.0");
    ck_assert_str_eq(nvfp4_format_f64_digits(0.1 + 0.2, 9, b, sizeof b), "0.3");
    ck_assert_str_eq(nvfp4_format_f64_digits(1.25e-5, 3, b, sizeof b), "0.0000125");
    ck_assert_str_eq(nvfp4_format_f64_digits(-1234.5678, 6, b, sizeof b), "-1234.57");
    ck_assert_str_eq(nvfp4_format_f64_digits(2.5e-7, 3, b, sizeof b), "2.5e-07");
    ck_assert_str_eq(nvfp4_format_f64_digits(999999.6, 6, b, sizeof b), "1e+06");
    ck_assert_str_eq(nvfp4_format_f64_digits(0.0625, 9, b, sizeof b), "0.0625");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("formats");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, e2m1_decode_table);
    tcase_add_test(tc, e2m1_rn_specials);
    tcase_add_test(tc, e4m3_specials);
    tcase_add_test(tc, e4m3_round_sat_equals_round_trip);
    tcase_add_test(tc, e2m1_rn_midpoints);
    tcase_add_test(tc, e2m1_grid_points_rn_rz);
    tcase_add_test(tc, e2m1_special_inputs);
    tcase_add_test(tc, e2m1_packing_order);
    tcase_add_test(tc, e4m3_decode_all_codes);
    tcase_add_test(tc, e4m3_subnormals_and_ties);
    tcase_add_test(tc, e4m3_overflow_edges);
    tcase_add_test(tc, ue5m3_decode_all_codes);
    tcase_add_test(tc, ue5m3_ties_and_neighbours);
    tcase_add_test(tc, ue5m3_edges);
    tcase_add_test(tc, ue5m3_sampled_against_table_search);
    tcase_add_test(tc, ue8m0_powers_of_two_and_neighbours);
    tcase_add_test(tc, ue8m0_specials);
    tcase_add_test(tc, bf16_ties_and_overflow);
    tcase_add_test(tc, bf16_round_trip_select);
    tcase_add_test(tc, fp16_ties_and_overflow);
    tcase_add_test(tc, format_f32_shortest);
    suite_add_tcase(s, tc);
    TCase *sr = tcase_create("stochastic");
    tcase_set_timeout(sr, 120);
    tcase_add_test(sr, e2m1_sr_exact_counts);
    tcase_add_test(sr, e2m1_sr_saturation_and_nan);
    suite_add_tcase(s, sr);
    TCase *orc = tcase_create("nvidia-oracle");
    tcase_set_timeout(orc, 300);
#if NVFP4_HAVE_CUDA_ORACLES
    tcase_add_loop_test(orc, oracle_encoders_sampled, 0, ORACLE_N_ENCODERS);
    tcase_add_test(orc, oracle_decoders_all_codes);
#else
    tcase_add_test(orc, oracle_skipped);
#endif
    suite_add_tcase(s, orc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
