/* check_separate.c - the separating cases of the committed te RN suite
 * (reference/te-rn, `separate-N`, src/verify/suite_mutants.c): a kernel that
 * computes S_enc as torch does for 2688.0 / amax (the catalogued mutant
 * global-torch-rdiv, run here as the kernel: its codes, scales, swizzled
 * scales and amax in both orientations) is only `consistent with` another
 * global-scale formula on every other case of the suite, and `proven` on a
 * separate-N case; `nvfp4 verify --suite` then tallies a proven known-bug
 * cause, where the suite without the separate-N cases tallies none.
 * The folder is $NVFP4_REFERENCE (default ./reference), the CLI $NVFP4_BIN. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "nvfp4/verify.h"
#include "support/check_main.h"

#define MUTANT "global-torch-rdiv"

static const char *ref_dir(void)
{
    const char *d = getenv("NVFP4_REFERENCE");
    return d ? d : "reference";
}

static const char *cli(void)
{
    const char *b = getenv("NVFP4_BIN");
    return b ? b : "build/bin/nvfp4";
}

/* The cases of a suite, in MANIFEST order. */
static size_t suite_cases(const char *dir, char names[][128], size_t max)
{
    char m[4200], line[1024];
    snprintf(m, sizeof m, "%s/MANIFEST", dir);
    FILE *f = fopen(m, "r");
    ck_assert_msg(f != NULL, "cannot open %s (run from the repository root)", m);
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        if (line[0] == '#') continue;
        char *name = strstr(line, "  ");
        ck_assert_ptr_nonnull(name);
        name += 2;
        name[strcspn(name, "\n")] = '\0';
        snprintf(names[n++], 128, "%s", name);
    }
    fclose(f);
    return n;
}

static void add_u8(nvfp4_tensor_set *s, const char *name, const uint8_t *p, size_t n)
{
    size_t shape[1] = {n};
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_tset_add(s, name, NVFP4_T_U8, 1, shape, p, NULL, &err), NVFP4_OK);
}

/* What the kernel writes for the bundle at path: the mutant's bytes. */
static void kernel_output(const char *path, nvfp4_tensor_set *golden, nvfp4_tensor_set *out)
{
    nvfp4_error err;
    nvfp4_tset_init(golden);
    ck_assert_msg(nvfp4_bundle_load(path, golden, &err) == NVFP4_OK, "%s", err.message);
    nvfp4_quant_opts o;
    ck_assert_msg(nvfp4_bundle_opts(golden, path, &o, &err) == NVFP4_OK, "%s", err.message);
    const nvfp4_tensor *x = nvfp4_tset_find(golden, "x");
    ck_assert_ptr_nonnull(x);
    nvfp4_dtype dt = x->dtype == NVFP4_T_BF16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
    const nvfp4_mutant_info *m = nvfp4_mutant_find(MUTANT);
    ck_assert_ptr_nonnull(m);
    ck_assert(nvfp4_mutant_applies(m, "te", &o));
    nvfp4_mutant_output mo;
    ck_assert_msg(nvfp4_mutant_quantize(m, x->data, dt, x->shape[0], x->shape[1], &o, &mo, &err) == NVFP4_OK, "%s",
                  err.message);
    nvfp4_tset_init(out);
    static const char *const names[2][3] = {{"data", "scale", "scale_swizzled"}, {"data_t", "scale_t", "scale_t_swizzled"}};
    for (int cw = 0; cw < 2; cw++) {
        const nvfp4_qtensor *t = cw ? &mo.q.col : &mo.q.row;
        if (!(cw ? mo.q.has_col : mo.q.has_row)) continue;
        add_u8(out, names[cw][0], t->data, t->data_bytes);
        add_u8(out, names[cw][1], t->scale, t->scale_rows * t->scale_cols);
        add_u8(out, names[cw][2], mo.swizzled[cw], mo.swizzled_bytes[cw]);
    }
    size_t one[1] = {1};
    ck_assert_int_eq(nvfp4_tset_add(out, "amax", NVFP4_T_F32, 1, one, &mo.q.row.amax, NULL, &err), NVFP4_OK);
    nvfp4_mutant_output_free(&mo);
}

