/*
 * train.c - the lifecycle of one training run of the simulator: a quantized
 * model and its FP32 shadow (same init, same data, same step) trained side
 * by side, so the relative loss gap and the weight drift are paired by
 * construction (paired differences cut the variance: docs/studies.md,
 * "Studies and results"); or the quantized model alone, reading its shadow
 * from a trace trained once for every arm of the seed (st_shadow_train: the
 * same bytes). It creates and frees a run, takes its steps (evaluation on
 * the logged steps, the gradient probe, the two models' steps, possibly
 * concurrently), logs its rows and answers the nvfp4_run_* queries.
 *
 * What it delegates, each file one job: the model (model.c, gpt.c), the
 * task's data, loss and evaluation (task.c), one model's optimizer step
 * (step.c, optim.c), the gradient probe (probe.c), the shared shadow's
 * trace (shadow.c), the cross-step diagnostics (wtrack.c), and the
 * checkpoints (checkpoint.c, which reads the run's state from train.h and is
 * never called from here). Every random draw is keyed by the seed and
 * counters (rng.h), so a run is byte-identical at any thread count.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "nvfp4/study.h"
#include "study/gpt.h"
#include "study/model.h"
#include "study/probe.h"
#include "study/rng.h"
#include "study/shadow.h"
#include "study/step.h"
#include "study/task.h"
#include "study/train.h"
#include "study/wtrack.h"

/* ---- run lifecycle -------------------------------------------------------------- */
static size_t batch_rows(const nvfp4_run *r) { return st_task_rows(&r->cfg); }

static bool cfg_valid(const nvfp4_train_cfg *c, nvfp4_error *err)
{
    const nvfp4_model_cfg *m = &c->model;
    if (m->arch == NVFP4_ARCH_GPT) {
        const char *why = gpt_cfg_check(m);
        if (why || !c->batch || !c->steps) {
            nvfp4_error_set(err, NVFP4_EINVAL, "%s", why ? why : "train config: batch and steps must be > 0");
            return false;
        }
        if (c->probe_scale > 64) {
            nvfp4_error_set(err, NVFP4_EINVAL, "train config: probe_scale must be at most 64, got %zu", c->probe_scale);
            return false;
        }
        return true;
    }
    if (c->accum_steps > 1 || c->probe_every || c->probe_scale > 1) {
        nvfp4_error_set(err, NVFP4_EINVAL,
                        "train config: gradient accumulation (accum_steps > 1) and the gradient probe (probe_every, "
                        "probe_scale) need the GPT");
        return false;
    }
    if (!c->batch || !c->steps || !m->d_model || !m->d_out || m->n_blocks * 2 + 2 > ST_MAXLIN) {
        nvfp4_error_set(err, NVFP4_EINVAL, "train config: batch, steps, d_model, d_out must be > 0, n_blocks <= 31");
        return false;
    }
    if (m->vocab && (m->ctx < 2 || !m->emb_dim || m->d_in != m->ctx * m->emb_dim || m->d_out != m->vocab)) {
        nvfp4_error_set(err, NVFP4_EINVAL, "LM config: need ctx >= 2, d_in = ctx*emb_dim, d_out = vocab");
        return false;
    }
    if (m->block_kind == NVFP4_BLOCK_RESIDUAL && !m->d_hidden) {
        nvfp4_error_set(err, NVFP4_EINVAL, "residual blocks need d_hidden > 0");
        return false;
    }
    return true;
}

static void run_free_parts(nvfp4_run *r)
{
    st_wtrack_free_all(r->wtrack, r->q.nlin); /* before st_model_free clears nlin */
    st_model_free(&r->q);
    st_model_free(&r->ref);
    st_task_free(&r->task);
    free(r->logs);
    free(r->diags);
}

void nvfp4_run_free(nvfp4_run *r)
{
    if (!r) return;
    run_free_parts(r);
    free(r);
}

