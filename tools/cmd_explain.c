/* cmd_explain.c - `nvfp4 explain VALUE`: how one fp32 value becomes an E2M1,
 * E4M3 or UE8M0 code: its fp32 fields, the two representable neighbours, the
 * chosen code and the rule that chose it (tie to even, saturation, NaN
 * policy), and for stochastic rounding the exact probability of rounding up
 * and the random bytes that do it.
 *
 * Every code printed here comes from the library's encoders
 * (nvfp4_e2m1_from_f32 and friends); this file only classifies the outcome
 * for the reader, it never rounds by itself. */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "cli_figures.h"
#include "nvfp4/formats.h"

static const char *const CMD = "explain";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nvfp4 explain [--] VALUE [--format e2m1|e4m3|ue8m0] [--round rn|rz|sr]\n"
            "                           [--nosat] [--mode floor|rceil|ceil|even] [--plot FILE]\n"
            "\n"
            "Explains how VALUE (decimal, C99 hex float, inf, nan, or a 0x-prefixed\n"
            "8-digit fp32 bit pattern) is encoded: its fp32 sign/exponent/mantissa, the\n"
            "two representable neighbours, the chosen code and why.\n"
            "\n"
            "  --format F   e2m1 (default), e4m3 or ue8m0\n"
            "  --round R    e2m1 only: rn (nearest, ties to even; default), rz (toward\n"
            "               zero) or sr (stochastic with 8 random bits r: prints the\n"
            "               probability of rounding up and the range of r that does it)\n"
            "  --nosat      e4m3 only: overflow gives NaN (0x7F) instead of +-448\n"
            "  --mode M     ue8m0 only: the mode marked as chosen (default floor); all\n"
            "               four modes are shown\n"
            "  --plot FILE  e2m1, e4m3: also draw x, its two neighbours, the RN boundary\n"
            "               and (e2m1) the SR probabilities as a PNG (gnuplot)\n"
            "  -h, --help   this text\n");
}

