/* check_study.c - the error-accumulation laboratory: S0's exact stagnation
 * constants, finite-difference gradient checks of every layer, the study
 * fake-quantizer against the library's `te` recipe, determinism across
 * thread counts, checkpoints and forks. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "nvfp4/study.h"
#include "study/studies.h"
#include "study/fakequant.h"
#include "study/layercfg.h"
#include "study/layers.h"
#include "study/scratch.h"
#include "study/seqdata.h"
#include "study/train.h"
#include "study/wtrack.h"
#include "study/rng.h"

/* ---- S0 constants (research/error-accumulation.md 4.2a; Higham) ---------- */
START_TEST(harmonic_rn_constants)
{
    size_t at;
    ck_assert_float_eq(nvfp4_lp_harmonic(NVFP4_LP_FP16, false, 0, 2000, &at), 7.0859375f);
    ck_assert_uint_eq(at, 513);
    ck_assert_float_eq(nvfp4_lp_harmonic(NVFP4_LP_BF16, false, 0, 1000, &at), 5.0625f);
    ck_assert_uint_eq(at, 65);
    ck_assert_float_eq(nvfp4_lp_harmonic(NVFP4_LP_E4M3, false, 0, 200, &at), 3.0f);
    ck_assert_uint_eq(at, 9);
    ck_assert_float_eq(nvfp4_lp_harmonic(NVFP4_LP_E5M2, false, 0, 200, &at), 2.0f);
    ck_assert_uint_eq(at, 5);
}
END_TEST

START_TEST(repeat_add_rn_stagnates_sr_does_not)
{
    /* bf16 1 + 1000 x 0.001: RN stays exactly 1 (0.001 < half an ulp of 1). */
    ck_assert_float_eq(nvfp4_lp_repeat_add(NVFP4_LP_BF16, false, 0, 1.0f, 0.001f, 1000), 1.0f);
    /* SR: the mean over 200 seeds of 1 + 1000*delta_bf16 (delta_bf16 =
     * bf16(0.001)); per-run std ~0.084 (4.2b), so the mean's std is ~0.006:
     * a 6-sigma window (false alarm < 1e-8). */
    float d = nvfp4_lp_round(NVFP4_LP_BF16, 0.001f, false, 0);
    double s = 0;
    for (uint64_t k = 0; k < 200; k++) s += nvfp4_lp_repeat_add(NVFP4_LP_BF16, true, k, 1.0f, 0.001f, 1000);
    ck_assert_double_eq_tol(s / 200, 1.0 + 1000.0 * d, 0.036);
}
END_TEST

START_TEST(e5m2_codes)
{
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, 1.125f, false, 0), 1.0f);  /* tie to even */
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, 1.375f, false, 0), 1.5f);  /* tie to even */
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, 60000.0f, false, 0), 57344.0f);
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, ldexpf(1, -16), false, 0), ldexpf(1, -16));
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, ldexpf(1, -17), false, 0), 0.0f);
    /* SR: 1.1 lies 0.4 of the way from 1 to 1.25 */
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, 1.1f, true, 0), 1.25f);
    ck_assert_float_eq(nvfp4_lp_round(NVFP4_LP_E5M2, 1.1f, true, 0xFFFFFFFFu), 1.0f);
}
END_TEST

/* ---- finite-difference gradient checks (double accumulation of FP32) ----- */
static double rnd(uint64_t i) { return st_normal(99, 7, i); }

/* L = sum_i c_i f(x)_i for a fixed random c; dL/dx from the backward pass
 * versus central differences. */
START_TEST(activation_grads)
{
    for (int a = 0; a < 3; a++) {
        float x[64], y[64], c[64], dx[64], yp[64], ym[64];
        for (int i = 0; i < 64; i++) {
            x[i] = (float)rnd((uint64_t)i);
            if (fabsf(x[i]) < 0.05f) x[i] = 0.3f; /* keep away from ReLU's kink */
            c[i] = (float)rnd((uint64_t)(100 + i));
        }
        nvfp4_act_forward((nvfp4_act)a, x, y, 64);
        nvfp4_act_backward((nvfp4_act)a, x, c, dx, 64);
        for (int i = 0; i < 64; i++) {
            float h = 1e-2f, xs = x[i];
            x[i] = xs + h;
            nvfp4_act_forward((nvfp4_act)a, x, yp, 64);
            x[i] = xs - h;
            nvfp4_act_forward((nvfp4_act)a, x, ym, 64);
            x[i] = xs;
            double fd = (double)c[i] * ((double)yp[i] - ym[i]) / (2.0 * h);
            ck_assert_msg(fabs(fd - dx[i]) <= 2e-3 * (1 + fabs(fd)), "act %d i %d: fd %g bw %g", a, i, fd, dx[i]);
        }
    }
}
END_TEST

static double rms_loss(const float *x, const float *g, const float *c, size_t rows, size_t d)
{
    float y[4 * 32], rs[4];
    nvfp4_rmsnorm_forward(x, g, rows, d, y, rs);
    double s = 0;
    for (size_t i = 0; i < rows * d; i++) s += (double)c[i] * y[i];
    return s;
}

START_TEST(rmsnorm_grads)
{
    enum { R = 4, D = 32 };
    float x[R * D], g[D], c[R * D], y[R * D], rs[R], dx[R * D], dg[D] = {0};
    for (int i = 0; i < R * D; i++) x[i] = (float)rnd((uint64_t)i), c[i] = (float)rnd((uint64_t)(500 + i));
    for (int i = 0; i < D; i++) g[i] = 1.0f + 0.3f * (float)rnd((uint64_t)(900 + i));
    nvfp4_rmsnorm_forward(x, g, R, D, y, rs);
    nvfp4_rmsnorm_backward(x, g, rs, c, R, D, dx, dg);
    for (int i = 0; i < R * D; i++) {
        float h = 1e-2f, xs = x[i];
        x[i] = xs + h;
        double lp = rms_loss(x, g, c, R, D);
        x[i] = xs - h;
        double lm = rms_loss(x, g, c, R, D);
        x[i] = xs;
        double fd = (lp - lm) / (2 * h);
        ck_assert_msg(fabs(fd - dx[i]) <= 5e-3 * (1 + fabs(fd)), "dx %d: fd %g bw %g", i, fd, dx[i]);
    }
    for (int i = 0; i < D; i++) {
        float h = 1e-2f, gs = g[i];
        g[i] = gs + h;
        double lp = rms_loss(x, g, c, R, D);
        g[i] = gs - h;
        double lm = rms_loss(x, g, c, R, D);
        g[i] = gs;
        double fd = (lp - lm) / (2 * h);
        ck_assert_msg(fabs(fd - dg[i]) <= 5e-3 * (1 + fabs(fd)), "dg %d: fd %g bw %g", i, fd, dg[i]);
    }
}
END_TEST

