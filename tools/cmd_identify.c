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
    "usage: nvfp4 identify --expected-input X --actual FILE [--rowwise|--columnwise] [--block B]\n"
    "                      [--rht] [--rht-signs te|seed:N|none] [--rht-fp32] [--pad]\n"
    "                      [--seed S] [--offset O] [--no-mutants] [--top N] [--json]\n"
    "                      [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "Quantizes the input X with every recipe x rounding (rn, and sr with seed S, offset O\n"
    "for the recipes that have it) x block shape (1x16, 16x16, 1x32, or only --block B),\n"
    "with the options of `nvfp4 quantize` (--rht implies --columnwise), and with every\n"
    "catalogued mutant of each recipe at its default block (nvfp4 table --mutants; not\n"
    "with --no-mutants), and ranks the variants by the fraction of the kernel's data and\n"
    "scale bytes they reproduce. FILE holds the kernel's output (data and/or scale or\n"
    "scale_swizzled; *_t for the columnwise output, which is used when FILE has no rowwise\n"
    "component; a single .npy is taken as data). X is an input file as for `nvfp4 quantize`\n"
    "(a bundle works: its tensor 'x'). --json prints the ranking as one JSON object.\n"
    "\n"
    "Exit: 0 a variant reproduces every byte, 1 none does (the nearest is named), 2 error.\n";

enum { OPT_INPUT = 256, OPT_ACTUAL, OPT_COL, OPT_SEED, OPT_OFFSET, OPT_TOP, OPT_SHAPE, OPT_DTYPE, OPT_JSON,
       OPT_ROW, OPT_BLOCK, OPT_RHT, OPT_SIGNS, OPT_RHT32, OPT_PAD, OPT_NO_MUTANTS };
static const struct option longopts[] = {{"expected-input", required_argument, NULL, OPT_INPUT},
                                         {"actual", required_argument, NULL, OPT_ACTUAL},
                                         {"columnwise", no_argument, NULL, OPT_COL},
                                         {"rowwise", no_argument, NULL, OPT_ROW},
                                         {"block", required_argument, NULL, OPT_BLOCK},
                                         {"rht", no_argument, NULL, OPT_RHT},
                                         {"rht-signs", required_argument, NULL, OPT_SIGNS},
                                         {"rht-fp32", no_argument, NULL, OPT_RHT32},
                                         {"pad", no_argument, NULL, OPT_PAD},
                                         {"no-mutants", no_argument, NULL, OPT_NO_MUTANTS},
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

/* The catalogued mutants of each recipe variant (at its default block, or
 * at every block when the block is fixed), as named candidates. */
typedef struct {
    char name[96];
    nvfp4_mutant_output out;
    vcli_view view;
} mutant_variant;

static size_t mutant_variants(const float *x, size_t rows, size_t cols, const vcli_variant *var, size_t nvar,
                              bool colwise, bool fixed_block, mutant_variant **out)
{
    size_t nm = nvfp4_mutant_count(), k = 0;
    *out = calloc(nvar * nm + 1, sizeof **out);
    if (!*out) return 0;
    for (size_t i = 0; i < nvar; i++) {
        const nvfp4_quant_opts *o = &var[i].q.opts;
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(var[i].q.recipe);
        if (!fixed_block && o->block != info->default_block) continue;
        for (size_t j = 0; j < nm; j++) {
            const nvfp4_mutant_info *m = nvfp4_mutant_at(j);
            if (!nvfp4_mutant_applies(m, info->name, o)) continue;
            mutant_variant *mv = &(*out)[k];
            nvfp4_error err;
            if (nvfp4_mutant_quantize(m, x, NVFP4_DTYPE_F32, rows, cols, o, &mv->out, &err)) continue;
            if (vcli_view_from_q(&mv->out.q, colwise, &mv->view)) {
                nvfp4_mutant_output_free(&mv->out);
                continue;
            }
            mv->view.v.scale_swizzled = mv->out.swizzled[colwise];
            mv->view.v.scale_swizzled_bytes = mv->out.swizzled_bytes[colwise];
            snprintf(mv->name, sizeof mv->name, "%s [mutant %s]", var[i].name, m->name);
            k++;
        }
    }
    return k;
}

static void mutant_variants_free(mutant_variant *mv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vcli_view_free(&mv[i].view);
        nvfp4_mutant_output_free(&mv[i].out);
    }
    free(mv);
}

static int identify(const cli_input *in, const nvfp4_tensor_set *act, const char *apath, bool colwise,
                    const nvfp4_quant_opts *base, bool mutants, size_t top, bool json)
{
    float *x = NULL;
    size_t n = in->rows * in->cols;
    x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return cli_fail(CMD, "out of memory");
    if (in->dtype == NVFP4_DTYPE_BF16) {
        const uint16_t *b = in->data;
        for (size_t i = 0; i < n; i++) x[i] = nvfp4_bf16_to_f32(b[i]);
    } else {
        memcpy(x, in->data, n * sizeof *x);
    }
    vcli_variant *var = NULL;
    size_t nvar = 0, nmv = 0;
    bool fixed_block = base->block != NVFP4_BLOCK_DEFAULT;
    int rc = vcli_variants(CMD, x, in->rows, in->cols, base, colwise, !fixed_block, &var, &nvar);
    if (rc) {
        free(x);
        return rc;
    }
    if (colwise && !base->rht && !rc) {
        /* a columnwise kernel may apply the RHT (TE's Wgrad path): its variants too */
        nvfp4_quant_opts ro = *base;
        ro.rht = true;
        vcli_variant *rv = NULL;
        size_t nr = 0;
        if (vcli_variants(CMD, x, in->rows, in->cols, &ro, colwise, !fixed_block, &rv, &nr) == 0 && nr) {
            vcli_variant *all = realloc(var, (nvar + nr) * sizeof *all);
            if (all) {
                var = all;
                memcpy(var + nvar, rv, nr * sizeof *rv);
                for (size_t i = 0; i < nr; i++) {
                    size_t len = strlen(var[nvar + i].name);
                    snprintf(var[nvar + i].name + len, sizeof var[nvar + i].name - len, " rht");
                }
                nvar += nr;
                free(rv);
                rv = NULL, nr = 0;
            }
        }
        vcli_variants_free(rv, nr);
    }
    if (nvar == 0) {
        vcli_variants_free(var, nvar);
        free(x);
        return cli_fail(CMD, "no recipe can quantize a %zu x %zu input with these options", in->rows, in->cols);
    }
    mutant_variant *mv = NULL;
    if (mutants) nmv = mutant_variants(x, in->rows, in->cols, var, nvar, colwise, fixed_block, &mv);
    free(x);
    vcli_view av;
    if ((rc = vcli_actual_view(CMD, apath, act, colwise, &var[0].view.v, NVFP4_VC_DATA, &av))) {
        mutant_variants_free(mv, nmv);
        vcli_variants_free(var, nvar);
        return rc;
    }
    if (!av.v.data && !av.v.scale && !av.v.scale_swizzled) {
        mutant_variants_free(mv, nmv);
        vcli_variants_free(var, nvar);
        return cli_fail(CMD, "%s holds no data%s, scale%s or scale_swizzled%s to identify", apath, colwise ? "_t" : "",
                        colwise ? "_t" : "", colwise ? "_t" : "");
    }
    size_t ncand = nvar + nmv;
    nvfp4_vcandidate *cand = calloc(ncand, sizeof *cand);
    nvfp4_vrank *rank = calloc(ncand, sizeof *rank);
    if (!cand || !rank) {
        free(cand), free(rank);
        mutant_variants_free(mv, nmv);
        vcli_variants_free(var, nvar);
        return cli_fail(CMD, "out of memory");
    }
    for (size_t i = 0; i < nvar; i++) cand[i] = (nvfp4_vcandidate){var[i].name, var[i].view.v, false, NULL};
    for (size_t i = 0; i < nmv; i++) cand[nvar + i] = (nvfp4_vcandidate){mv[i].name, mv[i].view.v, false, NULL};
    nvfp4_identify_rank(&av.v, cand, ncand, rank);
    int verdict;
    if (json) {
        print_json(rank, ncand, top, colwise);
        verdict = rank[0].fraction == 1.0 ? NVFP4_EXIT_OK : NVFP4_EXIT_MISMATCH;
    } else {
        printf("%zu variants (%zu recipe variants, %zu mutants) of %s (%zu x %zu), ranked by matching bytes of %s%s%s:\n",
               ncand, nvar, nmv, colwise ? "the columnwise output" : "the rowwise output", in->rows, in->cols,
               av.v.data ? "data" : "", av.v.data && (av.v.scale || av.v.scale_swizzled) ? " + " : "",
               av.v.scale ? "scale" : av.v.scale_swizzled ? "scale_swizzled" : "");
        printf("  %-4s %-24s %10s %18s %18s\n", "rank", "recipe rounding block", "match", "data bytes", "scale bytes");
        for (size_t i = 0; i < ncand && i < top; i++)
            printf("  %-4zu %-24s %9.4f%% %8zu/%-9zu %8zu/%-9zu\n", i + 1, rank[i].name, 100.0 * rank[i].fraction,
                   rank[i].data_match, rank[i].data_total, rank[i].scale_match, rank[i].scale_total);
        if (rank[0].fraction == 1.0) {
            size_t ties = 1;
            while (ties < ncand && rank[ties].fraction == 1.0) ties++;
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
    }
    free(cand);
    free(rank);
    mutant_variants_free(mv, nmv);
    vcli_variants_free(var, nvar);
    return verdict;
}

/* Whether the kernel's file holds only columnwise components. */
static bool only_columnwise(const nvfp4_tensor_set *act)
{
    static const char *const row[] = {"data", "scale", "scale_swizzled"};
    static const char *const col[] = {"data_t", "scale_t", "scale_swizzled_t", "scale_t_swizzled"};
    for (size_t i = 0; i < 3; i++)
        if (nvfp4_tset_find(act, row[i])) return false;
    for (size_t i = 0; i < 4; i++)
        if (nvfp4_tset_find(act, col[i])) return true;
    return false;
}

static int run(int argc, char **argv)
{
    const char *input = NULL, *actual = NULL, *shape = NULL, *dtype = NULL;
    bool colwise = false, rowwise = false, json = false, mutants = true;
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
        case OPT_ROW: rowwise = true; break;
        case OPT_BLOCK:
            if (!nvfp4_block_parse(optarg, &base.block)) return cli_fail(CMD, "bad --block '%s' (1x16, 16x16, 1x32)", optarg);
            break;
        case OPT_RHT: base.rht = true; break;
        case OPT_SIGNS:
            if (!cli_parse_rht_signs(optarg, &base)) return cli_fail(CMD, "bad --rht-signs '%s' (te, seed:N or none)", optarg);
            break;
        case OPT_RHT32: base.rht_fp32 = true; break;
        case OPT_PAD: base.pad = true; break;
        case OPT_NO_MUTANTS: mutants = false; break;
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
    if (rowwise && (colwise || base.rht))
        return cli_fail(CMD, "--rowwise excludes --columnwise and --rht (the RHT is on the columnwise output)");
    if (base.rht) colwise = true;
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
    else {
        if (!colwise && !rowwise && only_columnwise(&act)) colwise = true; /* e.g. quantize --columnwise */
        rc = identify(&in, &act, actual, colwise, &base, mutants, top, json);
    }
    nvfp4_tset_free(&act);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_identify = {"identify", "rank every recipe x rounding x block by matching bytes", run};
