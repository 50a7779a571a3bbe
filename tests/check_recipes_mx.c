/* check_recipes_mx.c - hand-computed blocks for the recipes torchao-1level,
 * mxfp4-ceil, mxfp4-even, mxfp8-floor and ggml, and for the UE8M0
 * round-to-nearest casts (docs/semantics.md, "Recipes" and "Scalar codecs").
 * Every expected byte is derived in the comment above it from the recipe's
 * formula; tests/py/test_mx_oracles.py compares the same recipes with torchao,
 * ml_dtypes and torch, tests/py/test_ggml_oracle.py the ggml one with gguf-py. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"

static float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static void quantize_row(const char *recipe, const float *x, size_t n, nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_error err;
    ck_assert_msg(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, n, &o, q, &err) == NVFP4_OK, "%s: %s", recipe, err.message);
}

static void expect_bytes(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s: byte %zu = 0x%02X, expected 0x%02X", what, i, got[i], want[i]);
}

/* ---- torchao-1level ------------------------------------------------------ */

/* 1 x 80, five 16-element blocks:
 * A  bamax 12: s = e4m3(12/6 = 2) = 0x40, y = x * (1/2): 6 -6 4 3 2 1.5 1 0.5 0 -0 and the ties
 *    0.25 -> 0x0, -0.25 -> 0x8, 0.75 -> 0x2, 1.75 -> 0x4, 2.5 -> 0x4, 3.5 -> 0x6 (RNE, even code)
 * B  zeros and one -0: 0/6 = 0 clamps to 2^-6 (0x08), -0 * 64 = -0 -> 0x8
 * C  bamax 0.03: 0.005 clamps to 2^-6 (0x08), 1/s = 64: 0.03 -> 1.92 -> 2 (0x4), 0.003 -> 0.192 -> 0,
 *    -0.005 -> -0.32 -> -0.5 (0x9)
 * D  Inf: Inf/6 clamps to 448 (0x7E); Inf * fl(1/448) -> 6 (0x7); +-1344 * fl(1/448) -> +-3 (0x5, 0xD);
 *    1 * fl(1/448) -> 0
 * E  a NaN: bamax NaN -> scale NaN (0x7F), 1/NaN = NaN: every code 0x3 */
START_TEST(torchao_1level_blocks)
{
    static const float A[16] = {12, -12, 8, 6, 4, 3, 2, 1, 0, -0.0f, 0.5f, -0.5f, 1.5f, 3.5f, 5, 7};
    float x[80] = {0};
    memcpy(x, A, sizeof A);
    x[17] = -0.0f;
    x[32] = 0.03f, x[33] = 0.003f, x[34] = -0.005f;
    x[48] = INFINITY, x[49] = 1344, x[50] = -1344, x[51] = 1;
    x[64] = NAN, x[65] = 5;
    nvfp4_quantized q;
    quantize_row("torchao-1level", x, 80, &q);
    static const uint8_t scale[5] = {0x40, 0x08, 0x08, 0x7E, 0x7F};
    static const uint8_t data[40] = {0xF7, 0x56, 0x34, 0x12, 0x80, 0x80, 0x42, 0x64, /* A */
                                     0x80, 0, 0, 0, 0, 0, 0, 0,                         /* B */
                                     0x04, 0x09, 0, 0, 0, 0, 0, 0,                      /* C */
                                     0x57, 0x0D, 0, 0, 0, 0, 0, 0,                      /* D */
                                     0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33};   /* E */
    expect_bytes("torchao-1level scale", q.row.scale, scale, 5);
    expect_bytes("torchao-1level data", q.row.data, data, 40);
    ck_assert(q.row.amax == 0.0f); /* no global amax is taken or stored */
    float d[80];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert(d[0] == 12.0f && d[13] == 4.0f && d[15] == 8.0f); /* 6*2, 2*2 (1.75 -> 2), 4*2 */
    ck_assert(d[32] == 0.03125f);                               /* 2 * 2^-6 */
    ck_assert(d[48] == 2688.0f && d[50] == -1344.0f);           /* 6*448, -3*448 */
    ck_assert(isnan(d[64]));
    nvfp4_quantized_free(&q);
}
END_TEST

