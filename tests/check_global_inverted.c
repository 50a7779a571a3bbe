/* check_global_inverted.c - the option global_scale_inverted (FlashInfer's
 * is_global_scale_inversed used as meant: the kernel is handed fl(1/S_enc)
 * and inverts it; docs/semantics.md, "Scale layouts"), hand-computed.
 *
 * Tensor amax 6: S_enc = 2688/6 = 448 exactly (te, and flashinfer's
 * fl(fl(1/6) * 2688)), handed over as fl(1/448) and inverted again:
 * S_enc' = 447.99997 (0x43DFFFFF). A block of amax 0.015904017 (0x3C824A9E)
 * has the scale value fl(0.015904017 * fl(448 * fl(1/6))) = 1.1875 exactly,
 * the E4M3 tie between 1.125 (0x39) and 1.25 (0x3A), which goes to the even
 * 0x3A; with S_enc' it is 1.1874999 and rounds to 0x39. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "nvfp4/trace.h"

#define BAMAX 0.015904017f

static void tensor(float x[32])
{
    memset(x, 0, 32 * sizeof(float));
    x[0] = 6.0f;   /* block 0: the tensor amax, scale 448 (0x7E) either way */
    x[16] = BAMAX; /* block 1: the scale tie */
}

static void quantize(const char *recipe, bool inverted, nvfp4_quantized *q)
{
    static float x[32];
    tensor(x);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.global_scale_inverted = inverted;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, q, &err), NVFP4_OK);
}

START_TEST(the_handed_over_scale_is_one_ulp_below)
{
    ck_assert_float_eq(BAMAX * (448.0f * (1.0f / 6.0f)), 1.1875f);
    float handed = 1.0f / 448.0f, back = 1.0f / handed;
    uint32_t bits;
    memcpy(&bits, &back, sizeof bits);
    ck_assert_uint_eq(bits, 0x43DFFFFFu); /* 447.99997 */
    ck_assert_float_eq(1.0f / back, 1.0f / 448.0f); /* its reciprocal is 448's */
}
END_TEST

START_TEST(te_and_flashinfer_scale_bytes_change_at_the_tie)
{
    static const char *const recipes[] = {"te", "flashinfer"};
    for (size_t i = 0; i < 2; i++) {
        nvfp4_quantized plain, inv;
        quantize(recipes[i], false, &plain);
        quantize(recipes[i], true, &inv);
        ck_assert_uint_eq(plain.row.scale[0], 0x7E);
        ck_assert_uint_eq(inv.row.scale[0], 0x7E);
        ck_assert_uint_eq(plain.row.scale[1], 0x3A); /* 1.25: the tie to even */
        ck_assert_uint_eq(inv.row.scale[1], 0x39);   /* 1.125 */
        ck_assert_float_eq(plain.row.amax, 6.0f);
        ck_assert_float_eq(inv.row.amax, 6.0f);
        ck_assert(inv.opts.global_scale_inverted);
        /* dequantized, block 0's 6: te multiplies by s * S_dec, and S_dec' = fl(1/447.99997) = fl(1/448):
         * 6 either way; flashinfer divides s by S_enc': 6 * fl(448 / 447.99997) = 6 * 1.00000012 = 6.00000095 */
        float d0[32], d1[32], back = 1.0f / (1.0f / 448.0f);
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_dequantize(&plain, false, d0, &err), NVFP4_OK);
        ck_assert_int_eq(nvfp4_dequantize(&inv, false, d1, &err), NVFP4_OK);
        ck_assert_float_eq(d0[0], 6.0f);
        ck_assert_float_eq(d1[0], i == 0 ? 6.0f : 6.0f * (448.0f / back));
        if (i == 1) ck_assert_float_eq(d1[0], 0x1.800004p+2f); /* two ulps above 6 */
        nvfp4_quantized_free(&plain);
        nvfp4_quantized_free(&inv);
    }
}
END_TEST

START_TEST(recipes_without_an_encode_scale_refuse_it)
{
    static float x[32];
    tensor(x);
    static const char *const refused[] = {"torchao", "modelopt", "mxfp4-rceil", "mslk"};
    for (size_t i = 0; i < 4; i++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = refused[i];
        o.global_scale_inverted = true;
        nvfp4_quantized q;
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.message, refused[i]));
        ck_assert_ptr_nonnull(strstr(err.message, "no encode global scale"));
    }
}
END_TEST

START_TEST(the_bundle_records_it_only_when_set)
{
    static float x[32];
    tensor(x);
    for (int inverted = 0; inverted < 2; inverted++) {
        nvfp4_quantized q, back;
        quantize("flashinfer", inverted, &q);
        nvfp4_tensor_set s;
        nvfp4_tset_init(&s);
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_bundle_build(&q, x, NVFP4_DTYPE_F32, 1, 32, &s, &err), NVFP4_OK);
        const char *v = nvfp4_tset_meta_get(&s, "global_scale_inverted");
        if (inverted) ck_assert_str_eq(v, "true");
        else ck_assert_ptr_null(v); /* bundles without the option keep their bytes */
        nvfp4_tset_remove(&s, "scale");
        ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "b", &back, &err), NVFP4_OK);
        ck_assert_int_eq(back.opts.global_scale_inverted, inverted);
        ck_assert_uint_eq(back.row.scale[1], inverted ? 0x39 : 0x3A);
        nvfp4_quantized_free(&back);
        /* a value that is not a flag is an error naming the file */
        ck_assert_int_eq(nvfp4_tset_meta_set(&s, "global_scale_inverted", "yes", &err), NVFP4_OK);
        ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "b.safetensors", &back, &err), NVFP4_EFORMAT);
        ck_assert_ptr_nonnull(strstr(err.message, "b.safetensors"));
        nvfp4_tset_free(&s);
        nvfp4_quantized_free(&q);
    }
}
END_TEST

START_TEST(trace_refuses_it)
{
    static float x[32];
    tensor(x);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.global_scale_inverted = true;
    nvfp4_trace_block t;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_trace(x, NVFP4_DTYPE_F32, 1, 32, &o, 0, 0, &t, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "global_scale_inverted"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("global_inverted");
    TCase *tc = tcase_create("global_inverted");
    tcase_add_test(tc, the_handed_over_scale_is_one_ulp_below);
    tcase_add_test(tc, te_and_flashinfer_scale_bytes_change_at_the_tie);
    tcase_add_test(tc, recipes_without_an_encode_scale_refuse_it);
    tcase_add_test(tc, the_bundle_records_it_only_when_set);
    tcase_add_test(tc, trace_refuses_it);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
