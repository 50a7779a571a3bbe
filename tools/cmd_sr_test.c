/* cmd_sr_test.c - `nvfp4 sr-test`: statistical (and optionally bit-exact)
 * test of a stochastic-rounding kernel from N of its outputs for one input
 * (docs/verify.md; the tests are described in src/verify/sr.c). */
#include <getopt.h>
#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "verify_cli.h"

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
    "--bitexact: the kernel follows the Philox contract (docs/semantics.md: SR bit contract); sample k must equal\n"
    "the reference with seed S and offset O + k*D (D default 1; columnwise adds 1, or 2 for\n"
    "1x32 blocks) byte for byte; on mismatch the byte order it used is inferred.\n"
    "--json prints the statistics and causes as one JSON object.\n"
    "\n"
    "Exit: 0 pass, 1 a test rejects (the cause is named), 2 usage or input error.\n";

enum { OPT_INPUT = 256, OPT_SAMPLES, OPT_ALPHA, OPT_RECIPE, OPT_BLOCK, OPT_COL, OPT_BITEXACT, OPT_SEED, OPT_OFFSET,
       OPT_STEP, OPT_SHAPE, OPT_DTYPE, OPT_JSON };
static const struct option longopts[] = {{"input", required_argument, NULL, OPT_INPUT},
                                         {"samples", required_argument, NULL, OPT_SAMPLES},
                                         {"alpha", required_argument, NULL, OPT_ALPHA},
                                         {"recipe", required_argument, NULL, OPT_RECIPE},
                                         {"block", required_argument, NULL, OPT_BLOCK},
                                         {"columnwise", no_argument, NULL, OPT_COL},
                                         {"bitexact", no_argument, NULL, OPT_BITEXACT},
                                         {"seed", required_argument, NULL, OPT_SEED},
                                         {"offset", required_argument, NULL, OPT_OFFSET},
                                         {"offset-step", required_argument, NULL, OPT_STEP},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"dtype", required_argument, NULL, OPT_DTYPE},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "sr-test";

static int load_sample(const char *path, const nvfp4_quantized *q, bool colwise, const vcli_view *geom, size_t n,
                       uint8_t *codes)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    if (nvfp4_tset_read(path, &s, &err)) return cli_fail(CMD, "%s", err.message);
    vcli_view av;
    int rc = vcli_actual_view(CMD, path, &s, colwise, &geom->v, NVFP4_VC_DATA, &av);
    if (!rc && !av.v.data) rc = cli_fail(CMD, "%s: no data%s component", path, colwise ? "_t" : "");
    if (!rc && av.v.data_bytes != geom->v.data_bytes)
        rc = cli_fail(CMD, "%s: data has %zu bytes, the input's shape needs %zu", path, av.v.data_bytes,
                      geom->v.data_bytes);
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    if (!rc && av.v.scale &&
        (av.v.scale_bytes != geom->v.scale_bytes || memcmp(av.v.scale, t->scale, geom->v.scale_bytes) != 0)) {
        fprintf(stderr, "nvfp4 sr-test: %s: the block scales differ from recipe %s's: SR must leave the scales alone "
                        "(run nvfp4 verify --component scale)\n", path, q->opts.recipe);
        rc = NVFP4_EXIT_MISMATCH;
    }
    if (!rc)
        for (size_t i = 0; i < n; i++) codes[i] = nvfp4_unpack(av.v.data, i);
    nvfp4_tset_free(&s);
    return rc;
}

