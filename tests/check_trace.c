/* check_trace.c - nvfp4_trace (nvfp4/trace.h): for every recipe, rounding
 * and block shape, the traced scale byte, codes, amax and dequantized
 * values of every block are nvfp4_quantize's and nvfp4_dequantize's; the
 * values of one known block (the demo's); the random bytes are the SR
 * contract's; the scaled values of a whole orientation; the errors. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <string.h>

#include "nvfp4/philox.h"
#include "nvfp4/quant.h"
#include "nvfp4/trace.h"

/* 32 x 72: not a multiple of 32 columns (1x32 blocks pad), 16x16 tiles
 * whole in the rows; values over several magnitudes, a few zeros and -0. */
enum { TR = 32, TC = 72 };
static float tensor[TR * TC];

static void make_tensor(void)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < TR * TC; i++) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        uint64_t h = s * 0x2545F4914F6CDD1Dull;
        float u = (float)(h >> 40) * 0x1p-24f - 0.5f;
        float v = u * (float)(1u << ((h >> 8) & 7u));
        if ((h & 0x3Fu) == 0) v = 0.0f;
        if ((h & 0x3Fu) == 1) v = -0.0f;
        tensor[i] = v;
    }
}

static uint8_t code_at(const nvfp4_qtensor *t, bool e4m3, size_t r, size_t c)
{
    size_t j = r * t->pcols + c;
    return e4m3 ? t->data[j] : (uint8_t)((t->data[j / 2] >> (4 * (j & 1u))) & 15u);
}

static uint32_t bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Every block of the tensor traced and compared with the quantizer. */
static void compare_all_blocks(const char *recipe, nvfp4_block block, nvfp4_rounding rnd)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = block;
    o.rounding = rnd;
    o.seed = 77;
    o.offset = 5;
    o.pad = true;
    nvfp4_quantized q;
    nvfp4_error err;
    ck_assert_msg(nvfp4_quantize(tensor, NVFP4_DTYPE_F32, TR, TC, &o, &q, &err) == NVFP4_OK, "%s", err.message);
    static float deq[TR * TC];
    ck_assert(nvfp4_dequantize(&q, false, deq, &err) == NVFP4_OK);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q.recipe);
    bool e4m3 = info->elem == NVFP4_ELEM_E4M3;
    const nvfp4_qtensor *t = &q.row;
    for (size_t r = 0; r < TR; r++)
        for (size_t b = 0; b < t->scale_cols; b++) {
            nvfp4_trace_block tr;
            ck_assert_msg(nvfp4_trace(tensor, NVFP4_DTYPE_F32, TR, TC, &o, r, b, &tr, &err) == NVFP4_OK, "%s",
                          err.message);
            ck_assert_msg(tr.scale == t->scale[r * t->scale_cols + b], "%s %s %s row %zu block %zu: scale %02X, quantizer %02X",
                          recipe, nvfp4_block_name(q.opts.block), nvfp4_rounding_name(rnd), r, b, tr.scale,
                          t->scale[r * t->scale_cols + b]);
            /* row-scaled recipes (te-rowscaled): the traced row's own amax */
            if (info->has_global_amax) ck_assert_uint_eq(bits(tr.amax), bits(t->row_amax ? t->row_amax[r] : t->amax));
            ck_assert_uint_eq(tr.block, q.opts.block);
            for (size_t i = 0; i < tr.block_len; i++) {
                size_t c = b * tr.block_len + i;
                ck_assert_msg(tr.elem[i].code == code_at(t, e4m3, r, c), "%s %s %s (%zu, %zu): code %X, quantizer %X",
                              recipe, nvfp4_block_name(q.opts.block), nvfp4_rounding_name(rnd), r, c, tr.elem[i].code,
                              code_at(t, e4m3, r, c));
                if (c < TC) ck_assert_uint_eq(bits(tr.elem[i].dequant), bits(deq[r * TC + c]));
            }
        }
    nvfp4_quantized_free(&q);
}

