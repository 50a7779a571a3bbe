/*
 * simd_te_skel.h - internal: the skeletons of the x86 `te` kernels, written
 * once over per-ISA leaves. Not a header to include anywhere else: each ISA
 * file (simd_avx2.c, simd_avx512.c) includes it once, at its end, after
 * defining the leaves below for its vector width, and so compiles every
 * skeleton with its own target flags; the leaves are inline functions or
 * macros, so the compiler inlines them (no function pointer in a loop), as
 * xxHash instantiates its accumulate loop per ISA (Cyan4973/xxHash,
 * xxhash.h v0.8.2: XXH3_ACCUMULATE_TEMPLATE(name) defines
 * XXH3_accumulate_<name> over XXH3_accumulate_512_<name> for sse2, avx2,
 * avx512 ...) and as simd_generic.c runs one driver over per-variant
 * leaves.
 *
 * A 16-element block is SK_PARTS = 16 / SK_W vectors; per-block quantities
 * (scales, multipliers) are one lane each, SK_W blocks per vector.
 *
 * Leaves (SK_FN is the ISA's target attribute; sk_vf / sk_vi its float and
 * int32 vector types; the vector operations and the lane-wise functions of
 * simd_te_lanes.h, included earlier, are used as well: sk_te_scale,
 * sk_te_inv, sk_e2m1_rn, sk_e2m1_sr, sk_e4m3_decode, sk_mx_*, sk_sr_blocks,
 * sk_col_job, sk_rht_job, sk_col_load_group, sk_tile_amax_bound):
 *   SK_NAME(n)                 the ISA's kernel name for n (avx2_n ...)
 *   sk_absnn(v)                |v|, NaN -> 0
 *   sk_hmax(v)                 max over the lanes (NaN-free)
 *   sk_hmax_blocks(a)          lane i = max over the lanes of a[i], i < SK_W
 *   sk_all_lt(a, b)  sk_all_ordered(v)
 *   sk_nanacc  sk_nan_none()  sk_nan_or(acc, v)  sk_nan_any(acc)   whether NaN was seen
 *   sk_load_bytes(p, n)        n <= SK_W bytes, one per lane (0 past n)
 *   sk_store_bytes(v, n, p)    the low byte of the first n lanes
 *   sk_rand(p)                 SK_W random bytes, one per lane
 *   sk_pack_block(c, out)      the codes of one block's SK_PARTS vectors -> 8 bytes
 *   sk_sr_block(buf, b)        block b's 16 SR bytes in sk_sr_blocks's buffer
 *   sk_e2m1_decode_part(q)     SK_W / 2 code bytes -> SK_W values
 *   sk_store_out(p, v, stream) a row of dequantized output
 *   SK_ROW_CHUNK                     blocks per chunk of the row kernels
 *   sk_tile_group_amax(x, bf16, stride, b0, n, a)   16x16 tile amaxes (NaN ignored)
 *   sk_row_group_scales(k, x, bf16, b0, n, scale, inv)   the scale bytes and
 *                              multipliers of blocks b0..b0+n-1 (n <= SK_W);
 *                              returns whether a lane is NaN
 *   sk_row_group_nan(x, bf16, b0, n) the same question alone (may answer 1)
 *   sk_row_group_codes(x, bf16, b0, n, inv, rb, use_sr, nan, out)   their codes
 *   sk_col_tiles  sk_col_strip(j, bf16, rht, use_sr, g0, g1, s0, s1, tb)   a strip's tiles
 *   sk_line  sk_tile_lines(tb, t, l, sc)  sk_store_line(p, l, stream)   a column of
 *                              tiles as SK_W output lines and scale bytes, and a line's store
 *   sk_tile_amax(j, g, c0)           the exact per-lane max |RHT(x)|
 *   sk_store_rht_row(j, out, e, v)   one row of a tile's transform
 */
#ifndef SK_W
#error "simd_te_skel.h is included by an ISA file after its leaves"
#endif

#define SK_PARTS (16u / SK_W)

/* ---- amax ----------------------------------------------------------------- */

/* Four independent maxima (two for bf16, whose loads widen): an exact,
 * order-free maximum, so the chains change nothing but the speed. */
