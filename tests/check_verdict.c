/* check_verdict.c - the laboratory's statistics and verdict rules
 * (src/study/verdict.c): the paired t-interval and its p-value against
 * hand-computed values, Holm's correction on a hand-computed example, the
 * deterministic bootstrap, and each verdict rule on hand-made estimates:
 * the out-of-reach band, the tie, seeds_needed and underpowered, and the
 * fraction of a gap as a ratio of means with its bootstrap interval. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/splitmix.h"
#include "study/summary.h"
#include "study/verdict.h"
#include "study/rng.h"

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
    return st_verdict_decide(&e, p_holm, sign, pub, NAN, rule);
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

/* A published band beyond the largest value the run can reach decides
 * nothing: the s8 case, NVFP4 - FP8 = 0.135 [0.030, 0.241] points
 * against 1.5 (band [0.75, 2.25]) while gap(NVFP4) itself is at most 0.16. */
START_TEST(verdict_unreachable_band)
{
    const char *r;
    st_estimate e = {"paired t", 10, 0.135, 0.030, 0.241, 0.0, 0.01};
    /* reachable (no ceiling): significant, band missed: direction only */
    ck_assert_int_eq(st_verdict_decide(&e, 0.01, +1, 1.5, NAN, &r), ST_V_DIRECTION);
    /* out of reach: still direction only, with the reach named in the rule */
    ck_assert_int_eq(st_verdict_decide(&e, 0.01, +1, 1.5, 0.16, &r), ST_V_DIRECTION);
    ck_assert_ptr_nonnull(strstr(r, "beyond the largest value this run can reach"));
    /* not significant, the interval entirely below 0.75: "not reproduced"
     * when the band is reachable (ceiling 0.75 = band_lo reaches it), never
     * when it is not (ceiling 0.16, or 0.7499) */
    st_estimate w = {"paired t", 10, 0.05, -0.05, 0.15, 0.0, 0.3};
    ck_assert_int_eq(st_verdict_decide(&w, 0.3, +1, 1.5, NAN, &r), ST_V_NOT);
    ck_assert_int_eq(st_verdict_decide(&w, 0.3, +1, 1.5, 0.75, &r), ST_V_NOT);
    ck_assert_int_eq(st_verdict_decide(&w, 0.3, +1, 1.5, 0.16, &r), ST_V_INCONCLUSIVE);
    ck_assert_int_eq(st_verdict_decide(&w, 0.3, +1, 1.5, 0.7499, &r), ST_V_INCONCLUSIVE);
    ck_assert_ptr_nonnull(strstr(r, "rules nothing out"));
    /* the opposite sign, significant, refutes the direction whatever the reach */
    st_estimate o = {"paired t", 10, -0.1, -0.15, -0.05, 0.0, 0.001};
    ck_assert_int_eq(st_verdict_decide(&o, 0.001, +1, 1.5, 0.16, &r), ST_V_NOT);
    /* a fraction with ceiling 1 against the published 1.0 (band [0.5, 1.5]) is reachable */
    st_estimate f = {"paired percentile bootstrap", 10, 0.93, 0.6, 1.2, 0.0, 0.001};
    ck_assert_int_eq(st_verdict_decide(&f, 0.001, +1, 1.0, 1.0, &r), ST_V_REPRODUCED);
    /* the ceiling travels through summary.json: finalize reads it back */
    json_t *arr = json_array();
    const char *arms[2] = {"paper", "fp8"};
    st_finding_set_ceiling(st_finding_est(arr, "c", "src", "m", &w, +1, 1.5, "gap difference", arms, 2), 0.16);
    st_verdicts_finalize(arr);
    json_t *x = json_array_get(arr, 0);
    ck_assert_str_eq(json_string_value(json_object_get(x, "verdict")), "inconclusive");
    ck_assert_double_eq(json_real_value(json_object_get(json_object_get(x, "stats"), "ceiling")), 0.16);
    json_decref(arr);
}
END_TEST

/* A tie is never a win: equal means (every per-seed difference 0, s6's
 * --quick E4M3 RN against SR) are inconclusive, even with a small p. */
