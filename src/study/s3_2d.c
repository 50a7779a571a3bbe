/*
 * s3_2d.c - study S3-2d, the tiny LM (tinylm.c) with 16x16 weight scales
 * (the same bytes in Fprop and Dgrad) against 1x16 weights quantized along
 * different axes in the two GEMMs (NVIDIA arXiv 2509.25149 App. E.5).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"

static void s3_2d_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    st_finding_paired(t, out,
                      "16x16 (consistent) weights beat 1x16 weights quantized along different axes in Fprop and Dgrad",
                      "NVIDIA arXiv 2509.25149 App. E.5 Fig. 14 (1.2B)", "w-1x16", "w-16x16");
}

const nvfp4_study st_study_s3_2d = {
    .name = "s3-2d",
    .wall = "1 min 7 s",
    .claim = "tiny LM: 16x16 weight scales (same bytes in Fprop and Dgrad) beat inconsistent 1x16 (NVIDIA 2509.25149 "
             "App. E.5)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 800,
    .run = st_run_config_study,
    .config = "s3-2d", /* its arms: studies/s3-2d.json */
    .findings = s3_2d_findings,
};
