/*
 * simd_te_lanes.h - internal: the lane-wise codecs, Philox rounds, MXFP4
 * scale rules and RHT paths of the x86 `te` kernels, written once over
 * each ISA's vector operations. Not a header to include anywhere else:
 * simd_avx2_ops.h (8 lanes; for simd_avx2.c and simd_avx2_generic.c) and
 * simd_avx512.c (16 lanes) include it once, after defining the operations
 * below, and before their own leaves, which call these functions
 * (simd_te_skel.h, included at the end of the ISA file, holds the
 * kernels' loops). The operations are macros or inline functions over one
 * intrinsic each, so every function here compiles to the instructions
 * each file wrote out before (xxHash writes its accumulate step once over
 * per-ISA intrinsics the same way: Cyan4973/xxHash, xxhash.h v0.8.2,
 * XXH3_accumulate_512_{sse2,avx2,avx512}).
 *
 * Lane-wise re-expression of the `te` chain (src/core/recipe.h) and of the
 * codecs in src/core/ (each function names the scalar function it matches):
 *   - E2M1 RN as one IEEE addition (nvfp4_core_e2m1_rn_mag): the FPU's RNE
 *     of min(|y|, 6) + C with C = 2^22, 2^23 or 2^24 by binade, whose ulp
 *     is E2M1's step there (see sk_e2m1_rn_mag);
 *   - E2M1 SR: t = trunc(|y| * 2^k) with 2^k = 256/step, so t>>8 is the
 *     round-toward-zero position and t & 255 = floor(256*frac)
 *     (nvfp4_core_e2m1_sr_mag, exact since the scalings are by powers of two);
 *   - E4M3 RN satfinite: integer round-to-nearest-even on the fp32 pattern
 *     for normals, the FPU's RNE of |v|*2^9 for subnormals
 *     (nvfp4_core_e4m3_encode);
 *   - Philox4x32-10 over SK_W counters at once (nvfp4_core_philox4x32_10):
 *     mulhi from vpmuludq on even and odd lanes;
 *   - RHT-16: exact butterflies on s[i]*x/4 chosen per 16x16 tile by the
 *     exponent spread of each column's nonzero inputs (all need biased
 *     exponents >= 3): one fp32 butterfly for bf16 inputs within 13 binades
 *     (sk_rht_bf16_exact), int32 for bf16 inputs within 19
 *     (sk_rht_bf16_int), a hi/lo split within 17 (33 for bf16 inputs;
 *     sk_rht_split, sk_rht_split_int with its hi part in int32), binary64
 *     within 25 (sk_rht_f64), a binary64 split with round-to-odd within 75
 *     (AVX-512's rht16_split_f64), the scalar exact accumulator for
 *     anything else (Inf, NaN, tiny inputs; sk_rht_wide);
 *   - UE8M0 floor / rceil for MXFP4 (nvfp4_core_ue8m0_floor_scale,
 *     nvfp4_core_ue8m0_cvt).
 *
 * Operations (sk_vf / sk_vi: SK_W fp32 / int32 lanes; sk_mask: a lane
 * mask, SK_ALL its all-set value as returned by sk_mbits):
 *   sk_zero sk_set1 sk_add sk_sub sk_mul sk_div sk_min sk_max sk_abs
 *   sk_add_rne(a, b)           a + b rounded to nearest even
 *   sk_zero_i sk_set1_i sk_as_i sk_as_f sk_and_i sk_or_i sk_add_i sk_sub_i
 *   sk_srli sk_slli sk_min_u sk_max_u sk_max_s sk_iota
 *   sk_cvt_i(v)   fp32 -> int32, RNE   sk_cvt_rne_i(v)   the same, e4m3's
 *   sk_cvtt_i(v)  fp32 -> int32, toward zero
 *   sk_cvt_f(v)   int32 -> fp32 (exact uses)   sk_cvt_rne_f(v)   rounding uses
 *   sk_perm_i(tab, idx)        tab[idx & (SK_W - 1)]; SK_EXP_TABLE(t127, t128,
 *                              t129) a table indexed by a biased exponent >= 127
 *   sk_gt_i sk_lt_i sk_eq_i sk_lt_u sk_lt_f sk_isnan sk_test_i(a, bits)   lane masks
 *   sk_mand sk_mbits sk_blend_i(m, a, b) sk_blend_f(m, a, b)   (b where m)
 *   sk_add_where(v, m)         v + 1 where m
 *   sk_xor3(a, b, c)  sk_mulhilo(a, m, hi, lo)   Philox's pieces
 *   sk_e2m1_finish(u, au, mag) the sign and NaN override of an E2M1 code
 *   sk_rht_scaler(bexp)  sk_rht_signed_scaled(j, i, x, up)   s_i x 2^(bexp-127)
 *   sk_rne_frac(s, h)          s - RNE(s), h = sk_cvt_i(s)
 *   sk_sr_bytes_aos(w, buf)    Philox words -> 16 bytes per block
 *   sk_store_f  sk_load_f  sk_load_u32   aligned stores and loads
 *   sk_vd sk_vh sk_add_d sk_sub_d   binary64 (and fp32) vectors of half the lanes
 *   sk_to_pd(v, half)  sk_pd_round(u)  sk_join_halves(lo, hi)   between them
 *   SK_RHT_FP32_PATHS  SK_RHT_SPLIT_F64  SK_RHT_WIDE_INLINE   the ISA's RHT path set
 */
#ifndef SK_W
#error "simd_te_lanes.h is included by an ISA file after its vector operations"
#endif

/* ---- codecs ---------------------------------------------------------------- */

/* nvfp4_core_e4m3_encode(v, satfinite) for v >= 0, not NaN (Inf allowed):
 * integer round-to-nearest-even on the fp32 pattern for normals, the
 * FPU's RNE of v * 2^9 for subnormals. */
