/* check_grouped.c - grouped (MoE) quantization (nvfp4/grouped.h): one
 * global amax per group, hand-computed bytes on a 3-expert tensor with an
 * empty expert, the per-group 128-row padding of the swizzled scales, the
 * identity with per-group nvfp4_quantize, and the refused options. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"

/* Three experts of 2, 0 and 1 tokens, K = 16 (one block per row):
 *   expert 0: row 0 = {6, 3, -1, 0.5, 0...}, row 1 = {1.5, 0...}   amax 6
 *   expert 1: empty                                               amax 0
 *   expert 2: row 2 = {0.75, 0...}                                amax 0.75
 * te: S_enc = 2688/amax. Expert 0: S_enc = 448; row 0 bamax 6 -> s = 448
 * (E4M3 0x7E), codes 6 -> 0x7, 3 -> 0x5, -1 -> 0xA, 0.5 -> 0x1; row 1 bamax
 * 1.5 -> s = 112 (0x6E), 1.5 * 448/112 = 6 -> 0x7. Expert 2: S_enc = 3584,
 * s = 0.75 * 3584/6 = 448 (0x7E), 0.75 -> 6 (0x7). With the tensor amax 6
 * shared (the catalogued mistake) expert 2 would get s = 56 (0x66). */
static void three_experts(float x[3 * 16])
{
    memset(x, 0, 3 * 16 * sizeof *x);
    x[0] = 6.0f;
    x[1] = 3.0f;
    x[2] = -1.0f;
    x[3] = 0.5f;
    x[16] = 1.5f;
    x[32] = 0.75f;
}

static const size_t three_sizes[3] = {2, 0, 1};

START_TEST(hand_computed_three_experts)
{
    float x[48];
    three_experts(x);
    nvfp4_grouped g;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 3, 16, three_sizes, 3, NULL, &g, &err), NVFP4_OK);
    ck_assert_uint_eq(g.ngroups, 3);
    ck_assert_float_eq(g.amax[0], 6.0f);
    ck_assert_float_eq(g.amax[1], 0.0f);
    ck_assert_float_eq(g.amax[2], 0.75f);
    ck_assert_uint_eq(g.data_bytes, 24);
    ck_assert_uint_eq(g.scale_cols, 1);
    const uint8_t row0[8] = {0x57, 0x1A, 0, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(g.data, row0, 8);
    ck_assert_uint_eq(g.data[8], 0x07);
    ck_assert_uint_eq(g.data[16], 0x07);
    for (size_t i = 1; i < 8; i++) ck_assert_uint_eq(g.data[8 + i] | g.data[16 + i], 0);
    ck_assert_uint_eq(g.scale[0], 0x7E);
    ck_assert_uint_eq(g.scale[1], 0x6E);
    ck_assert_uint_eq(g.scale[2], 0x7E);
    /* two 512-byte segments (expert 1 has none): row r of a segment at 16 * r */
    ck_assert_uint_eq(g.swizzled_bytes, 1024);
    ck_assert_uint_eq(nvfp4_grouped_segment_offset(three_sizes, 2, 1), 512);
    for (size_t i = 0; i < g.swizzled_bytes; i++) {
        uint8_t want = i == 0 ? 0x7E : i == 16 ? 0x6E : i == 512 ? 0x7E : 0;
        ck_assert_msg(g.scale_swizzled[i] == want, "swizzled byte %zu: 0x%02x, expected 0x%02x", i,
                      g.scale_swizzled[i], want);
    }
    /* dequantized with each expert's own amax: exact here */
    float deq[48];
    ck_assert_int_eq(nvfp4_grouped_dequantize(&g, deq, &err), NVFP4_OK);
    for (size_t i = 0; i < 48; i++) ck_assert_float_eq(deq[i], x[i]);
    nvfp4_grouped_free(&g);
}
END_TEST

/* The whole tensor quantized with one amax is what a kernel that shares the
 * global scale across experts writes: expert 2's scale is then 56 (0x66). */
