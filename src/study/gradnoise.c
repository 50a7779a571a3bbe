/*
 * gradnoise.c - what the summary and the findings read from the gradient
 * probe's columns of runs.csv (probe.c, st_probe_gradient): per arm, the sampling
 * noise against the quantized gradient's error at the last probed step
 * (summary.json "noise_to_quant"), and the paired comparison of two arms'
 * gradient error over seeds, the finding the component ablations add beside
 * the final loss (docs/studies.md, "Gradient probe"). Names no study.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "study/studies.h"
#include "study/verdict.h"

static bool probed(const st_row *r) { return isfinite(r->grad_noise) && isfinite(r->grad_qerr); }

/* The last probed row of (arm, seed), NULL when none. */
static const st_row *last_probe(const st_table *t, size_t arm, uint64_t seed)
{
    const st_row *best = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const st_row *r = &t->rows[i];
        if (r->arm == arm && r->seed == seed && probed(r) && (!best || r->step > best->step)) best = r;
    }
    return best;
}

/* Mean over the probed rows of (arm, seed) of grad_qerr; NAN when none. */
static double mean_qerr(const st_table *t, size_t arm, uint64_t seed)
{
    double s = 0.0;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const st_row *r = &t->rows[i];
        if (r->arm == arm && r->seed == seed && probed(r)) {
            s += r->grad_qerr;
            n++;
        }
    }
    return n ? s / (double)n : NAN;
}

/* The gradient noise scale B_noise = tr(Sigma)/|G|^2 in tokens (McCandlish et
 * al. 2018, "simple noise scale"), from the probe's noise r = |g_A - g_B|/|g_A|
 * of two independent batches of `tokens` tokens each: with E|g_A - g_B|^2 =
 * 2 tr(Sigma)/B and E|g_A|^2 = |G|^2 + tr(Sigma)/B, r^2 = 2s/(1 + s) for s =
 * B_noise/B, so B_noise = B r^2/(2 - r^2). NAN where r^2 >= 2: at this batch
 * the probe does not resolve the gradient's signal from its noise. */
double st_noise_scale_tokens(double noise, double tokens)
{
    double r2 = noise * noise;
    return r2 < 2.0 ? tokens * r2 / (2.0 - r2) : NAN;
}

/* The tokens per step at which the probe's noise would equal the
 * quantization error at the same weights, from the noise scale and the
 * error e measured at a batch of `tokens`. The error's absolute size
 * |g_q - g_A| is taken as independent of the batch (probe_scale measured
 * it so at the end of training: at 4x and 16x the batch it stayed within
 * a few percent while the relative error grew as |g_A| fell; mid-run a
 * part of it averaged out; docs/studies.md, "Measured at larger
 * batches"), so relative to the gradient e^2 =
 * eps/(1 + s) with eps = e0^2 (1 + s0) at the measured s0 = B_noise/B0.
 * The noise r^2 = 2s/(1 + s) meets it at s = eps/2: B = 2 B_noise/eps.
 * NAN where e is 0 or not finite, or B_noise or the batch is undefined. */