SK_FN static inline sk_vi sk_e4m3_encode(sk_vf v)
{
    sk_vi u = sk_as_i(v);
    sk_vi lsb = sk_and_i(sk_srli(u, 20), sk_set1_i(1));
    sk_vi n = sk_srli(sk_add_i(sk_add_i(u, sk_set1_i(0x7FFFF)), lsb), 20);
    n = sk_sub_i(n, sk_set1_i(960)); /* (biased exponent - 120) << 3 | mantissa */
    sk_vi s = sk_cvt_rne_i(sk_mul(v, sk_set1(512.0f)));
    return sk_min_u(sk_blend_i(sk_lt_f(v, sk_set1(0x1p-6f)), n, s), sk_set1_i(0x7E));
}

/* nvfp4_core_e4m3_decode for codes 0..0x7E. */
SK_FN static inline sk_vf sk_e4m3_decode(sk_vi code)
{
    sk_vf normal = sk_as_f(sk_slli(sk_add_i(code, sk_set1_i(960)), 20));
    sk_vf sub = sk_mul(sk_cvt_f(code), sk_set1(0x1p-9f));
    return sk_blend_f(sk_lt_i(code, sk_set1_i(8)), normal, sub);
}

/* te block scale bytes from block amaxes (nvfp4_core_block_scale, TE_MUL). */
SK_FN static inline sk_vi sk_te_scale(const nvfp4_simd_te_consts *k, sk_vf bamax)
{
    return sk_e4m3_encode(sk_mul(bamax, sk_set1(k->m)));
}

/* te encode multiplier from scale bytes (nvfp4_core_block_prepare, TE_RECIP). */
SK_FN static inline sk_vf sk_te_inv(const nvfp4_simd_te_consts *k, sk_vi sb)
{
    sk_vf d = sk_mul(sk_e4m3_decode(sb), sk_set1(k->s_dec));
    return sk_min(sk_div(sk_set1(1.0f), d), sk_set1(FLT_MAX)); /* 1/0 = Inf -> FLT_MAX; no NaN possible */
}

/* min(|y|, 6) as the unsigned minimum of the bit patterns: the float order
 * for |y| <= Inf, and a NaN's pattern is above 6's, so NaN also gives 6
 * (as vminps with 6 second); vpminud issues on more pipes than vminps,
 * which shares the FP adders with the magnitude's addition. */
SK_FN static inline sk_vf sk_abs_min6(sk_vf y)
{
    return sk_as_f(sk_min_u(sk_and_i(sk_as_i(y), sk_set1_i(0x7FFFFFFF)), sk_set1_i(0x40C00000)));
}

/*
 * E2M1 RN magnitude (nvfp4_core_e2m1_rn_mag) in one FPU rounding of a =
 * min(|y|, 6) (6 for NaN: 7, NaN's magnitude; Inf and anything past 6
 * saturate to 7). E2M1's grid is step 0.5 below 2, 1 in [2, 4), 2 in
 * [4, 6]; C = 2^22, 2^23, 2^24 by a's binade (biased exponent <= 127, 128,
 * 129) puts a + C in a binade whose ulp is that step (a < C, so C <= a + C
 * < 2C), so fl(a + C) = C + a rounded to the step with ties to even (ties
 * land on even multiples of the step: exactly the even E2M1 codes), and
 * bits(fl(a + C)) - bits(C) is the multiple k (0..4, 2..4, 2..3). The code
 * is k, k + 2, k + 4: one subtraction of X = bits(C) - 0, - 2, - 4. C and X
 * come from tables indexed by the exponent (max(E, 127) folds every smaller
 * binade, subnormals and zero included, into the first). Checked against
 * nvfp4_core_e2m1_encode for all 2^32 fp32 patterns while written;
 * tests/check_simd.c's e2m1_grid test keeps every threshold and its
 * neighbours covered.
 */
SK_FN static inline sk_vi sk_e2m1_rn_mag(sk_vf y)
{
    const sk_vi tc = SK_EXP_TABLE(0x4A800000, 0x4B000000, 0x4B800000);
    const sk_vi tx = SK_EXP_TABLE(0x4A800000, 0x4B000000 - 2, 0x4B800000 - 4);
    sk_vf a = sk_abs_min6(y);
    sk_vi e = sk_max_u(sk_srli(sk_as_i(a), 23), sk_set1_i(127));
    sk_vf sum = sk_add_rne(a, sk_as_f(sk_perm_i(tc, e)));
    return sk_sub_i(sk_as_i(sum), sk_perm_i(tx, e));
}

/* E2M1 SR magnitude (nvfp4_core_e2m1_sr_mag; r: one random byte per lane).
 * a = min(|y|, 6) (NaN -> 6), then with 2^k = 256/step (512, 256, 128 for
 * a's binade <= 127, 128, 129) t = trunc(a * 2^k) is exact, t >> 8 the
 * round-toward-zero position within the binade and t & 255 =
 * floor(256 * frac); the code is that position plus the binade's first
 * code (0, 2, 4) plus one iff (t & 255) + r >= 256, i.e. ((t + r) >> 8) +
 * first. a = 6 gives t = 768: 3 + 4 = 7 whatever r, so clamping to 6 is
 * the saturation (and NaN's 7). */
SK_FN static inline sk_vi sk_e2m1_sr_mag(sk_vf y, sk_vi r)
{
    const sk_vi tm = SK_EXP_TABLE(0x44000000, 0x43800000, 0x43000000); /* 512, 256, 128 */
    const sk_vi tf = SK_EXP_TABLE(0, 2, 4);
    sk_vf a = sk_abs_min6(y);
    sk_vi e = sk_max_u(sk_srli(sk_as_i(a), 23), sk_set1_i(127));
    sk_vi t = sk_cvtt_i(sk_mul(a, sk_as_f(sk_perm_i(tm, e))));
    return sk_add_i(sk_srli(sk_add_i(t, r), 8), sk_perm_i(tf, e));
}

