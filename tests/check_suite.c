/* check_suite.c - golden suites through the library (nvfp4/suite.h), as a
 * C caller or the Python package reaches them: nvfp4_suite_generate writes
 * the edge suite (11 cases of te, a MANIFEST with the generating command)
 * and refuses to replace a folder that is not a suite of ours;
 * nvfp4_suite_verify gives per-case statuses, counts and verdicts for a
 * perfect kernel, a missing output (with and without require_all) and a
 * planted nibble swap (the known-bug layout-nibble-swap named with step and
 * status), and renders TAP and JUnit; the mutation report of the edge suite
 * alone leaves mutants alive (verdict 1); each grouped mutant's outputs
 * make one case of the grouped suite differ, and verify --suite names it.
 * The CLI's bytes are compared with these calls' by tests/cli (golden,
 * reference) and python/tests. */
#include <check.h>
#include "support/check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4.h"
#include "nvfp4/suite.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/check_suite.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void run_sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    ck_assert_int_eq(system(cmd), 0);
}

static void teardown_tmp(void) { run_sh("rm -rf '%s'%s", tmpdir, ""); }

static char *path_in(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

typedef struct {
    size_t n;
    char first[128], last[256];
} log_lines;

static void keep_line(void *ctx, const char *line)
{
    log_lines *l = ctx;
    if (l->n++ == 0) snprintf(l->first, sizeof l->first, "%s", line);
    snprintf(l->last, sizeof l->last, "%s", line);
}

/* The edge suite of te into tmpdir/g; returns the log. */
static log_lines generate_edge(void)
{
    nvfp4_suite_opts o;
    nvfp4_suite_opts_init(&o);
    log_lines l = {0};
    o.suite = "edge";
    o.log = keep_line;
    o.log_ctx = &l;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_suite_generate(path_in("g"), &o, &err), NVFP4_OK);
    return l;
}

START_TEST(generate_edge_suite)
{
    make_tmpdir();
    log_lines l = generate_edge();
    ck_assert_uint_eq(l.n, 12); /* 11 cases and the closing line */
    ck_assert_str_eq(l.first, "edge-e2m1-ties.safetensors (16 x 48)");
    char want[400];
    snprintf(want, sizeof want, "11 bundles (0 skipped) and MANIFEST in %s", path_in("g"));
    ck_assert_str_eq(l.last, want);
    nvfp4_manifest m;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_manifest_read(path_in("g/MANIFEST"), &m, &err), NVFP4_OK);
    ck_assert(m.ours);
    ck_assert_uint_eq(m.n, 11);
    ck_assert_str_eq(m.recipe, "te");
    ck_assert_str_eq(m.entries[0].path, "edge-e2m1-ties.safetensors");
    nvfp4_manifest_free(&m);
    /* a second run replaces a suite of ours; a foreign file makes the folder not ours */
    ck_assert_uint_eq(generate_edge().n, 12);
    run_sh("echo notes > '%s/notes.txt'%s", path_in("g"), "");
    nvfp4_suite_opts o;
    nvfp4_suite_opts_init(&o);
    o.suite = "edge";
    ck_assert_int_eq(nvfp4_suite_generate(path_in("g"), &o, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "not empty and not a golden suite of this tool ('notes.txt'"));
    o.suite = "everything";
    ck_assert_int_eq(nvfp4_suite_generate(path_in("h"), &o, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "bad suite 'everything' (edge, random, shapes, mutants, grouped or all)");
    o.suite = "edge";
    o.recipe = "ggml";
    o.round = NVFP4_SR;
    ck_assert_int_eq(nvfp4_suite_generate(path_in("h"), &o, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "recipe ggml has no stochastic rounding");
    struct stat st;
    ck_assert_int_ne(stat(path_in("h"), &st), 0); /* nothing written */
    teardown_tmp();
}
END_TEST

static nvfp4_suite_result *verify(const char *outs, bool require_all)
{
    nvfp4_suite_verify_opts o;
    nvfp4_suite_verify_opts_init(&o);
    o.require_all = require_all;
    nvfp4_suite_result *r = NULL;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_suite_verify(path_in("g"), path_in(outs), &o, &r, &err), NVFP4_OK);
    return r;
}

static size_t case_index(const nvfp4_suite_result *r, const char *name)
{
    for (size_t i = 0; i < nvfp4_suite_result_cases(r); i++)
        if (strcmp(nvfp4_suite_result_case_name(r, i), name) == 0) return i;
    ck_abort_msg("no case %s", name);
    return 0;
}

