/* check_mutants.c - the mutant catalog (src/verify/mutants.c): the mutant
 * quantizer's chain is the recipe's when no step is replaced, the catalog
 * is well formed, and single mutants give the hand-computed wrong bytes. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/verify.h"
#include "verify/mutant.h"

static uint64_t st;
static float nrand(void) /* a rough, deterministic spread of magnitudes and signs */
{
    st ^= st >> 12;
    st ^= st << 25;
    st ^= st >> 27;
    uint64_t r = st * 0x2545F4914F6CDD1Dull;
    float u = (float)(r >> 40) * 0x1p-24f;
    return (u - 0.5f) * ldexpf(1.0f, (int)(r & 7u) - 3);
}

/* Pass-through hooks: each calls the src/core/ rule it would replace. */
static uint8_t pt_bscale(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    return nvfp4_mutant_default_scale(c, g, bamax);
}
static uint8_t pt_elem(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    return nvfp4_core_encode_elem(c->r, b, x, c->mode, rbits);
}
static const nvfp4_mutant passthrough = {.info = {"pass-through", "none", "the recipe", "test", "te", 0},
                                         .bscale = pt_bscale,
                                         .elem = pt_elem,
                                         .block_amax = nvfp4_mutant_default_block_amax};

static void same_bytes(const nvfp4_qtensor *a, const nvfp4_qtensor *b)
{
    ck_assert_uint_eq(a->data_bytes, b->data_bytes);
    ck_assert_int_eq(memcmp(a->data, b->data, a->data_bytes), 0);
    ck_assert_int_eq(memcmp(a->scale, b->scale, a->scale_rows * a->scale_cols), 0);
    ck_assert_int_eq(memcmp(&a->amax, &b->amax, 4), 0);
}

START_TEST(chain_without_mutation_is_the_recipe)
{
    static const char *const recipes[] = {"te",          "te-pyref",    "torchao",   "torchao-0.13-0.16",
                                          "modelopt",    "mxfp4-floor", "mxfp4-rceil", "te-4over6",
                                          "te-4over6-mse", "te-4over6-fast", "te-4over6-448", "te-rowscaled",
                                          "te-pow2",     "ggml",        "mxfp4-ceil", "mxfp4-even",
                                          "flashinfer-pertoken", "te-ue5m3", "te-ue5m3-1level"};
    size_t ran = 0;
    enum { R = 64, C = 64 };
    float *x = malloc(R * C * sizeof *x);
    st = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < R * C; i++) x[i] = nrand();
    x[5] = NAN;
    x[70] = -0.0f;
    for (size_t k = 0; k < 16; k++) x[2 * C + 16 + k] = 1e-30f * (float)k; /* an underflowing block */
    for (size_t ri = 0; ri < sizeof recipes / sizeof recipes[0]; ri++)
        for (int v = 0; v < 5; v++) {
            nvfp4_quant_opts o;
            nvfp4_quant_opts_init(&o);
            o.recipe = recipes[ri];
            o.rowwise = o.columnwise = true;
            o.rounding = v & 1 ? NVFP4_SR : NVFP4_RN;
            o.seed = 7;
            o.offset = 3;
            const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(recipes[ri]));
            bool four = strncmp(recipes[ri], "te-4over6", 9) == 0;
            bool rowscaled = strcmp(recipes[ri], "te-rowscaled") == 0 || strcmp(recipes[ri], "flashinfer-pertoken") == 0;
            if (four && (v == 1 || v == 3)) continue;     /* 4over6: RN only, no RHT here (16x16 tiles: v 2) */
            if (rowscaled && v == 2) continue;            /* row-scaled: 1x16 only */
            if (!info->supports_sr && (v & 1)) continue;  /* ggml, te-pow2: RN only */
            if (v == 3 && info->default_block != NVFP4_BLOCK_1X16) continue; /* the RHT takes 16-blocks */
            if (v == 2 && info->has_global_amax) o.block = NVFP4_BLOCK_16X16;
            if (v == 3 && strncmp(recipes[ri], "te", 2) == 0) o.rht = true;
            size_t rows = v == 4 ? 50 : R, cols = v == 4 ? 40 : C; /* v 4: padded in both directions */
            o.pad = v == 4;
            nvfp4_quantized q;
            nvfp4_mutant_output m;
            nvfp4_error err;
            ck_assert_msg(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, &q, &err) == NVFP4_OK, "%s v%d: %s", recipes[ri], v, err.message);
            ck_assert_int_eq(nvfp4_mutant_run(&passthrough, x, NVFP4_DTYPE_F32, rows, cols, &o, &m, &err), NVFP4_OK);
            same_bytes(&q.row, &m.q.row);
            same_bytes(&q.col, &m.q.col);
            if (rowscaled) { /* the row amaxes the chain writes are the library's */
                ck_assert_ptr_nonnull(m.q.row.row_amax);
                ck_assert_int_eq(memcmp(q.row.row_amax, m.q.row.row_amax, q.row.prows * sizeof(float)), 0);
                ck_assert_int_eq(memcmp(q.col.row_amax, m.q.col.row_amax, q.col.prows * sizeof(float)), 0);
            }
            ran++;
            nvfp4_quantized_free(&q);
            nvfp4_mutant_output_free(&m);
        }
    /* te, te-pyref, torchao x2, modelopt: 5 variants; the four MX: 4 (no RHT); four 4over6: 3; rowscaled: 4;
     * pow2, ggml: 3; flashinfer-pertoken: 2 (RN, 1x16, no RHT); te-ue5m3, te-ue5m3-1level: 5 (the 1-level
     * recipe's v 2 stays 1x16) */
    ck_assert_uint_eq(ran, 75);
    free(x);
}
END_TEST

