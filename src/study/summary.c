/*
 * summary.c - summary.json of a study output folder: per-arm statistics over
 * seeds of runs.csv (final gap to the FP32 shadow, eval and excess loss, 95%
 * t intervals) and the study's findings, each a published claim, what was
 * measured and a verdict; plus the helpers the studies' findings share.
 * Names no study: findings come from each study's descriptor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/summary.h"
#include "study/verdict.h"

void st_finding(json_t *arr, const char *claim, const char *source, const char *measured, const char *verdict)
{
    json_t *o = json_object();
    json_object_set_new(o, "claim", json_string(claim));
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "measured", json_string(measured));
    json_object_set_new(o, "verdict", json_string(verdict));
    if (strcmp(verdict, "measurement"))
        json_object_set_new(o, "rule", json_string("fixed criterion on the study's means (no seed interval)"));
    json_array_append_new(arr, o);
}

const st_arm_summary *st_arm_sum(const st_table *t, const st_arm_summary *a, const char *name)
{
    ssize_t i = st_arm_index(t, name);
    return i < 0 || !a[i].seeds ? NULL : &a[i];
}

bool st_paired_gap_diff(const st_table *t, const char *a, const char *b, double *mean, double *ci)
{
    const char *arms[2] = {a, b};
    const st_row *r[2 * 256];
    size_t n = st_paired_finals(t, arms, 2, r, 256);
    double d[256];
    if (!n) return false;
    for (size_t i = 0; i < n; i++) d[i] = st_row_gap(r[2 * i]) - st_row_gap(r[2 * i + 1]);
    st_mean_ci(d, n, mean, ci);
    return true;
}

/* Mean final gap of one arm over the paired seeds with its 95% t interval. */
static void arm_gap_est(const st_row *const *rows, size_t narms, size_t k, size_t n, st_estimate *e)
{
    double g[256];
    for (size_t i = 0; i < n; i++) g[i] = st_row_gap(rows[i * narms + k]);
    st_est_t(g, n, e);
}

void st_finding_diff(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                     const char *better, double published)
{
    const char *arms[2] = {worse, better};
    const st_row *r[2 * 256];
    double d[256];
    size_t n = st_paired_finals(t, arms, 2, r, 256);
    if (!n) return;
    for (size_t i = 0; i < n; i++) d[i] = st_row_gap(r[2 * i]) - st_row_gap(r[2 * i + 1]);
    st_estimate e;
    st_est_t(d, n, &e);
    char buf[320];
    snprintf(buf, sizeof buf, "gap(%s) - gap(%s) = %+.3f points, 95%% CI [%+.3f, %+.3f] (paired t, %zu seeds)", worse,
             better, e.est, e.lo, e.hi, n);
    json_t *f = st_finding_est(out, claim, source, buf, &e, +1, published, "gap difference", arms, 2);
    if (isfinite(published)) {
        /* the difference exceeds gap(worse) only if `better` beats the FP32
         * shadow: the ceiling is the upper 95% bound of gap(worse)'s mean */
        st_estimate w;
        arm_gap_est(r, 2, 0, n, &w);
        st_finding_set_ceiling(f, n >= 2 ? w.hi : w.est);
    }
}

void st_finding_paired(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                       const char *better)
{
    st_finding_diff(t, out, claim, source, worse, better, NAN);
}

/* ---- ratios of mean gaps ---------------------------------------------------------- */
typedef struct {
    const st_row *const *rows; /* [seed][2], st_paired_finals */
    size_t ref;                /* the arm (0 or 1) whose mean gap is the denominator */
} gapfrac_ctx;

/* (mean gap(a) - mean gap(b)) / mean gap(ref) over the seeds idx; NAN when
 * the denominator is not positive (a fraction of no gap). */
static double gapfrac_stat(const size_t *idx, size_t n, const void *vctx)
{
    const gapfrac_ctx *c = vctx;
    double m[2] = {0, 0};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < n; i++) m[k] += st_row_gap(c->rows[idx[i] * 2 + k]);
        m[k] /= (double)n;
    }
    return m[c->ref] > 0.0 ? (m[0] - m[1]) / m[c->ref] : NAN;
}