/* ---- MX scale rules ------------------------------------------------------ */

/* 1 x 256, eight 32-element blocks, element 0 is the block amax:
 *   amax            bits        FLOOR      CEIL (+1 if fraction)   EVEN (+2^21 first)
 *   6.0             0x40C00000  0x7F       0x80                    0x7F  (0x40E00000: exp 129)
 *   7.0             0x40E00000  0x7F       0x80                    0x80  (0x41000000: exp 130)
 *   4.0             0x40800000  0x7F       0x7F                    0x7F
 *   pred(7)         0x40DFFFFF  0x7F       0x80                    0x7F  (0x40FFFFFF: exp 129)
 *   FLT_MAX         0x7F7FFFFF  0xFC       0xFD                    0xFD  (carry: exp 255 - 129)
 *   2^-127*1.75     0x00700000  0x00       0x00                    0x00  (clamped at -127)
 *   0 (all zero)                0x00       0x00                    0x00
 *   NaN                         0xFF       0xFF                    0xFF
 * (biased e = exponent - 127 - 2 + 127). Element 0's code: x / sf with sf = 2^(e-127):
 * 6/1 = 6 (0x7), 6/2 = 3 (0x5); 7/1 -> 6 (0x7), 7/2 = 3.5 -> 4 (0x6); 4/1 = 4 (0x6);
 * pred(7)/2 = 3.4999998 -> 3 (0x5); FLT_MAX/2^125 -> 6 (0x7), /2^126 = 3.9999998 -> 4 (0x6);
 * the subnormal amax with sf = 2^-126: 0.875 -> 1 (0x2). The NaN block: divisor +Inf, so its
 * element 1 (-1) becomes -0 (0x8) and the NaN 0x3: byte 0x83. */
static void mx_tensor(float *x)
{
    static const uint32_t amax[7] = {0x40C00000, 0x40E00000, 0x40800000, 0x40DFFFFF, 0x7F7FFFFF, 0x00700000, 0};
    memset(x, 0, 256 * sizeof *x);
    for (int b = 0; b < 7; b++) x[32 * b] = f32(amax[b]);
    x[1] = 1.0f; /* 1/1 -> 0x2, 1/2 = 0.5 -> 0x1 */
    x[224] = NAN, x[225] = -1.0f;
}

static void check_mx(const char *recipe, const uint8_t scale[8], const uint8_t code0[8])
{
    float x[256];
    mx_tensor(x);
    nvfp4_quantized q;
    quantize_row(recipe, x, 256, &q);
    expect_bytes(recipe, q.row.scale, scale, 8);
    for (int b = 0; b < 8; b++)
        ck_assert_msg(q.row.data[16 * b] == code0[b], "%s block %d: byte 0 = 0x%02X, expected 0x%02X", recipe, b,
                      q.row.data[16 * b], code0[b]);
    float d[256];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert(isnan(d[224]) && isnan(d[225])); /* scale 0xFF dequantizes to NaN */
    ck_assert(d[192] == 0.0f);                 /* scale 0x00 is 2^-127 times code 0 */
    /* block 5: 1.75*2^-127 was encoded with the clamped divisor 2^-126 (0.875 -> code 0x2 = 1)
     * and decodes with 2^-127 (to_dtype's pow(2, 0 - 127)): 1 * 2^-127, not 1.75*2^-127 and
     * not the 2^-126 of the encoder */
    ck_assert(q.row.scale[5] == 0x00 && (q.row.data[80] & 0xF) == 0x2);
    ck_assert(d[160] == 0x1p-127f);
    nvfp4_quantized_free(&q);
}