START_TEST(shared_global_scale_differs)
{
    float x[48];
    three_experts(x);
    nvfp4_quantized q;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 16, NULL, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[2], 0x66);
    ck_assert_uint_eq(q.row.scale[0], 0x7E);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(all_zero_expert)
{
    float x[4 * 32] = {0};
    x[0] = 2.0f; /* expert 0 (1 row); expert 1 (3 rows) is all zeros */
    size_t m[2] = {1, 3};
    nvfp4_grouped g;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 4, 32, m, 2, NULL, &g, &err), NVFP4_OK);
    ck_assert_float_eq(g.amax[1], 0.0f);
    for (size_t i = 16; i < 64; i++) ck_assert_uint_eq(g.data[i], 0);
    for (size_t i = 2; i < 8; i++) ck_assert_uint_eq(g.scale[i], 0);
    ck_assert_uint_eq(g.swizzled_bytes, 1024);
    nvfp4_grouped_free(&g);
}
END_TEST

static void fill(float *x, size_t n, unsigned seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = ((float)(int)(s % 20001) - 10000.0f) / 1000.0f * (float)(1 + (i / 64) % 5);
    }
}

/* Each group's bytes are those of nvfp4_quantize on its rows alone, for a
 * recipe per chain family, including groups longer than 128 rows. */
START_TEST(each_group_is_its_own_tensor)
{
    const char *recipes[] = {"te", "mslk", "mslk-stacked", "torchao", "mxfp4-floor", "mxfp8", "vllm"};
    size_t m[5] = {130, 0, 7, 1, 0}, rows = 138, cols = 64;
    float *x = malloc(rows * cols * sizeof *x);
    fill(x, rows * cols, 7);
    for (size_t r = 0; r < sizeof recipes / sizeof *recipes; r++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = recipes[r];
        nvfp4_grouped g;
        nvfp4_error err = {0};
        ck_assert_msg(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, rows, cols, m, 5, &o, &g, &err) == NVFP4_OK, "%s: %s",
                      recipes[r], err.message);
        ck_assert_uint_eq(g.swizzled_bytes, nvfp4_swizzled_size(256, g.scale_cols) + 2 * nvfp4_swizzled_size(1, g.scale_cols));
        size_t row = 0, off = 0;
        for (size_t i = 0; i < 5; row += m[i], i++) {
            if (!m[i]) continue;
            nvfp4_quantized q;
            ck_assert_int_eq(nvfp4_quantize(x + row * cols, NVFP4_DTYPE_F32, m[i], cols, &o, &q, &err), NVFP4_OK);
            size_t rb = g.data_bytes / rows;
            ck_assert_msg(!memcmp(g.data + row * rb, q.row.data, q.row.data_bytes), "%s group %zu codes", recipes[r], i);
            ck_assert_msg(!memcmp(g.scale + row * g.scale_cols, q.row.scale, m[i] * g.scale_cols), "%s group %zu scales",
                          recipes[r], i);
            ck_assert_msg(memcmp(&g.amax[i], &q.row.amax, sizeof(float)) == 0, "%s group %zu amax", recipes[r], i);
            size_t seg = nvfp4_swizzled_size(m[i], g.scale_cols);
            uint8_t *swz = malloc(seg);
            nvfp4_scale_swizzle(q.row.scale, m[i], g.scale_cols, swz);
            ck_assert_msg(!memcmp(g.scale_swizzled + off, swz, seg), "%s group %zu swizzled", recipes[r], i);
            off += seg;
            free(swz);
            nvfp4_quantized_free(&q);
        }
        nvfp4_grouped_free(&g);
    }
    /* bf16 input: the same identity (bf16 bits of the fp32 values, truncated) */
    uint16_t *xb = malloc(rows * cols * sizeof *xb);
    for (size_t i = 0; i < rows * cols; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        xb[i] = (uint16_t)(u >> 16);
    }
    nvfp4_grouped g;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize_grouped(xb, NVFP4_DTYPE_BF16, rows, cols, m, 5, NULL, &g, &err), NVFP4_OK);
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(xb + 130 * cols, NVFP4_DTYPE_BF16, 7, cols, NULL, &q, &err), NVFP4_OK);
    ck_assert_mem_eq(g.data + 130 * cols / 2, q.row.data, q.row.data_bytes);
    ck_assert_mem_eq(g.scale + 130 * g.scale_cols, q.row.scale, 7 * g.scale_cols);
    ck_assert(memcmp(&g.amax[2], &q.row.amax, 4) == 0);
    nvfp4_quantized_free(&q);
    nvfp4_grouped_free(&g);
    free(xb);
    free(x);
}
END_TEST

