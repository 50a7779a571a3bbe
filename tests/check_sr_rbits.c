/* check_sr_rbits.c - the random-byte order of the Blackwell instruction
 * cvt.rs.satfinite.e2m1x4.f32 (src/core/sr_rbits.h, docs/cuda.md "Native
 * Blackwell conversions"): the layouts, the repack the CUDA kernel applies
 * to the SR contract bytes, the host model of the instruction, and the PTX
 * carry rule written literally on the fp32 bits against the scalar SR
 * encoder of src/core/e2m1.h. No GPU involved: `nvfp4-gpu probe` checks the
 * same model on a device. */
#include <check.h>
#include "support/check_main.h"
#include <stdio.h>
#include <string.h>

#include "core/philox.h"
#include "core/sr_rbits.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float f32(uint32_t u) { return nvfp4_core_f32_from_bits(u); }

/* PTX ISA 9.0, cvt, .rs: "the result is rounded in the direction toward
 * zero or away from zero based on the carry out of the integer addition of
 * the supplied random bits to the discarded bits of mantissa from the
 * input". Literally: y = s * 2^(e-150) (s the 24-bit significand); the E2M1
 * step there is q = 2^(max(e-127, 0) - 1), so `shift` low bits of s are
 * discarded; the 8 random bits are added at the top of that field and the
 * carry out rounds away from zero. satfinite: |y| >= 6 and Inf give 6, NaN
 * gives +6 (0x7, the cuda_fp4 rule), the sign is kept. */
static uint8_t ptx_rs_e2m1_literal(float y, uint8_t r)
{
    uint32_t u = nvfp4_core_f32_bits(y), sign = (u >> 31) << 3, ef = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
    if (ef == 255u) return (uint8_t)(m ? 0x7u : (sign | 7u));
    uint64_t s = ef ? (m | 0x800000u) : m;
    int e = ef ? (int)ef : 1;
    int above = e >= 127 ? e - 127 : 0;
    int shift = (above - 1) - (e - 150); /* 22 for |y| >= 1, more below */
    uint64_t code = 0;
    if (shift < 40) { /* else s < 2^24 <= 2^(shift-16): no carry, K = 0 */
        uint64_t keep = s >> shift, dropped = s & ((1ull << shift) - 1u);
        uint64_t carry = (dropped + ((uint64_t)r << (shift - 8))) >> shift;
        code = keep + carry + 2u * (uint64_t)above;
    }
    return (uint8_t)(sign | (code > 7u ? 7u : (uint32_t)code));
}

static uint8_t scalar_sr(float y, uint8_t r) { return nvfp4_core_e2m1_encode(y, NVFP4_CORE_SR, r); }

/* ---- bit reversal and the layouts ------------------------------------------- */

START_TEST(bitrev8_known_values)
{
    ck_assert_uint_eq(nvfp4_core_bitrev8(0x01), 0x80);
    ck_assert_uint_eq(nvfp4_core_bitrev8(0x12), 0x48);
    ck_assert_uint_eq(nvfp4_core_bitrev8(0xF0), 0x0F);
    ck_assert_uint_eq(nvfp4_core_bitrev8(0xA5), 0xA5);
    ck_assert_uint_eq(nvfp4_core_bitrev8(0x80), 0x01);
    ck_assert_uint_eq(nvfp4_core_bitrev8(0xFE), 0x7F);
    for (uint32_t b = 0; b < 256; b++) {
        uint8_t r = nvfp4_core_bitrev8((uint8_t)b);
        ck_assert_uint_eq(nvfp4_core_bitrev8(r), b);
        for (int i = 0; i < 8; i++) ck_assert_uint_eq((r >> (7 - i)) & 1u, (b >> i) & 1u);
    }
}
END_TEST

/* quack's sm_103a probe: element 0 (f) byte 2, element 1 (e) byte 0
 * reversed, element 2 (b) byte 3, element 3 (a) byte 1 reversed. */
