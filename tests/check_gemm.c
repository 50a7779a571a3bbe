/* check_gemm.c - the emulated NVFP4 GEMM (src/gemm.c): alpha, exact block
 * partials, the te order against a straightforward loop, the exact order
 * against __float128, and the any-order error bound on adversarial inputs
 * and simulated accumulation orders (with its tightness). Operands are
 * filled by hand (codes, scales, amax) and, at the end, by the quantizer. */
#include <check.h>
#include "support/check_main.h"
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"

static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* ---- hand-filled operands --------------------------------------------------- */

/* A rowwise tensor [rows, k] from one code per element and one scale byte
 * per block (16 wide for NVFP4 recipes, 32 for MX ones). */
static nvfp4_quantized make_q(size_t rows, size_t k, const uint8_t *codes, const uint8_t *scales, float amax,
                              const char *recipe)
{
    const size_t bw = strncmp(recipe, "mx", 2) == 0 ? 32 : 16;
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    q.recipe = nvfp4_recipe_find(recipe);
    ck_assert_ptr_nonnull(q.recipe);
    nvfp4_quant_opts_init(&q.opts);
    q.opts.block = bw == 32 ? NVFP4_BLOCK_1X32 : NVFP4_BLOCK_1X16;
    q.has_row = true;
    nvfp4_qtensor *t = &q.row;
    t->rows = t->prows = rows;
    t->cols = t->pcols = k;
    t->data_bytes = rows * k / 2;
    t->data = calloc(t->data_bytes ? t->data_bytes : 1, 1);
    t->scale_rows = rows;
    t->scale_cols = k / bw;
    t->scale = malloc(rows * (k / bw) + 1);
    ck_assert(t->data && t->scale);
    for (size_t i = 0; i < rows * k; i++) t->data[i / 2] |= (uint8_t)((codes[i] & 0xFu) << (4 * (i & 1)));
    memcpy(t->scale, scales, rows * (k / bw));
    t->amax = amax;
    return q;
}

/* Random codes, and scale bytes in [smin, smax] for blocks of bw. */
static void random_operand_bw(size_t rows, size_t k, size_t bw, uint8_t *codes, uint8_t *scales, uint8_t smin,
                              uint8_t smax)
{
    for (size_t i = 0; i < rows * k; i++) codes[i] = (uint8_t)(rng() & 0xF);
    for (size_t i = 0; i < rows * k / bw; i++) scales[i] = (uint8_t)(smin + rng() % (uint64_t)(smax - smin + 1));
}

static void random_operand(size_t rows, size_t k, uint8_t *codes, uint8_t *scales, uint8_t smin, uint8_t smax)
{
    random_operand_bw(rows, k, 16, codes, scales, smin, smax);
}

/* The straightforward loop: float dot per block, sequential fp32 sum, alpha
 * written out as TE's expression with the literal constant. */
static float reference_te(const uint8_t *ca, const uint8_t *sa, const uint8_t *cb, const uint8_t *sb, size_t k,
                          float alpha_in, float amax_a, float amax_b)
{
    float acc = 0.0f;
    for (size_t b = 0; b < k / 16; b++) {
        float dot = 0.0f;
        for (size_t t = 0; t < 16; t++) dot += nvfp4_e2m1_to_f32(ca[16 * b + t]) * nvfp4_e2m1_to_f32(cb[16 * b + t]);
        acc += dot * (nvfp4_e4m3_to_f32(sa[b]) * nvfp4_e4m3_to_f32(sb[b]));
    }
    float alpha = alpha_in * amax_a * amax_b * (1.0f / 7225344.0f);
    return alpha * acc;
}

START_TEST(alpha_constant)
{
    ck_assert_uint_eq(bits(nvfp4_gemm_alpha(1.0f, 1.0f, 1.0f)), 0x34149B93u);
    volatile float a = 3.0f, b = 1234.5f, c = 0.00771f, k = 1.0f / 7225344.0f;
    float t = a * b;
    t = t * c;
    ck_assert_uint_eq(bits(nvfp4_gemm_alpha(a, b, c)), bits(t * k));
    ck_assert(isinf(nvfp4_gemm_alpha(1.0f, FLT_MAX, FLT_MAX)));
}
END_TEST

