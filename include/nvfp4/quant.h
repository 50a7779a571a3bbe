/*
 * nvfp4/quant.h - tensor quantization with named recipes: NVFP4 (E2M1 + E4M3
 * block scales + fp32 global amax), MXFP4 and MXFP8 (UE8M0 block scales),
 * 1x16 / 16x16 / 1x32 blocks, rowwise and columnwise (transposed) outputs,
 * RN or stochastic rounding, optional random Hadamard transform on the
 * columnwise output, the cuBLAS 128x4 swizzled scale layout.
 *
 * Normative description: docs/semantics.md. Contract: docs/semantics.md.
 */
#ifndef NVFP4_QUANT_H
#define NVFP4_QUANT_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/hadamard.h"
#include "nvfp4/layout.h"

NVFP4_BEGIN_DECLS

typedef enum { NVFP4_DTYPE_F32 = 0, NVFP4_DTYPE_BF16 = 1 } nvfp4_dtype;

typedef enum {
    NVFP4_BLOCK_DEFAULT = 0, /* the recipe's own block shape */
    NVFP4_BLOCK_1X16 = 1,
    NVFP4_BLOCK_16X16 = 2,   /* one scale per 16x16 tile (2D weights) */
    NVFP4_BLOCK_1X32 = 3
} nvfp4_block;

typedef enum { NVFP4_ELEM_E2M1 = 0, NVFP4_ELEM_E4M3 = 1 } nvfp4_elem;
/* UE5M3: the prototype unsigned 5-exponent-bit scale (te-ue5m3, te-ue5m3-1level; docs/semantics.md) */
typedef enum { NVFP4_SCALEFMT_E4M3 = 0, NVFP4_SCALEFMT_UE8M0 = 1, NVFP4_SCALEFMT_UE5M3 = 2 } nvfp4_scale_format;

/* ---- recipes ----------------------------------------------------------- */
typedef struct nvfp4_recipe nvfp4_recipe; /* defined in src/recipes/recipe.h */

typedef struct {
    const char *name;          /* "te", "te-pyref", "torchao", ... */
    const char *summary;       /* one line */
    const char *provenance;    /* public implementation and version reproduced */
    nvfp4_elem elem;
    nvfp4_scale_format scale_format;
    nvfp4_block default_block;
    bool has_global_amax;      /* NVFP4 recipes: true; MX: false */
    bool supports_sr;
} nvfp4_recipe_info;

size_t nvfp4_recipe_count(void);
const nvfp4_recipe *nvfp4_recipe_at(size_t i);
const nvfp4_recipe *nvfp4_recipe_find(const char *name); /* NULL if unknown */
const nvfp4_recipe_info *nvfp4_recipe_get_info(const nvfp4_recipe *r);
/* The per-token scales of a per-token recipe (flashinfer-pertoken: FlashInfer's
 * FP32 per-row factor, 1/S_enc of the row's amax, 0 for a zero row; the
 * dequantized value is (fp4 * s) * p): out[i] for row_amax[i], i < n. False
 * (out untouched) for a recipe without per-token scales. */
bool nvfp4_per_token_scales(const nvfp4_recipe *r, const float *row_amax, size_t n, float *out);

/* ---- options ----------------------------------------------------------- */
typedef struct {
    const char *recipe;          /* NULL means "te" */
    nvfp4_block block;           /* NVFP4_BLOCK_DEFAULT: the recipe's */
    nvfp4_rounding rounding;     /* NVFP4_RN, NVFP4_SR (or NVFP4_RZ) on the element cast */
    uint64_t seed, offset;       /* SR contract, docs/semantics.md, "The SR bit contract": the 16-element segment b of the
                                    stored orientation (b = row * pcols/16 + col/16) takes
                                    Philox(ctr = {offset', b}, key = seed) with offset' = offset
                                    rowwise, offset+1 columnwise; 1x32 blocks use offset and
                                    offset+1 for their halves (offset+2, +3 columnwise) with
                                    b = row * pcols/32 + col/32 (docs/semantics.md) */
    bool rowwise, columnwise;    /* the outputs; both false means rowwise only. rowwise is true by
                                    default, so columnwise = true ADDS the columnwise output
                                    (`nvfp4 quantize --also-columnwise`); columnwise only needs
                                    rowwise = false too (`--columnwise-only`) */
    bool rht;                    /* RHT-16 on the columnwise output */
    nvfp4_rht_signs rht_signs;
    uint64_t rht_sign_seed;
    bool rht_fp32;               /* keep the RHT output in fp32 (default: round to bf16 as TE) */
    bool pad;                    /* zero-pad the block dimension(s) at the end up to a multiple
                                    of the block (default: NVFP4_ESHAPE) */
    bool global_scale_inverted;  /* FlashInfer's is_global_scale_inversed=True: the kernel is handed
                                    fl(1/S_enc) and inverts it, S_enc' = fl(1/fl(1/S_enc))
                                    (docs/semantics.md, "Scale layouts"); recipes whose global
                                    scale is an encode scale (te, flashinfer, ...) only */
} nvfp4_quant_opts;

