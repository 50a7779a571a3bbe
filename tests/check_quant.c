/* check_quant.c - tensor-level quantization: layouts (rowwise, columnwise,
 * 16x16, 1x32), padding and shape errors, bf16 input, the SR contract
 * (DESIGN.md 3.3) at the element and tensor level, thread-count
 * independence, RHT on the columnwise output. */
#include <check.h>
#include "support/check_main.h"
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/recipe.h"
#include "core/philox.h"
#include "recipes/recipe.h"

/* ---- helpers ------------------------------------------------------------ */

static uint64_t rng_state;
static uint64_t splitmix(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform(void) { return (double)(splitmix() >> 11) * 0x1p-53; }

/* Values spread over several binades, with per-row magnitude variation. */
static float *random_tensor(size_t rows, size_t cols, uint64_t seed)
{
    rng_state = seed;
    float *x = malloc(rows * cols * sizeof *x);
    for (size_t i = 0; i < rows; i++) {
        double row_scale = ldexp(1.0, (int)(splitmix() % 12) - 6);
        for (size_t j = 0; j < cols; j++) x[i * cols + j] = (float)((uniform() * 2 - 1) * row_scale);
    }
    return x;
}

static uint8_t nib(const uint8_t *d, size_t k) { return (uint8_t)((d[k >> 1] >> (4 * (k & 1))) & 0xF); }

static nvfp4_quant_opts opts(const char *recipe, nvfp4_block b, nvfp4_rounding rnd, bool row, bool col)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = b;
    o.rounding = rnd;
    o.rowwise = row;
    o.columnwise = col;
    o.seed = 0x0123456789ABCDEFull;
    o.offset = 0x100000000ull - 1; /* the +1 / +2 of columnwise carries into hi(offset) */
    return o;
}

/* ---- layouts ------------------------------------------------------------ */

START_TEST(tiles_16x16_are_transposes)
{
    size_t rows = 64, cols = 48;
    float *x = random_tensor(rows, cols, 1);
    nvfp4_quant_opts o = opts("te", NVFP4_BLOCK_16X16, NVFP4_RN, true, true);
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, NULL), NVFP4_OK);
    ck_assert_uint_eq(q.row.scale_cols, cols / 16);
    ck_assert_uint_eq(q.col.scale_cols, rows / 16);
    ck_assert_float_eq(q.row.amax, q.col.amax);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            ck_assert_uint_eq(nib(q.row.data, i * cols + j), nib(q.col.data, j * rows + i));
            ck_assert_uint_eq(q.row.scale[i * (cols / 16) + j / 16], q.col.scale[j * (rows / 16) + i / 16]);
        }
    /* The tile byte is te's scale of the 16x16 amax. */
    float s_enc = fminf(2688.0f / q.row.amax, 0x1.fffffep127f);
    float m = s_enc * 0x1.555556p-3f;
    for (size_t ti = 0; ti < rows / 16; ti++)
        for (size_t tj = 0; tj < cols / 16; tj++) {
            float a = 0;
            for (size_t r = 0; r < 16; r++)
                for (size_t c = 0; c < 16; c++) a = fmaxf(a, fabsf(x[(ti * 16 + r) * cols + tj * 16 + c]));
            for (size_t r = 0; r < 16; r++)
                ck_assert_uint_eq(q.row.scale[(ti * 16 + r) * (cols / 16) + tj], nvfp4_e4m3_from_f32(a * m, true));
        }
    /* Dequantized columnwise = transpose of dequantized rowwise. */
    float *dr = malloc(rows * cols * 4), *dc = malloc(rows * cols * 4);
    ck_assert_int_eq(nvfp4_dequantize(&q, false, dr, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_dequantize(&q, true, dc, NULL), NVFP4_OK);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) ck_assert_float_eq(dr[i * cols + j], dc[j * rows + i]);
    nvfp4_quantized_free(&q);
    free(x), free(dr), free(dc);
}
END_TEST

