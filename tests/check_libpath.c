/* check_libpath.c - nvfp4_quantize's fast path (src/quant/fast.c: the
 * whole-tensor drivers of src/simd on the caller's
 * input, no fp32 copy, one input amax for both orientations, padded shapes
 * through a zero-padded copy) against its reference path (the same call
 * with the scalar SIMD variant active), byte for byte: codes, scales,
 * amaxes and every shape field of both orientations, for fp32 and bf16
 * input, 1x16 and 16x16 blocks, RN and SR, RHT on and off (all sign
 * choices, bf16 and fp32 transform output), shapes that need padding, and
 * seeded inputs holding NaN, +-Inf, -0, subnormals, exact E2M1 ties and
 * saturating values. Every vector variant the CPU has is tested; the others
 * are skipped with a message. Also: which configurations take the fast path
 * (nvfp4_quant_fast_handles), the MXFP4 recipes, nvfp4_quantize_into, that the thread count changes no byte, and that
 * a large tensor (huge-page output buffers) matches too. */
#include <check.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "quant/quant_internal.h"
#include "simd/simd_kernels.h"
#include "support/check_main.h"

/* ---- seeded inputs ------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A value of "flavour" k: 0 zeros, 1 subnormals, 2 the E2M1 grid and its
 * midpoints (exact ties when S_enc = 1), 3 normal values around 2^shift,
 * 4 huge, 5 any bit pattern (NaN, Inf included when specials allow). */
static float draw(int k, int specials, int shift)
{
    if (specials && rnd() % 32 == 0) {
        switch (rnd() % 7) {
        case 0: return NAN;
        case 1: return -0.0f;
        case 2: return f32_bits(0x80000001u); /* -smallest subnormal */
        case 3: return f32_bits(0x7FC00001u | (uint32_t)(rnd() & 0x80000000u));
        case 4: return INFINITY;
        case 5: return -INFINITY;
        default: return f32_bits(0x7F7FFFFFu); /* FLT_MAX */
        }
    }
    float sign = rnd() % 2 ? -1.0f : 1.0f;
    switch (k) {
    case 0: return 0.0f;
    case 1: return sign * f32_bits((uint32_t)(rnd() % 0x800000u));
    case 2: return (float)((int)(rnd() % 49) - 24) * 0.25f;
    case 3: return sign * ldexpf(1.0f + (float)(rnd() % 4096) / 4096.0f, shift + (int)(rnd() % 9) - 4);
    case 4: return sign * ldexpf(1.0f + (float)(rnd() % 256) / 256.0f, 120);
    default: {
        float v = f32_bits((uint32_t)rnd());
        return (specials || isfinite(v)) ? v : 1.0f;
    }
    }
}

typedef struct {
    size_t rows, cols;
    float *x;
    uint16_t *xb; /* the bf16 input: RN of x */
} tensor;

/* Flavours by 16x16 tile so that both orientations see every kind of
 * block; specials 0: finite values only. */
static void tensor_make(tensor *t, size_t rows, size_t cols, int specials)
{
    t->rows = rows;
    t->cols = cols;
    t->x = malloc(rows * cols * sizeof *t->x);
    t->xb = malloc(rows * cols * sizeof *t->xb);
    ck_assert(t->x && t->xb);
    int shift = (int)(rnd() % 40) - 20;
    size_t tc = (cols + 15) / 16;
    int kinds[64];
    for (size_t i = 0; i < 64; i++) kinds[i] = (int)(rnd() % 8) % 6; /* more normal tiles */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            float v = draw(kinds[((r / 16) * tc + c / 16) % 64], specials, shift);
            t->x[r * cols + c] = v;
        }
    /* one time in three the tensor amax is exactly 2688: S_enc = 1, so the
     * grid tiles hit E2M1 ties exactly */
    if (rnd() % 3 == 0) t->x[rnd() % (rows * cols)] = 2688.0f;
    for (size_t i = 0; i < rows * cols; i++) t->xb[i] = nvfp4_bf16_from_f32(t->x[i]);
}

static void tensor_free(tensor *t)
{
    free(t->x);
    free(t->xb);
}

/* ---- comparing two results ------------------------------------------------ */

static void assert_same_bytes(const uint8_t *fast, const uint8_t *ref, size_t n, const char *what, const char *cfg)
{
    for (size_t i = 0; i < n; i++)
        if (fast[i] != ref[i])
            ck_abort_msg("%s: %s: byte %zu of %zu is 0x%02x on the fast path, 0x%02x on the reference", cfg, what, i, n,
                         fast[i], ref[i]);
}

static void assert_same_qtensor(const nvfp4_qtensor *f, const nvfp4_qtensor *r, const char *which, const char *cfg)
{
    ck_assert_msg(f->rows == r->rows && f->cols == r->cols && f->prows == r->prows && f->pcols == r->pcols,
                  "%s: %s shape %zux%zu (padded %zux%zu), reference %zux%zu (%zux%zu)", cfg, which, f->rows, f->cols,
                  f->prows, f->pcols, r->rows, r->cols, r->prows, r->pcols);
    ck_assert_msg(f->data_bytes == r->data_bytes && f->scale_rows == r->scale_rows && f->scale_cols == r->scale_cols,
                  "%s: %s buffer sizes differ", cfg, which);
    ck_assert_msg(bits_f32(f->amax) == bits_f32(r->amax), "%s: %s amax %a, reference %a", cfg, which, (double)f->amax,
                  (double)r->amax);
    ck_assert_msg(f->rht == r->rht, "%s: %s rht flag", cfg, which);
    ck_assert_msg((f->row_amax == NULL) == (r->row_amax == NULL), "%s: %s row amaxes on one path only", cfg, which);
    if (f->row_amax)
        for (size_t i = 0; i < f->prows; i++)
            ck_assert_msg(bits_f32(f->row_amax[i]) == bits_f32(r->row_amax[i]), "%s: %s row %zu amax %a, reference %a",
                          cfg, which, i, (double)f->row_amax[i], (double)r->row_amax[i]);
    char what[64];
    snprintf(what, sizeof what, "%s codes", which);
    assert_same_bytes(f->data, r->data, f->data_bytes, what, cfg);
    snprintf(what, sizeof what, "%s scales", which);
    assert_same_bytes(f->scale, r->scale, f->scale_rows * f->scale_cols, what, cfg);
}

