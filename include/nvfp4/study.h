/*
 * nvfp4/study.h - the error-accumulation laboratory: small models trained in
 * C whose every linear layer runs its Fprop, Dgrad and Wgrad GEMMs (OpenBLAS
 * sgemm) on quantized-then-dequantized operands, each operand configured on
 * its own and quantized along that GEMM's reduction dimension; and the
 * built-in studies (S0, S1, S3, S6) that reproduce published results.
 *
 * User documentation: docs/studies.md. Library: libnvfp4_study
 * (pkg-config nvfp4-study), on top of libnvfp4.
 */
#ifndef NVFP4_STUDY_H
#define NVFP4_STUDY_H

#include <stdio.h>

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

/* ---- one GEMM operand's quantization ------------------------------------ */
typedef enum {
    NVFP4_SQ_FP32 = 0,  /* no quantization (the high-precision path) */
    NVFP4_SQ_BF16 = 1,  /* every element rounded to bf16 (RN) */
    NVFP4_SQ_NVFP4 = 2, /* E2M1 + block scale + (E4M3 scales) fp32 global amax */
    NVFP4_SQ_MXFP4 = 3, /* E2M1 + UE8M0 block scale, no global scale */
    NVFP4_SQ_FP8 = 4,   /* E4M3 with one fp32 scale per tensor from its current amax (TE's
                           Float8CurrentScaling: scale = 448 / amax), RN, saturating */
    NVFP4_SQ_MXFP8 = 5  /* E4M3 + UE8M0 scale per 1x32 block: the library's recipe mxfp8, RN */
} nvfp4_sq_format;

typedef enum {
    NVFP4_SS_E4M3 = 0,        /* TE: e4m3_rn_sat(block_amax * S_enc / 6) (docs/semantics.md, "Recipes") */
    NVFP4_SS_E4M3_UP = 1,     /* the same, rounded up to the next E4M3 value (no SR clip) */
    NVFP4_SS_FP32 = 2,        /* exact fp32 block_amax / 6 (no scale rounding at all) */
    NVFP4_SS_UE8M0_FLOOR = 3, /* OCP MX: 2^(floor(log2 block_amax) - 2); can clip */
    NVFP4_SS_UE8M0_CEIL = 4,  /* NVIDIA App. B.4: block_amax / 6 rounded up to 2^k (cvt.rp) */
    NVFP4_SS_DEFAULT = 5      /* E4M3 for NVFP4, UE8M0_CEIL for MXFP4 */
} nvfp4_sq_scale;

typedef enum {
    NVFP4_SQ_RHT_FIXED = 0,   /* one sign vector for the whole run (TE mask when d = 16) */
    NVFP4_SQ_RHT_PER_STEP = 1,/* signs re-drawn every step and layer (Quartet) */
    NVFP4_SQ_RHT_NOSIGN = 2   /* plain normalized Hadamard */
} nvfp4_sq_rht_signs;

typedef struct {
    nvfp4_sq_format format;
    nvfp4_block block;        /* DEFAULT: 1x16 for NVFP4, 1x32 for MXFP4 */
    nvfp4_sq_scale scale;
    nvfp4_rounding rounding;  /* NVFP4_RN or NVFP4_SR (element rounding) */
    bool prescale34;          /* Tseng: multiply by 3/4 before, 4/3 after (with SR) */
    unsigned rht;             /* 0: off; else Hadamard size d (4..128) along the reduction axis */
    nvfp4_sq_rht_signs rht_signs;
    bool rht_fp32;            /* keep the RHT output in fp32 (default: bf16, as TE) */
} nvfp4_sq_cfg;

/* Counts gathered by a fake-quantization (for zero and clip fractions; the
 * E2M1 formats only: the others leave them at 0). zeros - scale_zeros are
 * the elements flushed inside a block whose scale is nonzero (|x| / scale
 * below E2M1's half of 0.5). */
typedef struct {
    uint64_t n;       /* elements */
    uint64_t zeros;   /* nonzero inputs that became 0 */
    uint64_t clips;   /* elements whose scaled magnitude exceeded the grid maximum */
    uint64_t in_zeros;    /* inputs (after any RHT) that were 0 already */
    uint64_t scale_zeros; /* of zeros: those in a block whose dequantization scale is 0 */
} nvfp4_sq_stats;

