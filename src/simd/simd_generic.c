/*
 * simd_generic.c - the fast path of every E2M1 recipe without kernels of
 * its own (the E4M3-scaled NVFP4 recipes other than `te`, te-pow2 and the
 * other MXFP4 recipes, and te's or the MXFP4 chains' other block shapes;
 * simd_kernels.h, "generic driver"): one driver for all of them, and the
 * scalar leaves.
 *
 * The driver walks the stored orientation as reference.c does (row by row
 * in steps of 64 blocks, or 16-row groups for 16x16 tiles) and differs
 * only in who does the
 * per-element work: block amaxes, element codes, SR bytes and 4over6 errors
 * come from the active variant's leaves; everything decided once per block
 * (the scale byte, the 4over6 choice, the encode state) or once per row
 * (te-rowscaled's global state) is the src/core/ call the reference makes,
 * so no rule has a second copy here.
 *
 * Determinism: as in simd_driver.c, a row's bytes depend only on its data,
 * its index (the Philox counter) and the tensor amax.
 */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/philox.h"
#include "simd/simd_kernels.h"

/* Below this many elements a parallel region costs more than it saves. */
#define GEN_PARALLEL_MIN 65536
#define AMAX_CHUNK 65536

/* ---- scalar leaves: src/core/ element by element ------------------------ */

static void scalar_block_amax(const float *x, size_t nb, int nanprop, float *bamax)
{
    for (size_t b = 0; b < nb; b++) {
        float m = 0.0f;
        for (size_t i = 0; i < 16; i++) m = nvfp4_core_amax_step(m, x[16 * b + i], nanprop);
        bamax[b] = m;
    }
}

static float scalar_amax_nan(const float *x, size_t n, int *any_nan)
{
    float m = 0.0f;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        nan |= nvfp4_core_isnan(x[i]);
        m = nvfp4_core_amax_step(m, x[i], 0);
    }
    *any_nan = nan;
    return m;
}

static void scalar_sr_bytes(const nvfp4_simd_sr *sr, uint64_t block0, size_t nb, uint8_t *rb)
{
    for (size_t b = 0; b < nb; b++) nvfp4_core_sr_block_bytes(sr->seed, sr->offset, block0 + b, rb + 16 * b);
}

static void scalar_encode(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor,
                          const uint8_t *rb, uint8_t *out)
{
    int mode = rb ? NVFP4_CORE_SR : NVFP4_CORE_RN;
    for (size_t b = 0; b < nb; b++) {
        nvfp4_core_block blk = {0u, factor[b]}; /* the encode reads only the factor */
        for (size_t i = 0; i < 16; i += 2) {
            uint8_t lo = nvfp4_core_encode_elem(r, &blk, x[16 * b + i], mode, rb ? rb[16 * b + i] : 0u);
            uint8_t hi = nvfp4_core_encode_elem(r, &blk, x[16 * b + i + 1], mode, rb ? rb[16 * b + i + 1] : 0u);
            out[8 * b + i / 2] = (uint8_t)(lo | (hi << 4));
        }
    }
}

static void scalar_err_4over6(const nvfp4_core_recipe *r, const nvfp4_core_global *g, const float *x,
                              const uint8_t s[2], const float f[2], float err[2])
{
    (void)f; /* the core derives it again */
    err[0] = nvfp4_core_4over6_seg_error(r, g, s[0], x);
    err[1] = nvfp4_core_4over6_seg_error(r, g, s[1], x);
}

const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_scalar = {scalar_block_amax, scalar_amax_nan, scalar_sr_bytes,
                                                            scalar_encode, scalar_err_4over6};

const nvfp4_simd_gen_leaves *nvfp4_simd_gen_leaves_for(nvfp4_simd_variant v)
{
    if (v == NVFP4_SIMD_AUTO) v = nvfp4_simd_active();
    if (v == NVFP4_SIMD_NEON && nvfp4_simd_gen_leaves_neon.encode) return &nvfp4_simd_gen_leaves_neon;
    if (v == NVFP4_SIMD_SCALAR || v == NVFP4_SIMD_NEON || !nvfp4_simd_gen_leaves_avx2.encode)
        return &nvfp4_simd_gen_leaves_scalar;
    return &nvfp4_simd_gen_leaves_avx2;
}