/* nvfp4_core_e2m1_encode(y, RN / SR with random byte r per lane). */
SK_FN static inline sk_vi sk_e2m1_rn(sk_vf y)
{
    sk_vi u = sk_as_i(y);
    return sk_e2m1_finish(u, sk_and_i(u, sk_set1_i(0x7FFFFFFF)), sk_e2m1_rn_mag(y));
}

SK_FN static inline sk_vi sk_e2m1_sr(sk_vf y, sk_vi r)
{
    sk_vi u = sk_as_i(y);
    return sk_e2m1_finish(u, sk_and_i(u, sk_set1_i(0x7FFFFFFF)), sk_e2m1_sr_mag(y, r));
}

/* nvfp4_core_round_bf16 for non-NaN v (Inf passes through unchanged). */
SK_FN static inline sk_vf sk_bf16_round(sk_vf v)
{
    sk_vi u = sk_as_i(v);
    sk_vi lsb = sk_and_i(sk_srli(u, 16), sk_set1_i(1));
    u = sk_add_i(sk_add_i(u, sk_set1_i(0x7FFF)), lsb);
    return sk_as_f(sk_and_i(u, sk_set1_i(0xFFFF0000u)));
}

/* ---- MXFP4 scales ------------------------------------------------------------ */

/* UE8M0 block scales from block amaxes (not NaN; Inf possible): FLOOR =
 * nvfp4_core_ue8m0_floor_scale(bamax, 2) (exponent bits, Inf as 255, minus
 * 2, at least 0); RCEIL = nvfp4_core_ue8m0_cvt(bamax * fl(1/6), round up),
 * whose bf16 round-up step is reproduced on the bit pattern. */
SK_FN static inline sk_vi sk_mx_scale(int rule, sk_vf bam)
{
    if (rule == NVFP4_SIMD_MX_FLOOR)
        return sk_max_s(sk_sub_i(sk_srli(sk_as_i(bam), 23), sk_set1_i(2)), sk_zero_i());
    sk_vi au = sk_as_i(sk_mul(bam, sk_set1(NVFP4_CORE_INV6)));
    sk_vi b = sk_add_where(sk_srli(au, 16), sk_test_i(au, 0xFFFF));
    sk_mask bump = sk_mand(sk_mand(sk_test_i(b, 0x7F), sk_gt_i(b, sk_set1_i(0x40))), sk_gt_i(sk_set1_i(0x7F80), b));
    sk_vi e = sk_blend_i(sk_test_i(au, 0x7FFFFF), sk_srli(au, 23), sk_add_where(sk_srli(b, 7), bump));
    return sk_min_u(e, sk_set1_i(0xFE));
}

/* 1 / nvfp4_core_pow2_scale(r, s): a power of two (exact reciprocal, so
 * x * it equals the reference's x / factor); code 0 is 2^-127, raised to
 * 2^-126 by FLOOR's lower clamp; 0xFF is NaN for RCEIL and +Inf for FLOOR
 * (torchao's fp32 scale, whose reciprocal +0 gives x * 0 = x / Inf: +-0 for
 * finite x, NaN for NaN and Inf). */
SK_FN static inline sk_vf sk_mx_recip(int rule, sk_vi sc)
{
    sk_vi bits = sk_blend_i(sk_eq_i(sc, sk_zero_i()), sk_slli(sc, 23),
                            sk_set1_i(rule == NVFP4_SIMD_MX_FLOOR ? 0x00800000 : 0x00400000));
    if (rule != NVFP4_SIMD_MX_FLOOR) bits = sk_blend_i(sk_eq_i(sc, sk_set1_i(0xFF)), bits, sk_set1_i(0x7FC00000));
    return sk_div(sk_set1(1.0f), sk_as_f(bits));
}

/* FLOOR's torchao special: a NaN y gives 0x3 instead of 0x7. */
SK_FN static inline sk_vi sk_mx_fix_nan(int rule, sk_vf y, sk_vi code)
{
    return rule == NVFP4_SIMD_MX_FLOOR ? sk_blend_i(sk_isnan(y), code, sk_set1_i(3)) : code;
}

/* ---- Philox4x32-10 over SK_W lanes --------------------------------------------- */

/* w[0..3] = Philox(ctr = {c0, c1, c2, c3}, key = seed) lane-wise (nvfp4_core_philox4x32_10). */
SK_FN static inline void sk_philox(sk_vi c0, sk_vi c1, sk_vi c2, sk_vi c3, uint64_t seed, sk_vi w[4])
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    const sk_vi m0 = sk_set1_i(NVFP4_PHILOX_M0), m1 = sk_set1_i(NVFP4_PHILOX_M1);
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k0 += NVFP4_PHILOX_W0;
            k1 += NVFP4_PHILOX_W1;
        }
        sk_vi hi0, lo0, hi1, lo1;
        sk_mulhilo(c0, m0, &hi0, &lo0);
        sk_mulhilo(c2, m1, &hi1, &lo1);
        sk_vi n0 = sk_xor3(hi1, c1, sk_set1_i(k0)), n2 = sk_xor3(hi0, c3, sk_set1_i(k1));
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

/* The SR words of SK_W blocks with linear indices given as lo/hi lanes. */
SK_FN static inline void sk_sr_words(const nvfp4_simd_sr *sr, sk_vi blo, sk_vi bhi, sk_vi w[4])
{
    sk_philox(sk_set1_i((uint32_t)sr->offset), sk_set1_i((uint32_t)(sr->offset >> 32)), blo, bhi, sr->seed, w);
}

