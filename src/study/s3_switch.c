/*
 * s3_switch.c - study S3-switch, the tiny LM (tinylm.c) switched to high
 * precision at 80% of training in the forward pass, the backward pass or both
 * (NVIDIA arXiv 2509.25149 App. D Fig. 7).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/verdict.h"

static void s3_switch_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "NVIDIA arXiv 2509.25149 App. D Fig. 7 (12B: fwd-only 1.5% -> 0.5%, bwd-only no gain)";
    /* NVIDIA's forward switch took the gap from 1.5% to 0.5%: 2/3 of it recovered */
    st_finding_recovered(t, out, "a late forward switch recovers about two thirds of the gap", src, "no-switch",
                         "fwd@80%", 2.0 / 3.0);
    st_finding_recovered(t, out, "switching both passes recovers at least as much as the forward switch (2/3)", src,
                         "no-switch", "both@80%", 2.0 / 3.0);
    st_finding_paired(t, out, "a forward switch beats a backward-only switch", src, "bwd@80%", "fwd@80%");
}

const nvfp4_study st_study_s3_switch = {
    .name = "s3-switch",
    .wall = "2 min 7 s",
    .claim = "tiny LM: switching the forward pass to high precision late recovers the gap, backward-only does "
             "not (NVIDIA 2509.25149 App. D)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 800,
    .run = st_run_config_study,
    .config = "s3-switch", /* its arms: studies/s3-switch.json */
    .findings = s3_switch_findings,
    .quick_steps = 800, /* one seed of the default run (about 12 s): at 4 steps the switch has not happened */
};
