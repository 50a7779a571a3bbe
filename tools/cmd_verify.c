/* cmd_verify.c - `nvfp4 verify`: compare a kernel's quantized output with a
 * golden bundle, explain the differences and name systematic causes
 * (docs/verify.md). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "verify_cli.h"

static const char usage[] =
    "usage: nvfp4 verify --expected BUNDLE --actual FILE [--component data|scale|scale_swizzled|amax|dequant|all]\n"
    "                    [--errors N] [--json]\n"
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
    "--suite: every case of a golden suite (its folder or MANIFEST) against what the kernel\n"
    "wrote for it in OUTS (OUTS/CASE.safetensors, OUTS/CASE/ or OUTS/CASE.npy): one line per\n"
    "case and a summary (matched / differing / missing); --junit FILE writes JUnit XML (one\n"
    "testcase per case: failure for a difference, skipped for a missing output), --json one\n"
    "JSON object, --tap TAP. Missing outputs fail only with --require-all; exit 2 when OUTS\n"
    "holds none of the cases.\n"
    "\n"
    "Exit: 0 every compared component matches, 1 mismatch, 2 usage or input error.\n";

enum { OPT_EXPECTED = 256, OPT_ACTUAL, OPT_COMPONENT, OPT_ERRORS, OPT_JSON, OPT_SUITE, OPT_ACTUAL_DIR, OPT_JUNIT,
       OPT_TAP, OPT_REQUIRE_ALL };
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
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "verify";

static void fmt_f(char *b, size_t n, float v)
{
    if (isnan(v)) snprintf(b, n, "-");
    else cli_format_f32(b, n, v);
}

static void print_mismatch(const nvfp4_vmismatch *m, const char *sfx)
{
    char in[32], sc[32], ev[32], av[32];
    fmt_f(in, sizeof in, m->input);
    fmt_f(sc, sizeof sc, m->scaled);
    cli_format_f32(ev, sizeof ev, m->expected_value);
    cli_format_f32(av, sizeof av, m->actual_value);
    const char *comp = nvfp4_vcomponent_name(m->component);
    if (m->reason == NVFP4_VR_SIZE) {
        printf("  %s%s: expected %.0f %s, actual has %.0f: %s\n", comp, sfx, (double)m->expected_value,
               m->component == NVFP4_VC_DEQUANT ? "bytes (fp32)" : "bytes", (double)m->actual_value,
               nvfp4_vreason_name(m->reason));
        return;
    }
    switch (m->component) {
    case NVFP4_VC_DATA:
        printf("  %s%s[%zu] row %zu col %zu block %zu: input %s scaled %s expected 0x%X (%s) actual 0x%X (%s): %s\n",
               comp, sfx, m->index, m->row, m->col, m->block, in, sc, m->expected_code, ev, m->actual_code, av,
               nvfp4_vreason_name(m->reason));
        break;
    case NVFP4_VC_SCALE:
        printf("  %s%s[%zu] row %zu col %zu block %zu: block amax %s scaled %s expected 0x%02X (%s) actual 0x%02X "
               "(%s): %s\n",
               comp, sfx, m->index, m->row, m->col, m->block, in, sc, m->expected_code, ev, m->actual_code, av,
               nvfp4_vreason_name(m->reason));
        break;
    case NVFP4_VC_SCALE_SWIZZLED:
        printf("  scale%s_swizzled byte %zu: expected 0x%02X (%s) actual 0x%02X (%s): %s\n", sfx, m->index,
               m->expected_code, ev, m->actual_code, av, nvfp4_vreason_name(m->reason));
        break;
    default:
        printf("  %s%s[%zu] row %zu col %zu: input %s expected %s (0x%08X) actual %s (0x%08X): %s\n", comp, sfx,
                   m->index, m->row, m->col, in, ev, m->expected_code, av, m->actual_code,
                   nvfp4_vreason_name(m->reason));
    }
}

static void print_text(const vcli_bundle *b, const nvfp4_vreport *rep, bool colwise, const vcli_view *ev)
{
    const char *sfx = colwise ? "_t" : "";
    printf("%s output (%zu x %zu, recipe %s, %s, block %s):\n", colwise ? "columnwise" : "rowwise", ev->srows,
           ev->scols, b->info->name, nvfp4_rounding_name(b->opts.rounding), nvfp4_block_name(b->opts.block));
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) {
        char name[40];
        if (c == NVFP4_VC_SCALE_SWIZZLED) snprintf(name, sizeof name, "scale%s_swizzled", sfx); /* bundle name */
        else snprintf(name, sizeof name, "%s%s", nvfp4_vcomponent_name((nvfp4_vcomponent)c), sfx);
        if (!rep->expected_present[c]) continue;
        if (!rep->actual_present[c]) printf("  %-18s absent in actual: not compared\n", name);
        else if (!rep->compared[c]) printf("  %-18s not selected\n", name);
        else if (rep->reason_count[NVFP4_VR_SIZE] && rep->total[c] == 0)
            printf("  %-18s WRONG SIZE\n", name);
        else
            printf("  %-18s %zu of %zu differ%s\n", name, rep->mismatches[c], rep->total[c],
                   rep->mismatches[c] ? "" : " (match)");
    }
    if (rep->n_first) {
        printf("first %zu mismatches:\n", rep->n_first);
        for (size_t i = 0; i < rep->n_first; i++) print_mismatch(&rep->first[i], sfx);
        printf("reasons:");
        for (unsigned r = 0; r < NVFP4_VR_COUNT; r++)
            if (rep->reason_count[r]) printf(" %s %zu", nvfp4_vreason_name((nvfp4_vreason)r), rep->reason_count[r]);
        printf("\n");
    }
    for (size_t i = 0; i < rep->n_causes; i++)
        printf("cause %s: %s\n", nvfp4_cause_name(rep->causes[i].cause), rep->causes[i].line);
}