START_TEST(columnwise_is_rowwise_of_transpose)
{
    size_t rows = 64, cols = 32;
    float *x = random_tensor(rows, cols, 2), *xt = malloc(rows * cols * 4);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) xt[j * rows + i] = x[i * cols + j];
    nvfp4_block blocks[2] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_1X32};
    for (int b = 0; b < 2; b++) {
        nvfp4_quant_opts oc = opts("te", blocks[b], NVFP4_RN, false, true);
        nvfp4_quant_opts orw = opts("te", blocks[b], NVFP4_RN, true, false);
        nvfp4_quantized qc, qr;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &oc, &qc, NULL), NVFP4_OK);
        ck_assert_int_eq(nvfp4_quantize(xt, NVFP4_DTYPE_F32, cols, rows, &orw, &qr, NULL), NVFP4_OK);
        ck_assert(!qc.has_row && qc.has_col);
        ck_assert_uint_eq(qc.col.rows, cols);
        ck_assert_uint_eq(qc.col.cols, rows);
        ck_assert_uint_eq(qc.col.data_bytes, qr.row.data_bytes);
        ck_assert_mem_eq(qc.col.data, qr.row.data, qr.row.data_bytes);
        ck_assert_mem_eq(qc.col.scale, qr.row.scale, qr.row.scale_rows * qr.row.scale_cols);
        nvfp4_quantized_free(&qc);
        nvfp4_quantized_free(&qr);
    }
    free(x), free(xt);
}
END_TEST

/* The same values in BF16 or FP32 storage give the same bytes, rowwise and
 * columnwise, RN and SR, with and without the columnwise RHT-16 (the lab
 * narrows BF16-valued operands to BF16 before the RHT on this contract).
 * Rows of values spread over up to 40 binades, rows reaching below 2^-117,
 * zeros of both signs and a NaN-free tail reach the BF16 RHT's other paths. */
START_TEST(bf16_input_equals_widened_fp32)
{
    size_t rows = 64, cols = 64, n = rows * cols;
    float *x = random_tensor(rows, cols, 3);
    uint16_t *h = malloc(n * 2);
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < n; i++) {
        size_t r = i / cols;
        if (r >= 16 && r < 32) x[i] = ldexpf(x[i], -(int)(splitmix() % 40)); /* wide spreads */
        if (r >= 32 && r < 40) x[i] = ldexpf(x[i], -118);                  /* tiny values */
        if (i % 97 == 0) x[i] = (i % 2) ? -0.0f : 0.0f;
        h[i] = nvfp4_bf16_from_f32(x[i]);
        x[i] = nvfp4_bf16_to_f32(h[i]);
    }
    for (int sr = 0; sr < 2; sr++)
        for (int rht = 0; rht < 2; rht++) {
            nvfp4_quant_opts o = opts("te", NVFP4_BLOCK_1X16, sr ? NVFP4_SR : NVFP4_RN, true, true);
            o.rht = rht;
            nvfp4_quantized a, b;
            ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &a, NULL), NVFP4_OK);
            ck_assert_int_eq(nvfp4_quantize(h, NVFP4_DTYPE_BF16, rows, cols, &o, &b, NULL), NVFP4_OK);
            ck_assert_mem_eq(a.row.data, b.row.data, a.row.data_bytes);
            ck_assert_mem_eq(a.col.data, b.col.data, a.col.data_bytes);
            ck_assert_mem_eq(a.row.scale, b.row.scale, rows * cols / 16);
            ck_assert_mem_eq(a.col.scale, b.col.scale, a.col.scale_rows * a.col.scale_cols);
            ck_assert_float_eq(a.row.amax, b.row.amax);
            ck_assert_float_eq(a.col.amax, b.col.amax);
            ck_assert_float_eq(b.row.amax, nvfp4_amax_bf16(h, n));
            nvfp4_quantized_free(&a);
            nvfp4_quantized_free(&b);
        }
    free(x), free(h);
}
END_TEST

