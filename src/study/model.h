/* model.h - the trained model of a run (model.c): the MLP / tiny LM, or the
 * GPT behind the same calls. Not public. */
#ifndef NVFP4_STUDY_MODEL_H
#define NVFP4_STUDY_MODEL_H

#include "nvfp4/study.h"
#include "study/lindiag.h"

/* The most linears a model has (the MLP: n_blocks * 2 + 2). */
#define ST_MAXLIN 64

struct gpt;

typedef struct {
    nvfp4_model_cfg mc;
    size_t nlin, lin_in[ST_MAXLIN], lin_out[ST_MAXLIN], lin_w[ST_MAXLIN];
    size_t emb_off, gain_off[ST_MAXLIN];
    size_t np;
    float *p, *g, *m, *v;
    /* activations for one batch of T rows */
    size_t T;
    float *inp, *dinp, *z[ST_MAXLIN], *a[ST_MAXLIN], *h[ST_MAXLIN], *nrm[ST_MAXLIN], *rs[ST_MAXLIN], *d1, *d2, *d3;
    uint32_t *tok;
    struct gpt *gpt; /* arch GPT: the transformer (p, g, m, v laid out by it), else NULL */
    float *gacc; /* gradient accumulation: the sum of the micro-batch gradients (lazily allocated) */
} st_model;

/* Allocates m for batches of T rows (the GPT: T sequences) under model
 * config mc; false when out of memory (or an MLP over ST_MAXLIN linears). */
bool st_model_alloc(st_model *m, const nvfp4_model_cfg *mc, size_t T);
void st_model_free(st_model *m);
/* The init of the parameters, keyed by (seed, stream0 + tensor): the
 * embedding N(0, 1) on stream0, linear l N(0, scale^2 / fan_in) on stream0
 * + 1 + l, RMSNorm gains 1 (the GPT: gpt_init_params). */
void st_model_init_params(st_model *m, uint64_t seed, uint64_t stream0, float scale);
/* The tiny LM's input rows: the embeddings of each row's ctx tokens. */
void st_model_embed(st_model *m, const uint32_t *tok, size_t T);
/* Forward of T rows (m->inp filled, or tokens embedded; the GPT: m->tok)
 * with the operand configs of step `step` (the FP32 shadow's when shadow);
 * *y: the output rows. dg: per-linear diagnostics or NULL. */
nvfp4_status st_model_forward(st_model *m, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                              lin_diag *dg, float **y, nvfp4_error *err);
/* Backward of the last forward from dy: the gradient in m->g (written, not
 * accumulated). m->d1..d3 are its scratch. */
nvfp4_status st_model_backward(st_model *m, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                               const float *dy, lin_diag *dg, nvfp4_error *err);

#endif
