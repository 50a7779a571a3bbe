/* cmd_table.c - `nvfp4 table`: every code point of E2M1, E4M3 and UE8M0
 * with its bit fields and value (docs/semantics.md, "Scalar codecs"). */
#include <string.h>

#include "cli.h"
#include "cli_figures.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

static const char *const CMD = "table";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nvfp4 table [--format e2m1|e4m3|ue8m0] [--plot FILE] | --recipes | --mutants\n"
            "\n"
            "Prints every code point of the format with its bits and value (all three\n"
            "formats when --format is not given). Values print as the shortest decimal\n"
            "that reads back as the same fp32.\n"
            "\n"
            "  --format F   e2m1 (FP4, 16 codes), e4m3 (FP8 block scale, 256 codes) or\n"
            "               ue8m0 (MX power-of-two scale, 256 codes)\n"
            "  --plot FILE  e2m1, e4m3: also draw the values on the number line as a PNG\n"
            "               (gnuplot): the interval of inputs that rounds to each value,\n"
            "               the tie points and the even code each goes to, saturation;\n"
            "               for e4m3 the subnormal and normal ranges on a log axis\n"
            "  --recipes    list the named recipes: element and scale formats, default\n"
            "               block, global amax, SR support, and the implementation each\n"
            "               reproduces\n"
            "  --mutants    list the mutant catalog (docs/verify.md): plausible kernel\n"
            "               bugs, each with the step it replaces, the formula it computes,\n"
            "               where it comes from and the recipes it mutates\n"
            "  -h, --help   this text\n");
}

static void print_value(float v)
{
    char buf[48];
    cli_format_f32(buf, sizeof buf, v);
    if (v != v) strcpy(buf, "NaN");
    printf("%s", buf);
}

static void table_e2m1(void)
{
    printf("E2M1 (FP4): bits s ee m, exponent bias 1, no Inf, no NaN; max 6\n");
    printf("code  s ee m  kind       value\n");
    for (unsigned c = 0; c < 16; c++) {
        unsigned e = (c >> 1) & 3u, m = c & 1u;
        const char *kind = (c & 7u) == 0 ? "zero" : (e == 0 ? "subnormal" : ((c & 7u) == 7u ? "max" : "normal"));
        printf("0x%X   %u %u%u %u  %-9s  ", c, c >> 3, e >> 1, e & 1u, m, kind);
        print_value(nvfp4_e2m1_to_f32((uint8_t)c));
        printf("\n");
    }
}

static void table_e4m3(void)
{
    printf("E4M3 (FP8 e4m3fn): bits s eeee mmm, exponent bias 7, no Inf; 0x7F/0xFF NaN; max 448\n");
    printf("code  s eeee mmm  kind       value\n");
    for (unsigned c = 0; c < 256; c++) {
        unsigned e = (c >> 3) & 15u, m = c & 7u;
        const char *kind = (c & 0x7Fu) == 0x7Fu ? "NaN"
                           : (c & 0x7Fu) == 0x7Eu ? "max"
                           : (c & 0x7Fu) == 0 ? "zero"
                           : e == 0 ? "subnormal" : "normal";
        printf("0x%02X  %u %u%u%u%u %u%u%u  %-9s  ", c, c >> 7, (e >> 3) & 1u, (e >> 2) & 1u, (e >> 1) & 1u, e & 1u,
               (m >> 2) & 1u, (m >> 1) & 1u, m & 1u, kind);
        print_value(nvfp4_e4m3_to_f32((uint8_t)c));
        printf("\n");
    }
}

static void table_ue8m0(void)
{
    printf("UE8M0 (MX scale): bits eeeeeeee, value 2^(code-127), no sign, no zero; 0xFF NaN\n");
    printf("code  bits      power     value\n");
    for (unsigned c = 0; c < 256; c++) {
        printf("0x%02X  ", c);
        for (int b = 7; b >= 0; b--) putchar('0' + (int)((c >> b) & 1u));
        if (c == 0xFFu) {
            printf("  NaN       NaN\n");
            continue;
        }
        char pw[16];
        snprintf(pw, sizeof pw, "2^%d", (int)c - 127);
        printf("  %-8s  ", pw);
        print_value(nvfp4_ue8m0_to_f32((uint8_t)c));
        printf("\n");
    }
}

/* The name column is as wide as the longest recipe name (at least 12). */
static int recipe_name_width(void)
{
    size_t w = 12;
    for (size_t i = 0; i < nvfp4_recipe_count(); i++) {
        size_t n = strlen(nvfp4_recipe_get_info(nvfp4_recipe_at(i))->name);
        if (n > w) w = n;
    }
    return (int)w;
}

