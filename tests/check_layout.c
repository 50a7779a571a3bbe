/* check_layout.c - the scale layouts of nvfp4/layout.h (docs/semantics.md,
 * "Scale layouts"): hand-computed offsets and padded shapes of each layout,
 * the inverse, the bundle's scale_swizzle metadata, and verify naming a
 * kernel whose scales are in another layout than the expected one. */
#include <check.h>
#include "support/check_main.h"
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "nvfp4/verify.h"

START_TEST(flashinfer_8x4_known_offsets)
{
    /* A 16 x 96 input has 16 x 6 scales: padded to 16 x 8, 2 tiles of 4 blocks per row of tiles.
     * (row 9, block 5): tile row 9/8 = 1 (64 bytes), tile column 5/4 = 1 (32), in-tile row 1 (4), block 1. */
    size_t pr, pc;
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_8X4, 16, 6, &pr, &pc), 128);
    ck_assert_uint_eq(pr, 16);
    ck_assert_uint_eq(pc, 8);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_8X4, 9, 5, 6), 101);
    /* the same scale in 128x4: tile column 1 (512), r % 32 = 9 (144), (r % 128) / 32 = 0, block 1 */
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_128X4, 9, 5, 6), 657);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_128X4, 16, 6, &pr, &pc), 1024);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_LINEAR, 9, 5, 6), 59);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_LINEAR, 16, 6, &pr, &pc), 96);
    /* 8x4 firsts: (0,3) -> 3, (1,0) -> 4 (row-major inside the tile), (0,4) -> 32 (next tile),
     * (8,0) -> 32 * 2 tiles per row of tiles */
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_8X4, 0, 3, 6), 3);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_8X4, 1, 0, 6), 4);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_8X4, 0, 4, 6), 32);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_8X4, 8, 0, 6), 64);
    /* padding: 3 x 5 scales -> 8 x 8 (rows to 8, blocks to 4); 1 x 1 -> one 32-byte tile */
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_8X4, 3, 5, &pr, &pc), 64);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_8X4, 1, 1, &pr, &pc), 32);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_8X4, SIZE_MAX / 2, SIZE_MAX / 2, &pr, &pc), 0);
}
END_TEST

START_TEST(kv_cache_v_known_offsets)
{
    /* 16 tokens x 6 blocks (head_dim 96) in the V layout of the NVFP4 KV cache: groups of 4 tokens
     * (24 bytes), block-major inside, the 4 tokens of a block adjacent. (token 9, block 5): group 2
     * (48), block 5 (20), token 9 % 4 = 1 -> 69; FlashInfer's (t//4)*4*S + s*4 + t%4 with S = 6. */
    size_t pr, pc;
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_KV_V, 9, 5, 6), 69);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_KV_V, 1, 0, 6), 1);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_KV_V, 0, 1, 6), 4);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_KV_V, 4, 0, 6), 24);
    ck_assert_uint_eq(nvfp4_scale_layout_offset(NVFP4_SCALE_LAYOUT_KV_V, 15, 5, 6), 95);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_KV_V, 16, 6, &pr, &pc), 96);
    /* tokens padded to 4, blocks not: 3 x 5 -> 4 x 5; byte 3 (token 3 of block 0) is padding */
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_KV_V, 3, 5, &pr, &pc), 20);
    ck_assert_uint_eq(pr, 4);
    ck_assert_uint_eq(pc, 5);
    size_t r, c;
    ck_assert(!nvfp4_scale_layout_position(NVFP4_SCALE_LAYOUT_KV_V, 3, 3, 5, &r, &c));
    ck_assert(nvfp4_scale_layout_position(NVFP4_SCALE_LAYOUT_KV_V, 6, 3, 5, &r, &c));
    ck_assert_uint_eq(r, 2);
    ck_assert_uint_eq(c, 1);
    ck_assert_uint_eq(nvfp4_scale_layout_shape(NVFP4_SCALE_LAYOUT_KV_V, SIZE_MAX / 2, SIZE_MAX / 2, &pr, &pc), 0);
}
END_TEST

