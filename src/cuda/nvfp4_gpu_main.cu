/*
 * nvfp4_gpu_main.cu - the `nvfp4-gpu` binary: `selftest` (GPU against the CPU
 * library, byte for byte) and `bench` (throughput against a device-to-device
 * copy). docs/cuda.md describes both.
 *
 * Exit codes: 0 success / all identical, 1 a difference, 2 usage or
 * runtime error, 77 no CUDA device (the automake "skip" code; the CLI test
 * and tools/gpu-check.sh treat it as skipped).
 */
#include <cuda_runtime.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "nvfp4/cuda.h"
#include "nvfp4/gemm.h"
#include "nvfp4/quant.h"
#include "cuda/internal.h"

#define EXIT_OK 0
#define EXIT_DIFF 1
#define EXIT_USAGE 2
#define EXIT_NO_DEVICE 77

/* ---- deterministic test data (splitmix64) ---------------------------------------- */
static uint64_t sm64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(uint64_t *s) { return (double)(sm64(s) >> 11) * 0x1p-53; }
static float normal(uint64_t *s)
{
    double u1 = unif(s), u2 = unif(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}
static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

enum content {
    C_NORMAL, C_OUTLIERS, C_WIDE, C_ZERO, C_ZERO_BLOCKS, C_UNDERFLOW, C_SPECIALS, C_TINY, C_INF_AMAX, C_TIES,
    C_COUNT
};
static const char *content_name[C_COUNT] = {"normal", "outliers", "wide-range", "all-zero", "zero-blocks",
                                            "underflow-blocks", "nan-inf-negzero", "tiny-amax", "inf-amax", "grid-ties"};

static void fill(float *x, size_t rows, size_t cols, int kind, uint64_t seed)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 17;
    size_t n = rows * cols;
    for (size_t i = 0; i < n; i++) {
        float v = normal(&s);
        switch (kind) {
        case C_OUTLIERS: v = (unif(&s) < 0.01) ? v * 1000.0f : v; break;
        case C_WIDE: v = v * (float)ldexp(1.0, (int)(sm64(&s) % 60) - 30); break;
        case C_ZERO: v = (sm64(&s) & 1) ? -0.0f : 0.0f; break;
        case C_ZERO_BLOCKS: if (((i % cols) / 16 + (i / cols)) % 3 == 0) v = 0.0f; break;
        case C_UNDERFLOW: v = ((i % cols) / 16 % 2 == 0) ? v * 1e-9f : v * 100.0f; break;
        case C_SPECIALS: {
            uint64_t r = sm64(&s) % 40;
            if (r == 0) v = from_bits(0x7FC00000u);
            else if (r == 1) v = from_bits(0xFFC00000u);
            else if (r == 2) v = INFINITY;
            else if (r == 3) v = -INFINITY;
            else if (r == 4) v = -0.0f;
            break;
        }
        case C_TINY: v = v * 1e-39f; break; /* fp32 subnormals: 2688/amax overflows */
        case C_INF_AMAX: if (i == n / 2) v = INFINITY; break;
        case C_TIES: {
            /* multiples of 1/4 of a power of two: many scaled values land on
             * E2M1 midpoints and E4M3 scale ties */
            int k = (int)(sm64(&s) % 49) - 24;
            v = (float)k * 0.25f * (float)ldexp(1.0, (int)(sm64(&s) % 5));
            break;
        }
        default: break;
        }
        x[i] = v;
    }
}

/* ---- cases ------------------------------------------------------------------------ */
struct scase {
    const char *group; /* table row; NULL: the recipe */
    const char *recipe;
    nvfp4_block block;
    nvfp4_rounding rnd;
    bool row, col, rht, rht_fp32, pad;
    nvfp4_rht_signs signs;
    size_t rows, cols;
    nvfp4_dtype dtype;
    int content;
    uint64_t seed, offset, data_seed;
};

static const size_t shapes16[][2] = {{32, 64}, {48, 80}, {144, 112}, {16, 16}, {272, 48}, {64, 256}, {1, 32}, {96, 208}};
static const size_t shapes32[][2] = {{64, 96}, {160, 32}, {96, 224}, {32, 32}};
static const size_t shapes_pad[][2] = {{33, 50}, {130, 17}, {1, 5}, {7, 300}, {129, 129}};

static void add(std::vector<scase> &v, const scase &c) { v.push_back(c); }

/* Whether the recipe takes this block shape at all (te-rowscaled is 1x16
 * only): a shape it refuses is tested once, as an invalid option, not over
 * the whole grid. */
static bool accepts_block(const char *recipe, nvfp4_block b)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    o.block = b;
    nvfp4_quant_plan plan;
    nvfp4_error err = {};
    return nvfp4_quant_plan_init(&plan, &o, NVFP4_DTYPE_F32, 32, 64, &err) == NVFP4_OK;
}

static std::vector<scase> make_cases(void)
{
    std::vector<scase> v;
    uint64_t k = 0;
    for (size_t ri = 0; ri < nvfp4_recipe_count(); ri++) {
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_at(ri));
        bool nvfp4 = info->elem == NVFP4_ELEM_E2M1 && info->scale_format == NVFP4_SCALEFMT_E4M3;
        std::vector<nvfp4_block> blocks = {info->default_block};
        if (nvfp4 && accepts_block(info->name, NVFP4_BLOCK_16X16)) blocks.push_back(NVFP4_BLOCK_16X16);
        if (nvfp4 && strcmp(info->name, "te") == 0) blocks.push_back(NVFP4_BLOCK_1X32);
        std::vector<nvfp4_rounding> rnds = {NVFP4_RN};
        if (info->supports_sr) { rnds.push_back(NVFP4_SR); rnds.push_back(NVFP4_RZ); }
        /* the main grid: block x orientation x rounding x two shapes */
        for (nvfp4_block b : blocks)
            for (int o = 1; o <= 3; o++)
                for (nvfp4_rounding r : rnds)
                    for (int rep = 0; rep < 2; rep++, k++) {
                        scase c = {};
                        c.recipe = info->name;
                        c.block = b;
                        c.rnd = r;
                        c.row = o & 1;
                        c.col = o & 2;
                        c.signs = NVFP4_RHT_SIGNS_TE;
                        const size_t *sh = b == NVFP4_BLOCK_1X32 ? shapes32[k % 4] : shapes16[k % 8];
                        if (b == NVFP4_BLOCK_16X16 && (sh[0] % 16 || sh[1] % 16)) sh = shapes16[0];
                        c.rows = sh[0];
                        c.cols = sh[1];
                        c.dtype = (k & 1) ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
                        c.content = (int)(k % 3); /* normal, outliers, wide */
                        c.seed = 1000 + k * 7919;
                        c.offset = (k % 4) * 1024 + (k % 3);
                        c.data_seed = k;
                        add(v, c);
                    }
        /* the edge-case tensors, both orientations, default block */
        for (int ct = C_ZERO; ct < C_COUNT; ct++, k++) {
            scase c = {};
            c.recipe = info->name;
            c.block = info->default_block;
            c.rnd = info->supports_sr && (k & 1) ? NVFP4_SR : NVFP4_RN;
            c.row = c.col = true;
            c.signs = NVFP4_RHT_SIGNS_TE;
            c.rows = 64;
            c.cols = 96;
            c.dtype = (ct % 2) ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
            if (ct == C_TINY) c.dtype = NVFP4_DTYPE_F32; /* bf16 has the subnormals too, but keep fp32 */
            c.content = ct;
            c.seed = 42 + k;
            c.offset = k;
            c.data_seed = 5000 + k;
            add(v, c);
        }
    }
    /* the RHT on the columnwise output (te): signs x rounding x bf16/fp32 output */
    const nvfp4_rht_signs signs[3] = {NVFP4_RHT_SIGNS_TE, NVFP4_RHT_SIGNS_SEEDED, NVFP4_RHT_SIGNS_NONE};
    for (int si = 0; si < 3; si++)
        for (int sr = 0; sr < 2; sr++)
            for (int fp = 0; fp < 2; fp++)
                for (int both = 0; both < 2; both++, k++) {
                    scase c = {};
                    c.recipe = "te";
                    c.block = NVFP4_BLOCK_1X16;
                    c.rnd = sr ? NVFP4_SR : NVFP4_RN;
                    c.row = both;
                    c.col = true;
                    c.rht = true;
                    c.rht_fp32 = fp;
                    c.signs = signs[si];
                    const size_t *sh = shapes16[k % 8];
                    c.rows = sh[0] % 16 ? 48 : sh[0];
                    c.cols = sh[1];
                    c.dtype = (k & 1) ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
                    c.content = (int)(k % C_COUNT);
                    c.seed = 77 + k;
                    c.offset = 3 * k;
                    c.data_seed = 9000 + k;
                    add(v, c);
                }
    /* zero padding (shapes not a multiple of the block), and the same shapes
     * without padding (both sides must refuse with the same status) */
    for (size_t i = 0; i < 5; i++)
        for (int pad = 0; pad < 2; pad++)
            for (int b = 0; b < 3; b++, k++) {
                scase c = {};
                c.recipe = b == 2 ? "mxfp4-rceil" : "te";
                c.block = b == 0 ? NVFP4_BLOCK_1X16 : (b == 1 ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X32);
                c.rnd = (k & 1) && b != 2 ? NVFP4_SR : NVFP4_RN;
                c.row = c.col = true;
                c.pad = pad;
                c.signs = NVFP4_RHT_SIGNS_TE;
                c.rows = shapes_pad[i][0];
                c.cols = shapes_pad[i][1];
                c.dtype = (k & 1) ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
                c.content = (int)(k % 3);
                c.seed = 3 + k;
                c.offset = k;
                c.data_seed = 7000 + k;
                add(v, c);
            }
    /* invalid options: both sides must refuse with the same status */
    for (int i = 0; i < 5; i++, k++) {
        scase c = {};
        c.group = "invalid-options";
        c.recipe = i == 0 ? "no-such-recipe" : (i == 1 ? "mxfp8" : "te");
        c.block = i == 3 ? NVFP4_BLOCK_1X32 : NVFP4_BLOCK_DEFAULT;
        c.rnd = i == 1 ? NVFP4_SR : NVFP4_RN;
        c.row = true;
        c.col = i == 3;
        c.rht = i >= 2;                   /* 2: RHT without columnwise; 3: RHT with 1x32 (16x16 has one) */
        c.signs = i == 4 ? (nvfp4_rht_signs)3 : NVFP4_RHT_SIGNS_TE; /* 4: unknown sign choice (3 is inside the enum's value range) */
        c.col = c.col || i == 4;
        c.rows = 32;
        c.cols = 32;
        c.dtype = NVFP4_DTYPE_F32;
        c.data_seed = k;
        add(v, c);
    }
    return v;
}

