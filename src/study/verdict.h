/* verdict.h - the laboratory's statistics and verdict rules (not public):
 * paired per-seed estimates with 95% intervals (t, or a deterministic
 * percentile bootstrap), Holm's correction over a study's findings, and the
 * fixed rules that turn an estimate and a published value into one of
 * `reproduced`, `direction only`, `not reproduced`, `inconclusive`.
 * docs/studies.md "How verdicts are decided" states the same rules. */
#ifndef NVFP4_STUDY_VERDICT_H
#define NVFP4_STUDY_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "study/studies.h"

#define ST_VERDICT_ALPHA 0.05    /* family-wise level of a study's findings (Holm) */
#define ST_VERDICT_BAND 0.5      /* "consistent": within +-50% of the published effect */
#define ST_BOOT_RESAMPLES 2000u  /* percentile bootstrap resamples */
#define ST_BOOT_SEED UINT64_C(0x6e76667034766431) /* fixed: the bootstrap is deterministic */

typedef enum { ST_V_REPRODUCED, ST_V_DIRECTION, ST_V_NOT, ST_V_INCONCLUSIVE } st_verdict;

/* An estimate of one effect over n paired seeds. */
typedef struct {
    const char *method; /* "paired t" or "paired percentile bootstrap" */
    size_t n;
    double est, lo, hi; /* point estimate and 95% interval */
    double null_value;  /* the no-effect value (0 for a difference, 1 for a ratio) */
    double p;           /* two-sided p-value against null_value (before Holm) */
} st_estimate;

/* Mean and 95% t-interval of d[0..n) with its two-sided p-value against 0
 * (n < 2: est = mean, interval NAN, p = 1). */
void st_est_t(const double *d, size_t n, st_estimate *e);

/* The power statement of an estimate: the smallest true effect (distance
 * from null_value) that n seeds of the measured spread detect with
 * probability 0.8 at the two-sided 5% level, (q_0.975 + q_0.80) * SE, with
 * Student's t quantiles (df = n - 1) for a paired t and SE its interval's
 * half-width / t_0.975; normal quantiles and SE = half-width / z_0.975 for a
 * bootstrap. NAN without an interval. */
double st_mde80(const st_estimate *e);

/* A statistic of the seeds idx[0..n) (a resample, repeats allowed). */
typedef double (*st_boot_stat)(const size_t *idx, size_t n, const void *ctx);
/* The statistic on all n seeds, and its 95% percentile bootstrap interval
 * over ST_BOOT_RESAMPLES resamples of the seeds drawn with a splitmix64
 * stream seeded ST_BOOT_SEED (index = draw mod n); NAN statistics count as
 * +infinity. p = min(1, 2 (min(#<=null, #>=null) + 1) / (B + 1)). */
void st_est_boot(st_boot_stat stat, const void *ctx, size_t n, double null_value, st_estimate *e);

/* Holm's step-down adjusted p-values of p[0..n). */
void st_holm(const double *p, size_t n, double *adj);

/* The seeds the estimate's own spread needs to detect its own point
 * estimate: the smallest n >= 2 at which mde80 (above) equals |est - null|,
 * with the per-seed standard deviation held at the measured one (SE * sqrt(n)
 * of this run). Paired t: min{n : (t_0.975,n-1 + t_0.80,n-1) SE sqrt(n0/n) <=
 * |est - null|}; bootstrap: ceil(n0 ((z_0.975 + z_0.80) SE / |est - null|)^2).
 * INFINITY for a tie (est == null) or one beyond 10^9; NAN without an interval. */
double st_seeds_needed(const st_estimate *e);

/* Underpowered: mde80 exceeds the effect the finding looks for, the published
 * one's distance from null (published finite) or else the point estimate's;
 * true without an interval. */
bool st_underpowered(const st_estimate *e, double published);

/* The rule (docs/studies.md): expected_sign +1 or -1 is the published
 * direction of (est - null); published is the published effect in the same
 * unit (NAN: the source states a direction only); ceiling is the largest
 * value this run's statistic can take (NAN: none), so that a published band
 * beyond it is out of reach and never decides "not reproduced". rule: the
 * rule's name. */
st_verdict st_verdict_decide(const st_estimate *e, double p_holm, int expected_sign, double published,
                             double ceiling, const char **rule);
const char *st_verdict_name(st_verdict v);

/* Appends a finding decided by this module: the estimate, the published
 * value and direction, the statistic's name and the arms it reads (so a test
 * can recompute it from runs.csv), its mde80, seeds_needed and underpowered
 * flag are stored; st_verdicts_finalize sets the verdict. Returns the finding
 * (owned by arr). */
json_t *st_finding_est(json_t *arr, const char *claim, const char *source, const char *measured,
                       const st_estimate *e, int expected_sign, double published, const char *statistic,
                       const char *const *arms, size_t narms);
/* Records on a finding of st_finding_est the largest value its statistic can
 * take in this run (docs/studies.md "How verdicts are decided", rule 5). */
void st_finding_set_ceiling(json_t *finding, double ceiling);
/* Appends a finding decided by a stated deterministic criterion (one run, no
 * seed spread): reproduced when met, not reproduced otherwise. */
void st_finding_criterion(json_t *arr, const char *claim, const char *source, const char *measured, bool met,
                          const char *criterion);
/* Appends a finding whose statistic is undefined (e.g. a fraction of a gap
 * that is not positive): inconclusive, with why as its rule. */
void st_finding_inconclusive(json_t *arr, const char *claim, const char *source, const char *measured,
                             const char *why);
/* Holm over the findings of arr that carry an estimate, then each one's verdict. */
void st_verdicts_finalize(json_t *arr);
/* The same for a run that looked at its data `looks` times (a sequential
 * run's planned looks): each p is first multiplied by looks (capped at 1,
 * stored as p_looks), so that by the union bound over the looks the chance
 * of any false "significant" at whichever look the run stops stays at or
 * below 5%, whatever rule chose the stop. looks = 1: st_verdicts_finalize. */
void st_verdicts_finalize_looks(json_t *arr, size_t looks);

#endif
