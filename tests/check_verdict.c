/* check_verdict.c - the laboratory's statistics and verdict rules
 * (src/study/verdict.c): the paired t-interval and its p-value against
 * hand-computed values, Holm's correction on a hand-computed example, the
 * deterministic bootstrap, and each verdict rule on hand-made estimates. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/verdict.h"

/* d = 1..5: mean 3, s = sqrt(2.5), se = sqrt(0.5); t(0.975, 4) = 2.7764451051977934
 * and 2 Q_t(3 / sqrt(0.5), 4) = 0.01323559956368269 (scipy.stats.t, independently) */
START_TEST(t_interval_hand_computed)
{
    const double d[5] = {1, 2, 3, 4, 5};
    st_estimate e;
    st_est_t(d, 5, &e);
    double h = 2.7764451051977934 * sqrt(0.5);
    ck_assert_uint_eq(e.n, 5);
    ck_assert_double_eq_tol(e.est, 3.0, 1e-15);
    ck_assert_double_eq_tol(e.lo, 3.0 - h, 1e-9);
    ck_assert_double_eq_tol(e.hi, 3.0 + h, 1e-9);
    ck_assert_double_eq_tol(e.p, 0.01323559956368269, 1e-9);
    ck_assert_double_eq(e.null_value, 0.0);
    /* one seed: no interval, p = 1 */
    st_est_t(d, 1, &e);
    ck_assert(isnan(e.lo) && isnan(e.hi));
    ck_assert_double_eq(e.p, 1.0);
    /* identical differences: no spread; zero is p = 1, non-zero p = 0 */
    const double z[3] = {0, 0, 0}, c[3] = {2, 2, 2};
    st_est_t(z, 3, &e);
    ck_assert_double_eq(e.p, 1.0);
    st_est_t(c, 3, &e);
    ck_assert_double_eq(e.p, 0.0);
}
END_TEST

/* p = {0.01, 0.04, 0.03, 0.005}: sorted 0.005 x4 = 0.02, 0.01 x3 = 0.03,
 * 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> raised to the running max 0.06. */
START_TEST(holm_hand_computed)
{
    const double p[4] = {0.01, 0.04, 0.03, 0.005};
    double a[4];
    st_holm(p, 4, a);
    ck_assert_double_eq_tol(a[0], 0.03, 1e-15);
    ck_assert_double_eq_tol(a[1], 0.06, 1e-15);
    ck_assert_double_eq_tol(a[2], 0.06, 1e-15);
    ck_assert_double_eq_tol(a[3], 0.02, 1e-15);
    const double q[2] = {0.6, 0.5}; /* 0.5 x2 = 1.0 (capped), 0.6 -> 1.0 */
    st_holm(q, 2, a);
    ck_assert_double_eq(a[0], 1.0);
    ck_assert_double_eq(a[1], 1.0);
    const double one[1] = {0.03}; /* a family of one: unchanged */
    st_holm(one, 1, a);
    ck_assert_double_eq(a[0], 0.03);
}
END_TEST

static double mean_stat(const size_t *idx, size_t n, const void *ctx)
{
    const double *x = ctx;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[idx[i]];
    return s / (double)n;
}

START_TEST(bootstrap_deterministic)
{
    const double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    st_estimate a, b;
    st_est_boot(mean_stat, x, 10, 0.0, &a);
    st_est_boot(mean_stat, x, 10, 0.0, &b);
    ck_assert(!memcmp(&a.lo, &b.lo, sizeof a.lo) && !memcmp(&a.hi, &b.hi, sizeof a.hi) && a.p == b.p);
    ck_assert_double_eq(a.est, 5.5);
    /* the mean of 10 draws from 1..10 (sd 2.87/sqrt(10) = 0.91): the 95% interval is about 5.5 -+ 1.8 */
    ck_assert(a.lo > 3.0 && a.lo < 5.0 && a.hi > 6.0 && a.hi < 8.0);
    /* every replicate above the null: p = 2 (0 + 1) / (2000 + 1) */
    ck_assert_double_eq(a.p, 2.0 / 2001.0);
    /* a constant sample: the interval collapses onto it */
    const double c[4] = {1.25, 1.25, 1.25, 1.25};
    st_est_boot(mean_stat, c, 4, 1.0, &a);
    ck_assert_double_eq(a.lo, 1.25);
    ck_assert_double_eq(a.hi, 1.25);
}
END_TEST

static st_verdict decide(double est, double lo, double hi, double null_value, double p_holm, int sign, double pub,
                         const char **rule)
{
    st_estimate e = {"hand-made", 10, est, lo, hi, null_value, p_holm};
    return st_verdict_decide(&e, p_holm, sign, pub, rule);
}

