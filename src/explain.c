/* explain.c - the text of `nvfp4 explain VALUE`: how one fp32 value becomes
 * an E2M1, E4M3 or UE8M0 code: its fp32 fields, the two representable
 * neighbours, the chosen code and the rule that chose it (tie to even,
 * saturation, NaN policy), and for stochastic rounding the exact probability
 * of rounding up and the random bytes that do it.
 *
 * Every code printed here comes from the library's encoders
 * (nvfp4_e2m1_from_f32 and friends); this file only classifies the outcome
 * for the reader, it never rounds by itself. It lives in the library so
 * that the CLI and the Python package print the same text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nvfp4/formats.h"

#define P(...) nvfp4_strbuf_printf(out, __VA_ARGS__)

static void fmt(char *buf, size_t n, float v)
{
    if (v != v) snprintf(buf, n, "NaN");
    else nvfp4_format_f32_shortest(v, buf, n);
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static void print_input(nvfp4_strbuf *out, const char *text, float x)
{
    uint32_t u = f32_bits(x);
    uint32_t s = u >> 31, e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
    char v[48];
    fmt(v, sizeof v, x);
    P("input       %s\n", text);
    if (x == x && !isinf(x)) P("fp32 value  %s (exactly %a)\n", v, (double)x);
    else P("fp32 value  %s\n", v);
    P("fp32 bits   0x%08X: sign %u, exponent 0x%02X", u, s, e);
    if (e == 0xFFu) P(" (%s)", m ? "NaN" : "Inf");
    else if (e == 0) P(" (%s, 2^-126 scale)", m ? "subnormal" : "zero");
    else P(" (2^%d)", (int)e - 127);
    P(", mantissa 0x%06X", m);
    if (e == 0xFFu && m) P(" (NaN payload, %s)", (m & 0x400000u) ? "quiet" : "signalling");
    P("\n");
}

/* ---- E2M1 ------------------------------------------------------------ */

static void explain_e2m1_code(nvfp4_strbuf *out, const char *label, uint8_t c)
{
    char v[48];
    fmt(v, sizeof v, nvfp4_e2m1_to_f32(c));
    P("%-11s 0x%X = %s\n", label, c, v);
}

static void explain_e2m1(nvfp4_strbuf *out, float x, nvfp4_rounding mode)
{
    static const char *const mode_text[] = {"round to nearest, ties to even (rn)", "round toward zero (rz)",
                                            "stochastic rounding with 8 random bits r (sr)"};
    P("format      E2M1 (FP4), %s\n", mode_text[mode]);
    if (x != x) {
        explain_e2m1_code(out, "result", nvfp4_e2m1_from_f32(x, mode, 0));
        P("why         NaN: NVIDIA's cuda_fp4.hpp conversion gives +6 (0x7, the positive max)\n"
               "            for every NaN, whatever its sign or payload; no random bits are used\n");
        return;
    }
    float a = fabsf(x);
    unsigned sb = signbit(x) ? 8u : 0u;
    /* the neighbours: the RZ code of |x| and the next one up */
    uint8_t lo = nvfp4_e2m1_from_f32(a, NVFP4_RZ, 0);
    char lv[48], hv[48];
    if (lo == 7u) {
        fmt(lv, sizeof lv, nvfp4_e2m1_to_f32((uint8_t)(sb | 7u)));
        explain_e2m1_code(out, "result", nvfp4_e2m1_from_f32(x, mode, 0));
        if (a == 6.0f) P("why         exact: |x| = 6 is the largest E2M1 value\n");
        else P("why         saturation: |x| > 6%s gives %s (satfinite: E2M1 has no Inf); the sign is kept\n",
                    isinf(x) ? " (here Inf)" : "", lv);
        return;
    }
    uint8_t hi = (uint8_t)(lo + 1u);
    float lo_v = nvfp4_e2m1_to_f32(lo), hi_v = nvfp4_e2m1_to_f32(hi);
    fmt(lv, sizeof lv, nvfp4_e2m1_to_f32((uint8_t)(sb | lo)));
    fmt(hv, sizeof hv, nvfp4_e2m1_to_f32((uint8_t)(sb | hi)));
    /* exact in double: a and the grid values are short dyadic numbers */
    double frac = ((double)a - (double)lo_v) / ((double)hi_v - (double)lo_v);
    char fs[32], ls[16], hs[16];
    nvfp4_format_f64_digits(frac, 9, fs, sizeof fs);
    fmt(ls, sizeof ls, lo_v);
    fmt(hs, sizeof hs, hi_v);
    P("neighbours  %s (0x%X) and %s (0x%X); |x| is %s of the way from %s to %s\n", lv, sb | lo, hv, sb | hi, fs,
           ls, hs);
    if (a == lo_v) {
        explain_e2m1_code(out, "result", nvfp4_e2m1_from_f32(x, mode, 0));
        P("why         exact: x is an E2M1 value%s\n",
               a == 0.0f ? (sb ? " (-0 keeps its sign: 0x8)" : "") : "");
        return;
    }
    if (mode == NVFP4_SR) {
        unsigned ups = 0;
        for (unsigned r = 0; r < 256u; r++) ups += nvfp4_e2m1_from_f32(x, NVFP4_SR, (uint8_t)r) == (sb | hi);
        P("result      0x%X = %s for r in [0, %u]", sb | lo, lv, 255u - ups);
        if (ups) P(", 0x%X = %s for r in [%u, 255]\n", sb | hi, hv, 256u - ups);
        else P(" (every r)\n");
        char ps[32];
        P("probability P(away from zero) = %u/256 = %s (exact position %s)\n", ups,
               nvfp4_format_f64_digits(ups / 256.0, 8, ps, sizeof ps), fs);
        P("why         SR rounds away from zero iff floor(256*frac) + r >= 256, frac being the\n"
               "            position of |x| in its step: floor(256 * %s) = %u, so %u of the\n"
               "            256 values of r round up\n",
               fs, ups, ups);
        if (frac * 256.0 != (double)ups)
            P("            (the bits of frac below 2^-8 are dropped: P(up) is %u/256, not %s)\n", ups, fs);
        return;
    }
    uint8_t c = nvfp4_e2m1_from_f32(x, mode, 0);
    explain_e2m1_code(out, "result", c);
    if (mode == NVFP4_RZ) {
        P("why         toward zero: RZ keeps the neighbour of smaller magnitude, %s\n", lv);
    } else if (frac == 0.5) {
        P("why         tie: |x| is exactly halfway between %s and %s; RN picks the code\n"
               "            with an even mantissa bit, 0x%X\n",
               ls, hs, c & 7u);
    } else {
        P("why         nearest: |x| is closer to %s than to %s\n", frac < 0.5 ? ls : hs, frac < 0.5 ? hs : ls);
    }
    if ((c & 7u) == 0 && sb) P("            the result is zero and keeps the sign of x: 0x8 = -0\n");
    return;
}

