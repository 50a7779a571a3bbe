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
    uint64_t hist[4][256]; /* code bytes by value; four tables so that equal bytes in a row do not
                              wait on each other's increment (one table ran at 1.6 GB/s a core) */
    uint64_t scale_hist[256]; /* scale bytes by value */
    uint8_t max_mag[256];     /* the largest code magnitude (code & 7) under each scale byte */
} scan_acc;

/* The largest 3-bit magnitude field (code & 7) of the 16 codes in w,
 * without a table lookup per byte (a lookup and a max per byte made this
 * loop run at 1.3 GB/s a core, this runs at 4-6): keep the fields whose top
 * bit is set if any is, then those whose middle bit is set, then test the
 * low bit. (t >> k) * 7 widens each surviving field's marker bit to all
 * three bits of its field (7 < 16: no carry into the next field). */
static uint8_t largest_magnitude_field(uint64_t w)
{
    uint64_t v = w & 0x7777777777777777u, t;
    uint8_t m = 0;
    if ((t = v & 0x4444444444444444u) != 0) {
        m = 4;
        v &= (t >> 2) * 7;
    }
    if ((t = v & 0x2222222222222222u) != 0) {
        m |= 2;
        v &= (t >> 1) * 7;
    }
    if (v & 0x1111111111111111u) m |= 1;
    return m;
}

/* Byte histogram of n code bytes into four tables (n a multiple of 8). */
static void count_bytes(const uint8_t *q, size_t n, scan_acc *a)
{
    for (size_t i = 0; i < n; i += 4) {
        a->hist[0][q[i]]++;
        a->hist[1][q[i + 1]]++;
        a->hist[2][q[i + 2]]++;
        a->hist[3][q[i + 3]]++;
    }
}

/* Blocks b0..b1: the histogram of a slice of codes first (a tight loop),
 * then each block's scale byte and largest code magnitude over the same
 * slice, still in the L1 cache, as integer counts and maxima per scale byte
 * (decoding each block's scale and product in double ran at 1.6 GB/s a
 * core; scan_blocks decodes the 256 possible bytes once at the end). */
static void scan_range(const uint8_t *codes, const uint8_t *scales, size_t b0, size_t b1, scan_acc *a)
{
    const size_t slice = 512; /* blocks: 4 KiB of codes */
    for (size_t s0 = b0; s0 < b1; s0 += slice) {
        size_t s1 = s0 + slice < b1 ? s0 + slice : b1;
        count_bytes(codes + 8 * s0, 8 * (s1 - s0), a);
        for (size_t b = s0; b < s1; b++) {
            uint64_t w;
            memcpy(&w, codes + 8 * b, 8);
            uint8_t sb = scales[b], m = largest_magnitude_field(w);
            a->scale_hist[sb]++;
            if (m > a->max_mag[sb]) a->max_mag[sb] = m;
        }
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
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < 256; i++) all.hist[0][i] += a.hist[k][i];
            for (int i = 0; i < 256; i++) {
                all.scale_hist[i] += a.scale_hist[i];
                if (a.max_mag[i] > all.max_mag[i]) all.max_mag[i] = a.max_mag[i];
            }
        }
    }
    for (int i = 0; i < 256; i++) {
        l->code_hist[i & 0xF] += all.hist[0][i];
        l->code_hist[i >> 4] += all.hist[0][i];
    }
    /* the scale statistics and max |fp4(code)| * scale, from the bytes present */
    double smin = INFINITY, smax = 0, bmax = 0;
    for (int i = 0; i < 256; i++) {
        if (!all.scale_hist[i]) continue;
        double s = t.e4m3[i];
        if (s != s) { /* NaN scale byte 0x7F / 0xFF */
            l->scale_nan += all.scale_hist[i];
            continue;
        }
        if (s == 0) l->scale_zero += all.scale_hist[i];
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