START_TEST(verdict_tie)
{
    const char *r;
    const double z[4] = {0, 0, 0, 0};
    st_estimate e;
    st_est_t(z, 4, &e);
    ck_assert_double_eq(e.est, 0.0);
    ck_assert_double_eq(e.p, 1.0);
    e.lo = -0.1; /* a hand-made spread around the tie */
    e.hi = 0.1;
    ck_assert_int_eq(st_verdict_decide(&e, 1.0, +1, NAN, NAN, &r), ST_V_INCONCLUSIVE);
    ck_assert_ptr_nonnull(strstr(r, "a tie"));
    /* even a (hand-made) significant p does not make a tie a win or a loss */
    ck_assert_int_eq(st_verdict_decide(&e, 0.001, +1, NAN, NAN, &r), ST_V_INCONCLUSIVE);
    ck_assert_int_eq(st_verdict_decide(&e, 0.001, -1, NAN, NAN, &r), ST_V_INCONCLUSIVE);
    /* a tie whose interval excludes a reachable published band still rules the size out */
    st_estimate t = {"paired t", 10, 0.0, -0.01, 0.01, 0.0, 1.0};
    ck_assert_int_eq(st_verdict_decide(&t, 1.0, +1, 1.0, NAN, &r), ST_V_NOT);
    /* a tie needs infinitely many seeds and is underpowered */
    ck_assert(isinf(st_seeds_needed(&e)));
    ck_assert(st_underpowered(&e, NAN));
}
END_TEST

/* seeds_needed: the n at which mde80 equals |estimate - null|. Paired t,
 * n0 = 10 seeds of per-seed sd 1 (half-width t_0.975,9 / sqrt(10)),
 * estimate 0.5: (t_0.975,n-1 + t_0.80,n-1) / sqrt(n) is 0.50307 at n = 33
 * and 0.49514 at n = 34 (an incomplete-beta t quantile, independently of
 * GSL): 34. Bootstrap, n0 = 10, SE 0.1, estimate 0.1: ceil(10 (z_0.975 +
 * z_0.80)^2) = ceil(10 x 7.84888) = 79. */
START_TEST(seeds_needed_hand_computed)
{
    const double t975_9 = 2.2621571627982036;
    st_estimate t = {"paired t", 10, 0.5, 0.5 - t975_9 / sqrt(10.0), 0.5 + t975_9 / sqrt(10.0), 0.0, 0.1};
    ck_assert_double_eq(st_seeds_needed(&t), 34.0);
    /* the same about a null of 1 (a ratio), and a negative estimate */
    st_estimate r = t;
    r.est = 0.5;
    r.null_value = 1.0;
    ck_assert_double_eq(st_seeds_needed(&r), 34.0);
    const double z975 = 1.959963984540054;
    st_estimate b = {"paired percentile bootstrap", 10, 0.1, 0.1 - z975 * 0.1, 0.1 + z975 * 0.1, 0.0, 0.3};
    ck_assert_double_eq(st_seeds_needed(&b), 79.0);
    /* underpowered: mde80 = 2.8016 x 0.1 = 0.280 against the estimate 0.1
     * (no published size): yes; against a published 0.5: no */
    ck_assert_double_eq_tol(st_mde80(&b), 0.28015852, 1e-7);
    ck_assert(st_underpowered(&b, NAN));
    ck_assert(!st_underpowered(&b, 0.5));
    /* already enough seeds: an effect far beyond mde80 needs the minimum, 2 */
    st_estimate big = t;
    big.est = 100.0;
    ck_assert_double_eq(st_seeds_needed(&big), 2.0);
    ck_assert(!st_underpowered(&big, NAN));
    /* no interval: no figure, and underpowered */
    st_estimate one = {"paired t", 1, 0.5, NAN, NAN, 0.0, 1.0};
    ck_assert(isnan(st_seeds_needed(&one)));
    ck_assert(st_underpowered(&one, NAN));
}
END_TEST

/* A hand-made runs table: per seed 1..n the final gap of arms "base" and
 * "arm" (ref eval loss 100, eval loss 100 + gap: the gap in % exactly). */
