/* check_options.c - the quantize option table (nvfp4/options.h): every
 * row reachable by each spelling of its name, each option's values applied
 * to the named field, bad values refused with the option, the value and the
 * allowed values in the message (and the options left unchanged), the
 * orientation rules of nvfp4_options_finish, and nvfp4_options_format
 * reading back what nvfp4_options_set took. */
#include <check.h>
#include "support/check_main.h"
#include <string.h>

#include "nvfp4.h"

START_TEST(table_rows_in_id_order_and_found_by_every_spelling)
{
    const nvfp4_option *t = nvfp4_option_table();
    for (unsigned i = 0; i < NVFP4_OPTION_COUNT; i++) {
        ck_assert_uint_eq(t[i].id, i);
        ck_assert_ptr_nonnull(t[i].help);
        ck_assert_ptr_nonnull(t[i].default_value);
        ck_assert_ptr_eq(nvfp4_option_find(t[i].name), &t[i]);
    }
    ck_assert_ptr_eq(nvfp4_option_find("--rht-signs"), &t[NVFP4_OPTION_RHT_SIGNS]);
    ck_assert_ptr_eq(nvfp4_option_find("rht_signs"), &t[NVFP4_OPTION_RHT_SIGNS]);
    ck_assert_ptr_null(nvfp4_option_find("rht-sign"));
    ck_assert_ptr_null(nvfp4_option_find("rht-signs-x"));
    ck_assert_str_eq(t[NVFP4_OPTION_RHT_SIGNS].values, "te|seed:N|none");
    ck_assert_ptr_null(t[NVFP4_OPTION_PAD].values); /* a flag */
}
END_TEST

START_TEST(values_reach_their_fields)
{
    nvfp4_options o;
    nvfp4_options_init(&o);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_options_set(&o, "--recipe", "te-pow2", &err), NVFP4_OK);
    ck_assert_str_eq(o.quant.recipe, "te-pow2");
    ck_assert_int_eq(nvfp4_options_set(&o, "block", "16x16", &err), NVFP4_OK);
    ck_assert_int_eq(o.quant.block, NVFP4_BLOCK_16X16);
    ck_assert_int_eq(nvfp4_options_set(&o, "round", "sr", &err), NVFP4_OK);
    ck_assert_int_eq(o.quant.rounding, NVFP4_SR);
    ck_assert_int_eq(nvfp4_options_set(&o, "seed", "18446744073709551615", &err), NVFP4_OK);
    ck_assert_uint_eq(o.quant.seed, UINT64_MAX);
    ck_assert_int_eq(nvfp4_options_set(&o, "offset", "010", &err), NVFP4_OK); /* decimal, not octal */
    ck_assert_uint_eq(o.quant.offset, 10);
    ck_assert_int_eq(nvfp4_options_set(&o, "rht_signs", "seed:5", &err), NVFP4_OK);
    ck_assert_int_eq(o.quant.rht_signs, NVFP4_RHT_SIGNS_SEEDED);
    ck_assert_uint_eq(o.quant.rht_sign_seed, 5);
    ck_assert_int_eq(nvfp4_options_set(&o, "rht-signs", "none", &err), NVFP4_OK);
    ck_assert_int_eq(o.quant.rht_signs, NVFP4_RHT_SIGNS_NONE);
    ck_assert_int_eq(nvfp4_options_set(&o, "pad", NULL, &err), NVFP4_OK);
    ck_assert(o.quant.pad);
    ck_assert_int_eq(nvfp4_options_set(&o, "pad", "false", &err), NVFP4_OK);
    ck_assert(!o.quant.pad);
    ck_assert(nvfp4_options_named(&o, NVFP4_OPTION_PAD));
    ck_assert(!nvfp4_options_named(&o, NVFP4_OPTION_RHT));
}
END_TEST

/* status, message, and o unchanged */
static void expect_refused(const char *name, const char *value, const char *message)
{
    nvfp4_options o, before;
    nvfp4_options_init(&o);
    before = o;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_options_set(&o, name, value, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, message);
    ck_assert_mem_eq(&o, &before, sizeof o);
}