nvfp4_status nvfp4_run_create(const nvfp4_train_cfg *cfg, nvfp4_run **out, nvfp4_error *err)
{
    *out = NULL;
    if (!cfg_valid(cfg, err)) return NVFP4_EINVAL;
    nvfp4_run *r = calloc(1, sizeof *r);
    if (!r) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    r->cfg = *cfg;
    const nvfp4_model_cfg *c = &cfg->model;
    size_t T = cfg->batch;
    if (!st_model_alloc(&r->q, c, T) || !st_model_alloc(&r->ref, c, T)) {
        nvfp4_run_free(r);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "run: out of memory");
    }
    nvfp4_status s = st_task_create(&r->task, cfg, err);
    if (s != NVFP4_OK) {
        nvfp4_run_free(r);
        return s;
    }
    st_model_init_params(&r->q, cfg->seed, ST_STREAM_INIT_BASE, cfg->init_scale);
    memcpy(r->ref.p, r->q.p, r->q.np * sizeof(float));
    r->init_eval = -1.0;
    *out = r;
    return NVFP4_OK;
}

bool st_run_push_log(nvfp4_run *r, const nvfp4_log_row *row, const lin_diag *dg)
{
    size_t L = r->q.nlin;
    if (r->nlogs == r->caplogs) {
        size_t nc = r->caplogs ? 2 * r->caplogs : 64;
        nvfp4_log_row *nl = realloc(r->logs, nc * sizeof *nl);
        if (!nl) return false;
        r->logs = nl;
        nvfp4_layer_diag *nd = realloc(r->diags, nc * L * sizeof *nd);
        if (!nd) return false;
        r->diags = nd;
        r->caplogs = nc;
    }
    r->logs[r->nlogs] = *row;
    for (size_t l = 0; l < L; l++) {
        nvfp4_layer_diag *d = &r->diags[r->nlogs * L + l];
        memcpy(d->sqnr_db, dg[l].sqnr, sizeof d->sqnr_db);
        d->wgrad_cos = dg[l].wgrad_cos;
        d->wgrad_align = dg[l].wgrad_align;
        d->gnr = dg[l].gnr;
        memcpy(d->zero_frac, dg[l].zero, sizeof d->zero_frac);
        memcpy(d->clip_frac, dg[l].clip, sizeof d->clip_frac);
        memcpy(d->zero_in_frac, dg[l].zero_in, sizeof d->zero_in_frac);
        memcpy(d->zero_scale_frac, dg[l].zero_scale, sizeof d->zero_scale_frac);
        d->osc_frac = dg[l].osc_w;
        d->hot_persist = dg[l].hot_persist;
        d->dgrad_cos = dg[l].dgrad_cos;
        d->dgrad_align = dg[l].dgrad_align;
        d->dgrad_rel_err = dg[l].dgrad_rel_err;
        d->probe_rel_err = dg[l].probe[0];
        d->probe_cos = dg[l].probe[1];
        d->probe_rel_bias = dg[l].probe[2];
        d->probe_rel_std = dg[l].probe[3];
    }
    r->nlogs++;
    return true;
}

