/* check_simd.c - the fast CPU path against the scalar reference: every SIMD
 * variant the CPU has, on many random shapes and seeds with hard values
 * (NaN, +-Inf, -0, subnormals, exact E2M1 ties, underflowing and saturating
 * block scales, RHT groups whose binary64 sums would be inexact), must give
 * byte-identical codes, scales, amaxes and dequantized values as
 * nvfp4_quantize / nvfp4_dequantize / nvfp4_scale_swizzle with the scalar
 * kernels, and as the scalar variant of the fast path. Variants the CPU
 * lacks are skipped with a message. Also: the bytes do not depend on the
 * OpenMP thread count, and the variant selection API. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/quant.h"
#include "nvfp4/simd.h"
#include "core/hadamard.h"
#include "quant/quant_internal.h"
#include "recipes/recipe.h"
#include "simd/simd_kernels.h"

/* ---- random tensors ------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static float gauss(void)
{
    double u = unif(), v = unif();
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Element of a tile of kind k (tiles are 16x16 so both orientations see
 * every kind). */
static float draw(int kind, int specials, int exp_shift)
{
    if (specials && rnd() % 64 == 0) {
        switch (rnd() % 6) {
        case 0: return NAN;
        case 1: return -0.0f;
        case 2: return f32_bits(0x80000001u);     /* -smallest subnormal */
        case 3: return f32_bits(0x7FC00001u | (uint32_t)(rnd() & 0x80000000u)); /* NaN, either sign */
        case 4: return specials > 1 ? INFINITY : 0.0f;
        default: return specials > 1 ? -INFINITY : 1.0f;
        }
    }
    switch (kind) {
    case 0: return 0.0f;                                            /* zero tile */
    case 1: return ldexpf(gauss(), -135 + (int)(rnd() % 10));      /* subnormal range */
    case 2: return (float)((int)(rnd() % 49) - 24) * 0.25f;         /* E2M1 grid and midpoints */
    case 3: return ldexpf(gauss(), (int)(rnd() % 200) - 100);       /* wild exponents (RHT fallback) */
    case 4: return ldexpf(gauss(), 120);                           /* huge */
    case 5: return f32_bits((uint32_t)rnd());                      /* any bit pattern */
    default: return ldexpf(gauss(), exp_shift + (int)(rnd() % 9) - 4);
    }
}

typedef struct {
    size_t rows, cols;
    float *x;
    uint16_t *xb; /* bf16 view (RN of x) */
} tensor;

static void tensor_make(tensor *t, size_t rows, size_t cols, int specials)
{
    t->rows = rows;
    t->cols = cols;
    t->x = malloc(rows * cols * sizeof(float));
    t->xb = malloc(rows * cols * sizeof(uint16_t));
    int shift = (int)(rnd() % 40) - 20;
    size_t tr = (rows + 15) / 16, tc = (cols + 15) / 16;
    int *kind = malloc(tr * tc * sizeof(int));
    for (size_t i = 0; i < tr * tc; i++) {
        unsigned k = (unsigned)(rnd() % 16);
        kind[i] = k < 6 ? (int)k : 6;
        if (!specials && kind[i] == 5) kind[i] = 6; /* bit patterns hold NaN/Inf */
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            float v = draw(kind[(r / 16) * tc + c / 16], specials, shift);
            t->x[r * cols + c] = v;
            t->xb[r * cols + c] = nvfp4_bf16_from_f32(v);
        }
    /* sometimes the tensor amax is exactly 2688, so S_enc = 1 and the grid
     * tiles hit E2M1 ties exactly */
    if (rnd() % 3 == 0) t->x[rnd() % (rows * cols)] = 2688.0f;
    free(kind);
}

static void tensor_free(tensor *t)
{
    free(t->x);
    free(t->xb);
}

/* ---- helpers ------------------------------------------------------------- */

static bool use_variant(nvfp4_simd_variant v)
{
    if (!nvfp4_simd_available(v)) return false;
    ck_assert_int_eq(nvfp4_simd_set(v, NULL), NVFP4_OK);
    return true;
}

static void assert_bytes(const uint8_t *a, const uint8_t *b, size_t n, const char *what, nvfp4_simd_variant v,
                         size_t rows, size_t cols)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            ck_abort_msg("%s: variant %s differs from the scalar reference at byte %zu of %zu (0x%02x vs 0x%02x), "
                         "shape %zux%zu",
                         what, nvfp4_simd_name(v), i, n, a[i], b[i], rows, cols);
}

static void assert_f32_bits(const float *a, const float *b, size_t n, const char *what, nvfp4_simd_variant v)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t ua, ub;
        memcpy(&ua, a + i, 4);
        memcpy(&ub, b + i, 4);
        if (ua != ub)
            ck_abort_msg("%s: variant %s differs at element %zu (0x%08x vs 0x%08x)", what, nvfp4_simd_name(v), i, ua, ub);
    }
}

/* The library's scalar reference path (the scalar variant is active, so
 * the fast path declines every plan). */
static void reference(const tensor *t, int bf16, const nvfp4_quant_opts *o, nvfp4_quantized *q)
{
    nvfp4_error err;
    nvfp4_simd_variant active = nvfp4_simd_active();
    nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL);
    nvfp4_status st = nvfp4_quantize(bf16 ? (const void *)t->xb : (const void *)t->x,
                                     bf16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, t->rows, t->cols, o, q, &err);
    nvfp4_simd_set(active, NULL);
    ck_assert_msg(st == NVFP4_OK, "reference quantize failed: %s", err.message);
}

static const int sr_modes[2] = {0, 1};

/* ---- rowwise -------------------------------------------------------------- */

