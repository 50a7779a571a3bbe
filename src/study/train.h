/* train.h - one training run's internal calls (train.c), for the study
 * runner and the tests. Not public. */
#ifndef NVFP4_STUDY_TRAIN_H
#define NVFP4_STUDY_TRAIN_H

#include "nvfp4/study.h"
#include "study/model.h"
#include "study/shadow.h"
#include "study/task.h"


/* One run: the quantized model q and its FP32 shadow ref trained side by
 * side on one task (or q alone, reading its shadow from a shared trace). */
struct nvfp4_run {
    nvfp4_train_cfg cfg;
    st_model q, ref;
    st_task task;
    size_t step;
    bool diverged;
    size_t div_step;
    double init_eval;
    /* logs */
    nvfp4_log_row *logs;
    nvfp4_layer_diag *diags;
    size_t nlogs, caplogs;
    struct st_wtrack **wtrack; /* per linear: the diagnostics across logged steps (wtrack.c) */
    double q_sec, ref_sec; /* time spent in the quantized model and in the FP32 shadow */
    bool pair;             /* step the two models concurrently even with one OpenMP thread set */
    /* The shadow's values come from a shared trace (st_run_share_shadow) and
     * ref is not stepped: true from the first step so read, kept in the
     * checkpoint, so that a resumed run asks for its trace again. */
    bool ref_external;
    const st_shadow *shadow; /* borrowed; NULL: ref steps beside q */
};

/* Appends a logged row and its per-linear diagnostics dg[0..nlin) to r's
 * logs; false when out of memory. */
bool st_run_push_log(nvfp4_run *r, const nvfp4_log_row *row, const lin_diag *dg);

/* Steps r's quantized model and its FP32 shadow on two threads, each on one
 * thread inside, while the rest of the run stays on one; the
 * study runner's lone job at --threads >= 2. The same bytes. */
void st_run_pair(nvfp4_run *r, bool on);

/* Trains the FP32 shadow of config c once, recording its trace (shadow.h):
 * its step exactly as a run takes it beside a quantized model. progress
 * (may be NULL) is called after every step with the steps done. */
typedef void (*st_shadow_progress)(void *ctx, size_t done, size_t steps);
nvfp4_status st_shadow_train(const nvfp4_train_cfg *c, st_shadow_progress progress, void *ctx, st_shadow **out,
                             nvfp4_error *err);
/* r reads its shadow from sh (borrowed: it must outlive r's steps) from
 * its current step on; NVFP4_EINVAL when sh was trained for another config.
 * The run's checkpoint remembers it: a run loaded from it needs a trace. */
nvfp4_status st_run_share_shadow(nvfp4_run *r, const st_shadow *sh, nvfp4_error *err);
/* Whether r's shadow is (or was, before its checkpoint) a shared trace. */
bool st_run_shadow_external(const nvfp4_run *r);

#endif
