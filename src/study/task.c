/*
 * task.c - what a run learns: teacher-student regression (MSE against a
 * fixed FP32 teacher, labels scaled to unit RMS, optional label noise),
 * next-token prediction on an order-2 Markov source with a computable
 * entropy rate (the tiny LM), and the GPT's next token on its sequence data
 * (seqdata.c). Every draw is keyed by the seed and counters on the named
 * streams of rng.h. It fills models' inputs and evaluates them; it never
 * steps one (train.c does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/rng.h"
#include "study/task.h"

static float *fa(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* Advances a window of ctx tokens by one token drawn with uniform u. */
static uint32_t stream_push(const st_task *t, const nvfp4_train_cfg *c, uint32_t *h, double u)
{
    size_t ctx = c->model.ctx;
    uint32_t nt = st_markov_next(t->P, c->model.vocab, h[ctx - 2], h[ctx - 1], u);
    memmove(h, h + 1, (ctx - 1) * sizeof *h);
    h[ctx - 1] = nt;
    return nt;
}

static void lm_setup(st_task *t, const nvfp4_train_cfg *c)
{
    size_t V = c->model.vocab, ctx = c->model.ctx, B = c->batch;
    st_markov_build(c->seed, V, t->P, &t->entropy);
    /* training streams, burned in */
    for (size_t b = 0; b < B; b++) {
        uint32_t *h = t->hist + b * ctx;
        for (size_t j = 0; j < ctx; j++) h[j] = (uint32_t)(st_uniform(c->seed, ST_STREAM_LM_START, b * ctx + j) * (double)V);
        for (size_t k = 0; k < 256; k++) stream_push(t, c, h, st_uniform(c->seed, ST_STREAM_LM_BURNIN_BASE + b, k));
    }
    /* evaluation set: independent streams */
    uint32_t *h = malloc(ctx * sizeof *h);
    for (size_t e = 0; e < ST_EVAL_N; e++) {
        for (size_t j = 0; j < ctx; j++)
            h[j] = (uint32_t)(st_uniform(c->seed, ST_STREAM_LM_EVAL_START, e * ctx + j) * (double)V);
        for (size_t k = 0; k < 256; k++) stream_push(t, c, h, st_uniform(c->seed, ST_STREAM_LM_EVAL_BURNIN, e * 1024 + k));
        memcpy(t->eval_tok + e * ctx, h, ctx * sizeof *h);
        t->eval_lab[e] = stream_push(t, c, h, st_uniform(c->seed, ST_STREAM_LM_EVAL_LABEL, e));
    }
    free(h);
}

/* Teacher forward of T rows into `out` (FP32 model). */
static void teacher_out(st_task *t, const nvfp4_train_cfg *c, const float *x, size_t T, float *out)
{
    st_model *m = &t->teacher;
    memcpy(m->inp, x, T * m->mc.d_in * sizeof(float));
    float *y;
    nvfp4_train_cfg tc = *c;
    nvfp4_recipe_cfg_fp32(&tc.recipe);
    if (st_model_forward(m, &tc, true, 0, T, NULL, &y, NULL) == NVFP4_OK)
        memcpy(out, y, T * m->mc.d_out * sizeof(float));
}

static void regression_setup(st_task *t, const nvfp4_train_cfg *cfg)
{
    const nvfp4_model_cfg *c = &cfg->model;
    st_model_init_params(&t->teacher, cfg->seed, ST_STREAM_TEACHER_BASE, 1.0f);
    for (size_t i = 0; i < ST_EVAL_N * c->d_in; i++) t->test_x[i] = (float)st_normal(cfg->seed, ST_STREAM_REG_TEST_X, i);
    size_t T = cfg->batch;
    double ss = 0.0;
    for (size_t e = 0; e < ST_EVAL_N; e += T) {
        size_t n = ST_EVAL_N - e < T ? ST_EVAL_N - e : T;
        teacher_out(t, cfg, t->test_x + e * c->d_in, n, t->test_y + e * c->d_out);
    }
    for (size_t i = 0; i < ST_EVAL_N * c->d_out; i++) ss += (double)t->test_y[i] * t->test_y[i];
    t->label_scale = (float)(1.0 / sqrt(ss / (double)(ST_EVAL_N * c->d_out) + 1e-30));
    for (size_t i = 0; i < ST_EVAL_N * c->d_out; i++) t->test_y[i] *= t->label_scale;
}

