/* cmd_identify.c - `nvfp4 identify`: which recipe, rounding and block shape
 * a kernel implements, by re-quantizing its input with every variant and
 * ranking them by matching bytes (docs/verify.md). */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "verify_cli.h"

static const char usage[] =
    "usage: nvfp4 identify --expected-input X --actual FILE [--columnwise] [--seed S] [--offset O] [--top N]\n"
    "                      [--json] [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "Quantizes the input X with every recipe x rounding (rn, and sr with seed S, offset O\n"
    "for the recipes that have it) x block shape (1x16, 16x16, 1x32) and ranks the variants\n"
    "by the fraction of the kernel's data and scale bytes they reproduce. FILE holds the\n"
    "kernel's output (data and/or scale or scale_swizzled; *_t with --columnwise; a single\n"
    ".npy is taken as data). X is an input file as for `nvfp4 quantize` (a bundle works: its\n"
    "tensor 'x'). --json prints the ranking as one JSON object.\n"
    "\n"
    "Exit: 0 a variant reproduces every byte, 1 none does (the nearest is named), 2 error.\n";

enum { OPT_INPUT = 256, OPT_ACTUAL, OPT_COL, OPT_SEED, OPT_OFFSET, OPT_TOP, OPT_SHAPE, OPT_DTYPE, OPT_JSON };
static const struct option longopts[] = {{"expected-input", required_argument, NULL, OPT_INPUT},
                                         {"actual", required_argument, NULL, OPT_ACTUAL},
                                         {"columnwise", no_argument, NULL, OPT_COL},
                                         {"seed", required_argument, NULL, OPT_SEED},
                                         {"offset", required_argument, NULL, OPT_OFFSET},
                                         {"top", required_argument, NULL, OPT_TOP},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"dtype", required_argument, NULL, OPT_DTYPE},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "identify";

static void print_json(const nvfp4_vrank *rank, size_t nvar, size_t top, bool colwise)
{
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "orientation", json_string(colwise ? "columnwise" : "rowwise"));
    for (size_t i = 0; i < nvar && i < top; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "variant", json_string(rank[i].name));
        json_object_set_new(j, "fraction", json_real(rank[i].fraction));
        json_object_set_new(j, "data_match", json_integer((json_int_t)rank[i].data_match));
        json_object_set_new(j, "data_total", json_integer((json_int_t)rank[i].data_total));
        json_object_set_new(j, "scale_match", json_integer((json_int_t)rank[i].scale_match));
        json_object_set_new(j, "scale_total", json_integer((json_int_t)rank[i].scale_total));
        json_array_append_new(arr, j);
    }
    json_object_set_new(o, "ranking", arr);
    json_object_set_new(o, "identified", rank[0].fraction == 1.0 ? json_string(rank[0].name) : json_null());
    char *s = json_dumps(o, JSON_INDENT(2));
    if (s) puts(s);
    free(s);
    json_decref(o);
}

