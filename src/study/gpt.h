/* gpt.h - the lab's decoder-only transformer (gpt.c) and its sequence data
 * (seqdata.c: seqdata.h), shared with model.c, probe.c and the tests (not public).
 *
 * Parameters live in one flat array the caller owns (model.c's p, g, m, v),
 * laid out by gpt_alloc; gpt keeps the activations of one batch of B
 * sequences of S tokens (T = B*S rows) for the backward pass.
 */
#ifndef NVFP4_STUDY_GPT_H
#define NVFP4_STUDY_GPT_H

#include "nvfp4/study.h"
#include "study/layercfg.h"
#include "study/lindiag.h"

/* The order of the linears: GPT_LIN_* (layercfg.h). */
typedef struct {
    size_t g, b; /* gain and (LayerNorm) bias offsets; b unused for RMSNorm */
} gpt_norm_off;

typedef struct {
    gpt_norm_off n1, n2;
    size_t wqkv, wproj, wfc1, wfc2;
} gpt_tblock_off;

typedef struct gpt {
    nvfp4_model_cfg mc;
    size_t V, S, D, H, F, L, B, T; /* vocab, seq, d_model, heads, d_ff, blocks, sequences, rows */
    size_t np, nlin;
    size_t wte, wpe, head;         /* head == wte when tied */
    gpt_tblock_off *tblk; /* per transformer block (tblock) */
    gpt_norm_off nf;
    /* per block activations (T rows unless noted) */
    float **x_in, **n1, **mu1, **rs1, **qkv, **P /* B*H*S*S */, **att, **x_mid, **n2, **mu2, **rs2, **u, **a;
    float *x_out, *nfo, *muf, *rsf, *logits;
    /* backward scratch */
    float *dx, *dn, *dqkv, *datt, *du, *da, *dP /* B*H*S*S */, *dwtmp;
} gpt;

/* Lays out the parameters and allocates the activations for B sequences.
 * false: out of memory or a config gpt_cfg_check refuses. */
bool gpt_alloc(gpt *g, const nvfp4_model_cfg *mc, size_t B);
void gpt_free(gpt *g);
/* NULL when the model config is a valid GPT, else the reason. */
const char *gpt_cfg_check(const nvfp4_model_cfg *mc);
/* GPT-2 init: N(0, 0.02 * scale) for embeddings and linears, the residual
 * projections (attention output, FC2) divided by sqrt(2 * n_blocks); norm
 * gains 1, biases 0. Keyed by (seed, stream0 + tensor). */
void gpt_init_params(const gpt *g, float *p, uint64_t seed, uint64_t stream0, float scale);

/* Forward of B' <= B sequences (tok: B'*S tokens): logits [B'*S x V] in
 * g->logits. dg: per-linear diagnostics (nlin entries) or NULL. */
nvfp4_status gpt_forward(gpt *g, const float *p, const uint32_t *tok, size_t nseq, const nvfp4_train_cfg *tc,
                         bool shadow, size_t step, lin_diag *dg, nvfp4_error *err);
/* Backward of the last forward (all B sequences) from dlogits [T x V]:
 * writes (not accumulates) every gradient into grad (np floats). */
nvfp4_status gpt_backward(gpt *g, const float *p, const uint32_t *tok, const float *dlogits,
                          const nvfp4_train_cfg *tc, bool shadow, size_t step, lin_diag *dg, float *grad,
                          nvfp4_error *err);

#endif
