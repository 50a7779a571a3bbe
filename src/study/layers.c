/*
 * layers.c - the layer kernels of the training simulator: the quantized
 * linear (three OpenBLAS sgemm GEMMs on fake-quantized operands, each
 * quantized along its GEMM's reduction axis), activations, RMSNorm, losses,
 * schedules. All FP32 outside the GEMM operands, as NVIDIA keeps norms,
 * non-linearities and the loss in high precision (arXiv 2509.25149 Sec. 4.1).
 */
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/simd.h"
#include "nvfp4/study.h"
#include "study/fakequant.h"
#include "study/layers.h"
#include "study/scratch.h"
#include "study/wtrack.h"

/* ---- activations --------------------------------------------------------- */
/* tanh for the GELU, the lab's own rule (libm's tanhf is scalar, was a
 * quarter of a GPT step, and its last bit is the libm version's): a rational
 * minimax fit tanh(x) = x P(x^2) / Q(x^2) on |x| <= 9.02, fitted for this lab
 * (relative error 1.3e-9 in exact arithmetic); beyond 9.02 tanh rounds to
 * +-1 in fp32. Only fp32 +, *, / and compares, so the compiler vectorizes the
 * GELU loops and scalar, SIMD, gcc and clang give the same bytes. Evaluated
 * in fp32 it is within 6.3 ulp of tanh in double over every float in
 * [2^-31, 9.5] (3.9 ulp below |x| = 2; 6.28 at x = 8.007); odd exactly.
 * tests/check_gpt.c sweeps it. */
#define TANH_CLAMP 9.02f

/* c ? a : b on the bits. Written as a float ?: the compiler moves the
 * arithmetic after it into both arms (C * C is a constant), and a
 * conditional fp operation may trap, so the loop would stay scalar. */
static inline float select_f32(bool c, float a, float b)
{
    uint32_t ua, ub, m = (uint32_t)0 - (uint32_t)c;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, sizeof a);
    return a;
}

static inline float lab_tanh(float x)
{
    float a = select_f32(x > TANH_CLAMP, TANH_CLAMP, x);
    a = select_f32(a < -TANH_CLAMP, -TANH_CLAMP, a);
    float s = a * a;
    float p = ((((-1.2203313e-11f * s + 3.05849781e-08f) * s + 2.80075037e-05f) * s + 0.0038683319f) * s +
               0.136799186f) * s + 1.0f;
    float q = (((1.2873677e-06f * s + 0.000393863709f) * s + 0.0272458568f) * s + 0.4701325f) * s + 1.0f;
    float t = a * p / q;
    /* saturated: exactly +-1 (the fit's fp32 value at the clamp is 1 ulp
     * below), and never past it */
    t = select_f32(t > 1.0f, 1.0f, t);
    t = select_f32(a == TANH_CLAMP, 1.0f, t);
    t = select_f32(t < -1.0f, -1.0f, t);
    return select_f32(a == -TANH_CLAMP, -1.0f, t);
}

float st_tanh(float x) { return lab_tanh(x); }

/* GELU's tanh approximation (Hendrycks & Gimpel) and its derivative share
 * the argument u(x) and lab_tanh: the forward's and backward's t = tanh(u)
 * are the same bytes. */
#define GELU_C 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_A 0.044715f

static inline float gelu_arg(float x) { return GELU_C * (x + GELU_A * x * x * x); }

static inline float gelu_tanh(float x) { return 0.5f * x * (1.0f + lab_tanh(gelu_arg(x))); }