START_TEST(loss_grads)
{
    enum { R = 8, V = 10 };
    float z[R * V], t[R * V], dz[R * V];
    uint32_t lab[R];
    for (int i = 0; i < R * V; i++) z[i] = (float)rnd((uint64_t)i), t[i] = (float)rnd((uint64_t)(300 + i));
    for (int r = 0; r < R; r++) lab[r] = (uint32_t)(r * 3 % V);
    for (int which = 0; which < 2; which++) {
        if (which) nvfp4_ce_loss(z, lab, R, V, dz);
        else nvfp4_mse_loss(z, t, R, V, dz);
        for (int i = 0; i < R * V; i++) {
            float h = 1e-2f, zs = z[i];
            z[i] = zs + h;
            double lp = which ? nvfp4_ce_loss(z, lab, R, V, NULL) : nvfp4_mse_loss(z, t, R, V, NULL);
            z[i] = zs - h;
            double lm = which ? nvfp4_ce_loss(z, lab, R, V, NULL) : nvfp4_mse_loss(z, t, R, V, NULL);
            z[i] = zs;
            double fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - dz[i]) <= 1e-3 * (1 + fabs(fd)) + 1e-5, "loss %d i %d: fd %g bw %g", which, i, fd,
                          dz[i]);
        }
    }
}
END_TEST

/* The FP32 linear: L = sum c .* (X W^T); dX = c W, dW = c^T X, checked by
 * central differences in every coordinate. */
START_TEST(linear_grads)
{
    enum { T = 16, IN = 24, OUT = 8 };
    float x[T * IN], w[OUT * IN], c[T * OUT], y[T * OUT], dx[T * IN], dw[OUT * IN];
    nvfp4_sq_cfg q[3][2];
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) nvfp4_sq_cfg_fp32(&q[g][o]);
    for (int i = 0; i < T * IN; i++) x[i] = (float)rnd((uint64_t)i);
    for (int i = 0; i < OUT * IN; i++) w[i] = (float)rnd((uint64_t)(1000 + i));
    for (int i = 0; i < T * OUT; i++) c[i] = (float)rnd((uint64_t)(2000 + i));
    ck_assert_int_eq(nvfp4_linear_backward(q, x, w, c, T, IN, OUT, NULL, dx, dw, NULL), NVFP4_OK);
    float *ps[2] = {x, w}, *gs[2] = {dx, dw};
    int ns[2] = {T * IN, OUT * IN};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ns[k]; i++) {
            float h = 1e-2f, s0 = ps[k][i];
            double l[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                ps[k][i] = s0 + (sgn ? -h : h);
                nvfp4_linear_forward(&q[0][0], &q[0][1], x, w, T, IN, OUT, NULL, y, NULL);
                l[sgn] = 0;
                for (int j = 0; j < T * OUT; j++) l[sgn] += (double)c[j] * y[j];
            }
            ps[k][i] = s0;
            double fd = (l[0] - l[1]) / (2 * h);
            ck_assert_msg(fabs(fd - gs[k][i]) <= 2e-3 * (1 + fabs(fd)), "%s %d: fd %g bw %g", k ? "dW" : "dX", i, fd,
                          gs[k][i]);
        }
}
END_TEST

/* Embedding + the full residual model: the LM run's first step must lower
 * the loss along the gradient (a whole-model check through the public API
 * is the FP32 shadow's training curve, tested in training_reduces_loss). */

/* ---- fake quantization against the library's `te` recipe ---------------------- */
static void fq_vs_te(nvfp4_block blk, nvfp4_rounding rnd_mode)
{
    enum { R = 32, K = 64 };
    float x[R * K], a[R * K], b[R * K];
    for (int i = 0; i < R * K; i++) x[i] = (float)(rnd((uint64_t)(7000 + i)) * (i % 13 == 0 ? 20 : 1));
    nvfp4_sq_cfg c;
    nvfp4_sq_cfg_nvfp4(&c);
    c.block = blk;
    c.rounding = rnd_mode;
    nvfp4_sq_key key = {5, 3, 1, 2, 0};
    ck_assert_int_eq(nvfp4_sq_fakequant(&c, x, R, K, &key, a, NULL, NULL), NVFP4_OK);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.block = blk;
    o.rounding = rnd_mode;
    o.seed = sq_derive(5, 1, 2, 0, 0x53525354u);
    o.offset = 4 * 3;
    nvfp4_quantized qt;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, R, K, &o, &qt, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_dequantize(&qt, false, b, &err), NVFP4_OK);
    nvfp4_quantized_free(&qt);
    ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
}

START_TEST(fakequant_equals_te_recipe)
{
    fq_vs_te(NVFP4_BLOCK_1X16, NVFP4_RN);
    fq_vs_te(NVFP4_BLOCK_16X16, NVFP4_RN);
    fq_vs_te(NVFP4_BLOCK_1X16, NVFP4_SR);
}
END_TEST

/* Wgrad's operand dY^T under the paper's config (1x16, SR, RHT-16), handed
 * in as dY itself: the bytes of the library's own columnwise output of dY
 * (nvfp4_quantize with RHT, TE signs, the SR counters of the operand's
 * orientation at base 4*step), dequantized. Three inputs: raw values;
 * BF16 values (which the lab hands the library in BF16 storage, in chunks
 * of 4096: the operand spans three); BF16 values but one in the last chunk
 * (the lab keeps FP32 storage after narrowing two chunks). */
