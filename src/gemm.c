/*
 * gemm.c - emulated NVFP4 block-scaled GEMM D = alpha * A * B^T and the
 * rigorous error bound for fp32 accumulation in any order (docs/semantics.md, "Emulated GEMM",
 * docs/semantics.md "Emulated GEMM and its error bound").
 *
 * Operands are K-major: A is [M, K], B is [N, K], each one orientation of an
 * nvfp4_quantized tensor whose blocks run along K. The block partial of
 * output (i, j) and K-block k is
 *
 *     p_k = (sum_{t<16} a_t * b_t) * (sa_k * sb_k)
 *
 * with a_t, b_t E2M1 values and sa_k, sb_k the decoded E4M3 block scales.
 *
 * Why p_k is exact in fp32 (so no accumulation order can change it):
 *   - E2M1 values are h/2 with h in {0, 1, 2, 3, 4, 6, 8, 12}; a product of
 *     two is an integer multiple of 1/4 of magnitude <= 36.
 *   - A 16-term sum of such products is a multiple of 1/4 with |.| <= 576,
 *     i.e. an integer q/4 with |q| <= 2304 < 2^12; we form q in integer
 *     arithmetic, and q * 0.25f is exact.
 *   - An E4M3 value has at most 4 significant bits and lies in
 *     [2^-9, 448]; sa * sb has at most 8 significant bits and lies in
 *     [2^-18, 200704], so it is an exact normal fp32.
 *   - (q/4) * (sa*sb) has at most 12 + 8 = 20 significant bits, and when
 *     nonzero its magnitude lies in [2^-20, 576 * 200704 < 2^27], inside the
 *     normal fp32 range: exact. (A NaN scale byte 0x7F gives a NaN partial.)
 *
 * Orders:
 *   te    acc = +0; for k = 0..K/16-1: acc = fl32(acc + p_k); D = fl32(alpha * acc)
 *         (TE's Python reference qgemm and a sequential CUDA kernel).
 *   exact acc = RN32(sum_k p_k) (exact sum, one rounding); D = fl32(alpha * acc)
 * with alpha = fl32(fl32(fl32(alpha_in * amax_A) * amax_B) * 0x1.293726p-23f)
 * (the fp32 constant 1/7225344 = 1/(6*6*448*448) = 0x34149B93), as TE's
 * compute_nvfp4_per_tensor_scale_kernel (transformer_engine/common/recipe/
 * nvfp4.cu) evaluates it, left to right.
 *
 * MXFP4 operands (E2M1 elements, UE8M0 scales, 1x32 blocks) follow the same
 * orders with 32-element blocks, p_k = (q/4) * 2^(ea-127) * 2^(eb-127)
 * (exact while the scale product keeps it inside the fp32 range, see
 * block_partial_mx) and alpha = alpha_in (no global amax).
 */
#include "nvfp4/gemm.h"

#include <math.h>
#include <stdlib.h>

#include "core/e2m1.h"
#include "core/e4m3.h"
#include "core/exact_sum.h"
#include "core/nvfp4_core.h"

#define GEMM_ALPHA_CONST 0x1.293726p-23f /* fl32(1/7225344) = 0x34149B93 */

float nvfp4_gemm_alpha(float alpha_in, float amax_a, float amax_b)
{
    float t = alpha_in * amax_a;
    t = t * amax_b;
    return t * GEMM_ALPHA_CONST;
}

/* One operand: a [rows, k] view with blocks of bw along k. */
typedef struct {
    const nvfp4_qtensor *t;
    size_t rows, k, nb; /* logical rows, padded K, K blocks */
    size_t row_bytes;
    unsigned bw;        /* 16 (NVFP4) or 32 (MXFP4) */
    int mx;             /* UE8M0 scales, no global amax */
} gemm_operand;

static unsigned block_width(nvfp4_block b) { return b == NVFP4_BLOCK_1X32 ? 32u : 16u; }

