/* suite_cases.c - the case tables of golden suites (nvfp4/suite.h): hard
 * cases by TestFloat-style level (E2M1 and scale ties with their float
 * neighbours, zero and underflowing blocks, outliers, specials, global
 * amaxes) and seeded random and odd-shaped tensors. Every value depends only
 * on the level and the seed: the data come from the project's SplitMix64
 * (core/splitmix.h) and transcendental-free arithmetic (a series logarithm,
 * IEEE sqrt), the same on every IEEE machine. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/splitmix.h"
#include "verify/suite_internal.h"

/* ---- deterministic numbers --------------------------------------------------- */
typedef struct {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r) { return nvfp4_core_splitmix64(&r->s); }

/* Uniform in (0, 1). */
static double uniform(rng *r) { return ((double)(next_u64(r) >> 11) + 0.5) * 0x1p-53; }

/* ln(u) for u > 0 from +, *, / only (2 atanh series), so it is the same on
 * every IEEE machine, unlike libm's log. */
static double det_log(double u)
{
    int e;
    double m = frexp(u, &e); /* u = m * 2^e, m in [0.5, 1) */
    double t = (m - 1.0) / (m + 1.0), t2 = t * t, term = t, sum = 0.0;
    for (int k = 0; k < 40; k++) {
        sum += term / (double)(2 * k + 1);
        term *= t2;
    }
    return (double)e * 0.6931471805599453 + 2.0 * sum;
}

static double normal(rng *r) /* Marsaglia's polar method */
{
    for (;;) {
        double a = 2.0 * uniform(r) - 1.0, b = 2.0 * uniform(r) - 1.0, s = a * a + b * b;
        if (s > 0.0 && s < 1.0) return a * sqrt(-2.0 * det_log(s) / s);
    }
}

static double laplace(rng *r)
{
    double u = uniform(r) - 0.5;
    return u < 0 ? det_log(1.0 + 2.0 * u) : -det_log(1.0 - 2.0 * u);
}

static float bf16_round(float x) /* RN-even to bf16 (finite inputs) */
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* ---- cases --------------------------------------------------------------------- */
static float *alloc_x(gcase *c, size_t rows, size_t cols)
{
    c->rows = rows;
    c->cols = cols;
    c->x = calloc(rows * cols, sizeof(float));
    return c->x;
}

static const float e2m1_ties[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};

/* With global amax 2688, S_enc = 1 and a block whose amax is 6*2^k gets the
 * exact scale 2^k (te), so x = tie*2^k lands exactly on the tie. Block 0:
 * ties; block 1: next float up; block 2: next float down (both signs). */
void suite_edge_e2m1_ties(gcase *c, int level)
{
    int klo = level >= 2 ? -9 : -6, khi = 8;
    size_t rows = (size_t)(khi - klo + 1) + 1;
    float *x = alloc_x(c, rows, 48);
    x[0] = 2688.0f;
    for (int k = klo; k <= khi; k++) {
        float *row = x + (size_t)(k - klo + 1) * 48, s = ldexpf(1.0f, k);
        for (int b = 0; b < 3; b++) {
            float *blk = row + 16 * b;
            blk[0] = 6.0f * s;
            for (int i = 0; i < 7; i++) {
                float t = e2m1_ties[i] * s;
                if (b == 1) t = nextafterf(t, INFINITY);
                if (b == 2) t = nextafterf(t, 0.0f);
                blk[1 + i] = t;
                blk[8 + i] = -t;
            }
            blk[15] = b == 0 ? -0.0f : (b == 1 ? 6.0f * s : -6.0f * s);
        }
    }
    c->name = "edge-e2m1-ties";
    c->desc = "every E2M1 tie (and its float neighbours) at scales 2^k, global amax 2688";
}

/* Block amaxes 6*m for m each midpoint between consecutive scale values
 * (codes 0 .. last, every step-th) and the neighbouring floats, one block
 * per amax, after a first row holding the global amax that makes S_enc = 1. */