size_t st_gap_fraction_est(const st_table *t, const char *a, const char *b, bool ref_is_a, st_estimate *e,
                           double *ref_gap)
{
    const char *arms[2] = {a, b};
    const st_row *r[2 * 256];
    size_t n = st_paired_finals(t, arms, 2, r, 256);
    if (!n) return 0;
    gapfrac_ctx c = {r, ref_is_a ? 0u : 1u};
    st_est_boot(gapfrac_stat, &c, n, 0.0, e);
    st_estimate g;
    arm_gap_est(r, 2, c.ref, n, &g);
    *ref_gap = g.est;
    return n;
}

/* A ratio-of-means finding; an undefined ratio (the denominator's mean gap
 * is not positive) is inconclusive, with no statistic. */
static void finding_gap_fraction(const st_table *t, json_t *out, const char *claim, const char *source, const char *a,
                                 const char *b, bool ref_is_a, double published, const char *statistic)
{
    st_estimate e;
    double g;
    size_t n = st_gap_fraction_est(t, a, b, ref_is_a, &e, &g);
    if (!n) return;
    const char *ref = ref_is_a ? a : b;
    char buf[512];
    if (isnan(e.est)) {
        snprintf(buf, sizeof buf, "mean gap(%s) = %+.3f points over %zu seeds: no fraction of it is defined", ref, g,
                 n);
        st_finding_inconclusive(out, claim, source, buf,
                                "the denominator's mean gap is not positive: the fraction is undefined");
        return;
    }
    snprintf(buf, sizeof buf,
             "(gap(%s) - gap(%s)) / gap(%s) = %.3f, 95%% CI [%.3f, %.3f] (ratio of the mean gaps, paired percentile "
             "bootstrap, %zu seeds; gap(%s) = %.3f points)",
             a, b, ref, e.est, e.lo, e.hi, n, ref, g);
    const char *arms[2] = {a, b};
    json_t *f = st_finding_est(out, claim, source, buf, &e, +1, published, statistic, arms, 2);
    json_object_set_new(json_object_get(f, "stats"), "denominator", json_string(ref));
    /* a - b exceeds gap(a) only if b beats the FP32 shadow */
    if (ref_is_a) st_finding_set_ceiling(f, 1.0);
}

void st_finding_recovered(const st_table *t, json_t *out, const char *claim, const char *source, const char *base,
                          const char *arm, double published)
{
    finding_gap_fraction(t, out, claim, source, base, arm, true, published, "fraction of gap recovered");
}

void st_finding_nvfp4_fraction(const st_table *t, json_t *out, const char *claim, const char *source,
                               const char *worse, const char *better, const char *nvfp4, double published)
{
    finding_gap_fraction(t, out, claim, source, worse, better, !strcmp(nvfp4, worse), published,
                         "fraction of the NVFP4 gap");
}

