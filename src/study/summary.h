/* summary.h - the findings summary.c computes from a study's table with
 * the estimates of verdict.c (the rest of summary.c's calls are declared
 * with the study descriptors, studies.h). Not public. */
#ifndef NVFP4_STUDY_SUMMARY_H
#define NVFP4_STUDY_SUMMARY_H

#include "study/studies.h"
#include "study/verdict.h"

/* The finding "MXFP4 needs more tokens than NVFP4": names are the NVFP4 arm
 * and the MXFP4 arms at 1, 1.25, 1.36 and 1.5x its steps; the statistic is
 * tokens-to-match (docs/studies.md "How verdicts are decided") with its
 * paired percentile bootstrap interval; published: the paper's factor. */
void st_finding_tokens_to_match(const st_table *t, json_t *out, const char *claim, const char *source,
                                const char *const names[5], double published);
/* (mean gap(a) - mean gap(b)) / mean gap(ref), ref = a or b, over the seeds
 * both arms have, with its paired percentile bootstrap interval (st_est_boot;
 * a ratio of means: per-seed ratios blow up where a seed's gap is near 0);
 * e->est is NAN where the mean gap(ref) is not positive. ref_gap: that mean.
 * Returns the number of paired seeds. */
size_t st_gap_fraction_est(const st_table *t, const char *a, const char *b, bool ref_is_a, st_estimate *e,
                           double *ref_gap);

#endif