/* edge-e2m1-ties with its data nibbles swapped, written as the kernel's output. */
static void plant_nibble_swap(void)
{
    nvfp4_tensor_set b, out;
    nvfp4_error err;
    nvfp4_tset_init(&b);
    nvfp4_tset_init(&out);
    ck_assert_int_eq(nvfp4_tset_read(path_in("g/edge-e2m1-ties.safetensors"), &b, &err), NVFP4_OK);
    const nvfp4_tensor *d = nvfp4_tset_find(&b, "data");
    ck_assert_ptr_nonnull(d);
    uint8_t *swapped = malloc(d->nbytes);
    for (size_t i = 0; i < d->nbytes; i++) swapped[i] = (uint8_t)((d->data[i] >> 4) | (d->data[i] << 4));
    ck_assert_int_eq(nvfp4_tset_add(&out, "data", NVFP4_T_U8, d->ndim, d->shape, swapped, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_write(path_in("outs/edge-e2m1-ties.safetensors"), &out, NVFP4_FMT_SAFETENSORS, &err),
                     NVFP4_OK);
    free(swapped);
    nvfp4_tset_free(&out);
    nvfp4_tset_free(&b);
}

START_TEST(verify_edge_suite)
{
    make_tmpdir();
    generate_edge();
    run_sh("mkdir '%s'%s", path_in("outs"), "");
    run_sh("cp '%s'/*.safetensors '%s'", path_in("g"), path_in("outs"));
    size_t c[4];
    nvfp4_suite_result *r = verify("outs", false);
    nvfp4_suite_result_counts(r, c);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 0);
    ck_assert_uint_eq(c[0], 11);
    ck_assert_ptr_null(nvfp4_suite_result_message(r));
    char *tap = nvfp4_suite_result_render(r, NVFP4_SUITE_TAP);
    ck_assert_ptr_nonnull(strstr(tap, "1..11\nok 1 - edge-e2m1-ties\nok 2 - edge-e4m3-scale-ties\n"));
    nvfp4_free(tap);
    nvfp4_suite_result_free(r);

    /* one output missing: skipped, or a failure with require_all */
    run_sh("rm '%s/edge-underflow.safetensors'%s", path_in("outs"), "");
    r = verify("outs", false);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 0);
    ck_assert_int_eq(nvfp4_suite_result_case_status(r, case_index(r, "edge-underflow")), NVFP4_CASE_MISSING);
    ck_assert_str_eq(nvfp4_suite_result_case_summary(r, case_index(r, "edge-underflow")),
                     "no output in the actual folder");
    nvfp4_suite_result_free(r);
    r = verify("outs", true);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 1);
    char *junit = nvfp4_suite_result_render(r, NVFP4_SUITE_JUNIT);
    ck_assert_ptr_nonnull(strstr(junit, "tests=\"11\" failures=\"1\" errors=\"0\" skipped=\"0\""));
    nvfp4_free(junit);
    nvfp4_suite_result_free(r);

    /* a planted bug: named, with its step and status */
    plant_nibble_swap();
    r = verify("outs", false);
    nvfp4_suite_result_counts(r, c);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 1);
    ck_assert_uint_eq(c[0], 9);
    ck_assert_uint_eq(c[1], 1);
    ck_assert_uint_eq(c[2], 1);
    ck_assert_uint_eq(c[3], 0);
    size_t k = case_index(r, "edge-e2m1-ties");
    ck_assert_int_eq(nvfp4_suite_result_case_status(r, k), NVFP4_CASE_MISMATCH);
    ck_assert_ptr_nonnull(
        strstr(nvfp4_suite_result_case_summary(r, k), "rowwise: cause known-bug: layout-nibble-swap: "));
    char *js = nvfp4_suite_result_case_json(r, k);
    ck_assert_ptr_nonnull(strstr(js, "\"cause\": \"swapped-nibbles\""));
    ck_assert_ptr_nonnull(strstr(js, "\"step\":"));
    ck_assert_ptr_nonnull(strstr(js, "\"status\": \"proven\"") ? js : strstr(js, "\"status\": \"consistent\""));
    nvfp4_free(js);
    ck_assert_ptr_null(nvfp4_suite_result_case_json(r, case_index(r, "edge-underflow")));
    nvfp4_suite_result_free(r);

    /* nothing to compare: verdict 2 with the reason; no suite: an error */
    run_sh("mkdir '%s'%s", path_in("empty"), "");
    r = verify("empty", false);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 2);
    ck_assert_ptr_nonnull(strstr(nvfp4_suite_result_message(r), "holds no output for any case of"));
    nvfp4_suite_result_free(r);
    nvfp4_error err;
    ck_assert_int_ne(nvfp4_suite_verify(path_in("nosuite"), path_in("outs"), NULL, &r, &err), NVFP4_OK);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(err.message, "no such suite folder or MANIFEST"));
    teardown_tmp();
}
END_TEST

