/*
 * nvfp4/verify.h - the kernel verifier (docs/verify.md):
 * exact comparison of a kernel's quantized output with a golden one,
 * per-component mismatch counts, the first N mismatches decoded and
 * explained, one-line detection of systematic causes over the whole tensor,
 * recipe identification by ranking, statistical and bit-exact tests of
 * stochastic-rounding kernels, and the GEMM check against a rigorous bound.
 *
 * The engine works on in-memory views (nvfp4_vview): the CLI fills them
 * from golden bundles and kernel files (nvfp4/io.h).
 */
#ifndef NVFP4_VERIFY_H
#define NVFP4_VERIFY_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/io.h" /* the reports read tensor sets */
#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

/* ---- components ---------------------------------------------------------- */
typedef enum {
    NVFP4_VC_DATA = 0,
    NVFP4_VC_SCALE = 1,          /* linear [scale_rows, scale_cols] */
    NVFP4_VC_SCALE_SWIZZLED = 2, /* the view's scale_layout (cuBLAS 128x4 by default), padding included */
    NVFP4_VC_AMAX = 3,
    NVFP4_VC_DEQUANT = 4,
    NVFP4_VC_COUNT = 5
} nvfp4_vcomponent;

const char *nvfp4_vcomponent_name(nvfp4_vcomponent c); /* "data", "scale", ... */
bool nvfp4_vcomponent_parse(const char *s, nvfp4_vcomponent *out);

/* One orientation of one quantization as it lies in memory. Any pointer may
 * be NULL (component absent). Sizes are those of the buffers given, so that
 * a kernel output of the wrong size can be reported rather than overread. */
typedef struct {
    size_t rows, cols;             /* logical shape of the stored orientation */
    size_t block_rows, block_cols; /* 1x16, 16x16 or 1x32 */
    bool e4m3_elements;            /* MXFP8: one E4M3 byte per element (else packed E2M1) */
    bool ue8m0_scales;             /* MX recipes: UE8M0 scale bytes (else E4M3) */
    const float *x;                /* the input in this orientation, rows*cols (fp32), or NULL */
    size_t x_row_stride, x_col_stride; /* element (r, c) of x is x[r*x_row_stride + c*x_col_stride]; both 0:
                                      contiguous rows (cols, 1). Lets a columnwise view read the rowwise
                                      input in place, transposed, instead of a copy of it */
    size_t x_rows, x_cols;         /* the elements x holds; (r, c) beyond them is padding, read as 0.0f;
                                      both 0: rows x cols */
    const uint8_t *data;
    size_t data_bytes;
    const uint8_t *scale;          /* linear, one byte per (row, column block) */
    size_t scale_bytes;
    const uint8_t *scale_swizzled;
    size_t scale_swizzled_bytes;
    const float *amax;             /* one value, or amax_count of them */
    size_t amax_count;             /* values at amax: 0 means one; row-scaled recipes (te-rowscaled): one
                                      per stored row, compared one by one */
    const float *dequant;          /* dequant_count values, row-major */
    size_t dequant_count;
    size_t dequant_cols;           /* row length of dequant: the logical (unpadded) columns; 0 means cols */
    nvfp4_scale_layout scale_layout; /* the layout of scale_swizzled (nvfp4/layout.h); 0: cuBLAS 128x4. The
                                      expected view's decides; the actual one is read in the same */
    bool ue5m3_scales;             /* te-ue5m3 recipes: UE5M3 scale bytes (prototype; else as ue8m0_scales says) */
} nvfp4_vview;

/* Number of column blocks of a view (cols / block_cols, rounded up). */
size_t nvfp4_vview_scale_cols(const nvfp4_vview *v);

/* ---- reasons and causes ---------------------------------------------------- */
typedef enum {
    NVFP4_VR_ROUNDING = 0,   /* the code differs and nothing below explains it */
    NVFP4_VR_TIE_RULE,       /* the scaled value is an exact E2M1 midpoint (ties go to even) */
    NVFP4_VR_SCALE_BYTE,     /* the block's scale byte differs, the code follows from it */
    NVFP4_VR_SIGN_OF_ZERO,   /* +0 versus -0 (0x0 / 0x8) */
    NVFP4_VR_NAN_POLICY,     /* the input is NaN (expected code 0x7, +6) */
    NVFP4_VR_SATURATION,     /* |scaled| >= 6 or Inf: expected +-6 */
    NVFP4_VR_SCALE_UNDERFLOW,/* the block scale underflows to 0 (codes saturate in te) */
    NVFP4_VR_NEAR_BOUNDARY,  /* the scaled value lies within 2 ulp of a rounding boundary */
    NVFP4_VR_PADDING,        /* a padding byte of the swizzled scale layout */
    NVFP4_VR_VALUE,          /* amax or dequant value differs (codes and scale agree) */
    NVFP4_VR_FOLLOWS,        /* dequant differs because its code or scale differs */
    NVFP4_VR_SIZE,           /* the component has the wrong size: not compared */
    NVFP4_VR_SR_BITS,        /* SR golden: the other of the two SR neighbours (different random bits) */
    NVFP4_VR_COUNT
} nvfp4_vreason;

