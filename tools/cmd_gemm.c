/* cmd_gemm.c - `nvfp4 gemm`: the emulated block-scaled GEMM D = alpha A B^T of
 * two bundles in the `te` accumulation order (docs/semantics.md, "Emulated GEMM"). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/gemm.h"

static const char usage[] =
    "usage: nvfp4 gemm --a BUNDLE --b BUNDLE -o OUT [--a-columnwise] [--b-columnwise]\n"
    "                  [--alpha F] [--order te|exact] [--format safetensors|npy|bin]\n"
    "\n"
    "D[M, N] = alpha * A * B^T from two quantized K-major operands, A [M, K] and B [N, K]\n"
    "(the rowwise output of each bundle, or the columnwise one with --a/b-columnwise).\n"
    "--order te (default): exact 16-element block partials summed sequentially over K in fp32,\n"
    "then times alpha * amax_A * amax_B / (36*448*448), bit-reproducible; --order exact: one\n"
    "final rounding. Writes the fp32 tensor 'd'. Exit: 0 written, 2 usage or input error.\n";

enum { OPT_A = 256, OPT_B, OPT_ACOL, OPT_BCOL, OPT_ALPHA, OPT_ORDER, OPT_FORMAT };
static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'}, {"a", required_argument, NULL, OPT_A},
    {"b", required_argument, NULL, OPT_B},    {"a-columnwise", no_argument, NULL, OPT_ACOL},
    {"b-columnwise", no_argument, NULL, OPT_BCOL}, {"alpha", required_argument, NULL, OPT_ALPHA},
    {"order", required_argument, NULL, OPT_ORDER}, {"format", required_argument, NULL, OPT_FORMAT},
    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

static int load(const char *cmd, const char *path, nvfp4_quantized *q)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    int rc = 0;
    if (nvfp4_tset_read(path, &s, &err) || nvfp4_bundle_to_quantized(&s, path, q, &err)) rc = cli_fail_err(cmd, &err);
    nvfp4_tset_free(&s);
    return rc;
}

static int run(int argc, char **argv)
{
    const char *cmd = "gemm";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    const char *a = NULL, *b = NULL, *out = NULL, *format = NULL;
    bool acol = false, bcol = false;
    float alpha = 1.0f;
    nvfp4_gemm_order order = NVFP4_GEMM_TE;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_A: a = optarg; break;
        case OPT_B: b = optarg; break;
        case OPT_ACOL: acol = true; break;
        case OPT_BCOL: bcol = true; break;
        case OPT_ALPHA:
            if (!cli_parse_f32(optarg, &alpha)) return cli_fail(cmd, "bad --alpha '%s'", optarg);
            break;
        case OPT_ORDER:
            if (strcmp(optarg, "te") == 0) order = NVFP4_GEMM_TE;
            else if (strcmp(optarg, "exact") == 0) order = NVFP4_GEMM_EXACT;
            else return cli_fail(cmd, "bad --order '%s' (te or exact)", optarg);
            break;
        case OPT_FORMAT: format = optarg; break;
        default: return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind != argc) return cli_fail(cmd, "unexpected argument '%s' (see --help)", argv[optind]);
    if (!a || !b || !out) return cli_fail(cmd, "need --a BUNDLE, --b BUNDLE and -o OUT");
    nvfp4_quantized qa, qb;
    memset(&qa, 0, sizeof qa);
    memset(&qb, 0, sizeof qb);
    nvfp4_tensor_set o;
    nvfp4_tset_init(&o);
    int rc = load(cmd, a, &qa);
    if (!rc) rc = load(cmd, b, &qb);
    if (!rc && (acol ? !qa.has_col : !qa.has_row)) rc = cli_fail(cmd, "%s: lacks the %s output", a, acol ? "columnwise" : "rowwise");
    if (!rc && (bcol ? !qb.has_col : !qb.has_row)) rc = cli_fail(cmd, "%s: lacks the %s output", b, bcol ? "columnwise" : "rowwise");
    if (!rc) {
        const nvfp4_qtensor *ta = acol ? &qa.col : &qa.row, *tb = bcol ? &qb.col : &qb.row;
        size_t sh[2] = {ta->rows, tb->rows};
        nvfp4_tensor *d;
        nvfp4_error err;
        if (nvfp4_tset_add(&o, "d", NVFP4_T_F32, 2, sh, NULL, &d, &err) ||
            nvfp4_gemm(&qa, acol, &qb, bcol, alpha, order, (float *)(void *)d->data, &err))
            rc = cli_fail_err(cmd, &err);
        else {
            (void)nvfp4_tset_meta_set(&o, "gemm_order", order == NVFP4_GEMM_TE ? "te" : "exact", NULL);
            rc = cli_write_set(cmd, out, format, &o);
        }
    }
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
    nvfp4_tset_free(&o);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_gemm = {"gemm", "emulated block-scaled GEMM of two bundles (te order)", run};