START_TEST(mxfp4_floor_ceil_even)
{
    /* element 1 of block 0 (1.0) is the high nibble of byte 0 */
    static const uint8_t fs[8] = {0x7F, 0x7F, 0x7F, 0x7F, 0xFC, 0x00, 0x00, 0xFF};
    static const uint8_t fc[8] = {0x27, 0x07, 0x06, 0x07, 0x07, 0x02, 0x00, 0x83};
    static const uint8_t cs[8] = {0x80, 0x80, 0x7F, 0x80, 0xFD, 0x00, 0x00, 0xFF};
    static const uint8_t cc[8] = {0x15, 0x06, 0x06, 0x05, 0x06, 0x02, 0x00, 0x83};
    static const uint8_t es[8] = {0x7F, 0x80, 0x7F, 0x7F, 0xFD, 0x00, 0x00, 0xFF};
    static const uint8_t ec[8] = {0x27, 0x06, 0x06, 0x07, 0x06, 0x02, 0x00, 0x83};
    check_mx("mxfp4-floor", fs, fc); /* the existing rule, for contrast */
    check_mx("mxfp4-ceil", cs, cc);
    check_mx("mxfp4-even", es, ec);
}
END_TEST

/* mxfp8-floor, 1 x 160, five 32-element blocks (emax of E4M3 = 8):
 * A  amax 448 (exp 135): e = 135-127-8 = 0 -> 0x7F, sf = 1: 448 -> 0x7E, -1 -> 0xB8, 2^-9 -> 0x01,
 *    2^-10 (a tie between 0 and 2^-9) -> 0x00
 * B  amax 500 (exp 135): 0x7F, sf = 1: 500 clamps to 448 (0x7E); `mxfp8` (round up) would take 0x80
 * C  amax 1 (exp 127): 127-127-8 -> 0x77, sf = 2^-8: 1 -> 256 (0x78), -0.75 -> -192 (0xF4)
 * D  a NaN: 0xFF, divisor +Inf: 2 -> +0 (0x00), -2 -> -0 (0x80), NaN -> 0x7F, Inf -> Inf/Inf = NaN (0x7F)
 * E  zeros: exponent 0 -> clamped 0x00, sf = 2^-126; -0 -> 0x80 */
START_TEST(mxfp8_floor_blocks)
{
    float x[160] = {0};
    x[0] = 448, x[1] = -1, x[2] = 0x1p-9f, x[3] = 0x1p-10f;
    x[32] = 500, x[33] = 448;
    x[64] = 1, x[65] = -0.75f;
    x[96] = 2, x[97] = -2, x[98] = NAN, x[99] = INFINITY;
    x[128] = -0.0f;
    nvfp4_quantized q;
    quantize_row("mxfp8-floor", x, 160, &q);
    static const uint8_t scale[5] = {0x7F, 0x7F, 0x77, 0xFF, 0x00};
    expect_bytes("mxfp8-floor scale", q.row.scale, scale, 5);
    ck_assert_uint_eq(q.row.data_bytes, 160); /* one byte per element */
    static const uint8_t a[4] = {0x7E, 0xB8, 0x01, 0x00}, b[2] = {0x7E, 0x7E}, c[2] = {0x78, 0xF4},
                         dd[4] = {0x00, 0x80, 0x7F, 0x7F}, e[2] = {0x80, 0x00};
    expect_bytes("mxfp8-floor A", q.row.data, a, 4);
    expect_bytes("mxfp8-floor B", q.row.data + 32, b, 2);
    expect_bytes("mxfp8-floor C", q.row.data + 64, c, 2);
    expect_bytes("mxfp8-floor D", q.row.data + 96, dd, 4);
    expect_bytes("mxfp8-floor E", q.row.data + 128, e, 2);
    float d[160];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert(d[0] == 448.0f && d[32] == 448.0f && d[64] == 1.0f && d[65] == -0.75f);
    ck_assert(isnan(d[96]));
    nvfp4_quantized_free(&q);
}
END_TEST

/* ---- ggml ---------------------------------------------------------------- */

