/* train_internal.h - the linear kernels with diagnostics (layers.c), shared
 * with train.c. */
#ifndef NVFP4_TRAIN_INTERNAL_H
#define NVFP4_TRAIN_INTERNAL_H

#include "nvfp4/study.h"

typedef struct {
    double sqnr[3];
    double wgrad_cos, wgrad_align, gnr;
    double zero[3][2], clip[3][2];
    double zero_in[3][2], zero_scale[3][2]; /* nvfp4_layer_diag zero_in_frac, zero_scale_frac */
    double dgrad_cos, dgrad_align, dgrad_rel_err;
    double probe[4]; /* rel_err, cos, rel_bias, rel_std (nvfp4_layer_diag) */
} lin_diag;

nvfp4_status lin_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w, size_t t,
                         size_t in, size_t out, const nvfp4_sq_key *key, float *y, lin_diag *dg, nvfp4_error *err);
nvfp4_status lin_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy, size_t t,
                          size_t in, size_t out, const nvfp4_sq_key *key, float *dx, float *dw, lin_diag *dg,
                          nvfp4_error *err);

/* Steps r's quantized model and its FP32 shadow on two threads, each on one
 * thread inside, while the rest of the run stays on one (train.c); the
 * study runner's lone job at --threads >= 2. The same bytes. */
void st_run_pair(nvfp4_run *r, bool on);

/* The slots of the per-thread scratch buffers (scratch.c). */
typedef enum {
    ST_SCR_QX, ST_SCR_QW, ST_SCR_B1, ST_SCR_B2, ST_SCR_B3, ST_SCR_B4, /* layers.c: one linear call's operands */
    ST_SCR_FQ_T, ST_SCR_FQ_SRC,                                       /* fakequant.c: transposed / source copy */
    ST_SCR_FQ_DATA, ST_SCR_FQ_SCALE,                                  /* fakequant.c: quantized codes, scales */
    ST_SCRATCH_SLOTS
} st_scratch_slot;

/* This thread's buffer for slot, grown to at least bytes (kept across
 * calls; freed when the thread exits); NULL when out of memory. */
void *st_scratch(st_scratch_slot slot, size_t bytes);

/* t[c][r] = a[r][c] in cache-friendly tiles (fakequant.c). */
void st_transpose(const float *a, size_t rows, size_t cols, float *t);

/* The GELU's tanh (layers.c), exposed for its accuracy test. */
float st_tanh(float x);

#endif