START_TEST(wgrad_operand_equals_library_columnwise)
{
    enum { T = 256, O = 48 };
    static float dy[T * O], a[T * O], b[T * O];
    for (int kind = 0; kind < 3; kind++) {
        for (int i = 0; i < T * O; i++) {
            dy[i] = (float)(rnd((uint64_t)(8100 + i)) * (i % 17 == 0 ? 25 : 1));
            if (kind > 0) dy[i] = nvfp4_bf16_to_f32(nvfp4_bf16_from_f32(dy[i]));
        }
        if (kind == 2) dy[T * O - 5] = 0x1.000002p-3f; /* not a BF16 value */
        nvfp4_sq_cfg c;
        ck_assert(nvfp4_sq_cfg_parse("nvfp4/1x16/sr/rht16", &c));
        nvfp4_sq_key key = {9, 6, 3, NVFP4_GEMM_WGRAD, 0};
        nvfp4_error err;
        ck_assert_int_eq(st_fakequant_t(&c, dy, T, O, &key, a, NULL, &err), NVFP4_OK); /* [O x T] */
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.rounding = NVFP4_SR;
        o.rowwise = false;
        o.columnwise = true;
        o.rht = true;
        o.rht_signs = NVFP4_RHT_SIGNS_TE;
        o.seed = sq_derive(9, 3, NVFP4_GEMM_WGRAD, 0, 0x53525354u);
        o.offset = 4 * 6 - 1; /* the library counts columnwise from offset + 1 */
        nvfp4_quantized q;
        ck_assert_int_eq(nvfp4_quantize(dy, NVFP4_DTYPE_F32, T, O, &o, &q, &err), NVFP4_OK);
        ck_assert_int_eq(nvfp4_dequantize(&q, true, b, &err), NVFP4_OK);
        nvfp4_quantized_free(&q);
        ck_assert_msg(memcmp(a, b, sizeof a) == 0, "input kind %d: bytes differ", kind);
    }
}
END_TEST

/* MXFP8 operands are the library's recipe mxfp8 (quantized, then
 * dequantized), rowwise and columnwise; the lab computes them in one pass
 * with the recipe's core rules. Blocks with NaN, +-Inf, all zeros, values
 * past 448 * 2^127, subnormals, and a short last block (K = 80). */
START_TEST(mxfp8_equals_library)
{
    enum { R = 16, KMAX = 80 };
    static const size_t ks[] = {64, 80};
    for (size_t ki = 0; ki < 2; ki++) {
        size_t K = ks[ki];
        float x[R * KMAX], xt[R * KMAX], a[R * KMAX], b[R * KMAX], c2[R * KMAX];
        for (size_t i = 0; i < R * K; i++) x[i] = (float)(rnd((uint64_t)(8300 + i)) * (i % 7 == 0 ? 100 : 1));
        x[3] = NAN;
        x[K + 5] = INFINITY;
        x[2 * K + 40] = -INFINITY;
        for (size_t i = 0; i < 32; i++) x[3 * K + i] = i % 2 ? 0.0f : -0.0f; /* an all-zero block */
        x[4 * K + 1] = 3.0e38f;
        x[4 * K + 2] = -2.9e38f;
        for (size_t i = 0; i < 32; i++) x[5 * K + i] = ldexpf(x[5 * K + i], -140); /* subnormals */
        x[6 * K + 7] = ldexpf(1.0f, -149);
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < K; k++) xt[k * R + r] = x[r * K + k];
        nvfp4_sq_cfg c;
        ck_assert(nvfp4_sq_cfg_parse("mxfp8", &c));
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_sq_fakequant(&c, x, R, K, NULL, a, NULL, &err), NVFP4_OK);
        ck_assert_int_eq(st_fakequant_t(&c, xt, K, R, NULL, c2, NULL, &err), NVFP4_OK);
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = "mxfp8";
        o.pad = true;
        nvfp4_quantized q;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, R, K, &o, &q, &err), NVFP4_OK);
        ck_assert_int_eq(nvfp4_dequantize(&q, false, b, &err), NVFP4_OK);
        nvfp4_quantized_free(&q);
        ck_assert_msg(memcmp(a, b, R * K * sizeof *a) == 0, "K = %zu: rowwise differs", K);
        ck_assert_msg(memcmp(a, c2, R * K * sizeof *a) == 0, "K = %zu: columnwise differs", K);
        ck_assert(memcmp(a, x, R * K * sizeof *a) != 0); /* it did round */
        uint32_t nan_bits;
        memcpy(&nan_bits, &a[3], sizeof nan_bits);
        ck_assert_uint_eq(nan_bits, 0x7FC00000u);
    }
}
END_TEST

/* FP8 with current scaling, by hand: amax 2 gives scale 224; 0.3 * 224 =
 * 67.2 lies between the E4M3 values 64 and 72 and rounds to 64, so it
 * comes back as 64/224; 0.5, -1 and 2 map to 112, -224 and 448, exact. An
 * all-zero tensor (scale 1) stays zero. */
