/*
 * gpt.c - the lab's decoder-only transformer, forward and backward by hand:
 * token + position embeddings, n pre-norm blocks x += Attn(Norm(x)),
 * x += FC2(GELU(FC1(Norm(x)))), a final norm and the head (tied to the token
 * embedding or its own matrix). No biases in the linears (as LLaMA-style
 * models; the norms of LayerNorm keep theirs).
 *
 * Every linear (QKV, attention output, FC1, FC2, head) is the lab's quantized
 * linear (layers.c): its Fprop, Dgrad and Wgrad GEMMs take the per-operand
 * configs of the recipe. The attention matmuls QK^T and PV, the softmax, the
 * norms, GELU and the loss stay in FP32, as NVIDIA's recipe keeps them in
 * high precision (arXiv 2509.25149 Sec. 4.1). The attention GEMMs run through
 * OpenBLAS per (sequence, head), the full S x S score matrix with the upper
 * triangle masked.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "study/fakequant.h"
#include "study/gpt.h"
#include "study/layers.h"
#include "study/scratch.h"
#include "study/rng.h"

#define GPT_LN_EPS 1e-5f
/* multiply-adds below which the heads run on one thread: a parallel region
 * costs more than tiny heads (and idle OpenMP threads spin) */
#define ATTN_PAR_MIN ((size_t)1 << 20)

const char *gpt_cfg_check(const nvfp4_model_cfg *mc)
{
    if (!mc->vocab || !mc->seq_len || !mc->d_model || !mc->n_heads || !mc->d_hidden || !mc->n_blocks)
        return "GPT config: vocab, seq_len, d_model, n_heads, d_hidden and n_blocks must be > 0";
    if (mc->d_model % mc->n_heads) return "GPT config: n_heads must divide d_model";
    if (mc->d_out != mc->vocab) return "GPT config: d_out must equal vocab";
    if (mc->n_blocks * GPT_LIN_PER_BLOCK + 1 > 64) return "GPT config: at most 15 blocks";
    return NULL;
}

static float *zalloc(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

static float **per_block(size_t L, size_t n, bool *ok)
{
    float **v = calloc(L, sizeof *v);
    if (!v) {
        *ok = false;
        return NULL;
    }
    for (size_t l = 0; l < L; l++) {
        v[l] = zalloc(n);
        *ok = *ok && v[l];
    }
    return v;
}

static void free_block(float **v, size_t L)
{
    if (!v) return;
    for (size_t l = 0; l < L; l++) free(v[l]);
    free(v);
}

static size_t norm_layout(const gpt *g, gpt_norm_off *n, size_t off)
{
    n->g = off;
    off += g->D;
    n->b = off;
    if (g->mc.norm == NVFP4_NORM_LAYER) off += g->D;
    return off;
}

static void gpt_layout(gpt *g)
{
    size_t off = 0, D = g->D;
    g->wte = off;
    off += g->V * D;
    g->wpe = off;
    off += g->S * D;
    for (size_t l = 0; l < g->L; l++) {
        gpt_tblock_off *b = &g->tblk[l];
        off = norm_layout(g, &b->n1, off);
        b->wqkv = off;
        off += 3 * D * D;
        b->wproj = off;
        off += D * D;
        off = norm_layout(g, &b->n2, off);
        b->wfc1 = off;
        off += g->F * D;
        b->wfc2 = off;
        off += D * g->F;
    }
    off = norm_layout(g, &g->nf, off);
    if (g->mc.untied_head) {
        g->head = off;
        off += g->V * D;
    } else {
        g->head = g->wte;
    }
    g->np = off;
    g->nlin = g->L * GPT_LIN_PER_BLOCK + 1;
}

bool gpt_alloc(gpt *g, const nvfp4_model_cfg *mc, size_t B)
{
    memset(g, 0, sizeof *g);
    if (gpt_cfg_check(mc) || !B) return false;
    g->mc = *mc;
    g->V = mc->vocab;
    g->S = mc->seq_len;
    g->D = mc->d_model;
    g->H = mc->n_heads;
    g->F = mc->d_hidden;
    g->L = mc->n_blocks;
    g->B = B;
    g->T = B * g->S;
    g->tblk = calloc(g->L, sizeof *g->tblk);
    if (!g->tblk) return false;
    gpt_layout(g);
    size_t T = g->T, D = g->D, L = g->L, F = g->F, att = B * g->H * g->S * g->S;
    bool ok = true;
    g->x_in = per_block(L, T * D, &ok);
    g->n1 = per_block(L, T * D, &ok);
    g->mu1 = per_block(L, T, &ok);
    g->rs1 = per_block(L, T, &ok);
    g->qkv = per_block(L, T * 3 * D, &ok);
    g->P = per_block(L, att, &ok);
    g->att = per_block(L, T * D, &ok);
    g->x_mid = per_block(L, T * D, &ok);
    g->n2 = per_block(L, T * D, &ok);
    g->mu2 = per_block(L, T, &ok);
    g->rs2 = per_block(L, T, &ok);
    g->u = per_block(L, T * F, &ok);
    g->a = per_block(L, T * F, &ok);
    size_t wide = F > g->V ? F : g->V;
    if (3 * D > wide) wide = 3 * D;
    float **one[] = {&g->x_out, &g->nfo, &g->dx, &g->dn, &g->datt};
    for (size_t i = 0; i < sizeof one / sizeof *one; i++) ok = ok && (*one[i] = zalloc(T * D));
    ok = ok && (g->muf = zalloc(T)) && (g->rsf = zalloc(T)) && (g->logits = zalloc(T * g->V));
    ok = ok && (g->dqkv = zalloc(T * 3 * D)) && (g->du = zalloc(T * F)) && (g->da = zalloc(T * F));
    ok = ok && (g->dP = zalloc(att)) && (g->dwtmp = zalloc(g->V * D));
    if (!ok) gpt_free(g);
    return ok;
}

void gpt_free(gpt *g)
{
    size_t L = g->L;
    float **const *blocks[] = {&g->x_in, &g->n1, &g->mu1, &g->rs1, &g->qkv, &g->P, &g->att,
                               &g->x_mid, &g->n2, &g->mu2, &g->rs2, &g->u, &g->a};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) free_block(*blocks[i], L);
    float *const singles[] = {g->x_out, g->nfo, g->muf, g->rsf, g->logits, g->dx, g->dn,
                              g->dqkv, g->datt, g->du, g->da, g->dP, g->dwtmp};
    for (size_t i = 0; i < sizeof singles / sizeof *singles; i++) free(singles[i]);
    free(g->tblk);
    memset(g, 0, sizeof *g);
}