START_TEST(mutation_report_of_edge_alone)
{
    nvfp4_suite_opts o;
    nvfp4_suite_opts_init(&o);
    o.suite = "edge";
    char *text = NULL;
    int verdict = -1;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_suite_mutation_report(&o, false, &text, &verdict, &err), NVFP4_OK);
    ck_assert_int_eq(verdict, 1); /* the edge cases alone leave some of te's mutants alive */
    ck_assert_ptr_nonnull(strstr(text, "mutation report: recipe te, rounding rn, suite edge\n"));
    ck_assert_ptr_nonnull(strstr(text, "SURVIVES"));
    nvfp4_free(text);
}
END_TEST

/* The grouped suite of te into tmpdir/g, copied to tmpdir/outs (a kernel that is right everywhere). */
static void generate_grouped(void)
{
    nvfp4_suite_opts o;
    nvfp4_suite_opts_init(&o);
    o.suite = "grouped";
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_suite_generate(path_in("g"), &o, &err), NVFP4_OK);
    run_sh("mkdir '%s'%s", path_in("outs"), "");
    run_sh("cp '%s'/*.safetensors '%s'", path_in("g"), path_in("outs"));
}

/* What grouped mutant i writes for grouped-m5-0-130-k64's input, as the kernel's output of that case. */
static void plant_grouped_mutant(size_t i)
{
    nvfp4_tensor_set b, out;
    nvfp4_error err;
    nvfp4_tset_init(&b);
    nvfp4_tset_init(&out);
    ck_assert_int_eq(nvfp4_tset_read(path_in("g/grouped-m5-0-130-k64.safetensors"), &b, &err), NVFP4_OK);
    const nvfp4_tensor *x = nvfp4_tset_find(&b, "x");
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(x->shape[0], 135);
    ck_assert_uint_eq(x->shape[1], 64);
    const size_t m[3] = {5, 0, 130};
    ck_assert_int_eq(nvfp4_grouped_mutant_run(i, x->data, NVFP4_DTYPE_F32, 135, 64, m, 3, NULL, &out, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_write(path_in("outs/grouped-m5-0-130-k64.safetensors"), &out, NVFP4_FMT_SAFETENSORS,
                                      &err),
                     NVFP4_OK);
    nvfp4_tset_free(&out);
    nvfp4_tset_free(&b);
}

/* The grouped suite: 4 cases that match themselves; each grouped mutant's
 * outputs for one case make that case (only) differ, and the suite's
 * summary names that mutant alone, with the expert that differs. */
START_TEST(grouped_suite_names_each_grouped_mutant)
{
    make_tmpdir();
    generate_grouped();
    size_t c[4];
    nvfp4_suite_result *r = verify("outs", false);
    nvfp4_suite_result_counts(r, c);
    ck_assert_int_eq(nvfp4_suite_result_verdict(r), 0);
    ck_assert_uint_eq(nvfp4_suite_result_cases(r), 4);
    ck_assert_uint_eq(c[0], 4);
    nvfp4_suite_result_free(r);
    static const char *const want[2] = {
        "grouped: cause grouped-shared-global-scale: one global scale shared across experts: every expert quantized "
        "with the amax of the whole stacked tensor (expert 2 differs)",
        "grouped: cause grouped-unpadded-segments: group scale segments not padded to 128 rows: the stacked scales "
        "swizzled as one 128x4 matrix (expert 2 differs)"};
    for (size_t i = 0; i < 2; i++) {
        plant_grouped_mutant(i);
        r = verify("outs", false);
        nvfp4_suite_result_counts(r, c);
        ck_assert_int_eq(nvfp4_suite_result_verdict(r), 1);
        ck_assert_uint_eq(c[0], 3);
        ck_assert_uint_eq(c[1], 1);
        size_t k = case_index(r, "grouped-m5-0-130-k64");
        ck_assert_int_eq(nvfp4_suite_result_case_status(r, k), NVFP4_CASE_MISMATCH);
        ck_assert_str_eq(nvfp4_suite_result_case_summary(r, k), want[i]);
        char *js = nvfp4_suite_result_case_json(r, k);
        ck_assert_ptr_nonnull(strstr(js, "\"status\": \"proven\""));
        ck_assert_ptr_nonnull(strstr(js, "\"orientation\": \"grouped\""));
        nvfp4_free(js);
        nvfp4_suite_result_free(r);
    }
    teardown_tmp();
}
END_TEST

static Suite *suite_suite(void)
{
    Suite *s = suite_create("suite");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, generate_edge_suite);
    tcase_add_test(tc, verify_edge_suite);
    tcase_add_test(tc, mutation_report_of_edge_alone);
    tcase_add_test(tc, grouped_suite_names_each_grouped_mutant);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(suite_suite());
}