/* Every block partial equals the exact real product (evaluated in binary64,
 * where it is exact: <= 12 + 8 significant bits), including the extremes. */
START_TEST(block_partials_exact)
{
    rng_state = 1;
    enum { K = 16 * 64 };
    uint8_t ca[K], cb[K], sa[K / 16], sb[K / 16];
    long checked = 0;
    for (int rep = 0; rep < 60; rep++) {
        random_operand(1, K, ca, sa, 0x00, 0xFE);
        random_operand(1, K, cb, sb, 0x00, 0xFE);
        for (size_t b = 0; b < K / 16; b++) {
            if ((sa[b] & 0x7F) == 0x7F) sa[b] = 0x7E; /* NaN bytes: not a scale */
            if ((sb[b] & 0x7F) == 0x7F) sb[b] = 0x01;
        }
        if (rep == 0) { /* the largest partial: 16 x 6 x 6 x 448 x 448 */
            for (int t = 0; t < 16; t++) ca[t] = cb[t] = 0x7;
            sa[0] = sb[0] = 0x7E;
            for (int t = 0; t < 16; t++) ca[16 + t] = cb[16 + t] = 0; /* the smallest: 0.5 x 0.5 x 2^-9 x 2^-9 */
            ca[16] = cb[16] = 0x1;
            sa[1] = sb[1] = 0x01;
        }
        nvfp4_quantized qa = make_q(1, K, ca, sa, 1.0f, "te"), qb = make_q(1, K, cb, sb, 1.0f, "te");
        float p[K / 16];
        size_t n = 0;
        ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, 0, 0, p, &n, NULL), NVFP4_OK);
        ck_assert_uint_eq(n, K / 16);
        for (size_t b = 0; b < n; b++) {
            double dot = 0;
            for (size_t t = 0; t < 16; t++)
                dot += (double)nvfp4_e2m1_to_f32(ca[16 * b + t]) * (double)nvfp4_e2m1_to_f32(cb[16 * b + t]);
            double ref = dot * ((double)nvfp4_e4m3_to_f32(sa[b]) * (double)nvfp4_e4m3_to_f32(sb[b]));
            ck_assert_msg((double)p[b] == ref, "block %zu: %a vs %a", b, (double)p[b], ref);
            checked++;
        }
        if (rep == 0) {
            ck_assert_uint_eq(bits(p[0]), bits(115605504.0f));
            ck_assert_uint_eq(bits(p[1]), bits(0x1p-20f));
        }
        nvfp4_quantized_free(&qa);
        nvfp4_quantized_free(&qb);
    }
    ck_assert_int_eq(checked, 60 * 64);
}
END_TEST

/* te order = the straightforward loop, bit for bit; exact order = one
 * rounding of the exact sum (checked against __float128, exact here). */
START_TEST(te_and_exact_orders)
{
    rng_state = 7;
    enum { M = 9, N = 7, K = 16 * 40 };
    static uint8_t ca[M * K], cb[N * K], sa[M * K / 16], sb[N * K / 16];
    random_operand(M, K, ca, sa, 0x20, 0x7E);
    random_operand(N, K, cb, sb, 0x01, 0x7E);
    const float amax_a = 3.75f, amax_b = 0.0123f, alpha_in = 1.5f;
    nvfp4_quantized qa = make_q(M, K, ca, sa, amax_a, "te"), qb = make_q(N, K, cb, sb, amax_b, "te");
    float d_te[M * N], d_ex[M * N];
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, alpha_in, NVFP4_GEMM_TE, d_te, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, alpha_in, NVFP4_GEMM_EXACT, d_ex, NULL), NVFP4_OK);
    int differ = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            float ref = reference_te(ca + i * K, sa + i * K / 16, cb + j * K, sb + j * K / 16, K, alpha_in, amax_a, amax_b);
            ck_assert_uint_eq(bits(d_te[i * N + j]), bits(ref));
#ifdef __SIZEOF_FLOAT128__
            float p[K / 16];
            ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, i, j, p, NULL, NULL), NVFP4_OK);
            __float128 s = 0;
            for (size_t b = 0; b < K / 16; b++) s += p[b];
            float acc = (float)s;
            ck_assert_uint_eq(bits(d_ex[i * N + j]), bits(nvfp4_gemm_alpha(alpha_in, amax_a, amax_b) * acc));
