/* check_recipes.c - hand-computed blocks for every recipe and its edge cases
 * (nvfp4-semantics.md 0, 2.2, 3.3, 3.8, 3.9), with the expected bytes
 * written out. Most tensors contain one element 2688 so that the te global
 * scale is exactly 1 (S_enc = 2688/2688, S_dec = 1) and torchao/modelopt's
 * g = 2688/2688 = 1, which keeps the arithmetic checkable by hand:
 *   te block scale  s = e4m3(bamax * fl(1/6)),  fl(1/6) = 0x3E2AAAAB
 *   te encode       inv = 1/s (s a power of two here, so exact) */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/quant.h"

static float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* The main 1 x 96 test tensor: six 16-element blocks.
 * A: the amax block      {2688, -1344, 560, 0...}
 * B: bamax 12 (s = 2)    values whose y = x/2 hit every code and every tie
 * C: all zero, with -0
 * D: underflow: bamax 0.005, 0.005*fl(1/6) < 2^-10, so te's scale is 0
 * F: subnormal scale: bamax 0.01 -> 0.0016667 -> E4M3 2^-9 (0x01)
 * G: bamax 11.25 -> s = 1.875 (0x3F), whose fp32 reciprocal is rounded up:
 *    te's y = x*fl(1/1.875) lands just above the ties 1.25, 2.5, 5 */
static void main_tensor(float *x)
{
    static const float B[16] = {12, -12, 8, 6, 4, 3, 2, 1, 0, -0.0f, 0.5f, -0.5f, 1.5f, 3.5f, 5, 7};
    memset(x, 0, 96 * sizeof *x);
    x[0] = 2688;
    x[1] = -1344;
    x[2] = 560;
    memcpy(x + 16, B, sizeof B);
    x[33] = -0.0f;
    x[48] = 0.001f, x[49] = -0.001f, x[51] = -0.0f, x[52] = 0.005f, x[53] = -0.005f;
    x[64] = 0.01f, x[65] = 0.005f, x[66] = -0.001f;
    x[80] = 11.25f, x[81] = 2.34375f, x[82] = 4.6875f, x[83] = 9.375f, x[84] = -2.34375f;
}

typedef struct {
    uint8_t scale[6];
    uint8_t data[48];
} expect_main;

static void run_main(const char *recipe, const expect_main *e)
{
    float x[96];
    main_tensor(x);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_quantized q;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 96, &o, &q, &err), NVFP4_OK);
    ck_assert_float_eq(q.row.amax, 2688.0f);
    ck_assert_uint_eq(q.row.data_bytes, 48);
    for (int b = 0; b < 6; b++) ck_assert_msg(q.row.scale[b] == e->scale[b], "%s: scale %d = 0x%02x, expected 0x%02x", recipe, b, q.row.scale[b], e->scale[b]);
    for (int j = 0; j < 48; j++)
        ck_assert_msg(q.row.data[j] == e->data[j], "%s: byte %d = 0x%02x, expected 0x%02x", recipe, j, q.row.data[j], e->data[j]);
    nvfp4_quantized_free(&q);
}

START_TEST(te_main_blocks)
{
    /* A: s = e4m3(2688*fl(1/6) = 448) = 0x7E; inv = fl(1/448) (slightly
     *    above 1/448): 2688 -> 6.0000005 -> 7, -1344 -> -3.0000002 -> D,
     *    560 -> 1.25 exactly (the product rounds back) -> tie -> 2.
     * B: s = e4m3(12*fl(1/6) = 2.0) = 0x40, inv = 0.5: y = 6,-6,4,3,2,1.5,1,
     *    0.5,0,-0,0.25(tie->0),-0.25(->-0),0.75(tie->1),1.75(->2),2.5(->2),3.5(->4)
     * C: s = 0, inv = FLT_MAX: 0 -> 0x0, -0 -> 0x8.
     * D: s = 0: nonzero elements saturate to +-6, zeros keep their sign.
     * F: s = 0x01 (2^-9), inv = 512: 5.12 -> 6 (7), 2.56 -> 3 (5), -0.512 -> -0.5 (9).
     * G: s = 0x3F, inv = fl(1/1.875): 6 -> 7, 1.2500001 -> 3, 2.5000002 -> 5,
     *    5.0000005 -> 7, -1.2500001 -> B. */
    static const expect_main e = {
        {0x7E, 0x40, 0x00, 0x00, 0x01, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x80, 0x80, 0x42, 0x64,
         0x80, 0, 0, 0, 0, 0, 0, 0,
         0xF7, 0x80, 0xF7, 0, 0, 0, 0, 0,
         0x57, 0x09, 0, 0, 0, 0, 0, 0,
         0x37, 0x75, 0x0B, 0, 0, 0, 0, 0}};
    run_main("te", &e);
}
END_TEST

