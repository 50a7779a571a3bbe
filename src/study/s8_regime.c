/*
 * s8_regime.c - study S8-regime: s8-ablate's component ablations (2D weights,
 * RHT, SR) and its FP8 comparison in the regime where quantization error is
 * not drowned by sampling noise: the GPT at 8 blocks (the paper's first and
 * last blocks in BF16), 16,384 tokens per optimizer step by gradient
 * accumulation, 512 steps = 20.2 tokens per parameter, BF16 training, with
 * the gradient probe every 10th logged step (docs/studies.md, "The regime
 * config"). Its findings are s8-ablate's (st_s8_ablation_findings) on the
 * arms it has. Hours long: run it with --resume. Its arms:
 * studies/s8-regime.json.
 */
#include "study/studies.h"

const nvfp4_study st_study_s8_regime = {
    .name = "s8-regime",
    .wall = "2 h 59 min", /* twice its second half, measured (docs/studies.md, "The regime config"); use --resume */
    .claim = "GPT on English text where quantization error matters (8 blocks, 16k tokens per step, 20 tokens per "
             "parameter): s8-ablate's 2D, RHT and SR ablations and FP8, on the loss and on the gradient error "
             "(NVIDIA 2509.25149 Sec. 4, App. E)",
    .seeds = 4,  /* each (arm, seed) job about 15 min on 2 cores: 4 paired seeds */
    .steps = 512,
    .run = st_run_config_study,
    .config = "s8-regime", /* its arms: studies/s8-regime.json */
    .findings = st_s8_ablation_findings,
    .quick_steps = 6,
};
