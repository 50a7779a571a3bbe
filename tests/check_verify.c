/* check_verify.c - the verifier engine in memory: exact comparison,
 * mismatch records and reasons, every planted bug of issue 4 named by its
 * cause, recipe ranking, SR statistics and bit-exact mode, the GEMM check. */
#include <check.h>
#include "support/check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/verify.h"
#include "planted/planted.h"

/* xorshift64*: deterministic test data */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static float urand(void) { return (float)(rnd() >> 40) * 0x1p-24f; } /* [0, 1) */

/* 40 x 48: 3 blocks per row, so the swizzled layout (128 x 4) has padding
 * in both directions. Global amax 2688 gives S_enc = 1; rows 0-19 hold
 * blocks of amax 12 (scale 2, encode factor 0.5) whose other elements are
 * exact E2M1 ties (2*midpoint), zeros, -0 and small negatives; the rest is
 * random over several magnitudes. */
enum { TR = 40, TC = 48 };
static void make_tie_tensor(float *x)
{
    static const float mids[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    rng_state = 0x1234567ull;
    for (size_t r = 0; r < TR; r++)
        for (size_t c = 0; c < TC; c++) {
            float v;
            if (r < 20) {
                size_t k = c % 16;
                if (k == 0) v = 12.0f;
                else if (k == 15) v = -0.0f;
                else if (k == 14) v = -0.1f;
                else if (k == 13) v = 0.0f;
                else v = 2.0f * mids[rnd() % 7] * ((rnd() & 1) ? -1.0f : 1.0f);
            } else {
                v = (urand() - 0.5f) * ldexpf(1.0f, (int)(rnd() % 12));
            }
            x[r * TC + c] = v;
        }
    x[TR * TC - 1] = 2688.0f;
}

static void verify_plant(plant_kind kind, plant_out *exp, plant_out *act, nvfp4_vreport *rep, const float *x,
                         size_t rows, size_t cols)
{
    plant_quantize(x, rows, cols, PLANT_NONE, exp);
    plant_quantize(x, rows, cols, kind, act);
    plant_corrupt(act, kind);
    nvfp4_vview e = plant_view(exp), a = plant_view(act);
    a.x = NULL;
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    o.max_errors = 5;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&e, &a, &o, rep, &err), NVFP4_OK);
}

static void print_causes(const nvfp4_vreport *rep)
{
    for (size_t i = 0; i < rep->n_causes; i++) fprintf(stderr, "  cause: %s\n", rep->causes[i].line);
}

START_TEST(identical_outputs_match)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_NONE, &e, &a, &rep, x, TR, TC);
    ck_assert(nvfp4_vreport_match(&rep));
    ck_assert_uint_eq(rep.n_causes, 0);
    ck_assert_uint_eq(rep.total[NVFP4_VC_DATA], TR * TC);
    ck_assert_uint_eq(rep.total[NVFP4_VC_SCALE], TR * 3);
    ck_assert_uint_eq(rep.total[NVFP4_VC_SCALE_SWIZZLED], 512);
    ck_assert_uint_eq(rep.total[NVFP4_VC_DEQUANT], TR * TC);
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) ck_assert(rep.compared[c]);
    /* the tie rows really hold the scale and factor the tests rely on */
    ck_assert_uint_eq(e.scale[0], nvfp4_e4m3_from_f32(2.0f, true));
    ck_assert_float_eq(nvfp4_verify_te_scaled(2.5f, e.scale[0], e.amax), 1.25f);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

