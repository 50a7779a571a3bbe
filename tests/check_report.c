/* check_report.c - the report functions of the public API (nvfp4/verify.h,
 * nvfp4/formats.h) that the CLI and the Python package both call:
 * nvfp4_verify_bundle_report, nvfp4_identify_report, nvfp4_sr_test_report,
 * nvfp4_gemm_check_text and nvfp4_explain. Each is driven in memory (tensor
 * sets built here, no file) and checked for its verdict, its counts, a line
 * of its text known by hand, and the message of a bad input. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/verify.h"

enum { R = 16, C = 32 };

/* 16 x 32, every element 1 but x[0][0] = 6: 32 blocks of 1x16, amax 6. */
static void ones_input(float *x)
{
    for (size_t i = 0; i < R * C; i++) x[i] = 1.0f;
    x[0] = 6.0f;
}

/* A spread of magnitudes whose scaled values mostly fall between two E2M1
 * codes, so that SR has something to round. */
static void spread_input(float *x)
{
    for (size_t i = 0; i < R * C; i++) x[i] = (float)((int)(i * 37u % 29u) - 14) * 0.173f;
}

static void quantize_te(const float *x, nvfp4_rounding rnd, uint64_t seed, uint64_t offset, nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te";
    o.rounding = rnd;
    o.seed = seed;
    o.offset = offset;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, R, C, &o, q, &err), NVFP4_OK);
}

/* The golden bundle of x (te, RN, rowwise), as nvfp4 quantize writes it. */
static void golden_bundle(const float *x, nvfp4_tensor_set *b)
{
    nvfp4_quantized q;
    quantize_te(x, NVFP4_RN, 0, 0, &q);
    nvfp4_tset_init(b);
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_bundle_build(&q, x, NVFP4_DTYPE_F32, R, C, b, &err), NVFP4_OK);
    nvfp4_quantized_free(&q);
}

/* Copies tensor `name` of `from` into `to` (a kernel's output made of golden bytes). */
static void copy_tensor(nvfp4_tensor_set *to, const nvfp4_tensor_set *from, const char *name)
{
    const nvfp4_tensor *t = nvfp4_tset_find(from, name);
    ck_assert_ptr_nonnull(t);
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_tset_add(to, name, t->dtype, t->ndim, t->shape, t->data, NULL, &err), NVFP4_OK);
}

static void add_u8(nvfp4_tensor_set *s, const char *name, const uint8_t *data, size_t n)
{
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_tset_add(s, name, NVFP4_T_U8, 1, &n, data, NULL, &err), NVFP4_OK);
}

static void add_f32(nvfp4_tensor_set *s, const char *name, const float *data, size_t rows, size_t cols)
{
    size_t shape[2] = {rows, cols};
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_tset_add(s, name, NVFP4_T_F32, 2, shape, data, NULL, &err), NVFP4_OK);
}

static nvfp4_verify_bundle_opts verify_opts(void)
{
    nvfp4_verify_bundle_opts o;
    nvfp4_verify_bundle_opts_init(&o);
    o.expected_name = "g.safetensors";
    o.actual_name = "k.safetensors";
    o.what = NVFP4_REPORT_TEXT | NVFP4_REPORT_JSON;
    return o;
}

/* ---- verify ----------------------------------------------------------------------------------------- */