/* ---- what the driver implements ----------------------------------------- */

static int cast_encode(int enc)
{
    return enc == NVFP4_CORE_ENC_TE_RECIP || enc == NVFP4_CORE_ENC_RECIP_DIV || enc == NVFP4_CORE_ENC_DIV_TOTAL ||
           enc == NVFP4_CORE_ENC_TE_BF16 || enc == NVFP4_CORE_ENC_POW2 || enc == NVFP4_CORE_ENC_POW2_FP32;
}

int nvfp4_simd_gen_supports(const nvfp4_core_recipe *r)
{
    if (r->elem != NVFP4_CORE_ELEM_E2M1) return 0;
    if (r->scale_format == NVFP4_CORE_SCALE_UE8M0) /* a power-of-two divisor */
        return (r->enc_rule == NVFP4_CORE_ENC_POW2 || r->enc_rule == NVFP4_CORE_ENC_POW2_FP32) &&
               r->special <= NVFP4_CORE_SPECIAL_MODELOPT;
    if (nvfp4_core_is_4over6(r)) return cast_encode(r->enc_rule); /* the error leaf casts */
    if (r->enc_rule == NVFP4_CORE_ENC_EXACT) return 1;
    if (r->enc_rule == NVFP4_CORE_ENC_GGML_NEAREST) return r->special == NVFP4_CORE_SPECIAL_GGML;
    return cast_encode(r->enc_rule) && r->special <= NVFP4_CORE_SPECIAL_MODELOPT;
}

/* ---- the driver ---------------------------------------------------------- */

float nvfp4_simd_gen_tensor_amax(const float *x, size_t n, int nan_propagates)
{
    const nvfp4_simd_gen_leaves *L = nvfp4_simd_gen_leaves_for(NVFP4_SIMD_AUTO);
    size_t nchunk = (n + AMAX_CHUNK - 1) / AMAX_CHUNK;
    float m = 0.0f;
    int any = 0;
    /* per-chunk maxima are never NaN, so the max reduction is exact */
    NVFP4_PAR_FOR_IF(n >= GEN_PARALLEL_MIN, "omp parallel for reduction(max : m) reduction(| : any) schedule(dynamic, 1)",
        for (size_t c = 0; c < nchunk; c++) {
            size_t i0 = c * AMAX_CHUNK;
            int nan;
            float a = L->amax_nan(x + i0, n - i0 < AMAX_CHUNK ? n - i0 : AMAX_CHUNK, &nan);
            any |= nan;
            if (a > m) m = a;
        });
    return nan_propagates && any ? nvfp4_core_f32_from_bits(0x7FC00000u) : m;
}

/* The encode state of every scale byte under one global state: the
 * per-block nvfp4_core_block_prepare calls become lookups. Filled only
 * when there are at least as many blocks as entries: a small tensor (the
 * golden suites' cases, a row of a row-scaled recipe) computed 256 factors
 * for a handful of blocks: a third of `golden --mutants` for ggml. */
typedef struct {
    float f[256];
    int full;                   /* f holds every factor; else factor_of computes it */
    const nvfp4_core_recipe *r;
    nvfp4_core_global g;
} factor_table;

static void factor_table_init(factor_table *t, const nvfp4_core_recipe *r, const nvfp4_core_global *g,
                              size_t blocks)
{
    t->r = r;
    t->g = *g;
    t->full = blocks >= 256;
    for (unsigned s = 0; t->full && s < 256; s++) t->f[s] = nvfp4_core_block_prepare(r, g, (uint8_t)s).factor;
}

static inline float factor_of(const factor_table *t, uint8_t s)
{
    return t->full ? t->f[s] : nvfp4_core_block_prepare(t->r, &t->g, s).factor;
}

/* Per-thread scratch: block amaxes of up to 16 rows, the encode states and
 * SR bytes of one row. */