START_TEST(verdict_rules)
{
    const char *r;
    /* excludes zero, the published value inside the interval */
    ck_assert_int_eq(decide(3, 1.04, 4.96, 0, 0.01, +1, 4.0, &r), ST_V_REPRODUCED);
    /* excludes zero, published 7 outside the interval but its band [3.5, 10.5] meets it */
    ck_assert_int_eq(decide(3, 1.04, 4.96, 0, 0.01, +1, 7.0, &r), ST_V_REPRODUCED);
    /* right sign, the published value far outside: [10, 30] misses [1.04, 4.96] */
    ck_assert_int_eq(decide(3, 1.04, 4.96, 0, 0.01, +1, 20.0, &r), ST_V_DIRECTION);
    /* s3-switch's shape: 0.21 [0.18, 0.24] of the gap against 2/3 ([1/3, 1]) */
    ck_assert_int_eq(decide(0.21, 0.18, 0.24, 0, 1e-4, +1, 2.0 / 3.0, &r), ST_V_DIRECTION);
    /* a direction-only claim: significant in its direction */
    ck_assert_int_eq(decide(3, 1.04, 4.96, 0, 0.01, +1, NAN, &r), ST_V_REPRODUCED);
    /* significant with the wrong sign */
    ck_assert_int_eq(decide(-3, -4.96, -1.04, 0, 0.01, +1, 4.0, &r), ST_V_NOT);
    ck_assert_int_eq(decide(-3, -4.96, -1.04, 0, 0.01, +1, NAN, &r), ST_V_NOT);
    /* a negative published direction */
    ck_assert_int_eq(decide(-3, -4.96, -1.04, 0, 0.01, -1, -4.0, &r), ST_V_REPRODUCED);
    /* contains zero, the band [0.5, 1.5] still reachable */
    ck_assert_int_eq(decide(0.5, -0.5, 1.5, 0, 0.2, +1, 1.0, &r), ST_V_INCONCLUSIVE);
    /* contains zero but lies below the published value -50%: the size is excluded */
    ck_assert_int_eq(decide(0.05, -0.1, 0.2, 0, 0.5, +1, 2.0 / 3.0, &r), ST_V_NOT);
    /* the raw interval excludes zero but Holm does not: inconclusive */
    ck_assert_int_eq(decide(3, 1.04, 4.96, 0, 0.09, +1, 4.0, &r), ST_V_INCONCLUSIVE);
    /* one seed: no interval */
    ck_assert_int_eq(decide(3, NAN, NAN, 0, 1.0, +1, 4.0, &r), ST_V_INCONCLUSIVE);
    /* a ratio (null 1): 1.08 [0.95, 1.30] vs 1.36 (band 1.18..1.54): inconclusive;
     * 1.08 [1.02, 1.12] significant: direction only; 1.30 [1.2, 1.4]: reproduced */
    ck_assert_int_eq(decide(1.08, 0.95, 1.30, 1, 0.3, +1, 1.36, &r), ST_V_INCONCLUSIVE);
    ck_assert_int_eq(decide(1.08, 1.02, 1.12, 1, 0.01, +1, 1.36, &r), ST_V_DIRECTION);
    ck_assert_int_eq(decide(1.30, 1.2, 1.4, 1, 0.01, +1, 1.36, &r), ST_V_REPRODUCED);
    /* not reached within the arms (NAN counts as +inf), significant: consistent with any larger factor */
    ck_assert_int_eq(decide(NAN, 1.3, INFINITY, 1, 0.001, +1, 1.36, &r), ST_V_REPRODUCED);
    ck_assert_str_eq(st_verdict_name(ST_V_DIRECTION), "direction only");
    ck_assert_str_eq(st_verdict_name(ST_V_NOT), "not reproduced");
}
END_TEST

/* The summary path: Holm over a study's estimated findings only, then each verdict. */
START_TEST(finalize_applies_holm)
{
    json_t *arr = json_array();
    st_estimate a = {"paired t", 10, 3, 1, 5, 0, 0.03}, b = {"paired t", 10, 2, 1, 3, 0, 0.02};
    const char *arms[2] = {"x", "y"};
    st_finding_est(arr, "a", "src", "m", &a, +1, NAN, "gap difference", arms, 2);
    st_finding(arr, "fixed", "src", "m", "measurement");
    st_finding_est(arr, "b", "src", "m", &b, +1, 2.0, "gap difference", arms, 2);
    st_verdicts_finalize(arr);
    json_t *fa = json_array_get(arr, 0), *ff = json_array_get(arr, 1), *fb = json_array_get(arr, 2);
    /* Holm of {0.03, 0.02}: 0.02 x2 = 0.04, 0.03 x1 -> 0.04 */
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_object_get(fa, "stats"), "p_holm")), 0.04, 1e-15);
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_object_get(fb, "stats"), "p_holm")), 0.04, 1e-15);
    ck_assert_str_eq(json_string_value(json_object_get(fa, "verdict")), "reproduced");
    ck_assert_str_eq(json_string_value(json_object_get(fb, "verdict")), "reproduced");
    ck_assert_str_eq(json_string_value(json_object_get(ff, "verdict")), "measurement");
    ck_assert_ptr_null(json_object_get(ff, "stats"));
    ck_assert_double_eq(json_real_value(json_object_get(fb, "published")), 2.0);
    json_decref(arr);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verdict");
    TCase *t = tcase_create("verdict");
    tcase_add_test(t, t_interval_hand_computed);
    tcase_add_test(t, holm_hand_computed);
    tcase_add_test(t, bootstrap_deterministic);
    tcase_add_test(t, verdict_rules);
    tcase_add_test(t, finalize_applies_holm);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