START_TEST(sm103a_layout_reads_the_probed_bytes)
{
    nvfp4_core_rbits_layout l;
    ck_assert_int_eq(nvfp4_core_rbits_layout_of_sm(103, &l), 1);
    ck_assert_int_eq(nvfp4_core_rbits_layout_valid(&l), 1);
    const uint32_t w = 0x44332211u;
    ck_assert_uint_eq(nvfp4_core_rbits_read(w, &l, 0), 0x33); /* byte 2 */
    ck_assert_uint_eq(nvfp4_core_rbits_read(w, &l, 1), 0x88); /* byte 0 = 0x11, reversed */
    ck_assert_uint_eq(nvfp4_core_rbits_read(w, &l, 2), 0x44); /* byte 3 */
    ck_assert_uint_eq(nvfp4_core_rbits_read(w, &l, 3), 0x44); /* byte 1 = 0x22, reversed */
    nvfp4_core_rbits_layout s = nvfp4_core_rbits_layout_straight();
    for (int k = 0; k < 4; k++) ck_assert_uint_eq(nvfp4_core_rbits_read(w, &s, k), 0x11u * (uint32_t)(k + 1));
    /* sm_100a is not known yet: the kernels keep its SR in software */
    ck_assert_int_eq(nvfp4_core_rbits_layout_of_sm(100, &l), 0);
    ck_assert_int_eq(nvfp4_core_rbits_layout_of_sm(90, &l), 0);
}
END_TEST

START_TEST(pack_hand_computed)
{
    nvfp4_core_rbits_layout l = nvfp4_core_rbits_layout_sm103a();
    const uint8_t r[4] = {0x11, 0x01, 0x33, 0x0F};
    /* byte 0 = bitrev(0x01) = 0x80, byte 1 = bitrev(0x0F) = 0xF0, byte 2 = 0x11, byte 3 = 0x33 */
    ck_assert_uint_eq(nvfp4_core_rbits_pack(r, &l), 0x3311F080u);
    nvfp4_core_rbits_layout s = nvfp4_core_rbits_layout_straight();
    ck_assert_uint_eq(nvfp4_core_rbits_pack(r, &s), 0x0F330111u);
}
END_TEST

START_TEST(layout_valid_rejects_shared_bytes)
{
    nvfp4_core_rbits_layout l = {{2, 0, 2, 1}, {0, 1, 0, 1}};
    ck_assert_int_eq(nvfp4_core_rbits_layout_valid(&l), 0);
    nvfp4_core_rbits_layout m = {{0, 1, 2, 4}, {0, 0, 0, 0}};
    ck_assert_int_eq(nvfp4_core_rbits_layout_valid(&m), 0);
    nvfp4_core_rbits_layout n = {{3, 2, 1, 0}, {1, 1, 1, 2}};
    ck_assert_int_eq(nvfp4_core_rbits_layout_valid(&n), 0);
}
END_TEST

/* Every layout a probe could find (4! byte orders x 2^4 bit orders): the
 * repacked word gives each element its own byte back. */
START_TEST(pack_inverts_read_for_every_layout)
{
    int perms = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++) {
                    nvfp4_core_rbits_layout l = {{(uint8_t)a, (uint8_t)b, (uint8_t)c, (uint8_t)d}, {0, 0, 0, 0}};
                    if (!nvfp4_core_rbits_layout_valid(&l)) continue;
                    perms++;
                    for (int rev = 0; rev < 16; rev++) {
                        for (int k = 0; k < 4; k++) l.rev[k] = (uint8_t)((rev >> k) & 1);
                        for (int t = 0; t < 64; t++) {
                            uint64_t z = rng();
                            uint8_t r[4] = {(uint8_t)z, (uint8_t)(z >> 8), (uint8_t)(z >> 16), (uint8_t)(z >> 24)};
                            uint32_t w = nvfp4_core_rbits_pack(r, &l);
                            for (int k = 0; k < 4; k++) ck_assert_uint_eq(nvfp4_core_rbits_read(w, &l, k), r[k]);
                        }
                    }
                }
    ck_assert_int_eq(perms, 24);
}
END_TEST