START_TEST(refused)
{
    float x[48] = {0};
    nvfp4_grouped g;
    nvfp4_error err = {0};
    size_t bad_sum[2] = {1, 1};
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 3, 16, bad_sum, 2, NULL, &g, &err), NVFP4_ESHAPE);
    ck_assert_str_eq(err.message, "the 2 group sizes sum to 2 rows but the tensor has 3 rows");
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.columnwise = true;
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 3, 16, three_sizes, 3, &o, &g, &err),
                     NVFP4_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "a columnwise output is not supported with groups"));
    nvfp4_quant_opts_init(&o);
    o.recipe = "te-rowscaled";
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 3, 16, three_sizes, 3, &o, &g, &err),
                     NVFP4_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "per-row"));
}
END_TEST

START_TEST(sizes_text)
{
    size_t *m, n;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_grouped_sizes_parse("128,0,7", "--groups", &m, &n, &err), NVFP4_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(m[0], 128);
    ck_assert_uint_eq(m[1], 0);
    ck_assert_uint_eq(m[2], 7);
    char buf[16];
    ck_assert(nvfp4_grouped_sizes_format(m, n, buf, sizeof buf));
    ck_assert_str_eq(buf, "128,0,7");
    ck_assert(!nvfp4_grouped_sizes_format(m, n, buf, 7));
    free(m);
    const char *bad[] = {"", "3,,4", "-1", "a", "4,", " 4", "1,2x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(nvfp4_grouped_sizes_parse(bad[i], "--groups", &m, &n, &err), NVFP4_EINVAL);
        ck_assert_ptr_null(m);
    }
    ck_assert_str_eq(err.message,
                     "--groups: group size 2 of '1,2x' is not a row count (expected M1,M2,... with decimal integers >= 0)");
}
END_TEST


/* The report of nvfp4 verify for a grouped golden and a kernel output. */
static char *grouped_verify_text(const nvfp4_tensor_set *golden, const nvfp4_tensor_set *actual, int *verdict)
{
    nvfp4_verify_bundle_opts o;
    nvfp4_verify_bundle_opts_init(&o);
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_msg(nvfp4_verify_bundle_report(golden, actual, &o, &rep, &err) == NVFP4_OK, "%s", err.message);
    *verdict = rep.verdict;
    char *text = strdup(rep.text);
    nvfp4_report_free(&rep);
    return text;
}

/* A golden of 3 experts (5, 0, 130 rows; K = 80: K/16 = 5) and each
 * catalogued grouped mistake run on it: the golden kills both (their bytes
 * differ), and verify names each one alone (proven) and the experts that
 * differ. */
