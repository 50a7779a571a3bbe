/* check_gscale.c - reading the global scale back from block scale bytes
 * (src/verify/gscale.c; docs/verify.md, "The global scale a kernel used").
 * Hand-derived intervals: te's byte of a block of amax 6 is
 * e4m3(6 * fl(S_enc * fl(1/6))), about e4m3(S_enc), so byte 0x38 (1.0, an
 * even code: both midpoints round to it) admits S_enc from the midpoint
 * 0.96875 below to 1.0625 above; torchao's byte of amax 6 is
 * e4m3((6/6)/g) = e4m3(1/g), falling as g grows. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "recipes/recipe.h"
#include "support/check_main.h"
#include "verify/gscale.h"

static const nvfp4_core_recipe *core_of(const char *name) { return nvfp4_recipe_core(nvfp4_recipe_find(name)); }

static float next_up(float x) { return nextafterf(x, INFINITY); }
static float next_down(float x) { return nextafterf(x, 0.0f); }

START_TEST(te_block_of_amax_6_byte_1_0)
{
    const nvfp4_core_recipe *te = core_of("te");
    float lo = 0.0f, hi = 0.0f;
    ck_assert(nvfp4_gscale_block_interval(te, 6.0f, 0x38, &lo, &hi));
    ck_assert_float_eq_tol(lo, 0.96875f, 1e-6f);
    ck_assert_float_eq_tol(hi, 1.0625f, 1e-6f);
    /* the ends are tight: one fp32 step outside gives the neighbouring code */
    ck_assert_uint_eq(nvfp4_gscale_byte_at(te, lo, 6.0f), 0x38);
    ck_assert_uint_eq(nvfp4_gscale_byte_at(te, next_down(lo), 6.0f), 0x37);
    ck_assert_uint_eq(nvfp4_gscale_byte_at(te, hi, 6.0f), 0x38);
    ck_assert_uint_eq(nvfp4_gscale_byte_at(te, next_up(hi), 6.0f), 0x39);
}
END_TEST

START_TEST(two_blocks_intersect_and_conflict)
{
    const nvfp4_core_recipe *te = core_of("te");
    /* block amax 6 with byte 0x38 (S_enc in [0.96875, 1.0625]) and block amax 3 with byte 0x30 (0.5: S_enc/2
     * rounds to 0.5 for S_enc in [0.96875, 1.0625] as well, with its midpoints 0.484375 and 0.53125) */
    float bamax[3] = {6.0f, 3.0f, NAN};
    uint8_t bytes[3] = {0x38, 0x30, 0x7F};
    nvfp4_gscale_interval iv;
    nvfp4_gscale_infer(te, bamax, bytes, 3, &iv);
    ck_assert(iv.applies && !iv.empty && !iv.decode);
    ck_assert_uint_eq(iv.blocks, 2); /* the NaN block does not constrain */
    ck_assert_float_eq_tol(iv.lo, 0.96875f, 1e-6f);
    ck_assert_float_eq_tol(iv.hi, 1.0625f, 1e-6f);
    /* a second block that needs S_enc about 2 leaves nothing: it is named */
    bytes[1] = 0x38; /* 3 * S_enc/6 = 1.0 needs S_enc about 2 */
    nvfp4_gscale_infer(te, bamax, bytes, 2, &iv);
    ck_assert(iv.applies && iv.empty);
    ck_assert_uint_eq(iv.conflict, 1);
    /* a byte no positive S_enc gives (negative) */
    bytes[0] = 0xB8;
    nvfp4_gscale_infer(te, bamax, bytes, 1, &iv);
    ck_assert(iv.empty);
}
END_TEST

START_TEST(torchao_decode_scale_falls)
{
    const nvfp4_core_recipe *ao = core_of("torchao");
    float lo = 0.0f, hi = 0.0f;
    /* e4m3(1/g) = 1.0 for 1/g in [0.96875, 1.0625]: g in [1/1.0625, 1/0.96875] */
    ck_assert(nvfp4_gscale_block_interval(ao, 6.0f, 0x38, &lo, &hi));
    ck_assert_float_eq_tol(lo, 1.0f / 1.0625f, 1e-6f);
    ck_assert_float_eq_tol(hi, 1.0f / 0.96875f, 1e-6f);
    ck_assert_uint_eq(nvfp4_gscale_byte_at(ao, next_down(lo), 6.0f), 0x39);
    ck_assert_uint_eq(nvfp4_gscale_byte_at(ao, next_up(hi), 6.0f), 0x37);
    float bamax = 6.0f;
    uint8_t byte = 0x38;
    nvfp4_gscale_interval iv;
    nvfp4_gscale_infer(ao, &bamax, &byte, 1, &iv);
    ck_assert(iv.applies && iv.decode && !iv.empty);
    ck_assert(iv.lo == lo && iv.hi == hi);
}
END_TEST

START_TEST(non_monotone_rules_do_not_apply)
{
    bool decode;
    ck_assert(!nvfp4_gscale_monotone(core_of("compressed-tensors"), &decode)); /* zero scale -> 0.125 */
    ck_assert(!nvfp4_gscale_monotone(core_of("te-4over6"), &decode));
    ck_assert(!nvfp4_gscale_monotone(core_of("mxfp4-floor"), &decode));
    ck_assert(!nvfp4_gscale_monotone(core_of("te-rowscaled"), &decode)); /* one S_enc per row */
    ck_assert(nvfp4_gscale_monotone(core_of("vllm"), &decode) && !decode);
    ck_assert(nvfp4_gscale_monotone(core_of("modelopt"), &decode) && decode);
}
END_TEST

START_TEST(named_candidates_of_te)
{
    /* amax 0.0123: te's fminf(2688/amax) and torch's fl(fl(1/amax)*2688) are one ulp apart */
    nvfp4_gscale_named c[48];
    size_t n = nvfp4_gscale_candidates(core_of("te"), 0.0123f, c, 48);
    float te = 0.0f, rdiv = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(c[i].name, "te") == 0 || strncmp(c[i].name, "te, ", 4) == 0) te = c[i].value;
        if (strstr(c[i].name, "global-torch-rdiv")) rdiv = c[i].value;
    }
    ck_assert_float_eq(te, 2688.0f / 0.0123f);
    ck_assert_float_eq(rdiv, (1.0f / 0.0123f) * 2688.0f);
    ck_assert(te != rdiv);
    ck_assert(nextafterf(te, INFINITY) == rdiv);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gscale");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, te_block_of_amax_6_byte_1_0);
    tcase_add_test(tc, two_blocks_intersect_and_conflict);
    tcase_add_test(tc, torchao_decode_scale_falls);
    tcase_add_test(tc, non_monotone_rules_do_not_apply);
    tcase_add_test(tc, named_candidates_of_te);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