static void gap_table(st_table *t, st_row *rows, const double *base, const double *arm, size_t n)
{
    memset(t, 0, sizeof *t);
    strcpy(t->arms[0], "base");
    strcpy(t->arms[1], "arm");
    t->narms = 2;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 2; k++)
            rows[2 * i + k] = (st_row){.arm = k, .step = 10, .seed = i + 1, .ref_eval_loss = 100.0,
                                       .eval_loss = 100.0 + (k ? arm : base)[i]};
    t->rows = t->fin = rows;
    t->n = t->nfin = 2 * n;
}

/* Gaps base {1, 2, 9}, arm {0, 1, 7}: the ratio of the means is (4 - 8/3) /
 * 4 = 1/3 (the mean of per-seed ratios would be (1 + 1/2 + 2/9) / 3 =
 * 0.574). Each seed alone gives 1, 1/2 and 2/9, and every mixed resample
 * lies between; all-seed-3 and all-seed-1 resamples each have probability
 * 1/27 (74 of 2000 expected), more than the 2.5% tails: the interval is
 * exactly [2/9, 1]; no resample reaches 0: p = 2 / 2001. */
START_TEST(fraction_ratio_of_means)
{
    const double base[3] = {1, 2, 9}, arm[3] = {0, 1, 7};
    st_row rows[6];
    st_table t;
    gap_table(&t, rows, base, arm, 3);
    st_estimate e;
    double g;
    ck_assert_uint_eq(st_gap_fraction_est(&t, "base", "arm", true, &e, &g), 3);
    ck_assert_double_eq_tol(e.est, 1.0 / 3.0, 1e-12);
    ck_assert_double_eq_tol(g, 4.0, 1e-12);
    ck_assert_str_eq(e.method, "paired percentile bootstrap");
    ck_assert_double_eq_tol(e.lo, 2.0 / 9.0, 1e-12);
    ck_assert_double_eq_tol(e.hi, 1.0, 1e-12);
    ck_assert_double_eq(e.p, 2.0 / 2001.0);
    /* the denominator the other arm's gap: (4 - 8/3) / (8/3) = 1/2 */
    ck_assert_uint_eq(st_gap_fraction_est(&t, "base", "arm", false, &e, &g), 3);
    ck_assert_double_eq_tol(e.est, 0.5, 1e-12);
    /* the finding: statistic, denominator, ceiling 1, and its verdict against 2/3 ([1/3, 1]) */
    json_t *arr = json_array();
    st_finding_recovered(&t, arr, "recovers 2/3", "src", "base", "arm", 2.0 / 3.0);
    st_verdicts_finalize(arr);
    json_t *f = json_array_get(arr, 0), *x = json_object_get(f, "stats");
    ck_assert_str_eq(json_string_value(json_object_get(x, "statistic")), "fraction of gap recovered");
    ck_assert_str_eq(json_string_value(json_object_get(x, "denominator")), "base");
    ck_assert_double_eq(json_real_value(json_object_get(x, "ceiling")), 1.0);
    ck_assert_str_eq(json_string_value(json_object_get(f, "verdict")), "reproduced"); /* p 0.001, [2/9, 1] meets */
    json_decref(arr);
    /* a denominator whose mean gap is not positive: no fraction, inconclusive without statistics */
    const double nb[3] = {-1, 0.5, 0}, na[3] = {0, 0, 0};
    gap_table(&t, rows, nb, na, 3);
    ck_assert_uint_eq(st_gap_fraction_est(&t, "base", "arm", true, &e, &g), 3);
    ck_assert(isnan(e.est));
    arr = json_array();
    st_finding_recovered(&t, arr, "recovers 2/3", "src", "base", "arm", 2.0 / 3.0);
    st_verdicts_finalize(arr);
    f = json_array_get(arr, 0);
    ck_assert_str_eq(json_string_value(json_object_get(f, "verdict")), "inconclusive");
    ck_assert_ptr_null(json_object_get(f, "stats"));
    json_decref(arr);
}
END_TEST

/* The probe's noise scale by hand: r = 1 at 16,384 tokens per step gives s =
 * r^2/(2 - r^2) = 1, so B_noise = 16,384; an error e = 0.5 there is an
 * absolute error eps = e^2 (1 + s) = 0.5 (in units of |G|^2), which the
 * noise 2s/(1 + s) meets at s = eps/2 = 1/4: 4 x 16,384 = 65,536 tokens per
 * step (e has then grown to sqrt(0.5/1.25) = 0.632 as |g_A| fell). A noise
 * at or above sqrt(2) resolves no signal: no figure (null in the summary). */