static void check_rowwise_case(unsigned seed, int bf16, int tile16, int sr)
{
    rng_state = seed * 7919u + 17u;
    size_t rows = 16 * (1 + rnd() % 6), cols = 16 * (1 + rnd() % 40);
    if (!tile16 && rnd() % 2) rows = 1 + rnd() % 40;
    tensor t;
    tensor_make(&t, rows, cols, (int)(rnd() % 3));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.block = tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
    o.rounding = sr ? NVFP4_SR : NVFP4_RN;
    o.seed = rnd();
    o.offset = rnd() % 4 ? rnd() % 1000 : rnd();
    nvfp4_quantized ref;
    reference(&t, bf16, &o, &ref);
    const void *x = bf16 ? (const void *)t.xb : (const void *)t.x;
    uint8_t *data = malloc(rows * cols / 2), *scale = malloc(rows * cols / 16);
    nvfp4_simd_sr key = {o.seed, o.offset};
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        float amax = nvfp4_simd_amax(x, bf16, rows * cols);
        ck_assert_msg(memcmp(&amax, &ref.row.amax, 4) == 0, "amax: variant %s gives %a, reference %a",
                      nvfp4_simd_name((nvfp4_simd_variant)v), (double)amax, (double)ref.row.amax);
        memset(data, 0xA5, rows * cols / 2);
        memset(scale, 0xA5, rows * cols / 16);
        nvfp4_simd_te_rowwise(x, bf16, rows, cols, amax, tile16, sr ? &key : NULL, data, scale);
        assert_bytes(data, ref.row.data, rows * cols / 2, "rowwise codes", (nvfp4_simd_variant)v, rows, cols);
        assert_bytes(scale, ref.row.scale, rows * cols / 16, "rowwise scales", (nvfp4_simd_variant)v, rows, cols);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    free(data);
    free(scale);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}

START_TEST(rowwise_1x16_f32)
{
    for (unsigned s = 0; s < 40; s++) check_rowwise_case(1000u * (unsigned)_i + s, 0, 0, sr_modes[_i]);
}
END_TEST

START_TEST(rowwise_1x16_bf16)
{
    for (unsigned s = 0; s < 20; s++) check_rowwise_case(2000u * (unsigned)_i + s + 77u, 1, 0, sr_modes[_i]);
}
END_TEST

START_TEST(rowwise_16x16)
{
    for (unsigned s = 0; s < 30; s++) check_rowwise_case(3000u * (unsigned)_i + s + 5u, (int)(s & 1u), 1, sr_modes[_i]);
}
END_TEST

/* ---- columnwise (+RHT) ---------------------------------------------------- */

static void check_columnwise_case(unsigned seed, int bf16, int tile16, int sr, int rht)
{
    rng_state = seed * 104729u + 3u;
    size_t rows = 16 * (1 + rnd() % 6), cols = tile16 ? 16 * (1 + rnd() % 20) : 1 + rnd() % 300;
    /* a quarter of the cases: rows a multiple of 128 on 64-byte aligned
     * outputs, so each 8-group work item fills whole output lines (the
     * kernels' streaming-store path) */
    if (rnd() % 4 == 0) rows = 128 * (1 + rnd() % 2);
    tensor t;
    tensor_make(&t, rows, cols, (int)(rnd() % 3));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = false;
    o.columnwise = true;
    o.block = tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
    o.rounding = sr ? NVFP4_SR : NVFP4_RN;
    o.seed = rnd();
    o.offset = rnd() % 1000;
    o.rht = rht != 0;
    o.rht_signs = (nvfp4_rht_signs)(rnd() % 3);
    o.rht_sign_seed = rnd();
    o.rht_fp32 = rnd() % 4 == 0;
    nvfp4_quantized ref;
    reference(&t, bf16, &o, &ref);

    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = bf16 ? (const void *)t.xb : (const void *)t.x;
    j.bf16 = bf16;
    j.rows = rows;
    j.cols = cols;
    j.tile16 = tile16;
    j.rht = rht;
    j.rht_round_bf16 = !o.rht_fp32;
    switch (o.rht_signs) { /* as nvfp4_rht_sign_mask derives the mask */
    case NVFP4_RHT_SIGNS_TE: nvfp4_core_rht_mask_te(j.rht_mask); break;
    case NVFP4_RHT_SIGNS_SEEDED: nvfp4_core_rht_mask_seeded(o.rht_sign_seed, j.rht_mask); break;
    default: nvfp4_core_rht_mask_none(j.rht_mask); break;
    }
    nvfp4_simd_sr key = {o.seed, o.offset + 1};
    j.sr = sr ? &key : NULL;
    j.data = aligned_alloc(64, (rows * cols / 2 + 64) / 64 * 64);
    j.scale = aligned_alloc(64, (rows * cols / 16 + 64) / 64 * 64);
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        float amax = rht ? nvfp4_simd_rht_amax(&j) : nvfp4_simd_amax(j.x, bf16, rows * cols);
        ck_assert_msg(memcmp(&amax, &ref.col.amax, 4) == 0, "columnwise amax: variant %s gives %a, reference %a",
                      nvfp4_simd_name((nvfp4_simd_variant)v), (double)amax, (double)ref.col.amax);
        nvfp4_simd_te_consts_init(&j.k, amax);
        memset(j.data, 0xA5, rows * cols / 2);
        memset(j.scale, 0xA5, rows * cols / 16);
        nvfp4_simd_te_columnwise(&j);
        assert_bytes(j.data, ref.col.data, rows * cols / 2, rht ? "RHT columnwise codes" : "columnwise codes",
                     (nvfp4_simd_variant)v, rows, cols);
        assert_bytes(j.scale, ref.col.scale, rows * cols / 16, rht ? "RHT columnwise scales" : "columnwise scales",
                     (nvfp4_simd_variant)v, rows, cols);
        if (rht) { /* the one-transform path through a stored bf16/fp32 temporary */
            memset(j.data, 0xA5, rows * cols / 2);
            memset(j.scale, 0xA5, rows * cols / 16);
            float a2 = nvfp4_simd_te_columnwise_rht(&j, nvfp4_simd_rht_transforms_twice(&j));
            ck_assert(memcmp(&a2, &ref.col.amax, 4) == 0);
            assert_bytes(j.data, ref.col.data, rows * cols / 2, "stored-RHT codes", (nvfp4_simd_variant)v, rows, cols);
            assert_bytes(j.scale, ref.col.scale, rows * cols / 16, "stored-RHT scales", (nvfp4_simd_variant)v, rows, cols);
        }
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    free(j.data);
    free(j.scale);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}

START_TEST(columnwise_1x16)
{
    for (unsigned s = 0; s < 30; s++) check_columnwise_case(5000u * (unsigned)_i + s, (int)(s % 3 == 0), 0, sr_modes[_i], 0);
}
END_TEST

START_TEST(columnwise_16x16)
{
    for (unsigned s = 0; s < 20; s++) check_columnwise_case(6000u * (unsigned)_i + s, (int)(s & 1u), 1, sr_modes[_i], 0);
}
END_TEST

START_TEST(columnwise_rht)
{
    for (unsigned s = 0; s < 30; s++) check_columnwise_case(7000u * (unsigned)_i + s, (int)(s % 3 == 0), 0, sr_modes[_i], 1);
}
END_TEST