/* The SR words of the columnwise blocks of group g, columns c0 .. c0+SK_W-1
 * (block (c0 + c) * rows/16 + g: simd_kernels.h). */
SK_FN static inline void sk_col_sr_words(const nvfp4_simd_col_job *j, size_t g, size_t c0, sk_vi w[4])
{
    _Alignas(64) uint32_t lo[SK_W], hi[SK_W];
    for (size_t c = 0; c < SK_W; c++) {
        uint64_t b = (c0 + c) * (j->rows / 16) + g;
        lo[c] = (uint32_t)b;
        hi[c] = (uint32_t)(b >> 32);
    }
    sk_sr_words(j->sr, sk_load_u32(lo), sk_load_u32(hi), w);
}

/* Blocks block0 .. block0+SK_W-1 (consecutive, the 64-bit carry handled). */
SK_FN static inline void sk_sr_words_seq(const nvfp4_simd_sr *sr, uint64_t block0, sk_vi w[4])
{
    sk_vi base = sk_set1_i((uint32_t)block0);
    sk_vi lo = sk_add_i(base, sk_iota());
    sk_sr_words(sr, lo, sk_add_where(sk_set1_i((uint32_t)(block0 >> 32)), sk_lt_u(lo, base)), w);
}

/* The SR bytes of blocks block0 .. block0+SK_W-1 (sk_sr_block finds block b's 16). */
SK_FN static inline void sk_sr_blocks(const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *buf)
{
    sk_vi w[4];
    sk_sr_words_seq(sr, block0, w);
    sk_sr_bytes_aos(w, buf);
}

/* ---- RHT-16 -------------------------------------------------------------------- */

/* The exponent range of a tile's columns (lanes): biased exponents of the
 * largest |x| and of the smallest nonzero |x| (255 when all are zero).
 * For non-negative floats integer order is float order. */
SK_FN static inline void sk_rht_exp_range(const sk_vf v[16], sk_vi *emax, sk_vi *emin)
{
    sk_vi mx = sk_zero_i(), mn = sk_set1_i(-1);
    const sk_vi absm = sk_set1_i(0x7FFFFFFF), one = sk_set1_i(1);
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) {
        sk_vi au = sk_and_i(sk_as_i(v[i]), absm);
        mx = sk_max_u(mx, au);
        mn = sk_min_u(mn, sk_sub_i(au, one)); /* zero wraps to the maximum */
    }
    *emax = sk_srli(mx, 23);
    /* all zero: mn + 1 wrapped to 0; make emin large so the spread is negative */
    *emin = sk_blend_i(sk_eq_i(mn, sk_set1_i(-1)), sk_srli(sk_add_i(mn, one), 23), sk_set1_i(255));
}

/* The lanes (sk_mbits) whose nonzero inputs have biased exponents E with
 * 3 <= E, Emax <= 250 and Emax - Emin <= spread: s_i x_i / 4 is then exact
 * in fp32 and normal (the limits: src/core/hadamard.h). */
SK_FN static inline int sk_rht_lanes_within(sk_vi emax, sk_vi emin, int spread)
{
    sk_mask small = sk_gt_i(sk_set1_i(NVFP4_CORE_RHT_EMAX_HIGH + 1), emax);
    sk_mask close = sk_gt_i(sk_set1_i(spread + 1), sk_sub_i(emax, emin));
    sk_mask big = sk_gt_i(emin, sk_set1_i(NVFP4_CORE_RHT_EMIN_LOW - 1));
    return sk_mbits(sk_mand(sk_mand(small, close), big));
}

/* sk_rht_split_int's extra condition: every lane's Emax >= 22 or 0 (all zero). */
SK_FN static inline int sk_rht_split_int_ok(sk_vi emax)
{
    sk_mask low = sk_mand(sk_gt_i(emax, sk_zero_i()), sk_gt_i(sk_set1_i(NVFP4_CORE_RHT_SPLIT_INT_EMAX_LOW), emax));
    return sk_mbits(low) == 0;
}

/* sk_rht_bf16_int's lanes: spread <= 19, Emin >= 10, Emax <= 250 (finite;
 * all-zero lanes: Emin 255, spread negative). */
SK_FN static inline int sk_rht_bf16_int_ok(sk_vi emax, sk_vi emin)
{
    sk_mask close = sk_gt_i(sk_set1_i(NVFP4_CORE_RHT_BF16_INT_SPREAD + 1), sk_sub_i(emax, emin));
    sk_mask big = sk_gt_i(emin, sk_set1_i(NVFP4_CORE_RHT_BF16_INT_EMIN_LOW - 1));
    sk_mask finite = sk_gt_i(sk_set1_i(NVFP4_CORE_RHT_EMAX_HIGH + 1), emax);
    return sk_mbits(sk_mand(sk_mand(close, big), finite)) == SK_ALL;
}

/* In-place butterflies v <- v H over 16 vectors (lanes independent), one
 * function per lane type. */
#define SK_FWHT16_FN(name, T, add, sub)                                                                        \
    SK_FN static inline __attribute__((always_inline)) void name(T v[16])                                      \
    {                                                                                                          \
        SIMD_UNROLL                                                                                            \
        for (unsigned h = 1; h < 16; h <<= 1)                                                                  \
            SIMD_UNROLL                                                                                        \
            for (unsigned q = 0; q < 16; q++) {                                                                \
                if (q & h) continue; /* q is the lower index of the pair (q, q + h) */                         \
                T a = v[q], b = v[q + h];                                                                      \
                v[q] = add(a, b);                                                                              \
                v[q + h] = sub(a, b);                                                                          \
            }                                                                                                  \
    }
SK_FWHT16_FN(sk_fwht16_f, sk_vf, sk_add, sk_sub)
SK_FWHT16_FN(sk_fwht16_i, sk_vi, sk_add_i, sk_sub_i)

