/*
 * s12_switch.c - study S12-switch, the GPT (gptbase.c, d = 64) on English
 * text: the NVFP4 recipe switched to BF16 late in training, in the forward
 * pass, the backward pass or both, at 80% or 50% of the steps (NVIDIA arXiv
 * 2509.25149 App. D Fig. 7). Its arms: studies/s12-switch.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"

static void s12_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "NVIDIA arXiv 2509.25149 App. D Fig. 7 (12B, switch at 8.2T of 10T tokens: fwd-only 1.5% -> "
                      "0.5%, bwd-only no gain)";
    /* NVIDIA's forward switch took the gap from 1.5% to 0.5%: 2/3 of it recovered */
    st_finding_recovered(t, out, "a forward switch at 80% recovers about two thirds of the gap", src, "no-switch",
                         "fwd@80%", 2.0 / 3.0);
    st_finding_recovered(t, out, "switching both passes at 80% recovers about two thirds of the gap", src,
                         "no-switch", "both@80%", 2.0 / 3.0);
    st_finding_paired(t, out, "a forward switch at 80% beats a backward-only switch", src, "bwd@80%", "fwd@80%");
    st_finding_paired(t, out, "a forward switch at 50% recovers more than one at 80%", src, "fwd@80%", "fwd@50%");
}

const nvfp4_study st_study_s12_switch = {
    .name = "s12-switch",
    .wall = "6 min 6 s",
    .claim = "GPT on English text: switching to BF16 late - forward only, backward only, both - at 50% and 80% of "
             "training (NVIDIA 2509.25149 App. D Fig. 7)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 500,
    .run = st_run_config_study,
    .config = "s12-switch", /* its arms: studies/s12-switch.json */
    .findings = s12_findings,
    .quick_steps = 6,
};