const char *nvfp4_vreason_name(nvfp4_vreason r); /* short token: "tie-rule", ... */
const char *nvfp4_vreason_text(nvfp4_vreason r); /* one sentence */

typedef enum {
    NVFP4_CAUSE_SWAPPED_NIBBLES = 0,
    NVFP4_CAUSE_TRANSPOSED_DATA,
    NVFP4_CAUSE_LINEAR_FOR_SWIZZLED, /* linear scales written where swizzled were expected */
    NVFP4_CAUSE_SWIZZLED_FOR_LINEAR,
    NVFP4_CAUSE_PADDING_BYTES,
    NVFP4_CAUSE_SCALE_OFF_BY_ONE,
    NVFP4_CAUSE_TIES_AWAY,           /* E2M1 ties rounded away from zero */
    NVFP4_CAUSE_NEGATIVE_ZERO,       /* -0 written as +0 */
    NVFP4_CAUSE_NAN_POLICY,
    NVFP4_CAUSE_UNDERFLOW_ZEROED,    /* underflowing blocks give code 0 instead of +-6 */
    NVFP4_CAUSE_BLOCK_SCALE_FORMULA, /* e.g. (amax/6)*S_enc */
    NVFP4_CAUSE_ENCODE_FACTOR,       /* e.g. S_enc/s instead of 1/(s*S_dec) */
    NVFP4_CAUSE_DIFFERENT_RECIPE,
    NVFP4_CAUSE_SR_BYTE_ORDER,
    NVFP4_CAUSE_BIASED_SR,
    NVFP4_CAUSE_SR_DEPENDENT,
    NVFP4_CAUSE_KNOWN_BUG,           /* the output equals a catalogued mutant exactly (nvfp4_mutant_*) */
    NVFP4_CAUSE_SCALE_PERMUTED,      /* scale_swizzled follows another catalogued placement of the scales */
    NVFP4_CAUSE_SCALE_LAYOUT,        /* scale_swizzled holds the expected scales in another named layout */
    NVFP4_CAUSE_GLOBAL_SCALE,        /* the block scales were computed with another S_enc (or g) than the recipe's */
    NVFP4_CAUSE_COUNT
} nvfp4_cause;

const char *nvfp4_cause_name(nvfp4_cause c); /* short token: "swapped-nibbles", ... */

/* ---- the report ------------------------------------------------------------- */
typedef struct {
    nvfp4_vcomponent component;
    size_t index;                 /* element (data, dequant) or byte (scales) index */
    size_t row, col, block;       /* block: linear block index (row-major over blocks) */
    float input;                  /* NaN when the bundle has no input */
    float scaled;                 /* input times the te encode factor of the expected scale */
    uint32_t expected_code, actual_code; /* nibble, byte, or fp32 bits for amax/dequant */
    float expected_value, actual_value;
    nvfp4_vreason reason;
} nvfp4_vmismatch;

#define NVFP4_VERIFY_MAX_CAUSES 16

/* How sure a cause is (docs/verify.md, "Proven or consistent"): proven when
 * the kernel's bytes exclude every other candidate evaluated for its step
 * (evidence cites the deciding elements), consistent otherwise
 * (alternatives lists the candidates that give the same bytes). */
typedef enum { NVFP4_CAUSE_CONSISTENT = 0, NVFP4_CAUSE_PROVEN = 1 } nvfp4_cause_status;

typedef struct {
    nvfp4_cause cause;
    char line[480];
    const char *step;            /* global-scale, block-scale, encode-factor, element-rounding, special-values,
                                    layout, rht, amax, recipe (nvfp4_cause_step) */
    nvfp4_cause_status status;
    char evidence[320];          /* proven: the deciding elements; consistent: what was (not) compared */
    char alternatives[320];      /* consistent: other candidates with the same bytes, comma separated */
} nvfp4_vcause_line;

const char *nvfp4_cause_status_name(nvfp4_cause_status s); /* "proven", "consistent" */
/* The chain step a cause belongs to ("layout" for swapped-nibbles, ...). */
const char *nvfp4_cause_step(nvfp4_cause c);

