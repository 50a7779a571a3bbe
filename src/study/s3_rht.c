/*
 * s3_rht.c - study S3-rht, the tiny LM (tinylm.c) with the random Hadamard
 * transform on Wgrad (the recipe), on none, on Fprop or on Dgrad (NVIDIA arXiv
 * 2509.25149 App. E.4.1 Fig. 11).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/study_internal.h"

static void a_rht_none(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_WGRAD][0].rht = 0;
    c->recipe.q[NVFP4_GEMM_WGRAD][1].rht = 0;
}
static void a_rht_fprop(nvfp4_train_cfg *c)
{
    a_rht_none(c);
    c->recipe.q[NVFP4_GEMM_FPROP][0].rht = 16;
    c->recipe.q[NVFP4_GEMM_FPROP][1].rht = 16;
}
static void a_rht_dgrad(nvfp4_train_cfg *c)
{
    a_rht_none(c);
    c->recipe.q[NVFP4_GEMM_DGRAD][0].rht = 16;
    c->recipe.q[NVFP4_GEMM_DGRAD][1].rht = 16;
}
static const st_arm s3_rht_arms[] = {
    {"rht-wgrad", NULL, 0}, {"rht-none", a_rht_none, 0}, {"rht-fprop", a_rht_fprop, 0}, {"rht-dgrad", a_rht_dgrad, 0},
};
static nvfp4_status s3_rht_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return st_run_training(s, o, log, st_tinylm_base, s3_rht_arms, sizeof s3_rht_arms / sizeof *s3_rht_arms, err);
}
static void s3_rht_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "NVIDIA arXiv 2509.25149 App. E.4.1 Fig. 11 (1.2B)";
    st_finding_paired(t, out, "RHT on Wgrad lowers the gap versus no RHT", src, "rht-none", "rht-wgrad");
    st_finding_paired(t, out, "RHT on Fprop degrades the loss (vs Wgrad)", src, "rht-fprop", "rht-wgrad");
    st_finding_paired(t, out, "RHT on Dgrad degrades the loss (vs Wgrad)", src, "rht-dgrad", "rht-wgrad");
}

const nvfp4_study st_study_s3_rht = {
    .name = "s3-rht",
    .claim = "tiny LM: RHT helps on Wgrad, hurts on Fprop/Dgrad (NVIDIA 2509.25149 App. E.4.1 Fig. 11)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 800,
    .run = s3_rht_run,
    .findings = s3_rht_findings,
};