nvfp4_status st_summarize(const nvfp4_study *s, const char *dir, json_t *extra, nvfp4_error *err)
{
    st_table t;
    nvfp4_status st = st_read_runs(dir, &t, err);
    if (st != NVFP4_OK) {
        json_decref(extra);
        return st;
    }
    json_t *root = json_object();
    json_object_set_new(root, "study", json_string(s->name));
    json_object_set_new(root, "claim", json_string(s->claim));
    json_object_set_new(root, "tool_version", json_string(nvfp4_version()));
    st_arm_summary sums[ST_MAX_ARMS];
    json_t *arms = json_array();
    for (size_t a = 0; a < t.narms; a++) {
        st_arm_stats(&t, a, &sums[a]);
        const st_arm_summary *m = &sums[a];
        json_t *o = json_object();
        json_object_set_new(o, "arm", json_string(t.arms[a]));
        json_object_set_new(o, "seeds", json_integer((json_int_t)m->seeds));
        json_object_set_new(o, "diverged", json_integer((json_int_t)m->diverged));
        json_object_set_new(o, "final_step", json_integer((json_int_t)m->final_step));
        json_object_set_new(o, "final_tokens", json_integer((json_int_t)m->final_tokens));
        json_object_set_new(o, "final_evals", json_integer((json_int_t)m->final_evals));
#define NUM(k, v) json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null())
        NUM("gap_pct_mean", m->gap_mean);
        NUM("gap_pct_ci95", m->gap_ci);
        NUM("eval_loss_mean", m->eval_mean);
        NUM("eval_loss_ci95", m->eval_ci);
        NUM("fp32_eval_loss_mean", m->ref_eval_mean);
        NUM("excess_loss_mean", m->excess_mean);
        NUM("excess_loss_ci95", m->excess_ci);
#undef NUM
        json_array_append_new(arms, o);
    }
    json_object_set_new(root, "arms", arms);
    st_gradnoise_summary(&t, root);
    json_t *fnd = json_array();
    /* a study with files of its own has findings without training runs */
    if (s->findings && (t.narms || s->files)) s->findings(&t, sums, dir, fnd);
    /* Holm over the study's findings, then each verdict; a sequential run
     * (sequential.c) first multiplies each p by the looks its plan allows */
    json_t *seq = extra ? json_object_get(extra, "sequential") : NULL;
    json_int_t looks = seq ? json_integer_value(json_object_get(seq, "looks_planned")) : 1;
    st_verdicts_finalize_looks(fnd, looks > 1 ? (size_t)looks : 1);
    json_object_set_new(root, "findings", fnd);
    if (extra) json_object_update(root, extra);
    json_decref(extra);
    st_table_free(&t);
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) {
        json_decref(root);
        return NVFP4_ENOMEM;
    }
    json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', f);
    json_decref(root);
    st = st_file_commit(&sf, dir, "summary.json", err);
    if (st != NVFP4_OK) return st;
    bool skipped;
    return st_aggregate_and_plot(dir, s, s->name, &skipped, err);
}

/* ---- tokens-to-match (NVFP4 against MXFP4 at 1x..1.5x the tokens) ---------- */
static const double ttm_mult[4] = {1.0, 1.25, 1.36, 1.5};

typedef struct {
    const st_row *const *rows; /* [seed][5], st_paired_finals */
} ttm_ctx;

static double ttm_excess(const st_row *r) { return r->eval_loss - r->entropy; }

/* Tokens-to-match of the seeds idx: the MXFP4 arms' mean final excess loss
 * (CE - entropy rate; the plain CE where the data has no entropy rate)
 * against the token multiple, linearly interpolated to NVFP4's mean; 1 when
 * MXFP4 matches already at 1x, NAN when not within 1.5x. */
static double ttm_stat(const size_t *idx, size_t n, const void *vctx)
{
    const ttm_ctx *c = vctx;
    double m[5] = {0};
    for (size_t k = 0; k < 5; k++) {
        for (size_t i = 0; i < n; i++) m[k] += ttm_excess(c->rows[idx[i] * 5 + k]);
        m[k] /= (double)n;
    }
    double target = m[0];
    if (m[1] <= target) return 1.0;
    for (size_t k = 2; k < 5; k++)
        if (m[k] <= target)
            return ttm_mult[k - 2] + (ttm_mult[k - 1] - ttm_mult[k - 2]) * (m[k - 1] - target) / (m[k - 1] - m[k]);
    return NAN;
}

void st_finding_tokens_to_match(const st_table *t, json_t *out, const char *claim, const char *source,
                                const char *const names[5], double published)
{
    const st_row *rows[5 * 256];
    size_t n = st_paired_finals(t, names, 5, rows, 256);
    if (!n) return;
    ttm_ctx c = {rows};
    st_estimate e;
    st_est_boot(ttm_stat, &c, n, 1.0, &e);
    char buf[512];
    if (isnan(e.est))
        snprintf(buf, sizeof buf,
                 "MXFP4 did not reach NVFP4's final excess loss within 1.5x the tokens; 95%% CI [%.2f, %.2f] "
                 "(paired percentile bootstrap, %zu seeds; inf: not within 1.5x)",
                 e.lo, e.hi, n);
    else
        snprintf(buf, sizeof buf,
                 "MXFP4 reaches NVFP4's final excess loss at %.2fx the tokens (interpolated), 95%% CI [%.2f, %.2f] "
                 "(paired percentile bootstrap, %zu seeds; inf: not within 1.5x)",
                 e.est, e.lo, e.hi, n);
    st_finding_est(out, claim, source, buf, &e, +1, published, "tokens-to-match", names, 5);
}
