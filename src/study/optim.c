/*
 * optim.c - the training engine's optimizer: global-norm gradient clipping,
 * AdamW (decoupled weight decay, Loshchilov & Hutter, arXiv 1711.05101) and
 * SGD with momentum, over flat float arrays. It knows nothing of models or
 * tasks: the run hands it its parameter, gradient and moment buffers.
 */
#include <math.h>

#include "study/optim.h"

void st_clip_gradient(float *g, size_t np, float clip)
{
    if (!(clip > 0.0f)) return;
    double ss = 0.0;
    for (size_t i = 0; i < np; i++) ss += (double)g[i] * g[i];
    double norm = sqrt(ss);
    if (!(norm > clip)) return;
    float f = (float)(clip / norm);
    for (size_t i = 0; i < np; i++) g[i] *= f;
}

/* AdamW in double per parameter. Its own loop without branches,
 * vectorized: the square root of a non-negative value never sets errno, and
 * optim.o is built with -fno-math-errno (mk/study.mk) so that sqrt becomes
 * the vector instruction, which is correctly rounded like the libm call:
 * the same bytes. */
static void adam_update(const nvfp4_train_cfg *tc, double lr, double bc1, double bc2, size_t np, float *restrict p,
                        const float *restrict g, float *restrict mm, float *restrict v)
{
    const float b1 = tc->beta1, b2 = tc->beta2, c1 = 1.0f - tc->beta1, c2 = 1.0f - tc->beta2;
    const double eps = tc->adam_eps;
    const float wd = tc->weight_decay; /* wd * p[i] is a float product, as it always was */
#pragma omp simd /* independent elements, each computed as the scalar code does */
    for (size_t i = 0; i < np; i++) {
        mm[i] = b1 * mm[i] + c1 * g[i];
        v[i] = b2 * v[i] + c2 * g[i] * g[i];
        double upd = (mm[i] / bc1) / (sqrt(v[i] / bc2) + eps) + wd * p[i];
        p[i] = (float)(p[i] - lr * upd);
    }
}

static void sgd_update(const nvfp4_train_cfg *tc, double lr, size_t np, float *p, const float *g, float *m)
{
    for (size_t i = 0; i < np; i++) {
        m[i] = tc->momentum * m[i] + g[i];
        p[i] = (float)(p[i] - lr * (m[i] + tc->weight_decay * p[i]));
    }
}

void st_optim_update(const nvfp4_train_cfg *tc, size_t step, double lr, size_t np, float *p, const float *g, float *m,
                     float *v)
{
    double t = (double)step + 1.0;
    double bc1 = 1.0 - pow(tc->beta1, t), bc2 = 1.0 - pow(tc->beta2, t);
    if (tc->opt == NVFP4_OPT_ADAM) adam_update(tc, lr, bc1, bc2, np, p, g, m, v);
    else sgd_update(tc, lr, np, p, g, m);
}
