/* cmd_explain_block.c - `nvfp4 explain-block`: walk one block of a tensor
 * through a recipe, step by step. The numbers come from nvfp4_trace
 * (nvfp4/trace.h), which evaluates the quantizer's own per-block functions:
 * this file only parses options and prints; it knows no rounding rule. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/formats.h"
#include "nvfp4/trace.h"

static const char usage[] =
    "usage: nvfp4 explain-block --input X --row R --block C [--recipe R] [--tile 1x16|16x16|1x32]\n"
    "                           [--round rn|sr --seed S --offset O] [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "Walks block C of row R (0-based; block C covers columns C*L .. C*L+L-1, L the block\n"
    "length; a 16x16 tile also covers the 16 rows around R) of input X through recipe R\n"
    "(default te): the global amax and scale, the block amax, the block scale before and after\n"
    "its rounding to E4M3 (UE8M0 for MX recipes), the encode factor, and for every element its\n"
    "scaled value, code, decoded and dequantized value and error; then the block's error.\n"
    "--round sr uses the block's Philox bytes of the SR contract (docs/semantics.md: SR bit contract).\n"
    "\n"
    "Exit: 0, or 2 usage or input error.\n";

enum { OPT_INPUT = 256, OPT_ROW, OPT_BLOCK, OPT_RECIPE, OPT_TILE, OPT_ROUND, OPT_SEED, OPT_OFFSET, OPT_SHAPE,
       OPT_DTYPE };
static const struct option longopts[] = {{"input", required_argument, NULL, OPT_INPUT},
                                         {"row", required_argument, NULL, OPT_ROW},
                                         {"block", required_argument, NULL, OPT_BLOCK},
                                         {"recipe", required_argument, NULL, OPT_RECIPE},
                                         {"tile", required_argument, NULL, OPT_TILE},
                                         {"round", required_argument, NULL, OPT_ROUND},
                                         {"seed", required_argument, NULL, OPT_SEED},
                                         {"offset", required_argument, NULL, OPT_OFFSET},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"dtype", required_argument, NULL, OPT_DTYPE},
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
    printf("global amax          %s\n", f(b1, t->amax));
    if (t->global_rule == NVFP4_TRACE_GLOBAL_ENCODE)
        printf("global scale         S_enc = fminf(2688/amax, FLT_MAX) = %s, S_dec = 1/S_enc = %s\n", f(b1, t->s_enc),
               f(b2, t->s_dec));
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

static int explain(const cli_input *in, const nvfp4_quant_opts *o, size_t row, size_t blk)
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
    return 0;
}

static int run(int argc, char **argv)
{
    const char *input = NULL, *shape = NULL, *dtype = NULL, *recipe = "te";
    size_t row = 0, blk = 0;
    bool have_row = false, have_blk = false;
    nvfp4_block tile = NVFP4_BLOCK_DEFAULT;
    nvfp4_rounding rnd = NVFP4_RN;
    uint64_t seed = 0, offset = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        case OPT_RECIPE: recipe = optarg; break;
        case OPT_TILE:
            if (!nvfp4_block_parse(optarg, &tile)) return cli_fail(CMD, "bad --tile '%s'", optarg);
            break;
        case OPT_ROUND:
            if (!nvfp4_rounding_parse(optarg, &rnd) || rnd == NVFP4_RZ) return cli_fail(CMD, "bad --round '%s' (rn or sr)", optarg);
            break;
        case OPT_SEED:
            if (!cli_parse_u64(optarg, &seed)) return cli_fail(CMD, "bad --seed '%s'", optarg);
            break;
        case OPT_OFFSET:
            if (!cli_parse_u64(optarg, &offset)) return cli_fail(CMD, "bad --offset '%s'", optarg);
            break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default: return cli_fail(CMD, "unknown option '%s'; see nvfp4 explain-block --help", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!input || !have_row || !have_blk) return cli_fail(CMD, "--input X, --row R and --block C are required");
    const nvfp4_recipe *rec = nvfp4_recipe_find(recipe);
    if (!rec) return cli_fail(CMD, "unknown recipe '%s' (nvfp4 table --recipes lists them)", recipe);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(rec);
    if (tile == NVFP4_BLOCK_DEFAULT) tile = info->default_block;
    if (rnd == NVFP4_SR && !info->supports_sr) return cli_fail(CMD, "recipe %s has no stochastic rounding", recipe);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = info->name;
    o.block = tile;
    o.rounding = rnd;
    o.seed = seed;
    o.offset = offset;
    cli_input in;
    int rc = cli_input_load(CMD, input, shape, dtype, &in);
    if (!rc) rc = explain(&in, &o, row, blk);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_explain_block = {"explain-block", "walk one block through a recipe, step by step", run};