START_TEST(verify_golden_bytes_match)
{
    float x[R * C];
    ones_input(x);
    nvfp4_tensor_set b, a;
    golden_bundle(x, &b);
    nvfp4_tset_init(&a);
    copy_tensor(&a, &b, "data");
    copy_tensor(&a, &b, "scale");
    nvfp4_verify_bundle_opts o = verify_opts();
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 0);
    ck_assert_uint_eq(rep.n_outputs, 1);
    ck_assert(!rep.outputs[0].columnwise);
    ck_assert_uint_eq(rep.outputs[0].rows, R);
    ck_assert_uint_eq(rep.outputs[0].cols, C);
    const nvfp4_vreport *v = &rep.outputs[0].report;
    ck_assert_uint_eq(v->total[NVFP4_VC_DATA], R * C);     /* elements */
    ck_assert_uint_eq(v->total[NVFP4_VC_SCALE], R * C / 16); /* one byte per 1x16 block */
    ck_assert_uint_eq(v->mismatches[NVFP4_VC_DATA] + v->mismatches[NVFP4_VC_SCALE], 0);
    ck_assert(!v->compared[NVFP4_VC_AMAX]); /* absent from the kernel output: not compared */
    ck_assert_str_eq(rep.text, "expected g.safetensors, actual k.safetensors\n"
                               "rowwise output (16 x 32, recipe te, rn, block 1x16):\n"
                               "  data               0 of 512 differ (match)\n"
                               "  scale              0 of 32 differ (match)\n"
                               "  scale_swizzled     absent in actual: not compared\n"
                               "  amax               absent in actual: not compared\n"
                               "  dequant            absent in actual: not compared\n"
                               "verdict: MATCH\n");
    ck_assert_ptr_nonnull(strstr(rep.json, "\"verdict\": \"match\""));
    nvfp4_report_free(&rep);
    ck_assert_ptr_null(rep.text); /* zeroed */
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);
}
END_TEST

START_TEST(verify_one_flipped_nibble)
{
    float x[R * C];
    ones_input(x);
    nvfp4_tensor_set b, a;
    golden_bundle(x, &b);
    const nvfp4_tensor *d = nvfp4_tset_find(&b, "data");
    uint8_t bad[R * C / 2];
    ck_assert_uint_eq(d->nbytes, sizeof bad);
    memcpy(bad, d->data, sizeof bad);
    bad[3] ^= 0x10; /* element 7 (the high nibble of byte 3) */
    nvfp4_tset_init(&a);
    add_u8(&a, "data", bad, sizeof bad);
    nvfp4_verify_bundle_opts o = verify_opts();
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    const nvfp4_vreport *v = &rep.outputs[0].report;
    ck_assert_uint_eq(v->mismatches[NVFP4_VC_DATA], 1);
    ck_assert_uint_ge(v->n_first, 1);
    ck_assert_uint_eq(v->first[0].index, 7);
    ck_assert_uint_eq(v->first[0].row, 0);
    ck_assert_uint_eq(v->first[0].col, 7);
    ck_assert_uint_eq(v->first[0].expected_code ^ v->first[0].actual_code, 1);
    ck_assert_ptr_nonnull(strstr(rep.text, "  data               1 of 512 differ"));
    ck_assert_ptr_nonnull(strstr(rep.text, "verdict: MISMATCH\n"));
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);
}
END_TEST

START_TEST(verify_bad_input_errors)
{
    float x[R * C];
    ones_input(x);
    nvfp4_tensor_set b, a, empty;
    golden_bundle(x, &b);
    nvfp4_tset_init(&a);
    uint8_t junk[4] = {0};
    add_u8(&a, "foo", junk, 4);
    add_u8(&a, "bar", junk, 4);
    nvfp4_verify_bundle_opts o = verify_opts();
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "k.safetensors holds none of the bundle's components (data, scale, scale_swizzled, "
                                  "amax, dequant, *_t)");
    nvfp4_report_free(&rep);
    /* an empty set is no bundle: the error names it */
    nvfp4_tset_init(&empty);
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(nvfp4_verify_bundle_report(&empty, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_ptr_nonnull(strstr(err.message, "g.safetensors"));
    nvfp4_report_free(&rep);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, NULL, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "verify: a NULL argument");
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);
}
END_TEST

/* ---- identify --------------------------------------------------------------------------------------- */