START_TEST(te_pyref_main_blocks)
{
    /* As te, except that a zero y gives 0x0 whatever its sign:
     * B[9] = -0 -> 0 (te 8), C[1] -> 0, D[3] -> 0. -0.25 (B[11]) stays 0x8. */
    static const expect_main e = {
        {0x7E, 0x40, 0x00, 0x00, 0x01, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x00, 0x80, 0x42, 0x64,
         0x00, 0, 0, 0, 0, 0, 0, 0,
         0xF7, 0x00, 0xF7, 0, 0, 0, 0, 0,
         0x57, 0x09, 0, 0, 0, 0, 0, 0,
         0x37, 0x75, 0x0B, 0, 0, 0, 0, 0}};
    run_main("te-pyref", &e);
}
END_TEST

START_TEST(torchao_main_blocks)
{
    /* g = 1, 1/g = 1. A: (2688/6)/1 = 448 -> 0x7E; y = x * fl(1/448) (as te):
     * 6.0000005 -> 7, -3.0000002 -> D, 1.25 (the product rounds back; tie -> 2).
     * G: 11.25/6 = 1.875 -> 0x3F; y = x * fl(1/1.875), rounded up as te's
     *    reciprocal: 6 -> 7, 1.2500001 -> 3, 2.5000002 -> 5, 5.0000005 -> 7, -1.2500001 -> B.
     * B: 12/6 = 2 -> 0x40, y = x/2: the te codes.
     * C, D, F: clamped to 2^-6, whose reciprocal 64 is exact: as torchao-0.13-0.16. */
    static const expect_main e = {
        {0x7E, 0x40, 0x08, 0x08, 0x08, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x80, 0x80, 0x42, 0x64,
         0x80, 0, 0, 0, 0, 0, 0, 0,
         0x80, 0x80, 0x91, 0, 0, 0, 0, 0,
         0x11, 0x08, 0, 0, 0, 0, 0, 0,
         0x37, 0x75, 0x0B, 0, 0, 0, 0, 0}};
    run_main("torchao", &e);
}
END_TEST

START_TEST(torchao_0_13_0_16_main_blocks)
{
    /* g = 1. A: (2688/6)/1 = 448 -> 0x7E; y = x/448 exactly: 6, -3, 1.25 (tie -> 2).
     * G: 11.25/6 = 1.875 -> 0x3F; y = x/1.875 exactly: the ties go to 2, 4, 6.
     * B: 12/6 = 2 -> 0x40, y = x/2: the te codes.
     * C: 0 -> clamped to 2^-6 (0x08); y = +-0 -> 0x0 / 0x8.
     * D: 0.005/6 -> clamped to 2^-6; y = 64x: 0.064 -> 0, -0.064 -> 8, 0.32 -> 1, -0.32 -> 9.
     * F: 0.01/6 -> clamped to 2^-6; y = 64x: 0.64 -> 1, 0.32 -> 1, -0.064 -> 8. */
    static const expect_main e = {
        {0x7E, 0x40, 0x08, 0x08, 0x08, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x80, 0x80, 0x42, 0x64,
         0x80, 0, 0, 0, 0, 0, 0, 0,
         0x80, 0x80, 0x91, 0, 0, 0, 0, 0,
         0x11, 0x08, 0, 0, 0, 0, 0, 0,
         0x27, 0x64, 0x0A, 0, 0, 0, 0, 0}};
    run_main("torchao-0.13-0.16", &e);
}
END_TEST