typedef struct {
    float *bamax;  /* ns, or 16 * ns for tiles (ns: 16-element segments of a row) */
    float *factor; /* ns */
    uint8_t *rb;   /* 16 * ns */
    uint8_t *rb2;  /* 16 * ns: 1x32 SR, the second halves' bytes */
    factor_table tab; /* row-scaled recipes: this row's */
} gen_work;

/* rows: the rows of block amaxes kept (16 for tiles, else 1). */
static int work_alloc(gen_work *w, size_t ns, size_t rows)
{
    w->bamax = malloc(rows * ns * sizeof *w->bamax);
    w->factor = malloc(ns * sizeof *w->factor);
    w->rb = malloc(16 * ns);
    w->rb2 = malloc(16 * ns);
    return w->bamax && w->factor && w->rb && w->rb2;
}

static void work_free(gen_work *w)
{
    free(w->bamax);
    free(w->factor);
    free(w->rb);
    free(w->rb2);
}

/* A row's amax from its block amaxes, as reference.c's tensor_amax of the
 * row gives it (NaN blocks exist only when a NaN propagates). */
static float row_amax_of(const float *bamax, size_t nb)
{
    float m = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        if (nvfp4_core_isnan(bamax[b])) return nvfp4_core_f32_from_bits(0x7FC00000u);
        m = nvfp4_core_fmaxf(m, bamax[b]);
    }
    return m;
}

/* The SR bytes of blocks [b0, b1) of row i, by segment from w->rb: block b
 * of the row is counter i * nb + b, and a 32-element block takes its second
 * 16 bytes from the next offset (reference.c row_encode). */
static void range_sr_bytes(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, size_t i, size_t b0,
                           size_t b1, gen_work *w)
{
    size_t nb = j->cols / j->block_len, n = b1 - b0;
    uint64_t first = (uint64_t)i * nb + b0;
    if (j->block_len == 16) {
        L->sr_bytes(j->sr, first, n, w->rb);
        return;
    }
    nvfp4_simd_sr second = {j->sr->seed, j->sr->offset + 1};
    L->sr_bytes(j->sr, first, n, w->rb2);
    L->sr_bytes(&second, first, n, w->rb2 + 16 * n);
    for (size_t b = 0; b < n; b++) {
        memcpy(w->rb + 32 * b, w->rb2 + 16 * b, 16);
        memcpy(w->rb + 32 * b + 16, w->rb2 + 16 * (n + b), 16);
    }
}

/* Codes of blocks [b0, b1) of row i, whose scale bytes are set, with the
 * factors of tab. */
static void encode_range(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const factor_table *tab,
                         size_t i, size_t b0, size_t b1, gen_work *w)
{
    size_t per = j->block_len / 16, s0 = b0 * per, ns = (b1 - b0) * per;
    const uint8_t *srow = j->scale + i * (j->cols / j->block_len);
    if (per == 1)
        for (size_t k = 0; k < ns; k++) w->factor[k] = factor_of(tab, srow[b0 + k]);
    else
        for (size_t k = 0; k < ns; k++) w->factor[k] = factor_of(tab, srow[b0 + (k >> 1)]);
    if (j->sr) range_sr_bytes(j, L, i, b0, b1, w);
    L->encode(j->r, j->x + i * j->cols + 16 * s0, ns, w->factor, j->sr ? w->rb : NULL,
              j->data + i * (j->cols / 2) + 8 * s0);
}

static void encode_row(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const factor_table *tab,
                       size_t i, gen_work *w)
{
    encode_range(j, L, tab, i, 0, j->cols / j->block_len, w);
}

/* nvfp4_core_block_scale of each block amax, the loop specialized per rule
 * (a copy of the descriptor whose rule is a constant) so that the core
 * function is inlined with its switch resolved: the per-block scale is a
 * third of the driver's time otherwise. */
#define SCALES_FOR(rule)                                                                                      \
    case rule: {                                                                                              \
        nvfp4_core_recipe rr = *r;                                                                            \
        rr.bscale_rule = rule;                                                                                \
        for (size_t b = 0; b < nb; b++) out[b] = nvfp4_core_block_scale(&rr, g, bamax[b]);                    \
        return;                                                                                               \
    }

