/* check_gradprobe.c - the bias / variance / cosine estimator of S5
 * (src/study/gradprobe.c) on hand-computed cases. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "study/gradprobe.h"

/* g = (1, 0); draws (2,0), (0,0), (1,1), (1,-1): mean (1, 0), so no bias;
 * each draw is 1 away from g: one-draw squared error 1, spread around the
 * mean 4 / (K - 1) = 4/3; the first draw alone is 1 off; cosines 1, 0 (a
 * zero draw), 1/sqrt(2), 1/sqrt(2). */
START_TEST(unbiased_hand_case)
{
    const float g[2] = {1, 0}, d[4][2] = {{2, 0}, {0, 0}, {1, 1}, {1, -1}};
    st_gradprobe p;
    ck_assert(st_gradprobe_init(&p, g, 2, 1));
    for (int k = 0; k < 4; k++) st_gradprobe_add(&p, d[k]);
    st_gradprobe_stats s;
    st_gradprobe_finish(&p, &s);
    ck_assert_double_eq(s.grad_norm, 1.0);
    ck_assert_double_eq(s.rel_mse1, 1.0);
    ck_assert_double_eq(s.rel_bias, 0.0);
    ck_assert_double_eq(s.rel_bias_sub, 1.0);
    ck_assert_double_eq_tol(s.rel_var, 4.0 / 3.0, 1e-15);
    ck_assert_double_eq(s.rel_bias_debiased, 0.0);
    ck_assert_double_eq_tol(s.cos_mean, (1.0 + 0.0 + 2.0 / sqrt(2.0)) / 4.0, 1e-15);
    st_gradprobe_free(&p);
}
END_TEST

/* g = (3, 4), ||g|| = 5; three identical draws (3, 0): a pure bias of 4,
 * relative 0.8, no spread; the K-draw and the one-draw means agree, so the
 * bias does not shrink with K (what S5 reads as RTN's signature). */
START_TEST(pure_bias_hand_case)
{
    const float g[2] = {3, 4}, d[2] = {3, 0};
    st_gradprobe p;
    ck_assert(st_gradprobe_init(&p, g, 2, 1));
    for (int k = 0; k < 3; k++) st_gradprobe_add(&p, d);
    st_gradprobe_stats s;
    st_gradprobe_finish(&p, &s);
    ck_assert_double_eq(s.grad_norm, 5.0);
    ck_assert_double_eq_tol(s.rel_bias, 0.8, 1e-15);
    ck_assert_double_eq(s.rel_bias, s.rel_bias_sub);
    ck_assert_double_eq(s.rel_var, 0.0);
    ck_assert_double_eq_tol(s.rel_bias_debiased, 0.8, 1e-15);
    ck_assert_double_eq_tol(s.rel_mse1, 16.0 / 25.0, 1e-15);
    ck_assert_double_eq_tol(s.cos_mean, 9.0 / (3.0 * 5.0), 1e-15);
    st_gradprobe_free(&p);
}
END_TEST

/* bias and noise together: g = (1), draws 1.5 and 2.5: mean 2 (bias 1),
 * spread ((0.5)^2 + (0.5)^2) / 1 = 0.5; E||mean - g||^2 = b^2 + var/K, so the
 * debiased bias is sqrt(1 - 0.5/2) = sqrt(0.75). */
START_TEST(debiased_hand_case)
{
    const float g[1] = {1}, d[2][1] = {{1.5f}, {2.5f}};
    st_gradprobe p;
    ck_assert(st_gradprobe_init(&p, g, 1, 1));
    st_gradprobe_add(&p, d[0]);
    st_gradprobe_add(&p, d[1]);
    st_gradprobe_stats s;
    st_gradprobe_finish(&p, &s);
    ck_assert_double_eq_tol(s.rel_bias, 1.0, 1e-15);
    ck_assert_double_eq_tol(s.rel_bias_sub, 0.5, 1e-15);
    ck_assert_double_eq_tol(s.rel_var, 0.5, 1e-15);
    ck_assert_double_eq_tol(s.rel_bias_debiased, sqrt(0.75), 1e-15);
    ck_assert_double_eq_tol(s.rel_mse1, (0.25 + 2.25) / 2.0, 1e-15);
    st_gradprobe_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gradprobe");
    TCase *t = tcase_create("gradprobe");
    tcase_add_test(t, unbiased_hand_case);
    tcase_add_test(t, pure_bias_hand_case);
    tcase_add_test(t, debiased_hand_case);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
