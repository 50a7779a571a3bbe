/*
 * s3_format.c - study S3-format, the tiny LM (tinylm.c) in NVFP4 against
 * MXFP4 at 1x to 1.5x the tokens: how many more tokens MXFP4 needs to match
 * NVFP4 (NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6: 1.36x at 8B).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/study_internal.h"

static void a_mxfp4(nvfp4_train_cfg *c) { nvfp4_recipe_cfg_mxfp4(&c->recipe); }
static const st_arm s3_format_arms[] = {
    {"nvfp4", NULL, 0},          {"mxfp4-x1.00", a_mxfp4, 1.0}, {"mxfp4-x1.25", a_mxfp4, 1.25},
    {"mxfp4-x1.36", a_mxfp4, 1.36}, {"mxfp4-x1.50", a_mxfp4, 1.5},
};
static nvfp4_status s3_format_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return st_run_training(s, o, log, st_tinylm_base, s3_format_arms,
                           sizeof s3_format_arms / sizeof *s3_format_arms, err);
}
static void s3_format_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)dir;
    const st_arm_summary *nv = st_arm_sum(t, a, "nvfp4");
    const char *names[4] = {"mxfp4-x1.00", "mxfp4-x1.25", "mxfp4-x1.36", "mxfp4-x1.50"};
    const double mult[4] = {1.0, 1.25, 1.36, 1.5};
    if (!nv) return;
    double target = nv->excess_mean, prev_x = 0, prev_m = 0, ttm = NAN;
    char buf[512];
    int have = 0;
    for (int i = 0; i < 4; i++) {
        const st_arm_summary *m = st_arm_sum(t, a, names[i]);
        if (!m) continue;
        if (have && prev_x > 0 && isnan(ttm) && prev_m > target && m->excess_mean <= target)
            ttm = prev_x + (mult[i] - prev_x) * (prev_m - target) / (prev_m - m->excess_mean);
        if (!have && m->excess_mean <= target) ttm = mult[i]; /* matched already at 1.0x (or better) */
        prev_x = mult[i];
        prev_m = m->excess_mean;
        have = 1;
    }
    const st_arm_summary *m1 = st_arm_sum(t, a, "mxfp4-x1.00");
    if (m1) {
        snprintf(buf, sizeof buf,
                 "final excess loss (CE - entropy rate): nvfp4 %.4f +- %.4f, mxfp4 %.4f +- %.4f nats; gaps to FP32 "
                 "%.2f%% vs %.2f%%",
                 nv->excess_mean, nv->excess_ci, m1->excess_mean, m1->excess_ci, nv->gap_mean, m1->gap_mean);
        st_finding_paired(t, out, "MXFP4 trails NVFP4 at equal tokens",
                          "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6 (8B: 2.5% vs 1.5% gap to BF16)", "mxfp4-x1.00",
                          "nvfp4");
        st_finding(out, "excess loss at equal tokens", "this study", buf, "measurement");
    }
    if (isnan(ttm))
        snprintf(buf, sizeof buf, "MXFP4 did not reach NVFP4's final excess loss within 1.5x the tokens");
    else
        snprintf(buf, sizeof buf, "MXFP4 reaches NVFP4's final excess loss at %.2fx the tokens (interpolated)", ttm);
    /* the factor is only as solid as the equal-token difference it rests on */
    double dm = NAN, dci = NAN;
    bool sig = st_paired_gap_diff(t, "mxfp4-x1.00", "nvfp4", &dm, &dci) && isfinite(dci) && dm - dci > 0;
    const char *v = isnan(ttm)   ? "not reproduced (factor > 1.5)"
                    : ttm <= 1.0 ? "not reproduced (factor <= 1)"
                    : sig        ? "reproduced (factor > 1)"
                                 : "inconclusive (factor > 1, but the equal-token difference is within the seed CI)";
    st_finding(out, "MXFP4 needs more tokens to match NVFP4 (1.36x at 8B/1T)", "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6b",
               buf, v);
}

const nvfp4_study st_study_s3_format = {
    .name = "s3-format",
    .claim = "tiny LM on Markov text: MXFP4 needs more tokens than NVFP4 to reach the same loss (NVIDIA "
             "2509.25149 Sec. 5: 1.36x)",
    .seeds = 3,
    .steps = 800,
    .run = s3_format_run,
    .findings = s3_format_findings,
};
