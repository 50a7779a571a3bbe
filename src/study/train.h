/* train.h - one training run's internal calls (train.c), for the study
 * runner and the tests. Not public. */
#ifndef NVFP4_STUDY_TRAIN_H
#define NVFP4_STUDY_TRAIN_H

#include "nvfp4/study.h"
#include "study/model.h"
#include "study/task.h"

typedef struct st_shadow st_shadow;

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

/* The FP32 shadow shared by the runs of one seed (docs/studies.md, "The
 * baseline"): the shadow is FP32 in every linear, so it depends on the run's
 * config without the recipe and the switch steps (st_shadow_key); trained
 * once (st_shadow_train), it holds every value a run's rows take from it
 * (training loss per step; eval and held-out losses and the weights, for
 * the drift, at the logged steps). A run that shares it steps its quantized
 * model alone and gives the bytes of the run with its own shadow. */
/* c without the fields the shadow does not depend on (memcmp-able). */
void st_shadow_key(const nvfp4_train_cfg *c, nvfp4_train_cfg *key);
nvfp4_status st_shadow_train(const nvfp4_train_cfg *c, st_shadow **out, nvfp4_error *err);
void st_shadow_free(st_shadow *sh);
/* The bytes sh holds: 32 per step and 4 per parameter per logged step. */
size_t st_shadow_bytes(const st_shadow *sh);
/* r reads its shadow from sh (borrowed: it must outlive r's steps) from
 * its current step on; NVFP4_EINVAL when sh was trained for another config.
 * The run's checkpoint remembers it: a run loaded from it needs a trace. */
nvfp4_status st_run_share_shadow(nvfp4_run *r, const st_shadow *sh, nvfp4_error *err);
/* Whether r's shadow is (or was, before its checkpoint) a shared trace. */
bool st_run_shadow_external(const nvfp4_run *r);

#endif