START_TEST(planted_ties_away)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_TIES_AWAY, &e, &a, &rep, x, TR, TC);
    print_causes(&rep);
    ck_assert(!nvfp4_vreport_match(&rep));
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_TIES_AWAY));
    ck_assert_uint_gt(rep.mismatches[NVFP4_VC_DATA], 50);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_TIE_RULE], rep.mismatches[NVFP4_VC_DATA]);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE], 0);
    /* the first record, decoded: the first tie that goes down under RN */
    const nvfp4_vmismatch *m = &rep.first[0];
    ck_assert_int_eq(m->component, NVFP4_VC_DATA);
    ck_assert_uint_eq(m->block, m->row * 3 + m->col / 16);
    ck_assert_float_eq(m->scaled, m->input * 0.5f);
    ck_assert(fabsf(m->scaled) == 0.25f || fabsf(m->scaled) == 1.25f || fabsf(m->scaled) == 2.5f ||
              fabsf(m->scaled) == 5.0f);
    ck_assert_uint_eq(m->actual_code & 7u, (m->expected_code & 7u) + 1u);
    ck_assert_uint_eq(rep.n_first, 5);
    /* dequant differences are attributed to the codes */
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DEQUANT], rep.mismatches[NVFP4_VC_DATA]);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_FOLLOWS], rep.mismatches[NVFP4_VC_DEQUANT]);
    size_t ties = rep.mismatches[NVFP4_VC_DATA];
    nvfp4_vreport_free(&rep);
    /* one unrelated wrong code (a random row) does not hide the tie rule */
    a.data[30 * TC / 2] ^= 0x01;
    nvfp4_vview ev = plant_view(&e), av = plant_view(&a);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, NULL, &rep, &err), NVFP4_OK);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DATA], ties + 1);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_TIES_AWAY));
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

/* Blocks whose amax makes (bamax/6)*S_enc and bamax*(S_enc*fl(1/6)) round
 * to different E4M3 bytes: found by scanning fp32 neighbours of 6*m*... for
 * E4M3 midpoints m (nvfp4-semantics.md 0: rare in random data). */
static size_t find_div6_amaxes(float amax, float *out, size_t max)
{
    size_t n = 0;
    float s_enc = nvfp4_core_te_global_encode(amax);
    for (int e = -6; e <= 8 && n < max; e++)
        for (int mant = 0; mant < 8 && n < max; mant++) {
            float mid = ldexpf(1.0f + ((float)mant + 0.5f) / 8.0f, e); /* E4M3 midpoint */
            float b0 = mid * 6.0f / s_enc;
            float b = b0;
            for (int k = 0; k < 64; k++) b = nextafterf(b, 0.0f);
            for (int k = 0; k < 128 && n < max; k++, b = nextafterf(b, INFINITY))
                if (b < amax && nvfp4_vchain_scale_div6_then_senc(b, amax) != nvfp4_vchain_te_block_scale(b, amax)) {
                    out[n++] = b;
                    break;
                }
        }
    return n;
}

START_TEST(planted_scale_div6)
{
    const float amax = 1000.0f;
    float b[64];
    size_t nb = find_div6_amaxes(amax, b, 64);
    ck_assert_uint_ge(nb, 8);
    size_t rows = 8, cols = 64; /* 32 blocks */
    float *x = calloc(rows * cols, sizeof(float));
    rng_state = 99;
    for (size_t blk = 0; blk < rows * cols / 16; blk++) {
        float ba = b[blk % nb];
        x[blk * 16] = ba;
        for (int k = 1; k < 16; k++) x[blk * 16 + (size_t)k] = ba * (urand() * 2.0f - 1.0f);
    }
    x[rows * cols - 1] = amax;
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_SCALE_DIV6, &e, &a, &rep, x, rows, cols);
    print_causes(&rep);
    ck_assert_uint_gt(rep.mismatches[NVFP4_VC_SCALE], 0);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_BLOCK_SCALE_FORMULA));
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_SCALE_OFF_BY_ONE));
    /* the data records of those blocks blame the scale byte */
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_SCALE_BYTE], rep.mismatches[NVFP4_VC_DATA] + rep.mismatches[NVFP4_VC_SCALE] +
                                                             rep.mismatches[NVFP4_VC_SCALE_SWIZZLED]);
    /* a scale record carries the block amax and the value te casts */
    nvfp4_vreport_free(&rep);
    {
        nvfp4_vview ev = plant_view(&e), av = plant_view(&a);
        nvfp4_verify_opts o;
        nvfp4_verify_opts_init(&o);
        o.components = 1u << NVFP4_VC_SCALE;
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    }
    size_t j = 0;
    while (j < rep.n_first && rep.first[j].component != NVFP4_VC_SCALE) j++;
    ck_assert_uint_lt(j, rep.n_first);
    const nvfp4_vmismatch *m = &rep.first[j];
    ck_assert_float_eq(m->input, b[m->block % nb]); /* the block amax */
    ck_assert_float_eq(m->scaled, m->input * (nvfp4_core_te_global_encode(amax) * NVFP4_CORE_INV6));
    ck_assert_uint_eq(m->actual_code + 1u, m->expected_code);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
    free(x);
}
END_TEST

