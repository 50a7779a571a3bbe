/* check_pack.c - golden packs through the library (nvfp4/suite.h), as a C
 * caller reaches them: nvfp4_pack_generate writes the default pack (pack.json
 * with 5 vector files and 10 suites); nvfp4_pack_is knows a pack by its
 * folder or MANIFEST and nothing else; the pack verifies against itself; a
 * decoder output changed in one row is reported with its row and input
 * (verdict 1); sr.json's random bytes are the SR contract's
 * (nvfp4_sr_block_bytes) and each of its codes is the scalar SR encoder of
 * its scaled value and random byte; bad arguments get EINVAL with a
 * message. The CLI (tests/cli/test_golden_pack.sh) and Python
 * (python/tests/test_nvfp4kit_pack.py) check the same bytes. */
#include <check.h>
#include "support/check_main.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4.h"
#include "nvfp4/philox.h"
#include "nvfp4/suite.h"

static char tmpdir[256];

static char *path_in(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static void make_pack(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/check_pack.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_pack_generate(path_in("P"), NULL, &err), NVFP4_OK);
}

static void remove_tmp(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    ck_assert_msg(j != NULL, "%s: %s", path, je.text);
    return j;
}

static json_t *table(json_t *file, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(file, "tables"), i, t) if (strcmp(json_string_value(json_object_get(t, "name")),
                                                                          name) == 0) return t;
    ck_abort_msg("no table %s", name);
    return NULL;
}

static json_int_t at(json_t *t, const char *side, const char *col, size_t i)
{
    return json_integer_value(json_array_get(json_object_get(json_object_get(t, side), col), i));
}

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float float_of(json_int_t b)
{
    uint32_t u = (uint32_t)b;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

START_TEST(pack_written_and_known)
{
    make_pack();
    json_t *index = load(path_in("P/pack.json"));
    ck_assert_str_eq(json_string_value(json_object_get(index, "format")), "nvfp4kit-golden-pack");
    ck_assert_uint_eq(json_array_size(json_object_get(index, "vectors")), 5);
    ck_assert_uint_eq(json_array_size(json_object_get(index, "suites")), 10);
    json_decref(index);
    ck_assert(nvfp4_pack_is(path_in("P")));
    ck_assert(nvfp4_pack_is(path_in("P/MANIFEST")));
    ck_assert(!nvfp4_pack_is(tmpdir));
    ck_assert(!nvfp4_pack_is(path_in("P/suite-te-edge-rn-cublas-128x4")));
    ck_assert(!nvfp4_pack_is(path_in("P/suite-te-edge-rn-cublas-128x4/MANIFEST")));
    /* E4M3 0x7E decodes to 448 and 464 (a tie) encodes to it in both modes */
    json_t *e4m3 = load(path_in("P/e4m3.json")), *enc = table(e4m3, "encode");
    ck_assert_int_eq(at(table(e4m3, "decode"), "outputs", "value_bits", 0x7E), bits_of(448.0f));
    size_t n = json_array_size(json_object_get(json_object_get(enc, "inputs"), "x_bits")), found = 0;
    for (size_t i = 0; i < n; i++)
        if (at(enc, "inputs", "x_bits", i) == bits_of(464.0f)) {
            ck_assert_int_eq(at(enc, "outputs", "satfinite", i), 0x7E);
            ck_assert_int_eq(at(enc, "outputs", "nonsat", i), 0x7E);
            found++;
        }
    ck_assert_uint_eq(found, 1);
    json_decref(e4m3);
    remove_tmp();
}
END_TEST

START_TEST(pack_verifies_itself_and_names_a_planted_error)
{
    make_pack();
    char *text = NULL;
    int verdict = -1;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_pack_verify(path_in("P"), path_in("P"), NULL, &text, &verdict, &err), NVFP4_OK);
    ck_assert_int_eq(verdict, 0);
    ck_assert_ptr_nonnull(strstr(text, "pack: 15 parts match, 0 differ, 0 missing, 0 unreadable\n"));
    nvfp4_free(text);
    /* a decoder that returns 0.5 for code 2 (1.0) */
    ck_assert_int_eq(mkdir(path_in("O"), 0755), 0);
    json_t *e2m1 = load(path_in("P/e2m1.json"));
    json_array_set_new(json_object_get(json_object_get(table(e2m1, "decode"), "outputs"), "value_bits"), 2,
                       json_integer(bits_of(0.5f)));
    ck_assert_int_eq(json_dump_file(e2m1, path_in("O/e2m1.json"), 0), 0);
    json_decref(e2m1);
    ck_assert_int_eq(nvfp4_pack_verify(path_in("P"), path_in("O"), NULL, &text, &verdict, &err), NVFP4_OK);
    ck_assert_int_eq(verdict, 1);
    ck_assert_ptr_nonnull(strstr(text, "  e2m1.json decode.value_bits[2]: expected 1065353216 (0x3f800000), got "
                                       "1056964608 (0x3f000000); code=2 value=1\n"));
    ck_assert_ptr_nonnull(strstr(text, "pack: 0 parts match, 1 differ, 14 missing, 0 unreadable\n"));
    nvfp4_free(text);
    nvfp4_suite_verify_opts so;
    nvfp4_suite_verify_opts_init(&so);
    so.require_all = true;
    ck_assert_int_eq(nvfp4_pack_verify(path_in("P"), path_in("O"), &so, &text, &verdict, &err), NVFP4_OK);
    ck_assert_int_eq(verdict, 1);
    nvfp4_free(text);
    remove_tmp();
}
END_TEST