static void case_label(const scase &c, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s %s%s%s%s%s %zux%zu %s %s seed=%" PRIu64 " off=%" PRIu64, c.recipe, nvfp4_block_name(c.block),
             nvfp4_rounding_name(c.rnd), c.row ? " row" : "", c.col ? " col" : "",
             c.rht ? (c.rht_fp32 ? " rht-fp32" : " rht") : "", c.pad ? " pad" : "", c.rows, c.cols,
             c.dtype == NVFP4_DTYPE_BF16 ? "bf16" : "f32", content_name[c.content], c.seed, c.offset);
}

static void case_opts(const scase &c, nvfp4_quant_opts *o)
{
    nvfp4_quant_opts_init(o);
    o->recipe = c.recipe;
    o->block = c.block;
    o->rounding = c.rnd;
    o->seed = c.seed;
    o->offset = c.offset;
    o->rowwise = c.row;
    o->columnwise = c.col;
    o->rht = c.rht;
    o->rht_signs = c.signs;
    o->rht_sign_seed = c.seed ^ 0xABCDEFull;
    o->rht_fp32 = c.rht_fp32;
    o->pad = c.pad;
}

/* The input in the case's dtype (bf16: the fp32 data rounded to bf16). */
static std::vector<uint8_t> case_input(const scase &c)
{
    std::vector<float> f(c.rows * c.cols);
    fill(f.data(), c.rows, c.cols, c.content, c.data_seed);
    if (c.dtype == NVFP4_DTYPE_F32) {
        std::vector<uint8_t> b(f.size() * 4);
        memcpy(b.data(), f.data(), b.size());
        return b;
    }
    std::vector<uint8_t> b(f.size() * 2);
    for (size_t i = 0; i < f.size(); i++) {
        uint16_t h = nvfp4_bf16_from_f32(f[i]);
        memcpy(&b[2 * i], &h, 2);
    }
    return b;
}

/* ---- comparison of one case --------------------------------------------------------- */
struct outcome {
    bool ok;            /* identical (or both refused with the same status) */
    bool refused;       /* both refused */
    char what[1400];    /* first difference (room for two error messages) */
};

static bool cmp_dev(nvfp4_cuda_cmp_kind kind, const void *host_expected, const void *dev_actual, size_t n, size_t bytes,
                    const char *name, outcome *out)
{
    void *dexp = NULL;
    nvfp4_error err = {};
    uint64_t count = 0;
    nvfp4_cuda_mismatch first[1];
    nvfp4_status st = nvfp4_cuda_alloc(&dexp, bytes, &err);
    if (!st) st = nvfp4_cuda_upload(dexp, host_expected, bytes, &err);
    if (!st) st = nvfp4_cuda_compare(kind, dexp, dev_actual, n, &count, first, 1, &err);
    nvfp4_cuda_free(dexp);
    if (st) {
        snprintf(out->what, sizeof out->what, "%s: compare failed: %s", name, err.message);
        return false;
    }
    if (count) {
        snprintf(out->what, sizeof out->what, "%s: %" PRIu64 " of %zu differ, first at %" PRIu64 ": cpu 0x%X gpu 0x%X", name,
                 count, n, first[0].index, first[0].expected, first[0].actual);
        return false;
    }
    return true;
}

static bool cmp_orientation(const nvfp4_quantized *cq, const nvfp4_cuda_quantized *gq, bool col, outcome *out)
{
    const nvfp4_qtensor *c = col ? &cq->col : &cq->row;
    const nvfp4_cuda_qtensor *g = col ? &gq->col : &gq->row;
    const char *o = col ? "col" : "row";
    char name[64];
    if (c->rows != g->rows || c->cols != g->cols || c->prows != g->prows || c->pcols != g->pcols ||
        c->data_bytes != g->data_bytes || c->scale_rows != g->scale_rows || c->scale_cols != g->scale_cols) {
        snprintf(out->what, sizeof out->what, "%s: shapes differ (cpu %zux%zu/%zux%zu, gpu %zux%zu/%zux%zu)", o, c->rows, c->cols,
                 c->prows, c->pcols, g->rows, g->cols, g->prows, g->pcols);
        return false;
    }
    if (bits_of(c->amax) != bits_of(g->amax)) {
        snprintf(out->what, sizeof out->what, "%s amax: cpu 0x%08X gpu 0x%08X", o, bits_of(c->amax), bits_of(g->amax));
        return false;
    }
    bool e4m3 = c->data_bytes == c->prows * c->pcols;
    snprintf(name, sizeof name, "%s codes", o);
    if (!cmp_dev(e4m3 ? NVFP4_CUDA_CMP_U8 : NVFP4_CUDA_CMP_FP4, c->data, g->data, e4m3 ? c->data_bytes : c->prows * c->pcols,
                 c->data_bytes, name, out))
        return false;
    size_t ns = c->scale_rows * c->scale_cols;
    snprintf(name, sizeof name, "%s scales", o);
    if (!cmp_dev(NVFP4_CUDA_CMP_U8, c->scale, g->scale, ns, ns, name, out)) return false;
    size_t nz = nvfp4_swizzled_size(c->scale_rows, c->scale_cols);
    std::vector<uint8_t> swz(nz);
    nvfp4_scale_swizzle(c->scale, c->scale_rows, c->scale_cols, swz.data());
    snprintf(name, sizeof name, "%s swizzled scales", o);
    if (nz != g->scale_swizzled_bytes || !cmp_dev(NVFP4_CUDA_CMP_U8, swz.data(), g->scale_swizzled, nz, nz, name, out))
        return false;
    /* dequantized values */
    size_t n = c->rows * c->cols;
    std::vector<float> dc(n);
    nvfp4_error err = {};
    float *dg = NULL;
    if (nvfp4_dequantize(cq, col, dc.data(), &err)) {
        snprintf(out->what, sizeof out->what, "%s: cpu dequantize failed: %s", o, err.message);
        return false;
    }
    if ((c->row_amax != NULL) != (g->row_amax != NULL)) {
        snprintf(out->what, sizeof out->what, "%s row amaxes: cpu %s, gpu %s", o, c->row_amax ? "present" : "absent",
                 g->row_amax ? "present" : "absent");
        return false;
    }
    if (c->row_amax) {
        /* a row-scaled result: one amax per stored row, bit for bit (NaN
         * too: both sides keep an element's NaN bits) */
        snprintf(name, sizeof name, "%s row amaxes", o);
        if (!cmp_dev(NVFP4_CUDA_CMP_F32, c->row_amax, g->row_amax, c->prows, c->prows * sizeof(float), name, out))
            return false;
    }
    if (nvfp4_cuda_alloc((void **)&dg, n * sizeof(float), &err) || nvfp4_cuda_dequantize(gq, col, dg, &err)) {
        nvfp4_cuda_free(dg);
        snprintf(out->what, sizeof out->what, "%s: gpu dequantize failed: %s", o, err.message);
        return false;
    }
    /* NaN outputs (NaN or 0 * Inf in the dequantization) carry the
     * platform's NaN payload: any NaN matches any NaN, everything else bit
     * for bit. */
    snprintf(name, sizeof name, "%s dequantized", o);
    bool same = cmp_dev(NVFP4_CUDA_CMP_F32_NANEQ, dc.data(), dg, n, n * sizeof(float), name, out);
    nvfp4_cuda_free(dg);
    return same;
}