nvfp4_status st_task_create(st_task *t, const nvfp4_train_cfg *cfg, nvfp4_error *err)
{
    const nvfp4_model_cfg *c = &cfg->model;
    size_t T = cfg->batch, rows = st_task_rows(cfg), k = st_task_accum(cfg);
    t->labels = calloc(rows, sizeof *t->labels);
    t->targets = fa(st_task_is_gpt(cfg) ? 1 : T * c->d_out);
    bool ok = t->labels && t->targets;
    if (ok && st_task_is_gpt(cfg)) {
        nvfp4_status s = st_seqdata_create(cfg, &t->seq, err);
        if (s != NVFP4_OK) return s;
        t->entropy = st_seqdata_entropy(t->seq);
        if (k > 1) {
            t->acc_tok = calloc(k * rows, sizeof *t->acc_tok);
            t->acc_lab = calloc(k * rows, sizeof *t->acc_lab);
            ok = t->acc_tok && t->acc_lab;
        }
    } else if (ok && c->vocab) {
        size_t V = c->vocab;
        t->P = malloc(V * V * V * sizeof *t->P);
        t->hist = calloc(T * c->ctx, sizeof *t->hist);
        t->eval_tok = calloc(ST_EVAL_N * c->ctx, sizeof *t->eval_tok);
        t->eval_lab = calloc(ST_EVAL_N, sizeof *t->eval_lab);
        ok = t->P && t->hist && t->eval_tok && t->eval_lab;
        if (ok) lm_setup(t, cfg);
    } else if (ok) {
        ok = st_model_alloc(&t->teacher, c, T);
        t->test_x = fa(ST_EVAL_N * c->d_in);
        t->test_y = fa(ST_EVAL_N * c->d_out);
        ok = ok && t->test_x && t->test_y;
        if (ok) regression_setup(t, cfg);
    }
    return ok ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "run: out of memory");
}

void st_task_free(st_task *t)
{
    st_model_free(&t->teacher);
    free(t->test_x);
    free(t->test_y);
    free(t->P);
    free(t->hist);
    free(t->eval_tok);
    free(t->eval_lab);
    free(t->labels);
    free(t->targets);
    st_seqdata_free(t->seq);
    free(t->acc_tok);
    free(t->acc_lab);
    memset(t, 0, sizeof *t);
}

void st_task_batch(st_task *t, const nvfp4_train_cfg *cfg, size_t step, st_model *q, st_model *ref)
{
    const nvfp4_model_cfg *c = &cfg->model;
    size_t T = cfg->batch;
    if (st_task_is_gpt(cfg) && st_task_accum(cfg) > 1) {
        /* the accum_steps * batch sequences a batch that large would draw */
        st_seqdata_batch(t->seq, cfg->seed, step, st_task_accum(cfg) * T, c->seq_len, t->acc_tok, t->acc_lab);
    } else if (st_task_is_gpt(cfg)) {
        st_seqdata_batch(t->seq, cfg->seed, step, T, c->seq_len, q->tok, t->labels);
        memcpy(ref->tok, q->tok, T * c->seq_len * sizeof *q->tok);
    } else if (st_task_is_lm(cfg)) {
        for (size_t b = 0; b < T; b++) {
            uint32_t *h = t->hist + b * c->ctx;
            memcpy(q->tok + b * c->ctx, h, c->ctx * sizeof *h);
            t->labels[b] = stream_push(t, cfg, h, st_uniform(cfg->seed, ST_STREAM_LM_LABEL, (uint64_t)step * T + b));
        }
        memcpy(ref->tok, q->tok, T * c->ctx * sizeof *q->tok);
        st_model_embed(q, q->tok, T);
        st_model_embed(ref, ref->tok, T);
    } else {
        uint64_t base = (uint64_t)step * T * c->d_in;
        for (size_t i = 0; i < T * c->d_in; i++) q->inp[i] = (float)st_normal(cfg->seed, ST_STREAM_REG_X, base + i);
        memcpy(ref->inp, q->inp, T * c->d_in * sizeof(float));
        teacher_out(t, cfg, q->inp, T, t->targets);
        uint64_t nb = (uint64_t)step * T * c->d_out;
        for (size_t i = 0; i < T * c->d_out; i++)
            t->targets[i] = t->targets[i] * t->label_scale +
                            cfg->label_noise * (float)st_normal(cfg->seed, ST_STREAM_REG_NOISE, nb + i);
    }
}

