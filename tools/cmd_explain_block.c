/* cmd_explain_block.c - `nvfp4 explain-block`: walk one block of a tensor
 * through a recipe, step by step, with the core functions the quantizer
 * itself uses (src/core/recipe.h): no rounding rule is re-implemented here. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "core/philox.h"
#include "recipes/recipe.h"
#include "verify/vchain.h"

static const char usage[] =
    "usage: nvfp4 explain-block --input X --row R --block C [--recipe R] [--tile 1x16|16x16|1x32]\n"
    "                           [--round rn|sr --seed S --offset O] [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "Walks block C of row R (0-based; block C covers columns C*L .. C*L+L-1, L the block\n"
    "length; a 16x16 tile also covers the 16 rows around R) of input X through recipe R\n"
    "(default te): the global amax and scale, the block amax, the block scale before and after\n"
    "its rounding to E4M3 (UE8M0 for MX recipes), the encode factor, and for every element its\n"
    "scaled value, code, decoded and dequantized value and error; then the block's error.\n"
    "--round sr uses the block's Philox bytes of the SR contract (DESIGN.md 3.3).\n"
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

static float x_at(const cli_input *in, size_t r, size_t c)
{
    if (r >= in->rows || c >= in->cols) return 0.0f; /* zero padding */
    size_t i = r * in->cols + c;
    if (in->dtype == NVFP4_DTYPE_BF16) return nvfp4_bf16_to_f32(((const uint16_t *)in->data)[i]);
    return ((const float *)in->data)[i];
}

/* The fp32 value each block-scale rule hands to its rounding (the same
 * expressions as nvfp4_core_block_scale, for display; the byte itself is
 * always nvfp4_core_block_scale's). */
static float scale_before_rounding(const nvfp4_core_recipe *r, const nvfp4_core_global *g, float bamax)
{
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL: return bamax * (g->s_enc * NVFP4_CORE_INV6);
    case NVFP4_CORE_BSCALE_DIV_DIV: return (bamax / r->elem_max) / g->g;
    case NVFP4_CORE_BSCALE_DIV_PRODUCT: return bamax / (r->elem_max * g->g);
    case NVFP4_CORE_BSCALE_UE8M0_RCEIL: return bamax * (1.0f / r->elem_max);
    default: return bamax;
    }
}

static const char *bscale_formula(const nvfp4_core_recipe *r)
{
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL: return "block_amax * (S_enc * fl(1/6)), E4M3 RN satfinite";
    case NVFP4_CORE_BSCALE_DIV_DIV: return "(block_amax / 6) / g, clamped, E4M3 RN";
    case NVFP4_CORE_BSCALE_DIV_PRODUCT: return "block_amax / (6 * g) (0 -> 1), clamped, E4M3 RN";
    case NVFP4_CORE_BSCALE_UE8M0_FLOOR: return "UE8M0 floor(log2(block_amax)) - emax(elem)";
    default: return "UE8M0 round-up of block_amax / max(elem)";
    }
}