START_TEST(modelopt_main_blocks)
{
    /* g = 1. A: 2688/(6*1) = 448 -> 0x7E, y = x/448: 7, D, 2 (tie).
     * B: 2 -> 0x40; y = x/2 as te but -0 -> 0x0 (sign from y < 0).
     * C: 0 -> replaced by 1.0 -> 0x38; codes 0 (both zeros).
     * D: 0.005/6 -> clamp 2^-9 (0x01); y = 512x: 0.512 -> 1, -0.512 -> 9, 0, -0 -> 0, 2.56 -> 5, -2.56 -> D.
     * F: 0.01/6 = 0.0016667 -> e4m3 rounds to 2^-9 (0x01); y = 512x: 7, 5, 9.
     * G: 1.875 -> 0x3F, y = x/1.875: 7, 2, 4, 6, A (as exact). */
    static const expect_main e = {
        {0x7E, 0x40, 0x38, 0x01, 0x01, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x00, 0x80, 0x42, 0x64,
         0x00, 0, 0, 0, 0, 0, 0, 0,
         0x91, 0x00, 0xD5, 0, 0, 0, 0, 0,
         0x57, 0x09, 0, 0, 0, 0, 0, 0,
         0x27, 0x64, 0x0A, 0, 0, 0, 0, 0}};
    run_main("modelopt", &e);
}
END_TEST

START_TEST(exact_main_blocks)
{
    /* te scales; D = ((float)s*2688)*fl(1/2688) = 448, 2, 0, 0, 2^-9, 1.875
     * exactly. Differs from te only in block G: x/1.875 = 1.25, 2.5, 5 exactly
     * are ties that go to the even codes 2, 4, 6 (te's rounded-up reciprocal
     * pushes them to 3, 5, 7). */
    static const expect_main e = {
        {0x7E, 0x40, 0x00, 0x00, 0x01, 0x3F},
        {0xD7, 0x02, 0, 0, 0, 0, 0, 0,
         0xF7, 0x56, 0x34, 0x12, 0x80, 0x80, 0x42, 0x64,
         0x80, 0, 0, 0, 0, 0, 0, 0,
         0xF7, 0x80, 0xF7, 0, 0, 0, 0, 0,
         0x57, 0x09, 0, 0, 0, 0, 0, 0,
         0x27, 0x64, 0x0A, 0, 0, 0, 0, 0}};
    run_main("exact", &e);
}
END_TEST

/* 1 x 32: block 0 = {NaN, 12, -3, -0, 0...}, block 1 = {2688, 0...}. */
static void quant_nan(const char *recipe, nvfp4_block blk, nvfp4_quantized *q)
{
    float x[32] = {0};
    x[0] = NAN, x[1] = 12, x[2] = -3, x[3] = -0.0f, x[16] = 2688;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = blk;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, q, NULL), NVFP4_OK);
}

