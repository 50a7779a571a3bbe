/*
 * layercfg.c - which operand configs each linear of a model trains with: the
 * recipe's per-GEMM configs, the high-precision first / last layers (the
 * GPT's head always), then the per-layer overrides matched on the layer's
 * name (docs/studies.md, "Study configs"); and, on top of that, the one rule
 * both models (model.c, gpt.c) apply: the FP32 shadow and the switch steps.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "study/layercfg.h"

size_t nvfp4_model_n_linears(const nvfp4_model_cfg *m)
{
    if (m->arch == NVFP4_ARCH_GPT) return m->n_blocks * GPT_LIN_PER_BLOCK + 1;
    return 2 + m->n_blocks * (m->block_kind == NVFP4_BLOCK_PLAIN ? 1 : 2);
}

bool nvfp4_model_layer_name(const nvfp4_model_cfg *m, size_t l, char *buf, size_t n)
{
    static const char *const gpt_lin[GPT_LIN_PER_BLOCK] = {"attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2"};
    size_t nlin = nvfp4_model_n_linears(m);
    if (l >= nlin) return false;
    if (l + 1 == nlin) snprintf(buf, n, "head");
    else if (m->arch == NVFP4_ARCH_GPT)
        snprintf(buf, n, "block%zu.%s", l / GPT_LIN_PER_BLOCK, gpt_lin[l % GPT_LIN_PER_BLOCK]);
    else if (l == 0) snprintf(buf, n, "input");
    else if (m->block_kind == NVFP4_BLOCK_PLAIN) snprintf(buf, n, "block%zu.fc", l - 1);
    else snprintf(buf, n, "block%zu.%s", (l - 1) / 2, (l - 1) % 2 ? "down" : "up");
    return true;
}

/* Copies the fields `knobs` names from src into dst. */
static void apply_knobs(nvfp4_sq_cfg *dst, const nvfp4_sq_cfg *src, unsigned knobs)
{
    if (knobs & NVFP4_KNOB_FORMAT) dst->format = src->format;
    if (knobs & NVFP4_KNOB_BLOCK) dst->block = src->block;
    if (knobs & NVFP4_KNOB_SCALE) dst->scale = src->scale;
    if (knobs & NVFP4_KNOB_ROUNDING) dst->rounding = src->rounding;
    if (knobs & NVFP4_KNOB_PRESCALE34) dst->prescale34 = src->prescale34;
    if (knobs & NVFP4_KNOB_RHT) dst->rht = src->rht;
    if (knobs & NVFP4_KNOB_RHT_SIGNS) dst->rht_signs = src->rht_signs;
    if (knobs & NVFP4_KNOB_RHT_FP32) dst->rht_fp32 = src->rht_fp32;
}

void nvfp4_recipe_layer_cfg(const nvfp4_train_cfg *t, size_t l, nvfp4_sq_cfg q[3][2], bool *hp)
{
    const nvfp4_recipe_cfg *r = &t->recipe;
    const nvfp4_model_cfg *m = &t->model;
    size_t nlin = nvfp4_model_n_linears(m);
    if (m->arch == NVFP4_ARCH_GPT) {
        /* first_hp / last_hp count blocks; the head stays high precision */
        size_t blk = l / GPT_LIN_PER_BLOCK, nb = m->n_blocks;
        *hp = blk >= nb || blk < r->first_hp || blk + r->last_hp >= nb;
    } else {
        *hp = l < r->first_hp || l + r->last_hp >= nlin;
    }
    memcpy(q, r->q, sizeof r->q);
    if (!r->n_overrides) return;
    char name[64];
    if (!nvfp4_model_layer_name(m, l, name, sizeof name)) return;
    for (size_t i = 0; i < r->n_overrides && i < NVFP4_RECIPE_MAX_OVERRIDES; i++) {
        const nvfp4_layer_override *o = &r->overrides[i];
        if (fnmatch(o->match, name, 0) != 0) continue;
        if (o->hp >= 0) *hp = o->hp != 0;
        for (int g = 0; g < 3; g++)
            for (int k = 0; k < 2; k++) apply_knobs(&q[g][k], &o->q[g][k], o->knobs[g][k]);
    }
}

/* The operand config of a high-precision linear under recipe r (r->hp). */
static void sq_cfg_hp(const nvfp4_recipe_cfg *r, nvfp4_sq_cfg *c)
{
    nvfp4_sq_cfg_fp32(c);
    c->format = r->hp == NVFP4_SQ_BF16 ? NVFP4_SQ_BF16 : NVFP4_SQ_FP32;
}

void st_lin_cfg(const nvfp4_train_cfg *tc, bool shadow, size_t l, size_t step, nvfp4_sq_cfg q[3][2])
{
    bool hp;
    nvfp4_recipe_layer_cfg(tc, l, q, &hp);
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) {
            bool sw = (g == NVFP4_GEMM_FPROP) ? step >= tc->switch_fwd_step : step >= tc->switch_bwd_step;
            /* the shadow is the FP32 baseline whatever the recipe's high-precision format */
            if (shadow) nvfp4_sq_cfg_fp32(&q[g][o]);
            else if (hp || sw) sq_cfg_hp(&tc->recipe, &q[g][o]);
        }
}

/* NVIDIA arXiv 2509.25149 Sec. 4.1: of 62 blocks the first 2 and the last 8
 * stay BF16. Scaled to L blocks: first = max(1, round(2L/62)), last =
 * max(1, round(8L/62)) (no ties: 2L/62 and 8L/62 are never k + 1/2 for an
 * integer L, so the rounding direction never matters); then at least half
 * of the blocks stay quantized: when first + last > floor(L/2), last =
 * min(last, floor(L/2)) and first = floor(L/2) - last (the paper keeps four
 * times as many blocks at the end as at the start, so the end keeps its
 * block). L = 1: 0, 0; 2, 3: 0, 1; 4..11: 1, 1; 12: 1, 2; 62: 2, 8. */
void st_paper_bf16_blocks(size_t n_blocks, size_t *first, size_t *last)
{
    size_t f = (4 * n_blocks + 62) / 124, l = (16 * n_blocks + 62) / 124, cap = n_blocks / 2;
    f = f ? f : 1;
    l = l ? l : 1;
    if (f + l > cap) {
        l = l < cap ? l : cap;
        f = cap - l;
    }
    *first = f;
    *last = l;
}
