/* report.c - the reports of nvfp4 verify, identify, sr-test and gemm-check:
 * their text and JSON assembled from the engine's structured results, in
 * the library so that the CLI (tools/) and the Python package print the
 * same bytes (docs/verify.md). Inputs are borrowed tensor sets. */
#include "nvfp4/verify.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/gemm.h"
#include "verify/report_views.h"
#include "verify/vchain.h"

#define P(...) nvfp4_strbuf_printf(t, __VA_ARGS__)

static unsigned what_or_text(unsigned w) { return w ? w : NVFP4_REPORT_TEXT; }

static nvfp4_status oom(nvfp4_error *err) { return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory"); }

/* Hands the assembled text / JSON to rep; false when an allocation failed. */
static bool finish(nvfp4_report *rep, unsigned what, nvfp4_strbuf *t, json_t *j)
{
    if (what & NVFP4_REPORT_TEXT) rep->text = nvfp4_strbuf_take(t);
    else nvfp4_strbuf_free(t);
    if ((what & NVFP4_REPORT_JSON) && j) rep->json = json_dumps(j, JSON_INDENT(2));
    json_decref(j);
    return (!(what & NVFP4_REPORT_TEXT) || rep->text) && (!(what & NVFP4_REPORT_JSON) || rep->json);
}

void nvfp4_report_free(nvfp4_report *r)
{
    if (!r) return;
    free(r->text);
    free(r->json); /* json_dumps allocates with malloc (jansson's default allocator) */
    free(r->note);
    for (size_t i = 0; i < r->n_outputs; i++) nvfp4_vreport_free(&r->outputs[i].report);
    free(r->outputs);
    for (size_t i = 0; i < r->n_ranking; i++) free((char *)r->ranking[i].name);
    free(r->ranking);
    free(r->sr);
    free(r->gemm);
    memset(r, 0, sizeof *r);
}

/* ==== verify ===================================================================== */

void nvfp4_verify_bundle_opts_init(nvfp4_verify_bundle_opts *o)
{
    memset(o, 0, sizeof *o);
    nvfp4_verify_opts_init(&o->verify);
    o->lone = NVFP4_VC_DATA;
    o->what = NVFP4_REPORT_TEXT;
}

static void fmt_f(char *b, size_t n, float v)
{
    if (isnan(v)) snprintf(b, n, "-");
    else nvfp4_format_f32_shortest(v, b, n);
}

static void text_mismatch(nvfp4_strbuf *t, const nvfp4_vmismatch *m, const char *sfx)
{
    char in[32], sc[32], ev[32], av[32];
    fmt_f(in, sizeof in, m->input);
    fmt_f(sc, sizeof sc, m->scaled);
    nvfp4_format_f32_shortest(m->expected_value, ev, sizeof ev);
    nvfp4_format_f32_shortest(m->actual_value, av, sizeof av);
    const char *comp = nvfp4_vcomponent_name(m->component);
    if (m->reason == NVFP4_VR_SIZE) { /* amax and dequant in values (recorded as 4 bytes each), the rest in bytes */
        bool values = m->component == NVFP4_VC_AMAX || m->component == NVFP4_VC_DEQUANT;
        double e = (double)m->expected_value / (values ? 4 : 1), a = (double)m->actual_value / (values ? 4 : 1);
        P("  %s%s: holds %.0f %s where %.0f %s expected: %s\n", comp, sfx, a, values ? "values" : "bytes", e,
          e == 1 ? "was" : "were", nvfp4_vreason_name(m->reason));
        return;
    }
    switch (m->component) {
    case NVFP4_VC_DATA:
        P("  %s%s[%zu] row %zu col %zu block %zu: input %s scaled %s expected 0x%X (%s) actual 0x%X (%s): %s\n", comp,
          sfx, m->index, m->row, m->col, m->block, in, sc, m->expected_code, ev, m->actual_code, av,
          nvfp4_vreason_name(m->reason));
        break;
    case NVFP4_VC_SCALE:
        P("  %s%s[%zu] row %zu col %zu block %zu: block amax %s scaled %s expected 0x%02X (%s) actual 0x%02X "
          "(%s): %s\n",
          comp, sfx, m->index, m->row, m->col, m->block, in, sc, m->expected_code, ev, m->actual_code, av,
          nvfp4_vreason_name(m->reason));
        break;
    case NVFP4_VC_SCALE_SWIZZLED:
        P("  scale%s_swizzled byte %zu: expected 0x%02X (%s) actual 0x%02X (%s): %s\n", sfx, m->index,
          m->expected_code, ev, m->actual_code, av, nvfp4_vreason_name(m->reason));
        break;
    default:
        P("  %s%s[%zu] row %zu col %zu: input %s expected %s (0x%08X) actual %s (0x%08X): %s\n", comp, sfx, m->index,
          m->row, m->col, in, ev, m->expected_code, av, m->actual_code, nvfp4_vreason_name(m->reason));
    }
}

/* How many values (amax, dequant) or bytes (codes, scales) view v holds at component c. */
static size_t component_size(const nvfp4_vview *v, unsigned c, bool *values)
{
    *values = c == NVFP4_VC_AMAX || c == NVFP4_VC_DEQUANT;
    switch (c) {
    case NVFP4_VC_DATA: return v->data_bytes;
    case NVFP4_VC_SCALE: return v->scale_bytes;
    case NVFP4_VC_SCALE_SWIZZLED: return v->scale_swizzled_bytes;
    case NVFP4_VC_AMAX: return v->amax_count ? v->amax_count : 1;
    default: return v->dequant_count;
    }
}

/* A component nvfp4_verify found of the wrong size (a mismatch with nothing
 * compared): "component 'amax' holds 16 values where 1 was expected". */
static bool size_finding(const nvfp4_vreport *rep, unsigned c, const vrep_view *ev, const vrep_view *av,
                         const char *name, char *buf, size_t n)
{
    if (!rep->compared[c] || rep->total[c] || !rep->mismatches[c]) return false;
    bool values;
    size_t ne = component_size(&ev->v, c, &values), na = component_size(&av->v, c, &values);
    snprintf(buf, n, "component '%s' holds %zu %s%s where %zu %s expected", name, na, values ? "value" : "byte",
             na == 1 ? "" : "s", ne, ne == 1 ? "was" : "were");
    return true;
}

static void component_name(unsigned c, bool colwise, char *name, size_t n)
{
    const char *sfx = colwise ? "_t" : "";
    if (c == NVFP4_VC_SCALE_SWIZZLED) snprintf(name, n, "scale%s_swizzled", sfx); /* bundle name */
    else snprintf(name, n, "%s%s", nvfp4_vcomponent_name((nvfp4_vcomponent)c), sfx);
}

/* One cause: its line, then its step and status in words. */
static void text_cause(nvfp4_strbuf *t, const nvfp4_vcause_line *l)
{
    const char *step = l->step ? l->step : nvfp4_cause_step(l->cause); /* lines filled without add_cause */
    P("cause %s: %s\n", nvfp4_cause_name(l->cause), l->line);
    if (l->status == NVFP4_CAUSE_PROVEN) P("  step %s: proven: %s\n", step, l->evidence);
    else if (l->alternatives[0]) P("  step %s: consistent with %s (same bytes on this input)\n", step, l->alternatives);
    else if (l->evidence[0]) P("  step %s: consistent (%s)\n", step, l->evidence);
    else P("  step %s: consistent\n", step);
}

static void text_output(nvfp4_strbuf *t, const vrep_bundle *b, const nvfp4_vreport *rep, bool colwise,
                        const vrep_view *ev, const vrep_view *av)
{
    const char *sfx = colwise ? "_t" : "";
    P("%s output (%zu x %zu, recipe %s, %s, block %s):\n", colwise ? "columnwise" : "rowwise", ev->srows, ev->scols,
      b->info->name, nvfp4_rounding_name(b->opts.rounding), nvfp4_block_name(b->opts.block));
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++) {
        char name[40], finding[160];
        component_name(c, colwise, name, sizeof name);
        if (!rep->expected_present[c]) continue;
        if (!rep->actual_present[c]) P("  %-18s absent in actual: not compared\n", name);
        else if (!rep->compared[c]) P("  %-18s not selected\n", name);
        else if (size_finding(rep, c, ev, av, name, finding, sizeof finding)) P("  %-18s WRONG SIZE: %s\n", name, finding);
        else
            P("  %-18s %zu of %zu differ%s\n", name, rep->mismatches[c], rep->total[c],
              rep->mismatches[c] ? "" : " (match)");
    }
    if (rep->n_first) {
        P("first %zu mismatches:\n", rep->n_first);
        for (size_t i = 0; i < rep->n_first; i++) text_mismatch(t, &rep->first[i], sfx);
        P("reasons:");
        for (unsigned r = 0; r < NVFP4_VR_COUNT; r++)
            if (rep->reason_count[r]) P(" %s %zu", nvfp4_vreason_name((nvfp4_vreason)r), rep->reason_count[r]);
        P("\n");
    }
    for (size_t i = 0; i < rep->n_causes; i++) text_cause(t, &rep->causes[i]);
}