static void describe(char *buf, size_t len, const tensor *t, int bf16, const nvfp4_quant_opts *o)
{
    snprintf(buf, len, "%s %s %zux%zu %s %s %s%s%s%s rht_signs=%s%s seed=%llu offset=%llu variant %s",
             o->recipe ? o->recipe : "te", bf16 ? "bf16" : "fp32", t->rows, t->cols, nvfp4_block_name(o->block), nvfp4_rounding_name(o->rounding),
             o->rowwise ? "row" : "", o->columnwise ? "+col" : "", o->rht ? "+rht" : "", o->pad ? " pad" : "",
             nvfp4_rht_signs_name(o->rht_signs), o->rht_fp32 ? " rht_fp32" : "", (unsigned long long)o->seed,
             (unsigned long long)o->offset, nvfp4_simd_name(nvfp4_simd_active()));
}

static nvfp4_status quantize(const tensor *t, int bf16, const nvfp4_quant_opts *o, int scalar, nvfp4_quantized *q,
                             nvfp4_error *err)
{
    nvfp4_simd_variant active = nvfp4_simd_active();
    if (scalar) nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL);
    nvfp4_status st = nvfp4_quantize(bf16 ? (const void *)t->xb : (const void *)t->x,
                                     bf16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, t->rows, t->cols, o, q, err);
    nvfp4_simd_set(active, NULL);
    return st;
}

/* The fast path (active variant) against the forced-scalar reference, and
 * the rowwise dequantization of each against the other. */
static void compare_paths(const tensor *t, int bf16, const nvfp4_quant_opts *o)
{
    char cfg[256];
    describe(cfg, sizeof cfg, t, bf16, o);
    nvfp4_quantized ref, fast;
    nvfp4_error err;
    nvfp4_status st = quantize(t, bf16, o, 1, &ref, &err);
    ck_assert_msg(st == NVFP4_OK, "%s: reference failed: %s", cfg, err.message);
    st = quantize(t, bf16, o, 0, &fast, &err);
    ck_assert_msg(st == NVFP4_OK, "%s: fast path failed: %s", cfg, err.message);
    ck_assert_msg(fast.has_row == ref.has_row && fast.has_col == ref.has_col, "%s: orientations differ", cfg);
    if (ref.has_row) assert_same_qtensor(&fast.row, &ref.row, "rowwise", cfg);
    if (ref.has_col) assert_same_qtensor(&fast.col, &ref.col, "columnwise", cfg);
    if (ref.has_row) {
        size_t n = t->rows * t->cols;
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        ck_assert(a && b);
        ck_assert_int_eq(nvfp4_dequantize(&fast, false, a, NULL), NVFP4_OK);
        nvfp4_simd_variant active = nvfp4_simd_active();
        nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL);
        ck_assert_int_eq(nvfp4_dequantize(&ref, false, b, NULL), NVFP4_OK);
        nvfp4_simd_set(active, NULL);
        for (size_t i = 0; i < n; i++) /* no ck_assert per element: each one writes to Check's pipe */
            if (bits_f32(a[i]) != bits_f32(b[i]))
                ck_abort_msg("%s: dequantized element %zu: %a vs %a", cfg, i, (double)a[i], (double)b[i]);
        free(a);
        free(b);
    }
    nvfp4_quantized_free(&ref);
    nvfp4_quantized_free(&fast);
}

static void random_opts(nvfp4_quant_opts *o, int tile16, int sr)
{
    nvfp4_quant_opts_init(o);
    o->recipe = "te";
    o->block = tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
    o->rounding = sr ? NVFP4_SR : NVFP4_RN;
    o->seed = rnd();
    o->offset = rnd() % 4 ? rnd() % 1000 : rnd() >> 1;
    unsigned orient = (unsigned)(rnd() % 3); /* row, col, both */
    o->rowwise = orient != 1;
    o->columnwise = orient != 0;
    o->rht = !tile16 && o->columnwise && rnd() % 2;
    o->rht_signs = (nvfp4_rht_signs)(rnd() % 3);
    o->rht_sign_seed = rnd();
    o->rht_fp32 = rnd() % 4 == 0;
}

/* The vector variants this CPU has; 0 when none (then the test says so). */
static int vector_variants(nvfp4_simd_variant *vs)
{
    int n = 0;
    for (int v = NVFP4_SIMD_AVX2; v < NVFP4_SIMD_VARIANTS; v++)
        if (nvfp4_simd_available((nvfp4_simd_variant)v)) vs[n++] = (nvfp4_simd_variant)v;
    if (!n) printf("check_libpath: no vector variant on this CPU: the fast path is not exercised\n");
    return n;
}

/* ---- tests ------------------------------------------------------------------ */

/* Random shapes (multiples of 16, or anything with pad), orientations, RHT
 * choices; _i picks dtype, block and rounding (8 combinations). */