START_TEST(fp8_current_scaling_by_hand)
{
    float x[4] = {0.5f, -1.0f, 0.3f, 2.0f}, y[4], z[4] = {0, 0, 0, 0}, w[4];
    nvfp4_sq_cfg c;
    ck_assert(nvfp4_sq_cfg_parse("fp8", &c));
    ck_assert_int_eq(c.format, NVFP4_SQ_FP8);
    ck_assert_int_eq(nvfp4_sq_fakequant(&c, x, 1, 4, NULL, y, NULL, NULL), NVFP4_OK);
    ck_assert_float_eq(y[0], 0.5f);
    ck_assert_float_eq(y[1], -1.0f);
    ck_assert_float_eq(y[2], 64.0f * (1.0f / 224.0f));
    ck_assert_float_eq(y[3], 2.0f);
    ck_assert_int_eq(nvfp4_sq_fakequant(&c, z, 1, 4, NULL, w, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(memcmp(w, z, sizeof z), 0);
    char buf[64];
    nvfp4_sq_cfg_describe(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "fp8");
}
END_TEST

/* An operand handed in transposed (Wgrad's dY and X, Dgrad's W) gives the
 * bytes and counts of the operand itself, on every path: the library's
 * rowwise and columnwise outputs (SR counters included), its columnwise
 * RHT-16, the RHT of other sizes and policies, the core path's scale
 * rules, and the elementwise formats (transposed into the output and
 * quantized there in place). Shapes with a short last block and a partial
 * 16x16 tile row. */
START_TEST(fakequant_transposed_input_same_bytes)
{
    static const char *const cfgs[] = {
        "nvfp4/1x16/rn",          "nvfp4/1x16/sr",          "nvfp4/16x16/rn",        "nvfp4/16x16/sr",
        "nvfp4/1x16/sr/rht16",    "nvfp4/1x16/rn/rht16-perstep", "nvfp4/1x16/sr/rht16-fp32", "nvfp4/1x16/rn/rht32",
        "nvfp4/1x16/e4m3-up/sr",  "nvfp4/1x16/sr/pre34",    "nvfp4/1x16/fp32-scale/rn", "nvfp4/1x32/sr",
        "mxfp4/sr",               "mxfp4/rn/rht32",         "mxfp4/ue8m0-floor/sr",  "mxfp4/1x16/rn",
        "bf16",                   "fp32",                   "fp8",                   "mxfp8"};
    static const size_t shapes[][2] = {{40, 64}, {48, 96}, {24, 80}};
    for (size_t sh = 0; sh < 3; sh++) {
        size_t R = shapes[sh][0], K = shapes[sh][1];
        float *x = malloc(R * K * sizeof *x), *xt = malloc(R * K * sizeof *xt), *a = malloc(R * K * sizeof *a),
              *b = malloc(R * K * sizeof *b);
        for (size_t i = 0; i < R * K; i++) x[i] = (float)(rnd(9000 + i) * (i % 11 == 0 ? 30 : 1));
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < K; k++) xt[k * R + r] = x[r * K + k];
        for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
            nvfp4_sq_cfg c;
            ck_assert(nvfp4_sq_cfg_parse(cfgs[i], &c));
            if (c.rht && K % c.rht) continue;
            nvfp4_sq_key key = {7, 5, 2, 1, 0};
            nvfp4_sq_stats sa = {0, 0, 0, 0, 0}, sb = {0, 0, 0, 0, 0};
            nvfp4_error err;
            ck_assert_int_eq(nvfp4_sq_fakequant(&c, x, R, K, &key, a, &sa, &err), NVFP4_OK);
            ck_assert_int_eq(st_fakequant_t(&c, xt, K, R, &key, b, &sb, &err), NVFP4_OK);
            ck_assert_msg(memcmp(a, b, R * K * sizeof *a) == 0, "%s %zux%zu: bytes differ", cfgs[i], R, K);
            ck_assert_msg(sa.n == sb.n && sa.zeros == sb.zeros && sa.clips == sb.clips && sa.in_zeros == sb.in_zeros &&
                              sa.scale_zeros == sb.scale_zeros,
                          "%s %zux%zu: counts differ", cfgs[i], R, K);
        }
        free(x);
        free(xt);
        free(a);
        free(b);
    }
}
END_TEST

/* The zero and clip counts by their definitions (docs/studies.md): on RN
 * 1x16 NVFP4 (the library path) a clip is an element whose scaled value
 * exceeds 6, so it decodes to the block's +-6 * scale; a zero, a nonzero
 * input that dequantizes to 0. */
START_TEST(fakequant_counts)
{
    enum { R = 16, K = 64 };
    float x[R * K], q[R * K];
    for (int i = 0; i < R * K; i++) x[i] = (float)(rnd((uint64_t)(12000 + i)) * (i % 7 == 0 ? 1e-3 : 1));
    nvfp4_sq_cfg c;
    nvfp4_sq_cfg_nvfp4(&c);
    nvfp4_sq_stats st = {0, 0, 0, 0, 0};
    ck_assert_int_eq(nvfp4_sq_fakequant(&c, x, R, K, NULL, q, &st, NULL), NVFP4_OK);
    uint64_t zeros = 0, sixes = 0;
    for (int i = 0; i < R * K; i++) zeros += x[i] != 0.0f && q[i] == 0.0f;
    for (int b = 0; b < R * K / 16; b++) {
        float m = 0.0f;
        for (int i = 0; i < 16; i++) m = fmaxf(m, fabsf(q[b * 16 + i]));
        for (int i = 0; i < 16; i++) sixes += m > 0.0f && fabsf(q[b * 16 + i]) == m;
    }
    ck_assert_uint_eq(st.n, R * K);
    ck_assert_uint_eq(st.zeros, zeros);
    ck_assert_uint_gt(st.zeros, 0);
    ck_assert_uint_le(st.clips, sixes); /* clipped elements decode to the block's largest value */
    ck_assert_uint_gt(st.clips, 0);
}
END_TEST

/* The underflow split on one row of three 1x16 blocks, by hand (TE's chain,
 * amax 2688: S_enc = 1, block scale e4m3(block amax / 6), dequantization
 * scale = the decoded byte). Block 0: amax 2688, scale 448; 100/448 = 0.22
 * and 112/448 = 0.25 (a tie, to even) round to 0, 113/448 = 0.252 to 0.5;
 * two inputs are 0. Block 1: sixteen 0.001, 0.001/6 = 1.7e-4 below half of
 * E4M3's least subnormal 2^-9: scale 0, all sixteen flushed by it. Block 2:
 * 0.5 and fifteen zeros. So n 48, in_zeros 17, zeros 18, scale_zeros 16.
 * With e4m3-up scales (the core path) block 1's scale rounds up to 2^-9,
 * 0.001 / 2^-9 = 0.512 -> 0.5: zeros 2, scale_zeros 0. */