static json_t *json_f(float v)
{
    return isfinite(v) ? json_real((double)v) : json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static json_t *json_causes(const nvfp4_vcause_line *causes, size_t n)
{
    json_t *cs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "cause", json_string(nvfp4_cause_name(causes[i].cause)));
        json_object_set_new(j, "line", json_string(causes[i].line));
        json_object_set_new(j, "step", json_string(causes[i].step ? causes[i].step : nvfp4_cause_step(causes[i].cause)));
        json_object_set_new(j, "status", json_string(nvfp4_cause_status_name(causes[i].status)));
        json_object_set_new(j, "evidence", json_string(causes[i].evidence));
        json_t *alt = json_array();
        for (const char *p = causes[i].alternatives; *p;) { /* the comma-separated list as an array */
            const char *e = strstr(p, ", ");
            size_t k = e ? (size_t)(e - p) : strlen(p);
            json_array_append_new(alt, json_stringn(p, k));
            p = e ? e + 2 : p + k;
        }
        json_object_set_new(j, "alternatives", alt);
        json_array_append_new(cs, j);
    }
    return cs;
}

static json_t *json_output(const vrep_bundle *b, const nvfp4_vreport *rep, bool colwise, const vrep_view *ev,
                           const vrep_view *av)
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
        char name[40], finding[160];
        component_name(c, colwise, name, sizeof name);
        if (size_finding(rep, c, ev, av, name, finding, sizeof finding)) {
            bool values;
            json_object_set_new(k, "size_finding", json_string(finding));
            json_object_set_new(k, "expected_size", json_integer((json_int_t)component_size(&ev->v, c, &values)));
            json_object_set_new(k, "actual_size", json_integer((json_int_t)component_size(&av->v, c, &values)));
            json_object_set_new(k, "size_unit", json_string(values ? "values" : "bytes"));
        }
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
    json_object_set_new(o, "causes", json_causes(rep->causes, rep->n_causes));
    if (rep->gscale_known) {
        /* the global scale read back from the actual block scales (docs/verify.md) */
        json_t *g = json_object();
        json_object_set_new(g, "parameter", json_string(rep->gscale_decode ? "g" : "S_enc"));
        json_object_set_new(g, "empty", json_boolean(rep->gscale_empty));
        if (!rep->gscale_empty) {
            json_object_set_new(g, "lo", json_f(rep->gscale_lo));
            json_object_set_new(g, "hi", json_f(rep->gscale_hi));
            json_object_set_new(g, "count", json_integer((json_int_t)rep->gscale_count));
        }
        json_object_set_new(g, "expected", json_f(rep->gscale_expected));
        json_object_set_new(o, "global_scale", g);
    }
    json_object_set_new(o, "match", json_boolean(nvfp4_vreport_match(rep)));
    return o;
}

/* The catalogued mutants of the bundle's recipe and options (nvfp4/verify.h),
 * quantized from its input, as candidates of one orientation: a kernel whose
 * bytes equal one is named "your kernel computes ..." (cause known-bug).
 * Outputs go to out[0..*nout); returns the number of candidates. */
static size_t mutant_candidates(const vrep_bundle *b, bool colwise, const nvfp4_vview *geom, nvfp4_mutant_output *out,
                                size_t *nout, nvfp4_vcandidate *cand)
{
    size_t nc = 0;
    *nout = 0;
    for (size_t i = 0; i < nvfp4_mutant_count(); i++) {
        const nvfp4_mutant_info *m = nvfp4_mutant_at(i);
        if (!nvfp4_mutant_applies_in_layout(m, b->info->name, &b->opts, geom->scale_layout)) continue;
        nvfp4_mutant_output *mo = &out[*nout];
        nvfp4_error err;
        if (nvfp4_mutant_quantize(m, b->x, NVFP4_DTYPE_F32, b->rows, b->cols, &b->opts, mo, &err)) continue;
        (*nout)++;
        const nvfp4_qtensor *q = colwise ? &mo->q.col : &mo->q.row;
        if (!(colwise ? mo->q.has_col : mo->q.has_row)) continue;
        nvfp4_vview v = *geom;
        v.x = NULL;
        v.data = q->data;
        v.data_bytes = q->data_bytes;
        v.scale = q->scale;
        v.scale_bytes = q->scale_rows * q->scale_cols;
        v.scale_swizzled = mo->swizzled[colwise];
        v.scale_swizzled_bytes = mo->swizzled_bytes[colwise];
        v.scale_layout = nvfp4_mutant_scale_layout(m); /* the cuBLAS buffer, whatever geom's layout, but for the
                                                          KV-cache mutants (the golden's layout, which they mistake) */
        v.amax = NULL;
        v.dequant = NULL;
        v.dequant_count = 0;
        cand[nc++] = (nvfp4_vcandidate){m->name, v, false, m};
    }
    return nc;
}

/* Verifies one orientation: 0 match, 1 mismatch, 2 error (err set). Appends
 * its text to t, its JSON to jarr and its report to rep->outputs. */