/* What keys the random bits of one quantization (SR bits, per-step RHT
 * signs): the same key gives the same bits at any thread count. */
typedef struct {
    uint64_t seed;
    uint64_t step;
    uint32_t layer, gemm, operand;
} nvfp4_sq_key;

void nvfp4_sq_cfg_fp32(nvfp4_sq_cfg *c);
/* NVFP4 1x16, E4M3 scales, RN, no RHT. */
void nvfp4_sq_cfg_nvfp4(nvfp4_sq_cfg *c);
/* MXFP4 1x32, UE8M0 ceil scales, RN, no RHT. */
void nvfp4_sq_cfg_mxfp4(nvfp4_sq_cfg *c);
/* Short description such as "nvfp4/1x16/e4m3/sr/rht16". */
void nvfp4_sq_cfg_describe(const nvfp4_sq_cfg *c, char *buf, size_t n);
/* Parses the form printed by nvfp4_sq_cfg_describe ("fp32", "bf16",
 * "nvfp4/16x16", "mxfp4/sr/rht32/ue8m0-floor", ...; order free). */
bool nvfp4_sq_cfg_parse(const char *s, nvfp4_sq_cfg *c);

/* Quantize-then-dequantize x (row-major rows x k) along its rows (blocks of
 * consecutive elements of a row; 16x16 tiles span 16 rows). A short last
 * block (k not a multiple of the block) is its own block. With c->rht the
 * rows are first transformed in groups of d (k % d == 0 required) and the
 * output stays in the Hadamard domain. out may not alias x. stats may be
 * NULL. The NVFP4 E4M3 scale rule is TE's (docs/semantics.md, "Recipes"); SR bits follow
 * the Philox contract of docs/semantics.md with a seed derived from the key. */
nvfp4_status nvfp4_sq_fakequant(const nvfp4_sq_cfg *c, const float *x, size_t rows, size_t k,
                                const nvfp4_sq_key *key, float *out, nvfp4_sq_stats *stats,
                                nvfp4_error *err);

/* The block-diagonal randomized Hadamard transform used by fakequant:
 * rows of x (length k, k % d == 0) in groups of d, in place, fp32. */
nvfp4_status nvfp4_sq_rht_rows(float *x, size_t rows, size_t k, unsigned d, nvfp4_sq_rht_signs signs,
                               const nvfp4_sq_key *key, nvfp4_error *err);

/* ---- models ------------------------------------------------------------ */
typedef enum { NVFP4_ACT_RELU = 0, NVFP4_ACT_SQRELU = 1, NVFP4_ACT_GELU = 2, NVFP4_ACT_NONE = 3 } nvfp4_act;
typedef enum { NVFP4_BLOCK_PLAIN = 0, NVFP4_BLOCK_RESIDUAL = 1 } nvfp4_block_kind;
typedef enum { NVFP4_LOSS_MSE = 0, NVFP4_LOSS_CE = 1 } nvfp4_loss;
typedef enum { NVFP4_OPT_ADAM = 0, NVFP4_OPT_SGD = 1 } nvfp4_optimizer;
typedef enum { NVFP4_SCHED_COSINE = 0, NVFP4_SCHED_WSD = 1, NVFP4_SCHED_CONSTANT = 2 } nvfp4_schedule;
typedef enum { NVFP4_ARCH_MLP = 0, NVFP4_ARCH_GPT = 1 } nvfp4_arch;
typedef enum { NVFP4_NORM_RMS = 0, NVFP4_NORM_LAYER = 1 } nvfp4_norm;
/* LM training data: the order-2 Markov source (known entropy rate) or the
 * English text of Debian's `fortunes` package as bytes (V = 256). */
typedef enum { NVFP4_DATA_MARKOV = 0, NVFP4_DATA_FORTUNES = 1 } nvfp4_data;

enum { NVFP4_GEMM_FPROP = 0, NVFP4_GEMM_DGRAD = 1, NVFP4_GEMM_WGRAD = 2 };