static nvfp4_status operand_view(const nvfp4_quantized *q, bool columnwise, const char *name, gemm_operand *op,
                                 unsigned *bw, nvfp4_error *err)
{
    if (!q || !q->recipe) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: operand %s is missing", name);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q->recipe);
    int nv = info && info->elem == NVFP4_ELEM_E2M1 && info->scale_format == NVFP4_SCALEFMT_E4M3 &&
             info->has_global_amax;
    int mx = info && info->elem == NVFP4_ELEM_E2M1 && info->scale_format == NVFP4_SCALEFMT_UE8M0;
    if (!nv && !mx)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED,
                               "gemm: operand %s uses recipe '%s'; the emulated GEMM takes E2M1 elements with "
                               "E4M3 (NVFP4) or UE8M0 (MXFP4) block scales",
                               name, info && info->name ? info->name : "?");
    if (columnwise ? !q->has_col : !q->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: operand %s has no %s output", name,
                               columnwise ? "columnwise" : "rowwise");
    const nvfp4_qtensor *t = columnwise ? &q->col : &q->row;
    *bw = block_width(q->opts.block);
    if (*bw != (mx ? 32u : 16u) || t->pcols % *bw != 0 || t->scale_cols != t->pcols / *bw || t->prows < t->rows ||
        t->scale_rows < t->rows || (t->rows > 0 && (!t->data || !t->scale)))
        return nvfp4_error_set(err, NVFP4_EINVAL,
                               "gemm: operand %s is not a consistent %s tensor ([%zu, %zu] padded [%zu, %zu], "
                               "%zu scale columns)",
                               name, mx ? "1x32 MXFP4" : "16-wide NVFP4", t->rows, t->cols, t->prows, t->pcols,
                               t->scale_cols);
    op->t = t;
    op->rows = t->rows;
    op->k = t->pcols;
    op->bw = *bw;
    op->mx = mx;
    op->nb = t->pcols / *bw;
    op->row_bytes = t->pcols / 2;
    return NVFP4_OK;
}

static nvfp4_status operands(const nvfp4_quantized *a, bool a_col, const nvfp4_quantized *b, bool b_col,
                             gemm_operand *oa, gemm_operand *ob, nvfp4_error *err)
{
    unsigned bwa, bwb;
    nvfp4_status st = operand_view(a, a_col, "A", oa, &bwa, err);
    if (st == NVFP4_OK) st = operand_view(b, b_col, "B", ob, &bwb, err);
    if (st != NVFP4_OK) return st;
    if (oa->mx != ob->mx)
        return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: A is %s but B is %s: both operands need one format",
                               oa->mx ? "MXFP4" : "NVFP4", ob->mx ? "MXFP4" : "NVFP4");
    if (oa->t->cols != ob->t->cols || oa->k != ob->k)
        return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: K differs: A is [%zu, %zu], B is [%zu, %zu] (D = A B^T)",
                               oa->rows, oa->t->cols, ob->rows, ob->t->cols);
    size_t mn;
    if (!nvfp4_mul_size(oa->rows, ob->rows, &mn))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "gemm: output [%zu, %zu] overflows size_t", oa->rows, ob->rows);
    return NVFP4_OK;
}

/* Row r of an operand as doubled E2M1 values (2*value, an integer in
 * [-12, 12]) and block scales: decoded E4M3 values (NVFP4) or the UE8M0
 * byte itself as a float (MXFP4). */
static void decode_row(const gemm_operand *op, size_t r, int8_t *h, float *s)
{
    const uint8_t *codes = op->t->data + r * op->row_bytes;
    for (size_t c = 0; c < op->k; c++) {
        unsigned shift = (c & 1u) ? 4u : 0u;
        uint8_t nib = (uint8_t)(((unsigned)codes[c / 2] >> shift) & 0xFu);
        h[c] = (int8_t)(2.0f * nvfp4_core_e2m1_decode(nib));
    }
    const uint8_t *sc = op->t->scale + r * op->t->scale_cols;
    for (size_t k = 0; k < op->nb; k++) s[k] = op->mx ? (float)sc[k] : nvfp4_core_e4m3_decode(sc[k]);
}

/* The exact block partial (see the proof at the top). */
static float block_partial(const int8_t *ha, const int8_t *hb, float sa, float sb)
{
    int q = 0;
    for (int t = 0; t < 16; t++) q += ha[t] * hb[t];
    float scale = sa * sb;
    return ((float)q * 0.25f) * scale;
}

/* MXFP4 partial: q/4 * 2^(ea-127) * 2^(eb-127) with |q| <= 32*144 < 2^13.
 * Exact whenever the weight of q's last bit, 2^(ea+eb-256), is at least
 * 2^-149 and q * 2^(ea+eb-256) < 2^128; otherwise rounded once to fp32
 * (this emulation's choice: the hardware's handling of such extreme scale
 * products is undocumented) and *exact is cleared. A 0xFF (NaN) scale gives
 * NaN. */