static int report_json(const nvfp4_sr_input *in, const nvfp4_sr_report *rep)
{
    json_t *o = json_object();
#define JI(k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
#define JR(k, v) json_object_set_new(o, k, json_real(v))
    JI("elements", in->n);
    JI("samples", in->samples);
    JR("alpha", in->alpha);
    JI("tested", rep->tested);
    JI("invalid", rep->invalid);
    JI("impossible", rep->impossible);
    JI("binomial_rejected", rep->rejected);
    JI("binomial_rejected_high", rep->rejected_high);
    JI("binomial_rejected_low", rep->rejected_low);
    JR("binomial_min_pvalue", rep->min_pvalue);
    JR("mean_bias_per_element", rep->bias_per_element);
    JR("mean_z", rep->mean_z);
    JR("mean_pvalue", rep->mean_pvalue);
    JR("runs_z", rep->serial_z);
    JR("runs_pvalue", rep->serial_pvalue);
    JR("neighbour_z", rep->neighbour_z);
    JR("neighbour_pvalue", rep->neighbour_pvalue);
    JI("identical_consecutive_samples", rep->identical_pairs);
    if (in->bitexact) {
        JI("bitexact_mismatches", rep->bitexact_mismatches);
        JI("bitexact_total", rep->bitexact_total);
    }
#undef JI
#undef JR
    json_t *cs = json_array();
    for (size_t i = 0; i < rep->n_causes; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "cause", json_string(nvfp4_cause_name(rep->causes[i].cause)));
        json_object_set_new(j, "line", json_string(rep->causes[i].line));
        json_array_append_new(cs, j);
    }
    json_object_set_new(o, "causes", cs);
    json_object_set_new(o, "verdict", json_string(rep->pass ? "pass" : "fail"));
    char *s = json_dumps(o, JSON_INDENT(2));
    if (s) puts(s);
    free(s);
    json_decref(o);
    return rep->pass ? NVFP4_EXIT_OK : NVFP4_EXIT_MISMATCH;
}

/* A computed statistic as people write it (no exponent between 1e-5 and 1e6). */
static const char *num(double x, int significant, char buf[32])
{
    return nvfp4_format_f64_digits(x, significant, buf, 32);
}

static int report(const nvfp4_sr_input *in, const nvfp4_sr_report *rep)
{
    char a[32], b[32], c[32];
    printf("sr-test: %zu elements, %zu samples, %zu elements with 0 < p < 1; family-wise alpha %s\n", in->n,
           in->samples, rep->tested, num(in->alpha, 3, a));
    printf("  per-element binomial tests (Holm, alpha/4): %zu rejected (%zu too often, %zu too rarely); smallest "
           "p-value %s at element %zu\n",
           rep->rejected, rep->rejected_high, rep->rejected_low, num(rep->min_pvalue, 3, a), rep->worst_element);
    printf("  codes that are not a neighbour of y: %zu; deterministic elements rounded away: %zu\n", rep->invalid,
           rep->impossible);
    printf("  mean: bias %s%s scaled units per element, z = %.2f, p = %s\n", signbit(rep->bias_per_element) ? "" : "+",
           num(rep->bias_per_element, 4, b), rep->mean_z, num(rep->mean_pvalue, 3, c));
    printf("  independence across samples (runs): z = %.2f, p = %s; identical consecutive samples: %zu\n",
           rep->serial_z, num(rep->serial_pvalue, 3, a), rep->identical_pairs);
    printf("  independence of adjacent elements: z = %.2f, p = %s\n", rep->neighbour_z, num(rep->neighbour_pvalue, 3, a));
    if (in->bitexact)
        printf("  bit-exact (seed %llu, offset %llu + k*%llu): %zu of %zu codes differ\n",
               (unsigned long long)in->seed, (unsigned long long)in->offset, (unsigned long long)in->offset_step,
               rep->bitexact_mismatches, rep->bitexact_total);
    for (size_t i = 0; i < rep->n_causes; i++)
        printf("cause %s: %s\n", nvfp4_cause_name(rep->causes[i].cause), rep->causes[i].line);
    printf("verdict: %s\n", rep->pass ? "PASS" : "FAIL");
    return rep->pass ? NVFP4_EXIT_OK : NVFP4_EXIT_MISMATCH;
}

