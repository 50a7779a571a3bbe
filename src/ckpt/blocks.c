/* blocks.c - the statistics of a layer's codes and block scales, in one
 * pass over its bytes: code histogram, scale histogram, the largest code
 * magnitude under each scale byte, and from them the scale range and the
 * largest decoded value. Codes decode through nvfp4_e2m1_to_f32 and scale
 * bytes through nvfp4_e4m3_to_f32 (src/core); this file only counts and
 * takes maxima. */
#include "ckpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
#include "nvfp4/simd.h"

/* Decode tables, built once from src/core's decoders: the E4M3 value of a
 * scale byte and the |E2M1 value| of a 3-bit magnitude (E2M1 magnitudes
 * grow with code & 7, so the largest field has the largest value). */
typedef struct {
    float e4m3[256];
    float fp4_mag[8];
} scan_tables;

static void scan_tables_init(scan_tables *t)
{
    for (int i = 0; i < 256; i++) t->e4m3[i] = nvfp4_e4m3_to_f32((uint8_t)i);
    for (int i = 0; i < 8; i++) t->fp4_mag[i] = nvfp4_e2m1_to_f32((uint8_t)i);
}

/* What one thread gathers over a range of blocks; every field is a count, a
 * min or a max, so the merged result is the same at any thread count. */
typedef struct {
    uint64_t subset[16];      /* subset[S], S != 0: nibbles with every bit of S set (subset_counts);
                                 subset[0]: the nibbles counted that way */
    uint64_t nibble[16];      /* nibbles counted one by one (the tail of a range), by value */
    uint64_t byte_hist[4][256]; /* code bytes by value (scan_range_table), four tables in turn */
    uint64_t scale_hist[4][256]; /* scale bytes by value; four tables so that equal bytes in a row do not
                                    wait on each other's increment */
    uint8_t max_mag[256];     /* the largest code magnitude (code & 7) under each scale byte */
} scan_acc;

/* The code histogram, without a table: a table increment per byte runs at
 * about 3 GB/s a core (the stores bound it). Instead, for each of the 15
 * nonempty sets S of the 4 bits of a nibble, count the nibbles that have
 * every bit of S set: ANDs of the shifted bytes, masked to bit 0 and bit 4
 * of each byte (the low and the high nibble), added into 4-bit fields of
 * wide integer vectors. Each field takes 15 additions, then folds into
 * 8-bit fields (8 folds of at most 30), then into 64-bit sums. The
 * histogram follows exactly by inclusion-exclusion (histogram_from_subsets).
 * GCC/clang vector types, built into the AVX2 path only (scan_range_avx2):
 * for 16-byte vectors the accumulators spill and the byte tables win. */
typedef uint64_t u64x4 __attribute__((vector_size(32)));
#define SPLAT4(x) ((u64x4){(x), (x), (x), (x)})

/* (No function takes or returns a vector by value: the baseline build
 * would warn that AVX vectors change the ABI, though all of it inlines.) */
static inline __attribute__((always_inline)) uint64_t sum_16bit_fields(const u64x4 *x)
{
    uint64_t s = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t y = ((*x)[k] & 0x0000FFFF0000FFFFu) + (((*x)[k] >> 16) & 0x0000FFFF0000FFFFu);
        s += (y & 0xFFFFFFFFu) + (y >> 32);
    }
    return s;
}

