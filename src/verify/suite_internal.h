/*
 * suite_internal.h - what the files of golden suites share inside the
 * library (nvfp4/suite.h is the public side): the case tables
 * (suite_cases.c), the MANIFEST writer and the replace check
 * (suite_manifest.c). suite_gen.c assembles them; suite_verify.c reads
 * suites back.
 */
#ifndef NVFP4_VERIFY_SUITE_INTERNAL_H
#define NVFP4_VERIFY_SUITE_INTERNAL_H

#include <stdio.h>

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/suite.h"

/* ---- cases (suite_cases.c) ---------------------------------------------------------------------- */
/* One case: its input (malloc'd, rows x cols fp32) and how it is quantized. */
typedef struct {
    const char *name, *desc;
    size_t rows, cols;
    float *x;               /* rows * cols */
    nvfp4_dtype dtype;      /* BF16: x is converted (exactly: bf16 values) */
    nvfp4_block block;      /* DEFAULT: the recipe's */
    bool rht;
    size_t ngroups;         /* > 0: a grouped (MoE) case of m_sizes[0..ngroups-1] rows (rowwise, RN) */
    size_t m_sizes[4];
    char name_buf[64], desc_buf[96]; /* where a generated name points */
} gcase;

/* The edge cases (level 1 or 2). */
void suite_edge_e2m1_ties(gcase *c, int level);
void suite_edge_e4m3_ties(gcase *c, int level);
void suite_edge_ue5m3_ties(gcase *c, int level);
void suite_edge_zero_blocks(gcase *c, int level);
void suite_edge_underflow(gcase *c, int level);
void suite_edge_outliers(gcase *c, int level);
void suite_edge_specials(gcase *c, int level);
void suite_edge_amax(gcase *c, int which); /* 0 zero, 1 Inf, 2 subnormal, 3 tiny, 4 huge */
void suite_edge_ue8m0_min_scale(gcase *c, int level);
/* Seeded random tensors: kind 0 normal, 1 laplace, 2 channel outliers,
 * 3 bf16-exact, 4 bf16 input, 5 columnwise RHT. */
void suite_random_case(gcase *c, int kind, int level, uint64_t seed);
void suite_shapes_case(gcase *c, size_t rows, size_t cols, nvfp4_block b, uint64_t seed);
/* The grouped (MoE) cases, k < suite_grouped_count(): stacked experts whose
 * amaxes differ by up to 10^6 (a shared global scale changes bytes), an empty
 * expert, a segment over 128 rows, K/16 not a multiple of 4. */
size_t suite_grouped_count(void);
void suite_grouped_case(gcase *c, size_t k, uint64_t seed);

/* ---- the grouped mutants (suite_grouped.c) ----------------------------------------------------- */
/* Which catalogued grouped mutants (nvfp4_grouped_mutant_at) the grouped
 * cases so far kill: a mutant is killed by the first case whose golden,
 * verified against that mutant's outputs, differs and names it as a cause. */
typedef struct {
    bool global_amax;       /* the recipe has a global amax (else grouped-shared-global-scale cannot differ) */
    size_t cases;
    size_t kills[2];        /* the cases that kill mutant i */
    char killer[2][64];     /* the first of them; "" while mutant i lives */
    char cause[2][96];      /* the cause verify named on the killer, and its status */
} suite_grouped_kills;

/* Verifies the golden bundle of case name (input x, group sizes m) against
 * each grouped mutant's outputs. */
nvfp4_status suite_grouped_note(suite_grouped_kills *k, const char *name, const nvfp4_tensor_set *bundle,
                                const void *x, nvfp4_dtype dtype, size_t rows, size_t cols, const size_t *m,
                                size_t ngroups, const nvfp4_quant_opts *o, nvfp4_error *err);
/* The grouped suite's mutation report; 0 when every mutant that can differ
 * under the recipe is killed, else 1. */
int suite_grouped_report(const suite_grouped_kills *k, const char *recipe, bool json, FILE *f);

/* ---- the MANIFEST (suite_manifest.c) ------------------------------------------------------------ */
/* The MANIFEST text being written: a header, then "sha256  path" lines. */
typedef struct {
    char *text;
    size_t len, cap;
    bool failed; /* out of memory */
} suite_manifest_writer;

void suite_manifest_add(suite_manifest_writer *w, const char *line);
/* Adds a line for root/rel, or one for each file of the folder root/rel (sorted by name). */
nvfp4_status suite_manifest_hash(suite_manifest_writer *w, const char *root, const char *rel, nvfp4_error *err);
void suite_manifest_writer_free(suite_manifest_writer *w);

/* True when the entries (sorted by path) list name: a file CASE, or a
 * folder CASE through its files CASE/... (MANIFEST itself counts as listed). */
bool suite_manifest_lists(const nvfp4_manifest *sorted, const char *name);
/* Sorts the entries by path (for suite_manifest_lists). */
void suite_manifest_sort(nvfp4_manifest *m);

/* An existing dir may be replaced only when it is empty or a suite of ours
 * (everything in it listed by its MANIFEST), or with force. */
nvfp4_status suite_check_replaceable(const char *dir, bool force, nvfp4_error *err);

/* One progress line to a writer's log callback (NULL: silent). */
void suite_say(nvfp4_suite_log_fn log, void *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Sets err from e with the temporary folder tmp's name replaced by dest's
 * (a writer builds in tmp and renames it to dest: the user asked for dest). */
nvfp4_status suite_error_renamed(nvfp4_error *err, const nvfp4_error *e, const char *tmp, const char *dest);

#endif /* NVFP4_VERIFY_SUITE_INTERNAL_H */