/* ---- the model: where the order matters --------------------------------------- */

/* y = 1.25 sits half-way through its step (floor(256*frac) = 128): it rounds
 * up to 1.5 (code 3) iff the byte is >= 128. Contract bytes {0x80, 0x80, 0x7F,
 * 0x7F} give codes {3, 3, 2, 2}, d = 0x2233. The old kernel handed sm_103a
 * the little-endian word 0x7F7F8080: element 0 reads byte 2 = 0x7F, element 1
 * byte 0 = 0x80 reversed = 0x01, element 2 byte 3 = 0x7F, element 3 byte 1
 * reversed = 0x01: all round down, d = 0x2222. */
START_TEST(model_mapping_matters_hand_case)
{
    const float y[4] = {1.25f, 1.25f, 1.25f, 1.25f};
    const uint8_t r[4] = {0x80, 0x80, 0x7F, 0x7F};
    nvfp4_core_rbits_layout l = nvfp4_core_rbits_layout_sm103a(), s = nvfp4_core_rbits_layout_straight();
    for (int k = 0; k < 4; k++) ck_assert_uint_eq(scalar_sr(y[k], r[k]), k < 2 ? 3u : 2u);
    uint32_t w = nvfp4_core_rbits_pack(r, &l);
    ck_assert_uint_eq(w, 0x7F80FE01u); /* byte 0 rev(0x80), byte 1 rev(0x7F), byte 2 0x80, byte 3 0x7F */
    ck_assert_uint_eq(nvfp4_core_cvt_rs_e2m1x4_model(y, w, &l), 0x2233u);
    ck_assert_uint_eq(nvfp4_core_cvt_rs_e2m1x4_model(y, 0x7F7F8080u, &l), 0x2222u);
    ck_assert_uint_eq(nvfp4_core_cvt_rs_e2m1x4_model(y, 0x7F7F8080u, &s), 0x2233u);
}
END_TEST

/* The bit order of elements 1 and 3. Element 1 at y = 1 + 2^-9
 * (floor(256*frac) = 1) rounds up to 1.5 only with the byte 0xFF; element 3
 * at 1.25 (floor(256*frac) = 128) with a byte >= 0x80. Contract bytes
 * {0, 0xFF, 0, 0x01}: codes {0, 3, 0, 2}, d = 0x2030. The repacked word puts
 * bitrev(0x01) = 0x80 in byte 1; the byte in place but not reversed (word
 * 0x000001FF) is read by element 3 as bitrev(0x01) = 0x80 and rounds it up. */
START_TEST(model_bit_reversal_hand_case)
{
    nvfp4_core_rbits_layout l = nvfp4_core_rbits_layout_sm103a();
    const float y[4] = {0.0f, 1.0f + 1.0f / 512.0f, 0.0f, 1.25f};
    const uint8_t r[4] = {0x00, 0xFF, 0x00, 0x01};
    ck_assert_uint_eq(scalar_sr(y[1], 0xFF), 3u);
    ck_assert_uint_eq(scalar_sr(y[1], 0xFE), 2u);
    ck_assert_uint_eq(scalar_sr(y[3], 0x01), 2u);
    ck_assert_uint_eq(scalar_sr(y[3], 0x80), 3u);
    uint32_t w = nvfp4_core_rbits_pack(r, &l);
    ck_assert_uint_eq(w, 0x000080FFu); /* byte 0 rev(0xFF) = 0xFF, byte 1 rev(0x01) = 0x80 */
    ck_assert_uint_eq(nvfp4_core_cvt_rs_e2m1x4_model(y, w, &l), 0x2030u);
    /* the byte in place but not reversed: element 3 reads rev(0x01) = 0x80 and rounds up */
    ck_assert_uint_eq(nvfp4_core_cvt_rs_e2m1x4_model(y, 0x000001FFu, &l), 0x3030u);
}
END_TEST