static int run(int argc, char **argv)
{
    const char *input = NULL, *shape = NULL, *dtype = NULL;
    const char **samples = calloc((size_t)argc + 1, sizeof *samples);
    size_t ns = 0;
    nvfp4_sr_input in;
    memset(&in, 0, sizeof in);
    in.alpha = 0.001;
    in.offset_step = 1;
    bool colwise = false, have_seed = false, json = false;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    if (!samples) return cli_fail(CMD, "out of memory");
    while (!rc && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        case OPT_RECIPE: o.recipe = optarg; break;
        case OPT_BLOCK:
            if (!nvfp4_block_parse(optarg, &o.block)) rc = cli_fail(CMD, "bad --block '%s'", optarg);
            break;
        case OPT_COL: colwise = true; break;
        case OPT_BITEXACT: in.bitexact = true; break;
        case OPT_SEED:
            if (!cli_parse_u64(optarg, &in.seed)) rc = cli_fail(CMD, "bad --seed '%s'", optarg);
            have_seed = true;
            break;
        case OPT_OFFSET:
            if (!cli_parse_u64(optarg, &in.offset)) rc = cli_fail(CMD, "bad --offset '%s'", optarg);
            break;
        case OPT_STEP:
            if (!cli_parse_u64(optarg, &in.offset_step)) rc = cli_fail(CMD, "bad --offset-step '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_JSON: json = true; break;
        case 'h': fputs(usage, stdout); free(samples); return NVFP4_EXIT_OK;
        default: rc = cli_fail(CMD, "unknown option '%s'; see nvfp4 sr-test --help", argv[optind - 1]);
        }
    }
    if (!rc && optind < argc) rc = cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!rc && (!input || ns == 0)) rc = cli_fail(CMD, "--input X and --samples FILE... are required");
    if (!rc && in.bitexact && !have_seed) rc = cli_fail(CMD, "--bitexact needs --seed S (and --offset O)");
    if (rc) {
        free(samples);
        return rc;
    }
    cli_input x;
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    vcli_view geom;
    memset(&geom, 0, sizeof geom);
    float *xo = NULL, *y = NULL;
    uint8_t *codes = NULL;
    const uint8_t **cp = NULL;
    rc = cli_input_load(CMD, input, shape, dtype, &x);
    nvfp4_error err;
    o.rowwise = !colwise;
    o.columnwise = colwise;
    if (!rc && nvfp4_quantize(x.data, x.dtype, x.rows, x.cols, &o, &q, &err)) rc = cli_fail(CMD, "%s", err.message);
    if (!rc && !nvfp4_recipe_get_info(q.recipe)->supports_sr)
        rc = cli_fail(CMD, "recipe %s has no stochastic rounding", q.opts.recipe);
    if (!rc) rc = vcli_view_from_q(&q, colwise, &geom);
    size_t n = geom.v.rows * geom.v.cols;
    if (!rc) {
        /* the input in the stored orientation, as the scaled values need it */
        xo = calloc(n ? n : 1, sizeof *xo);
        y = calloc(n ? n : 1, sizeof *y);
        codes = calloc(ns * (n ? n : 1), 1);
        cp = calloc(ns, sizeof *cp);
        if (!xo || !y || !codes || !cp) rc = cli_fail(CMD, "out of memory");
    }
    if (!rc && q.opts.rht) rc = cli_fail(CMD, "sr-test does not take --rht outputs");
    if (!rc) {
        for (size_t r = 0; r < x.rows; r++)
            for (size_t k = 0; k < x.cols; k++) {
                size_t i = r * x.cols + k;
                float v = x.dtype == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)x.data)[i])
                                                      : ((const float *)x.data)[i];
                if (colwise) xo[k * geom.v.cols + r] = v;
                else xo[r * geom.v.cols + k] = v;
            }
        const nvfp4_qtensor *t = colwise ? &q.col : &q.row;
        rc = vcli_scaled_values(CMD, q.recipe, t->amax, t->scale, t->prows, t->pcols,
                                q.opts.block == NVFP4_BLOCK_1X32 ? 32 : 16, xo, y);
    }
    for (size_t s = 0; !rc && s < ns; s++) {
        cp[s] = codes + s * n;
        rc = load_sample(samples[s], &q, colwise, &geom, n, codes + s * n);
    }
    if (!rc) {
        in.n = n;
        in.y = y;
        in.samples = ns;
        in.codes = cp;
        in.block_elems = q.opts.block == NVFP4_BLOCK_1X32 ? 32 : 16;
        if (colwise) in.offset += in.block_elems == 32 ? 2 : 1;
        nvfp4_sr_report rep;
        if (nvfp4_sr_test(&in, &rep, &err)) rc = cli_fail(CMD, "%s", err.message);
        else rc = json ? report_json(&in, &rep) : report(&in, &rep);
    }
    free(xo);
    free(y);
    free(codes);
    free(cp);
    vcli_view_free(&geom);
    nvfp4_quantized_free(&q);
    cli_input_free(&x);
    free(samples);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_sr_test = {"sr-test", "test an SR kernel: binomial, bias and independence tests", run};
