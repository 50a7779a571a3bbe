/*
 * sr.c - tests of stochastic-rounding kernels (docs/verify.md, "sr-test").
 *
 * Statistical mode (a kernel with its own random numbers): from N outputs
 * of the same input,
 *   1. every element's round-up count k_i ~ Binomial(N, p_i), p_i the exact
 *      probability of the 8-bit SR contract (docs/semantics.md, "Scalar codecs"): two-sided exact
 *      binomial tests through GSL, corrected with Holm's step-down procedure;
 *   2. unbiasedness of the mean: Z = sum_i step_i (k_i - N p_i) /
 *      sqrt(sum_i step_i^2 N p_i (1 - p_i)), standard normal under H0;
 *   3. independence across samples: the lag-1 serial correlation of the
 *      round-up indicators, and 4. the correlation of adjacent elements in
 *      one sample, both as standardized sums (normal under H0).
 * The family-wise false-alarm rate alpha is split by Bonferroni over the
 * four tests (alpha/4 each; Holm inside test 1), so a correct kernel fails
 * with probability at most alpha (up to the normal approximation of 2-4).
 *
 * When a test rejects, the rule the kernel follows is named (name_rule):
 * no randomness, one random byte shared by a group of elements, more than
 * 8 random bits, or a bias. Each name is given only when a test above has
 * rejected or an event of probability 0 under the contract was seen, so a
 * correct kernel is named with probability at most alpha; the rules below
 * only choose which name fits.
 *
 * Bit-exact mode: the kernel follows our Philox contract (docs/semantics.md, "The SR bit contract");
 * every code must equal the reference, and on mismatch the byte->element
 * mapping the kernel actually used is inferred from the data.
 */
#include "nvfp4/formats.h"
#include "nvfp4/verify.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/e2m1.h"
#include "core/philox.h"

double nvfp4_sr_p_up(float y)
{
    float a = nvfp4_core_fabs(y);
    if (nvfp4_core_isnan(y) || !(a < NVFP4_E2M1_MAX)) return 0.0;
    return (double)nvfp4_core_e2m1_frac8(a) / 256.0;
}

/* The exact position of |y| inside its E2M1 step, in [0, 1): frac8 / 256
 * without the floor (a - lo is exact in fp32, see nvfp4_core_e2m1_frac8,
 * and the division by a power of two is exact in binary64); 0 for values
 * on the grid, |y| >= 6 and NaN. A kernel with more than 8 random bits
 * rounds away with this probability. */
static double sr_frac(float y)
{
    float a = nvfp4_core_fabs(y);
    if (nvfp4_core_isnan(y) || !(a < NVFP4_E2M1_MAX)) return 0.0;
    float lo = nvfp4_core_e2m1_mag_value(nvfp4_core_e2m1_rz_mag(a));
    return (double)(a - lo) / (double)nvfp4_core_e2m1_step(a);
}

/* The two codes any stochastic rounding can give for y: toward zero, and
 * the next grid point away from zero when y is not on the grid (frac > 0).
 * The upper neighbour is defined by the grid, not by the 8-bit rule: a
 * kernel with more random bits may choose it where floor(256 frac) = 0. */
static void sr_neighbours(float y, double frac, uint8_t *down, uint8_t *up)
{
    *down = nvfp4_core_e2m1_encode(y, NVFP4_CORE_RZ, 0);
    *up = frac > 0.0 ? (uint8_t)(*down + 1u) : *down; /* magnitude + 1, same sign (|y| < 6, so mag < 7) */
}

static void add_cause(nvfp4_sr_report *rep, nvfp4_cause c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Every sr-test cause concerns the element rounding. It is consistent (a
 * statistical finding: a correct kernel gives it with probability at most
 * alpha) unless prove_last() records an event of probability 0 under the
 * 8-bit rule as its evidence. */
static void add_cause(nvfp4_sr_report *rep, nvfp4_cause c, const char *fmt, ...)
{
    if (rep->n_causes >= NVFP4_VERIFY_MAX_CAUSES) return;
    nvfp4_vcause_line *l = &rep->causes[rep->n_causes++];
    memset(l, 0, sizeof *l);
    l->cause = c;
    l->step = nvfp4_cause_step(c);
    l->status = NVFP4_CAUSE_CONSISTENT;
    snprintf(l->evidence, sizeof l->evidence,
             "a statistical test at the family-wise alpha, not an event of probability 0 under the 8-bit rule");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->line, sizeof l->line, fmt, ap);
    va_end(ap);
}