/* Linears in order: input projection, then per block (PLAIN: one d x d
 * linear + activation; RESIDUAL: RMSNorm, up d->h, activation, down h->d,
 * residual add), then the head (after a final RMSNorm for RESIDUAL). With
 * vocab > 0 the input is ctx tokens, each embedded to emb_dim (FP32) and
 * concatenated (d_in = ctx * emb_dim). */
typedef struct {
    size_t d_in, d_model, d_hidden, d_out, n_blocks;
    nvfp4_block_kind block_kind;
    nvfp4_act act;
    nvfp4_loss loss;
    size_t vocab, ctx, emb_dim;
    /* arch GPT (src/study/gpt.c): token + position embeddings, n_blocks
     * pre-norm blocks (causal multi-head attention with n_heads heads, then
     * an MLP d_model -> d_hidden -> d_model with GELU), final norm, head
     * (tied to the token embedding unless untied_head); seq_len tokens per
     * sequence, d_out = vocab; d_in, ctx, emb_dim, block_kind, act unused.
     * Its linears: per block QKV, attention output, FC1, FC2, then the head. */
    nvfp4_arch arch;
    size_t n_heads, seq_len;
    nvfp4_norm norm;
    bool untied_head;
} nvfp4_model_cfg;

/* The fields of an nvfp4_sq_cfg a per-layer override sets (bit masks). */
enum {
    NVFP4_KNOB_FORMAT = 1u << 0,
    NVFP4_KNOB_BLOCK = 1u << 1,
    NVFP4_KNOB_SCALE = 1u << 2,
    NVFP4_KNOB_ROUNDING = 1u << 3,
    NVFP4_KNOB_PRESCALE34 = 1u << 4,
    NVFP4_KNOB_RHT = 1u << 5,
    NVFP4_KNOB_RHT_SIGNS = 1u << 6,
    NVFP4_KNOB_RHT_FP32 = 1u << 7,
    NVFP4_KNOB_ALL = 0xffu
};

#define NVFP4_RECIPE_MAX_OVERRIDES 16

/* A per-layer override: the linears whose name (nvfp4_model_layer_name)
 * matches the fnmatch(3) glob `match` take the fields knobs[g][o] names
 * from q[g][o], and stay in high precision when hp is 1 (quantized when 0,
 * unchanged when -1). Overrides apply in order, after first_hp / last_hp. */
typedef struct {
    char match[40];
    int hp;
    unsigned knobs[3][2];
    nvfp4_sq_cfg q[3][2];
} nvfp4_layer_override;

/* Per-GEMM quantization recipe for the quantized linears: q[gemm][0] is the
 * A operand (Fprop: X; Dgrad: dY; Wgrad: dY^T), q[gemm][1] the B operand
 * (Fprop: W; Dgrad: W^T; Wgrad: X^T). first_hp / last_hp linears stay FP32;
 * then the overrides change single layers by name. */
typedef struct {
    nvfp4_sq_cfg q[3][2];
    size_t first_hp, last_hp;
    /* what the high-precision linears (first_hp, last_hp, the GPT's head,
     * passes after a switch step) run in: FP32 (the default) or BF16 as the
     * paper keeps them; the FP32 shadow is always FP32 */
    nvfp4_sq_format hp;
    /* GPT only: the quantized model trains in BF16 as the paper's runs do
     * (docs/studies.md, "BF16 training"): every linear's inputs X, W, dY are
     * rounded to BF16 (RN) before they are quantized or multiplied, its
     * outputs Y and dX are rounded to BF16, and so are the attention's
     * probabilities P and score gradients dS before their GEMMs; dW, the
     * norms, GELU, the residual stream and the loss stay FP32. Never the
     * shadow. */
    bool bf16_training;
    size_t n_overrides;
    nvfp4_layer_override overrides[NVFP4_RECIPE_MAX_OVERRIDES];
} nvfp4_recipe_cfg;