#endif
            differ += bits(d_te[i * N + j]) != bits(d_ex[i * N + j]);
        }
    printf("gemm: te and exact orders differ in %d of %d outputs (K/16 = %d)\n", differ, M * N, K / 16);
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* ---- the bound -------------------------------------------------------------- */

static float sum_seq(const float *p, const size_t *ord, size_t n)
{
    float s = 0.0f;
    for (size_t k = 0; k < n; k++) s += p[ord[k]];
    return s;
}

static float sum_pairwise(const float *p, const size_t *ord, size_t n)
{
    if (n == 1) return p[ord[0]];
    size_t h = n / 2;
    return sum_pairwise(p, ord, h) + sum_pairwise(p, ord + h, n - h);
}

static float sum_blocked(const float *p, const size_t *ord, size_t n, size_t chunk)
{
    float total = 0.0f;
    for (size_t s = 0; s < n; s += chunk) total += sum_seq(p, ord + s, n - s < chunk ? n - s : chunk);
    return total;
}

static const float *sort_key;
static int by_magnitude(const void *a, const void *b)
{
    float x = fabsf(sort_key[*(const size_t *)a]), y = fabsf(sort_key[*(const size_t *)b]);
    return (x > y) - (x < y);
}

/* Checks every simulated order of the partials of (i, j) against the bound;
 * returns the largest |D - exact| / bound. */
static double check_orders(const nvfp4_quantized *qa, const nvfp4_quantized *qb, size_t i, size_t j, float alpha,
                           double exact, double bound, long *orders)
{
    size_t n;
    ck_assert_int_eq(nvfp4_gemm_partials(qa, false, qb, false, i, j, NULL, &n, NULL), NVFP4_OK);
    float *p = malloc(n * sizeof *p);
    size_t *ord = malloc(n * sizeof *ord);
    ck_assert(p && ord);
    ck_assert_int_eq(nvfp4_gemm_partials(qa, false, qb, false, i, j, p, &n, NULL), NVFP4_OK);
    double worst = 0;
    for (int variant = 0; variant < 26; variant++) {
        for (size_t k = 0; k < n; k++) ord[k] = variant == 1 ? n - 1 - k : k;
        if (variant >= 6 && variant < 22)
            for (size_t k = n - 1; k > 0; k--) { /* Fisher-Yates */
                size_t r = (size_t)(rng() % (k + 1)), t = ord[k];
                ord[k] = ord[r];
                ord[r] = t;
            }
        if (variant == 22 || variant == 23) {
            sort_key = p;
            qsort(ord, n, sizeof *ord, by_magnitude);
            if (variant == 23)
                for (size_t k = 0; k < n / 2; k++) {
                    size_t t = ord[k];
                    ord[k] = ord[n - 1 - k];
                    ord[n - 1 - k] = t;
                }
        }
        float s;
        switch (variant) {
        case 2: s = sum_pairwise(p, ord, n); break;
        case 3: s = sum_blocked(p, ord, n, 4); break;
        case 4: s = sum_blocked(p, ord, n, 8); break;
        case 5: s = sum_blocked(p, ord, n, 3); break;
        case 24: s = sum_pairwise(p, ord, n); break; /* pairwise after sorting */
        default: s = sum_seq(p, ord, n); break;
        }
        float d = alpha * s;
        double err = fabs((double)d - exact);
        ck_assert_msg(err <= bound, "(%zu,%zu) order %d: |%a - %a| = %a > bound %a", i, j, variant, (double)d, exact,
                      err, bound);
        if (bound > 0 && err / bound > worst) worst = err / bound;
        (*orders)++;
    }
    free(p);
    free(ord);
    return worst;
}

/* Partials 2^25, then n-1 copies of 2: each addition in k order is an exact
 * tie that rounds back to 2^25, so the sequential error is 2(n-1) while the
 * bound is about 2(n-1) + 2: the bound is within 2% of the worst case. */
