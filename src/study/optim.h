/* optim.h - the optimizer of the training engine (optim.c): gradient
 * clipping and the AdamW / SGD update over flat parameter arrays. Not
 * public. */
#ifndef NVFP4_STUDY_OPTIM_H
#define NVFP4_STUDY_OPTIM_H

#include <stddef.h>

#include "nvfp4/study.h"

/* Scales g[0..np) to global L2 norm `clip` when it is larger (clip > 0). */
void st_clip_gradient(float *g, size_t np, float clip);
/* One update of p[0..np) from its gradient g at training step `step` with
 * learning rate lr: AdamW (tc->opt == NVFP4_OPT_ADAM; m, v its moments) or
 * SGD with momentum (m its buffer; v unused). */
void st_optim_update(const nvfp4_train_cfg *tc, size_t step, double lr, size_t np, float *p, const float *g, float *m,
                     float *v);

#endif