static void prove_last(nvfp4_sr_report *rep, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void prove_last(nvfp4_sr_report *rep, const char *fmt, ...)
{
    if (!rep->n_causes) return;
    nvfp4_vcause_line *l = &rep->causes[rep->n_causes - 1];
    l->status = NVFP4_CAUSE_PROVEN;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->evidence, sizeof l->evidence, fmt, ap);
    va_end(ap);
}

const char *nvfp4_sr_rule_name(nvfp4_sr_rule r)
{
    static const char *const names[] = {"contract", "more-bits", "shared-byte", "deterministic", "dependent", "biased"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

/* Two-sided exact binomial p-value: 2 * min(P(K <= k), P(K >= k)), capped at 1. */
static double binom_two_sided(unsigned k, double p, unsigned n)
{
    double lo = gsl_cdf_binomial_P(k, p, n);
    double hi = k == 0 ? 1.0 : gsl_cdf_binomial_Q(k - 1, p, n);
    double v = 2.0 * (lo < hi ? lo : hi);
    return v > 1.0 ? 1.0 : v;
}

typedef struct {
    double p;
    size_t i;
} pv;

static int cmp_pv(const void *a, const void *b)
{
    double x = ((const pv *)a)->p, y = ((const pv *)b)->p;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double normal_two_sided(double z) { return 2.0 * gsl_cdf_ugaussian_Q(fabs(z)); }

/* Element i's round-up indicator in sample s: 1 up, 0 down, -1 invalid. */
static int up_of(const nvfp4_sr_input *in, size_t s, size_t i, uint8_t down, uint8_t up)
{
    uint8_t c = in->codes[s][i];
    if (c == up && up != down) return 1;
    if (c == down) return 0;
    return -1;
}

/* Per-element data shared by the tests: round-up counts, the 8-bit
 * probability p, the exact fraction, the two neighbours. */
typedef struct {
    unsigned *k;
    double *p, *frac;
    uint8_t *dn, *up;
} sr_elems;

/* The first (sample, element) whose code is neither neighbour of y. */
static void first_invalid(const nvfp4_sr_input *in, const sr_elems *e, size_t *s_out, size_t *i_out)
{
    for (size_t s = 0; s < in->samples; s++)
        for (size_t i = 0; i < in->n; i++)
            if (up_of(in, s, i, e->dn[i], e->up[i]) < 0) {
                *s_out = s, *i_out = i;
                return;
            }
}

/* Test 2 (value-weighted mean) with probabilities q (p: the contract; frac: many random bits) over the
 * elements where 0 < q < 1; returns z and sets *num to the weighted excess. */
static double mean_z(const nvfp4_sr_input *in, const sr_elems *e, const double *q, double *num_out)
{
    double num = 0, var = 0, N = (double)in->samples;
    for (size_t i = 0; i < in->n; i++) {
        if (!(q[i] > 0.0 && q[i] < 1.0)) continue;
        double step = nvfp4_core_e2m1_step(nvfp4_core_fabs(in->y[i]));
        num += step * ((double)e->k[i] - N * q[i]);
        var += step * step * N * q[i] * (1.0 - q[i]);
    }
    if (num_out) *num_out = num;
    return var > 0 ? num / sqrt(var) : 0.0;
}

static void statistical(const nvfp4_sr_input *in, nvfp4_sr_report *rep, const sr_elems *e)
{
    size_t n = in->n, N = in->samples;
    const unsigned *k = e->k;
    const double *p = e->p;
    const uint8_t *dn = e->dn, *upc = e->up;
    double a4 = in->alpha / 4.0;
    pv *pvals = malloc((n ? n : 1) * sizeof *pvals);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i] > 0.0 && p[i] < 1.0)) continue;
        rep->tested++;
        if (pvals) pvals[m++] = (pv){binom_two_sided(k[i], p[i], (unsigned)N), i};
    }
    /* 1. Holm step-down over the m element tests */
    rep->min_pvalue = 1.0;
    if (pvals && m) {
        qsort(pvals, m, sizeof *pvals, cmp_pv);
        rep->min_pvalue = pvals[0].p;
        rep->worst_element = pvals[0].i;
        for (size_t j = 0; j < m; j++) {
            if (pvals[j].p > a4 / (double)(m - j)) break;
            rep->rejected++;
            size_t i = pvals[j].i;
            if ((double)k[i] > (double)N * p[i]) rep->rejected_high++;
            else rep->rejected_low++;
        }
    }
    free(pvals);
    /* 2. mean; and the same statistic with p = frac, which names (not
     * tests) a kernel with more than 8 random bits */
    double num;
    rep->mean_z = mean_z(in, e, p, &num);
    rep->mean_pvalue = rep->mean_z != 0.0 ? normal_two_sided(rep->mean_z) : 1.0;
    rep->bias_per_element = rep->tested ? num / ((double)N * (double)rep->tested) : 0.0;
    rep->frac_z = mean_z(in, e, e->frac, NULL);
    rep->frac_pvalue = rep->frac_z != 0.0 ? normal_two_sided(rep->frac_z) : 1.0;
    /* 3. independence across samples: a Wald-Wolfowitz runs test per
     * element, conditional on its round-up count k (so a bias, test 2, does
     * not look like dependence): given k ups in N samples, the number of
     * runs R has mean 1 + 2k(N-k)/N and variance 2k(N-k)(2k(N-k)-N)/(N^2(N-1)).
     * 4. independence within a sample: for disjoint adjacent pairs (2j, 2j+1)
     * the count of samples where both round up is hypergeometric given the
     * two counts: mean k0 k1 / N, variance k0 k1 (N-k0)(N-k1) / (N^2 (N-1)).
     * Both sum standardized over elements: normal under H0. */
    double sn = 0, sv = 0, an = 0, av = 0, dN = (double)N;
    for (size_t i = 0; i < n && N > 1; i++) {
        if (!(p[i] > 0.0 && p[i] < 1.0)) continue;
        double kk = (double)k[i], prod = kk * (dN - kk);
        if (prod > 0.0) {
            size_t runs = 1;
            int prev = up_of(in, 0, i, dn[i], upc[i]);
            for (size_t s = 1; s < N; s++) {
                int u = up_of(in, s, i, dn[i], upc[i]);
                runs += u != prev;
                prev = u;
            }
            sn += (double)runs - (1.0 + 2.0 * prod / dN);
            sv += 2.0 * prod * (2.0 * prod - dN) / (dN * dN * (dN - 1.0));
        }
        if ((i & 1u) == 0 && i + 1 < n && p[i + 1] > 0.0 && p[i + 1] < 1.0) {
            double k1 = (double)k[i + 1];
            size_t both = 0;
            for (size_t s = 0; s < N; s++)
                both += up_of(in, s, i, dn[i], upc[i]) == 1 && up_of(in, s, i + 1, dn[i + 1], upc[i + 1]) == 1;
            an += (double)both - kk * k1 / dN;
            av += kk * k1 * (dN - kk) * (dN - k1) / (dN * dN * (dN - 1.0));
        }
    }
    rep->serial_z = sv > 0 ? sn / sqrt(sv) : 0.0;
    rep->serial_pvalue = sv > 0 ? normal_two_sided(rep->serial_z) : 1.0;
    rep->neighbour_z = av > 0 ? an / sqrt(av) : 0.0;
    rep->neighbour_pvalue = av > 0 ? normal_two_sided(rep->neighbour_z) : 1.0;
    for (size_t s = 0; s + 1 < N; s++)
        if (rep->tested && memcmp(in->codes[s], in->codes[s + 1], n) == 0) rep->identical_pairs++;
}

