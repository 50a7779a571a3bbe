/* cmd_verify.c - `nvfp4 verify`: compare a kernel's quantized output with a
 * golden bundle, explain the differences and name systematic causes
 * (docs/verify.md); with --suite, every case of a golden suite. The reports
 * are the library's (nvfp4_verify_bundle_report, nvfp4_suite_verify and its
 * renderings, nvfp4/suite.h): this file parses options and prints. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/suite.h"
#include "verify_cli.h"

static const char usage[] =
    "usage: nvfp4 verify --expected BUNDLE --actual FILE [--component data|scale|scale_swizzled|amax|dequant|all]\n"
    "                    [--errors N] [--json] [--witness FILE]\n"
    "       nvfp4 verify --suite DIR_OR_MANIFEST --actual-dir OUTS [--junit FILE] [--json | --tap]\n"
    "                    [--require-all] [--component C]\n"
    "\n"
    "Compares the components present in FILE (a kernel's output: .safetensors, a folder of\n"
    ".npy or .bin files with meta.json, or one .npy taken as --component, default data)\n"
    "with the golden BUNDLE, byte for byte. Components use the bundle's names (data, scale,\n"
    "scale_swizzled, amax, dequant; *_t for the columnwise output); absent ones are listed\n"
    "and skipped. FILE needs no input tensor. Prints per-component mismatch counts, the first\n"
    "N mismatches (default 10) decoded with their reason, and one line per systematic cause\n"
    "found over the whole tensor (docs/verify.md explains each).\n"
    "\n"
    "A component of the wrong size (a per-row amax where the golden has one) is a mismatch\n"
    "with reason size (\"component 'amax' holds 16 values where 1 was expected\"); the other\n"
    "components are still compared and explained.\n"
    "\n"
    "--suite: every case of a golden suite (its folder or MANIFEST) against what the kernel\n"
    "wrote for it in OUTS (OUTS/CASE.safetensors, OUTS/CASE/ or OUTS/CASE.npy): one line per\n"
    "case (its most specific cause), the causes tallied over all cases (most specific first,\n"
    "with case counts) and a summary (matched / differing / missing / unreadable); --junit\n"
    "FILE writes JUnit XML (one testcase per case: failure for a difference, error for an\n"
    "unreadable file, skipped for a missing output), --json one JSON object, --tap TAP. Every\n"
    "case is reported and the JUnit file written, also when some case cannot be read. Missing\n"
    "outputs fail only with --require-all. Each golden's sha256 is checked against the MANIFEST\n"
    "before it is used (an altered golden is an error for its case); a MANIFEST line the format\n"
    "does not describe, or a MANIFEST that is not a regular file, is refused (exit 2). When\n"
    "stderr is a terminal, the case being compared is shown there (NVFP4_PROGRESS=0 or 1 overrides).\n"
    "--suite PACK (a golden pack of `nvfp4 golden --pack`, holding pack.json): every file of the\n"
    "pack checked against its MANIFEST, then OUTS/e2m1.json and the other vector files (the\n"
    "pack's JSON with the kernel's values in each table's outputs) compared value by value,\n"
    "the first differing rows printed with their inputs, and each OUTS/suite-*/ verified as a\n"
    "suite; parts missing from OUTS are skipped unless --require-all. Text report only\n"
    "(PACK/README.md, docs/verify.md \"Golden packs\"); exit 2 also when the pack was altered.\n"
    "\n"
    "--witness FILE: when several candidates (recipes, roundings, catalogued mutants) give\n"
    "the kernel's bytes on this input, search for the smallest input on which they give\n"
    "pairwise different bytes and write it to FILE as a golden bundle (x, the expected\n"
    "outputs, each candidate's bytes as cand.NAME.*): run the kernel on its x and verify\n"
    "against FILE to settle what this input could not. The report says what it separates,\n"
    "what it could not, and its size (--json: member \"witness\"). The exit code stays\n"
    "verify's.\n"
    "\n"
    "Exit: 0 every compared component matches, 1 mismatch, 2 usage or input error (with\n"
    "--suite: a case that cannot be read, or OUTS holds none of the cases).\n";

enum { OPT_EXPECTED = 256, OPT_ACTUAL, OPT_COMPONENT, OPT_ERRORS, OPT_JSON, OPT_SUITE, OPT_ACTUAL_DIR, OPT_JUNIT,
       OPT_TAP, OPT_REQUIRE_ALL, OPT_WITNESS };
