/*
 * model.c - the trained model of a run: the MLP (plain or residual blocks
 * with RMSNorm) and the tiny LM (the MLP over embedded context tokens),
 * written out here, or the GPT (gpt.c) behind the same calls. It owns the
 * flat parameters, their gradient and optimizer moments, and one batch's
 * activations; every linear goes through the quantized kernel of layers.c
 * with the operand configs of layercfg.c. It knows nothing of tasks, steps
 * or the run (train.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "study/gpt.h"
#include "study/layercfg.h"
#include "study/layers.h"
#include "study/model.h"
#include "study/rng.h"

static size_t model_layout(st_model *m)
{
    const nvfp4_model_cfg *c = &m->mc;
    size_t off = 0, l = 0;
    if (c->vocab) {
        m->emb_off = off;
        off += c->vocab * c->emb_dim;
    }
    m->lin_in[l] = c->d_in;
    m->lin_out[l++] = c->d_model;
    for (size_t b = 0; b < c->n_blocks; b++) {
        if (c->block_kind == NVFP4_BLOCK_PLAIN) {
            m->lin_in[l] = c->d_model;
            m->lin_out[l++] = c->d_model;
        } else {
            m->gain_off[b] = off;
            off += c->d_model;
            m->lin_in[l] = c->d_model;
            m->lin_out[l++] = c->d_hidden;
            m->lin_in[l] = c->d_hidden;
            m->lin_out[l++] = c->d_model;
        }
    }
    if (c->block_kind == NVFP4_BLOCK_RESIDUAL) {
        m->gain_off[c->n_blocks] = off;
        off += c->d_model;
    }
    m->lin_in[l] = c->d_model;
    m->lin_out[l++] = c->d_out;
    m->nlin = l;
    for (size_t i = 0; i < l; i++) {
        m->lin_w[i] = off;
        off += m->lin_in[i] * m->lin_out[i];
    }
    return off;
}

void st_model_free(st_model *m)
{
    if (m->gpt) gpt_free(m->gpt);
    free(m->gpt);
    free(m->p);
    free(m->g);
    free(m->m);
    free(m->v);
    free(m->inp);
    free(m->dinp);
    free(m->d1);
    free(m->d2);
    free(m->d3);
    free(m->tok);
    free(m->gacc);
    for (size_t i = 0; i < ST_MAXLIN; i++) {
        free(m->z[i]);
        free(m->a[i]);
        free(m->h[i]);
        free(m->nrm[i]);
        free(m->rs[i]);
    }
    memset(m, 0, sizeof *m);
}

static float *fa(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* The GPT: B sequences of seq_len tokens (T = B * seq_len rows). */
static bool model_alloc_gpt(st_model *m, const nvfp4_model_cfg *mc, size_t B)
{
    m->gpt = calloc(1, sizeof *m->gpt);
    if (!m->gpt || !gpt_alloc(m->gpt, mc, B)) return false;
    m->np = m->gpt->np;
    m->nlin = m->gpt->nlin;
    m->T = m->gpt->T;
    m->p = fa(m->np);
    m->g = fa(m->np);
    m->m = fa(m->np);
    m->v = fa(m->np);
    m->tok = calloc(m->T, sizeof *m->tok);
    m->d1 = fa(m->T * mc->vocab);
    return m->p && m->g && m->m && m->v && m->tok && m->d1;
}