static json_t *json_f(float v) { return isfinite(v) ? json_real((double)v) : json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"); }

static json_t *report_json(const vcli_bundle *b, const nvfp4_vreport *rep, bool colwise, const vcli_view *ev)
{
    json_t *o = json_object();
    json_object_set_new(o, "orientation", json_string(colwise ? "columnwise" : "rowwise"));
    json_object_set_new(o, "rows", json_integer((json_int_t)ev->srows));
    json_object_set_new(o, "cols", json_integer((json_int_t)ev->scols));
    json_object_set_new(o, "recipe", json_string(b->info->name));
    json_t *comps = json_object();
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) {
        if (!rep->expected_present[c]) continue;
        json_t *k = json_object();
        const char *state = !rep->actual_present[c] ? "absent" : !rep->compared[c] ? "skipped"
                            : rep->mismatches[c]   ? "mismatch"
                                                   : "match";
        json_object_set_new(k, "status", json_string(state));
        json_object_set_new(k, "compared", json_integer((json_int_t)rep->total[c]));
        json_object_set_new(k, "mismatches", json_integer((json_int_t)rep->mismatches[c]));
        json_object_set_new(comps, nvfp4_vcomponent_name((nvfp4_vcomponent)c), k);
    }
    json_object_set_new(o, "components", comps);
    json_t *ms = json_array();
    for (size_t i = 0; i < rep->n_first; i++) {
        const nvfp4_vmismatch *m = &rep->first[i];
        json_t *j = json_object();
        json_object_set_new(j, "component", json_string(nvfp4_vcomponent_name(m->component)));
        json_object_set_new(j, "index", json_integer((json_int_t)m->index));
        json_object_set_new(j, "row", json_integer((json_int_t)m->row));
        json_object_set_new(j, "col", json_integer((json_int_t)m->col));
        json_object_set_new(j, "block", json_integer((json_int_t)m->block));
        json_object_set_new(j, "input", json_f(m->input));
        json_object_set_new(j, "scaled", json_f(m->scaled));
        json_object_set_new(j, "expected_code", json_integer(m->expected_code));
        json_object_set_new(j, "actual_code", json_integer(m->actual_code));
        json_object_set_new(j, "expected_value", json_f(m->expected_value));
        json_object_set_new(j, "actual_value", json_f(m->actual_value));
        json_object_set_new(j, "reason", json_string(nvfp4_vreason_name(m->reason)));
        json_array_append_new(ms, j);
    }
    json_object_set_new(o, "first_mismatches", ms);
    json_t *rc = json_object();
    for (unsigned r = 0; r < NVFP4_VR_COUNT; r++)
        if (rep->reason_count[r])
            json_object_set_new(rc, nvfp4_vreason_name((nvfp4_vreason)r), json_integer((json_int_t)rep->reason_count[r]));
    json_object_set_new(o, "reasons", rc);
    json_t *cs = json_array();
    for (size_t i = 0; i < rep->n_causes; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "cause", json_string(nvfp4_cause_name(rep->causes[i].cause)));
        json_object_set_new(j, "line", json_string(rep->causes[i].line));
        json_array_append_new(cs, j);
    }
    json_object_set_new(o, "causes", cs);
    json_object_set_new(o, "match", json_boolean(nvfp4_vreport_match(rep)));
    return o;
}