START_TEST(planted_encode_factor)
{
    /* amax 1000: S_enc = 2.688 is not a power of two, so S_enc/s and
     * 1/(s*S_dec) differ in the last bit for some scales; put elements on the
     * E2M1 boundaries of those blocks. */
    const float amax = 1000.0f;
    size_t rows = 16, cols = 64, nblk = rows * cols / 16, found = 0;
    float *x = calloc(rows * cols, sizeof(float));
    nvfp4_core_recipe r = nvfp4_vchain_te();
    nvfp4_core_global g = nvfp4_core_global_from_amax(&r, amax);
    rng_state = 7;
    for (size_t blk = 0; blk < nblk; blk++) {
        float ba;
        uint8_t s;
        float ft, fa;
        do { /* a block amax whose scale has differing factors */
            ba = 1.0f + urand() * 900.0f;
            s = nvfp4_core_block_scale(&r, &g, ba);
            nvfp4_core_block bk = nvfp4_core_block_prepare(&r, &g, s);
            ft = bk.factor;
            fa = nvfp4_vchain_factor_senc_over_s(s, amax);
        } while (ft == fa);
        x[blk * 16] = ba;
        for (int k = 1; k < 16; k++) {
            float mid = (nvfp4_e2m1_to_f32((uint8_t)(k % 7)) + nvfp4_e2m1_to_f32((uint8_t)(k % 7 + 1))) * 0.5f;
            float xv = mid / ft, pick = xv * 0.5f;
            for (int j = -3; j <= 3; j++) {
                float c = xv;
                for (int t = 0; t < (j < 0 ? -j : j); t++) c = nextafterf(c, j < 0 ? 0.0f : INFINITY);
                if (nvfp4_core_e2m1_encode(c * ft, NVFP4_CORE_RN, 0) != nvfp4_core_e2m1_encode(c * fa, NVFP4_CORE_RN, 0)) {
                    pick = c;
                    found++;
                    break;
                }
            }
            x[blk * 16 + (size_t)k] = pick;
        }
    }
    ck_assert_uint_ge(found, 20);
    x[rows * cols - 1] = amax;
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_ENC_SENC_OVER_S, &e, &a, &rep, x, rows, cols);
    print_causes(&rep);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE], 0);
    ck_assert_uint_ge(rep.mismatches[NVFP4_VC_DATA], found - 15); /* the last block holds the global amax */
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_ENCODE_FACTOR));
    ck_assert(!nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_TIES_AWAY));
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_NEAR_BOUNDARY] + rep.reason_count[NVFP4_VR_TIE_RULE],
                      rep.mismatches[NVFP4_VC_DATA]);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
    free(x);
}
END_TEST

START_TEST(planted_swapped_nibbles)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_SWAP_NIBBLES, &e, &a, &rep, x, TR, TC);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_SWAPPED_NIBBLES));
    ck_assert(!nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_TIES_AWAY));
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE], 0);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

