/*
 * nvfp4/trace.h - one block of a tensor walked through a recipe, step by
 * step: the global amax and scale, the block amax, the block scale before
 * and after its rounding, the encode factor, and for every element the
 * scaled value, the random byte (SR), the code, its value and the
 * dequantized value.
 *
 * Every number comes from the same per-block functions the quantizer
 * evaluates (the recipe's chain, docs/semantics.md "Recipes"), so a trace
 * cannot drift from nvfp4_quantize: its codes and scale byte are the
 * quantizer's bytes for the same tensor and options (tests/check_trace.c).
 * For teaching (`nvfp4 demo`, `nvfp4 explain-block`) and for tools that
 * need the scaled values behind a quantization (the SR tests).
 */
#ifndef NVFP4_TRACE_H
#define NVFP4_TRACE_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

/* The longest block a recipe uses (1x32). */
#define NVFP4_TRACE_MAX_BLOCK 32

/* What a recipe derives from the tensor amax. */
typedef enum {
    NVFP4_TRACE_GLOBAL_NONE = 0,   /* MX recipes: no global scale */
    NVFP4_TRACE_GLOBAL_ENCODE = 1, /* te family: S_enc = fminf(2688/amax, FLT_MAX) (1 for amax 0), S_dec = 1/S_enc */
    NVFP4_TRACE_GLOBAL_DECODE = 2  /* torchao, modelopt: a stored decode scale g = amax/2688 */
} nvfp4_trace_global;

/* One element of the traced block. */
typedef struct {
    size_t col;        /* its column in the tensor (padding columns lie past the last one) */
    float x;           /* the input (0 for padding), widened to fp32 */
    float scaled;      /* y, the value cast to the element format; for the `exact` recipe
                          x / D, shown only: its code compares x with D * boundary */
    uint8_t rbits;     /* SR: the element's random byte of the contract (docs/semantics.md, "The SR bit contract"); 0 under RN */
    uint8_t code;      /* E2M1 nibble (sign in bit 3) or E4M3 byte */
    float value;       /* the code's value in the element format */
    float dequant;     /* value * D */
    bool tie;          /* E2M1, scaled then rounded: |y| is an exact midpoint of two grid values */
    bool saturates;    /* E2M1, scaled then rounded: |y| > 6 (the code is +-6) */
} nvfp4_trace_elem;

typedef struct {
    const nvfp4_recipe *recipe;
    nvfp4_block block;            /* as resolved (the recipe's own when the options said default) */
    nvfp4_rounding rounding;
    size_t row, block_index;      /* the block: block_index-th of row `row` */
    size_t block_len;             /* elements: 16 or 32 */
    size_t tile_row0, tile_rows;  /* rows whose elements set the block amax: a 16x16 tile's 16, else `row` alone */
    uint64_t sr_block;            /* the block's linear index in the SR contract */
    /* the tensor */
    float amax;                   /* global amax, with the recipe's NaN rule */
    nvfp4_trace_global global_rule;
    float s_enc, s_dec;           /* NVFP4_TRACE_GLOBAL_ENCODE; 1 otherwise */
    float g;                      /* NVFP4_TRACE_GLOBAL_DECODE; 1 otherwise */
    /* the block scale */
    float block_amax;
    const char *scale_formula;    /* the rule in words, e.g. "block_amax * (S_enc * fl(1/6)), E4M3 RN satfinite" */
    float scale_unrounded;        /* the fp32 value the rule rounds to a scale byte (the block amax for UE8M0 floor) */
    uint8_t scale;                /* the stored scale byte (E4M3, or UE8M0 for MX recipes) */
    float scale_value;            /* its decoded value (UE8M0: with the recipe's lower clamp) */
    /* the elements */
    const char *encode_formula;   /* e.g. "x * inv, inv = fminf(1/(s*S_dec), FLT_MAX)" */
    float factor;                 /* the encode factor: multiplier (te), divisor (others), D (exact) */
    float dequant_scale;          /* D: what fp4(code) is multiplied by */
    bool scaled_then_rounded;     /* codes are the element rounding of `scaled` (false for `exact`) */
    nvfp4_trace_elem elem[NVFP4_TRACE_MAX_BLOCK]; /* block_len of them */
} nvfp4_trace_block;

/* Traces block `block_index` of row `row` of x (row-major rows x cols, fp32
 * or bf16 bits) under opts (NULL: defaults): recipe, block shape, rounding,
 * seed and offset as for nvfp4_quantize. The rowwise output is traced; the
 * last block of a row and the last tile may extend into zero padding
 * (opts->pad need not be set). Errors (NVFP4_EINVAL): what
 * nvfp4_quant_plan_init rejects, columnwise or RHT options, a row or block
 * outside the tensor. */
nvfp4_status nvfp4_trace(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols, const nvfp4_quant_opts *opts,
                         size_t row, size_t block_index, nvfp4_trace_block *out, nvfp4_error *err);

/* The scaled value y of every element of a stored orientation (rows x cols
 * row-major fp32, cols a multiple of block_len) under recipe r, from its
 * linear scale bytes [rows, cols/block_len] and its global amax: what the
 * element rounding saw (the input of an SR kernel's rounding). Errors:
 * NVFP4_EUNSUPPORTED for recipes without a scaled value (exact, E4M3
 * elements), NVFP4_EINVAL for a NULL recipe or a block length that does
 * not divide cols. */
nvfp4_status nvfp4_trace_scaled(const nvfp4_recipe *r, float amax, const uint8_t *scale, size_t rows, size_t cols,
                                size_t block_len, const float *x, float *y, nvfp4_error *err);

/* Whether |y| is an exact midpoint of two adjacent E2M1 values (where RN
 * applies its ties-to-even rule). */
bool nvfp4_trace_e2m1_is_tie(float y);

NVFP4_END_DECLS
#endif /* NVFP4_TRACE_H */
