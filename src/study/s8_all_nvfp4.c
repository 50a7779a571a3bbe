/*
 * s8_all_nvfp4.c - study S8-all-nvfp4: s8-regime's model and data (8
 * blocks, d = 64, BF16 training) at twice its tokens per step (32,768 by 32
 * micro-batches, 512 steps, 40 tokens per parameter) with every block
 * NVFP4 and the head BF16. The paper's BF16 blocks take most of the
 * gradient error away (s8-regime's paper arm ends at noise / error
 * 1.4-2.6); without them the error is the sampling noise's size at 16,384
 * tokens per step (0.96-1.42 over 4 seeds), and the doubled batch lowers
 * the noise below it (docs/studies.md "Every block NVFP4"), so here the 2D,
 * RHT and SR ablations perturb a term that is not drowned. They are paired
 * against the all-NVFP4 arm, and the paper's rule (first and last blocks
 * BF16) is one more arm, judged on the loss and on the gradient error.
 * Hours long: run it with --resume. Its arms: studies/s8-all-nvfp4.json.
 */
#include "study/studies.h"

static void findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    st_s8_component_findings(t, out, "all-nvfp4");
    st_s8_bf16_blocks_finding(t, out, "all-nvfp4", "paper");
    st_finding_qerr(t, out, "quantizing the paper's BF16 blocks too raises the gradient error",
                    "NVIDIA arXiv 2509.25149 Sec. 4.1 (the first and last blocks are the most sensitive)",
                    "all-nvfp4", "paper");
}

const nvfp4_study st_study_s8_all_nvfp4 = {
    .name = "s8-all-nvfp4",
    .wall = "4 h 35 min", /* the sum of its two measured halves, seeds 1-2 and 3-4 (docs/studies.md, "Every block NVFP4"); use --resume */
    .claim = "GPT on English text, s8-regime's size at twice its batch with every block NVFP4, where the sampling "
             "noise falls below the gradient error: the 2D, RHT and SR ablations and the paper's BF16 blocks, on the "
             "loss and on the gradient error (NVIDIA 2509.25149 Sec. 4, App. E)",
    .seeds = 4, /* each (arm, seed) job 21-28 min beside another on 2 cores: 4 paired seeds, as s8-regime */
    .steps = 512,
    .run = st_run_config_study,
    .config = "s8-all-nvfp4", /* its arms: studies/s8-all-nvfp4.json */
    .findings = findings,
    .quick_steps = 6,
};