START_TEST(fakequant_underflow_split)
{
    float x[48] = {2688.0f, 0.0f, 0.0f, 100.0f, 112.0f, 113.0f}, q[48];
    for (int i = 6; i < 16; i++) x[i] = 448.0f;
    for (int i = 16; i < 32; i++) x[i] = 0.001f;
    x[32] = 0.5f;
    static const char *const cfgs[2] = {"nvfp4", "nvfp4/e4m3-up"};
    static const uint64_t want[2][3] = {{17, 18, 16}, {17, 2, 0}};
    for (int c = 0; c < 2; c++) {
        nvfp4_sq_cfg cfg;
        ck_assert(nvfp4_sq_cfg_parse(cfgs[c], &cfg));
        nvfp4_sq_stats st = {0, 0, 0, 0, 0};
        ck_assert_int_eq(nvfp4_sq_fakequant(&cfg, x, 1, 48, NULL, q, &st, NULL), NVFP4_OK);
        ck_assert_uint_eq(st.n, 48);
        ck_assert_msg(st.in_zeros == want[c][0] && st.zeros == want[c][1] && st.scale_zeros == want[c][2],
                      "%s: in_zeros %llu zeros %llu scale_zeros %llu", cfgs[c], (unsigned long long)st.in_zeros,
                      (unsigned long long)st.zeros, (unsigned long long)st.scale_zeros);
        ck_assert(q[3] == 0.0f && q[4] == 0.0f && q[5] == 448.0f * 0.5f);
    }
}
END_TEST

/* Oscillation by hand (docs/studies.md "Layer diagnostics"): four
 * elements' quantized values at 13 logged steps k = 0..12. e0 moves up,
 * down (a reversal at k = 2), up (k = 3), then stays; e1 only rises; e2
 * moves down at 3, up at 4 (a reversal); e3 never moves. A reversal counts
 * while it is one of the last 8 logged steps: k = 2, 3: 1/4; 4..10: 2/4;
 * 11: e0's (k = 3) has left the window, 1/4; 12: e2's (k = 4) too, 0. */
START_TEST(wtrack_oscillation_by_hand)
{
    static const float seq[5][4] = {{0, 0, 0, 5}, {1, 1, 0, 5}, {0, 2, 0, 5}, {1, 2, -1, 5}, {1, 3, 0, 5}};
    static const double want[13] = {0, 0, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0};
    lin_diag dg[1];
    st_wtrack **tracks = NULL;
    st_wtrack_attach(&tracks, 1, dg);
    ck_assert_ptr_nonnull(dg[0].track);
    ck_assert(isnan(dg[0].osc_w));
    for (int k = 0; k < 13; k++) {
        double f = st_wtrack_weights(dg[0].track, seq[k < 5 ? k : 4], 4);
        ck_assert_msg(f == want[k], "k %d: %g, want %g", k, f, want[k]);
    }
    st_wtrack_free_all(tracks, 1);
}
END_TEST

/* Persistent hot channels on a constructed sequence: 40 input channels, so
 * the top 5% is 2. Step 0: channels 3 (amax 10) and 7 (9) -> 2 persistent;
 * step 1: 3 and 12 -> 1 (channel 3); step 2: all equal, the top two are
 * channels 0 and 1 (ties to the lower index) -> 0. */
START_TEST(wtrack_hot_channels_by_hand)
{
    enum { IN = 40 };
    float x[3][2 * IN];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2 * IN; i++) x[k][i] = i < IN ? 0.5f : -1.0f; /* amax 1 */
    x[0][IN + 3] = -10.0f, x[0][7] = 9.0f;
    x[1][3] = 10.0f, x[1][IN + 12] = -9.0f;
    ck_assert_uint_eq(st_hot_k(IN), 2);
    ck_assert_uint_eq(st_hot_k(10), 1);
    ck_assert_uint_eq(st_hot_k(64), 4);
    static const double want[3] = {2, 1, 0};
    lin_diag dg[2];
    st_wtrack **tracks = NULL;
    st_wtrack_attach(&tracks, 2, dg);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(st_wtrack_inputs(dg[1].track, x[k], 2, IN), want[k]);
    st_wtrack_free_all(tracks, 2);
}
END_TEST

/* RHT on both Wgrad operands cancels in the product: Q-free (fp32 format
 * with RHT in fp32) the GEMM equals the plain one to fp32 rounding. */
START_TEST(rht_cancels_in_wgrad)
{
    enum { R = 8, K = 64 };
    float a[R * K], b[R * K], ta[R * K], tb[R * K];
    for (int i = 0; i < R * K; i++) a[i] = (float)rnd((uint64_t)i), b[i] = (float)rnd((uint64_t)(999 + i));
    memcpy(ta, a, sizeof a);
    memcpy(tb, b, sizeof b);
    for (int pol = 0; pol < 3; pol++) {
        nvfp4_sq_key k0 = {9, 4, 2, NVFP4_GEMM_WGRAD, 0}, k1 = k0;
        k1.operand = 1;
        memcpy(ta, a, sizeof a);
        memcpy(tb, b, sizeof b);
        ck_assert_int_eq(nvfp4_sq_rht_rows(ta, R, K, 32, (nvfp4_sq_rht_signs)pol, &k0, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_sq_rht_rows(tb, R, K, 32, (nvfp4_sq_rht_signs)pol, &k1, NULL), NVFP4_OK);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < R; j++) {
                double d0 = 0, d1 = 0;
                for (int k = 0; k < K; k++) {
                    d0 += (double)a[i * K + k] * b[j * K + k];
                    d1 += (double)ta[i * K + k] * tb[j * K + k];
                }
                ck_assert_double_eq_tol(d0, d1, 1e-4 * (1 + fabs(d0)));
            }
    }
}
END_TEST

START_TEST(cfg_parse_roundtrip)
{
    const char *s[] = {"fp32", "bf16", "nvfp4/1x16/e4m3/rn", "nvfp4/16x16/e4m3/sr/rht16",
                       "mxfp4/1x32/ue8m0-floor/sr/pre34/rht32-perstep"};
    for (int i = 0; i < 5; i++) {
        nvfp4_sq_cfg c;
        char buf[128];
        ck_assert(nvfp4_sq_cfg_parse(s[i], &c));
        nvfp4_sq_cfg_describe(&c, buf, sizeof buf);
        ck_assert_str_eq(buf, s[i]);
    }
    nvfp4_sq_cfg c;
    ck_assert(!nvfp4_sq_cfg_parse("nvfp5", &c));
    ck_assert(!nvfp4_sq_cfg_parse("nvfp4/2x2", &c));
}
END_TEST

