/*
 * check_recipes_production.c - the rules of the recipes `compressed-tensors`,
 * `vllm` and `flashinfer` (src/core/recipe.h) on hand-worked values: torch's
 * global scale fl(fl(1/amax) * 2688) and its three guards, vLLM's block
 * scale S_enc * (bamax * fl(1/6)) against te's bamax * (S_enc * fl(1/6)) on
 * an E4M3 tie, compressed-tensors' zero scale 0.125 and x / (s / S_enc),
 * vLLM's 1/0 -> fl(1/1e8), FlashInfer's NaN global scale, `ggml-mxfp4`'s
 * floorf(log2f(amax)) exponent, `mslk`'s (bamax / 6) * S_enc and `fbgemm`'s 0 / 0 codes. The byte-for-byte comparisons with the packages
 * themselves are tests/py/test_production_oracles.py, test_ggml_mxfp4_oracle.py
 * and test_triton_oracles.py.
 */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "nvfp4.h"
#include "nvfp4/quant.h"
#include "recipes/recipe.h"

static float s_enc_of(const char *recipe, float amax)
{
    return nvfp4_core_global_from_amax(nvfp4_recipe_core(nvfp4_recipe_find(recipe)), amax).s_enc;
}

static void quantize_row(const char *recipe, const float *x, size_t cols, nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, cols, &o, q, NULL), NVFP4_OK);
}

START_TEST(torch_global_scale)
{
    /* fl(1/7) = 0x3E124925; times 2688 = 384.0000306 rounds to 384 + 2^-15,
     * one ulp above te's correctly rounded 2688/7 = 384 */
    const float up = 0x1.800002p+8f;
    ck_assert_float_eq(s_enc_of("te", 7.0f), 384.0f);
    ck_assert_float_eq(s_enc_of("vllm", 7.0f), up);
    ck_assert_float_eq(s_enc_of("flashinfer", 7.0f), up);
    ck_assert_float_eq(s_enc_of("compressed-tensors", 7.0f), up);
    /* the guards: vLLM none (1/0 = Inf), FlashInfer FLT_MAX for amax 0,
     * compressed-tensors 2^-126 floor then NaN/Inf -> 1; amax Inf gives 0 in all */
    ck_assert(isinf(s_enc_of("vllm", 0.0f)));
    ck_assert_float_eq(s_enc_of("flashinfer", 0.0f), 0x1.fffffep127f);
    ck_assert_float_eq(s_enc_of("compressed-tensors", 0.0f), 1.0f);
    ck_assert_float_eq(s_enc_of("compressed-tensors", 1e-37f), 1.0f); /* 2688 * 2^126 overflows */
    ck_assert_float_eq(s_enc_of("compressed-tensors", NAN), 1.0f);
    ck_assert(isnan(s_enc_of("flashinfer", NAN)));
    ck_assert_float_eq(s_enc_of("compressed-tensors", INFINITY), 0.0f);
    ck_assert_float_eq(s_enc_of("vllm", INFINITY), 0.0f);
    /* 7.9e-36 is above 2688/FLT_MAX: finite, not replaced */
    ck_assert(s_enc_of("compressed-tensors", 8e-36f) > 3e38f);
}
END_TEST