START_TEST(every_recipe_matches_the_quantizer)
{
    make_tensor();
    for (size_t k = 0; k < nvfp4_recipe_count(); k++) {
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_at(k));
        compare_all_blocks(info->name, NVFP4_BLOCK_DEFAULT, NVFP4_RN);
        if (info->supports_sr) compare_all_blocks(info->name, NVFP4_BLOCK_DEFAULT, NVFP4_SR);
    }
}
END_TEST

START_TEST(other_blocks_match_the_quantizer)
{
    make_tensor();
    compare_all_blocks("te", NVFP4_BLOCK_16X16, NVFP4_RN);
    compare_all_blocks("te", NVFP4_BLOCK_16X16, NVFP4_SR);
    compare_all_blocks("te", NVFP4_BLOCK_1X32, NVFP4_SR);
    compare_all_blocks("torchao", NVFP4_BLOCK_16X16, NVFP4_RN);
}
END_TEST

/* The demo's block: amax 12 gives S_enc = 224 and the scale byte 448
 * (0x7E), so the encode factor is exactly 0.5; 5, 1.5 and 7 land on ties. */
static const float demo[16] = {0.8f, -1.3f, 5.0f, 2.2f, -0.0f, 12.0f, 0.1f, -3.1f,
                               1.5f, 7.0f,  -0.3f, 4.4f, 2.0f, -6.9f, 0.55f, 3.0f};

START_TEST(known_te_block)
{
    static const uint8_t codes[16] = {0x1, 0x9, 0x4, 0x2, 0x8, 0x7, 0x0, 0xB,
                                      0x2, 0x6, 0x8, 0x4, 0x2, 0xD, 0x1, 0x3};
    nvfp4_trace_block t;
    nvfp4_error err;
    ck_assert(nvfp4_trace(demo, NVFP4_DTYPE_F32, 1, 16, NULL, 0, 0, &t, &err) == NVFP4_OK);
    ck_assert_str_eq(nvfp4_recipe_get_info(t.recipe)->name, "te");
    ck_assert_uint_eq(t.block, NVFP4_BLOCK_1X16);
    ck_assert_uint_eq(t.block_len, 16);
    ck_assert_uint_eq(t.global_rule, NVFP4_TRACE_GLOBAL_ENCODE);
    ck_assert(t.amax == 12.0f && t.block_amax == 12.0f);
    ck_assert(t.s_enc == 224.0f);
    ck_assert(t.s_dec == 1.0f / 224.0f);
    ck_assert_uint_eq(t.scale, 0x7E);
    ck_assert(t.scale_value == 448.0f);
    ck_assert(t.factor == 0.5f);
    ck_assert(t.dequant_scale == (448.0f * 12.0f) * 0x1.861862p-12f);
    ck_assert(t.scaled_then_rounded);
    for (size_t i = 0; i < 16; i++) {
        ck_assert_msg(t.elem[i].code == codes[i], "element %zu: code %X, want %X", i, t.elem[i].code, codes[i]);
        ck_assert(t.elem[i].scaled == demo[i] * 0.5f);
        ck_assert(t.elem[i].value == nvfp4_e2m1_to_f32(codes[i]));
        ck_assert(t.elem[i].dequant == nvfp4_e2m1_to_f32(codes[i]) * t.dequant_scale);
        ck_assert_uint_eq(t.elem[i].rbits, 0);
        ck_assert_msg(t.elem[i].tie == (i == 2 || i == 8 || i == 9), "element %zu tie flag", i);
        ck_assert(!t.elem[i].saturates);
    }
}
END_TEST