START_TEST(bad_values_name_the_option_and_the_allowed_values)
{
    expect_refused("--rht-signs", "maybe", "bad --rht-signs 'maybe' (te, seed:N or none)");
    expect_refused("rht_signs", "seed:0x5", "bad rht_signs 'seed:0x5' (te, seed:N or none)");
    expect_refused("rht-signs", "seed:", "bad rht-signs 'seed:' (te, seed:N or none)");
    expect_refused("--block", "2x2", "bad --block '2x2' (1x16, 16x16 or 1x32)");
    expect_refused("--round", "rz", "bad --round 'rz' (rn or sr)");
    expect_refused("--round", "RN", "bad --round 'RN' (rn or sr)"); /* exact: the CLI matches case first */
    expect_refused("--seed", "-1", "bad --seed '-1' (a decimal integer from 0 to 2^64-1)");
    expect_refused("--offset", "18446744073709551616", "bad --offset '18446744073709551616' (a decimal integer from 0 to 2^64-1)");
    expect_refused("--recipe", "nope", "unknown recipe 'nope' (a recipe name: `nvfp4 table --recipes` lists them)");
    expect_refused("--pad", "yes", "bad --pad 'yes' (a flag: true or false)");
    expect_refused("--pda", NULL, "unknown quantize option '--pda'");
}
END_TEST

static nvfp4_status finish(const char *const *flags, unsigned rules, nvfp4_options *o, nvfp4_error *err)
{
    nvfp4_options_init(o);
    for (; *flags; flags++) ck_assert_int_eq(nvfp4_options_set(o, *flags, NULL, err), NVFP4_OK);
    return nvfp4_options_finish(o, rules, err);
}

START_TEST(finish_decides_the_outputs_once)
{
    nvfp4_options o;
    nvfp4_error err;
    const unsigned sel = NVFP4_OPTIONS_RHT_SELECTS_COLUMNWISE;
    /* none named: rowwise only */
    ck_assert_int_eq(finish((const char *const[]){NULL}, 0, &o, &err), NVFP4_OK);
    ck_assert(o.quant.rowwise && !o.quant.columnwise);
    /* the named set: columnwise alone is columnwise only */
    ck_assert_int_eq(finish((const char *const[]){"columnwise", NULL}, 0, &o, &err), NVFP4_OK);
    ck_assert(!o.quant.rowwise && o.quant.columnwise);
    ck_assert_int_eq(finish((const char *const[]){"rowwise", "columnwise", NULL}, 0, &o, &err), NVFP4_OK);
    ck_assert(o.quant.rowwise && o.quant.columnwise);
    /* --rht: needs the columnwise output named, or selects it under the rule */
    ck_assert_int_eq(finish((const char *const[]){"rht", NULL}, 0, &o, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "--rht applies to the columnwise output: add --columnwise");
    ck_assert_int_eq(finish((const char *const[]){"rht", NULL}, sel, &o, &err), NVFP4_OK);
    ck_assert(!o.quant.rowwise && o.quant.columnwise && o.quant.rht);
    ck_assert_int_eq(finish((const char *const[]){"rht", "rowwise", NULL}, sel, &o, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "--rowwise excludes --rht (the RHT is on the columnwise output)");
    ck_assert_int_eq(finish((const char *const[]){"rht", "columnwise", "rowwise", NULL}, 0, &o, &err), NVFP4_OK);
    ck_assert(o.quant.rowwise && o.quant.columnwise && o.quant.rht);
}
END_TEST

START_TEST(format_reads_back_what_set_took)
{
    static const char *const pairs[][2] = {{"recipe", "torchao"}, {"block", "1x32"}, {"round", "sr"},
                                           {"seed", "18446744073709551615"}, {"offset", "7"},
                                           {"rht-signs", "seed:42"}, {"rht-signs", "none"}, {"rht-signs", "te"},
                                           {"pad", "true"}, {"rht-fp32", "false"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        nvfp4_options o;
        nvfp4_options_init(&o);
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_options_set(&o, pairs[i][0], pairs[i][1], &err), NVFP4_OK);
        char buf[32];
        ck_assert(nvfp4_options_format(&o.quant, nvfp4_option_find(pairs[i][0])->id, buf, sizeof buf));
        ck_assert_str_eq(buf, pairs[i][1]);
    }
    nvfp4_quant_opts q;
    nvfp4_quant_opts_init(&q);
    char small[4];
    ck_assert(nvfp4_options_format(&q, NVFP4_OPTION_RECIPE, small, sizeof small)); /* NULL recipe reads "te" */
    ck_assert_str_eq(small, "te");
    q.rht_signs = NVFP4_RHT_SIGNS_SEEDED;
    q.rht_sign_seed = 12345;
    ck_assert(!nvfp4_options_format(&q, NVFP4_OPTION_RHT_SIGNS, small, sizeof small)); /* too small */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, table_rows_in_id_order_and_found_by_every_spelling);
    tcase_add_test(tc, values_reach_their_fields);
    tcase_add_test(tc, bad_values_name_the_option_and_the_allowed_values);
    tcase_add_test(tc, finish_decides_the_outputs_once);
    tcase_add_test(tc, format_reads_back_what_set_took);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
