/* train_internal.h - the linear kernels with diagnostics (layers.c), shared
 * with train.c. */
#ifndef NVFP4_TRAIN_INTERNAL_H
#define NVFP4_TRAIN_INTERNAL_H

#include <stdio.h>

#include "nvfp4/study.h"

/* A linear's diagnostics state across logged steps (wtrack.c). */
typedef struct st_wtrack st_wtrack;

typedef struct {
    double sqnr[3];
    double wgrad_cos, wgrad_align, gnr;
    double zero[3][2], clip[3][2];
    double zero_in[3][2], zero_scale[3][2]; /* nvfp4_layer_diag zero_in_frac, zero_scale_frac */
    double dgrad_cos, dgrad_align, dgrad_rel_err;
    double probe[4]; /* rel_err, cos, rel_bias, rel_std (nvfp4_layer_diag) */
    st_wtrack *track;              /* NULL: no oscillation / hot-channel diagnostics */
    double osc_w, hot_persist;     /* nvfp4_layer_diag osc_frac, hot_persist */
} lin_diag;

/* ---- diagnostics across logged steps (wtrack.c; docs/studies.md "Layer
 * diagnostics") ---------------------------------------------------------------- */
#define ST_OSC_WINDOW 8u   /* logged steps: a reversal counts for this many */
#define ST_HOT_FRAC 0.05   /* the hot channels: the top 5% by amax */

/* Points dg[0..n) at the run's per-linear states (*tracks, created on first
 * use; a state that cannot be allocated leaves dg[l].track NULL) and sets
 * their oscillation and hot-channel outputs to NAN. */
void st_wtrack_attach(st_wtrack ***tracks, size_t n, lin_diag *dg);
void st_wtrack_free(st_wtrack *t);
void st_wtrack_free_all(st_wtrack **t, size_t n);
/* One logged step's quantized weights q[0..nw): the fraction of elements
 * whose quantized value reversed its direction of change (moved opposite
 * to its last move) at one of the last ST_OSC_WINDOW logged steps,
 * this one included (0 at the first). NAN when out of memory. */
double st_wtrack_weights(st_wtrack *t, const float *q, size_t nw);
/* One logged step's layer input x [rows x in]: the number of input channels
 * whose amax over the rows was among the st_hot_k(in) largest (ties to the
 * lower index) at every logged step so far. NAN when out of memory. */
double st_wtrack_inputs(st_wtrack *t, const float *x, size_t rows, size_t in);
/* ceil(ST_HOT_FRAC * in), at least 1 */
size_t st_hot_k(size_t in);
/* The states of n linears into a checkpoint stream, and back (sizes over
 * max refused; false on a short or malformed stream, *tracks unchanged);
 * a deep copy for a cloned run. */
bool st_wtrack_write(st_wtrack *const *tracks, size_t n, FILE *f);
bool st_wtrack_read(st_wtrack ***tracks, size_t n, size_t max, FILE *f);
bool st_wtrack_clone(st_wtrack ***dst, st_wtrack *const *src, size_t n);

nvfp4_status lin_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w, size_t t,
                         size_t in, size_t out, const nvfp4_sq_key *key, float *y, lin_diag *dg, nvfp4_error *err);
nvfp4_status lin_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy, size_t t,
                          size_t in, size_t out, const nvfp4_sq_key *key, float *dx, float *dw, lin_diag *dg,
                          nvfp4_error *err);

/* Steps r's quantized model and its FP32 shadow on two threads, each on one
 * thread inside, while the rest of the run stays on one (train.c); the
 * study runner's lone job at --threads >= 2. The same bytes. */
void st_run_pair(nvfp4_run *r, bool on);

/* The FP32 shadow shared by the runs of one seed (docs/studies.md, "The
 * baseline"): the shadow is FP32 in every linear, so it depends on the run's
 * config without the recipe and the switch steps (st_shadow_key); trained
 * once (st_shadow_train), it holds every value a run's rows take from it
 * (training loss per step; eval and held-out losses and the weights, for
 * the drift, at the logged steps). A run that shares it steps its quantized
 * model alone and gives the bytes of the run with its own shadow. */
typedef struct st_shadow st_shadow;
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

/* The slots of the per-thread scratch buffers (scratch.c). */
typedef enum {
    ST_SCR_QX, ST_SCR_QW, ST_SCR_B1, ST_SCR_B2, ST_SCR_B3, ST_SCR_B4, /* layers.c: one linear call's operands */
    ST_SCR_FQ_T, ST_SCR_FQ_SRC,                                       /* fakequant.c: transposed / source copy */
    ST_SCR_FQ_DATA, ST_SCR_FQ_SCALE,                                  /* fakequant.c: quantized codes, scales */
    ST_SCR_BF_X, ST_SCR_BF_W, ST_SCR_BF_DY,                           /* gpt.c: BF16 copies (bf16_training) */
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