static inline float gelu_tanh_grad(float x)
{
    float t = lab_tanh(gelu_arg(x));
    float du = GELU_C * (1.0f + 3.0f * GELU_A * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
}

static inline __attribute__((always_inline)) void act_forward_body(nvfp4_act a, const float *x, float *y, size_t n)
{
    size_t i;
    switch (a) {
    case NVFP4_ACT_RELU:
        for (i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case NVFP4_ACT_SQRELU:
        for (i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] * x[i] : 0.0f;
        break;
    case NVFP4_ACT_GELU:
#pragma omp simd
        for (i = 0; i < n; i++) y[i] = gelu_tanh(x[i]);
        break;
    default:
        if (y != x) memmove(y, x, n * sizeof *y);
        break;
    }
}

static inline __attribute__((always_inline)) void act_backward_body(nvfp4_act a, const float *x, const float *dy, float *dx,
                                                                    size_t n)
{
    size_t i;
    switch (a) {
    case NVFP4_ACT_RELU:
        for (i = 0; i < n; i++) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        break;
    case NVFP4_ACT_SQRELU:
        for (i = 0; i < n; i++) dx[i] = x[i] > 0.0f ? dy[i] * (2.0f * x[i]) : 0.0f;
        break;
    case NVFP4_ACT_GELU:
#pragma omp simd
        for (i = 0; i < n; i++) dx[i] = dy[i] * gelu_tanh_grad(x[i]);
        break;
    default:
        if (dx != dy) memmove(dx, dy, n * sizeof *dx);
        break;
    }
}

/* The activation loops are elementwise (no reduction), so compiled for
 * AVX2 (8 lanes; the baseline x86-64 build has 4) they give the same bytes:
 * each element goes through the same IEEE operations (contraction is off:
 * no FMA). They run so where the library's SIMD variant (NVFP4_SIMD,
 * nvfp4_simd_active) is AVX2 or AVX-512, so `make check-variants` runs
 * check_gpt's gelu_vector_equals_scalar on both builds. GELU was 15% of
 * a small GPT's step. (The AVX-512 instances below, likewise.) */
#if defined(__x86_64__) && defined(__GNUC__)
#define ST_ACT_AVX2 1
__attribute__((target("avx2"))) static void act_forward_avx2(nvfp4_act a, const float *x, float *y, size_t n)
{
    act_forward_body(a, x, y, n);
}

__attribute__((target("avx2"))) static void act_backward_avx2(nvfp4_act a, const float *x, const float *dy, float *dx,
                                                              size_t n)
{
    act_backward_body(a, x, dy, dx, n);
}

/* And for AVX-512 (16 lanes): the GELU is compute-bound (about 45 vector
 * operations per vector of elements, 1.1 ns per element forward at 8
 * lanes), and its two loops were 12% of an s8-regime step. */
__attribute__((target("avx512f"))) static void act_forward_avx512(nvfp4_act a, const float *x, float *y, size_t n)
{
    act_forward_body(a, x, y, n);
}

__attribute__((target("avx512f"))) static void act_backward_avx512(nvfp4_act a, const float *x, const float *dy,
                                                                   float *dx, size_t n)
{
    act_backward_body(a, x, dy, dx, n);
}
#endif

void nvfp4_act_forward(nvfp4_act a, const float *x, float *y, size_t n)
{
#ifdef ST_ACT_AVX2
    nvfp4_simd_variant v = nvfp4_simd_active();
    if (v == NVFP4_SIMD_AVX512) {
        act_forward_avx512(a, x, y, n);
        return;
    }
    if (v == NVFP4_SIMD_AVX2) {
        act_forward_avx2(a, x, y, n);
        return;
    }
#endif
    act_forward_body(a, x, y, n);
}

void nvfp4_act_backward(nvfp4_act a, const float *x, const float *dy, float *dx, size_t n)
{
#ifdef ST_ACT_AVX2
    nvfp4_simd_variant v = nvfp4_simd_active();
    if (v == NVFP4_SIMD_AVX512) {
        act_backward_avx512(a, x, dy, dx, n);
        return;
    }
    if (v == NVFP4_SIMD_AVX2) {
        act_backward_avx2(a, x, dy, dx, n);
        return;
    }
#endif
    act_backward_body(a, x, dy, dx, n);
}

/* ---- RMSNorm: y = x * rstd * g, rstd = 1/sqrt(mean(x^2) + eps) ------------- */
#define RMS_EPS 1e-6f

void nvfp4_rmsnorm_forward(const float *x, const float *g, size_t rows, size_t d, float *y, float *rstd)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double ss = 0.0;
        for (size_t i = 0; i < d; i++) ss += (double)xr[i] * xr[i];
        float rs = (float)(1.0 / sqrt(ss / (double)d + RMS_EPS));
        rstd[r] = rs;
        for (size_t i = 0; i < d; i++) y[r * d + i] = xr[i] * rs * g[i];
    }
}

