/*
 * s4_dn.c - study S4, SR against RTN in the backward pass over a sweep of
 * training tokens per parameter (D/N): a GPT of 3,168 non-embedding
 * parameters on the fortunes text, trained at 1, 2, 4, ..., 32 times a base
 * budget of 25 tokens per parameter (25 to 800 at the default size), once
 * with the paper's recipe (SR on the gradient operands) and once with the
 * same recipe rounded to nearest. Quartet (Castro et al. arXiv 2505.14669,
 * Sec. 4) finds RTN's lower variance better at few tokens per parameter and
 * SR's unbiasedness better at many: where does the crossover fall here?
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/verdict.h"

#define S4_NPTS 6
static const char *const s4_rtn[S4_NPTS] = {"rtn-x1", "rtn-x2", "rtn-x4", "rtn-x8", "rtn-x16", "rtn-x32"};
static const char *const s4_sr[S4_NPTS] = {"sr-x1", "sr-x2", "sr-x4", "sr-x8", "sr-x16", "sr-x32"};

/* The GPT of S4: d_model 16, 2 heads, d_ff 64, 1 block, 32-token sequences,
 * 8 per batch (256 tokens a step); 7,776 parameters, of which 4,608 are the
 * (tied) token and the position embeddings. N counts the other 3,168, as
 * Kaplan et al. (arXiv 2001.08361) count non-embedding parameters; the
 * default 310 steps are 25 tokens per such parameter. */
#define S4_D 16
#define S4_F 64
#define S4_S 32
#define S4_B 8
static void s4_base(nvfp4_train_cfg *c, size_t steps)
{
    st_gpt_base(c, steps);
    c->model.d_model = S4_D;
    c->model.n_heads = 2;
    c->model.d_hidden = S4_F;
    c->model.seq_len = S4_S;
    c->model.n_blocks = 1;
    c->batch = S4_B;
    c->lr = 2e-3f;
    c->log_every = 0;
}

/* Non-embedding parameters of s4_base's GPT (gpt.c's layout: per block two
 * LayerNorms and QKV, output, FC1, FC2; the final LayerNorm; tied head). */
static double s4_params(void)
{
    double D = S4_D, F = S4_F;
    return (2 * 2 * D + 3 * D * D + D * D + 2 * F * D) + 2 * D;
}

static void a_rtn(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_DGRAD][0].rounding = NVFP4_RN;
    c->recipe.q[NVFP4_GEMM_WGRAD][0].rounding = NVFP4_RN;
}

static const st_arm s4_arms[2 * S4_NPTS] = {
    {"rtn-x1", a_rtn, 1},   {"sr-x1", NULL, 1},   {"rtn-x2", a_rtn, 2},   {"sr-x2", NULL, 2},
    {"rtn-x4", a_rtn, 4},   {"sr-x4", NULL, 4},   {"rtn-x8", a_rtn, 8},   {"sr-x8", NULL, 8},
    {"rtn-x16", a_rtn, 16}, {"sr-x16", NULL, 16}, {"rtn-x32", a_rtn, 32}, {"sr-x32", NULL, 32},
};

static nvfp4_status s4_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return st_run_training(s, o, log, s4_base, s4_arms, 2 * S4_NPTS, err);
}

/* Tokens per non-embedding parameter of an arm's runs: its steps (final
 * logged step + 1) times the 256 tokens of a step, over s4_params. */
static double s4_tpp(const st_table *t, const char *arm)
{
    ssize_t a = st_arm_index(t, arm);
    size_t last = 0;
    if (a < 0) return NAN;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].arm == (size_t)a && t->rows[i].step > last) last = t->rows[i].step;
    return (double)(last + 1) * S4_S * S4_B / s4_params();
}

typedef struct {
    double tpp, mean, lo, hi;
    size_t n;
} s4_point;

/* Paired SR - RTN final eval-loss gap difference (points of the FP32 gap)
 * at each budget: mean and 95% t interval over seeds. */