/* ---- naming the rule ------------------------------------------------------------------ */

/* log10 of the probability, under the contract, that every element with
 * 0 < p < 1 keeps one neighbour in all N samples: prod_i (p^N + (1-p)^N). */
static double log10_all_constant(const nvfp4_sr_input *in, const sr_elems *e)
{
    double l = 0.0, N = (double)in->samples;
    for (size_t i = 0; i < in->n; i++) {
        double q = e->p[i];
        if (q > 0.0 && q < 1.0) l += log10(pow(q, N) + pow(1.0 - q, N));
    }
    return l;
}

/* Whether every element that has two neighbours took the same one in every sample. */
static bool all_constant(const nvfp4_sr_input *in, const sr_elems *e)
{
    for (size_t i = 0; i < in->n; i++)
        if (e->dn[i] != e->up[i] && e->k[i] != 0 && e->k[i] != in->samples) return false;
    return true;
}

/* Which deterministic rule the (constant) decisions follow: RN (ties to
 * even, compared code for code), always toward zero, always away, a fixed
 * threshold on the fraction, or none of these (the same random bits in
 * every call). Writes a phrase into buf. */
static void deterministic_rule(const nvfp4_sr_input *in, const sr_elems *e, char *buf, size_t len)
{
    bool rn = true, rz = true, away = true;
    double max_down = -1.0, min_up = 2.0;
    for (size_t i = 0; i < in->n; i++) {
        if (e->dn[i] == e->up[i]) continue;
        bool up = e->k[i] == in->samples;
        if (in->codes[0][i] != nvfp4_core_e2m1_encode(in->y[i], NVFP4_CORE_RN, 0)) rn = false;
        if (up) rz = false, min_up = e->frac[i] < min_up ? e->frac[i] : min_up;
        else away = false, max_down = e->frac[i] > max_down ? e->frac[i] : max_down;
    }
    char lo[32], hi[32];
    if (rn) snprintf(buf, len, "every code is round-to-nearest-even (RN disguised as SR)");
    else if (rz) snprintf(buf, len, "every code is the neighbour toward zero (RZ disguised as SR)");
    else if (away) snprintf(buf, len, "every code is the neighbour away from zero (rounding away disguised as SR)");
    else if (max_down < min_up)
        snprintf(buf, len, "an element rounds away iff its fraction exceeds a fixed threshold between %s and %s",
                 nvfp4_format_f64_digits(max_down, 4, lo, sizeof lo), nvfp4_format_f64_digits(min_up, 4, hi, sizeof hi));
    else
        snprintf(buf, len, "the choice is not a function of the fraction: the same random bits in every call (the "
                           "seed or offset is not advanced)");
}