START_TEST(noise_scale_hand_computed)
{
    ck_assert_double_eq_tol(st_noise_scale_tokens(1.0, 16384.0), 16384.0, 1e-9);
    ck_assert_double_eq_tol(st_tokens_for_parity(16384.0, 0.5, 16384.0), 65536.0, 1e-9);
    ck_assert_double_eq_tol(st_tokens_for_parity(1000.0, 0.2, 4000.0), 2.0 * 1000.0 / (0.04 * 1.25), 1e-9);
    ck_assert_double_eq_tol(st_noise_scale_tokens(0.5, 1000.0), 1000.0 * 0.25 / 1.75, 1e-9);
    ck_assert(isnan(st_noise_scale_tokens(1.5, 16384.0)));
    ck_assert(isnan(st_noise_scale_tokens(sqrt(2.0) + 1e-12, 16384.0)));
    ck_assert(isnan(st_tokens_for_parity(16384.0, 0.0, 16384.0)));
    ck_assert(isnan(st_tokens_for_parity(NAN, 0.5, 16384.0)));
    ck_assert(isnan(st_tokens_for_parity(16384.0, 0.5, 0.0)));
    /* the summary: arm "base" has noise 0.99 and 1.01, error 0.49 and 0.51 at its last probe (means 1 and 0.5),
     * an earlier probe that must not count, and an unprobed last row; arm "arm" has noise 1.5 */
    st_row rows[8];
    st_table t;
    memset(&t, 0, sizeof t);
    strcpy(t.arms[0], "base");
    strcpy(t.arms[1], "arm");
    t.narms = 2;
    size_t n = 0;
    for (size_t k = 0; k < 2; k++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            double noise = k ? 1.5 : (seed == 1 ? 0.99 : 1.01), qerr = k ? 0.5 : (seed == 1 ? 0.49 : 0.51);
            rows[n++] = (st_row){.arm = k, .seed = seed, .step = 50, .tokens = 50 * 16384, .grad_noise = 0.1,
                                 .grad_qerr = 0.1};
            rows[n++] = (st_row){.arm = k, .seed = seed, .step = 100, .tokens = 100 * 16384,
                                 .grad_noise = noise, .grad_qerr = qerr, .ref_eval_loss = 1.0, .eval_loss = 1.0};
        }
    st_row fin[4] = {rows[1], rows[3], rows[5], rows[7]};
    t.rows = rows;
    t.n = n;
    t.fin = fin;
    t.nfin = 4;
    json_t *root = json_object();
    st_gradnoise_summary(&t, root);
    json_t *arr = json_object_get(root, "noise_to_quant"), *b = json_array_get(arr, 0), *a = json_array_get(arr, 1);
    ck_assert_uint_eq(json_array_size(arr), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(b, "step")), 100);
    ck_assert_int_eq(json_integer_value(json_object_get(b, "tokens_per_step")), 16384);
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "noise_mean")), 1.0, 1e-12);
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "qerr_mean")), 0.5, 1e-12);
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "noise_to_qerr")), 2.0, 1e-12);
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "noise_scale_tokens")), 16384.0, 1e-6);
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "tokens_for_parity")), 65536.0, 1e-6);
    /* the intervals: the noise's and the error's half-width is t(0.975, 1) x 0.01 = 0.127062; the scale's ends
     * are the map's values at 1 -/+ that, the parity batch's at the corners (low noise with high error, high
     * noise with low error) */
    double c = 12.706204736174707 * 0.01, r_lo = 1.0 - c, r_hi = 1.0 + c, e_lo = 0.5 - c, e_hi = 0.5 + c;
    ck_assert_double_eq_tol(json_real_value(json_object_get(b, "noise_ci95")), c, 1e-6);
    double s_lo = 16384.0 * r_lo * r_lo / (2.0 - r_lo * r_lo), s_hi = 16384.0 * r_hi * r_hi / (2.0 - r_hi * r_hi);
    json_t *sci = json_object_get(b, "noise_scale_ci95"), *pci = json_object_get(b, "tokens_for_parity_ci90");
    ck_assert_double_eq_tol(json_real_value(json_array_get(sci, 0)), s_lo, 1e-3);
    ck_assert_double_eq_tol(json_real_value(json_array_get(sci, 1)), s_hi, 1e-3);
    ck_assert_double_eq_tol(json_real_value(json_array_get(pci, 0)),
                            2.0 * s_lo / (e_hi * e_hi * (1.0 + s_lo / 16384.0)), 1e-2);
    ck_assert_double_eq_tol(json_real_value(json_array_get(pci, 1)),
                            2.0 * s_hi / (e_lo * e_lo * (1.0 + s_hi / 16384.0)), 1e-2);
    ck_assert(json_is_null(json_object_get(a, "noise_scale_tokens")));
    ck_assert(json_is_null(json_object_get(a, "tokens_for_parity")));
    ck_assert(json_is_null(json_array_get(json_object_get(a, "noise_scale_ci95"), 1)));
    json_decref(root);
    /* one seed: no interval, [null, null] */
    t.nfin = 1;
    root = json_object();
    st_gradnoise_summary(&t, root);
    b = json_array_get(json_object_get(root, "noise_to_quant"), 0);
    ck_assert(json_is_number(json_object_get(b, "noise_scale_tokens")));
    ck_assert(json_is_null(json_array_get(json_object_get(b, "noise_scale_ci95"), 0)));
    ck_assert(json_is_null(json_array_get(json_object_get(b, "tokens_for_parity_ci90"), 0)));
    json_decref(root);
}
END_TEST