START_TEST(shape_errors_and_padding)
{
    float x[3 * 20];
    for (int i = 0; i < 60; i++) x[i] = (float)(i % 7) - 3.0f;
    nvfp4_quantized q;
    nvfp4_error err;
    nvfp4_quant_opts o = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, true, false);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_ESHAPE);
    ck_assert_ptr_nonnull(strstr(err.message, "not a multiple"));
    ck_assert_ptr_nonnull(strstr(err.message, "pad"));
    o.pad = true;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.row.prows, 3);
    ck_assert_uint_eq(q.row.pcols, 32);
    ck_assert_uint_eq(q.row.data_bytes, 48);
    ck_assert_uint_eq(q.row.scale_cols, 2);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 20; j < 32; j++) ck_assert_uint_eq(nib(q.row.data, i * 32 + j), 0);
    float d[60];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    ck_assert_float_eq(d[21], x[21]); /* 3*20 grid values are exact: amax 3 */
    nvfp4_quantized_free(&q);
    /* Columnwise blocks run along the 3 rows: an error without padding. */
    o = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, false, true);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_ESHAPE);
    ck_assert_ptr_nonnull(strstr(err.message, "columnwise"));
    o.pad = true;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.col.prows, 20);
    ck_assert_uint_eq(q.col.pcols, 16);
    nvfp4_quantized_free(&q);
    /* 16x16 pads both dimensions. */
    o = opts("te", NVFP4_BLOCK_16X16, NVFP4_RN, true, true);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_ESHAPE);
    o.pad = true;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 3, 20, &o, &q, &err), NVFP4_OK);
    ck_assert_uint_eq(q.row.prows, 16);
    ck_assert_uint_eq(q.row.pcols, 32);
    ck_assert_uint_eq(q.col.prows, 32);
    ck_assert_uint_eq(q.col.pcols, 16);
    nvfp4_quantized_free(&q);
}
END_TEST

START_TEST(option_errors)
{
    float x[32] = {1};
    nvfp4_quantized q;
    nvfp4_error err;
    nvfp4_quant_opts o = opts("nope", NVFP4_BLOCK_DEFAULT, NVFP4_RN, true, false);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "nope"));
    o = opts("exact", NVFP4_BLOCK_DEFAULT, NVFP4_SR, true, false);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_EINVAL);
    o = opts("mxfp8", NVFP4_BLOCK_DEFAULT, NVFP4_SR, true, false);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_EINVAL);
    o = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, true, false);
    o.rht = true;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, 32, &o, &q, &err), NVFP4_EINVAL);
    /* RHT with 16x16 tiles is TE's reference with_rht on (16, 16); 1x32 blocks have none */
    o = opts("te", NVFP4_BLOCK_1X32, NVFP4_RN, true, true);
    o.rht = true;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 16, 32, &o, &q, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_quantize(NULL, NVFP4_DTYPE_F32, 1, 32, NULL, &q, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 0, 32, NULL, &q, &err), NVFP4_ESHAPE);
    ck_assert_int_eq(nvfp4_quantize(x, (nvfp4_dtype)7, 1, 32, NULL, &q, &err), NVFP4_EINVAL);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, SIZE_MAX / 2, 64, NULL, &q, &err), NVFP4_ENOMEM);
    /* nothing to free after an error, and freeing twice is harmless */
    nvfp4_quantized_free(&q);
    ck_assert_int_eq(nvfp4_dequantize(&q, false, (float *)x, &err), NVFP4_EINVAL);
    nvfp4_block b;
    ck_assert(nvfp4_block_parse("16x16", &b) && b == NVFP4_BLOCK_16X16);
    ck_assert(!nvfp4_block_parse("8x8", &b));
    ck_assert_str_eq(nvfp4_block_name(NVFP4_BLOCK_1X32), "1x32");
    ck_assert_str_eq(nvfp4_rht_signs_name(NVFP4_RHT_SIGNS_SEEDED), "seeded");
}
END_TEST

/* ---- stochastic rounding ------------------------------------------------ */

