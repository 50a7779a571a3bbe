/*
 * gradprobe.c - bias and variance of K noisy gradient estimates against the
 * exact gradient (S5). The per-draw squared errors are summed as they come,
 * so the spread around the K-draw mean follows without keeping the draws:
 * sum_k ||g_k - m||^2 = sum_k ||g_k - g||^2 - K ||m - g||^2.
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
    for (size_t i = 0; i < n; i++) p->gn2 += (double)g[i] * g[i];
    return p->sum && p->sumq;
}

void st_gradprobe_add(st_gradprobe *p, const float *gk)
{
    double e = 0.0, dot = 0.0, nk = 0.0;
    bool sub = p->k < p->kq;
    for (size_t i = 0; i < p->n; i++) {
        double x = gk[i], d = x - p->g[i];
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
    double K = (double)p->k, kq = (double)(p->k < p->kq ? p->k : p->kq), b2 = 0.0, bq2 = 0.0;
    for (size_t i = 0; i < p->n; i++) {
        double m = p->sum[i] / K - p->g[i], mq = p->sumq[i] / kq - p->g[i];
        b2 += m * m;
        bq2 += mq * mq;
    }
    double var = p->k > 1 ? (p->se_sum - K * b2) / (K - 1.0) : 0.0;
    if (var < 0) var = 0; /* rounding of the subtraction when every draw is the same */
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
    memset(p, 0, sizeof *p);
}