START_TEST(goldens_kill_grouped_mutants)
{
    size_t m[3] = {5, 0, 130}, rows = 135, cols = 80;
    float *x = malloc(rows * cols * sizeof *x);
    fill(x, rows * cols, 3);
    for (size_t i = 5 * cols; i < rows * cols; i++) x[i] *= 0.01f; /* expert 2 far smaller than expert 0 */
    nvfp4_grouped g;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, rows, cols, m, 3, NULL, &g, &err), NVFP4_OK);
    nvfp4_tensor_set golden;
    nvfp4_tset_init(&golden);
    ck_assert_int_eq(nvfp4_grouped_bundle_build(&g, x, NVFP4_DTYPE_F32, &golden, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_grouped_bundle_validate(&golden, "golden", true, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_bundle_validate(&golden, "golden", true, &err), NVFP4_EUNSUPPORTED);
    ck_assert_uint_eq(nvfp4_grouped_mutant_count(), 2);
    const char *want[2] = {"cause [proven]: grouped-shared-global-scale: one global scale shared across experts",
                           "cause [proven]: grouped-unpadded-segments: group scale segments not padded to 128 rows"};
    const char *experts[2] = {"experts that differ: 2 (1 of 2 with rows)", "experts that differ: 2 (1 of 2 with rows)"};
    for (size_t i = 0; i < 2; i++) {
        nvfp4_tensor_set mut;
        nvfp4_tset_init(&mut);
        ck_assert_int_eq(nvfp4_grouped_mutant_run(i, x, NVFP4_DTYPE_F32, rows, cols, m, 3, NULL, &mut, &err), NVFP4_OK);
        int verdict;
        char *text = grouped_verify_text(&golden, &mut, &verdict);
        ck_assert_int_eq(verdict, 1); /* killed */
        ck_assert_msg(strstr(text, want[i]) != NULL, "mutant %zu not named:\n%s", i, text);
        ck_assert_msg(strstr(text, experts[i]) != NULL, "mutant %zu experts:\n%s", i, text);
        ck_assert_msg(strstr(text, "expert 0: rows 0..4 (5): match") != NULL, "%s", text);
        free(text);
        nvfp4_tset_free(&mut);
    }
    /* the unpadded layout puts expert 2's row 0 at 5 * 16 = 80 of one 128x4 matrix, not at 1024 */
    nvfp4_tensor_set mut;
    nvfp4_tset_init(&mut);
    ck_assert_int_eq(nvfp4_grouped_mutant_run(1, x, NVFP4_DTYPE_F32, rows, cols, m, 3, NULL, &mut, &err), NVFP4_OK);
    const nvfp4_tensor *z = nvfp4_tset_find(&mut, "scale_swizzled");
    ck_assert_uint_eq(z->nbytes, 2 * 128 * 8);
    ck_assert_uint_eq(z->data[80], g.scale[5 * 5]);
    ck_assert_uint_eq(nvfp4_tset_find(&golden, "scale_swizzled")->nbytes, 128 * 8 + 256 * 8);
    ck_assert_uint_eq(nvfp4_tset_find(&golden, "scale_swizzled")->data[1024], g.scale[5 * 5]);
    nvfp4_tset_free(&mut);
    /* the golden against itself: a match */
    int verdict;
    char *text = grouped_verify_text(&golden, &golden, &verdict);
    ck_assert_int_eq(verdict, 0);
    free(text);
    nvfp4_tset_free(&golden);
    nvfp4_grouped_free(&g);
    free(x);
}
END_TEST

/* A grouped bundle read back: the same bytes; refused by the ungrouped reader. */
START_TEST(bundle_round_trip)
{
    float x[48];
    three_experts(x);
    nvfp4_grouped g, back;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize_grouped(x, NVFP4_DTYPE_F32, 3, 16, three_sizes, 3, NULL, &g, &err), NVFP4_OK);
    nvfp4_tensor_set b;
    nvfp4_tset_init(&b);
    ck_assert_int_eq(nvfp4_grouped_bundle_build(&g, x, NVFP4_DTYPE_F32, &b, &err), NVFP4_OK);
    ck_assert_str_eq(nvfp4_tset_meta_get(&b, "groups"), "2,0,1");
    ck_assert_int_eq(nvfp4_bundle_to_grouped(&b, "b", &back, &err), NVFP4_OK);
    ck_assert_uint_eq(back.ngroups, 3);
    ck_assert_mem_eq(back.data, g.data, g.data_bytes);
    ck_assert_mem_eq(back.scale_swizzled, g.scale_swizzled, g.swizzled_bytes);
    ck_assert_mem_eq(back.amax, g.amax, 3 * sizeof(float));
    nvfp4_grouped_free(&back);
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&b, "b", &q, &err), NVFP4_EUNSUPPORTED);
    /* m_sizes that contradict the metadata are refused by name */
    nvfp4_tset_meta_set(&b, "groups", "1,1,1", &err);
    ck_assert_int_eq(nvfp4_grouped_bundle_validate(&b, "b", true, &err), NVFP4_EFORMAT);
    ck_assert_str_eq(err.message, "b: component 'm_sizes' is not I64 [3] holding the metadata groups '1,1,1'");
    nvfp4_tset_remove(&b, "m_sizes");
    nvfp4_tset_meta_set(&b, "groups", "2,0", &err);
    ck_assert_int_eq(nvfp4_grouped_bundle_validate(&b, "b", true, &err), NVFP4_EFORMAT);
    ck_assert_str_eq(err.message, "b: the group sizes (metadata \"groups\") sum to 2 rows but the bundle has 3");
    nvfp4_tset_meta_set(&b, "groups", "18446744073709551615,3", &err);
    ck_assert_int_eq(nvfp4_grouped_bundle_validate(&b, "b", true, &err), NVFP4_EFORMAT);
    ck_assert_str_eq(err.message, "b: the group sizes (metadata \"groups\") overflow");
    nvfp4_tset_meta_set(&b, "groups", "3,0", &err);
    ck_assert_int_eq(nvfp4_grouped_bundle_validate(&b, "b", true, &err), NVFP4_EFORMAT);
    ck_assert_str_eq(err.message, "b: component 'scale_swizzled' holds 1024 bytes where the grouped layout has 512 "
                                  "(512 elements of 1 bytes)");
    nvfp4_tset_free(&b);
    nvfp4_grouped_free(&g);
}
END_TEST

