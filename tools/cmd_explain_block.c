/* cmd_explain_block.c - `nvfp4 explain-block`: walk one block of a tensor
 * through a recipe, step by step. The numbers come from nvfp4_trace
 * (nvfp4/trace.h), which evaluates the quantizer's own per-block functions:
 * this file only parses options and prints; it knows no rounding rule. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_figures.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "nvfp4/formats.h"
#include "nvfp4/hadamard.h"
#include "nvfp4/quant.h"
#include "nvfp4/trace.h"

static const char usage[] =
    "usage: nvfp4 explain-block --input X --row R --block C [--recipe R] [--tile 1x16|16x16|1x32]\n"
    "                           [--round rn|sr --seed S --offset O] [--shape RxC --dtype f32|bf16]\n"
    "                           [--plot FILE] [--rht]\n"
    "\n"
    "Walks block C of row R (0-based; block C covers columns C*L .. C*L+L-1, L the block\n"
    "length; a 16x16 tile also covers the 16 rows around R) of input X through recipe R\n"
    "(default te): the global amax and scale, the block amax, the block scale before and after\n"
    "its rounding to E4M3 (UE8M0 for MX recipes), the encode factor, and for every element its\n"
    "scaled value, code, decoded and dequantized value and error; then the block's error.\n"
    "--round sr uses the block's Philox bytes of the SR contract (docs/semantics.md: SR bit contract).\n"
    "\n"
    "  --plot FILE  also draw the block as a PNG (gnuplot): the inputs, the scaled values on\n"
    "               the E2M1 grid with their codes, the dequantized values and their errors\n"
    "  --rht        instead: the 16 elements before and after TE's random Hadamard transform\n"
    "               (16-point, sign mask 0xD7E8, outputs rounded to bf16), their amax and\n"
    "               rms, and the error of quantizing x directly or y = RHT(x) and transforming\n"
    "               back (each block quantized as a 1x16 tensor of its own); with --plot the\n"
    "               picture of both\n"
    "\n"
    "Exit: 0, or 2 usage or input error.\n";

/* From the quantize option group: the recipe, rounding, seed and offset. Not its --block
 * (here the index of a block in the row; the block shape is --tile) nor its --rht (here:
 * show the transform of one block). */
#define QUANT_ROWS (CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_ROUND) | CLI_QUANT(NVFP4_OPTION_SEED) | \
                    CLI_QUANT(NVFP4_OPTION_OFFSET))

enum { OPT_INPUT = 256, OPT_ROW, OPT_BLOCK, OPT_TILE, OPT_SHAPE, OPT_DTYPE, OPT_PLOT, OPT_RHT };
static const struct option own_longopts[] = {{"input", required_argument, NULL, OPT_INPUT},
                                             {"row", required_argument, NULL, OPT_ROW},
                                             {"block", required_argument, NULL, OPT_BLOCK},
                                             {"tile", required_argument, NULL, OPT_TILE},
                                             {"shape", required_argument, NULL, OPT_SHAPE},
                                             {"dtype", required_argument, NULL, OPT_DTYPE},
                                             {"plot", required_argument, NULL, OPT_PLOT},
                                             {"rht", no_argument, NULL, OPT_RHT},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};

static const char *CMD = "explain-block";

static const char *f(char *b, float v)
{
    cli_format_f32(b, 32, v);
    return b;
}

