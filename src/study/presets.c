/*
 * presets.c - the lab's preset configs: the default training config (the
 * MLP teacher-student task), the default GPT on the fortunes text, and the
 * three quantization schemes a run's nvfp4_recipe_cfg starts from (FP32
 * everywhere, the NVFP4 paper's, and MXFP4 with the paper's placements).
 * Data only: it trains nothing and validates nothing (train.c does, when a
 * run is created). Its calls are public (nvfp4/study.h).
 */
#include <stdint.h>
#include <string.h>

#include "nvfp4/study.h"

void nvfp4_train_cfg_init(nvfp4_train_cfg *t)
{
    memset(t, 0, sizeof *t);
    t->model.d_in = 64;
    t->model.d_model = 128;
    t->model.d_hidden = 128;
    t->model.d_out = 16;
    t->model.n_blocks = 1;
    t->model.block_kind = NVFP4_BLOCK_PLAIN;
    t->model.act = NVFP4_ACT_SQRELU;
    t->model.loss = NVFP4_LOSS_MSE;
    nvfp4_recipe_cfg_paper(&t->recipe);
    t->opt = NVFP4_OPT_ADAM;
    t->lr = 1e-3f;
    t->lr_min_frac = 0.01f;
    t->warmup_frac = 0.02f;
    t->decay_frac = 0.2f;
    t->beta1 = 0.9f;
    t->beta2 = 0.95f;
    t->adam_eps = 1e-8f;
    t->sched = NVFP4_SCHED_COSINE;
    t->steps = 1000;
    t->batch = 256;
    t->log_every = 50;
    t->heldout_evals = 4;
    t->seed = 1;
    t->switch_fwd_step = SIZE_MAX;
    t->switch_bwd_step = SIZE_MAX;
    t->init_scale = 1.0f;
    t->diverge_factor = 10.0f;
}

void nvfp4_train_cfg_gpt(nvfp4_train_cfg *t)
{
    nvfp4_train_cfg_init(t);
    nvfp4_model_cfg *m = &t->model;
    m->arch = NVFP4_ARCH_GPT;
    m->vocab = 256;
    m->d_out = 256;
    m->seq_len = 64;
    m->d_model = 128;
    m->n_heads = 4;
    m->d_hidden = 512;
    m->n_blocks = 2;
    m->norm = NVFP4_NORM_LAYER;
    m->loss = NVFP4_LOSS_CE;
    m->act = NVFP4_ACT_GELU;
    m->d_in = 0;
    t->data = NVFP4_DATA_FORTUNES;
    t->batch = 8;
    t->lr = 1e-3f;
    t->lr_min_frac = 0.1f;
    t->warmup_frac = 0.02f;
    t->beta1 = 0.9f;
    t->beta2 = 0.95f;
    t->weight_decay = 0.1f;
    t->grad_clip = 1.0f;
    t->log_every = 0;
    t->heldout_tokens = 102400; /* 1600 windows of 64 */
    nvfp4_recipe_cfg_paper(&t->recipe);
    t->recipe.first_hp = 0; /* GPT: counted in blocks; the head stays high precision */
    t->recipe.last_hp = 0;
}

void nvfp4_recipe_cfg_fp32(nvfp4_recipe_cfg *r)
{
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) nvfp4_sq_cfg_fp32(&r->q[g][o]);
    r->first_hp = 0;
    r->last_hp = 0;
    r->hp = NVFP4_SQ_FP32;
}

void nvfp4_recipe_cfg_paper(nvfp4_recipe_cfg *r)
{
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) nvfp4_sq_cfg_nvfp4(&r->q[g][o]);
    r->q[NVFP4_GEMM_FPROP][1].block = NVFP4_BLOCK_16X16; /* W */
    r->q[NVFP4_GEMM_DGRAD][1].block = NVFP4_BLOCK_16X16; /* W^T */
    r->q[NVFP4_GEMM_DGRAD][0].rounding = NVFP4_SR;       /* dY */
    r->q[NVFP4_GEMM_WGRAD][0].rounding = NVFP4_SR;       /* dY^T */
    r->q[NVFP4_GEMM_WGRAD][0].rht = 16;
    r->q[NVFP4_GEMM_WGRAD][1].rht = 16;
    r->first_hp = 1;
    r->last_hp = 1;
    r->hp = NVFP4_SQ_FP32;
}

void nvfp4_recipe_cfg_mxfp4(nvfp4_recipe_cfg *r)
{
    nvfp4_recipe_cfg_paper(r);
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) {
            nvfp4_sq_cfg *c = &r->q[g][o];
            nvfp4_rounding rd = c->rounding;
            unsigned rht = c->rht;
            nvfp4_sq_cfg_mxfp4(c);
            c->rounding = rd;
            c->rht = rht ? 32 : 0; /* NVIDIA's MXFP4 run used RHT d = 32 (Sec. 5) */
        }
}