START_TEST(bound_is_tight)
{
    enum { NB = 64, K = 16 * NB };
    static uint8_t ca[K], cb[K], sa[NB], sb[NB];
    memset(ca, 0, sizeof ca);
    memset(cb, 0, sizeof cb);
    for (int t = 0; t < 14; t++) ca[t] = cb[t] = 0x7; /* 14 x 36 */
    ca[14] = 0x4;                                     /* 2 x 4 = 8: dot 512 */
    cb[14] = 0x6;
    sa[0] = sb[0] = 0x78; /* 256 x 256 */
    for (int b = 1; b < NB; b++) {
        ca[16 * b] = 0x2; /* 1 x 2 */
        cb[16 * b] = 0x4;
        sa[b] = sb[b] = 0x38; /* 1 x 1 */
    }
    nvfp4_quantized qa = make_q(1, K, ca, sa, 2688.0f, "te"), qb = make_q(1, K, cb, sb, 2688.0f, "te");
    float p[NB];
    ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, 0, 0, p, NULL, NULL), NVFP4_OK);
    ck_assert_uint_eq(bits(p[0]), bits(0x1p25f));
    ck_assert_uint_eq(bits(p[1]), bits(2.0f));
    float d;
    double bound, exact;
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, 1.0f, NVFP4_GEMM_TE, &d, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, &bound, &exact, NULL), NVFP4_OK);
    float alpha = nvfp4_gemm_alpha(1.0f, 2688.0f, 2688.0f);
    ck_assert_uint_eq(bits(d), bits(alpha * 0x1p25f)); /* every tie lost */
    ck_assert(exact == (double)alpha * (0x1p25 + 2.0 * (NB - 1)));
    double ratio = fabs((double)d - exact) / bound;
    printf("gemm bound: adversarial ties, n = %d: error/bound = %.4f\n", NB, ratio);
    ck_assert(ratio <= 1.0);
    ck_assert(ratio > 0.95);
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* Mixed magnitudes (all E4M3 scales, subnormal ones included), rows that
 * cancel almost entirely, and 26 accumulation orders per output. */
START_TEST(bound_holds_any_order)
{
    rng_state = 31337;
    enum { M = 6, N = 6, NB = 48, K = 16 * NB };
    static uint8_t ca[M * K], cb[N * K], sa[M * NB], sb[N * NB];
    random_operand(M, K, ca, sa, 0x01, 0x7E);
    random_operand(N, K, cb, sb, 0x01, 0x7E);
    /* rows 0 and 1 of A cancel: row 1 is row 0 negated except one element,
     * and B rows 0-1 are equal, so outputs (0, j) + (1, j) ~ 0; row 2 of A
     * alternates huge and tiny blocks. */
    memcpy(cb + K, cb, K);
    memcpy(sb + NB, sb, NB);
    for (size_t t = 0; t < K; t++) ca[K + t] = (uint8_t)(ca[t] ^ 0x8u);
    memcpy(sa + NB, sa, NB);
    ca[K + 5] = 0x1;
    for (size_t b = 0; b < NB; b++) sa[2 * NB + b] = b % 2 ? 0x7E : 0x01;
    /* row 3 of A: one block positive, the next its negation (exact cancellation pairs) */
    for (size_t b = 0; b + 1 < NB; b += 2) {
        for (size_t t = 0; t < 16; t++) {
            ca[3 * K + 16 * (b + 1) + t] = (uint8_t)(ca[3 * K + 16 * b + t] ^ 0x8u);
            cb[3 * K + 16 * (b + 1) + t] = cb[3 * K + 16 * b + t];
        }
        sa[3 * NB + b + 1] = sa[3 * NB + b];
        sb[3 * NB + b + 1] = sb[3 * NB + b];
    }
    const float amax_a = 17.5f, amax_b = 0.3f, alpha_in = 0.7f;
    nvfp4_quantized qa = make_q(M, K, ca, sa, amax_a, "te"), qb = make_q(N, K, cb, sb, amax_b, "te");
    double bound[M * N], exact[M * N];
    float d_te[M * N], d_ex[M * N];
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, alpha_in, bound, exact, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, alpha_in, NVFP4_GEMM_TE, d_te, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, alpha_in, NVFP4_GEMM_EXACT, d_ex, NULL), NVFP4_OK);
    float alpha = nvfp4_gemm_alpha(alpha_in, amax_a, amax_b);
    double worst = 0;
    long orders = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            size_t o = i * N + j;
            ck_assert(isfinite(bound[o]) && bound[o] > 0);
            ck_assert(fabs((double)d_te[o] - exact[o]) <= bound[o]);
            ck_assert(fabs((double)d_ex[o] - exact[o]) <= bound[o]);
            double w = check_orders(&qa, &qb, i, j, alpha, exact[o], bound[o], &orders);
            if (w > worst) worst = w;
        }
    printf("gemm bound: %ld simulated orders on %d outputs, largest error/bound = %.4f\n", orders, M * N, worst);
    ck_assert_int_eq(orders, 26L * M * N);
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