START_TEST(catalog_is_well_formed)
{
    size_t n = nvfp4_mutant_count();
    ck_assert_uint_ge(n, 40);
    ck_assert_ptr_null(nvfp4_mutant_at(n));
    static const char *const fams[] = {"te", "torchao", "modelopt", "mxfp4"};
    size_t per_family[4] = {0};
    for (size_t i = 0; i < n; i++) {
        const nvfp4_mutant_info *m = nvfp4_mutant_at(i);
        ck_assert(m->name && *m->name && m->step && *m->step && m->formula && *m->formula && m->source && *m->source);
        ck_assert_ptr_eq(nvfp4_mutant_find(m->name), m);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(nvfp4_mutant_at(j)->name, m->name);
        static const char *const all[] = {"te", "te-pyref", "torchao", "torchao-0.13-0.16", "modelopt", "mxfp4-floor",
                                          "mxfp4-rceil"};
        for (size_t r = 0; r < 7; r++)
            if (nvfp4_mutant_applies(m, all[r], NULL))
                for (size_t f = 0; f < 4; f++)
                    if (strcmp(nvfp4_mutant_recipe_family(all[r]), fams[f]) == 0) per_family[f]++;
    }
    for (size_t f = 0; f < 4; f++) ck_assert_uint_ge(per_family[f], 10); /* every family has its mutants */
    ck_assert_ptr_null(nvfp4_mutant_find("no-such-mutant"));
    ck_assert_ptr_null(nvfp4_mutant_recipe_family("mxfp8"));
}
END_TEST

static void mutate(const char *name, const float *x, size_t rows, size_t cols, nvfp4_mutant_output *m,
                   nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_error err;
    const nvfp4_mutant_info *mi = nvfp4_mutant_find(name);
    ck_assert_ptr_nonnull(mi);
    ck_assert_int_eq(nvfp4_mutant_quantize(mi, x, NVFP4_DTYPE_F32, rows, cols, &o, m, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, q, &err), NVFP4_OK);
}

/* Global amax 2688 (S_enc = 1), block amax 6: scale 1.0 (0x38), factor 1,
 * so x is the scaled value itself. */
START_TEST(element_mutants_hand_computed)
{
    float x[16] = {6.0f, 0.25f, 0.75f, 1.25f, 2.5f, 5.0f, -0.0f, -0.1f, 0.3f, 1.1f, 0, 0, 0, 0, 0, 0};
    float big[32];
    memcpy(big, x, sizeof x);
    memcpy(big + 16, x, sizeof x);
    big[16] = 2688.0f; /* second block: its own amax, the tensor's is 2688 */
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate("elem-ties-away", big, 1, 32, &m, &q);
    /* te: 6->0x7, 0.25->0x0, 0.75->0x2, 1.25->0x2, 2.5->0x4, 5->0x6 (ties to even) */
    ck_assert_uint_eq(q.row.data[0], 0x07);
    ck_assert_uint_eq(q.row.data[1], 0x22);
    ck_assert_uint_eq(q.row.data[2], 0x64);
    /* away: 0.25->0x1, 0.75->0x2, 1.25->0x3, 2.5->0x5, 5->0x7 */
    ck_assert_uint_eq(m.q.row.data[0], 0x17);
    ck_assert_uint_eq(m.q.row.data[1], 0x32);
    ck_assert_uint_eq(m.q.row.data[2], 0x75);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("elem-negzero-dropped", big, 1, 32, &m, &q);
    ck_assert_uint_eq(q.row.data[3], 0x88); /* -0 and -0.1 -> 0x8 */
    ck_assert_uint_eq(m.q.row.data[3], 0x00);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("elem-rz", big, 1, 32, &m, &q);
    ck_assert_uint_eq(q.row.data[4], 0x21); /* 0.3 -> 0.5, 1.1 -> 1 */
    ck_assert_uint_eq(m.q.row.data[4], 0x20); /* 0.3 -> 0, 1.1 -> 1 */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("layout-nibble-swap", big, 1, 32, &m, &q);
    ck_assert_uint_eq(m.q.row.data[0], 0x70);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
}
END_TEST

/* te with S_enc = 1: block amax b = 0x3E63FFFF (0.22265623...), one ulp
 * below 6m for m = 0.037109375, the midpoint of E4M3 0x11 and 0x12 (found
 * with numpy and ml_dtypes): b * fl(1/6) rounds to a value above m (0x12),
 * b / 6 to one below it (0x11). */
START_TEST(scale_mutants_hand_computed)
{
    float x[32] = {0};
    x[0] = 2688.0f;
    uint32_t bits = 0x3E63FFFFu;
    memcpy(&x[16], &bits, 4);
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate("scale-div6-then-senc", x, 1, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x12);
    ck_assert_uint_eq(m.q.row.scale[1], 0x11);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("scale-rz", x, 1, 32, &m, &q);
    ck_assert_uint_eq(m.q.row.scale[1], 0x11);
    ck_assert_uint_eq(m.q.row.scale[0], q.row.scale[0]); /* 448 is exact: unchanged */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("amax-per-block", x, 1, 32, &m, &q);
    ck_assert_uint_eq(m.q.row.scale[1], 0x7E); /* every scale 448 */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("layout-swizzle-pad-7f", x, 1, 32, &m, &q);
    ck_assert_uint_eq(m.swizzled_bytes[0], 512);
    ck_assert_uint_eq(m.swizzled[0][0], q.row.scale[0]);
    ck_assert_uint_eq(m.swizzled[0][1], q.row.scale[1]);
    ck_assert_uint_eq(m.swizzled[0][2], 0x7F);
    ck_assert_uint_eq(m.swizzled[0][16], 0x7F);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
}
END_TEST


/* The mutants learned from third-party quantizers, on hand-computed blocks:
 * global amax 2688 (S_enc = 1), block 0 holds 6 (scale 1.0, factor 1) and
 * the E2M1 midpoints, block 1 is zero (scale 0x00), block 2 holds -0 and a
 * negative value that underflows. */