SK_FN static float SK_NAME(amax_f32)(const float *x, size_t n)
{
    sk_vf a0 = sk_zero(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 * SK_W <= n; i += 4 * SK_W) {
        a0 = sk_max(sk_abs(sk_load(x, 0, i)), a0);
        a1 = sk_max(sk_abs(sk_load(x, 0, i + SK_W)), a1);
        a2 = sk_max(sk_abs(sk_load(x, 0, i + 2 * SK_W)), a2);
        a3 = sk_max(sk_abs(sk_load(x, 0, i + 3 * SK_W)), a3);
    }
    for (; i + SK_W <= n; i += SK_W) a0 = sk_max(sk_abs(sk_load(x, 0, i)), a0);
    float m = sk_hmax(sk_max(sk_max(a0, a1), sk_max(a2, a3)));
    for (; i < n; i++) m = nvfp4_core_amax_step(m, x[i], 0);
    return m;
}

SK_FN static float SK_NAME(amax_bf16)(const uint16_t *x, size_t n)
{
    sk_vf a0 = sk_zero(), a1 = a0;
    size_t i = 0;
    for (; i + 2 * SK_W <= n; i += 2 * SK_W) {
        a0 = sk_max(sk_abs(sk_load(x, 1, i)), a0);
        a1 = sk_max(sk_abs(sk_load(x, 1, i + SK_W)), a1);
    }
    for (; i + SK_W <= n; i += SK_W) a0 = sk_max(sk_abs(sk_load(x, 1, i)), a0);
    float m = sk_hmax(sk_max(a0, a1));
    for (; i < n; i++) m = nvfp4_core_amax_step(m, nvfp4_core_bf16_decode(x[i]), 0);
    return m;
}

/* ---- rowwise ------------------------------------------------------------------- */

SK_FN static void SK_NAME(row_scales)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, uint8_t *scale)
{
    for (size_t b0 = 0; b0 < nb; b0 += SK_W) {
        size_t n = nb - b0 < SK_W ? nb - b0 : SK_W;
        sk_vf a[SK_W];
        SIMD_UNROLL /* a[] in registers (not unrolled, GCC keeps it and sk_hmax_blocks in memory) */
        for (size_t i = 0; i < SK_W; i++) {
            a[i] = i < n ? sk_absnn(sk_load(x, bf16, 16 * (b0 + i))) : sk_zero();
            SIMD_UNROLL
            for (unsigned p = 1; p < SK_PARTS; p++)
                if (i < n) a[i] = sk_max(sk_absnn(sk_load(x, bf16, 16 * (b0 + i) + SK_W * p)), a[i]);
        }
        sk_store_bytes(sk_te_scale(k, sk_hmax_blocks(a)), n, scale + b0);
    }
}

/* 16x16 tiles: the block amaxes over the 16 rows come from the leaf
 * (integer maxima of the |x| patterns, redone with vmaxps where a NaN
 * shows); one instantiation per input type. */
SK_FN static inline __attribute__((always_inline)) void SK_NAME(tile_scales_as)(const nvfp4_simd_te_consts *k,
                                                                               const void *x, const int bf16,
                                                                               size_t stride, size_t nb, uint8_t *scale)
{
    for (size_t b0 = 0; b0 < nb; b0 += SK_W) {
        size_t n = nb - b0 < SK_W ? nb - b0 : SK_W;
        sk_vf a[SK_W];
        sk_tile_group_amax(x, bf16, stride, b0, n, a);
        sk_store_bytes(sk_te_scale(k, sk_hmax_blocks(a)), n, scale + b0);
    }
}

SK_FN static void SK_NAME(tile_scales)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t stride,
                                       size_t nb, uint8_t *scale)
{
    if (bf16) SK_NAME(tile_scales_as)(k, x, 1, stride, nb, scale);
    else SK_NAME(tile_scales_as)(k, x, 0, stride, nb, scale);
}