/* The NVFP4 paper's recipe (arXiv 2509.25149 Sec. 4): 16x16 weights, 1x16
 * activations and gradients, SR on gradients (Dgrad and Wgrad), RHT-16 on
 * both Wgrad inputs, first 1 and last 1 linears in high precision. */
void nvfp4_recipe_cfg_paper(nvfp4_recipe_cfg *r);
void nvfp4_recipe_cfg_fp32(nvfp4_recipe_cfg *r);
/* The same layout with MXFP4 (1x32, UE8M0 ceil; RHT d = 32 on Wgrad). */
void nvfp4_recipe_cfg_mxfp4(nvfp4_recipe_cfg *r);

typedef struct {
    nvfp4_model_cfg model;
    nvfp4_recipe_cfg recipe;
    nvfp4_optimizer opt;
    float lr, lr_min_frac, warmup_frac, decay_frac; /* decay_frac: WSD's decay tail */
    float beta1, beta2, adam_eps, weight_decay, momentum;
    nvfp4_schedule sched;
    size_t steps, batch, log_every;
    /* GPT: the final metric's held-out set. The last heldout_evals logged
     * steps each evaluate both models on their own 1/heldout_evals share of
     * heldout_tokens held-out tokens (evenly spaced windows, interleaved), so
     * their mean covers all of them (docs/studies.md, "Metric definitions"); 0: none */
    size_t heldout_tokens, heldout_evals;
    uint64_t seed;            /* init, data and every random draw */
    /* events: at this step switch to FP32 (SIZE_MAX: never) */
    size_t switch_fwd_step, switch_bwd_step;
    float init_scale;         /* multiplies the default 1/sqrt(fan_in) init */
    float label_noise;        /* regression teacher label noise std */
    float diverge_factor;     /* loss > factor * initial loss (or non-finite): diverged */
    float grad_clip;          /* > 0: scale the gradient to this global L2 norm at most */
    nvfp4_data data;          /* GPT only: its sequences */
    /* GPT only: micro-batches of `batch` sequences per optimizer step (0 or
     * 1: one). Each is quantized and back-propagated on its own; their
     * gradients are summed in micro-batch order and divided by accum_steps
     * (docs/studies.md, "Gradient accumulation"). */
    size_t accum_steps;
    /* GPT only: the gradient probe (docs/studies.md, "Gradient probe") at
     * every probe_every-th logged step and at the last (0: off): sampling
     * noise ||g_A - g_B|| / ||g_A|| of two independent batches against the
     * quantized gradient's error against the FP32 one, at the quantized
     * model's weights, over probe_draws draws of the SR bits (0: 2). */
    size_t probe_every, probe_draws;
    /* GPT only: the probe's batches are probe_scale times the step's (0 or
     * 1: the step's own): how the noise and the error scale with the batch
     * at the same weights. The run itself is unchanged. */
    size_t probe_scale;
} nvfp4_train_cfg;

void nvfp4_train_cfg_init(nvfp4_train_cfg *t);
/* The default GPT (docs/studies.md, "The GPT"): byte-level fortunes text,
 * V = 256, 64 tokens per sequence, d_model 128, 4 heads, 2 blocks, d_ff 512,
 * tied head, LayerNorm, batch 8 sequences, AdamW (wd 0.1), warmup 2% +
 * cosine, clip 1.0; recipe: the paper's operand configs on every block
 * (first_hp = last_hp = 0: blocks), the head in high precision. */
void nvfp4_train_cfg_gpt(nvfp4_train_cfg *t);

/* The name of linear l of a model (the names per-layer overrides match):
 * MLP / tiny LM "input", "block<i>.fc" (plain blocks) or "block<i>.up",
 * "block<i>.down" (residual blocks), "head"; GPT "block<i>.attn.qkv",
 * "block<i>.attn.proj", "block<i>.mlp.fc1", "block<i>.mlp.fc2", "head".
 * false when l is past the last linear. */
bool nvfp4_model_layer_name(const nvfp4_model_cfg *m, size_t l, char *buf, size_t n);
size_t nvfp4_model_n_linears(const nvfp4_model_cfg *m);
/* The operand configs of linear l (quantized model, not the shadow) before
 * any switch step: the recipe, first_hp / last_hp (and the GPT's head), then
 * the overrides; *hp tells whether the layer runs in high precision. */