static outcome run_case(const scase &c, bool cpu_only)
{
    outcome out = {};
    nvfp4_quant_opts o;
    case_opts(c, &o);
    std::vector<uint8_t> x = case_input(c);
    nvfp4_quantized cq;
    nvfp4_error ec = {}, eg = {};
    nvfp4_status sc = nvfp4_quantize(x.data(), c.dtype, c.rows, c.cols, &o, &cq, &ec);
    if (cpu_only) {
        /* the CPU reference alone: it must accept every padded or divisible case */
        bool expect_ok = c.pad || ((c.cols % 16 == 0) && (c.rows % 16 == 0) && (c.block != NVFP4_BLOCK_1X32 ||
                                                                                  (c.cols % 32 == 0 && c.rows % 32 == 0)));
        if (!c.col && c.block != NVFP4_BLOCK_16X16) expect_ok = c.pad || c.cols % (c.block == NVFP4_BLOCK_1X32 ? 32 : 16) == 0;
        if (c.group && !strcmp(c.group, "invalid-options")) expect_ok = false;
        out.refused = sc != NVFP4_OK;
        out.ok = (sc == NVFP4_OK) == expect_ok;
        if (!out.ok) snprintf(out.what, sizeof out.what, "cpu status %d (%s)", (int)sc, ec.message);
        if (!sc) nvfp4_quantized_free(&cq);
        return out;
    }
    void *dx = NULL;
    nvfp4_cuda_quantized gq;
    memset(&gq, 0, sizeof gq);
    nvfp4_status sg = nvfp4_cuda_alloc(&dx, x.size(), &eg);
    if (!sg) sg = nvfp4_cuda_upload(dx, x.data(), x.size(), &eg);
    if (!sg) sg = nvfp4_cuda_quantize(dx, c.dtype, c.rows, c.cols, &o, &gq, &eg);
    if (sc || sg) {
        out.refused = sc && sg;
        out.ok = sc == sg;
        if (!out.ok)
            snprintf(out.what, sizeof out.what, "status: cpu %d (%s), gpu %d (%s)", (int)sc, ec.message, (int)sg, eg.message);
    } else {
        out.ok = cq.has_row == gq.has_row && cq.has_col == gq.has_col;
        if (!out.ok) snprintf(out.what, sizeof out.what, "orientations differ");
        if (out.ok && cq.has_row) out.ok = cmp_orientation(&cq, &gq, false, &out);
        if (out.ok && cq.has_col) out.ok = cmp_orientation(&cq, &gq, true, &out);
    }
    if (!sc) nvfp4_quantized_free(&cq);
    nvfp4_cuda_quantized_free(&gq);
    nvfp4_cuda_free(dx);
    return out;
}

/* te-order GEMM: quantize A [M, K] and B [N, K] on both sides, multiply. */
static outcome run_gemm_case(size_t M, size_t N, size_t K, uint64_t seed, bool two_d_b, bool cpu_only)
{
    outcome out = {};
    nvfp4_quant_opts oa, ob;
    nvfp4_quant_opts_init(&oa);
    nvfp4_quant_opts_init(&ob);
    ob.block = two_d_b ? NVFP4_BLOCK_16X16 : NVFP4_BLOCK_1X16;
    std::vector<float> a(M * K), b(N * K), dc(M * N), dg(M * N);
    fill(a.data(), M, K, C_OUTLIERS, seed);
    fill(b.data(), N, K, C_NORMAL, seed + 1);
    nvfp4_quantized qa, qb;
    nvfp4_error err = {};
    if (nvfp4_quantize(a.data(), NVFP4_DTYPE_F32, M, K, &oa, &qa, &err) ||
        nvfp4_quantize(b.data(), NVFP4_DTYPE_F32, N, K, &ob, &qb, &err) ||
        nvfp4_gemm(&qa, false, &qb, false, 1.5f, NVFP4_GEMM_TE, dc.data(), &err)) {
        snprintf(out.what, sizeof out.what, "cpu gemm failed: %s", err.message);
        return out;
    }
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
    if (cpu_only) {
        out.ok = true;
        return out;
    }
    void *da = NULL, *db = NULL;
    float *dd = NULL;
    nvfp4_cuda_quantized ga, gb;
    memset(&ga, 0, sizeof ga);
    memset(&gb, 0, sizeof gb);
    nvfp4_status st = nvfp4_cuda_alloc(&da, a.size() * 4, &err);
    if (!st) st = nvfp4_cuda_alloc(&db, b.size() * 4, &err);
    if (!st) st = nvfp4_cuda_alloc((void **)&dd, dg.size() * 4, &err);
    if (!st) st = nvfp4_cuda_upload(da, a.data(), a.size() * 4, &err);
    if (!st) st = nvfp4_cuda_upload(db, b.data(), b.size() * 4, &err);
    if (!st) st = nvfp4_cuda_quantize(da, NVFP4_DTYPE_F32, M, K, &oa, &ga, &err);
    if (!st) st = nvfp4_cuda_quantize(db, NVFP4_DTYPE_F32, N, K, &ob, &gb, &err);
    if (!st) st = nvfp4_cuda_gemm_te(&ga, false, &gb, false, 1.5f, dd, &err);
    if (st) snprintf(out.what, sizeof out.what, "gpu gemm failed: %s", err.message);
    else out.ok = cmp_dev(NVFP4_CUDA_CMP_F32_NANEQ, dc.data(), dd, M * N, M * N * 4, "gemm output", &out);
    nvfp4_cuda_quantized_free(&ga);
    nvfp4_cuda_quantized_free(&gb);
    nvfp4_cuda_free(da);
    nvfp4_cuda_free(db);
    nvfp4_cuda_free(dd);
    return out;
}

/* The compare API itself: planted differences must be found, counted and
 * listed first-by-index. */
static outcome run_compare_case(nvfp4_cuda_cmp_kind kind, size_t n, bool cpu_only)
{
    outcome out = {};
    if (cpu_only) {
        out.ok = true;
        return out;
    }
    bool f32 = kind == NVFP4_CUDA_CMP_F32 || kind == NVFP4_CUDA_CMP_F32_NANEQ;
    size_t bytes = f32 ? n * 4 : (kind == NVFP4_CUDA_CMP_FP4 ? (n + 1) / 2 : n);
    std::vector<uint8_t> e(bytes), a;
    uint64_t s = n;
    for (auto &v : e) v = (uint8_t)sm64(&s);
    a = e;
    /* plant differences at element indices 3, 4097 (second chunk), n-1 */
    size_t idx[3] = {3, 4097 % n, n - 1};
    if (f32) {
        /* element 10: NaN with different payloads on the two sides; equal
         * only for the NaN-equal kind */
        const uint32_t n1 = 0x7FC00000u, n2 = 0x7FFFFFFFu;
        memcpy(&e[40], &n1, 4);
        memcpy(&a[40], &n2, 4);
    }
    for (size_t i : idx) {
        if (f32) a[4 * i + 2] ^= 0x10;
        else if (kind == NVFP4_CUDA_CMP_FP4) a[i / 2] ^= (uint8_t)(1u << (4 * (i & 1)));
        else a[i] ^= 0x01;
    }
    void *de = NULL, *dac = NULL;
    nvfp4_error err = {};
    uint64_t count = 0;
    nvfp4_cuda_mismatch m[8];
    nvfp4_status st = nvfp4_cuda_alloc(&de, bytes, &err);
    if (!st) st = nvfp4_cuda_alloc(&dac, bytes, &err);
    if (!st) st = nvfp4_cuda_upload(de, e.data(), bytes, &err);
    if (!st) st = nvfp4_cuda_upload(dac, a.data(), bytes, &err);
    if (!st) st = nvfp4_cuda_compare(kind, de, dac, n, &count, m, 8, &err);
    nvfp4_cuda_free(de);
    nvfp4_cuda_free(dac);
    if (st) {
        snprintf(out.what, sizeof out.what, "compare failed: %s", err.message);
        return out;
    }
    if (kind == NVFP4_CUDA_CMP_F32)
        out.ok = count == 4 && m[0].index == 3 && m[1].index == 10 && m[2].index == 4097 % n && m[3].index == n - 1;
    else
        out.ok = count == 3 && m[0].index == 3 && m[1].index == 4097 % n && m[2].index == n - 1;
    out.ok = out.ok && m[0].expected != m[0].actual;
    if (!out.ok)
        snprintf(out.what, sizeof out.what, "compare kind %d found %" PRIu64 ", first at %" PRIu64, (int)kind, count, count ? m[0].index : 0);
    return out;
}