static float block_partial_mx(const int8_t *ha, const int8_t *hb, float sa, float sb, int *exact)
{
    int q = 0;
    for (int t = 0; t < 32; t++) q += ha[t] * hb[t];
    int ca = (int)sa, cb = (int)sb;
    if (ca == 0xFF || cb == 0xFF) return nvfp4_core_f32_from_bits(0x7FFFFFFFu);
    if (q == 0) return 0.0f;
    int e = ca + cb - 256;
    if (e >= -149 && e <= 114) return (float)q * nvfp4_core_exp2i(e);
    nvfp4_xsum x;
    nvfp4_core_xsum_init(&x);
    nvfp4_core_xsum_add_scaled(&x, (uint64_t)(q < 0 ? -q : q), e, q < 0);
    *exact = 0;
    return nvfp4_core_xsum_round_f32(&x);
}

typedef struct {
    int8_t *h;
    float *s;
} decoded;

static bool decoded_alloc(decoded *d, size_t rows, const gemm_operand *op)
{
    size_t nh, ns;
    d->h = NULL;
    d->s = NULL;
    if (!nvfp4_mul_size(rows ? rows : 1, op->k ? op->k : 1, &nh) || !nvfp4_mul_size(rows ? rows : 1, op->nb ? op->nb : 1, &ns))
        return false;
    d->h = malloc(nh);
    d->s = malloc(ns * sizeof(float));
    return d->h && d->s;
}

static void decoded_free(decoded *d)
{
    free(d->h);
    free(d->s);
}

/* All rows of B, decoded once. */
static nvfp4_status decode_all(const gemm_operand *op, decoded *d, nvfp4_error *err)
{
    if (!decoded_alloc(d, op->rows, op)) {
        decoded_free(d);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "gemm: out of memory decoding a [%zu, %zu] operand", op->rows, op->k);
    }
    for (size_t r = 0; r < op->rows; r++) decode_row(op, r, d->h + r * op->k, d->s + r * op->nb);
    return NVFP4_OK;
}

/* The K/bw block partials of output (i, j) from decoded rows; returns 0
 * if an MXFP4 partial had to be rounded. */
static int row_partials(const gemm_operand *oa, const int8_t *ha, const float *sa, const int8_t *hb,
                        const float *sb, float *p)
{
    int exact = 1;
    if (oa->mx)
        for (size_t k = 0; k < oa->nb; k++) p[k] = block_partial_mx(ha + 32 * k, hb + 32 * k, sa[k], sb[k], &exact);
    else
        for (size_t k = 0; k < oa->nb; k++) p[k] = block_partial(ha + 16 * k, hb + 16 * k, sa[k], sb[k]);
    return exact;
}

/* fp32 pairwise sum: the two halves (the first floor(n/2) partials and the rest) summed likewise, then added. */
static float pairwise_sum(const float *p, size_t n)
{
    if (n == 0) return 0.0f;
    if (n == 1) return 0.0f + p[0]; /* as an accumulator that starts from +0 */
    size_t h = n / 2;
    return pairwise_sum(p, h) + pairwise_sum(p + h, n - h);
}

static float accumulate(const float *p, size_t n, nvfp4_gemm_order order)
{
    if (order == NVFP4_GEMM_PAIRWISE) return pairwise_sum(p, n);
    if (order == NVFP4_GEMM_REVERSE) {
        float acc = 0.0f;
        for (size_t k = n; k-- > 0;) acc = acc + p[k];
        return acc;
    }
    if (order == NVFP4_GEMM_EXACT) {
        nvfp4_xsum acc;
        nvfp4_core_xsum_init(&acc);
        acc.zero_plus = 1; /* as an accumulator that starts from +0 */
        for (size_t k = 0; k < n; k++) nvfp4_core_xsum_add_f32(&acc, p[k]);
        return nvfp4_core_xsum_round_f32(&acc);
    }
    float acc = 0.0f;
    for (size_t k = 0; k < n; k++) acc = acc + p[k];
    return acc;
}

/* Shared driver: for every output row i (in parallel; rows independent),
 * decode row i of A and call fn for each j with the partials. */
typedef void (*gemm_row_fn)(const float *p, size_t n, int exact, size_t i, size_t j, void *ctx);

