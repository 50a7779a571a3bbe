/*
 * grouped_verify.c - nvfp4 verify of a grouped (MoE) bundle
 * (docs/verify.md, 3d "Grouped (MoE) bundles"): each component compared byte for
 * byte, then per expert (its rows of data, scale and dequant, its segment
 * of scale_swizzled, its amax), and the catalogued grouped mistakes that
 * give the kernel's bytes named. A grouped mistake is a wrong grouping, not
 * a wrong rounding rule: its outputs come from the library's own quantizer
 * (the whole tensor with one amax) and swizzle (one matrix), so no rule is
 * restated here.
 */
#include "nvfp4/verify.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

#define P(...) nvfp4_strbuf_printf(t, __VA_ARGS__)

static const nvfp4_grouped_mutant_info grouped_catalog[] = {
    {"grouped-shared-global-scale",
     "one global scale shared across experts: every expert quantized with the amax of the whole stacked tensor",
     "a kernel that reduces one amax over the stacked tensor instead of one per expert (the per-expert scale of "
     "TransformerEngine split_quantize and mslk nvfp4_quantize_stacked; vLLM #47515, a fused gate_up taking one "
     "global scale for two tensors, is the same mistake across two weights)"},
    {"grouped-unpadded-segments",
     "group scale segments not padded to 128 rows: the stacked scales swizzled as one 128x4 matrix",
     "a kernel that skips the per-expert padding of mslk nvfp4_quantize_stacked (padded_cumsum of "
     "roundup(m, 128)) or concatenates TE's per-split scale tensors unpadded"},
};

size_t nvfp4_grouped_mutant_count(void) { return sizeof grouped_catalog / sizeof grouped_catalog[0]; }

const nvfp4_grouped_mutant_info *nvfp4_grouped_mutant_at(size_t i)
{
    return i < nvfp4_grouped_mutant_count() ? &grouped_catalog[i] : NULL;
}

/* ---- one set of grouped outputs (expected, or a mutant's) ------------------------- */

typedef struct {
    uint8_t *data, *scale, *swz;
    size_t data_bytes, scale_bytes, swz_bytes;
    float *amax;          /* [ngroups]; an empty expert's is not compared */
    bool amax_one_ok;     /* a single amax value equal to amax[*] also matches (one shared scale) */
    float *dequant;       /* [rows * cols] or NULL */
} gout;

static void gout_free(gout *o)
{
    free(o->data);
    free(o->scale);
    free(o->swz);
    free(o->amax);
    free(o->dequant);
    memset(o, 0, sizeof *o);
}

static void *dup_bytes(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q && n) memcpy(q, p, n);
    return q;
}

/* The expected outputs: the bundle's grouped quantization, dequantized. */
static nvfp4_status expected_outputs(const nvfp4_grouped *g, gout *o, nvfp4_error *err)
{
    o->data_bytes = g->data_bytes;
    o->scale_bytes = g->rows * g->scale_cols;
    o->swz_bytes = g->swizzled_bytes;
    o->data = dup_bytes(g->data, o->data_bytes);
    o->scale = dup_bytes(g->scale, o->scale_bytes);
    o->swz = dup_bytes(g->scale_swizzled, o->swz_bytes);
    o->amax = dup_bytes(g->amax, g->ngroups * sizeof(float));
    o->dequant = malloc(g->rows * g->cols * sizeof(float));
    if (!o->data || !o->scale || !o->swz || !o->amax || !o->dequant)
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return nvfp4_grouped_dequantize(g, o->dequant, err);
}

/* grouped-shared-global-scale: the stacked tensor quantized whole (its rows'
 * blocks depend on nothing but the one amax), the scales laid out per expert. */