/* nvfp4_cuda_check_quantized against the CPU library's bytes as "their"
 * kernel: identical bytes must give a clean report; one planted code and one
 * planted swizzled-scale byte must be found at their indices. */
static outcome run_check_case(bool plant, bool cpu_only)
{
    outcome out = {};
    const size_t rows = 96, cols = 160;
    std::vector<float> x(rows * cols);
    fill(x.data(), rows, cols, C_OUTLIERS, plant ? 31 : 32);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rounding = NVFP4_SR;
    o.seed = 99;
    o.offset = 5;
    o.rowwise = false;
    o.columnwise = true;
    o.rht = true;
    nvfp4_quantized cq;
    nvfp4_error err = {};
    if (nvfp4_quantize(x.data(), NVFP4_DTYPE_F32, rows, cols, &o, &cq, &err)) {
        snprintf(out.what, sizeof out.what, "cpu quantize failed: %s", err.message);
        return out;
    }
    if (cpu_only) {
        nvfp4_quantized_free(&cq);
        out.ok = true;
        return out;
    }
    const nvfp4_qtensor *t = &cq.col;
    size_t nz = nvfp4_swizzled_size(t->scale_rows, t->scale_cols);
    std::vector<uint8_t> codes(t->data, t->data + t->data_bytes), swz(nz);
    nvfp4_scale_swizzle(t->scale, t->scale_rows, t->scale_cols, swz.data());
    float amax = t->amax;
    if (plant) {
        codes[777 / 2] ^= 0x30; /* element 777 (high nibble) */
        swz[100] ^= 0x01;
    }
    void *dx = NULL, *dc = NULL, *ds = NULL;
    nvfp4_cuda_check_report rep;
    nvfp4_status st = nvfp4_cuda_alloc(&dx, x.size() * 4, &err);
    if (!st) st = nvfp4_cuda_alloc(&dc, codes.size(), &err);
    if (!st) st = nvfp4_cuda_alloc(&ds, swz.size(), &err);
    if (!st) st = nvfp4_cuda_upload(dx, x.data(), x.size() * 4, &err);
    if (!st) st = nvfp4_cuda_upload(dc, codes.data(), codes.size(), &err);
    if (!st) st = nvfp4_cuda_upload(ds, swz.data(), swz.size(), &err);
    if (!st)
        st = nvfp4_cuda_check_quantized(dx, NVFP4_DTYPE_F32, rows, cols, &o, true, (const uint8_t *)dc, (const uint8_t *)ds, true,
                                        &amax, &rep, &err);
    nvfp4_cuda_free(dx);
    nvfp4_cuda_free(dc);
    nvfp4_cuda_free(ds);
    nvfp4_quantized_free(&cq);
    if (st) {
        snprintf(out.what, sizeof out.what, "check_quantized failed: %s", err.message);
        return out;
    }
    if (plant) /* and explained as verify does: the planted scale byte is a scale-byte difference */
        out.ok = rep.code_mismatches == 1 && rep.first_codes[0].index == 777 && rep.scale_mismatches == 1 &&
                 rep.first_scales[0].index == 100 && rep.amax_checked && rep.amax_equal && rep.explained &&
                 rep.first_scale_reasons[0] == NVFP4_VR_SCALE_BYTE && rep.reason_count[NVFP4_VR_SCALE_BYTE] >= 1;
    else
        out.ok = rep.code_mismatches == 0 && rep.scale_mismatches == 0 && rep.amax_checked && rep.amax_equal;
    if (!out.ok)
        snprintf(out.what, sizeof out.what, "report: %" PRIu64 " codes, %" PRIu64 " scales differ, amax %s", rep.code_mismatches,
                 rep.scale_mismatches, rep.amax_equal ? "equal" : "differs");
    return out;
}

/* nvfp4_cuda_check_quantized on a row-scaled recipe (te-rowscaled): the CPU
 * library's codes, linear scales and row amaxes as "their" kernel. Identical
 * bytes give a clean report over all prows amaxes; with one row's amax one ulp
 * high (a row that is not the largest, so the tensor maximum is unchanged and
 * a check of the single amax would pass) exactly that row must be reported,
 * with verify's reason (an amax value difference) and nothing else. */
static outcome run_check_rowscaled_case(bool plant, bool cpu_only)
{
    outcome out = {};
    const size_t rows = 48, cols = 64, bad_row = 17;
    std::vector<float> x(rows * cols);
    fill(x.data(), rows, cols, C_OUTLIERS, plant ? 41 : 42);
    for (size_t j = 0; j < cols; j++) x[bad_row * cols + j] *= 0.25f; /* below the largest row */
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te-rowscaled";
    nvfp4_quantized cq;
    nvfp4_error err = {};
    if (nvfp4_quantize(x.data(), NVFP4_DTYPE_F32, rows, cols, &o, &cq, &err)) {
        snprintf(out.what, sizeof out.what, "cpu quantize failed: %s", err.message);
        return out;
    }
    const nvfp4_qtensor *t = &cq.row;
    if (cpu_only || !t->row_amax) {
        out.ok = t->row_amax != NULL;
        if (!out.ok) snprintf(out.what, sizeof out.what, "te-rowscaled result has no row_amax");
        nvfp4_quantized_free(&cq);
        return out;
    }
    std::vector<uint8_t> codes(t->data, t->data + t->data_bytes), sc(t->scale, t->scale + t->scale_rows * t->scale_cols);
    std::vector<float> amaxes(t->row_amax, t->row_amax + t->prows);
    float tensor_amax = t->amax;
    if (plant) amaxes[bad_row] = nextafterf(amaxes[bad_row], INFINITY);
    void *dx = NULL, *dc = NULL, *ds = NULL;
    nvfp4_cuda_check_report rep;
    nvfp4_status st = nvfp4_cuda_alloc(&dx, x.size() * 4, &err);
    if (!st) st = nvfp4_cuda_alloc(&dc, codes.size(), &err);
    if (!st) st = nvfp4_cuda_alloc(&ds, sc.size(), &err);
    if (!st) st = nvfp4_cuda_upload(dx, x.data(), x.size() * 4, &err);
    if (!st) st = nvfp4_cuda_upload(dc, codes.data(), codes.size(), &err);
    if (!st) st = nvfp4_cuda_upload(ds, sc.data(), sc.size(), &err);
    if (!st)
        st = nvfp4_cuda_check_quantized(dx, NVFP4_DTYPE_F32, rows, cols, &o, false, (const uint8_t *)dc, (const uint8_t *)ds,
                                        false, amaxes.data(), &rep, &err);
    nvfp4_cuda_free(dx);
    nvfp4_cuda_free(dc);
    nvfp4_cuda_free(ds);
    nvfp4_quantized_free(&cq);
    if (st) {
        snprintf(out.what, sizeof out.what, "check_quantized failed: %s", err.message);
        return out;
    }
    bool clean_data = rep.code_mismatches == 0 && rep.scale_mismatches == 0 && rep.amax_checked && rep.amax_count == rows;
    if (plant)
        out.ok = clean_data && !rep.amax_equal && rep.amax_mismatches == 1 && rep.n_first_amax == 1 &&
                 rep.first_amax[0].index == bad_row && rep.first_amax[0].actual == rep.first_amax[0].expected + 1 &&
                 rep.amax_actual == amaxes[bad_row] && amaxes[bad_row] < tensor_amax && rep.explained &&
                 rep.first_amax_reasons[0] == NVFP4_VR_VALUE && rep.reason_count[NVFP4_VR_VALUE] == 1;
    else
        out.ok = clean_data && rep.amax_equal && rep.amax_mismatches == 0 && !rep.explained &&
                 rep.amax_expected == tensor_amax;
    if (!out.ok)
        snprintf(out.what, sizeof out.what,
                 "report: %" PRIu64 " codes, %" PRIu64 " scales, %" PRIu64 " of %zu row amaxes differ (first row %" PRIu64 ")",
                 rep.code_mismatches, rep.scale_mismatches, rep.amax_mismatches, rep.amax_count,
                 rep.n_first_amax ? rep.first_amax[0].index : 0);
    return out;
}