static int verify_orientation(const vrep_bundle *b, const nvfp4_tensor_set *act, const nvfp4_verify_bundle_opts *bo,
                              bool colwise, nvfp4_strbuf *t, json_t *jarr, nvfp4_report *out, bool *compared_any,
                              nvfp4_error *err)
{
    vrep_view ev, av, other;
    memset(&other, 0, sizeof other);
    int rc = vrep_expected_view(b, colwise, &ev, err);
    if (rc) return rc;
    if ((rc = vrep_actual_view(bo->actual_name, act, colwise, &ev.v, bo->lone, &av, err)) ||
        (rc = vrep_round_dequant(&ev, &av, err))) {
        vrep_view_free(&av);
        vrep_view_free(&ev);
        return rc;
    }
    if (!av.any) {
        P("%s output: absent in actual\n", colwise ? "columnwise" : "rowwise");
        vrep_view_free(&av);
        vrep_view_free(&ev);
        return 0;
    }
    *compared_any = true;
    nvfp4_verify_opts o = bo->verify;
    o.expected_name = b->info->name;
    if (!(colwise && b->opts.rht)) o.recipe = b->info->name; /* block amaxes of x: not in the Hadamard domain */
    /* an SR golden: the scaled values let verify name a byte-order mix-up */
    float *sr_y = NULL;
    size_t bl = b->opts.block == NVFP4_BLOCK_1X32 ? 32 : 16;
    if (b->opts.rounding == NVFP4_SR && ev.v.x && ev.v.amax && !ev.v.e4m3_elements && !ev.v.ue8m0_scales &&
        !ev.v.ue5m3_scales) {
        sr_y = malloc(ev.v.rows * ev.v.cols * sizeof *sr_y);
        float *xd = sr_y ? vrep_view_x_dense(b, colwise, &ev) : NULL; /* the view reads x in place, strided */
        nvfp4_error e;
        if (xd && vrep_scaled_values(nvfp4_recipe_find(b->info->name), *ev.v.amax, ev.v.scale, ev.v.rows, ev.v.cols,
                                     bl, xd, sr_y, &e) == 0) {
            o.sr_scaled = sr_y;
            o.sr_seed = b->opts.seed;
            o.sr_offset = b->opts.offset + (colwise ? (bl == 32 ? 2 : 1) : 0);
            o.sr_block_elems = bl;
        }
        free(xd);
    }
    nvfp4_vreport rep;
    nvfp4_error e;
    if (nvfp4_verify(&ev.v, &av.v, &o, &rep, &e)) {
        free(sr_y);
        vrep_view_free(&av);
        vrep_view_free(&ev);
        nvfp4_error_set(err, e.status, "%s: %s", b->path, e.message);
        return VREP_ERROR;
    }
    /* a mismatch: name a catalogued bug, a different recipe or orientation if one matches */
    vrep_variant *var = NULL;
    size_t nvar = 0, nmut = 0;
    nvfp4_mutant_output *mut = NULL;
    if (!nvfp4_vreport_match(&rep) && b->x) {
        bool plain = !(colwise && b->opts.rht); /* recipes re-quantize x only outside the Hadamard domain */
        if (plain && vrep_variants(b->x, b->rows, b->cols, &b->opts, colwise, false, &var, &nvar, &e)) nvar = 0;
        size_t nm = nvfp4_mutant_count();
        mut = calloc(nm ? nm : 1, sizeof *mut);
        nvfp4_vcandidate *cand = calloc(nvar + nm + 1, sizeof *cand);
        size_t nc = 0;
        if (cand && mut) {
            if (plain && vrep_bundle_has(b, !colwise) && vrep_expected_view(b, !colwise, &other, &e) == 0)
                cand[nc++] = (nvfp4_vcandidate){colwise ? "the rowwise output" : "the columnwise output (data_t)",
                                                other.v, true, NULL};
            nc += mutant_candidates(b, colwise, &ev.v, mut, &nmut, cand + nc);
            char self[64];
            snprintf(self, sizeof self, "%s %s %s", b->info->name, nvfp4_rounding_name(b->opts.rounding),
                     nvfp4_block_name(b->opts.block));
            for (size_t i = 0; i < nvar; i++)
                if (strcmp(var[i].name, self) != 0)
                    cand[nc++] = (nvfp4_vcandidate){var[i].name, var[i].view.v, false, NULL};
            o.candidates = cand;
            o.n_candidates = nc;
            nvfp4_vreport_free(&rep);
            nvfp4_verify(&ev.v, &av.v, &o, &rep, &e);
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
    json_array_append_new(jarr, json_output(b, &rep, colwise, &ev, &av));
    text_output(t, b, &rep, colwise, &ev, &av);
    int verdict = nvfp4_vreport_match(&rep) ? 0 : 1;
    out->outputs[out->n_outputs++] = (nvfp4_voutput){colwise, ev.srows, ev.scols, rep};
    vrep_variants_free(var, nvar);
    for (size_t i = 0; i < nmut; i++) nvfp4_mutant_output_free(&mut[i]);
    free(mut);
    free(sr_y);
    vrep_view_free(&other);
    vrep_view_free(&av);
    vrep_view_free(&ev);
    return verdict;
}

nvfp4_status nvfp4_verify_bundle_report(const nvfp4_tensor_set *bundle, const nvfp4_tensor_set *actual,
                                        const nvfp4_verify_bundle_opts *bo, nvfp4_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!bundle || !actual || !bo) return nvfp4_error_set(err, NVFP4_EINVAL, "verify: a NULL argument");
    nvfp4_verify_bundle_opts o = *bo;
    if (!o.expected_name) o.expected_name = "expected";
    if (!o.actual_name) o.actual_name = "actual";
    if (nvfp4_tset_meta_get(bundle, "groups")) return nvfp4_grouped_verify_report(bundle, actual, &o, rep, err);
    unsigned what = what_or_text(o.what);
    vrep_bundle b;
    if (vrep_bundle_load(bundle, o.expected_name, &b, err)) {
        vrep_bundle_free(&b);
        return err ? err->status : NVFP4_EINVAL;
    }
    rep->outputs = calloc(2, sizeof *rep->outputs);
    if (!rep->outputs) {
        vrep_bundle_free(&b);
        return oom(err);
    }
    nvfp4_strbuf tb = {0}, *t = &tb;
    json_t *arr = json_array();
    P("expected %s, actual %s\n", o.expected_name, o.actual_name);
    bool any = false;
    int verdict = 0;
    for (int colwise = 0; colwise < 2 && verdict != VREP_ERROR; colwise++) {
        if (!vrep_bundle_has(&b, colwise)) continue;
        int r = verify_orientation(&b, actual, &o, colwise, t, arr, rep, &any, err);
        if (r > verdict) verdict = r;
    }
    if (verdict != VREP_ERROR && !any)
        verdict = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL,
                                              "%s holds none of the bundle's components (data, scale, scale_swizzled, "
                                              "amax, dequant, *_t)",
                                              o.actual_name);
    vrep_bundle_free(&b);
    if (verdict == VREP_ERROR) {
        json_decref(arr);
        rep->text = (what & NVFP4_REPORT_TEXT) ? nvfp4_strbuf_take(t) : NULL; /* what came before the error */
        nvfp4_strbuf_free(t);
        return err && err->status ? err->status : NVFP4_EINVAL;
    }
    rep->verdict = verdict;
    P("verdict: %s\n", verdict ? "MISMATCH" : "MATCH");
    json_t *root = json_object();
    json_object_set_new(root, "expected", json_string(o.expected_name));
    json_object_set_new(root, "actual", json_string(o.actual_name));
    json_object_set_new(root, "outputs", arr);
    json_object_set_new(root, "verdict", json_string(verdict ? "mismatch" : "match"));
    if (!finish(rep, what, t, root)) return oom(err);
    return NVFP4_OK;
}

/* ==== identify =================================================================== */

void nvfp4_identify_opts_init(nvfp4_identify_opts *o)
{
    memset(o, 0, sizeof *o);
    nvfp4_quant_opts_init(&o->quant);
    o->orientation = -1;
    o->mutants = true;
    o->top = 10;
    o->what = NVFP4_REPORT_TEXT;
}

/* The catalogued mutants of each recipe variant (at its default block, or
 * at every block when the block is fixed), as named candidates. */
typedef struct {
    char name[96];
    nvfp4_mutant_output out;
    vrep_view view;
} mutant_variant;