void nvfp4_recipe_layer_cfg(const nvfp4_train_cfg *t, size_t l, nvfp4_sq_cfg q[3][2], bool *hp);

/* ---- a training run -------------------------------------------------------- */
typedef struct nvfp4_run nvfp4_run;

/* Per logged step: losses of the quantized run and of its FP32 shadow (same
 * init, same data), and per-linear diagnostics. */
typedef struct {
    size_t step;
    double lr, loss, ref_loss, eval_loss, ref_eval_loss, drift;
    double heldout_loss, ref_heldout_loss; /* NaN except on the held-out evaluations */
    /* the gradient probe (NaN except on probed steps): ||g_A - g_B|| / ||g_A||
     * and sqrt(mean over draws ||g_q - g_A||^2) / ||g_A||, g_A and g_B the
     * FP32 gradients of the step's batch and of an independent one */
    double grad_noise, grad_qerr;
} nvfp4_log_row;

typedef struct {
    double sqnr_db[3];        /* Fprop Y, Dgrad dX, Wgrad dW vs the unquantized GEMM (same inputs) */
    double wgrad_cos, wgrad_align, gnr; /* gnr = ||g|| / ||g_q - g|| */
    double zero_frac[3][2], clip_frac[3][2];
    /* Dgrad dX against the unquantized GEMM on the same inputs: cosine,
     * alignment <q, g>/<g, g>, relative error ||q - g|| / ||g|| (NaN: no dX) */
    double dgrad_cos, dgrad_align, dgrad_rel_err;
    /* the gradient probe, this linear's weight gradient (NaN except on probed
     * steps): relative error (RMS over draws), mean cosine, debiased relative
     * bias and relative std of one draw against the FP32 gradient (gradprobe) */
    double probe_rel_err, probe_cos, probe_rel_bias, probe_rel_std;
    /* per GEMM operand, fractions of its elements (docs/studies.md): zero
     * already at the quantizer's input, and flushed to 0 by a block scale of
     * 0 (a part of zero_frac, which counts every nonzero input flushed) */
    double zero_in_frac[3][2], zero_scale_frac[3][2];
    /* across logged steps (NaN where not measured): the fraction of the
     * quantized Fprop weights that reversed direction within the last 8
     * logged steps, and the input channels in the top 5% by amax at every
     * logged step so far */
    double osc_frac, hot_persist;
} nvfp4_layer_diag;

/* Creates a run (model, FP32 shadow, data task) from a config. */
nvfp4_status nvfp4_run_create(const nvfp4_train_cfg *cfg, nvfp4_run **out, nvfp4_error *err);
void nvfp4_run_free(nvfp4_run *r);
/* Advances to step `until` (cfg->steps at most). Stops early on divergence. */
nvfp4_status nvfp4_run_advance(nvfp4_run *r, size_t until, nvfp4_error *err);
size_t nvfp4_run_step(const nvfp4_run *r);
bool nvfp4_run_diverged(const nvfp4_run *r, size_t *at_step);
size_t nvfp4_run_n_linears(const nvfp4_run *r);
size_t nvfp4_run_n_logs(const nvfp4_run *r);
const nvfp4_log_row *nvfp4_run_log(const nvfp4_run *r, size_t i);
/* diagnostics of linear l at log row i */
const nvfp4_layer_diag *nvfp4_run_diag(const nvfp4_run *r, size_t i, size_t l);
/* Entropy rate (nats) of the LM task's Markov source, or 0 for regression. */
double nvfp4_run_entropy_rate(const nvfp4_run *r);
/* Seconds spent so far in the quantized model's steps and in the FP32
 * shadow's (forward, backward, update; evaluation excluded). */