static void scale_ties_case(gcase *c, int level, float (*decode)(uint8_t), int last, float global_amax)
{
    int step = level >= 2 ? 1 : 5;
    size_t nb = 0;
    float bam[3 * 254];
    for (int code = 0; code + 1 <= last; code += step) {
        float lo = decode((uint8_t)code), hi = decode((uint8_t)(code + 1));
        float m = (lo + hi) * 0.5f;
        bam[nb++] = 6.0f * m;
        bam[nb++] = nextafterf(6.0f * m, INFINITY);
        bam[nb++] = nextafterf(6.0f * m, 0.0f);
    }
    size_t cols = 256, per_row = cols / 16, rows = (nb + per_row - 1) / per_row + 1;
    float *x = alloc_x(c, rows, cols);
    x[0] = global_amax;
    for (size_t b = 0; b < nb; b++) {
        float *blk = x + cols + b * 16;
        blk[b % 16] = bam[b];
        for (int i = 1; i < 16; i++) blk[(b + (size_t)i) % 16] = bam[b] * (float)(i % 7 - 3) * 0.125f;
    }
}

/* E4M3 midpoints up to 448 (code 126), global amax 2688 so S_enc = 1. */
void suite_edge_e4m3_ties(gcase *c, int level)
{
    scale_ties_case(c, level, nvfp4_e4m3_to_f32, 125, 2688.0f);
    c->name = "edge-e4m3-scale-ties";
    c->desc = "block amax 6*m for E4M3 midpoints m and neighbours, global amax 2688";
}

/* UE5M3 recipes (prototype): every UE5M3 midpoint, subnormal ones included,
 * global amax 6 * 114688 = 688128 so S_enc = 1 (te-ue5m3-1level has S_enc =
 * 1 anyway). */
void suite_edge_ue5m3_ties(gcase *c, int level)
{
    scale_ties_case(c, level, nvfp4_ue5m3_to_f32, 254, 688128.0f);
    c->name = "edge-ue5m3-scale-ties";
    c->desc = "block amax 6*m for UE5M3 midpoints m and neighbours, global amax 688128";
}

void suite_edge_zero_blocks(gcase *c, int level)
{
    (void)level;
    float *x = alloc_x(c, 16, 64);
    rng r = {7};
    for (size_t i = 0; i < 16 * 64; i++) x[i] = (float)normal(&r);
    for (size_t j = 0; j < 64; j++) x[j] = 0.0f;          /* row 0: all +0 */
    for (size_t j = 0; j < 64; j++) x[64 + j] = -0.0f;    /* row 1: all -0 */
    for (size_t j = 0; j < 16; j++) x[2 * 64 + j] = 0.0f; /* single zero blocks */
    for (size_t j = 16; j < 32; j++) x[3 * 64 + j] = -0.0f;
    for (size_t j = 0; j < 16; j++) x[4 * 64 + 48 + j] = (j & 1) ? -0.0f : 0.0f;
    c->name = "edge-zero-blocks";
    c->desc = "+0, -0 and mixed-zero blocks and rows among normal data";
}

/* Global amax 1e6 with blocks whose amax shrinks by 10x per block: the
 * block scale underflows E4M3 (to a subnormal, then 0). */
void suite_edge_underflow(gcase *c, int level)
{
    size_t rows = level >= 2 ? 8 : 2;
    float *x = alloc_x(c, rows, 16 * 12);
    x[0] = 1e6f;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < 12; b++) {
            float a = 1e3f * (float)(i + 1);
            for (size_t d = 0; d < b; d++) a /= 10.0f; /* IEEE division, not libm's powf */
            for (size_t k = 0; k < 16; k++)
                if (!(i == 0 && b == 0 && k == 0)) x[i * 192 + b * 16 + k] = a * (float)((int)(k % 5) - 2) * 0.5f;
        }
    c->name = "edge-underflow";
    c->desc = "blocks far below the global amax (1e6): block scales underflow E4M3";
}

void suite_edge_outliers(gcase *c, int level)
{
    size_t rows = level >= 2 ? 64 : 16;
    float *x = alloc_x(c, rows, 64);
    rng r = {11};
    for (size_t i = 0; i < rows * 64; i++) x[i] = (float)(normal(&r) * 0.01);
    for (size_t i = 0; i < rows; i++) x[i * 64 + (i * 7) % 64] = (i & 1) ? -100.0f : 100.0f;
    c->name = "edge-outliers";
    c->desc = "N(0, 0.01) blocks with one +-100 outlier per row at varying positions";
}

