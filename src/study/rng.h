/* rng.h - the lab's keyed random numbers (rng.c) and the named streams the
 * training engine draws from (not public).
 *
 * Every draw is a pure function of (seed, stream, index): Philox-4x32-10 with
 * the seed as key and (index, stream) as counter, so a run gives the same
 * bytes at any thread count and in any order of evaluation. The stream ids
 * below are the values the engine has always used: renaming one is free,
 * changing its number changes every result that draws from it.
 */
#ifndef NVFP4_STUDY_RNG_H
#define NVFP4_STUDY_RNG_H

#include <stdint.h>

/* The streams of a training run (task.c, model.c, gpt.c, seqdata.c). A
 * stream named _BASE is the first of a range: the entry says which offset
 * selects what. The tiny LM's burn-in range ST_STREAM_LM_BURNIN_BASE + b
 * (b < batch) reaches 600 and beyond for batches of 100 rows or more, where
 * it meets the evaluation streams: kept as it always was (bytes never
 * change); the draws still differ by index. */
enum {
    ST_STREAM_LM_START = 500,       /* tiny LM: the first ctx tokens of each training row's stream */
    ST_STREAM_LM_BURNIN_BASE = 501, /* + row b: the 256 burn-in tokens of training row b */
    ST_STREAM_LM_EVAL_START = 600,  /* tiny LM: the first ctx tokens of each evaluation stream */
    ST_STREAM_LM_EVAL_BURNIN = 601, /* its burn-in tokens (1024 indices per evaluation row) */
    ST_STREAM_LM_EVAL_LABEL = 602,  /* the label token of each evaluation row */
    ST_STREAM_REG_TEST_X = 700,     /* regression: the evaluation inputs */
    ST_STREAM_LM_LABEL = 800,       /* tiny LM: each training step's next tokens */
    ST_STREAM_REG_X = 900,          /* regression: each training step's inputs */
    ST_STREAM_REG_NOISE = 901,      /* regression: the label noise */
    ST_STREAM_INIT_BASE = 1000,     /* the trained model's init: + 0 the embedding, + 1 + l linear l
                                     * (the GPT: gpt_init_params' offsets) */
    ST_STREAM_GPT_WINDOW = 1100,    /* the GPT on text: each training sequence's window */
    ST_STREAM_MARKOV_TRAIN = 1200,  /* the GPT on the Markov source: training sequences (+ 1: their tokens) */
    ST_STREAM_MARKOV_EVAL = 1300,   /* the GPT on the Markov source: held-out sequences (+ 1: their tokens) */
    ST_STREAM_TEACHER_BASE = 4000,  /* regression: the teacher's init (as ST_STREAM_INIT_BASE) */
};

/* Standard normal (Box-Muller on two 32-bit words) and uniform in (0, 1)
 * (53 bits) draws keyed by (seed, stream, index). */
double st_normal(uint64_t seed, uint64_t stream, uint64_t index);
double st_uniform(uint64_t seed, uint64_t stream, uint64_t index);

#endif