typedef struct {
    bool expected_present[NVFP4_VC_COUNT], actual_present[NVFP4_VC_COUNT];
    bool compared[NVFP4_VC_COUNT];
    size_t total[NVFP4_VC_COUNT];      /* elements (or bytes) compared */
    size_t mismatches[NVFP4_VC_COUNT];
    size_t reason_count[NVFP4_VR_COUNT];
    nvfp4_vmismatch *first;            /* the first `max_first` mismatches, in order */
    size_t n_first, max_first;
    nvfp4_vcause_line causes[NVFP4_VERIFY_MAX_CAUSES];
    size_t n_causes;
    /* The global scale read back from the actual block scales (opts.recipe given, its block-scale rule
     * monotone in S_enc or g, E4M3 scales): every value under which the recipe's rule gives each actual
     * byte lies in [gscale_lo, gscale_hi]; gscale_empty when no single value does. */
    bool gscale_known, gscale_decode, gscale_empty;
    float gscale_lo, gscale_hi, gscale_expected; /* expected: the recipe's own value for the golden amax */
    uint64_t gscale_count;                       /* fp32 values in the interval */
} nvfp4_vreport;

/* A named alternative output for the same input (another recipe or
 * rounding), compared whole when the expected output does not match. */
typedef struct {
    const char *name;
    nvfp4_vview view;
    bool transposed;   /* the other orientation (a match means "transposed data") */
    const struct nvfp4_mutant_info *mutant; /* a catalogued kernel bug (a match means "known-bug"), or NULL */
} nvfp4_vcandidate;

typedef struct {
    size_t max_errors;          /* how many mismatches to keep in detail (default 10) */
    unsigned components;        /* bit mask of 1u << nvfp4_vcomponent; 0 means all */
    const nvfp4_vcandidate *candidates; /* optional: other recipes' outputs for x */
    size_t n_candidates;
    const char *expected_name;  /* the expected recipe's name, for messages */
    /* SR goldens (optional): the scaled value of every element of the
     * expected view (rows*cols) and the Philox contract that produced it, so
     * that a kernel consuming the random bytes in another order is named. */
    const float *sr_scaled;
    uint64_t sr_seed, sr_offset;
    size_t sr_block_elems;      /* 16 or 32 */
    const char *recipe;         /* the recipe (nvfp4_recipe_find) whose chain produced the expected view, or NULL:
                                   lets verify read back the global scale the kernel used (cause global-scale) */
} nvfp4_verify_opts;

void nvfp4_verify_opts_init(nvfp4_verify_opts *o);

/* The expected view of one orientation of a quantization result: data,
 * scales, amax (one per stored row for a row-scaled recipe) and geometry
 * point into q; the cuBLAS-swizzled scales are computed into a buffer
 * returned in *swizzled, which the caller releases with nvfp4_free after the
 * last use of the view. The input x and the dequant are left NULL. */
nvfp4_status nvfp4_vview_from_quantized(const nvfp4_quantized *q, bool colwise, nvfp4_vview *v, uint8_t **swizzled,
                                        nvfp4_error *err);

/* Compares actual with expected (same orientation). Returns NVFP4_OK when
 * the comparison ran (the verdict is in the report: nvfp4_vreport_match),
 * an error for an unusable expected view (inconsistent sizes). The caller
 * frees the report with nvfp4_vreport_free. */
nvfp4_status nvfp4_verify(const nvfp4_vview *expected, const nvfp4_vview *actual, const nvfp4_verify_opts *opts,
                          nvfp4_vreport *rep, nvfp4_error *err);