START_TEST(learned_mutants_hand_computed)
{
    float x[48] = {6.0f, 0.75f, 1.75f, 3.5f, 0.25f, 2.5f, 5.0f, 1.25f};
    x[32] = 2688.0f;
    x[33] = -0.0f;
    x[34] = -1.0f; /* scale 448 / 6 * ... : -1 / (2688 / 6) underflows to -0 */
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate("elem-ties-toward-zero", x, 1, 48, &m, &q);
    /* te (ties to even): 6 0x7, 0.75 0x2, 1.75 0x4, 3.5 0x6; toward zero: 0.75 0x1, 1.75 0x3, 3.5 0x5 */
    ck_assert_uint_eq(q.row.data[0], 0x27);
    ck_assert_uint_eq(q.row.data[1], 0x64);
    ck_assert_uint_eq(m.q.row.data[0], 0x17);
    ck_assert_uint_eq(m.q.row.data[1], 0x53);
    ck_assert_uint_eq(m.q.row.data[2], q.row.data[2]); /* 0.25, 2.5: ties whose even code is the smaller */
    ck_assert_uint_eq(m.q.row.data[3], 0x26);         /* 5 -> 4 (0x6) both ways; 1.25 -> 1 (0x2) */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("scale-zero-to-eighth", x, 1, 48, &m, &q);
    ck_assert_uint_eq(q.row.scale[1], 0x00);
    ck_assert_uint_eq(m.q.row.scale[1], 0x20); /* E4M3 0.125 */
    ck_assert_uint_eq(m.q.row.scale[0], 0x38);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("encode-senc-over-s-no-clamp", x, 1, 48, &m, &q);
    ck_assert_uint_eq(q.row.data[8], 0x00);   /* zero block: te's factor FLT_MAX, 0 * FLT_MAX = 0 */
    ck_assert_uint_eq(m.q.row.data[8], 0x77); /* 0 * Inf = NaN -> 0x7 (satfinite) */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    mutate("elem-negzero-input-dropped", x, 1, 48, &m, &q);
    ck_assert_uint_eq(q.row.data[16], 0x87 & 0xFF); /* 2688 -> 0x7, -0 -> 0x8 */
    ck_assert_uint_eq(m.q.row.data[16], 0x07);      /* -0 -> 0x0 */
    ck_assert_uint_eq(q.row.data[17] & 0xFu, 0x8u); /* -1 / 448 underflows: 0x8 */
    ck_assert_uint_eq(m.q.row.data[17] & 0xFu, 0x8u); /* kept */
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
}
END_TEST

/* mutate() for recipe r (its default block), RN. */
static void mutate_recipe(const char *name, const char *r, const float *x, size_t cols, nvfp4_mutant_output *m,
                          nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = r;
    nvfp4_error err;
    const nvfp4_mutant_info *mi = nvfp4_mutant_find(name);
    ck_assert_ptr_nonnull(mi);
    ck_assert(nvfp4_mutant_applies(mi, r, &o));
    ck_assert_int_eq(nvfp4_mutant_quantize(mi, x, NVFP4_DTYPE_F32, 1, cols, &o, m, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, cols, &o, q, &err), NVFP4_OK);
}
static void mx_free(nvfp4_mutant_output *m, nvfp4_quantized *q)
{
    nvfp4_mutant_output_free(m);
    nvfp4_quantized_free(q);
}

/* The MX mutants learned from TE, torchao, llama.cpp and fbgemm, on 1x32 blocks.
 * Byte 0x00 means 2^-127. mxfp4-rceil: a block with amax 6 * 2^-127 has
 * amax * fl(1/6) = 2^-127 (1 + 2^-25), which rounds to 2^-127 (a subnormal),
 * so its scale byte is 0x00: elements 6, 3, -1 times 2^-127 scale to 6, 3, -1
 * (0x7, 0x5, 0xA); with a reciprocal of 1 to +-0 (0x0, 0x0, 0x8); encoded with
 * 2^-126 to 3, 1.5, -0.5 (0x5, 0x3, 0x9). */