START_TEST(vllm_scale_product_order)
{
    /* amax a = 0x1.7baa4ap+6: S_enc = 0x1.c51d72p+4. Block 1 amax b =
     * 0x1.cd05a4p+4: vLLM's S_enc * (b * fl(1/6)) is exactly 136, the E4M3
     * tie of 128 and 144, so RNE gives 128 (0x70); te's and FlashInfer's
     * b * (S_enc * fl(1/6)) is 136.00002, so 144 (0x71). */
    float x[32] = {0};
    x[0] = 0x1.7baa4ap+6f;
    x[16] = 0x1.cd05a4p+4f;
    nvfp4_quantized q;
    quantize_row("vllm", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x70);
    nvfp4_quantized_free(&q);
    quantize_row("flashinfer", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x71);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(compressed_tensors_zero_scale)
{
    /* amax 3: S_enc = fl(fl(1/3) * 2688) = 896. Block 0 (0, -0.0, zeros):
     * scale 0 -> 0.125 (0x20), codes 0x0 (-0.0 too). Block 1: 896 * (3/6) =
     * 448 (0x7E); x / (448/896): 3 -> 6 (0x7), -0.1 -> -0.2 rounds to -0
     * (0x8); te would write 0x80 for the -0.0. */
    float x[32] = {0};
    x[1] = -0.0f;
    x[16] = 3.0f;
    x[17] = -0.1f;
    nvfp4_quantized q;
    quantize_row("compressed-tensors", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x20);
    ck_assert_uint_eq(q.row.scale[1], 0x7E);
    ck_assert_uint_eq(q.row.data[0], 0x00);
    ck_assert_uint_eq(q.row.data[8], 0x87);
    nvfp4_quantized_free(&q);
    quantize_row("te", x, 32, &q);
    ck_assert_uint_eq(q.row.data[0], 0x80);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(compressed_tensors_bf16_rules)
{
    /* bf16 weights (llm-compressor on a bf16 model). amax 0.30078125:
     * S_enc = bf16(bf16(1/amax) * 2688) = 8960 (fp32 recipe: 8936.727).
     * Block 1, amax 0.0126953125 (bf16 0x3C50): bf16(bamax / 6) =
     * 0.0021209716796875 and 8960 * that = 19.0039, above the E4M3 midpoint
     * 19 between 18 (0x59) and 20 (0x5A); the fp32 recipe's
     * 8936.727 * (bamax / 6) = 18.909 gives 0x59. With a NaN in block 1 the
     * amax is NaN (S_enc 1) and the block's scale NaN: its quotients are NaN,
     * 0x0 in the fp32 recipe, 0x8 in the bf16 one (torch's bf16 NaN 0xFFFF
     * has its sign bit set). */
    float x[32] = {0};
    x[0] = 0.30078125f;
    x[16] = 0.0126953125f;
    nvfp4_quantized q;
    quantize_row("compressed-tensors-bf16", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.scale[1], 0x5A);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[8], 0x07);
    nvfp4_quantized_free(&q);
    quantize_row("compressed-tensors", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x59);
    nvfp4_quantized_free(&q);
    x[17] = NAN;
    quantize_row("compressed-tensors-bf16", x, 32, &q);
    ck_assert_uint_eq(q.row.data[8], 0x88);
    nvfp4_quantized_free(&q);
    quantize_row("compressed-tensors", x, 32, &q);
    ck_assert_uint_eq(q.row.data[8], 0x00);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(compressed_tensors_fp16_rules)
{
    /* fp16 weights. amax 0.05 (fp16 0.0500030517578125): fl(1/amax) =
     * 19.9988, fp16 20; 20 * 2688 = 53760, an fp16 value: S_enc 53760
     * (fp32 recipe: 2688 / amax = 53756.7). Block 0's scale:
     * fp16(bamax / 6) = 1092 * 2^-17 = 0.008331298828125, times 53760 =
     * 447.89, E4M3 448 (0x7E). amax 0.03 (fp16 0.0300140380859375):
     * fp16(1/amax) = 33.3125, times 2688 = 89544 > 65504: +Inf, so S_enc =
     * 1; the scale is E4M3(fp16(bamax / 6)) = E4M3(0.005001068) = 3 * 2^-9
     * (0x03) where the fp32 recipe gives 0x7E; the element 0.03 / (0.005859375
     * / 1) = 5.12 rounds to 6 (0x7). A NaN quotient is 0x0 (torch's fp16 NaN
     * has no sign bit). */
    float x[32] = {0};
    x[0] = 0.0500030517578125f;
    nvfp4_quantized q;
    quantize_row("compressed-tensors-fp16", x, 32, &q);
    ck_assert_float_eq(q.row.amax, 0.0500030517578125f);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    nvfp4_quantized_free(&q);
    const nvfp4_core_recipe *core = &nvfp4_recipe_find("compressed-tensors-fp16")->core;
    ck_assert_float_eq(nvfp4_core_global_from_amax(core, 0.0500030517578125f).s_enc, 53760.0f);
    x[0] = 0.0300140380859375f;
    nvfp4_core_global g = nvfp4_core_global_from_amax(core, x[0]);
    ck_assert_float_eq(g.s_enc, 1.0f);
    quantize_row("compressed-tensors-fp16", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x03);
    ck_assert_uint_eq(q.row.data[0], 0x07);
    nvfp4_quantized_free(&q);
    quantize_row("compressed-tensors", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    nvfp4_quantized_free(&q);
    x[16] = 0.01f;
    x[17] = NAN;
    quantize_row("compressed-tensors-fp16", x, 32, &q);
    ck_assert_uint_eq(q.row.data[8], 0x00);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(vllm_zero_scale_factor)
{
    /* amax 2688; block 1 of +-1e-4: S_enc * (1e-4 * fl(1/6)) is about
     * 1.7e-5, below half the smallest E4M3 subnormal: scale 0x00. vLLM's
     * factor r(0 * r(S_enc)) = fl(1/1e8), so 1e-4 -> 1e-12 -> 0x0 and
     * -1e-4 -> 0x8; te's factor FLT_MAX gives 0x7 and 0xF. */
    float x[32] = {0};
    x[0] = 2688.0f;
    for (int k = 16; k < 32; k++) x[k] = k & 1 ? -1e-4f : 1e-4f;
    nvfp4_quantized q;
    quantize_row("vllm", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x00);
    ck_assert_uint_eq(q.row.data[8], 0x80);
    nvfp4_quantized_free(&q);
    quantize_row("te", x, 32, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x00);
    ck_assert_uint_eq(q.row.data[8], 0xF7);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(flashinfer_nan_global)
{
    /* One NaN element: amax NaN, S_enc NaN, every scale NaN (0x7F) and every
     * factor fmin(NaN, FLT_MAX) = FLT_MAX: NaN -> 0x7, 1 -> Inf -> 0x7,
     * 0.25 -> 0x7, 0 -> 0x0. te ignores the NaN in its amax instead. */
    float x[32] = {0};
    x[0] = NAN;
    x[1] = 1.0f;
    x[16] = 0.25f;
    nvfp4_quantized q;
    quantize_row("flashinfer", x, 32, &q);
    ck_assert(isnan(q.row.amax));
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.scale[1], 0x7F);
    ck_assert_uint_eq(q.row.data[0], 0x77);
    ck_assert_uint_eq(q.row.data[8], 0x07);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(ggml_mxfp4_log2_scale)
{
    /* One ulp below 256: log2 = 8 - 8.6e-8 rounds to 8 in fp32 (half the
     * spacing below 8 is 2.4e-7), so ggml's e = 8 - 2 + 127 = 133 (0x85)
     * where the exponent field (mxfp4-floor) gives 132 (0x84). */
    float x[64] = {0};
    x[0] = nextafterf(256.0f, 0.0f);
    /* block 1: a NaN (skipped by ggml's amax) and 3: e = 1 - 2 + 127 = 126,
     * 3 / 2^-1 = 6 (0x7), NaN -> 0x0; -0.0 -> 0x0 (k = 0 is tried first) */
    x[32] = NAN;
    x[33] = 3.0f;
    x[34] = -0.0f;
    nvfp4_quantized q;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "ggml-mxfp4";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 64, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 133);
    ck_assert_uint_eq(q.row.scale[1], 126);
    ck_assert_uint_eq(q.row.data[16], 0x70);
    ck_assert_uint_eq(q.row.data[17], 0x00);
    nvfp4_quantized_free(&q);
    o.recipe = "mxfp4-floor";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 64, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[0], 132);
    nvfp4_quantized_free(&q);
    /* zero block: 0; below 2^-125 (ggml's uint8_t conversion is undefined
     * there) the recipe clamps to 0; FLT_MAX: log2 = 128 - 2^-24/ln2 rounds to
     * 128, so 128 - 2 + 127 = 253; +Inf (undefined in ggml) is clamped to 254 */
    const nvfp4_core_recipe *r = nvfp4_recipe_core(nvfp4_recipe_find("ggml-mxfp4"));
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 0.0f);
    ck_assert_uint_eq(nvfp4_core_block_scale(r, &g, 0.0f), 0);
    ck_assert_uint_eq(nvfp4_core_block_scale(r, &g, 0x1p-125f), 0);
    ck_assert_uint_eq(nvfp4_core_block_scale(r, &g, 0x1p-124f), 1);
    ck_assert_uint_eq(nvfp4_core_block_scale(r, &g, 0x1.fffffep127f), 253);
    ck_assert_uint_eq(nvfp4_core_block_scale(r, &g, INFINITY), 254);
}
END_TEST

/* fbgemm (fbgemm-gpu-genai 1.9.0 Triton NVFP4): te's chain with torch's
 * unguarded global scale, (bamax / 6) * gs and one divisor s / gs, no
 * clamp. Row 1 (amax 1: gs = fl(fl(1/1) * 2688) = 2688): block 0 is all
 * zeros, so s = 0 and s / gs = 0: every element is 0 / 0 = NaN -> 0x7 (te:
 * 0x0, compressed-tensors: scale 0x20, codes 0x0); block 1 holds 1.0 (s =
 * e4m3(2688 / 6 = 448) = 0x7E, s / gs = fl(1/6), y = 1 / fl(1/6) = 6, 0x7)
 * and -0.25 (y = -1.5, 0xB). Row 2 (amax 2^-140: 1/amax
 * overflows, gs = +Inf): s = e4m3((2^-140 / 6) * Inf) = 448 (0x7E), s / gs
 * = 0, so 2^-140 / 0 = +Inf -> 6 (0x7) and 0 / 0 -> 0x7. */
START_TEST(fbgemm_rules)
{
    float x[32] = {0};
    x[16] = 1.0f;
    x[17] = -0.25f;
    nvfp4_quantized q;
    quantize_row("fbgemm", x, 32, &q);
    ck_assert_float_eq(s_enc_of("fbgemm", 1.0f), 2688.0f);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.scale[1], 0x7E);
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(q.row.data[i], 0x77);
    ck_assert_uint_eq(q.row.data[8], 0xB7);
    ck_assert_uint_eq(q.row.data[9], 0x00);
    nvfp4_quantized_free(&q);
    quantize_row("te", x, 32, &q);
    ck_assert_uint_eq(q.row.data[0], 0x00);
    nvfp4_quantized_free(&q);

    float t[16] = {0};
    t[3] = 0x1p-140f;
    ck_assert(isinf(s_enc_of("fbgemm", 0x1p-140f)));
    quantize_row("fbgemm", t, 16, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(q.row.data[i], 0x77);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(mslk_rules)
{
    /* amax 0x1.c0083ap+5: S_enc = 1/(amax/2688) = 0x1.7ff8f2p+5, here equal to
     * te's. Block 1 amax 0x1.1005p+1: mslk's (bamax/6) * S_enc = 17.000002 ->
     * 18 (0x59); te's bamax * (S_enc * fl(1/6)) = 17, the E4M3 tie of 16 and
     * 18, -> 16 (0x58). Block 2 (zeros): scale 0x00 and, with the recipe's
     * FLT_MAX clamp of S_enc / 0, codes 0x0 (mslk itself: +Inf, 0 * Inf =
     * NaN -> 0x7, its defect). */
    float x[48] = {0};
    x[0] = 0x1.c0083ap+5f;
    x[16] = 0x1.1005p+1f;
    nvfp4_quantized q;
    quantize_row("mslk", x, 48, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x59);
    ck_assert_uint_eq(q.row.scale[2], 0x00);
    for (int k = 16; k < 24; k++) ck_assert_uint_eq(q.row.data[k], 0x00);
    nvfp4_quantized_free(&q);
    quantize_row("te", x, 48, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x58);
    nvfp4_quantized_free(&q);
    ck_assert_float_eq(s_enc_of("mslk", 0x1.c0083ap+5f), 0x1.7ff8f2p+5f);
    ck_assert(isinf(s_enc_of("mslk", 0.0f))); /* 1 / (0 / 2688) */
    const nvfp4_core_recipe *r = nvfp4_recipe_core(nvfp4_recipe_find("mslk"));
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, 1.0f);
    ck_assert_float_eq(nvfp4_core_block_prepare(r, &g, 0x00).factor, 0x1.fffffep127f);
}
END_TEST

static Suite *production_suite(void)
{
    Suite *s = suite_create("recipes_production");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, torch_global_scale);
    tcase_add_test(tc, vllm_scale_product_order);
    tcase_add_test(tc, compressed_tensors_zero_scale);
    tcase_add_test(tc, compressed_tensors_bf16_rules);
    tcase_add_test(tc, compressed_tensors_fp16_rules);
    tcase_add_test(tc, vllm_zero_scale_factor);
    tcase_add_test(tc, flashinfer_nan_global);
    tcase_add_test(tc, ggml_mxfp4_log2_scale);
    tcase_add_test(tc, mslk_rules);
    tcase_add_test(tc, fbgemm_rules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(production_suite());
}
