/* task.h - what a run learns (task.c): its data, its loss and its
 * evaluation, for the three tasks (teacher-student regression, the tiny
 * LM's next token on a Markov source, the GPT's next token on its sequence
 * data). Not public. */
#ifndef NVFP4_STUDY_TASK_H
#define NVFP4_STUDY_TASK_H

#include "nvfp4/study.h"
#include "study/model.h"
#include "study/seqdata.h"

/* Rows of the evaluation set of the regression and tiny LM tasks. */
#define ST_EVAL_N 512

typedef struct {
    /* regression: the teacher, the evaluation set, the label scale */
    st_model teacher;
    float label_scale;
    float *test_x, *test_y;
    /* tiny LM: the Markov source, each training row's stream, the eval set */
    double *P; /* [V*V][V] */
    double entropy;
    uint32_t *hist; /* [batch][ctx]: part of the run's checkpoint */
    uint32_t *eval_tok, *eval_lab;
    /* the batch's labels (LM, GPT) and targets (regression) */
    uint32_t *labels;
    float *targets;
    /* GPT: its sequences */
    st_seqdata *seq;
    /* gradient accumulation (accum_steps > 1): the step's accum_steps
     * micro-batches of tokens and labels, one after the other */
    uint32_t *acc_tok, *acc_lab;
} st_task;

static inline bool st_task_is_lm(const nvfp4_train_cfg *c) { return c->model.vocab > 0; }
static inline bool st_task_is_gpt(const nvfp4_train_cfg *c) { return c->model.arch == NVFP4_ARCH_GPT; }
/* Rows of one training batch: sequences x tokens for the GPT. */
static inline size_t st_task_rows(const nvfp4_train_cfg *c)
{
    return c->batch * (st_task_is_gpt(c) ? c->model.seq_len : 1);
}
/* Micro-batches per optimizer step (gradient accumulation; 1 without). */
static inline size_t st_task_accum(const nvfp4_train_cfg *c) { return c->accum_steps > 1 ? c->accum_steps : 1; }

/* The task of cfg, its data drawn (zeroed t on entry); on failure t holds
 * what was allocated (st_task_free it). NVFP4_ENOMEM, or seqdata's error. */
nvfp4_status st_task_create(st_task *t, const nvfp4_train_cfg *cfg, nvfp4_error *err);
void st_task_free(st_task *t);
/* Fills both models' inputs (and t's labels / targets, or the accumulation
 * buffers) for training step `step`; q and ref get the same batch. */
void st_task_batch(st_task *t, const nvfp4_train_cfg *c, size_t step, st_model *q, st_model *ref);
/* The loss of output rows y (CE with labels lab, or MSE with targets tgt);
 * its gradient into dy when given. */
double st_task_loss(const nvfp4_train_cfg *c, const float *y, size_t T, const uint32_t *lab, const float *tgt,
                    float *dy);
/* What a logged step evaluates of model m (the quantized model or the
 * shadow) before its batch: the eval loss and, on the final metric's steps,
 * its share of the held-out set (*heldout untouched elsewhere). Uses m's
 * input buffers and t->labels (free until st_task_batch). */
nvfp4_status st_task_eval_logged(st_task *t, const nvfp4_train_cfg *c, st_model *m, bool shadow, size_t step,
                                 double *eval, double *heldout, nvfp4_error *err);

#endif
