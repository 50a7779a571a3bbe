/*
 * mutant.h - the mutant catalog's internal form (src/verify/mutants.c): a
 * public descriptor plus the one step of the recipe chain it replaces, as
 * hooks that the mutant quantizer (src/verify/mutant_quant.c) calls instead
 * of the src/core/ rule. A hook left NULL is the recipe's own step. The
 * wrong rule of a mutant lives in its hook: it is the bug, not a rule of
 * ours, so it is not in src/core/.
 */
#ifndef NVFP4_VERIFY_MUTANT_H
#define NVFP4_VERIFY_MUTANT_H

#include "nvfp4/verify.h"
#include "core/recipe.h"

/* What a hook sees: one stored orientation being quantized. */
typedef struct {
    const nvfp4_core_recipe *r;
    const nvfp4_quant_plan *p;
    const nvfp4_quant_layout *l;
    bool colwise;
    const float *b;    /* the stored orientation as quantized (after the RHT), prows x pcols */
    const float *pre;  /* the same before the RHT (== b without one) */
    float amax;        /* tensor amax of b, the recipe's NaN rule */
    int mode;          /* NVFP4_CORE_RN / RZ / SR */
    uint64_t seed;
    const float *block_x; /* in a block-scale hook: the block's elements (1D blocks) */
    size_t row, bcol;     /* in a block-scale hook: the stored row and block column */
    const struct nvfp4_mutant *m; /* the (possibly composed) mutant being run: its scaled hook */
} nvfp4_mctx;

#define NVFP4_MUTANT_MAX_PARTS 8 /* one per step of the chain (nvfp4_mutant_step_id) */

typedef struct nvfp4_mutant {
    nvfp4_mutant_info info;
    /* options the buggy kernel effectively uses (RHT off, fp32 RHT, RN, 1x16 ...) */
    void (*opts)(nvfp4_quant_opts *o);
    /* replaces the RHT of the columnwise stored buffer b (prows x pcols, in place) */
    void (*transform)(const nvfp4_mctx *c, float *b);
    /* the tensor amax the kernel derives its global scale from (and writes) */
    float (*tensor_amax)(const nvfp4_mctx *c);
    /* an amax local to the block at (row, block column) used instead of the tensor's; for a
     * row-scaled recipe the amax of stored row `row` (bcol 0), which the kernel also writes */
    float (*local_amax)(const nvfp4_mctx *c, size_t row, size_t bcol);
    /* local_amax ignores bcol: taken once per stored row, not once per block (a row- or
     * 128-row-wide reduction per block made a level-2 suite's generation quadratic) */
    bool local_amax_per_row;
    nvfp4_core_global (*global)(const nvfp4_mctx *c, float amax);
    float (*block_amax)(const nvfp4_mctx *c, size_t row, size_t bcol);
    uint8_t (*bscale)(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax);
    nvfp4_core_block (*prepare)(const nvfp4_mctx *c, const nvfp4_core_global *g, uint8_t s);
    /* the scaled value y the element cast rounds (x * factor unless the kernel divides): the
     * encode-factor step's formula, seen by every element hook through nvfp4_mutant_y */
    float (*scaled)(const nvfp4_mctx *c, const nvfp4_core_block *b, float x);
    /* the element rounding: the code of x (the default casts nvfp4_mutant_y) */
    uint8_t (*elem)(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits);
    /* the special values: rewrites code q of input x with scaled value y (NaN, -0, saturation),
     * after the element rounding, so that a rounding and a special-value rule compose */
    uint8_t (*special)(const nvfp4_mctx *c, float x, float y, uint8_t q);
    /* the 16 random bytes of SR segment (row, block, half) */
    void (*rbytes)(const nvfp4_mctx *c, size_t row, size_t blk, size_t half, uint8_t rb[16]);
    /* rewrites the finished orientation (codes, linear scales, swizzled scales) */
    void (*layout)(const nvfp4_mctx *c, nvfp4_qtensor *t, uint8_t *swz, size_t swz_bytes);
    /* the core descriptor the chain runs instead of the recipe's own (NULL: the recipe's): chain
     * inference (src/verify/chain.c) swaps one step's rules of another recipe in with it */
    const nvfp4_core_recipe *core;
    /* a composed mutant (nvfp4_mutant_compose): the opts hooks of its parts, applied in order */
    void (*more_opts[NVFP4_MUTANT_MAX_PARTS])(nvfp4_quant_opts *o);
} nvfp4_mutant;

extern const nvfp4_mutant nvfp4_mutant_catalog[];
extern const size_t nvfp4_mutant_catalog_size;

/* nvfp4_mutant_quantize for any descriptor (the tests run one with
 * pass-through hooks to check that the chain is the recipe's). */
nvfp4_status nvfp4_mutant_run(const nvfp4_mutant *m, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                              const nvfp4_quant_opts *opts, nvfp4_mutant_output *out, nvfp4_error *err);

/* A chain of deviations from one recipe, at most one per step: the union of
 * the parts' hooks in *out (its info names the first part). False when two
 * parts replace the same hook (they are not independent steps), or n is
 * larger than NVFP4_MUTANT_MAX_PARTS. n = 0 gives the recipe itself. */
bool nvfp4_mutant_compose(const nvfp4_mutant *const *parts, size_t n, nvfp4_mutant *out);

/* The scaled value of x in block b as the mutant being run computes it
 * (its scaled hook, else the recipe's nvfp4_core_scaled). */
float nvfp4_mutant_y(const nvfp4_mctx *c, const nvfp4_core_block *b, float x);
/* The code of x in block b as the recipe casts it, from nvfp4_mutant_y. */
uint8_t nvfp4_mutant_default_elem(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits);

/* The recipe's own steps (what a hook falls back on). The block scale of
 * 4over6 recipes is the per-block choice of src/core/ (16x16: over the
 * tile's 16 rows, summed in TE's warp-tree order). */
uint8_t nvfp4_mutant_default_scale(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax);
/* 4over6 on the 16x16 tile holding (c->row, c->bcol): the two candidates'
 * errors e4[16], e6[16] of the tile's rows, and the bytes s4, s6. */
void nvfp4_mutant_4over6_tile_errors(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax, float e4[16],
                                     float e6[16], uint8_t *s4, uint8_t *s6);
/* The amax of stored row `row` (row-scaled recipes), the recipe's NaN rule. */
float nvfp4_mutant_row_amax(const nvfp4_mctx *c, size_t row);
float nvfp4_mutant_default_block_amax(const nvfp4_mctx *c, size_t row, size_t bcol);
float nvfp4_mutant_tensor_amax_of(const float *b, size_t n, int nanprop);
void nvfp4_mutant_default_rht(const nvfp4_mctx *c, float *b, const uint32_t mask[4]);

#endif /* NVFP4_VERIFY_MUTANT_H */