void suite_edge_specials(gcase *c, int level)
{
    (void)level;
    float *x = alloc_x(c, 16, 32);
    rng r = {13};
    for (size_t i = 0; i < 16 * 32; i++) x[i] = (float)normal(&r);
    x[3] = NAN;
    x[32 + 5] = -NAN;
    for (size_t k = 0; k < 16; k++) x[2 * 32 + k] = NAN;     /* an all-NaN block */
    x[3 * 32 + 1] = -0.0f;
    x[4 * 32 + 17] = -1e-30f;                                /* negative underflow */
    x[5 * 32 + 9] = 1e-40f;                                  /* subnormal input */
    c->name = "edge-nan-neg-zero";
    c->desc = "NaN elements and an all-NaN block, -0, negative underflow, subnormal inputs";
}

void suite_edge_amax(gcase *c, int which)
{
    float *x = alloc_x(c, 16, 32);
    rng r = {17 + (uint64_t)which};
    for (size_t i = 0; i < 16 * 32; i++) {
        double v = normal(&r);
        switch (which) {
        case 0: x[i] = (i & 3) ? 0.0f : -0.0f; break;
        case 1: x[i] = (float)v; break;
        case 2: x[i] = (float)(v * 1e-40); break;
        case 3: x[i] = (float)(v * 1e-30); break;
        default: x[i] = (float)(v * 1e37); break;
        }
    }
    static const char *const names[] = {"edge-amax-zero", "edge-amax-inf", "edge-amax-subnormal", "edge-amax-tiny",
                                        "edge-amax-huge"};
    static const char *const descs[] = {"all zeros (+0 and -0): global amax 0",
                                        "one +Inf and one -Inf element: global amax Inf",
                                        "all values subnormal (~1e-40)", "all values ~1e-30", "values ~1e37 and FLT_MAX"};
    if (which == 1) {
        x[5] = INFINITY;
        x[40] = -INFINITY;
    }
    if (which == 4) x[7] = FLT_MAX;
    c->name = names[which];
    c->desc = descs[which];
}

/* Blocks of 32 whose UE8M0 scale is byte 0x00 (2^-127) or the bytes just
 * above it, for MXFP4 (block amax up to 6 * 2^-127 under RCEIL, below 2^-124
 * under FLOOR) and MXFP8 (up to 448 * 2^-127): how a kernel encodes with the
 * smallest scale (2^-127, the 2^-126 of torchao's clamp, a reciprocal of 1)
 * shows only where the scaled elements reach E2M1 / E4M3 codes above 0.
 * edge-amax-subnormal's elements (1e-40) round to 0 under RN. */
void suite_edge_ue8m0_min_scale(gcase *c, int level)
{
    (void)level;
    static const float amax_over_2m127[] = {6.0f, 5.0f, 4.0f, 3.0f, 7.0f, 8.0f, 12.0f, 16.0f, 24.0f,
                                            256.0f, 300.0f, 448.0f, 512.0f};
    size_t nb = sizeof amax_over_2m127 / sizeof amax_over_2m127[0];
    float *x = alloc_x(c, 2, 32 * nb);
    for (size_t b = 0; b < nb; b++) {
        float a = amax_over_2m127[b] * 0x1p-127f; /* exact: a small integer times a power of two */
        for (size_t r = 0; r < 2; r++) {
            float *blk = x + r * 32 * nb + 32 * b;
            for (size_t i = 0; i < 32; i++) blk[i] = a * (float)((int)((i + 3 * b + r) % 15) - 7) * 0.125f;
            blk[(b + 5 * r) % 32] = r ? -a : a;
        }
    }
    c->name = "edge-ue8m0-min-scale";
    c->desc = "blocks of 32 with amax 3..512 times 2^-127: UE8M0 scale byte 0x00 and the bytes above it";
}

