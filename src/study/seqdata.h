/* seqdata.h - the GPT's sequence data (seqdata.c): the fortunes corpus or
 * the order-2 Markov source, drawn by keyed counters. Not public. */
#ifndef NVFP4_STUDY_SEQDATA_H
#define NVFP4_STUDY_SEQDATA_H

#include "nvfp4/study.h"

typedef struct st_seqdata st_seqdata;
/* The data set of cfg->data: the fortunes corpus (byte tokens, V = 256) or
 * the order-2 Markov source (V = cfg->model.vocab). NVFP4_EIO naming the
 * package when the corpus is not installed. */
nvfp4_status st_seqdata_create(const nvfp4_train_cfg *cfg, st_seqdata **out, nvfp4_error *err);
void st_seqdata_free(st_seqdata *d);
/* Training batch of step: nseq sequences of S inputs and S labels (the
 * next tokens), the same for any thread count. */
void st_seqdata_batch(const st_seqdata *d, uint64_t seed, size_t step, size_t nseq, size_t S, uint32_t *tok,
                      uint32_t *lab);
/* Held-out sequence i (< st_seqdata_n_eval): S inputs and labels. */
size_t st_seqdata_n_eval(const st_seqdata *d);
void st_seqdata_eval(const st_seqdata *d, size_t i, size_t S, uint32_t *tok, uint32_t *lab);
/* Window i of n evenly spaced over the held-out text (disjoint when the
 * held-out text holds n windows; Markov: held-out sequence i). */
void st_seqdata_heldout(const st_seqdata *d, size_t i, size_t n, size_t S, uint32_t *tok, uint32_t *lab);
/* Entropy rate (nats/token) of the Markov source, 0 for text. */
double st_seqdata_entropy(const st_seqdata *d);
/* Training and held-out bytes of the corpus (0 for Markov). */
void st_seqdata_sizes(const st_seqdata *d, size_t *train, size_t *heldout);

/* The order-2 Markov source: P [V*V][V] (Dirichlet(0.1) rows keyed by the
 * seed) and its entropy rate under the stationary pair distribution. */
void st_markov_build(uint64_t seed, size_t V, double *P, double *entropy);
uint32_t st_markov_next(const double *P, size_t V, uint32_t a, uint32_t b, double u);

#endif
