/*
 * s8_ablate.c - study S8-ablate, the GPT (gptbase.c, d = 64) on English text:
 * NVIDIA's NVFP4 recipe against itself with one component removed at a time
 * (16x16 weights -> 1x16, no RHT on Wgrad, RN instead of SR on the gradients,
 * the paper's BF16 blocks quantized too: bf16_blocks "paper", the head BF16
 * in every arm) and against FP8 and BF16 operands, each paired
 * against the same seed's full recipe (NVIDIA arXiv 2509.25149 Sec. 4, Fig. 2
 * and the ablations of App. E). Its arms: studies/s8-ablate.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/study_internal.h"

static void s8_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    st_finding_paired(t, out, "removing the 16x16 weight scales (1x16 along different axes in Fprop and Dgrad) "
                              "raises the loss", "NVIDIA arXiv 2509.25149 App. E.5 Fig. 14", "no-2d", "paper");
    st_finding_paired(t, out, "removing the RHT on Wgrad raises the loss", "NVIDIA arXiv 2509.25149 App. E.4 Fig. 11",
                      "no-rht", "paper");
    st_finding_paired(t, out, "removing SR from the gradients (RN dY) raises the loss",
                      "NVIDIA arXiv 2509.25149 App. E.3 Fig. 10", "no-sr", "paper");
    st_finding_paired(t, out, "quantizing the paper's BF16 blocks too (its first and last blocks, scaled from 2 "
                              "and 8 of 62; the head stays BF16) raises the loss",
                      "NVIDIA arXiv 2509.25149 Sec. 4.1, App. E.2", "no-bf16", "paper");
    /* Fig. 2: NVFP4's loss within ~1% of FP8's in the stable phase, ~1.5% at the end (12B, 10T tokens) */
    st_finding_diff(t, out, "the NVFP4 recipe trails FP8 by about 1.5% at the end of training",
                    "NVIDIA arXiv 2509.25149 Fig. 2 (12B, 10T tokens: ~1% stable phase, ~1.5% at the end)", "paper",
                    "fp8", 1.5);
    st_finding_paired(t, out, "FP8 (per-tensor current scaling) trails BF16 operands",
                      "NVIDIA arXiv 2509.25149 Sec. 5; TransformerEngine Float8CurrentScaling", "fp8", "bf16");
}

const nvfp4_study st_study_s8_ablate = {
    .name = "s8-ablate",
    .claim = "GPT on English text: the NVFP4 recipe against itself with one component removed (2D weights, RHT, "
             "SR, BF16 blocks) and against FP8 and BF16 (NVIDIA 2509.25149 Sec. 4, Fig. 2, App. E)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 400,
    .run = st_run_config_study,
    .config = "s8-ablate", /* its arms: studies/s8-ablate.json */
    .findings = s8_findings,
    .quick_steps = 6,
};