START_TEST(sr_mean_over_all_256_bytes)
{
    /* Through the core per-element function of recipe te with a block whose
     * encode factor is exactly 1 (S_enc = 1, s = 1.0 = 0x38): summed over
     * r = 0..255 the decoded codes equal 256*lo + step*floor(256*frac)
     * exactly for every |y| < 6 (no saturation). */
    const nvfp4_core_recipe *core = nvfp4_recipe_core(nvfp4_recipe_find("te"));
    nvfp4_core_global g = nvfp4_core_global_from_amax(core, 2688.0f);
    nvfp4_core_block blk = nvfp4_core_block_prepare(core, &g, 0x38);
    ck_assert_float_eq(blk.factor, 1.0f);
    rng_state = 99;
    for (int t = 0; t < 4000; t++) {
        float y;
        if (t < 48) y = (float)t * 0.125f;                       /* grid points and midpoints */
        else if (t < 96) y = nextafterf((float)(t - 48) * 0.125f, 0.0f); /* just below them */
        else y = (float)(uniform() * 6.0);
        if (!(y < 6.0f)) continue;
        double a = y, step = a < 2 ? 0.5 : (a < 4 ? 1.0 : 2.0);
        double lo = floor(a / step) * step;
        double k8 = floor((a - lo) / step * 256.0);
        for (int sgn = 0; sgn < 2; sgn++) {
            float ys = sgn ? -y : y;
            double sum = 0;
            for (int r = 0; r < 256; r++)
                sum += nvfp4_e2m1_to_f32(nvfp4_core_encode_elem(core, &blk, ys, NVFP4_CORE_SR, (uint8_t)r));
            double expect = 256.0 * lo + step * k8;
            ck_assert_msg(sum == (sgn ? -expect : expect), "y = %a: sum %.17g expected %.17g", (double)ys, sum, expect);
        }
    }
}
END_TEST

/* Recompute every SR code of one orientation from the core functions and the
 * contract: block b of row i takes nvfp4_core_sr_block_bytes(seed, base +
 * half, i*nb + b), half = 0/1 for the two 16-element halves of a 32-block. */
static void check_sr_contract(const nvfp4_quantized *q, const nvfp4_qtensor *t, const float *src, size_t bl,
                              uint64_t base)
{
    const nvfp4_core_recipe *core = nvfp4_recipe_core(q->recipe);
    nvfp4_core_global g = nvfp4_core_global_from_amax(core, t->amax);
    size_t nb = t->pcols / bl;
    for (size_t i = 0; i < t->prows; i++)
        for (size_t b = 0; b < nb; b++) {
            nvfp4_core_block blk = nvfp4_core_block_prepare(core, &g, t->scale[i * nb + b]);
            for (size_t half = 0; half < bl / 16; half++) {
                uint8_t rb[16];
                nvfp4_core_sr_block_bytes(q->opts.seed, base + half, i * nb + b, rb);
                for (size_t k = 0; k < 16; k++) {
                    size_t j = b * bl + half * 16 + k;
                    uint8_t want = nvfp4_core_encode_elem(core, &blk, src[i * t->pcols + j], NVFP4_CORE_SR, rb[k]);
                    ck_assert_uint_eq(nib(t->data, i * t->pcols + j), want);
                }
            }
        }
}