/*
 * Rows in chunks of SK_ROW_CHUNK blocks, in phases: first every scale byte
 * and encode multiplier of the chunk (row_fused; row_encode only the
 * multipliers of the given bytes), then the chunk's SR bytes, then its
 * codes, reloading the blocks from L1. One pass per SK_W blocks would put
 * the whole chain (loads, amax, scale, division, codes) in one iteration,
 * too long for the out-of-order window to overlap with the next; split,
 * the iterations of each phase are independent, and the Philox calls, long
 * dependency chains, overlap when nothing else sits between them (16x16 RN
 * +19% on AVX2 when split; docs/performance.md, "Measured design choices").
 *
 * Groups of SK_W blocks without NaN take the codes without the NaN mask: y
 * = x * inv is NaN only for a NaN x, as inv is positive and finite
 * (1/(e4m3 * s_dec) with s_dec = 1/s_enc and s_enc in [2688/FLT_MAX,
 * FLT_MAX]: the largest d is 448 * FLT_MAX/2688 < FLT_MAX).
 */

/* The random bytes of blocks c0 .. c1-1 of the row, block b's 16 in the
 * group of SK_W at rb + 16 (b - c0) (sk_sr_block within it). */
SK_FN static inline __attribute__((always_inline)) void SK_NAME(row_sr_chunk)(const nvfp4_simd_sr *sr, uint64_t block0,
                                                                             size_t c0, size_t c1, uint8_t *rb)
{
    for (size_t b0 = c0; b0 < c1; b0 += SK_W) sk_sr_blocks(sr, block0 + b0, rb + 16 * (b0 - c0));
}

SK_FN static inline __attribute__((always_inline)) void SK_NAME(row_encode_as)(const nvfp4_simd_te_consts *k,
                                                                              const void *x, const int bf16, size_t nb,
                                                                              const uint8_t *scale,
                                                                              const nvfp4_simd_sr *sr, const int use_sr,
                                                                              uint64_t block0, uint8_t *out)
{
    _Alignas(64) uint8_t rb[16 * SK_ROW_CHUNK];
    _Alignas(64) float inv[SK_ROW_CHUNK];
    for (size_t c0 = 0; c0 < nb; c0 += SK_ROW_CHUNK) {
        size_t c1 = nb - c0 < SK_ROW_CHUNK ? nb : c0 + SK_ROW_CHUNK;
        for (size_t b0 = c0; b0 < c1; b0 += SK_W) {
            size_t n = c1 - b0 < SK_W ? c1 - b0 : SK_W;
            sk_store_f(inv + (b0 - c0), sk_te_inv(k, sk_load_bytes(scale + b0, n)));
        }
        if (use_sr) SK_NAME(row_sr_chunk)(sr, block0, c0, c1, rb);
        for (size_t b0 = c0; b0 < c1; b0 += SK_W) {
            size_t n = c1 - b0 < SK_W ? c1 - b0 : SK_W;
            sk_row_group_codes(x, bf16, b0, n, inv + (b0 - c0), rb + 16 * (b0 - c0), use_sr,
                               sk_row_group_nan(x, bf16, b0, n), out);
        }
    }
}

SK_FN static inline __attribute__((always_inline)) void SK_NAME(row_fused_as)(const nvfp4_simd_te_consts *k,
                                                                             const void *x, const int bf16, size_t nb,
                                                                             const nvfp4_simd_sr *sr, const int use_sr,
                                                                             uint64_t block0, uint8_t *out,
                                                                             uint8_t *scale)
{
    _Alignas(64) uint8_t rb[16 * SK_ROW_CHUNK];
    _Alignas(64) float inv[SK_ROW_CHUNK];
    int nan[SK_ROW_CHUNK / SK_W];
    for (size_t c0 = 0; c0 < nb; c0 += SK_ROW_CHUNK) {
        size_t c1 = nb - c0 < SK_ROW_CHUNK ? nb : c0 + SK_ROW_CHUNK;
        for (size_t b0 = c0; b0 < c1; b0 += SK_W)
            nan[(b0 - c0) / SK_W] =
                sk_row_group_scales(k, x, bf16, b0, c1 - b0 < SK_W ? c1 - b0 : SK_W, scale, inv + (b0 - c0));
        if (use_sr) SK_NAME(row_sr_chunk)(sr, block0, c0, c1, rb);
        for (size_t b0 = c0; b0 < c1; b0 += SK_W) {
            size_t n = c1 - b0 < SK_W ? c1 - b0 : SK_W;
            sk_row_group_codes(x, bf16, b0, n, inv + (b0 - c0), rb + 16 * (b0 - c0), use_sr, nan[(b0 - c0) / SK_W],
                               out);
        }
    }
}

