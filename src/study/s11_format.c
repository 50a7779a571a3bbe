/*
 * s11_format.c - study S11-format, the GPT (gptbase.c, d = 64) on English
 * text in NVFP4 (the paper recipe) against MXFP4 at 1x to 1.5x the tokens:
 * how many more tokens MXFP4 needs to reach NVFP4's loss (NVIDIA arXiv
 * 2509.25149 Sec. 5 Fig. 6: 1.36x at 8B). Its arms: studies/s11-format.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/summary.h"
#include "study/verdict.h"

static const char *const s11_names[5] = {"nvfp4", "mxfp4-x1.00", "mxfp4-x1.25", "mxfp4-x1.36", "mxfp4-x1.50"};

static void s11_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    /* scale-free: MXFP4's excess over NVFP4's gap as a fraction of that gap;
     * published (2.5% - 1.5%) / 1.5% = 2/3 of NVFP4's gap to BF16 */
    st_finding_nvfp4_fraction(t, out, "MXFP4 trails NVFP4 at equal tokens by about 2/3 of NVFP4's gap",
                              "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6 (8B: 2.5% vs 1.5% gap to BF16)", "mxfp4-x1.00",
                              "nvfp4", "nvfp4", 2.0 / 3.0);
    st_finding_tokens_to_match(t, out, "MXFP4 needs more tokens to match NVFP4 (1.36x at 8B/1T)",
                               "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6b", s11_names, 1.36);
}

static nvfp4_status s11_plots(const char *dir, nvfp4_error *err)
{
    return st_plot_tokens_to_match(dir, s11_names, 1.36, err);
}

const nvfp4_study st_study_s11_format = {
    .name = "s11-format",
    .wall = "12 min 59 s",
    .claim = "GPT on English text: MXFP4 needs more tokens than NVFP4 to reach the same loss (NVIDIA 2509.25149 "
             "Sec. 5 Fig. 6: 1.36x)",
    .seeds = 10, /* percentile bootstrap over 10 seeds (docs/studies.md "How verdicts are decided") */
    .steps = 500,
    .run = st_run_config_study,
    .config = "s11-format", /* its arms: studies/s11-format.json */
    .findings = s11_findings,
    .plots = s11_plots,
    .quick_steps = 6,
};
