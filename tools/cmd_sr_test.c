/* cmd_sr_test.c - `nvfp4 sr-test`: statistical (and optionally bit-exact)
 * test of a stochastic-rounding kernel from N of its outputs for one input
 * (docs/verify.md; the tests are described in src/verify/sr.c). The report
 * is the library's (nvfp4_sr_test_report); this file reads the arguments. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "nvfp4/verify.h"

static const char usage[] =
    "usage: nvfp4 sr-test --input X --samples FILE... [--alpha A] [--recipe R] [--block B] [--columnwise]\n"
    "                     [--bitexact --seed S --offset O [--offset-step D]] [--json] [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "FILE... are N outputs of an SR kernel for the same input X (each holds 'data', or\n"
    "'data_t' with --columnwise, or is a single .npy of codes; 'scale' if present must equal\n"
    "the recipe's scales). The scaled value y of every element comes from recipe R (default\n"
    "te) with round-to-nearest scales. Tests, with family-wise false-alarm rate A (default\n"
    "0.001, split A/4 per test):\n"
    "  1. every element's round-up count against Binomial(N, p), p = floor(256*frac)/256 the\n"
    "     exact probability of the 8-bit SR rule; exact two-sided tests (GSL), Holm-corrected;\n"
    "  2. unbiasedness of the mean (value-weighted z test);\n"
    "  3. independence across samples (runs test per element, conditional on its count);\n"
    "  4. independence of adjacent elements within a sample (hypergeometric, conditional).\n"
    "A rejection names the SR rule seen instead: no randomness (RN, RZ, a threshold, the same\n"
    "bits every call), one random byte shared by a block (or smaller group), more than 8 random\n"
    "bits (round-ups where floor(256*frac) = 0, rates that fit p = frac), or a bias. Each cause\n"
    "is at step element-rounding and proven only when its evidence (cited) has probability 0\n"
    "under the 8-bit rule; a statistical finding is consistent.\n"
    "--bitexact: the kernel follows the Philox contract (docs/semantics.md: SR bit contract); sample k must equal\n"
    "the reference with seed S and offset O + k*D (D default 1; columnwise adds 1, or 2 for\n"
    "1x32 blocks) byte for byte; on mismatch the byte order it used is inferred.\n"
    "--json prints the statistics, the rule named (\"rule\": contract, more-bits, shared-byte,\n"
    "deterministic, dependent, biased) and the causes (step, status, evidence) as one JSON object.\n"
    "\n"
    "Exit: 0 pass, 1 a test rejects (the cause is named), 2 usage or input error.\n";

/* the recipe and block that give the scales, the orientation, and the SR contract's seed and offset */
#define QUANT_ROWS (CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_BLOCK) | CLI_QUANT(NVFP4_OPTION_COLUMNWISE) | \
                    CLI_QUANT(NVFP4_OPTION_SEED) | CLI_QUANT(NVFP4_OPTION_OFFSET))

enum { OPT_INPUT = 256, OPT_SAMPLES, OPT_ALPHA, OPT_BITEXACT, OPT_STEP, OPT_SHAPE, OPT_DTYPE, OPT_JSON };
static const struct option own_longopts[] = {{"input", required_argument, NULL, OPT_INPUT},
                                             {"samples", required_argument, NULL, OPT_SAMPLES},
                                             {"alpha", required_argument, NULL, OPT_ALPHA},
                                             {"bitexact", no_argument, NULL, OPT_BITEXACT},
                                             {"offset-step", required_argument, NULL, OPT_STEP},
                                             {"shape", required_argument, NULL, OPT_SHAPE},
                                             {"dtype", required_argument, NULL, OPT_DTYPE},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};

static const char *CMD = "sr-test";

