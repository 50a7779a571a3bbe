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

void st_gradnoise_summary(const st_table *t, json_t *root)
{
    json_t *arr = json_array();
    for (size_t a = 0; a < t->narms; a++) {
        double noise[256], qerr[256];
        size_t n = 0, step = 0;
        for (size_t k = 0; k < t->nfin && n < 256; k++) {
            if (t->fin[k].arm != a) continue;
            const st_row *r = last_probe(t, a, t->fin[k].seed);
            if (!r) continue;
            noise[n] = r->grad_noise;
            qerr[n++] = r->grad_qerr;
            step = r->step;
        }
        if (!n) continue;
        double mn, cn, mq, cq;
        st_mean_ci(noise, n, &mn, &cn);
        st_mean_ci(qerr, n, &mq, &cq);
        json_t *o = json_object();
        json_object_set_new(o, "arm", json_string(t->arms[a]));
        json_object_set_new(o, "seeds", json_integer((json_int_t)n));
        json_object_set_new(o, "step", json_integer((json_int_t)step));
#define NUM(k, v) json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null())
        NUM("noise_mean", mn);
        NUM("noise_ci95", cn);
        NUM("qerr_mean", mq);
        NUM("qerr_ci95", cq);
        NUM("noise_to_qerr", mq > 0 ? mn / mq : NAN);
#undef NUM
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