static const struct option longopts[] = {{"expected", required_argument, NULL, OPT_EXPECTED},
                                         {"actual", required_argument, NULL, OPT_ACTUAL},
                                         {"component", required_argument, NULL, OPT_COMPONENT},
                                         {"errors", required_argument, NULL, OPT_ERRORS},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"suite", required_argument, NULL, OPT_SUITE},
                                         {"actual-dir", required_argument, NULL, OPT_ACTUAL_DIR},
                                         {"junit", required_argument, NULL, OPT_JUNIT},
                                         {"tap", no_argument, NULL, OPT_TAP},
                                         {"require-all", no_argument, NULL, OPT_REQUIRE_ALL},
                                         {"witness", required_argument, NULL, OPT_WITNESS},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "verify";

/* Loads BUNDLE and FILE and runs the library's report (nvfp4_verify_bundle_report).
 * 0 match, 1 mismatch, 2 error with err set (rep->text then holds the text of
 * what came before it, when text was asked for). */
static int verify_files(const char *expected, const char *actual, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                        unsigned what, nvfp4_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    nvfp4_tensor_set b, act;
    nvfp4_tset_init(&b);
    nvfp4_tset_init(&act);
    int rc = 0;
    if (nvfp4_bundle_load(expected, &b, err) || nvfp4_tset_read(actual, &act, err)) {
        rc = NVFP4_EXIT_USAGE;
    } else {
        nvfp4_verify_bundle_opts bo;
        nvfp4_verify_bundle_opts_init(&bo);
        bo.expected_name = expected;
        bo.actual_name = actual;
        bo.verify = *o;
        bo.lone = lone;
        bo.what = what;
        rc = nvfp4_verify_bundle_report(&b, &act, &bo, rep, err) ? NVFP4_EXIT_USAGE : rep->verdict;
    }
    nvfp4_tset_free(&act);
    nvfp4_tset_free(&b);
    return rc;
}

/* verify --suite: the library's suite verification (nvfp4_suite_verify),
 * printed as text, JSON or TAP, the JUnit file written, and the verdict. */
static void draw_progress(void *ctx, size_t done, size_t total, const char *what)
{
    (void)ctx;
    cli_progress(CMD, done, total, what);
}

/* verify --suite PACK: a golden pack's report (nvfp4_pack_verify), text only. */
static int verify_pack(const char *pack, const char *outs, const nvfp4_suite_verify_opts *so, const char *junit,
                       bool json, bool tap)
{
    if (junit || json || tap) return cli_fail(CMD, "%s is a golden pack: its report is text only (drop --junit, --json "
                                                   "and --tap)", pack);
    char *text = NULL;
    int verdict = 2;
    nvfp4_error err;
    if (nvfp4_pack_verify(pack, outs, so, &text, &verdict, &err)) return cli_fail_err(CMD, &err);
    cli_progress_end();
    fputs(text, stdout);
    nvfp4_free(text);
    printf("verdict: %s\n", verdict == 0 ? "MATCH" : verdict == 1 ? "MISMATCH" : "ERROR");
    return verdict;
}

static int verify_suite(const char *suite, const char *outs, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                        const char *junit, bool json, bool tap, bool require_all)
{
    nvfp4_suite_verify_opts so;
    nvfp4_suite_verify_opts_init(&so);
    so.verify = *o;
    so.lone = lone;
    so.require_all = require_all;
    so.progress = draw_progress;
    if (nvfp4_pack_is(suite)) return verify_pack(suite, outs, &so, junit, json, tap);
    nvfp4_suite_result *r;
    nvfp4_error err;
    if (nvfp4_suite_verify(suite, outs, &so, &r, &err)) return cli_fail_err(CMD, &err);
    cli_progress_end();
    char *text = nvfp4_suite_result_render(r, tap ? NVFP4_SUITE_TAP : json ? NVFP4_SUITE_JSON : NVFP4_SUITE_TEXT);
    if (text) fputs(text, stdout);
    free(text);
    int verdict = nvfp4_suite_result_verdict(r);
    if (nvfp4_suite_result_message(r)) cli_fail(CMD, "%s", nvfp4_suite_result_message(r));
    if (junit) {
        if (nvfp4_suite_result_write_junit(r, junit, &err)) verdict = cli_fail_err(CMD, &err);
        else cli_say_wrote(CMD, junit);
    }
    if (!tap && !json) printf("verdict: %s\n", verdict == 0 ? "MATCH" : verdict == 1 ? "MISMATCH" : "ERROR");
    nvfp4_suite_result_free(r);
    return verdict;
}

/* A suite's MANIFEST given where a bundle goes gets one message that says
 * what to run instead (not the safetensors reader's "header length ..."). */
static bool is_manifest(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false; /* a FIFO would block the open */
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char head[32] = {0};
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    return n >= 23 && strncmp(head, "# nvfp4kit golden suite", 23) == 0;
}

/* --witness: the candidates left by the bundle's input and the kernel output
 * (nvfp4_witness_search with verify's candidates), printed after the report
 * (or into its JSON). 0, or 2 with the message printed. */
