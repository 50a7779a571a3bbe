/* step.h - one model's optimizer step (step.c). Not public. */
#ifndef NVFP4_STUDY_STEP_H
#define NVFP4_STUDY_STEP_H

#include "nvfp4/study.h"
#include "study/lindiag.h"
#include "study/model.h"
#include "study/task.h"

/* The gradient of one optimizer step into m->g and its mean loss. Without
 * accumulation the batch is in the model's inputs and t->labels. With
 * accum_steps = k > 1 (GPT), micro-batch i is rows [i*T, (i+1)*T) of tok
 * and lab: each is quantized and back-propagated on its own (its own amax,
 * scales and SR bits, as a GPU trainer accumulating micro-batches does),
 * the k gradients are summed in micro-batch order in fp32 and the sum is
 * divided by k once. Elementwise and in a fixed order: the same bytes at
 * any thread count. dg (diagnostics) is taken on micro-batch 0. */
nvfp4_status st_step_grad(st_model *m, st_task *t, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                          const uint32_t *tok, const uint32_t *lab, lin_diag *dg, double *loss, nvfp4_error *err);
/* One model's training step on the batch in place (t's accumulation
 * buffers under accum_steps > 1): gradient (st_step_grad), clipping,
 * update; its wall time added to *sec. */
nvfp4_status st_step_model(st_model *m, st_task *t, const nvfp4_train_cfg *cfg, bool shadow, size_t step, size_t T,
                           double lr, lin_diag *dg, double *loss, double *sec, nvfp4_error *err);
/* Whether step is logged: every log_every-th (every one at 0) and the last. */
bool st_step_logged(const nvfp4_train_cfg *c, size_t step);

#endif