START_TEST(identify_ranks_te_first)
{
    float x[R * C];
    ones_input(x);
    nvfp4_tensor_set b, a;
    golden_bundle(x, &b);
    nvfp4_tset_init(&a);
    copy_tensor(&a, &b, "data");
    copy_tensor(&a, &b, "scale");
    nvfp4_identify_opts o;
    nvfp4_identify_opts_init(&o);
    o.actual_name = "k.safetensors";
    o.what = NVFP4_REPORT_TEXT;
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_identify_report(x, NVFP4_DTYPE_F32, R, C, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 0); /* identified */
    ck_assert_uint_ge(rep.n_ranking, 1);
    ck_assert_str_eq(rep.ranking[0].name, "te rn 1x16"); /* ties keep the catalogue order: te first */
    ck_assert_uint_eq(rep.ranking[0].data_match, R * C / 2);
    ck_assert_uint_eq(rep.ranking[0].data_total, R * C / 2);
    ck_assert_uint_eq(rep.ranking[0].scale_match, R * C / 16);
    ck_assert(rep.ranking[0].fraction == 1.0);
    ck_assert_uint_eq(rep.n_variants + rep.n_mutants, rep.n_ranking);
    ck_assert_ptr_nonnull(strstr(rep.text, "  1    te rn 1x16                100.0000%      256/256             32/32"));
    ck_assert_ptr_null(rep.json); /* not asked */
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);
}
END_TEST

START_TEST(identify_bad_input_errors)
{
    float x[R * C];
    ones_input(x);
    nvfp4_tensor_set a;
    nvfp4_tset_init(&a);
    add_f32(&a, "dequant", x, R, C);
    nvfp4_identify_opts o;
    nvfp4_identify_opts_init(&o);
    o.actual_name = "k.safetensors";
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_identify_report(x, NVFP4_DTYPE_F32, R, C, &a, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "k.safetensors holds no data"));
    nvfp4_report_free(&rep);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(nvfp4_identify_report(x, (nvfp4_dtype)9, R, C, &a, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "identify: the input is float32 or bfloat16");
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
}
END_TEST

/* ---- sr-test ---------------------------------------------------------------------------------------- */

/* Four SR samples of the spread input: sample s uses (seed 5, offset s). */
enum { NS = 4 };
static void sr_samples(const float *x, nvfp4_tensor_set *s)
{
    for (int k = 0; k < NS; k++) {
        nvfp4_quantized q;
        quantize_te(x, NVFP4_SR, 5, (uint64_t)k, &q);
        nvfp4_tset_init(&s[k]);
        add_u8(&s[k], "data", q.row.data, q.row.data_bytes);
        add_u8(&s[k], "scale", q.row.scale, q.row.scale_rows * q.row.scale_cols);
        nvfp4_quantized_free(&q);
    }
}

static nvfp4_sr_test_opts sr_opts(void)
{
    nvfp4_sr_test_opts o;
    nvfp4_sr_test_opts_init(&o);
    o.quant.recipe = "te";
    o.bitexact = true;
    o.seed = 5;
    o.what = NVFP4_REPORT_TEXT | NVFP4_REPORT_JSON;
    return o;
}

