/*
 * verify/report_views.h - what the reports of src/verify/report.c share
 * (internal): golden bundles and kernel tensor sets turned into the
 * verifier's in-memory views (nvfp4/verify.h), and the re-quantization of
 * an input with every recipe / rounding / block variant. Functions return 0,
 * or 2 with err set (the exit code of the CLI for an input error).
 */
#ifndef NVFP4_VERIFY_REPORT_VIEWS_H
#define NVFP4_VERIFY_REPORT_VIEWS_H

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

#define VREP_ERROR 2 /* an input error (the CLI exits 2) */

/* A loaded golden bundle. */
typedef struct {
    const nvfp4_tensor_set *set; /* borrowed */
    const char *path;
    nvfp4_quant_opts opts;     /* from the metadata */
    const nvfp4_recipe_info *info;
    size_t rows, cols;         /* the input's (logical) shape */
    nvfp4_scale_layout scale_layout; /* of scale_swizzled (metadata scale_swizzle) */
    const float *x;            /* the input as fp32 (rows x cols), or NULL: the bundle's own F32 tensor when
                                  it is one (not copied), else x_owned */
    float *x_owned;            /* a BF16 input widened to fp32 */
} vrep_bundle;

/* Takes a loaded bundle (borrowed, not copied). 0, or 2 with err set. */
int vrep_bundle_load(const nvfp4_tensor_set *set, const char *path, vrep_bundle *b, nvfp4_error *err);
void vrep_bundle_free(vrep_bundle *b);
bool vrep_bundle_has(const vrep_bundle *b, bool colwise);

/* A view plus the buffers it owns. */
typedef struct {
    nvfp4_vview v;
    uint8_t *swz_owned;
    float *dq_owned;          /* a BF16/F16 dequant widened, or the expected one rounded to it */
    nvfp4_tdtype dequant_dtype; /* the actual file's dequant dtype (F32, BF16 or F16) */
    size_t srows, scols;      /* logical shape of the orientation */
    bool any;                 /* at least one component present */
    const char *missing[NVFP4_VC_COUNT];
} vrep_view;

void vrep_view_free(vrep_view *v);

/* The expected view of one orientation of a bundle; its x is the bundle's, read in place (strided). */
int vrep_expected_view(const vrep_bundle *b, bool colwise, vrep_view *out, nvfp4_error *err);
/* That view's input as a fresh contiguous rows x cols array (padding 0), for the callers that need
 * one (the SR scaled values); NULL without x or memory. Caller frees. */
float *vrep_view_x_dense(const vrep_bundle *b, bool colwise, const vrep_view *v);

/* The actual view of one orientation from a kernel's tensor set: the
 * components found under the bundle's names (data, scale, scale_swizzled,
 * amax, dequant, with "_t" for columnwise; scale_t_swizzled also accepted as
 * scale_swizzled_t); any 1-byte dtype for codes and scales (U8, torch's
 * F8_E4M3 / F8_E8M0, F4 packing two codes per byte), F32 for amax, F32,
 * BF16 or F16 for dequant (widened; vrep_round_dequant rounds the expected
 * one the same way). A set holding one tensor with another name is taken as `lone`
 * (default data). Dtypes are checked here; sizes and counts (a per-row amax
 * where the golden has one) are left to nvfp4_verify, which reports them as
 * reason size and still compares the other components. */
int vrep_actual_view(const char *fname, const nvfp4_tensor_set *s, bool colwise,
                     const nvfp4_vview *geom, nvfp4_vcomponent lone, vrep_view *out, nvfp4_error *err);

/* Rounds the expected view's dequant to the actual one's dtype (BF16/F16),
 * so that a kernel writing its dequant in bf16 is compared with the golden
 * dequant rounded to nearest-even bf16. 0, or 2 when out of memory. */
int vrep_round_dequant(vrep_view *expected, const vrep_view *actual, nvfp4_error *err);

/* The view of one orientation of a quantization result (swizzle computed). */
int vrep_view_from_q(const nvfp4_quantized *q, bool colwise, vrep_view *out);

/* Every recipe x rounding (x block when all_blocks) variant of x. */
typedef struct {
    char name[64];
    nvfp4_quantized q;
    vrep_view view;
} vrep_variant;

int vrep_variants(const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base,
                  bool colwise, bool all_blocks, vrep_variant **out, size_t *n, nvfp4_error *err);
void vrep_variants_free(vrep_variant *v, size_t n);

/* The scaled value y = x * encode factor (or x / divisor) of every element
 * of a rows x cols orientation (row-major, padded) under recipe `rec`, from
 * its linear scales [rows, cols/block_len] and its amax, through
 * nvfp4_trace_scaled. 0, or returns 2 with err set for a recipe without a
 * scaled value (exact, E4M3 elements). */
int vrep_scaled_values(const nvfp4_recipe *rec, float amax, const uint8_t *scale, size_t rows,
                       size_t cols, size_t block_len, const float *x, float *y, nvfp4_error *err);

/* Widens a 2-D F32/BF16 tensor to fp32 (malloc'd). NULL on a bad dtype. */
float *vrep_tensor_f32(const nvfp4_tensor *t);

/* Whether the kernel's tensor set holds only columnwise components (data_t, scale_t, ...). */
bool vrep_only_columnwise(const nvfp4_tensor_set *act);

#endif /* NVFP4_VERIFY_REPORT_VIEWS_H */
