/* layers.h - the layer kernels of the training simulator (layers.c): the
 * quantized linear with its diagnostics. Activations, norms, losses and the
 * schedule are public (nvfp4/study.h). Not public. */
#ifndef NVFP4_STUDY_LAYERS_H
#define NVFP4_STUDY_LAYERS_H

#include "nvfp4/study.h"
#include "study/lindiag.h"

nvfp4_status lin_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w, size_t t,
                         size_t in, size_t out, const nvfp4_sq_key *key, float *y, lin_diag *dg, nvfp4_error *err);
nvfp4_status lin_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy, size_t t,
                          size_t in, size_t out, const nvfp4_sq_key *key, float *dx, float *dw, lin_diag *dg,
                          nvfp4_error *err);

/* The GELU's tanh, exposed for its accuracy test. */
float st_tanh(float x);

#endif