START_TEST(planted_negative_zero)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_NEGZERO, &e, &a, &rep, x, TR, TC);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_NEGATIVE_ZERO));
    /* rows 0-19 hold -0.0 and -0.1 in every block: 2 per block, 60 blocks, plus random underflows */
    ck_assert_uint_ge(rep.mismatches[NVFP4_VC_DATA], 120);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_SIGN_OF_ZERO], rep.mismatches[NVFP4_VC_DATA]);
    ck_assert_uint_eq(rep.first[0].expected_code, 0x8);
    ck_assert_uint_eq(rep.first[0].actual_code, 0x0);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

START_TEST(planted_linear_scales)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_LINEAR_SCALES, &e, &a, &rep, x, TR, TC);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_LINEAR_FOR_SWIZZLED));
    ck_assert_uint_gt(rep.mismatches[NVFP4_VC_SCALE_SWIZZLED], 0);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DATA], 0);
    nvfp4_vreport_free(&rep);
    /* the reverse: swizzled bytes in the linear slot (rows 128, 4 blocks: same size) */
    size_t rows = 128, cols = 64;
    float *y = malloc(rows * cols * sizeof(float));
    rng_state = 5;
    for (size_t i = 0; i < rows * cols; i++) y[i] = urand() * 10.0f - 5.0f;
    plant_out e2, a2;
    plant_quantize(y, rows, cols, PLANT_NONE, &e2);
    plant_quantize(y, rows, cols, PLANT_NONE, &a2);
    memcpy(a2.scale, a2.swz, a2.scale_bytes);
    nvfp4_vview ev = plant_view(&e2), av = plant_view(&a2);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, NULL, &rep, &err), NVFP4_OK);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_SWIZZLED_FOR_LINEAR));
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
    plant_free(&e2);
    plant_free(&a2);
    free(y);
}
END_TEST

START_TEST(planted_padding_127)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_PAD_127, &e, &a, &rep, x, TR, TC);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_PADDING_BYTES));
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE_SWIZZLED], 512 - TR * 3);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_PADDING], 512 - TR * 3);
    ck_assert_ptr_nonnull(strstr(rep.causes[0].line, "0x7F"));
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_SCALE], 0);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

/* 4 x 32: global amax 1000; row 0 holds NaNs, row 1 block 1 underflows the
 * E4M3 scale (block amax 1e-6 * 2.688/6 < 2^-10). */
static void make_special_tensor(float *x)
{
    rng_state = 77;
    for (size_t i = 0; i < 4 * 32; i++) x[i] = urand() * 20.0f - 10.0f;
    x[0] = 1000.0f;
    x[3] = NAN;
    x[17] = -NAN;
    for (size_t k = 0; k < 16; k++) x[32 + 16 + k] = (k & 1 ? -1e-6f : 1e-6f) * (float)(k + 1) / 16.0f;
}

START_TEST(planted_nan_and_underflow)
{
    float x[4 * 32];
    make_special_tensor(x);
    plant_out e, a;
    nvfp4_vreport rep;
    verify_plant(PLANT_NAN_ZERO, &e, &a, &rep, x, 4, 32);
    print_causes(&rep);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DATA], 2);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_NAN_POLICY], 2);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_NAN_POLICY));
    ck_assert_uint_eq(rep.first[0].expected_code, 0x7);
    ck_assert(isnan(rep.first[0].input));
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
    verify_plant(PLANT_UNDERFLOW_ZERO, &e, &a, &rep, x, 4, 32);
    print_causes(&rep);
    ck_assert_uint_eq(e.scale[1 * 2 + 1], 0x00); /* the block really underflows */
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DATA], 16);
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_SCALE_UNDERFLOW], 16);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_UNDERFLOW_ZEROED));
    ck_assert_uint_eq(rep.first[0].expected_code & 7u, 7u); /* te saturates */
    ck_assert_uint_eq(rep.first[0].actual_code & 7u, 0u);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_DEQUANT], 0); /* both dequantize to 0 */
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
}
END_TEST