/* 1 x 64 (one ggml super-block), four 16-element sub-blocks:
 * A  bamax 12: ggml_ue4m3(2) = 0x40, s = 2. Nearest value by fp32 error, the first index winning a
 *    tie: 12 6 ... exact (0x7 0xF 0x6 0x5 0x4 0x3 0x2 0x1), 0 and -0 -> 0x0 (index 0 before 8),
 *    0.5 and -0.5 -> 0x0 (|0 - x| ties |+-1 - x|, index 0 first), 1.5 -> 0x1, 3.5 -> 0x3, 5 -> 0x4,
 *    7 -> 0x5 (every tie to the smaller magnitude; RNE would give 0x2, 0x4, 0x4, 0x6)
 * B  bamax 0.005: 0.005/6 = 0.00083 < 2^-6, (int)(0.00083*512 + 0.5) = 0 -> scale 0x00, s = 0:
 *    every error is |x|, so every code is 0x0
 * C  bamax 0.05: 0.0083333*512 + 0.5 = 4.77 -> 4 (0x04, s = 2^-7): 0.05 -> 6 (0x7),
 *    -0.02 = -2.56 s -> -3 s (0xD)
 * D  bamax 1500: 250 = 1.953125 * 2^7: fraction bits 7 plus the half bit carry into exponent 15,
 *    which ggml writes as 0x7E (448; E4M3 RNE would give 0x78 = 256): 1500 -> 3 (0x5; 1344 is
 *    nearer than 1792) */
START_TEST(ggml_blocks)
{
    static const float A[16] = {12, -12, 8, 6, 4, 3, 2, 1, 0, -0.0f, 0.5f, -0.5f, 1.5f, 3.5f, 5, 7};
    float x[64] = {0};
    memcpy(x, A, sizeof A);
    x[16] = 0.005f, x[17] = -0.003f;
    x[32] = 0.05f, x[33] = -0.02f;
    x[48] = 1500;
    nvfp4_quantized q;
    quantize_row("ggml", x, 64, &q);
    static const uint8_t scale[4] = {0x40, 0x00, 0x04, 0x7E};
    static const uint8_t data[32] = {0xF7, 0x56, 0x34, 0x12, 0x00, 0x00, 0x31, 0x54, /* A */
                                     0, 0, 0, 0, 0, 0, 0, 0,                         /* B */
                                     0xD7, 0, 0, 0, 0, 0, 0, 0,                      /* C */
                                     0x05, 0, 0, 0, 0, 0, 0, 0};                     /* D */
    expect_bytes("ggml scale", q.row.scale, scale, 4);
    expect_bytes("ggml data", q.row.data, data, 32);
    /* the ggml layout: the 4 scales, then per sub-block byte j = code j | code j+8 << 4 */
    static const uint8_t blk[36] = {0x40, 0x00, 0x04, 0x7E,                           /* d[4] */
                                    0x07, 0x0F, 0x06, 0x05, 0x14, 0x33, 0x42, 0x51,   /* A */
                                    0, 0, 0, 0, 0, 0, 0, 0,                           /* B */
                                    0x07, 0x0D, 0, 0, 0, 0, 0, 0,                     /* C */
                                    0x05, 0, 0, 0, 0, 0, 0, 0};                       /* D */
    ck_assert_uint_eq(nvfp4_ggml_nvfp4_size(1, 64), 36);
    uint8_t g[36], data2[32], scale2[4];
    ck_assert_int_eq(nvfp4_ggml_nvfp4_pack(&q.row, g, sizeof g, NULL), NVFP4_OK);
    expect_bytes("ggml block_nvfp4", g, blk, 36);
    memset(data2, 0xAA, sizeof data2);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_unpack(g, 36, 1, 64, data2, scale2, NULL), NVFP4_OK);
    expect_bytes("ggml unpacked data", data2, data, 32);
    expect_bytes("ggml unpacked scale", scale2, scale, 4);
    float d[64];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert(d[13] == 3.0f && d[15] == 6.0f && d[48] == 1344.0f && d[33] == -0.0234375f);
    ck_assert(d[16] == 0.0f);
    nvfp4_quantized_free(&q);
}
END_TEST