void nvfp4_rmsnorm_backward(const float *x, const float *g, const float *rstd, const float *dy, size_t rows,
                            size_t d, float *dx, float *dg)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * d, *dyr = dy + r * d;
        float rs = rstd[r];
        double dot = 0.0; /* sum_i dy_i g_i x_i */
        for (size_t i = 0; i < d; i++) dot += (double)dyr[i] * g[i] * xr[i];
        float c = (float)(dot * (double)rs * rs * rs / (double)d);
        for (size_t i = 0; i < d; i++) {
            dx[r * d + i] = dyr[i] * g[i] * rs - xr[i] * c;
            dg[i] += dyr[i] * xr[i] * rs;
        }
    }
}

/* ---- losses --------------------------------------------------------------- */
double nvfp4_mse_loss(const float *y, const float *t, size_t rows, size_t d, float *dy)
{
    double s = 0.0, inv = 1.0 / (double)(rows * d);
    for (size_t i = 0; i < rows * d; i++) {
        double e = (double)y[i] - t[i];
        s += e * e;
        if (dy) dy[i] = (float)(2.0 * e * inv);
    }
    return s * inv;
}

double nvfp4_ce_loss(const float *logits, const uint32_t *labels, size_t rows, size_t v, float *dy)
{
    double total = 0.0;
    for (size_t r = 0; r < rows; r++) {
        const float *z = logits + r * v;
        float m = z[0];
        for (size_t i = 1; i < v; i++) m = z[i] > m ? z[i] : m;
        double se = 0.0;
        for (size_t i = 0; i < v; i++) se += exp((double)z[i] - m);
        double lse = log(se) + m;
        total += lse - z[labels[r]];
        if (dy)
            for (size_t i = 0; i < v; i++) {
                double p = exp((double)z[i] - lse);
                dy[r * v + i] = (float)((p - (i == labels[r] ? 1.0 : 0.0)) / (double)rows);
            }
    }
    return total / (double)rows;
}

/* ---- schedules --------------------------------------------------------------- */
double nvfp4_lr_at(const nvfp4_train_cfg *c, size_t step)
{
    double lr = c->lr, lo = c->lr * c->lr_min_frac, n = (double)c->steps;
    double w = floor(c->warmup_frac * n);
    if ((double)step < w) return lr * ((double)step + 1.0) / w;
    if (c->sched == NVFP4_SCHED_CONSTANT) return lr;
    if (c->sched == NVFP4_SCHED_WSD) {
        double d0 = n * (1.0 - c->decay_frac);
        if ((double)step < d0) return lr;
        double p = ((double)step - d0) / (n - d0);
        return lr + (lo - lr) * (p > 1.0 ? 1.0 : p);
    }
    double p = ((double)step - w) / (n - w > 1.0 ? n - w : 1.0);
    if (p > 1.0) p = 1.0;
    return lo + (lr - lo) * 0.5 * (1.0 + cos(3.14159265358979323846 * p));
}

/* ---- quantized linear ------------------------------------------------------- */
/* One linear call's operands, in this thread's scratch (scratch.c). */
static float *scratch(st_scratch_slot slot, size_t n) { return st_scratch(slot, n * sizeof(float)); }

static nvfp4_sq_key key_for(const nvfp4_sq_key *base, uint32_t gemm, uint32_t operand)
{
    nvfp4_sq_key k = {0, 0, 0, 0, 0};
    if (base) k = *base;
    k.gemm = gemm;
    k.operand = operand;
    return k;
}

/* C[m,n] = A[m,k] B[n,k]^T: both operands quantized along k (contiguous). */
static void gemm_abt(const float *a, const float *b, size_t m, size_t n, size_t k, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)k, 0.0f,
                c, (int)n);
}

static double sq_err_db(const float *ref, const float *x, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)ref[i] - x[i];
        num += (double)ref[i] * ref[i];
        den += e * e;
    }
    if (den == 0.0) return 300.0; /* identical: report a large finite SQNR */
    if (num == 0.0) return -300.0;
    return 10.0 * log10(num / den);
}

static void put_stats(lin_diag *dg, uint32_t gemm, int operand, const nvfp4_sq_stats *st)
{
    dg->zero[gemm][operand] = st->n ? (double)st->zeros / (double)st->n : 0.0;
    dg->clip[gemm][operand] = st->n ? (double)st->clips / (double)st->n : 0.0;
    dg->zero_in[gemm][operand] = st->n ? (double)st->in_zeros / (double)st->n : 0.0;
    dg->zero_scale[gemm][operand] = st->n ? (double)st->scale_zeros / (double)st->n : 0.0;
}