/* ---- E4M3 ------------------------------------------------------------ */

static void explain_e4m3(nvfp4_strbuf *out, float x, bool saturate)
{
    P("format      E4M3 (FP8 e4m3fn), round to nearest, ties to even, %s\n",
           saturate ? "satfinite (overflow gives +-448)" : "not saturating (overflow gives NaN)");
    uint8_t c = nvfp4_e4m3_from_f32(x, saturate);
    char cv[48];
    fmt(cv, sizeof cv, nvfp4_e4m3_to_f32(c));
    if (x != x) {
        P("result      0x%02X = NaN\n", c);
        P("why         NaN: cuda_fp8.hpp gives 0x7F for every NaN (the sign is dropped)\n");
        return;
    }
    float a = fabsf(x);
    unsigned sb = signbit(x) ? 0x80u : 0u;
    if (a > 448.0f) {
        P("neighbours  448 (0x7E) is the largest E4M3 value; the next step would be 480\n");
        P("result      0x%02X = %s\n", c, cv);
        if (a == 464.0f) P("why         tie: 464 is halfway between 448 and 480; RN picks the even 448 (0x7E)\n");
        else if (a < 464.0f) P("why         nearest: below 464 = 448 + half a step, so it rounds to 448\n");
        else if (saturate) P("why         saturation: |x| > 464%s clamps to +-448 (satfinite)\n", isinf(x) ? " (here Inf)" : "");
        else P("why         overflow: |x| > 464%s has no E4M3 value; without saturation it gives NaN\n"
                    "            (0x7F with the sign of x)\n", isinf(x) ? " (here Inf)" : "");
        return;
    }
    /* the neighbours: the largest code value <= |x| and the next code */
    unsigned lo = 0;
    while (lo < 0x7Eu && nvfp4_e4m3_to_f32((uint8_t)(lo + 1u)) <= a) lo++;
    unsigned hi = lo < 0x7Eu ? lo + 1u : lo;
    float lo_v = nvfp4_e4m3_to_f32((uint8_t)lo), hi_v = nvfp4_e4m3_to_f32((uint8_t)hi);
    char lv[48], hv[48];
    fmt(lv, sizeof lv, sb ? -lo_v : lo_v);
    fmt(hv, sizeof hv, sb ? -hi_v : hi_v);
    P("neighbours  %s (0x%02X) and %s (0x%02X)%s\n", lv, sb | lo, hv, sb | hi,
           lo < 8u ? ", subnormal step 2^-9" : "");
    P("result      0x%02X = %s\n", c, cv);
    if (a == lo_v) {
        P("why         exact: x is an E4M3 value\n");
    } else if (lo == 0 && a <= 0x1p-10f) {
        P("why         underflow: |x| <= 2^-10 (half the smallest subnormal 2^-9) gives zero with\n"
               "            the sign of x%s\n", a == 0x1p-10f ? "; 2^-10 itself is a tie, going to the even 0" : "");
    } else {
        double frac = ((double)a - (double)lo_v) / ((double)hi_v - (double)lo_v);
        if (frac == 0.5)
            P("why         tie: |x| is exactly halfway; RN picks the code with an even mantissa, 0x%02X\n", c);
        else
        {
            char fs[32];
            P("why         nearest: |x| is %s of the way from %s to %s\n",
                   nvfp4_format_f64_digits(frac, 9, fs, sizeof fs), lv, hv);
        }
    }
    return;
}