/* subset[S] += nibbles of q[0..n) (n a multiple of 32) with all bits of S set. */
static inline __attribute__((always_inline)) void subset_counts(const uint8_t *q, size_t n, uint64_t subset[16])
{
    const u64x4 m11 = SPLAT4(0x1111111111111111u), m0f = SPLAT4(0x0F0F0F0F0F0F0F0Fu),
                mff = SPLAT4(0x00FF00FF00FF00FFu);
    size_t i = 0;
    while (i < n) {
        u64x4 w[16] = {0}; /* 8-bit fields */
        u64x4 a[16] = {0}; /* 4-bit fields: bit 0 and bit 4 of each byte counted apart */
        for (int fold = 0; fold < 8 && i < n; fold++) {
            for (int k = 0; k < 15 && i < n; k++, i += 32) {
                u64x4 v;
                memcpy(&v, q + i, sizeof v);
                u64x4 p0 = v & m11, p1 = (v >> 1) & m11, p2 = (v >> 2) & m11, p3 = (v >> 3) & m11;
                u64x4 p01 = p0 & p1, p02 = p0 & p2, p03 = p0 & p3, p12 = p1 & p2, p13 = p1 & p3, p23 = p2 & p3;
                a[1] += p0, a[2] += p1, a[4] += p2, a[8] += p3;
                a[3] += p01, a[5] += p02, a[9] += p03, a[6] += p12, a[10] += p13, a[12] += p23;
                a[7] += p01 & p2, a[11] += p01 & p3, a[13] += p02 & p3, a[14] += p12 & p3, a[15] += p01 & p23;
            }
            for (int s = 1; s < 16; s++) {
                w[s] += (a[s] & m0f) + ((a[s] >> 4) & m0f);
                a[s] = SPLAT4(0);
            }
        }
        for (int s = 1; s < 16; s++) {
            u64x4 x = (w[s] & mff) + ((w[s] >> 8) & mff);
            subset[s] += sum_16bit_fields(&x);
        }
    }
    subset[0] += 2 * n;
}

/* The largest magnitude field (code & 7) of each of 4 blocks (8 bytes, 16
 * codes each) as the SWAR rule of largest_magnitude_field below, lane by
 * lane: keep the fields whose top bit is set where any is, then those whose
 * middle bit is set, then test the low bit. */
static inline __attribute__((always_inline)) void magnitudes4(const uint8_t *q, u64x4 *out)
{
    const u64x4 zero = SPLAT4(0);
    u64x4 w;
    memcpy(&w, q, sizeof w);
    u64x4 v = w & SPLAT4(0x7777777777777777u), t, has, m;
    t = v & SPLAT4(0x4444444444444444u);
    has = (u64x4)(t != zero);
    v &= (t | (t >> 1) | (t >> 2)) | ~has;
    m = has & SPLAT4(4);
    t = v & SPLAT4(0x2222222222222222u);
    has = (u64x4)(t != zero);
    v &= (t | (t >> 1)) | ~has;
    m |= has & SPLAT4(2);
    m |= (u64x4)((v & SPLAT4(0x1111111111111111u)) != zero) & SPLAT4(1);
    *out = m;
}

/* The same for one block (the tail of a range). */
static uint8_t largest_magnitude_field(uint64_t w)
{
    uint64_t v = w & 0x7777777777777777u, t;
    uint8_t m = 0;
    if ((t = v & 0x4444444444444444u) != 0) {
        m = 4;
        v &= t | (t >> 1) | (t >> 2);
    }
    if ((t = v & 0x2222222222222222u) != 0) {
        m |= 2;
        v &= t | (t >> 1);
    }
    if (v & 0x1111111111111111u) m |= 1;
    return m;
}

static inline __attribute__((always_inline)) void count_block(scan_acc *a, uint8_t sb, uint8_t m)
{
    if (m > a->max_mag[sb]) a->max_mag[sb] = m;
}

/* Scale bytes by value, four tables in turn. */
static inline __attribute__((always_inline)) void count_scales(const uint8_t *sc, size_t n, scan_acc *a)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a->scale_hist[0][sc[i]]++;
        a->scale_hist[1][sc[i + 1]]++;
        a->scale_hist[2][sc[i + 2]]++;
        a->scale_hist[3][sc[i + 3]]++;
    }
    for (; i < n; i++) a->scale_hist[0][sc[i]]++;
}

/* Blocks b0..b1 with AVX2: the subset counts of a slice of codes first (a
 * tight loop), then each block's scale byte and largest code magnitude over
 * the same slice, still in the cache, as integer counts and maxima per
 * scale byte (scan_blocks decodes the 256 possible bytes once at the end).
 * On a 1 GB checkpoint in the page cache, one thread: 0.34 s (docs/checkpoints.md,
 * "Speed and memory"). */
