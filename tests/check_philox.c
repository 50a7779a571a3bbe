/* check_philox.c - Philox4x32-10 (Random123 known answers), the cuRAND
 * stream semantics (curand_init / curand / curand4 / skipahead), the SR bit
 * contract of DESIGN.md 3.3, and, where the CUDA toolkit is installed,
 * agreement with cuRAND's own host Philox generator. */
#include <check.h>
#include "support/check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"

#if NVFP4_HAVE_CUDA_ORACLES
#include "oracles/oracles.h"
#endif

/* ---- Random123 known-answer vectors (kat_vectors, philox4x32 10 rounds) ---- */

typedef struct {
    uint32_t ctr[4], key[2], out[4];
} philox_kat;

static const philox_kat random123_kats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

START_TEST(random123_kat)
{
    const philox_kat *k = &random123_kats[_i];
    uint32_t out[4];
    nvfp4_philox4x32_10(k->ctr, k->key, out);
    for (int w = 0; w < 4; w++) ck_assert_uint_eq(out[w], k->out[w]);
}
END_TEST

/* ---- curand_init semantics ---------------------------------------------- */

static const uint64_t SEED = 0x123456789abcdef0ull;

static void block(uint64_t seed, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t out[4])
{
    uint32_t ctr[4] = {c0, c1, c2, c3}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    nvfp4_philox4x32_10(ctr, key, out);
}

/* curand_init(0x123456789abcdef0, 5, 8): ctr {2,0,5,0}, first curand4 known
 * (nvfp4-semantics.md section 8). */
START_TEST(curand_init_example)
{
    nvfp4_philox_stream st;
    nvfp4_philox_init(&st, SEED, 5, 8);
    ck_assert_uint_eq(st.ctr[0], 2);
    ck_assert_uint_eq(st.ctr[1], 0);
    ck_assert_uint_eq(st.ctr[2], 5);
    ck_assert_uint_eq(st.ctr[3], 0);
    ck_assert_uint_eq(st.key[0], 0x9abcdef0u);
    ck_assert_uint_eq(st.key[1], 0x12345678u);
    ck_assert_uint_eq(st.state, 0);
    uint32_t r[4];
    nvfp4_philox_next4(&st, r);
    ck_assert_uint_eq(r[0], 0x63f6cee6u);
    ck_assert_uint_eq(r[1], 0xe463b929u);
    ck_assert_uint_eq(r[2], 0x5ed79d8fu);
    ck_assert_uint_eq(r[3], 0xfecbfd85u);
}
END_TEST

/* The word at stream position p of subsequence s is word p%4 of
 * Philox({p/4 (64-bit, low word first), s (64-bit)}, seed). */
static uint32_t word_at(uint64_t seed, uint64_t sub, uint64_t p)
{
    uint32_t out[4];
    uint64_t c = p / 4;
    block(seed, (uint32_t)c, (uint32_t)(c >> 32), (uint32_t)sub, (uint32_t)(sub >> 32), out);
    return out[p % 4];
}

START_TEST(next_walks_the_stream)
{
    static const uint64_t offsets[] = {0, 1, 2, 3, 4, 5, 7, 1000001, 0x3fffffffcull, 0x3fffffffdull, 0xfffffffffffffff0ull};
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        nvfp4_philox_stream st;
        nvfp4_philox_init(&st, SEED, 77, offsets[k]);
        for (uint64_t i = 0; i < 13; i++) ck_assert_uint_eq(nvfp4_philox_next(&st), word_at(SEED, 77, offsets[k] + i));
    }
}
END_TEST

/* curand4 returns the next four words in stream order from any STATE and
 * then advances exactly one counter (curand_kernel.h curand4). */
START_TEST(next4_from_every_state)
{
    for (uint64_t off = 0; off < 8; off++) {
        nvfp4_philox_stream a, b;
        nvfp4_philox_init(&a, SEED, 3, off);
        nvfp4_philox_init(&b, SEED, 3, off);
        for (int rep = 0; rep < 3; rep++) {
            uint32_t r[4];
            nvfp4_philox_next4(&a, r);
            for (int w = 0; w < 4; w++) ck_assert_uint_eq(r[w], nvfp4_philox_next(&b));
            ck_assert_uint_eq(r[0], word_at(SEED, 3, off + 4u * (uint64_t)rep));
        }
        ck_assert_uint_eq(nvfp4_philox_next(&a), nvfp4_philox_next(&b));
    }
}
END_TEST

START_TEST(skipahead_equals_offset)
{
    static const uint64_t steps[] = {0, 1, 3, 4, 6, 1023, 0x100000003ull, 0x7ffffffffffull};
    for (uint64_t start = 0; start < 6; start++)
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            nvfp4_philox_stream a, b;
            nvfp4_philox_init(&a, SEED, 9, start);
            nvfp4_philox_skipahead(&a, steps[k]);
            nvfp4_philox_init(&b, SEED, 9, start + steps[k]);
            for (int i = 0; i < 6; i++) ck_assert_uint_eq(nvfp4_philox_next(&a), nvfp4_philox_next(&b));
        }
}
END_TEST

