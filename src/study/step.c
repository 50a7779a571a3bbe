/*
 * step.c - one model's optimizer step on the batch in place: forward, loss,
 * backward (micro-batch by micro-batch under gradient accumulation),
 * clipping and the update; and which steps are logged. It steps the model
 * it is handed (the quantized one or the FP32 shadow) and knows nothing of
 * the other, of logging or of the run (train.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "study/optim.h"
#include "study/step.h"

static float *fa(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Forward, loss and backward of one (micro-)batch of T rows already in
 * the model's inputs, labels lab: the gradient in m->g, the loss in *loss. */
static nvfp4_status micro_grad(st_model *m, st_task *t, const nvfp4_train_cfg *tc, bool shadow, size_t step,
                               size_t T, const uint32_t *lab, lin_diag *dg, double *loss, nvfp4_error *err)
{
    float *y;
    nvfp4_status s = st_model_forward(m, tc, shadow, step, T, dg, &y, err);
    if (s != NVFP4_OK) return s;
    *loss = st_task_loss(tc, y, T, lab, t->targets, m->d1 /* dy scratch */);
    /* copy dy out of d1: backward uses d1..d3 as scratch */
    float *gy = malloc(T * tc->model.d_out * sizeof *gy);
    if (!gy) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    memcpy(gy, m->d1, T * tc->model.d_out * sizeof *gy);
    s = st_model_backward(m, tc, shadow, step, T, gy, dg, err);
    free(gy);
    return s;
}

nvfp4_status st_step_grad(st_model *m, st_task *t, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                          const uint32_t *tok, const uint32_t *lab, lin_diag *dg, double *loss, nvfp4_error *err)
{
    size_t k = st_task_accum(tc);
    if (k == 1 && !tok) return micro_grad(m, t, tc, shadow, step, T, t->labels, dg, loss, err);
    if (k > 1 && !m->gacc && !(m->gacc = fa(m->np))) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    double sum = 0.0;
    for (size_t i = 0; i < k; i++) {
        double li;
        memcpy(m->tok, tok + i * T, T * sizeof *m->tok);
        nvfp4_status s = micro_grad(m, t, tc, shadow, step, T, lab + i * T, i ? NULL : dg, &li, err);
        if (s != NVFP4_OK) return s;
        sum += li;
        if (k == 1) break;
        if (i == 0) memcpy(m->gacc, m->g, m->np * sizeof *m->g);
        else
            for (size_t j = 0; j < m->np; j++) m->gacc[j] += m->g[j];
    }
    if (k > 1) {
        const float kf = (float)k;
        for (size_t j = 0; j < m->np; j++) m->g[j] = m->gacc[j] / kf;
    }
    *loss = sum / (double)k;
    return NVFP4_OK;
}

nvfp4_status st_step_model(st_model *m, st_task *t, const nvfp4_train_cfg *cfg, bool shadow, size_t step, size_t T,
                           double lr, lin_diag *dg, double *loss, double *sec, nvfp4_error *err)
{
    double t0 = mono_s();
    bool acc = st_task_accum(cfg) > 1;
    nvfp4_status s = st_step_grad(m, t, cfg, shadow, step, T, acc ? t->acc_tok : NULL, acc ? t->acc_lab : NULL, dg, loss,
                                  err);
    if (s != NVFP4_OK) return s;
    st_clip_gradient(m->g, m->np, cfg->grad_clip);
    st_optim_update(cfg, step, lr, m->np, m->p, m->g, m->m, m->v);
    *sec += mono_s() - t0;
    return NVFP4_OK;
}

bool st_step_logged(const nvfp4_train_cfg *c, size_t step)
{
    return step % (c->log_every ? c->log_every : 1) == 0 || step + 1 == c->steps;
}