/* ---- selftest ------------------------------------------------------------------------ */
struct group_row {
    char name[32];
    int cases, identical, refused, differ;
};

static group_row *group_of(std::vector<group_row> &g, const char *name)
{
    for (auto &r : g)
        if (strcmp(r.name, name) == 0) return &r;
    group_row r = {};
    snprintf(r.name, sizeof r.name, "%s", name);
    g.push_back(r);
    return &g.back();
}

static void usage_selftest(FILE *f)
{
    fprintf(f,
            "usage: nvfp4-gpu selftest [--emulate | --cpu-only] [--native] [--verbose] [--list]\n"
            "  Quantizes every case on the GPU and with the CPU library and demands identical\n"
            "  bytes: codes, scales (linear and swizzled), amax and dequantized values; plus\n"
            "  te-order GEMMs and the compare API. Prints a table; exit 0 all identical,\n"
            "  1 a difference, 2 usage/runtime error, 77 no CUDA device.\n"
            "  --emulate   run the kernel bodies on the CPU (no GPU needed)\n"
            "  --cpu-only  generate the cases and run the CPU reference only\n"
            "  --native    use the native Blackwell cvt instructions where the GPU has them\n"
            "  --list      print the cases and exit\n");
}

static int cmd_selftest(int argc, char **argv)
{
    bool cpu_only = false, verbose = false, list = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--emulate")) nvfp4_cuda_set_emulation(true);
        else if (!strcmp(argv[i], "--cpu-only")) cpu_only = true;
        else if (!strcmp(argv[i], "--native")) setenv("NVFP4_CUDA_NATIVE_CVT", "1", 1);
        else if (!strcmp(argv[i], "--verbose")) verbose = true;
        else if (!strcmp(argv[i], "--list")) list = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage_selftest(stdout);
            return EXIT_OK;
        } else {
            fprintf(stderr, "nvfp4-gpu selftest: unknown option '%s'\n", argv[i]);
            usage_selftest(stderr);
            return EXIT_USAGE;
        }
    }
    std::vector<scase> cases = make_cases();
    if (list) {
        char lab[256];
        for (const scase &c : cases) {
            case_label(c, lab, sizeof lab);
            printf("%s\n", lab);
        }
        return EXIT_OK;
    }
    char dev[256] = "CPU reference only (--cpu-only)";
    if (!cpu_only) {
        nvfp4_error err = {};
        if (nvfp4_cuda_device_describe(dev, sizeof dev, &err)) {
            fprintf(stderr, "nvfp4-gpu selftest: %s; skipped (exit %d). Use --emulate or --cpu-only without a GPU.\n",
                    err.message, EXIT_NO_DEVICE);
            return err.status == NVFP4_EUNSUPPORTED ? EXIT_NO_DEVICE : EXIT_USAGE;
        }
    }
    printf("nvfp4-gpu selftest on %s\n", dev);
    std::vector<group_row> groups;
    int total = 0, bad = 0, shown = 0;
    char lab[256];
    auto record = [&](const char *group, const char *label, const outcome &o) {
        group_row *g = group_of(groups, group);
        g->cases++;
        total++;
        if (o.ok && o.refused) g->refused++;
        else if (o.ok) g->identical++;
        else {
            g->differ++;
            bad++;
            if (shown++ < 20 || verbose) printf("DIFF  %s: %s\n", label, o.what);
        }
        if (verbose && o.ok) printf("ok    %s%s\n", label, o.refused ? " (refused by both)" : "");
    };
    /* coverage of the case list (checked in every mode) */
    bool has_sr = false, has_rz = false, has_rht = false, has_pad = false, has_non128 = false;
    bool blk[4] = {false, false, false, false};
    size_t recipes_seen = 0;
    for (size_t ri = 0; ri < nvfp4_recipe_count(); ri++) {
        const char *name = nvfp4_recipe_get_info(nvfp4_recipe_at(ri))->name;
        for (const scase &c : cases)
            if (!strcmp(c.recipe, name)) {
                recipes_seen++;
                break;
            }
    }
    for (const scase &c : cases) {
        has_sr |= c.rnd == NVFP4_SR;
        has_rz |= c.rnd == NVFP4_RZ;
        has_rht |= c.rht;
        has_pad |= c.pad;
        has_non128 |= (c.rows % 128 != 0);
        blk[c.block] = true;
        outcome o = run_case(c, cpu_only);
        case_label(c, lab, sizeof lab);
        record(c.group ? c.group : c.recipe, lab, o);
    }
    const size_t gshapes[][3] = {{16, 32, 64}, {48, 80, 160}, {130, 7, 256}, {1, 1, 16}, {33, 64, 512}, {128, 128, 1024}};
    for (int i = 0; i < 6; i++) {
        snprintf(lab, sizeof lab, "gemm te %zux%zux%zu%s", gshapes[i][0], gshapes[i][1], gshapes[i][2], i % 2 ? " B 16x16" : "");
        bool two_d = i % 2 && gshapes[i][1] % 16 == 0;
        record("gemm-te", lab, run_gemm_case(gshapes[i][0], gshapes[i][1], gshapes[i][2], 11 + (uint64_t)i, two_d, cpu_only));
    }
    const nvfp4_cuda_cmp_kind kinds[4] = {NVFP4_CUDA_CMP_U8, NVFP4_CUDA_CMP_FP4, NVFP4_CUDA_CMP_F32, NVFP4_CUDA_CMP_F32_NANEQ};
    for (int i = 0; i < 4; i++) {
        snprintf(lab, sizeof lab, "compare kind %d", (int)kinds[i]);
        record("compare-api", lab, run_compare_case(kinds[i], 10001, cpu_only));
    }
    record("check-api", "check_quantized, identical bytes", run_check_case(false, cpu_only));
    record("check-api", "check_quantized, one code and one scale planted", run_check_case(true, cpu_only));
    record("check-api", "check_quantized te-rowscaled, identical bytes and row amaxes", run_check_rowscaled_case(false, cpu_only));
    record("check-api", "check_quantized te-rowscaled, one row amax planted", run_check_rowscaled_case(true, cpu_only));
    bool coverage = total >= 200 && recipes_seen == nvfp4_recipe_count() && has_sr && has_rz && has_rht && has_pad &&
                    has_non128 && blk[NVFP4_BLOCK_1X16] && blk[NVFP4_BLOCK_16X16] && blk[NVFP4_BLOCK_1X32];
    printf("\n| group | cases | identical | refused by both | differ |\n|---|---:|---:|---:|---:|\n");
    for (const auto &g : groups) printf("| %s | %d | %d | %d | %d |\n", g.name, g.cases, g.identical, g.refused, g.differ);
    int refused = 0;
    for (const auto &g : groups) refused += g.refused;
    printf("| **total** | %d | %d | %d | %d |\n\n", total, total - bad - refused, refused, bad);
    printf("coverage: %zu/%zu recipes, blocks 1x16/16x16/1x32 %s, RN/SR/RZ %s, RHT %s, padding %s, rows not multiple of 128 %s\n",
           recipes_seen, nvfp4_recipe_count(), (blk[1] && blk[2] && blk[3]) ? "yes" : "NO", (has_sr && has_rz) ? "yes" : "NO",
           has_rht ? "yes" : "NO", has_pad ? "yes" : "NO", has_non128 ? "yes" : "NO");
    if (!coverage) {
        printf("selftest: FAILED (case list incomplete: %d cases)\n", total);
        return EXIT_DIFF;
    }
    if (bad) {
        printf("selftest: FAILED (%d of %d cases differ)\n", bad, total);
        return EXIT_DIFF;
    }
    printf("selftest: PASSED (%d cases, %s)\n", total,
           cpu_only ? "CPU reference only; nothing compared with a GPU" : "all identical to the CPU library");
    return EXIT_OK;
}

/* ---- probe: the random-byte order of cvt.rs.satfinite.e2m1x4.f32 ---------------------- */
/* docs/cuda.md, "Native Blackwell conversions". One thread per quad:
 * d[i] = cvt.rs(x[4i..4i+3], w[i]); *native says whether this device ran the
 * instruction (0 on a target without it, e.g. sm_90 code). */
