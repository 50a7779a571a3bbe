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
#include "study/summary.h"
#include "study/verdict.h"

static const char *const s3_format_names[5] = {"nvfp4", "mxfp4-x1.00", "mxfp4-x1.25", "mxfp4-x1.36", "mxfp4-x1.50"};

static void s3_format_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)dir;
    const st_arm_summary *nv = st_arm_sum(t, a, "nvfp4"), *m1 = st_arm_sum(t, a, "mxfp4-x1.00");
    char buf[512];
    if (nv && m1) {
        snprintf(buf, sizeof buf,
                 "final excess loss (CE - entropy rate): nvfp4 %.4f +- %.4f, mxfp4 %.4f +- %.4f nats; gaps to FP32 "
                 "%.2f%% vs %.2f%%",
                 nv->excess_mean, nv->excess_ci, m1->excess_mean, m1->excess_ci, nv->gap_mean, m1->gap_mean);
        /* scale-free: MXFP4's excess over NVFP4's gap as a fraction of that gap;
         * published (2.5% - 1.5%) / 1.5% = 2/3 of NVFP4's gap to BF16 */
        st_finding_nvfp4_fraction(t, out, "MXFP4 trails NVFP4 at equal tokens by about 2/3 of NVFP4's gap",
                                  "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6 (8B: 2.5% vs 1.5% gap to BF16)", "mxfp4-x1.00",
                                  "nvfp4", "nvfp4", 2.0 / 3.0);
        st_finding(out, "excess loss at equal tokens", "this study", buf, "measurement");
    }
    st_finding_tokens_to_match(t, out, "MXFP4 needs more tokens to match NVFP4 (1.36x at 8B/1T)",
                               "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6b", s3_format_names, 1.36);
}

static nvfp4_status s3_format_plots(const char *dir, nvfp4_error *err)
{
    return st_plot_tokens_to_match(dir, s3_format_names, 1.36, err);
}

const nvfp4_study st_study_s3_format = {
    .name = "s3-format",
    .wall = "9 min 0 s",
    .claim = "tiny LM on Markov text: MXFP4 needs more tokens than NVFP4 to reach the same loss (NVIDIA "
             "2509.25149 Sec. 5: 1.36x)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 800,
    .run = st_run_config_study,
    .config = "s3-format", /* its arms: studies/s3-format.json */
    .findings = s3_format_findings,
    .plots = s3_format_plots,
    .quick_steps = 800, /* one seed of the default run: at 4 steps NVFP4's gap is too small to divide by */
};