/* A group whose binary64 butterfly would round: 1 + 2^-24 + 2^-55 needs 56
 * bits, so a double sum drops 2^-55 and the fp32 rounding sees a tie (0.25)
 * instead of a value just above it (0.25 + 2^-25). The exponent spread (55)
 * must send it to the exact accumulator; the amax (that output) shows it. */
START_TEST(rht_double_rounding_hazard)
{
    size_t rows = 16, cols = 16;
    tensor t;
    rng_state = 99;
    tensor_make(&t, rows, cols, 0);
    for (size_t i = 0; i < rows * cols; i++) t.x[i] = 0.0f;
    t.x[0 * cols + 3] = 1.0f;
    t.x[1 * cols + 3] = ldexpf(1.0f, -24);
    t.x[2 * cols + 3] = ldexpf(1.0f, -55);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = false;
    o.columnwise = true;
    o.rht = true;
    o.rht_signs = NVFP4_RHT_SIGNS_NONE;
    o.rht_fp32 = true;
    nvfp4_quantized ref;
    reference(&t, 0, &o, &ref);
    ck_assert_float_eq(ref.col.amax, 0.25f + ldexpf(1.0f, -25));
    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = t.x;
    j.rows = rows;
    j.cols = cols;
    j.rht = 1;
    j.rht_round_bf16 = 0;
    uint8_t data[128], scale[16];
    j.data = data;
    j.scale = scale;
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        float a = nvfp4_simd_rht_amax(&j);
        ck_assert_msg(memcmp(&a, &ref.col.amax, 4) == 0, "variant %s: RHT amax %a, expected %a",
                      nvfp4_simd_name((nvfp4_simd_variant)v), (double)a, (double)ref.col.amax);
        a = nvfp4_simd_te_columnwise_rht(&j, nvfp4_simd_rht_transforms_twice(&j));
        ck_assert(memcmp(&a, &ref.col.amax, 4) == 0);
        assert_bytes(data, ref.col.data, 128, "RHT hazard codes", (nvfp4_simd_variant)v, rows, cols);
        assert_bytes(scale, ref.col.scale, 16, "RHT hazard scales", (nvfp4_simd_variant)v, rows, cols);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}
END_TEST

/* RHT-16 tiles whose columns all have the same exponent spread S (largest
 * over smallest nonzero |x|), for S on both sides of every limit of the
 * vector paths (simd_avx512.c: 19 for the int32 butterfly of bf16 inputs,
 * 12 for one fp32 butterfly of bf16 inputs, 17
 * and 33 for the hi/lo splits of fp32 and bf16 inputs (integer hi part, or
 * fp32 for tiles of tiny values), 25 for binary64,
 * 75 for the binary64 split, beyond: the scalar accumulator). Each column
 * is c * s[i] * H[i][j0] * (1 + r_i) plus one element of exponent E - S: the
 * outputs j != j0 cancel down to the small terms, so their roundings
 * depend on the lowest bits and an inexact partial sum shows (loosening
 * any of those limits by one fails here). The transform itself (fp32 and
 * bf16 outputs) must equal nvfp4_core_rht_forward_group's. */
static float spread_elem(int bf16, int e, int max_frac_bits)
{
    float m = 1.0f + (float)(rnd() & 0x3FFFFFu) * 0x1p-23f * ldexpf(1.0f, -(int)(rnd() % (unsigned)max_frac_bits));
    float v = ldexpf(m, e);
    return bf16 ? nvfp4_bf16_to_f32(nvfp4_bf16_from_f32(v)) : v;
}

START_TEST(rht_spread_limits)
{
    static const int spreads[] = {0, 5, 11, 12, 13, 16, 17, 18, 19, 20, 24, 25, 26, 32, 33, 34, 50, 74, 75, 76, 90};
    const size_t rows = 16, cols = 64;
    float *x = malloc(rows * cols * sizeof(float)), *out = malloc(rows * cols * sizeof(float));
    uint16_t *xb = malloc(rows * cols * sizeof(uint16_t)), *outb = malloc(rows * cols * sizeof(uint16_t));
    rng_state = 4242;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (size_t si = 0; si < sizeof spreads / sizeof spreads[0]; si++)
            for (int trial = 0; trial < 40; trial++) {
                int sp = spreads[si];
                uint32_t mask[4];
                if (trial % 3 == 0) nvfp4_core_rht_mask_te(mask);
                else if (trial % 3 == 1) nvfp4_core_rht_mask_none(mask);
                else nvfp4_core_rht_mask_seeded(rnd(), mask);
                for (size_t c = 0; c < cols; c++) {
                    unsigned j0 = (unsigned)(rnd() % 16), small = (unsigned)(rnd() % 16);
                    /* every 4th trial: tiny columns (smallest exponent -124 .. -112), around the
                     * limits of the integer paths (fp32: Emax >= 22, bf16: Emin >= 10) */
                    int e = trial % 4 == 3 ? -124 + sp + (int)(rnd() % 13)
                                           : (int)(rnd() % 200) - 100 + (sp > 60 ? 40 : 0);
                    for (unsigned i = 0; i < 16; i++) {
                        int neg = nvfp4_core_hadamard_neg(i, j0) ^ nvfp4_core_rht_sign_neg(mask, i);
                        float v = i == small ? spread_elem(bf16, e - sp, 1) : spread_elem(bf16, e, 1 + (int)(rnd() % 23));
                        if (i == small && rnd() % 2) v = -v;
                        if (i != small && i != j0 % 16 && rnd() % 16 == 0) v = 0.0f; /* zeros do not count */
                        x[i * cols + c] = neg && i != small ? -v : v;
                    }
                    /* the largest magnitude sets E: keep one element at exactly 2^e */
                    x[((small + 1) % 16) * cols + c] = ldexpf(1.0f, e);
                }
                for (size_t i = 0; i < rows * cols; i++) xb[i] = nvfp4_bf16_from_f32(x[i]);
                nvfp4_simd_col_job j;
                memset(&j, 0, sizeof j);
                j.x = bf16 ? (const void *)xb : (const void *)x;
                j.bf16 = bf16;
                j.rows = rows;
                j.cols = cols;
                j.rht = 1;
                memcpy(j.rht_mask, mask, sizeof mask);
                for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
                    if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
                    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for((nvfp4_simd_variant)v);
                    for (int rb = 0; rb < 2; rb++) {
                        j.rht_round_bf16 = rb;
                        float am = kn->rht_apply(&j, 0, 1, rb ? (void *)outb : (void *)out), am2 = kn->rht_amax(&j, 0, 1);
                        float ref_am = 0.0f;
                        for (size_t c = 0; c < cols; c++) {
                            float in[16], y[16];
                            for (unsigned i = 0; i < 16; i++)
                                in[i] = bf16 ? nvfp4_bf16_to_f32(xb[i * cols + c]) : x[i * cols + c];
                            nvfp4_core_rht_forward_group(in, y, 16, mask, rb);
                            for (unsigned i = 0; i < 16; i++) ref_am = fmaxf(ref_am, fabsf(y[i]));
                            for (unsigned i = 0; i < 16; i++) {
                                float got = rb ? nvfp4_bf16_to_f32(outb[i * cols + c]) : out[i * cols + c];
                                if (memcmp(&got, &y[i], 4) != 0)
                                    ck_abort_msg("variant %s, %s input, spread %d, %s output: column %zu output %u is "
                                                 "%a, reference %a",
                                                 nvfp4_simd_name((nvfp4_simd_variant)v), bf16 ? "bf16" : "fp32", sp,
                                                 rb ? "bf16" : "fp32", c, i, (double)got, (double)y[i]);
                            }
                        }
                        ck_assert_msg(memcmp(&am, &ref_am, 4) == 0 && memcmp(&am2, &ref_am, 4) == 0,
                                      "variant %s, spread %d: RHT amax %a / %a, reference %a",
                                      nvfp4_simd_name((nvfp4_simd_variant)v), sp, (double)am, (double)am2, (double)ref_am);
                    }
                }
            }
    free(x);
    free(out);
    free(xb);
    free(outb);
}
END_TEST