static void normal_fill(float *w, size_t n, double sd, uint64_t seed, uint64_t stream)
{
    for (size_t i = 0; i < n; i++) w[i] = (float)(sd * st_normal(seed, stream, i));
}

static void norm_init(const gpt *g, float *p, const gpt_norm_off *n)
{
    for (size_t i = 0; i < g->D; i++) p[n->g + i] = 1.0f;
    if (g->mc.norm == NVFP4_NORM_LAYER) memset(p + n->b, 0, g->D * sizeof *p);
}

void gpt_init_params(const gpt *g, float *p, uint64_t seed, uint64_t stream0, float scale)
{
    double sd = 0.02 * scale, sd_res = sd / sqrt(2.0 * (double)g->L);
    size_t D = g->D;
    normal_fill(p + g->wte, g->V * D, sd, seed, stream0);
    normal_fill(p + g->wpe, g->S * D, sd, seed, stream0 + 1);
    for (size_t l = 0; l < g->L; l++) {
        const gpt_tblock_off *b = &g->tblk[l];
        uint64_t s = stream0 + 2 + 4 * l;
        norm_init(g, p, &b->n1);
        norm_init(g, p, &b->n2);
        normal_fill(p + b->wqkv, 3 * D * D, sd, seed, s);
        normal_fill(p + b->wproj, D * D, sd_res, seed, s + 1);
        normal_fill(p + b->wfc1, g->F * D, sd, seed, s + 2);
        normal_fill(p + b->wfc2, D * g->F, sd_res, seed, s + 3);
    }
    norm_init(g, p, &g->nf);
    if (g->mc.untied_head) normal_fill(p + g->head, g->V * D, sd, seed, stream0 + 2 + 4 * g->L);
}

