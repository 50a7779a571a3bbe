/*
 * shadow.c - the trace of an FP32 shadow shared by the runs of one seed
 * (docs/studies.md, "The baseline"): what a run's rows take from its
 * shadow at every step, kept so that the arms that differ only in their
 * recipe and switch steps read one trace instead of each training the same
 * shadow. The trace is filled by st_shadow_train (train.c), which steps the
 * shadow exactly as a run steps it beside its quantized model.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "study/shadow.h"
#include "study/step.h"

void st_shadow_key(const nvfp4_train_cfg *c, nvfp4_train_cfg *key)
{
    memcpy(key, c, sizeof *key);
    memset(&key->recipe, 0, sizeof key->recipe);
    key->switch_fwd_step = key->switch_bwd_step = SIZE_MAX;
    key->diverge_factor = 0.0f; /* stops the quantized model; the shadow trains every step */
}

size_t st_shadow_bytes(const st_shadow *sh)
{
    return sh->steps * (3 * sizeof(double) + sizeof(size_t)) + sh->nlogs * sh->np * sizeof(float);
}

void st_shadow_free(st_shadow *sh)
{
    if (!sh) return;
    free(sh->loss);
    free(sh->eval);
    free(sh->heldout);
    free(sh->snap);
    free(sh->p);
    free(sh);
}

st_shadow *st_shadow_alloc(const nvfp4_train_cfg *c, size_t np)
{
    st_shadow *sh = calloc(1, sizeof *sh);
    if (!sh) return NULL;
    st_shadow_key(c, &sh->key);
    sh->steps = c->steps;
    sh->np = np;
    for (size_t i = 0; i < c->steps; i++) sh->nlogs += st_step_logged(c, i);
    sh->loss = malloc(c->steps * sizeof *sh->loss);
    sh->eval = malloc(c->steps * sizeof *sh->eval);
    sh->heldout = malloc(c->steps * sizeof *sh->heldout);
    sh->snap = malloc(c->steps * sizeof *sh->snap);
    sh->p = malloc((sh->nlogs ? sh->nlogs : 1) * np * sizeof *sh->p);
    if (!sh->loss || !sh->eval || !sh->heldout || !sh->snap || !sh->p) {
        st_shadow_free(sh);
        return NULL;
    }
    return sh;
}

void st_shadow_logged(const st_shadow *sh, size_t step, nvfp4_log_row *row)
{
    row->ref_eval_loss = sh->eval[step];
    row->ref_heldout_loss = sh->heldout[step];
}

const float *st_shadow_params(const st_shadow *sh, size_t step) { return sh->p + sh->snap[step] * sh->np; }