SK_FN static void SK_NAME(row_encode)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb,
                                      const uint8_t *scale, const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out)
{
    if (bf16) {
        if (sr) SK_NAME(row_encode_as)(k, x, 1, nb, scale, sr, 1, block0, out);
        else SK_NAME(row_encode_as)(k, x, 1, nb, scale, NULL, 0, block0, out);
    } else {
        if (sr) SK_NAME(row_encode_as)(k, x, 0, nb, scale, sr, 1, block0, out);
        else SK_NAME(row_encode_as)(k, x, 0, nb, scale, NULL, 0, block0, out);
    }
}

/* One function per (input type, rounding): constant flags drop the
 * per-block branches, and separate functions (not one dispatcher with all
 * four inlined) keep one instantiation's code layout from moving another's
 * (AVX2 f32 RN lost 2% when the bf16 code changed). */
#define SK_ROW_FUSED_FN(suffix, bf16, use_sr)                                                                  \
    SK_FN static void SK_NAME(row_fused_##suffix)(const nvfp4_simd_te_consts *k, const void *x, size_t nb,      \
                                                  const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out,       \
                                                  uint8_t *scale)                                               \
    {                                                                                                          \
        SK_NAME(row_fused_as)(k, x, bf16, nb, sr, use_sr, block0, out, scale);                                  \
    }
SK_ROW_FUSED_FN(f32_rn, 0, 0)
SK_ROW_FUSED_FN(f32_sr, 0, 1)
SK_ROW_FUSED_FN(bf16_rn, 1, 0)
SK_ROW_FUSED_FN(bf16_sr, 1, 1)
#undef SK_ROW_FUSED_FN

SK_FN static void SK_NAME(row_fused)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb,
                                     const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out, uint8_t *scale)
{
    if (bf16) {
        if (sr) SK_NAME(row_fused_bf16_sr)(k, x, nb, sr, block0, out, scale);
        else SK_NAME(row_fused_bf16_rn)(k, x, nb, NULL, block0, out, scale);
    } else {
        if (sr) SK_NAME(row_fused_f32_sr)(k, x, nb, sr, block0, out, scale);
        else SK_NAME(row_fused_f32_rn)(k, x, nb, NULL, block0, out, scale);
    }
}

/* ---- columnwise ------------------------------------------------------------------ */

/* Output rows s0..s1-1 (columns of the input), groups g0..g1-1, from a
 * strip's tiles: per column of tiles, the leaf's transposes make its SK_W
 * output lines (8 groups x 8 bytes each) and their scale bytes. Whole
 * aligned 64-byte lines go out as streaming stores; other strips (fewer
 * than 8 groups, unaligned rows) through the stage and
 * nvfp4_simd_col_stage_flush. */
SK_FN static void SK_NAME(col_tiles_flush)(const nvfp4_simd_col_job *j, const sk_col_tiles *tb, size_t s0, size_t s1,
                                           size_t g0, size_t g1, nvfp4_simd_col_stage *st)
{
    size_t nbr = j->rows / 16;
    int lines = nvfp4_simd_col_whole_lines(j, g0, g1), stream = lines && nvfp4_simd_col_streams(j);
    for (size_t c0 = s0; c0 < s1; c0 += SK_W) {
        sk_line l[SK_W];
        _Alignas(64) uint8_t sc[8 * SK_W];
        sk_tile_lines(tb, (c0 - s0) / SK_W, l, sc);
        SIMD_UNROLL
        for (size_t cl = 0; cl < SK_W; cl++) {
            size_t c = c0 + cl;
            sk_store_line(lines ? (void *)(j->data + c * (j->rows / 2) + 8 * g0) : (void *)st->data[c - s0], l[cl],
                          stream);
            /* 8 bytes (the stage's scale rows are 8 wide; lines have 8 groups) */
            memcpy(lines ? j->scale + c * nbr + g0 : st->scale[c - s0], sc + 8 * cl, 8);
        }
    }
    if (stream) _mm_sfence();
    else if (!lines) nvfp4_simd_col_stage_flush(j, st, s0, s1, g0, g1);
}