__global__ void rs_probe_kernel(const float *x, const uint32_t *w, uint16_t *d, int n, int *native)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
#if NVFP4_CUDA_NATIVE_ACTIVE
    if (i == 0) *native = 1;
    if (i < n) d[i] = (uint16_t)nvfp4_cu_cvt_rs_x4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3], w[i]);
#else
    if (i == 0) *native = 0;
    (void)x;
    (void)w;
    if (i < n) d[i] = 0;
#endif
}

/* Runs the kernel on n quads; 1 = ran natively, 0 = no native cvt.rs in this
 * binary for this device, -1 = CUDA error (message in why). With sim, the
 * host model under that layout stands in for the device (--emulate). */
static int rs_probe_run(const std::vector<float> &x, const std::vector<uint32_t> &w, std::vector<uint16_t> &d, char *why,
                        size_t nwhy, const nvfp4_core_rbits_layout *sim)
{
    if (sim) {
        d.assign(w.size(), 0);
        for (size_t i = 0; i < w.size(); i++) d[i] = (uint16_t)nvfp4_core_cvt_rs_e2m1x4_model(&x[4 * i], w[i], sim);
        return 1;
    }
    int n = (int)w.size(), native = -1;
    float *dx = NULL;
    uint32_t *dw = NULL;
    uint16_t *dd = NULL;
    int *dn = NULL;
    d.assign(w.size(), 0);
    cudaError_t e = cudaMalloc(&dx, x.size() * sizeof(float));
    if (!e) e = cudaMalloc(&dw, w.size() * sizeof(uint32_t));
    if (!e) e = cudaMalloc(&dd, w.size() * sizeof(uint16_t));
    if (!e) e = cudaMalloc(&dn, sizeof(int));
    if (!e) e = cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
    if (!e) e = cudaMemcpy(dw, w.data(), w.size() * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (!e) {
        rs_probe_kernel<<<(unsigned)((n + 255) / 256), 256>>>(dx, dw, dd, n, dn);
        e = cudaGetLastError();
    }
    if (!e) e = cudaDeviceSynchronize();
    if (!e) e = cudaMemcpy(d.data(), dd, w.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost);
    if (!e) e = cudaMemcpy(&native, dn, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dd);
    cudaFree(dn);
    if (e) {
        snprintf(why, nwhy, "%s", cudaGetErrorString(e));
        return -1;
    }
    return native == 1 ? 1 : 0;
}

static void layout_str(const nvfp4_core_rbits_layout *l, char *buf, size_t n)
{
    snprintf(buf, n, "bytes {%d%s, %d%s, %d%s, %d%s} for elements 0..3", l->byte[0], l->rev[0] ? "r" : "", l->byte[1],
             l->rev[1] ? "r" : "", l->byte[2], l->rev[2] ? "r" : "", l->byte[3], l->rev[3] ? "r" : "");
}

/* A value for the random check: every code region, fractions near the carry
 * thresholds, signs, and the specials whose hardware handling is open. */
static float probe_value(uint64_t *s)
{
    uint64_t z = sm64(s);
    static const uint32_t sp[] = {0x7FC00000u, 0xFFC00001u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000000u,
                                  0xBDCCCCCDu, 0x40E00000u, 0xC0E00000u, 0x40C00000u, 0x00000001u, 0x807FFFFFu};
    if ((z & 15u) == 0) return from_bits(sp[(z >> 8) % (sizeof sp / sizeof sp[0])]);
    if ((z & 15u) == 1) return (float)((int)((z >> 8) % 1536u) - 768) / 128.0f;
    uint32_t e = 115u + (uint32_t)((z >> 8) % 16u);
    return from_bits((uint32_t)((z >> 40) & 0x80000000u) | (e << 23) | (uint32_t)((z >> 16) & 0x7FFFFFu));
}

/* "2,0r,3,1r": element k reads byte Bk, reversed where marked. */
static bool parse_layout(const char *t, nvfp4_core_rbits_layout *l)
{
    for (int k = 0; k < 4; k++) {
        if (*t < '0' || *t > '3') return false;
        l->byte[k] = (uint8_t)(*t++ - '0');
        l->rev[k] = 0;
        if (*t == 'r') {
            l->rev[k] = 1;
            t++;
        }
        if (k < 3 && *t++ != ',') return false;
    }
    return *t == 0 && nvfp4_core_rbits_layout_valid(l);
}

static void usage_probe(FILE *f)
{
    fprintf(f, "usage: nvfp4-gpu probe [--emulate B0,B1,B2,B3 --sm N]\n"
               "  Measures which byte of rbits (and in which bit order) each element of\n"
               "  cvt.rs.satfinite.e2m1x4.f32 uses on this GPU (sm_100a / sm_103a), and compares\n"
               "  the device with the model of src/core/sr_rbits.h on random quads.\n"
               "  Exit 0 the model holds (or the layout was measured where none is compiled in),\n"
               "  1 the device differs from the model, 2 runtime error, 77 skipped (no CUDA\n"
               "  device, a device without cvt.rs, or a build without the native cvt).\n"
               "  --emulate L --sm N  no GPU: an sm_N device whose cvt.rs reads like layout L\n"
               "              (element k reads byte Bk, 'r' = bit-reversed; e.g. 2,0r,3,1r) is\n"
               "              played by the host model (checks the probe itself)\n");
}

static int cmd_probe(int argc, char **argv)
{
    nvfp4_core_rbits_layout simulated;
    const nvfp4_core_rbits_layout *sim = NULL;
    const char *sim_arg = "";
    int sm = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage_probe(stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[i], "--emulate") && i + 1 < argc) {
            if (!parse_layout(argv[++i], &simulated)) {
                fprintf(stderr, "nvfp4-gpu probe: --emulate '%s': want four distinct bytes 0..3 like 2,0r,3,1r\n", argv[i]);
                return EXIT_USAGE;
            }
            sim = &simulated;
            sim_arg = argv[i];
        } else if (!strcmp(argv[i], "--sm") && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            sm = atoi(argv[++i]);
        } else {
            fprintf(stderr, "nvfp4-gpu probe: unknown option or missing value '%s'\n", argv[i]);
            usage_probe(stderr);
            return EXIT_USAGE;
        }
    }
    if ((sim != NULL) != (sm > 0)) {
        fprintf(stderr, "nvfp4-gpu probe: --emulate and --sm go together\n");
        return EXIT_USAGE;
    }
    char dev[256], why[256];
    if (sim) {
        snprintf(dev, sizeof dev, "the host model (--emulate %s --sm %d, no GPU)", sim_arg, sm);
    } else {
        nvfp4_error err = {};
        if (nvfp4_cuda_device_describe(dev, sizeof dev, &err)) {
            printf("cvt.rs probe: skipped: %s\n", err.message);
            return err.status == NVFP4_EUNSUPPORTED ? EXIT_NO_DEVICE : EXIT_USAGE;
        }
        int id = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&id) || cudaGetDeviceProperties(&prop, id)) {
            printf("cvt.rs probe: cudaGetDeviceProperties failed\n");
            return EXIT_USAGE;
        }
        sm = prop.major * 10 + prop.minor;
    }
    printf("cvt.rs.satfinite.e2m1x4.f32 rbits probe on %s\n", dev);
    if (sm != 100 && sm != 103) {
        printf("cvt.rs probe: skipped: sm_%d has no cvt.rs (only sm_100a and sm_103a)\n", sm);
        return EXIT_NO_DEVICE;
    }
    /* 1. The read value of each element for rbits 0, ~0 and each single bit:
     * at y = 1 + t/512 (floor(256*frac) = t) an element rounds up to 1.5 iff
     * t + read >= 256, so the number of t in 0..255 that round up is the read
     * value. */
    const int nw = 34;
    std::vector<uint32_t> w;
    std::vector<float> x;
    for (int j = 0; j < nw; j++)
        for (int t = 0; t < 256; t++) {
            w.push_back(j == 0 ? 0u : j == 1 ? 0xFFFFFFFFu : 1u << (j - 2));
            for (int k = 0; k < 4; k++) x.push_back(1.0f + (float)t / 512.0f);
        }
    std::vector<uint16_t> d;
    int ran = rs_probe_run(x, w, d, why, sizeof why, sim);
    if (ran < 0) {
        printf("cvt.rs probe: CUDA error: %s\n", why);
        return EXIT_USAGE;
    }
    if (ran == 0) {
        printf("cvt.rs probe: skipped: this binary has no native cvt for sm_%d (built with NATIVE_CVT=0 or without sm_%da)\n", sm, sm);
        return EXIT_NO_DEVICE;
    }
    int read[4][34] = {{0}};
    bool odd_code = false;
    for (int j = 0; j < nw; j++)
        for (int t = 0; t < 256; t++) {
            uint32_t q = d[(size_t)j * 256 + (size_t)t];
            for (int k = 0; k < 4; k++) {
                uint32_t c = (q >> (4 * k)) & 0xFu;
                if (c == 3u) read[k][j]++;
                else if (c != 2u) odd_code = true;
            }
        }
    nvfp4_core_rbits_layout found = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    bool per_byte = !odd_code;
    static const char *names[4] = {"f", "e", "b", "a"};
    for (int k = 0; k < 4; k++) {
        int byte = -1, nbits = 0;
        bool straight = true, reversed = true, extra = false;
        char wts[160] = "";
        size_t len = 0;
        for (int b = 0; b < 32; b++) {
            int v = read[k][2 + b];
            if (!v) continue;
            nbits++;
            len += (size_t)snprintf(wts + len, len < sizeof wts ? sizeof wts - len : 0, " bit%d=%d", b, v);
            if (byte < 0) byte = b / 8;
            if (b / 8 != byte) extra = true;
            straight &= v == 1 << (b % 8);
            reversed &= v == 1 << (7 - b % 8);
        }
        bool ok = read[k][0] == 0 && read[k][1] == 255 && nbits == 8 && !extra && (straight || reversed);
        if (ok) {
            found.byte[k] = (uint8_t)byte;
            found.rev[k] = (uint8_t)(reversed && !straight);
            printf("element %d (%s, d[%d:%d]): byte %d (rbits[%d:%d]), %s\n", k, names[k], 4 * k + 3, 4 * k, byte, 8 * byte + 7,
                   8 * byte, found.rev[k] ? "bit-reversed" : "straight bit order");
        } else {
            per_byte = false;
            printf("element %d (%s): not one whole byte: read(0) = %d, read(~0) = %d, single bits:%s\n", k, names[k],
                   read[k][0], read[k][1], nbits ? wts : " none");
        }
    }
    if (odd_code) printf("codes other than 1.0 / 1.5 seen in the sweep\n");
    per_byte = per_byte && nvfp4_core_rbits_layout_valid(&found);
    char ls[96];
    nvfp4_core_rbits_layout model, straight_l = nvfp4_core_rbits_layout_straight();
    bool known = nvfp4_core_rbits_layout_of_sm(sm, &model) != 0;
    if (per_byte) {
        layout_str(&found, ls, sizeof ls);
        printf("measured layout: %s\n", ls);
    }
    if (known) {
        layout_str(&model, ls, sizeof ls);
        printf("model for sm_%d (src/core/sr_rbits.h): %s\n", sm, ls);
    } else {
        printf("model for sm_%d (src/core/sr_rbits.h): none compiled in (native SR stays in software)\n", sm);
    }
    /* 2. Random quads and words, specials included: the device against the
     * model with the measured layout, the compiled one and the straight one. */
    const int nq = 16384;
    uint64_t s = 0x5EEDu;
    w.clear();
    x.clear();
    for (int i = 0; i < nq; i++) {
        w.push_back((uint32_t)sm64(&s));
        for (int k = 0; k < 4; k++) x.push_back(probe_value(&s));
    }
    if (rs_probe_run(x, w, d, why, sizeof why, sim) != 1) {
        printf("cvt.rs probe: CUDA error: %s\n", why);
        return EXIT_USAGE;
    }
    int miss_found = 0, miss_model = 0, miss_straight = 0, shown = 0;
    for (int i = 0; i < nq; i++) {
        uint32_t hw = d[(size_t)i];
        if (per_byte && nvfp4_core_cvt_rs_e2m1x4_model(&x[4 * (size_t)i], w[(size_t)i], &found) != hw) {
            miss_found++;
            if (shown++ < 8) {
                uint32_t m = nvfp4_core_cvt_rs_e2m1x4_model(&x[4 * (size_t)i], w[(size_t)i], &found);
                printf("  differs: x = {%08x %08x %08x %08x} rbits %08x: device %04x, model %04x\n", bits_of(x[4 * (size_t)i]),
                       bits_of(x[4 * (size_t)i + 1]), bits_of(x[4 * (size_t)i + 2]), bits_of(x[4 * (size_t)i + 3]), w[(size_t)i],
                       hw, m);
            }
        }
        if (known && nvfp4_core_cvt_rs_e2m1x4_model(&x[4 * (size_t)i], w[(size_t)i], &model) != hw) miss_model++;
        if (nvfp4_core_cvt_rs_e2m1x4_model(&x[4 * (size_t)i], w[(size_t)i], &straight_l) != hw) miss_straight++;
    }
    if (per_byte) printf("random check, %d quads (1 in 16 values NaN/Inf/-0/>6): measured layout %d differ\n", nq, miss_found);
    if (known) printf("random check: compiled model %d differ\n", miss_model);
    printf("random check: straight order (element k = byte k) %d differ\n", miss_straight);
    if (!per_byte || miss_found) {
        printf("cvt.rs probe: FAILED: the device is not a per-byte layout of src/core/sr_rbits.h's model\n");
        return EXIT_DIFF;
    }
    if (known && (miss_model || memcmp(&model, &found, sizeof model))) {
        printf("cvt.rs probe: FAILED: the device differs from the compiled-in layout for sm_%d\n", sm);
        return EXIT_DIFF;
    }
    if (!known) {
        printf("cvt.rs probe: MEASURED: sm_%d has no layout in src/core/sr_rbits.h yet; the one above makes native SR "
               "byte-identical (add it to nvfp4_core_rbits_layout_of_sm)\n", sm);
        return EXIT_OK;
    }
    printf("cvt.rs probe: PASSED: sm_%d reads rbits as the model says; native SR is byte-identical to the software path\n", sm);
    return EXIT_OK;
}