static int explain(const cli_input *in, const nvfp4_recipe *rec, nvfp4_block tile, size_t row, size_t blk, int mode,
                   uint64_t seed, uint64_t offset)
{
    const nvfp4_core_recipe *r = nvfp4_recipe_core(rec);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(rec);
    size_t bl = tile == NVFP4_BLOCK_1X32 ? 32 : 16, th = tile == NVFP4_BLOCK_16X16 ? 16 : 1;
    size_t nblk = (in->cols + bl - 1) / bl;
    if (row >= in->rows) return cli_fail(CMD, "--row %zu is outside the %zu rows", row, in->rows);
    if (blk >= nblk) return cli_fail(CMD, "--block %zu is outside the %zu blocks of a row", blk, nblk);
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    float amax = 0.0f;
    for (size_t i = 0; i < in->rows; i++)
        for (size_t j = 0; j < in->cols; j++) amax = nvfp4_core_amax_step(amax, x_at(in, i, j), r->amax_nan_propagates);
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, amax);
    printf("recipe %s (%s), block %s, rounding %s\n", info->name, info->provenance, nvfp4_block_name(tile),
           mode == NVFP4_CORE_SR ? "sr" : "rn");
    printf("tensor %zu x %zu; block %zu of row %zu covers columns %zu..%zu%s\n", in->rows, in->cols, blk, row, blk * bl,
           blk * bl + bl - 1, th > 1 ? " of the 16-row tile" : "");
    printf("global amax          %s\n", f(b1, amax));
    if (r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE)
        printf("global scale         S_enc = fminf(2688/amax, FLT_MAX) = %s, S_dec = 1/S_enc = %s\n", f(b1, g.s_enc),
               f(b2, g.s_dec));
    else if (r->global_rule == NVFP4_CORE_GLOBAL_DECODE_DIV)
        printf("global scale         g = amax/2688 = %s\n", f(b1, g.g));
    else
        printf("global scale         none (MX recipe)\n");
    size_t r0 = row / th * th, c0 = blk * bl;
    float bamax = 0.0f;
    for (size_t i = r0; i < r0 + th; i++)
        for (size_t j = c0; j < c0 + bl; j++) bamax = nvfp4_core_amax_step(bamax, x_at(in, i, j), r->amax_nan_propagates);
    uint8_t s = nvfp4_core_block_scale(r, &g, bamax);
    bool ue = r->scale_format == NVFP4_CORE_SCALE_UE8M0;
    float sv = ue ? nvfp4_core_pow2_scale(r, s) : nvfp4_core_e4m3_decode(s);
    printf("block amax           %s\n", f(b1, bamax));
    printf("block scale          %s\n", bscale_formula(r));
    printf("  before rounding    %s\n", f(b1, scale_before_rounding(r, &g, bamax)));
    printf("  after rounding     0x%02X = %s%s\n", s, f(b2, sv),
           !ue && (s & 0x7Fu) == 0 && bamax > 0.0f ? "  (underflow: the block scale is 0)" : "");
    nvfp4_core_block b = nvfp4_core_block_prepare(r, &g, s);
    float dscale = nvfp4_core_dequant_scale(r, &g, s);
    const char *enc = r->enc_rule == NVFP4_CORE_ENC_TE_RECIP ? "x * inv, inv = fminf(1/(s*S_dec), FLT_MAX)"
                      : r->enc_rule == NVFP4_CORE_ENC_DIV_TOTAL ? "x / (g*s)"
                      : r->enc_rule == NVFP4_CORE_ENC_EXACT     ? "nearest code to the real x/D (exact comparison)"
                                                                : "x / 2^e";
    printf("encode               %s; factor %s\n", enc, f(b1, b.factor));
    printf("dequant scale        D = %s\n", f(b1, dscale));
    uint8_t rb[32] = {0};
    if (mode == NVFP4_CORE_SR) {
        uint64_t lin = (uint64_t)row * nblk + blk; /* the block's linear index, as the quantizer counts it */
        nvfp4_core_sr_block_bytes(seed, offset, lin, rb);
        if (bl == 32) nvfp4_core_sr_block_bytes(seed, offset + 1, lin, rb + 16);
    }
    printf("  %-4s %-14s %-14s %-5s %-8s %-14s %-14s%s\n", "col", "x", "scaled", "code", "value", "dequant", "error",
           mode == NVFP4_CORE_SR ? "  rbits" : "");
    double sse = 0.0, ssx = 0.0, maxerr = 0.0;
    for (size_t j = c0; j < c0 + bl; j++) {
        float x = x_at(in, row, j);
        uint8_t code = nvfp4_core_encode_elem(r, &b, x, mode, rb[j - c0]);
        float val = nvfp4_core_elem_value(r, code);
        float dq = nvfp4_core_dequant_elem(r, dscale, code);
        float y = r->enc_rule == NVFP4_CORE_ENC_EXACT ? x / dscale : nvfp4_core_scaled(r, &b, x);
        double e = (double)dq - (double)x;
        if (isfinite(e)) {
            sse += e * e;
            ssx += (double)x * (double)x;
            if (fabs(e) > maxerr) maxerr = fabs(e);
        }
        printf("  %-4zu %-14s %-14s 0x%-3X %-8s %-14s %-14s", j, f(b3, x), f(b4, y), code, f(b5, val), f(b6, dq),
               isfinite(e) ? f(b1, (float)e) : "-");
        if (mode == NVFP4_CORE_SR) printf("  %-5u", rb[j - c0]);
        if (r->elem == NVFP4_CORE_ELEM_E2M1 && r->enc_rule != NVFP4_CORE_ENC_EXACT) {
            if (nvfp4_vchain_is_e2m1_tie(y)) printf("  tie: to the even code");
            else if (fabsf(y) > 6.0f) printf("  saturates to +-6");
        }
        if (!ue && (s & 0x7Fu) == 0 && x != 0.0f && isfinite(x)) printf("  (scale underflow)");
        printf("\n");
    }
    printf("block error          max |dequant - x| = %.9g, rms = %.9g, relative rms = %.9g\n", maxerr,
           sqrt(sse / (double)bl), ssx > 0 ? sqrt(sse / ssx) : 0.0);
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
    cli_input in;
    int rc = cli_input_load(CMD, input, shape, dtype, &in);
    if (!rc) rc = explain(&in, rec, tile, row, blk, rnd == NVFP4_SR ? NVFP4_CORE_SR : NVFP4_CORE_RN, seed, offset);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_explain_block = {"explain-block", "walk one block through a recipe, step by step", run};