static void fmt(char *buf, size_t n, float v)
{
    if (v != v) snprintf(buf, n, "NaN");
    else cli_format_f32(buf, n, v);
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static void print_input(const char *text, float x)
{
    uint32_t u = f32_bits(x);
    uint32_t s = u >> 31, e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
    char v[48];
    fmt(v, sizeof v, x);
    printf("input       %s\n", text);
    if (x == x && !isinf(x)) printf("fp32 value  %s (exactly %a)\n", v, (double)x);
    else printf("fp32 value  %s\n", v);
    printf("fp32 bits   0x%08X: sign %u, exponent 0x%02X", u, s, e);
    if (e == 0xFFu) printf(" (%s)", m ? "NaN" : "Inf");
    else if (e == 0) printf(" (%s, 2^-126 scale)", m ? "subnormal" : "zero");
    else printf(" (2^%d)", (int)e - 127);
    printf(", mantissa 0x%06X", m);
    if (e == 0xFFu && m) printf(" (NaN payload, %s)", (m & 0x400000u) ? "quiet" : "signalling");
    printf("\n");
}

/* ---- E2M1 ------------------------------------------------------------ */

static void explain_e2m1_code(const char *label, uint8_t c)
{
    char v[48];
    fmt(v, sizeof v, nvfp4_e2m1_to_f32(c));
    printf("%-11s 0x%X = %s\n", label, c, v);
}

static int explain_e2m1(float x, nvfp4_rounding mode)
{
    static const char *const mode_text[] = {"round to nearest, ties to even (rn)", "round toward zero (rz)",
                                            "stochastic rounding with 8 random bits r (sr)"};
    printf("format      E2M1 (FP4), %s\n", mode_text[mode]);
    if (x != x) {
        explain_e2m1_code("result", nvfp4_e2m1_from_f32(x, mode, 0));
        printf("why         NaN: NVIDIA's cuda_fp4.hpp conversion gives +6 (0x7, the positive max)\n"
               "            for every NaN, whatever its sign or payload; no random bits are used\n");
        return NVFP4_EXIT_OK;
    }
    float a = fabsf(x);
    unsigned sb = signbit(x) ? 8u : 0u;
    /* the neighbours: the RZ code of |x| and the next one up */
    uint8_t lo = nvfp4_e2m1_from_f32(a, NVFP4_RZ, 0);
    char lv[48], hv[48];
    if (lo == 7u) {
        fmt(lv, sizeof lv, nvfp4_e2m1_to_f32((uint8_t)(sb | 7u)));
        explain_e2m1_code("result", nvfp4_e2m1_from_f32(x, mode, 0));
        if (a == 6.0f) printf("why         exact: |x| = 6 is the largest E2M1 value\n");
        else printf("why         saturation: |x| > 6%s gives %s (satfinite: E2M1 has no Inf); the sign is kept\n",
                    isinf(x) ? " (here Inf)" : "", lv);
        return NVFP4_EXIT_OK;
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
    printf("neighbours  %s (0x%X) and %s (0x%X); |x| is %s of the way from %s to %s\n", lv, sb | lo, hv, sb | hi, fs,
           ls, hs);
    if (a == lo_v) {
        explain_e2m1_code("result", nvfp4_e2m1_from_f32(x, mode, 0));
        printf("why         exact: x is an E2M1 value%s\n",
               a == 0.0f ? (sb ? " (-0 keeps its sign: 0x8)" : "") : "");
        return NVFP4_EXIT_OK;
    }
    if (mode == NVFP4_SR) {
        unsigned ups = 0;
        for (unsigned r = 0; r < 256u; r++) ups += nvfp4_e2m1_from_f32(x, NVFP4_SR, (uint8_t)r) == (sb | hi);
        printf("result      0x%X = %s for r in [0, %u]", sb | lo, lv, 255u - ups);
        if (ups) printf(", 0x%X = %s for r in [%u, 255]\n", sb | hi, hv, 256u - ups);
        else printf(" (every r)\n");
        char ps[32];
        printf("probability P(away from zero) = %u/256 = %s (exact position %s)\n", ups,
               nvfp4_format_f64_digits(ups / 256.0, 8, ps, sizeof ps), fs);
        printf("why         SR rounds away from zero iff floor(256*frac) + r >= 256, frac being the\n"
               "            position of |x| in its step: floor(256 * %s) = %u, so %u of the\n"
               "            256 values of r round up\n",
               fs, ups, ups);
        if (frac * 256.0 != (double)ups)
            printf("            (the bits of frac below 2^-8 are dropped: P(up) is %u/256, not %s)\n", ups, fs);
        return NVFP4_EXIT_OK;
    }
    uint8_t c = nvfp4_e2m1_from_f32(x, mode, 0);
    explain_e2m1_code("result", c);
    if (mode == NVFP4_RZ) {
        printf("why         toward zero: RZ keeps the neighbour of smaller magnitude, %s\n", lv);
    } else if (frac == 0.5) {
        printf("why         tie: |x| is exactly halfway between %s and %s; RN picks the code\n"
               "            with an even mantissa bit, 0x%X\n",
               ls, hs, c & 7u);
    } else {
        printf("why         nearest: |x| is closer to %s than to %s\n", frac < 0.5 ? ls : hs, frac < 0.5 ? hs : ls);
    }
    if ((c & 7u) == 0 && sb) printf("            the result is zero and keeps the sign of x: 0x8 = -0\n");
    return NVFP4_EXIT_OK;
}

/* ---- E4M3 ------------------------------------------------------------ */

static int explain_e4m3(float x, bool saturate)
{
    printf("format      E4M3 (FP8 e4m3fn), round to nearest, ties to even, %s\n",
           saturate ? "satfinite (overflow gives +-448)" : "not saturating (overflow gives NaN)");
    uint8_t c = nvfp4_e4m3_from_f32(x, saturate);
    char cv[48];
    fmt(cv, sizeof cv, nvfp4_e4m3_to_f32(c));
    if (x != x) {
        printf("result      0x%02X = NaN\n", c);
        printf("why         NaN: cuda_fp8.hpp gives 0x7F for every NaN (the sign is dropped)\n");
        return NVFP4_EXIT_OK;
    }
    float a = fabsf(x);
    unsigned sb = signbit(x) ? 0x80u : 0u;
    if (a > 448.0f) {
        printf("neighbours  448 (0x7E) is the largest E4M3 value; the next step would be 480\n");
        printf("result      0x%02X = %s\n", c, cv);
        if (a == 464.0f) printf("why         tie: 464 is halfway between 448 and 480; RN picks the even 448 (0x7E)\n");
        else if (a < 464.0f) printf("why         nearest: below 464 = 448 + half a step, so it rounds to 448\n");
        else if (saturate) printf("why         saturation: |x| > 464%s clamps to +-448 (satfinite)\n", isinf(x) ? " (here Inf)" : "");
        else printf("why         overflow: |x| > 464%s has no E4M3 value; without saturation it gives NaN\n"
                    "            (0x7F with the sign of x)\n", isinf(x) ? " (here Inf)" : "");
        return NVFP4_EXIT_OK;
    }
    /* the neighbours: the largest code value <= |x| and the next code */
    unsigned lo = 0;
    while (lo < 0x7Eu && nvfp4_e4m3_to_f32((uint8_t)(lo + 1u)) <= a) lo++;
    unsigned hi = lo < 0x7Eu ? lo + 1u : lo;
    float lo_v = nvfp4_e4m3_to_f32((uint8_t)lo), hi_v = nvfp4_e4m3_to_f32((uint8_t)hi);
    char lv[48], hv[48];
    fmt(lv, sizeof lv, sb ? -lo_v : lo_v);
    fmt(hv, sizeof hv, sb ? -hi_v : hi_v);
    printf("neighbours  %s (0x%02X) and %s (0x%02X)%s\n", lv, sb | lo, hv, sb | hi,
           lo < 8u ? ", subnormal step 2^-9" : "");
    printf("result      0x%02X = %s\n", c, cv);
    if (a == lo_v) {
        printf("why         exact: x is an E4M3 value\n");
    } else if (lo == 0 && a <= 0x1p-10f) {
        printf("why         underflow: |x| <= 2^-10 (half the smallest subnormal 2^-9) gives zero with\n"
               "            the sign of x%s\n", a == 0x1p-10f ? "; 2^-10 itself is a tie, going to the even 0" : "");
    } else {
        double frac = ((double)a - (double)lo_v) / ((double)hi_v - (double)lo_v);
        if (frac == 0.5)
            printf("why         tie: |x| is exactly halfway; RN picks the code with an even mantissa, 0x%02X\n", c);
        else
        {
            char fs[32];
            printf("why         nearest: |x| is %s of the way from %s to %s\n",
                   nvfp4_format_f64_digits(frac, 9, fs, sizeof fs), lv, hv);
        }
    }
    return NVFP4_EXIT_OK;
}

/* ---- UE8M0 ----------------------------------------------------------- */

static const char *ue8m0_text(char *buf, size_t n, uint8_t c)
{
    if (c == 0xFFu) snprintf(buf, n, "0xFF = NaN");
    else snprintf(buf, n, "0x%02X = 2^%d", c, (int)c - 127);
    return buf;
}

static int explain_ue8m0(float x, nvfp4_ue8m0_mode chosen)
{
    static const char *const why[] = {
        "floor(log2|x|): the fp32 exponent bits (cvt.rz.satfinite.ue8m0, OCP MX)",
        "round up: cvt.rp.satfinite.ue8m0 (via bf16 rounded up), NVIDIA's RCEIL",
        "ceil(log2|x|) computed exactly",
        "nearest power of two; a tie (1.5 * 2^e) goes to the even code",
    };
    printf("format      UE8M0 (power-of-two scale 2^(code-127)); the sign of x is ignored\n");
    if (x != x) printf("special     NaN gives 0xFF (NaN) in every mode\n");
    else if (isinf(x)) printf("special     Inf saturates to 0xFE = 2^127 in every mode\n");
    else if (x == 0.0f) printf("special     zero has no UE8M0 code; every mode gives 0x00 = 2^-127\n");
    else {
        uint8_t fl = nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_FLOOR), ce = nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_CEIL);
        char a[32], b[32];
        printf("neighbours  %s and %s%s\n", ue8m0_text(a, sizeof a, fl), ue8m0_text(b, sizeof b, ce),
               fl == ce ? " (|x| is a power of two, or clamped to the range)" : "");
    }
    char t[32];
    printf("result      %s (mode %s)\n", ue8m0_text(t, sizeof t, nvfp4_ue8m0_from_f32(x, chosen)),
           nvfp4_ue8m0_mode_name(chosen));
    printf("all modes\n");
    for (int m = 0; m < 4; m++)
        printf("  %-6s    %-15s %s\n", nvfp4_ue8m0_mode_name((nvfp4_ue8m0_mode)m),
               ue8m0_text(t, sizeof t, nvfp4_ue8m0_from_f32(x, (nvfp4_ue8m0_mode)m)), why[m]);
    return NVFP4_EXIT_OK;
}