START_TEST(partial_actual_and_sizes)
{
    float x[TR * TC];
    make_tie_tensor(x);
    plant_out e, a;
    plant_quantize(x, TR, TC, PLANT_NONE, &e);
    plant_quantize(x, TR, TC, PLANT_NONE, &a);
    nvfp4_vview ev = plant_view(&e), av;
    memset(&av, 0, sizeof av);
    av.data = a.data;
    av.data_bytes = a.data_bytes;
    nvfp4_vreport rep;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, NULL, &rep, &err), NVFP4_OK);
    ck_assert(nvfp4_vreport_match(&rep));
    ck_assert(rep.compared[NVFP4_VC_DATA]);
    ck_assert(!rep.compared[NVFP4_VC_SCALE] && !rep.actual_present[NVFP4_VC_SCALE] && rep.expected_present[NVFP4_VC_SCALE]);
    nvfp4_vreport_free(&rep);
    /* a short buffer is a size mismatch, never an overread */
    av.data_bytes = a.data_bytes - 1;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, NULL, &rep, &err), NVFP4_OK);
    ck_assert(!nvfp4_vreport_match(&rep));
    ck_assert_uint_eq(rep.reason_count[NVFP4_VR_SIZE], 1);
    nvfp4_vreport_free(&rep);
    /* component mask: only amax */
    av = plant_view(&a);
    a.amax = 1.0f;
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    o.components = 1u << NVFP4_VC_DATA;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    ck_assert(nvfp4_vreport_match(&rep));
    nvfp4_vreport_free(&rep);
    o.components = 0;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    ck_assert_uint_eq(rep.mismatches[NVFP4_VC_AMAX], 1);
    ck_assert_uint_eq(rep.first[0].expected_code, 0x45280000u); /* 2688.0f */
    nvfp4_vreport_free(&rep);
    /* an inconsistent expected view is an error */
    ev.data_bytes--;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, NULL, &rep, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "expected data"));
    plant_free(&e);
    plant_free(&a);
}
END_TEST

START_TEST(transposed_and_candidates)
{
    size_t rows = 32, cols = 32;
    float *x = malloc(rows * cols * sizeof(float)), *xt = malloc(rows * cols * sizeof(float));
    rng_state = 11;
    for (size_t i = 0; i < rows * cols; i++) x[i] = urand() * 8.0f - 4.0f;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) xt[c * rows + r] = x[r * cols + c];
    plant_out e, t;
    plant_quantize(x, rows, cols, PLANT_NONE, &e);
    plant_quantize(xt, cols, rows, PLANT_NONE, &t);
    nvfp4_vview ev = plant_view(&e), tv = plant_view(&t);
    nvfp4_vview av;
    memset(&av, 0, sizeof av);
    av.data = t.data;
    av.data_bytes = t.data_bytes;
    nvfp4_vcandidate cand[2] = {{"te (other orientation)", tv, true, NULL}, {"other", ev, false, NULL}};
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    o.candidates = cand;
    o.n_candidates = 1;
    nvfp4_vreport rep;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    print_causes(&rep);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_TRANSPOSED_DATA));
    nvfp4_vreport_free(&rep);
    /* a named candidate that matches: different recipe */
    cand[0].transposed = false;
    cand[0].name = "torchao";
    o.expected_name = "te";
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_DIFFERENT_RECIPE));
    ck_assert_ptr_nonnull(strstr(rep.causes[rep.n_causes - 1].line, "torchao"));
    nvfp4_vreport_free(&rep);
    /* ranking: the expected output itself ranks first with fraction 1 */
    nvfp4_vrank rank[2];
    nvfp4_vview full = plant_view(&e);
    nvfp4_identify_rank(&full, cand, 2, rank);
    ck_assert_str_eq(rank[0].name, "other");
    ck_assert(rank[0].fraction == 1.0);
    ck_assert(rank[1].fraction < 1.0);
    plant_free(&e);
    plant_free(&t);
    free(x);
    free(xt);
}
END_TEST