START_TEST(sr_test_bitexact_pass_and_one_flip)
{
    float x[R * C];
    spread_input(x);
    nvfp4_tensor_set s[NS];
    sr_samples(x, s);
    const nvfp4_tensor_set *ps[NS] = {&s[0], &s[1], &s[2], &s[3]};
    nvfp4_sr_test_opts o = sr_opts();
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_sr_test_report(x, NVFP4_DTYPE_F32, R, C, ps, NS, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 0);
    ck_assert_ptr_nonnull(rep.sr);
    ck_assert(rep.sr->pass);
    ck_assert_ptr_nonnull(strstr(rep.text, "sr-test: 512 elements, 4 samples, "));
    ck_assert_ptr_nonnull(strstr(rep.text, "  bit-exact (seed 5, offset 0 + k*1): 0 of 2048 codes differ\n"));
    ck_assert_ptr_nonnull(strstr(rep.text, "verdict: PASS\n"));
    nvfp4_report_free(&rep);
    /* one code of sample 3 changed: the bit-exact comparison counts exactly one */
    nvfp4_tensor *d = nvfp4_tset_find(&s[2], "data");
    d->data[10] ^= 0x01;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(nvfp4_sr_test_report(x, NVFP4_DTYPE_F32, R, C, ps, NS, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    ck_assert(!rep.sr->pass);
    ck_assert_ptr_nonnull(strstr(rep.text, "  bit-exact (seed 5, offset 0 + k*1): 1 of 2048 codes differ"));
    ck_assert_ptr_nonnull(strstr(rep.text, "verdict: FAIL\n"));
    nvfp4_report_free(&rep);
    for (int k = 0; k < NS; k++) nvfp4_tset_free(&s[k]);
}
END_TEST

START_TEST(sr_test_bad_input_errors)
{
    float x[R * C];
    spread_input(x);
    nvfp4_tensor_set s[NS];
    sr_samples(x, s);
    const nvfp4_tensor_set *ps[NS] = {&s[0], &s[1], &s[2], &s[3]};
    nvfp4_sr_test_opts o = sr_opts();
    nvfp4_report rep;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_sr_test_report(x, NVFP4_DTYPE_F32, R, C, ps, 0, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "sr-test: no samples");
    nvfp4_report_free(&rep);
    o.alpha = 2.0;
    ck_assert_int_eq(nvfp4_sr_test_report(x, NVFP4_DTYPE_F32, R, C, ps, NS, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "sr-test: alpha 2 is not in (0, 1)");
    nvfp4_report_free(&rep);
    o = sr_opts();
    o.quant.recipe = "exact"; /* no SR in this recipe */
    ck_assert_int_eq(nvfp4_sr_test_report(x, NVFP4_DTYPE_F32, R, C, ps, NS, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "recipe exact has no stochastic rounding");
    nvfp4_report_free(&rep);
    for (int k = 0; k < NS; k++) nvfp4_tset_free(&s[k]);
}
END_TEST

/* ---- gemm-check ------------------------------------------------------------------------------------- */

/* A = B = 16 x 16 of ones: every operand dequantizes to 1 exactly, so the
 * exact product is 16 in each of the 256 outputs. */
START_TEST(gemm_check_exact_and_outside)
{
    enum { N = 16 };
    float ones[N * N], dv[N * N];
    for (size_t i = 0; i < N * N; i++) ones[i] = 1.0f, dv[i] = 16.0f;
    nvfp4_quant_opts qo;
    nvfp4_quant_opts_init(&qo);
    nvfp4_quantized qa, qb;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_quantize(ones, NVFP4_DTYPE_F32, N, N, &qo, &qa, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_quantize(ones, NVFP4_DTYPE_F32, N, N, &qo, &qb, &err), NVFP4_OK);
    nvfp4_gemm_check_opts o;
    nvfp4_gemm_check_opts_init(&o);
    o.a_name = "a", o.b_name = "b", o.d_name = "d.npy";
    nvfp4_tensor_set d;
    nvfp4_tset_init(&d);
    add_f32(&d, "d", dv, N, N);
    nvfp4_report rep;
    ck_assert_int_eq(nvfp4_gemm_check_text(&qa, &qb, &d, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 0);
    ck_assert_ptr_nonnull(rep.gemm);
    ck_assert_uint_eq(rep.gemm->total, N * N);
    ck_assert_uint_eq(rep.gemm->outside_bound, 0);
    ck_assert_uint_eq(rep.gemm->te_equal, N * N);
    ck_assert(rep.gemm->within_bound && rep.gemm->equals_te);
    nvfp4_report_free(&rep);
    /* one output off by 1 (a whole unit: far outside any rounding bound of an exact 16) */
    nvfp4_tensor *t = nvfp4_tset_find(&d, "d");
    float seventeen = 17.0f;
    memcpy(t->data + 5 * sizeof(float), &seventeen, sizeof seventeen);
    ck_assert_int_eq(nvfp4_gemm_check_text(&qa, &qb, &d, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    ck_assert_uint_eq(rep.gemm->outside_bound, 1);
    ck_assert_uint_eq(rep.gemm->worst_index, 5);
    ck_assert(!rep.gemm->within_bound);
    nvfp4_report_free(&rep);
    /* a D of the wrong size and a D that is not F32 */
    nvfp4_tensor_set small;
    nvfp4_tset_init(&small);
    add_f32(&small, "d", dv, 2, 8);
    ck_assert_int_eq(nvfp4_gemm_check_text(&qa, &qb, &small, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "d.npy: 'd' holds 16 values; D is 16 x 16");
    nvfp4_report_free(&rep);
    nvfp4_tensor_set u8;
    nvfp4_tset_init(&u8);
    add_u8(&u8, "d", (const uint8_t *)dv, 16);
    ck_assert_int_eq(nvfp4_gemm_check_text(&qa, &qb, &u8, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "d.npy: 'd' is U8, not F32");
    nvfp4_report_free(&rep);
    o.alpha = INFINITY;
    ck_assert_int_eq(nvfp4_gemm_check_text(&qa, &qb, &d, &o, &rep, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "alpha inf is not finite");
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&u8);
    nvfp4_tset_free(&small);
    nvfp4_tset_free(&d);
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* ---- explain ---------------------------------------------------------------------------------------- */

/* nvfp4_vview_from_quantized: te-rowscaled 32 x 48, columnwise: the stored
 * orientation is 48 x 32 (two 1x16 blocks a row), one amax per stored row,
 * 48 x 2 linear scale bytes and a 128 x 4 swizzled tile (512 bytes); the view
 * verified against itself matches, and against one changed row amax it does
 * not. */
START_TEST(vview_from_quantized_rowscaled_columnwise)
{
    float x[32 * 48];
    for (int i = 0; i < 32 * 48; i++) x[i] = (float)((i * 37) % 101 - 50) * 0.125f;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te-rowscaled";
    o.columnwise = true;
    nvfp4_quantized q;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 32, 48, &o, &q, &err), NVFP4_OK);
    nvfp4_vview v;
    uint8_t *z = NULL;
    ck_assert_int_eq(nvfp4_vview_from_quantized(&q, true, &v, &z, &err), NVFP4_OK);
    ck_assert_uint_eq(v.rows, 48);
    ck_assert_uint_eq(v.cols, 32);
    ck_assert_uint_eq(v.block_rows, 1);
    ck_assert_uint_eq(v.block_cols, 16);
    ck_assert(!v.e4m3_elements && !v.ue8m0_scales);
    ck_assert_ptr_eq(v.data, q.col.data);
    ck_assert_uint_eq(v.data_bytes, 48 * 16);
    ck_assert_uint_eq(v.scale_bytes, 48 * 2);
    ck_assert_uint_eq(v.scale_swizzled_bytes, 512);
    ck_assert_ptr_eq(v.scale_swizzled, z);
    ck_assert_ptr_eq(v.amax, q.col.row_amax);
    ck_assert_uint_eq(v.amax_count, 48);
    ck_assert_ptr_null(v.x);
    ck_assert_ptr_null(v.dequant);

    nvfp4_verify_opts vo;
    nvfp4_verify_opts_init(&vo);
    nvfp4_vreport rep;
    ck_assert_int_eq(nvfp4_verify(&v, &v, &vo, &rep, &err), NVFP4_OK);
    ck_assert(nvfp4_vreport_match(&rep));
    nvfp4_vreport_free(&rep);
    float amax2[48];
    memcpy(amax2, q.col.row_amax, sizeof amax2);
    amax2[5] = nextafterf(amax2[5], INFINITY);
    nvfp4_vview bad = v;
    bad.amax = amax2;
    ck_assert_int_eq(nvfp4_verify(&v, &bad, &vo, &rep, &err), NVFP4_OK);
    ck_assert(!nvfp4_vreport_match(&rep));
    nvfp4_vreport_free(&rep);
    nvfp4_free(z);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(explain_text_and_errors)
{
    nvfp4_strbuf out = {0};
    nvfp4_error err = {0};
    /* 5.2 lies between E2M1's 4 and 6, nearer 6: RN gives code 0x7 */
    ck_assert_int_eq(nvfp4_explain("5.2", 5.2f, NVFP4_EXPLAIN_E2M1, NVFP4_RN, true, 0, &out, &err), NVFP4_OK);
    ck_assert_ptr_nonnull(out.data);
    ck_assert(strncmp(out.data, "input       5.2\n", 16) == 0);
    ck_assert_ptr_nonnull(strstr(out.data, "fp32 bits   0x40A66666: sign 0, exponent 0x81 (2^2), mantissa 0x266666\n"));
    ck_assert_ptr_nonnull(strstr(out.data, "neighbours  4 (0x6) and 6 (0x7)"));
    ck_assert_ptr_nonnull(strstr(out.data, "result      0x7 = 6\n"));
    nvfp4_strbuf_free(&out);
    memset(&out, 0, sizeof out);
    ck_assert_int_eq(nvfp4_explain("1", 1.0f, NVFP4_EXPLAIN_E4M3, NVFP4_SR, true, 0, &out, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "e4m3 is converted with rn only (as cuda_fp8.hpp does)");
    ck_assert_int_eq(nvfp4_explain("1", 1.0f, (nvfp4_explain_format)7, NVFP4_RN, true, 0, &out, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "unknown explain format 7");
    ck_assert_uint_eq(out.len, 0); /* nothing written on an error */
    nvfp4_strbuf_free(&out);
}
END_TEST


/* ---- proven or consistent (docs/verify.md) ---------------------------------------------------------------- */

/* Block b's amax is A * (b + 1) / 32 (the first A itself), its 15 other
 * elements one to three ulps around the E2M1 midpoints after te's encode
 * factor of the block's scale, so that a kernel whose S_enc is one ulp off
 * moves some codes (or scale bytes). */
static void boundary_input(float A, float *x)
{
    static const float mids[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    memset(x, 0, R * C * sizeof *x);
    for (size_t b = 0; b < R * C / 16; b++) x[b * 16] = A * (float)(b + 1) / 32.0f;
    x[0] = A;
    nvfp4_quantized q;
    quantize_te(x, NVFP4_RN, 0, 0, &q);
    for (size_t i = 0; i < R * C; i++) {
        size_t k = i % 16, b = i / 16;
        if (k == 0) continue;
        float f = nvfp4_verify_te_scaled(1.0f, q.row.scale[b], A), v = mids[(k + b) % 7] / f;
        for (int n = (int)((k * 3 + b) % 7) - 3; n != 0; n += n > 0 ? -1 : 1) v = nextafterf(v, n > 0 ? INFINITY : 0.0f);
        x[i] = (k + b) & 2 ? -v : v;
    }
    nvfp4_quantized_free(&q);
}

/* The kernel: catalogued mutant `name` run on x, writing data, scale and amax. */
static void mutant_kernel(const char *name, const float *x, nvfp4_tensor_set *a)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_mutant_output m;
    nvfp4_error err = {0};
    ck_assert_int_eq(nvfp4_mutant_quantize(nvfp4_mutant_find(name), x, NVFP4_DTYPE_F32, R, C, &o, &m, &err), NVFP4_OK);
    nvfp4_tset_init(a);
    add_u8(a, "data", m.q.row.data, m.q.row.data_bytes);
    add_u8(a, "scale", m.q.row.scale, m.q.row.scale_rows * m.q.row.scale_cols);
    add_f32(a, "amax", &m.q.row.amax, 1, 1);
    nvfp4_mutant_output_free(&m);
}

static const nvfp4_vcause_line *known_bug(const nvfp4_report *rep)
{
    const nvfp4_vreport *v = &rep->outputs[0].report;
    for (size_t i = 0; i < v->n_causes; i++)
        if (v->causes[i].cause == NVFP4_CAUSE_KNOWN_BUG) return &v->causes[i];
    return NULL;
}

/* A kernel computing S_enc as torch does for 2688.0 / amax (fl(fl(1/amax) * 2688)).
 * amax 1000: one ulp above te's S_enc, while torchao's reciprocal orders give te's;
 * but vLLM's and FlashInfer's references compute the global scale so too, and
 * on this input give the same bytes: consistent with them, not proven. With a
 * block whose scale underflows (vLLM writes 0 there, te's chain +-6) and a NaN
 * element (FlashInfer then writes every scale 0x7F) no other candidate gives
 * its bytes: proven, with a deciding element. amax 0.0123: torchao's
 * fl(1/fl(amax/2688)) is the same float as torch's: consistent with
 * global-recip-of-div, never proven. */
START_TEST(verify_torch_senc_proven_or_consistent)
{
    float x[R * C];
    nvfp4_tensor_set b, a;
    nvfp4_report rep;
    nvfp4_error err = {0};
    nvfp4_verify_bundle_opts o = verify_opts();

    boundary_input(1000.0f, x);
    golden_bundle(x, &b);
    mutant_kernel("global-torch-rdiv", x, &a);
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    const nvfp4_vcause_line *l = known_bug(&rep);
    ck_assert_ptr_nonnull(l);
    ck_assert_str_eq(l->step, "global-scale");
    ck_assert_int_eq(l->status, NVFP4_CAUSE_CONSISTENT);
    ck_assert_str_eq(l->alternatives, "vllm rn 1x16, flashinfer rn 1x16");
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);

    for (size_t k = 0; k < 16; k++) x[R * C - 16 + k] = 1e-6f * (float)(k + 1); /* scale underflows to 0 */
    x[5] = NAN;
    golden_bundle(x, &b);
    mutant_kernel("global-torch-rdiv", x, &a);
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    l = known_bug(&rep);
    ck_assert_ptr_nonnull(l);
    ck_assert_str_eq(l->step, "global-scale");
    ck_assert_int_eq(l->status, NVFP4_CAUSE_PROVEN);
    ck_assert_ptr_nonnull(strstr(l->line, "global-torch-rdiv: your kernel computes S_enc = fl(fl(1/amax) * 2688)"));
    ck_assert_str_eq(l->alternatives, "");
    ck_assert_ptr_nonnull(strstr(l->evidence, "global-inverted gives")); /* a deciding element of another global-scale candidate */
    ck_assert_ptr_nonnull(strstr(rep.text, "\n  step global-scale: proven: "));
    ck_assert_ptr_nonnull(strstr(rep.json, "\"status\": \"proven\""));
    ck_assert_ptr_nonnull(strstr(rep.json, "\"step\": \"global-scale\""));
    ck_assert_ptr_null(strstr(rep.text, "tie-rule")); /* the kernel's scaled values are not ties */
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);

    boundary_input(0.0123f, x);
    golden_bundle(x, &b);
    mutant_kernel("global-torch-rdiv", x, &a);
    ck_assert_int_eq(nvfp4_verify_bundle_report(&b, &a, &o, &rep, &err), NVFP4_OK);
    ck_assert_int_eq(rep.verdict, 1);
    l = known_bug(&rep);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->status, NVFP4_CAUSE_CONSISTENT);
    ck_assert_ptr_nonnull(strstr(l->line, "global-torch-rdiv: "));
    ck_assert_str_eq(l->alternatives, "global-recip-of-div, vllm rn 1x16, flashinfer rn 1x16");
    ck_assert_ptr_nonnull(strstr(rep.text, "\n  step global-scale: consistent with global-recip-of-div, vllm rn 1x16, "
                                           "flashinfer rn 1x16 (same bytes on this input)\n"));
    ck_assert_ptr_nonnull(strstr(rep.json, "\"alternatives\": [\n"));
    ck_assert_ptr_nonnull(strstr(rep.json, "\"global-recip-of-div\""));
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&a);
    nvfp4_tset_free(&b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, verify_golden_bytes_match);
    tcase_add_test(tc, verify_one_flipped_nibble);
    tcase_add_test(tc, verify_torch_senc_proven_or_consistent);
    tcase_add_test(tc, verify_bad_input_errors);
    tcase_add_test(tc, identify_ranks_te_first);
    tcase_add_test(tc, identify_bad_input_errors);
    tcase_add_test(tc, sr_test_bitexact_pass_and_one_flip);
    tcase_add_test(tc, sr_test_bad_input_errors);
    tcase_add_test(tc, gemm_check_exact_and_outside);
    tcase_add_test(tc, explain_text_and_errors);
    tcase_add_test(tc, vview_from_quantized_rowscaled_columnwise);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