/* Both operands of one GEMM, A [m x k] and B [n x k]; with transposed, they
 * are handed in as A^T [k x m] and B^T [k x n] (Wgrad's dY and X). The zero
 * and clip counts are taken only on diagnostic steps (dg). */
static nvfp4_status fq_pair(const nvfp4_sq_cfg *ca, const nvfp4_sq_cfg *cb, const float *a, const float *b, size_t m,
                            size_t n, size_t k, bool transposed, const nvfp4_sq_key *key, uint32_t gemm, float *qa,
                            float *qb, lin_diag *dg, nvfp4_error *err)
{
    nvfp4_sq_stats sa = {0, 0, 0, 0, 0}, sb = {0, 0, 0, 0, 0};
    nvfp4_sq_key ka = key_for(key, gemm, 0), kb = key_for(key, gemm, 1);
    nvfp4_status s;
    if (transposed) {
        s = st_fakequant_t(ca, a, k, m, &ka, qa, dg ? &sa : NULL, err);
        if (s == NVFP4_OK) s = st_fakequant_t(cb, b, k, n, &kb, qb, dg ? &sb : NULL, err);
    } else {
        s = nvfp4_sq_fakequant(ca, a, m, k, &ka, qa, dg ? &sa : NULL, err);
        if (s == NVFP4_OK) s = nvfp4_sq_fakequant(cb, b, n, k, &kb, qb, dg ? &sb : NULL, err);
    }
    if (dg) {
        put_stats(dg, gemm, 0, &sa);
        put_stats(dg, gemm, 1, &sb);
    }
    return s;
}

static bool is_fp32(const nvfp4_sq_cfg *c) { return c->format == NVFP4_SQ_FP32; }

/* The diagnostics across logged steps (wtrack.c): the layer input's hot
 * channels, and the oscillation of the Fprop weight operand qw (NULL: FP32
 * weights, which have no codes to oscillate between). */
static void track_diag(lin_diag *dg, const float *x, const float *qw, size_t t, size_t in, size_t out)
{
    if (!dg || !dg->track) return;
    dg->hot_persist = st_wtrack_inputs(dg->track, x, t, in);
    if (qw) dg->osc_w = st_wtrack_weights(dg->track, qw, out * in);
}

nvfp4_status lin_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w, size_t t,
                         size_t in, size_t out, const nvfp4_sq_key *key, float *y, lin_diag *dg, nvfp4_error *err)
{
    if (is_fp32(fa) && is_fp32(fb)) {
        gemm_abt(x, w, t, out, in, y);
        if (dg) dg->sqnr[NVFP4_GEMM_FPROP] = 300.0;
        track_diag(dg, x, NULL, t, in, out);
        return NVFP4_OK;
    }
    float *qx = scratch(ST_SCR_QX, t * in), *qw = scratch(ST_SCR_QW, out * in);
    if (!qx || !qw) return nvfp4_error_set(err, NVFP4_ENOMEM, "linear forward: out of memory");
    nvfp4_status s = fq_pair(fa, fb, x, w, t, out, in, false, key, NVFP4_GEMM_FPROP, qx, qw, dg, err);
    if (s == NVFP4_OK) {
        gemm_abt(qx, qw, t, out, in, y);
        float *ref = dg ? scratch(ST_SCR_B1, t * out) : NULL;
        if (ref) {
            gemm_abt(x, w, t, out, in, ref);
            dg->sqnr[NVFP4_GEMM_FPROP] = sq_err_db(ref, y, t * out);
        }
        track_diag(dg, x, is_fp32(fb) ? NULL : qw, t, in, out);
    }
    return s;
}

nvfp4_status nvfp4_linear_forward(const nvfp4_sq_cfg *fa, const nvfp4_sq_cfg *fb, const float *x, const float *w,
                                  size_t t, size_t in, size_t out, const nvfp4_sq_key *key, float *y,
                                  nvfp4_error *err)
{
    return lin_forward(fa, fb, x, w, t, in, out, key, y, NULL, err);
}

