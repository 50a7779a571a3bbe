/* check_recipes_te.c - hand-computed blocks for TransformerEngine's newer
 * NVFP4 recipes: te-4over6 (and -mse, -fast, -mse-fast), te-rowscaled,
 * te-pow2 and fast-math (docs/semantics.md, "Recipes"). Expected bytes are
 * written out with the arithmetic that gives them.
 *
 * 4over6 tensors hold one element 1536 so that S_enc = 1536/1536 = 1 and
 * the error terms ((fp4(q)*s)*1536)/1536 - x are exact: map-to-6 scale
 * s6 = e4m3(bamax/6), map-to-4 s4 = e4m3(1.5*bamax/6). With bamax 6:
 * s6 = 1 (0x38, grid 0 .5 1 1.5 2 3 4 6), s4 = 1.5 (0x3C, grid 0 .75 1.5
 * 2.25 3 4.5 6 9) whose encode factor fl(1/1.5) = 0x3F2AAAAB is a little
 * above 2/3 (6 -> 4.0000001 -> 4, 4.5 -> 3.0000001 -> 3, 2.25 -> 1.5,
 * 0.75 -> 0.5 after rounding to fp32). */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "nvfp4/quant.h"

static float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static nvfp4_status quantize(const char *recipe, nvfp4_block block, const float *x, size_t rows, size_t cols,
                             nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = block;
    return nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, q, NULL);
}