START_TEST(names_parse_both_spellings)
{
    nvfp4_scale_layout l;
    ck_assert(nvfp4_scale_layout_parse("8x4", &l) && l == NVFP4_SCALE_LAYOUT_8X4);
    ck_assert(nvfp4_scale_layout_parse("flashinfer-8x4", &l) && l == NVFP4_SCALE_LAYOUT_8X4);
    ck_assert(nvfp4_scale_layout_parse("cublas-128x4", &l) && l == NVFP4_SCALE_LAYOUT_128X4);
    ck_assert(nvfp4_scale_layout_parse("linear", &l) && l == NVFP4_SCALE_LAYOUT_LINEAR);
    ck_assert(nvfp4_scale_layout_parse("kv-v", &l) && l == NVFP4_SCALE_LAYOUT_KV_V);
    ck_assert(nvfp4_scale_layout_parse("trtllm-kv-v", &l) && l == NVFP4_SCALE_LAYOUT_KV_V);
    ck_assert(nvfp4_scale_layout_parse("kv-k", &l) && l == NVFP4_SCALE_LAYOUT_LINEAR);
    ck_assert(nvfp4_scale_layout_parse("trtllm-kv-k", &l) && l == NVFP4_SCALE_LAYOUT_LINEAR);
    ck_assert_str_eq(nvfp4_scale_layout_name(NVFP4_SCALE_LAYOUT_KV_V), "trtllm-kv-v");
    ck_assert(!nvfp4_scale_layout_parse("8x8", &l));
    ck_assert_str_eq(nvfp4_scale_layout_name(NVFP4_SCALE_LAYOUT_8X4), "flashinfer-8x4");
}
END_TEST

/* Every layout: to_layout puts each scale at its offset and zeros the rest; position inverts offset and
 * flags exactly the padding; from_layout gives the linear matrix back; on shapes that need padding. */
START_TEST(every_layout_round_trips_with_zero_padding)
{
    static const size_t shapes[][2] = {{1, 1}, {3, 5}, {9, 6}, {16, 6}, {130, 7}, {8, 4}};
    for (unsigned l = 0; l < NVFP4_SCALE_LAYOUT_COUNT; l++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            size_t rows = shapes[s][0], cols = shapes[s][1], pr, pc;
            size_t n = nvfp4_scale_layout_shape((nvfp4_scale_layout)l, rows, cols, &pr, &pc);
            ck_assert_uint_eq(n, pr * pc);
            uint8_t *lin = malloc(rows * cols), *out = malloc(n), *back = malloc(rows * cols);
            for (size_t i = 0; i < rows * cols; i++) lin[i] = (uint8_t)(1 + i % 251); /* never 0 */
            nvfp4_scale_to_layout((nvfp4_scale_layout)l, lin, rows, cols, out);
            size_t scales = 0;
            for (size_t i = 0; i < n; i++) {
                size_t r, c;
                if (nvfp4_scale_layout_position((nvfp4_scale_layout)l, i, rows, cols, &r, &c)) {
                    ck_assert_uint_eq(nvfp4_scale_layout_offset((nvfp4_scale_layout)l, r, c, cols), i);
                    ck_assert_uint_eq(out[i], lin[r * cols + c]);
                    scales++;
                } else {
                    ck_assert_uint_eq(out[i], 0);
                }
            }
            ck_assert_uint_eq(scales, rows * cols);
            nvfp4_scale_from_layout((nvfp4_scale_layout)l, out, rows, cols, back);
            ck_assert_mem_eq(back, lin, rows * cols);
            free(lin), free(out), free(back);
        }
}
END_TEST

/* A 16 x 96 te quantization whose bundle is relaid out in 8x4: metadata, shape [16, 8], the byte of
 * scale (9, 5) at 101; read back, the linear scales are the quantizer's. */
static void quantize_16x96(nvfp4_quantized *q, float *x)
{
    for (size_t i = 0; i < 16 * 96; i++) x[i] = (float)((i * 37) % 23) * (1.0f + (float)(i / 16 % 11));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 16, 96, &o, q, &err), NVFP4_OK);
}

