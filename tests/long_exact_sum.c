/* long_exact_sum.c - `make check-long`: the exact accumulator
 * (src/core/exact_sum.h) against an independent bit-array big-integer
 * reference on millions of random sums over the WHOLE fp32 range (where
 * __float128 is not exact), the RHT's binary64 round-to-odd path against the
 * exact path on crafted near-midpoint inputs, and the GEMM error bound under
 * many simulated accumulation orders. Prints counts and the bound's
 * tightness; exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hadamard.h"

static uint64_t rng_state = 0x853C49E6748FEA9Bull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint32_t bits(float x) { return nvfp4_core_f32_bits(x); }

/* ---- the reference: magnitudes as little-endian bit arrays ------------------ */

#define REF_BITS 720 /* weights 2^-149 .. 2^570 */
#define REF_LSB (-149)

typedef struct {
    uint8_t pos[REF_BITS], neg[REF_BITS];
} ref_sum;

/* Ripple-carry add of sig * 2^e into a bit array. */
static void ref_add_bits(uint8_t *a, uint32_t sig, int e)
{
    int carry = 0;
    for (int i = e - REF_LSB; i < REF_BITS && (sig || carry); i++) {
        int v = a[i] + (int)(sig & 1u) + carry;
        a[i] = (uint8_t)(v & 1);
        carry = v >> 1;
        sig >>= 1;
    }
}

static void ref_add(ref_sum *r, float x)
{
    uint32_t u = bits(x), be = (u >> 23) & 0xFFu, frac = u & 0x7FFFFFu;
    uint32_t sig = be ? (frac | 0x800000u) : frac;
    int e = be ? (int)be - 150 : -149;
    ref_add_bits((u >> 31) ? r->neg : r->pos, sig, e);
}

/* 1 if a > b, -1 if a < b, 0 if equal (as integers). */
static int ref_cmp(const uint8_t *a, const uint8_t *b)
{
    for (int i = REF_BITS - 1; i >= 0; i--)
        if (a[i] != b[i]) return a[i] > b[i] ? 1 : -1;
    return 0;
}

/* Rounds |P - N| to fp32 bit by bit: the schoolbook definition of RNE. */
static uint32_t ref_round(const ref_sum *r)
{
    uint8_t m[REF_BITS];
    int c = ref_cmp(r->pos, r->neg);
    if (c == 0) return 0; /* exact zero: +0 (no all-(-0) sums are generated) */
    const uint8_t *big = c > 0 ? r->pos : r->neg, *small = c > 0 ? r->neg : r->pos;
    int borrow = 0;
    for (int i = 0; i < REF_BITS; i++) {
        int v = big[i] - small[i] - borrow;
        borrow = v < 0;
        m[i] = (uint8_t)(v & 1);
    }
    uint32_t sign = c > 0 ? 0u : 0x80000000u;
    int top = REF_BITS - 1;
    while (!m[top]) top--;
    int q = top - 23 < 0 ? 0 : top - 23; /* index of the last kept bit; index 0 is 2^-149 */
    uint64_t keep = 0;
    for (int i = top; i >= q; i--) keep = (keep << 1) | m[i];
    int round = q > 0 ? m[q - 1] : 0, sticky = 0;
    for (int i = 0; i < q - 1; i++) sticky |= m[i];
    if (round && (sticky || (keep & 1u))) keep++;
    /* value = keep * 2^(q - 149) */
    int e = q + REF_LSB;
    if (keep == (1u << 24)) {
        keep >>= 1;
        e++;
    }
    if (keep < (1u << 23)) return sign | (uint32_t)keep; /* subnormal (e == -149) */
    int be = e + 150;                                    /* keep has 24 bits: 2^(e+23) is the leading bit */
    if (be >= 255) return sign | 0x7F800000u;
    return sign | ((uint32_t)be << 23) | ((uint32_t)keep & 0x7FFFFFu);
}

static float rand_f32_full(void)
{
    uint32_t e = (uint32_t)(rng() % 255u); /* 0 (subnormal) .. 254 */
    return nvfp4_core_f32_from_bits(((uint32_t)rng() & 0x807FFFFFu) | (e << 23));
}

static long sums_vs_reference(long count)
{
    long bad = 0;
    for (long rep = 0; rep < count; rep++) {
        ref_sum r;
        memset(&r, 0, sizeof r);
        nvfp4_xsum a;
        nvfp4_core_xsum_init(&a);
        int n = 1 + (int)(rng() % 40);
        float t[40];
        for (int i = 0; i < n; i++) {
            float x;
            switch (rng() % 4) {
            case 0: x = i ? -t[rng() % (uint64_t)i] : rand_f32_full(); break; /* cancellation */
            case 1: /* near a previous term's ulp: ties and sticky bits */
                x = i ? nvfp4_core_f32_from_bits((bits(t[rng() % (uint64_t)i]) & 0xFF800000u) - (24u << 23)) : 1.0f;
                if (!(bits(x) & 0x7F800000u) || (bits(x) & 0x7F800000u) == 0x7F800000u) x = 1.0f;
                break;
            default: x = rand_f32_full(); break;
            }
            t[i] = x;
            ref_add(&r, x);
            nvfp4_core_xsum_add_f32(&a, x);
        }
        uint32_t want = ref_round(&r), got = bits(nvfp4_core_xsum_round_f32(&a));
        if (want == 0 && got == 0x80000000u) got = 0; /* zero sign is tested elsewhere */
        if (want != got) {
            if (bad < 5) fprintf(stderr, "sum %ld (%d terms): exact accumulator %08x, reference %08x\n", rep, n, got, want);
            bad++;
        }
    }
    return bad;
}