/* ---- arguments -------------------------------------------------------- */

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return NVFP4_EXIT_OK;
    }
    const char *value = NULL, *format = "e2m1", *round = NULL, *mode = NULL, *plot = NULL;
    bool nosat = false, options_done = false;
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if (options_done || strncmp(argv[i], "--", 2) != 0) { /* "-1.5" and "-inf" are values */
            if (value) return cli_fail(CMD, "only one VALUE is accepted (got '%s' and '%s')", value, argv[i]);
            value = argv[i];
        } else if (strcmp(argv[i], "--") == 0) options_done = true;
        else if ((v = cli_option_value(argc, argv, &i, "--format", &missing))) format = v;
        else if ((v = cli_option_value(argc, argv, &i, "--round", &missing))) round = v;
        else if ((v = cli_option_value(argc, argv, &i, "--mode", &missing))) mode = v;
        else if ((v = cli_option_value(argc, argv, &i, "--plot", &missing))) plot = v;
        else if (missing) return cli_fail(CMD, "%s needs a value", argv[i]);
        else if (strcmp(argv[i], "--nosat") == 0) nosat = true;
        else return cli_fail(CMD, "unknown option '%s' (see nvfp4 explain --help)", argv[i]);
    }
    if (!value) return cli_fail(CMD, "missing VALUE (see nvfp4 explain --help)");
    float x;
    if (!cli_parse_f32(value, &x))
        return cli_fail(CMD, "cannot read '%s' as an fp32 value (decimal, hex float, inf, nan, or 0x + 8 hex digits)", value);
    bool is_e2m1 = strcmp(format, "e2m1") == 0, is_e4m3 = strcmp(format, "e4m3") == 0,
         is_ue8m0 = strcmp(format, "ue8m0") == 0;
    if (!is_e2m1 && !is_e4m3 && !is_ue8m0) return cli_fail(CMD, "unknown format '%s' (expected e2m1, e4m3 or ue8m0)", format);
    nvfp4_rounding r = NVFP4_RN;
    if (round && !nvfp4_rounding_parse(round, &r)) return cli_fail(CMD, "unknown rounding '%s' (expected rn, rz or sr)", round);
    if (round && is_ue8m0) return cli_fail(CMD, "--round does not apply to ue8m0; use --mode floor|rceil|ceil|even");
    if (is_e4m3 && r != NVFP4_RN) return cli_fail(CMD, "e4m3 is converted with rn only (as cuda_fp8.hpp does)");
    if (nosat && !is_e4m3) return cli_fail(CMD, "--nosat applies to e4m3 only");
    nvfp4_ue8m0_mode m = NVFP4_UE8M0_FLOOR;
    if (mode && !is_ue8m0) return cli_fail(CMD, "--mode applies to ue8m0 only");
    if (mode && !nvfp4_ue8m0_mode_parse(mode, &m))
        return cli_fail(CMD, "unknown ue8m0 mode '%s' (expected floor, rceil, ceil or even)", mode);
    if (plot && is_ue8m0) return cli_fail(CMD, "--plot draws e2m1 and e4m3 values; ue8m0 has no plot");
    if (plot && x != x) return cli_fail(CMD, "--plot: NaN has no place on the number line");
    print_input(value, x);
    int rc = is_e2m1 ? explain_e2m1(x, r) : is_e4m3 ? explain_e4m3(x, !nosat) : explain_ue8m0(x, m);
    if (!rc && plot) rc = cli_figure_value(CMD, plot, x, format, r);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_explain = {"explain", "explain how one value is encoded (neighbours, tie rule, SR odds)", run};