/* ---- norms (FP32, statistics in double) --------------------------------------- */
static void norm_forward(const gpt *g, const float *p, const gpt_norm_off *n, const float *x, size_t rows, float *y,
                         float *mu, float *rs)
{
    size_t D = g->D;
    if (g->mc.norm == NVFP4_NORM_RMS) {
        nvfp4_rmsnorm_forward(x, p + n->g, rows, D, y, rs);
        return;
    }
    const float *gain = p + n->g, *bias = p + n->b;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * D;
        double s = 0.0, ss = 0.0;
        for (size_t i = 0; i < D; i++) s += xr[i];
        double m = s / (double)D;
        for (size_t i = 0; i < D; i++) ss += ((double)xr[i] - m) * ((double)xr[i] - m);
        float rstd = (float)(1.0 / sqrt(ss / (double)D + GPT_LN_EPS)), mf = (float)m;
        mu[r] = mf;
        rs[r] = rstd;
#pragma omp simd
        for (size_t i = 0; i < D; i++) y[r * D + i] = (xr[i] - mf) * rstd * gain[i] + bias[i];
    }
}

/* dx = (accumulated into dx when acc) the input gradient; gradients of the
 * gain and bias accumulated into grad. */
static void norm_backward(const gpt *g, const float *p, const gpt_norm_off *n, const float *x, const float *mu,
                          const float *rs, const float *dy, size_t rows, float *dx, float *grad)
{
    size_t D = g->D;
    if (g->mc.norm == NVFP4_NORM_RMS) {
        nvfp4_rmsnorm_backward(x, p + n->g, rs, dy, rows, D, dx, grad + n->g);
        return;
    }
    const float *gain = p + n->g;
    float *dg = grad + n->g, *db = grad + n->b;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * D, *dyr = dy + r * D;
        float m = mu[r], rstd = rs[r];
        double s1 = 0.0, s2 = 0.0; /* mean of dxhat and of dxhat * xhat */
        for (size_t i = 0; i < D; i++) {
            double xh = ((double)xr[i] - m) * rstd, dxh = (double)dyr[i] * gain[i];
            s1 += dxh;
            s2 += dxh * xh;
        }
        s1 /= (double)D;
        s2 /= (double)D;
#pragma omp simd
        for (size_t i = 0; i < D; i++) {
            float xh = (xr[i] - m) * rstd;
            dx[r * D + i] = (float)(rstd * ((double)dyr[i] * gain[i] - s1 - (double)xh * s2));
            dg[i] += dyr[i] * xh;
            db[i] += dyr[i];
        }
    }
}

/* ---- causal self-attention (FP32) ------------------------------------------------ */
/* For sequence b and head h: P = softmax(mask(Q K^T / sqrt(dh))), O = P V;
 * Q, K, V are column slices of qkv [S x 3D], O a slice of att [S x D]. */
/* omp simd: at -O2 GCC vectorizes only what it is told to (the rounding is
 * integer selects); unvectorized, the BF16 copies and roundings of a
 * bf16_training model took 10% of its step. */
static void round_bf16(float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) x[i] = nvfp4_core_round_bf16(x[i]);
}

/* bf16: P rounded to BF16 before PV (and kept so for the backward), as a
 * BF16 attention kernel hands it to its second GEMM. */
static void attn_forward(const gpt *g, const float *qkv, float *P, float *att, size_t nseq, bool bf16)
{
    size_t S = g->S, D = g->D, H = g->H, dh = D / H;
    float scale = (float)(1.0 / sqrt((double)dh));
    long n = (long)(nseq * H);
#pragma omp parallel for schedule(static) if ((size_t)n * S * S * dh >= ATTN_PAR_MIN)
    for (long bh = 0; bh < n; bh++) {
        size_t b = (size_t)bh / H, h = (size_t)bh % H;
        const float *q = qkv + b * S * 3 * D + h * dh, *k = q + D, *v = q + 2 * D;
        float *pp = P + (size_t)bh * S * S;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)S, (int)S, (int)dh, scale, q, (int)(3 * D), k,
                    (int)(3 * D), 0.0f, pp, (int)S);
        for (size_t i = 0; i < S; i++) {
            float *row = pp + i * S, m = row[0];
            for (size_t j = 1; j <= i; j++) m = row[j] > m ? row[j] : m;
            double sum = 0.0;
            for (size_t j = 0; j <= i; j++) {
                row[j] = expf(row[j] - m);
                sum += row[j];
            }
            float inv = (float)(1.0 / sum);
            for (size_t j = 0; j <= i; j++) row[j] *= inv;
            for (size_t j = i + 1; j < S; j++) row[j] = 0.0f;
            if (bf16) round_bf16(row, i + 1);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)S, (int)dh, (int)S, 1.0f, pp, (int)S, v,
                    (int)(3 * D), 0.0f, att + b * S * D + h * dh, (int)D);
    }
}