static size_t mutant_variants(const float *x, size_t rows, size_t cols, const vrep_variant *var, size_t nvar,
                              bool colwise, bool fixed_block, mutant_variant **out)
{
    size_t nm = nvfp4_mutant_count(), k = 0;
    *out = calloc(nvar * nm + 1, sizeof **out);
    if (!*out) return 0;
    for (size_t i = 0; i < nvar; i++) {
        const nvfp4_quant_opts *o = &var[i].q.opts;
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(var[i].q.recipe);
        if (!fixed_block && o->block != info->default_block) continue;
        for (size_t j = 0; j < nm; j++) {
            const nvfp4_mutant_info *m = nvfp4_mutant_at(j);
            if (!nvfp4_mutant_applies(m, info->name, o)) continue;
            mutant_variant *mv = &(*out)[k];
            nvfp4_error err;
            if (nvfp4_mutant_quantize(m, x, NVFP4_DTYPE_F32, rows, cols, o, &mv->out, &err)) continue;
            if (vrep_view_from_q(&mv->out.q, colwise, &mv->view)) {
                nvfp4_mutant_output_free(&mv->out);
                continue;
            }
            mv->view.v.scale_swizzled = mv->out.swizzled[colwise];
            mv->view.v.scale_swizzled_bytes = mv->out.swizzled_bytes[colwise];
            snprintf(mv->name, sizeof mv->name, "%s [mutant %s]", var[i].name, m->name);
            k++;
        }
    }
    return k;
}

static void mutant_variants_free(mutant_variant *mv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vrep_view_free(&mv[i].view);
        nvfp4_mutant_output_free(&mv[i].out);
    }
    free(mv);
}

/* x widened to fp32 (malloc'd), or NULL. */
static float *input_f32(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols)
{
    size_t n;
    if (!nvfp4_mul_size(rows, cols, &n) || n > SIZE_MAX / sizeof(float)) return NULL;
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return NULL;
    if (dtype == NVFP4_DTYPE_BF16) {
        const uint16_t *b = x;
        for (size_t i = 0; i < n; i++) f[i] = nvfp4_bf16_to_f32(b[i]);
    } else {
        memcpy(f, x, n * sizeof *f);
    }
    return f;
}

static json_t *json_ranking(const nvfp4_vrank *rank, size_t nvar, size_t top, bool colwise)
{
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "orientation", json_string(colwise ? "columnwise" : "rowwise"));
    for (size_t i = 0; i < nvar && i < top; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "variant", json_string(rank[i].name));
        json_object_set_new(j, "fraction", json_real(rank[i].fraction));
        json_object_set_new(j, "data_match", json_integer((json_int_t)rank[i].data_match));
        json_object_set_new(j, "data_total", json_integer((json_int_t)rank[i].data_total));
        json_object_set_new(j, "scale_match", json_integer((json_int_t)rank[i].scale_match));
        json_object_set_new(j, "scale_total", json_integer((json_int_t)rank[i].scale_total));
        json_array_append_new(arr, j);
    }
    json_object_set_new(o, "ranking", arr);
    json_object_set_new(o, "identified", rank[0].fraction == 1.0 ? json_string(rank[0].name) : json_null());
    return o;
}

static void text_ranking(nvfp4_strbuf *t, const nvfp4_vrank *rank, size_t ncand, size_t nvar, size_t nmv, size_t top,
                         bool colwise, size_t rows, size_t cols, const nvfp4_vview *av)
{
    P("%zu variants (%zu recipe variants, %zu mutants) of %s (%zu x %zu), ranked by matching bytes of %s%s%s:\n", ncand,
      nvar, nmv, colwise ? "the columnwise output" : "the rowwise output", rows, cols, av->data ? "data" : "",
      av->data && (av->scale || av->scale_swizzled) ? " + " : "",
      av->scale ? "scale" : av->scale_swizzled ? "scale_swizzled" : "");
    P("  %-4s %-24s %10s %18s %18s\n", "rank", "recipe rounding block", "match", "data bytes", "scale bytes");
    for (size_t i = 0; i < ncand && i < top; i++)
        P("  %-4zu %-24s %9.4f%% %8zu/%-9zu %8zu/%-9zu\n", i + 1, rank[i].name, 100.0 * rank[i].fraction,
          rank[i].data_match, rank[i].data_total, rank[i].scale_match, rank[i].scale_total);
    if (rank[0].fraction == 1.0) {
        size_t ties = 1;
        while (ties < ncand && rank[ties].fraction == 1.0) ties++;
        if (ties == 1) {
            P("identified: the kernel implements %s\n", rank[0].name);
            P("  proven: the only one of the %zu variants that matches every byte\n", ncand);
        } else {
            P("identified: the kernel implements %s, or equally %zu other variants: it matches ", rank[0].name, ties - 1);
            for (size_t i = 0; i < ties && i < 8; i++) P("%s%s", i ? ", " : "", rank[i].name);
            P("%s exactly (indistinguishable on this input)\n", ties > 8 ? ", ..." : "");
            P("  consistent with %zu variants (same bytes on this input): run the kernel on an input that separates them\n",
              ties);
        }
    } else {
        P("not identified: no variant reproduces every byte; the nearest is %s with %.4f%% (%zu of %zu bytes "
          "differ); run `nvfp4 verify` against its golden bundle to see why\n",
          rank[0].name, 100.0 * rank[0].fraction,
          rank[0].data_total + rank[0].scale_total - rank[0].data_match - rank[0].scale_match,
          rank[0].data_total + rank[0].scale_total);
    }
}

/* ---- the chain (vchain.h): a base recipe plus catalogued deviations ---------------- */

typedef struct {
    nvfp4_chain_result r;
    const char *recipe;   /* the base recipe's name */
    bool found;
} chain_pick;

/* Whether chain a explains the kernel better than b: exact first, then fewer deviations,
 * then fewer differing elements. */
static bool chain_better(const nvfp4_chain_result *a, const nvfp4_chain_result *b)
{
    if (a->exact != b->exact) return a->exact;
    if (a->exact) return nvfp4_chain_deviations(a) < nvfp4_chain_deviations(b);
    return a->data_mismatch + a->scale_mismatch < b->data_mismatch + b->scale_mismatch;
}

/* A step proven on one base is not proven when an exact chain on another base computes it
 * with another formula: the bytes do not decide between the two chains. */
static void unprove_disagreeing(chain_pick *best, const nvfp4_chain_result *other, const char *other_recipe)
{
    if (!best->r.exact || !other->exact) return;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        nvfp4_chain_step *st = &best->r.steps[s];
        const nvfp4_chain_step *ot = &other->steps[s];
        if (nvfp4_chain_same_rule(st, &best->r.core, ot, &other->core)) continue;
        if (st->status == NVFP4_CHAIN_PROVEN) {
            st->status = NVFP4_CHAIN_AMBIGUOUS;
            snprintf(st->evidence, sizeof st->evidence, "the chain on base %s also reproduces every byte, with %s",
                     other->base, ot->chosen ? ot->chosen->name : "that recipe's rule");
        }
        char alt[64];
        if (ot->chosen) snprintf(alt, sizeof alt, "%s", ot->chosen->name);
        else snprintf(alt, sizeof alt, "%.48s's rule", other_recipe);
        bool listed = false;
        for (size_t i = 0; i < st->n_alts && i < NVFP4_CHAIN_MAX_ALTS; i++) listed = listed || !strcmp(st->alts[i], alt);
        if (listed) continue;
        if (st->n_alts < NVFP4_CHAIN_MAX_ALTS) {
            if (ot->chosen) snprintf(st->alts[st->n_alts], sizeof st->alts[0], "%s", ot->chosen->name);
            else snprintf(st->alts[st->n_alts], sizeof st->alts[0], "%.48s's rule", other_recipe);
        }
        st->n_alts++;
    }
}

/* Infers the chain from the best-ranked recipe variants (at most `bases` distinct recipes
 * that have catalogued deviations), keeping the best chain; a step of it is proven only when
 * every exact chain found agrees on its formula. */