START_TEST(nan_elements)
{
    nvfp4_quantized q;
    /* te: NaN is ignored by both amaxes (2688 and 12) and encodes to 0x7. */
    quant_nan("te", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert_float_eq(q.row.amax, 2688.0f);
    ck_assert_uint_eq(q.row.scale[0], 0x40);
    ck_assert_uint_eq(q.row.data[0], 0x77); /* NaN -> 7, 12/2 = 6 -> 7 */
    ck_assert_uint_eq(q.row.data[1], 0x8B); /* -1.5 -> B, -0 -> 8 */
    nvfp4_quantized_free(&q);
    /* te-pyref: NaN -> 0, -0 -> 0. */
    quant_nan("te-pyref", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert_uint_eq(q.row.data[0], 0x70);
    ck_assert_uint_eq(q.row.data[1], 0x0B);
    nvfp4_quantized_free(&q);
    /* torchao: torch.amax propagates NaN: amax NaN, g NaN, every scale NaN
     * (0x7F), every y NaN -> the 0x3 artifact. */
    quant_nan("torchao", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert(isnan(q.row.amax));
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.scale[1], 0x7F);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(q.row.data[j], 0x33);
    nvfp4_quantized_free(&q);
    /* modelopt: same NaN propagation, NaN codes 0x7. */
    quant_nan("modelopt", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(q.row.data[j], 0x77);
    nvfp4_quantized_free(&q);
    /* mxfp4-rceil (one 32-block, NaN ignored): 2688*fl(1/6) = 448 -> rounded
     * up to 2^9 -> 0x88; y = x/512: NaN -> 7, 0.0234 -> 0, -0.0059 -> 8, -0 -> 8;
     * 2688/512 = 5.25 -> 7. */
    quant_nan("mxfp4-rceil", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert_uint_eq(q.row.scale_cols, 1);
    ck_assert_uint_eq(q.row.scale[0], 0x88);
    ck_assert_float_eq(q.row.amax, 0.0f);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[1], 0x88);
    ck_assert_uint_eq(q.row.data[8], 0x07);
    nvfp4_quantized_free(&q);
    /* mxfp4-floor (torchao to_mx): NaN block amax -> scale 0xFF, fp32 scale
     * +Inf: NaN/Inf = NaN -> 3, 12/Inf = +0 -> 0, -3/Inf = -0 -> 8, -0 -> 8,
     * 2688/Inf -> 0. Dequantization: get_fp_scale(0xFF) = NaN. */
    quant_nan("mxfp4-floor", NVFP4_BLOCK_DEFAULT, &q);
    ck_assert_uint_eq(q.row.scale[0], 0xFF);
    ck_assert_uint_eq(q.row.data[0], 0x03);
    ck_assert_uint_eq(q.row.data[1], 0x88);
    for (int j = 2; j < 16; j++) ck_assert_uint_eq(q.row.data[j], 0x00);
    float d[32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    for (int j = 0; j < 32; j++) ck_assert(isnan(d[j]));
    nvfp4_quantized_free(&q);
    /* an Inf in a NaN block: Inf/Inf = NaN -> 3; a finite block next to it is
     * unaffected: bamax 5 -> exponent 2 - 2 -> 2^0 (0x7F), 5 -> tie -> 4 (6). */
    float x[64] = {0};
    x[0] = NAN, x[1] = INFINITY, x[2] = -7, x[32] = 5;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "mxfp4-floor";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 64, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0xFF);
    ck_assert_uint_eq(q.row.scale[1], 0x7F);
    ck_assert_uint_eq(q.row.data[0], 0x33);
    ck_assert_uint_eq(q.row.data[1], 0x08);
    ck_assert_uint_eq(q.row.data[16], 0x06);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_inf_element_and_amax)
{
    /* Global amax Inf -> S_enc = 2688/Inf = 0 -> 1. Block 0 {Inf, 1, -2}:
     * bamax Inf -> e4m3 sat 448 (0x7E); inv = fl(1/448): Inf -> 7, 1 -> 0.0022 -> 0,
     * -2 -> 8. Block 1 {3}: 3*fl(1/6) = 0.5 -> 0x30, inv = 2: 6 -> 7. */
    float x[32] = {0};
    x[0] = INFINITY, x[1] = 1, x[2] = -2, x[16] = 3;
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, NULL, &q, NULL), NVFP4_OK);
    ck_assert(isinf(q.row.amax));
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x30);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[1], 0x08);
    ck_assert_uint_eq(q.row.data[8], 0x07);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_amax_zero)
{
    /* amax 0 -> S_enc = 1; every scale 0; codes keep the sign of zero;
     * dequantization gives +-0. */
    float x[16] = {0, -0.0f, 0, -0.0f};
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 16, NULL, &q, NULL), NVFP4_OK);
    ck_assert_float_eq(q.row.amax, 0.0f);
    ck_assert_uint_eq(q.row.scale[0], 0);
    ck_assert_uint_eq(q.row.data[0], 0x80);
    ck_assert_uint_eq(q.row.data[1], 0x80);
    float d[16];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_uint_eq(bits(d[0]), 0);
    ck_assert_uint_eq(bits(d[1]), 0x80000000u);
    nvfp4_quantized_free(&q);
    /* torchao: no guard: g = 0, (0/6)/0 = NaN -> 0x7F, codes of NaN 0x3. */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "torchao";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 16, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.data[0], 0x33);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(te_amax_not_2688)
{
    /* amax 6: S_enc = 448, m = 448*fl(1/6) = 74.66667 (0x42955556),
     * s = e4m3(6*m = 448.00003) = 0x7E, S_dec = fl(1/448), 448*S_dec = 1.0, inv = 1:
     * codes are those of x itself: 6 -> 7, 0.75 tie -> 2, 1.25 tie -> 2, 2.5 -> 4, 5 -> 6. */
    float x[16] = {6, 0.75f, 1.25f, 2.5f, 5, -0.25f, 0.25f, f32(0x3e800001)};
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 16, NULL, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.data[0], 0x27);
    ck_assert_uint_eq(q.row.data[1], 0x42);
    ck_assert_uint_eq(q.row.data[2], 0x86);
    ck_assert_uint_eq(q.row.data[3], 0x10);
    float d[16];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    /* dequant scale ((448*6)*fl(1/2688)) = 2688*0x39C30C31 = 1.0 */
    ck_assert_float_eq(d[0], 6.0f);
    ck_assert_float_eq(d[3], 2.0f);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(mx_scales)
{
    /* One 32-element block each; x = {a, -1, 0...}. */
    float x[32] = {0};
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_quantized q;
    x[1] = -1;
    /* bamax 13. floor: exponent(13) = 3, minus emax 2 -> 2^1 (0x80): y = 6.5 -> 7,
     * -0.5 -> 9. rceil: 13*fl(1/6) = 2.1666667 rounded up -> 2^2 (0x81):
     * y = 3.25 -> 5, -0.25 (tie to 0, sign kept) -> 8. */
    x[0] = 13;
    o.recipe = "mxfp4-floor";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x80);
    ck_assert_uint_eq(q.row.data[0], 0x97);
    nvfp4_quantized_free(&q);
    o.recipe = "mxfp4-rceil";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x81);
    ck_assert_uint_eq(q.row.data[0], 0x85);
    float d[32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_float_eq(d[0], 12.0f); /* 3 * 2^2 */
    ck_assert_uint_eq(bits(d[1]), 0x80000000u);
    nvfp4_quantized_free(&q);
    /* mxfp8, bamax 1800: 1800*fl(1/448) = 4.018 -> up to 2^3 (0x82); y = 225 ->
     * E4M3 224 (0x76); -1/8 -> -2^-3 (0xA0). bamax 1792: 1792*fl(1/448) = 4.0
     * exactly -> 2^2 (0x81), y = 448 (0x7E). */
    o.recipe = "mxfp8";
    x[0] = 1800;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.data_bytes, 32);
    ck_assert_uint_eq(q.row.scale[0], 0x82);
    ck_assert_uint_eq(q.row.data[0], 0x76);
    ck_assert_uint_eq(q.row.data[1], 0xA0);
    nvfp4_quantized_free(&q);
    x[0] = 1792;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x81);
    ck_assert_uint_eq(q.row.data[0], 0x7E);
    nvfp4_quantized_free(&q);
    /* floor with a subnormal amax 2^-127: exponent bits 0 -> scale 0x00; to_mx
     * clamps the fp32 scale to 2^-126, so y = 0.5 -> code 1 (not 2), and x[1]
     * = -2^-128 -> -0.25 -> 8. to_dtype multiplies by pow(2, 0 - 127) = 2^-127,
     * so the round trip gives 0.5 * 2^-127 = 2^-128 (half of x[0]) and -0. */
    o.recipe = "mxfp4-floor";
    x[0] = ldexpf(1, -127), x[1] = -ldexpf(1, -128);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0x81);
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_uint_eq(bits(d[0]), bits(ldexpf(1, -128)));
    ck_assert_uint_eq(bits(d[1]), 0x80000000u);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(dequant_formulas)
{
    /* te: fp4 * (((float)s * amax) * fl(1/2688)); main tensor block B: s = 2,
     * amax 2688 -> exactly 2: code 7 -> 12, code 3 -> 3.
     * torchao/modelopt: fp4 * (g * s) = fp4 * 2. */
    float x[96], d[96];
    main_tensor(x);
    const char *names[] = {"te", "torchao", "modelopt", "exact"};
    for (int i = 0; i < 4; i++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = names[i];
        nvfp4_quantized q;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 96, &o, &q, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
        ck_assert_float_eq(d[16], 12.0f);
        ck_assert_float_eq(d[21], 3.0f);
        ck_assert_float_eq(d[0], 2688.0f);
        /* B[11] = -0.5 -> y = -0.25 -> 0x8 in every recipe here; modelopt's
         * decode table has +0 at index 8, the others give -0. */
        ck_assert_uint_eq(q.row.data[13] >> 4, 0x8u);
        ck_assert_uint_eq(bits(d[27]), i == 2 ? 0u : 0x80000000u);
        nvfp4_quantized_free(&q);
    }
}
END_TEST

