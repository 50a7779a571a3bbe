/*
 * gradprobe.c - bias and variance of K noisy gradient estimates against the
 * exact gradient (S5), draw by draw without keeping the draws. The spread
 * around the K-draw mean is Welford's running sum of squares per element,
 * so identical draws (RTN) give exactly 0, which the difference
 * sum_k ||g_k - g||^2 - K ||m - g||^2 would not after rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/gradprobe.h"

bool st_gradprobe_init(st_gradprobe *p, const float *g, size_t n, size_t kq)
{
    memset(p, 0, sizeof *p);
    p->g = g;
    p->n = n;
    p->kq = kq ? kq : 1;
    p->sum = calloc(n ? n : 1, sizeof *p->sum);
    p->sumq = calloc(n ? n : 1, sizeof *p->sumq);
    p->wmean = calloc(n ? n : 1, sizeof *p->wmean);
    p->wm2 = calloc(n ? n : 1, sizeof *p->wm2);
    for (size_t i = 0; i < n; i++) p->gn2 += (double)g[i] * g[i];
    return p->sum && p->sumq && p->wmean && p->wm2;
}

void st_gradprobe_add(st_gradprobe *p, const float *gk)
{
    double e = 0.0, dot = 0.0, nk = 0.0;
    bool sub = p->k < p->kq;
    double k1 = (double)(p->k + 1);
    for (size_t i = 0; i < p->n; i++) {
        double x = gk[i], d = x - p->g[i], delta = x - p->wmean[i];
        p->wmean[i] += delta / k1;
        p->wm2[i] += delta * (x - p->wmean[i]);
        p->sum[i] += x;
        if (sub) p->sumq[i] += x;
        e += d * d;
        dot += x * p->g[i];
        nk += x * x;
    }
    p->se_sum += e;
    p->cos_sum += nk > 0 && p->gn2 > 0 ? dot / sqrt(nk * p->gn2) : 0.0;
    p->k++;
}

void st_gradprobe_finish(const st_gradprobe *p, st_gradprobe_stats *s)
{
    double K = (double)p->k, kq = (double)(p->k < p->kq ? p->k : p->kq), b2 = 0.0, bq2 = 0.0, m2 = 0.0;
    for (size_t i = 0; i < p->n; i++) {
        double m = p->sum[i] / K - p->g[i], mq = p->sumq[i] / kq - p->g[i];
        b2 += m * m;
        bq2 += mq * mq;
        m2 += p->wm2[i];
    }
    double var = p->k > 1 ? m2 / (K - 1.0) : 0.0;
    double g2 = p->gn2 > 0 ? p->gn2 : NAN;
    s->grad_norm = sqrt(p->gn2);
    s->rel_mse1 = p->se_sum / K / g2;
    s->rel_bias = sqrt(b2 / g2);
    s->rel_bias_sub = sqrt(bq2 / g2);
    s->rel_var = var / g2;
    s->rel_bias_debiased = sqrt((b2 - var / K > 0 ? b2 - var / K : 0.0) / g2);
    s->cos_mean = p->cos_sum / K;
}

void st_gradprobe_free(st_gradprobe *p)
{
    free(p->sum);
    free(p->sumq);
    free(p->wmean);
    free(p->wm2);
    memset(p, 0, sizeof *p);
}
