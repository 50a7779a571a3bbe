/*
 * tinylm.c - the base config of the S3 studies: a small residual LM on
 * byte-level tokens of an order-2 Markov source with a known entropy rate,
 * trained with the NVIDIA paper's recipe (arXiv 2509.25149 Sec. 4). Each S3
 * study (s3_*.c) changes one knob of it per arm.
 */
#include "study/studies.h"

void st_tinylm_base(nvfp4_train_cfg *c, size_t steps)
{
    nvfp4_train_cfg_init(c);
    /* V = 32, context 4 (research 6 S3 has V = 64, context 8 and 3M tokens:
     * ~10x our 2-core budget; at that size 600 steps stay near the unigram
     * loss, see docs/studies.md) */
    c->model.vocab = 32;
    c->model.ctx = 4;
    c->model.emb_dim = 32;
    c->model.d_in = 128;
    c->model.d_model = 64;
    c->model.d_hidden = 256;
    c->model.d_out = 32;
    c->model.n_blocks = 2;
    c->model.block_kind = NVFP4_BLOCK_RESIDUAL;
    c->model.act = NVFP4_ACT_SQRELU;
    c->model.loss = NVFP4_LOSS_CE;
    c->batch = 256;
    c->steps = steps;
    c->lr = 3e-3f;
    c->lr_min_frac = 0.01f;
    c->log_every = 0;
    nvfp4_recipe_cfg_paper(&c->recipe); /* input projection and head FP32 */
}