/* Groups just beyond the limits of the fp32 paths, where those paths
 * would round a partial sum (found by search against the exact sum; values
 * are u_i = x_i / 4, signs none): each output must still be the exact sum
 * rounded once, so these lanes must take a wider path. `bad` is the output
 * that the too-narrow path gets wrong and `want` its correct value. */
typedef struct {
    const char *what;
    int bf16;
    float u[16];
    unsigned bad;
    float want, naive;
} rht_edge;

START_TEST(rht_fp32_path_edges)
{
    const float a = 1.0f + 0x1p-20f, b = -(1.0f - 0x1p-20f);
    const float A = 0x1p-13f + 0x1p-20f, B = 0x1.fcp-14f;
    const rht_edge edges[] = {
        /* one fp32 butterfly of bf16 inputs, spread 14: an 8-term partial sum rounds */
        {"bf16 butterfly, spread 14", 1,
         {0x1.46p-14f, 0x1.eap+0f, 0x1.4p-7f, 0x1.7p-14f, 0x1.ep+0f, 0x1.6ap+0f, 0x1.bap+0f, 0x1.5ap+0f, 0x1.cp+0f,
          -0x1.1ap-13f, 0x1.6ep+0f, -0x1.78p-14f, 0x1.ep-14f, -0x1.bcp-14f, -0x1.d4p-14f, 0x1.9ep-6f},
         0, 0.0f, 0.0f},
        /* fp32 hi/lo split of fp32 inputs, spread 18: the lo sum needs 25 bits */
        {"fp32 split, spread 18", 0,
         {0x1p-18f + 0x1p-41f, -(0x1.8p-17f + 0x1p-40f), a, a, a, b, b, b, a, a, a, a, b, b, b, b}, 0,
         0x1.7ffffep-18f, 0x1.8p-18f},
        /* the split of bf16 inputs, spread 34 */
        {"bf16 split, spread 34", 1,
         {-A, B, -0x1.cap-34f, -A, A, -1.0f, -0x1.dcp-15f, A, -B, 1.0f, -B, -A, B, -A, B, -B}, 12, 0.0f, 0.0f},
    };
    uint32_t none[4];
    nvfp4_core_rht_mask_none(none);
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
        const rht_edge *ed = &edges[k];
        /* 16 identical columns, so the whole tile has this spread */
        float x[256], out[256], in[16], y[16];
        uint16_t xb[256];
        for (unsigned i = 0; i < 16; i++) {
            in[i] = 4.0f * ed->u[i];
            for (unsigned c = 0; c < 16; c++) {
                x[16 * i + c] = in[i];
                xb[16 * i + c] = nvfp4_bf16_from_f32(in[i]);
            }
            if (ed->bf16) ck_assert(nvfp4_bf16_to_f32(xb[16 * i]) == in[i]);
        }
        nvfp4_core_rht_forward_group(in, y, 16, none, 0);
        if (ed->want != 0.0f) {
            ck_assert_msg(y[ed->bad] == ed->want, "%s: reference %a", ed->what, (double)y[ed->bad]);
            ck_assert(ed->naive != ed->want);
        }
        nvfp4_simd_col_job j;
        memset(&j, 0, sizeof j);
        j.x = ed->bf16 ? (const void *)xb : (const void *)x;
        j.bf16 = ed->bf16;
        j.rows = 16;
        j.cols = 16;
        j.rht = 1;
        memcpy(j.rht_mask, none, sizeof none);
        for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
            if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
            (void)nvfp4_simd_kernels_for((nvfp4_simd_variant)v)->rht_apply(&j, 0, 1, out);
            for (unsigned i = 0; i < 16; i++)
                for (unsigned c = 0; c < 16; c++)
                    ck_assert_msg(memcmp(&out[16 * i + c], &y[i], 4) == 0, "%s: variant %s, output %u: %a, reference %a",
                                  ed->what, nvfp4_simd_name((nvfp4_simd_variant)v), i, (double)out[16 * i + c],
                                  (double)y[i]);
        }
    }
}
END_TEST

/* Above the 16 MiB temporary limit nvfp4_simd_te_columnwise_rht transforms
 * twice instead of storing the transform: same bytes. */
