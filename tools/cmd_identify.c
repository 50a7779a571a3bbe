/* cmd_identify.c - `nvfp4 identify`: which recipe, rounding and block shape
 * a kernel implements, by re-quantizing its input with every variant and
 * ranking them by matching bytes (docs/verify.md). The ranking and its text
 * are the library's (nvfp4_identify_report); this file reads the arguments. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "nvfp4/verify.h"
#include "verify_cli.h"

static const char usage[] =
    "usage: nvfp4 identify --expected-input X --actual FILE [--rowwise|--columnwise] [--block B]\n"
    "                      [--rht] [--rht-signs te|seed:N|none] [--rht-fp32] [--pad]\n"
    "                      [--seed S] [--offset O] [--no-mutants] [--top N] [--json]\n"
    "                      [--shape RxC --dtype f32|bf16] [--witness FILE]\n"
    "\n"
    "Quantizes the input X with every recipe x rounding (rn, and sr with seed S, offset O\n"
    "for the recipes that have it) x block shape (1x16, 16x16, 1x32, or only --block B),\n"
    "with the options of `nvfp4 quantize` (--rht implies --columnwise), and with every\n"
    "catalogued mutant of each recipe at its default block (nvfp4 table --mutants; not\n"
    "with --no-mutants), and ranks the variants by the fraction of the kernel's data and\n"
    "scale bytes they reproduce. FILE holds the kernel's output (data and/or scale or\n"
    "scale_swizzled; *_t for the columnwise output, which is used when FILE has no rowwise\n"
    "component; a single .npy is taken as data). X is an input file as for `nvfp4 quantize`\n"
    "(a bundle works: its tensor 'x'). Unless --no-mutants, it also infers a chain: a base\n"
    "recipe plus catalogued deviations, at most one per step (amax, global-scale, rht,\n"
    "block-scale, encode-factor, element-rounding, special-values, layout), searched step by\n"
    "step, with each step proven, ambiguous, best fit or not explained (docs/verify.md).\n"
    "--json prints the ranking and the chain as one JSON object.\n"
    "\n"
    "--witness FILE: when several variants reproduce every byte, search for the smallest\n"
    "input on which they give pairwise different bytes and write it to FILE as a golden\n"
    "bundle (docs/verify.md, \"Witnesses\"); the report says what it separates.\n"
    "\n"
    "Exit: 0 a variant or a chain reproduces every byte, 1 none does (the nearest is named),\n"
    "2 error.\n";

/* the options of `nvfp4 quantize` but the recipe and rounding, which identify varies */
#define QUANT_ROWS (CLI_QUANT_ALL & ~(CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_ROUND) | \
                                     CLI_QUANT(NVFP4_OPTION_GLOBAL_SCALE_INVERTED)))

enum { OPT_INPUT = 256, OPT_ACTUAL, OPT_TOP, OPT_SHAPE, OPT_DTYPE, OPT_JSON, OPT_NO_MUTANTS, OPT_WITNESS };
static const struct option own_longopts[] = {{"expected-input", required_argument, NULL, OPT_INPUT},
                                             {"actual", required_argument, NULL, OPT_ACTUAL},
                                             {"no-mutants", no_argument, NULL, OPT_NO_MUTANTS},
                                             {"top", required_argument, NULL, OPT_TOP},
                                             {"shape", required_argument, NULL, OPT_SHAPE},
                                             {"dtype", required_argument, NULL, OPT_DTYPE},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"witness", required_argument, NULL, OPT_WITNESS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};

static const char *CMD = "identify";

static int run(int argc, char **argv)
{
    const char *input = NULL, *actual = NULL, *shape = NULL, *dtype = NULL, *witness = NULL;
    bool json = false, mutants = true;
    size_t top = 10;
    nvfp4_options g;
    nvfp4_options_init(&g);
    struct option longopts[32];
    cli_quant_longopts(longopts, 32, own_longopts, QUANT_ROWS);
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_INPUT: input = optarg; break;
        case OPT_ACTUAL: actual = optarg; break;
        case OPT_NO_MUTANTS: mutants = false; break;
        case OPT_TOP:
            if (!cli_parse_size(optarg, &top) || top == 0) return cli_fail(CMD, "bad --top '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_WITNESS: witness = optarg; break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default:
            if (!cli_quant_is(c)) return cli_fail(CMD, "unknown option '%s'; see nvfp4 identify --help", argv[optind - 1]);
            if ((rc = cli_quant_set(CMD, c, optarg, &g))) return rc;
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!input || !actual) return cli_fail(CMD, "--expected-input X and --actual FILE are required");
    bool rowwise = nvfp4_options_named(&g, NVFP4_OPTION_ROWWISE);
    /* one orientation is compared: --rowwise and --columnwise do not make a set here */
    if (rowwise && (nvfp4_options_named(&g, NVFP4_OPTION_COLUMNWISE) || g.quant.rht))
        return cli_fail(CMD, "--rowwise excludes --columnwise and --rht (the RHT is on the columnwise output)");
    if ((rc = cli_quant_finish(CMD, &g, NVFP4_OPTIONS_RHT_SELECTS_COLUMNWISE))) return rc;
    const nvfp4_quant_opts base = g.quant;
    bool colwise = base.columnwise;
    cli_input in;
    rc = cli_input_load(CMD, input, shape, dtype, &in);
    if (rc) {
        cli_input_free(&in);
        return rc;
    }
    nvfp4_tensor_set act;
    nvfp4_tset_init(&act);
    nvfp4_error err;
    if (nvfp4_tset_read(actual, &act, &err)) {
        rc = cli_fail(CMD, "%s", err.message);
    } else {
        nvfp4_identify_opts io;
        nvfp4_identify_opts_init(&io);
        io.quant = base;
        io.orientation = colwise ? 1 : rowwise ? 0 : -1; /* -1: columnwise for a file of *_t only */
        io.mutants = mutants;
        io.top = top;
        io.actual_name = actual;
        io.what = json ? NVFP4_REPORT_JSON : NVFP4_REPORT_TEXT;
        nvfp4_report rep;
        if (nvfp4_identify_report(in.data, in.dtype, in.rows, in.cols, &act, &io, &rep, &err)) {
            rc = cli_fail(CMD, "%s", err.message);
        } else {
            if (!json) fputs(rep.text, stdout);
            else if (!witness) puts(rep.json);
            rc = rep.verdict;
            if (witness) {
                nvfp4_witness_opts wo;
                nvfp4_witness_opts_init(&wo);
                wo.quant = base, wo.orientation = io.orientation, wo.identify = true, wo.mutants = mutants;
                wo.path = witness, wo.actual_name = actual;
                if (vcli_witness(CMD, in.data, in.dtype, in.rows, in.cols, &act, &wo, json ? rep.json : NULL))
                    rc = NVFP4_EXIT_USAGE;
            }
        }
        nvfp4_report_free(&rep);
    }
    nvfp4_tset_free(&act);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_identify = {"identify", "rank every recipe x rounding x block by matching bytes", run};