START_TEST(mx_mutants_hand_computed)
{
    float x[32] = {0};
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    x[0] = 6.0f * 0x1p-127f, x[1] = 3.0f * 0x1p-127f, x[2] = -0x1p-127f;
    mutate_recipe("mx-rcp-byte0-one", "mxfp4-rceil", x, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(m.q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0x57);
    ck_assert_uint_eq(q.row.data[1], 0x0A);
    ck_assert_uint_eq(m.q.row.data[0], 0x00);
    ck_assert_uint_eq(m.q.row.data[1], 0x08);
    mx_free(&m, &q);
    mutate_recipe("mx-byte0-encode-min-normal", "mxfp4-rceil", x, 32, &m, &q);
    ck_assert_uint_eq(m.q.row.data[0], 0x35);
    ck_assert_uint_eq(m.q.row.data[1], 0x09);
    mx_free(&m, &q);
    /* mxfp8: amax 448 * 2^-127, amax * fl(1/448) rounds to 2^-127: byte 0x00; 448 is E4M3 0x7E, the
     * reciprocal 1 leaves 448 * 2^-127 (0x00), 2^-126 gives 224 (0x76) */
    memset(x, 0, sizeof x);
    x[0] = 448.0f * 0x1p-127f;
    mutate_recipe("mx-rcp-byte0-one", "mxfp8", x, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0x7E);
    ck_assert_uint_eq(m.q.row.data[0], 0x00);
    mx_free(&m, &q);
    mutate_recipe("mx-byte0-encode-min-normal", "mxfp8", x, 32, &m, &q);
    ck_assert_uint_eq(m.q.row.data[0], 0x76);
    mx_free(&m, &q);
    /* mxfp4-floor: amax 2^-125 has exponent bits 2, byte 2 - 2 = 0x00; torchao encodes with 2^-126
     * (2^-125 -> 2, 0x4; -2^-126 -> -1, 0xA; 0.75 * 2^-126 -> the tie 0.75, even 1.0, 0x2), the byte's
     * own 2^-127 doubles them (4 0x6, -2 0xC, 1.5 0x3) */
    memset(x, 0, sizeof x);
    x[0] = 0x1p-125f, x[1] = -0x1p-126f, x[2] = 0.75f * 0x1p-126f;
    mutate_recipe("mx-byte0-encode-exact", "mxfp4-floor", x, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x00);
    ck_assert_uint_eq(q.row.data[0], 0xA4);
    ck_assert_uint_eq(q.row.data[1], 0x02);
    ck_assert_uint_eq(m.q.row.data[0], 0xC6);
    ck_assert_uint_eq(m.q.row.data[1], 0x03);
    mx_free(&m, &q);
    /* mxfp4-even: amax 7 = 1.75 * 4 (bits 0x40E00000): torchao adds 2^21 and carries into the exponent
     * (8: byte 127 + 3 - 2 = 0x80, 7 / 2 = 3.5, the tie goes to 4, 0x6); fbgemm adds 2^21 - 1, no carry
     * (4: byte 0x7F, 7 saturates to 6, 0x7). 6.5 has no carry either way. */
    memset(x, 0, sizeof x);
    x[0] = 7.0f;
    x[31] = 6.5f;
    mutate_recipe("mxfp4-even-add-less-one", "mxfp4-even", x, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x80);
    ck_assert_uint_eq(m.q.row.scale[0], 0x7F);
    ck_assert_uint_eq(q.row.data[0] & 0xFu, 0x6u);
    ck_assert_uint_eq(m.q.row.data[0] & 0xFu, 0x7u);
    mx_free(&m, &q);
    /* mxfp4-floor: amax 8 - 2^-21 (0x40FFFFFF) has exponent bits 2 (byte 0x7F, 7.9999995 saturates to 6,
     * 0x7); its binary32 log2 is 3 - 8.6e-8 rounded to 3.0 (spacing 2^-22), so floorf(log2f) gives byte
     * 0x80 (7.9999995 / 2 -> 4, 0x6). At 2 - 2^-22 the log2 1 - 8.6e-8 is representable near 1 (spacing
     * 2^-24 below 1): floor 0, both give 127 + 0 - 2 = 0x7D. */
    float y[64] = {0};
    uint32_t below8 = 0x40FFFFFFu;
    memcpy(&y[0], &below8, 4);
    y[32] = nextafterf(2.0f, 0.0f);
    mutate_recipe("mx-floor-log2f", "mxfp4-floor", y, 64, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x7F);
    ck_assert_uint_eq(m.q.row.scale[0], 0x80);
    ck_assert_uint_eq(q.row.data[0] & 0xFu, 0x7u);
    ck_assert_uint_eq(m.q.row.data[0] & 0xFu, 0x6u);
    ck_assert_uint_eq(q.row.scale[1], 0x7D);
    ck_assert_uint_eq(m.q.row.scale[1], 0x7D);
    mx_free(&m, &q);
    /* mxfp4-rceil: amax 6291456.5 (6 * 2^20 + one ulp): amax / 6 and amax * fl(1/6) both round to
     * 2^20 (1 + 2^-23), whose cvt.rp is 2^21 (byte 0x94; 6291456.5 / 2^21 -> 3, 0x5); its binary32 log2
     * 20 + 1.7e-7 rounds to 20.0 (spacing 2^-19), ceil 20 (byte 0x93; / 2^20 saturates to 6, 0x7) */
    memset(y, 0, sizeof y);
    y[0] = 6291456.5f;
    mutate_recipe("mx-rceil-log2f", "mxfp4-rceil", y, 32, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0x94);
    ck_assert_uint_eq(m.q.row.scale[0], 0x93);
    ck_assert_uint_eq(q.row.data[0] & 0xFu, 0x5u);
    ck_assert_uint_eq(m.q.row.data[0] & 0xFu, 0x7u);
    mx_free(&m, &q);
}
END_TEST

/* The swizzle with the padded group count as row stride: 2 x 48 has 3 scale
 * columns (padded to 4); scale (1, 0) is flat index 3, read back as (0, 3):
 * byte 3 of the tile instead of byte 16. */
START_TEST(swizzle_padded_stride_hand_computed)
{
    float x[96];
    for (size_t i = 0; i < 96; i++) x[i] = (float)(i % 7) + 0.5f * (float)(i / 16);
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate("layout-swizzle-padded-stride", x, 2, 48, &m, &q);
    ck_assert_uint_eq(m.swizzled[0][0], q.row.scale[0]);
    ck_assert_uint_eq(m.swizzled[0][3], q.row.scale[3]); /* scale (1, 0) */
    ck_assert_uint_eq(m.swizzled[0][16], q.row.scale[4]); /* scale (1, 1) at flat 4 = (1, 0) */
    ck_assert_uint_ne(q.row.scale[3], 0);
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
}
END_TEST

/* mutate() for recipe r on a rows x cols tensor, RN. */
static void mutate_rows(const char *name, const char *r, const float *x, size_t rows, size_t cols,
                        nvfp4_mutant_output *m, nvfp4_quantized *q)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = r;
    nvfp4_error err;
    const nvfp4_mutant_info *mi = nvfp4_mutant_find(name);
    ck_assert_ptr_nonnull(mi);
    ck_assert(nvfp4_mutant_applies(mi, r, &o));
    ck_assert_int_eq(nvfp4_mutant_quantize(mi, x, NVFP4_DTYPE_F32, rows, cols, &o, m, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, rows, cols, &o, q, &err), NVFP4_OK);
}

/* The per-token amax over the wrong axis, 2 x 16: row 0 = {6, 3, 0...}, row 1 = {1, 0...}.
 * The rows' amaxes are 6 and 1; the columns' 6 and 3, so the mutant scales row 1 by 3:
 * S_enc = 2688/3 = 896, scale e4m3(1 * fl(896 * fl(1/6))) = e4m3(149.33) = 144 (0x71), where
 * the row's own amax 1 gives S_enc 2688 and 448 (0x7E). Row 0 (column 0's amax is 6 too) is
 * unchanged. Both per-token recipes (the same chain). */