START_TEST(rht_large_two_transforms)
{
    size_t rows = 2048, cols = 4352; /* bf16 temporary 17.8 MB */
    tensor t;
    rng_state = 2024;
    tensor_make(&t, rows, cols, 1);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = false;
    o.columnwise = true;
    o.rht = true;
    o.rounding = NVFP4_SR;
    o.seed = 77;
    nvfp4_quantized ref;
    reference(&t, 0, &o, &ref);
    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = t.x;
    j.rows = rows;
    j.cols = cols;
    j.rht = 1;
    j.rht_round_bf16 = 1;
    nvfp4_core_rht_mask_te(j.rht_mask);
    nvfp4_simd_sr key = {o.seed, o.offset + 1};
    j.sr = &key;
    j.data = malloc(rows * cols / 2);
    j.scale = malloc(rows * cols / 16);
    for (int v = NVFP4_SIMD_AVX2; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        float a = nvfp4_simd_te_columnwise_rht(&j, nvfp4_simd_rht_transforms_twice(&j));
        ck_assert(memcmp(&a, &ref.col.amax, 4) == 0);
        assert_bytes(j.data, ref.col.data, rows * cols / 2, "large RHT codes", (nvfp4_simd_variant)v, rows, cols);
        assert_bytes(j.scale, ref.col.scale, rows * cols / 16, "large RHT scales", (nvfp4_simd_variant)v, rows, cols);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    free(j.data);
    free(j.scale);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}
END_TEST

/* ---- dequantize and swizzle ------------------------------------------------ */

START_TEST(dequantize_and_swizzle)
{
    /* the last case's 16 MiB output is written with streaming stores
     * (simd_driver.c, DEQUANT_STREAM_MIN_BYTES), the others with cached ones */
    for (unsigned s = 0; s < 31; s++) {
        rng_state = 9000u + s;
        size_t rows = 1 + rnd() % 200, cols = 16 * (1 + rnd() % 40);
        if (s == 30) rows = cols = 2048;
        tensor t;
        tensor_make(&t, rows, cols, (int)(rnd() % 3));
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        nvfp4_quantized ref;
        reference(&t, 0, &o, &ref);
        /* 64-byte aligned, as the streaming stores need */
        float *want = malloc(rows * cols * sizeof(float)), *got = aligned_alloc(64, rows * cols * sizeof(float));
        ck_assert_int_eq(nvfp4_dequantize(&ref, false, want, NULL), NVFP4_OK);
        size_t sc = cols / 16, nswz = nvfp4_swizzled_size(rows, sc);
        uint8_t *swz_ref = malloc(nswz), *swz = malloc(nswz);
        nvfp4_scale_to_layout(NVFP4_SCALE_LAYOUT_128X4, ref.row.scale, rows, sc, swz_ref);
        /* The dequantize leaves serve tensors whose every value is finite;
         * the others (a NaN amax or scale byte, amax * 448 overflowing) take
         * the reference path, whose NaNs are all the canonical 0x7FC00000. */
        bool finite = isfinite(ref.row.amax * 448.0f);
        for (size_t i = 0; i < rows * sc; i++) finite = finite && (ref.row.scale[i] & 0x7Fu) != 0x7Fu;
        for (size_t i = 0; i < rows * cols; i++)
            if (isnan(want[i])) {
                uint32_t u;
                memcpy(&u, &want[i], 4);
                ck_assert_uint_eq(u, 0x7FC00000u);
            }
        for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
            if (!use_variant((nvfp4_simd_variant)v)) continue;
            memset(got, 0xA5, rows * cols * sizeof(float));
            nvfp4_simd_te_dequantize(ref.row.data, ref.row.scale, rows, cols, ref.row.amax, got);
            if (finite) assert_f32_bits(got, want, rows * cols, "dequantize", (nvfp4_simd_variant)v);
            memset(got, 0xA5, rows * cols * sizeof(float));
            ck_assert_int_eq(nvfp4_quant_fast_dequantize(&ref, false, got), finite && v != NVFP4_SIMD_SCALAR);
            if (finite && v != NVFP4_SIMD_SCALAR)
                assert_f32_bits(got, want, rows * cols, "dequantize fast path", (nvfp4_simd_variant)v);
            memset(swz, 0xA5, nswz);
            nvfp4_simd_scale_swizzle(ref.row.scale, rows, sc, swz);
            assert_bytes(swz, swz_ref, nswz, "swizzle", (nvfp4_simd_variant)v, rows, sc);
            }
        nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
        free(want);
        free(got);
        free(swz_ref);
        free(swz);
        nvfp4_quantized_free(&ref);
        tensor_free(&t);
    }
}
END_TEST

/* The columnwise tile's RN encoder (avx512: one rounding per magnitude, the
 * signs packed apart, NaN tiles on the general path) at every E2M1 boundary
 * and its 8 neighbours each side, both signs: rows 15 and 31 hold +-6, so
 * with tensor amax 2688 every block scale is 0x38 (1.0) and the encode
 * factor is exactly 1, i.e. each code must be nvfp4_core_e2m1_encode's of
 * x itself. One tile also holds a NaN (the block amax ignores it). */
START_TEST(columnwise_encoder_grid)
{
    enum { ROWS = 32, COLS = 256 };
    static const float bounds[] = {0.0f, 0x1p-149f, 0x1p-126f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f,
                                   1.5f, 1.75f,      2.0f,      2.5f,  3.0f, 3.5f,  4.0f, 5.0f, 6.0f};
    float *x = malloc(ROWS * COLS * sizeof(float));
    size_t k = 0, nvals = 0;
    float vals[sizeof bounds / sizeof bounds[0] * 17 * 2];
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++)
        for (int d = -8; d <= 8; d++)
            for (int sgn = 0; sgn < 2; sgn++) {
                uint32_t u;
                memcpy(&u, &bounds[b], 4);
                u = (uint32_t)((int64_t)u + d);
                if (u & 0x80000000u) continue; /* below +0 */
                vals[nvals++] = f32_bits(u | (sgn ? 0x80000000u : 0u));
            }
    for (size_t r = 0; r < ROWS; r++)
        for (size_t c = 0; c < COLS; c++)
            x[r * COLS + c] = (r % 16 == 15) ? ((c & 1u) ? -6.0f : 6.0f) : vals[k++ % nvals];
    x[3 * COLS + 21] = f32_bits(0xFFC00001u); /* a NaN in the second tile */
    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.rows = ROWS;
    j.cols = COLS;
    j.data = malloc(ROWS * COLS / 2);
    j.scale = malloc(ROWS * COLS / 16);
    nvfp4_simd_te_consts_init(&j.k, 2688.0f);
    for (int tile16 = 0; tile16 < 2; tile16++) {
        j.tile16 = tile16;
        for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
            if (!use_variant((nvfp4_simd_variant)v)) continue;
            memset(j.data, 0xA5, ROWS * COLS / 2);
            memset(j.scale, 0xA5, ROWS * COLS / 16);
            nvfp4_simd_te_columnwise(&j);
            for (size_t i = 0; i < ROWS * COLS / 16; i++)
                ck_assert_msg(j.scale[i] == 0x38, "variant %s: scale %zu is 0x%02x, not 0x38",
                              nvfp4_simd_name((nvfp4_simd_variant)v), i, j.scale[i]);
            for (size_t r = 0; r < ROWS; r++)
                for (size_t c = 0; c < COLS; c++) {
                    float xv = x[r * COLS + c];
                    uint8_t want = nvfp4_e2m1_from_f32(xv, NVFP4_RN, 0);
                    uint8_t got = (uint8_t)((j.data[(c * ROWS + r) / 2] >> (4 * (r & 1u))) & 0xFu);
                    ck_assert_msg(got == want, "variant %s tile16 %d: x[%zu][%zu] = %a gives code 0x%x, not 0x%x",
                                  nvfp4_simd_name((nvfp4_simd_variant)v), tile16, r, c, (double)xv, got, want);
                }
        }
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    free(x);
    free(j.data);
    free(j.scale);
}
END_TEST