/* dP = dO V^T; dV = P^T dO; dS = P * (dP - rowsum(P * dP)); dQ = dS K / sqrt(dh);
 * dK = dS^T Q / sqrt(dh). bf16: dS rounded to BF16 before its two GEMMs. */
static void attn_backward(const gpt *g, const float *qkv, const float *P, const float *datt, float *dP,
                          float *dqkv, bool bf16)
{
    size_t S = g->S, D = g->D, H = g->H, dh = D / H;
    float scale = (float)(1.0 / sqrt((double)dh));
    long n = (long)(g->B * H);
#pragma omp parallel for schedule(static) if ((size_t)n * S * S * dh >= ATTN_PAR_MIN)
    for (long bh = 0; bh < n; bh++) {
        size_t b = (size_t)bh / H, h = (size_t)bh % H;
        const float *q = qkv + b * S * 3 * D + h * dh, *k = q + D, *v = q + 2 * D;
        const float *pp = P + (size_t)bh * S * S, *dO = datt + b * S * D + h * dh;
        float *ds = dP + (size_t)bh * S * S;
        float *dq = dqkv + b * S * 3 * D + h * dh, *dk = dq + D, *dv = dq + 2 * D;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)S, (int)S, (int)dh, 1.0f, dO, (int)D, v,
                    (int)(3 * D), 0.0f, ds, (int)S);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)S, (int)dh, (int)S, 1.0f, pp, (int)S, dO, (int)D,
                    0.0f, dv, (int)(3 * D));
        for (size_t i = 0; i < S; i++) {
            const float *pr = pp + i * S;
            float *dr = ds + i * S;
            double dot = 0.0;
            for (size_t j = 0; j <= i; j++) dot += (double)pr[j] * dr[j];
            float df = (float)dot;
            for (size_t j = 0; j <= i; j++) dr[j] = pr[j] * (dr[j] - df);
            for (size_t j = i + 1; j < S; j++) dr[j] = 0.0f;
            if (bf16) round_bf16(dr, i + 1);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)S, (int)dh, (int)S, scale, ds, (int)S, k,
                    (int)(3 * D), 0.0f, dq, (int)(3 * D));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)S, (int)dh, (int)S, scale, ds, (int)S, q,
                    (int)(3 * D), 0.0f, dk, (int)(3 * D));
    }
}

/* ---- the quantized linears --------------------------------------------------------- */
typedef struct {
    const gpt *g;
    const nvfp4_train_cfg *tc;
    bool shadow;
    size_t step, rows;
    lin_diag *dg;
} gpt_pass;

/* recipe.bf16_training: the quantized model's BF16 arithmetic (never the shadow's). */
static bool bf16_on(const gpt_pass *ps) { return ps->tc->recipe.bf16_training && !ps->shadow; }

/* x rounded to BF16 in this thread's scratch slot: the operand a BF16 model
 * holds (the quantizer then starts from it, as TE's does from BF16 tensors). */
static const float *bf16_copy(st_scratch_slot slot, const float *x, size_t n)
{
    float *c = st_scratch(slot, (n ? n : 1) * sizeof *c);
    if (!c) return NULL;
#pragma omp simd
    for (size_t i = 0; i < n; i++) c[i] = nvfp4_core_round_bf16(x[i]);
    return c;
}

/* x is already a BF16 tensor in a BF16 model (input_bf16); W, dY are copies. */
static nvfp4_status lin_fwd(const gpt_pass *ps, size_t lin, const float *w, const float *x, size_t in, size_t out,
                            float *y, nvfp4_error *err)
{
    nvfp4_sq_cfg q[3][2];
    st_lin_cfg(ps->tc, ps->shadow, lin, ps->step, q);
    nvfp4_sq_key key = {ps->tc->seed, ps->step, (uint32_t)lin, 0, 0};
    bool bf16 = bf16_on(ps);
    if (bf16) {
        w = bf16_copy(ST_SCR_BF_W, w, out * in);
        if (!w) return nvfp4_error_set(err, NVFP4_ENOMEM, "GPT linear: out of memory");
    }
    nvfp4_status s =
        lin_forward(&q[0][0], &q[0][1], x, w, ps->rows, in, out, &key, y, ps->dg ? &ps->dg[lin] : NULL, err);
    if (s == NVFP4_OK && bf16) round_bf16(y, ps->rows * out);
    return s;
}