START_TEST(sr_tensor_matches_contract)
{
    size_t rows = 32, cols = 64;
    float *x = random_tensor(rows, cols, 4), *xt = malloc(rows * cols * 4);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) xt[j * rows + i] = x[i * cols + j];
    const char *recipes[] = {"te", "mxfp4-rceil"};
    nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_1X32, NVFP4_BLOCK_16X16};
    for (int r = 0; r < 2; r++)
        for (int b = 0; b < 3; b++) {
            nvfp4_quant_opts o = opts(recipes[r], blocks[b], NVFP4_SR, true, true);
            nvfp4_quantized q, rn;
            ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, NULL), NVFP4_OK);
            size_t bl = blocks[b] == NVFP4_BLOCK_1X32 ? 32 : 16;
            check_sr_contract(&q, &q.row, x, bl, o.offset);
            check_sr_contract(&q, &q.col, xt, bl, o.offset + (bl == 32 ? 2 : 1));
            /* SR really differs from RN somewhere, and the seed matters. */
            o.rounding = NVFP4_RN;
            ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &rn, NULL), NVFP4_OK);
            ck_assert(memcmp(q.row.data, rn.row.data, q.row.data_bytes) != 0);
            nvfp4_quantized_free(&rn);
            o.rounding = NVFP4_SR;
            o.seed ^= 1;
            ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &rn, NULL), NVFP4_OK);
            ck_assert(memcmp(q.row.data, rn.row.data, q.row.data_bytes) != 0);
            nvfp4_quantized_free(&rn);
            nvfp4_quantized_free(&q);
        }
    free(x), free(xt);
}
END_TEST

START_TEST(same_bytes_any_thread_count)
{
    size_t rows = 256, cols = 512; /* above the parallel threshold */
    float *x = random_tensor(rows, cols, 5);
    struct { const char *r; nvfp4_block b; nvfp4_rounding m; } cfg[] = {
        {"te", NVFP4_BLOCK_1X16, NVFP4_SR}, {"te", NVFP4_BLOCK_16X16, NVFP4_RN},
        {"mxfp4-floor", NVFP4_BLOCK_1X32, NVFP4_SR}, {"torchao", NVFP4_BLOCK_1X16, NVFP4_RN}};
    int threads[3] = {1, 2, 7};
    int saved = omp_get_max_threads();
    for (int c = 0; c < 4; c++) {
        nvfp4_quantized ref;
        for (int t = 0; t < 3; t++) {
            omp_set_num_threads(threads[t]);
            nvfp4_quant_opts o = opts(cfg[c].r, cfg[c].b, cfg[c].m, true, true);
            nvfp4_quantized q;
            ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, NULL), NVFP4_OK);
            if (t == 0) {
                ref = q;
                continue;
            }
            ck_assert_mem_eq(q.row.data, ref.row.data, ref.row.data_bytes);
            ck_assert_mem_eq(q.col.data, ref.col.data, ref.col.data_bytes);
            ck_assert_mem_eq(q.row.scale, ref.row.scale, ref.row.scale_rows * ref.row.scale_cols);
            ck_assert_mem_eq(q.col.scale, ref.col.scale, ref.col.scale_rows * ref.col.scale_cols);
            ck_assert_float_eq(q.row.amax, ref.row.amax);
            nvfp4_quantized_free(&q);
        }
        nvfp4_quantized_free(&ref);
    }
    omp_set_num_threads(saved);
    free(x);
}
END_TEST

/* ---- RHT ---------------------------------------------------------------- */

START_TEST(rht_columnwise)
{
    /* The columnwise output with RHT equals the rowwise quantization of
     * bf16(RHT16(x^T)) with TE's signs; its amax is taken after the
     * transform, the rowwise amax before it. */
    size_t rows = 32, cols = 48, n = rows * cols;
    float *x = random_tensor(rows, cols, 6), *xt = malloc(n * 4);
    for (size_t i = 0; i < n; i++) x[i] = nvfp4_bf16_to_f32(nvfp4_bf16_from_f32(x[i]));
    x[5] = 100.0f; /* a clear global max before the transform */
    for (int fp32 = 0; fp32 < 2; fp32++) {
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) xt[j * rows + i] = x[i * cols + j];
        uint32_t mask[4];
        nvfp4_core_rht_mask_te(mask);
        ck_assert_uint_eq(mask[0], 0xD7E8u);
        for (size_t g = 0; g < n / 16; g++) nvfp4_core_rht_forward_group(xt + g * 16, xt + g * 16, 16, mask, !fp32);
        nvfp4_quant_opts o = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, true, true);
        o.rht = true;
        o.rht_fp32 = fp32;
        nvfp4_quantized q, ref;
        ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, NULL), NVFP4_OK);
        nvfp4_quant_opts orw = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, true, false);
        ck_assert_int_eq(nvfp4_quantize(xt, NVFP4_DTYPE_F32, cols, rows, &orw, &ref, NULL), NVFP4_OK);
        ck_assert(q.col.rht && !q.row.rht);
        ck_assert_float_eq(q.row.amax, 100.0f);
        ck_assert_float_eq(q.col.amax, ref.row.amax);
        ck_assert(q.col.amax != q.row.amax);
        ck_assert_mem_eq(q.col.data, ref.row.data, ref.row.data_bytes);
        ck_assert_mem_eq(q.col.scale, ref.row.scale, ref.row.scale_rows * ref.row.scale_cols);
        nvfp4_quantized_free(&q);
        nvfp4_quantized_free(&ref);
    }
    free(x), free(xt);
}
END_TEST