bool st_model_alloc(st_model *m, const nvfp4_model_cfg *mc, size_t T)
{
    memset(m, 0, sizeof *m);
    m->mc = *mc;
    if (mc->arch == NVFP4_ARCH_GPT) return model_alloc_gpt(m, mc, T);
    if (mc->n_blocks * 2 + 2 > ST_MAXLIN) return false;
    m->np = model_layout(m);
    m->T = T;
    m->p = fa(m->np);
    m->g = fa(m->np);
    m->m = fa(m->np);
    m->v = fa(m->np);
    m->inp = fa(T * mc->d_in);
    m->dinp = fa(T * mc->d_in);
    m->tok = calloc(T * (mc->ctx ? mc->ctx : 1), sizeof *m->tok);
    size_t wmax = mc->d_in;
    for (size_t l = 0; l < m->nlin; l++) {
        m->z[l] = fa(T * m->lin_out[l]);
        m->a[l] = fa(T * m->lin_out[l]);
        if (m->lin_out[l] > wmax) wmax = m->lin_out[l];
    }
    for (size_t b = 0; b <= mc->n_blocks; b++) {
        m->h[b] = fa(T * mc->d_model);
        m->nrm[b] = fa(T * mc->d_model);
        m->rs[b] = fa(T);
    }
    m->d1 = fa(T * wmax);
    m->d2 = fa(T * wmax);
    m->d3 = fa(T * wmax);
    bool ok = m->p && m->g && m->m && m->v && m->inp && m->dinp && m->tok && m->d1 && m->d2 && m->d3;
    for (size_t l = 0; l < m->nlin; l++) ok = ok && m->z[l] && m->a[l];
    for (size_t b = 0; b <= mc->n_blocks; b++) ok = ok && m->h[b] && m->nrm[b] && m->rs[b];
    return ok;
}

void st_model_init_params(st_model *m, uint64_t seed, uint64_t stream0, float scale)
{
    const nvfp4_model_cfg *c = &m->mc;
    if (m->gpt) {
        gpt_init_params(m->gpt, m->p, seed, stream0, scale);
        return;
    }
    if (c->vocab)
        for (size_t i = 0; i < c->vocab * c->emb_dim; i++) m->p[m->emb_off + i] = (float)st_normal(seed, stream0, i);
    if (c->block_kind == NVFP4_BLOCK_RESIDUAL)
        for (size_t b = 0; b <= c->n_blocks; b++)
            for (size_t i = 0; i < c->d_model; i++) m->p[m->gain_off[b] + i] = 1.0f;
    for (size_t l = 0; l < m->nlin; l++) {
        double sd = scale / sqrt((double)m->lin_in[l]);
        size_t n = m->lin_in[l] * m->lin_out[l];
        for (size_t i = 0; i < n; i++) m->p[m->lin_w[l] + i] = (float)(sd * st_normal(seed, stream0 + 1 + l, i));
    }
}

void st_model_embed(st_model *m, const uint32_t *tok, size_t T)
{
    const nvfp4_model_cfg *c = &m->mc;
    for (size_t r = 0; r < T; r++)
        for (size_t j = 0; j < c->ctx; j++)
            memcpy(m->inp + r * c->d_in + j * c->emb_dim, m->p + m->emb_off + (size_t)tok[r * c->ctx + j] * c->emb_dim,
                   c->emb_dim * sizeof(float));
}

nvfp4_status st_model_forward(st_model *m, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                                 lin_diag *dg, float **y, nvfp4_error *err)
{
    const nvfp4_model_cfg *c = &m->mc;
    nvfp4_sq_cfg q[3][2];
    nvfp4_sq_key key = {tc->seed, step, 0, 0, 0};
    nvfp4_status s;
    if (m->gpt) {
        s = gpt_forward(m->gpt, m->p, m->tok, T / c->seq_len, tc, shadow, step, dg, err);
        *y = m->gpt->logits;
        return s;
    }
#define LIN(l, X)                                                                                                  \
    do {                                                                                                           \
        st_lin_cfg(tc, shadow, (l), step, q);                                                                      \
        key.layer = (uint32_t)(l);                                                                                 \
        s = lin_forward(&q[0][0], &q[0][1], (X), m->p + m->lin_w[l], T, m->lin_in[l], m->lin_out[l], &key,       \
                        m->z[l], dg ? &dg[l] : NULL, err);                                                         \
        if (s != NVFP4_OK) return s;                                                                               \
    } while (0)
    if (c->block_kind == NVFP4_BLOCK_PLAIN) {
        const float *x = m->inp;
        for (size_t l = 0; l < m->nlin; l++) {
            LIN(l, x);
            if (l + 1 < m->nlin) {
                nvfp4_act_forward(c->act, m->z[l], m->a[l], T * m->lin_out[l]);
                x = m->a[l];
            }
        }
    } else {
        size_t d = c->d_model;
        LIN(0, m->inp);
        memcpy(m->h[0], m->z[0], T * d * sizeof(float));
        for (size_t b = 0; b < c->n_blocks; b++) {
            size_t up = 1 + 2 * b, dn = 2 + 2 * b;
            nvfp4_rmsnorm_forward(m->h[b], m->p + m->gain_off[b], T, d, m->nrm[b], m->rs[b]);
            LIN(up, m->nrm[b]);
            nvfp4_act_forward(c->act, m->z[up], m->a[up], T * c->d_hidden);
            LIN(dn, m->a[up]);
            for (size_t i = 0; i < T * d; i++) m->h[b + 1][i] = m->h[b][i] + m->z[dn][i];
        }
        size_t nb = c->n_blocks;
        nvfp4_rmsnorm_forward(m->h[nb], m->p + m->gain_off[nb], T, d, m->nrm[nb], m->rs[nb]);
        LIN(m->nlin - 1, m->nrm[nb]);
    }
#undef LIN
    *y = m->z[m->nlin - 1];
    return NVFP4_OK;
}

