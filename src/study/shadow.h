/* shadow.h - the trace of an FP32 shadow shared by the runs of one seed
 * (shadow.c; trained by st_shadow_train, train.h). Not public.
 *
 * The shadow is FP32 in every linear, so it depends on the run's config
 * without the recipe and the switch steps (st_shadow_key); trained once, it
 * holds every value a run's rows take from it (training loss per step; eval
 * and held-out losses and the weights, for the drift, at the logged steps),
 * so the arms of one seed that differ only there read one trace. A run that
 * shares it steps its quantized model alone and gives the bytes of the run
 * with its own shadow (docs/studies.md, "The baseline").
 */
#ifndef NVFP4_STUDY_SHADOW_H
#define NVFP4_STUDY_SHADOW_H

#include "nvfp4/study.h"

typedef struct st_shadow {
    nvfp4_train_cfg key; /* st_shadow_key of the config trained */
    size_t steps, np, nlogs;
    double *loss;        /* [steps] training loss of each step's batch */
    double *eval;        /* [steps] eval loss before the logged steps (NaN elsewhere) */
    double *heldout;     /* [steps] held-out share of the final metric's steps (NaN elsewhere) */
    size_t *snap;        /* [steps] row of p holding the weights after the logged step */
    float *p;            /* [nlogs][np] the shadow's weights after each logged step (for drift) */
    double sec;          /* wall time of its training steps (evaluation excluded) */
} st_shadow;

/* c without the fields the shadow does not depend on (memcmp-able). */
void st_shadow_key(const nvfp4_train_cfg *c, nvfp4_train_cfg *key);
/* The trace of config c's shadow (np parameters), its arrays allocated
 * for every step and logged step; NULL when out of memory. */
st_shadow *st_shadow_alloc(const nvfp4_train_cfg *c, size_t np);
void st_shadow_free(st_shadow *sh);
/* The bytes sh holds: 32 per step and 4 per parameter per logged step. */
size_t st_shadow_bytes(const st_shadow *sh);
/* A logged row's shadow fields at step, and its weights after step. */
void st_shadow_logged(const st_shadow *sh, size_t step, nvfp4_log_row *row);
const float *st_shadow_params(const st_shadow *sh, size_t step);

/* The trace to a file and back (--resume: a wave's shadows need not be
 * trained again): magic, key, sizes, arrays, and a last line with the
 * SHA-256 of the bytes before it, written atomically. Loading refuses
 * (NVFP4_EFORMAT, naming the file) a damaged file and a trace of another
 * key than `key`. */
nvfp4_status st_shadow_save(const st_shadow *sh, const char *path, nvfp4_error *err);
nvfp4_status st_shadow_load(const char *path, const nvfp4_train_cfg *key, st_shadow **out, nvfp4_error *err);

#endif