static void expect_bytes(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s: byte %zu = 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

/* 1 x 80: five 1x16 blocks.
 * A {1536}:               s6 = 256 (0x78), s4 = 384 (0x7C); 1536 -> 6 or 4, both exact: a tie -> map-to-6
 * B {6, 4.5, 2.25, .75}:  map-4 exact (err 0); map-6 gives 6, 4, 2, 1 (err .5+.25+.25 = 1) -> map-to-4
 * C {6, 4, 2, 1}:         map-6 exact; map-4 gives 6, 4.5, 2.25, .75 (err 1) -> map-to-6
 * D {0, -0}:              s4 = s6 = 0, both errors 0 -> 0x00; -0 keeps its sign (0x8)
 * E {NaN, 6, 4.5, 2.25, .75}: B with a NaN: both errors NaN -> map-to-6; NaN -> 0x7 */
static void tensor_4over6(float *x)
{
    memset(x, 0, 80 * sizeof *x);
    x[0] = 1536;
    x[16] = 6, x[17] = 4.5f, x[18] = 2.25f, x[19] = 0.75f;
    x[32] = 6, x[33] = 4, x[34] = 2, x[35] = 1;
    x[49] = -0.0f;
    x[64] = f32(0x7FC00000u), x[65] = 6, x[66] = 4.5f, x[67] = 2.25f, x[68] = 0.75f;
}

static const uint8_t four_scale[5] = {0x78, 0x3C, 0x38, 0x00, 0x38};
static const uint8_t four_data[40] = {
    0x07, 0, 0, 0, 0, 0, 0, 0,          /* A: 1536/256 = 6 -> 7 */
    0x56, 0x13, 0, 0, 0, 0, 0, 0,       /* B: codes 6 5 3 1 (4 3 1.5 .5) */
    0x67, 0x24, 0, 0, 0, 0, 0, 0,       /* C: codes 7 6 4 2 */
    0x80, 0, 0, 0, 0, 0, 0, 0,          /* D: element 1 is -0 */
    0x77, 0x46, 0x02, 0, 0, 0, 0, 0};   /* E: NaN 7, 6 -> 7, 4.5 -> 4 (tie, even), 2.25 -> 2, .75 -> 1 */

START_TEST(te_4over6_blocks)
{
    static const char *const names[] = {"te-4over6", "te-4over6-mse", "te-4over6-fast", "te-4over6-mse-fast"};
    float x[80];
    tensor_4over6(x);
    /* with S_enc = 1 and exact error terms, every criterion ranks these
     * blocks alike: B's errors are 0 vs 1 (MSE 0 vs .125), C's 1 vs 0 */
    for (size_t k = 0; k < 4; k++) {
        nvfp4_quantized q;
        ck_assert_int_eq(quantize(names[k], NVFP4_BLOCK_DEFAULT, x, 1, 80, &q), NVFP4_OK);
        ck_assert_float_eq(q.row.amax, 1536.0f);
        expect_bytes(names[k], q.row.scale, four_scale, 5);
        expect_bytes(names[k], q.row.data, four_data, 40);
        nvfp4_quantized_free(&q);
    }
}
END_TEST

START_TEST(te_4over6_mae_vs_mse)
{
    /* {6, 4, .75, .75, 2.25}: map-4 errors 0, .5, 0, 0, 0 (MAE .5, MSE .25);
     * map-6 errors 0, 0, .25, .25, .25 (MAE .75, MSE .1875): MAE keeps
     * map-to-4, MSE map-to-6. */
    float x[32] = {0};
    x[0] = 1536;
    x[16] = 6, x[17] = 4, x[18] = 0.75f, x[19] = 0.75f, x[20] = 2.25f;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_DEFAULT, x, 1, 32, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[1], 0x3C);
    static const uint8_t mae[3] = {0x56, 0x11, 0x03}; /* 4 3 .5 .5 1.5 */
    expect_bytes("te-4over6", q.row.data + 8, mae, 3);
    nvfp4_quantized_free(&q);
    ck_assert_int_eq(quantize("te-4over6-mse", NVFP4_BLOCK_DEFAULT, x, 1, 32, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[1], 0x38);
    static const uint8_t mse[3] = {0x67, 0x22, 0x04}; /* 6 4 1 1 2 */
    expect_bytes("te-4over6-mse", q.row.data + 8, mse, 3);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_4over6_tiles)
{
    /* 16 x 32, two 16x16 tiles. Tile 0 holds 1536 alone: a tie (0x78).
     * Tile 1 (bamax 6): row 0 = B, row 1 = C: row errors map-4 {0, 1},
     * map-6 {1, 0}: tile sums 1 and 1, a tie -> map-to-6 (0x38). With
     * row 2 = {4.5} added (map-4 exact, map-6 -> 4, error .5) the sums are
     * 1 and 1.5 -> map-to-4 (0x3C) for the whole tile. */
    float x[16 * 32];
    memset(x, 0, sizeof x);
    x[0] = 1536;
    x[16] = 6, x[17] = 4.5f, x[18] = 2.25f, x[19] = 0.75f;
    x[32 + 16] = 6, x[32 + 17] = 4, x[32 + 18] = 2, x[32 + 19] = 1;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_16X16, x, 16, 32, &q), NVFP4_OK);
    for (size_t r = 0; r < 16; r++) {
        ck_assert_uint_eq(q.row.scale[2 * r], 0x78);
        ck_assert_uint_eq(q.row.scale[2 * r + 1], 0x38);
    }
    static const uint8_t t6[4] = {0x67, 0x24, 0x67, 0x24}; /* row 0 with s6: 6 4 2 1 (B rounded); row 1 exact */
    expect_bytes("tie tile row 0", q.row.data + 8, t6, 2);
    expect_bytes("tie tile row 1", q.row.data + 16 + 8, t6 + 2, 2);
    nvfp4_quantized_free(&q);

    x[64 + 16] = 4.5f;
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_16X16, x, 16, 32, &q), NVFP4_OK);
    for (size_t r = 0; r < 16; r++) ck_assert_uint_eq(q.row.scale[2 * r + 1], 0x3C);
    static const uint8_t t4[6] = {0x56, 0x13, 0x56, 0x13, 0x05, 0x00}; /* B exact; C -> 6 4.5 2.25 .75; 4.5 -> 3 */
    expect_bytes("map-4 tile row 0", q.row.data + 8, t4, 2);
    expect_bytes("map-4 tile row 1", q.row.data + 16 + 8, t4 + 2, 2);
    expect_bytes("map-4 tile row 2", q.row.data + 32 + 8, t4 + 4, 2);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_4over6_inf_amax)
{
    /* amax Inf: S_enc = 1536/Inf = 0 -> 1. Block 0 {Inf, 1}: s4 = s6 =
     * e4m3(fminf(Inf, 448)) = 0x7E; Inf -> 7, 1/448 -> 0. Block 1 is B,
     * which picks map-to-4 under a finite amax; here every error term is
     * ((v*s)*Inf)/1536 - x = Inf or NaN, so both sums are not less than
     * each other and map-to-6 is kept (0x38: codes 7 6 4 2). */
    float x[32] = {0};
    x[0] = INFINITY, x[1] = 1;
    x[16] = 6, x[17] = 4.5f, x[18] = 2.25f, x[19] = 0.75f;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_DEFAULT, x, 1, 32, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x38);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[8], 0x67);
    ck_assert_uint_eq(q.row.data[9], 0x24);
    nvfp4_quantized_free(&q);
}
END_TEST