START_TEST(skipahead_sequence_equals_subsequence)
{
    nvfp4_philox_stream a, b;
    nvfp4_philox_init(&a, SEED, 0xfffffffeull, 5);
    nvfp4_philox_skipahead_sequence(&a, 3); /* carries ctr.z into ctr.w */
    nvfp4_philox_init(&b, SEED, 0x100000001ull, 5);
    for (int i = 0; i < 6; i++) ck_assert_uint_eq(nvfp4_philox_next(&a), nvfp4_philox_next(&b));
    ck_assert_uint_eq(a.ctr[2], 1);
    ck_assert_uint_eq(a.ctr[3], 1);
}
END_TEST

/* The counter carries from x into y (and y into z) as cuRAND's
 * Philox_State_Incr does. */
START_TEST(counter_carries)
{
    nvfp4_philox_stream st;
    uint32_t out[4];
    nvfp4_philox_init(&st, SEED, 0, 4ull * 0xffffffffull + 3u);
    ck_assert_uint_eq(st.ctr[0], 0xffffffffu);
    block(SEED, 0xffffffffu, 0, 0, 0, out);
    ck_assert_uint_eq(nvfp4_philox_next(&st), out[3]);
    block(SEED, 0, 1, 0, 0, out);
    ck_assert_uint_eq(nvfp4_philox_next(&st), out[0]);
    /* the largest offset: word 3 of counter 2^62 - 1 */
    nvfp4_philox_init(&st, SEED, 0, 0xffffffffffffffffull);
    block(SEED, 0xffffffffu, 0x3fffffffu, 0, 0, out);
    ck_assert_uint_eq(nvfp4_philox_next(&st), out[3]);
    ck_assert_uint_eq(st.ctr[0], 0);
    ck_assert_uint_eq(st.ctr[1], 0x40000000u);
    /* x and y both wrap: the carry reaches z (the subsequence), as in
     * Philox_State_Incr */
    nvfp4_philox_init(&st, SEED, 5, 0);
    st.ctr[0] = st.ctr[1] = 0xffffffffu;
    nvfp4_philox_skipahead(&st, 4);
    ck_assert_uint_eq(st.ctr[0], 0);
    ck_assert_uint_eq(st.ctr[1], 0);
    ck_assert_uint_eq(st.ctr[2], 6);
    block(SEED, 0, 0, 6, 0, out);
    ck_assert_uint_eq(nvfp4_philox_next(&st), out[0]);
}
END_TEST

/* DESIGN.md 3.3: the block bytes equal curand_init(seed, b, 4*offset) then
 * curand4(), element 4w+k taking bits 8k..8k+7 of word w. */
START_TEST(sr_block_bytes_contract)
{
    static const uint64_t blocks[] = {0, 1, 2, 15, 65535, 0x100000000ull, 0xffffffffffffffffull};
    static const uint64_t offsets[] = {0, 1, 2, 0x123456789ull};
    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++)
        for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++) {
            uint8_t bytes[16];
            nvfp4_sr_block_bytes(SEED, offsets[oi], blocks[bi], bytes);
            nvfp4_philox_stream st;
            nvfp4_philox_init(&st, SEED, blocks[bi], 4 * offsets[oi]);
            uint32_t w[4];
            nvfp4_philox_next4(&st, w);
            for (int e = 0; e < 16; e++) ck_assert_uint_eq(bytes[e], (w[e / 4] >> (8 * (e % 4))) & 0xffu);
        }
    /* a fixed answer, so a change of the contract cannot pass silently:
     * seed 0, offset 0, block 0 is the Random123 zero KAT, little-endian. */
    uint8_t b0[16];
    nvfp4_sr_block_bytes(0, 0, 0, b0);
    static const uint8_t want[16] = {0xd5, 0xe8, 0x27, 0x66, 0x8d, 0xc5, 0x69, 0xe1,
                                     0x4c, 0xac, 0x57, 0xbc, 0xd8, 0xdb, 0x00, 0x9b};
    ck_assert_mem_eq(b0, want, 16);
}
END_TEST

/* ---- cuRAND's host generator -------------------------------------------- */
#if NVFP4_HAVE_CUDA_ORACLES

/* How curandGenerate (CURAND_RNG_PSEUDO_PHILOX4_32_10, host generator,
 * default ordering = PSEUDO_BEST = PSEUDO_DEFAULT = PSEUDO_LEGACY; DYNAMIC
 * is refused on the host) maps onto curand_init, found by experiment with
 * CUDA 13.0's libcurand and verified below word by word:
 *
 *   the generator runs T = 65536 virtual threads; thread t is
 *   curand_init(seed, t, 0) and each "round" every thread emits one curand4.
 *   With p = generator_offset + i (i = index of the output word):
 *     round r = p / (4T),  q = p % (4T),  t = q / 4
 *     out[i] = word (4r + q%4) of subsequence t
 *            = curand_init(seed, t, 4r + q%4) then curand()
 *
 * So words 4t..4t+3 of the first 4T outputs are thread t's first curand4,
 * and the generator offset counts words across this interleaved order. */