START_TEST(bundle_records_and_reads_the_layout)
{
    static float x[16 * 96];
    nvfp4_quantized q, back;
    quantize_16x96(&q, x);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_bundle_build(&q, x, NVFP4_DTYPE_F32, 16, 96, &s, &err), NVFP4_OK);
    ck_assert_str_eq(nvfp4_tset_meta_get(&s, "scale_swizzle"), "cublas-128x4");
    ck_assert_uint_eq(nvfp4_tset_find(&s, "scale_swizzled")->nbytes, 1024);
    ck_assert_int_eq(nvfp4_bundle_relayout(&s, NVFP4_SCALE_LAYOUT_8X4, &err), NVFP4_OK);
    ck_assert_str_eq(nvfp4_tset_meta_get(&s, "scale_swizzle"), "flashinfer-8x4");
    const nvfp4_tensor *z = nvfp4_tset_find(&s, "scale_swizzled");
    ck_assert_uint_eq(z->shape[0], 16);
    ck_assert_uint_eq(z->shape[1], 8);
    ck_assert_uint_eq(z->data[101], q.row.scale[9 * 6 + 5]);
    ck_assert_int_eq(nvfp4_bundle_validate(&s, "b", true, &err), NVFP4_OK);
    /* only the 8x4 scales: read back through the layout */
    nvfp4_tset_remove(&s, "scale");
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&s, "b", &back, &err), NVFP4_OK);
    ck_assert_mem_eq(back.row.scale, q.row.scale, 96);
    nvfp4_quantized_free(&back);
    /* an unknown layout name is an error naming the file and the value */
    ck_assert_int_eq(nvfp4_tset_meta_set(&s, "scale_swizzle", "cublas-256x4", &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_bundle_validate(&s, "b.safetensors", false, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "b.safetensors"));
    ck_assert_ptr_nonnull(strstr(err.message, "cublas-256x4"));
    nvfp4_tset_free(&s);
    nvfp4_quantized_free(&q);
}
END_TEST

/* The expected view in layout `want`, the actual one holding the same scales laid out in `have`. */
static void verify_layouts(nvfp4_scale_layout want, nvfp4_scale_layout have, bool with_data, nvfp4_vreport *rep)
{
    static float x[16 * 96];
    nvfp4_quantized q;
    quantize_16x96(&q, x);
    nvfp4_vview e, a;
    uint8_t *swz;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_vview_from_quantized(&q, false, &e, &swz, &err), NVFP4_OK);
    size_t pr, pc, ne = nvfp4_scale_layout_shape(want, 16, 6, &pr, &pc), na = nvfp4_scale_layout_shape(have, 16, 6, &pr, &pc);
    uint8_t *ez = malloc(ne), *az = malloc(na);
    nvfp4_scale_to_layout(want, q.row.scale, 16, 6, ez);
    nvfp4_scale_to_layout(have, q.row.scale, 16, 6, az);
    e.scale_swizzled = ez, e.scale_swizzled_bytes = ne, e.scale_layout = want;
    a = e;
    a.scale = NULL, a.scale_bytes = 0, a.amax = NULL;
    a.scale_swizzled = az, a.scale_swizzled_bytes = na;
    if (!with_data) a.data = NULL, a.data_bytes = 0;
    ck_assert_int_eq(nvfp4_verify(&e, &a, NULL, rep, &err), NVFP4_OK);
    free(ez), free(az);
    nvfp4_free(swz);
    nvfp4_quantized_free(&q);
}

static const nvfp4_vcause_line *cause_of(const nvfp4_vreport *rep, nvfp4_cause c)
{
    for (size_t i = 0; i < rep->n_causes; i++)
        if (rep->causes[i].cause == c) return &rep->causes[i];
    return NULL;
}

START_TEST(verify_names_128x4_where_8x4_was_expected)
{
    nvfp4_vreport rep;
    verify_layouts(NVFP4_SCALE_LAYOUT_8X4, NVFP4_SCALE_LAYOUT_128X4, true, &rep);
    ck_assert(!nvfp4_vreport_match(&rep));
    const nvfp4_vcause_line *l = cause_of(&rep, NVFP4_CAUSE_SCALE_LAYOUT);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_nonnull(strstr(l->line, "your scales are in layout cublas-128x4 where flashinfer-8x4 was expected"));
    ck_assert_int_eq(l->status, NVFP4_CAUSE_PROVEN); /* all 96 scales equal under 128x4 and all codes equal */
    ck_assert_str_eq(nvfp4_cause_name(NVFP4_CAUSE_SCALE_LAYOUT), "scale-layout");
    nvfp4_vreport_free(&rep);
}
END_TEST