/* The test's own stream of uniform 53-bit draws in (0, 1), over the
 * project's splitmix64. */
static double test_uniform(uint64_t *s)
{
    uint64_t z = nvfp4_core_splitmix64(s);
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal draw (Box-Muller). */
static double test_normal(uint64_t *s)
{
    double u1 = test_uniform(s), u2 = test_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The sequential rule (sequential.c) on 4000 null studies of normal paired
 * differences (sd 1): 3 seeds, then batches of 3 until the 95% t interval is
 * narrower than 1 or 30 seeds (10 planned looks). Stopping when the interval
 * is narrow favours an underestimated spread, so the plain 5% test rejects
 * in about 8.8% of them (20,000 studies in Python: 0.088); with each p
 * multiplied by the 10 looks (st_verdicts_finalize_looks), at most 5% by
 * the union bound (measured 0.013; this stream: 352 and 47 of 4000). The assertions: plain above 6.5%, and
 * corrected at most 5%. False alarm: the first at 0.088 sits 5 binomial
 * sds (0.0045) above 6.5% (p < 1e-6); the second cannot fail while the
 * bound holds unless the corrected rate of ~0.013 exceeds 0.05 by chance,
 * 20 sds. */
START_TEST(sequential_looks_bound_false_positives)
{
    uint64_t rng = UINT64_C(0x5eed5eed);
    const size_t first = 3, batch = 3, cap = 30, studies = 4000, looks = 1 + (cap - first + batch - 1) / batch;
    const double width = 1.0;
    size_t plain = 0, corrected = 0;
    double x[30];
    for (size_t k = 0; k < studies; k++) {
        size_t n = 0;
        st_estimate e;
        for (;;) {
            size_t add = n ? (batch < cap - n ? batch : cap - n) : first;
            for (size_t i = 0; i < add; i++) x[n++] = test_normal(&rng);
            st_est_t(x, n, &e);
            if (e.hi - e.lo < width || n >= cap) break;
        }
        plain += e.p < ST_VERDICT_ALPHA;
        corrected += e.p * (double)looks < ST_VERDICT_ALPHA;
    }
    ck_assert_uint_eq(looks, 10);
    ck_assert_msg(plain > 260, "plain rejections %zu of %zu", plain, studies);         /* 6.5% */
    ck_assert_msg(corrected <= 200, "corrected rejections %zu of %zu", corrected, studies); /* 5% */
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
    tcase_add_test(t, verdict_unreachable_band);
    tcase_add_test(t, verdict_tie);
    tcase_add_test(t, seeds_needed_hand_computed);
    tcase_add_test(t, fraction_ratio_of_means);
    tcase_add_test(t, noise_scale_hand_computed);
    tcase_add_test(t, sequential_looks_bound_false_positives);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