bool nvfp4_vreport_match(const nvfp4_vreport *rep);
bool nvfp4_vreport_has_cause(const nvfp4_vreport *rep, nvfp4_cause c);
void nvfp4_vreport_free(nvfp4_vreport *rep);
/* Adds a cause line (printf-style); ignored once the table is full. */
void nvfp4_vreport_add_cause(nvfp4_vreport *rep, nvfp4_cause c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- identification ----------------------------------------------------------- */
typedef struct {
    const char *name;
    size_t data_match, data_total;   /* bytes */
    size_t scale_match, scale_total; /* bytes (linear, or swizzled if only that is present) */
    double fraction;                 /* (data_match + scale_match) / (data_total + scale_total) */
} nvfp4_vrank;

/* Scores the actual view against each candidate and sorts rank[] (n
 * entries) by decreasing fraction, ties by candidate order. */
void nvfp4_identify_rank(const nvfp4_vview *actual, const nvfp4_vcandidate *cand, size_t n, nvfp4_vrank *rank);

/* ---- te chain variants (systematic-cause detection) ------------------------------ */
/* The scaled value x * inv_b of the te recipe for a block with scale byte s
 * under global amax `amax` (docs/semantics.md, "Recipes"). */
float nvfp4_verify_te_scaled(float x, uint8_t scale_byte, float amax);

/* ---- the mutant catalog (docs/verify.md, "Mutants") ------------------------------ */
/* One plausible kernel bug: a recipe chain with one step replaced. The
 * catalog is what `nvfp4 table --mutants` lists, what the `mutants` golden
 * suite is built to separate from the recipe, and what verify and identify
 * name when a kernel's bytes equal one exactly. */
enum {
    NVFP4_MUTANT_NEEDS_RN = 1u,   /* shows only with round-to-nearest element casts */
    NVFP4_MUTANT_NEEDS_SR = 2u,   /* shows only with stochastic rounding */
    NVFP4_MUTANT_NEEDS_RHT = 4u,  /* shows only on the columnwise RHT output */
    NVFP4_MUTANT_NEEDS_2D = 8u,   /* shows only with 16x16 blocks */
    NVFP4_MUTANT_NEEDS_1D = 16u,  /* mutates a rule of 1D blocks only (4over6's per-block choice) */
    NVFP4_MUTANT_NEEDS_KV_V = 32u, /* a mistake of the KV cache's V scale layout: shows only against goldens in
                                     layout trtllm-kv-v, where its scale buffer is in that layout's size
                                     (nvfp4_mutant_applies says no; nvfp4_mutant_applies_in_layout) */
    NVFP4_MUTANT_NEEDS_128X4 = 64u /* a mistake of the cuBLAS 128x4 swizzled buffer only (codes and linear scales
                                     right): shows only against goldens in that layout (nvfp4_mutant_applies,
                                     which assumes it, says yes; nvfp4_mutant_applies_in_layout says no in
                                     any other) */
};

typedef struct nvfp4_mutant_info {
    const char *name;     /* "encode-senc-over-s" */
    const char *step;     /* the step of the chain it replaces: "encode factor", "block scale", ... */
    const char *formula;  /* what the buggy kernel computes */
    const char *source;   /* the real report, code or mechanism it comes from */
    const char *recipes;  /* the recipes it mutates, comma separated ("te,te-pyref,torchao") */
    unsigned needs;       /* NVFP4_MUTANT_NEEDS_* */
} nvfp4_mutant_info;

size_t nvfp4_mutant_count(void);
const nvfp4_mutant_info *nvfp4_mutant_at(size_t i);       /* NULL past the end */
const nvfp4_mutant_info *nvfp4_mutant_find(const char *name);
/* The family of a recipe name ("te" for te, te-pyref and the te-4over6 recipes, "torchao" for both
 * torchao recipes, "modelopt", "mxfp4" for both MXFP4 recipes), or NULL. */
const char *nvfp4_mutant_recipe_family(const char *recipe);
/* Whether m mutates recipe (it is listed) under these options
 * (rounding, RHT, block): false when what it needs is absent. */
bool nvfp4_mutant_applies(const nvfp4_mutant_info *m, const char *recipe, const nvfp4_quant_opts *opts);
/* nvfp4_mutant_applies for goldens whose scale_swizzled is in layout l: a
 * layout mistake applies only in the layout it is a mistake of (the
 * NVFP4_MUTANT_NEEDS_KV_V mutants in trtllm-kv-v), every other mutant as
 * nvfp4_mutant_applies says (it writes the cuBLAS buffer in any case). */
bool nvfp4_mutant_applies_in_layout(const nvfp4_mutant_info *m, const char *recipe, const nvfp4_quant_opts *opts,
                                    nvfp4_scale_layout l);
/* The layout of the scale buffer m writes (swizzled[] of its output):
 * trtllm-kv-v's size for the KV-cache mutants, else cuBLAS 128x4. */
nvfp4_scale_layout nvfp4_mutant_scale_layout(const nvfp4_mutant_info *m);
/* The chain step m replaces as a cause step token (nvfp4_cause_step's vocabulary). */
const char *nvfp4_mutant_step_id(const nvfp4_mutant_info *m);

/* A mutant's output: the quantized result (same layout as nvfp4_quantize)
 * and the swizzled scales it writes for each orientation (0: rowwise). */
typedef struct {
    nvfp4_quantized q;
    uint8_t *swizzled[2];
    size_t swizzled_bytes[2];
} nvfp4_mutant_output;

/* Quantizes x as the buggy kernel m would, with the same options as
 * nvfp4_quantize; steps other than the mutated one are the recipe's. */
nvfp4_status nvfp4_mutant_quantize(const nvfp4_mutant_info *m, const void *x, nvfp4_dtype dtype, size_t rows,
                                   size_t cols, const nvfp4_quant_opts *opts, nvfp4_mutant_output *out,
                                   nvfp4_error *err);
void nvfp4_mutant_output_free(nvfp4_mutant_output *o);

/* ---- stochastic rounding ------------------------------------------------------- */
/* One SR kernel's N outputs for the same input. y[i] is the scaled value of
 * element i (x times the encode factor of its block; identical for every
 * sample because SR leaves the scales alone); codes[s][i] sample s's code. */
typedef struct {
    size_t n;                 /* elements */
    const float *y;
    size_t samples;
    const uint8_t *const *codes; /* codes[s]: n codes, one per byte (unpacked) */
    double alpha;             /* family-wise false-alarm rate of the whole test (default 0.001) */
    /* bit-exact mode: the elements are the stored orientation row-major
     * (columns a multiple of block_elems), so element i lies in block
     * i / block_elems, as the quantizer counts blocks (docs/semantics.md, "The SR bit contract"); sample
     * s used (seed, offset + s * offset_step). */
    bool bitexact;
    uint64_t seed, offset, offset_step;
    size_t block_elems;       /* 16 or 32 (32: offsets offset and offset+1) */
} nvfp4_sr_input;

/* The SR rule sr-test names (docs/verify.md, "sr-test"): what the kernel's
 * decisions look like when they are not the 8-bit contract's. */
typedef enum {
    NVFP4_SR_RULE_CONTRACT = 0,   /* nothing seen that departs from the 8-bit rule */
    NVFP4_SR_RULE_MORE_BITS,      /* more than 8 random bits: p = frac, not floor(256 frac)/256 */
    NVFP4_SR_RULE_SHARED_BYTE,    /* one random byte shared by each aligned group of elements (a block) */
    NVFP4_SR_RULE_DETERMINISTIC,  /* no randomness: the same neighbour in every sample (RN, RZ, ...) */
    NVFP4_SR_RULE_DEPENDENT,      /* dependent random bits of no named kind */
    NVFP4_SR_RULE_BIASED          /* round-up rates off the fraction beyond the test's allowance */
} nvfp4_sr_rule;

/* The rule's token in `sr-test --json` ("rule"): contract, more-bits, shared-byte, deterministic,
 * dependent, biased. */
const char *nvfp4_sr_rule_name(nvfp4_sr_rule r);

typedef struct {
    size_t tested;            /* elements with 0 < p < 1 */
    size_t invalid;           /* codes that are neither neighbour of y */
    size_t impossible;        /* elements with p = 0 < frac (floor(256 frac) = 0) rounded away in some sample */
    size_t impossible_ups;    /* their round-ups, over all samples */
    size_t below8;            /* elements with 0 < frac < 1/256 (p = 0 under the 8-bit rule) */
    double below8_expected;   /* sum over them of N frac: their expected round-ups if p = frac */
    double frac_z, frac_pvalue; /* test 2 again with p = frac (the rate of a kernel with many random bits) */
    size_t rejected;          /* binomial tests rejected after Holm */
    size_t rejected_high, rejected_low; /* of those: too many / too few round-ups */
    double min_pvalue;
    size_t worst_element;
    double mean_z, mean_pvalue; /* value-weighted bias of the mean */
    double bias_per_element;    /* mean (q - E[q]) in scaled units */
    double serial_z, serial_pvalue; /* runs test across samples (conditional on each element's count) */
    double neighbour_z, neighbour_pvalue; /* joint round-ups of adjacent element pairs within a sample */
    size_t identical_pairs;   /* consecutive samples with identical codes (where any element is random) */
    nvfp4_sr_rule rule;       /* the rule named (the first cause's) */
    double deterministic_log10_p; /* log10 P(every element keeps one neighbour in all samples | contract) */
    size_t shared_group;      /* SHARED_BYTE: the group size (elements i / g share a byte); else 0 */
    size_t group_samples_mixed; /* SHARED_BYTE: (group, sample) pairs with both round-ups and round-downs */
    /* bit-exact mode */
    size_t bitexact_mismatches, bitexact_total;
    int byte_map[32];         /* byte_map[k]: which of the block's random bytes element k uses; -1 unknown */
    bool byte_map_found;
    bool pass;
    nvfp4_vcause_line causes[NVFP4_VERIFY_MAX_CAUSES];
    size_t n_causes;
} nvfp4_sr_report;

nvfp4_status nvfp4_sr_test(const nvfp4_sr_input *in, nvfp4_sr_report *rep, nvfp4_error *err);

/* Exact probability that SR rounds element y away from zero under the
 * 8-bit contract (floor(256*frac)/256, 0 for exact grid values and |y| >= 6). */
double nvfp4_sr_p_up(float y);

/* ---- GEMM check ---------------------------------------------------------------- */
/* What gemm-check names when a GEMM is not the golden one (docs/verify.md, "gemm-check"). */
typedef enum {
    NVFP4_GEMM_CAUSE_BF16_OUTPUT = 0,   /* every output is bf16-representable: D rounded to bf16 */
    NVFP4_GEMM_CAUSE_CONSTANT_RATIO,    /* D = c * exact: a missing or doubled scale (the line says which) */
    NVFP4_GEMM_CAUSE_TRANSPOSED,        /* D written column-major, or an operand's other orientation used */
    NVFP4_GEMM_CAUSE_ACCUMULATION_ORDER, /* within the any-order bound but not the te order (an order that fits) */
    NVFP4_GEMM_CAUSE_COUNT
} nvfp4_gemm_cause;

typedef struct {
    nvfp4_gemm_cause cause;
    char line[320];
} nvfp4_gemm_cause_line;

const char *nvfp4_gemm_cause_name(nvfp4_gemm_cause c); /* "bf16-output", "constant-ratio", ... */

typedef struct {
    size_t total;
    size_t outside_bound;      /* |actual - exact| > bound */
    size_t nan_mismatch;       /* NaN/Inf where the exact result is finite or the reverse */
    size_t te_equal;           /* bit-identical to the te order */
    size_t worst_index;
    double worst_ratio;        /* max |actual - exact| / bound (0 when bound is 0 and equal) */
    bool within_bound, equals_te;
    nvfp4_gemm_cause_line causes[NVFP4_GEMM_CAUSE_COUNT]; /* from nvfp4_gemm_check_causes */
    size_t n_causes;
} nvfp4_gemm_check_report;

/* actual, te: n fp32 outputs; exact, bound: from nvfp4_gemm_error_bound. */
void nvfp4_gemm_check(const float *actual, const float *te, const double *exact, const double *bound, size_t n,
                      nvfp4_gemm_check_report *rep);

/* Names the causes of a GEMM's departure from the golden one into rep
 * (after nvfp4_gemm_check filled it for the same output): outputs all
 * bf16-representable; a constant ratio to the exact result (a missing or
 * doubled global scale or alpha, named from the two amaxes); D written
 * transposed or an operand's other orientation; and, within the bound but
 * not the te order, which fp32 order (te, reverse, pairwise, exact)
 * reproduces it. a, b, alpha as for nvfp4_gemm; actual [M, N] row-major. */
nvfp4_status nvfp4_gemm_check_causes(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                     bool b_columnwise, float alpha, const float *actual,
                                     nvfp4_gemm_check_report *rep, nvfp4_error *err);

/* ---- reports: what nvfp4 verify, identify, sr-test and gemm-check print ------------------------- */
/* The CLI and the Python package (nvfp4kit) call these, so that both print
 * the same text byte for byte; the --json text is generated from the same
 * structured result, which a caller may also read directly. Inputs are
 * in-memory tensor sets (nvfp4/io.h) that the functions only read: a caller
 * may point their tensors at its own arrays (no copy). */
enum { NVFP4_REPORT_TEXT = 1u, NVFP4_REPORT_JSON = 2u }; /* what to assemble (bit mask; 0 means text) */

/* One orientation compared by nvfp4_verify_bundle_report. */
typedef struct {
    bool columnwise;
    size_t rows, cols;         /* logical shape of the stored orientation */
    nvfp4_vreport report;
} nvfp4_voutput;

typedef struct {
    int verdict;               /* 0: match / identified / pass / within bound; 1: otherwise */
    char *text;                /* the command's standard output (malloc'd), when asked, else NULL */
    char *json;                /* what the command prints with --json (malloc'd), when asked, else NULL */
    char *note;                /* a line the command writes to standard error besides (sr-test), or NULL */
    nvfp4_voutput *outputs;    /* verify: the orientations compared */
    size_t n_outputs;
    nvfp4_vrank *ranking;      /* identify: every variant, best first (names owned by the report) */
    size_t n_ranking, n_variants, n_mutants;
    nvfp4_sr_report *sr;       /* sr-test */
    nvfp4_gemm_check_report *gemm; /* gemm-check */
} nvfp4_report;

void nvfp4_report_free(nvfp4_report *r); /* frees every member and zeroes r */

/* nvfp4 verify --expected BUNDLE --actual FILE. */
typedef struct {
    const char *expected_name; /* the bundle's name (a path) in the text and messages */
    const char *actual_name;   /* the kernel output's name */
    nvfp4_verify_opts verify;  /* max_errors, components (candidates and SR fields are set here) */
    nvfp4_vcomponent lone;     /* a set of one tensor under another name is taken as this (default data) */
    unsigned what;             /* NVFP4_REPORT_TEXT and/or NVFP4_REPORT_JSON */
} nvfp4_verify_bundle_opts;

void nvfp4_verify_bundle_opts_init(nvfp4_verify_bundle_opts *o);

/* Compares the kernel output `actual` (components under the bundle's names:
 * data, scale, scale_swizzled, amax, dequant; *_t columnwise) with the
 * golden bundle (as nvfp4_bundle_load reads it), names catalogued bugs,
 * other recipes and orientations that match instead, and assembles the
 * report. NVFP4_OK when the comparison ran (the verdict is in rep); an
 * error (rep->text may then hold the text of the orientations done before
 * it, as the CLI printed them) for an unusable bundle or kernel output. */
nvfp4_status nvfp4_verify_bundle_report(const nvfp4_tensor_set *bundle, const nvfp4_tensor_set *actual,
                                        const nvfp4_verify_bundle_opts *o, nvfp4_report *rep, nvfp4_error *err);

/* ---- grouped (MoE) bundles (docs/verify.md, 3c "Grouped (MoE) bundles") ---- */
/* nvfp4_verify_bundle_report of a bundle with "groups" metadata (it calls
 * this): each component, then each expert (its rows, its scale segment, its
 * amax; an empty expert's amax is not compared), and the catalogued grouped
 * mistakes below that give every component the kernel wrote. */
nvfp4_status nvfp4_grouped_verify_report(const nvfp4_tensor_set *bundle, const nvfp4_tensor_set *actual,
                                         const nvfp4_verify_bundle_opts *o, nvfp4_report *rep, nvfp4_error *err);
/* The catalogued grouped mistakes: 0 grouped-shared-global-scale (every expert
 * with the stacked tensor's amax), 1 grouped-unpadded-segments (the stacked
 * scales swizzled as one 128x4 matrix). */
typedef struct {
    const char *name, *summary, *origin;
} nvfp4_grouped_mutant_info;
size_t nvfp4_grouped_mutant_count(void);
const nvfp4_grouped_mutant_info *nvfp4_grouped_mutant_at(size_t i); /* NULL out of range */
/* What a kernel with grouped mistake i writes for the stacked x: data, scale,
 * scale_swizzled, amax ([ngroups]), dequant added to out. */
nvfp4_status nvfp4_grouped_mutant_run(size_t i, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                      const size_t *m_sizes, size_t ngroups, const nvfp4_quant_opts *opts,
                                      nvfp4_tensor_set *out, nvfp4_error *err);

/* nvfp4 identify --expected-input X --actual FILE. */
typedef struct {
    nvfp4_quant_opts quant;    /* block (DEFAULT: every block), rht, rht_signs, rht_fp32, pad, seed, offset */
    int orientation;           /* 0 rowwise, 1 columnwise, -1: columnwise when actual holds only *_t components */
    bool mutants;              /* also rank the catalogued mutants (default true) */
    size_t top;                /* variants listed (default 10) */
    const char *actual_name;
    unsigned what;
} nvfp4_identify_opts;

void nvfp4_identify_opts_init(nvfp4_identify_opts *o);
nvfp4_status nvfp4_identify_report(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                   const nvfp4_tensor_set *actual, const nvfp4_identify_opts *o, nvfp4_report *rep,
                                   nvfp4_error *err);

/* nvfp4 sr-test --input X --samples FILE... */
typedef struct {
    nvfp4_quant_opts quant;    /* recipe, block (rounding, rowwise and columnwise are set from the fields below) */
    bool columnwise;
    double alpha;              /* default 0.001 */
    bool bitexact;
    uint64_t seed, offset, offset_step; /* bit-exact mode: sample s used (seed, offset + s * offset_step) */
    const char *const *sample_names;    /* n_samples names for messages, or NULL ("sample 1", ...) */
    unsigned what;
} nvfp4_sr_test_opts;

void nvfp4_sr_test_opts_init(nvfp4_sr_test_opts *o);
/* A sample whose scale bytes differ from the recipe's gives verdict 1, no
 * text and rep->note (SR leaves the scales alone). */
nvfp4_status nvfp4_sr_test_report(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                  const nvfp4_tensor_set *const *samples, size_t n_samples,
                                  const nvfp4_sr_test_opts *o, nvfp4_report *rep, nvfp4_error *err);

/* nvfp4 gemm-check --a A --b B --actual D: D [M, N] = alpha * A * B^T
 * against the rigorous bound (text only: the command has no --json). */
typedef struct {
    const char *a_name, *b_name, *d_name;
    bool a_columnwise, b_columnwise;
    float alpha;               /* default 1 */
    size_t max_errors;         /* elements outside the bound listed (default 10) */
} nvfp4_gemm_check_opts;

void nvfp4_gemm_check_opts_init(nvfp4_gemm_check_opts *o);
/* d holds the kernel's output as tensor 'd', or as its only F32 tensor. */
nvfp4_status nvfp4_gemm_check_text(const nvfp4_quantized *a, const nvfp4_quantized *b, const nvfp4_tensor_set *d,
                                   const nvfp4_gemm_check_opts *o, nvfp4_report *rep, nvfp4_error *err);
/* ---- witnesses: an input that separates the candidates left ------------------------------------ */
/* nvfp4 verify / identify --witness FILE (docs/verify.md, "Witnesses"). The candidates are the chains
 * verify (or identify) evaluates: verify's are the recipe of the golden, the other recipes and roundings
 * at its block, and the catalogued mutants of the recipe; identify's are every recipe x rounding x block
 * and the mutants of each at its default block. Those whose bytes equal the kernel's on x remain; with
 * two or more, the search looks for the smallest input (block tiles side by side in one stored row of
 * blocks: the tensor amax first, screened among the kernel's own nudged by a few ulps, hand-chosen
 * and seeded random ones, then beside the block holding it the kernel's own blocks and boundary
 * blocks built for it: ties, block-scale ties, underflowing blocks, zero, -0, NaN, Inf and subnormal
 * blocks, seeded random blocks) on which every pair of them gives different bytes (a remaining
 * candidate against the expected recipe first, then the remaining ones among themselves) (in the components the kernel wrote: data, scale,
 * scale_swizzled), verify's expected recipe among them (so that the next verify sees the mismatch); it then
 * runs every candidate on the witness and searches again with any that still gives the bytes of a
 * remaining one (up to four rounds), so that each remaining candidate is the only one with its bytes on the
 * witness wherever the search succeeds; and it builds it as a golden bundle: x, the outputs of the expected recipe, and
 * for each candidate its bytes as cand.NAME.data, cand.NAME.scale, cand.NAME.scale_swizzled (*_t for
 * the columnwise output; NAME is the candidate's name with spaces and brackets made '_'), with the
 * metadata witness_candidates and witness_unseparated. Running the kernel on that x and verifying it
 * against the bundle settles what this input could not. Pairs that no input tried separates are
 * reported as such (unseparated), never dropped. */
typedef struct {
    nvfp4_quant_opts quant;    /* verify: the golden's options (nvfp4_bundle_opts); identify: as for identify */
    int orientation;           /* 0 rowwise, 1 columnwise, -1: columnwise when actual holds only *_t components */
    bool identify;             /* identify's candidates (else verify's) */
    bool mutants;              /* include the catalogued mutants (default true) */
    size_t max_blocks;         /* the largest witness, in blocks of a row (default 8) */
    size_t max_trials;         /* inputs tried at most (default 20000) */
    const char *path;          /* write the witness bundle there (format from the name), or NULL */
    const char *actual_name;   /* the kernel output's name in the text */
    unsigned what;             /* NVFP4_REPORT_TEXT and/or NVFP4_REPORT_JSON */
} nvfp4_witness_opts;

void nvfp4_witness_opts_init(nvfp4_witness_opts *o);

#define NVFP4_WITNESS_MAX_CANDIDATES 22 /* more remaining candidates: the first 22 are separated */

typedef struct {
    size_t n_candidates;       /* candidates whose bytes equal the kernel's on x: candidates[0..n_candidates) */
    size_t left_out;           /* more than NVFP4_WITNESS_MAX_CANDIDATES: how many were not searched for */
    size_t n_apart;            /* candidates[n_candidates..+n_apart): kept apart from those too: verify's expected
                                  recipe, and candidates that gave one of their bytes on an earlier witness */
    char candidates[NVFP4_WITNESS_MAX_CANDIDATES][96];
    size_t evaluated;          /* candidates run on the final witness (all of verify's or identify's) */
    char collisions[1024];     /* "A = B" where candidate B outside the set still gives remaining candidate A's
                                  bytes on the witness (empty: each remaining one is the only one with its bytes) */
    bool needed;               /* two or more candidates remain */
    bool found;                /* an input was built (it separates `separated` of `pairs` pairs) */
    bool written;              /* the bundle was written to opts.path */
    size_t rows, cols, blocks; /* the witness input's shape (x) and its blocks */
    float amax;                /* its tensor amax */
    size_t pairs, separated;   /* pairs of candidates[]; pairs the witness separates */
    char unseparated[1024];    /* the pairs it does not, "A = B; C = D" (empty when all are) */
    size_t trials;             /* inputs tried */
    nvfp4_tensor_set bundle;   /* the witness bundle (when found) */
    char *text, *json;         /* the report (malloc'd) as opts.what asks */
    char never_separated[1024]; /* those of them that no input tried separated (same bytes everywhere tried);
                                  the others some input separates, but not together with the pairs it does */
    size_t n_same_as_expected; /* verify: remaining candidates whose bytes on the witness are the expected recipe's */
    char same_as_expected[512]; /* their names, "A, B" (a kernel that is one of them MATCHES on the witness) */
    bool useless;              /* all of them do: the witness can show no mismatch and is not written */
} nvfp4_witness;

/* Looks for a witness for the kernel output `actual` of input x (rows x cols, row-major, f32 or bf16)
 * and writes it to o->path when one was found. NVFP4_OK when the search ran (w->needed false: at most
 * one candidate gives the kernel's bytes, nothing to separate); an error for unusable inputs, an RHT
 * output (not searched), or a failed write. Free w with nvfp4_witness_free. */
nvfp4_status nvfp4_witness_search(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                  const nvfp4_tensor_set *actual, const nvfp4_witness_opts *o, nvfp4_witness *w,
                                  nvfp4_error *err);
void nvfp4_witness_free(nvfp4_witness *w);

/* ---- end of reports ------------------------------------------------------------------------------ */

NVFP4_END_DECLS
#endif /* NVFP4_VERIFY_H */