/* te-4over6-448 (bound 448: S_enc = 2688/amax, error and dequant over 2688).
 * 1 x 96, amax 2688 -> S_enc = 1, exact error terms.
 * Blocks 1-4 are B, C, D, E above, x 1: bamax 6 gives s6 = 1, s4 = 1.5,
 * the same picks and codes as te-4over6 with amax 1536.
 * Block 0 {2688}: base = 448, s6 = 448 (0x7E), s4 = e4m3(fminf(672, 448)) =
 * 0x7E: one candidate; 2688 * fl(1/448) = 6 -> 7.
 * Block 5 {1800}: base = 300, s6 = e4m3(300) = 288 (0x79: 288 and 320
 * around it, midpoint 304), s4 = e4m3(fminf(450, 448)) = 448 (0x7E, the
 * clamp). 1800/288 = 6.25 -> 6: 1728, error 72; 1800 * fl(1/448) =
 * 4.018 -> 4: 1792, error 8 -> the clamped map-to-4 scale 0x7E, code 6. */
START_TEST(te_4over6_448_bound)
{
    float x[96];
    tensor_4over6(x);
    x[0] = 2688;
    memset(x + 80, 0, 16 * sizeof(float));
    x[80] = 1800;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-4over6-448", NVFP4_BLOCK_DEFAULT, x, 1, 96, &q), NVFP4_OK);
    ck_assert_float_eq(q.row.amax, 2688.0f);
    static const uint8_t scale[6] = {0x7E, 0x3C, 0x38, 0x00, 0x38, 0x7E};
    expect_bytes("te-4over6-448", q.row.scale, scale, 6);
    expect_bytes("te-4over6-448", q.row.data, four_data, 40);
    ck_assert_uint_eq(q.row.data[40], 0x06);
    /* deq = fp4(q) * ((s * amax) * fl(1/2688)), te's rule: (448 * 2688) *
     * 0x39C30C31 rounds to 448 exactly (a product above 447.99998 rounds up) */
    float y[96];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, y, NULL), NVFP4_OK);
    ck_assert_float_eq(y[0], 2688.0f);
    ck_assert_float_eq(y[80], 1792.0f);
    ck_assert_float_eq(y[16], 6.0f);
    ck_assert_float_eq(y[17], 4.5f);
    nvfp4_quantized_free(&q);
    /* the same tensor under the bound 256 (S_enc = 1536/2688): block 5's
     * base = 300 * 0.5714 = 171.4, s4 = e4m3(257.1) = 256, not clamped */
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_DEFAULT, x, 1, 96, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x78); /* base 256: s6 = 256, s4 = 384 (0x7C), a tie -> s6 */
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_4over6_dequant_and_options)
{
    /* deq = fp4(q) * ((s * amax) * fl(1/1536)): B's s = 1.5, amax 1536:
     * 2304 * 0x3A2AAAAB = 1.50000004 -> 1.5 in fp32, so 4 -> 6, 3 -> 4.5 */
    float x[80], y[80];
    tensor_4over6(x);
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-4over6", NVFP4_BLOCK_DEFAULT, x, 1, 80, &q), NVFP4_OK);
    ck_assert_int_eq(nvfp4_dequantize(&q, false, y, NULL), NVFP4_OK);
    ck_assert_float_eq(y[0], 1536.0f);
    ck_assert_float_eq(y[16], 6.0f);
    ck_assert_float_eq(y[17], 4.5f);
    ck_assert_float_eq(y[18], 2.25f);
    ck_assert_float_eq(y[19], 0.75f);
    nvfp4_quantized_free(&q);
    /* 4over6 has no 1x32 form and no stochastic rounding */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te-4over6";
    o.block = NVFP4_BLOCK_1X32;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 64, &o, &q, NULL), NVFP4_EINVAL);
    o.block = NVFP4_BLOCK_1X16;
    o.rounding = NVFP4_SR;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 64, &o, &q, NULL), NVFP4_EINVAL);
}
END_TEST

