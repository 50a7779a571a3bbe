/* lindiag.h - one linear's diagnostics at a logged step: the record the
 * linear kernels fill (layers.c), the cross-step trackers attach to
 * (wtrack.c) and the run copies into its logged rows (train.c). A type only:
 * no file owns it, so the three need not depend on each other for it. */
#ifndef NVFP4_STUDY_LINDIAG_H
#define NVFP4_STUDY_LINDIAG_H

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

#endif