/* Every element of every sr.json table: its byte is the contract's, its
 * code the scalar SR encoder of (scaled value, byte). */
START_TEST(sr_json_is_the_sr_contract)
{
    make_pack();
    json_t *sr = load(path_in("P/sr.json"));
    size_t ti, checked = 0;
    json_t *t;
    json_array_foreach(json_object_get(sr, "tables"), ti, t)
    {
        size_t rows = (size_t)json_integer_value(json_object_get(t, "rows"));
        size_t cols = (size_t)json_integer_value(json_object_get(t, "cols"));
        uint64_t seed = (uint64_t)json_integer_value(json_object_get(t, "seed"));
        uint64_t offset = (uint64_t)json_integer_value(json_object_get(t, "offset"));
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                size_t i = r * cols + c;
                uint8_t bytes[16];
                nvfp4_sr_block_bytes(seed, offset, r * (cols / 16) + c / 16, bytes);
                ck_assert_int_eq(at(t, "inputs", "rbits", i), bytes[c % 16]);
                float y = float_of(at(t, "inputs", "scaled_bits", i));
                ck_assert_int_eq(at(t, "outputs", "code", i), nvfp4_e2m1_from_f32(y, NVFP4_SR, bytes[c % 16]));
                checked++;
            }
    }
    ck_assert_uint_eq(checked, 16 * 48 + 16 * 64 + 16 * 32);
    json_decref(sr);
    remove_tmp();
}
END_TEST

START_TEST(pack_errors)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/check_pack.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    nvfp4_error err;
    nvfp4_pack_opts o;
    nvfp4_pack_opts_init(&o);
    ck_assert_int_eq(nvfp4_pack_generate(NULL, &o, &err), NVFP4_EINVAL);
    o.recipe = "nope";
    ck_assert_int_eq(nvfp4_pack_generate(path_in("X"), &o, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown recipe 'nope'"));
    ck_assert_int_ne(access(path_in("X"), F_OK), 0);
    char *text = (char *)1;
    int verdict = -1;
    ck_assert_int_eq(nvfp4_pack_verify(tmpdir, path_in("none"), NULL, &text, &verdict, &err), NVFP4_EINVAL);
    ck_assert_ptr_null(text);
    ck_assert_int_eq(verdict, 2);
    ck_assert_ptr_nonnull(strstr(err.message, "not a folder"));
    ck_assert_int_eq(nvfp4_pack_verify(tmpdir, tmpdir, NULL, &text, &verdict, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "pack.json"));
    remove_tmp();
}
END_TEST

static Suite *pack_suite(void)
{
    Suite *s = suite_create("pack");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, pack_written_and_known);
    tcase_add_test(tc, pack_verifies_itself_and_names_a_planted_error);
    tcase_add_test(tc, sr_json_is_the_sr_contract);
    tcase_add_test(tc, pack_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nvfp4_check_run(pack_suite()); }