static nvfp4_status for_each_output(const gemm_operand *oa, const gemm_operand *ob, gemm_row_fn fn, void *ctx,
                                    nvfp4_error *err)
{
    decoded db;
    nvfp4_status st = decode_all(ob, &db, err);
    if (st != NVFP4_OK) return st;
    int failed = 0;
    const size_t m = oa->rows, n = ob->rows;
#pragma omp parallel if (m * n * oa->nb >= 65536) reduction(| : failed)
    {
        decoded da;
        float *p = malloc((oa->nb ? oa->nb : 1) * sizeof *p);
        if (!decoded_alloc(&da, 1, oa) || !p) {
            failed = 1;
        } else {
#pragma omp for schedule(static)
            for (size_t i = 0; i < m; i++) {
                decode_row(oa, i, da.h, da.s);
                for (size_t j = 0; j < n; j++) {
                    int exact = row_partials(oa, da.h, da.s, db.h + j * ob->k, db.s + j * ob->nb, p);
                    fn(p, oa->nb, exact, i, j, ctx);
                }
            }
        }
        decoded_free(&da);
        free(p);
    }
    decoded_free(&db);
    if (failed) return nvfp4_error_set(err, NVFP4_ENOMEM, "gemm: out of memory");
    return NVFP4_OK;
}

/* NVFP4: TE's alpha from the two global amaxes; MXFP4 has none: alpha_in. */
static float gemm_alpha(const gemm_operand *oa, const gemm_operand *ob, float alpha_in)
{
    return oa->mx ? alpha_in : nvfp4_gemm_alpha(alpha_in, oa->t->amax, ob->t->amax);
}

typedef struct {
    float *d;
    size_t n;
    float alpha;
    nvfp4_gemm_order order;
} gemm_ctx;

static void gemm_output(const float *p, size_t n, int exact, size_t i, size_t j, void *vctx)
{
    gemm_ctx *c = vctx;
    (void)exact;
    c->d[i * c->n + j] = c->alpha * accumulate(p, n, c->order);
}

nvfp4_status nvfp4_gemm(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b, bool b_columnwise,
                        float alpha_in, nvfp4_gemm_order order, float *d, nvfp4_error *err)
{
    gemm_operand oa, ob;
    nvfp4_status st = operands(a, a_columnwise, b, b_columnwise, &oa, &ob, err);
    if (st != NVFP4_OK) return st;
    if (order != NVFP4_GEMM_TE && order != NVFP4_GEMM_EXACT && order != NVFP4_GEMM_REVERSE &&
        order != NVFP4_GEMM_PAIRWISE)
        return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: unknown accumulation order %d", (int)order);
    if (!d && oa.rows * ob.rows > 0) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: null output");
    gemm_ctx c = {d, ob.rows, gemm_alpha(&oa, &ob, alpha_in), order};
    return for_each_output(&oa, &ob, gemm_output, &c, err);
}

/* ---- the error bound ------------------------------------------------------
 *
 * Notation: p_1..p_n the exact fp32 block partials (n = K/16, or K/32 for
 * MXFP4; a rounded MXFP4 partial gives bound +Inf), S = sum p_k,
 * T = sum |p_k| (both exact reals), alpha the fp32 alpha above, u = 2^-24,
 * gamma_m = m u / (1 - m u).
 *
 * Claim: if every fp32 addition is rounded to nearest (or computed in a
 * wider format and rounded, or exactly) and no intermediate overflows, then
 * for any order (any binary summation tree, any split-K, any start from +0)
 * the computed sum S^ satisfies |S^ - S| <= gamma_{n-1} T, and the output
 * D = fl32(alpha * S^) satisfies
 *     |D - alpha S| <= |alpha| (gamma_{n-1} T (1 + u) + u |S|) + 2^-150.
 * Proof. fl(x + y) = (x + y)(1 + d), |d| <= u, holds for every fp32 addition
 * without overflow, INCLUDING underflow: a sum of two multiples of 2^-149
 * that lands in the subnormal range is representable, hence exact. In a
 * summation tree with n leaves, leaf p_k passes through at most n-1
 * additions, so S^ = sum_k p_k prod_{l on its path}(1 + d_l) and
 * |prod(1 + d_l) - 1| <= (1+u)^(n-1) - 1 <= gamma_{n-1} (Higham, Accuracy
 * and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and section 4.2),
 * which gives the first inequality. The multiply: fl(alpha S^) = alpha S^
 * (1 + e) + h with |e| <= u, |h| <= 2^-150 (half the subnormal spacing; the
 * two terms cover the normal and the subnormal range), and
 * |alpha S^| <= |alpha| (|S| + gamma T). Adding the two errors gives the
 * claim. The function reports exact = RN64(alpha S) (alpha S is formed in
 * the exact accumulator), so the returned bound adds 2^-52 |exact| for that
 * rounding, and it is evaluated in binary64 from upper bounds of T and |S|
 * and finally multiplied by (1 + 2^-48), which covers the roundings of its
 * own at most 12 binary64 operations. Where an intermediate could overflow
 * ((1 + gamma) T or the output reach the fp32 overflow threshold), where a
 * partial or alpha is not finite, or where (n-1) u >= 1/2, the bound is
 * +Inf (no guarantee). */