static nvfp4_status shared_scale_outputs(const nvfp4_grouped *g, const nvfp4_tensor *x, gout *o, nvfp4_error *err)
{
    nvfp4_dtype dt = x->dtype == NVFP4_T_BF16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
    nvfp4_quantized q;
    nvfp4_status st = nvfp4_quantize(x->data, dt, g->rows, g->cols, &g->opts, &q, err);
    if (st) return st;
    o->data_bytes = q.row.data_bytes;
    o->scale_bytes = g->rows * g->scale_cols;
    o->swz_bytes = g->swizzled_bytes;
    o->data = dup_bytes(q.row.data, o->data_bytes);
    o->scale = dup_bytes(q.row.scale, o->scale_bytes);
    o->swz = calloc(o->swz_bytes ? o->swz_bytes : 1, 1);
    o->amax = malloc(g->ngroups * sizeof(float));
    o->dequant = malloc(g->rows * g->cols * sizeof(float));
    if (!o->data || !o->scale || !o->swz || !o->amax || !o->dequant) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (!st) {
        nvfp4_grouped_scale_swizzle(o->scale, g->m_sizes, g->ngroups, g->scale_cols, o->swz);
        for (size_t i = 0; i < g->ngroups; i++) o->amax[i] = q.row.amax;
        o->amax_one_ok = true;
        st = nvfp4_dequantize(&q, false, o->dequant, err);
    }
    nvfp4_quantized_free(&q);
    return st;
}

/* grouped-unpadded-segments, applied to outputs o: its scales swizzled as one matrix. */
static nvfp4_status unpad_segments(const nvfp4_grouped *g, gout *o, nvfp4_error *err)
{
    free(o->swz);
    o->swz_bytes = nvfp4_swizzled_size(g->rows, g->scale_cols);
    o->swz = malloc(o->swz_bytes ? o->swz_bytes : 1);
    if (!o->swz) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_scale_swizzle(o->scale, g->rows, g->scale_cols, o->swz);
    return NVFP4_OK;
}

/* ---- comparisons ------------------------------------------------------------------- */

/* Bytes of a (possibly differently sized) swizzled buffer against want: the
 * common part equal and the rest of the longer one zero (a kernel that wrote
 * the unpadded layout into the grouped buffer leaves its tail untouched). */
static bool swz_same(const nvfp4_tensor *a, const uint8_t *want, size_t n)
{
    size_t k = a->nbytes < n ? a->nbytes : n;
    if (memcmp(a->data, want, k) != 0) return false;
    for (size_t i = k; i < a->nbytes; i++)
        if (a->data[i]) return false;
    for (size_t i = k; i < n; i++)
        if (want[i]) return false;
    return true;
}

static bool amax_same(const nvfp4_tensor *a, const nvfp4_grouped *g, const gout *o)
{
    if (a->nbytes == sizeof(float) && o->amax_one_ok) {
        for (size_t i = 0; i < g->ngroups; i++)
            if (g->m_sizes[i] && memcmp(a->data, &o->amax[i], sizeof(float)) != 0) return false;
        return true;
    }
    if (a->nbytes != g->ngroups * sizeof(float)) return false;
    for (size_t i = 0; i < g->ngroups; i++)
        if (g->m_sizes[i] && memcmp(a->data + i * sizeof(float), &o->amax[i], sizeof(float)) != 0) return false;
    return true;
}

/* in the order of nvfp4_vcomponent */
static const char *const comp_names[] = {"data", "scale", "scale_swizzled", "amax", "dequant"};
enum { C_DATA, C_SCALE, C_SWZ, C_AMAX, C_DEQ, C_N };

typedef struct {
    const nvfp4_grouped *g;
    const nvfp4_tensor_set *act;
    const nvfp4_verify_bundle_opts *o;
    const gout *e;
    nvfp4_strbuf *t;
} gctx;

static bool is_component_name(const char *n)
{
    for (int k = 0; k < C_N; k++)
        if (strcmp(n, comp_names[k]) == 0) return true;
    return false;
}

/* The kernel's component k as verify compares it: absent when --component
 * leaves it out; a set of one tensor under another name (a lone .npy) is
 * taken as the component o->lone (data by default), as for other bundles. */
static const nvfp4_tensor *actual_comp(const gctx *c, int k)
{
    if (c->o->verify.components && !(c->o->verify.components & (1u << k))) return NULL;
    const nvfp4_tensor *a = nvfp4_tset_find(c->act, comp_names[k]);
    if (a) return a;
    if (c->act->count == 1 && !is_component_name(c->act->tensors[0].name) && (int)c->o->lone == k)
        return &c->act->tensors[0];
    return NULL;
}