START_TEST(te_rowscaled_rows)
{
    /* 3 x 32; row 0 {2688, 1344}, row 1 zero, row 2 {6, 3}.
     * Row 0: a = 2688, S_enc = 1, s = e4m3(2688 * fl(1/6)) = 448 (0x7E);
     *        2688*fl(1/448) = 6.0000005 -> 7, 1344 -> 5; block 1 zero: 0x00.
     * Row 1: a = 0 -> S_enc = 1, every scale 0x00, codes 0.
     * Row 2: a = 6, S_enc = 2688/6 = 448: s = e4m3(6 * fl(448 * fl(1/6))) =
     *        e4m3(448.00003) = 0x7E; S_dec = fl(1/448), 448*S_dec rounds to 1,
     *        so inv = 1: 6 -> 7, 3 -> 5. (`te`, one amax 2688: s = 0x38.) */
    float x[3 * 32] = {0};
    x[0] = 2688, x[1] = 1344;
    x[64] = 6, x[65] = 3;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-rowscaled", NVFP4_BLOCK_DEFAULT, x, 3, 32, &q), NVFP4_OK);
    ck_assert_ptr_nonnull(q.row.row_amax);
    ck_assert_float_eq(q.row.row_amax[0], 2688.0f);
    ck_assert_float_eq(q.row.row_amax[1], 0.0f);
    ck_assert_float_eq(q.row.row_amax[2], 6.0f);
    ck_assert_float_eq(q.row.amax, 2688.0f);
    static const uint8_t sc[6] = {0x7E, 0x00, 0x00, 0x00, 0x7E, 0x00};
    expect_bytes("te-rowscaled scales", q.row.scale, sc, 6);
    ck_assert_uint_eq(q.row.data[0], 0x57);
    for (size_t j = 1; j < 32; j++) ck_assert_uint_eq(q.row.data[j], 0x00);
    ck_assert_uint_eq(q.row.data[32], 0x57);
    /* deq row 2: 6 * ((448 * 6) * fl(1/2688)) = 6 * 1 */
    float y[3 * 32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, y, NULL), NVFP4_OK);
    ck_assert_float_eq(y[64], 6.0f);
    ck_assert_float_eq(y[65], 3.0f);
    ck_assert_float_eq(y[32], 0.0f);
    nvfp4_quantized_free(&q);

    /* columnwise: one amax per original column (its stored row) */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te-rowscaled";
    o.rowwise = false;
    o.columnwise = true;
    float c[16 * 2] = {0};
    c[0] = 5, c[2] = -7; /* column 0: 5, -7; column 1 zero */
    ck_assert_int_eq(nvfp4_quantize(c, NVFP4_DTYPE_F32, 16, 2, &o, &q, NULL), NVFP4_OK);
    ck_assert_ptr_nonnull(q.col.row_amax);
    ck_assert_float_eq(q.col.row_amax[0], 7.0f);
    ck_assert_float_eq(q.col.row_amax[1], 0.0f);
    nvfp4_quantized_free(&q);
    /* one amax per row only with 1x16 blocks */
    o.columnwise = false;
    o.rowwise = true;
    o.block = NVFP4_BLOCK_16X16;
    ck_assert_int_eq(nvfp4_quantize(c, NVFP4_DTYPE_F32, 16, 2, &o, &q, NULL), NVFP4_EINVAL);
}
END_TEST