double st_tokens_for_parity(double noise_scale, double qerr, double tokens)
{
    double e2 = qerr * qerr;
    if (!(e2 > 0.0) || !isfinite(e2) || !(noise_scale >= 0.0) || !isfinite(noise_scale) || !(tokens > 0.0))
        return NAN;
    double eps = e2 * (1.0 + noise_scale / tokens);
    return 2.0 * noise_scale / eps;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *pair(double lo, double hi)
{
    json_t *a = json_array();
    json_array_append_new(a, num_or_null(lo));
    json_array_append_new(a, num_or_null(hi));
    return a;
}

/* The noise scale and the parity batch of one arm, from the means and 95% t
 * half-widths of its noise (mn, cn) and error (mq, cq) at a batch of
 * `tokens`. Both maps are monotone (the scale rises with r, the parity batch
 * with r and falls with e), so the noise interval's ends give the scale's
 * 95% interval, and the corners of the two intervals an interval for the
 * parity batch that covers with at least 90% (Bonferroni); an unbounded end
 * (r reaching sqrt(2), e reaching 0) is null. Without an interval (one seed)
 * both are [null, null]. */
static void noise_scale_fields(json_t *o, double mn, double cn, double mq, double cq, uint64_t tokens)
{
    double b = (double)tokens;
    double scale = tokens ? st_noise_scale_tokens(mn, b) : NAN;
    bool ci = tokens && isfinite(cn) && isfinite(cq);
    double s_lo = ci ? st_noise_scale_tokens(fmax(mn - cn, 0.0), b) : NAN;
    double s_hi = ci ? st_noise_scale_tokens(mn + cn, b) : NAN;
    json_object_set_new(o, "tokens_per_step", json_integer((json_int_t)tokens));
    json_object_set_new(o, "noise_scale_tokens", num_or_null(scale));
    json_object_set_new(o, "noise_scale_ci95", pair(s_lo, s_hi));
    json_object_set_new(o, "tokens_for_parity", num_or_null(st_tokens_for_parity(scale, mq, b)));
    json_object_set_new(o, "tokens_for_parity_ci90",
                        pair(ci ? st_tokens_for_parity(s_lo, mq + cq, b) : NAN,
                             ci ? st_tokens_for_parity(s_hi, fmax(mq - cq, 0.0), b) : NAN));
}

void st_gradnoise_summary(const st_table *t, json_t *root)
{
    json_t *arr = json_array();
    for (size_t a = 0; a < t->narms; a++) {
        double noise[256], qerr[256];
        size_t n = 0, step = 0;
        uint64_t tokens = 0;
        for (size_t k = 0; k < t->nfin && n < 256; k++) {
            if (t->fin[k].arm != a) continue;
            const st_row *r = last_probe(t, a, t->fin[k].seed);
            if (!r) continue;
            noise[n] = r->grad_noise;
            qerr[n++] = r->grad_qerr;
            step = r->step;
            /* the probe's batch; in a runs.csv without the column, the step's
             * (runs.csv counts the tokens before the step) */
            tokens = r->probe_tokens ? r->probe_tokens : (r->step ? r->tokens / r->step : 0);
        }
        if (!n) continue;
        double mn, cn, mq, cq;
        st_mean_ci(noise, n, &mn, &cn);
        st_mean_ci(qerr, n, &mq, &cq);
        json_t *o = json_object();
        json_object_set_new(o, "arm", json_string(t->arms[a]));
        json_object_set_new(o, "seeds", json_integer((json_int_t)n));
        json_object_set_new(o, "step", json_integer((json_int_t)step));
        json_object_set_new(o, "noise_mean", num_or_null(mn));
        json_object_set_new(o, "noise_ci95", num_or_null(cn));
        json_object_set_new(o, "qerr_mean", num_or_null(mq));
        json_object_set_new(o, "qerr_ci95", num_or_null(cq));
        json_object_set_new(o, "noise_to_qerr", num_or_null(mq > 0 ? mn / mq : NAN));
        noise_scale_fields(o, mn, cn, mq, cq, tokens);
        json_array_append_new(arr, o);
    }
    if (json_array_size(arr)) json_object_set_new(root, "noise_to_quant", arr);
    else json_decref(arr);
}

void st_finding_qerr(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                     const char *better)
{
    const char *arms[2] = {worse, better};
    ssize_t aw = st_arm_index(t, worse), ab = st_arm_index(t, better);
    if (aw < 0 || ab < 0) return;
    const st_row *r[2 * 256];
    size_t n = st_paired_finals(t, arms, 2, r, 256), m = 0;
    double d[256];
    for (size_t i = 0; i < n; i++) {
        double x = mean_qerr(t, (size_t)aw, r[2 * i]->seed), y = mean_qerr(t, (size_t)ab, r[2 * i]->seed);
        if (isfinite(x) && isfinite(y)) d[m++] = x - y;
    }
    if (!m) return;
    st_estimate e;
    st_est_t(d, m, &e);
    char buf[400];
    snprintf(buf, sizeof buf,
             "gradient error ||g_q - g||/||g|| (mean over the run's probes), %s - %s = %+.4f, 95%% CI [%+.4f, %+.4f] "
             "(paired t, %zu seeds)",
             worse, better, e.est, e.lo, e.hi, m);
    st_finding_est(out, claim, source, buf, &e, +1, NAN, "gradient error difference", arms, 2);
}