static int run(int argc, char **argv)
{
    const char *input = NULL, *shape = NULL, *dtype = NULL;
    const char **samples = calloc((size_t)argc + 1, sizeof *samples);
    size_t ns = 0;
    nvfp4_sr_input in;
    memset(&in, 0, sizeof in);
    in.alpha = 0.001;
    in.offset_step = 1;
    bool json = false;
    nvfp4_options g;
    nvfp4_options_init(&g);
    struct option longopts[24];
    cli_quant_longopts(longopts, 24, own_longopts, QUANT_ROWS);
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    if (!samples) return cli_fail(CMD, "out of memory");
    while (!rc && (c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_INPUT: input = optarg; break;
        case OPT_SAMPLES:
            samples[ns++] = optarg;
            while (optind < argc && argv[optind][0] != '-') samples[ns++] = argv[optind++];
            break;
        case OPT_ALPHA: {
            char *end;
            in.alpha = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(in.alpha > 0.0 && in.alpha < 1.0))
                rc = cli_fail(CMD, "bad --alpha '%s' (0 < A < 1)", optarg);
            break;
        }
        case OPT_BITEXACT: in.bitexact = true; break;
        case OPT_STEP:
            if (!cli_parse_u64(optarg, &in.offset_step)) rc = cli_fail(CMD, "bad --offset-step '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_JSON: json = true; break;
        case 'h': fputs(usage, stdout); free(samples); return NVFP4_EXIT_OK;
        default:
            if (cli_quant_is(c)) rc = cli_quant_set(CMD, c, optarg, &g);
            else rc = cli_fail(CMD, "unknown option '%s'; see nvfp4 sr-test --help", argv[optind - 1]);
        }
    }
    /* the orientation tested is the one named; the quantization giving the scales is RN */
    bool colwise = nvfp4_options_named(&g, NVFP4_OPTION_COLUMNWISE), have_seed = nvfp4_options_named(&g, NVFP4_OPTION_SEED);
    in.seed = g.quant.seed;
    in.offset = g.quant.offset;
    const nvfp4_quant_opts o = g.quant;
    if (!rc && optind < argc) rc = cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!rc && (!input || ns == 0)) rc = cli_fail(CMD, "--input X and --samples FILE... are required");
    if (!rc && in.bitexact && !have_seed) rc = cli_fail(CMD, "--bitexact needs --seed S (and --offset O)");
    if (rc) {
        free(samples);
        return rc;
    }
    cli_input x;
    nvfp4_tensor_set *sets = calloc(ns, sizeof *sets);
    const nvfp4_tensor_set **sp = calloc(ns, sizeof *sp);
    size_t nread = 0;
    rc = sets && sp ? cli_input_load(CMD, input, shape, dtype, &x) : cli_fail(CMD, "out of memory");
    nvfp4_error err;
    for (; !rc && nread < ns; nread++) {
        nvfp4_tset_init(&sets[nread]);
        sp[nread] = &sets[nread];
        if (nvfp4_tset_read(samples[nread], &sets[nread], &err)) rc = cli_fail(CMD, "%s", err.message);
    }
    if (!rc) {
        nvfp4_sr_test_opts so;
        nvfp4_sr_test_opts_init(&so);
        so.quant = o;
        so.columnwise = colwise;
        so.alpha = in.alpha;
        so.bitexact = in.bitexact;
        so.seed = in.seed;
        so.offset = in.offset;
        so.offset_step = in.offset_step;
        so.sample_names = (const char *const *)samples;
        so.what = json ? NVFP4_REPORT_JSON : NVFP4_REPORT_TEXT;
        nvfp4_report rep;
        if (nvfp4_sr_test_report(x.data, x.dtype, x.rows, x.cols, sp, ns, &so, &rep, &err)) {
            rc = cli_fail(CMD, "%s", err.message);
        } else if (rep.note) {
            fprintf(stderr, "nvfp4 sr-test: %s\n", rep.note);
            rc = rep.verdict;
        } else {
            if (json) puts(rep.json);
            else fputs(rep.text, stdout);
            rc = rep.verdict;
        }
        nvfp4_report_free(&rep);
    }
    for (size_t i = 0; i < nread; i++) nvfp4_tset_free(&sets[i]);
    free(sets);
    free(sp);
    if (sets && sp) cli_input_free(&x);
    free(samples);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_sr_test = {"sr-test", "test an SR kernel: binomial, bias and independence tests", run};
