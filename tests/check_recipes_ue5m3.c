/* check_recipes_ue5m3.c - hand-computed blocks for the prototype UE5M3
 * recipes te-ue5m3 and te-ue5m3-1level (docs/semantics.md, "Recipes"),
 * expected bytes written out with the arithmetic that gives them.
 *
 * fl(1/6) = 0x3E2AAAAB = 1/6 * (1 + 2^-25 * 3 ...) so that 6 * fl(1/6) =
 * 1.0000000298: far below half an ulp from 1 at every binade, so
 * bamax * fl(1/6) rounds to bamax/6 exactly whenever bamax/6 is a short
 * binary fraction (all the cases below). UE5M3 grid: 0x78 = 1, 0x79 =
 * 1.125, 0x7A = 1.25; 0x01 = 2^-17; 0xFE = 114688. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/quant.h"

static nvfp4_status quantize(const char *recipe, const float *x, size_t rows, size_t cols, bool colwise,
                             nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.columnwise = colwise;
    return nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, q, NULL);
}

static void expect_bytes(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s: byte %zu = 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

/* 1 x 128, eight 1x16 blocks, for te-ue5m3-1level (S_enc = 1: s = ue5m3(bamax * fl(1/6))):
 * A {6}:             s = 1 (0x78), inv 1; 6 -> code 7
 * B {1e6, 344064}:   bamax/6 = 166666.7 > 114688: saturates, 0xFE; inv = fl(1/114688) = 2^-16/1.75;
 *                    1e6 -> 8.7 -> 6 (7); 344064 = 3 * 114688 -> 3 (5)
 * C {6*2^-17, 2^-17}: bamax/6 = 2^-17, the smallest subnormal: 0x01; inv 2^17; codes 7, 2
 *                    (E4M3 would have flushed this scale to 0: its floor is 2^-9)
 * D {3*2^-17}:       bamax/6 = 2^-18, half the smallest subnormal: a tie to the even 0x00; inv = FLT_MAX;
 *                    the element saturates to code 7 (dequantizes to 0, as in te)
 * E {6.375, 1.0625}: bamax/6 = 1.0625, the tie between 0x78 and 0x79: the even 0x78; 6.375 -> 6 (7),
 *                    1.0625 -> 1 (2)
 * F {7.125, 3.75}:   bamax/6 = 1.1875, the tie between 0x79 and 0x7A: the even 0x7A (1.25); inv = fl(0.8);
 *                    7.125 -> 5.7 -> 6 (7); 3.75 -> 3.0000000447 -> 3 (5)
 * G {0, -0}:         bamax 0: s = 0x00; 0 -> 0x0, -0 -> 0x8
 * H {-6, 3}:         s = 1; codes 0xF, 5 */
static void tensor_1level(float *x)
{
    memset(x, 0, 128 * sizeof *x);
    x[0] = 6;
    x[16] = 1e6f, x[17] = 344064.0f;
    x[32] = ldexpf(6, -17), x[33] = ldexpf(1, -17);
    x[48] = ldexpf(3, -17);
    x[64] = 6.375f, x[65] = 1.0625f;
    x[80] = 7.125f, x[81] = 3.75f;
    x[97] = -0.0f;
    x[112] = -6, x[113] = 3;
}

static const uint8_t one_scale[8] = {0x78, 0xFE, 0x01, 0x00, 0x78, 0x7A, 0x00, 0x78};
static const uint8_t one_data_head[8][2] = {{0x07, 0}, {0x57, 0}, {0x27, 0}, {0x07, 0},
                                            {0x27, 0}, {0x57, 0}, {0x80, 0}, {0x5F, 0}};

START_TEST(ue5m3_1level_blocks)
{
    float x[128], d[128];
    tensor_1level(x);
    nvfp4_quantized q;
    ck_assert_int_eq(quantize("te-ue5m3-1level", x, 1, 128, false, &q), NVFP4_OK);
    expect_bytes("scales", q.row.scale, one_scale, 8);
    for (size_t b = 0; b < 8; b++) {
        expect_bytes("data", q.row.data + 8 * b, one_data_head[b], 2);
        for (size_t k = 2; k < 8; k++) ck_assert_uint_eq(q.row.data[8 * b + k], 0);
    }
    /* dequant = fp4(q) * ((s * 688128) * fl(1/688128)) = fp4(q) * s here */
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_float_eq(d[0], 6.0f);
    ck_assert_float_eq(d[16], 6.0f * 114688.0f);
    ck_assert_float_eq(d[17], 3.0f * 114688.0f);
    ck_assert_float_eq(d[32], ldexpf(6, -17));
    ck_assert_float_eq(d[33], ldexpf(1, -17));
    ck_assert_float_eq(d[48], 0.0f); /* code 7 times scale 0 */
    ck_assert_float_eq(d[80], 7.5f);  /* 6 * 1.25 */
    ck_assert_float_eq(d[81], 3.75f); /* 3 * 1.25 */
    ck_assert_float_eq(d[112], -6.0f);
    nvfp4_quantized_free(&q);
}
END_TEST