static int identify_chain(const float *x, size_t rows, size_t cols, const vrep_variant *var, size_t nvar,
                          const nvfp4_vrank *rank, size_t nrank, bool colwise, const nvfp4_vview *act,
                          size_t bases, chain_pick *best)
{
    const char *tried[8] = {NULL};
    nvfp4_chain_result *exact = malloc(8 * sizeof *exact);
    size_t ntried = 0, nexact = 0;
    memset(best, 0, sizeof *best);
    if (!exact) return -1;
    for (size_t k = 0; k < nrank && ntried < bases && ntried < 8; k++) {
        const vrep_variant *v = NULL;
        for (size_t i = 0; i < nvar && !v; i++)
            if (strcmp(var[i].name, rank[k].name) == 0) v = &var[i];
        if (!v) continue; /* a mutant's row */
        bool seen = false, has_mutants = false;
        for (size_t i = 0; i < ntried; i++) seen = seen || strcmp(tried[i], v->q.opts.recipe) == 0;
        for (size_t j = 0; j < nvfp4_mutant_count() && !has_mutants; j++)
            has_mutants = nvfp4_mutant_applies(nvfp4_mutant_at(j), v->q.opts.recipe, &v->q.opts);
        if (seen || !has_mutants) continue;
        tried[ntried++] = v->q.opts.recipe;
        nvfp4_chain_result r;
        if (nvfp4_chain_infer(x, rows, cols, &v->q.opts, v->name, colwise, act, &r)) {
            free(exact);
            return -1;
        }
        if (r.exact) exact[nexact++] = r;
        size_t evals = best->r.evaluations + r.evaluations;
        if (!best->found || chain_better(&r, &best->r)) {
            best->r = r;
            best->recipe = v->q.opts.recipe;
            best->found = true;
        }
        best->r.evaluations = evals;
    }
    for (size_t i = 0; i < nexact; i++)
        if (strcmp(exact[i].base, best->r.base) != 0) {
            const char *rname = exact[i].base;
            char recipe[64];
            snprintf(recipe, sizeof recipe, "%.*s", (int)strcspn(rname, " "), rname);
            unprove_disagreeing(best, &exact[i], recipe);
        }
    free(exact);
    return 0;
}

/* "te + global-torch-rdiv + encode-senc-over-s-no-clamp" */
static void chain_name(char *buf, size_t n, const chain_pick *c)
{
    size_t len = (size_t)snprintf(buf, n, "%s", c->recipe);
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS && len < n; s++)
        if (c->r.steps[s].chosen) len += (size_t)snprintf(buf + len, n - len, " + %s", c->r.steps[s].chosen->name);
}

static bool chain_settled(const nvfp4_chain_result *r)
{
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++)
        if (r->steps[s].status != NVFP4_CHAIN_PROVEN) return false;
    return r->exact;
}

/* The chain's one-line statement (without the "chain: " prefix). */
static void chain_statement(char *buf, size_t n, const chain_pick *c)
{
    char name[512];
    chain_name(name, sizeof name, c);
    const nvfp4_chain_result *r = &c->r;
    if (chain_settled(r)) {
        snprintf(buf, n, "matches %s %s exactly (%s; every step proven)", nvfp4_chain_deviations(r) ? "chain" : "recipe",
                 name, r->base);
    } else if (r->exact) {
        size_t len = (size_t)snprintf(buf, n, "%s (%s) reproduces every byte, but not every step is settled: ", name,
                                      r->base);
        bool first = true;
        for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS && len < n; s++)
            if (r->steps[s].status == NVFP4_CHAIN_AMBIGUOUS) {
                len += (size_t)snprintf(buf + len, n - len, "%s%s", first ? "" : ", ", r->steps[s].step);
                first = false;
            }
        if (len < n) snprintf(buf + len, n - len, " ambiguous on this input");
    } else {
        snprintf(buf, n, "not explained: the nearest chain, %s (%s), leaves %zu data elements and %zu scale bytes "
                         "unexplained", name, r->base, r->data_mismatch, r->scale_mismatch);
    }
}

static const char *rule_name(const nvfp4_chain_step *st) { return st->chosen ? st->chosen->name : "recipe's rule"; }

static void text_chain(nvfp4_strbuf *t, const chain_pick *c)
{
    char line[1024];
    chain_statement(line, sizeof line, c);
    P("chain: %s\n", line);
    P("  %-16s %-13s %s\n", "step", "status", "rule");
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        const nvfp4_chain_step *st = &c->r.steps[s];
        if (!st->n_candidates && !st->n_recipe_rules && !st->n_mutants && st->status == NVFP4_CHAIN_PROVEN)
            continue; /* nothing known to compare */
        P("  %-16s %-13s %s", st->step, nvfp4_chain_status_name(st->status), rule_name(st));
        if (st->n_alts) {
            P(", or equally");
            for (size_t i = 0; i < st->n_alts && i < NVFP4_CHAIN_MAX_ALTS; i++)
                P("%s %s", i ? "," : "", st->alts[i][0] ? st->alts[i] : "the recipe's rule");
            if (st->n_alts > NVFP4_CHAIN_MAX_ALTS) P(", ...");
        }
        P("\n      %s\n", st->evidence);
    }
    P("  (%zu chains run: the steps searched one at a time, each step's candidates with the others fixed; a step is "
      "proven only against the formulas its evidence counts and when every exact chain found agrees on it)\n",
      c->r.evaluations);
}

static json_t *json_chain(const chain_pick *c)
{
    json_t *o = json_object(), *steps = json_array(), *devs = json_array();
    char line[1024];
    chain_statement(line, sizeof line, c);
    json_object_set_new(o, "statement", json_string(line));
    json_object_set_new(o, "recipe", json_string(c->recipe));
    json_object_set_new(o, "base", json_string(c->r.base));
    json_object_set_new(o, "exact", json_boolean(c->r.exact));
    json_object_set_new(o, "settled", json_boolean(chain_settled(&c->r)));
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        const nvfp4_chain_step *st = &c->r.steps[s];
        if (st->chosen) json_array_append_new(devs, json_string(st->chosen->name));
        json_t *j = json_object(), *alts = json_array();
        json_object_set_new(j, "step", json_string(st->step));
        json_object_set_new(j, "status", json_string(nvfp4_chain_status_name(st->status)));
        json_object_set_new(j, "rule", st->chosen ? json_string(st->chosen->name) : json_null());
        json_object_set_new(j, "candidates", json_integer((json_int_t)st->n_candidates));
        json_object_set_new(j, "compared_recipe_rules", json_integer((json_int_t)st->n_recipe_rules));
        json_object_set_new(j, "compared_mutants", json_integer((json_int_t)st->n_mutants));
        if (!st->chosen && st->rule_recipes[0]) json_object_set_new(j, "rule_recipes", json_string(st->rule_recipes));
        for (size_t i = 0; i < st->n_alts && i < NVFP4_CHAIN_MAX_ALTS; i++)
            json_array_append_new(alts, st->alts[i][0] ? json_string(st->alts[i]) : json_null());
        json_object_set_new(j, "alternatives", alts);
        json_object_set_new(j, "evidence", json_string(st->evidence));
        json_array_append_new(steps, j);
    }
    json_object_set_new(o, "deviations", devs);
    json_object_set_new(o, "steps", steps);
    json_object_set_new(o, "data_mismatch", json_integer((json_int_t)c->r.data_mismatch));
    json_object_set_new(o, "scale_mismatch", json_integer((json_int_t)c->r.scale_mismatch));
    json_object_set_new(o, "evaluations", json_integer((json_int_t)c->r.evaluations));
    return o;
}