static void print_global(const nvfp4_trace_block *t)
{
    char b1[32], b2[32];
    /* te-4over6 bounds the global scale by E4M3 256 (6*256 = 1536), te-4over6-448 by 448 as te;
     * te-rowscaled takes the row's amax */
    const char *name = nvfp4_recipe_get_info(t->recipe)->name;
    bool four_over_six = strncmp(name, "te-4over6", 9) == 0 && strcmp(name, "te-4over6-448") != 0, row_scaled = strcmp(name, "te-rowscaled") == 0;
    printf("%s          %s\n", row_scaled ? "row amax   " : "global amax", f(b1, t->amax));
    /* the recipes whose S_enc is torch's 2688 / amax tensor: reciprocal(amax) * 2688 */
    const char *torch_global = strcmp(name, "vllm") == 0 ? "fl(1/amax) * 2688 (amax 0: +Inf)"
                               : strcmp(name, "flashinfer") == 0 ? "fl(1/amax) * 2688 (amax 0: FLT_MAX)"
                               : strcmp(name, "compressed-tensors") == 0
                                   ? "fl(1/max(amax, 2^-126)) * 2688 (NaN, Inf: 1)"
                               : strcmp(name, "mslk") == 0 ? "1 / fl(amax / 2688) (torchao's g, reciprocal)"
                                                           : NULL;
    if (t->global_rule == NVFP4_TRACE_GLOBAL_ENCODE && torch_global)
        printf("global scale         S_enc = %s = %s\n", torch_global, f(b1, t->s_enc));
    else if (t->global_rule == NVFP4_TRACE_GLOBAL_ENCODE)
        printf("global scale         S_enc = fminf(%s/amax, FLT_MAX) = %s, S_dec = 1/S_enc = %s\n",
               four_over_six ? "1536" : "2688", f(b1, t->s_enc), f(b2, t->s_dec));
    else if (t->global_rule == NVFP4_TRACE_GLOBAL_DECODE)
        printf("global scale         g = amax/2688 = %s\n", f(b1, t->g));
    else
        printf("global scale         none (MX recipe)\n");
}

static void print_scale(const nvfp4_trace_block *t, bool underflow)
{
    char b1[32], b2[32];
    printf("block amax           %s\n", f(b1, t->block_amax));
    printf("block scale          %s\n", t->scale_formula);
    printf("  before rounding    %s\n", f(b1, t->scale_unrounded));
    printf("  after rounding     0x%02X = %s%s\n", t->scale, f(b2, t->scale_value),
           underflow ? "  (underflow: the block scale is 0)" : "");
    printf("encode               %s; factor %s\n", t->encode_formula, f(b1, t->factor));
    printf("dequant scale        D = %s\n", f(b1, t->dequant_scale));
}

/* The element table and the block's error. */
static void print_elems(const nvfp4_trace_block *t, bool sr, bool e4m3_scale)
{
    char b1[32], b3[32], b4[32], b5[32], b6[32];
    printf("  %-4s %-14s %-14s %-5s %-8s %-14s %-14s%s\n", "col", "x", "scaled", "code", "value", "dequant", "error",
           sr ? "  rbits" : "");
    double sse = 0.0, ssx = 0.0, maxerr = 0.0;
    for (size_t i = 0; i < t->block_len; i++) {
        const nvfp4_trace_elem *el = &t->elem[i];
        double e = (double)el->dequant - (double)el->x;
        if (isfinite(e)) {
            sse += e * e;
            ssx += (double)el->x * (double)el->x;
            if (fabs(e) > maxerr) maxerr = fabs(e);
        }
        printf("  %-4zu %-14s %-14s 0x%-3X %-8s %-14s %-14s", el->col, f(b3, el->x), f(b4, el->scaled), el->code,
               f(b5, el->value), f(b6, el->dequant), isfinite(e) ? f(b1, (float)e) : "-");
        if (sr) printf("  %-5u", el->rbits);
        if (el->tie) printf("  tie: to the even code");
        else if (el->saturates) printf("  saturates to +-6");
        if (e4m3_scale && (t->scale & 0x7Fu) == 0 && el->x != 0.0f && isfinite(el->x)) printf("  (scale underflow)");
        printf("\n");
    }
    char m[32], r[32], rr[32];
    printf("block error          max |dequant - x| = %s, rms = %s, relative rms = %s\n",
           nvfp4_format_f64_digits(maxerr, 9, m, sizeof m),
           nvfp4_format_f64_digits(sqrt(sse / (double)t->block_len), 9, r, sizeof r),
           nvfp4_format_f64_digits(ssx > 0 ? sqrt(sse / ssx) : 0.0, 9, rr, sizeof rr));
}

/* x (n elements) quantized as a 1 x n tensor of its own, dequantized. */
static int quant_dequant(const float *x, size_t n, const nvfp4_quant_opts *o, float *out)
{
    nvfp4_quantized q;
    nvfp4_error err;
    if (nvfp4_quantize(x, NVFP4_DTYPE_F32, 1, n, o, &q, &err) != NVFP4_OK) return cli_fail(CMD, "%s", err.message);
    nvfp4_status st = nvfp4_dequantize(&q, false, out, &err);
    nvfp4_quantized_free(&q);
    return st == NVFP4_OK ? 0 : cli_fail(CMD, "%s", err.message);
}