START_TEST(verify_names_8x4_where_128x4_was_expected_consistent_without_codes)
{
    nvfp4_vreport rep;
    verify_layouts(NVFP4_SCALE_LAYOUT_128X4, NVFP4_SCALE_LAYOUT_8X4, false, &rep);
    const nvfp4_vcause_line *l = cause_of(&rep, NVFP4_CAUSE_SCALE_LAYOUT);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_nonnull(strstr(l->line, "layout flashinfer-8x4 where cublas-128x4 was expected"));
    ck_assert_int_eq(l->status, NVFP4_CAUSE_CONSISTENT); /* no codes given: not proven */
    nvfp4_vreport_free(&rep);
}
END_TEST

START_TEST(verify_same_layout_matches_and_names_nothing)
{
    nvfp4_vreport rep;
    verify_layouts(NVFP4_SCALE_LAYOUT_8X4, NVFP4_SCALE_LAYOUT_8X4, true, &rep);
    ck_assert(nvfp4_vreport_match(&rep));
    ck_assert_ptr_null(cause_of(&rep, NVFP4_CAUSE_SCALE_LAYOUT));
    nvfp4_vreport_free(&rep);
}
END_TEST

/* vLLM #50336's bug: the V scales of the KV cache written unswizzled, like K's. */
START_TEST(verify_names_v_scales_written_linear_like_k)
{
    nvfp4_vreport rep;
    verify_layouts(NVFP4_SCALE_LAYOUT_KV_V, NVFP4_SCALE_LAYOUT_LINEAR, true, &rep);
    ck_assert(!nvfp4_vreport_match(&rep));
    /* of the 96 bytes, 8 positions are the same in both layouts (24a + 4s + i = 24a + 6i + s: i = s = 0
     * and i = 3, s = 5, in each of the 4 token groups) and 3 other bytes hold equal scale values */
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE_SWIZZLED], 85);
    const nvfp4_vcause_line *l = cause_of(&rep, NVFP4_CAUSE_LINEAR_FOR_SWIZZLED);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_nonnull(strstr(l->line, "the trtllm-kv-v layout was expected"));
    ck_assert_ptr_nonnull(strstr(l->line, "V scales written unswizzled, as K's"));
    nvfp4_vreport_free(&rep);
}
END_TEST

/* The converse: K's scales given the V interleave. */
START_TEST(verify_names_k_scales_written_in_the_v_layout)
{
    nvfp4_vreport rep;
    verify_layouts(NVFP4_SCALE_LAYOUT_LINEAR, NVFP4_SCALE_LAYOUT_KV_V, true, &rep);
    const nvfp4_vcause_line *l = cause_of(&rep, NVFP4_CAUSE_SCALE_LAYOUT);
    ck_assert_ptr_nonnull(l);
    ck_assert_ptr_nonnull(strstr(l->line, "your scales are in layout trtllm-kv-v where linear was expected"));
    ck_assert_int_eq(l->status, NVFP4_CAUSE_PROVEN);
    nvfp4_vreport_free(&rep);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, flashinfer_8x4_known_offsets);
    tcase_add_test(tc, kv_cache_v_known_offsets);
    tcase_add_test(tc, names_parse_both_spellings);
    tcase_add_test(tc, every_layout_round_trips_with_zero_padding);
    tcase_add_test(tc, bundle_records_and_reads_the_layout);
    tcase_add_test(tc, verify_names_128x4_where_8x4_was_expected);
    tcase_add_test(tc, verify_names_8x4_where_128x4_was_expected_consistent_without_codes);
    tcase_add_test(tc, verify_same_layout_matches_and_names_nothing);
    tcase_add_test(tc, verify_names_v_scales_written_linear_like_k);
    tcase_add_test(tc, verify_names_k_scales_written_in_the_v_layout);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
