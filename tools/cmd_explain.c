/* cmd_explain.c - `nvfp4 explain VALUE`: how one fp32 value becomes an E2M1,
 * E4M3 or UE8M0 code. The text is the library's (nvfp4_explain, src/explain.c,
 * shared with the Python package); this file reads the arguments and draws
 * the --plot figure. */
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
    nvfp4_explain_format f = is_e2m1 ? NVFP4_EXPLAIN_E2M1 : is_e4m3 ? NVFP4_EXPLAIN_E4M3 : NVFP4_EXPLAIN_UE8M0;
    nvfp4_strbuf text = {0};
    nvfp4_error err;
    if (nvfp4_explain(value, x, f, r, !nosat, m, &text, &err)) {
        nvfp4_strbuf_free(&text);
        return cli_fail(CMD, "%s", err.message);
    }
    fputs(text.data, stdout);
    nvfp4_strbuf_free(&text);
    return plot ? cli_figure_value(CMD, plot, x, format, r) : NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_explain = {"explain", "explain how one value is encoded (neighbours, tie rule, SR odds)", run};
