/* cmd_rht.c - `nvfp4 rht`: the random Hadamard transform of a tensor along
 * its rows (docs/semantics.md, "Random Hadamard transform"), as applied to the columnwise operand. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/hadamard.h"
#include "nvfp4/options.h"

static const char usage[] =
    "usage: nvfp4 rht IN -o OUT [--size D] [--signs te|seed:N|none] [--fp32] [--inverse]\n"
    "                 [--format safetensors|npy|bin] [--shape RxC --dtype f32|bf16]\n"
    "\n"
    "Applies y = x_group @ (diag(s) H_D / sqrt(D)) to each group of D consecutive elements of\n"
    "every row of IN (D = 4..128, default 16; the columns must be a multiple of D). Each output\n"
    "is the exact D-term sum rounded once to fp32 and then (unless --fp32) to bf16, as TE.\n"
    "Writes the fp32 tensor 'y' (bf16-exact values unless --fp32). IN as for `nvfp4 quantize`.\n"
    "  --signs te|seed:N|none  sign vector: TE's mask 0xD7E8 (D = 16 only), seeded, or none\n"
    "  --inverse               the inverse transform (H_D diag(s) / sqrt(D))\n"
    "Exit: 0 written, 2 usage or input error.\n";

enum { OPT_SIZE = 256, OPT_SIGNS, OPT_FP32, OPT_INV, OPT_FORMAT, OPT_SHAPE, OPT_DTYPE };
static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'}, {"size", required_argument, NULL, OPT_SIZE},
    {"signs", required_argument, NULL, OPT_SIGNS}, {"fp32", no_argument, NULL, OPT_FP32},
    {"inverse", no_argument, NULL, OPT_INV}, {"format", required_argument, NULL, OPT_FORMAT},
    {"shape", required_argument, NULL, OPT_SHAPE}, {"dtype", required_argument, NULL, OPT_DTYPE},
    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

static float *input_as_f32(const cli_input *in)
{
    size_t n = in->rows * in->cols;
    float *x = malloc(n * sizeof *x);
    if (!x) return NULL;
    if (in->dtype == NVFP4_DTYPE_F32) memcpy(x, in->data, n * sizeof *x);
    else
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)((const uint16_t *)in->data)[i] << 16;
            memcpy(&x[i], &u, sizeof u);
        }
    return x;
}

/* --signs takes quantize's --rht-signs vocabulary, read by the library's option table. */
static bool signs_of(const char *value, nvfp4_rht_config *cfg)
{
    nvfp4_options o;
    nvfp4_options_init(&o);
    if (nvfp4_options_set(&o, "rht-signs", value, NULL)) return false;
    cfg->signs = o.quant.rht_signs;
    cfg->sign_seed = o.quant.rht_sign_seed;
    return true;
}

static int run(int argc, char **argv)
{
    const char *cmd = "rht";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    nvfp4_rht_config cfg;
    nvfp4_rht_config_init(&cfg);
    const char *out = NULL, *format = NULL, *shape = NULL, *dtype = NULL;
    bool inverse = false;
    optind = 1;
    opterr = 0;
    int c;
    uint64_t u;
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_SIZE:
            if (!cli_parse_u64(optarg, &u) || u > 128) return cli_fail(cmd, "bad --size '%s'", optarg);
            cfg.size = (unsigned)u;
            break;
        case OPT_SIGNS:
            if (!signs_of(optarg, &cfg))
                return cli_fail(cmd, "bad --signs '%s' (%s)", optarg, nvfp4_option_table()[NVFP4_OPTION_RHT_SIGNS].allowed);
            break;
        case OPT_FP32: cfg.keep_fp32 = true; break;
        case OPT_INV: inverse = true; break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        default: return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cli_fail(cmd, "expected one input file (see --help)");
    if (!out) return cli_fail(cmd, "missing -o OUT");
    cli_input in;
    int rc = cli_input_load(cmd, argv[optind], shape, dtype, &in);
    nvfp4_tensor_set o;
    nvfp4_tset_init(&o);
    float *x = NULL;
    if (rc) goto done;
    x = input_as_f32(&in);
    size_t sh[2] = {in.rows, in.cols};
    nvfp4_tensor *y;
    nvfp4_error err;
    if (!x) {
        rc = cli_fail(cmd, "out of memory");
        goto done;
    }
    if (nvfp4_tset_add(&o, "y", NVFP4_T_F32, 2, sh, NULL, &y, &err) ||
        (inverse ? nvfp4_rht_inverse : nvfp4_rht_forward)(&cfg, x, in.rows, in.cols, (float *)(void *)y->data, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    rc = cli_write_set(cmd, out, format, &o);
done:
    free(x);
    nvfp4_tset_free(&o);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_rht = {"rht", "random Hadamard transform of a tensor's rows", run};