/* Dequantization returns one NaN, 0x7FC00000, whatever made it: an invalid
 * product (scale 0 times amax +Inf, x86's default NaN 0xFFC00000), a NaN
 * scale byte of either sign (0xFF decodes to a negative NaN), an amax so
 * large that scale * amax overflows (code 0 times +Inf); on the library path
 * (which the SIMD kernels serve for finite tensors) and in src/core. */
static uint32_t bits_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

START_TEST(dequant_nan_is_canonical)
{
    const nvfp4_core_recipe *te = nvfp4_recipe_core(nvfp4_recipe_find("te"));
    nvfp4_core_global inf = nvfp4_core_global_from_amax(te, INFINITY), one = nvfp4_core_global_from_amax(te, 1.0f);
    ck_assert_uint_eq(bits_of(nvfp4_core_dequant_value(te, &inf, 0x00, 0x0)), 0x7FC00000u);
    ck_assert_uint_eq(bits_of(nvfp4_core_dequant_value(te, &one, 0xFF, 0x1)), 0x7FC00000u);
    ck_assert_uint_eq(bits_of(nvfp4_core_dequant_value(te, &one, 0x7F, 0x9)), 0x7FC00000u);
    nvfp4_core_global huge = nvfp4_core_global_from_amax(te, 0x1p127f);
    ck_assert_uint_eq(bits_of(nvfp4_core_dequant_value(te, &huge, 0x7E, 0x0)), 0x7FC00000u);
    /* a finite value is untouched: code 2 (1.0) under byte 0x38 (1.0), amax 1: fl(1/2688) */
    ck_assert_uint_eq(bits_of(nvfp4_core_dequant_value(te, &one, 0x38, 0x2)), bits_of(0x1.861862p-12f));

    /* 4 rows x 32: row 0 holds +Inf (the tensor amax), the rest finite. */
    float x[4 * 32];
    for (int i = 0; i < 4 * 32; i++) x[i] = (float)(i % 9) - 4.0f;
    x[5] = INFINITY;
    nvfp4_quantized q;
    nvfp4_quant_opts o = opts("te", NVFP4_BLOCK_1X16, NVFP4_RN, true, false);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 4, 32, &o, &q, NULL), NVFP4_OK);
    float d[4 * 32];
    ck_assert_int_eq(nvfp4_dequantize(&q, false, d, NULL), NVFP4_OK);
    size_t nans = 0;
    for (int i = 0; i < 4 * 32; i++)
        if (isnan(d[i])) {
            ck_assert_uint_eq(bits_of(d[i]), 0x7FC00000u);
            nans++;
        }
    ck_assert_uint_gt(nans, 0);
    nvfp4_quantized_free(&q);
}
END_TEST

/* nvfp4_amax_f32 / _bf16 against their definition, the running fmaxf of |x|
 * from 0 (nvfp4_core_amax_step, NaN ignored): on the specials one by one,
 * and on arrays mixing every kind of value at lengths on both sides of the
 * OpenMP threshold (65536) and of the vector width, with the maximum at
 * the last index and at index 0. */
static float amax_definition(const float *x, size_t n)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = nvfp4_core_amax_step(m, x[i], 0);
    return m;
}