static nvfp4_status lin_bwd(const gpt_pass *ps, size_t lin, const float *w, const float *x, const float *dy,
                            size_t in, size_t out, float *dx, float *dw, nvfp4_error *err)
{
    nvfp4_sq_cfg q[3][2];
    st_lin_cfg(ps->tc, ps->shadow, lin, ps->step, q);
    nvfp4_sq_key key = {ps->tc->seed, ps->step, (uint32_t)lin, 0, 0};
    bool bf16 = bf16_on(ps);
    if (bf16) {
        w = bf16_copy(ST_SCR_BF_W, w, out * in);
        dy = bf16_copy(ST_SCR_BF_DY, dy, ps->rows * out);
        if (!w || !dy) return nvfp4_error_set(err, NVFP4_ENOMEM, "GPT linear: out of memory");
    }
    nvfp4_status s = lin_backward(q, x, w, dy, ps->rows, in, out, &key, dx, dw, ps->dg ? &ps->dg[lin] : NULL, err);
    if (s == NVFP4_OK && bf16 && dx) round_bf16(dx, ps->rows * in); /* dW stays FP32 (the FP32 main grad) */
    return s;
}

/* ---- forward ------------------------------------------------------------------------ */
/* A linear's input in a BF16 model, rounded in place where it is made, so
 * that the forward and the backward share one rounding instead of each
 * rounding a copy: the norms', the attention's and the GELU's outputs are
 * read by their linear alone (the norms' backward recomputes from x_in,
 * x_mid and x_out, the attention's from qkv and P, the GELU's from u). */
static void input_bf16(const gpt_pass *ps, float *x, size_t n)
{
    if (bf16_on(ps)) round_bf16(x, n);
}

static void embed_tokens(const gpt *g, const float *p, const uint32_t *tok, size_t rows, float *x)
{
    size_t D = g->D;
    for (size_t r = 0; r < rows; r++) {
        const float *te = p + g->wte + (size_t)tok[r] * D, *pe = p + g->wpe + (r % g->S) * D;
        for (size_t i = 0; i < D; i++) x[r * D + i] = te[i] + pe[i];
    }
}

nvfp4_status gpt_forward(gpt *g, const float *p, const uint32_t *tok, size_t nseq, const nvfp4_train_cfg *tc,
                         bool shadow, size_t step, lin_diag *dg, nvfp4_error *err)
{
    size_t T = nseq * g->S, D = g->D, F = g->F;
    gpt_pass ps = {g, tc, shadow, step, T, dg};
    nvfp4_status s = NVFP4_OK;
    embed_tokens(g, p, tok, T, g->x_in[0]);
    for (size_t l = 0; l < g->L && s == NVFP4_OK; l++) {
        const gpt_tblock_off *b = &g->tblk[l];
        size_t lin = l * GPT_LIN_PER_BLOCK;
        norm_forward(g, p, &b->n1, g->x_in[l], T, g->n1[l], g->mu1[l], g->rs1[l]);
        input_bf16(&ps, g->n1[l], T * D);
        s = lin_fwd(&ps, lin + GPT_LIN_QKV, p + b->wqkv, g->n1[l], D, 3 * D, g->qkv[l], err);
        if (s != NVFP4_OK) break;
        attn_forward(g, g->qkv[l], g->P[l], g->att[l], nseq, bf16_on(&ps));
        input_bf16(&ps, g->att[l], T * D);
        s = lin_fwd(&ps, lin + GPT_LIN_PROJ, p + b->wproj, g->att[l], D, D, g->x_mid[l], err);
        if (s != NVFP4_OK) break;
        for (size_t i = 0; i < T * D; i++) g->x_mid[l][i] += g->x_in[l][i];
        norm_forward(g, p, &b->n2, g->x_mid[l], T, g->n2[l], g->mu2[l], g->rs2[l]);
        input_bf16(&ps, g->n2[l], T * D);
        s = lin_fwd(&ps, lin + GPT_LIN_FC1, p + b->wfc1, g->n2[l], D, F, g->u[l], err);
        if (s != NVFP4_OK) break;
        nvfp4_act_forward(NVFP4_ACT_GELU, g->u[l], g->a[l], T * F);
        input_bf16(&ps, g->a[l], T * F);
        float *xo = l + 1 < g->L ? g->x_in[l + 1] : g->x_out;
        s = lin_fwd(&ps, lin + GPT_LIN_FC2, p + b->wfc2, g->a[l], F, D, xo, err);
        if (s != NVFP4_OK) break;
        for (size_t i = 0; i < T * D; i++) xo[i] += g->x_mid[l][i];
    }
    if (s != NVFP4_OK) return s;
    norm_forward(g, p, &g->nf, g->x_out, T, g->nfo, g->muf, g->rsf);
    input_bf16(&ps, g->nfo, T * D);
    return lin_fwd(&ps, g->L * GPT_LIN_PER_BLOCK, p + g->head, g->nfo, D, g->V, g->logits, err);
}