/* mslk-stacked's S_enc is 2688 / amax in one division (mslk's calculate_group_max),
 * mslk's is 1 / (amax / 2688). amax = 0x1.ad809cp+2 (6.71097469) gives
 * S_enc = 0x1.9089b6p+8 (400.537933) here and one ulp more there; a block of
 * amax b = 0x1.04c4f2p-6 then has (b / 6) * S_enc = 1.0625 exactly, the tie
 * between E4M3 1.0 (0x38, even) and 1.125 (0x39): 0x38 here, 0x39 with mslk
 * (whose product is 1.0625 + 2^-23). */
START_TEST(mslk_stacked_global_scale)
{
    float x[32] = {0};
    x[0] = 0x1.ad809cp+2f;
    x[16] = 0x1.04c4f2p-6f;
    ck_assert_float_eq(2688.0f / x[0], 0x1.9089b6p+8f);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_quantized q;
    nvfp4_error err = {0};
    o.recipe = "mslk-stacked";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[1], 0x38);
    float deq[32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, deq, &err), NVFP4_OK);
    ck_assert_float_eq(deq[16], 6.0f * (1.0f / 0x1.9089b6p+8f)); /* code 0x7 (y = 6), times s / S_enc = 1 / S_enc */
    nvfp4_quantized_free(&q);
    o.recipe = "mslk";
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale[1], 0x39);
    nvfp4_quantized_free(&q);
    /* an all-zero expert: S_enc = 1 (as te), scales and codes 0 (mslk's kernel: its +Inf-factor 0x7) */
    float z[2 * 16] = {0};
    z[0] = 1.0f;
    size_t m[2] = {1, 1};
    nvfp4_grouped g;
    o.recipe = "mslk-stacked";
    ck_assert_int_eq(nvfp4_quantize_grouped(z, NVFP4_DTYPE_F32, 2, 16, m, 2, &o, &g, &err), NVFP4_OK);
    ck_assert_float_eq(g.amax[1], 0.0f);
    ck_assert_uint_eq(g.scale[1], 0);
    for (size_t i = 8; i < 16; i++) ck_assert_uint_eq(g.data[i], 0);
    nvfp4_grouped_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grouped");
    TCase *tc = tcase_create("grouped");
    tcase_add_test(tc, hand_computed_three_experts);
    tcase_add_test(tc, shared_global_scale_differs);
    tcase_add_test(tc, all_zero_expert);
    tcase_add_test(tc, each_group_is_its_own_tensor);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, sizes_text);
    tcase_add_test(tc, goldens_kill_grouped_mutants);
    tcase_add_test(tc, bundle_round_trip);
    tcase_add_test(tc, mslk_stacked_global_scale);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
