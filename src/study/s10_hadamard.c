/*
 * s10_hadamard.c - study S10-hadamard, the GPT (gptbase.c, d = 64) on
 * English text: the Wgrad RHT's Hadamard size d = 4, 16 (the paper), 64, 128
 * and its signs: one fixed random vector (the paper), re-drawn every step
 * and layer, none (NVIDIA arXiv 2509.25149 App. E.4.2 Fig. 12, App. E.4.3).
 * Its arms: studies/s10-hadamard.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/verdict.h"

static void s10_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *size = "NVIDIA arXiv 2509.25149 App. E.4.2 Fig. 12 (d = 4 worse than 16; larger d small gains)";
    const char *sig = "NVIDIA arXiv 2509.25149 App. E.4.3 (random signs; one fixed vector suffices)";
    st_finding_paired(t, out, "a 4-point Hadamard is worse than a 16-point one", size, "h4", "h16");
    st_finding_paired(t, out, "a 128-point Hadamard is better than a 16-point one", size, "h16", "h128");
    st_finding_paired(t, out, "a plain Hadamard (no random signs) is worse than random signs", sig, "h16-no-signs",
                      "h16");
    /* the same comparisons on the gradient error (the probe: few seeds resolve it) */
    st_finding_qerr(t, out, "a 4-point Hadamard gives a larger gradient error than a 16-point one", size, "h4", "h16");
    st_finding_qerr(t, out, "a 128-point Hadamard gives a smaller gradient error than a 16-point one", size, "h16",
                    "h128");
    st_finding_qerr(t, out, "a plain Hadamard (no random signs) gives a larger gradient error than random signs", sig,
                    "h16-no-signs", "h16");
    /* "one fixed vector suffices" is a claim of no effect: a test can only
     * fail to reject it, so it is reported as a measurement with its interval */
    const char *arms[2] = {"h16", "h16-per-step"};
    const st_row *r[2 * 256];
    double d[256];
    size_t n = st_paired_finals(t, arms, 2, r, 256);
    if (n) {
        for (size_t i = 0; i < n; i++) d[i] = st_row_gap(r[2 * i]) - st_row_gap(r[2 * i + 1]);
        st_estimate e;
        st_est_t(d, n, &e);
        char buf[320];
        snprintf(buf, sizeof buf,
                 "gap(h16) - gap(h16-per-step) = %+.3f points, 95%% CI [%+.3f, %+.3f] (paired t, %zu seeds); "
                 "a claim of no effect: an interval around 0 is consistent with it",
                 e.est, e.lo, e.hi, n);
        st_finding(out, "re-drawing the signs every step does not beat one fixed sign vector", sig, buf,
                   "measurement");
    }
}

const nvfp4_study st_study_s10_hadamard = {
    .name = "s10-hadamard",
    .wall = "6 min 41 s",
    .claim = "GPT on English text: the Wgrad RHT's Hadamard size (4 to 128) and its signs (one fixed random "
             "vector, re-drawn every step, none) (NVIDIA 2509.25149 App. E.4.2, E.4.3)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 500,
    .run = st_run_config_study,
    .config = "s10-hadamard", /* its arms: studies/s10-hadamard.json */
    .findings = s10_findings,
    .quick_steps = 6,
};