static bool same_cfg(const nvfp4_sq_cfg *a, const nvfp4_sq_cfg *b)
{
    return a->format == b->format && sq_qblock_resolved(a) == sq_qblock_resolved(b) &&
           sq_scale_resolved(a) == sq_scale_resolved(b) && a->rounding == b->rounding &&
           a->prescale34 == b->prescale34 && a->rht == b->rht;
}

/* Dgrad's B operand: W^T [in, out] quantized along out, into wt. With 16x16
 * weights configured alike for Fprop and Dgrad (and RN), it is exactly the
 * transpose of Fprop's quantized W: one scale per tile serves both
 * orientations (arXiv 2509.25149 Sec. 4.3; TE's 2D weights); wt then holds
 * that W [out, in] itself and *as_w says so: the GEMM reads it untransposed
 * instead of from a transposed copy (OpenBLAS sums in the same order either
 * way: every study's CSV files came out the same when this changed). */
static nvfp4_status dgrad_weight(const nvfp4_sq_cfg q[3][2], const float *w, size_t in, size_t out,
                                 const nvfp4_sq_key *key, float *wt, bool *as_w, lin_diag *dg, nvfp4_error *err)
{
    const nvfp4_sq_cfg *cb = &q[NVFP4_GEMM_DGRAD][1];
    nvfp4_sq_stats sb = {0, 0, 0, 0, 0};
    nvfp4_status s;
    *as_w = sq_qblock_resolved(cb) == NVFP4_BLOCK_16X16 && same_cfg(cb, &q[NVFP4_GEMM_FPROP][1]) &&
            cb->rounding == NVFP4_RN && !cb->rht;
    if (*as_w) {
        nvfp4_sq_key kf = key_for(key, NVFP4_GEMM_FPROP, 1);
        s = nvfp4_sq_fakequant(cb, w, out, in, &kf, wt, dg ? &sb : NULL, err);
    } else {
        nvfp4_sq_key kb = key_for(key, NVFP4_GEMM_DGRAD, 1);
        s = st_fakequant_t(cb, w, out, in, &kb, wt, dg ? &sb : NULL, err);
    }
    if (dg) put_stats(dg, NVFP4_GEMM_DGRAD, 1, &sb);
    return s;
}

/* A quantized GEMM output q against the exact one g (same inputs), in
 * double: cosine, alignment <q, g>/<g, g>, ||g||^2 and ||q - g||^2. */
typedef struct {
    double cos, align, gg, ee;
} grad_match;

static grad_match compare_outputs(const float *q_out, const float *g_out, size_t n)
{
    double gg = 0.0, qq = 0.0, gq = 0.0, ee = 0.0;
    for (size_t i = 0; i < n; i++) {
        double g = g_out[i], q = q_out[i];
        gg += g * g;
        qq += q * q;
        gq += g * q;
        ee += (q - g) * (q - g);
    }
    grad_match m = {(gg > 0 && qq > 0) ? gq / sqrt(gg * qq) : 1.0, gg > 0 ? gq / gg : 1.0, gg, ee};
    return m;
}

static void wgrad_diag(const float *dwq, const float *dwr, size_t n, lin_diag *dg)
{
    grad_match m = compare_outputs(dwq, dwr, n);
    dg->sqnr[NVFP4_GEMM_WGRAD] = sq_err_db(dwr, dwq, n);
    dg->wgrad_cos = m.cos;
    dg->wgrad_align = m.align;
    dg->gnr = m.ee > 0 ? sqrt(m.gg / m.ee) : 1e30;
}

/* Dgrad's dX against the exact GEMM on the same inputs: SQNR, cosine,
 * alignment and relative error (the Wgrad statistics, for dX). */
static void dgrad_diag(const float *dxq, const float *dxr, size_t n, lin_diag *dg)
{
    grad_match m = compare_outputs(dxq, dxr, n);
    dg->sqnr[NVFP4_GEMM_DGRAD] = sq_err_db(dxr, dxq, n);
    dg->dgrad_cos = m.cos;
    dg->dgrad_align = m.align;
    dg->dgrad_rel_err = m.gg > 0 ? sqrt(m.ee / m.gg) : (m.ee > 0 ? INFINITY : 0.0);
}