/* Defaults: recipe "te", its block, RN, seed = offset = 0, rowwise, no RHT,
 * TE signs, bf16 RHT output, no padding. */
void nvfp4_quant_opts_init(nvfp4_quant_opts *o);

/* ---- results ----------------------------------------------------------- */
/* One orientation. Rowwise: rows x cols as given. Columnwise: the transposed
 * tensor, rows = original cols, cols = original rows (blocks along the
 * original rows, as TE stores it for Wgrad/Dgrad). */
typedef struct {
    size_t rows, cols;       /* logical shape */
    size_t prows, pcols;     /* padded shape (== rows, cols unless opts.pad) */
    uint8_t *data;           /* E2M1: prows*pcols/2 bytes, element 2j in the low nibble;
                                E4M3 elements (mxfp8): prows*pcols bytes */
    size_t data_bytes;
    uint8_t *scale;          /* linear [scale_rows, scale_cols], one byte per block row;
                                16x16: the tile's byte repeated in each of its 16 rows */
    size_t scale_rows, scale_cols;
    float amax;              /* global amax (post-RHT when rht); 0 for MX recipes */
    bool rht;                /* data holds the quantized RHT(x) */
    float *row_amax;         /* row-scaled recipes (te-rowscaled): the amax of each stored row, prows
                                entries, which its scales and dequantization use (amax is then their
                                maximum); NULL for every other recipe. Always allocated by the library
                                (nvfp4_quantize_into too) and freed by nvfp4_quantized_free */
} nvfp4_qtensor;

typedef struct {
    const nvfp4_recipe *recipe;
    nvfp4_quant_opts opts;   /* as resolved: block filled in, recipe name set */
    nvfp4_qtensor row, col;
    bool has_row, has_col;
    bool borrowed;           /* data and scale buffers belong to the caller (nvfp4_quantize_into):
                                nvfp4_quantized_free leaves them alone */
} nvfp4_quantized;

/* ---- the plan ---------------------------------------------------------- */
/* Everything a quantization decides before it reads an element, computed
 * once from (options, dtype, shape) by nvfp4_quant_plan_init and taken by
 * every path: the scalar reference, the fast CPU kernels, the CUDA kernels,
 * the bundle writer and the verifier. */

/* One stored orientation (rowwise: rows x cols as given; columnwise: the
 * transpose), with the sizes of its two output buffers. */
typedef struct {
    size_t rows, cols;         /* logical stored shape */
    size_t prows, pcols;       /* padded stored shape (== rows, cols unless opts.pad) */
    size_t block_len;          /* elements per scale along a stored row: 16 or 32 */
    bool tile16;               /* 16x16 blocks: one scale per 16x16 tile */
    size_t data_bytes;         /* E2M1: prows*pcols/2; E4M3 elements: prows*pcols */
    size_t scale_rows, scale_cols; /* linear scale matrix: prows x pcols/block_len bytes */
    uint64_t sr_offset;        /* Philox counter base: offset rowwise, offset+1 (+2 for 1x32) columnwise */
} nvfp4_quant_layout;

typedef struct {
    const nvfp4_recipe *recipe;
    nvfp4_quant_opts opts;     /* resolved: recipe name, block filled in; rowwise or columnwise set */
    nvfp4_dtype dtype;
    size_t rows, cols;         /* the input, row-major */
    bool has_row, has_col;
    nvfp4_quant_layout row, col; /* valid where has_row / has_col */
    uint32_t rht_mask[4];      /* the RHT sign mask (bit i: sign of input i is -1) when opts.rht */
} nvfp4_quant_plan;

/* Resolves and checks opts (NULL: defaults) for a [rows, cols] input of
 * dtype. Errors: unknown recipe, block, rounding or sign choice, SR with a
 * recipe that has none, RHT without a columnwise output or with other than
 * 1x16 blocks, an empty tensor, dimensions not a multiple of the block
 * without opts.pad (NVFP4_ESHAPE), sizes that overflow (NVFP4_ENOMEM). */
