/*
 * verify_cli.h - what verify, identify, sr-test, gemm-check and
 * explain-block share: golden bundles and kernel files turned into the
 * verifier's in-memory views (nvfp4/verify.h), and the re-quantization of
 * an input with every recipe / rounding / block variant.
 */
#ifndef NVFP4_TOOLS_VERIFY_CLI_H
#define NVFP4_TOOLS_VERIFY_CLI_H

#include <jansson.h>

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

/* A loaded golden bundle. */
typedef struct {
    nvfp4_tensor_set set;
    const char *path;
    nvfp4_quant_opts opts;     /* from the metadata */
    const nvfp4_recipe_info *info;
    size_t rows, cols;         /* the input's (logical) shape */
    float *x;                  /* the input widened to fp32 (rows x cols), or NULL */
} vcli_bundle;

/* Loads and validates BUNDLE (any io format). 0, or prints and returns 2. */
int vcli_bundle_load(const char *cmd, const char *path, vcli_bundle *b);
void vcli_bundle_free(vcli_bundle *b);
bool vcli_bundle_has(const vcli_bundle *b, bool colwise);

/* A view plus the buffers it owns. */
typedef struct {
    nvfp4_vview v;
    float *x_owned;
    uint8_t *swz_owned;
    float *dq_owned;          /* a BF16/F16 dequant widened, or the expected one rounded to it */
    nvfp4_tdtype dequant_dtype; /* the actual file's dequant dtype (F32, BF16 or F16) */
    size_t srows, scols;      /* logical shape of the orientation */
    bool any;                 /* at least one component present */
    const char *missing[NVFP4_VC_COUNT];
} vcli_view;

void vcli_view_free(vcli_view *v);

/* The expected view of one orientation of a bundle. */
int vcli_expected_view(const char *cmd, const vcli_bundle *b, bool colwise, vcli_view *out);

/* The actual view of one orientation from a kernel's tensor set: the
 * components found under the bundle's names (data, scale, scale_swizzled,
 * amax, dequant, with "_t" for columnwise; scale_t_swizzled also accepted as
 * scale_swizzled_t); any 1-byte dtype for codes and scales (U8, torch's
 * F8_E4M3 / F8_E8M0, F4 packing two codes per byte), F32 for amax, F32,
 * BF16 or F16 for dequant (widened; vcli_round_dequant rounds the expected
 * one the same way). A set holding one tensor with another name is taken as `lone`
 * (default data). Shapes are not checked here: sizes are. */
int vcli_actual_view(const char *cmd, const char *fname, const nvfp4_tensor_set *s, bool colwise,
                     const nvfp4_vview *geom, nvfp4_vcomponent lone, vcli_view *out);

/* Rounds the expected view's dequant to the actual one's dtype (BF16/F16),
 * so that a kernel writing its dequant in bf16 is compared with the golden
 * dequant rounded to nearest-even bf16. 0, or 2 when out of memory. */
int vcli_round_dequant(vcli_view *expected, const vcli_view *actual);

/* The view of one orientation of a quantization result (swizzle computed). */
int vcli_view_from_q(const nvfp4_quantized *q, bool colwise, vcli_view *out);

/* Every recipe x rounding (x block when all_blocks) variant of x. */
typedef struct {
    char name[64];
    nvfp4_quantized q;
    vcli_view view;
} vcli_variant;

int vcli_variants(const char *cmd, const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base,
                  bool colwise, bool all_blocks, vcli_variant **out, size_t *n);
void vcli_variants_free(vcli_variant *v, size_t n);

/* The scaled value y = x * encode factor (or x / divisor) of every element
 * of a rows x cols orientation (row-major, padded) under recipe `rec`, from
 * its linear scales [rows, cols/block_len] and its amax, through
 * nvfp4_trace_scaled. 0, or prints and returns 2 for a recipe without a
 * scaled value (exact, E4M3 elements). */
int vcli_scaled_values(const char *cmd, const nvfp4_recipe *rec, float amax, const uint8_t *scale, size_t rows,
                       size_t cols, size_t block_len, const float *x, float *y);

/* verify of one bundle against one kernel file (cmd_verify.c): appends one
 * report object per orientation to outputs (a JSON array) and prints nothing
 * but errors. 0 match, 1 mismatch, 2 error. */
int vcli_verify_files(const char *expected, const char *actual, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      json_t *outputs);

/* verify --suite (verify_suite.c). */
int vcli_verify_suite(const char *suite, const char *actual_dir, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      const char *junit, bool json, bool tap, bool require_all);

/* Widens a 2-D F32/BF16 tensor to fp32 (malloc'd). NULL on a bad dtype. */
float *vcli_tensor_f32(const nvfp4_tensor *t);

#endif /* NVFP4_TOOLS_VERIFY_CLI_H */