static int identify(const cli_input *in, const nvfp4_tensor_set *act, const char *apath, bool colwise,
                    const nvfp4_quant_opts *base, size_t top, bool json)
{
    float *x = NULL;
    size_t n = in->rows * in->cols;
    if (in->dtype == NVFP4_DTYPE_BF16) {
        x = malloc(n * sizeof *x);
        if (!x) return cli_fail(CMD, "out of memory");
        const uint16_t *b = in->data;
        for (size_t i = 0; i < n; i++) x[i] = nvfp4_bf16_to_f32(b[i]);
    }
    vcli_variant *var = NULL;
    size_t nvar = 0;
    int rc = vcli_variants(CMD, x ? x : in->data, in->rows, in->cols, base, colwise, true, &var, &nvar);
    free(x);
    if (rc) return rc;
    if (nvar == 0) {
        vcli_variants_free(var, nvar);
        return cli_fail(CMD, "no recipe can quantize a %zu x %zu input", in->rows, in->cols);
    }
    vcli_view av;
    if ((rc = vcli_actual_view(CMD, apath, act, colwise, &var[0].view.v, NVFP4_VC_DATA, &av))) {
        vcli_variants_free(var, nvar);
        return rc;
    }
    if (!av.v.data && !av.v.scale && !av.v.scale_swizzled) {
        vcli_variants_free(var, nvar);
        return cli_fail(CMD, "%s holds no data%s, scale%s or scale_swizzled%s to identify", apath, colwise ? "_t" : "",
                        colwise ? "_t" : "", colwise ? "_t" : "");
    }
    nvfp4_vcandidate *cand = calloc(nvar, sizeof *cand);
    nvfp4_vrank *rank = calloc(nvar, sizeof *rank);
    if (!cand || !rank) {
        free(cand), free(rank);
        vcli_variants_free(var, nvar);
        return cli_fail(CMD, "out of memory");
    }
    for (size_t i = 0; i < nvar; i++) cand[i] = (nvfp4_vcandidate){var[i].name, var[i].view.v, false, NULL};
    nvfp4_identify_rank(&av.v, cand, nvar, rank);
    if (json) {
        print_json(rank, nvar, top, colwise);
        int v = rank[0].fraction == 1.0 ? NVFP4_EXIT_OK : NVFP4_EXIT_MISMATCH;
        free(cand);
        free(rank);
        vcli_variants_free(var, nvar);
        return v;
    }
    printf("%zu variants of %s (%zu x %zu), ranked by matching bytes of %s%s%s:\n", nvar,
           colwise ? "the columnwise output" : "the rowwise output", in->rows, in->cols, av.v.data ? "data" : "",
           av.v.data && (av.v.scale || av.v.scale_swizzled) ? " + " : "",
           av.v.scale ? "scale" : av.v.scale_swizzled ? "scale_swizzled" : "");
    printf("  %-4s %-24s %10s %18s %18s\n", "rank", "recipe rounding block", "match", "data bytes", "scale bytes");
    for (size_t i = 0; i < nvar && i < top; i++)
        printf("  %-4zu %-24s %9.4f%% %8zu/%-9zu %8zu/%-9zu\n", i + 1, rank[i].name, 100.0 * rank[i].fraction,
               rank[i].data_match, rank[i].data_total, rank[i].scale_match, rank[i].scale_total);
    int verdict;
    if (rank[0].fraction == 1.0) {
        size_t ties = 1;
        while (ties < nvar && rank[ties].fraction == 1.0) ties++;
        printf("identified: the kernel implements %s", rank[0].name);
        if (ties > 1) printf(" (and %zu other variants give the same bytes on this input)", ties - 1);
        printf("\n");
        verdict = NVFP4_EXIT_OK;
    } else {
        printf("not identified: no variant reproduces every byte; the nearest is %s with %.4f%% (%zu of %zu bytes "
               "differ); run `nvfp4 verify` against its golden bundle to see why\n",
               rank[0].name, 100.0 * rank[0].fraction,
               rank[0].data_total + rank[0].scale_total - rank[0].data_match - rank[0].scale_match,
               rank[0].data_total + rank[0].scale_total);
        verdict = NVFP4_EXIT_MISMATCH;
    }
    free(cand);
    free(rank);
    vcli_variants_free(var, nvar);
    return verdict;
}

static int run(int argc, char **argv)
{
    const char *input = NULL, *actual = NULL, *shape = NULL, *dtype = NULL;
    bool colwise = false, json = false;
    size_t top = 10;
    nvfp4_quant_opts base;
    nvfp4_quant_opts_init(&base);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_INPUT: input = optarg; break;
        case OPT_ACTUAL: actual = optarg; break;
        case OPT_COL: colwise = true; break;
        case OPT_SEED:
            if (!cli_parse_u64(optarg, &base.seed)) return cli_fail(CMD, "bad --seed '%s'", optarg);
            break;
        case OPT_OFFSET:
            if (!cli_parse_u64(optarg, &base.offset)) return cli_fail(CMD, "bad --offset '%s'", optarg);
            break;
        case OPT_TOP:
            if (!cli_parse_size(optarg, &top) || top == 0) return cli_fail(CMD, "bad --top '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_JSON: json = true; break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default: return cli_fail(CMD, "unknown option '%s'; see nvfp4 identify --help", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!input || !actual) return cli_fail(CMD, "--expected-input X and --actual FILE are required");
    cli_input in;
    int rc = cli_input_load(CMD, input, shape, dtype, &in);
    if (rc) {
        cli_input_free(&in);
        return rc;
    }
    nvfp4_tensor_set act;
    nvfp4_tset_init(&act);
    nvfp4_error err;
    if (nvfp4_tset_read(actual, &act, &err)) rc = cli_fail(CMD, "%s", err.message);
    else rc = identify(&in, &act, actual, colwise, &base, top, json);
    nvfp4_tset_free(&act);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_identify = {"identify", "rank every recipe x rounding x block by matching bytes", run};