/* Values for the quads: every code region, step fractions near the carry
 * thresholds, subnormals, signs, and now and then a special. */
static float test_value(void)
{
    uint64_t z = rng();
    switch (z & 15u) {
    case 0: {
        static const uint32_t sp[] = {0x7FC00000u, 0xFFC00001u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000000u,
                                      0x40C00000u, 0xC0E00000u, 0x00000001u, 0x807FFFFFu, 0x3E800000u, 0x40BFFFFFu};
        return f32(sp[(z >> 8) % (sizeof sp / sizeof sp[0])]);
    }
    case 1: /* exactly on a 1/256 step fraction: the threshold cases */
        return (float)((int)((z >> 8) % 1536u) - 768) / 128.0f;
    default: { /* exponent 2^-12 .. 2^3, random mantissa and sign */
        uint32_t e = 115u + (uint32_t)((z >> 8) % 16u);
        return f32((uint32_t)((z >> 40) & 0x80000000u) | (e << 23) | (uint32_t)((z >> 16) & 0x7FFFFFu));
    }
    }
}

/* The kernel's SR path (items.cuh, nvfp4_cu_encode_seg): the 16 contract
 * bytes of a block from Philox, repacked four at a time with
 * nvfp4_core_rbits_pack, given to cvt.rs; here the model stands in for the
 * instruction. Every code must equal the scalar encoder's with the
 * element's own contract byte, for sm_103a's layout and the straight one;
 * without the repack sm_103a's codes differ (the test can fail). */
START_TEST(philox_words_repacked_equal_the_scalar_encoder)
{
    nvfp4_core_rbits_layout lays[2] = {nvfp4_core_rbits_layout_sm103a(), nvfp4_core_rbits_layout_straight()};
    uint64_t compared = 0, unpacked_differ = 0;
    for (uint64_t blk = 0; blk < 40000; blk++) {
        uint64_t seed = blk % 7u == 0 ? 0xFFFFFFFFFFFFFFFFull : 0x123456789ABCDEF0ull + (blk % 5u);
        uint64_t offset = (blk % 3u) * 0x100000001ull;
        uint8_t rb[16];
        nvfp4_core_sr_block_bytes(seed, offset, blk * 977u, rb);
        float y[16];
        for (int k = 0; k < 16; k++) y[k] = test_value();
        for (int q = 0; q < 4; q++) {
            uint32_t le = (uint32_t)rb[4 * q] | ((uint32_t)rb[4 * q + 1] << 8) | ((uint32_t)rb[4 * q + 2] << 16) |
                          ((uint32_t)rb[4 * q + 3] << 24);
            for (int li = 0; li < 2; li++) {
                uint32_t d = nvfp4_core_cvt_rs_e2m1x4_model(y + 4 * q, nvfp4_core_rbits_pack(rb + 4 * q, &lays[li]), &lays[li]);
                for (int k = 0; k < 4; k++) {
                    uint8_t want = scalar_sr(y[4 * q + k], rb[4 * q + k]);
                    if (((d >> (4 * k)) & 0xFu) != want)
                        ck_abort_msg("block %llu quad %d element %d layout %d: model 0x%x, scalar 0x%x",
                                     (unsigned long long)blk, q, k, li, (d >> (4 * k)) & 0xFu, want);
                    compared++;
                }
            }
            uint32_t d_le = nvfp4_core_cvt_rs_e2m1x4_model(y + 4 * q, le, &lays[0]);
            for (int k = 0; k < 4; k++) unpacked_differ += ((d_le >> (4 * k)) & 0xFu) != scalar_sr(y[4 * q + k], rb[4 * q + k]);
        }
    }
    ck_assert_uint_eq(compared, 40000u * 16u * 2u);
    /* with uniform bytes about 1 element in 6 of these values flips */
    printf("sr_rbits: without the repack %llu of %u sm_103a codes differ\n", (unsigned long long)unpacked_differ, 40000u * 16u);
    ck_assert_uint_gt(unpacked_differ, 40000u);
}
END_TEST