/* The known-bug cause of the rowwise output: 'p' when it names MUTANT as
 * proven, 'c' when MUTANT is among the candidates it is consistent with
 * (first or an alternative), 0 otherwise; *others: the other candidates named. */
static char known_bug_status(const nvfp4_report *rep, char *others, size_t n)
{
    others[0] = '\0';
    for (size_t k = 0; k < rep->n_outputs; k++) {
        if (rep->outputs[k].columnwise) continue;
        const nvfp4_vreport *v = &rep->outputs[k].report;
        for (size_t i = 0; i < v->n_causes; i++) {
            const nvfp4_vcause_line *l = &v->causes[i];
            if (l->cause != NVFP4_CAUSE_KNOWN_BUG) continue;
            bool first = strncmp(l->line, MUTANT ":", strlen(MUTANT) + 1) == 0;
            snprintf(others, n, "%.*s, %s", (int)strcspn(l->line, ":"), l->line, l->alternatives);
            if (first && l->status == NVFP4_CAUSE_PROVEN) return 'p';
            if (first || strstr(l->alternatives, MUTANT)) return 'c';
        }
    }
    return 0;
}

/* Runs verify --suite --json and returns its causes tally (a new reference). */
static json_t *suite_tally(const char *suite, const char *outs, const char *json_path)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s verify --suite %s --actual-dir %s --json >%s 2>/dev/null", cli(), suite, outs,
             json_path);
    int rc = system(cmd);
    ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "%s: exit %d (a mismatch is 1)", cmd, WEXITSTATUS(rc));
    json_error_t je;
    json_t *root = json_load_file(json_path, 0, &je);
    ck_assert_msg(root != NULL, "%s: %s", json_path, je.text);
    json_t *causes = json_incref(json_object_get(root, "causes"));
    json_decref(root);
    ck_assert_msg(json_is_array(causes) && json_array_size(causes) > 0, "%s: no causes tallied", json_path);
    return causes;
}

/* The tally entries of known-bug causes: how many, and how many cases they prove. */
static long known_bug_proven(json_t *causes, size_t *entries)
{
    json_t *c;
    size_t i;
    long proven = 0;
    *entries = 0;
    json_array_foreach(causes, i, c) {
        const char *cause = json_string_value(json_object_get(c, "cause"));
        if (!cause || strcmp(cause, "known-bug") != 0) continue;
        (*entries)++;
        proven += (long)json_integer_value(json_object_get(c, "proven_cases"));
    }
    return proven;
}