/* The job with its RHT weights s_i / 4 (src/core/hadamard.h's sign mask)
 * in a local copy: a broadcast from memory per row instead of testing the
 * sign mask. */
SK_FN static inline const nvfp4_simd_col_job *sk_rht_job(const nvfp4_simd_col_job *job, nvfp4_simd_col_job *copy)
{
    if (!job->rht) return job;
    *copy = *job;
    for (unsigned i = 0; i < 16; i++) copy->rht_w[i] = ((job->rht_mask[0] >> i) & 1u) ? -0.25f : 0.25f;
    return copy;
}

/* The columnwise quantizer's copy of the job: RHT weights (if any) and the
 * te encode multiplier of every scale byte (nvfp4_simd_te_inv_table, the
 * reference's own values). */
SK_FN static inline const nvfp4_simd_col_job *sk_col_job(const nvfp4_simd_col_job *job, nvfp4_simd_col_job *copy)
{
    if (sk_rht_job(job, copy) != copy) *copy = *job;
    nvfp4_simd_te_inv_table(&job->k, copy->inv_tab);
    return copy;
}

/* u_i = s_i x_i / 4: exact for the lanes the paths accept. */
SK_FN static inline sk_vf sk_rht_quarter(const nvfp4_simd_col_job *j, unsigned i, sk_vf x)
{
    return sk_mul(x, sk_set1(j->rht_w[i]));
}

/*
 * RHT-16 with the hi part of a hi/lo split in integers, which takes half of
 * the floating-point additions off the FP adders (the bottleneck: 2 x 64
 * butterfly add/subs per tile), for lanes within
 * NVFP4_CORE_RHT_SPLIT_SPREAD (17 binades; _BF16, 33, for bf16 inputs)
 * whose Emax is >= 22 or 0 (sk_rht_split_int_ok), so the power-of-two
 * scalings below are normal. With e the largest unbiased exponent of the x_i:
 *  1. s_i = +-x_i * 2^(19-e): exact (a power of two, normal result),
 *     |s_i| < 2^20. h_i = RNE(s_i) as an int32 (|h_i| <= 2^20) and
 *     l_i = s_i - h_i, exact (|s_i| < 2^20 makes (float)h_i exact, and
 *     s_i - h_i is exact by Sterbenz when h_i != 0, equal to s_i when
 *     h_i = 0).
 *  2. The butterfly over the h_i in int32: exact (|sums| <= 16 * 2^20 =
 *     2^24), and the sums convert to fp32 exactly.
 *  3. The l_i are multiples of ulp(s_min) = 2^(emin-23) * 2^(19-e) with
 *     |l_i| <= 1/2: every partial sum is below 8 = 2^(e-emin+7) such units,
 *     exact when e - emin <= 17 (bf16 inputs: units of 2^(emin-7+19-e),
 *     exact up to a spread of 33; spreads 18 and 34 can fail:
 *     tests/check_simd.c has such groups).
 *  4. y = fl(H_j + L_j) * 2^(e-21): the addition is the single rounding of
 *     the exact sum (times 4 * 2^(19-e)); the scaling is exact, since a
 *     rounded y is at least 2^(emin-1) >= 2^-125 (normal) and an unrounded
 *     one is a multiple of 2^-149. H_j (from an int) is never -0, so an
 *     exact zero is +0.
 */
SK_FN static inline __attribute__((always_inline)) void sk_rht_split_int(const nvfp4_simd_col_job *j, sk_vf v[16],
                                                                         sk_vi emax)
{
    /* 2^(19-e) has biased exponent 19 - (Emax - 127) + 127 = 273 - Emax;
     * 2^(e-21): Emax - 21. All-zero lanes (Emax = 0) take Emax = 22. */
    sk_vi ec = sk_max_s(emax, sk_set1_i(22));
    const sk_vf up = sk_rht_scaler(sk_sub_i(sk_set1_i(273), ec));
    const sk_vf down = sk_as_f(sk_slli(sk_sub_i(ec, sk_set1_i(21)), 23));
    sk_vi h[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        sk_vf si = sk_rht_signed_scaled(j, i, v[i], up);
        h[i] = sk_cvt_i(si);
        v[i] = sk_rne_frac(si, h[i]);
    }
    sk_fwht16_i(h);
    sk_fwht16_f(v);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        sk_vf f = sk_mul(sk_add(sk_cvt_f(h[i]), v[i]), down);
        v[i] = j->rht_round_bf16 ? sk_bf16_round(f) : f;
    }
}

/*
 * RHT-16 of bf16 inputs as one int32 butterfly, for lanes with a spread of
 * at most 19 binades, Emin >= 10 and Emax <= 250 (sk_rht_bf16_int_ok). With
 * emin the smallest unbiased exponent of the nonzero x_i of a lane, every
 * x_i is a multiple of 2^(emin-7) (8-bit significands): s_i = +-x_i *
 * 2^(7-emin) is an integer below 2^(spread+8), so the 16-term sums stay
 * below 2^(spread+12) <= 2^31 and are exact in int32. Converting a sum to
 * fp32 (RNE) is the single rounding of the exact sum; times 2^(emin-9) (the
 * 1/4 and the scaling back) is exact: a nonzero sum is at least one unit,
 * 2^(emin-9) >= 2^-126 with Emin >= 10, so the result is normal. Zero sums
 * convert to +0. All-zero lanes (Emin = 255) scale by 2^6 and 2^119.
 */