static inline __attribute__((always_inline)) void scan_range_body(const uint8_t *codes, const uint8_t *scales,
                                                                  size_t b0, size_t b1, scan_acc *a)
{
    const size_t slice = 2048; /* blocks: 16 KiB of codes */
    for (size_t s0 = b0; s0 < b1; s0 += slice) {
        size_t s1 = s0 + slice < b1 ? s0 + slice : b1, n4 = (s1 - s0) / 4 * 4, b = s0;
        subset_counts(codes + 8 * s0, 8 * n4, a->subset);
        count_scales(scales + s0, s1 - s0, a);
        for (; b < s0 + n4; b += 4) {
            /* 7 is the largest magnitude there is: four blocks whose scale
             * bytes have all seen it can change no maximum (most blocks of
             * a correct writer hold a +-6, code magnitude 7) */
            if ((a->max_mag[scales[b]] & a->max_mag[scales[b + 1]] & a->max_mag[scales[b + 2]] &
                 a->max_mag[scales[b + 3]]) == 7)
                continue;
            u64x4 m;
            magnitudes4(codes + 8 * b, &m);
            for (int k = 0; k < 4; k++) count_block(a, scales[b + (size_t)k], (uint8_t)m[k]);
        }
        for (; b < s1; b++) {
            uint64_t w;
            memcpy(&w, codes + 8 * b, 8);
            for (int k = 0; k < 8; k++) {
                a->nibble[(w >> (8 * k)) & 15]++;
                a->nibble[(w >> (8 * k + 4)) & 15]++;
            }
            count_block(a, scales[b], largest_magnitude_field(w));
        }
    }
}

/* The portable path (and NVFP4_SIMD=scalar): a byte histogram in four
 * tables, folded into nibbles at the end, and one block at a time. Built
 * without AVX2 the vector path above runs on 16-byte halves and spills its
 * accumulators: slower than this (0.98 s against 0.58 s on a 1 GB
 * checkpoint). Both give the same counts. */
static void scan_range_table(const uint8_t *codes, const uint8_t *scales, size_t b0, size_t b1, scan_acc *a)
{
    const size_t slice = 512; /* blocks: 4 KiB of codes, still in the L1 cache for the second loop */
    for (size_t s0 = b0; s0 < b1; s0 += slice) {
        size_t s1 = s0 + slice < b1 ? s0 + slice : b1;
        const uint8_t *q = codes + 8 * s0;
        for (size_t i = 0; i < 8 * (s1 - s0); i += 4) {
            a->byte_hist[0][q[i]]++;
            a->byte_hist[1][q[i + 1]]++;
            a->byte_hist[2][q[i + 2]]++;
            a->byte_hist[3][q[i + 3]]++;
        }
        for (size_t b = s0; b < s1; b++) {
            uint64_t w;
            a->scale_hist[0][scales[b]]++;
            if (a->max_mag[scales[b]] == 7) continue; /* the largest there is (as in scan_range_body) */
            memcpy(&w, codes + 8 * b, 8);
            count_block(a, scales[b], largest_magnitude_field(w));
        }
    }
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) static void scan_range_avx2(const uint8_t *codes, const uint8_t *scales, size_t b0,
                                                            size_t b1, scan_acc *a)
{
    scan_range_body(codes, scales, b0, b1, a);
}
#endif

typedef void (*scan_range_fn)(const uint8_t *, const uint8_t *, size_t, size_t, scan_acc *);

static scan_range_fn scan_range_for_cpu(void)
{
#if defined(__x86_64__)
    nvfp4_simd_variant v = nvfp4_simd_active();
    if (v == NVFP4_SIMD_AVX2 || v == NVFP4_SIMD_AVX512) return scan_range_avx2;
#endif
    return scan_range_table;
}

/* The histogram of the 16 codes from the subset counts, by
 * inclusion-exclusion: the nibbles equal to c are those with all bits of c
 * set, minus those with one more bit set, plus those with two more, ...
 * (subset[0] is all of them), plus those counted one by one. */
