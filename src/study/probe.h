/* probe.h - the gradient probe of a logged step (probe.c). Not public. */
#ifndef NVFP4_STUDY_PROBE_H
#define NVFP4_STUDY_PROBE_H

#include "nvfp4/study.h"
#include "study/lindiag.h"
#include "study/model.h"
#include "study/task.h"

/* Whether logged step `step` is probed, nlogs rows logged before it: every
 * probe_every-th logged step (counting the logged rows from step 0) and
 * the last step; the GPT only. */
bool st_probe_due(const nvfp4_train_cfg *c, size_t nlogs, size_t step);
/* The probe at logged step `step`, before the step's update, at the
 * quantized model's weights (docs/studies.md, "Gradient probe"): g_A, the
 * FP32 gradient of the step's own batch (all its micro-batches), g_B that
 * of an independent batch (the batch of step 2^40 + step, which training
 * never draws), and probe_draws quantized gradients of batch A under the
 * run's recipe (draw 0 with the run's own keys: the gradient this step
 * takes; draw d > 0 with the seed's d-th derived key). With probe_scale
 * s > 1 both batches are s times the step's, drawn like a step of that
 * size (batch A then holds other windows than the step's own, and draw 0
 * is not the step's gradient). Whole model:
 * row->grad_noise, row->grad_qerr; per linear weight: dg[l].probe. The
 * activations and gradient buffer of m (the quantized model) are scratch
 * here (the step recomputes them); nothing of the run's state changes. */
/* The probe's batch as a multiple of the step's: probe_scale, at least 1. */
size_t st_probe_scale(const nvfp4_train_cfg *c);
nvfp4_status st_probe_gradient(st_model *m, st_task *t, const nvfp4_train_cfg *cfg, size_t step, nvfp4_log_row *row,
                               lin_diag *dg, nvfp4_error *err);

#endif