START_TEST(te_pow2_boundaries)
{
    /* 1x32 blocks, e = ceil(log2(bamax / 6)), byte e + 127, y = x / 2^e:
     *  0: bamax 6           d = 1          e = 0    0x7F; 6 -> 7, 3 -> 5, .25 -> 0 (tie, even), -0 -> 0x0
     *  1: bamax 12          d = 2          e = 1    0x80; 12/2 = 6 -> 7
     *  2: bamax 12+2^-20    d = 2.0000002  e = 2    0x81; 3.0000002 -> 5
     *  3: bamax 12-2^-21    d = fl(1.99999992) = 2-2^-23: e = 1  0x80; 5.9999998 -> 7
     *  4: zero block        d = 0 -> e = -127 (clamp) 0x00
     *  5: bamax 6*2^-127    d = 2^-127 exactly: e = -127  0x00; x / 2^-127 = 6 -> 7
     *  6: bamax FLT_MAX     d = 5.67e37: 2^125 < d < 2^126: e = 126  0xFD
     *  7: NaN element       torch.amax is NaN: 0xFF, every code 0x0
     *  8: {Inf, -Inf, 1}    d = Inf: e = 127 (0xFE); +-Inf -> 0x7 / 0xF, 1 -> 0 */
    float x[9 * 32] = {0};
    x[0] = 6, x[1] = 3, x[2] = 0.25f, x[3] = -0.0f;
    x[32] = 12;
    x[64] = f32(0x41400001u); /* 12 + 2^-20 */
    x[96] = f32(0x413FFFFFu); /* 12 - 2^-21 */
    x[160] = 0x1.8p-125f;     /* 6 * 2^-127 */
    x[192] = 0x1.fffffep127f;
    x[224] = f32(0x7FC00000u), x[225] = 6;
    x[256] = INFINITY, x[257] = -INFINITY, x[258] = 1;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-pow2", NVFP4_BLOCK_DEFAULT, x, 1, 9 * 32, &q), NVFP4_OK);
    static const uint8_t sc[9] = {0x7F, 0x80, 0x81, 0x80, 0x00, 0x00, 0xFD, 0xFF, 0xFE};
    expect_bytes("te-pow2 scales", q.row.scale, sc, 9);
    ck_assert_uint_eq(q.row.data[0], 0x57);
    ck_assert_uint_eq(q.row.data[1], 0x00);
    ck_assert_uint_eq(q.row.data[16], 0x07);
    ck_assert_uint_eq(q.row.data[32], 0x05);
    ck_assert_uint_eq(q.row.data[48], 0x07);
    ck_assert_uint_eq(q.row.data[80], 0x07);
    ck_assert_uint_eq(q.row.data[112], 0x00);
    ck_assert_uint_eq(q.row.data[128], 0xF7);
    ck_assert_uint_eq(q.row.data[129], 0x00);
    ck_assert_float_eq(q.row.amax, 0.0f); /* no global scale */
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(fast_math_encode)
{
    /* amax 2688 (S_enc = 1). Block 1: bamax 11.25 -> s = 1.875 (0x3F).
     * te: inv = fl(1/1.875) = 0.53333336; fast-math: c = bf16(1/1.875) =
     * 137/256 = 0.53515625. x = 2.34: te 1.2479999 -> 1.0 (code 2),
     * fast-math 1.2522656 -> 1.5 (code 3); 11.25 -> 6.02 -> 7 in both;
     * -0 -> te 0x8, fast-math fma(-0, c, +0) = +0 -> 0x0.
     * Block 2: bamax 0.005 -> s = 0 (underflow): c = bf16(1/0 -> BF16_MAX):
     * nonzero x -> +-6 as in te, -0 -> 0x0. */
    float x[48] = {0};
    x[0] = 2688;
    x[16] = 11.25f, x[17] = 2.34f, x[18] = -0.0f;
    x[32] = 0.005f, x[33] = -0.005f, x[34] = -0.0f;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("fast-math", NVFP4_BLOCK_DEFAULT, x, 1, 48, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[1], 0x3F);
    ck_assert_uint_eq(q.row.scale[2], 0x00);
    ck_assert_uint_eq(q.row.data[8], 0x37);
    ck_assert_uint_eq(q.row.data[9], 0x00);
    ck_assert_uint_eq(q.row.data[16], 0xF7);
    ck_assert_uint_eq(q.row.data[17], 0x00);
    nvfp4_quantized_free(&q);
    ck_assert_int_eq(quantize("te", NVFP4_BLOCK_DEFAULT, x, 1, 48, &q), NVFP4_OK);
    ck_assert_uint_eq(q.row.data[8], 0x27);
    ck_assert_uint_eq(q.row.data[9], 0x08);
    ck_assert_uint_eq(q.row.data[17], 0x08);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(registry_names)
{
    static const char *const names[] = {"te-4over6", "te-4over6-mse", "te-4over6-fast", "te-4over6-mse-fast",
                                        "te-rowscaled", "te-pow2", "fast-math", "te-4over6-448"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const nvfp4_recipe *r = nvfp4_recipe_find(names[k]);
        ck_assert_msg(r != NULL, "%s not registered", names[k]);
        const nvfp4_recipe_info *i = nvfp4_recipe_get_info(r);
        ck_assert_str_eq(i->name, names[k]);
        ck_assert_msg(strstr(i->provenance, "NVIDIA/TransformerEngine d0067d0d") != NULL, "%s provenance", names[k]);
    }
    ck_assert_int_eq(nvfp4_recipe_get_info(nvfp4_recipe_find("te-pow2"))->scale_format, NVFP4_SCALEFMT_UE8M0);
    ck_assert_int_eq(nvfp4_recipe_get_info(nvfp4_recipe_find("te-pow2"))->default_block, NVFP4_BLOCK_1X32);
}
END_TEST

START_TEST(rht_on_16x16_tiles)
{
    /* TE's reference with_rht on (16, 16) tiles: the 16-point RHT along the
     * columnwise stored rows (x^T), then 16x16 tiles of the result. So the
     * columnwise 16x16 output with RHT equals the rowwise 16x16 output of
     * nvfp4_rht_forward(x^T), byte for byte (the amax too: both are taken
     * after the transform). */
    enum { R = 32, C = 48 };
    float x[R * C], xt[C * R], y[C * R];
    uint32_t st = 12345u;
    for (size_t i = 0; i < R * C; i++) {
        st = st * 1103515245u + 12345u;
        x[i] = ((float)(st >> 8) / 16777216.0f - 0.5f) * (i % 7 == 0 ? 40.0f : 3.0f);
    }
    for (size_t i = 0; i < R; i++)
        for (size_t j = 0; j < C; j++) xt[j * R + i] = x[i * C + j];
    nvfp4_rht_config rc;
    nvfp4_rht_config_init(&rc);
    ck_assert_int_eq(nvfp4_rht_forward(&rc, xt, C, R, y, NULL), NVFP4_OK);
    static const char *const names[] = {"te", "te-4over6"};
    for (size_t k = 0; k < 2; k++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = names[k];
        o.block = NVFP4_BLOCK_16X16;
        o.rowwise = false;
        o.columnwise = true;
        o.rht = true;
        nvfp4_quantized a, b;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, R, C, &o, &a, NULL), NVFP4_OK);
        ck_assert_int_eq(quantize(names[k], NVFP4_BLOCK_16X16, y, C, R, &b), NVFP4_OK);
        ck_assert_float_eq(a.col.amax, b.row.amax);
        expect_bytes(names[k], a.col.scale, b.row.scale, b.row.scale_rows * b.row.scale_cols);
        expect_bytes(names[k], a.col.data, b.row.data, b.row.data_bytes);
        nvfp4_quantized_free(&a);
        nvfp4_quantized_free(&b);
    }
    /* 1x32 blocks still have no RHT */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "mxfp4-rceil";
    o.columnwise = true;
    o.rht = true;
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, R, C, &o, &q, NULL), NVFP4_EINVAL);
}
END_TEST