typedef struct {
    double *bound, *exact;
    size_t n;
    float alpha;
} bound_ctx;

static double f64_up(double x) { return x * (1.0 + 0x1p-52); } /* >= the real it rounds, for x >= 0 */

static void bound_output(const float *p, size_t n, int partials_exact, size_t i, size_t j, void *vctx)
{
    bound_ctx *c = vctx;
    nvfp4_xsum s, t, as;
    nvfp4_core_xsum_init(&s);
    nvfp4_core_xsum_init(&t);
    nvfp4_core_xsum_init(&as);
    s.zero_plus = t.zero_plus = as.zero_plus = 1;
    int finite = isfinite(c->alpha) && partials_exact;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(p[k])) finite = 0;
        nvfp4_core_xsum_add_f32(&s, p[k]);
        nvfp4_core_xsum_add_f32(&t, fabsf(p[k]));
        nvfp4_core_xsum_add_prod_f32(&as, c->alpha, p[k], 0);
    }
    double exact = nvfp4_core_xsum_round_f64(&as);
    double bound = INFINITY;
    const double u = 0x1p-24, overflow = 0x1p128 - 0x1p103;
    double m = n > 0 ? (double)(n - 1) : 0.0;
    if (finite && m * u < 0.5) {
        double gamma = m * u / (1.0 - m * u);
        double tt = f64_up(fabs(nvfp4_core_xsum_round_f64(&t)));
        double ss = f64_up(fabs(nvfp4_core_xsum_round_f64(&s)));
        double al = fabs((double)c->alpha);
        double sum_err = gamma * tt;
        double out_mag = al * (ss + sum_err);
        if ((1.0 + gamma) * tt < overflow && out_mag * (1.0 + u) < overflow) {
            bound = al * (sum_err * (1.0 + u) + u * ss) + 0x1p-150 + 0x1p-52 * fabs(exact);
            bound *= 1.0 + 0x1p-48;
        }
    }
    c->bound[i * c->n + j] = bound;
    if (c->exact) c->exact[i * c->n + j] = exact;
}

nvfp4_status nvfp4_gemm_error_bound(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                    bool b_columnwise, float alpha_in, double *bound, double *exact,
                                    nvfp4_error *err)
{
    gemm_operand oa, ob;
    nvfp4_status st = operands(a, a_columnwise, b, b_columnwise, &oa, &ob, err);
    if (st != NVFP4_OK) return st;
    if (!bound && oa.rows * ob.rows > 0) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: null bound output");
    bound_ctx c = {bound, exact, ob.rows, gemm_alpha(&oa, &ob, alpha_in)};
    return for_each_output(&oa, &ob, bound_output, &c, err);
}

nvfp4_status nvfp4_gemm_partials(const nvfp4_quantized *a, bool a_columnwise, const nvfp4_quantized *b,
                                 bool b_columnwise, size_t i, size_t j, float *p, size_t *n, nvfp4_error *err)
{
    gemm_operand oa, ob;
    nvfp4_status st = operands(a, a_columnwise, b, b_columnwise, &oa, &ob, err);
    if (st != NVFP4_OK) return st;
    if (i >= oa.rows || j >= ob.rows)
        return nvfp4_error_set(err, NVFP4_EINVAL, "gemm: output (%zu, %zu) outside [%zu, %zu]", i, j, oa.rows,
                               ob.rows);
    if (n) *n = oa.nb;
    if (!p) return NVFP4_OK;
    decoded da = {NULL, NULL}, db = {NULL, NULL};
    bool ok = decoded_alloc(&da, 1, &oa) && decoded_alloc(&db, 1, &ob);
    if (ok) {
        decode_row(&oa, i, da.h, da.s);
        decode_row(&ob, j, db.h, db.s);
        (void)row_partials(&oa, da.h, da.s, db.h, db.s, p);
    }
    decoded_free(&da);
    decoded_free(&db);
    return ok ? NVFP4_OK : nvfp4_error_set(err, NVFP4_ENOMEM, "gemm: out of memory");
}