SK_FN static inline __attribute__((always_inline)) void sk_rht_bf16_int(const nvfp4_simd_col_job *j, sk_vf v[16],
                                                                        sk_vi emin)
{
    /* 2^(7-emin): biased 7 - (Emin - 127) + 127 = 261 - Emin; 2^(emin-9): Emin - 9 */
    const sk_vf up = sk_rht_scaler(sk_sub_i(sk_set1_i(261), emin));
    const sk_vf down = sk_as_f(sk_slli(sk_sub_i(emin, sk_set1_i(9)), 23));
    sk_vi h[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) h[i] = sk_cvt_i(sk_rht_signed_scaled(j, i, v[i], up)); /* exact */
    sk_fwht16_i(h);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        sk_vf f = sk_mul(sk_cvt_rne_f(h[i]), down);
        v[i] = j->rht_round_bf16 ? sk_bf16_round(f) : f;
    }
}

/*
 * An upper bound, per lane, of max |RHT(x)| over a tile's 16 outputs as
 * rounded, from the plain fp32 butterfly (about 2.4 times cheaper than the
 * exact paths). With e the largest unbiased exponent of the lane's x_i
 * (Emax <= 250): u_i = s_i x_i / 4 is exact, or off by at most 2^-150
 * below 2^-124; each butterfly output went through 4 roundings, so
 * |y~_j - y_j| <= gamma_4 * sum |u_i| < 2^-21.99 * 16 * 2^(e-1) < 2^(e-18)
 * (additions in the subnormal range are exact). E' = 2^(max(Emax - 16, 17)
 * - 127) is at least 4 * 2^(e-18) and 2^-110, and fl(M~ + E') (M~ = max_j
 * |y~_j|) loses at most (M~ + E') * 2^-24 < 2^(e-20) < E' / 2 to rounding:
 * it bounds max_j |y_j| from above, and so (rounding to fp32 and bf16 is
 * monotonic) the rounded maximum. Lanes with Emax > 250 (Inf, NaN, or
 * too large for the argument) get +Inf; the butterfly of the other lanes
 * stays below 2^126: no NaN to drop in m.
 */
SK_FN static inline __attribute__((always_inline)) sk_vf sk_tile_amax_bound(const nvfp4_simd_col_job *j, size_t g,
                                                                            size_t c0)
{
    sk_vf v[16];
    sk_vi mx = sk_zero_i();
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        v[i] = sk_load(j->x, j->bf16, (16 * g + i) * j->cols + c0);
        mx = sk_max_u(mx, sk_and_i(sk_as_i(v[i]), sk_set1_i(0x7FFFFFFF)));
        v[i] = sk_rht_quarter(j, i, v[i]);
    }
    sk_vi emax = sk_srli(mx, 23);
    sk_fwht16_f(v);
    sk_vf m = sk_zero();
    SIMD_UNROLL
    for (int i = 0; i < 16; i++) m = sk_max(sk_abs(v[i]), m);
    sk_vi eb = sk_max_s(sk_sub_i(emax, sk_set1_i(16)), sk_set1_i(17));
    sk_vf ub = sk_add(m, sk_as_f(sk_slli(eb, 23)));
    return sk_blend_f(sk_gt_i(emax, sk_set1_i(NVFP4_CORE_RHT_EMAX_HIGH)), ub, sk_set1(INFINITY));
}
/*
 * RHT-16 in fp32 arithmetic only, exact (src/core/hadamard.h's definition:
 * the exact 16-term sum times 1/4, rounded once), for lanes accepted by
 * sk_rht_lanes_within(.., NVFP4_CORE_RHT_SPLIT_SPREAD). Notation: u_i = s_i x_i / 4 (exact,
 * normal: E >= 3), e = the largest unbiased exponent of the u_i, q = 2^(e-19).
 *
 *  1. Split u_i = h_i + l_i with h_i = (u_i + C) - C, C = 1.5 * 2^(e+4).
 *     |u_i| < 2^(e+1), so u_i + C lies in [22, 26] * 2^e, inside the binade
 *     [16, 32) * 2^e whose ulp is q: fl(u_i + C) = C + (u_i rounded to a
 *     multiple of q), and subtracting C is exact (Sterbenz). So h_i is u_i
 *     rounded to a multiple of q, |h_i| <= 2^(e+1), and l_i = u_i - h_i is
 *     exact: |l_i| <= q/2 and l_i is a multiple of ulp(u_i) (if |u_i| < q/2,
 *     h_i = 0 and l_i = u_i; otherwise |l_i| / ulp(u_i) <= 2^23).
 *  2. Every partial sum of the butterfly over the h_i (any subset, any
 *     signs) is a multiple of q of magnitude <= 16 * 2^(e+1) = 2^24 q:
 *     representable, so every add/sub is exact. No h_i is -0 (x - x = +0),
 *     so no partial sum is -0 either.
 *  3. Every partial sum over the l_i is a multiple of 2^(emin-23) (emin the
 *     smallest unbiased exponent of the nonzero u_i) of magnitude
 *     <= 16 * q/2 = 2^(e-16) = 2^(e-emin+7) * 2^(emin-23): exact when
 *     e - emin + 7 <= 24, i.e. a spread of at most 17 binades. For bf16
 *     inputs (8-bit significands) the unit is 2^(emin-7), so the bound is
 *     e - emin - 9 <= 24: a spread of at most 33. (Spreads 18 and 34
 *     can fail: tests/check_simd.c has such groups.)
 *  4. y_j = fl(H_j + L_j) is then one IEEE addition of the two exact partial
 *     results: the exact sum rounded once. An exact zero sum gives +0 (H_j is
 *     never -0). Emax <= 250 keeps C and every partial sum finite (partial
 *     sums below 2^(e+5) <= 2^128 that are multiples of 2^(e-19) are at most
 *     FLT_MAX); the final addition overflows to +-Inf only if the exact
 *     result does.
 */