void suite_random_case(gcase *c, int kind, int level, uint64_t seed)
{
    size_t rows = level >= 2 ? 256 : 64, cols = level >= 2 ? 512 : 128;
    float *x = alloc_x(c, rows, cols);
    rng r = {seed * (uint64_t)0x100000001B3 + (uint64_t)kind};
    for (size_t i = 0; i < rows * cols; i++) {
        double v = kind == 1 ? laplace(&r) : normal(&r);
        x[i] = (float)v;
    }
    static const char *const names[] = {"random-normal", "random-laplace", "random-channel-outliers",
                                        "random-bf16-exact", "random-bf16-input", "random-normal-rht"};
    static const char *const descs[] = {"N(0, 1)", "Laplace(0, 1)",
                                        "N(0, 1) with every 16th column scaled by 100 (channel outliers)",
                                        "N(0, 1) rounded to bf16, fp32 input", "N(0, 1) as a bf16 input tensor",
                                        "N(0, 1), columnwise output through the RHT (TE signs, bf16)"};
    if (kind == 2)
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 3; j < cols; j += 16) x[i * cols + j] *= 100.0f;
    if (kind == 3 || kind == 4)
        for (size_t i = 0; i < rows * cols; i++) x[i] = bf16_round(x[i]);
    if (kind == 4) c->dtype = NVFP4_DTYPE_BF16;
    if (kind == 5) c->rht = true;
    c->name = names[kind];
    c->desc = descs[kind];
}

void suite_shapes_case(gcase *c, size_t rows, size_t cols, nvfp4_block b, uint64_t seed)
{
    float *x = alloc_x(c, rows, cols);
    rng r = {seed ^ (rows * 1000003u + cols)};
    for (size_t i = 0; i < rows * cols; i++) x[i] = (float)normal(&r);
    c->block = b;
    snprintf(c->name_buf, sizeof c->name_buf, "shapes-%zux%zu-%s", rows, cols, nvfp4_block_name(b));
    snprintf(c->desc_buf, sizeof c->desc_buf, "N(0, 1), %zu x %zu, block %s (padded where needed)", rows, cols,
             nvfp4_block_name(b));
    c->name = c->name_buf;
    c->desc = c->desc_buf;
}


/* The grouped cases: m_sizes and K of each. 5,0,130: an empty expert and a
 * segment over 128 rows (two 128-row tiles, padded); 1,2,3,4: four small
 * experts, K/16 = 6 and K/32 = 3 (scale columns padded to 4); 0,17,0: one
 * expert between empty ones; 33,1: K/16 = 10, K/32 = 5. */
static const struct {
    size_t n, m[4], cols;
} grouped_cases[] = {{3, {5, 0, 130}, 64}, {4, {1, 2, 3, 4}, 96}, {3, {0, 17, 0}, 32}, {2, {33, 1}, 160}};

size_t suite_grouped_count(void) { return sizeof grouped_cases / sizeof grouped_cases[0]; }

/* Expert e is N(0, 1) times 1, 1000, 0.001, 30 (e mod 4): one amax shared
 * across experts moves every block scale of the small ones (to E4M3
 * subnormals or 0), so grouped-shared-global-scale changes bytes wherever
 * two experts have rows. */
void suite_grouped_case(gcase *c, size_t k, uint64_t seed)
{
    static const float mult[4] = {1.0f, 1000.0f, 0.001f, 30.0f};
    size_t rows = 0, n = grouped_cases[k].n, cols = grouped_cases[k].cols;
    for (size_t e = 0; e < n; e++) rows += grouped_cases[k].m[e];
    float *x = alloc_x(c, rows, cols);
    rng r = {seed ^ (0x67726F75u + k)};
    for (size_t e = 0, row = 0; e < n; row += grouped_cases[k].m[e], e++)
        for (size_t i = row * cols; i < (row + grouped_cases[k].m[e]) * cols; i++)
            x[i] = (float)normal(&r) * mult[e % 4];
    c->ngroups = n;
    memcpy(c->m_sizes, grouped_cases[k].m, n * sizeof c->m_sizes[0]);
    int len = snprintf(c->name_buf, sizeof c->name_buf, "grouped-m");
    for (size_t e = 0; e < n && len > 0 && (size_t)len < sizeof c->name_buf; e++)
        len += snprintf(c->name_buf + len, sizeof c->name_buf - (size_t)len, "%s%zu", e ? "-" : "", c->m_sizes[e]);
    if (len > 0 && (size_t)len < sizeof c->name_buf) snprintf(c->name_buf + len, sizeof c->name_buf - (size_t)len, "-k%zu", cols);
    snprintf(c->desc_buf, sizeof c->desc_buf, "%zu experts stacked (%zu x %zu), N(0, 1) times 1, 1e3, 1e-3, 30 per expert",
             n, rows, cols);
    c->name = c->name_buf;
    c->desc = c->desc_buf;
}