/* The dequantizer's unit factor (s * 688128) * fl(1/688128) equals s for
 * all 255 finite UE5M3 scales, so te-ue5m3-1level dequantizes to fp4 * s. */
START_TEST(ue5m3_unit_dequant_factor_is_exact)
{
    const float inv = 1.0f / 688128.0f;
    for (unsigned c = 0; c < 255; c++) {
        float s = nvfp4_ue5m3_to_f32((uint8_t)c);
        float t = s * 688128.0f;
        ck_assert_float_eq(t * inv, s);
    }
}
END_TEST

/* te-ue5m3, 1 x 48, three blocks; amax 688128 makes S_enc = 688128/688128 = 1:
 * A {688128}:     v = 688128 * fl(1/6) = 114688.0034 -> fp32 114688 -> 0xFE; inv = fl(1/114688); code 7
 * B {1, 0.5}:     v = fl(1/6) = 0.16666667: between 0x62 (0.15625) and 0x63 (0.171875), nearer 0x63;
 *                 inv = fl(1/0.171875) = 5.8181820; 1 -> 5.8 -> 6 (7); 0.5 -> 2.9 -> 3 (5)
 * C {6*2^-17}:    a block 2^-31 times the tensor amax keeps scale 0x01 (te's E4M3 gives 0x00 and
 *                 dequantizes the block to 0); code 7 */
START_TEST(ue5m3_two_level_blocks)
{
    float x[48] = {0}, d[48];
    x[0] = 688128.0f;
    x[16] = 1.0f, x[17] = 0.5f;
    x[32] = ldexpf(6, -17);
    nvfp4_quantized q, t;
    ck_assert_int_eq(quantize("te-ue5m3", x, 1, 48, false, &q), NVFP4_OK);
    ck_assert_float_eq(q.row.amax, 688128.0f);
    static const uint8_t scale[3] = {0xFE, 0x63, 0x01};
    expect_bytes("scales", q.row.scale, scale, 3);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[8], 0x57);
    ck_assert_uint_eq(q.row.data[16], 0x07);
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_float_eq(d[0], 688128.0f);
    ck_assert_float_eq(d[16], 6.0f * 0.171875f);
    ck_assert_float_eq(d[32], ldexpf(6, -17));
    /* the E4M3 chain on the same tensor: S_enc = 2688/688128 = 2^-8 * 1, block C's
     * v = 6*2^-17 * 2^-8/6 = 2^-25, far below E4M3's 2^-10 -> scale 0 */
    ck_assert_int_eq(quantize("te", x, 1, 48, false, &t), NVFP4_OK);
    ck_assert_uint_eq(t.row.scale[2], 0x00);
    nvfp4_quantized_free(&t);
    nvfp4_quantized_free(&q);
}
END_TEST

/* A tensor whose amax is tiny (1e-30) and one whose amax is huge (3e38):
 * S_enc = 688128/amax puts the largest block at 114688 (0xFE) either way;
 * a zero tensor gives S_enc = 1 and scale 0. Columnwise equals rowwise
 * for a symmetric layout (one value per block, on the diagonal). */
START_TEST(ue5m3_tiny_huge_zero_amax)
{
    const float amaxes[3] = {1e-30f, 3e38f, 0.0f};
    const uint8_t want[3] = {0xFE, 0xFE, 0x00};
    for (int k = 0; k < 3; k++) {
        float x[16 * 16] = {0};
        for (int i = 0; i < 16; i++) x[i * 16 + i] = amaxes[k];
        nvfp4_quantized q;
        ck_assert_int_eq(quantize("te-ue5m3", x, 16, 16, true, &q), NVFP4_OK);
        for (int i = 0; i < 16; i++) {
            ck_assert_msg(q.row.scale[i] == want[k], "amax %g row %d: 0x%02x", (double)amaxes[k], i, q.row.scale[i]);
            ck_assert_uint_eq(q.col.scale[i], want[k]);
        }
        nvfp4_quantized_free(&q);
    }
}
END_TEST

/* The recipes are found by name and report the UE5M3 scale format. */
START_TEST(ue5m3_recipes_registered)
{
    const nvfp4_recipe_info *a = nvfp4_recipe_get_info(nvfp4_recipe_find("te-ue5m3"));
    const nvfp4_recipe_info *b = nvfp4_recipe_get_info(nvfp4_recipe_find("te-ue5m3-1level"));
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(a->scale_format, NVFP4_SCALEFMT_UE5M3);
    ck_assert_int_eq(b->scale_format, NVFP4_SCALEFMT_UE5M3);
    ck_assert(a->has_global_amax);
    ck_assert(!b->has_global_amax);
    ck_assert_str_eq(nvfp4_scale_format_name(a->scale_format), "ue5m3");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("recipes_ue5m3");
    TCase *tc = tcase_create("hand");
    tcase_add_test(tc, ue5m3_1level_blocks);
    tcase_add_test(tc, ue5m3_unit_dequant_factor_is_exact);
    tcase_add_test(tc, ue5m3_two_level_blocks);
    tcase_add_test(tc, ue5m3_tiny_huge_zero_amax);
    tcase_add_test(tc, ue5m3_recipes_registered);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