/* The largest aligned group size g (a power of two up to the block) such
 * that in every sample and every group of elements i / g, each element that
 * rounded up has a larger floor(256 frac) than each that rounded down: the
 * order that one random byte r shared by the group imposes (up iff
 * floor(256 frac) >= 256 - r). Independent bytes break it in about half the
 * mixed groups. 0 when no group size keeps it; *mixed receives the number of
 * (group, sample) pairs that hold both decisions at the size returned. */
static size_t shared_group(const nvfp4_sr_input *in, const sr_elems *e, size_t *mixed)
{
    size_t be = in->block_elems == 32 ? 32 : 16;
    for (size_t g = be; g >= 2; g /= 2) {
        size_t mix = 0;
        bool ordered = true;
        for (size_t s = 0; s < in->samples && ordered; s++)
            for (size_t g0 = 0; g0 < in->n && ordered; g0 += g) {
                int max_down = -1, min_up = 256;
                for (size_t i = g0; i < g0 + g && i < in->n; i++) {
                    if (!(e->p[i] > 0.0 && e->p[i] < 1.0)) continue;
                    int f8 = (int)nvfp4_core_e2m1_frac8(nvfp4_core_fabs(in->y[i]));
                    int u = up_of(in, s, i, e->dn[i], e->up[i]);
                    if (u == 1 && f8 < min_up) min_up = f8;
                    if (u == 0 && f8 > max_down) max_down = f8;
                }
                if (max_down >= 0 && min_up < 256) {
                    mix++;
                    ordered = max_down < min_up;
                }
            }
        if (ordered && mix) {
            *mixed = mix;
            return g;
        }
    }
    *mixed = 0;
    return 0;
}

static void set_rule(nvfp4_sr_report *rep, nvfp4_sr_rule r)
{
    if (rep->rule == NVFP4_SR_RULE_CONTRACT) rep->rule = r;
}

/* The first element with 0 < frac < 1/256 (floor(256 frac) = 0) that rounded
 * away in some sample: an event of probability 0 under the 8-bit rule. */
static size_t first_impossible(const nvfp4_sr_input *in, const sr_elems *e)
{
    for (size_t i = 0; i < in->n; i++)
        if (e->frac[i] > 0.0 && e->p[i] == 0.0 && e->k[i]) return i;
    return 0;
}