START_TEST(amax_is_fmaxf_of_magnitudes)
{
    const float nan_neg = -NAN, sub = 0x1p-149f;
    struct {
        float v[3];
        uint32_t want;
    } cases[] = {
        {{NAN, NAN, NAN}, 0x00000000u},          /* all NaN: 0 */
        {{-0.0f, -0.0f, -0.0f}, 0x00000000u},    /* -0: +0 */
        {{NAN, -INFINITY, 1.0f}, 0x7F800000u},   /* Inf counts, NaN does not */
        {{nan_neg, -sub, 0.0f}, 0x00000001u},    /* the smallest subnormal */
        {{-3.0f, 2.0f, nan_neg}, 0x40400000u},   /* sign dropped */
        {{-FLT_MAX, INFINITY, NAN}, 0x7F800000u},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ck_assert_uint_eq(bits_of(nvfp4_amax_f32(cases[c].v, 3)), cases[c].want);
        uint16_t h[3];
        for (int i = 0; i < 3; i++) h[i] = (uint16_t)(bits_of(cases[c].v[i]) >> 16);
        /* bf16 truncation keeps these patterns' classes (0x1p-149 becomes 0) */
        float w = c == 3 ? 0.0f : nvfp4_core_f32_from_bits(cases[c].want);
        ck_assert_uint_eq(bits_of(nvfp4_amax_bf16(h, 3)), bits_of(w));
    }
    const size_t lens[] = {1, 7, 8, 31, 65535, 65536, 200003};
    uint32_t st = 12345u;
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        size_t n = lens[li];
        float *x = malloc(n * sizeof *x);
        uint16_t *h = malloc(n * sizeof *h);
        float *hf = malloc(n * sizeof *hf);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_nonnull(h);
        ck_assert_ptr_nonnull(hf);
        for (int where = 0; where < 2; where++) {
            for (size_t i = 0; i < n; i++) {
                st = st * 1664525u + 1013904223u;
                uint32_t u = st;
                if (st % 7u == 0) u = (u & 0x80000000u) | 0x7FC00001u; /* NaN */
                else u &= 0xBF7FFFFFu;                              /* finite, |x| < 2 */
                x[i] = nvfp4_core_f32_from_bits(u);
            }
            x[where ? 0 : n - 1] = where ? -1.5e30f : 7.0e30f;
            for (size_t i = 0; i < n; i++) {
                h[i] = (uint16_t)(bits_of(x[i]) >> 16);
                hf[i] = nvfp4_core_bf16_decode(h[i]);
            }
            ck_assert_uint_eq(bits_of(nvfp4_amax_f32(x, n)), bits_of(amax_definition(x, n)));
            ck_assert_uint_eq(bits_of(nvfp4_amax_bf16(h, n)), bits_of(amax_definition(hf, n)));
        }
        free(x);
        free(h);
        free(hf);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quant");
    TCase *tl = tcase_create("layout");
    tcase_add_test(tl, tiles_16x16_are_transposes);
    tcase_add_test(tl, columnwise_is_rowwise_of_transpose);
    tcase_add_test(tl, bf16_input_equals_widened_fp32);
    tcase_add_test(tl, shape_errors_and_padding);
    tcase_add_test(tl, option_errors);
    tcase_add_test(tl, dequant_nan_is_canonical);
    tcase_add_test(tl, amax_is_fmaxf_of_magnitudes);
    suite_add_tcase(s, tl);
    TCase *ts = tcase_create("sr");
    tcase_set_timeout(ts, 60);
    tcase_add_test(ts, sr_mean_over_all_256_bytes);
    tcase_add_test(ts, sr_tensor_matches_contract);
    tcase_add_test(ts, same_bytes_any_thread_count);
    suite_add_tcase(s, ts);
    TCase *tr = tcase_create("rht");
    tcase_add_test(tr, rht_columnwise);
    suite_add_tcase(s, tr);
    return nvfp4_check_run(s);
}
