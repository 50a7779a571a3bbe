/* cmd_gemm_check.c - `nvfp4 gemm-check`: check a GEMM of unknown
 * accumulation order (cuBLAS, a custom kernel) against the exact result
 * within the rigorous fp32 accumulation bound of nvfp4_gemm_error_bound,
 * and separately report whether it equals the `te` order bit for bit. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/gemm.h"
#include "verify_cli.h"

static const char usage[] =
    "usage: nvfp4 gemm-check --a BUNDLE --b BUNDLE --actual D [--a-columnwise] [--b-columnwise] [--alpha F]\n"
    "                        [--errors N]\n"
    "\n"
    "D = alpha * A * B^T (alpha finite, default 1), A [M, K] and B [N, K] the (rowwise, or --*-columnwise) outputs of the\n"
    "two golden bundles. D is the kernel's fp32 result [M, N]: a file holding one F32 tensor, or\n"
    "a tensor named 'd' (as `nvfp4 gemm` writes it). Every element must lie within the rigorous\n"
    "bound of fp32 accumulation of the exact 16-element block partials in ANY order (docs/\n"
    "semantics.md); whether D equals the sequential `te` order bit for bit is reported apart.\n"
    "When it does not, a cause line says why: bf16-output (D rounded to bf16), constant-ratio\n"
    "(D = r x exact: a missing or doubled global scale or alpha, named from the amaxes),\n"
    "transposed (D column-major, or an operand's other orientation), accumulation-order (within\n"
    "the bound; the reverse, pairwise or exact order that reproduces D bit for bit, if any).\n"
    "\n"
    "Exit: 0 every element within its bound, 1 some are outside, 2 usage or input error.\n";

enum { OPT_A = 256, OPT_B, OPT_ACTUAL, OPT_ACOL, OPT_BCOL, OPT_ALPHA, OPT_ERRORS };
static const struct option longopts[] = {{"a", required_argument, NULL, OPT_A},
                                         {"b", required_argument, NULL, OPT_B},
                                         {"actual", required_argument, NULL, OPT_ACTUAL},
                                         {"a-columnwise", no_argument, NULL, OPT_ACOL},
                                         {"b-columnwise", no_argument, NULL, OPT_BCOL},
                                         {"alpha", required_argument, NULL, OPT_ALPHA},
                                         {"errors", required_argument, NULL, OPT_ERRORS},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "gemm-check";

static int load(const char *path, nvfp4_quantized *q)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    int rc = 0;
    if (nvfp4_bundle_load(path, &s, &err) || nvfp4_bundle_to_quantized(&s, path, q, &err))
        rc = cli_fail(CMD, "%s", err.message);
    nvfp4_tset_free(&s);
    return rc;
}

/* The kernel's output as the report reads it: tensor 'd', or the only F32 tensor. */
static int check(const nvfp4_quantized *qa, const nvfp4_quantized *qb, const nvfp4_gemm_check_opts *o)
{
    nvfp4_tensor_set ds;
    nvfp4_tset_init(&ds);
    nvfp4_error err;
    int rc;
    nvfp4_report rep;
    memset(&rep, 0, sizeof rep);
    if (nvfp4_tset_read(o->d_name, &ds, &err) || nvfp4_gemm_check_text(qa, qb, &ds, o, &rep, &err)) {
        rc = cli_fail(CMD, "%s", err.message);
    } else {
        fputs(rep.text, stdout);
        rc = rep.verdict;
    }
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&ds);
    return rc;
}

static int gemm_check_main(int argc, char **argv)
{
    const char *a = NULL, *b = NULL, *d = NULL;
    bool acol = false, bcol = false;
    float alpha = 1.0f;
    size_t nerr = 10;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_A: a = optarg; break;
        case OPT_B: b = optarg; break;
        case OPT_ACTUAL: d = optarg; break;
        case OPT_ACOL: acol = true; break;
        case OPT_BCOL: bcol = true; break;
        case OPT_ALPHA:
            if (!cli_parse_f32(optarg, &alpha)) return cli_fail(CMD, "bad --alpha '%s'", optarg);
            /* NaN or Inf leaves no finite bound to check against: a usage error, not a mismatch */
            if (!isfinite(alpha)) return cli_fail(CMD, "bad --alpha '%s' (must be finite)", optarg);
            break;
        case OPT_ERRORS:
            if (!cli_parse_size(optarg, &nerr)) return cli_fail(CMD, "bad --errors '%s'", optarg);
            break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default: return cli_fail(CMD, "unknown option '%s'; see nvfp4 gemm-check --help", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (!a || !b || !d) return cli_fail(CMD, "--a BUNDLE, --b BUNDLE and --actual D are required");
    nvfp4_quantized qa, qb;
    memset(&qa, 0, sizeof qa);
    memset(&qb, 0, sizeof qb);
    int rc = load(a, &qa);
    if (!rc) rc = load(b, &qb);
    if (!rc && (acol ? !qa.has_col : !qa.has_row))
        rc = cli_fail(CMD, "%s lacks the %s output", a, acol ? "columnwise" : "rowwise");
    if (!rc && (bcol ? !qb.has_col : !qb.has_row))
        rc = cli_fail(CMD, "%s lacks the %s output", b, bcol ? "columnwise" : "rowwise");
    if (!rc) {
        nvfp4_gemm_check_opts o;
        nvfp4_gemm_check_opts_init(&o);
        o.a_name = a;
        o.b_name = b;
        o.d_name = d;
        o.a_columnwise = acol;
        o.b_columnwise = bcol;
        o.alpha = alpha;
        o.max_errors = nerr;
        rc = check(&qa, &qb, &o);
    }
    nvfp4_quantized_free(&qa);
    nvfp4_quantized_free(&qb);
    return rc;
}

/* Exit 1 means outside the bound and nothing else: a runtime failure is exit 2. */
static int run(int argc, char **argv)
{
    cli_runtime_guard(CMD);
    int rc = gemm_check_main(argc, argv);
    cli_runtime_unguard();
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_gemm_check = {"gemm-check", "check a GEMM against the rigorous any-order bound", run};