/* ---- backward ----------------------------------------------------------------------- */
nvfp4_status gpt_backward(gpt *g, const float *p, const uint32_t *tok, const float *dlogits,
                          const nvfp4_train_cfg *tc, bool shadow, size_t step, lin_diag *dg, float *grad,
                          nvfp4_error *err)
{
    size_t T = g->T, D = g->D, F = g->F;
    gpt_pass ps = {g, tc, shadow, step, T, dg};
    memset(grad, 0, g->np * sizeof *grad);
    /* head; with a tied head its dW lands in dwtmp and is added to wte below */
    float *dhead = g->mc.untied_head ? grad + g->head : g->dwtmp;
    nvfp4_status s = lin_bwd(&ps, g->L * GPT_LIN_PER_BLOCK, p + g->head, g->nfo, dlogits, D, g->V, g->dn, dhead, err);
    if (s != NVFP4_OK) return s;
    if (!g->mc.untied_head)
        for (size_t i = 0; i < g->V * D; i++) grad[g->wte + i] += g->dwtmp[i];
    /* dx: dL/d(residual stream) walking down */
    norm_backward(g, p, &g->nf, g->x_out, g->muf, g->rsf, g->dn, T, g->dx, grad);
    for (size_t l = g->L; l-- > 0;) {
        const gpt_tblock_off *b = &g->tblk[l];
        size_t lin = l * GPT_LIN_PER_BLOCK;
        /* MLP: x_out = x_mid + FC2(GELU(FC1(n2))) */
        s = lin_bwd(&ps, lin + GPT_LIN_FC2, p + b->wfc2, g->a[l], g->dx, F, D, g->da, grad + b->wfc2, err);
        if (s != NVFP4_OK) return s;
        nvfp4_act_backward(NVFP4_ACT_GELU, g->u[l], g->da, g->du, T * F);
        s = lin_bwd(&ps, lin + GPT_LIN_FC1, p + b->wfc1, g->n2[l], g->du, D, F, g->dn, grad + b->wfc1, err);
        if (s != NVFP4_OK) return s;
        norm_backward(g, p, &b->n2, g->x_mid[l], g->mu2[l], g->rs2[l], g->dn, T, g->datt, grad);
        for (size_t i = 0; i < T * D; i++) g->dx[i] += g->datt[i];
        /* attention: x_mid = x_in + PROJ(Attn(QKV(n1))) */
        s = lin_bwd(&ps, lin + GPT_LIN_PROJ, p + b->wproj, g->att[l], g->dx, D, D, g->datt, grad + b->wproj, err);
        if (s != NVFP4_OK) return s;
        attn_backward(g, g->qkv[l], g->P[l], g->datt, g->dP, g->dqkv, bf16_on(&ps));
        s = lin_bwd(&ps, lin + GPT_LIN_QKV, p + b->wqkv, g->n1[l], g->dqkv, D, 3 * D, g->dn, grad + b->wqkv, err);
        if (s != NVFP4_OK) return s;
        norm_backward(g, p, &b->n1, g->x_in[l], g->mu1[l], g->rs1[l], g->dn, T, g->datt, grad);
        for (size_t i = 0; i < T * D; i++) g->dx[i] += g->datt[i];
    }
    for (size_t r = 0; r < T; r++) {
        float *te = grad + g->wte + (size_t)tok[r] * D, *pe = grad + g->wpe + (r % g->S) * D;
        for (size_t i = 0; i < D; i++) {
            te[i] += g->dx[r * D + i];
            pe[i] += g->dx[r * D + i];
        }
    }
    return NVFP4_OK;
}