nvfp4_status st_model_backward(st_model *m, const nvfp4_train_cfg *tc, bool shadow, size_t step, size_t T,
                                  const float *dy, lin_diag *dg, nvfp4_error *err)
{
    const nvfp4_model_cfg *c = &m->mc;
    nvfp4_sq_cfg q[3][2];
    nvfp4_sq_key key = {tc->seed, step, 0, 0, 0};
    nvfp4_status s;
    (void)T;
    if (m->gpt) return gpt_backward(m->gpt, m->p, m->tok, dy, tc, shadow, step, dg, m->g, err);
    memset(m->g, 0, m->np * sizeof(float));
#define LINB(l, X, DY, DX)                                                                                         \
    do {                                                                                                           \
        st_lin_cfg(tc, shadow, (l), step, q);                                                                      \
        key.layer = (uint32_t)(l);                                                                                 \
        s = lin_backward(q, (X), m->p + m->lin_w[l], (DY), T, m->lin_in[l], m->lin_out[l], &key, (DX),          \
                         m->g + m->lin_w[l], dg ? &dg[l] : NULL, err);                                             \
        if (s != NVFP4_OK) return s;                                                                               \
    } while (0)
    float *dinp = c->vocab ? m->dinp : NULL;
    if (c->block_kind == NVFP4_BLOCK_PLAIN) {
        memcpy(m->d1, dy, T * c->d_out * sizeof(float));
        for (size_t l = m->nlin; l-- > 0;) {
            const float *x = l ? m->a[l - 1] : m->inp;
            LINB(l, x, m->d1, l ? m->d2 : dinp);
            if (l) nvfp4_act_backward(c->act, m->z[l - 1], m->d2, m->d1, T * m->lin_out[l - 1]);
        }
    } else {
        size_t d = c->d_model, nb = c->n_blocks;
        /* d3 holds dL/dh while walking down the residual stream */
        LINB(m->nlin - 1, m->nrm[nb], dy, m->d1);
        memset(m->d3, 0, T * d * sizeof(float));
        nvfp4_rmsnorm_backward(m->h[nb], m->p + m->gain_off[nb], m->rs[nb], m->d1, T, d, m->d3,
                               m->g + m->gain_off[nb]);
        for (size_t b = nb; b-- > 0;) {
            size_t up = 1 + 2 * b, dn = 2 + 2 * b;
            LINB(dn, m->a[up], m->d3, m->d1);
            nvfp4_act_backward(c->act, m->z[up], m->d1, m->d2, T * c->d_hidden);
            LINB(up, m->nrm[b], m->d2, m->d1);
            nvfp4_rmsnorm_backward(m->h[b], m->p + m->gain_off[b], m->rs[b], m->d1, T, d, m->d2,
                                   m->g + m->gain_off[b]);
            for (size_t i = 0; i < T * d; i++) m->d3[i] += m->d2[i];
        }
        LINB(0, m->inp, m->d3, dinp);
    }
#undef LINB
    if (c->vocab)
        for (size_t r = 0; r < T; r++)
            for (size_t j = 0; j < c->ctx; j++) {
                float *ge = m->g + m->emb_off + (size_t)m->tok[r * c->ctx + j] * c->emb_dim;
                const float *src = m->dinp + r * c->d_in + j * c->emb_dim;
                for (size_t i = 0; i < c->emb_dim; i++) ge[i] += src[i];
            }
    return NVFP4_OK;
}