START_TEST(torch_rdiv_proven_only_by_separating_cases)
{
    char suite[1024];
    snprintf(suite, sizeof suite, "%s/te-rn", ref_dir());
    static char names[128][128];
    size_t n = suite_cases(suite, names, 128);
    ck_assert_uint_ge(n, 30);
    char tmp[] = "/tmp/check_separate.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char outs[4100], before[4100], man[4200];
    snprintf(outs, sizeof outs, "%s/outs", tmp);
    snprintf(before, sizeof before, "%s/before", tmp);
    ck_assert_int_eq(mkdir(outs, 0700), 0);
    ck_assert_int_eq(mkdir(before, 0700), 0);
    /* the suite without its separate-N cases: the same MANIFEST, those lines left out, the bundles linked */
    snprintf(man, sizeof man, "%s/MANIFEST", before);
    FILE *mf = fopen(man, "w"), *orig;
    char line[1024], src[4200];
    snprintf(src, sizeof src, "%s/MANIFEST", suite);
    ck_assert_ptr_nonnull(mf);
    ck_assert_ptr_nonnull(orig = fopen(src, "r"));
    while (fgets(line, sizeof line, orig))
        if (!strstr(line, "  separate-")) fputs(line, mf);
    fclose(orig);
    fclose(mf);
    int proven = 0, consistent = 0, separating = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4200], out[4300], alts[1024];
        snprintf(path, sizeof path, "%.1023s/%.127s", suite, names[i]);
        nvfp4_tensor_set golden, k;
        kernel_output(path, &golden, &k);
        nvfp4_error err;
        snprintf(out, sizeof out, "%.4095s/%.127s", outs, names[i]);
        ck_assert_msg(nvfp4_tset_write(out, &k, NVFP4_FMT_SAFETENSORS, &err) == NVFP4_OK, "%s", err.message);
        nvfp4_verify_bundle_opts o;
        nvfp4_verify_bundle_opts_init(&o);
        o.expected_name = path;
        o.actual_name = MUTANT;
        nvfp4_report rep;
        ck_assert_msg(nvfp4_verify_bundle_report(&golden, &k, &o, &rep, &err) == NVFP4_OK, "%s", err.message);
        char st = known_bug_status(&rep, alts, sizeof alts);
        if (getenv("DBG")) printf("%s %c %s\n", names[i], st ? st : '-', alts);
        bool sep = strncmp(names[i], "separate-", 9) == 0;
        separating += sep;
        if (st == 'p') proven++;
        if (st == 'c') consistent++;
        /* no case but a separating one proves it: elsewhere another formula gives its bytes */
        ck_assert_msg(st != 'p' || sep, "%s: " MUTANT " proven on a case that is not a separating one", names[i]);
        if (!sep) {
            char target[4300];
            snprintf(target, sizeof target, "%.4095s/%.127s", before, names[i]);
            char abs[PATH_MAX];
            ck_assert_ptr_nonnull(realpath(path, abs));
            ck_assert_int_eq(symlink(abs, target), 0);
        }
        if (st == 'c') ck_assert_msg(strstr(alts, "global-recip-of-div") != NULL, "%s: named with '%s'", names[i], alts);
        nvfp4_report_free(&rep);
        nvfp4_tset_free(&k);
        nvfp4_tset_free(&golden);
    }
    ck_assert_int_ge(separating, 1);
    ck_assert_int_ge(proven, 1);      /* a separate-N case singles it out */
    ck_assert_int_ge(consistent, 1);  /* the kill cases leave global-recip-of-div beside it */
    /* the suite's tally: its first cause is the known-bug MUTANT, proven on the
     * separating cases; without them no known-bug cause is proven anywhere */
    char js[4200];
    snprintf(js, sizeof js, "%s/after.json", tmp);
    json_t *after = suite_tally(suite, outs, js);
    snprintf(js, sizeof js, "%s/before.json", tmp);
    json_t *bef = suite_tally(before, outs, js);
    json_t *top = json_array_get(after, 0);
    ck_assert_str_eq(json_string_value(json_object_get(top, "cause")), "known-bug");
    ck_assert_msg(strncmp(json_string_value(json_object_get(top, "line")), MUTANT ":", strlen(MUTANT) + 1) == 0,
                  "first tallied cause: %s", json_string_value(json_object_get(top, "line")));
    ck_assert_int_eq(json_integer_value(json_object_get(top, "proven_cases")), proven);
    size_t kb_before = 0;
    ck_assert_int_eq(known_bug_proven(bef, &kb_before), 0);
    ck_assert_uint_ge(kb_before, 1); /* named, as consistent only */
    printf("check_separate: " MUTANT " on te-rn: proven on %d case(s), consistent with others on %d; suite tally: "
           "first cause %s, proven on %lld case(s); without the %d separate-N cases: %zu known-bug stories, none "
           "proven (first: %s)\n",
           proven, consistent, json_string_value(json_object_get(top, "key")),
           (long long)json_integer_value(json_object_get(top, "proven_cases")), separating, kb_before,
           json_string_value(json_object_get(json_array_get(bef, 0), "key")));
    json_decref(after);
    json_decref(bef);
    char rm[200];
    snprintf(rm, sizeof rm, "%s %s", getenv("DBG") ? "echo" : "rm -rf", tmp);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("separate");
    TCase *tc = tcase_create("te-rn");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, torch_rdiv_proven_only_by_separating_cases);
    suite_add_tcase(s, tc);
    return nvfp4_check_run_nofork(s);
}