START_TEST(te_rowscaled_bundle)
{
    /* a bundle of a row-scaled result stores amax as [rows] and reads it
     * back: the rows' amaxes, their maximum, and the same dequantization */
    float x[3 * 32] = {0};
    x[0] = 2688, x[1] = 1344;
    x[64] = 6, x[65] = 3;
    nvfp4_quantized q, r;
    ck_assert_int_eq(quantize("te-rowscaled", NVFP4_BLOCK_DEFAULT, x, 3, 32, &q), NVFP4_OK);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    ck_assert_int_eq(nvfp4_bundle_build(&q, x, NVFP4_DTYPE_F32, 3, 32, &s, NULL), NVFP4_OK);
    const nvfp4_tensor *a = nvfp4_tset_find(&s, "amax");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->ndim, 1);
    ck_assert_uint_eq(a->shape[0], 3);
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "mem", &r, NULL), NVFP4_OK);
    ck_assert_ptr_nonnull(r.row.row_amax);
    ck_assert_float_eq(r.row.row_amax[0], 2688.0f);
    ck_assert_float_eq(r.row.row_amax[1], 0.0f);
    ck_assert_float_eq(r.row.row_amax[2], 6.0f);
    ck_assert_float_eq(r.row.amax, 2688.0f);
    float y0[96], y1[96];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, y0, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_dequantize(&r, false, y1, NULL), NVFP4_OK);
    ck_assert_int_eq(memcmp(y0, y1, sizeof y0), 0);
    ck_assert_float_eq(y1[64], 6.0f);
    nvfp4_quantized_free(&r);
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&s);
}
END_TEST