enum { CURAND_HOST_THREADS = 65536 };

static uint32_t curand_host_model(uint64_t seed, uint64_t p)
{
    const uint64_t per_round = 4u * (uint64_t)CURAND_HOST_THREADS;
    uint64_t r = p / per_round, q = p % per_round;
    nvfp4_philox_stream st;
    nvfp4_philox_init(&st, seed, q / 4, 4 * r + q % 4);
    return nvfp4_philox_next(&st);
}

static int curand_host_usable(void)
{
    uint32_t w;
    int s = oracle_curand_philox_host(1, 0, 0, &w, 1);
    if (s != 0) fprintf(stderr, "SKIP curand_host_generator: no usable libcurand host generator (status %d; -1: libcurand not found)\n", s);
    return s == 0;
}

START_TEST(curand_host_generator)
{
    if (!curand_host_usable()) return;
    static const uint64_t seeds[] = {0, SEED, 67280421310721ull};
    static const uint64_t offsets[] = {0, 1, 3, 4, 5, 262143, 262144 + 7,
                                       /* round 2^32 - 1 to 2^32: ctr.x carries into ctr.y */
                                       (0xffffffffull << 18) - 9};
    static const size_t lengths[] = {1, 7, 1000, 262144 + 100, 1u << 20};
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++)
        for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
            for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                size_t n = lengths[li];
                if (n > 1000 && (si != 1 || oi % 3 != 0)) continue; /* keep the run short */
                uint32_t *got = malloc(n * sizeof *got);
                ck_assert_ptr_nonnull(got);
                ck_assert_int_eq(oracle_curand_philox_host(seeds[si], offsets[oi], 0, got, n), 0);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) bad += got[i] != curand_host_model(seeds[si], offsets[oi] + i);
                free(got);
                ck_assert_msg(bad == 0, "seed %llu offset %llu n %zu: %zu words differ from the model",
                              (unsigned long long)seeds[si], (unsigned long long)offsets[oi], n, bad);
            }
}
END_TEST

/* The SR contract through cuRAND itself: block b's 16 bytes for (seed,
 * offset) are cuRAND thread b's curand4 number `offset`, i.e. generator
 * words 4T*offset + 4b .. +3. */
START_TEST(curand_host_sr_bytes)
{
    if (!curand_host_usable()) return;
    const uint64_t per_round = 4u * (uint64_t)CURAND_HOST_THREADS;
    for (uint64_t offset = 0; offset < 3; offset++) {
        uint32_t *w = malloc(per_round * sizeof *w);
        ck_assert_ptr_nonnull(w);
        ck_assert_int_eq(oracle_curand_philox_host(SEED, offset * per_round, 0, w, per_round), 0);
        for (uint64_t b = 0; b < CURAND_HOST_THREADS; b += 4099) {
            uint8_t bytes[16];
            nvfp4_sr_block_bytes(SEED, offset, b, bytes);
            for (int e = 0; e < 16; e++) ck_assert_uint_eq(bytes[e], (w[4 * b + (uint64_t)e / 4] >> (8 * (e % 4))) & 0xffu);
        }
        free(w);
    }
}
END_TEST

START_TEST(curand_host_orderings_agree)
{
    if (!curand_host_usable()) return;
    /* 100 BEST, 101 DEFAULT, 103 LEGACY give the same stream on the host */
    uint32_t a[64], b[64];
    ck_assert_int_eq(oracle_curand_philox_host(SEED, 5, 101, a, 64), 0);
    static const int orders[] = {100, 103};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(oracle_curand_philox_host(SEED, 5, orders[k], b, 64), 0);
        ck_assert_mem_eq(a, b, sizeof a);
    }
}
END_TEST
#else
START_TEST(curand_host_generator_skipped)
{
    printf("SKIP curand_host_generator: built without the CUDA toolkit (no cuda_fp4.h/libcurand found)\n");
}
END_TEST
#endif

static Suite *suite(void)
{
    Suite *s = suite_create("philox");
    TCase *tc = tcase_create("philox");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, random123_kat, 0, (int)(sizeof random123_kats / sizeof random123_kats[0]));
    tcase_add_test(tc, curand_init_example);
    tcase_add_test(tc, next_walks_the_stream);
    tcase_add_test(tc, next4_from_every_state);
    tcase_add_test(tc, skipahead_equals_offset);
    tcase_add_test(tc, skipahead_sequence_equals_subsequence);
    tcase_add_test(tc, counter_carries);
    tcase_add_test(tc, sr_block_bytes_contract);
    suite_add_tcase(s, tc);
    TCase *cu = tcase_create("curand");
    tcase_set_timeout(cu, 300);
#if NVFP4_HAVE_CUDA_ORACLES
    tcase_add_test(cu, curand_host_generator);
    tcase_add_test(cu, curand_host_sr_bytes);
    tcase_add_test(cu, curand_host_orderings_agree);
#else
    tcase_add_test(cu, curand_host_generator_skipped);
#endif
    suite_add_tcase(s, cu);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite());
}
