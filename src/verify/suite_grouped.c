/* suite_grouped.c - the mutation report of the grouped golden suite
 * (nvfp4 golden --suite grouped --mutants): each golden bundle verified,
 * with the grouped verifier verify --suite uses (nvfp4_verify_bundle_report
 * on a bundle with "groups"), against the outputs of each catalogued
 * grouped mistake (nvfp4_grouped_mutant_run, grouped_verify.c). A mutant is
 * killed only where verify both differs and names it. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/verify.h"
#include "verify/suite_internal.h"

/* The cause verify names for mutant i on this report, with its status; false when it names none. */
static bool names_mutant(const char *report_json, const char *mutant, char *cause, size_t n)
{
    json_t *root = json_loads(report_json, 0, NULL), *c;
    size_t j;
    bool found = false;
    json_array_foreach(json_object_get(root, "causes"), j, c) {
        const char *name = json_string_value(json_object_get(c, "cause"));
        const char *status = json_string_value(json_object_get(c, "status"));
        if (!found && name && strcmp(name, mutant) == 0) {
            snprintf(cause, n, "%s [%s]", name, status ? status : "?");
            found = true;
        }
    }
    json_decref(root);
    return found;
}

static nvfp4_status verify_mutant(suite_grouped_kills *k, size_t i, const char *name, const nvfp4_tensor_set *bundle,
                                  const nvfp4_tensor_set *mut, nvfp4_error *err)
{
    nvfp4_verify_bundle_opts bo;
    nvfp4_verify_bundle_opts_init(&bo);
    bo.expected_name = name;
    bo.actual_name = nvfp4_grouped_mutant_at(i)->name;
    bo.what = NVFP4_REPORT_JSON;
    nvfp4_report rep;
    nvfp4_status st = nvfp4_verify_bundle_report(bundle, mut, &bo, &rep, err);
    char cause[sizeof k->cause[0]];
    if (!st && rep.verdict == 1 && rep.json && names_mutant(rep.json, nvfp4_grouped_mutant_at(i)->name, cause, sizeof cause)) {
        if (!k->kills[i]++) {
            snprintf(k->killer[i], sizeof k->killer[i], "%s", name);
            memcpy(k->cause[i], cause, sizeof cause);
        }
    }
    nvfp4_report_free(&rep);
    return st;
}

nvfp4_status suite_grouped_note(suite_grouped_kills *k, const char *name, const nvfp4_tensor_set *bundle,
                                const void *x, nvfp4_dtype dtype, size_t rows, size_t cols, const size_t *m,
                                size_t ngroups, const nvfp4_quant_opts *o, nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    k->cases++;
    for (size_t i = 0; !st && i < nvfp4_grouped_mutant_count() && i < 2; i++) {
        nvfp4_tensor_set mut;
        nvfp4_tset_init(&mut);
        st = nvfp4_grouped_mutant_run(i, x, dtype, rows, cols, m, ngroups, o, &mut, err);
        if (!st) st = verify_mutant(k, i, name, bundle, &mut, err);
        nvfp4_tset_free(&mut);
    }
    return st;
}

/* Whether mutant i can give other bytes than the recipe under it. */
static bool applies(const suite_grouped_kills *k, size_t i) { return i != 0 || k->global_amax; }

static void report_text(const suite_grouped_kills *k, const char *recipe, FILE *f, size_t killed, size_t live)
{
    fprintf(f, "grouped mutation report: recipe %s, %zu grouped cases, %zu grouped mutants\n", recipe, k->cases,
            nvfp4_grouped_mutant_count());
    for (size_t i = 0; i < nvfp4_grouped_mutant_count() && i < 2; i++) {
        const char *name = nvfp4_grouped_mutant_at(i)->name;
        if (k->killer[i][0])
            fprintf(f, "  %-30s killed by %zu of %zu cases, first %s; verify names %s\n", name, k->kills[i], k->cases,
                    k->killer[i], k->cause[i]);
        else if (!applies(k, i))
            fprintf(f, "  %-30s not applicable: recipe %s has no global amax (nothing to share)\n", name, recipe);
        else fprintf(f, "  %-30s SURVIVES: no grouped case tells it apart and names it\n", name);
    }
    fprintf(f, "%zu killed, %zu surviving\n", killed, live);
}

static void report_json(const suite_grouped_kills *k, const char *recipe, FILE *f, size_t killed, size_t live)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < nvfp4_grouped_mutant_count() && i < 2; i++) {
        const char *status = k->killer[i][0] ? "killed" : applies(k, i) ? "survives" : "not applicable";
        json_t *m = json_pack("{s:s,s:s}", "mutant", nvfp4_grouped_mutant_at(i)->name, "status", status);
        if (k->killer[i][0]) {
            json_object_set_new(m, "case", json_string(k->killer[i]));
            json_object_set_new(m, "killing_cases", json_integer((json_int_t)k->kills[i]));
            json_object_set_new(m, "cause", json_string(k->cause[i]));
        }
        json_array_append_new(arr, m);
    }
    json_t *j = json_pack("{s:s,s:s,s:I,s:o,s:I,s:I}", "suite", "grouped", "recipe", recipe, "cases",
                          (json_int_t)k->cases, "mutants", arr, "killed", (json_int_t)killed, "surviving",
                          (json_int_t)live);
    char *s = json_dumps(j, JSON_INDENT(2));
    if (s) fprintf(f, "%s\n", s);
    free(s);
    json_decref(j);
}

int suite_grouped_report(const suite_grouped_kills *k, const char *recipe, bool json, FILE *f)
{
    size_t killed = 0, live = 0;
    for (size_t i = 0; i < nvfp4_grouped_mutant_count() && i < 2; i++) {
        killed += k->killer[i][0] != 0;
        live += !k->killer[i][0] && applies(k, i);
    }
    if (json) report_json(k, recipe, f, killed, live);
    else report_text(k, recipe, f, killed, live);
    return live ? 1 : 0;
}
