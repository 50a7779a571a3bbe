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
#include "study/study_internal.h"
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

ssize_t st_arm_index(const st_table *t, const char *name)
{
    for (size_t a = 0; a < t->narms; a++)
        if (!strcmp(t->arms[a], name)) return (ssize_t)a;
    return -1;
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
    st_finding_est(out, claim, source, buf, &e, +1, published, "gap difference", arms, 2);
}

void st_finding_paired(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                       const char *better)
{
    st_finding_diff(t, out, claim, source, worse, better, NAN);
}

void st_finding_recovered(const st_table *t, json_t *out, const char *claim, const char *source, const char *base,
                          const char *arm, double published)
{
    const char *arms[2] = {base, arm};
    const st_row *r[2 * 256];
    double d[256];
    size_t n = st_paired_finals(t, arms, 2, r, 256);
    if (!n) return;
    for (size_t i = 0; i < n; i++) {
        double g = st_row_gap(r[2 * i]);
        d[i] = (g - st_row_gap(r[2 * i + 1])) / g;
    }
    st_estimate e;
    st_est_t(d, n, &e);
    char buf[320];
    snprintf(buf, sizeof buf,
             "fraction of gap(%s) recovered by %s = %.3f, 95%% CI [%.3f, %.3f] (paired t over per-seed fractions, "
             "%zu seeds)",
             base, arm, e.est, e.lo, e.hi, n);
    st_finding_est(out, claim, source, buf, &e, +1, published, "fraction of gap recovered", arms, 2);
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
    st_verdicts_finalize(fnd); /* Holm over the study's findings, then each verdict */
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