START_TEST(torchao_tiny_global_scale)
{
    /* amax = 2688 * 2^-130 -> g = 2^-130 (subnormal, exact); 1/g = +Inf
     * (1/g is finite only for g > 2^-128).
     * Block 0 {2688*2^-130, -1e-40, 0...}: (bamax/6)/g = 448 -> 0x7E.
     * Block 1 {2^-149, 0...}: 2^-149/6 = 0 -> clamp 2^-6 (0x08).
     * torchao: factor = Inf/s = Inf: nonzero x -> +-Inf -> +-6 (7 / F), and
     * 0 * Inf = NaN -> 0x3 (torchao on x86 gives 0xB: that NaN is 0xFFC00000).
     * torchao-0.13-0.16: y = x / (g*s): 2688*2^-130 / (448*2^-130) = 6 -> 7,
     * -1e-40 / (448*2^-130) -> -0.0003 -> 8, zeros 0; block 1: 2^-149/2^-136 -> 0. */
    float x[32] = {0};
    x[0] = ldexpf(2688, -130), x[1] = -1e-40f, x[16] = ldexpf(1, -149);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_quantized q;
    o.recipe = "torchao";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x08);
    ck_assert_uint_eq(q.row.data[0], 0xF7);
    for (int j = 1; j < 8; j++) ck_assert_uint_eq(q.row.data[j], 0x33);
    ck_assert_uint_eq(q.row.data[8], 0x37);
    for (int j = 9; j < 16; j++) ck_assert_uint_eq(q.row.data[j], 0x33);
    nvfp4_quantized_free(&q);
    o.recipe = "torchao-0.13-0.16";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x08);
    ck_assert_uint_eq(q.row.data[0], 0x87);
    for (int j = 1; j < 16; j++) ck_assert_uint_eq(q.row.data[j], 0x00);
    nvfp4_quantized_free(&q);
    /* amax = 2688 * 2^-127: g = 2^-127, 1/g = 2^127 finite; block 1 (scale
     * 2^-6): 2^127 / 2^-6 overflows to Inf, so its nonzero element becomes 6
     * and its zeros NaN (0x3); block 0 (scale 448): 2^127/448 is finite,
     * 2688*2^-127 * (2^127/448) = 6.0000005 -> 7, zeros +0. */
    x[0] = ldexpf(2688, -127);
    o.recipe = "torchao";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x08);
    ck_assert_uint_eq(q.row.data[0], 0x87);
    ck_assert_uint_eq(q.row.data[1], 0x00);
    ck_assert_uint_eq(q.row.data[8], 0x37);
    ck_assert_uint_eq(q.row.data[9], 0x33);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(registry)
{
    /* every recipe in registry order, with its default block and whether it keeps a per-tensor amax */
    static const struct {
        const char *name;
        nvfp4_block block;
        bool global;
    } want[] = {
        {"te", NVFP4_BLOCK_1X16, true},           {"te-pyref", NVFP4_BLOCK_1X16, true},
        {"torchao", NVFP4_BLOCK_1X16, true},      {"torchao-0.13-0.16", NVFP4_BLOCK_1X16, true},
        {"modelopt", NVFP4_BLOCK_1X16, true},     {"exact", NVFP4_BLOCK_1X16, true},
        {"mxfp4-floor", NVFP4_BLOCK_1X32, false}, {"mxfp4-rceil", NVFP4_BLOCK_1X32, false},
        {"mxfp8", NVFP4_BLOCK_1X32, false},       {"torchao-1level", NVFP4_BLOCK_1X16, false},
        {"mxfp4-ceil", NVFP4_BLOCK_1X32, false},  {"mxfp4-even", NVFP4_BLOCK_1X32, false},
        {"mxfp8-floor", NVFP4_BLOCK_1X32, false}, {"ggml", NVFP4_BLOCK_1X16, false},
        {"te-4over6", NVFP4_BLOCK_1X16, true},    {"te-4over6-mse", NVFP4_BLOCK_1X16, true},
        {"te-4over6-fast", NVFP4_BLOCK_1X16, true}, {"te-4over6-mse-fast", NVFP4_BLOCK_1X16, true},
        {"te-rowscaled", NVFP4_BLOCK_1X16, true}, {"te-pow2", NVFP4_BLOCK_1X32, false},
        {"fast-math", NVFP4_BLOCK_1X16, true},    {"te-4over6-448", NVFP4_BLOCK_1X16, true},
        {"compressed-tensors", NVFP4_BLOCK_1X16, true}, {"vllm", NVFP4_BLOCK_1X16, true},
        {"flashinfer", NVFP4_BLOCK_1X16, true}, {"ggml-mxfp4", NVFP4_BLOCK_1X32, false},
        {"mslk", NVFP4_BLOCK_1X16, true},
        {"te-ue5m3", NVFP4_BLOCK_1X16, true}, {"te-ue5m3-1level", NVFP4_BLOCK_1X16, false},
        {"flashinfer-pertoken", NVFP4_BLOCK_1X16, true}, {"fbgemm", NVFP4_BLOCK_1X16, true},
        {"mslk-stacked", NVFP4_BLOCK_1X16, true}, {"compressed-tensors-bf16", NVFP4_BLOCK_1X16, true},
        {"compressed-tensors-fp16", NVFP4_BLOCK_1X16, true},
    };
    const size_t n = sizeof want / sizeof want[0];
    ck_assert_uint_eq(nvfp4_recipe_count(), n);
    for (size_t i = 0; i < n; i++) {
        const nvfp4_recipe *r = nvfp4_recipe_find(want[i].name);
        ck_assert_ptr_nonnull(r);
        ck_assert_ptr_eq(r, nvfp4_recipe_at(i));
        const nvfp4_recipe_info *in = nvfp4_recipe_get_info(r);
        ck_assert_str_eq(in->name, want[i].name);
        ck_assert(strlen(in->provenance) > 10);
        ck_assert_int_eq(in->default_block, want[i].block);
        ck_assert_int_eq(in->has_global_amax, want[i].global);
    }
    ck_assert_ptr_null(nvfp4_recipe_find("nope"));
    ck_assert_ptr_null(nvfp4_recipe_at(n));
    ck_assert_ptr_eq(nvfp4_recipe_find(NULL), nvfp4_recipe_find("te"));
}
END_TEST