/* The evidence of a rule proven by round-ups of probability 0. */
static void prove_impossible(const nvfp4_sr_input *in, nvfp4_sr_report *rep, const sr_elems *e)
{
    size_t i = first_impossible(in, e);
    char fr[32];
    prove_last(rep,
               "the 8-bit rule is excluded: element %zu (y = %.9g, frac = %s, floor(256 frac) = 0) rounded away in "
               "%u of %zu samples, probability 0 under it (%zu such round-ups in all)",
               i, (double)in->y[i], nvfp4_format_f64_digits(e->frac[i], 3, fr, sizeof fr), e->k[i], in->samples,
               rep->impossible_ups);
}

/* The cause lines: which rule the rejections (or the impossible round-ups)
 * point to. The order matters: no randomness explains dependence and any
 * per-element rejection; a shared byte explains the adjacent-element
 * dependence; more than 8 bits explains an upward mean and the impossible
 * round-ups when the rates fit p = frac; anything else is a bias. */
static void name_rule(const nvfp4_sr_input *in, nvfp4_sr_report *rep, const sr_elems *e)
{
    double a4 = in->alpha / 4.0;
    char p1[32], p2[32], p3[32], al[32], bias[32], ex[32];
    nvfp4_format_f64_digits(a4, 2, al, sizeof al);
    bool dependent = rep->serial_pvalue < a4 || rep->neighbour_pvalue < a4 || rep->identical_pairs;
    rep->deterministic_log10_p = rep->tested && in->samples > 1 ? log10_all_constant(in, e) : 0.0;
    bool deterministic = rep->tested && in->samples > 1 && all_constant(in, e) &&
                         rep->deterministic_log10_p <= log10(a4);
    if (deterministic) {
        char rule[200];
        deterministic_rule(in, e, rule, sizeof rule);
        add_cause(rep, NVFP4_CAUSE_SR_DEPENDENT,
                  "sr: no randomness: each of the %zu elements with 0 < p < 1 took the same neighbour in all %zu "
                  "samples (probability 10^%.0f under the contract, < %s; %zu identical consecutive samples); %s",
                  rep->tested, in->samples, floor(rep->deterministic_log10_p), al, rep->identical_pairs, rule);
        set_rule(rep, NVFP4_SR_RULE_DETERMINISTIC);
    } else if (dependent) {
        size_t g = rep->neighbour_pvalue < a4 && rep->neighbour_z > 0 ? shared_group(in, e, &rep->group_samples_mixed) : 0;
        rep->shared_group = g;
        if (g) {
            add_cause(rep, NVFP4_CAUSE_SR_DEPENDENT,
                      "sr: one random byte shared by each aligned group of %zu elements%s: adjacent elements round up "
                      "together (z = %.1f, p = %s < %s); in all %zu (group, sample) pairs with both decisions, those "
                      "rounded up have a larger floor(256 frac) than those rounded down, as a shared byte imposes",
                      g, g == (in->block_elems == 32 ? 32u : 16u) ? " (a whole block)" : "", rep->neighbour_z,
                      nvfp4_format_f64_digits(rep->neighbour_pvalue, 2, p2, sizeof p2), al, rep->group_samples_mixed);
            set_rule(rep, NVFP4_SR_RULE_SHARED_BYTE);
        } else {
            add_cause(rep, NVFP4_CAUSE_SR_DEPENDENT,
                      "sr: random bits look dependent: runs across samples z = %.1f (p = %s), adjacent elements z = "
                      "%.1f (p = %s), %zu identical consecutive samples",
                      rep->serial_z, nvfp4_format_f64_digits(rep->serial_pvalue, 2, p1, sizeof p1), rep->neighbour_z,
                      nvfp4_format_f64_digits(rep->neighbour_pvalue, 2, p2, sizeof p2), rep->identical_pairs);
            set_rule(rep, NVFP4_SR_RULE_DEPENDENT);
        }
    }
    bool mean_up = rep->mean_pvalue < a4 && rep->mean_z > 0;
    bool fits_frac = rep->frac_pvalue >= a4;
    if (!deterministic && (rep->impossible || mean_up) && fits_frac) {
        if (rep->impossible) {
            add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                      "sr: more than 8 random bits (proven: the 8-bit rule gives these probability 0): %zu round-ups "
                      "of %zu elements with 0 < frac < 1/256, where floor(256 frac) = 0 (%s expected if p = frac); "
                      "the rates fit p = frac (z = %.1f, p = %s) rather than floor(256 frac)/256 (z = %.1f)",
                      rep->impossible_ups, rep->below8, nvfp4_format_f64_digits(rep->below8_expected, 3, ex, sizeof ex),
                      rep->frac_z, nvfp4_format_f64_digits(rep->frac_pvalue, 2, p1, sizeof p1), rep->mean_z);
            prove_impossible(in, rep, e);
        } else {
            add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                      "sr: consistent with more than 8 random bits: rounds up more often than floor(256 frac)/256 "
                      "(z = %.1f, p = %s < %s) at the rate p = frac (z = %.1f, p = %s); no element with floor(256 "
                      "frac) = 0 rounded up (%zu such elements, %s round-ups expected if p = frac)",
                      rep->mean_z, nvfp4_format_f64_digits(rep->mean_pvalue, 2, p3, sizeof p3), al, rep->frac_z,
                      nvfp4_format_f64_digits(rep->frac_pvalue, 2, p1, sizeof p1), rep->below8,
                      nvfp4_format_f64_digits(rep->below8_expected, 3, ex, sizeof ex));
        }
        set_rule(rep, NVFP4_SR_RULE_MORE_BITS);
    } else if (rep->mean_pvalue < a4) {
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: biased: the mean is off its exact expectation by %s%s scaled units per element (z = %.1f, p = "
                  "%s < %s); rounds %s too often%s",
                  signbit(rep->bias_per_element) ? "" : "+",
                  nvfp4_format_f64_digits(rep->bias_per_element, 3, bias, sizeof bias), rep->mean_z,
                  nvfp4_format_f64_digits(rep->mean_pvalue, 2, p3, sizeof p3), al, rep->mean_z > 0 ? "up" : "down",
                  rep->mean_z > 0 && !fits_frac ? ", also against p = frac (more random bits do not explain it)" : "");
        set_rule(rep, NVFP4_SR_RULE_BIASED);
    } else if (rep->impossible) {
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu round-ups of %zu elements whose floor(256 frac) = 0 (probability 0 under the 8-bit rule), "
                  "at a rate that does not fit p = frac either (z = %.1f, p = %s < %s): biased",
                  rep->impossible_ups, rep->below8, rep->frac_z,
                  nvfp4_format_f64_digits(rep->frac_pvalue, 2, p1, sizeof p1), al);
        prove_impossible(in, rep, e);
        set_rule(rep, NVFP4_SR_RULE_BIASED);
    } else if (rep->rejected && !deterministic) {
        add_cause(rep, dependent ? NVFP4_CAUSE_SR_DEPENDENT : NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu elements round up with a frequency inconsistent with their exact probability (Holm, "
                  "family-wise alpha %s; %zu too often, %zu too rarely)%s",
                  rep->rejected, al, rep->rejected_high, rep->rejected_low,
                  dependent ? ": consistent with the dependence above" : "");
        set_rule(rep, dependent ? NVFP4_SR_RULE_DEPENDENT : NVFP4_SR_RULE_BIASED);
    }
}