SK_FN static inline __attribute__((always_inline)) void sk_rht_split(const nvfp4_simd_col_job *j, sk_vf v[16],
                                                                    sk_vi emax)
{
    /* C = 1.5 * 2^(e+4): biased exponent (Emax - 2) + 4 */
    const sk_vf c = sk_as_f(sk_or_i(sk_slli(sk_add_i(emax, sk_set1_i(2)), 23), sk_set1_i(0x00400000)));
    sk_vf lo[16];
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        sk_vf u = sk_rht_quarter(j, i, v[i]);
        sk_vf h = sk_sub(sk_add(u, c), c);
        lo[i] = sk_sub(u, h);
        v[i] = h;
    }
    sk_fwht16_f(v);
    sk_fwht16_f(lo);
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) {
        sk_vf f = sk_add(v[i], lo[i]);
        v[i] = j->rht_round_bf16 ? sk_bf16_round(f) : f;
    }
}

/*
 * RHT-16 of bf16-representable inputs (8-bit significands) as one fp32
 * butterfly, for lanes accepted by sk_rht_lanes_within(.., NVFP4_CORE_RHT_BF16_SPREAD):
 * every u_i = s_i x_i / 4 is exact and a multiple of 2^(emin-7) (emin the
 * smallest unbiased exponent of the nonzero u_i). Before the last stage a
 * partial sum has at most 8 terms, so it is below 8 * 2^(e+1) =
 * 2^(e-emin+11) * 2^(emin-7) (e the largest exponent): exact in fp32 when
 * e - emin + 11 <= 24, i.e. a spread of at most 13 binades. The last stage
 * adds two exact partial sums: one IEEE addition, the single rounding of
 * the exact 16-term sum that the definition asks for. (Spread 14 can fail:
 * tests/check_simd.c has such a group.) Adding +0 turns -0 inputs into +0,
 * so every exact zero sum is +0.
 */
SK_FN static inline __attribute__((always_inline)) void sk_rht_bf16_exact(const nvfp4_simd_col_job *j, sk_vf v[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = sk_add(sk_rht_quarter(j, i, v[i]), sk_zero());
    sk_fwht16_f(v);
    if (j->rht_round_bf16)
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) v[i] = sk_bf16_round(v[i]);
}

/* ---- RHT-16 in binary64 -------------------------------------------------------- */

SK_FWHT16_FN(sk_fwht16_d, sk_vd, sk_add_d, sk_sub_d)

/* v_i <- u_i = s_i x_i / 4 (+0 turns -0 into +0), in place: computed once
 * per tile, then split into the two binary64 halves. */
SK_FN static inline __attribute__((always_inline)) void sk_rht_quarters(const nvfp4_simd_col_job *j, sk_vf v[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = sk_add(sk_rht_quarter(j, i, v[i]), sk_zero());
}

/* The 16 u_i of half the lanes (half 0: the low SK_W / 2) as binary64. */
SK_FN static inline __attribute__((always_inline)) void sk_rht_quarters_pd(const sk_vf s[16], int half, sk_vd u[16])
{
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) u[i] = sk_to_pd(s[i], half);
}

/* The binary64 butterfly on s_i x_i / 4: exact on the lanes accepted by
 * sk_rht_finite_within(.., NVFP4_CORE_RHT_F64_SPREAD) (every partial sum
 * is an integer multiple of the smallest input's last bit 2^(emin-25)
 * below 16 * 2^(emax-1), i.e. below 2^53 such units; the bound of
 * nvfp4_core_rht_double_exact), then rounded once to fp32. */
SK_FN static inline __attribute__((always_inline)) void sk_rht_f64(const nvfp4_simd_col_job *j, sk_vf v[16])
{
    sk_vh r[2][16];
    sk_rht_quarters(j, v);
    for (int half = 0; half < 2; half++) {
        sk_vd u[16];
        sk_rht_quarters_pd(v, half, u);
        sk_fwht16_d(u);
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) r[half][i] = sk_pd_round(u[i]);
    }
    SIMD_UNROLL
    for (unsigned i = 0; i < 16; i++) v[i] = sk_join_halves(r[0][i], r[1][i]);
}

/* The lanes (sk_mbits) whose inputs are all finite with nonzero biased
 * exponents >= 3 within spread binades. */
SK_FN static inline int sk_rht_finite_within(sk_vi emax, sk_vi emin, int spread)
{
    sk_mask finite = sk_gt_i(sk_set1_i(255), emax);
    sk_mask close = sk_gt_i(sk_set1_i(spread + 1), sk_sub_i(emax, emin));
    sk_mask big = sk_gt_i(emin, sk_set1_i(NVFP4_CORE_RHT_EMIN_LOW - 1));
    return sk_mbits(sk_mand(sk_mand(finite, close), big));
}

/* The scalar exact accumulator (nvfp4_simd_col_group) for the lanes
 * (columns) not in `done`. */
SK_FN static __attribute__((noinline)) void sk_rht_scalar_lanes(const nvfp4_simd_col_job *j, size_t g, size_t c0,
                                                              sk_vf v[16], int done)
{
    _Alignas(64) float t[16][SK_W];
    for (int i = 0; i < 16; i++) sk_store_f(t[i], v[i]);
    for (unsigned c = 0; c < SK_W; c++)
        if (!((done >> c) & 1)) {
            float y[16];
            nvfp4_simd_col_group(j, g, c0 + c, y);
            for (int i = 0; i < 16; i++) t[i][c] = y[i];
        }
    for (int i = 0; i < 16; i++) v[i] = sk_load_f(t[i]);
}

/* Tiles with a lane beyond the fp32 paths' spreads: the plain binary64
 * butterfly when every lane allows it, else the ISA's binary64 split when
 * it has one (SK_RHT_SPLIT_F64: spreads up to 75), else (Inf, NaN, inputs
 * below 2^-124, wider spreads) the scalar exact accumulator for those
 * lanes. Then RN to bf16 if asked. */