START_TEST(random_configurations)
{
    int bf16 = _i & 1, tile16 = (_i >> 1) & 1, sr = (_i >> 2) & 1;
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    for (unsigned s = 0; s < 24; s++) {
        rng_state = 0x11B0A7ull * (unsigned)(_i + 1) + s;
        int pad = s % 2 == 1;
        size_t rows = pad ? 1 + rnd() % 70 : 16 * (1 + rnd() % 5);
        size_t cols = pad ? 1 + rnd() % 90 : 16 * (1 + rnd() % 9);
        tensor t;
        tensor_make(&t, rows, cols, (int)(s % 3 != 0));
        nvfp4_quant_opts o;
        random_opts(&o, tile16, sr);
        o.pad = pad;
        for (int v = 0; v < nv; v++) {
            ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
            compare_paths(&t, bf16, &o);
        }
        tensor_free(&t);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* Every orientation and RHT combination on one odd shape per block and
 * dtype: 37 x 50 pads both dimensions (16x16), only the rows of the
 * columnwise output (1x16 columnwise pads the input's rows), and the
 * rowwise blocks. */
START_TEST(odd_shape_all_orientations)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    static const size_t shapes[][2] = {{37, 50}, {16, 50}, {37, 48}, {1, 1}, {17, 16}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int bf16 = 0; bf16 < 2; bf16++) {
            rng_state = (uint64_t)(0xA11CE + 97 * sh + (size_t)bf16);
            tensor t;
            tensor_make(&t, shapes[sh][0], shapes[sh][1], 1);
            for (int cfg = 0; cfg < 16; cfg++) {
                nvfp4_quant_opts o;
                nvfp4_quant_opts_init(&o);
                o.pad = true;
                o.block = cfg & 1 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
                o.rounding = cfg & 2 ? NVFP4_SR : NVFP4_RN;
                o.seed = 12345;
                o.offset = 7;
                int orient = (cfg >> 2) & 3; /* 0 row, 1 col, 2 both, 3 col+rht (1x16) or both */
                o.rowwise = orient != 1 && orient != 3;
                o.columnwise = orient != 0;
                if (orient == 3) {
                    o.rowwise = o.block == NVFP4_BLOCK_16X16;
                    o.rht = o.block == NVFP4_BLOCK_1X16;
                }
                for (int v = 0; v < nv; v++) {
                    ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
                    compare_paths(&t, bf16, &o);
                    if (o.rht) { /* and with the rowwise output too */
                        o.rowwise = true;
                        compare_paths(&t, bf16, &o);
                        o.rowwise = false;
                    }
                }
            }
            tensor_free(&t);
        }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* Directed tensors: all zeros (amax 0), all NaN (NaN ignored: amax 0), an
 * Inf (amax Inf), FLT_MAX, only subnormals, -0 everywhere, and a row of
 * every special next to ordinary values. */
/* A columnwise output whose input needs padding is computed in strips of input columns (fast.c,
 * te_columnwise_strips: 4 MiB of padded input each); these shapes span several strips, the last one
 * partial: 1 x 196648 fp32 (65536 columns a strip), 5 x 262181 bf16 (131072), 20 x 70000 16x16 (32768),
 * RN, columnwise alone and with the rowwise output. */
START_TEST(columnwise_padding_in_strips)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    static const struct { size_t rows, cols; int bf16, tile16; } cases[] = {
        {1, 3 * 65536 + 40, 0, 0}, {5, 2 * 131072 + 37, 1, 0}, {20, 70000, 0, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rng_state = 0x57819ull + k;
        tensor t;
        tensor_make(&t, cases[k].rows, cases[k].cols, 1);
        for (int both = 0; both < 2; both++) {
            nvfp4_quant_opts o;
            nvfp4_quant_opts_init(&o);
            o.pad = true;
            o.block = cases[k].tile16 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
            o.rowwise = both;
            o.columnwise = true;
            for (int v = 0; v < nv; v++) {
                ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
                compare_paths(&t, cases[k].bf16, &o);
            }
        }
        tensor_free(&t);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

START_TEST(special_tensors)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    const size_t rows = 32, cols = 48;
    for (int kind = 0; kind < 7; kind++) {
        rng_state = (uint64_t)(0x5EC1A1 + kind);
        tensor t;
        tensor_make(&t, rows, cols, 0);
        for (size_t i = 0; i < rows * cols; i++) {
            switch (kind) {
            case 0: t.x[i] = 0.0f; break;
            case 1: t.x[i] = NAN; break;
            case 2: if (i == 77) t.x[i] = -INFINITY; break;
            case 3: if (i % 100 == 3) t.x[i] = -f32_bits(0x7F7FFFFFu); break;
            case 4: t.x[i] = f32_bits((uint32_t)(1 + rnd() % 0x7FFFFFu)) * (i % 2 ? -1.0f : 1.0f); break;
            case 5: t.x[i] = -0.0f; break;
            default: {
                static const uint32_t sp[] = {0x7FC00000u, 0xFFC00000u, 0x7F800000u, 0xFF800000u, 0x80000000u,
                                              0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x7FA00000u};
                if (i / cols == 5 && i % cols < 10) t.x[i] = f32_bits(sp[i % cols]);
            }
            }
            t.xb[i] = nvfp4_bf16_from_f32(t.x[i]);
        }
        for (int cfg = 0; cfg < 8; cfg++) {
            nvfp4_quant_opts o;
            nvfp4_quant_opts_init(&o);
            o.block = cfg & 1 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
            o.rounding = cfg & 2 ? NVFP4_SR : NVFP4_RN;
            o.seed = 99;
            o.columnwise = true;
            o.rht = (cfg & 4) && o.block == NVFP4_BLOCK_1X16;
            for (int v = 0; v < nv; v++) {
                ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
                compare_paths(&t, 0, &o);
                compare_paths(&t, 1, &o);
            }
        }
        tensor_free(&t);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* Whether the fast path takes a configuration (a plan of 32 x 64). */
static bool fast_takes(const char *recipe, nvfp4_block block, nvfp4_rounding rounding)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = block;
    o.rounding = rounding;
    nvfp4_quant_plan p;
    nvfp4_error err;
    ck_assert_msg(nvfp4_quant_plan_init(&p, &o, NVFP4_DTYPE_F32, 32, 64, &err) == NVFP4_OK, "%s", err.message);
    return nvfp4_quant_fast_handles(&p);
}

/* Which configurations the fast path takes: every recipe with E2M1
 * elements (te's and the MXFP4 chains' own kernels, the generic driver for
 * the others and other block shapes), RN/SR, under a vector variant; not
 * RZ, mxfp8 (E4M3 elements), the scalar variant. */
START_TEST(routing)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    for (int v = 0; v < nv; v++) {
        ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
        ck_assert(fast_takes("te", NVFP4_BLOCK_1X16, NVFP4_RN));
        ck_assert(fast_takes("te", NVFP4_BLOCK_1X16, NVFP4_SR));
        ck_assert(fast_takes("te", NVFP4_BLOCK_16X16, NVFP4_SR));
        ck_assert(!fast_takes("te", NVFP4_BLOCK_16X16, NVFP4_RZ));
        ck_assert(fast_takes("te", NVFP4_BLOCK_1X32, NVFP4_RN));
        ck_assert(fast_takes("te-pyref", NVFP4_BLOCK_1X16, NVFP4_RN));
        ck_assert(fast_takes("torchao", NVFP4_BLOCK_16X16, NVFP4_SR));
        ck_assert(fast_takes("torchao", NVFP4_BLOCK_1X32, NVFP4_RN));
        ck_assert(fast_takes("te-pow2", NVFP4_BLOCK_1X32, NVFP4_RN));
        ck_assert(fast_takes("mxfp4-ceil", NVFP4_BLOCK_1X32, NVFP4_SR));
        ck_assert(fast_takes("mxfp4-floor", NVFP4_BLOCK_1X32, NVFP4_SR));
        ck_assert(fast_takes("mxfp4-rceil", NVFP4_BLOCK_1X32, NVFP4_RN));
        ck_assert(fast_takes("mxfp4-rceil", NVFP4_BLOCK_1X16, NVFP4_RN));
        ck_assert(!fast_takes("mxfp8", NVFP4_BLOCK_1X32, NVFP4_RN));
    }
    ck_assert_int_eq(nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL), NVFP4_OK);
    ck_assert(!fast_takes("te", NVFP4_BLOCK_1X16, NVFP4_RN));
    ck_assert(!fast_takes("mxfp4-floor", NVFP4_BLOCK_1X32, NVFP4_RN));
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* The MXFP4 recipes on the fast path (1x32 row kernels on the stored
 * orientation) against the reference: random shapes with and without
 * padding, RN and SR, rowwise, columnwise and both. */
START_TEST(mx_configurations)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    for (unsigned s = 0; s < 24; s++) {
        rng_state = 0x3A32ull * (unsigned)(_i + 1) + s;
        int pad = s % 2 == 1;
        size_t rows = pad ? 1 + rnd() % 70 : 1 + rnd() % 40;
        size_t cols = pad ? 1 + rnd() % 90 : 32 * (1 + rnd() % 5);
        if (!pad) rows = 32 * (1 + rows % 3); /* the columnwise blocks run along the rows */
        tensor t;
        tensor_make(&t, rows, cols, (int)(s % 3 != 0));
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = _i ? "mxfp4-rceil" : "mxfp4-floor";
        o.rounding = s % 4 < 2 ? NVFP4_SR : NVFP4_RN;
        o.seed = rnd();
        o.offset = rnd() % 1000;
        unsigned orient = (unsigned)(rnd() % 3);
        o.rowwise = orient != 1;
        o.columnwise = orient != 0;
        o.pad = pad;
        for (int v = 0; v < nv; v++) {
            ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
            compare_paths(&t, (int)(s % 5 == 0), &o);
        }
        tensor_free(&t);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* nvfp4_quantize_into writes nvfp4_quantize's bytes into the caller's
 * buffers (every byte: they start as 0xA5), reports them as borrowed, and
 * nvfp4_quantized_free leaves them alone; a missing buffer is refused. */
START_TEST(quantize_into_caller_buffers)
{
    rng_state = 0x1A70ull + (unsigned)_i;
    size_t rows = _i ? 37 : 64, cols = _i ? 50 : 96;
    tensor t;
    tensor_make(&t, rows, cols, 1);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.columnwise = true;
    o.rht = _i == 0;
    o.pad = _i != 0;
    o.rounding = NVFP4_SR;
    o.seed = 99;
    nvfp4_quant_plan p;
    ck_assert_int_eq(nvfp4_quant_plan_init(&p, &o, NVFP4_DTYPE_F32, rows, cols, NULL), NVFP4_OK);
    ck_assert(p.has_row && p.has_col);
    nvfp4_quant_buffers b;
    b.row_data = malloc(p.row.data_bytes);
    b.row_scale = malloc(p.row.scale_rows * p.row.scale_cols);
    b.col_data = malloc(p.col.data_bytes);
    b.col_scale = malloc(p.col.scale_rows * p.col.scale_cols);
    for (int round = 0; round < 2; round++) { /* the second reuses the buffers */
        memset(b.row_data, 0xA5, p.row.data_bytes);
        memset(b.row_scale, 0xA5, p.row.scale_rows * p.row.scale_cols);
        memset(b.col_data, 0xA5, p.col.data_bytes);
        memset(b.col_scale, 0xA5, p.col.scale_rows * p.col.scale_cols);
        nvfp4_quantized got, want;
        ck_assert_int_eq(nvfp4_quantize_into(&p, t.x, &b, &got, NULL), NVFP4_OK);
        ck_assert(got.borrowed && got.row.data == b.row_data && got.col.scale == b.col_scale);
        ck_assert_int_eq(nvfp4_quantize(t.x, NVFP4_DTYPE_F32, rows, cols, &o, &want, NULL), NVFP4_OK);
        assert_same_qtensor(&got.row, &want.row, "rowwise", "quantize_into");
        assert_same_qtensor(&got.col, &want.col, "columnwise", "quantize_into");
        nvfp4_quantized_free(&got);
        ck_assert(got.row.data == NULL);
        nvfp4_quantized_free(&want);
    }
    nvfp4_quantized q;
    uint8_t *keep = b.col_scale;
    b.col_scale = NULL;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize_into(&p, t.x, &b, &q, &err), NVFP4_EINVAL);
    ck_assert(strstr(err.message, "missing") != NULL);
    b.col_scale = keep;
    free(b.row_data);
    free(b.row_scale);
    free(b.col_data);
    free(b.col_scale);
    tensor_free(&t);
}
END_TEST

/* Streaming stores are for passes of nvfp4_simd_stream_min_bytes or more
 * (16 MiB: the lab's small operands stay in cache for the dequantization
 * and GEMM that read them next); the bytes must not depend on the kind of
 * store. With the threshold at 0 every columnwise line and dequantized row
 * is streamed: each vector variant against the scalar reference (fp32 RHT
 * SR, bf16 16x16 RN, fp32 1x16 RN; 256 x 384, whose columnwise lines are
 * whole), and into 64-byte-aligned caller buffers (lines straight from
 * registers) and buffers 16 bytes off (through the stage), columnwise
 * dequantization included, against the same calls with cached stores. */
START_TEST(streaming_stores_same_bytes)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    size_t saved = nvfp4_simd_stream_min_bytes, rows = 256, cols = 384, n = rows * cols;
    tensor t;
    rng_state = 0x57EA;
    tensor_make(&t, rows, cols, 1);
    for (int v = 0; v < nv; v++) {
        ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
        for (int k = 0; k < 3; k++) {
            nvfp4_quant_opts o;
            nvfp4_quant_opts_init(&o);
            o.block = k == 1 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
            o.rounding = k == 0 ? NVFP4_SR : NVFP4_RN;
            o.columnwise = true;
            o.rht = k == 0;
            o.seed = 5;
            nvfp4_simd_stream_min_bytes = 0;
            compare_paths(&t, k == 1, &o);
            nvfp4_quant_plan p;
            o.rowwise = false; /* compare_paths had both: here the columnwise output alone */
            ck_assert_int_eq(nvfp4_quant_plan_init(&p, &o, k == 1 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, rows, cols, NULL),
                             NVFP4_OK);
            size_t db = p.col.data_bytes, sb = p.col.scale_rows * p.col.scale_cols;
            uint8_t *buf[2][2];
            float *deq[2];
            for (int m = 0; m < 2; m++) {
                buf[m][0] = aligned_alloc(64, (db + 128) / 64 * 64);
                buf[m][1] = aligned_alloc(64, (sb + 128) / 64 * 64);
                deq[m] = aligned_alloc(64, n * sizeof(float));
                ck_assert(buf[m][0] && buf[m][1] && deq[m]);
            }
            for (size_t off = 0; off <= 16; off += 16)
                for (int m = 0; m < 2; m++) { /* m = 0: streamed, 1: cached */
                    nvfp4_simd_stream_min_bytes = m ? saved : 0;
                    nvfp4_quant_buffers b = {NULL, NULL, buf[m][0] + off, buf[m][1]};
                    nvfp4_quantized q;
                    ck_assert_int_eq(nvfp4_quantize_into(&p, k == 1 ? (const void *)t.xb : (const void *)t.x, &b, &q, NULL),
                                     NVFP4_OK);
                    ck_assert_int_eq(nvfp4_dequantize(&q, true, deq[m], NULL), NVFP4_OK);
                    if (m)
                        ck_assert_msg(!memcmp(buf[0][0] + off, buf[1][0] + off, db) && !memcmp(buf[0][1], buf[1][1], sb) &&
                                          !memcmp(deq[0], deq[1], n * sizeof(float)),
                                      "variant %s config %d offset %zu: streamed and cached stores differ",
                                      nvfp4_simd_name(vs[v]), k, off);
                    nvfp4_quantized_free(&q);
                }
            for (int m = 0; m < 2; m++) {
                free(buf[m][0]);
                free(buf[m][1]);
                free(deq[m]);
            }
        }
    }
    nvfp4_simd_stream_min_bytes = saved;
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
    tensor_free(&t);
}
END_TEST

/* Errors are the reference path's: an unpadded odd shape is NVFP4_ESHAPE
 * on both. */
START_TEST(shape_errors_unchanged)
{
    rng_state = 4;
    tensor t;
    tensor_make(&t, 20, 40, 0);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.block = NVFP4_BLOCK_16X16;
    nvfp4_quantized q;
    ck_assert_int_eq(quantize(&t, 0, &o, 0, &q, NULL), NVFP4_ESHAPE);
    ck_assert_int_eq(quantize(&t, 0, &o, 1, &q, NULL), NVFP4_ESHAPE);
    ck_assert(!q.has_row && !q.has_col && q.row.data == NULL);
    tensor_free(&t);
}
END_TEST

/* Larger tensors run the OpenMP drivers in parallel and put the outputs in
 * 2 MiB-aligned huge-page buffers: 1, 2 and 3 threads give the reference's
 * bytes (odd shape: the padded copy is parallel too). */
START_TEST(threads_and_large_buffers)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    int saved = omp_get_max_threads();
    static const size_t shapes[][2] = {{2048, 2048}, {301, 1000}};
    for (size_t sh = 0; sh < 2; sh++) {
        rng_state = 0x7A11ull + (uint64_t)sh;
        tensor t;
        tensor_make(&t, shapes[sh][0], shapes[sh][1], 1);
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.pad = true;
        o.columnwise = true;
        o.rht = sh == 1;
        o.rounding = sh == 0 ? NVFP4_RN : NVFP4_SR;
        o.seed = 5;
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            ck_assert_int_eq(nvfp4_simd_set(nv ? vs[nv - 1] : NVFP4_SIMD_SCALAR, NULL), NVFP4_OK);
            compare_paths(&t, (int)sh, &o);
        }
        tensor_free(&t);
    }
    omp_set_num_threads(saved);
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* Rowwise plus RHT columnwise on inputs whose fp32 transform (2048 x 2064,
 * 16.1 MiB) exceeds the 16 MiB the driver keeps: the fast path then takes
 * the input amax and the post-RHT amax in one pass
 * (src/quant/fast.c te_amaxes) and quantizes with the transform done
 * again. fp32 input with SR and bf16 input with RN; the best variant only
 * (the scalar reference of this size is the slow part). */
START_TEST(rht_large_both_amaxes_one_pass)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    if (!nv) return;
    ck_assert_int_eq(nvfp4_simd_set(vs[nv - 1], NULL), NVFP4_OK);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        rng_state = (uint64_t)(0xB16 + bf16);
        tensor t;
        tensor_make(&t, 2048, 2064, bf16);
        size_t n = t.rows * t.cols, last = n - 1;
        if (!bf16) /* finite and below 2^100, so that the planted maximum is the amax */
            for (size_t i = 0; i < n; i++)
                if (!(fabsf(t.x[i]) < 0x1p100f)) t.x[i] = 1.0f;
        t.x[last] = -0x1p110f; /* the last element of the last row group */
        t.xb[last] = nvfp4_bf16_from_f32(t.x[last]);
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.block = NVFP4_BLOCK_1X16;
        o.columnwise = true;
        o.rht = true;
        o.rht_fp32 = true;
        o.rounding = bf16 ? NVFP4_RN : NVFP4_SR;
        o.rht_signs = bf16 ? NVFP4_RHT_SIGNS_TE : NVFP4_RHT_SIGNS_SEEDED;
        o.rht_sign_seed = 3;
        o.seed = 11;
        float in = -1.0f, r = -1.0f;
        const void *x = bf16 ? (const void *)t.xb : (const void *)t.x;
        /* the driver fast.c uses for this shape: too large to keep, one pass for both amaxes */
        nvfp4_simd_col_job j;
        memset(&j, 0, sizeof j);
        j.x = x;
        j.bf16 = bf16;
        j.rows = t.rows;
        j.cols = t.cols;
        j.rht = 1;
        j.rht_round_bf16 = 0;
        nvfp4_rht_config rc;
        nvfp4_rht_config_init(&rc);
        rc.signs = o.rht_signs;
        rc.sign_seed = o.rht_sign_seed;
        ck_assert_int_eq(nvfp4_rht_sign_mask(&rc, j.rht_mask, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_simd_rht_transforms_twice(&j), 1);
        r = nvfp4_simd_rht_amax_and_input_amax(&j, &in);
        ck_assert(bits_f32(r) == bits_f32(nvfp4_simd_rht_amax(&j)));
        ck_assert(bits_f32(in) == bits_f32(nvfp4_simd_amax(x, bf16, t.rows * t.cols)));
        if (!bf16) ck_assert_float_eq(in, 0x1p110f);
        compare_paths(&t, bf16, &o); /* also checks r through the columnwise amax and codes */
        tensor_free(&t);
    }
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* ---- the generic driver: every other E4M3-scaled NVFP4 recipe ------------- */

static const char *const generic_recipes[] = {
    "te-pyref",      "torchao",    "torchao-0.13-0.16", "modelopt",       "exact",          "te-4over6",
    "te-4over6-mse", "te-4over6-fast", "te-4over6-mse-fast", "te-rowscaled", "torchao-1level", "fast-math",
    "ggml",          "te-pow2",  "mxfp4-ceil",        "mxfp4-even",     "te",
    "te-ue5m3",      "te-ue5m3-1level", "flashinfer-pertoken"};
#define NGENERIC (sizeof generic_recipes / sizeof generic_recipes[0])

/* A tensor planted with the values each recipe's rules turn on: a zero
 * block, E2M1 midpoints of the block scale (ties: the tensor amax is 2688
 * so that te's S_enc is 1), E4M3 scale midpoints, subnormals, +-0, NaN and
 * +-Inf (when specials: a NaN makes the amax of torchao and modelopt NaN,
 * and every code with it) in separate blocks, on top of tensor_make's
 * flavours. */
static void plant_adversarial(tensor *t, int specials)
{
    static const float mids[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, -0.25f, -2.5f, -5.0f,
                                 6.0f,  -6.0f, 0.0f,  -0.0f, 0x1p-149f, -0x1p-130f};
    size_t n = t->rows * t->cols;
    for (size_t i = 0; i < n; i++) {
        size_t blk = i / 16;
        switch (blk % 11) {
        case 0: t->x[i] = 0.0f; break;                          /* amax 0 block */
        case 1: t->x[i] = mids[i % 16] * (blk % 3 ? 1.0f : 448.0f); break; /* E2M1 ties */
        case 2: t->x[i] = (float)(i % 16) * 0x1.2p-4f; break;     /* scale E4M3 midpoints */
        case 3: t->x[i] = f32_bits((uint32_t)(1 + (i * 7919) % 0x7FFFFF)); break; /* subnormals */
        default: break;
        }
    }
    if (specials && n > 64) {
        t->x[n / 3] = NAN;
        t->x[n / 2] = INFINITY;
        t->x[n / 2 + 17] = -INFINITY;
    }
    if (n > 8) t->x[n - 1] = 2688.0f;
    for (size_t i = 0; i < n; i++) t->xb[i] = nvfp4_bf16_from_f32(t->x[i]);
}

/* Each generic recipe (and te, whose 1x32 blocks take the generic driver)
 * x block (1x16, 16x16, 1x32 where the plan accepts it) x orientation x
 * RN/SR x dtype on shapes with and without padding, seeded and adversarial
 * values; the fast path must be taken (checked) and give the reference's
 * bytes, amaxes and row amaxes. _i: the recipe. */
START_TEST(generic_recipes_match_reference)
{
    const char *name = generic_recipes[_i];
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    /* 16 x 2090: rows of 131 (1x32: 66) blocks, more than one of the driver's 64-block steps */
    static const size_t shapes[][2] = {{32, 64}, {48, 160}, {37, 50}, {32, 32}, {5, 33}, {64, 1024}, {16, 2090}};
    int ran = 0, ran_1x16_rn = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (int kind = 0; kind < 3; kind++) { /* finite; finite and planted; all specials */
            rng_state = 0x6E0ull * (unsigned)(_i + 1) + 31 * sh + (unsigned)kind;
            tensor t;
            tensor_make(&t, shapes[sh][0], shapes[sh][1], kind == 2);
            if (kind) plant_adversarial(&t, kind == 2);
            bool pad = t.rows % 16 || t.cols % 16;
            for (int cfg = 0; cfg < 18; cfg++) {
                static const nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
                nvfp4_quant_opts o;
                nvfp4_quant_opts_init(&o);
                o.recipe = name;
                o.pad = pad;
                o.block = blocks[cfg % 3];
                o.rounding = (cfg / 3) & 1 ? NVFP4_SR : NVFP4_RN;
                o.seed = rnd();
                o.offset = rnd() % 1000;
                int orient = cfg / 6; /* row, col, both */
                o.rowwise = orient != 1;
                o.columnwise = orient != 0;
                nvfp4_quant_plan p;
                /* what the recipe refuses (SR without SR, 4over6 or row scales with 1x32) is skipped */
                if (nvfp4_quant_plan_init(&p, &o, NVFP4_DTYPE_F32, t.rows, t.cols, NULL) != NVFP4_OK) continue;
                if (o.block == NVFP4_BLOCK_1X16 && o.rounding == NVFP4_RN) ran_1x16_rn++;
                ran++;
                for (int v = 0; v < nv; v++) {
                    ck_assert_int_eq(nvfp4_simd_set(vs[v], NULL), NVFP4_OK);
                    ck_assert_msg(nvfp4_quant_fast_handles(&p), "%s %s %s: not on the fast path", name,
                                  nvfp4_block_name(o.block), nvfp4_rounding_name(o.rounding));
                    compare_paths(&t, 0, &o);
                    compare_paths(&t, 1, &o);
                }
            }
            tensor_free(&t);
        }
    /* 7 shapes x 3 kinds x 3 orientations of 1x16 RN; 105: at least 5 of the 18 configurations
     * (a recipe without SR and with 1x16 blocks only, flashinfer-pertoken, runs the 63 alone) */
    int want_ran = nvfp4_recipe_get_info(nvfp4_recipe_find(name))->supports_sr ? 105 : 63;
    ck_assert_msg(ran_1x16_rn == 63 && ran >= want_ran, "%s: only %d configurations (%d 1x16 RN) ran", name, ran, ran_1x16_rn);
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

/* 4over6 errors only feed err4 < err6: equal bits, or both NaN (whose
 * payload and sign follow the operand order the compiler chose). */
static bool same_error(float a, float b) { return bits_f32(a) == bits_f32(b) || (isnan(a) && isnan(b)); }

/* The leaves one by one against the scalar leaves (src/core/ per element)
 * on rows of every flavour, for each generic recipe: block amaxes with
 * either NaN rule, encodes with RN and SR, 4over6 errors by bits. */
START_TEST(generic_leaves_match_scalar)
{
    const nvfp4_recipe *rec = nvfp4_recipe_find(generic_recipes[_i]);
    const nvfp4_core_recipe *r = &rec->core;
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    const nvfp4_simd_gen_leaves *S = nvfp4_simd_gen_leaves_for(NVFP4_SIMD_SCALAR);
    enum { NB = 37 };
    for (int v = 0; v < nv; v++) {
        const nvfp4_simd_gen_leaves *L = nvfp4_simd_gen_leaves_for(vs[v]);
        ck_assert_ptr_ne(L, S);
        for (unsigned s = 0; s < 40; s++) {
            rng_state = 0x1EAFull * (unsigned)(_i + 1) + s;
            tensor t;
            tensor_make(&t, 1, 16 * NB, (int)(s % 2));
            if (s % 4 == 3) plant_adversarial(&t, (int)(s % 2));
            float a1[NB], a2[NB], f[NB];
            for (int nanprop = 0; nanprop < 2; nanprop++) {
                L->block_amax(t.x, NB, nanprop, a1);
                S->block_amax(t.x, NB, nanprop, a2);
                for (size_t b = 0; b < NB; b++)
                    ck_assert_msg(bits_f32(a1[b]) == bits_f32(a2[b]), "%s block %zu amax %a vs %a", rec->info.name, b,
                                  (double)a1[b], (double)a2[b]);
            }
            for (size_t len = 16 * NB - 5; len <= 16 * NB; len += 5) {
                int n1, n2;
                float m1 = L->amax_nan(t.x, len, &n1), m2 = S->amax_nan(t.x, len, &n2);
                ck_assert_msg(bits_f32(m1) == bits_f32(m2) && n1 == n2, "%s amax_nan over %zu: %a %d vs %a %d",
                              rec->info.name, len, (double)m1, n1, (double)m2, n2);
            }
            float amax = nvfp4_simd_gen_tensor_amax(t.x, 16 * NB, r->amax_nan_propagates);
            if (s % 5 == 4) amax = 2688.0f;
            nvfp4_core_global g = nvfp4_core_global_from_amax(r, amax);
            S->block_amax(t.x, NB, r->amax_nan_propagates, a2);
            for (size_t b = 0; b < NB; b++) {
                uint8_t sc = nvfp4_core_block_scale(r, &g, a2[b]);
                if (s % 7 == 6) sc = (uint8_t)(rnd() % 0x7F); /* any byte, 0 included */
                f[b] = nvfp4_core_block_prepare(r, &g, sc).factor;
                if (nvfp4_core_is_4over6(r)) {
                    uint8_t cand[2];
                    float e1[2], e2[2];
                    nvfp4_core_4over6_scales(r, &g, a2[b], &cand[0], &cand[1]);
                    float fc[2] = {nvfp4_core_block_prepare(r, &g, cand[0]).factor,
                                   nvfp4_core_block_prepare(r, &g, cand[1]).factor};
                    L->err_4over6(r, &g, t.x + 16 * b, cand, fc, e1);
                    S->err_4over6(r, &g, t.x + 16 * b, cand, fc, e2);
                    ck_assert_msg(same_error(e1[0], e2[0]) && same_error(e1[1], e2[1]),
                                  "%s block %zu errors %a %a vs %a %a", rec->info.name, b, (double)e1[0],
                                  (double)e1[1], (double)e2[0], (double)e2[1]);
                }
            }
            uint8_t rb1[16 * NB], rb2[16 * NB], c1[8 * NB], c2[8 * NB];
            nvfp4_simd_sr sr = {rnd(), rnd() % 100};
            uint64_t block0 = s % 3 ? rnd() : 0xFFFFFFFFull - 3; /* a carry into the counter's high word */
            L->sr_bytes(&sr, block0, NB, rb1);
            S->sr_bytes(&sr, block0, NB, rb2);
            assert_same_bytes(rb1, rb2, sizeof rb1, "SR bytes", rec->info.name);
            for (int use_sr = 0; use_sr < 2; use_sr++) {
                if (use_sr && !rec->info.supports_sr) continue;
                L->encode(r, t.x, NB, f, use_sr ? rb1 : NULL, c1);
                S->encode(r, t.x, NB, f, use_sr ? rb1 : NULL, c2);
                assert_same_bytes(c1, c2, sizeof c1, use_sr ? "SR codes" : "RN codes", rec->info.name);
            }
            tensor_free(&t);
        }
    }
}
END_TEST

/* te-rowscaled on a large tensor with 1, 2 and 3 threads, and the generic
 * driver through nvfp4_quantize_into on the caller's buffers. */
START_TEST(generic_threads_and_into)
{
    nvfp4_simd_variant vs[NVFP4_SIMD_VARIANTS];
    int nv = vector_variants(vs);
    if (!nv) return;
    int saved = omp_get_max_threads();
    ck_assert_int_eq(nvfp4_simd_set(vs[nv - 1], NULL), NVFP4_OK);
    rng_state = 0x5CA1Eull;
    tensor t;
    tensor_make(&t, 301, 1000, 1);
    static const char *const names[] = {"te-rowscaled", "torchao", "te-4over6-mse"};
    for (size_t k = 0; k < 3; k++) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.recipe = names[k];
        o.pad = true;
        o.columnwise = true;
        o.rounding = k == 2 ? NVFP4_RN : NVFP4_SR;
        o.seed = 5;
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            compare_paths(&t, (int)(k == 1), &o);
        }
        nvfp4_quant_plan p;
        ck_assert_int_eq(nvfp4_quant_plan_init(&p, &o, NVFP4_DTYPE_F32, t.rows, t.cols, NULL), NVFP4_OK);
        ck_assert(nvfp4_quant_fast_handles(&p));
        nvfp4_quant_buffers b = {malloc(p.row.data_bytes), malloc(p.row.scale_rows * p.row.scale_cols),
                                 malloc(p.col.data_bytes), malloc(p.col.scale_rows * p.col.scale_cols)};
        nvfp4_quantized got, want;
        ck_assert_int_eq(nvfp4_quantize_into(&p, t.x, &b, &got, NULL), NVFP4_OK);
        ck_assert_int_eq(quantize(&t, 0, &o, 1, &want, NULL), NVFP4_OK);
        assert_same_qtensor(&got.row, &want.row, "rowwise", names[k]);
        assert_same_qtensor(&got.col, &want.col, "columnwise", names[k]);
        nvfp4_quantized_free(&got);
        nvfp4_quantized_free(&want);
        free(b.row_data);
        free(b.row_scale);
        free(b.col_data);
        free(b.col_scale);
    }
    tensor_free(&t);
    omp_set_num_threads(saved);
    nvfp4_simd_set(NVFP4_SIMD_AUTO, NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("libpath");
    TCase *tc = tcase_create("fast_vs_reference");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, random_configurations, 0, 8);
    tcase_add_test(tc, odd_shape_all_orientations);
    tcase_add_test(tc, special_tensors);
    tcase_add_test(tc, routing);
    tcase_add_loop_test(tc, mx_configurations, 0, 2);
    tcase_add_loop_test(tc, quantize_into_caller_buffers, 0, 2);
    tcase_add_test(tc, shape_errors_unchanged);
    tcase_add_test(tc, streaming_stores_same_bytes);
    tcase_add_loop_test(tc, generic_leaves_match_scalar, 0, (int)NGENERIC);
    suite_add_tcase(s, tc);
    /* the minutes-long ones, tagged so that make check-aarch64 (under
     * qemu, CK_EXCLUDE_TAGS=large) can leave them out */
    TCase *large = tcase_create("fast_vs_reference_large");
    tcase_set_tags(large, "large");
    tcase_set_timeout(large, 120);
    tcase_add_test(large, columnwise_padding_in_strips);
    tcase_add_test(large, threads_and_large_buffers);
    tcase_add_test(large, rht_large_both_amaxes_one_pass);
    tcase_add_loop_test(large, generic_recipes_match_reference, 0, (int)NGENERIC);
    tcase_add_test(large, generic_threads_and_into);
    suite_add_tcase(s, large);
    return s;
}

int main(void) { return nvfp4_check_run(suite()); }