/* The catalogued mutants of the bundle's recipe and options (nvfp4/verify.h),
 * quantized from its input, as candidates of one orientation: a kernel whose
 * bytes equal one is named "your kernel computes ..." (cause known-bug).
 * Outputs go to out[0..*nout); returns the number of candidates. */
static size_t mutant_candidates(const vcli_bundle *b, bool colwise, const nvfp4_vview *geom, nvfp4_mutant_output *out,
                                size_t *nout, nvfp4_vcandidate *cand)
{
    size_t nc = 0;
    *nout = 0;
    for (size_t i = 0; i < nvfp4_mutant_count(); i++) {
        const nvfp4_mutant_info *m = nvfp4_mutant_at(i);
        if (!nvfp4_mutant_applies(m, b->info->name, &b->opts)) continue;
        nvfp4_mutant_output *mo = &out[*nout];
        nvfp4_error err;
        if (nvfp4_mutant_quantize(m, b->x, NVFP4_DTYPE_F32, b->rows, b->cols, &b->opts, mo, &err)) continue;
        (*nout)++;
        const nvfp4_qtensor *t = colwise ? &mo->q.col : &mo->q.row;
        if (!(colwise ? mo->q.has_col : mo->q.has_row)) continue;
        nvfp4_vview v = *geom;
        v.x = NULL;
        v.data = t->data;
        v.data_bytes = t->data_bytes;
        v.scale = t->scale;
        v.scale_bytes = t->scale_rows * t->scale_cols;
        v.scale_swizzled = mo->swizzled[colwise];
        v.scale_swizzled_bytes = mo->swizzled_bytes[colwise];
        v.amax = NULL;
        v.dequant = NULL;
        v.dequant_count = 0;
        cand[nc++] = (nvfp4_vcandidate){m->name, v, false, m};
    }
    return nc;
}