/* ---- SR ---------------------------------------------------------------------- */
enum { SR_N = 4096, SR_S = 64 };

static void sr_run(plant_sr_kind kind, bool bitexact, nvfp4_sr_report *rep, bool same_offset)
{
    static float y[SR_N];
    static uint8_t codes[SR_S][SR_N];
    const uint8_t *cp[SR_S];
    rng_state = 42;
    for (size_t i = 0; i < SR_N; i++) y[i] = (urand() * 12.0f - 6.0f);
    y[0] = 1.5f;  /* on the grid: p = 0 */
    y[1] = -0.0f;
    for (size_t s = 0; s < SR_S; s++) {
        plant_sr_sample(y, SR_N, kind, 1234, same_offset ? 10 : 10 + s, codes[s]);
        cp[s] = codes[s];
    }
    nvfp4_sr_input in;
    memset(&in, 0, sizeof in);
    in.n = SR_N;
    in.y = y;
    in.samples = SR_S;
    in.codes = cp;
    in.alpha = 0.001;
    in.bitexact = bitexact;
    in.seed = 1234;
    in.offset = 10;
    in.offset_step = 1;
    in.block_elems = 16;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_sr_test(&in, rep, &err), NVFP4_OK);
    for (size_t i = 0; i < rep->n_causes; i++) fprintf(stderr, "  sr cause: %s\n", rep->causes[i].line);
}

START_TEST(sr_correct_kernels_pass)
{
    nvfp4_sr_report rep;
    sr_run(PLANT_SR_CONTRACT, true, &rep, false);
    ck_assert(rep.pass);
    ck_assert_uint_eq(rep.bitexact_mismatches, 0);
    ck_assert_uint_eq(rep.bitexact_total, SR_N * SR_S);
    ck_assert_uint_gt(rep.tested, SR_N * 9 / 10);
    ck_assert_uint_eq(rep.rejected, 0);
    ck_assert_uint_eq(rep.invalid, 0);
    for (int k = 0; k < 16; k++) ck_assert_int_eq(rep.byte_map[k], k);
    /* a fair kernel with its own generator passes the statistical tests (false-alarm probability <= 0.001) */
    sr_run(PLANT_SR_OWN_RNG, false, &rep, false);
    ck_assert(rep.pass);
    /* and fails bit-exact mode without a byte order to blame */
    sr_run(PLANT_SR_OWN_RNG, true, &rep, false);
    ck_assert(!rep.pass);
    ck_assert_uint_gt(rep.bitexact_mismatches, 0);
    ck_assert(!rep.byte_map_found);
}
END_TEST

static bool sr_has(const nvfp4_sr_report *rep, nvfp4_cause c)
{
    for (size_t i = 0; i < rep->n_causes; i++)
        if (rep->causes[i].cause == c) return true;
    return false;
}

START_TEST(planted_sr_byte_order)
{
    nvfp4_sr_report rep;
    sr_run(PLANT_SR_BYTE_ORDER, true, &rep, false);
    ck_assert(!rep.pass);
    ck_assert(sr_has(&rep, NVFP4_CAUSE_SR_BYTE_ORDER));
    ck_assert(rep.byte_map_found);
    static const int want[16] = {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12};
    for (int k = 0; k < 16; k++) ck_assert_int_eq(rep.byte_map[k], want[k]);
    ck_assert(!sr_has(&rep, NVFP4_CAUSE_BIASED_SR)); /* statistically it is a fine kernel */
    /* codes the contract's bytes cannot give, each position explained by one byte: proven */
    const nvfp4_vcause_line *l = &rep.causes[rep.n_causes - 1];
    ck_assert_int_eq(l->cause, NVFP4_CAUSE_SR_BYTE_ORDER);
    ck_assert_str_eq(l->step, "element-rounding");
    ck_assert_int_eq(l->status, NVFP4_CAUSE_PROVEN);
    ck_assert_ptr_nonnull(strstr(l->evidence, "exactly one of the block's 16 bytes"));
    ck_assert_int_eq(rep.rule, NVFP4_SR_RULE_CONTRACT); /* the statistics name no other rule */
    ck_assert_str_eq(nvfp4_sr_rule_name(NVFP4_SR_RULE_MORE_BITS), "more-bits");
}
END_TEST