/* Every recipe x rounding (x block) variant of x in one orientation, and for
 * a columnwise kernel also with the RHT (TE's Wgrad path). */
static int identify_variants(const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base, bool colwise,
                             bool fixed_block, vrep_variant **var, size_t *nvar, nvfp4_error *err)
{
    int rc = vrep_variants(x, rows, cols, base, colwise, !fixed_block, var, nvar, err);
    if (rc || !colwise || base->rht) return rc;
    nvfp4_quant_opts ro = *base;
    ro.rht = true;
    vrep_variant *rv = NULL;
    size_t nr = 0;
    nvfp4_error e;
    if (vrep_variants(x, rows, cols, &ro, colwise, !fixed_block, &rv, &nr, &e) == 0 && nr) {
        vrep_variant *all = realloc(*var, (*nvar + nr) * sizeof *all);
        if (all) {
            *var = all;
            memcpy(all + *nvar, rv, nr * sizeof *rv);
            for (size_t i = 0; i < nr; i++) {
                size_t len = strlen(all[*nvar + i].name);
                snprintf(all[*nvar + i].name + len, sizeof all[*nvar + i].name - len, " rht");
            }
            *nvar += nr;
            free(rv);
            rv = NULL, nr = 0;
        }
    }
    vrep_variants_free(rv, nr);
    return 0;
}

nvfp4_status nvfp4_identify_report(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                   const nvfp4_tensor_set *actual, const nvfp4_identify_opts *io, nvfp4_report *rep,
                                   nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!x || !actual || !io) return nvfp4_error_set(err, NVFP4_EINVAL, "identify: a NULL argument");
    if (dtype != NVFP4_DTYPE_F32 && dtype != NVFP4_DTYPE_BF16)
        return nvfp4_error_set(err, NVFP4_EINVAL, "identify: the input is float32 or bfloat16");
    const char *apath = io->actual_name ? io->actual_name : "actual";
    unsigned what = what_or_text(io->what);
    size_t top = io->top ? io->top : 10;
    bool colwise = io->orientation == 1 || io->quant.rht || (io->orientation < 0 && vrep_only_columnwise(actual));
    nvfp4_quant_opts base = io->quant;
    float *xf = input_f32(x, dtype, rows, cols);
    if (!xf) return oom(err);
    vrep_variant *var = NULL;
    size_t nvar = 0, nmv = 0;
    bool fixed_block = base.block != NVFP4_BLOCK_DEFAULT;
    if (identify_variants(xf, rows, cols, &base, colwise, fixed_block, &var, &nvar, err)) {
        free(xf);
        return err && err->status ? err->status : NVFP4_ENOMEM;
    }
    if (nvar == 0) {
        vrep_variants_free(var, nvar);
        free(xf);
        return nvfp4_error_set(err, NVFP4_EINVAL, "no recipe can quantize a %zu x %zu input with these options", rows,
                               cols);
    }
    mutant_variant *mv = NULL;
    if (io->mutants) nmv = mutant_variants(xf, rows, cols, var, nvar, colwise, fixed_block, &mv);
    vrep_view av;
    nvfp4_status st = NVFP4_OK;
    nvfp4_vcandidate *cand = NULL;
    size_t ncand = nvar + nmv;
    if (vrep_actual_view(apath, actual, colwise, &var[0].view.v, NVFP4_VC_DATA, &av, err)) {
        st = err && err->status ? err->status : NVFP4_EINVAL;
    } else if (!av.v.data && !av.v.scale && !av.v.scale_swizzled) {
        st = nvfp4_error_set(err, NVFP4_EINVAL, "%s holds no data%s, scale%s or scale_swizzled%s to identify", apath,
                             colwise ? "_t" : "", colwise ? "_t" : "", colwise ? "_t" : "");
    } else if (!(cand = calloc(ncand, sizeof *cand)) || !(rep->ranking = calloc(ncand, sizeof *rep->ranking))) {
        st = oom(err);
    } else {
        for (size_t i = 0; i < nvar; i++) cand[i] = (nvfp4_vcandidate){var[i].name, var[i].view.v, false, NULL};
        for (size_t i = 0; i < nmv; i++) cand[nvar + i] = (nvfp4_vcandidate){mv[i].name, mv[i].view.v, false, NULL};
        nvfp4_identify_rank(&av.v, cand, ncand, rep->ranking);
        nvfp4_strbuf tb = {0};
        /* the shape of the orientation, as verify prints it: a columnwise output is cols x rows */
        text_ranking(&tb, rep->ranking, ncand, nvar, nmv, top, colwise, colwise ? cols : rows, colwise ? rows : cols,
                     &av.v);
        json_t *j = (what & NVFP4_REPORT_JSON) ? json_ranking(rep->ranking, ncand, top, colwise) : NULL;
        chain_pick chain;
        memset(&chain, 0, sizeof chain);
        if (io->mutants && identify_chain(xf, rows, cols, var, nvar, rep->ranking, ncand, colwise, &av.v, 8, &chain))
            st = oom(err);
        if (chain.found) {
            text_chain(&tb, &chain);
            if (j) json_object_set_new(j, "chain", json_chain(&chain));
        }
        rep->verdict = rep->ranking[0].fraction == 1.0 || (chain.found && chain.r.exact) ? 0 : 1;
        rep->n_variants = nvar;
        rep->n_mutants = nmv;
        /* the names outlive the candidates */
        for (size_t i = 0; i < ncand; i++) {
            rep->ranking[i].name = strdup(rep->ranking[i].name);
            if (rep->ranking[i].name) rep->n_ranking = i + 1;
            else break;
        }
        if (rep->n_ranking != ncand || !finish(rep, what, &tb, j)) st = oom(err);
    }
    free(xf);
    free(cand);
    vrep_view_free(&av);
    mutant_variants_free(mv, nmv);
    vrep_variants_free(var, nvar);
    if (st) {
        nvfp4_report_free(rep);
        return st;
    }
    return NVFP4_OK;
}

/* ==== sr-test ==================================================================== */

void nvfp4_sr_test_opts_init(nvfp4_sr_test_opts *o)
{
    memset(o, 0, sizeof *o);
    nvfp4_quant_opts_init(&o->quant);
    o->alpha = 0.001;
    o->offset_step = 1;
    o->what = NVFP4_REPORT_TEXT;
}

/* Sample s's codes (unpacked): 0, 1 when its scales differ (note set), 2 (err set). */
static int sr_sample(const nvfp4_tensor_set *s, const char *path, const nvfp4_quantized *q, bool colwise,
                     const vrep_view *geom, size_t n, uint8_t *codes, nvfp4_report *rep, nvfp4_error *err)
{
    vrep_view av;
    int rc = vrep_actual_view(path, s, colwise, &geom->v, NVFP4_VC_DATA, &av, err);
    if (!rc && !av.v.data)
        rc = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL, "%s: no data%s component", path, colwise ? "_t" : "");
    if (!rc && av.v.data_bytes != geom->v.data_bytes)
        rc = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL, "%s: data has %zu bytes, the input's shape needs %zu", path,
                                         av.v.data_bytes, geom->v.data_bytes);
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    if (!rc && av.v.scale &&
        (av.v.scale_bytes != geom->v.scale_bytes || memcmp(av.v.scale, t->scale, geom->v.scale_bytes) != 0)) {
        nvfp4_strbuf nb = {0};
        nvfp4_strbuf_printf(&nb, "%s: the block scales differ from recipe %s's: SR must leave the scales alone (run "
                                 "nvfp4 verify --component scale)", path, q->opts.recipe);
        rep->note = nvfp4_strbuf_take(&nb);
        rc = 1;
    }
    if (!rc)
        for (size_t i = 0; i < n; i++) codes[i] = nvfp4_unpack(av.v.data, i);
    vrep_view_free(&av);
    return rc;
}

