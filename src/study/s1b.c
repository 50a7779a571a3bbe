/*
 * s1b.c - study S1b, an MLP teacher-student task with every GEMM in NVFP4
 * 1x16: RTN against SR placements (Chmiel et al. arXiv 2505.19115 Sec. 3-5)
 * and 80% forward / backward switches to high precision (NVIDIA arXiv
 * 2509.25149 App. D).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"

static void s1b_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    st_finding_paired(t, out,
                      "the gap is forward-dominated: a forward switch to high precision at 80% recovers more than a "
                      "backward switch",
                      "NVIDIA arXiv 2509.25149 App. D (Chmiel et al. arXiv 2505.19115 Sec. 5 found the backward switch "
                      "enough)",
                      "chmiel-bwd80", "chmiel-fwd80");
    st_finding_paired(t, out, "SR on gradients lowers the loss gap versus RTN everywhere",
                      "Chmiel et al. arXiv 2505.19115 Sec. 3 Fig. 3 (at 350M)",
                      "rtn", "sr-grad");
}

const nvfp4_study st_study_s1b = {
    .name = "s1b",
    .wall = "2 min 9 s",
    .claim = "MLP teacher-student in NVFP4: RTN vs SR placements and 80% forward/backward switches (Chmiel Sec. 3-5; "
             "NVIDIA 2509.25149 App. D)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 1200,
    .run = st_run_config_study,
    .config = "s1b", /* its arms: studies/s1b.json */
    .findings = s1b_findings,
};