nvfp4_status lin_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy, size_t t,
                          size_t in, size_t out, const nvfp4_sq_key *key, float *dx, float *dw, lin_diag *dg,
                          nvfp4_error *err)
{
    size_t big = t * in;
    if (t * out > big) big = t * out;
    if (in * out > big) big = in * out;
    float *b1 = scratch(ST_SCR_B1, big), *b2 = scratch(ST_SCR_B2, big), *b3 = scratch(ST_SCR_B3, big),
          *b4 = scratch(ST_SCR_B4, big);
    nvfp4_status s = NVFP4_OK;
    if (!b1 || !b2 || !b3 || !b4) {
        s = nvfp4_error_set(err, NVFP4_ENOMEM, "linear backward: out of memory");
        goto done;
    }
    /* Dgrad: dX[t,in] = dY[t,out] W[out,in]; reduction over out. */
    if (dx && is_fp32(&q[NVFP4_GEMM_DGRAD][0]) && is_fp32(&q[NVFP4_GEMM_DGRAD][1])) {
        /* FP32 (the shadow, high-precision layers): no operand copies */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)t, (int)in, (int)out, 1.0f, dy, (int)out, w,
                    (int)in, 0.0f, dx, (int)in);
        if (dg) {
            dg->sqnr[NVFP4_GEMM_DGRAD] = 300.0;
            dg->dgrad_cos = dg->dgrad_align = 1.0;
            dg->dgrad_rel_err = 0.0;
        }
    } else if (dx) {
        const nvfp4_sq_cfg *ca = &q[NVFP4_GEMM_DGRAD][0];
        nvfp4_sq_stats sa = {0, 0, 0, 0, 0};
        nvfp4_sq_key ka = key_for(key, NVFP4_GEMM_DGRAD, 0);
        s = nvfp4_sq_fakequant(ca, dy, t, out, &ka, b1, dg ? &sa : NULL, err);
        bool as_w = false;
        if (s == NVFP4_OK) s = dgrad_weight(q, w, in, out, key, b2, &as_w, dg, err);
        if (s != NVFP4_OK) goto done;
        if (dg) put_stats(dg, NVFP4_GEMM_DGRAD, 0, &sa);
        if (as_w) /* dX = dY_q W_q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)t, (int)in, (int)out, 1.0f, b1, (int)out, b2,
                        (int)in, 0.0f, dx, (int)in);
        else gemm_abt(b1, b2, t, in, out, dx);
        if (dg) {
            st_transpose(w, out, in, b3);
            gemm_abt(dy, b3, t, in, out, b4);
            dgrad_diag(dx, b4, t * in, dg);
        }
    } else if (dg) {
        dg->sqnr[NVFP4_GEMM_DGRAD] = NAN; /* the first layer computes no dX */
        dg->dgrad_cos = dg->dgrad_align = dg->dgrad_rel_err = NAN;
    }
    /* Wgrad: dW[out,in] = dY^T[out,t] X[t,in]; reduction over t. The
     * operands dY^T and X^T are quantized from dY and X as they are. */
    if (is_fp32(&q[NVFP4_GEMM_WGRAD][0]) && is_fp32(&q[NVFP4_GEMM_WGRAD][1])) {
        /* FP32: dY and X untransposed, no copies; the diagnostics of an
         * exact GEMM (what wgrad_diag gives for dW against itself) */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)in, (int)t, 1.0f, dy, (int)out, x,
                    (int)in, 0.0f, dw, (int)in);
        if (dg) wgrad_diag(dw, dw, out * in, dg);
        goto done;
    }
    s = fq_pair(&q[NVFP4_GEMM_WGRAD][0], &q[NVFP4_GEMM_WGRAD][1], dy, x, out, in, t, true, key, NVFP4_GEMM_WGRAD, b3,
                b4, dg, err);
    if (s != NVFP4_OK) goto done;
    gemm_abt(b3, b4, out, in, t, dw);
    if (dg) {
        st_transpose(dy, t, out, b1);
        st_transpose(x, t, in, b2);
        gemm_abt(b1, b2, out, in, t, b3);
        wgrad_diag(dw, b3, out * in, dg);
    }
done:
    return s;
}

nvfp4_status nvfp4_linear_backward(const nvfp4_sq_cfg q[3][2], const float *x, const float *w, const float *dy,
                                   size_t t, size_t in, size_t out, const nvfp4_sq_key *key, float *dx, float *dw,
                                   nvfp4_error *err)
{
    return lin_backward(q, x, w, dy, t, in, out, key, dx, dw, NULL, err);
}
