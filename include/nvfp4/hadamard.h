/*
 * nvfp4/hadamard.h - the random Hadamard transform (RHT) of TE's NVFP4
 * recipe: y = x_block @ (diag(s) * H_d / sqrt(d)), d a power of two from 4 to
 * 128 (16 in TE), applied to groups of d consecutive elements along a row.
 * Each output is the exact d-term sum rounded once to fp32, then (by
 * default) to bf16 (docs/semantics.md, "Random Hadamard transform").
 */
#ifndef NVFP4_HADAMARD_H
#define NVFP4_HADAMARD_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

#define NVFP4_RHT_TE_MASK 0xD7E8u /* bit i set: sign of input index i is -1 */

typedef enum {
    NVFP4_RHT_SIGNS_TE = 0,     /* TransformerEngine's fixed mask 0xD7E8 */
    NVFP4_RHT_SIGNS_SEEDED = 1, /* random signs drawn from Philox(rht_sign_seed) */
    NVFP4_RHT_SIGNS_NONE = 2    /* plain H/sqrt(d) */
} nvfp4_rht_signs;

typedef struct {
    unsigned size;           /* d: 4, 8, 16 (default), 32, 64, 128 */
    nvfp4_rht_signs signs;   /* te (only for d = 16), seeded, none */
    uint64_t sign_seed;      /* for seeded */
    bool keep_fp32;          /* default false: outputs rounded to bf16 */
} nvfp4_rht_config;

void nvfp4_rht_config_init(nvfp4_rht_config *c); /* d = 16, TE signs, bf16 */

/* The sign mask of a configuration (bit i of the 128-bit mask set: the
 * sign of input index i is -1), after checking it: the one place where a
 * sign choice becomes signs (the quantizer's plan and the CUDA path use
 * it too). */
nvfp4_status nvfp4_rht_sign_mask(const nvfp4_rht_config *c, uint32_t mask[4], nvfp4_error *err);

/* The d signs (+1 / -1) of a configuration. */
nvfp4_status nvfp4_rht_signs_fill(const nvfp4_rht_config *c, float *signs, nvfp4_error *err);

/* Forward transform of a row-major [rows, cols] fp32 tensor along its rows
 * (cols % d == 0): out may alias x. */
nvfp4_status nvfp4_rht_forward(const nvfp4_rht_config *c, const float *x, size_t rows, size_t cols,
                               float *out, nvfp4_error *err);
/* Inverse (the transpose: H_d s / sqrt(d)), same rounding. */
nvfp4_status nvfp4_rht_inverse(const nvfp4_rht_config *c, const float *x, size_t rows, size_t cols,
                               float *out, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_HADAMARD_H */
