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

/* The two codes SR can give for y: toward zero (r = 0) and away (r = 255). */
static void sr_neighbours(float y, uint8_t *down, uint8_t *up)
{
    *down = nvfp4_core_e2m1_encode(y, NVFP4_CORE_SR, 0);
    *up = nvfp4_core_e2m1_encode(y, NVFP4_CORE_SR, 255);
}

static void add_cause(nvfp4_sr_report *rep, nvfp4_cause c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void add_cause(nvfp4_sr_report *rep, nvfp4_cause c, const char *fmt, ...)
{
    if (rep->n_causes >= NVFP4_VERIFY_MAX_CAUSES) return;
    nvfp4_vcause_line *l = &rep->causes[rep->n_causes++];
    l->cause = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->line, sizeof l->line, fmt, ap);
    va_end(ap);
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

static void statistical(const nvfp4_sr_input *in, nvfp4_sr_report *rep, unsigned *k, double *p, uint8_t *dn,
                        uint8_t *upc)
{
    size_t n = in->n, N = in->samples;
    double a4 = in->alpha / 4.0;
    pv *pvals = malloc((n ? n : 1) * sizeof *pvals);
    size_t m = 0;
    double num = 0, var = 0;
    for (size_t i = 0; i < n; i++) {
        float y = in->y[i];
        double step = nvfp4_core_e2m1_step(nvfp4_core_fabs(y));
        if (!(p[i] > 0.0 && p[i] < 1.0)) continue;
        rep->tested++;
        if (pvals) pvals[m++] = (pv){binom_two_sided(k[i], p[i], (unsigned)N), i};
        num += step * ((double)k[i] - (double)N * p[i]);
        var += step * step * (double)N * p[i] * (1.0 - p[i]);
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
    /* 2. mean */
    rep->mean_z = var > 0 ? num / sqrt(var) : 0.0;
    rep->mean_pvalue = var > 0 ? normal_two_sided(rep->mean_z) : 1.0;
    rep->bias_per_element = rep->tested ? num / ((double)N * (double)rep->tested) : 0.0;
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

    bool dependent = rep->serial_pvalue < a4 || rep->neighbour_pvalue < a4 || rep->identical_pairs;
    char p1[32], p2[32], p3[32], al[32], bias[32];
    if (dependent)
        add_cause(rep, NVFP4_CAUSE_SR_DEPENDENT,
                  "sr: random bits look dependent: runs across samples z = %.1f (p = %s), adjacent elements z = %.1f "
                  "(p = %s), %zu identical consecutive samples",
                  rep->serial_z, nvfp4_format_f64_digits(rep->serial_pvalue, 2, p1, sizeof p1), rep->neighbour_z,
                  nvfp4_format_f64_digits(rep->neighbour_pvalue, 2, p2, sizeof p2), rep->identical_pairs);
    nvfp4_format_f64_digits(a4, 2, al, sizeof al);
    if (rep->mean_pvalue < a4)
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: biased: the mean is off its exact expectation by %s%s scaled units per element (z = %.1f, p = "
                  "%s < %s); rounds %s too often",
                  signbit(rep->bias_per_element) ? "" : "+", nvfp4_format_f64_digits(rep->bias_per_element, 3, bias, sizeof bias),
                  rep->mean_z, nvfp4_format_f64_digits(rep->mean_pvalue, 2, p3, sizeof p3), al,
                  rep->mean_z > 0 ? "up" : "down");
    else if (rep->rejected)
        add_cause(rep, dependent ? NVFP4_CAUSE_SR_DEPENDENT : NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu elements round up with a frequency inconsistent with their exact probability (Holm, "
                  "family-wise alpha %s; %zu too often, %zu too rarely)%s",
                  rep->rejected, al, rep->rejected_high, rep->rejected_low,
                  dependent ? ": consistent with the dependence above" : "");
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
    unsigned *k = calloc(n, sizeof *k);
    double *p = calloc(n, sizeof *p);
    uint8_t *dn = calloc(n, 1), *up = calloc(n, 1);
    if (!k || !p || !dn || !up) {
        free(k), free(p), free(dn), free(up);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "sr-test: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        p[i] = nvfp4_sr_p_up(in->y[i]);
        sr_neighbours(in->y[i], &dn[i], &up[i]);
        for (size_t s = 0; s < in->samples; s++) {
            int u = up_of(in, s, i, dn[i], up[i]);
            if (u < 0) rep->invalid++;
            else if (u == 1) k[i]++;
        }
        bool random = p[i] > 0.0 && p[i] < 1.0;
        if (!random && k[i] != 0) rep->impossible++;
    }
    if (rep->invalid)
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu codes are neither neighbour of the scaled value (not a rounding of it at all)", rep->invalid);
    else if (rep->impossible)
        add_cause(rep, NVFP4_CAUSE_BIASED_SR,
                  "sr: %zu elements that lie exactly on the grid (probability 0) were rounded away", rep->impossible);
    statistical(in, rep, k, p, dn, up);
    if (in->bitexact) bitexact(in, rep);
    rep->pass = rep->n_causes == 0 && (!in->bitexact || rep->bitexact_mismatches == 0);
    free(k), free(p), free(dn), free(up);
    return NVFP4_OK;
}

/* ---- GEMM ---------------------------------------------------------------------------- */

void nvfp4_gemm_check(const float *actual, const float *te, const double *exact, const double *bound, size_t n,
                      nvfp4_gemm_check_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->total = n;
    for (size_t i = 0; i < n; i++) {
        double a = (double)actual[i], x = exact[i], b = bound[i];
        if (te) {
            uint32_t ua, ut;
            memcpy(&ua, &actual[i], 4);
            memcpy(&ut, &te[i], 4);
            rep->te_equal += ua == ut || (isnan(actual[i]) && isnan(te[i]));
        }
        if (!isfinite(a) || !isfinite(x)) {
            bool same = (isnan(a) && isnan(x)) || a == x;
            if (!same) {
                rep->nan_mismatch++;
                rep->outside_bound++;
                rep->worst_ratio = INFINITY;
                rep->worst_index = i;
            }
            continue;
        }
        double d = fabs(a - x);
        double ratio = d == 0.0 ? 0.0 : (b > 0.0 ? d / b : INFINITY);
        if (ratio > 1.0) rep->outside_bound++;
        if (ratio > rep->worst_ratio) {
            rep->worst_ratio = ratio;
            rep->worst_index = i;
        }
    }
    rep->within_bound = rep->outside_bound == 0;
    rep->equals_te = te && rep->te_equal == n;
}