double st_task_loss(const nvfp4_train_cfg *c, const float *y, size_t T, const uint32_t *lab, const float *tgt,
                    float *dy)
{
    if (st_task_is_lm(c)) return nvfp4_ce_loss(y, lab, T, c->model.d_out, dy);
    return nvfp4_mse_loss(y, tgt, T, c->model.d_out, dy);
}

/* The GPT's loss on held-out windows first, first + stride, ... of n
 * (st_seqdata_heldout), batch by batch (labels in t->labels). */
static nvfp4_status eval_windows_gpt(st_task *t, const nvfp4_train_cfg *c, st_model *m, bool shadow, size_t step,
                                     size_t first, size_t stride, size_t n, double *out, nvfp4_error *err)
{
    size_t B = c->batch, S = c->model.seq_len, done = 0;
    double tot = 0.0;
    for (size_t w = first; w < n;) {
        size_t k = 0;
        for (; k < B && w < n; k++, w += stride)
            st_seqdata_heldout(t->seq, w, n, S, m->tok + k * S, t->labels + k * S);
        float *y;
        nvfp4_status s = st_model_forward(m, c, shadow, step, k * S, NULL, &y, err);
        if (s != NVFP4_OK) return s;
        tot += nvfp4_ce_loss(y, t->labels, k * S, c->model.vocab, NULL) * (double)k;
        done += k;
    }
    *out = done ? tot / (double)done : NAN;
    return NVFP4_OK;
}

/* Which share of the final metric's held-out set step evaluates: the last
 * heldout_evals logged steps take shares heldout_evals - 1, ..., 0 (the
 * final step share 0); -1 for the other steps and when there is none. */
static long heldout_share(const nvfp4_train_cfg *c, size_t step)
{
    size_t K = c->heldout_evals, n = c->steps, le = c->log_every ? c->log_every : 1;
    if (!st_task_is_gpt(c) || c->heldout_tokens == 0 || K == 0 || step >= n) return -1;
    if (step % le != 0 && step + 1 != n) return -1;
    /* logged steps after this one: the multiples of le in (step, n - 1], and
     * n - 1 when it is not one of them */
    size_t later = step + 1 == n ? 0 : (n - 1) / le - step / le + ((n - 1) % le ? 1 : 0);
    return later < K ? (long)later : -1;
}

/* The eval loss: the GPT's over every sequence of the small fixed held-out
 * set; the others' over the ST_EVAL_N rows of their evaluation set. */
static nvfp4_status eval_loss(st_task *t, const nvfp4_train_cfg *cfg, st_model *m, bool shadow, size_t step,
                              double *out, nvfp4_error *err)
{
    const nvfp4_model_cfg *c = &cfg->model;
    size_t T = cfg->batch;
    if (st_task_is_gpt(cfg)) return eval_windows_gpt(t, cfg, m, shadow, step, 0, 1, st_seqdata_n_eval(t->seq), out, err);
    double tot = 0.0;
    for (size_t e = 0; e < ST_EVAL_N; e += T) {
        size_t n = ST_EVAL_N - e < T ? ST_EVAL_N - e : T;
        float *y;
        if (st_task_is_lm(cfg)) {
            memcpy(m->tok, t->eval_tok + e * c->ctx, n * c->ctx * sizeof *m->tok);
            st_model_embed(m, m->tok, n);
        } else {
            memcpy(m->inp, t->test_x + e * c->d_in, n * c->d_in * sizeof(float));
        }
        nvfp4_status s = st_model_forward(m, cfg, shadow, step, n, NULL, &y, err);
        if (s != NVFP4_OK) return s;
        tot += st_task_loss(cfg, y, n, t->eval_lab + e, t->test_y + e * c->d_out, NULL) * (double)n;
    }
    *out = tot / ST_EVAL_N;
    return NVFP4_OK;
}

nvfp4_status st_task_eval_logged(st_task *t, const nvfp4_train_cfg *c, st_model *m, bool shadow, size_t step,
                                 double *eval, double *heldout, nvfp4_error *err)
{
    nvfp4_status s = eval_loss(t, c, m, shadow, step, eval, err);
    long share = heldout_share(c, step);
    if (s != NVFP4_OK || share < 0) return s;
    size_t S = c->model.seq_len, K = c->heldout_evals;
    size_t n = (c->heldout_tokens + S - 1) / S; /* windows */
    return eval_windows_gpt(t, c, m, shadow, step, (size_t)share, K, n, heldout, err);
}
