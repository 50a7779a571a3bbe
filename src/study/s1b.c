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
#include "study/study_internal.h"

static void s1b_base(nvfp4_train_cfg *c, size_t steps)
{
    nvfp4_train_cfg_init(c);
    c->model.d_in = 64;
    c->model.d_model = 128;
    c->model.d_out = 16;
    c->model.n_blocks = 1;
    c->model.block_kind = NVFP4_BLOCK_PLAIN;
    c->model.act = NVFP4_ACT_SQRELU;
    c->batch = 256;
    c->steps = steps;
    c->lr = 2e-3f;
    c->label_noise = 0.05f;
    c->log_every = 0;
    /* all three GEMMs of every linear in NVFP4 1x16 RN (arm i) */
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) nvfp4_sq_cfg_nvfp4(&c->recipe.q[g][o]);
    c->recipe.first_hp = c->recipe.last_hp = 0;
}
static void a_sr_grad(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_DGRAD][0].rounding = NVFP4_SR;
    c->recipe.q[NVFP4_GEMM_WGRAD][0].rounding = NVFP4_SR;
}
static void a_chmiel(nvfp4_train_cfg *c)
{
    a_sr_grad(c);
    c->recipe.q[NVFP4_GEMM_WGRAD][1].rounding = NVFP4_SR;
}
static void a_chmiel_bwd80(nvfp4_train_cfg *c)
{
    a_chmiel(c);
    c->switch_bwd_step = c->steps * 8 / 10;
}
static void a_chmiel_fwd80(nvfp4_train_cfg *c)
{
    a_chmiel(c);
    c->switch_fwd_step = c->steps * 8 / 10;
}
static const st_arm s1b_arms[] = {
    {"rtn", NULL, 0}, {"sr-grad", a_sr_grad, 0}, {"chmiel", a_chmiel, 0},
    {"chmiel-bwd80", a_chmiel_bwd80, 0}, {"chmiel-fwd80", a_chmiel_fwd80, 0},
};
static nvfp4_status s1b_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return st_run_training(s, o, log, s1b_base, s1b_arms, sizeof s1b_arms / sizeof *s1b_arms, err);
}
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
                      "Chmiel et al. arXiv 2505.19115 Sec. 3 Fig. 3 (at 350M; research 6.0 pilot: not at 20k params)",
                      "rtn", "sr-grad");
}

const nvfp4_study st_study_s1b = {
    .name = "s1b",
    .claim = "MLP teacher-student in NVFP4: RTN vs SR placements and 80% forward/backward switches (Chmiel Sec. 3-5; "
             "NVIDIA 2509.25149 App. D)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 1200,
    .run = s1b_run,
    .findings = s1b_findings,
};