static void histogram_from_subsets(const scan_acc *a, uint64_t hist[16])
{
    for (int c = 0; c < 16; c++) {
        int64_t n = 0;
        for (int s = 0; s < 16; s++)
            if ((s & c) == c) n += (__builtin_popcount((unsigned)(s ^ c)) & 1) ? -(int64_t)a->subset[s]
                                                                                 : (int64_t)a->subset[s];
        hist[c] = (uint64_t)n + a->nibble[c];
    }
}

/* One pass over codes and scales (OpenMP over ranges of blocks): code
 * histogram, scale statistics, decoded amax. */
void ckpt_scan_blocks(const uint8_t *codes, const uint8_t *scales, size_t nblocks, double dmult, nvfp4_ckpt_layer *l)
{
    scan_tables t;
    scan_tables_init(&t);
    static const scan_acc zero_acc;
    scan_acc all = zero_acc;
    scan_range_fn scan_range = scan_range_for_cpu();
    const size_t chunk = (size_t)1 << 16;
    size_t nchunks = (nblocks + chunk - 1) / chunk;
#pragma omp parallel if (nchunks > 1)
    {
        scan_acc a = zero_acc;
#pragma omp for schedule(static)
        for (size_t c = 0; c < nchunks; c++) {
            size_t b0 = c * chunk, b1 = b0 + chunk < nblocks ? b0 + chunk : nblocks;
            scan_range(codes, scales, b0, b1, &a);
        }
        /* unnamed: a named critical makes a global lock symbol that the
         * shared libraries would export (test_install) */
#pragma omp critical
        {
            for (int i = 0; i < 16; i++) {
                all.subset[i] += a.subset[i];
                all.nibble[i] += a.nibble[i];
            }
            for (int i = 0; i < 256; i++) {
                for (int k = 0; k < 4; k++) {
                    all.scale_hist[0][i] += a.scale_hist[k][i];
                    all.nibble[i & 15] += a.byte_hist[k][i];
                    all.nibble[i >> 4] += a.byte_hist[k][i];
                }
                if (a.max_mag[i] > all.max_mag[i]) all.max_mag[i] = a.max_mag[i];
            }
        }
    }
    uint64_t hist[16];
    histogram_from_subsets(&all, hist);
    for (int i = 0; i < 16; i++) l->code_hist[i] += hist[i];
    /* the scale statistics and max |fp4(code)| * scale, from the bytes present */
    double smin = INFINITY, smax = 0, bmax = 0;
    for (int i = 0; i < 256; i++) {
        if (!all.scale_hist[0][i]) continue;
        double s = t.e4m3[i];
        if (s != s) { /* NaN scale byte 0x7F / 0xFF */
            l->scale_nan += all.scale_hist[0][i];
            continue;
        }
        if (s == 0) l->scale_zero += all.scale_hist[0][i];
        else if (s < smin) smin = s;
        if (s > smax) smax = s;
        double v = (double)t.fp4_mag[all.max_mag[i]] * s;
        if (v > bmax) bmax = v;
    }
    l->scale_count = nblocks;
    l->scale_min = isinf(smin) ? 0 : smin;
    l->scale_max = smax;
    l->amax_decoded = bmax * fabs(dmult);
}

void ckpt_merge_stats(nvfp4_ckpt_layer *into, const nvfp4_ckpt_layer *part)
{
    bool first = into->scale_count == 0;
    for (int i = 0; i < 16; i++) into->code_hist[i] += part->code_hist[i];
    into->scale_nan += part->scale_nan;
    into->scale_zero += part->scale_zero;
    into->scale_count += part->scale_count;
    if (first || (part->scale_min > 0 && (into->scale_min == 0 || part->scale_min < into->scale_min)))
        into->scale_min = part->scale_min;
    if (first || part->scale_max > into->scale_max) into->scale_max = part->scale_max;
    if (first || part->amax_decoded > into->amax_decoded) into->amax_decoded = part->amax_decoded;
}