SK_FN static SK_RHT_WIDE_INLINE void sk_rht_wide(const nvfp4_simd_col_job *j, size_t g, size_t c0, sk_vf v[16],
                                                 sk_vi emax, sk_vi emin)
{
    int exact = sk_rht_finite_within(emax, emin, NVFP4_CORE_RHT_F64_SPREAD);
#ifdef SK_RHT_SPLIT_F64
    if (exact != SK_ALL) {
        exact = sk_rht_finite_within(emax, emin, NVFP4_CORE_RHT_SPLIT64_SPREAD);
        SK_RHT_SPLIT_F64(j, v, emax);
    } else
#endif
    {
        sk_rht_f64(j, v);
    }
    if (j->rht_round_bf16) {
        SIMD_UNROLL
        for (unsigned i = 0; i < 16; i++) v[i] = sk_bf16_round(v[i]);
    }
    if (exact != SK_ALL) sk_rht_scalar_lanes(j, g, c0, v, exact);
}

/* ---- columnwise tiles ------------------------------------------------------------ */

/* Prefetches for the tile at group g, columns c0..c0+SK_W-1 of the strip
 * ending at s1: into L2, the rows this tile position needs two groups
 * later (for the strip's last two groups: the first two of the next
 * strip), which leaves time for DRAM; with SK_PREFETCH_L1, into L1 the
 * next tile's rows, already in L2 (AVX2 was faster without: the 16 rows
 * share L1 sets when the row stride is a multiple of 4 KiB). always_inline:
 * as a plain static helper GCC 12 at -O1 and above deleted every call to
 * it (a void function whose only statements are __builtin_prefetch counts
 * as free of side effects), which goes unnoticed in cache and shows only
 * on inputs larger than the caches (docs/performance.md, "Measured design
 * choices"). */
SK_FN static inline __attribute__((always_inline)) void sk_col_prefetch(const nvfp4_simd_col_job *j, const int bf16,
                                                                        size_t g, size_t g0, size_t g1, size_t c0,
                                                                        size_t s1)
{
    size_t ncolw = j->cols / SK_W * SK_W, es = bf16 ? 2u : 4u;
    size_t pg = g + 2 < g1 ? g + 2 : g0 + (g + 2 - g1), pc = g + 2 < g1 ? c0 : c0 + NVFP4_SIMD_STAGE_COLS;
    if (pc + SK_W <= ncolw)
        for (size_t i = 0; i < 16; i++)
            _mm_prefetch((const char *)j->x + ((16 * pg + i) * j->cols + pc) * es, _MM_HINT_T1);
    if (SK_PREFETCH_L1 && c0 + SK_W < s1)
        for (size_t i = 0; i < 16; i++)
            _mm_prefetch((const char *)j->x + ((16 * g + i) * j->cols + c0 + SK_W) * es, _MM_HINT_T0);
}

/* ---- a tile's path --------------------------------------------------------------- */

/* RHT of the 16 rows v of group g, columns c0..c0+SK_W-1, whose exponent
 * range is emax, emin, in place: the
 * int32 butterfly for bf16 inputs whose lanes allow it, else (with
 * SK_RHT_FP32_PATHS) bf16's plain fp32 butterfly, else the hi/lo split
 * (integer hi; with SK_RHT_FP32_PATHS the fp32 one where Emax is too small
 * for it), else the binary64 paths (sk_rht_wide). All give
 * nvfp4_core_rht_forward_group's bits; which of them an ISA takes was
 * measured per ISA (docs/performance.md, "Measured design choices"). */
SK_FN static inline __attribute__((always_inline)) void sk_rht_tile_in(const nvfp4_simd_col_job *j, const int bf16,
                                                                       size_t g, size_t c0, sk_vf v[16], sk_vi emax,
                                                                       sk_vi emin)
{
    if (bf16 && sk_rht_bf16_int_ok(emax, emin)) sk_rht_bf16_int(j, v, emin);
    else if (SK_RHT_FP32_PATHS && bf16 && sk_rht_lanes_within(emax, emin, NVFP4_CORE_RHT_BF16_SPREAD) == SK_ALL)
        sk_rht_bf16_exact(j, v);
    else if (sk_rht_lanes_within(emax, emin, bf16 ? NVFP4_CORE_RHT_SPLIT_SPREAD_BF16 : NVFP4_CORE_RHT_SPLIT_SPREAD) ==
                 SK_ALL &&
             (SK_RHT_FP32_PATHS || sk_rht_split_int_ok(emax))) {
        if (sk_rht_split_int_ok(emax)) sk_rht_split_int(j, v, emax);
        else sk_rht_split(j, v, emax);
    } else sk_rht_wide(j, g, c0, v, emax, emin);
}

/* The same, given the tile's exponent range (sk_rht_exp_range). */
SK_FN static inline __attribute__((always_inline)) void sk_rht_tile(const nvfp4_simd_col_job *j, const int bf16,
                                                                    size_t g, size_t c0, sk_vf v[16])
{
    sk_vi emax, emin;
    sk_rht_exp_range(v, &emax, &emin);
    sk_rht_tile_in(j, bf16, g, c0, v, emax, emin);
}

/* The 16 rows of group g, columns c0..c0+SK_W-1, RHT'd in place when asked. */
SK_FN static inline __attribute__((always_inline)) void sk_col_load_group(const nvfp4_simd_col_job *j, const int bf16,
                                                                          size_t g, size_t c0, sk_vf v[16])
{
    SIMD_UNROLL
    for (size_t i = 0; i < 16; i++) v[i] = sk_load(j->x, bf16, (16 * g + i) * j->cols + c0);
    if (j->rht) sk_rht_tile(j, bf16, g, c0, v);
}