/* The 32 random bytes of block b in sample s (16-element blocks use 16). */
static void block_bytes(const nvfp4_sr_input *in, size_t s, uint64_t b, uint8_t bytes[32])
{
    uint64_t off = in->offset + (uint64_t)s * in->offset_step;
    nvfp4_core_sr_block_bytes(in->seed, off, b, bytes);
    if (in->block_elems == 32) nvfp4_core_sr_block_bytes(in->seed, off + 1, b, bytes + 16);
}

static void bitexact(const nvfp4_sr_input *in, nvfp4_sr_report *rep)
{
    size_t be = in->block_elems == 32 ? 32 : 16, n = in->n;
    /* consistent[k][j]: element position k within a block is consistent with byte j everywhere */
    bool consistent[32][32];
    for (size_t k = 0; k < be; k++)
        for (size_t j = 0; j < be; j++) consistent[k][j] = true;
    for (size_t s = 0; s < in->samples; s++) {
        for (size_t b0 = 0; b0 < n; b0 += be) {
            uint8_t bytes[32];
            block_bytes(in, s, b0 / be, bytes);
            for (size_t k = 0; k < be && b0 + k < n; k++) {
                size_t i = b0 + k;
                uint8_t c = in->codes[s][i];
                rep->bitexact_total++;
                if (nvfp4_core_e2m1_encode(in->y[i], NVFP4_CORE_SR, bytes[k]) != c) rep->bitexact_mismatches++;
                for (size_t j = 0; j < be; j++)
                    if (consistent[k][j] && nvfp4_core_e2m1_encode(in->y[i], NVFP4_CORE_SR, bytes[j]) != c)
                        consistent[k][j] = false;
            }
        }
    }
    rep->byte_map_found = true;
    for (size_t k = 0; k < 32; k++) rep->byte_map[k] = -1;
    for (size_t k = 0; k < be; k++) {
        int only = -1, count = 0;
        for (size_t j = 0; j < be; j++)
            if (consistent[k][j]) {
                count++;
                only = (int)j;
            }
        if (count == 1) rep->byte_map[k] = only;
        else rep->byte_map_found = false;
    }
    if (!rep->bitexact_mismatches) return;
    if (rep->byte_map_found) {
        char map[200];
        size_t len = 0;
        for (size_t k = 0; k < be && len + 8 < sizeof map; k++)
            len += (size_t)snprintf(map + len, sizeof map - len, "%s%d", k ? "," : "", rep->byte_map[k]);
        add_cause(rep, NVFP4_CAUSE_SR_BYTE_ORDER,
                  "sr: random bytes consumed in another order: element k of a block uses byte [%s] of the Philox "
                  "output; the contract is byte k (word k/4, bits 8*(k%%4)..+7)",
                  map);
        prove_last(rep,
                   "bit-exact: %zu of %zu codes differ from the contract's bytes (probability 0 under it); over all "
                   "%zu samples every element position of a block agrees with exactly one of the block's %zu bytes",
                   rep->bitexact_mismatches, rep->bitexact_total, in->samples, be);
    }
}