START_TEST(flashinfer_pertoken_rows)
{
    /* 2 x 16; row 0 {6, 3, 1, 0.5, -2}, row 1 zero (flashinfer-pertoken).
     * Codes and scales are te-rowscaled's: row 0 a = 6, S_enc = 448,
     * s = e4m3(6 * fl(448 * fl(1/6))) = 0x7E, inv = 1: 6 3 1 .5 -2 -> 7 5 2 1 C;
     * row 1: scale 0x00, codes 0. Per-token scales: fl(1/448) = 0x3B124925
     * and 0 (not te-rowscaled's 1/S_enc(0) = 1). Dequant (fp4 * s) * p:
     * 2688 * fl(1/448) = 6.0000005 (0x40C00001), 1344 * p = 0x40400001,
     * 448 * p = 1, 224 * p = 0.5, -896 * p = -2; te-rowscaled gives 6 and 3. */
    float x[2 * 16] = {6, 3, 1, 0.5f, -2};
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("flashinfer-pertoken", NVFP4_BLOCK_DEFAULT, x, 2, 16, &q), NVFP4_OK);
    static const uint8_t data[16] = {0x57, 0x12, 0x0C};
    static const uint8_t sc[2] = {0x7E, 0x00};
    expect_bytes("flashinfer-pertoken codes", q.row.data, data, 16);
    expect_bytes("flashinfer-pertoken scales", q.row.scale, sc, 2);
    ck_assert_float_eq(q.row.row_amax[0], 6.0f);
    ck_assert_float_eq(q.row.row_amax[1], 0.0f);
    float y[32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, y, NULL), NVFP4_OK);
    static const uint32_t want[5] = {0x40C00001u, 0x40400001u, 0x3F800000u, 0x3F000000u, 0xC0000000u};
    for (size_t j = 0; j < 5; j++) ck_assert_msg(y[j] == f32(want[j]), "deq[%zu] = %a", j, (double)y[j]);
    for (size_t j = 5; j < 32; j++) ck_assert_float_eq(y[j], 0.0f);
    /* the bundle carries per_token_scale [2] and checks it on load */
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    ck_assert_int_eq(nvfp4_bundle_build(&q, x, NVFP4_DTYPE_F32, 2, 16, &s, NULL), NVFP4_OK);
    const nvfp4_tensor *p = nvfp4_tset_find(&s, "per_token_scale");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->ndim, 1);
    ck_assert_uint_eq(p->shape[0], 2);
    float *pv = (float *)(void *)p->data;
    ck_assert(pv[0] == f32(0x3B124925u));
    ck_assert(pv[1] == 0.0f && !signbit(pv[1]));
    nvfp4_quantized r;
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "mem", &r, NULL), NVFP4_OK);
    float y1[32];
    ck_assert_int_eq(nvfp4_dequantize(&r, false, y1, NULL), NVFP4_OK);
    ck_assert_int_eq(memcmp(y, y1, sizeof y), 0);
    nvfp4_quantized_free(&r);
    /* TE's convention in its place (the row amax, 6) is refused, naming the row */
    pv[0] = 6.0f;
    nvfp4_error e;
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "mem", &r, &e), NVFP4_EFORMAT);
    ck_assert_msg(strstr(e.message, "per_token_scale[0]") != NULL, "%s", e.message);
    /* te-rowscaled: the same codes and scales, its own dequant */
    nvfp4_quantized t;
    ck_assert_int_eq(quantize("te-rowscaled", NVFP4_BLOCK_DEFAULT, x, 2, 16, &t), NVFP4_OK);
    expect_bytes("te-rowscaled codes", t.row.data, data, 16);
    expect_bytes("te-rowscaled scales", t.row.scale, sc, 2);
    ck_assert_int_eq(nvfp4_dequantize(&t, false, y1, NULL), NVFP4_OK);
    ck_assert_float_eq(y1[0], 6.0f);
    nvfp4_quantized_free(&t);
    nvfp4_tset_free(&s);
    nvfp4_quantized_free(&q);
}
END_TEST

Suite *recipes_te_suite(void);
Suite *recipes_te_suite(void)
{
    Suite *s = suite_create("recipes_te");
    TCase *tc = tcase_create("blocks");
    tcase_add_test(tc, te_4over6_blocks);
    tcase_add_test(tc, te_4over6_mae_vs_mse);
    tcase_add_test(tc, te_4over6_tiles);
    tcase_add_test(tc, te_4over6_inf_amax);
    tcase_add_test(tc, te_4over6_448_bound);
    tcase_add_test(tc, te_4over6_dequant_and_options);
    tcase_add_test(tc, te_rowscaled_rows);
    tcase_add_test(tc, te_pow2_boundaries);
    tcase_add_test(tc, fast_math_encode);
    tcase_add_test(tc, registry_names);
    tcase_add_test(tc, rht_on_16x16_tiles);
    tcase_add_test(tc, te_rowscaled_bundle);
    tcase_add_test(tc, flashinfer_pertoken_rows);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(recipes_te_suite());
}