/* Whether the actual component c equals that of outputs o (absent: true). */
static bool comp_same(const gctx *ctx, int c, const nvfp4_grouped *g, const gout *o)
{
    const nvfp4_tensor *a = actual_comp(ctx, c);
    if (!a) return true;
    switch (c) {
    case C_DATA: return a->nbytes == o->data_bytes && !memcmp(a->data, o->data, o->data_bytes);
    case C_SCALE: return a->nbytes == o->scale_bytes && !memcmp(a->data, o->scale, o->scale_bytes);
    case C_SWZ: return swz_same(a, o->swz, o->swz_bytes);
    case C_AMAX: return amax_same(a, g, o);
    default:
        return o->dequant && a->nbytes == g->rows * g->cols * sizeof(float) &&
               !memcmp(a->data, o->dequant, a->nbytes);
    }
}

static size_t count_diff(const uint8_t *a, const uint8_t *b, size_t n, size_t unit)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i += unit) d += memcmp(a + i, b + i, unit) != 0;
    return d;
}

/* ---- the report -------------------------------------------------------------------- */


/* Component c against the expected outputs: one line; true when it differs. */
static bool report_component(const gctx *c, int k, json_t *comps)
{
    nvfp4_strbuf *t = c->t;
    const nvfp4_tensor *a = actual_comp(c, k);
    const gout *e = c->e;
    if (!a && c->o->verify.components && !(c->o->verify.components & (1u << k))) {
        P("  %-15s not compared (--component)\n", comp_names[k]);
        json_object_set_new(comps, comp_names[k], json_pack("{s:s}", "status", "not compared"));
        return false;
    }
    if (!a) {
        P("  %-15s absent, skipped\n", comp_names[k]);
        json_object_set_new(comps, comp_names[k], json_pack("{s:s}", "status", "absent"));
        return false;
    }
    size_t want_bytes = k == C_DATA ? e->data_bytes : k == C_SCALE ? e->scale_bytes : k == C_SWZ ? e->swz_bytes
                        : k == C_AMAX ? c->g->ngroups * sizeof(float) : c->g->rows * c->g->cols * sizeof(float);
    const uint8_t *want = k == C_DATA ? e->data : k == C_SCALE ? e->scale : k == C_SWZ ? e->swz
                          : k == C_AMAX ? (const uint8_t *)e->amax : (const uint8_t *)e->dequant;
    size_t unit = k >= C_AMAX ? sizeof(float) : 1;
    if (a->nbytes != want_bytes) {
        P("  %-15s %zu bytes where %zu were expected%s\n", comp_names[k], a->nbytes, want_bytes,
          k == C_SWZ ? " (one 128x4 segment per expert, each padded to 128 rows)" : k == C_AMAX ? " (one per expert)" : "");
        json_object_set_new(comps, comp_names[k], json_pack("{s:s,s:I,s:I}", "status", "size", "bytes",
                                                            (json_int_t)a->nbytes, "expected", (json_int_t)want_bytes));
        return true;
    }
    bool same = k == C_AMAX ? amax_same(a, c->g, e) : !memcmp(a->data, want, want_bytes);
    size_t d = same ? 0 : count_diff(a->data, want, want_bytes, unit);
    if (k == C_AMAX && !same) { /* empty experts are not compared */
        d = 0;
        for (size_t i = 0; i < c->g->ngroups; i++)
            d += c->g->m_sizes[i] && memcmp(a->data + 4 * i, want + 4 * i, 4) != 0;
    }
    P("  %-15s %zu %s: %s", comp_names[k], want_bytes / unit, unit == 1 ? "bytes" : "values", same ? "match" : "");
    if (!same) P("%zu differ", d);
    P("%s\n", k == C_AMAX ? " (an empty expert's is not compared)" : "");
    json_object_set_new(comps, comp_names[k], json_pack("{s:s,s:I,s:I}", "status", same ? "match" : "mismatch",
                                                        "compared", (json_int_t)(want_bytes / unit), "mismatches",
                                                        (json_int_t)d));
    return !same;
}