nvfp4_status nvfp4_sr_test(const nvfp4_sr_input *in, nvfp4_sr_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!in->n || !in->y || !in->codes) return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: no elements");
    if (in->samples < 1 || in->samples > 0x7FFFFFFFu)
        return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: need between 1 and 2^31 samples");
    if (!(in->alpha > 0.0 && in->alpha < 1.0))
        return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: alpha must lie in (0, 1)");
    size_t n = in->n;
    sr_elems e = {calloc(n, sizeof(unsigned)), calloc(n, sizeof(double)), calloc(n, sizeof(double)), calloc(n, 1),
                  calloc(n, 1)};
    if (!e.k || !e.p || !e.frac || !e.dn || !e.up) {
        free(e.k), free(e.p), free(e.frac), free(e.dn), free(e.up);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "sr-test: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        e.p[i] = nvfp4_sr_p_up(in->y[i]);
        e.frac[i] = sr_frac(in->y[i]);
        sr_neighbours(in->y[i], e.frac[i], &e.dn[i], &e.up[i]);
        for (size_t s = 0; s < in->samples; s++) {
            int u = up_of(in, s, i, e.dn[i], e.up[i]);
            if (u < 0) rep->invalid++;
            else if (u == 1) e.k[i]++;
        }
        /* 0 < frac < 1/256: the 8-bit rule never rounds these away */
        if (e.frac[i] > 0.0 && e.p[i] == 0.0) {
            rep->below8++;
            rep->below8_expected += (double)in->samples * e.frac[i];
            rep->impossible += e.k[i] != 0;
            rep->impossible_ups += e.k[i];
        }
    }
    if (rep->invalid) {
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu codes are neither neighbour of the scaled value (not a rounding of it at all)", rep->invalid);
        size_t fs = 0, fi = 0;
        first_invalid(in, &e, &fs, &fi);
        prove_last(rep,
                   "sample %zu element %zu: code 0x%X is neither 0x%X nor 0x%X, the neighbours of y = %.9g "
                   "(probability 0 under any stochastic rounding of y)",
                   fs + 1, fi, (unsigned)in->codes[fs][fi], (unsigned)e.dn[fi], (unsigned)e.up[fi], (double)in->y[fi]);
        rep->rule = NVFP4_SR_RULE_BIASED; /* no rounding rule of y gives these codes */
    }
    statistical(in, rep, &e);
    name_rule(in, rep, &e);
    if (in->bitexact) bitexact(in, rep);
    rep->pass = rep->n_causes == 0 && (!in->bitexact || rep->bitexact_mismatches == 0);
    free(e.k), free(e.p), free(e.frac), free(e.dn), free(e.up);
    return NVFP4_OK;
}