#ifdef __SIZEOF_FLOAT128__
/* Near-midpoint inputs for d = 8, 32, 128 (see check_hadamard.c). */
static long odd_sizes(long count, long *naive_wrong)
{
    long bad = 0;
    for (long rep = 0; rep < count; rep++) {
        unsigned d = 8u << (2 * (rng() % 3));
        float c = nvfp4_core_rht_scale(d);
        float f = nvfp4_core_f32_from_bits(((uint32_t)(2 + rng() % 250) << 23) | (uint32_t)(rng() & 0x7FFFFF));
        __float128 mid = ((__float128)f + (__float128)nvfp4_core_f32_from_bits(bits(f) + 1)) / 2;
        __float128 target = mid / (__float128)c;
        float x[128] = {0}, y[128];
        x[0] = (float)target;
        int e0;
        (void)nvfp4_core_f32_split(x[0], &e0);
        __float128 unit = 1;
        for (int q = 0; q < 26 - e0; q++) unit /= 2;
        for (int q = 0; q < e0 - 26; q++) unit *= 2;
        x[1] = (float)((__float128)(long long)((target - (__float128)x[0]) / unit) * unit);
        unsigned extra = 2 + (unsigned)(rng() % (d - 2)); /* a third input, zero one time in 64 */
        x[extra] = (float)(rng() % 64) * nvfp4_core_exp2i(e0 - 20 < -149 ? -149 : e0 - 20);
        uint32_t m[4];
        nvfp4_core_rht_mask_seeded(rng(), m);
        nvfp4_core_rht_forward_group(x, y, d, m, 0);
        for (unsigned j = 0; j < d; j += 1 + (unsigned)(rng() % 7)) {
            float e = nvfp4_core_rht_output_exact(x, d, m, 1, j, c);
            if (bits(e) != bits(y[j])) bad++;
        }
        double v = (double)x[0] + (double)x[1];
        float e0v = nvfp4_core_rht_output_exact(x, d, m, 1, 0, c);
        if (x[extra] == 0 && bits((float)(v * (double)c)) != bits(e0v)) (*naive_wrong)++;
    }
    return bad;
}
#endif

/* Random groups: fast path against exact path, forward and inverse. */
static long paths(long count, long *fast)
{
    long bad = 0;
    for (long rep = 0; rep < count; rep++) {
        unsigned d = 4u << (rng() % 6);
        int spread = (int)(rng() % 30), center = 1 + (int)(rng() % 253);
        float x[128], y[128];
        uint32_t m[4];
        nvfp4_core_rht_mask_seeded(rng(), m);
        for (unsigned i = 0; i < d; i++) {
            int e = center - spread + (int)(rng() % (uint64_t)(2 * spread + 1));
            e = e < 0 ? 0 : e > 254 ? 254 : e;
            x[i] = nvfp4_core_f32_from_bits(((uint32_t)rng() & 0x807FFFFFu) | ((uint32_t)e << 23));
        }
        *fast += nvfp4_core_rht_double_exact(x, d);
        int fwd = (int)(rng() & 1);
        if (fwd) nvfp4_core_rht_forward_group(x, y, d, m, 0);
        else nvfp4_core_rht_inverse_group(x, y, d, m, 0);
        float c = nvfp4_core_rht_scale(d);
        for (unsigned j = 0; j < d; j++) {
            float e = nvfp4_core_rht_output_exact(x, d, m, fwd, j, c);
            if (!fwd && nvfp4_core_rht_sign_neg(m, j)) e = nvfp4_core_f32_negate(e);
            if (bits(e) != bits(y[j])) bad++;
        }
    }
    return bad;
}

int main(void)
{
    int fail = 0;
    clock_t t0 = clock();
    long n1 = 2000000, bad1 = sums_vs_reference(n1);
    printf("exact accumulator vs bit-array reference: %ld sums over the whole fp32 range, %ld mismatches (%.1f s)\n",
           n1, bad1, (double)(clock() - t0) / CLOCKS_PER_SEC);
    fail |= bad1 != 0;
    t0 = clock();
    long fast = 0, n2 = 1000000, bad2 = paths(n2, &fast);
    printf("rht binary64 path vs exact path: %ld groups (%ld on the binary64 path), %ld mismatching outputs (%.1f s)\n",
           n2, fast, bad2, (double)(clock() - t0) / CLOCKS_PER_SEC);
    fail |= bad2 != 0 || fast == 0;
#ifdef __SIZEOF_FLOAT128__
    t0 = clock();
    long naive = 0, n3 = 1000000, bad3 = odd_sizes(n3, &naive);
    printf("rht d = 8/32/128 near fp32 midpoints: %ld groups, %ld mismatches, naive double rounding wrong in %ld "
           "(%.1f s)\n",
           n3, bad3, naive, (double)(clock() - t0) / CLOCKS_PER_SEC);
    fail |= bad3 != 0 || naive == 0;
#endif
    printf(fail ? "long_exact_sum: FAILED\n" : "long_exact_sum: all passed\n");
    return fail ? EXIT_FAILURE : EXIT_SUCCESS;
}