void nvfp4_run_timing(const nvfp4_run *r, double *quantized_s, double *fp32_s);
/* Mutable config (change a knob before nvfp4_run_advance: a fork). */
nvfp4_train_cfg *nvfp4_run_cfg(nvfp4_run *r);
/* Deep copy (checkpoint in memory) and file checkpoint of the whole state. */
nvfp4_status nvfp4_run_clone(const nvfp4_run *r, nvfp4_run **out, nvfp4_error *err);
nvfp4_status nvfp4_run_save(const nvfp4_run *r, const char *path, nvfp4_error *err);
nvfp4_status nvfp4_run_load(const char *path, nvfp4_run **out, nvfp4_error *err);
/* All parameters of the quantized model, concatenated (tests, digests). */
size_t nvfp4_run_param_count(const nvfp4_run *r);
void nvfp4_run_params(const nvfp4_run *r, float *out);
/* OpenBLAS threads used by the studies (pinned: docs/studies.md). */
void nvfp4_study_set_threads(int threads);

/* ---- layer kernels, exposed for gradient checks ---------------------------- */
void nvfp4_act_forward(nvfp4_act a, const float *x, float *y, size_t n);
/* dx = dy * act'(x) */
void nvfp4_act_backward(nvfp4_act a, const float *x, const float *dy, float *dx, size_t n);
void nvfp4_rmsnorm_forward(const float *x, const float *g, size_t rows, size_t d, float *y, float *rstd);
void nvfp4_rmsnorm_backward(const float *x, const float *g, const float *rstd, const float *dy, size_t rows,
                            size_t d, float *dx, float *dg /* accumulated */);
/* loss (mean over rows) and dy = dL/dy */
double nvfp4_mse_loss(const float *y, const float *t, size_t rows, size_t d, float *dy);
double nvfp4_ce_loss(const float *logits, const uint32_t *labels, size_t rows, size_t v, float *dy);
/* One quantized linear: Y = Q(X) Q(W)^T; dX = Q(dY) Q(W^T)^T; dW = Q(dY^T) Q(X^T)^T. */
nvfp4_status nvfp4_linear_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w,
                                  size_t t, size_t in, size_t out, const nvfp4_sq_key *key, float *y,
                                  nvfp4_error *err);
nvfp4_status nvfp4_linear_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy,
                                   size_t t, size_t in, size_t out, const nvfp4_sq_key *key, float *dx,
                                   float *dw, nvfp4_error *err);
/* Learning rate at a step under the config's schedule. */
double nvfp4_lr_at(const nvfp4_train_cfg *c, size_t step);

/* ---- S0 arithmetic ----------------------------------------------------------- */
typedef enum { NVFP4_LP_FP16 = 0, NVFP4_LP_BF16 = 1, NVFP4_LP_E4M3 = 2, NVFP4_LP_E5M2 = 3 } nvfp4_lp_format;
const char *nvfp4_lp_name(nvfp4_lp_format f);
/* Round x to the format: RN (sr = false) or SR with the random word r. */
float nvfp4_lp_round(nvfp4_lp_format f, float x, bool sr, uint32_t r);
/* Recursive harmonic sum s <- fl(s + fl(1/n)) for n = 1..terms. With RN,
 * *frozen_at receives the first n whose addition left s unchanged (0 if
 * none). SR draws from Philox keyed by `seed`. */
float nvfp4_lp_harmonic(nvfp4_lp_format f, bool sr, uint64_t seed, size_t terms, size_t *frozen_at);
/* x0 + n additions of delta, each rounded. */
float nvfp4_lp_repeat_add(nvfp4_lp_format f, bool sr, uint64_t seed, float x0, float delta, size_t n);

/* ---- studies ------------------------------------------------------------------ */
/* A run spread over `size` processes (MPI ranks): rank r runs the selected
 * jobs k with k % size == r; rank 0 gathers every job's output and alone
 * writes the files, so the bytes are those of one process. move_to_root
 * carries one job's output from rank `from` to rank 0: on `from` it sends
 * (*buf, *len); on rank 0 it receives into *buf (malloc'd) and *len. Every
 * rank calls it for the same jobs in the same order. */
typedef struct {
    int rank, size;
    bool (*move_to_root)(void *ctx, int from, char **buf, size_t *len);
    void *ctx;
    /* collective, called by every rank before its jobs start: true when
     * every rank passed ok = true, so a rank that cannot start (memory, the
     * output folder) stops them all instead of leaving rank 0 waiting in
     * move_to_root (NULL: not checked) */
    bool (*all_ok)(void *ctx, bool ok);
} nvfp4_study_dist;

