/*
 * gptbase.c - the base configs of the GPT studies (s7_*.c and the ablations
 * built on them): the default GPT of nvfp4_train_cfg_gpt on the byte-level
 * fortunes text, and a CI-sized variant for --quick. A study's arms change
 * knobs of these.
 */
#include "study/studies.h"

void st_gpt_base(nvfp4_train_cfg *c, size_t steps)
{
    nvfp4_train_cfg_gpt(c);
    c->steps = steps;
    c->log_every = 0; /* the runner logs 40 rows per run */
    c->probe_every = 10; /* the gradient probe at 5 of them (every 10th and the last) */
}

void st_gpt_quick_base(nvfp4_train_cfg *c, size_t steps)
{
    st_gpt_base(c, steps);
    c->model.d_model = 32;
    c->model.n_heads = 2;
    c->model.d_hidden = 128;
    c->model.seq_len = 32;
    c->batch = 4;
    c->heldout_tokens = ST_QUICK_HELDOUT_TOKENS;
}