/* The layout's shape rules: 64-column rows only, exact input sizes. A 2 x 128
 * tensor: block (1, 1) is bytes 108..143, its sub-block 2 starts at row 1's
 * element 64 + 32 = 96. */
START_TEST(ggml_layout_shapes)
{
    float x[256] = {0};
    x[128 + 96] = 6, x[128 + 96 + 9] = -3; /* row 1, elements 96 and 105 */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "ggml";
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 2, 128, &o, &q, NULL), NVFP4_OK);
    uint8_t g[144], d2[128], s2[16];
    ck_assert_uint_eq(nvfp4_ggml_nvfp4_size(2, 128), 144);
    ck_assert_uint_eq(nvfp4_ggml_nvfp4_size(2, 96), 0);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_ggml_nvfp4_pack(&q.row, g, 143, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_pack(&q.row, g, 144, &err), NVFP4_OK);
    /* bamax 6: ggml_ue4m3(1) = 0x38 (s = 1); 6 -> 0x7 (element j = 0), -3 -> 0xD (element 9: byte 1, high) */
    ck_assert_uint_eq(g[108 + 2], 0x38);
    ck_assert_uint_eq(g[108 + 4 + 16], 0x07);
    ck_assert_uint_eq(g[108 + 4 + 17], 0xD0);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_unpack(g, 144, 2, 128, d2, s2, &err), NVFP4_OK);
    expect_bytes("ggml 2x128 data", d2, q.row.data, 128);
    expect_bytes("ggml 2x128 scale", s2, q.row.scale, 16);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_unpack(g, 143, 2, 128, d2, s2, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_unpack(g, 144, 2, 100, d2, s2, &err), NVFP4_EINVAL);
    nvfp4_quantized_free(&q);
    /* a 1 x 48 tensor quantizes (three 16-element blocks) but has no ggml layout */
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 48, &o, &q, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_ggml_nvfp4_pack(&q.row, g, 144, &err), NVFP4_EINVAL);
    ck_assert(strstr(err.message, "64") != NULL);
    nvfp4_quantized_free(&q);
}
END_TEST

/* ggml special values: NaN is ignored by the amax (a comparison with NaN is
 * false), an Inf amax gives 448 (0x7E), and NaN and Inf elements get code 0x0
 * (every error is NaN or Inf, index 0 is kept). Block 0: {NaN, 3}: bamax 3,
 * 0.5 = 2^-1 -> 0x30, 3 = 6 * 0.5 -> 0x7. Block 1: {Inf, 1344}: 0x7E,
 * 1344 = 3 * 448 -> 0x5, Inf -> 0x0. Code 0x8 dequantizes to +0. */