START_TEST(pertoken_column_amax_hand_computed)
{
    static const char *const recipes[] = {"te-rowscaled", "flashinfer-pertoken"};
    float x[32] = {6.0f, 3.0f};
    x[16] = 1.0f;
    for (size_t r = 0; r < 2; r++) {
        nvfp4_mutant_output m;
        nvfp4_quantized q;
        mutate_rows("pertoken-column-amax", recipes[r], x, 2, 16, &m, &q);
        ck_assert_float_eq(q.row.row_amax[1], 1.0f);
        ck_assert_float_eq(m.q.row.row_amax[1], 3.0f);
        ck_assert_uint_eq(q.row.scale[1], 0x7E);
        ck_assert_uint_eq(m.q.row.scale[1], 0x71);
        ck_assert_float_eq(m.q.row.row_amax[0], 6.0f);
        ck_assert_uint_eq(m.q.row.scale[0], q.row.scale[0]);
        mx_free(&m, &q);
    }
}
END_TEST

/* The UE5M3 mutants on te-ue5m3-1level (S_enc = 1: the cast value is block_amax * fl(1/6)), one
 * row of five blocks with amaxes 6, 6.6, 6.375, 1e6, 6 * 2^-16: values 1, 1.1, 1.0625 (a tie
 * between 1 and 1.125), 166666.67 and 2^-16. UE5M3 RN satfinite: 0x78 (1), 0x79 (1.125), 0x78
 * (ties to the even 1), 0xFE (114688), 0x02 (the subnormal 2 * 2^-17; flushed: 0x00). As E4M3: 0x38 (1) and 0x7E (448). Truncated: 0x78 for 1.1. Ties away: 0x79
 * for 1.0625. No saturation: 0xFF. The right byte 0x78 read as E4M3 is 256, so 6 encodes as
 * 6/256 = 0.023 -> code 0 where 1 gives 6 (0x7). On te-ue5m3 (S_enc = 688128/6) the block of
 * amax 6 casts 114688: UE5M3 0xFE, E4M3 saturates to 0x7E. */
START_TEST(ue5m3_mutants_hand_computed)
{
    float x[80] = {0};
    x[0] = 6.0f;
    x[16] = 6.6f;
    x[32] = 6.375f;
    x[48] = 1e6f;
    x[64] = 6.0f * 0x1p-16f;
    const char *r = "te-ue5m3-1level";
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate_rows("ue5m3-scale-rz", r, x, 1, 80, &m, &q);
    static const uint8_t right[5] = {0x78, 0x79, 0x78, 0xFE, 0x02};
    ck_assert_int_eq(memcmp(q.row.scale, right, 5), 0);
    static const uint8_t rz[5] = {0x78, 0x78, 0x78, 0xFE, 0x02};
    ck_assert_int_eq(memcmp(m.q.row.scale, rz, 5), 0);
    mx_free(&m, &q);
    mutate_rows("ue5m3-scale-ties-away", r, x, 1, 80, &m, &q);
    static const uint8_t away[5] = {0x78, 0x79, 0x79, 0xFE, 0x02};
    ck_assert_int_eq(memcmp(m.q.row.scale, away, 5), 0);
    mx_free(&m, &q);
    mutate_rows("ue5m3-scale-no-satfinite", r, x, 1, 80, &m, &q);
    static const uint8_t nosat[5] = {0x78, 0x79, 0x78, 0xFF, 0x02};
    ck_assert_int_eq(memcmp(m.q.row.scale, nosat, 5), 0);
    mx_free(&m, &q);
    mutate_rows("ue5m3-scale-subnormal-flush", r, x, 1, 80, &m, &q);
    static const uint8_t flush[5] = {0x78, 0x79, 0x78, 0xFE, 0x00};
    ck_assert_int_eq(memcmp(m.q.row.scale, flush, 5), 0);
    mx_free(&m, &q);
    mutate_rows("ue5m3-scale-as-e4m3", r, x, 1, 80, &m, &q);
    ck_assert_uint_eq(m.q.row.scale[0], 0x38);
    ck_assert_uint_eq(m.q.row.scale[3], 0x7E);
    ck_assert_uint_eq(m.q.row.data[0] & 0xFu, 0x7u); /* its own E4M3 1: factor 1 */
    mx_free(&m, &q);
    mutate_rows("ue5m3-scale-read-e4m3", r, x, 1, 80, &m, &q);
    ck_assert_int_eq(memcmp(m.q.row.scale, right, 5), 0);
    ck_assert_uint_eq(q.row.data[0] & 0xFu, 0x7u);
    ck_assert_uint_eq(m.q.row.data[0] & 0xFu, 0x0u);
    mx_free(&m, &q);
    float y[16] = {6.0f};
    mutate_rows("ue5m3-scale-as-e4m3", "te-ue5m3", y, 1, 16, &m, &q);
    ck_assert_uint_eq(q.row.scale[0], 0xFE);
    ck_assert_uint_eq(m.q.row.scale[0], 0x7E);
    mx_free(&m, &q);
}
END_TEST

/* S_enc from torch's orders, for amaxes where they differ from te's
 * correctly rounded 2688/amax by one ulp (float32, checked with numpy):
 * amax 1000: fl(fl(1/amax)*2688) is one ulp above; amax 3: fl(1/fl(amax/2688))
 * and fl(1/fl(amax*fl(1/2688))) are one ulp below. Over 64 block amaxes
 * amax*b/64 some scale byte or code moves with a one-ulp S_enc, none with
 * an equal one. */