/* Verifies one orientation; returns 0 match, 1 mismatch, 2 error; appends JSON. */
static int verify_orientation(const vcli_bundle *b, const nvfp4_tensor_set *act, const char *apath, bool colwise,
                              const nvfp4_verify_opts *base, nvfp4_vcomponent lone, json_t *jarr, bool *compared_any)
{
    vcli_view ev, av, other;
    memset(&other, 0, sizeof other);
    int rc = vcli_expected_view(CMD, b, colwise, &ev);
    if (rc) return rc;
    if ((rc = vcli_actual_view(CMD, apath, act, colwise, &ev.v, lone, &av)) || (rc = vcli_round_dequant(&ev, &av))) {
        vcli_view_free(&av);
        vcli_view_free(&ev);
        return rc;
    }
    if (!av.any) {
        if (!jarr) printf("%s output: absent in actual\n", colwise ? "columnwise" : "rowwise");
        vcli_view_free(&av);
        vcli_view_free(&ev);
        return 0;
    }
    *compared_any = true;
    nvfp4_verify_opts o = *base;
    o.expected_name = b->info->name;
    /* an SR golden: the scaled values let verify name a byte-order mix-up */
    float *sr_y = NULL;
    size_t bl = b->opts.block == NVFP4_BLOCK_1X32 ? 32 : 16;
    if (b->opts.rounding == NVFP4_SR && ev.v.x && ev.v.amax && !ev.v.e4m3_elements && !ev.v.ue8m0_scales) {
        sr_y = malloc(ev.v.rows * ev.v.cols * sizeof *sr_y);
        if (sr_y && vcli_scaled_values(CMD, nvfp4_recipe_find(b->info->name), *ev.v.amax, ev.v.scale, ev.v.rows,
                                       ev.v.cols, bl, ev.v.x, sr_y) == 0) {
            o.sr_scaled = sr_y;
            o.sr_seed = b->opts.seed;
            o.sr_offset = b->opts.offset + (colwise ? (bl == 32 ? 2 : 1) : 0);
            o.sr_block_elems = bl;
        }
    }
    nvfp4_vreport rep;
    nvfp4_error err;
    if (nvfp4_verify(&ev.v, &av.v, &o, &rep, &err)) {
        free(sr_y);
        vcli_view_free(&av);
        vcli_view_free(&ev);
        return cli_fail(CMD, "%s: %s", b->path, err.message);
    }
    /* a mismatch: name a catalogued bug, a different recipe or orientation if one matches */
    vcli_variant *var = NULL;
    size_t nvar = 0, nmut = 0;
    nvfp4_mutant_output *mut = NULL;
    if (!nvfp4_vreport_match(&rep) && b->x) {
        bool plain = !(colwise && b->opts.rht); /* recipes re-quantize x only outside the Hadamard domain */
        if (plain && vcli_variants(CMD, b->x, b->rows, b->cols, &b->opts, colwise, false, &var, &nvar)) nvar = 0;
        size_t nm = nvfp4_mutant_count();
        mut = calloc(nm ? nm : 1, sizeof *mut);
        nvfp4_vcandidate *cand = calloc(nvar + nm + 1, sizeof *cand);
        size_t nc = 0;
        if (cand && mut) {
            if (plain && vcli_bundle_has(b, !colwise) && vcli_expected_view(CMD, b, !colwise, &other) == 0)
                cand[nc++] = (nvfp4_vcandidate){colwise ? "the rowwise output" : "the columnwise output (data_t)",
                                                other.v, true, NULL};
            nc += mutant_candidates(b, colwise, &ev.v, mut, &nmut, cand + nc);
            char self[64];
            snprintf(self, sizeof self, "%s %s %s", b->info->name, nvfp4_rounding_name(b->opts.rounding),
                     nvfp4_block_name(b->opts.block));
            for (size_t i = 0; i < nvar; i++)
                if (strcmp(var[i].name, self) != 0) cand[nc++] = (nvfp4_vcandidate){var[i].name, var[i].view.v, false, NULL};
            o.candidates = cand;
            o.n_candidates = nc;
            nvfp4_vreport_free(&rep);
            nvfp4_verify(&ev.v, &av.v, &o, &rep, &err);
        }
        free(cand);
    }
    /* fast-math with RHT: TE's fused RHT cast is not the plain cast's rule (docs/semantics.md, "Recipes") */
    if (!nvfp4_vreport_match(&rep) && colwise && b->opts.rht && strcmp(b->info->name, "fast-math") == 0)
        nvfp4_vreport_add_cause(&rep, NVFP4_CAUSE_ENCODE_FACTOR,
                                "data_t: TE's fast-math RHT cast (hadamard_transform_cast_fusion.cu, kUseFastMath) takes "
                                "rcp.approx.ftz.f32 of s*S_dec, which PTX does not specify bit for bit, and keeps the RHT "
                                "output in fp32; this recipe applies the plain cast's bf16 rule, so such a kernel may "
                                "differ in the blocks where the two round otherwise");
    if (jarr) json_array_append_new(jarr, report_json(b, &rep, colwise, &ev));
    else print_text(b, &rep, colwise, &ev);
    int verdict = nvfp4_vreport_match(&rep) ? 0 : 1;
    nvfp4_vreport_free(&rep);
    vcli_variants_free(var, nvar);
    for (size_t i = 0; i < nmut; i++) nvfp4_mutant_output_free(&mut[i]);
    free(mut);
    free(sr_y);
    vcli_view_free(&other);
    vcli_view_free(&av);
    vcli_view_free(&ev);
    return verdict;
}