/* ---- the element encoders over a sweep of fp32 bit patterns ------------------ */

/* With scale byte 0x38 (1.0) and tensor amax 2688 (S_enc = S_dec = 1) the
 * encode factor is exactly 1, so row_encode narrows x itself: every variant
 * must give nvfp4_core_e2m1_encode's code for 2^24 bit patterns spread over
 * the whole fp32 range (every exponent, NaNs and infinities included) and
 * for every E2M1 boundary and its neighbours, in RN and in SR. */
START_TEST(encoder_sweep)
{
    size_t n = (size_t)1 << 24, nb = n / 16;
    float *x = malloc(n * sizeof(float));
    uint8_t *scale = malloc(nb), *got = malloc(n / 2), *want = malloc(n / 2);
    for (size_t i = 0; i < n; i++) x[i] = f32_bits((uint32_t)(i * 256u + (i * 7u) % 256u));
    static const float bounds[] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f, 2.0f,
                                   2.5f, 3.0f, 3.5f, 4.0f, 5.0f, 6.0f, 8.0f};
    size_t k = 0;
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++)
        for (int d = -8; d <= 8; d++)
            for (int sgn = 0; sgn < 2; sgn++) {
                uint32_t u;
                memcpy(&u, &bounds[b], 4);
                u = (uint32_t)((int64_t)u + d);
                if (u & 0x80000000u) continue; /* below +0 */
                x[k++] = f32_bits(u | (sgn ? 0x80000000u : 0u));
            }
    memset(scale, 0x38, nb);
    nvfp4_simd_te_consts kc;
    nvfp4_simd_te_consts_init(&kc, 2688.0f);
    ck_assert_float_eq(kc.s_dec, 1.0f);
    nvfp4_simd_sr key = {0x0123456789ABCDEFull, 42};
    for (int sr = 0; sr < 2; sr++) {
        for (size_t b = 0; b < nb; b++) {
            uint8_t rb[16] = {0};
            if (sr) nvfp4_sr_block_bytes(key.seed, key.offset, b, rb);
            for (size_t i = 0; i < 16; i += 2) {
                uint8_t lo = nvfp4_e2m1_from_f32(x[16 * b + i], sr ? NVFP4_SR : NVFP4_RN, rb[i]);
                uint8_t hi = nvfp4_e2m1_from_f32(x[16 * b + i + 1], sr ? NVFP4_SR : NVFP4_RN, rb[i + 1]);
                want[8 * b + i / 2] = (uint8_t)(lo | (hi << 4));
            }
        }
        for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
            if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
            const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for((nvfp4_simd_variant)v);
            memset(got, 0xA5, n / 2);
            kn->row_encode(&kc, x, 0, nb, scale, sr ? &key : NULL, 0, got);
            assert_bytes(got, want, n / 2, sr ? "SR encoder sweep" : "RN encoder sweep", (nvfp4_simd_variant)v, 1, n);
        }
    }
    free(x);
    free(scale);
    free(got);
    free(want);
}
END_TEST

/* ---- the library's fast path (src/quant/fast.c) per variant ---------------- */

static void assert_same_orientation(const nvfp4_qtensor *q, const nvfp4_qtensor *r, const char *what,
                                    nvfp4_simd_variant v)
{
    ck_assert_uint_eq(q->rows, r->rows);
    ck_assert_uint_eq(q->cols, r->cols);
    ck_assert_uint_eq(q->scale_cols, r->scale_cols);
    ck_assert_msg(memcmp(&q->amax, &r->amax, 4) == 0, "%s amax, variant %s", what, nvfp4_simd_name(v));
    assert_bytes(q->data, r->data, r->data_bytes, what, v, r->rows, r->cols);
    assert_bytes(q->scale, r->scale, r->scale_rows * r->scale_cols, what, v, r->rows, r->cols);
}

static void check_hook_case(unsigned seed)
{
    rng_state = seed * 31337u + 11u;
    int tile16 = rnd() % 3 == 0, rht = !tile16 && rnd() % 2, bf16 = rnd() % 2, sr = rnd() % 2;
    size_t rows = 16 * (1 + rnd() % 5), cols = 16 * (1 + rnd() % 24);
    tensor t;
    tensor_make(&t, rows, cols, (int)(rnd() % 3));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = true;
    o.columnwise = true;
    o.block = tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
    o.rounding = sr ? NVFP4_SR : NVFP4_RN;
    o.seed = rnd();
    o.offset = rnd() % 100;
    o.rht = rht != 0;
    o.rht_signs = (nvfp4_rht_signs)(rnd() % 3);
    o.rht_sign_seed = rnd();
    nvfp4_quantized ref;
    reference(&t, bf16, &o, &ref);
    nvfp4_quant_plan plan;
    ck_assert_int_eq(nvfp4_quant_plan_init(&plan, &o, bf16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, rows, cols, NULL),
                     NVFP4_OK);
    for (int v = NVFP4_SIMD_AVX2; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        ck_assert(nvfp4_quant_fast_handles(&plan));
        nvfp4_quantized q;
        ck_assert_int_eq(nvfp4_quantize(bf16 ? (const void *)t.xb : (const void *)t.x,
                                        bf16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, rows, cols, &o, &q, NULL),
                         NVFP4_OK);
        assert_same_orientation(&q.row, &ref.row, "fast path rowwise", (nvfp4_simd_variant)v);
        assert_same_orientation(&q.col, &ref.col, "fast path columnwise", (nvfp4_simd_variant)v);
        nvfp4_quantized_free(&q);
    }
    /* not accelerated: RHT with a recipe other than te (the generic driver
     * of the other E4M3-scaled recipes has none); any recipe with the
     * scalar variant */
    nvfp4_quant_plan other;
    o.recipe = "te-pyref";
    o.block = NVFP4_BLOCK_1X16;
    o.columnwise = true;
    o.rht = true;
    ck_assert_int_eq(nvfp4_quant_plan_init(&other, &o, NVFP4_DTYPE_F32, rows, cols, NULL), NVFP4_OK);
    ck_assert(!nvfp4_quant_fast_handles(&other));
    nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL);
    ck_assert(!nvfp4_quant_fast_handles(&plan));
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}