/* verify (not only sr-test) names the byte order when the golden is SR */
START_TEST(verify_names_sr_byte_order)
{
    size_t rows = 16, cols = 64, n = rows * cols;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    rng_state = 31;
    for (size_t i = 0; i < n; i++) x[i] = urand() * 8.0f - 4.0f;
    plant_out e, a;
    plant_quantize(x, rows, cols, PLANT_NONE, &e);
    plant_quantize(x, rows, cols, PLANT_NONE, &a);
    for (size_t i = 0; i < n; i++)
        y[i] = nvfp4_verify_te_scaled(x[i], e.scale[(i / cols) * (cols / 16) + (i % cols) / 16], e.amax);
    uint8_t *ce = malloc(n), *ca = malloc(n);
    plant_sr_sample(y, n, PLANT_SR_CONTRACT, 77, 5, ce);
    plant_sr_sample(y, n, PLANT_SR_BYTE_ORDER, 77, 5, ca);
    for (size_t i = 0; i < n / 2; i++) {
        e.data[i] = nvfp4_pack2(ce[2 * i], ce[2 * i + 1]);
        a.data[i] = nvfp4_pack2(ca[2 * i], ca[2 * i + 1]);
    }
    nvfp4_vview ev = plant_view(&e), av = plant_view(&a);
    av.dequant = NULL;
    ev.dequant = NULL;
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    o.sr_scaled = y;
    o.sr_seed = 77;
    o.sr_offset = 5;
    o.sr_block_elems = 16;
    nvfp4_vreport rep;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    print_causes(&rep);
    ck_assert_uint_gt(rep.mismatches[NVFP4_VC_DATA], 0);
    ck_assert(nvfp4_vreport_has_cause(&rep, NVFP4_CAUSE_SR_BYTE_ORDER));
    nvfp4_vreport_free(&rep);
    /* the right order matches and names nothing */
    memcpy(a.data, e.data, e.data_bytes);
    ck_assert_int_eq(nvfp4_verify(&ev, &av, &o, &rep, &err), NVFP4_OK);
    ck_assert(nvfp4_vreport_match(&rep));
    ck_assert_uint_eq(rep.n_causes, 0);
    nvfp4_vreport_free(&rep);
    plant_free(&e);
    plant_free(&a);
    free(x), free(y), free(ce), free(ca);
}
END_TEST

START_TEST(planted_sr_biased)
{
    nvfp4_sr_report rep;
    sr_run(PLANT_SR_BIASED, false, &rep, false);
    ck_assert(!rep.pass);
    ck_assert(sr_has(&rep, NVFP4_CAUSE_BIASED_SR));
    ck_assert(rep.mean_z > 10.0);
    ck_assert(rep.bias_per_element > 0.0);
}
END_TEST

START_TEST(sr_repeated_bits_are_dependent)
{
    nvfp4_sr_report rep;
    sr_run(PLANT_SR_CONTRACT, false, &rep, true);
    ck_assert(!rep.pass);
    ck_assert(sr_has(&rep, NVFP4_CAUSE_SR_DEPENDENT));
    ck_assert_uint_eq(rep.identical_pairs, SR_S - 1);
}
END_TEST

