/*
 * probe.c - the gradient probe of a logged step (docs/studies.md, "Gradient
 * probe"): the quantized model's gradient against the FP32 one of the same
 * weights and batch, and the FP32 one of an independent batch (the
 * sampling noise it is measured against). The statistics per linear are
 * gradprobe.c's; this file draws the batches and takes the gradients. The
 * model's activations and gradient buffer are its scratch; nothing of the
 * run's state changes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/fakequant.h"
#include "study/gpt.h"
#include "study/gradprobe.h"
#include "study/probe.h"
#include "study/step.h"

bool st_probe_due(const nvfp4_train_cfg *c, size_t nlogs, size_t step)
{
    size_t k = c->probe_every;
    return k && st_task_is_gpt(c) && (nlogs % k == 0 || step + 1 == c->steps);
}

/* Offset and size of linear l's weight in the GPT's flat parameters (the
 * head: the token embedding when tied, whose gradient then also holds the
 * embedding's). */
static void probe_slice(const gpt *g, size_t l, size_t *off, size_t *len)
{
    size_t D = g->D, F = g->F;
    if (l == g->L * GPT_LIN_PER_BLOCK) {
        *off = g->head;
        *len = g->V * D;
        return;
    }
    const gpt_tblock_off *b = &g->tblk[l / GPT_LIN_PER_BLOCK];
    size_t j = l % GPT_LIN_PER_BLOCK;
    *off = j == GPT_LIN_QKV ? b->wqkv : j == GPT_LIN_PROJ ? b->wproj : j == GPT_LIN_FC1 ? b->wfc1 : b->wfc2;
    *len = j == GPT_LIN_QKV ? 3 * D * D : j == GPT_LIN_PROJ ? D * D : F * D;
}

size_t st_probe_scale(const nvfp4_train_cfg *c) { return c->probe_scale > 1 ? c->probe_scale : 1; }

typedef struct {
    uint32_t *tok[2], *lab[2];
    float *ga, *gb;
    st_gradprobe *pr;
} probe_bufs;

static void probe_bufs_free(probe_bufs *b, size_t nlin)
{
    for (int i = 0; i < 2; i++) free(b->tok[i]), free(b->lab[i]);
    free(b->ga);
    free(b->gb);
    if (b->pr)
        for (size_t l = 0; l < nlin; l++) st_gradprobe_free(&b->pr[l]);
    free(b->pr);
}

nvfp4_status st_probe_gradient(st_model *m, st_task *t, const nvfp4_train_cfg *cfg, size_t step, nvfp4_log_row *row,
                               lin_diag *dg, nvfp4_error *err)
{
    /* probe_scale times the step's micro-batches (st_probe_scale) */
    size_t k = st_task_accum(cfg) * st_probe_scale(cfg), T = st_task_rows(cfg), n = k * T, np = m->np,
           nlin = m->nlin;
    size_t K = cfg->probe_draws ? cfg->probe_draws : 2, S = cfg->model.seq_len;
    probe_bufs b = {{NULL, NULL}, {NULL, NULL}, NULL, NULL, NULL};
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        ok = ok && (b.tok[i] = malloc(n * sizeof *b.tok[i])) && (b.lab[i] = malloc(n * sizeof *b.lab[i]));
    }
    ok = ok && (b.ga = malloc(np * sizeof *b.ga)) && (b.gb = malloc(np * sizeof *b.gb)) &&
         (b.pr = calloc(nlin, sizeof *b.pr));
    if (!ok) {
        probe_bufs_free(&b, 0);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "gradient probe: out of memory");
    }
    st_seqdata_batch(t->seq, cfg->seed, step, k * cfg->batch, S, b.tok[0], b.lab[0]);
    st_seqdata_batch(t->seq, cfg->seed, (size_t)1 << 40 | step, k * cfg->batch, S, b.tok[1], b.lab[1]);
    nvfp4_train_cfg ref = *cfg;
    ref.accum_steps = k;
    ref.recipe.hp = NVFP4_SQ_FP32; /* the reference is FP32 whatever the recipe's high-precision format */
    double loss;
    nvfp4_status s = st_step_grad(m, t, &ref, true, step, T, b.tok[0], b.lab[0], NULL, &loss, err);
    if (s == NVFP4_OK) memcpy(b.ga, m->g, np * sizeof *b.ga);
    if (s == NVFP4_OK) s = st_step_grad(m, t, &ref, true, step, T, b.tok[1], b.lab[1], NULL, &loss, err);
    if (s == NVFP4_OK) memcpy(b.gb, m->g, np * sizeof *b.gb);
    size_t off[ST_MAXLIN], len[ST_MAXLIN];
    for (size_t l = 0; l < nlin && s == NVFP4_OK; l++) {
        probe_slice(m->gpt, l, &off[l], &len[l]);
        if (!st_gradprobe_init(&b.pr[l], b.ga + off[l], len[l], 1))
            s = nvfp4_error_set(err, NVFP4_ENOMEM, "gradient probe: out of memory");
    }
    double se = 0.0;
    for (size_t d = 0; d < K && s == NVFP4_OK; d++) {
        nvfp4_train_cfg tc = *cfg;
        tc.accum_steps = k;
        if (d) tc.seed = sq_derive(cfg->seed, (uint32_t)d, 0, 0, 0x70726f62u /* "prob" */);
        s = st_step_grad(m, t, &tc, false, step, T, b.tok[0], b.lab[0], NULL, &loss, err);
        if (s != NVFP4_OK) break;
        for (size_t i = 0; i < np; i++) se += ((double)m->g[i] - b.ga[i]) * ((double)m->g[i] - b.ga[i]);
        for (size_t l = 0; l < nlin; l++) st_gradprobe_add(&b.pr[l], m->g + off[l]);
    }
    if (s == NVFP4_OK) {
        double aa = 0.0, ab = 0.0;
        for (size_t i = 0; i < np; i++) {
            aa += (double)b.ga[i] * b.ga[i];
            ab += ((double)b.ga[i] - b.gb[i]) * ((double)b.ga[i] - b.gb[i]);
        }
        row->grad_noise = aa > 0 ? sqrt(ab / aa) : NAN;
        row->grad_qerr = aa > 0 ? sqrt(se / (double)K / aa) : NAN;
        for (size_t l = 0; l < nlin; l++) {
            st_gradprobe_stats st;
            st_gradprobe_finish(&b.pr[l], &st);
            dg[l].probe[0] = sqrt(st.rel_mse1);
            dg[l].probe[1] = st.cos_mean;
            dg[l].probe[2] = st.rel_bias_debiased;
            dg[l].probe[3] = sqrt(st.rel_var);
        }
    }
    probe_bufs_free(&b, nlin);
    return s;
}