START_TEST(bound_special_cases)
{
    enum { K = 32 };
    uint8_t ca[K], cb[K], sa[2] = {0x38, 0x38}, sb[2] = {0x38, 0x38};
    for (int t = 0; t < K; t++) ca[t] = cb[t] = 0x2; /* ones: each partial 16 */
    double bound, exact;
    float d;
    /* alpha overflows: no guarantee */
    nvfp4_quantized qa = make_q(1, K, ca, sa, FLT_MAX, "te"), qb = make_q(1, K, cb, sb, FLT_MAX, "te");
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, &bound, &exact, NULL), NVFP4_OK);
    ck_assert(isinf(bound) && bound > 0);
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
    /* exact sum: the bound is then only the alpha rounding */
    qa = make_q(1, K, ca, sa, 1.0f, "te");
    qb = make_q(1, K, cb, sb, 1.0f, "te");
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, &bound, &exact, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, 1.0f, NVFP4_GEMM_TE, &d, NULL), NVFP4_OK);
    double alpha = nvfp4_gemm_alpha(1.0f, 1.0f, 1.0f);
    ck_assert(exact == 32.0 * alpha);
    /* docs/semantics.md: (1+2^-48) (|alpha| (gamma_1 T (1+u) + u |S|) + 2^-150 + 2^-52 |exact|), T = S = 32 */
    const double u = 0x1p-24, gamma1 = u / (1 - u);
    double expect = (alpha * (gamma1 * 32.0 * (1 + u) + u * 32.0) + 0x1p-150 + 0x1p-52 * exact) * (1 + 0x1p-48);
    ck_assert_msg(fabs(bound - expect) <= 0x1p-40 * expect, "bound %a, formula %a", bound, expect);
    ck_assert(fabs((double)d - exact) <= bound);
    /* NaN scale byte: NaN partial, no guarantee */
    qa.row.scale[1] = 0x7F;
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, &bound, &exact, NULL), NVFP4_OK);
    ck_assert(isinf(bound));
    ck_assert(isnan(exact));
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* MXFP4: 32-element blocks, UE8M0 scales, alpha = alpha_in. */
static float reference_mx(const uint8_t *ca, const uint8_t *sa, const uint8_t *cb, const uint8_t *sb, size_t k,
                          float alpha_in)
{
    float acc = 0.0f;
    for (size_t b = 0; b < k / 32; b++) {
        float dot = 0.0f;
        for (size_t t = 0; t < 32; t++) dot += nvfp4_e2m1_to_f32(ca[32 * b + t]) * nvfp4_e2m1_to_f32(cb[32 * b + t]);
        acc += dot * (nvfp4_ue8m0_to_f32(sa[b]) * nvfp4_ue8m0_to_f32(sb[b]));
    }
    return alpha_in * acc;
}