START_TEST(hooks_match_library)
{
    for (unsigned s = 0; s < 40; s++) check_hook_case(s);
}
END_TEST

/* ---- MXFP4 1x32 row kernels -------------------------------------------------- */

static void check_mx_case(unsigned seed, int rule)
{
    rng_state = seed * 7777u + 5u;
    int sr = rnd() % 2;
    size_t rows = 1 + rnd() % 40, cols = 32 * (1 + rnd() % 30);
    tensor t;
    tensor_make(&t, rows, cols, (int)(rnd() % 3));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = rule == NVFP4_SIMD_MX_FLOOR ? "mxfp4-floor" : "mxfp4-rceil";
    o.rounding = sr ? NVFP4_SR : NVFP4_RN;
    o.seed = rnd();
    o.offset = rnd() % 100;
    nvfp4_quantized ref;
    reference(&t, 0, &o, &ref);
    ck_assert_uint_eq(ref.row.scale_cols, cols / 32);
    uint8_t *data = malloc(rows * cols / 2), *scale = malloc(rows * cols / 32);
    nvfp4_simd_sr key = {o.seed, o.offset};
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!use_variant((nvfp4_simd_variant)v)) continue;
        const nvfp4_simd_kernels *k = nvfp4_simd_kernels_for((nvfp4_simd_variant)v);
        memset(data, 0xA5, rows * cols / 2);
        memset(scale, 0xA5, rows * cols / 32);
        for (size_t r = 0; r < rows; r++) {
            const float *x = t.x + r * cols;
            uint8_t *s = scale + r * (cols / 32), *d = data + r * (cols / 2);
            k->mx_row_scales(rule, x, cols / 32, s);
            k->mx_row_encode(rule, x, cols / 32, s, sr ? &key : NULL, (uint64_t)r * (cols / 32), d);
        }
        assert_bytes(scale, ref.row.scale, rows * cols / 32, "MX scales", (nvfp4_simd_variant)v, rows, cols);
        assert_bytes(data, ref.row.data, rows * cols / 2, "MX codes", (nvfp4_simd_variant)v, rows, cols);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    free(data);
    free(scale);
    nvfp4_quantized_free(&ref);
    tensor_free(&t);
}

START_TEST(mx_1x32)
{
    for (unsigned s = 0; s < 40; s++) check_mx_case(100u * (unsigned)_i + s, _i);
}
END_TEST

/* ---- thread-count independence ------------------------------------------- */

START_TEST(thread_count_independent)
{
    rng_state = 4242;
    size_t rows = 512, cols = 1024;
    tensor t;
    tensor_make(&t, rows, cols, 1);
    nvfp4_simd_sr key = {1234, 5};
    uint8_t *d1 = malloc(rows * cols / 2), *s1 = malloc(rows * cols / 16);
    uint8_t *d3 = malloc(rows * cols / 2), *s3 = malloc(rows * cols / 16);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    float a1 = nvfp4_simd_amax(t.x, 0, rows * cols);
    nvfp4_simd_te_rowwise(t.x, 0, rows, cols, a1, 0, &key, d1, s1);
    omp_set_num_threads(3);
    float a3 = nvfp4_simd_amax(t.x, 0, rows * cols);
    nvfp4_simd_te_rowwise(t.x, 0, rows, cols, a3, 0, &key, d3, s3);
    omp_set_num_threads(saved);
    ck_assert(memcmp(&a1, &a3, 4) == 0);
    ck_assert(memcmp(d1, d3, rows * cols / 2) == 0);
    ck_assert(memcmp(s1, s3, rows * cols / 16) == 0);
    free(d1);
    free(s1);
    free(d3);
    free(s3);
    tensor_free(&t);
}
END_TEST

/* ---- RHT integer-hi split: the hi part must round to nearest ----------- */

/* A spread-17 group (the fp32 split's limit) on which the integer-hi split
 * (sk_rht_split_int, both x86 variants) is exact only because
 * h_i = RNE(s_i) keeps |l_i| <= 1/2: with h_i = trunc(s_i) (|l_i| < 1) the
 * lo sum of output 0 needs 25 bits and the result comes out one ulp low
 * (0x1.8d00acp-15). AVX2 computes h_i with vcvtps2dq in the MXCSR mode and
 * l_i = s_i - h_i by hand, so this pins both. Found by search against the
 * exact sum; 16 identical columns make the whole tile take the split. */
START_TEST(rht_split_int_nearest)
{
    static const float u[16] = {0x1p+0f, -0x1p+0f, 0x1.ea50d8p-17f, 0x1.edc508p-17f, 0x1.e9ea0ep-17f, 0x1.7f5c62p-17f,
                                0x1.bb3072p-17f, 0x1.e00dc6p-17f, 0x1.aa590ep-17f, 0x1.f994bp-17f, 0x1.f67318p-17f,
                                0x1.ff2498p-17f, 0x1.7c32bap-17f, 0x1.b423c6p-17f, 0x1.781bcap-17f, 0x1.b17892p-17f};
    float x[256], out[256], y[16];
    uint32_t none[4];
    nvfp4_core_rht_mask_none(none);
    for (unsigned i = 0; i < 16; i++)
        for (unsigned c = 0; c < 16; c++) x[16 * i + c] = u[i];
    nvfp4_core_rht_forward_group(u, y, 16, none, 0);
    ck_assert_msg(y[0] == 0x1.8d00aep-15f, "reference output 0 is %a", (double)y[0]);
    float ref_am = 0.0f;
    for (unsigned i = 0; i < 16; i++) ref_am = fmaxf(ref_am, fabsf(y[i]));
    nvfp4_simd_col_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.rows = 16;
    j.cols = 16;
    j.rht = 1;
    memcpy(j.rht_mask, none, sizeof none);
    for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
        if (!nvfp4_simd_available((nvfp4_simd_variant)v)) continue;
        const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for((nvfp4_simd_variant)v);
        float am = kn->rht_apply(&j, 0, 1, out), am2 = kn->rht_amax(&j, 0, 1);
        for (unsigned i = 0; i < 16; i++)
            for (unsigned c = 0; c < 16; c++)
                ck_assert_msg(memcmp(&out[16 * i + c], &y[i], 4) == 0, "variant %s, output %u: %a, reference %a",
                              nvfp4_simd_name((nvfp4_simd_variant)v), i, (double)out[16 * i + c], (double)y[i]);
        ck_assert_msg(memcmp(&am, &ref_am, 4) == 0 && memcmp(&am2, &ref_am, 4) == 0,
                      "variant %s: RHT amax %a / %a, reference %a", nvfp4_simd_name((nvfp4_simd_variant)v), (double)am,
                      (double)am2, (double)ref_am);
    }
}
END_TEST

