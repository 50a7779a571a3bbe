/*
 * s9_sr_rht.c - study S9-sr-rht, the GPT (gptbase.c, d = 64) on English
 * text: which tensors get stochastic rounding (dY only, the paper; every
 * operand; none) and which GEMMs get the 16-point RHT (Wgrad, the paper; all
 * three; none) (NVIDIA arXiv 2509.25149 App. E.3 Fig. 10, App. E.4.1
 * Fig. 11). Its arms: studies/s9-sr-rht.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"

static void s9_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *sr = "NVIDIA arXiv 2509.25149 App. E.3 Fig. 10 (SR on gradients only; SR on forward tensors hurts)";
    const char *rht = "NVIDIA arXiv 2509.25149 App. E.4.1 Fig. 11 (RHT on Wgrad only)";
    st_finding_paired(t, out, "RN everywhere is worse than SR on dY", sr, "sr-none", "paper");
    st_finding_paired(t, out, "SR on every operand (X and W too) is worse than SR on dY only", sr, "sr-all", "paper");
    st_finding_paired(t, out, "no RHT is worse than RHT on Wgrad", rht, "rht-none", "paper");
    st_finding_paired(t, out, "RHT on all three GEMMs is worse than on Wgrad only", rht, "rht-all", "paper");
}

const nvfp4_study st_study_s9_sr_rht = {
    .name = "s9-sr-rht",
    .wall = "5 min 53 s",
    .claim = "GPT on English text: which tensors get SR (dY only, the paper; every operand; none) and which GEMMs "
             "get the RHT (Wgrad only, the paper; all three; none) (NVIDIA 2509.25149 App. E.3, E.4.1)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 600,
    .run = st_run_config_study,
    .config = "s9-sr-rht", /* its arms: studies/s9-sr-rht.json */
    .findings = s9_findings,
    .quick_steps = 6,
};