START_TEST(mxfp4)
{
    rng_state = 77;
    enum { M = 5, N = 4, K = 32 * 12, NB = K / 32 };
    static uint8_t ca[M * K], cb[N * K], sa[M * NB], sb[N * NB];
    random_operand_bw(M, K, 32, ca, sa, 110, 140);
    random_operand_bw(N, K, 32, cb, sb, 100, 150);
    for (int t = 0; t < 32; t++) ca[t] = cb[t] = 0x7; /* block 0 of (0, 0): 32 x 36 = 1152 */
    sa[0] = 127;
    sb[0] = 130;
    nvfp4_quantized qa = make_q(M, K, ca, sa, 0.0f, "mxfp4-rceil"), qb = make_q(N, K, cb, sb, 0.0f, "mxfp4-floor");
    float p[NB], d[M * N];
    double bound[M * N], exact[M * N];
    size_t n;
    ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, 0, 0, p, &n, NULL), NVFP4_OK);
    ck_assert_uint_eq(n, NB);
    ck_assert_uint_eq(bits(p[0]), bits(9216.0f)); /* 1152 * 2^0 * 2^3 */
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, 0.5f, NVFP4_GEMM_TE, d, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 0.5f, bound, exact, NULL), NVFP4_OK);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            float ref = reference_mx(ca + i * K, sa + i * NB, cb + j * K, sb + j * NB, K, 0.5f);
            ck_assert_uint_eq(bits(d[i * N + j]), bits(ref));
            ck_assert(isfinite(bound[i * N + j]));
            ck_assert(fabs((double)d[i * N + j] - exact[i * N + j]) <= bound[i * N + j]);
        }
    /* scale product 2^-254: 1152 * 2^-254 underflows fp32: rounded, no guarantee */
    qa.row.scale[0] = 0;
    qb.row.scale[0] = 0;
    qb.row.scale[NB] = 140; /* (0, 1): 2^(0 + 140 - 256) keeps its partial exact */
    ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, 0, 0, p, NULL, NULL), NVFP4_OK);
    ck_assert_uint_eq(bits(p[0]), 0u);
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 0.5f, bound, exact, NULL), NVFP4_OK);
    ck_assert(isinf(bound[0]));
    ck_assert(isfinite(bound[1]));
    /* 0xFF scale: NaN */
    qa.row.scale[0] = 0xFF;
    ck_assert_int_eq(nvfp4_gemm_partials(&qa, false, &qb, false, 0, 0, p, NULL, NULL), NVFP4_OK);
    ck_assert(isnan(p[0]));
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* ---- API --------------------------------------------------------------------- */