/* ---- bench ----------------------------------------------------------------------------- */
__global__ void fill_bf16(uint16_t *x, size_t n, uint64_t seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        /* a bf16 with sign, exponent 2^-8..2^7 and random mantissa: never NaN/Inf */
        x[i] = (uint16_t)(((z >> 16) & 0x8000u) | ((119u + (uint32_t)(z % 16)) << 7) | (uint32_t)((z >> 8) & 0x7Fu));
    }
}

struct bench_result {
    const char *name;
    double ms, gbs, pct;
    double bytes;
};

template <class F> static double time_median(F f, int warmup, int repeats)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < warmup; i++) f();
    cudaDeviceSynchronize();
    std::vector<float> t;
    for (int i = 0; i < repeats; i++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return repeats % 2 ? t[(size_t)repeats / 2] : 0.5 * (t[(size_t)repeats / 2 - 1] + t[(size_t)repeats / 2]);
}

static void print_json(FILE *f, const char *dev, size_t rows, size_t cols, double in_bytes, int repeats, int warmup,
                       const std::vector<bench_result> &res)
{
    fprintf(f, "{\"device\": \"%s\", \"input\": \"bf16 %zu x %zu (%.0f MiB)\", \"repeats\": %d, \"warmup\": %d, \"results\": [\n", dev,
            rows, cols, in_bytes / 1048576.0, repeats, warmup);
    for (size_t i = 0; i < res.size(); i++)
        fprintf(f, "  {\"op\": \"%s\", \"median_ms\": %.4f, \"bytes\": %.0f, \"gb_per_s\": %.1f, \"pct_of_copy\": %.1f}%s\n",
                res[i].name, res[i].ms, res[i].bytes, res[i].gbs, res[i].pct, i + 1 < res.size() ? "," : "");
    fprintf(f, "]}\n");
}