START_TEST(sr_antithetic_samples_are_dependent)
{
    /* odd samples reuse the previous sample's bytes as 255 - r: every
     * element is still fair, but consecutive samples are anti-correlated */
    nvfp4_sr_report rep;
    sr_run(PLANT_SR_ANTITHETIC, false, &rep, false);
    ck_assert(!rep.pass);
    ck_assert(sr_has(&rep, NVFP4_CAUSE_SR_DEPENDENT));
    ck_assert(rep.serial_z > 5.0); /* more runs than chance */
    ck_assert_uint_eq(rep.identical_pairs, 0);
}
END_TEST

START_TEST(sr_probabilities)
{
    ck_assert(nvfp4_sr_p_up(0.3f) == 153.0 / 256.0);  /* frac 0.6 of a 0.5 step */
    ck_assert(nvfp4_sr_p_up(-2.5f) == 128.0 / 256.0);
    ck_assert(nvfp4_sr_p_up(4.0f) == 0.0);
    ck_assert(nvfp4_sr_p_up(7.0f) == 0.0);
    ck_assert(nvfp4_sr_p_up(NAN) == 0.0);
    ck_assert(nvfp4_sr_p_up(5.99f) == (double)(uint32_t)(0.995f * 256.0f) / 256.0);
}
END_TEST

START_TEST(gemm_check_bounds)
{
    float te[4] = {1.0f, 2.0f, -3.0f, 4.0f};
    double exact[4] = {1.0, 2.0, -3.0, 4.0 + 1e-6};
    double bound[4] = {0.0, 1e-6, 1e-6, 1e-5};
    float act[4] = {1.0f, 2.0f, -3.0f, 4.0f};
    nvfp4_gemm_check_report rep;
    nvfp4_gemm_check(act, te, exact, bound, 4, &rep);
    ck_assert(rep.within_bound && rep.equals_te);
    ck_assert_uint_eq(rep.te_equal, 4);
    act[2] = nextafterf(-3.0f, 0.0f); /* 2.4e-7 off, within 1e-6 */
    nvfp4_gemm_check(act, te, exact, bound, 4, &rep);
    ck_assert(rep.within_bound && !rep.equals_te);
    ck_assert_uint_eq(rep.te_equal, 3);
    act[0] = nextafterf(1.0f, 2.0f); /* bound 0: any difference is outside */
    nvfp4_gemm_check(act, te, exact, bound, 4, &rep);
    ck_assert(!rep.within_bound);
    ck_assert_uint_eq(rep.outside_bound, 1);
    ck_assert_uint_eq(rep.worst_index, 0);
    act[0] = NAN;
    nvfp4_gemm_check(act, te, exact, bound, 4, &rep);
    ck_assert_uint_eq(rep.nan_mismatch, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, identical_outputs_match);
    tcase_add_test(tc, planted_ties_away);
    tcase_add_test(tc, planted_scale_div6);
    tcase_add_test(tc, planted_encode_factor);
    tcase_add_test(tc, planted_swapped_nibbles);
    tcase_add_test(tc, planted_negative_zero);
    tcase_add_test(tc, planted_linear_scales);
    tcase_add_test(tc, planted_padding_127);
    tcase_add_test(tc, planted_nan_and_underflow);
    tcase_add_test(tc, partial_actual_and_sizes);
    tcase_add_test(tc, transposed_and_candidates);
    suite_add_tcase(s, tc);
    TCase *sr = tcase_create("sr");
    tcase_set_timeout(sr, 60);
    tcase_add_test(sr, sr_correct_kernels_pass);
    tcase_add_test(sr, planted_sr_byte_order);
    tcase_add_test(sr, planted_sr_biased);
    tcase_add_test(sr, verify_names_sr_byte_order);
    tcase_add_test(sr, sr_repeated_bits_are_dependent);
    tcase_add_test(sr, sr_antithetic_samples_are_dependent);
    tcase_add_test(sr, sr_probabilities);
    tcase_add_test(sr, gemm_check_bounds);
    suite_add_tcase(s, sr);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