START_TEST(api_errors)
{
    uint8_t c[48 * 2] = {0}, s[6] = {0x38, 0x38, 0x38, 0x38, 0x38, 0x38};
    nvfp4_quantized a = make_q(2, 32, c, s, 1.0f, "te"), b = make_q(2, 48, c, s, 1.0f, "te");
    float d[4];
    double bd[4];
    nvfp4_error e;
    ck_assert_int_eq(nvfp4_gemm(&a, false, &b, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_EINVAL);
    ck_assert(strstr(e.message, "K differs") != NULL);
    ck_assert_int_eq(nvfp4_gemm_error_bound(&a, false, &b, false, 1.0f, bd, NULL, &e), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_gemm(&a, true, &a, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_EINVAL); /* no columnwise */
    ck_assert(strstr(e.message, "columnwise") != NULL);
    ck_assert_int_eq(nvfp4_gemm(&a, false, &a, false, 1.0f, (nvfp4_gemm_order)7, d, &e), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_gemm(&a, false, NULL, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_gemm_partials(&a, false, &a, false, 2, 0, NULL, NULL, &e), NVFP4_EINVAL);
    nvfp4_quantized mx = make_q(2, 32, c, s, 0.0f, "mxfp4-floor");
    ck_assert_int_eq(nvfp4_gemm(&mx, false, &mx, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm(&a, false, &mx, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_EINVAL);
    ck_assert(strstr(e.message, "one format") != NULL);
    nvfp4_quantized mx8 = make_q(2, 32, c, s, 0.0f, "mxfp8");
    ck_assert_int_eq(nvfp4_gemm(&mx8, false, &mx8, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_EUNSUPPORTED);
    ck_assert(strstr(e.message, "mxfp8") != NULL);
    nvfp4_quantized_free(&mx8);
    /* the columnwise orientation is taken when asked */
    nvfp4_quantized col = make_q(2, 32, c, s, 1.0f, "te");
    col.col = col.row;
    memset(&col.row, 0, sizeof col.row);
    col.has_col = true;
    col.has_row = false;
    ck_assert_int_eq(nvfp4_gemm(&col, true, &a, false, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_OK);
    nvfp4_quantized_free(&a);
    nvfp4_quantized_free(&b);
    nvfp4_quantized_free(&mx);
    nvfp4_quantized_free(&col);
}
END_TEST

START_TEST(thread_count_independent)
{
    rng_state = 3;
    enum { M = 64, N = 64, K = 16 * 16 };
    static uint8_t ca[M * K], cb[N * K], sa[M * K / 16], sb[N * K / 16];
    random_operand(M, K, ca, sa, 0x01, 0x7E);
    random_operand(N, K, cb, sb, 0x01, 0x7E);
    nvfp4_quantized qa = make_q(M, K, ca, sa, 5.0f, "te"), qb = make_q(N, K, cb, sb, 6.0f, "te");
    static float d1[M * N], d2[M * N];
    static double b1[M * N], b2[M * N];
    omp_set_num_threads(1);
    ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, 1.0f, NVFP4_GEMM_TE, d1, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, b1, NULL, NULL), NVFP4_OK);
    const int threads[2] = {2, 7};
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(threads[t]);
        ck_assert_int_eq(nvfp4_gemm(&qa, false, &qb, false, 1.0f, NVFP4_GEMM_TE, d2, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_gemm_error_bound(&qa, false, &qb, false, 1.0f, b2, NULL, NULL), NVFP4_OK);
        ck_assert(memcmp(d1, d2, sizeof d1) == 0);
        ck_assert(memcmp(b1, b2, sizeof b1) == 0);
    }
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
}
END_TEST

/* ---- with the quantizer -------------------------------------------------------- */

static double gauss(void)
{
    double u1 = ((double)(rng() >> 11) + 0.5) * 0x1p-53, u2 = (double)(rng() >> 11) * 0x1p-53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Wgrad-shaped: X [K, M] and dY [K, N] quantized columnwise (with and
 * without RHT) give [M, K] and [N, K] operands; D = X^T dY. The te result
 * stays within the bound of the exact one, and RHT'd operands give the same
 * product up to quantization noise (R R^T = I). */
START_TEST(with_quantizer)
{
    rng_state = 11;
    enum { K = 256, M = 8, N = 12 };
    static float x[K * M], dy[K * N];
    for (size_t i = 0; i < K * M; i++) x[i] = (float)gauss();
    for (size_t i = 0; i < K * N; i++) dy[i] = (float)gauss() * 0.01f;
    double ref[M * N];
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t k = 0; k < K; k++) s += (double)x[k * M + i] * dy[k * N + j];
            ref[i * N + j] = s;
        }
    for (int rht = 0; rht < 2; rht++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.rowwise = false;
        o.columnwise = true;
        o.rht = rht != 0;
        nvfp4_quantized qx, qy;
        nvfp4_error e;
        ck_assert_msg(nvfp4_quantize(x, NVFP4_DTYPE_F32, K, M, &o, &qx, &e) == NVFP4_OK, "%s", e.message);
        ck_assert_msg(nvfp4_quantize(dy, NVFP4_DTYPE_F32, K, N, &o, &qy, &e) == NVFP4_OK, "%s", e.message);
        float d[M * N];
        double bound[M * N], exact[M * N];
        ck_assert_int_eq(nvfp4_gemm(&qx, true, &qy, true, 1.0f, NVFP4_GEMM_TE, d, &e), NVFP4_OK);
        ck_assert_int_eq(nvfp4_gemm_error_bound(&qx, true, &qy, true, 1.0f, bound, exact, &e), NVFP4_OK);
        double num = 0, den = 0;
        for (size_t o2 = 0; o2 < M * N; o2++) {
            ck_assert(fabs((double)d[o2] - exact[o2]) <= bound[o2]);
            num += (d[o2] - ref[o2]) * (d[o2] - ref[o2]);
            den += ref[o2] * ref[o2];
        }
        /* NVFP4 of Gaussian data: about 10% relative error per element, so the
         * product's relative Frobenius error sits far below 0.5 unless the
         * operands were misread (wrong orientation, alpha or nibble order). */
        ck_assert_msg(sqrt(num / den) < 0.5, "rht=%d: relative error %g", rht, sqrt(num / den));
        nvfp4_quantized_free(&qx);
        nvfp4_quantized_free(&qy);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("gemm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, alpha_constant);
    tcase_add_test(tc, block_partials_exact);
    tcase_add_test(tc, te_and_exact_orders);
    tcase_add_test(tc, bound_is_tight);
    tcase_add_test(tc, bound_holds_any_order);
    tcase_add_test(tc, bound_special_cases);
    tcase_add_test(tc, mxfp4);
    tcase_add_test(tc, api_errors);
    tcase_add_test(tc, thread_count_independent);
    tcase_add_test(tc, with_quantizer);
    suite_add_tcase(s, tc);
    return nvfp4_check_run(s);
}