static int cmd_bench(int argc, char **argv)
{
    bool json = false;
    const char *json_out = NULL;
    size_t mib = 1024;
    int repeats = 11, warmup = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--json-out") && i + 1 < argc) json_out = argv[++i];
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: nvfp4-gpu bench [--json] [--json-out FILE] [--mib N (input size, default 1024)] [--repeats N]\n"
                   "  GB/s of quantize (1x16 RN, 1x16 SR, 16x16, columnwise+RHT; amax precomputed), dequantize and\n"
                   "  amax on a bf16 input, against a device-to-device cudaMemcpy of the input in the same run.\n"
                   "  GB/s counts bytes read + bytes written once; copy moves 2x the input.\n");
            return EXIT_OK;
        } else {
            fprintf(stderr, "nvfp4-gpu bench: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (mib < 16 || repeats < 1) {
        fprintf(stderr, "nvfp4-gpu bench: --mib must be >= 16 and --repeats >= 1\n");
        return EXIT_USAGE;
    }
    char dev[256];
    nvfp4_error err = {};
    if (nvfp4_cuda_device_describe(dev, sizeof dev, &err)) {
        fprintf(stderr, "nvfp4-gpu bench: %s; skipped (exit %d)\n", err.message, EXIT_NO_DEVICE);
        return err.status == NVFP4_EUNSUPPORTED ? EXIT_NO_DEVICE : EXIT_USAGE;
    }
    const size_t cols = 16384, rows = mib * 1024 * 1024 / 2 / cols / 128 * 128, n = rows * cols;
    const double in_bytes = (double)n * 2;
    uint16_t *x = NULL, *y = NULL;
    if (nvfp4_cuda_alloc((void **)&x, n * 2, &err) || nvfp4_cuda_alloc((void **)&y, n * 2, &err)) {
        fprintf(stderr, "nvfp4-gpu bench: %s\n", err.message);
        return EXIT_USAGE;
    }
    fill_bf16<<<4096, 256>>>(x, n, 12345);
    cudaDeviceSynchronize();
    std::vector<bench_result> res;
    double copy_ms = time_median([&] { cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice); }, warmup, repeats);
    double copy_gbs = 2 * in_bytes / copy_ms / 1e6;
    res.push_back({"d2d copy (reference)", copy_ms, copy_gbs, 100.0, 2 * in_bytes});
    nvfp4_cu_set_sync(false);
    struct qspec {
        const char *name;
        nvfp4_block block;
        nvfp4_rounding rnd;
        bool col, rht;
    } specs[] = {{"quantize 1x16 RN rowwise", NVFP4_BLOCK_1X16, NVFP4_RN, false, false},
                 {"quantize 1x16 SR rowwise", NVFP4_BLOCK_1X16, NVFP4_SR, false, false},
                 {"quantize 16x16 RN rowwise", NVFP4_BLOCK_16X16, NVFP4_RN, false, false},
                 {"quantize 1x16 RN columnwise+RHT", NVFP4_BLOCK_1X16, NVFP4_RN, true, true}};
    int rc = EXIT_OK;
    nvfp4_cuda_quantized deq_src;
    memset(&deq_src, 0, sizeof deq_src);
    for (const qspec &s : specs) {
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        o.block = s.block;
        o.rounding = s.rnd;
        o.seed = 7;
        o.rowwise = !s.col;
        o.columnwise = s.col;
        o.rht = s.rht;
        nvfp4_cu_prepared pp;
        nvfp4_cu_set_sync(true);
        nvfp4_status st = nvfp4_cu_quantize_prepare(x, NVFP4_DTYPE_BF16, rows, cols, &o, s.col, &pp, &err);
        nvfp4_cu_set_sync(false);
        if (st) {
            fprintf(stderr, "nvfp4-gpu bench: %s: %s\n", s.name, err.message);
            rc = EXIT_USAGE;
            continue;
        }
        double ms = time_median([&] { (void)nvfp4_cu_quantize_launch(&pp, &err); }, warmup, repeats);
        double bytes = in_bytes + (double)pp.t.data_bytes + (double)(pp.t.scale_rows * pp.t.scale_cols);
        res.push_back({s.name, ms, bytes / ms / 1e6, 100.0 * (bytes / ms / 1e6) / copy_gbs, bytes});
        nvfp4_cu_prepared_free(&pp);
    }
    /* dequantize: rowwise 1x16 codes + scales -> fp32 */
    {
        nvfp4_cu_set_sync(true);
        nvfp4_quant_opts o;
        nvfp4_quant_opts_init(&o);
        float *out = NULL;
        if (nvfp4_cuda_quantize(x, NVFP4_DTYPE_BF16, rows, cols, &o, &deq_src, &err) ||
            nvfp4_cuda_alloc((void **)&out, n * 4, &err)) {
            fprintf(stderr, "nvfp4-gpu bench: dequantize setup: %s\n", err.message);
            rc = EXIT_USAGE;
        } else {
            nvfp4_cu_set_sync(false);
            double ms = time_median([&] { (void)nvfp4_cuda_dequantize(&deq_src, false, out, &err); }, warmup, repeats);
            double bytes = (double)deq_src.row.data_bytes + (double)(deq_src.row.scale_rows * deq_src.row.scale_cols) + (double)n * 4;
            res.push_back({"dequantize 1x16 -> fp32", ms, bytes / ms / 1e6, 100.0 * (bytes / ms / 1e6) / copy_gbs, bytes});
        }
        nvfp4_cuda_free(out);
        nvfp4_cuda_quantized_free(&deq_src);
    }
    /* the amax pass alone (not part of the quantize timings above) */
    {
        uint32_t *d = NULL;
        nvfp4_cu_set_sync(false);
        if (!nvfp4_cuda_alloc((void **)&d, 4, &err)) {
            double ms = time_median([&] {
                cudaMemsetAsync(d, 0, 4);
                (void)nvfp4_cu_amax_launch(x, NVFP4_DTYPE_BF16, n, d, &err);
            }, warmup, repeats);
            res.push_back({"global amax (bf16)", ms, in_bytes / ms / 1e6, 100.0 * (in_bytes / ms / 1e6) / copy_gbs, in_bytes});
            nvfp4_cuda_free(d);
        }
    }
    nvfp4_cu_set_sync(true);
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess) {
        fprintf(stderr, "nvfp4-gpu bench: CUDA error: %s\n", cudaGetErrorString(ce));
        rc = EXIT_USAGE;
    }
    nvfp4_cuda_free(x);
    nvfp4_cuda_free(y);
    FILE *jf = NULL;
    if (json_out && !(jf = fopen(json_out, "w"))) {
        fprintf(stderr, "nvfp4-gpu bench: cannot write %s\n", json_out);
        rc = EXIT_USAGE;
    }
    if (json) print_json(stdout, dev, rows, cols, in_bytes, repeats, warmup, res);
    if (jf) {
        print_json(jf, dev, rows, cols, in_bytes, repeats, warmup, res);
        fclose(jf);
    }
    if (!json) {
        printf("nvfp4-gpu bench on %s\ninput bf16 %zu x %zu (%.0f MiB), median of %d after %d warm-up runs (CUDA events)\n\n", dev, rows,
               cols, in_bytes / 1048576.0, repeats, warmup);
        printf("| operation | median ms | GB/s | %% of copy |\n|---|---:|---:|---:|\n");
        for (const auto &r : res) printf("| %s | %.3f | %.0f | %.0f%% |\n", r.name, r.ms, r.gbs, r.pct);
        printf("\nGoals on H200: 1x16 RN >= 70%% of copy, 1x16 SR >= 50%%.\n");
    }
    return rc;
}

static int cmd_info(void)
{
    char dev[256];
    nvfp4_error err = {};
    if (nvfp4_cuda_device_describe(dev, sizeof dev, &err)) {
        fprintf(stderr, "nvfp4-gpu info: %s\n", err.message);
        return err.status == NVFP4_EUNSUPPORTED ? EXIT_NO_DEVICE : EXIT_USAGE;
    }
    printf("%s\nnative cvt path: %s\n", dev,
#if defined(NVFP4_CUDA_NATIVE_CVT)
           "compiled in for sm_100a (RN) and sm_103a (RN, SR); enable with --native or NVFP4_CUDA_NATIVE_CVT=1"
#else
           "not compiled in"
#endif
    );
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: nvfp4-gpu COMMAND [options]\n"
                   "  selftest   GPU vs the CPU library, identical bytes demanded (--emulate / --cpu-only without a GPU)\n"
                   "  bench      throughput against a device-to-device copy (--json)\n"
                   "  probe      the random-byte order of cvt.rs.satfinite.e2m1x4.f32 on this GPU (sm_100a/sm_103a)\n"
                   "  info       the device\n"
                   "exit codes: 0 ok, 1 difference, 2 usage or runtime error, 77 no CUDA device\n");
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "selftest")) return cmd_selftest(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench")) return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(argv[1], "probe")) return cmd_probe(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info")) return cmd_info();
    if (!strcmp(argv[1], "--version")) {
        printf("nvfp4-gpu %s\n", nvfp4_version());
        return EXIT_OK;
    }
    fprintf(stderr, "nvfp4-gpu: unknown command '%s' (try --help)\n", argv[1]);
    return EXIT_USAGE;
}