START_TEST(ggml_specials)
{
    float x[32] = {0};
    x[0] = NAN, x[1] = 3;
    x[16] = INFINITY, x[17] = 1344, x[18] = -INFINITY;
    nvfp4_quantized q;
    quantize_row("ggml", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x30);
    ck_assert_uint_eq(q.row.scale[1], 0x7E);
    ck_assert_uint_eq(q.row.data[0], 0x70);
    ck_assert_uint_eq(q.row.data[8], 0x50);
    ck_assert_uint_eq(q.row.data[9], 0x00);
    q.row.data[1] = 0x08; /* element 2: code 0x8, which ggml's table reads as +0 */
    float d[32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert(d[2] == 0.0f && !signbit(d[2]));
    nvfp4_quantized_free(&q);
}
END_TEST

/* ---- UE8M0 round to nearest, ties up -------------------------------------- */

START_TEST(ue8m0_rn)
{
    static const struct {
        uint32_t x;
        uint8_t rn, torch;
    } c[] = {
        {0x3FC00000, 0x80, 0x80}, /* 1.5: the tie between 1 and 2 goes up */
        {0x40400000, 0x81, 0x81}, /* 3 -> 4 */
        {0x3FBFFFFF, 0x7F, 0x7F}, /* just below 1.5 -> 1 */
        {0x3F800000, 0x7F, 0x7F}, /* 1 */
        {0x7F3FFFFF, 0xFE, 0xFE}, /* just below 1.5 * 2^127 -> 2^127 */
        {0x7F400000, 0xFF, 0xFF}, /* 1.5 * 2^127 rounds past the largest code: NaN */
        {0x00000000, 0xFF, 0x00}, /* +0: ml_dtypes NaN, torch code 0 */
        {0x80000000, 0xFF, 0x00}, /* -0 */
        {0xBFC00000, 0xFF, 0x80}, /* -1.5: ml_dtypes NaN, torch |x| */
        {0x00400000, 0x00, 0x00}, /* 2^-127 exactly */
        {0x00500000, 0x00, 0x01}, /* 1.25 * 2^-127: nearest is 2^-127; torch rounds a subnormal up */
        {0x00600000, 0x01, 0x01}, /* 1.5 * 2^-127: the tie goes up */
        {0x00000001, 0x00, 0x00}, /* the smallest subnormal -> 2^-127 */
        {0x7F800000, 0xFF, 0xFF}, /* +Inf */
        {0xFF800000, 0xFF, 0xFF}, /* -Inf */
        {0x7FC00000, 0xFF, 0xFF}, /* NaN */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        float x = f32(c[i].x);
        ck_assert_msg(nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RN) == c[i].rn, "rn 0x%08X", c[i].x);
        ck_assert_msg(nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RN_TORCH) == c[i].torch, "rn-torch 0x%08X", c[i].x);
    }
    nvfp4_ue8m0_mode m;
    ck_assert(nvfp4_ue8m0_mode_parse("rn", &m) && m == NVFP4_UE8M0_RN);
    ck_assert(nvfp4_ue8m0_mode_parse("rn-torch", &m) && m == NVFP4_UE8M0_RN_TORCH);
    ck_assert_str_eq(nvfp4_ue8m0_mode_name(NVFP4_UE8M0_RN_TORCH), "rn-torch");
    ck_assert(!nvfp4_ue8m0_mode_parse("rn-up", &m));
}
END_TEST

/* Every normal fp32 x = (1 + f) * 2^k: the two rules give 2^k below the
 * midpoint 1.5 * 2^k and 2^(k+1) from it on. */
START_TEST(ue8m0_rn_all_exponents)
{
    for (uint32_t e = 1; e < 255; e++) {
        uint32_t fr[4] = {0, 0x3FFFFF, 0x400000, 0x7FFFFF};
        for (int k = 0; k < 4; k++) {
            float x = f32(e << 23 | fr[k]);
            uint8_t want = (uint8_t)(e + (fr[k] >= 0x400000u));
            ck_assert_uint_eq(nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RN), want);
            ck_assert_uint_eq(nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RN_TORCH), want);
            ck_assert_uint_eq(nvfp4_ue8m0_from_f32(-x, NVFP4_UE8M0_RN), 0xFF);
            ck_assert_uint_eq(nvfp4_ue8m0_from_f32(-x, NVFP4_UE8M0_RN_TORCH), want);
        }
    }
}
END_TEST

static Suite *recipes_mx_suite(void)
{
    Suite *s = suite_create("recipes_mx");
    TCase *tc = tcase_create("blocks");
    tcase_add_test(tc, torchao_1level_blocks);
    tcase_add_test(tc, mxfp4_floor_ceil_even);
    tcase_add_test(tc, mxfp8_floor_blocks);
    tcase_add_test(tc, ggml_blocks);
    tcase_add_test(tc, ggml_specials);
    tcase_add_test(tc, ggml_layout_shapes);
    tcase_add_test(tc, ue8m0_rn);
    tcase_add_test(tc, ue8m0_rn_all_exponents);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nvfp4_check_run(recipes_mx_suite()); }