/* ---- UE8M0 ----------------------------------------------------------- */

static const char *ue8m0_text(char *buf, size_t n, uint8_t c)
{
    if (c == 0xFFu) snprintf(buf, n, "0xFF = NaN");
    else snprintf(buf, n, "0x%02X = 2^%d", c, (int)c - 127);
    return buf;
}

static void explain_ue8m0(nvfp4_strbuf *out, float x, nvfp4_ue8m0_mode chosen)
{
    static const char *const why[] = {
        "floor(log2|x|): the fp32 exponent bits (cvt.rz.satfinite.ue8m0, OCP MX)",
        "round up: cvt.rp.satfinite.ue8m0 (via bf16 rounded up), NVIDIA's RCEIL",
        "ceil(log2|x|) computed exactly",
        "nearest power of two; a tie (1.5 * 2^e) goes to the even code",
    };
    P("format      UE8M0 (power-of-two scale 2^(code-127)); the sign of x is ignored\n");
    if (x != x) P("special     NaN gives 0xFF (NaN) in every mode\n");
    else if (isinf(x)) P("special     Inf saturates to 0xFE = 2^127 in every mode\n");
    else if (x == 0.0f) P("special     zero has no UE8M0 code; every mode gives 0x00 = 2^-127\n");
    else {
        uint8_t fl = nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_FLOOR), ce = nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_CEIL);
        char a[32], b[32];
        P("neighbours  %s and %s%s\n", ue8m0_text(a, sizeof a, fl), ue8m0_text(b, sizeof b, ce),
               fl == ce ? " (|x| is a power of two, or clamped to the range)" : "");
    }
    char t[32];
    P("result      %s (mode %s)\n", ue8m0_text(t, sizeof t, nvfp4_ue8m0_from_f32(x, chosen)),
           nvfp4_ue8m0_mode_name(chosen));
    P("all modes\n");
    for (int m = 0; m < 4; m++)
        P("  %-6s    %-15s %s\n", nvfp4_ue8m0_mode_name((nvfp4_ue8m0_mode)m),
               ue8m0_text(t, sizeof t, nvfp4_ue8m0_from_f32(x, (nvfp4_ue8m0_mode)m)), why[m]);
    return;
}

bool nvfp4_explain_format_parse(const char *s, nvfp4_explain_format *out)
{
    static const char *const names[] = {"e2m1", "e4m3", "ue8m0"};
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (nvfp4_explain_format)i;
            return true;
        }
    return false;
}

nvfp4_status nvfp4_explain(const char *label, float x, nvfp4_explain_format f, nvfp4_rounding rounding,
                           bool saturate, nvfp4_ue8m0_mode mode, nvfp4_strbuf *out, nvfp4_error *err)
{
    if ((unsigned)f > NVFP4_EXPLAIN_UE8M0) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown explain format %d", (int)f);
    if ((unsigned)rounding > NVFP4_SR) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown rounding %d", (int)rounding);
    if (f == NVFP4_EXPLAIN_E4M3 && rounding != NVFP4_RN)
        return nvfp4_error_set(err, NVFP4_EINVAL, "e4m3 is converted with rn only (as cuda_fp8.hpp does)");
    if ((unsigned)mode > NVFP4_UE8M0_EVEN) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown ue8m0 mode %d", (int)mode);
    print_input(out, label ? label : "", x);
    if (f == NVFP4_EXPLAIN_E2M1) explain_e2m1(out, x, rounding);
    else if (f == NVFP4_EXPLAIN_E4M3) explain_e4m3(out, x, saturate);
    else explain_ue8m0(out, x, mode);
    if (out->failed) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return NVFP4_OK;
}