static int verify_witness(const char *expected, const char *actual, const char *path, const char *report_json)
{
    nvfp4_tensor_set b, act;
    nvfp4_tset_init(&b);
    nvfp4_tset_init(&act);
    nvfp4_error err;
    nvfp4_witness_opts wo;
    nvfp4_witness_opts_init(&wo);
    int rc;
    const nvfp4_tensor *x;
    if (nvfp4_bundle_load(expected, &b, &err) || nvfp4_tset_read(actual, &act, &err) ||
        nvfp4_bundle_opts(&b, expected, &wo.quant, &err)) {
        rc = cli_fail(CMD, "--witness: %s", err.message);
    } else if (!(x = nvfp4_tset_find(&b, "x")) || x->ndim != 2 ||
               (x->dtype != NVFP4_T_F32 && x->dtype != NVFP4_T_BF16)) {
        rc = cli_fail(CMD, "--witness: %s holds no 2-D input 'x' (F32 or BF16) to start from", expected);
    } else {
        wo.path = path;
        wo.actual_name = actual;
        rc = vcli_witness(CMD, x->data, x->dtype == NVFP4_T_BF16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32, x->shape[0],
                          x->shape[1], &act, &wo, report_json);
    }
    nvfp4_tset_free(&act);
    nvfp4_tset_free(&b);
    return rc;
}

static int verify_main(int argc, char **argv)
{
    const char *expected = NULL, *actual = NULL, *suite = NULL, *actual_dir = NULL, *junit = NULL, *witness = NULL;
    bool tap = false, require_all = false;
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    nvfp4_vcomponent lone = NVFP4_VC_DATA;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_EXPECTED: expected = optarg; break;
        case OPT_ACTUAL: actual = optarg; break;
        case OPT_COMPONENT:
            if (strcmp(optarg, "all") == 0) o.components = 0;
            else if (nvfp4_vcomponent_parse(optarg, &lone)) o.components = 1u << lone;
            else return cli_fail(CMD, "bad --component '%s' (data, scale, scale_swizzled, amax, dequant or all)", optarg);
            break;
        case OPT_ERRORS:
            if (!cli_parse_size(optarg, &o.max_errors) || o.max_errors > 1000000)
                return cli_fail(CMD, "bad --errors '%s' (0..1000000)", optarg);
            break;
        case OPT_JSON: json = true; break;
        case OPT_SUITE: suite = optarg; break;
        case OPT_ACTUAL_DIR: actual_dir = optarg; break;
        case OPT_JUNIT: junit = optarg; break;
        case OPT_TAP: tap = true; break;
        case OPT_REQUIRE_ALL: require_all = true; break;
        case OPT_WITNESS: witness = optarg; break;
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default: return cli_fail(CMD, "unknown option '%s'; see nvfp4 verify --help", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (suite || actual_dir) {
        if (witness) return cli_fail(CMD, "--witness goes with --expected/--actual (one case)");
        if (!suite || !actual_dir || expected || actual)
            return cli_fail(CMD, "--suite DIR_OR_MANIFEST goes with --actual-dir OUTS (not --expected/--actual)");
        if (json && tap) return cli_fail(CMD, "--json and --tap exclude each other");
        return verify_suite(suite, actual_dir, &o, lone, junit, json, tap, require_all);
    }
    if (junit || tap || require_all) return cli_fail(CMD, "--junit, --tap and --require-all go with --suite");
    if (!expected || !actual) return cli_fail(CMD, "--expected BUNDLE and --actual FILE are required");
    if (is_manifest(expected))
        return cli_fail(CMD, "%s is a golden MANIFEST (the list of a suite's bundles), not a bundle: check every "
                             "case with --suite %s --actual-dir OUTS, or give --expected one of the .safetensors "
                             "bundles it lists",
                        expected, expected);
    nvfp4_report rep;
    nvfp4_error err;
    int rc = verify_files(expected, actual, &o, lone, json ? NVFP4_REPORT_JSON : NVFP4_REPORT_TEXT, &rep, &err);
    if (rc == NVFP4_EXIT_USAGE) {
        if (rep.text) fputs(rep.text, stdout);
        cli_fail(CMD, "%s", err.message);
    } else if (witness) {
        if (!json) fputs(rep.text, stdout);
        if (verify_witness(expected, actual, witness, json ? rep.json : NULL)) rc = NVFP4_EXIT_USAGE;
    } else if (json) {
        puts(rep.json);
    } else {
        fputs(rep.text, stdout);
    }
    nvfp4_report_free(&rep);
    return rc;
}

/* Exit 1 means a mismatch and nothing else: a runtime failure is exit 2. */
static int run(int argc, char **argv)
{
    cli_runtime_guard(CMD);
    int rc = verify_main(argc, argv);
    cli_runtime_unguard();
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_verify = {"verify", "compare a kernel's quantized output with a golden bundle", run};
