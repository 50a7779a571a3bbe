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
    .wall = "2 min 13 s",
    .claim = "tiny LM: RHT helps on Wgrad, hurts on Fprop/Dgrad (NVIDIA 2509.25149 App. E.4.1 Fig. 11)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 800,
    .run = st_run_config_study,
    .config = "s3-rht", /* its arms: studies/s3-rht.json */
    .findings = s3_rht_findings,
};