/* --rht: the block before and after TE's 16-point RHT, and what quantizing
 * each costs in the original domain. */
static int explain_rht(const cli_input *in, const nvfp4_quant_opts *o, size_t row, size_t blk, const char *plot)
{
    enum { N = 16 };
    if (row >= in->rows) return cli_fail(CMD, "--row %zu is outside the %zu rows", row, in->rows);
    if (in->cols % N != 0) return cli_fail(CMD, "--rht: the columns (%zu) must be a multiple of 16", in->cols);
    if (blk >= in->cols / N) return cli_fail(CMD, "--block %zu is outside the %zu blocks of a row", blk, in->cols / N);
    float x[N], y[N], back[N], d1[N], d2[N];
    for (size_t i = 0; i < N; i++) {
        size_t k = row * in->cols + blk * N + i;
        x[i] = in->dtype == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)in->data)[k]) : ((const float *)in->data)[k];
    }
    nvfp4_rht_config c;
    nvfp4_rht_config_init(&c);
    nvfp4_error err;
    if (nvfp4_rht_forward(&c, x, 1, N, y, &err) != NVFP4_OK) return cli_fail(CMD, "%s", err.message);
    nvfp4_quant_opts q = *o;
    q.block = NVFP4_BLOCK_1X16;
    int rc = quant_dequant(x, N, &q, d1);
    if (!rc) rc = quant_dequant(y, N, &q, back);
    if (rc) return rc;
    nvfp4_rht_config exact = c;
    exact.keep_fp32 = true; /* the way back is not part of the recipe: no bf16 rounding on it */
    if (nvfp4_rht_inverse(&exact, back, 1, N, d2, &err) != NVFP4_OK) return cli_fail(CMD, "%s", err.message);
    printf("RHT of block %zu of row %zu: y = x H16 diag(s) / 4, TE's sign mask 0x%04X, outputs rounded to bf16\n", blk,
           row, NVFP4_RHT_TE_MASK);
    printf("each of x and y is quantized by recipe %s as a 1x16 tensor of its own; y's is transformed back\n", q.recipe);
    printf("  %-4s %-14s %-14s %-14s %-14s\n", "col", "x", "y = RHT(x)", "via x: error", "via y: error");
    double ax = 0, ay = 0, sx = 0, sy = 0, e1 = 0, e2 = 0;
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    for (size_t i = 0; i < N; i++) {
        double r1 = (double)d1[i] - x[i], r2 = (double)d2[i] - x[i];
        printf("  %-4zu %-14s %-14s %-14s %-14s\n", blk * N + i, f(b1, x[i]), f(b2, y[i]),
               nvfp4_format_f64_digits(r1, 6, b3, sizeof b3), nvfp4_format_f64_digits(r2, 6, b4, sizeof b4));
        ax = fmax(ax, fabs((double)x[i]));
        ay = fmax(ay, fabs((double)y[i]));
        sx += (double)x[i] * x[i];
        sy += (double)y[i] * y[i];
        e1 += r1 * r1;
        e2 += r2 * r2;
    }
    printf("amax / rms           before %s / %s = %s, after %s / %s = %s\n", nvfp4_format_f64_digits(ax, 6, b1, sizeof b1),
           nvfp4_format_f64_digits(sqrt(sx / N), 6, b2, sizeof b2), nvfp4_format_f64_digits(ax / sqrt(sx / N), 4, b3, sizeof b3),
           nvfp4_format_f64_digits(ay, 6, b4, sizeof b4), nvfp4_format_f64_digits(sqrt(sy / N), 6, b5, sizeof b5),
           nvfp4_format_f64_digits(ay / sqrt(sy / N), 4, b6, sizeof b6));
    printf("rms error            via x %s, via y and back %s\n", nvfp4_format_f64_digits(sqrt(e1 / N), 6, b1, sizeof b1),
           nvfp4_format_f64_digits(sqrt(e2 / N), 6, b2, sizeof b2));
    printf("why                  the transform is orthogonal: it keeps the sum of squares, so an outlier's\n"
           "                     energy is shared by all 16 outputs and amax/rms falls (it is at most 4 =\n"
           "                     sqrt(16)); the scale then follows the typical element, not the outlier.\n"
           "                     Whether one block's error falls depends on the data: TE transforms both\n"
           "                     operands of the Wgrad GEMM along K, where H H^T = I cancels in the product\n");
    return plot ? cli_figure_rht(CMD, plot, x, y, d1, d2, N) : 0;
}