nvfp4_status nvfp4_quant_plan_init(nvfp4_quant_plan *plan, const nvfp4_quant_opts *opts, nvfp4_dtype dtype,
                                   size_t rows, size_t cols, nvfp4_error *err);

/* Caller-provided outputs of a plan: row_* where plan->has_row, col_* where
 * plan->has_col, each of the layout's data_bytes / scale_rows*scale_cols
 * bytes (others may be NULL). Every byte is written. */
typedef struct {
    uint8_t *row_data, *row_scale;
    uint8_t *col_data, *col_scale;
} nvfp4_quant_buffers;

/* Quantizes x (row-major rows x cols, fp32 or bf16 bits). On success the
 * caller owns `out` and frees it with nvfp4_quantized_free. Errors: unknown
 * recipe, SR with a recipe that has none, RHT without a columnwise output,
 * dimensions not a multiple of the block without opts.pad (NVFP4_ESHAPE),
 * size overflow. The bytes do not depend on the OpenMP thread count. */
nvfp4_status nvfp4_quantize(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                            const nvfp4_quant_opts *opts, nvfp4_quantized *out, nvfp4_error *err);
void nvfp4_quantized_free(nvfp4_quantized *q);

/* nvfp4_quantize into the caller's buffers: no output allocation, and no
 * page faults on the outputs when they are reused. Temporaries remain where
 * the computation needs them: a padded copy for shapes that need padding,
 * the fp32 stored copy of the reference path and of MXFP4, the transform of
 * an RHT output of at most 16 MiB. x must match the plan's dtype and shape. On success out
 * describes the result with out->borrowed set (its data and scale pointers
 * are the caller's); the same bytes as nvfp4_quantize. */
nvfp4_status nvfp4_quantize_into(const nvfp4_quant_plan *plan, const void *x, const nvfp4_quant_buffers *bufs,
                                 nvfp4_quantized *out, nvfp4_error *err);

/* Dequantizes one orientation into out[rows*cols] (logical shape, padding
 * dropped): fp4(q) * (((float)s * amax) * fl(1/2688)) for `te` (each
 * recipe's own formula, docs/semantics.md). RHT data stays in the Hadamard
 * domain. */
nvfp4_status nvfp4_dequantize(const nvfp4_quantized *q, bool columnwise, float *out, nvfp4_error *err);

/* ---- global amax ------------------------------------------------------- */
/* max |x| with fmaxf semantics (NaN elements ignored; Inf counts). */
float nvfp4_amax_f32(const float *x, size_t n);
float nvfp4_amax_bf16(const uint16_t *x, size_t n);

/* ---- cuBLAS / CUTLASS 128x4 swizzled scale layout ------------------------ */
/* (NVFP4_SCALE_LAYOUT_128X4 of nvfp4/layout.h, which has the other layouts) */
/* Size in bytes of the swizzled layout of a [rows, cols] scale matrix:
 * roundup(rows,128) * roundup(cols,4). 0 on overflow. */
size_t nvfp4_swizzled_size(size_t rows, size_t cols);
/* Byte offset of scale (r, c) in the swizzled layout (docs/semantics.md, "Tensor layout"). */
size_t nvfp4_swizzle_offset(size_t r, size_t c, size_t cols);
/* Its inverse: the (r, c) in the padded [roundup(rows,128), roundup(cols,4)] matrix that byte
 * `offset` holds; a padding byte when r >= rows or c >= cols. */
void nvfp4_swizzle_position(size_t offset, size_t cols, size_t *r, size_t *c);
/* linear[rows*cols] -> swz[nvfp4_swizzled_size(rows, cols)], padding zeroed. */
void nvfp4_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz);
/* swz -> linear[rows*cols] (padding ignored). */
void nvfp4_scale_unswizzle(const uint8_t *swz, size_t rows, size_t cols, uint8_t *linear);

/* ---- names -------------------------------------------------------------- */
const char *nvfp4_block_name(nvfp4_block b);            /* "1x16", "16x16", "1x32" */
bool nvfp4_block_parse(const char *s, nvfp4_block *out);
const char *nvfp4_rht_signs_name(nvfp4_rht_signs s);    /* "te", "seeded", "none" */
const char *nvfp4_scale_format_name(nvfp4_scale_format f); /* "e4m3", "ue8m0", "ue5m3" (bundle metadata) */

NVFP4_END_DECLS
#endif /* NVFP4_QUANT_H */
