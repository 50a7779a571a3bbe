/* gradprobe.h - statistics of K noisy estimates g_1..g_K of an exact
 * gradient g (S5, s5_gradfid.c): bias of their mean, their spread and
 * cosine, accumulated draw by draw in double (not public). */
#ifndef NVFP4_STUDY_GRADPROBE_H
#define NVFP4_STUDY_GRADPROBE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const float *g;     /* the exact gradient (n values, not owned) */
    size_t n, kq, k;    /* kq: the first kq draws also form a sub-mean */
    double *sum, *sumq; /* sum of the draws, of the first kq draws */
    double *wmean, *wm2; /* Welford's running mean and sum of squared deviations */
    double gn2, se_sum, cos_sum;
} st_gradprobe;

typedef struct {
    double grad_norm;         /* ||g|| */
    double rel_mse1;          /* mean_k ||g_k - g||^2 / ||g||^2: one draw's squared error */
    double rel_bias;          /* ||mean_K - g|| / ||g|| */
    double rel_bias_sub;      /* ||mean of the first kq draws - g|| / ||g|| */
    double rel_var;           /* sum_k ||g_k - mean_K||^2 / (K - 1) / ||g||^2 (0 when K < 2) */
    double rel_bias_debiased; /* sqrt(max(0, ||mean_K - g||^2 - var / K)) / ||g||: E||mean_K - g||^2 = b^2 + var/K */
    double cos_mean;          /* mean_k cos(g_k, g) (0 for a zero draw) */
} st_gradprobe_stats;

bool st_gradprobe_init(st_gradprobe *p, const float *g, size_t n, size_t kq);
void st_gradprobe_add(st_gradprobe *p, const float *gk);
void st_gradprobe_finish(const st_gradprobe *p, st_gradprobe_stats *s);
void st_gradprobe_free(st_gradprobe *p);

#endif