START_TEST(specials_other_recipes)
{
    /* 1 x 32: block 0 = {Inf, 1, -2, 0...}, block 1 = {3, 0...}. */
    float x[32] = {0};
    x[0] = INFINITY, x[1] = 1, x[2] = -2, x[16] = 3;
    nvfp4_quant_opts o;
    nvfp4_quantized q;
    nvfp4_quant_opts_init(&o);
    /* torchao: amax Inf -> g = Inf. Block 0: (Inf/6)/Inf = NaN -> 0x7F, y NaN -> 0x3.
     * Block 1: (3/6)/Inf = 0 -> clamp 2^-6 (0x08); total Inf*2^-6 = Inf, y = 3/Inf = 0. */
    o.recipe = "torchao";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert(isinf(q.row.amax));
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.scale[1], 0x08);
    ck_assert_uint_eq(q.row.data[0], 0x33);
    ck_assert_uint_eq(q.row.data[8], 0x00);
    nvfp4_quantized_free(&q);
    /* modelopt: block 0: Inf/(6*Inf) = NaN -> 0x7F, y NaN -> 0x7. Block 1:
     * 3/Inf = 0 -> replaced by 1 (0x38); y = 3/(1*Inf) = 0. */
    o.recipe = "modelopt";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.scale[1], 0x38);
    ck_assert_uint_eq(q.row.data[0], 0x77);
    ck_assert_uint_eq(q.row.data[8], 0x00);
    nvfp4_quantized_free(&q);
    /* modelopt amax 0: g = 0, 0/(6*0) = NaN (not 0, so not replaced) -> 0x7F; codes 0x7. */
    float z[16] = {0};
    ck_assert_int_eq(nvfp4_quantize(z, NVFP4_DTYPE_F32, 1, 16, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.data[0], 0x77);
    nvfp4_quantized_free(&q);
    /* mxfp4-rceil (one 32-block): bamax Inf -> Inf*fl(1/6) = Inf -> 0xFE
     * (2^127); y: Inf -> 7, 1/2^127 -> 0, -2/2^127 -> 8, 3/2^127 -> 0. */
    o.recipe = "mxfp4-rceil";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0xFE);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[1], 0x08);
    ck_assert_uint_eq(q.row.data[8], 0x00);
    nvfp4_quantized_free(&q);
    /* mxfp4-floor: the exponent bits of Inf (255) minus 2 -> 0xFD (2^126). */
    o.recipe = "mxfp4-floor";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0xFD);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[1], 0x08);
    nvfp4_quantized_free(&q);
    /* mxfp8: Inf -> scale 0xFE, y = Inf -> 448 (0x7E); 1/2^127 -> 0x00, -2/2^127 -> 0x80. */
    o.recipe = "mxfp8";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0xFE);
    ck_assert_uint_eq(q.row.data[0], 0x7E);
    ck_assert_uint_eq(q.row.data[1], 0x00);
    ck_assert_uint_eq(q.row.data[2], 0x80);
    nvfp4_quantized_free(&q);
    /* mxfp8 zero block with -0 and a NaN: bamax 0 (NaN ignored) -> rp(0) = 0x00;
     * y = x/2^-127: 0 -> 0x00, -0 -> 0x80, NaN -> 0x7F. */
    float w[32] = {0};
    w[1] = -0.0f, w[2] = NAN;
    ck_assert_int_eq(nvfp4_quantize(w, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0x00);
    ck_assert_uint_eq(q.row.data[1], 0x80);
    ck_assert_uint_eq(q.row.data[2], 0x7F);
    nvfp4_quantized_free(&q);
    /* exact: underflowing block (D = 0) saturates like te; zero keeps its sign. */
    float u[32] = {0};
    u[0] = 0.001f, u[1] = -0.001f, u[2] = -0.0f, u[16] = 2688;
    o.recipe = "exact";
    ck_assert_int_eq(nvfp4_quantize(u, NVFP4_DTYPE_F32, 1, 32, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0xF7);
    ck_assert_uint_eq(q.row.data[1], 0x08);
    nvfp4_quantized_free(&q);
}
END_TEST

Suite *recipes_suite(void);
Suite *recipes_suite(void)
{
    Suite *s = suite_create("recipes");
    TCase *tc = tcase_create("blocks");
    tcase_add_test(tc, te_main_blocks);
    tcase_add_test(tc, te_pyref_main_blocks);
    tcase_add_test(tc, torchao_main_blocks);
    tcase_add_test(tc, torchao_0_13_0_16_main_blocks);
    tcase_add_test(tc, torchao_tiny_global_scale);
    tcase_add_test(tc, modelopt_main_blocks);
    tcase_add_test(tc, exact_main_blocks);
    tcase_add_test(tc, nan_elements);
    tcase_add_test(tc, te_inf_element_and_amax);
    tcase_add_test(tc, te_amax_zero);
    tcase_add_test(tc, te_amax_not_2688);
    tcase_add_test(tc, mx_scales);
    tcase_add_test(tc, dequant_formulas);
    tcase_add_test(tc, registry);
    tcase_add_test(tc, specials_other_recipes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(recipes_suite());
}
