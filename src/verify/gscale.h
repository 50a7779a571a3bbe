/*
 * gscale.h - internal: the global scale a kernel used, read back from its
 * block scale bytes (gscale.c; docs/verify.md, "The global scale a kernel
 * used").
 *
 * For a recipe whose block-scale rule is a monotone function of one global
 * parameter (S_enc for te's product and the torch-style chains; the decode
 * scale g = amax/2688 for torchao's and modelopt's divisions), each block's
 * scale byte admits an interval of that parameter, and every value the
 * kernel can have used lies in the intersection over its blocks. No rounding
 * rule is written here: each byte is src/core/'s nvfp4_core_block_scale (or
 * a catalogued mutant's hook) evaluated at a trial parameter.
 */
#ifndef NVFP4_VERIFY_GSCALE_H
#define NVFP4_VERIFY_GSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/recipe.h"

typedef struct {
    bool applies;      /* the rule is monotone in one parameter and some block constrains it */
    bool decode;       /* the parameter is g (a decode scale: bytes fall as it grows), else S_enc */
    bool empty;        /* no single value gives every block's byte */
    float lo, hi;      /* every admissible value, inclusive (when !empty) */
    uint64_t count;    /* fp32 values in [lo, hi] */
    size_t blocks;     /* blocks with a finite block amax (the ones that constrain) */
    size_t conflict;   /* empty: the first block whose interval misses the others' */
} nvfp4_gscale_interval;

/* Whether r's block-scale byte is a monotone function of one global
 * parameter (te's product, mslk's and vLLM's orders, torchao's and
 * modelopt's divisions); *decode says which parameter. */
bool nvfp4_gscale_monotone(const nvfp4_core_recipe *r, bool *decode);

/* The parameter as r's chain holds it in g: g->g when decode, else g->s_enc. */
float nvfp4_gscale_param(const nvfp4_core_recipe *r, const nvfp4_core_global *g);

/* The interval of the parameter under which r's block-scale rule gives
 * bytes[i] for block amax bamax[i], i < n (non-finite block amaxes do not
 * constrain). out->applies is false when the rule is not monotone. */
void nvfp4_gscale_infer(const nvfp4_core_recipe *r, const float *bamax, const uint8_t *bytes, size_t n,
                        nvfp4_gscale_interval *out);

/* The byte r's block-scale rule gives for block amax bamax at parameter p. */
uint8_t nvfp4_gscale_byte_at(const nvfp4_core_recipe *r, float p, float bamax);



/* ---- named candidates (who computes which value) ------------------------ */

typedef struct {
    char name[160];  /* "te's rule", "global-torch-rdiv", ...: every source of this value, comma separated */
    float value;     /* the parameter (S_enc or g) */
} nvfp4_gscale_named;

/* The parameter every known global rule gives for tensor amax `amax` with
 * r's block-scale rule: the rules of the registered recipes whose global
 * parameter is r's, and the catalogued global-scale mutants; equal values
 * share one entry. Returns the number written (at most max). */
size_t nvfp4_gscale_candidates(const nvfp4_core_recipe *r, float amax, nvfp4_gscale_named *out, size_t max);

/* The interval of the parameter that gives byte `byte` for one block
 * (false when none does). */
bool nvfp4_gscale_block_interval(const nvfp4_core_recipe *r, float bamax, uint8_t byte, float *lo, float *hi);

/* The other known block-scale formulas (the registered recipes' rules of
 * r's family, the catalogued block-scale mutants of recipe `recipe`) that
 * give every byte at r's own global scale for amax `amax`: their names,
 * comma separated, into names (empty when none). Returns how many. */
size_t nvfp4_gscale_other_bscales(const nvfp4_core_recipe *r, const char *recipe, float amax, const float *bamax,
                                  const uint8_t *bytes, size_t n, char *names, size_t names_len);
#endif