__attribute__((flatten)) static void block_scales(const nvfp4_core_recipe *r, const nvfp4_core_global *g,
                                                  const float *bamax, size_t nb, uint8_t *out)
{
    switch (r->bscale_rule) {
        SCALES_FOR(NVFP4_CORE_BSCALE_TE_MUL)
        SCALES_FOR(NVFP4_CORE_BSCALE_DIV_DIV)
        SCALES_FOR(NVFP4_CORE_BSCALE_DIV_PRODUCT)
        SCALES_FOR(NVFP4_CORE_BSCALE_GGML)
    default:
        for (size_t b = 0; b < nb; b++) out[b] = nvfp4_core_block_scale(r, g, bamax[b]);
    }
}

/* Block amaxes of blocks [b0, b1) of row i into w->bamax + b0. */
static void range_amax(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, size_t i, size_t b0, size_t b1,
                       gen_work *w)
{
    int nanprop = j->r->amax_nan_propagates;
    float *a = w->bamax + b0;
    size_t per = j->block_len / 16;
    L->block_amax(j->x + i * j->cols + j->block_len * b0, (b1 - b0) * per, nanprop, a);
    if (per == 2) /* in place, ascending: segments 2b and 2b + 1 in order, as the reference folds */
        for (size_t b = 0; b < b1 - b0; b++) a[b] = nvfp4_core_amax_step(a[2 * b], a[2 * b + 1], nanprop);
}

/* Scale bytes of blocks [b0, b1) of row i from their amaxes (4over6: the
 * chosen candidate). */
static void range_scales(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const nvfp4_core_global *g,
                         const factor_table *tab, size_t i, size_t b0, size_t b1, gen_work *w)
{
    const nvfp4_core_recipe *r = j->r;
    uint8_t *srow = j->scale + i * (j->cols / j->block_len);
    if (!nvfp4_core_is_4over6(r)) {
        block_scales(r, g, w->bamax + b0, b1 - b0, srow + b0);
        return;
    }
    for (size_t b = b0; b < b1; b++) {
        uint8_t s[2];
        float e[2];
        nvfp4_core_4over6_scales(r, g, w->bamax[b], &s[0], &s[1]);
        float f[2] = {factor_of(tab, s[0]), factor_of(tab, s[1])};
        L->err_4over6(r, g, j->x + i * j->cols + 16 * b, s, f, e);
        srow[b] = nvfp4_core_4over6_pick(e[0], e[1], s[0], s[1]);
    }
}

/* Blocks per step of a row: amaxes, scales and codes of a 4-8 KiB stretch
 * of input in turn, so that the codes read it from L1. */
#define ROW_STEP 64

/* 1x16 and 1x32: row i's scales and codes. te-rowscaled first takes every
 * block amax of the row, whose maximum keys the row's global state. */
static void quantize_row(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const nvfp4_core_global *g0,
                         const factor_table *tab0, size_t i, gen_work *w)
{
    const nvfp4_core_recipe *r = j->r;
    size_t nb = j->cols / j->block_len;
    nvfp4_core_global g = *g0;
    const factor_table *tab = tab0;
    int row_scaled = nvfp4_core_recipe_row_scaled(r);
    if (row_scaled) {
        range_amax(j, L, i, 0, nb, w);
        j->row_amax[i] = row_amax_of(w->bamax, nb);
        g = nvfp4_core_global_from_amax(r, j->row_amax[i]);
        factor_table_init(&w->tab, r, &g, j->cols / 16);
        tab = &w->tab;
    }
    for (size_t b0 = 0; b0 < nb; b0 += ROW_STEP) {
        size_t b1 = nb - b0 < ROW_STEP ? nb : b0 + ROW_STEP;
        if (!row_scaled) range_amax(j, L, i, b0, b1, w);
        range_scales(j, L, &g, tab, i, b0, b1, w);
        encode_range(j, L, tab, i, b0, b1, w);
    }
}