/* Strips of NVFP4_SIMD_STAGE_COLS input columns outermost: inside a strip
 * each group reads 16 rows of a few hundred bytes contiguously
 * (prefetcher-friendly); the strip's groups (at most 8, g0 % 8 == 0) fill
 * one 64-byte line of each output row, which the leaf's flush writes out
 * whole. The tiles of a strip (16 rows x SK_W columns) are the leaf's:
 * how a tile's loads, transform, scale and codes are ordered was measured
 * per ISA (docs/performance.md, "Measured design choices"). Columns past
 * the last whole tile take the scalar code. */
SK_FN static inline __attribute__((always_inline)) void SK_NAME(col_quant_as)(const nvfp4_simd_col_job *j,
                                                                             const int bf16, const int rht,
                                                                             const int use_sr, size_t g0, size_t g1)
{
    size_t ncolw = j->cols / SK_W * SK_W;
    sk_col_tiles tb;
    nvfp4_simd_col_stage st;
    for (size_t s0 = 0; s0 < ncolw; s0 += NVFP4_SIMD_STAGE_COLS) {
        size_t s1 = s0 + NVFP4_SIMD_STAGE_COLS < ncolw ? s0 + NVFP4_SIMD_STAGE_COLS : ncolw;
        sk_col_strip(j, bf16, rht, use_sr, g0, g1, s0, s1, &tb);
        SK_NAME(col_tiles_flush)(j, &tb, s0, s1, g0, g1, &st);
    }
    for (size_t g = g0; g < g1; g++)
        for (size_t c = ncolw; c < j->cols; c++) nvfp4_simd_scalar_col_block(j, g, c, -1.0f);
}

/* One function per input type, RHT and rounding, chosen from a table:
 * constant flags drop the per-tile branches, and each instantiation keeps
 * its tiles inlined. */