int vcli_verify_files(const char *expected, const char *actual, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      json_t *outputs)
{
    vcli_bundle b;
    int rc = vcli_bundle_load(CMD, expected, &b);
    if (rc) {
        vcli_bundle_free(&b);
        return rc;
    }
    nvfp4_tensor_set act;
    nvfp4_tset_init(&act);
    nvfp4_error err;
    if (nvfp4_tset_read(actual, &act, &err)) {
        vcli_bundle_free(&b);
        return cli_fail(CMD, "%s", err.message);
    }
    bool any = false;
    int verdict = 0;
    for (int colwise = 0; colwise < 2 && verdict != 2; colwise++) {
        if (!vcli_bundle_has(&b, colwise)) continue;
        int r = verify_orientation(&b, &act, actual, colwise, o, lone, outputs, &any);
        if (r > verdict) verdict = r;
    }
    if (verdict != 2 && !any) verdict = cli_fail(CMD, "%s holds none of the bundle's components (data, scale, "
                                                 "scale_swizzled, amax, dequant, *_t)", actual);
    nvfp4_tset_free(&act);
    vcli_bundle_free(&b);
    return verdict;
}

static int verify_main(int argc, char **argv)
{
    const char *expected = NULL, *actual = NULL, *suite = NULL, *actual_dir = NULL, *junit = NULL;
    bool tap = false, require_all = false;
    nvfp4_verify_opts o;
    nvfp4_verify_opts_init(&o);
    nvfp4_vcomponent lone = NVFP4_VC_DATA;
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        case 'h': fputs(usage, stdout); return NVFP4_EXIT_OK;
        default: return cli_fail(CMD, "unknown option '%s'; see nvfp4 verify --help", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_fail(CMD, "unexpected argument '%s'", argv[optind]);
    if (suite || actual_dir) {
        if (!suite || !actual_dir || expected || actual)
            return cli_fail(CMD, "--suite DIR_OR_MANIFEST goes with --actual-dir OUTS (not --expected/--actual)");
        if (json && tap) return cli_fail(CMD, "--json and --tap exclude each other");
        return vcli_verify_suite(suite, actual_dir, &o, lone, junit, json, tap, require_all);
    }
    if (junit || tap || require_all) return cli_fail(CMD, "--junit, --tap and --require-all go with --suite");
    if (!expected || !actual) return cli_fail(CMD, "--expected BUNDLE and --actual FILE are required");
    vcli_bundle b;
    int rc = vcli_bundle_load(CMD, expected, &b);
    if (rc) {
        vcli_bundle_free(&b);
        return rc;
    }
    nvfp4_tensor_set act;
    nvfp4_tset_init(&act);
    nvfp4_error err;
    if (nvfp4_tset_read(actual, &act, &err)) {
        vcli_bundle_free(&b);
        return cli_fail(CMD, "%s", err.message);
    }
    json_t *root = json ? json_object() : NULL, *arr = json ? json_array() : NULL;
    if (!json) printf("expected %s, actual %s\n", expected, actual);
    bool any = false;
    int verdict = 0;
    for (int colwise = 0; colwise < 2 && verdict != 2; colwise++) {
        if (!vcli_bundle_has(&b, colwise)) continue;
        int r = verify_orientation(&b, &act, actual, colwise, &o, lone, arr, &any);
        if (r > verdict) verdict = r;
    }
    if (verdict != 2 && !any) verdict = cli_fail(CMD, "%s holds none of the bundle's components (data, scale, "
                                                 "scale_swizzled, amax, dequant, *_t)", actual);
    if (verdict != 2) {
        if (json) {
            json_object_set_new(root, "expected", json_string(expected));
            json_object_set_new(root, "actual", json_string(actual));
            json_object_set_new(root, "outputs", arr);
            arr = NULL;
            json_object_set_new(root, "verdict", json_string(verdict ? "mismatch" : "match"));
            char *s = json_dumps(root, JSON_INDENT(2));
            if (s) puts(s);
            free(s);
        } else {
            printf("verdict: %s\n", verdict ? "MISMATCH" : "MATCH");
        }
    }
    json_decref(arr);
    json_decref(root);
    nvfp4_tset_free(&act);
    vcli_bundle_free(&b);
    return verdict;
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