/* Rows longer than the AVX2 fused row kernel's chunk of 64 blocks (scales
 * and multipliers of a chunk first, then its codes): 203 blocks are three
 * whole chunks and a partial one that ends in a partial group of 8, with
 * NaN and Inf sprinkled, RN and SR, fp32 and bf16, 1x16 and 16x16. */
START_TEST(rowwise_long_rows)
{
    rng_state = 60601u + (unsigned)_i;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int tile16 = 0; tile16 < 2; tile16++) {
            size_t rows = tile16 ? 32 : 5, cols = 16 * 203;
            tensor t;
            tensor_make(&t, rows, cols, 2);
            nvfp4_quant_opts o;
            nvfp4_quant_opts_init(&o);
            o.block = tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
            o.rounding = _i ? NVFP4_SR : NVFP4_RN;
            o.seed = rnd();
            o.offset = rnd() % 1000;
            nvfp4_quantized ref;
            reference(&t, bf16, &o, &ref);
            const void *x = bf16 ? (const void *)t.xb : (const void *)t.x;
            uint8_t *data = malloc(rows * cols / 2), *scale = malloc(rows * cols / 16);
            nvfp4_simd_sr key = {o.seed, o.offset};
            for (int v = 0; v < NVFP4_SIMD_VARIANTS; v++) {
                if (!use_variant((nvfp4_simd_variant)v)) continue;
                memset(data, 0xA5, rows * cols / 2);
                memset(scale, 0xA5, rows * cols / 16);
                nvfp4_simd_te_rowwise(x, bf16, rows, cols, ref.row.amax, tile16, _i ? &key : NULL, data, scale);
                assert_bytes(data, ref.row.data, rows * cols / 2, "long-row codes", (nvfp4_simd_variant)v, rows, cols);
                assert_bytes(scale, ref.row.scale, rows * cols / 16, "long-row scales", (nvfp4_simd_variant)v, rows,
                             cols);
            }
            nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
            free(data);
            free(scale);
            nvfp4_quantized_free(&ref);
            tensor_free(&t);
        }
}
END_TEST

/* ---- selection API -------------------------------------------------------- */

START_TEST(variant_selection)
{
    nvfp4_simd_variant v;
    ck_assert(nvfp4_simd_parse("avx512", &v) && v == NVFP4_SIMD_AVX512);
    ck_assert(nvfp4_simd_parse("scalar", &v) && v == NVFP4_SIMD_SCALAR);
    ck_assert(nvfp4_simd_parse("auto", &v) && v == NVFP4_SIMD_AUTO);
    ck_assert(!nvfp4_simd_parse("sse9", &v));
    ck_assert_str_eq(nvfp4_simd_name(NVFP4_SIMD_AVX2), "avx2");
    ck_assert(nvfp4_simd_available(NVFP4_SIMD_SCALAR));
    ck_assert_int_eq(nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_simd_active(), NVFP4_SIMD_SCALAR);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_simd_set((nvfp4_simd_variant)7, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_simd_active(), NVFP4_SIMD_SCALAR);
    for (int i = NVFP4_SIMD_AVX2; i < NVFP4_SIMD_VARIANTS; i++) {
        if (nvfp4_simd_available((nvfp4_simd_variant)i)) {
            ck_assert_int_eq(nvfp4_simd_set((nvfp4_simd_variant)i, NULL), NVFP4_OK);
            ck_assert_int_eq(nvfp4_simd_active(), i);
        } else {
            printf("check_simd: this CPU lacks %s: its kernels are skipped\n", nvfp4_simd_name((nvfp4_simd_variant)i));
            ck_assert_int_eq(nvfp4_simd_set((nvfp4_simd_variant)i, &err), NVFP4_EUNSUPPORTED);
        }
    }
    ck_assert_int_eq(nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL), NVFP4_OK);
    ck_assert_int_ne(nvfp4_simd_active(), NVFP4_SIMD_AUTO);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("simd");
    TCase *tc = tcase_create("differential");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, variant_selection);
    tcase_add_loop_test(tc, rowwise_1x16_f32, 0, 2);
    tcase_add_loop_test(tc, rowwise_1x16_bf16, 0, 2);
    tcase_add_loop_test(tc, rowwise_16x16, 0, 2);
    tcase_add_loop_test(tc, columnwise_1x16, 0, 2);
    tcase_add_loop_test(tc, columnwise_16x16, 0, 2);
    tcase_add_test(tc, rht_double_rounding_hazard);
    tcase_add_test(tc, rht_fp32_path_edges);
    tcase_add_test(tc, rht_split_int_nearest);
    tcase_add_loop_test(tc, rowwise_long_rows, 0, 2);
    tcase_add_test(tc, dequantize_and_swizzle);
    tcase_add_test(tc, encoder_sweep);
    tcase_add_test(tc, columnwise_encoder_grid);
    tcase_add_test(tc, hooks_match_library);
    tcase_add_loop_test(tc, mx_1x32, 0, 2);
    tcase_add_test(tc, thread_count_independent);
    suite_add_tcase(s, tc);
    /* the RHT kernels on large tensors (tens of seconds), tagged so that
     * make check-aarch64 (under qemu, CK_EXCLUDE_TAGS=large) can leave them out */
    TCase *large = tcase_create("differential_large");
    tcase_set_tags(large, "large");
    tcase_set_timeout(large, 120);
    tcase_add_loop_test(large, columnwise_rht, 0, 2);
    tcase_add_test(large, rht_spread_limits);
    tcase_add_test(large, rht_large_two_transforms);
    suite_add_tcase(s, large);
    return s;
}

int main(void)
{
    for (int i = 0; i < NVFP4_SIMD_VARIANTS; i++)
        printf("check_simd: %s %s\n", nvfp4_simd_name((nvfp4_simd_variant)i),
               nvfp4_simd_available((nvfp4_simd_variant)i) ? "available: tested" : "not available on this CPU: skipped");
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