/* Differences in expert i's part of component k (0 when sizes differ). */
static size_t expert_diff(const gctx *c, int k, size_t i, size_t row)
{
    const nvfp4_grouped *g = c->g;
    const nvfp4_tensor *a = actual_comp(c, k);
    const gout *e = c->e;
    size_t m = g->m_sizes[i], rb = g->data_bytes / g->rows;
    switch (k) {
    case C_DATA: return a && a->nbytes == e->data_bytes ? count_diff(a->data + row * rb, e->data + row * rb, m * rb, 1) : 0;
    case C_SCALE:
        return a && a->nbytes == e->scale_bytes
                   ? count_diff(a->data + row * g->scale_cols, e->scale + row * g->scale_cols, m * g->scale_cols, 1)
                   : 0;
    case C_SWZ: {
        if (!a) return 0;
        size_t off = nvfp4_grouped_segment_offset(g->m_sizes, i, g->scale_cols);
        if (a->nbytes == e->swz_bytes) return count_diff(a->data + off, e->swz + off, nvfp4_swizzled_size(m, g->scale_cols), 1);
        /* another size: expert i's real scales where the grouped layout puts them (beyond the end: differ) */
        size_t d = 0;
        for (size_t r = 0; r < m; r++)
            for (size_t k2 = 0; k2 < g->scale_cols; k2++) {
                size_t at = off + nvfp4_swizzle_offset(r, k2, g->scale_cols);
                d += at >= a->nbytes || a->data[at] != e->swz[at];
            }
        return d;
    }
    case C_AMAX: /* one value for all experts (a shared scale) is compared with each */
        return a && (a->nbytes == g->ngroups * 4 || a->nbytes == 4) &&
               memcmp(a->data + (a->nbytes == 4 ? 0 : 4 * i), &e->amax[i], 4) != 0;
    default:
        return a && a->nbytes == g->rows * g->cols * 4
                   ? count_diff(a->data + row * g->cols * 4, (const uint8_t *)(e->dequant + row * g->cols), m * g->cols * 4, 4)
                   : 0;
    }
}

static size_t report_experts(const gctx *c, json_t *experts)
{
    nvfp4_strbuf *t = c->t;
    const nvfp4_grouped *g = c->g;
    size_t differing = 0, nonempty = 0;
    char list[256] = "";
    for (size_t i = 0, row = 0; i < g->ngroups; row += g->m_sizes[i], i++) {
        size_t m = g->m_sizes[i];
        if (!m) {
            P("expert %zu: empty\n", i);
            json_array_append_new(experts, json_pack("{s:I,s:I,s:s}", "expert", (json_int_t)i, "rows", (json_int_t)0,
                                                     "status", "empty"));
            continue;
        }
        nonempty++;
        size_t d[C_N], any = 0;
        for (int k = 0; k < C_N; k++) any += d[k] = expert_diff(c, k, i, row);
        P("expert %zu: rows %zu..%zu (%zu): ", i, row, row + m - 1, m);
        json_t *je = json_pack("{s:I,s:I,s:I,s:s}", "expert", (json_int_t)i, "first_row", (json_int_t)row, "rows",
                               (json_int_t)m, "status", any ? "mismatch" : "match");
        if (!any) P("match\n");
        for (int k = 0, first = 1; k < C_N; k++) {
            if (!d[k]) continue;
            json_object_set_new(je, comp_names[k], json_integer((json_int_t)d[k]));
            if (k == C_AMAX) {
                float got;
                const nvfp4_tensor *a = actual_comp(c, C_AMAX);
                memcpy(&got, a->data + (a->nbytes == 4 ? 0 : 4 * i), 4);
                P("%samax %.9g where %.9g was expected", first ? "" : ", ", (double)got, (double)c->e->amax[i]);
            } else {
                P("%s%s %zu %s%s", first ? "" : ", ", comp_names[k], d[k], k == C_DEQ ? "value" : "byte",
                  d[k] == 1 ? "" : "s");
            }
            first = 0;
        }
        if (any) {
            P("\n");
            size_t len = strlen(list);
            if (len < sizeof list - 24) snprintf(list + len, sizeof list - len, "%s%zu", differing ? ", " : "", i);
            differing++;
        }
        json_array_append_new(experts, je);
    }
    if (differing) P("experts that differ: %s (%zu of %zu with rows)\n", list, differing, nonempty);
    return differing;
}

