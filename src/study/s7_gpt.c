/*
 * s7_gpt.c - study S7-gpt: the default GPT (gptbase.c) on English text, every
 * block's linears in BF16, FP8 (E4M3, per-tensor current scaling), MXFP8 or
 * NVFP4 with the paper's recipe (16x16 weights, SR gradients, RHT-16 on
 * Wgrad), each next to its FP32 shadow: how far each format's loss falls
 * behind FP32 (NVIDIA arXiv 2509.25149 Sec. 4-5 compares NVFP4 with FP8).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/study_internal.h"

static void all_operands(nvfp4_train_cfg *c, const char *desc)
{
    nvfp4_sq_cfg q;
    if (!nvfp4_sq_cfg_parse(desc, &q)) return;
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) c->recipe.q[g][o] = q;
}
static void a_bf16(nvfp4_train_cfg *c) { all_operands(c, "bf16"); }
static void a_fp8(nvfp4_train_cfg *c) { all_operands(c, "fp8"); }
static void a_mxfp8(nvfp4_train_cfg *c) { all_operands(c, "mxfp8"); }

static const st_arm s7_arms[] = {{"bf16", a_bf16, 0}, {"fp8", a_fp8, 0}, {"mxfp8", a_mxfp8, 0}, {"nvfp4", NULL, 0}};

static nvfp4_status s7_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return st_run_training(s, o, log, o->quick ? st_gpt_quick_base : st_gpt_base, s7_arms,
                           sizeof s7_arms / sizeof *s7_arms, err);
}

static void s7_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    st_finding_paired(t, out, "NVFP4 (paper recipe) trails FP8 in loss at equal tokens",
                      "NVIDIA arXiv 2509.25149 Fig. 2 and Sec. 5 (12B, 10T tokens: NVFP4 within ~1% of FP8)", "nvfp4",
                      "fp8");
    st_finding_paired(t, out, "FP8 with per-tensor current scaling trails BF16 operands",
                      "TransformerEngine Float8CurrentScaling; NVIDIA arXiv 2509.25149 Sec. 5", "fp8", "bf16");
}

const nvfp4_study st_study_s7_gpt = {
    .name = "s7-gpt",
    .claim = "GPT on English text: NVFP4 (paper recipe) vs FP8, MXFP8 and BF16 operands, each against its FP32 "
             "shadow (NVIDIA 2509.25149 Sec. 5)",
    .seeds = 2,
    .steps = 300,
    .run = s7_run,
    .findings = s7_findings,
    .quick_steps = 20,
};