static json_t *json_sr(const nvfp4_sr_input *in, const nvfp4_sr_report *rep)
{
    json_t *o = json_object();
#define JI(k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
#define JR(k, v) json_object_set_new(o, k, json_real(v))
    JI("elements", in->n);
    JI("samples", in->samples);
    JR("alpha", in->alpha);
    JI("tested", rep->tested);
    JI("invalid", rep->invalid);
    JI("impossible", rep->impossible);
    JI("binomial_rejected", rep->rejected);
    JI("binomial_rejected_high", rep->rejected_high);
    JI("binomial_rejected_low", rep->rejected_low);
    JR("binomial_min_pvalue", rep->min_pvalue);
    JR("mean_bias_per_element", rep->bias_per_element);
    JR("mean_z", rep->mean_z);
    JR("mean_pvalue", rep->mean_pvalue);
    JR("runs_z", rep->serial_z);
    JR("runs_pvalue", rep->serial_pvalue);
    JR("neighbour_z", rep->neighbour_z);
    JR("neighbour_pvalue", rep->neighbour_pvalue);
    JI("identical_consecutive_samples", rep->identical_pairs);
    if (in->bitexact) {
        JI("bitexact_mismatches", rep->bitexact_mismatches);
        JI("bitexact_total", rep->bitexact_total);
    }
    /* the rule named and the statistics that name it (docs/verify.md, "sr-test") */
    json_object_set_new(o, "rule", json_string(nvfp4_sr_rule_name(rep->rule)));
    JI("impossible_round_ups", rep->impossible_ups);
    JI("below8", rep->below8);
    JR("below8_expected", rep->below8_expected);
    JR("frac_z", rep->frac_z);
    JR("frac_pvalue", rep->frac_pvalue);
    JR("deterministic_log10_p", rep->deterministic_log10_p);
    JI("shared_group", rep->shared_group);
    JI("group_samples_mixed", rep->group_samples_mixed);
#undef JI
#undef JR
    json_object_set_new(o, "causes", json_causes(rep->causes, rep->n_causes));
    json_object_set_new(o, "verdict", json_string(rep->pass ? "pass" : "fail"));
    return o;
}

/* A computed statistic as people write it (no exponent between 1e-5 and 1e6). */
static const char *num(double x, int significant, char buf[32]) { return nvfp4_format_f64_digits(x, significant, buf, 32); }

static void text_sr(nvfp4_strbuf *t, const nvfp4_sr_input *in, const nvfp4_sr_report *rep)
{
    char a[32], b[32], c[32];
    P("sr-test: %zu elements, %zu samples, %zu elements with 0 < p < 1; family-wise alpha %s\n", in->n, in->samples,
      rep->tested, num(in->alpha, 3, a));
    P("  per-element binomial tests (Holm, alpha/4): %zu rejected (%zu too often, %zu too rarely); smallest "
      "p-value %s at element %zu\n",
      rep->rejected, rep->rejected_high, rep->rejected_low, num(rep->min_pvalue, 3, a), rep->worst_element);
    P("  codes that are not a neighbour of y: %zu; deterministic elements rounded away: %zu\n", rep->invalid,
      rep->impossible);
    P("  mean: bias %s%s scaled units per element, z = %.2f, p = %s\n", signbit(rep->bias_per_element) ? "" : "+",
      num(rep->bias_per_element, 4, b), rep->mean_z, num(rep->mean_pvalue, 3, c));
    P("  independence across samples (runs): z = %.2f, p = %s; identical consecutive samples: %zu\n", rep->serial_z,
      num(rep->serial_pvalue, 3, a), rep->identical_pairs);
    P("  independence of adjacent elements: z = %.2f, p = %s\n", rep->neighbour_z, num(rep->neighbour_pvalue, 3, a));
    if (in->bitexact)
        P("  bit-exact (seed %llu, offset %llu + k*%llu): %zu of %zu codes differ\n", (unsigned long long)in->seed,
          (unsigned long long)in->offset, (unsigned long long)in->offset_step, rep->bitexact_mismatches,
          rep->bitexact_total);
    for (size_t i = 0; i < rep->n_causes; i++) text_cause(t, &rep->causes[i]);
    P("verdict: %s\n", rep->pass ? "PASS" : "FAIL");
}

nvfp4_status nvfp4_sr_test_report(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                  const nvfp4_tensor_set *const *samples, size_t ns, const nvfp4_sr_test_opts *so,
                                  nvfp4_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!x || !so || (ns && !samples)) return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: a NULL argument");
    if (ns == 0) return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: no samples");
    if (!(so->alpha > 0.0 && so->alpha < 1.0))
        return nvfp4_error_set(err, NVFP4_EINVAL, "sr-test: alpha %g is not in (0, 1)", so->alpha);
    unsigned what = what_or_text(so->what);
    bool colwise = so->columnwise;
    nvfp4_sr_input in;
    memset(&in, 0, sizeof in);
    in.alpha = so->alpha;
    in.bitexact = so->bitexact;
    in.seed = so->seed;
    in.offset = so->offset;
    in.offset_step = so->offset_step;
    nvfp4_quant_opts o = so->quant;
    o.rowwise = !colwise;
    o.columnwise = colwise;
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    vrep_view geom;
    memset(&geom, 0, sizeof geom);
    float *xo = NULL, *y = NULL;
    uint8_t *codes = NULL;
    const uint8_t **cp = NULL;
    int rc = 0;
    if (nvfp4_quantize(x, dtype, rows, cols, &o, &q, err)) rc = VREP_ERROR;
    if (!rc && !nvfp4_recipe_get_info(q.recipe)->supports_sr)
        rc = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL, "recipe %s has no stochastic rounding", q.opts.recipe);
    if (!rc && vrep_view_from_q(&q, colwise, &geom)) rc = VREP_ERROR, oom(err);
    size_t n = geom.v.rows * geom.v.cols;
    if (!rc) {
        /* the input in the stored orientation, as the scaled values need it */
        xo = calloc(n ? n : 1, sizeof *xo);
        y = calloc(n ? n : 1, sizeof *y);
        codes = ns <= SIZE_MAX / (n ? n : 1) ? calloc(ns * (n ? n : 1), 1) : NULL;
        cp = calloc(ns, sizeof *cp);
        if (!xo || !y || !codes || !cp) rc = VREP_ERROR, oom(err);
    }
    if (!rc && q.opts.rht) rc = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL, "sr-test does not take --rht outputs");
    if (!rc) {
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols; k++) {
                size_t i = r * cols + k;
                float v = dtype == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)x)[i]) : ((const float *)x)[i];
                if (colwise) xo[k * geom.v.cols + r] = v;
                else xo[r * geom.v.cols + k] = v;
            }
        const nvfp4_qtensor *t = colwise ? &q.col : &q.row;
        rc = vrep_scaled_values(q.recipe, t->amax, t->scale, t->prows, t->pcols,
                                q.opts.block == NVFP4_BLOCK_1X32 ? 32 : 16, xo, y, err);
    }
    for (size_t s = 0; !rc && s < ns; s++) {
        char fallback[32];
        snprintf(fallback, sizeof fallback, "sample %zu", s + 1);
        const char *name = so->sample_names && so->sample_names[s] ? so->sample_names[s] : fallback;
        cp[s] = codes + s * n;
        if (!samples[s]) rc = VREP_ERROR, nvfp4_error_set(err, NVFP4_EINVAL, "%s: a NULL sample", name);
        else rc = sr_sample(samples[s], name, &q, colwise, &geom, n, codes + s * n, rep, err);
    }
    nvfp4_status st = NVFP4_OK;
    if (rc == 1) {
        rep->verdict = 1; /* the scales differ: rep->note says so */
    } else if (rc) {
        st = err && err->status ? err->status : NVFP4_EINVAL;
    } else {
        in.n = n;
        in.y = y;
        in.samples = ns;
        in.codes = cp;
        in.block_elems = q.opts.block == NVFP4_BLOCK_1X32 ? 32 : 16;
        if (colwise) in.offset += in.block_elems == 32 ? 2 : 1;
        rep->sr = calloc(1, sizeof *rep->sr);
        if (!rep->sr) st = oom(err);
        else if ((st = nvfp4_sr_test(&in, rep->sr, err)) == NVFP4_OK) {
            nvfp4_strbuf tb = {0};
            text_sr(&tb, &in, rep->sr);
            rep->verdict = rep->sr->pass ? 0 : 1;
            if (!finish(rep, what, &tb, (what & NVFP4_REPORT_JSON) ? json_sr(&in, rep->sr) : NULL)) st = oom(err);
        }
    }
    free(xo);
    free(y);
    free(codes);
    free(cp);
    vrep_view_free(&geom);
    nvfp4_quantized_free(&q);
    if (st) nvfp4_report_free(rep);
    return st;
}

