/* layercfg.h - which operand configs each linear of a model trains with
 * (layercfg.c), and the order of the GPT's linears it names. Not public. */
#ifndef NVFP4_STUDY_LAYERCFG_H
#define NVFP4_STUDY_LAYERCFG_H

#include "nvfp4/study.h"

/* The GPT's linears per transformer block (tblock), in this order inside
 * tblock b (index 4*b + j); the head is linear 4*n_blocks. */
enum { GPT_LIN_QKV = 0, GPT_LIN_PROJ = 1, GPT_LIN_FC1 = 2, GPT_LIN_FC2 = 3, GPT_LIN_PER_BLOCK = 4 };

/* The config each GEMM operand of linear l (nvfp4_model_layer_name's order)
 * runs with at training step `step`, in every model (MLP, tiny LM, GPT):
 * FP32 for the FP32 shadow; otherwise nvfp4_recipe_layer_cfg's, with the
 * high-precision config (r->hp) for high-precision layers and for the passes
 * past a switch step (switch_fwd_step: Fprop; switch_bwd_step: Dgrad, Wgrad). */
void st_lin_cfg(const nvfp4_train_cfg *tc, bool shadow, size_t l, size_t step, nvfp4_sq_cfg q[3][2]);
/* The GPT tblocks the NVFP4 paper's rule keeps in BF16 for a model of
 * n_blocks tblocks (its first 2 and last 8 of 62, scaled; docs/studies.md,
 * "BF16 blocks"): *first leading and *last trailing tblocks. */
void st_paper_bf16_blocks(size_t n_blocks, size_t *first, size_t *last);

#endif