static int explain(const cli_input *in, const nvfp4_quant_opts *o, size_t row, size_t blk, const char *plot)
{
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(o->recipe));
    size_t bl = o->block == NVFP4_BLOCK_1X32 ? 32 : 16;
    size_t nblk = (in->cols + bl - 1) / bl;
    if (row >= in->rows) return cli_fail(CMD, "--row %zu is outside the %zu rows", row, in->rows);
    if (blk >= nblk) return cli_fail(CMD, "--block %zu is outside the %zu blocks of a row", blk, nblk);
    nvfp4_trace_block t;
    nvfp4_error err;
    if (nvfp4_trace(in->data, in->dtype, in->rows, in->cols, o, row, blk, &t, &err) != NVFP4_OK)
        return cli_fail(CMD, "%s", err.message);
    bool sr = o->rounding == NVFP4_SR, e4m3_scale = info->scale_format == NVFP4_SCALEFMT_E4M3;
    printf("recipe %s (%s), block %s, rounding %s\n", info->name, info->provenance, nvfp4_block_name(t.block),
           sr ? "sr" : "rn");
    printf("tensor %zu x %zu; block %zu of row %zu covers columns %zu..%zu%s\n", in->rows, in->cols, blk, row, blk * bl,
           blk * bl + bl - 1, t.tile_rows > 1 ? " of the 16-row tile" : "");
    print_global(&t);
    print_scale(&t, e4m3_scale && (t.scale & 0x7Fu) == 0 && t.block_amax > 0.0f);
    print_elems(&t, sr, e4m3_scale);
    return plot ? cli_figure_block(CMD, plot, &t) : 0;
}

static int run(int argc, char **argv)
{
    const char *input = NULL, *shape = NULL, *dtype = NULL, *plot = NULL;
    bool rht = false;
    size_t row = 0, blk = 0;
    bool have_row = false, have_blk = false;
    nvfp4_block tile = NVFP4_BLOCK_DEFAULT;
    nvfp4_options g;
    nvfp4_options_init(&g);
    struct option longopts[24];
    cli_quant_longopts(longopts, 24, own_longopts, QUANT_ROWS);
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_INPUT: input = optarg; break;
        case OPT_ROW:
            if (!cli_parse_size(optarg, &row)) return cli_fail(CMD, "bad --row '%s'", optarg);
            have_row = true;
            break;
        case OPT_BLOCK:
            if (!cli_parse_size(optarg, &blk)) return cli_fail(CMD, "bad --block '%s'", optarg);
            have_blk = true;
            break;
        case OPT_TILE:
            if (!nvfp4_block_parse(optarg, &tile)) return cli_fail(CMD, "bad --tile '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_PLOT: plot = optarg; break;
        case OPT_RHT: rht = true; break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default:
            if (!cli_quant_is(c)) return cli_fail(CMD, "unknown option '%s'; see nvfp4 explain-block --help", argv[optind - 1]);
            if ((rc = cli_quant_set(CMD, c, optarg, &g))) return rc;
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!input || !have_row || !have_blk) return cli_fail(CMD, "--input X, --row R and --block C are required");
    nvfp4_quant_opts o = g.quant; /* the recipe (default te) validated, the rounding, seed and offset */
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(o.recipe ? o.recipe : "te"));
    if (tile == NVFP4_BLOCK_DEFAULT) tile = info->default_block;
    if (o.rounding == NVFP4_SR && !info->supports_sr) return cli_fail(CMD, "recipe %s has no stochastic rounding", info->name);
    o.recipe = info->name;
    o.block = tile;
    cli_input in;
    rc = cli_input_load(CMD, input, shape, dtype, &in);
    if (!rc) rc = rht ? explain_rht(&in, &o, row, blk, plot) : explain(&in, &o, row, blk, plot);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_explain_block = {"explain-block", "walk one block through a recipe, step by step", run};