START_TEST(sr_bytes_are_the_contract)
{
    make_tensor();
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rounding = NVFP4_SR;
    o.seed = 9;
    o.offset = 4;
    o.block = NVFP4_BLOCK_1X32;
    o.pad = true;
    nvfp4_trace_block t;
    ck_assert(nvfp4_trace(tensor, NVFP4_DTYPE_F32, TR, TC, &o, 3, 2, &t, NULL) == NVFP4_OK);
    ck_assert_uint_eq(t.sr_block, 3 * 3 + 2); /* 72 columns: 3 blocks of 32 per row */
    uint8_t lo[16], hi[16];
    nvfp4_sr_block_bytes(9, 4, t.sr_block, lo);
    nvfp4_sr_block_bytes(9, 5, t.sr_block, hi);
    for (size_t i = 0; i < 16; i++) {
        ck_assert_uint_eq(t.elem[i].rbits, lo[i]);
        ck_assert_uint_eq(t.elem[16 + i].rbits, hi[i]);
    }
    ck_assert_uint_eq(t.elem[31].col, 95); /* past the 72 columns: padding */
    ck_assert(t.elem[31].x == 0.0f);
}
END_TEST

START_TEST(scaled_values_of_an_orientation)
{
    make_tensor();
    nvfp4_quantized q;
    ck_assert(nvfp4_quantize(tensor, NVFP4_DTYPE_F32, TR, TC - 8, NULL, &q, NULL) == NVFP4_OK);
    static float y[TR * TC];
    static float x[TR * (TC - 8)];
    for (size_t r = 0; r < TR; r++) memcpy(x + r * (TC - 8), tensor + r * (TC - 8), (TC - 8) * sizeof *x);
    ck_assert(nvfp4_trace_scaled(q.recipe, q.row.amax, q.row.scale, TR, TC - 8, 16, x, y, NULL) == NVFP4_OK);
    for (size_t r = 0; r < TR; r += 7)
        for (size_t b = 0; b < (TC - 8) / 16; b++) {
            nvfp4_trace_block t;
            ck_assert(nvfp4_trace(x, NVFP4_DTYPE_F32, TR, TC - 8, NULL, r, b, &t, NULL) == NVFP4_OK);
            for (size_t i = 0; i < 16; i++) ck_assert_uint_eq(bits(t.elem[i].scaled), bits(y[r * (TC - 8) + b * 16 + i]));
        }
    nvfp4_error err;
    ck_assert(nvfp4_trace_scaled(nvfp4_recipe_find("exact"), 1.0f, q.row.scale, TR, TC - 8, 16, x, y, &err) ==
              NVFP4_EUNSUPPORTED);
    ck_assert(nvfp4_trace_scaled(q.recipe, 1.0f, q.row.scale, TR, TC - 8, 48, x, y, &err) == NVFP4_EINVAL);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(bf16_input_and_errors)
{
    uint16_t xb[16];
    for (size_t i = 0; i < 16; i++) xb[i] = nvfp4_bf16_from_f32(demo[i]);
    nvfp4_trace_block t;
    nvfp4_error err;
    ck_assert(nvfp4_trace(xb, NVFP4_DTYPE_BF16, 1, 16, NULL, 0, 0, &t, &err) == NVFP4_OK);
    ck_assert(t.elem[0].x == nvfp4_bf16_to_f32(xb[0]));
    ck_assert(nvfp4_trace(demo, NVFP4_DTYPE_F32, 1, 16, NULL, 1, 0, &t, &err) == NVFP4_EINVAL);
    ck_assert(nvfp4_trace(demo, NVFP4_DTYPE_F32, 1, 16, NULL, 0, 1, &t, &err) == NVFP4_EINVAL);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.columnwise = true;
    ck_assert(nvfp4_trace(demo, NVFP4_DTYPE_F32, 1, 16, &o, 0, 0, &t, &err) == NVFP4_EINVAL);
    nvfp4_quant_opts_init(&o);
    o.recipe = "no-such-recipe";
    ck_assert(nvfp4_trace(demo, NVFP4_DTYPE_F32, 1, 16, &o, 0, 0, &t, &err) == NVFP4_EINVAL);
    ck_assert(strstr(err.message, "no-such-recipe") != NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    tcase_add_test(tc, every_recipe_matches_the_quantizer);
    tcase_add_test(tc, other_blocks_match_the_quantizer);
    tcase_add_test(tc, known_te_block);
    tcase_add_test(tc, sr_bytes_are_the_contract);
    tcase_add_test(tc, scaled_values_of_an_orientation);
    tcase_add_test(tc, bf16_input_and_errors);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