/* ==== gemm-check ================================================================= */

void nvfp4_gemm_check_opts_init(nvfp4_gemm_check_opts *o)
{
    memset(o, 0, sizeof *o);
    o->alpha = 1.0f;
    o->max_errors = 10;
}

static const nvfp4_tensor *find_d(const nvfp4_tensor_set *s)
{
    const nvfp4_tensor *t = nvfp4_tset_find(s, "d");
    if (t) return t;
    const nvfp4_tensor *only = NULL;
    for (size_t i = 0; i < s->count; i++)
        if (s->tensors[i].dtype == NVFP4_T_F32) {
            if (only) return NULL;
            only = &s->tensors[i];
        }
    return only;
}

static void text_gemm(nvfp4_strbuf *t, const nvfp4_gemm_check_report *rep, size_t m, size_t n, size_t k,
                      const float *act, const float *te, const double *exact, const double *bound, size_t nerr)
{
    size_t mn = m * n;
    P("gemm-check: D [%zu x %zu], K = %zu\n", m, n, k);
    P("  within the rigorous any-order fp32 bound: %zu of %zu%s\n", mn - rep->outside_bound, mn,
      rep->within_bound ? "" : "  <-- outside");
    if (rep->nan_mismatch) P("  non-finite where the exact result is finite (or the reverse): %zu\n", rep->nan_mismatch);
    char wr[32];
    P("  worst |D - exact| / bound: %s at (%zu, %zu)\n", nvfp4_format_f64_digits(rep->worst_ratio, 3, wr, sizeof wr),
      rep->worst_index / (n ? n : 1), rep->worst_index % (n ? n : 1));
    P("  bit-identical to the te order (sequential fp32 over K): %zu of %zu%s\n", rep->te_equal, mn,
      rep->equals_te ? " (the kernel reproduces the te order exactly)" : "");
    size_t shown = 0;
    for (size_t i = 0; i < mn && shown < nerr; i++) {
        double diff = fabs((double)act[i] - exact[i]);
        bool bad = !(diff <= bound[i]) && !(isnan(act[i]) && isnan(exact[i])) && !((double)act[i] == exact[i]);
        if (!bad) continue;
        if (!shown) P("outside the bound:\n");
        char a[32], tt[32], ex[40], bd[32];
        nvfp4_format_f32_shortest(act[i], a, sizeof a);
        nvfp4_format_f32_shortest(te[i], tt, sizeof tt);
        P("  (%zu, %zu): actual %s exact %s bound %s te %s\n", i / n, i % n, a,
          nvfp4_format_f64_digits(exact[i], 17, ex, sizeof ex), nvfp4_format_f64_digits(bound[i], 3, bd, sizeof bd), tt);
        shown++;
    }
    for (size_t i = 0; i < rep->n_causes; i++)
        P("cause %s: %s\n", nvfp4_gemm_cause_name(rep->causes[i].cause), rep->causes[i].line);
    P("verdict: %s\n", rep->within_bound ? "WITHIN BOUND" : "OUTSIDE BOUND");
}

nvfp4_status nvfp4_gemm_check_text(const nvfp4_quantized *qa, const nvfp4_quantized *qb, const nvfp4_tensor_set *ds,
                                   const nvfp4_gemm_check_opts *go, nvfp4_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    if (!qa || !qb || !ds || !go) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm-check: a NULL argument");
    const char *an = go->a_name ? go->a_name : "a", *bn = go->b_name ? go->b_name : "b",
               *dpath = go->d_name ? go->d_name : "actual";
    bool acol = go->a_columnwise, bcol = go->b_columnwise;
    if (!isfinite(go->alpha)) return nvfp4_error_set(err, NVFP4_EINVAL, "alpha %g is not finite", (double)go->alpha);
    if (acol ? !qa->has_col : !qa->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s lacks the %s output", an, acol ? "columnwise" : "rowwise");
    if (bcol ? !qb->has_col : !qb->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s lacks the %s output", bn, bcol ? "columnwise" : "rowwise");
    const nvfp4_qtensor *ta = acol ? &qa->col : &qa->row, *tb = bcol ? &qb->col : &qb->row;
    size_t m = ta->rows, n = tb->rows, mn;
    if (!nvfp4_mul_size(m, n, &mn) || mn > SIZE_MAX / sizeof(double))
        return nvfp4_error_set(err, NVFP4_EINVAL, "output shape overflows");
    const nvfp4_tensor *d = find_d(ds);
    if (!d) return nvfp4_error_set(err, NVFP4_EINVAL, "%s: holds no tensor 'd' and not exactly one F32 tensor", dpath);
    if (d->dtype != NVFP4_T_F32)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s: '%s' is %s, not F32", dpath, d->name, nvfp4_tdtype_name(d->dtype));
    if (nvfp4_tensor_numel(d) != mn)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s: '%s' holds %zu values; D is %zu x %zu", dpath, d->name,
                               nvfp4_tensor_numel(d), m, n);
    float *te = malloc((mn ? mn : 1) * sizeof *te);
    double *exact = malloc((mn ? mn : 1) * sizeof *exact), *bound = malloc((mn ? mn : 1) * sizeof *bound);
    rep->gemm = calloc(1, sizeof *rep->gemm);
    nvfp4_status st = NVFP4_OK;
    if (!te || !exact || !bound || !rep->gemm) st = oom(err);
    else if (!(st = nvfp4_gemm(qa, acol, qb, bcol, go->alpha, NVFP4_GEMM_TE, te, err)) &&
             !(st = nvfp4_gemm_error_bound(qa, acol, qb, bcol, go->alpha, bound, exact, err))) {
        const float *act = (const float *)(const void *)d->data;
        nvfp4_gemm_check(act, te, exact, bound, mn, rep->gemm);
        if (!(st = nvfp4_gemm_check_causes(qa, acol, qb, bcol, go->alpha, act, rep->gemm, err))) {
            nvfp4_strbuf sb = {0};
            text_gemm(&sb, rep->gemm, m, n, ta->cols, act, te, exact, bound, go->max_errors);
            rep->verdict = rep->gemm->within_bound ? 0 : 1;
            if (!finish(rep, NVFP4_REPORT_TEXT, &sb, NULL)) st = oom(err);
        }
    }
    free(te);
    free(exact);
    free(bound);
    if (st) nvfp4_report_free(rep);
    return st;
}