/* ---- training: determinism, forks, checkpoints ------------------------------------ */
static void small_cfg(nvfp4_train_cfg *c, bool lm)
{
    nvfp4_train_cfg_init(c);
    c->steps = 30;
    c->batch = 64;
    c->log_every = 10;
    c->seed = 3;
    c->recipe.first_hp = 0;
    c->recipe.last_hp = 0;
    if (lm) {
        c->model.vocab = 16;
        c->model.ctx = 4;
        c->model.emb_dim = 16;
        c->model.d_in = 64;
        c->model.d_model = 32;
        c->model.d_hidden = 64;
        c->model.d_out = 16;
        c->model.n_blocks = 1;
        c->model.block_kind = NVFP4_BLOCK_RESIDUAL;
        c->model.loss = NVFP4_LOSS_CE;
        c->recipe.first_hp = 1;
        c->recipe.last_hp = 1;
        c->lr = 3e-3f;
    } else {
        c->model.d_in = 32;
        c->model.d_model = 32;
        c->model.d_out = 16;
    }
}

static float *train_params(const nvfp4_train_cfg *c, int threads, size_t *np)
{
    nvfp4_study_set_threads(threads);
    nvfp4_run *r;
    ck_assert_int_eq(nvfp4_run_create(c, &r, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_advance(r, c->steps, NULL), NVFP4_OK);
    *np = nvfp4_run_param_count(r);
    float *p = malloc(*np * sizeof *p);
    nvfp4_run_params(r, p);
    nvfp4_run_free(r);
    return p;
}

START_TEST(deterministic_across_threads)
{
    for (int lm = 0; lm < 2; lm++) {
        nvfp4_train_cfg c;
        small_cfg(&c, lm);
        size_t n1, n2;
        float *p1 = train_params(&c, 1, &n1), *p2 = train_params(&c, 2, &n2);
        ck_assert_uint_eq(n1, n2);
        ck_assert_int_eq(memcmp(p1, p2, n1 * sizeof *p1), 0);
        free(p1);
        free(p2);
    }
    nvfp4_study_set_threads(1);
}
END_TEST

START_TEST(training_reduces_loss)
{
    for (int lm = 0; lm < 2; lm++) {
        nvfp4_train_cfg c;
        small_cfg(&c, lm);
        c.steps = 60;
        nvfp4_run *r;
        ck_assert_int_eq(nvfp4_run_create(&c, &r, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_run_advance(r, c.steps, NULL), NVFP4_OK);
        size_t n = nvfp4_run_n_logs(r);
        ck_assert_uint_ge(n, 3);
        const nvfp4_log_row *a = nvfp4_run_log(r, 0), *b = nvfp4_run_log(r, n - 1);
        ck_assert_double_lt(b->ref_eval_loss, a->ref_eval_loss);
        ck_assert_double_lt(b->eval_loss, a->eval_loss);
        ck_assert(!nvfp4_run_diverged(r, NULL));
        /* quantized layers must show finite, positive SQNR below the FP32 value */
        const nvfp4_layer_diag *d = nvfp4_run_diag(r, n - 1, lm ? 1 : 0);
        ck_assert_double_gt(d->sqnr_db[0], 5.0);
        ck_assert_double_lt(d->sqnr_db[0], 40.0);
        if (lm) ck_assert_double_gt(nvfp4_run_entropy_rate(r), 0.0);
        nvfp4_run_free(r);
    }
}
END_TEST

START_TEST(fork_and_checkpoint_resume_bitwise)
{
    nvfp4_train_cfg c;
    small_cfg(&c, true);
    size_t n;
    float *full = train_params(&c, 1, &n);
    nvfp4_run *r, *f, *l;
    ck_assert_int_eq(nvfp4_run_create(&c, &r, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_advance(r, 13, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_clone(r, &f, NULL), NVFP4_OK);
    char path[512];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/check_study_ckpt.%ld.bin", tmpdir && *tmpdir ? tmpdir : "/tmp", (long)getpid());
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_run_save(r, path, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_load(path, &l, &err), NVFP4_OK);
    remove(path);
    nvfp4_run *all[3] = {r, f, l};
    float *p = malloc(n * sizeof *p);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(nvfp4_run_advance(all[i], c.steps, NULL), NVFP4_OK);
        nvfp4_run_params(all[i], p);
        ck_assert_int_eq(memcmp(p, full, n * sizeof *p), 0);
    }
    /* a fork with one knob changed (forward switched to FP32) differs */
    nvfp4_run *g;
    ck_assert_int_eq(nvfp4_run_create(&c, &g, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_advance(g, 13, NULL), NVFP4_OK);
    nvfp4_run_cfg(g)->switch_fwd_step = 13;
    ck_assert_int_eq(nvfp4_run_advance(g, c.steps, NULL), NVFP4_OK);
    nvfp4_run_params(g, p);
    ck_assert_int_ne(memcmp(p, full, n * sizeof *p), 0);
    ck_assert_int_eq(nvfp4_run_load("/nonexistent-dir/no-such-checkpoint", &l, &err), NVFP4_EIO);
    /* a file that is not a checkpoint, and a truncated one: EFORMAT, no run */
    FILE *bad = fopen(path, "wb");
    ck_assert_ptr_nonnull(bad);
    fputs("not a checkpoint", bad);
    fclose(bad);
    l = (nvfp4_run *)&err;
    ck_assert_int_eq(nvfp4_run_load(path, &l, &err), NVFP4_EFORMAT);
    ck_assert_ptr_null(l);
    ck_assert_int_eq(nvfp4_run_save(r, path, &err), NVFP4_OK);
    ck_assert_int_eq(truncate(path, 4096), 0);
    ck_assert_int_eq(nvfp4_run_load(path, &l, &err), NVFP4_EFORMAT);
    ck_assert_ptr_null(l);
    remove(path);
    for (int i = 0; i < 3; i++) nvfp4_run_free(all[i]);
    nvfp4_run_free(g);
    free(p);
    free(full);
}
END_TEST

START_TEST(divergence_is_reported)
{
    nvfp4_train_cfg c;
    small_cfg(&c, false);
    c.lr = 50.0f; /* absurd learning rate: must diverge and be reported, not crash */
    c.opt = NVFP4_OPT_SGD;
    nvfp4_run *r;
    ck_assert_int_eq(nvfp4_run_create(&c, &r, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_advance(r, c.steps, NULL), NVFP4_OK);
    size_t at = 999;
    ck_assert(nvfp4_run_diverged(r, &at));
    ck_assert_uint_lt(at, c.steps);
    nvfp4_run_free(r);
}
END_TEST

/* The paper's BF16 blocks (st_paper_bf16_blocks), values computed by hand:
 * first = max(1, round(2L/62)), last = max(1, round(8L/62)), then at most
 * floor(L/2) blocks kept. L = 4: 8/62 = 0.13 -> 1, 32/62 = 0.52 -> 1; L = 8:
 * 0.26 -> 1, 1.03 -> 1; L = 12: 0.39 -> 1, 1.55 -> 2; L = 16: 0.52 -> 1,
 * 2.06 -> 2; L = 62: 2, 8; L = 2, 3: 1 + 1 > 1, so 0, 1; L = 1: 0, 0. */
START_TEST(paper_bf16_blocks_rule)
{
    static const size_t want[][3] = {{1, 0, 0}, {2, 0, 1}, {3, 0, 1},  {4, 1, 1},  {8, 1, 1},
                                     {12, 1, 2}, {15, 1, 2}, {16, 1, 2}, {31, 1, 4}, {62, 2, 8}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        size_t f = 99, l = 99;
        st_paper_bf16_blocks(want[i][0], &f, &l);
        ck_assert_msg(f == want[i][1] && l == want[i][2], "L = %zu: first %zu last %zu, want %zu %zu", want[i][0], f,
                      l, want[i][1], want[i][2]);
    }
}
END_TEST

/* Which linears of a GPT config's arm run in high precision. */
static void hp_layers(const st_config *sc, size_t arm, char *out)
{
    nvfp4_train_cfg t;
    st_config_job_cfg(sc, arm, 10, false, &t);
    size_t n = nvfp4_model_n_linears(&t.model);
    for (size_t l = 0; l < n; l++) {
        nvfp4_sq_cfg q[3][2];
        bool hp;
        nvfp4_recipe_layer_cfg(&t, l, q, &hp);
        out[l] = hp ? 'H' : 'q';
    }
    out[n] = 0;
    ck_assert_int_eq(t.recipe.hp, NVFP4_SQ_BF16);
}

/* "bf16_blocks" in a study config: "paper" keeps, for 8 blocks, block 0 and
 * block 7 (4 linears each) and the head; {"first": 0, "last": 0} only the
 * head; an explicit count; the rule follows an arm's own n_blocks (12:
 * blocks 0, 10, 11); refused for a non-GPT model and beside first_hp;
 * bf16_training refused for a non-GPT model. */
START_TEST(bf16_blocks_config)
{
    const char *text =
        "{\"name\": \"b\", \"steps\": 10, \"model\": {\"preset\": \"gpt\", \"n_blocks\": 8, \"d_model\": 32, "
        "\"n_heads\": 2, \"d_hidden\": 64}, \"recipe\": {\"bf16_blocks\": \"paper\"}, \"arms\": ["
        "{\"name\": \"paper\"}, {\"name\": \"none\", \"recipe\": {\"bf16_blocks\": {\"first\": 0, \"last\": 0}}},"
        "{\"name\": \"two-three\", \"recipe\": {\"bf16_blocks\": {\"first\": 2, \"last\": 3}}},"
        "{\"name\": \"deeper\", \"model\": {\"n_blocks\": 12}}]}";
    nvfp4_error err;
    st_config *sc = st_config_parse(text, strlen(text), "b.json", &err);
    ck_assert_msg(sc != NULL, "%s", err.message);
    char got[64];
    hp_layers(sc, 0, got);
    ck_assert_str_eq(got, "HHHHqqqqqqqqqqqqqqqqqqqqqqqqHHHHH");
    hp_layers(sc, 1, got);
    ck_assert_str_eq(got, "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqH");
    hp_layers(sc, 2, got);
    ck_assert_str_eq(got, "HHHHHHHHqqqqqqqqqqqqHHHHHHHHHHHHH");
    hp_layers(sc, 3, got);
    ck_assert_str_eq(got, "HHHHqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqHHHHHHHHH");
    st_config_free(sc);
    const char *mlp = "{\"name\": \"m\", \"steps\": 4, \"model\": {\"preset\": \"mlp\"}, \"arms\": [{\"name\": \"a\", "
                      "\"recipe\": {\"bf16_blocks\": \"paper\"}}]}";
    ck_assert_ptr_null(st_config_parse(mlp, strlen(mlp), "m.json", &err));
    ck_assert_msg(strstr(err.message, "m.json: $.arms[0].recipe.bf16_blocks: bf16_blocks counts transformer blocks"),
                  "%s", err.message);
    const char *both = "{\"name\": \"m\", \"steps\": 4, \"model\": {\"preset\": \"gpt\"}, \"arms\": [{\"name\": \"a\", "
                       "\"recipe\": {\"bf16_blocks\": \"paper\", \"last_hp\": 1}}]}";
    ck_assert_ptr_null(st_config_parse(both, strlen(both), "m.json", &err));
    ck_assert_msg(strstr(err.message, "set the same layers"), "%s", err.message);
    const char *bft = "{\"name\": \"m\", \"steps\": 4, \"model\": {\"preset\": \"tinylm\"}, \"recipe\": "
                      "{\"bf16_training\": true}, \"arms\": [{\"name\": \"a\"}]}";
    ck_assert_ptr_null(st_config_parse(bft, strlen(bft), "m.json", &err));
    ck_assert_msg(strstr(err.message, "m.json: $.recipe.bf16_training: bf16_training applies to the GPT"), "%s",
                  err.message);
    const char *bad = "{\"name\": \"m\", \"steps\": 4, \"model\": {\"preset\": \"gpt\"}, \"arms\": [{\"name\": \"a\", "
                      "\"recipe\": {\"bf16_blocks\": {\"frist\": 1}}}]}";
    ck_assert_ptr_null(st_config_parse(bad, strlen(bad), "m.json", &err));
    ck_assert_msg(strstr(err.message, "$.arms[0].recipe.bf16_blocks: unknown key 'frist' (did you mean 'first'?)"), "%s",
                  err.message);
}
END_TEST

START_TEST(schedules)
{
    nvfp4_train_cfg c;
    nvfp4_train_cfg_init(&c);
    c.steps = 100;
    c.lr = 1.0f;
    c.lr_min_frac = 0.1f;
    c.warmup_frac = 0.1f;
    ck_assert_double_eq_tol(nvfp4_lr_at(&c, 0), 0.1, 1e-12);
    ck_assert_double_eq_tol(nvfp4_lr_at(&c, 10), 1.0, 1e-12);
    ck_assert_double_eq_tol(nvfp4_lr_at(&c, 55), 0.55, 1e-6); /* cosine midpoint */
    c.sched = NVFP4_SCHED_WSD;
    c.decay_frac = 0.2f;
    ck_assert_double_eq_tol(nvfp4_lr_at(&c, 79), 1.0, 1e-12);
    ck_assert_double_eq_tol(nvfp4_lr_at(&c, 90), 0.55, 1e-6);
}
END_TEST

/* A checkpoint with one byte flipped anywhere (magic, config, state, logs,
 * checksum line) is refused with EFORMAT and no run; a FIFO in its place is
 * refused at once (EIO), not waited on. */
START_TEST(checkpoint_byte_flips_refused)
{
    nvfp4_train_cfg c;
    small_cfg(&c, true);
    nvfp4_run *r, *l;
    ck_assert_int_eq(nvfp4_run_create(&c, &r, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_advance(r, 5, NULL), NVFP4_OK);
    char path[512];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/check_study_flip.%ld.bin", tmpdir && *tmpdir ? tmpdir : "/tmp", (long)getpid());
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_run_save(r, path, &err), NVFP4_OK);
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(nvfp4_file_read_all(path, (size_t)1 << 30, &buf, &len, &err), NVFP4_OK);
    ck_assert_uint_gt(len, 8 + sizeof c + 65);
    const size_t offs[] = {0, 7, 8, 8 + sizeof c / 2, 8 + sizeof c + 3, len / 2, len - 66, len - 65, len - 2, len - 1};
    for (size_t k = 0; k < sizeof offs / sizeof *offs; k++) {
        buf[offs[k]] ^= 0x04;
        ck_assert_int_eq(nvfp4_file_write_atomic(path, buf, len, &err), NVFP4_OK);
        l = (nvfp4_run *)&err;
        ck_assert_msg(nvfp4_run_load(path, &l, &err) == NVFP4_EFORMAT, "flip at %zu of %zu loaded", offs[k], len);
        ck_assert_ptr_null(l);
        buf[offs[k]] ^= 0x04;
    }
    ck_assert_int_eq(nvfp4_file_write_atomic(path, buf, len, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_run_load(path, &l, &err), NVFP4_OK);
    nvfp4_run_free(l);
    remove(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(nvfp4_run_load(path, &l, &err), NVFP4_EIO);
    ck_assert_ptr_null(l);
    ck_assert_ptr_nonnull(strstr(err.message, "FIFO"));
    remove(path);
    free(buf);
    nvfp4_run_free(r);
}
END_TEST

/* The FP32 shadow's divergence rule (runner.c): non-finite last losses, or
 * past diverge_factor times its first eval loss. */
START_TEST(shadow_divergence_rule)
{
    nvfp4_log_row rows[3];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 3; i++) rows[i].ref_loss = rows[i].ref_eval_loss = 2.0;
    ck_assert(!st_shadow_diverged(rows, 3, 10.0));
    ck_assert(!st_shadow_diverged(rows, 0, 10.0));
    rows[2].ref_eval_loss = NAN;
    ck_assert(st_shadow_diverged(rows, 3, 10.0));
    rows[2].ref_eval_loss = 2.0;
    rows[2].ref_loss = INFINITY;
    ck_assert(st_shadow_diverged(rows, 3, 10.0));
    rows[2].ref_loss = 20.5; /* just past 10 x 2.0 */
    ck_assert(st_shadow_diverged(rows, 3, 10.0));
    rows[2].ref_loss = 19.5;
    ck_assert(!st_shadow_diverged(rows, 3, 10.0));
    rows[1].ref_eval_loss = NAN; /* a middle row does not decide: the last one does */
    ck_assert(!st_shadow_diverged(rows, 3, 10.0));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("study");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, harmonic_rn_constants);
    tcase_add_test(t, repeat_add_rn_stagnates_sr_does_not);
    tcase_add_test(t, e5m2_codes);
    tcase_add_test(t, activation_grads);
    tcase_add_test(t, rmsnorm_grads);
    tcase_add_test(t, loss_grads);
    tcase_add_test(t, linear_grads);
    tcase_add_test(t, fakequant_equals_te_recipe);
    tcase_add_test(t, fakequant_transposed_input_same_bytes);
    tcase_add_test(t, wgrad_operand_equals_library_columnwise);
    tcase_add_test(t, mxfp8_equals_library);
    tcase_add_test(t, fp8_current_scaling_by_hand);
    tcase_add_test(t, fakequant_counts);
    tcase_add_test(t, fakequant_underflow_split);
    tcase_add_test(t, wtrack_oscillation_by_hand);
    tcase_add_test(t, wtrack_hot_channels_by_hand);
    tcase_add_test(t, rht_cancels_in_wgrad);
    tcase_add_test(t, cfg_parse_roundtrip);
    tcase_add_test(t, deterministic_across_threads);
    tcase_add_test(t, training_reduces_loss);
    tcase_add_test(t, fork_and_checkpoint_resume_bitwise);
    tcase_add_test(t, divergence_is_reported);
    tcase_add_test(t, checkpoint_byte_flips_refused);
    tcase_add_test(t, shadow_divergence_rule);
    tcase_add_test(t, schedules);
    tcase_add_test(t, paper_bf16_blocks_rule);
    tcase_add_test(t, bf16_blocks_config);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