static bool some_scale_differs(const char *name, float amax)
{
    float x[16 * 64] = {0};
    x[0] = amax;
    for (size_t b = 1; b < 64; b++) x[b * 16] = amax * (float)b / 64.0f;
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate(name, x, 1, 16 * 64, &m, &q);
    bool d = memcmp(m.q.row.scale, q.row.scale, 64) != 0 || memcmp(m.q.row.data, q.row.data, 16 * 32) != 0;
    nvfp4_mutant_output_free(&m);
    nvfp4_quantized_free(&q);
    return d;
}
START_TEST(global_scale_orders_differ)
{
    ck_assert(!some_scale_differs("global-torch-rdiv", 3.0f)); /* the same S_enc as te */
    ck_assert(!some_scale_differs("global-recip-of-div", 1000.0f));
    ck_assert(!some_scale_differs("global-recip-of-mul", 1000.0f));
    ck_assert(some_scale_differs("global-torch-rdiv", 1000.0f));
    ck_assert(some_scale_differs("global-recip-of-div", 3.0f));
    ck_assert(some_scale_differs("global-recip-of-mul", 3.0f));
}
END_TEST

/* ---- identify infers a chain (src/verify/chain.c) ---------------------------------- */

static const nvfp4_mutant *catalog_entry(const char *name)
{
    for (size_t i = 0; i < nvfp4_mutant_catalog_size; i++)
        if (strcmp(nvfp4_mutant_catalog[i].info.name, name) == 0) return &nvfp4_mutant_catalog[i];
    ck_abort_msg("no mutant %s", name);
    return NULL;
}

/* The input x of a committed golden bundle (reference/te-rn/CASE.safetensors). */
static float *golden_input(const char *c, size_t *rows, size_t *cols)
{
    const char *d = getenv("NVFP4_REFERENCE");
    char path[512];
    snprintf(path, sizeof path, "%s/te-rn/%s.safetensors", d ? d : "reference", c);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_msg(nvfp4_tset_read(path, &s, &err) == NVFP4_OK, "%s: %s", path, err.message);
    nvfp4_tensor *t = nvfp4_tset_find(&s, "x");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->dtype, NVFP4_T_F32);
    *rows = t->shape[0];
    *cols = t->shape[1];
    float *x = malloc(*rows * *cols * sizeof *x);
    memcpy(x, t->data, *rows * *cols * sizeof *x);
    nvfp4_tset_free(&s);
    return x;
}

/* An input that separates the catalog's te deviations (200 x 240: padded swizzle rows, 15
 * column blocks): global amax -1500 (negative; an amax where torch's division orders all give
 * another S_enc than te's), a second 128-row tile with a smaller amax, blocks of elements
 * within a few ulps of every E2M1 tie under te's encode factor (so 1-ulp differences of the
 * factor show), block amaxes within ulps of E4M3 midpoints, subnormal scales, zero and -0
 * blocks (0 * Inf where the FLT_MAX clamp is missing), NaN and -NaN, -0 and negative underflow. */
static float block_amax_of(size_t r, size_t b)
{
    float m = 1.0f + fabsf(nrand());
    if (b == 13 && r >= 128) return 0.01f * m;                    /* subnormal E4M3 scales */
    if (b == 14) {                                                /* near an E4M3 midpoint */
        uint8_t code = (uint8_t)(8u + (r * 7u) % 110u);
        float mid = (nvfp4_e4m3_to_f32(code) + nvfp4_e4m3_to_f32((uint8_t)(code + 1u))) * 0.5f;
        float v = mid * 6.0f / (2688.0f / 1500.0f);
        for (size_t j = 0; j < r % 5; j++) v = nextafterf(v, INFINITY);
        return v > 1400.0f ? 1400.0f : v;
    }
    return (r < 128 ? 40.0f : 4.0f) * m;
}

