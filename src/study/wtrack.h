/* wtrack.h - the layer diagnostics that need memory across logged steps
 * (wtrack.c; docs/studies.md "Layer diagnostics"). Not public. */
#ifndef NVFP4_STUDY_WTRACK_H
#define NVFP4_STUDY_WTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "study/lindiag.h"

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

#endif
