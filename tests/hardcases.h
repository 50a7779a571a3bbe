/*
 * hardcases.h - structured hard cases for the scalar encoders, shared by the
 * Check suites, the exhaustive oracle run and the determinism digest.
 *
 * hardcases_f32() lists fp32 bit patterns that sit on or next to a rounding
 * decision of some encoder: every E2M1 grid point and midpoint (multiples of
 * 0.25 up to 6), every E4M3 code value and the midpoint between neighbouring
 * codes, every power of two and 1.5 * 2^e (UE8M0 floor/ceil/even), the BF16
 * and FP16 overflow thresholds and ties, fp32 zeros, subnormals, FLT_MAX,
 * infinities and NaNs with several payloads. Each finite anchor comes with
 * its two float neighbours, and every pattern with both signs.
 * Also: a seeded 64-bit generator (splitmix64) for the random samples, kept
 * independent of the Philox code under test.
 */
#ifndef NVFP4_TESTS_HARDCASES_H
#define NVFP4_TESTS_HARDCASES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t hc_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float hc_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* splitmix64 (Steele, Lea, Flood 2014): a fixed, well-known sequence. */
static inline uint64_t hc_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct {
    uint32_t *out;
    size_t n, cap;
} hc_list;

static inline void hc_push(hc_list *l, uint32_t u)
{
    if (l->n < l->cap) l->out[l->n] = u;
    l->n++;
}

/* A positive anchor, its neighbours, and all three negated. */
static inline void hc_anchor(hc_list *l, uint32_t u)
{
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t v[3] = {a, a + 1u, a - 1u};
    int k = a == 0 ? 2 : (a >= 0x7F800000u ? 1 : 3); /* no neighbour past Inf/NaN; 0 has one */
    for (int i = 0; i < k; i++) {
        hc_push(l, v[i]);
        hc_push(l, v[i] | 0x80000000u);
    }
}

static inline void hc_anchor_f(hc_list *l, float x) { hc_anchor(l, hc_bits(x)); }

/* Returns the number of patterns; writes at most cap of them. Call with
 * cap = 0 to size the buffer. */
static inline size_t hardcases_f32(uint32_t *out, size_t cap)
{
    hc_list l = {out, 0, cap};
    /* fp32 specials */
    hc_anchor(&l, 0x00000000u);              /* +-0 */
    hc_anchor(&l, 0x00000001u);              /* denormal min */
    hc_anchor(&l, 0x007FFFFFu);              /* denormal max */
    hc_anchor(&l, 0x00800000u);              /* min normal */
    hc_anchor(&l, 0x7F7FFFFFu);              /* FLT_MAX */
    hc_anchor(&l, 0x7F800000u);              /* Inf */
    static const uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FFFFFFFu,
                                    0x7FC00001u, 0x7FA5A5A5u, 0x7FE00000u, 0x7F800100u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) hc_anchor(&l, nans[i]);
    /* E2M1: grid points and midpoints are the multiples of 0.25 up to 6,
     * then values past saturation */
    for (int k = 1; k <= 24; k++) hc_anchor_f(&l, 0.25f * (float)k);
    static const float e2m1_far[] = {6.5f, 7.0f, 8.0f, 12.0f, 100.0f, 0.125f, 0.0625f};
    for (size_t i = 0; i < sizeof e2m1_far / sizeof e2m1_far[0]; i++) hc_anchor_f(&l, e2m1_far[i]);
    /* E4M3: every code value (0x01..0x7E) and the midpoint to the next one;
     * 464 = 448 + half ulp, 480 = the next would-be code, 2^-10 = half the
     * smallest subnormal */
    for (int c = 1; c <= 0x7E; c++) {
        int e = c >> 3, m = c & 7;
        float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
        int c2 = c + 1;
        int e2 = c2 >> 3, m2 = c2 & 7;
        float v2 = e2 == 0 ? ldexpf((float)m2, -9) : ldexpf(1.0f + (float)m2 / 8.0f, e2 - 7);
        hc_anchor_f(&l, v);
        hc_anchor_f(&l, 0.5f * (v + v2)); /* exact: both are short in binary */
    }
    hc_anchor_f(&l, ldexpf(1.0f, -10));
    hc_anchor_f(&l, ldexpf(1.0f, -11));
    hc_anchor_f(&l, 512.0f);
    /* powers of two and 1.5 * 2^e over the whole fp32 range (UE8M0 modes,
     * and the exponent edges of every format) */
    for (int e = -149; e <= 127; e++) {
        hc_anchor_f(&l, ldexpf(1.0f, e));
        if (e <= 126 && e >= -148) hc_anchor_f(&l, ldexpf(1.5f, e));
    }
    /* FP16: max 65504, overflow threshold 65520, subnormal ties */
    static const float fp16_edges[] = {65504.0f, 65520.0f, 65536.0f, 65519.996f};
    for (size_t i = 0; i < sizeof fp16_edges / sizeof fp16_edges[0]; i++) hc_anchor_f(&l, fp16_edges[i]);
    for (int k = 1; k < 64; k += 2) hc_anchor_f(&l, ldexpf((float)k, -25)); /* x.5 units of 2^-24 */
    for (int k = 1; k < 64; k += 2) hc_anchor_f(&l, ldexpf(2048.0f + (float)k, -11)); /* 1 + (k/2) ulp */
    /* BF16: ties on the low 16 bits (odd and even kept halves), overflow */
    static const uint32_t bf16_ties[] = {0x3F808000u, 0x3F818000u, 0x3F7F8000u, 0x7F7F8000u,
                                         0x7F7FFFFFu, 0x7F7F7FFFu, 0x00008000u, 0x00018000u};
    for (size_t i = 0; i < sizeof bf16_ties / sizeof bf16_ties[0]; i++) hc_anchor(&l, bf16_ties[i]);
    return l.n;
}

#endif /* NVFP4_TESTS_HARDCASES_H */