/* The catalogued grouped mistakes (and their combination) whose outputs
 * give every component the kernel wrote. */
static nvfp4_status report_causes(const gctx *c, const nvfp4_tensor_set *bundle, json_t *causes, nvfp4_error *err)
{
    nvfp4_strbuf *t = c->t;
    const nvfp4_tensor *x = nvfp4_tset_find(bundle, "x");
    gout cand[3] = {{0}};
    const char *names[3] = {grouped_catalog[0].name, grouped_catalog[1].name,
                            "grouped-shared-global-scale + grouped-unpadded-segments"};
    nvfp4_status st = x ? shared_scale_outputs(c->g, x, &cand[0], err) : NVFP4_OK;
    if (!st) st = expected_outputs(c->g, &cand[1], err);
    if (!st) st = unpad_segments(c->g, &cand[1], err);
    if (!st && x) st = shared_scale_outputs(c->g, x, &cand[2], err);
    if (!st && x) st = unpad_segments(c->g, &cand[2], err);
    size_t found = 0;
    bool fits[3] = {false, false, false};
    for (int m = 0; !st && m < 3; m++) {
        if (!cand[m].data) continue;
        fits[m] = true;
        for (int k = 0; k < C_N && fits[m]; k++) fits[m] = comp_same(c, k, c->g, &cand[m]);
        found += fits[m];
    }
    for (int m = 0; !st && m < 3; m++) {
        if (!fits[m]) continue;
        const char *status = found == 1 ? "proven" : "consistent";
        P("cause [%s]: %s: %s\n", status, names[m],
          m == 2 ? "both catalogued grouped mistakes at once" : grouped_catalog[m].summary);
        json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "cause", names[m], "status", status, "line",
                                                m == 2 ? "both catalogued grouped mistakes at once"
                                                       : grouped_catalog[m].summary));
    }
    if (!st && !found)
        P("cause: no catalogued grouped mistake (%s, %s) gives these bytes%s\n", grouped_catalog[0].name,
          grouped_catalog[1].name, x ? "" : " (the bundle has no x: the shared scale was not tried)");
    for (int m = 0; m < 3; m++) gout_free(&cand[m]);
    return st;
}

static nvfp4_status run_report(const nvfp4_tensor_set *bundle, const nvfp4_tensor_set *actual,
                               const nvfp4_verify_bundle_opts *o, const nvfp4_grouped *g, const gout *e,
                               nvfp4_report *rep, nvfp4_error *err)
{
    nvfp4_strbuf tb = {0}, *t = &tb;
    json_t *j = json_object(), *comps = json_object(), *experts = json_array(), *causes = json_array();
    gctx c = {g, actual, o, e, t};
    char sizes[256];
    if (!nvfp4_grouped_sizes_format(g->m_sizes, g->ngroups, sizes, sizeof sizes)) snprintf(sizes, sizeof sizes, "...");
    P("expected %s, actual %s\n", o->expected_name, o->actual_name);
    P("grouped: %zu experts (m_sizes %s), recipe %s, %zu x %zu\n", g->ngroups, sizes,
      nvfp4_recipe_get_info(g->recipe)->name, g->rows, g->cols);
    bool differs = false, any = false;
    for (int k = 0; k < C_N; k++) {
        differs |= report_component(&c, k, comps);
        any |= actual_comp(&c, k) != NULL;
    }
    nvfp4_status st = NVFP4_OK;
    if (!any) {
        st = nvfp4_error_set(err, NVFP4_EINVAL, "%s holds none of the grouped bundle's components (data, scale, "
                             "scale_swizzled, amax, dequant)", o->actual_name);
    } else if (differs) {
        report_experts(&c, experts);
        st = report_causes(&c, bundle, causes, err);
    }
    P("verdict: %s\n", differs ? "MISMATCH" : "MATCH");
    json_object_set_new(j, "verdict", json_string(differs ? "mismatch" : "match"));
    json_object_set_new(j, "grouped", json_pack("{s:s,s:I}", "m_sizes", sizes, "experts", (json_int_t)g->ngroups));
    json_object_set_new(j, "components", comps);
    json_object_set_new(j, "experts", experts);
    json_object_set_new(j, "causes", causes);
    rep->verdict = differs ? 1 : 0;
    unsigned what = o->what ? o->what : NVFP4_REPORT_TEXT;
    if (what & NVFP4_REPORT_TEXT) rep->text = nvfp4_strbuf_take(t);
    else nvfp4_strbuf_free(t);
    if (what & NVFP4_REPORT_JSON) rep->json = json_dumps(j, JSON_INDENT(2));
    json_decref(j);
    if (!st && (((what & NVFP4_REPORT_TEXT) && !rep->text) || ((what & NVFP4_REPORT_JSON) && !rep->json)))
        st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return st;
}