/* 16x16: the tile scales of rows 16 t .. 16 t + 15, then their codes. The
 * tile amax folds the rows' block amaxes in row order, which is the
 * reference's row-major fold (the first NaN wins either way). */
static void quantize_group(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const nvfp4_core_global *g,
                           const factor_table *tab, size_t t, gen_work *w)
{
    const nvfp4_core_recipe *r = j->r;
    size_t nb = j->cols / 16, r0 = 16 * t;
    int nanprop = r->amax_nan_propagates;
    for (size_t k = 0; k < 16; k++) L->block_amax(j->x + (r0 + k) * j->cols, nb, nanprop, w->bamax + k * nb);
    uint8_t *s0 = j->scale + r0 * nb;
    for (size_t b = 0; b < nb; b++) {
        float amax = 0.0f;
        for (size_t k = 0; k < 16; k++) amax = nvfp4_core_amax_step(amax, w->bamax[k * nb + b], nanprop);
        if (nvfp4_core_is_4over6(r)) {
            uint8_t s[2];
            float e4[16], e6[16];
            nvfp4_core_4over6_scales(r, g, amax, &s[0], &s[1]);
            float f[2] = {factor_of(tab, s[0]), factor_of(tab, s[1])};
            for (size_t k = 0; k < 16; k++) {
                float e[2];
                L->err_4over6(r, g, j->x + (r0 + k) * j->cols + 16 * b, s, f, e);
                e4[k] = e[0];
                e6[k] = e[1];
            }
            s0[b] = nvfp4_core_4over6_pick(nvfp4_core_4over6_tile_sum(e4), nvfp4_core_4over6_tile_sum(e6), s[0], s[1]);
        } else {
            s0[b] = nvfp4_core_block_scale(r, g, amax);
        }
    }
    for (size_t k = 0; k < 16; k++) {
        if (k) memcpy(s0 + k * nb, s0, nb);
        encode_row(j, L, tab, r0 + k, w);
    }
}

/* Work item `it`: a 16-row group for 16x16 tiles, else a row. */
static void quantize_item(const nvfp4_simd_gen_job *j, const nvfp4_simd_gen_leaves *L, const nvfp4_core_global *g,
                          const factor_table *tab, size_t it, gen_work *w)
{
    if (j->tile16) quantize_group(j, L, g, tab, it, w);
    else quantize_row(j, L, g, tab, it, w);
}

int nvfp4_simd_gen_quantize(const nvfp4_simd_gen_job *j)
{
    const nvfp4_simd_gen_leaves *L = nvfp4_simd_gen_leaves_for(NVFP4_SIMD_AUTO);
    nvfp4_core_global g = nvfp4_core_global_from_amax(j->r, j->amax);
    factor_table tab;
    factor_table_init(&tab, j->r, &g, j->rows * j->cols / 16);
    size_t ns = j->cols / 16, items = j->tile16 ? j->rows / 16 : j->rows;
    size_t chunk = j->tile16 ? 1 : (65536 / j->cols ? 65536 / j->cols : 1);
    int failed = 0;
    if (j->rows * j->cols < GEN_PARALLEL_MIN) { /* core/parallel.h: no team of one */
        gen_work w = {.bamax = NULL};
        failed = items && !work_alloc(&w, ns, j->tile16 ? 16 : 1);
        for (size_t it = 0; !failed && it < items; it++) quantize_item(j, L, &g, &tab, it, &w);
        work_free(&w);
        return failed ? -1 : 0;
    }
#pragma omp parallel
    {
        /* allocated by a thread's first item: idle threads take no memory */
        gen_work w = {.bamax = NULL};
        int ok = 1;
#pragma omp for schedule(dynamic, chunk)
        for (size_t it = 0; it < items; it++) {
            if (ok && !w.bamax && !(ok = work_alloc(&w, ns, j->tile16 ? 16 : 1))) {
#pragma omp atomic write
                failed = 1;
            }
            if (ok) quantize_item(j, L, &g, &tab, it, &w);
        }
        work_free(&w);
    }
    return failed ? -1 : 0;
}
