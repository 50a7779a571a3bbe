/*
 * suite_mutants.h - the mutant kill search of golden suites (internal to
 * the library; suite_gen.c calls it): which catalogued mutants
 * (nvfp4/verify.h, nvfp4_mutant_*) each golden case separates from the
 * recipe, the boundary-seeking inputs of the `mutants` suite, and the
 * mutation report of nvfp4_suite_mutation_report (`golden --mutants`).
 */
#ifndef NVFP4_VERIFY_SUITE_MUTANTS_H
#define NVFP4_VERIFY_SUITE_MUTANTS_H

#include <stdio.h>

#include "nvfp4/layout.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

typedef struct gm_state gm_state;

/* causes: also run verify on each killing case to record the causes it
 * names. layout: the suite's scale layout (its bundles' scale_swizzled),
 * in which a layout mutant of that layout applies (layout-kv-v-as-k in
 * trtllm-kv-v) and every candidate's scale buffer is compared. */
gm_state *gm_new(const char *recipe, nvfp4_rounding round, bool causes, nvfp4_scale_layout layout);
void gm_free(gm_state *s);

/* The mutants (applicable to the case's options) whose output for x differs
 * from the golden q and that no case noted before killed; with commit they
 * are recorded as killed by case_name. Returns how many. */
size_t gm_note(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
               const nvfp4_quant_opts *o, const nvfp4_quantized *q, bool commit);

/* Whether some applicable mutant is not killed yet. */
bool gm_any_alive(const gm_state *s);

/* Boundary-seeking input number k (0 <= k < gm_boundary_count) for the
 * recipe: block amaxes one to three ulps around E4M3 decision boundaries of
 * the block-scale formula, and elements around the E2M1 midpoints after the
 * recipe's encode factor of their block, under several global amaxes. The
 * x is malloc'd (rows x cols fp32). 0, or a status with err set. */
size_t gm_boundary_count(void);
int gm_boundary_case(const char *recipe, size_t k, float **x, size_t *rows, size_t *cols, const char **desc,
                     nvfp4_error *err);

/* 16x16 tiles whose 4over6 candidates tie (both errors 0) for a recipe
 * with a global amax: 16 x 32, to be quantized with 16x16 blocks. *x is
 * NULL (and 0 returned) when the recipe has no such case. */
int gm_tile_ties_case(const char *recipe, float **x, size_t *rows, size_t *cols, const char **desc, nvfp4_error *err);

/* The next separating case: when two candidates of verify (the recipe
 * variants and the recipe's mutants at this rounding) give the same bytes on
 * every case noted so far, the witness search (nvfp4_witness_search) runs
 * from the first case where one of them differs from the recipe; its input
 * is returned (rows x cols fp32, malloc'd, to be quantized with *block and
 * the suite's seed and this offset) when it separates a pair no case did.
 * *x is NULL (and 0 returned) when no pair is left to try. The case must
 * then be noted (gm_note with commit) before the next call. */
int gm_separating_case(gm_state *s, uint64_t seed, uint64_t offset, float **x, size_t *rows, size_t *cols,
                       nvfp4_block *block, const char **desc);

/* Prints (to f) the pairs of candidates that no case separates, if any: one
 * line each for the pairs and for the candidates not singled out, without
 * a command prefix. */
void gm_print_unseparated(const gm_state *s, FILE *f);

/* Prints the mutation report (text or JSON) to f; 0 when every applicable
 * mutant is killed, 1 when one survives. */
int gm_report(const gm_state *s, const char *suite, bool json, FILE *f);

#endif /* NVFP4_VERIFY_SUITE_MUTANTS_H */