#define SK_COL_QUANT_FN(suffix, bf16, rht, use_sr)                                                             \
    SK_FN static void SK_NAME(col_quant_##suffix)(const nvfp4_simd_col_job *j, size_t g0, size_t g1)           \
    {                                                                                                          \
        SK_NAME(col_quant_as)(j, bf16, rht, use_sr, g0, g1);                                                    \
    }
SK_COL_QUANT_FN(f32_rn, 0, 0, 0)
SK_COL_QUANT_FN(f32_sr, 0, 0, 1)
SK_COL_QUANT_FN(bf16_rn, 1, 0, 0)
SK_COL_QUANT_FN(bf16_sr, 1, 0, 1)
SK_COL_QUANT_FN(f32_rht_rn, 0, 1, 0)
SK_COL_QUANT_FN(f32_rht_sr, 0, 1, 1)
SK_COL_QUANT_FN(bf16_rht_rn, 1, 1, 0)
SK_COL_QUANT_FN(bf16_rht_sr, 1, 1, 1)
#undef SK_COL_QUANT_FN

SK_FN static void SK_NAME(col_quant)(const nvfp4_simd_col_job *job, size_t g0, size_t g1)
{
    nvfp4_simd_col_job jw;
    const nvfp4_simd_col_job *j = sk_col_job(job, &jw);
    static void (*const fns[2][2][2])(const nvfp4_simd_col_job *, size_t, size_t) = {
        {{SK_NAME(col_quant_f32_rn), SK_NAME(col_quant_f32_sr)},
         {SK_NAME(col_quant_f32_rht_rn), SK_NAME(col_quant_f32_rht_sr)}},
        {{SK_NAME(col_quant_bf16_rn), SK_NAME(col_quant_bf16_sr)},
         {SK_NAME(col_quant_bf16_rht_rn), SK_NAME(col_quant_bf16_rht_sr)}}};
    fns[j->bf16 != 0][j->rht != 0][j->sr != NULL](j, g0, g1);
}

/* ---- RHT amax and transform ------------------------------------------------- */

/* The post-RHT amax of row groups [g0, g1): a tile is transformed exactly
 * (sk_tile_amax) only if sk_tile_amax_bound does not put all its lanes
 * below lb, the largest exact tile maximum so far (a lower bound of the
 * result): such a tile cannot hold the maximum. After the first few tiles
 * almost all are skipped. lb is only raised by tiles without a NaN lane,
 * so it stays a true lower bound. */
SK_FN static float SK_NAME(rht_amax)(const nvfp4_simd_col_job *job, size_t g0, size_t g1)
{
    nvfp4_simd_col_job jw;
    const nvfp4_simd_col_job *j = sk_rht_job(job, &jw);
    size_t ncolw = j->cols / SK_W * SK_W;
    sk_vf am = sk_zero();
    float m = 0.0f, lb = 0.0f;
    for (size_t g = g0; g < g1; g++) {
        for (size_t c0 = 0; c0 < ncolw; c0 += SK_W) {
            if (lb > 0.0f && sk_all_lt(sk_tile_amax_bound(j, g, c0), sk_set1(lb))) continue;
            sk_vf t = sk_tile_amax(j, g, c0);
            am = sk_max(t, am);
            if (sk_all_ordered(t)) lb = nvfp4_core_fmaxf(lb, sk_hmax(t));
        }
        for (size_t c = ncolw; c < j->cols; c++) {
            float y[16];
            nvfp4_simd_col_group(j, g, c, y);
            for (int i = 0; i < 16; i++) m = nvfp4_core_amax_step(m, y[i], 0);
        }
    }
    /* RHT outputs of finite groups are never NaN; NaN lanes (from Inf/NaN
     * inputs) were ignored by vmaxps's operand order above */
    return nvfp4_core_fmaxf(m, sk_hmax(am));
}

SK_FN static float SK_NAME(rht_apply)(const nvfp4_simd_col_job *job, size_t g0, size_t g1, void *out)
{
    nvfp4_simd_col_job jw;
    const nvfp4_simd_col_job *j = sk_rht_job(job, &jw);
    size_t ncolw = j->cols / SK_W * SK_W;
    sk_vf am = sk_zero();
    float m = 0.0f;
    for (size_t g = g0; g < g1; g++) {
        for (size_t c0 = 0; c0 < ncolw; c0 += SK_W) {
            sk_vf v[16];
            sk_col_load_group(j, j->bf16, g, c0, v);
            SIMD_UNROLL
            for (size_t i = 0; i < 16; i++) {
                am = sk_max(sk_abs(v[i]), am);
                sk_store_rht_row(j, out, (16 * g + i) * j->cols + c0, v[i]);
            }
        }
        for (size_t c = ncolw; c < j->cols; c++) {
            float y[16];
            nvfp4_simd_col_group(j, g, c, y);
            for (size_t i = 0; i < 16; i++) {
                size_t e = (16 * g + i) * j->cols + c;
                m = nvfp4_core_amax_step(m, y[i], 0);
                if (j->rht_round_bf16) ((uint16_t *)out)[e] = nvfp4_core_bf16_encode(y[i]);
                else ((float *)out)[e] = y[i];
            }
        }
    }
    return nvfp4_core_fmaxf(m, sk_hmax(am));
}

/* ---- dequantize ------------------------------------------------------------ */

SK_FN static void SK_NAME(row_dequant)(const uint8_t *data, const uint8_t *scale, size_t nb, float amax, int stream,
                                       float *out)
{
    int aligned = stream && ((uintptr_t)out & (4u * SK_W - 1u)) == 0;
    for (size_t b0 = 0; b0 < nb; b0 += SK_W) {
        size_t n = nb - b0 < SK_W ? nb - b0 : SK_W;
        /* nvfp4_core_dequant_scale, DEQ_TE: ((float)s * amax) * fl(1/2688) */
        sk_vf d = sk_mul(sk_mul(sk_e4m3_decode(sk_load_bytes(scale + b0, n)), sk_set1(amax)),
                         sk_set1(NVFP4_CORE_INV2688));
        _Alignas(64) float ds[SK_W];
        sk_store_f(ds, d);
        for (size_t i = 0; i < n; i++) {
            sk_vf f = sk_set1(ds[i]);
            for (unsigned p = 0; p < SK_PARTS; p++) {
                sk_vf r = sk_mul(sk_e2m1_decode_part(data + 8 * (b0 + i) + SK_W / 2 * p), f);
                /* write-only output: streaming stores skip the read-for-ownership */
                sk_store_out(out + 16 * (b0 + i) + SK_W * p, r, aligned);
            }
        }
    }
    if (aligned) _mm_sfence();
}

/* ---- MXFP4 1x32 ------------------------------------------------------------ */

SK_FN static void SK_NAME(mx_row_scales)(int rule, const float *x, size_t nb, uint8_t *scale)
{
    for (size_t b0 = 0; b0 < nb; b0 += SK_W) {
        size_t n = nb - b0 < SK_W ? nb - b0 : SK_W;
        sk_vf a[SK_W];
        unsigned nan = 0;
        SIMD_UNROLL /* a[] in registers */
        for (size_t i = 0; i < SK_W; i++) {
            sk_vf m = sk_zero();
            sk_nanacc un = sk_nan_none();
            if (i < n)
                for (unsigned q = 0; q < 2 * SK_PARTS; q++) {
                    sk_vf v = sk_load(x, 0, 32 * (b0 + i) + SK_W * q);
                    m = sk_max(sk_abs(v), m);
                    un = sk_nan_or(un, v);
                }
            a[i] = m;
            if (sk_nan_any(un)) nan |= 1u << i; /* one test per block */
        }
        sk_store_bytes(sk_mx_scale(rule, sk_hmax_blocks(a)), n, scale + b0);
        if (rule == NVFP4_SIMD_MX_FLOOR) /* torch.amax: a NaN element makes the block amax NaN -> 0xFF */
            for (size_t i = 0; i < n; i++)
                if ((nan >> i) & 1u) scale[b0 + i] = 0xFF;
    }
}

/* SR: block b takes Philox(offset, block0 + b) for elements 0..15 and
 * Philox(offset + 1, ...) for 16..31 (simd_kernels.h). */
SK_FN static void SK_NAME(mx_row_encode)(int rule, const float *x, size_t nb, const uint8_t *scale,
                                         const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out)
{
    _Alignas(64) uint8_t rb[2][16 * SK_W];
    for (size_t b0 = 0; b0 < nb; b0 += SK_W) {
        size_t n = nb - b0 < SK_W ? nb - b0 : SK_W;
        _Alignas(64) float rc[SK_W];
        sk_store_f(rc, sk_mx_recip(rule, sk_load_bytes(scale + b0, n)));
        if (sr)
            for (unsigned h = 0; h < 2; h++) {
                nvfp4_simd_sr half = {sr->seed, sr->offset + h};
                sk_sr_blocks(&half, block0 + b0, rb[h]);
            }
        for (size_t i = 0; i < n; i++) {
            sk_vf f = sk_set1(rc[i]);
            for (unsigned h = 0; h < 2; h++) {
                sk_vf y[SK_PARTS];
                sk_vi c[SK_PARTS];
                SIMD_UNROLL /* y[], c[] in registers */
                for (unsigned p = 0; p < SK_PARTS; p++) y[p] = sk_mul(sk_load(x, 0, 32 * (b0 + i) + 16 * h + SK_W * p), f);
                if (sr)
                    SIMD_UNROLL
                    for (unsigned p = 0; p < SK_PARTS; p++)
                        c[p] = sk_e2m1_sr(y[p], sk_rand(sk_sr_block(rb[h], i) + SK_W * p));
                else
                    SIMD_UNROLL
                    for (unsigned p = 0; p < SK_PARTS; p++) c[p] = sk_e2m1_rn(y[p]);
                SIMD_UNROLL
                for (unsigned p = 0; p < SK_PARTS; p++) c[p] = sk_mx_fix_nan(rule, y[p], c[p]);
                sk_pack_block(c, out + 16 * (b0 + i) + 8 * h);
            }
        }
    }
}

#undef SK_PARTS