static void table_recipes(void)
{
    int w = recipe_name_width();
    printf("%-*s %-5s %-6s %-6s %-5s %-3s  %s\n", w, "recipe", "elem", "scale", "block", "amax", "sr", "reproduces");
    for (size_t i = 0; i < nvfp4_recipe_count(); i++) {
        const nvfp4_recipe_info *r = nvfp4_recipe_get_info(nvfp4_recipe_at(i));
        printf("%-*s %-5s %-6s %-6s %-5s %-3s  %s\n", w, r->name, r->elem == NVFP4_ELEM_E2M1 ? "e2m1" : "e4m3",
               nvfp4_scale_format_name(r->scale_format), nvfp4_block_name(r->default_block),
               r->has_global_amax ? "yes" : "no", r->supports_sr ? "yes" : "no", r->provenance);
        printf("%-*s %s\n", w, "", r->summary);
    }
}

static void table_mutants(void)
{
    size_t n = nvfp4_mutant_count();
    printf("%zu mutants (plausible kernel bugs; `nvfp4 golden --mutants` shows which golden case kills each)\n", n);
    for (size_t i = 0; i < n; i++) {
        const nvfp4_mutant_info *m = nvfp4_mutant_at(i);
        printf("%-30s %-14s %s\n", m->name, m->step, m->formula);
        printf("%-30s %-14s from: %s\n", "", "", m->source);
        printf("%-30s %-14s recipes: %s%s%s%s%s%s%s\n", "", "", m->recipes,
               m->needs & NVFP4_MUTANT_NEEDS_RN ? "; with RN" : "", m->needs & NVFP4_MUTANT_NEEDS_SR ? "; with SR" : "",
               m->needs & NVFP4_MUTANT_NEEDS_RHT ? "; with the RHT" : "",
               m->needs & NVFP4_MUTANT_NEEDS_2D ? "; with 16x16 blocks" : "",
               m->needs & NVFP4_MUTANT_NEEDS_KV_V ? "; against goldens in layout trtllm-kv-v (verify)" : "",
               m->needs & NVFP4_MUTANT_NEEDS_128X4 ? "; against goldens in layout 128x4" : "");
    }
    size_t ng = nvfp4_grouped_mutant_count();
    printf("%zu grouped mutants (nvfp4 quantize --groups; verify names them, docs/verify.md 3d)\n", ng);
    for (size_t i = 0; i < ng; i++) {
        const nvfp4_grouped_mutant_info *m = nvfp4_grouped_mutant_at(i);
        printf("%-30s %-14s %s\n", m->name, "grouping", m->summary);
        printf("%-30s %-14s from: %s\n", "", "", m->origin);
    }
}

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return NVFP4_EXIT_OK;
    }
    const char *format = NULL, *plot = NULL;
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v = cli_option_value(argc, argv, &i, "--plot", &missing);
        if (v) {
            plot = v;
        } else if (missing) {
            return cli_fail(CMD, "--plot needs a file name");
        } else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 >= argc) return cli_fail(CMD, "--format needs a value (e2m1, e4m3 or ue8m0)");
            format = cli_value_name("--format", argv[++i]);
        } else if (strcmp(argv[i], "--recipes") == 0) {
            table_recipes();
            return NVFP4_EXIT_OK;
        } else if (strcmp(argv[i], "--mutants") == 0) {
            table_mutants();
            return NVFP4_EXIT_OK;
        } else if (strncmp(argv[i], "--format=", 9) == 0) {
            format = cli_value_name("--format", argv[i] + 9);
        } else {
            return cli_fail(CMD, "unexpected argument '%s' (see nvfp4 table --help)", argv[i]);
        }
    }
    if (plot && (!format || (strcmp(format, "e2m1") != 0 && strcmp(format, "e4m3") != 0)))
        return cli_fail(CMD, "--plot needs --format e2m1 or --format e4m3");
    if (plot) {
        int rc = cli_figure_table(CMD, format, plot);
        if (rc) return rc;
    }
    if (!format) {
        table_e2m1();
        printf("\n");
        table_e4m3();
        printf("\n");
        table_ue8m0();
    } else if (strcmp(format, "e2m1") == 0) {
        table_e2m1();
    } else if (strcmp(format, "e4m3") == 0) {
        table_e4m3();
    } else if (strcmp(format, "ue8m0") == 0) {
        table_ue8m0();
    } else {
        return cli_fail(CMD, "unknown format '%s' (expected e2m1, e4m3 or ue8m0)", format);
    }
    return NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_table = {"table", "print every code point of E2M1, E4M3 or UE8M0", run};