typedef struct {
    size_t seeds, steps;      /* 0: the study's default */
    size_t seed_first;        /* the seeds run are seed_first + 1 .. seed_first + seeds (a later batch
                                 of nvfp4_study_run_sequential; 0: 1 .. seeds) */
    size_t shard_i, shard_n;  /* run the jobs j with j % shard_n == shard_i */
    int threads;
    bool quiet;
    const char *out_dir;
    bool quick;               /* the study's CI-sized preset: its quick model (if any), its
                                 quick step count and 1 seed unless steps / seeds are given */
    /* --resume: skip the jobs a killed run finished and continue the others
     * from their last checkpoint (out_dir/.resume/); the same bytes */
    bool resume;
    size_t checkpoint_every;  /* steps between a job's checkpoints (0: every 300 s of the job) */
    const nvfp4_study_dist *dist; /* a distributed run (MPI), or NULL */
    /* every job trains its own FP32 shadow beside its quantized model; by
     * default the jobs of one process that share a seed and all but the
     * recipe read one shadow trained once (docs/studies.md, "The
     * baseline"). The same bytes either way. */
    bool own_shadows;
} nvfp4_study_opts;

typedef struct nvfp4_study nvfp4_study;
size_t nvfp4_study_count(void);
const nvfp4_study *nvfp4_study_at(size_t i);
const nvfp4_study *nvfp4_study_find(const char *name);
const char *nvfp4_study_name(const nvfp4_study *s);
const char *nvfp4_study_claim(const nvfp4_study *s);
/* The default run's measured wall time on 2 cores ("11 min 33 s"), or NULL for a study loaded from a file. */
const char *nvfp4_study_wall(const nvfp4_study *s);
/* Runs the study, writing CSV, summary.json and (if gnuplot exists) PNGs
 * into opts->out_dir. Progress goes to `log` (may be NULL). */
nvfp4_status nvfp4_study_run(const nvfp4_study *s, const nvfp4_study_opts *opts, FILE *log, nvfp4_error *err);
/* A sequential run (`study run --target-ci W`): seeds in batches until
 * every statistical finding's 95% interval is narrower than target_ci (in
 * the statistic's own unit) or the seeds reach max_seeds. The first batch is
 * opts->seeds (the study's default, 1 with --quick; at least 2), the later
 * ones seed_batch (0: the first batch's size). Each batch is a run folder
 * opts->out_dir/batches/seeds-A-B; the output folder holds them merged, and
 * its verdicts divide the 5% level over the looks the plan allows
 * (docs/studies.md "Sequential runs"). Not with MPI, shards or resume. */
typedef struct {
    double target_ci;
    size_t max_seeds, seed_batch;
} nvfp4_study_seq;
nvfp4_status nvfp4_study_run_sequential(const nvfp4_study *s, const nvfp4_study_opts *opts, const nvfp4_study_seq *q,
                                        FILE *log, nvfp4_error *err);
/* A study defined by a JSON config file (docs/studies.md, "Study configs"):
 * NVFP4_EINVAL with the file, the JSON path and the problem when a field is
 * wrong. Free it with nvfp4_study_free. */
nvfp4_status nvfp4_study_load_config(const char *path, nvfp4_study **out, nvfp4_error *err);
void nvfp4_study_free(nvfp4_study *s);
/* The shipped config a built-in study takes its arms from (the text of
 * studies/NAME.json), or NULL for a study written in C alone. */
const char *nvfp4_study_config_text(const nvfp4_study *s);
/* Redraws the PNGs of a study output folder from its CSV files. Sets
 * *skipped when gnuplot is absent. */
nvfp4_status nvfp4_study_plot(const char *dir, bool *skipped, nvfp4_error *err);
/* Merges shard output folders into out_dir (concatenated CSVs, recomputed
 * summary). */
nvfp4_status nvfp4_study_merge(const char *const *dirs, size_t n, const char *out_dir, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_STUDY_H */