nvfp4_status nvfp4_grouped_verify_report(const nvfp4_tensor_set *bundle, const nvfp4_tensor_set *actual,
                                         const nvfp4_verify_bundle_opts *o, nvfp4_report *rep, nvfp4_error *err)
{
    memset(rep, 0, sizeof *rep);
    nvfp4_grouped g;
    gout e = {0};
    nvfp4_status st = nvfp4_bundle_to_grouped(bundle, o->expected_name, &g, err);
    if (st) return st;
    st = expected_outputs(&g, &e, err);
    if (!st) st = run_report(bundle, actual, o, &g, &e, rep, err);
    gout_free(&e);
    nvfp4_grouped_free(&g);
    return st;
}

nvfp4_status nvfp4_grouped_mutant_run(size_t i, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                      const size_t *m_sizes, size_t ngroups, const nvfp4_quant_opts *opts,
                                      nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (i >= nvfp4_grouped_mutant_count())
        return nvfp4_error_set(err, NVFP4_EINVAL, "no grouped mutant %zu (%zu catalogued)", i,
                               nvfp4_grouped_mutant_count());
    nvfp4_grouped g;
    nvfp4_status st = nvfp4_quantize_grouped(x, dtype, rows, cols, m_sizes, ngroups, opts, &g, err);
    if (st) return st;
    gout o = {0};
    if (i == 0) {
        nvfp4_tensor xt = {.dtype = dtype == NVFP4_DTYPE_BF16 ? NVFP4_T_BF16 : NVFP4_T_F32, .ndim = 2,
                           .shape = {rows, cols}, .data = (uint8_t *)(uintptr_t)x};
        st = shared_scale_outputs(&g, &xt, &o, err);
    } else {
        st = expected_outputs(&g, &o, err);
        if (!st) st = unpad_segments(&g, &o, err);
    }
    size_t ds[2] = {rows, g.data_bytes / rows}, ss[2] = {rows, g.scale_cols}, zc = (g.scale_cols + 3) / 4 * 4,
           zs[2] = {o.swz_bytes / zc, zc}, n = ngroups, dq[2] = {rows, cols};
    if (!st) st = nvfp4_tset_add(out, "data", NVFP4_T_U8, 2, ds, o.data, NULL, err);
    if (!st) st = nvfp4_tset_add(out, "scale", NVFP4_T_U8, 2, ss, o.scale, NULL, err);
    if (!st) st = nvfp4_tset_add(out, "scale_swizzled", NVFP4_T_U8, 2, zs, o.swz, NULL, err);
    if (!st) st = nvfp4_tset_add(out, "amax", NVFP4_T_F32, 1, &n, o.amax, NULL, err);
    if (!st) st = nvfp4_tset_add(out, "dequant", NVFP4_T_F32, 2, dq, o.dequant, NULL, err);
    gout_free(&o);
    nvfp4_grouped_free(&g);
    return st;
}