/* ---- the carry rule: the PTX text on the bits vs the scalar encoder ------------ */

START_TEST(literal_carry_hand_cases)
{
    /* 5.0 = 4 + half a step of 2: floor(256*frac) = 128 */
    ck_assert_uint_eq(ptx_rs_e2m1_literal(5.0f, 127), 0x6u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(5.0f, 128), 0x7u);
    /* 0.2 = 0.4 of the step 0.5: floor(102.4) = 102, threshold 154 */
    ck_assert_uint_eq(ptx_rs_e2m1_literal(0.2f, 153), 0x0u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(0.2f, 154), 0x1u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(-0.2f, 154), 0x9u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(-0.2f, 0), 0x8u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(-0.0f, 255), 0x8u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(f32(0x7FC00000u), 0), 0x7u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(f32(0xFFC00000u), 0), 0x7u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(f32(0xFF800000u), 0), 0xFu);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(6.0f, 0), 0x7u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(-7.5f, 0), 0xFu);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(5.99f, 0), 0x6u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(5.99f, 255), 0x7u);
    /* the smallest subnormal never reaches 0.5 with 8 bits */
    ck_assert_uint_eq(ptx_rs_e2m1_literal(f32(1u), 255), 0x0u);
    /* 0.5 - 2^-8 is 0.9921875 of the step 0.5: floor(256*frac) = 254 */
    ck_assert_uint_eq(ptx_rs_e2m1_literal(0.5f - 1.0f / 256.0f, 1), 0x0u);
    ck_assert_uint_eq(ptx_rs_e2m1_literal(0.5f - 1.0f / 256.0f, 2), 0x1u);
}
END_TEST

/* Every exponent field, 48 mantissas each (the ends of the field and random
 * ones), both signs, every random byte. */
START_TEST(literal_carry_equals_scalar_encoder)
{
    uint64_t n = 0;
    for (uint32_t ef = 0; ef < 256; ef++)
        for (int i = 0; i < 48; i++) {
            uint32_t m = i == 0 ? 0u : i == 1 ? 0x7FFFFFu : i == 2 ? 1u : i == 3 ? 0x400000u : (uint32_t)rng() & 0x7FFFFFu;
            for (uint32_t sign = 0; sign < 2; sign++) {
                float y = f32((sign << 31) | (ef << 23) | m);
                for (uint32_t r = 0; r < 256; r++) {
                    uint8_t a = ptx_rs_e2m1_literal(y, (uint8_t)r), b = scalar_sr(y, (uint8_t)r);
                    if (a != b) ck_abort_msg("y bits 0x%08x r %u: literal PTX 0x%x, scalar 0x%x", nvfp4_core_f32_bits(y), r, a, b);
                    n++;
                }
            }
        }
    ck_assert_uint_eq(n, 256u * 48u * 2u * 256u);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sr_rbits");
    TCase *tc = tcase_create("sr_rbits");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bitrev8_known_values);
    tcase_add_test(tc, sm103a_layout_reads_the_probed_bytes);
    tcase_add_test(tc, pack_hand_computed);
    tcase_add_test(tc, layout_valid_rejects_shared_bytes);
    tcase_add_test(tc, pack_inverts_read_for_every_layout);
    tcase_add_test(tc, model_mapping_matters_hand_case);
    tcase_add_test(tc, model_bit_reversal_hand_case);
    tcase_add_test(tc, philox_words_repacked_equal_the_scalar_encoder);
    tcase_add_test(tc, literal_carry_hand_cases);
    tcase_add_test(tc, literal_carry_equals_scalar_encoder);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