static size_t s4_points(const st_table *t, s4_point *pt)
{
    size_t np = 0;
    for (size_t k = 0; k < S4_NPTS; k++) {
        const char *arms[2] = {s4_sr[k], s4_rtn[k]};
        const st_row *r[2 * 256];
        double d[256];
        size_t n = st_paired_finals(t, arms, 2, r, 256);
        if (!n) continue;
        for (size_t i = 0; i < n; i++) d[i] = st_row_gap(r[2 * i]) - st_row_gap(r[2 * i + 1]);
        st_estimate e;
        st_est_t(d, n, &e);
        pt[np++] = (s4_point){s4_tpp(t, s4_sr[k]), e.est, e.lo, e.hi, n};
    }
    return np;
}

/* The crossover: tokens/param where the mean SR - RTN difference first
 * changes sign from + (RTN better) to - (SR better), interpolated linearly
 * in log(tokens/param); NAN when it does not change sign. */
static double s4_crossover(const s4_point *p, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (p[k - 1].mean > 0 && p[k].mean <= 0) {
            double a = log(p[k - 1].tpp), b = log(p[k].tpp);
            return exp(a + (b - a) * p[k - 1].mean / (p[k - 1].mean - p[k].mean));
        }
    return NAN;
}

/* The crossover over the seeds idx (a resample): the budgets' mean paired
 * differences from rows [seed][2 k + {0: SR, 1: RTN}] (seeds with every arm). */
typedef struct {
    const st_row *const *rows;
    double tpp[S4_NPTS];
} s4_boot_ctx;

static double s4_boot_crossover(const size_t *idx, size_t n, const void *vctx)
{
    const s4_boot_ctx *c = vctx;
    s4_point p[S4_NPTS];
    for (size_t k = 0; k < S4_NPTS; k++) {
        double m = 0.0;
        for (size_t i = 0; i < n; i++) {
            const st_row *const *r = &c->rows[idx[i] * 2 * S4_NPTS + 2 * k];
            m += st_row_gap(r[0]) - st_row_gap(r[1]);
        }
        p[k] = (s4_point){c->tpp[k], m / (double)n, NAN, NAN, n};
    }
    return s4_crossover(p, S4_NPTS);
}

/* The crossover's paired percentile bootstrap over the seeds that have every
 * arm (a resample without a sign change counts as +infinity); false when
 * fewer than 2 seeds have them all. */
static bool s4_crossover_interval(const st_table *t, st_estimate *e)
{
    const char *arms[2 * S4_NPTS];
    const st_row **rows = malloc(2 * S4_NPTS * 256 * sizeof *rows);
    if (!rows) return false;
    s4_boot_ctx c = {rows, {0}};
    for (size_t k = 0; k < S4_NPTS; k++) {
        arms[2 * k] = s4_sr[k];
        arms[2 * k + 1] = s4_rtn[k];
        c.tpp[k] = s4_tpp(t, s4_sr[k]);
    }
    size_t n = st_paired_finals(t, arms, 2 * S4_NPTS, rows, 256);
    if (n >= 2) st_est_boot(s4_boot_crossover, &c, n, 0.0, e);
    free(rows);
    return n >= 2;
}