static float *separating_input(size_t *rows, size_t *cols)
{
    enum { R = 200, C = 240 };
    static const float ties[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    float *x = calloc(R * C, sizeof *x);
    st = 0x243F6A8885A308D3ull;
    for (size_t r = 0; r < R; r++)
        for (size_t b = 0; b < C / 16; b++) {
            float *blk = x + r * C + b * 16;
            float bamax = block_amax_of(r, b);
            if ((r + b) % 11 == 3) continue; /* a zero block */
            blk[0] = (r + b) & 1 ? -bamax : bamax;
            uint8_t s = nvfp4_e4m3_from_f32(bamax * (2688.0f / 1500.0f) / 6.0f, true);
            float factor = nvfp4_verify_te_scaled(1.0f, s, 1500.0f);
            for (int k = 1; k < 16; k++) {
                float v = ties[(r + b + (size_t)k) % 7] / factor;
                for (int j = 0; j < (k % 7) - 3; j++) v = nextafterf(v, INFINITY);
                for (int j = 0; j < 3 - (k % 7); j++) v = nextafterf(v, 0.0f);
                blk[k] = k & 1 ? -v : v;
            }
        }
    x[1] = -1500.0f;
    x[3 * C + 16] = NAN;
    x[4 * C + 17] = -NAN;
    x[5 * C + 33] = -1e-30f;
    x[6 * C + 35] = -0.0f;
    for (size_t k = 0; k < 16; k++) x[7 * C + 48 + k] = -0.0f;
    *rows = R;
    *cols = C;
    return x;
}

/* The rowwise data and scales of a fake kernel: recipe te (RN, 1x16) with the named
 * deviations composed (NULL-terminated), as a tensor set a kernel would write. */
static void fake_kernel(const float *x, size_t rows, size_t cols, const char *const *names, nvfp4_tensor_set *out)
{
    const nvfp4_mutant *parts[NVFP4_MUTANT_MAX_PARTS];
    size_t n = 0;
    while (names[n]) parts[n] = catalog_entry(names[n]), n++;
    nvfp4_mutant m;
    ck_assert(nvfp4_mutant_compose(parts, n, &m));
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    nvfp4_mutant_output mo;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_mutant_run(&m, x, NVFP4_DTYPE_F32, rows, cols, &o, &mo, &err), NVFP4_OK);
    const nvfp4_qtensor *t = &mo.q.row;
    size_t ds[2] = {t->prows, t->pcols / 2}, ss[2] = {t->scale_rows, t->scale_cols}, zs[1] = {mo.swizzled_bytes[0]};
    nvfp4_tset_init(out);
    ck_assert_int_eq(nvfp4_tset_add(out, "data", NVFP4_T_U8, 2, ds, t->data, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(out, "scale", NVFP4_T_U8, 2, ss, t->scale, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(out, "scale_swizzled", NVFP4_T_U8, 1, zs, mo.swizzled[0], NULL, &err), NVFP4_OK);
    nvfp4_mutant_output_free(&mo);
}

static void identify_case(const char *c, const char *const *names, nvfp4_report *rep)
{
    size_t rows, cols;
    float *x = c ? golden_input(c, &rows, &cols) : separating_input(&rows, &cols);
    nvfp4_tensor_set k;
    fake_kernel(x, rows, cols, names, &k);
    nvfp4_identify_opts io;
    nvfp4_identify_opts_init(&io);
    io.what = NVFP4_REPORT_TEXT | NVFP4_REPORT_JSON;
    nvfp4_error err;
    ck_assert_msg(nvfp4_identify_report(x, NVFP4_DTYPE_F32, rows, cols, &k, &io, rep, &err) == NVFP4_OK, "%s",
                  err.message);
    if (getenv("CHAIN_DEBUG")) printf("=== %s\n%s", c ? c : "separating", rep->text);
    nvfp4_tset_free(&k);
    free(x);
}

static void assert_has(const nvfp4_report *rep, const char *needle)
{
    ck_assert_msg(strstr(rep->text, needle) != NULL, "'%s' not in:\n%s", needle, rep->text);
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* mslk's Triton quantizer: torch's global scale and div_rn(S_enc, s) without the clamp. */
START_TEST(chain_two_deviations_mslk)
{
    nvfp4_report rep;
    identify_case(NULL, NAMES("global-torch-rdiv", "encode-senc-over-s-no-clamp"), &rep);
    ck_assert_int_eq(rep.verdict, 0);
    assert_has(&rep, "not identified: no variant reproduces every byte"); /* one mutant at a time: none */
    assert_has(&rep, "chain: te + global-torch-rdiv + encode-senc-over-s-no-clamp (te rn 1x16) reproduces every byte");
    assert_has(&rep, "  encode-factor    proven        encode-senc-over-s-no-clamp\n");
    /* the three division orders give one S_enc at amax 1500: not claimed proven */
    assert_has(&rep, "  global-scale     ambiguous     global-torch-rdiv, or equally global-recip-of-div, global-recip-of-mul, "
                     "compressed-tensors's rule, vllm's rule, flashinfer's rule, mslk's rule\n");
    assert_has(&rep, "  element-rounding proven        recipe's rule\n");
    /* other recipes' rules of a step are compared too: ggml's special values and elem-nan-0x7
     * (catalogued for torchao) give these bytes, so the step is not claimed proven */
    assert_has(&rep, "  special-values   ambiguous     recipe's rule, or equally elem-nan-0x7, ggml's rule\n");
    assert_has(&rep, "  layout           proven        recipe's rule\n");
    assert_has(&rep, "  amax             ambiguous     recipe's rule, or equally amax-nan-ignored, rowscaled-tensor-amax\n");
    ck_assert_ptr_nonnull(strstr(rep.json, "\"deviations\": [\n      \"global-torch-rdiv\",\n      \"encode-senc-over-s-no-clamp\""));
    nvfp4_report_free(&rep);
}
END_TEST

START_TEST(chain_three_deviations)
{
    nvfp4_report rep;
    identify_case(NULL, NAMES("global-torch-rdiv", "encode-senc-over-s-no-clamp", "elem-negzero-input-dropped"), &rep);
    ck_assert_int_eq(rep.verdict, 0);
    assert_has(&rep, "chain: te + global-torch-rdiv + encode-senc-over-s-no-clamp + elem-negzero-input-dropped (te rn "
                     "1x16) reproduces every byte");
    /* modelopt's special-value rule writes +0 for -0 inputs as well: not proven */
    assert_has(&rep, "  special-values   ambiguous     elem-negzero-input-dropped, or equally modelopt's rule\n");
    assert_has(&rep, "  encode-factor    proven        encode-senc-over-s-no-clamp\n");
    nvfp4_report_free(&rep);
}
END_TEST

/* Two deviations on golden edge inputs, proven where the input separates them. */
START_TEST(chain_on_edge_inputs)
{
    nvfp4_report rep;
    identify_case("edge-e2m1-ties", NAMES("elem-ties-away", "layout-nibble-swap"), &rep);
    ck_assert_int_eq(rep.verdict, 0);
    assert_has(&rep, "chain: te + elem-ties-away + layout-nibble-swap (te rn 1x16) reproduces every byte");
    assert_has(&rep, "  element-rounding proven        elem-ties-away\n");
    assert_has(&rep, "  layout           proven        layout-nibble-swap\n");
    nvfp4_report_free(&rep);
    identify_case("edge-nan-neg-zero", NAMES("elem-nan-zero", "layout-nibble-swap"), &rep);
    assert_has(&rep, "chain: te + elem-nan-zero + layout-nibble-swap (te rn 1x16) reproduces every byte");
    assert_has(&rep, "  special-values   proven        elem-nan-zero\n");
    assert_has(&rep, "  layout           proven        layout-nibble-swap\n");
    nvfp4_report_free(&rep);
    /* S_enc = 1 and exact power-of-two scales: scale-rz gives te's bytes, so it is not named
     * as the cause, only listed beside the recipe's rule */
    identify_case("edge-e2m1-ties", NAMES("scale-rz", "elem-ties-away", "layout-nibble-swap"), &rep);
    assert_has(&rep, "chain: te + elem-ties-away + layout-nibble-swap (te rn 1x16) reproduces every byte");
    assert_has(&rep, "  block-scale      ambiguous     recipe's rule, or equally scale-div6-then-senc, "
                     "scale-inv6-then-senc, scale-rz,");
    nvfp4_report_free(&rep);
}
END_TEST

START_TEST(chain_one_deviation_and_none)
{
    nvfp4_report rep;
    identify_case(NULL, NAMES("scale-rz"), &rep);
    ck_assert_int_eq(rep.verdict, 0);
    assert_has(&rep, "identified: the kernel implements te rn 1x16 [mutant scale-rz]\n");
    assert_has(&rep, "chain: te + scale-rz (te rn 1x16) reproduces every byte");
    assert_has(&rep, "  block-scale      proven        scale-rz\n");
    nvfp4_report_free(&rep);
    identify_case(NULL, (const char *const[]){NULL}, &rep);
    ck_assert_int_eq(rep.verdict, 0);
    /* te: no single input separates global-nonfinite-to-1 and global-unguarded (tiny amax only) from te, nor
     * scale-no-satfinite (scales above 464 need a clamped S_enc): those two steps stay ambiguous */
    assert_has(&rep, "chain: te (te rn 1x16) reproduces every byte, but not every step is settled: amax, global-scale, "
                     "block-scale, encode-factor, special-values ambiguous on this input\n");
    /* te-rowscaled's and flashinfer-pertoken's row-scaled global rules give te's bytes on this input too */
    assert_has(&rep, "  global-scale     ambiguous     recipe's rule, or equally global-nonfinite-to-1, global-unguarded, "
                     "te-rowscaled's rule, flashinfer-pertoken's rule\n");
    /* te-4over6's, vLLM's, FlashInfer's and flashinfer-pertoken's encode factors (the latter differ from te's only in the dequantization, which this step also copies) give te's bytes here */
    assert_has(&rep, "  encode-factor    ambiguous     recipe's rule, or equally te-4over6's rule, vllm's rule, flashinfer's rule, flashinfer-pertoken's rule\n");
    assert_has(&rep, "  element-rounding proven        recipe's rule\n      proven among 7 candidates: the recipe's rule, "
                     "0 other recipes' rules, 6 catalogued mutants");
    ck_assert_ptr_nonnull(strstr(rep.json, "\"settled\": false"));
    nvfp4_report_free(&rep);
}
END_TEST

/* identify names each per-token and UE5M3 mutant from its bytes alone (every recipe and every
 * catalogued mutant ranked): the mutant's rowwise data and scales on an input whose blocks
 * separate it (the hand-computed rows above), its recipe left for identify to find. It ranks the
 * mutant first; its SR twin gives the same bytes on these exactly scaled values, and for
 * pertoken-column-amax so does flashinfer-pertoken's (the per-token scale, not compared here,
 * separates those two). */
static void identify_mutant(const char *name, const char *recipe, const float *x, size_t rows, size_t cols,
                            const char *expect)
{
    nvfp4_mutant_output m;
    nvfp4_quantized q;
    mutate_rows(name, recipe, x, rows, cols, &m, &q);
    const nvfp4_qtensor *t = &m.q.row;
    size_t ds[2] = {t->prows, t->pcols / 2}, ss[2] = {t->scale_rows, t->scale_cols};
    nvfp4_tensor_set k;
    nvfp4_error err;
    nvfp4_tset_init(&k);
    ck_assert_int_eq(nvfp4_tset_add(&k, "data", NVFP4_T_U8, 2, ds, t->data, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(&k, "scale", NVFP4_T_U8, 2, ss, t->scale, NULL, &err), NVFP4_OK);
    nvfp4_identify_opts io;
    nvfp4_identify_opts_init(&io);
    io.what = NVFP4_REPORT_TEXT;
    nvfp4_report rep;
    ck_assert_msg(nvfp4_identify_report(x, NVFP4_DTYPE_F32, rows, cols, &k, &io, &rep, &err) == NVFP4_OK, "%s",
                  err.message);
    if (getenv("CHAIN_DEBUG")) printf("=== %s\n%s", name, rep.text);
    assert_has(&rep, expect);
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&k);
    mx_free(&m, &q);
}

START_TEST(pertoken_ue5m3_mutants_identified)
{
    float x[80] = {0};
    x[0] = 6.0f;
    x[16] = 6.6f;
    x[32] = 6.375f;
    x[48] = 1e6f;
    x[64] = 6.0f * 0x1p-16f;
    static const char *const ue5m3[] = {"ue5m3-scale-as-e4m3", "ue5m3-scale-read-e4m3", "ue5m3-scale-rz",
                                        "ue5m3-scale-ties-away", "ue5m3-scale-no-satfinite",
                                        "ue5m3-scale-subnormal-flush"};
    char line[160];
    for (size_t i = 0; i < sizeof ue5m3 / sizeof ue5m3[0]; i++) {
        snprintf(line, sizeof line, "identified: the kernel implements te-ue5m3-1level rn 1x16 [mutant %s]", ue5m3[i]);
        identify_mutant(ue5m3[i], "te-ue5m3-1level", x, 1, 80, line);
    }
    float y[32] = {6.0f, 3.0f};
    y[16] = 1.0f;
    identify_mutant("pertoken-column-amax", "te-rowscaled", y, 2, 16,
                    "identified: the kernel implements te-rowscaled rn 1x16 [mutant pertoken-column-amax]");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mutants");
    TCase *tc = tcase_create("catalog");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, chain_without_mutation_is_the_recipe);
    tcase_add_test(tc, catalog_is_well_formed);
    tcase_add_test(tc, element_mutants_hand_computed);
    tcase_add_test(tc, scale_mutants_hand_computed);
    tcase_add_test(tc, learned_mutants_hand_computed);
    tcase_add_test(tc, swizzle_padded_stride_hand_computed);
    tcase_add_test(tc, mx_mutants_hand_computed);
    tcase_add_test(tc, pertoken_column_amax_hand_computed);
    tcase_add_test(tc, ue5m3_mutants_hand_computed);
    tcase_add_test(tc, pertoken_ue5m3_mutants_identified);
    tcase_add_test(tc, global_scale_orders_differ);
    tcase_add_test(tc, chain_two_deviations_mslk);
    tcase_add_test(tc, chain_three_deviations);
    tcase_add_test(tc, chain_on_edge_inputs);
    tcase_add_test(tc, chain_one_deviation_and_none);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nvfp4_check_run(suite()); }