/* ||theta_q - theta_ref|| / ||theta_ref|| over every parameter. */
static double drift(const float *q, const float *ref, size_t np)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < np; i++) {
        double d = (double)q[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : 0.0;
}

/* In a pair section: the model's own parallel loops (quantizer, attention)
 * stay on its thread, whatever OMP_MAX_ACTIVE_LEVELS allows. */
static void one_thread_inside(void)
{
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

/* Whether the quantized model and its shadow step concurrently: asked for
 * (st_run_pair) or two or more OpenMP threads set, and not inside a region
 * that uses the threads (the study runner's jobs run one per thread). */
static bool pair_concurrent(const nvfp4_run *r)
{
#ifdef _OPENMP
    return (r->pair || omp_get_max_threads() >= 2) && omp_get_active_level() < omp_get_max_active_levels();
#else
    (void)r;
    return false;
#endif
}

void st_run_pair(nvfp4_run *r, bool on) { r->pair = on; }


/* ---- the shared FP32 shadow (its trace: shadow.c) ------------------------------- */
/* The shadow's step exactly as train_step takes it beside a quantized model:
 * its evaluations before the batch on a logged step, the batch, its step. */
nvfp4_status st_shadow_train(const nvfp4_train_cfg *cfg, st_shadow_progress progress, void *ctx, st_shadow **out,
                             nvfp4_error *err)
{
    *out = NULL;
    nvfp4_run *r;
    nvfp4_status s = nvfp4_run_create(cfg, &r, err);
    if (s != NVFP4_OK) return s;
    st_shadow *sh = st_shadow_alloc(cfg, r->ref.np);
    if (!sh) {
        nvfp4_run_free(r);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "shared FP32 shadow: out of memory");
    }
    size_t T = batch_rows(r), k = 0;
    for (size_t step = 0; step < cfg->steps && s == NVFP4_OK; step++) {
        bool log = st_step_logged(cfg, step);
        r->step = step;
        sh->eval[step] = sh->heldout[step] = NAN;
        sh->snap[step] = SIZE_MAX;
        if (log) s = st_task_eval_logged(&r->task, &r->cfg, &r->ref, true, step, &sh->eval[step], &sh->heldout[step], err);
        if (s != NVFP4_OK) break;
        st_task_batch(&r->task, &r->cfg, step, &r->q, &r->ref);
        s = st_step_model(&r->ref, &r->task, &r->cfg, true, step, T, nvfp4_lr_at(cfg, step), NULL, &sh->loss[step], &sh->sec, err);
        if (s == NVFP4_OK && log) {
            memcpy(sh->p + k * sh->np, r->ref.p, sh->np * sizeof *sh->p);
            sh->snap[step] = k++;
        }
        if (s == NVFP4_OK && progress) progress(ctx, step + 1, cfg->steps);
    }
    nvfp4_run_free(r);
    if (s != NVFP4_OK) {
        st_shadow_free(sh);
        return s;
    }
    *out = sh;
    return NVFP4_OK;
}

nvfp4_status st_run_share_shadow(nvfp4_run *r, const st_shadow *sh, nvfp4_error *err)
{
    nvfp4_train_cfg key;
    st_shadow_key(&r->cfg, &key);
    if (memcmp(&key, &sh->key, sizeof key) != 0 || sh->np != r->ref.np)
        return nvfp4_error_set(err, NVFP4_EINVAL, "run: the shared FP32 shadow was trained for another config");
    r->shadow = sh;
    r->ref_external = true;
    return NVFP4_OK;
}

bool st_run_shadow_external(const nvfp4_run *r) { return r->ref_external; }

static nvfp4_status train_step(nvfp4_run *r, nvfp4_error *err)
{
    size_t step = r->step, T = batch_rows(r);
    bool log = st_step_logged(&r->cfg, step);
    lin_diag dg[ST_MAXLIN];
    memset(dg, 0, sizeof dg);
    double lr = nvfp4_lr_at(&r->cfg, step);
    nvfp4_log_row row;
    memset(&row, 0, sizeof row);
    row.step = step;
    row.lr = lr;
    row.heldout_loss = row.ref_heldout_loss = NAN;
    row.grad_noise = row.grad_qerr = NAN;
    for (size_t l = 0; l < ST_MAXLIN; l++)
        for (int k = 0; k < 4; k++) dg[l].probe[k] = NAN;
    if (r->ref_external && !r->shadow)
        return nvfp4_error_set(err, NVFP4_EINVAL, "run: its FP32 shadow is a shared trace; none attached");
    if (log) st_wtrack_attach(&r->wtrack, r->q.nlin, dg);
    if (log) { /* before make_batch: evaluation reuses the input buffers */
        nvfp4_status s = st_task_eval_logged(&r->task, &r->cfg, &r->q, false, step, &row.eval_loss, &row.heldout_loss, err);
        if (s == NVFP4_OK && r->shadow) st_shadow_logged(r->shadow, step, &row);
        else if (s == NVFP4_OK) s = st_task_eval_logged(&r->task, &r->cfg, &r->ref, true, step, &row.ref_eval_loss, &row.ref_heldout_loss, err);
        if (s == NVFP4_OK && st_probe_due(&r->cfg, r->nlogs, step))
            s = st_probe_gradient(&r->q, &r->task, &r->cfg, step, &row, dg, err);
        if (s != NVFP4_OK) return s;
    }
    st_task_batch(&r->task, &r->cfg, step, &r->q, &r->ref);
    double losses[2];
    nvfp4_status st[2] = {NVFP4_OK, NVFP4_OK};
    nvfp4_error errs[2] = {{NVFP4_OK, ""}, {NVFP4_OK, ""}};
    lin_diag *dq = log ? dg : NULL;
    if (r->shadow) { /* the shadow's step was taken once for every run that shares it */
        st[0] = st_step_model(&r->q, &r->task, &r->cfg, false, step, T, lr, dq, &losses[0], &r->q_sec, &errs[0]);
        losses[1] = r->shadow->loss[step];
    } else if (pair_concurrent(r)) {
        /* The two models share nothing but the batch: one thread each, BLAS
         * on one thread inside (as at --threads 1), so the bytes are those
         * of running them one after the other. */
        int blas = openblas_get_num_threads();
        openblas_set_num_threads(1);
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            {
                one_thread_inside();
                st[0] = st_step_model(&r->q, &r->task, &r->cfg, false, step, T, lr, dq, &losses[0], &r->q_sec, &errs[0]);
            }
#pragma omp section
            {
                one_thread_inside();
                st[1] = st_step_model(&r->ref, &r->task, &r->cfg, true, step, T, lr, NULL, &losses[1], &r->ref_sec, &errs[1]);
            }
        }
        openblas_set_num_threads(blas);
    } else {
        st[0] = st_step_model(&r->q, &r->task, &r->cfg, false, step, T, lr, dq, &losses[0], &r->q_sec, &errs[0]);
        if (st[0] == NVFP4_OK)
            st[1] = st_step_model(&r->ref, &r->task, &r->cfg, true, step, T, lr, NULL, &losses[1], &r->ref_sec, &errs[1]);
    }
    for (int k = 0; k < 2; k++)
        if (st[k] != NVFP4_OK) {
            if (err) *err = errs[k];
            return st[k];
        }
    row.loss = losses[0];
    row.ref_loss = losses[1];
    if (log) {
        const float *ref = r->shadow ? st_shadow_params(r->shadow, step) : r->ref.p;
        row.drift = drift(r->q.p, ref, r->q.np);
        if (r->init_eval < 0) r->init_eval = row.ref_eval_loss;
        if (!st_run_push_log(r, &row, dg)) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    double ref0 = r->init_eval > 0 ? r->init_eval : losses[1];
    if (!isfinite(losses[0]) || losses[0] > r->cfg.diverge_factor * ref0 ||
        (log && (!isfinite(row.eval_loss) || row.eval_loss > r->cfg.diverge_factor * ref0))) {
        r->diverged = true;
        r->div_step = step;
    }
    r->step++;
    return NVFP4_OK;
}

nvfp4_status nvfp4_run_advance(nvfp4_run *r, size_t until, nvfp4_error *err)
{
    if (until > r->cfg.steps) until = r->cfg.steps;
    while (r->step < until && !r->diverged) {
        nvfp4_status s = train_step(r, err);
        if (s != NVFP4_OK) return s;
    }
    return NVFP4_OK;
}

size_t nvfp4_run_step(const nvfp4_run *r) { return r->step; }
bool nvfp4_run_diverged(const nvfp4_run *r, size_t *at)
{
    if (at) *at = r->div_step;
    return r->diverged;
}
size_t nvfp4_run_n_linears(const nvfp4_run *r) { return r->q.nlin; }
size_t nvfp4_run_n_logs(const nvfp4_run *r) { return r->nlogs; }
const nvfp4_log_row *nvfp4_run_log(const nvfp4_run *r, size_t i) { return i < r->nlogs ? &r->logs[i] : NULL; }
const nvfp4_layer_diag *nvfp4_run_diag(const nvfp4_run *r, size_t i, size_t l)
{
    return (i < r->nlogs && l < r->q.nlin) ? &r->diags[i * r->q.nlin + l] : NULL;
}
double nvfp4_run_entropy_rate(const nvfp4_run *r) { return r->task.entropy; }
void nvfp4_run_timing(const nvfp4_run *r, double *quantized_s, double *fp32_s)
{
    *quantized_s = r->q_sec;
    /* shared: the trace's steps so far (trained once for all its runs) */
    *fp32_s = r->shadow ? r->shadow->sec * (double)r->step / (double)r->shadow->steps : r->ref_sec;
}
nvfp4_train_cfg *nvfp4_run_cfg(nvfp4_run *r) { return &r->cfg; }
size_t nvfp4_run_param_count(const nvfp4_run *r) { return r->q.np; }
void nvfp4_run_params(const nvfp4_run *r, float *out) { memcpy(out, r->q.p, r->q.np * sizeof *out); }

void nvfp4_study_set_threads(int threads)
{
    if (threads < 1) threads = 1;
    openblas_set_num_threads(threads);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
}