static void s4_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "Castro et al. (Quartet) arXiv 2505.14669 Sec. 4: RTN backward better at low tokens/param, SR at "
                      "high";
    st_finding_paired(t, out, "at the smallest budget RTN's lower-variance backward beats SR", src, "sr-x1",
                      "rtn-x1");
    st_finding_paired(t, out, "at the largest budget (>= 400 tokens/param at the default size) SR's unbiased "
                      "backward beats RTN",
                      src, "rtn-x32", "sr-x32");
    s4_point p[S4_NPTS];
    size_t n = s4_points(t, p);
    if (!n) return;
    char buf[1024];
    int k = snprintf(buf, sizeof buf, "gap(SR) - gap(RTN), points, mean [95%% CI] at tokens/param:");
    for (size_t i = 0; i < n && k > 0 && (size_t)k < sizeof buf; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, " %.3g: %+.3f [%+.3f, %+.3f];", p[i].tpp, p[i].mean, p[i].lo,
                      p[i].hi);
    double x = s4_crossover(p, n);
    st_estimate e;
    if (k > 0 && (size_t)k < sizeof buf && s4_crossover_interval(t, &e)) /* n = 1 seed: no interval */
        k += snprintf(buf + k, sizeof buf - (size_t)k,
                      " crossover 95%% interval [%.3g, %.3g] tokens/param (paired percentile bootstrap over "
                      "seeds; inf: no sign change in the resample);",
                      e.lo, e.hi);
    if (k > 0 && (size_t)k < sizeof buf) {
        if (isnan(x))
            snprintf(buf + k, sizeof buf - (size_t)k, " no sign change of the mean from RTN-better to SR-better (%zu seeds)",
                     p[0].n);
        else
            snprintf(buf + k, sizeof buf - (size_t)k,
                     " the mean changes sign at %.3g tokens/param (log-linear interpolation of the means, %zu seeds)",
                     x, p[0].n);
    }
    st_finding(out, "where SR starts to beat RTN in the backward pass (the crossover)", src, buf, "measurement");
}

/* s4_diff.dat: tokens/param, mean, lo, hi of the paired SR - RTN gap
 * difference; s4.png: it against tokens per parameter (log axis). */
static nvfp4_status s4_plots(const char *dir, nvfp4_error *err)
{
    st_table t;
    nvfp4_status st = st_read_runs(dir, &t, err);
    if (st != NVFP4_OK) return st;
    s4_point p[S4_NPTS];
    size_t n = s4_points(&t, p);
    st_table_free(&t);
    if (!n) return NVFP4_OK;
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "# tokens_per_param mean_sr_minus_rtn_gap_points ci_lo ci_hi seeds\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.6g %.6g %.6g %.6g %zu\n", p[i].tpp, p[i].mean, isfinite(p[i].lo) ? p[i].lo : p[i].mean,
                isfinite(p[i].hi) ? p[i].hi : p[i].mean, p[i].n);
    st = st_file_commit(&sf, dir, "s4_diff.dat", err);
    if (st != NVFP4_OK) return st;
    return st_gnuplot(dir, "s4.gp",
                      "set terminal pngcairo size 900,560 noenhanced\nset output 's4.png'\n"
                      "stats 's4_diff.dat' using 5 nooutput\n"
                      "set title sprintf(\"s4: SR minus RTN backward, paired per seed (line: mean over %d seeds, "
                      "band: 95%% t interval)\\nbelow 0: SR better; Quartet: SR wins at high tokens/param\", "
                      "int(STATS_max))\n"
                      "set xlabel 'training tokens per parameter (log scale)'\n"
                      "set ylabel 'gap(SR) - gap(RTN) to the FP32 shadow (points)'\n"
                      "set logscale x\nset grid\nset key top right\nset xzeroaxis lt -1 lw 2\n"
                      "plot 's4_diff.dat' using 1:3:4 with filledcurves fs transparent solid 0.25 lc rgb '#4060c0' "
                      "title '95% interval of the paired difference', "
                      "'' using 1:2 with linespoints lw 2 dt 1 pt 7 lc rgb '#203080' title 'mean over seeds'\n",
                      err);
}

const nvfp4_study st_study_s4_dn = {
    .name = "s4",
    .wall = "11 min 8 s",
    .claim = "GPT on English text, 25 to 800 tokens per non-embedding parameter: where SR starts to beat RTN in the backward pass (Quartet, "
             "Castro et al. 2505.14669 Sec. 4)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 310, /* 25 tokens/param for the x1 arms; x32 = 800 tokens/param */
    .run = s4_run,
    .findings = s4_findings,
    .plots = s4_plots,
    .quick_steps = 6,
};
