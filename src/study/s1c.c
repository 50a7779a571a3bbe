/*
 * s1c.c - study S1c, the sqrt(3) threshold of Chmiel et al. (arXiv
 * 2505.19115 Sec. 4) with noise that can cross it: GD with a fixed step on
 * S1a's quadratic plus additive Gaussian noise of a FIXED size sigma per
 * coordinate, so the gradient-to-noise ratio r = ||g|| / (sqrt(d) sigma)
 * (Chmiel's threshold ||g|| = sqrt(3) sqrt(d) sigma at r = sqrt(3)) falls
 * as the loss does, through sqrt(3) and below. S1a's noise was proportional
 * to ||g||, so its ratio never moved and it could not stall.
 *
 * Every step's progress is compared with the progress noise-free GD would
 * make from the same point: efficiency = sum of realized loss decreases /
 * sum of noise-free decreases over the steps whose ratio lies in a band.
 * Chmiel's claim predicts an efficiency near 0 just below sqrt(3).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/verdict.h"
#include "study/rng.h"

#define S1C_D 512
#define S1C_ETA 1.0 /* fixed step: 1 / lambda_max, noise-free GD's stable optimum for the stiffest direction */
#define S1C_NARM 5
#define S1C_NBAND 4
#define SQRT3 1.7320508075688772

static const struct {
    const char *name;
    double m; /* sigma = m * ||g(theta_0)|| / sqrt(3 d): the start sits at r = sqrt(3) / m */
} s1c_arms[S1C_NARM] = {{"m=0.03", 0.03}, {"m=0.1", 0.1}, {"m=0.3", 0.3}, {"m=1", 1.0}, {"m=3", 3.0}};

/* ratio bands [lo, hi) in units of sqrt(3) */
static const struct {
    const char *name;
    double lo, hi;
} s1c_bands[S1C_NBAND] = {{"above", 1.0, 2.0}, {"below", 0.5, 1.0}, {"far-below", 0.25, 0.5}, {"near-floor", 0.125, 0.25}};

static const char *const s1c_files[] = {"s1c_bands.csv", "s1c_trace.csv", NULL};

typedef struct {
    double lam[S1C_D];
} s1c_problem;

static void s1c_problem_init(s1c_problem *p)
{
    for (int i = 0; i < S1C_D; i++) p->lam[i] = pow(10.0, -3.0 + 3.0 * i / (S1C_D - 1.0));
}

static double s1c_loss(const s1c_problem *p, const double *th)
{
    double l = 0.0;
    for (int i = 0; i < S1C_D; i++) l += 0.5 * p->lam[i] * th[i] * th[i];
    return l;
}

/* The ratio at which the expected loss change of a step is zero in the
 * stationary state: E g_i^2 = eta lambda_i sigma^2 / (2 - eta lambda_i), so
 * r*^2 = mean_i eta lambda_i / (2 - eta lambda_i). */
static double s1c_floor_ratio(const s1c_problem *p)
{
    double s = 0.0;
    for (int i = 0; i < S1C_D; i++) s += S1C_ETA * p->lam[i] / (2.0 - S1C_ETA * p->lam[i]);
    return sqrt(s / S1C_D);
}

typedef struct {
    size_t steps[S1C_NBAND];
    double dec[S1C_NBAND], nf_dec[S1C_NBAND];
} s1c_acc;

/* One trajectory of arm a: loss, noise-free GD's loss (its own trajectory
 * from the same start) and the ratio every `every` steps; per-band sums. */
static void s1c_traj(const s1c_problem *p, uint64_t seed, double m, size_t steps, size_t every, double *loss,
                     double *gd_loss, double *ratio, s1c_acc *acc)
{
    double th[S1C_D], gd[S1C_D], g[S1C_D], step[S1C_D];
    for (int i = 0; i < S1C_D; i++) th[i] = gd[i] = st_normal(seed, 0x51A, (uint64_t)i);
    double gg0 = 0.0;
    for (int i = 0; i < S1C_D; i++) gg0 += p->lam[i] * th[i] * p->lam[i] * th[i];
    double sigma = m * sqrt(gg0 / (3.0 * S1C_D));
    memset(acc, 0, sizeof *acc);
    for (size_t s = 0; s < steps; s++) {
        double gg = 0.0;
        for (int i = 0; i < S1C_D; i++) {
            g[i] = p->lam[i] * th[i];
            gg += g[i] * g[i];
        }
        double r = sqrt(gg) / (sqrt((double)S1C_D) * sigma), l0 = s1c_loss(p, th);
        if (s % every == 0) {
            loss[s / every] = l0;
            gd_loss[s / every] = s1c_loss(p, gd);
            ratio[s / every] = r;
        }
        for (int i = 0; i < S1C_D; i++) step[i] = th[i] - S1C_ETA * g[i];
        double nf = l0 - s1c_loss(p, step); /* noise-free GD's decrease from this point */
        for (int i = 0; i < S1C_D; i++)
            th[i] = step[i] - S1C_ETA * sigma * st_normal(seed, 0x51C, (uint64_t)s * S1C_D + (uint64_t)i);
        double dec = l0 - s1c_loss(p, th);
        for (int b = 0; b < S1C_NBAND; b++)
            if (r >= s1c_bands[b].lo * SQRT3 && r < s1c_bands[b].hi * SQRT3) {
                acc->steps[b]++;
                acc->dec[b] += dec;
                acc->nf_dec[b] += nf;
            }
        for (int i = 0; i < S1C_D; i++) gd[i] -= S1C_ETA * p->lam[i] * gd[i];
    }
}

static nvfp4_status s1c_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t every = steps / 100 ? steps / 100 : 1, nl = (steps + every - 1) / every;
    st_file sr, sb, st;
    FILE *fr = st_file_open(&sr, err), *fb = fr ? st_file_open(&sb, err) : NULL, *ft = fb ? st_file_open(&st, err) : NULL;
    double *lo = malloc(nl * sizeof *lo), *gdl = malloc(nl * sizeof *gdl), *ra = malloc(nl * sizeof *ra);
    st_row *rows = calloc(nl, sizeof *rows);
    s1c_problem *p = malloc(sizeof *p);
    if (!ft || !lo || !gdl || !ra || !rows || !p) {
        if (fr) st_file_discard(&sr);
        if (fb) st_file_discard(&sb);
        if (ft) st_file_discard(&st);
        free(lo), free(gdl), free(ra), free(rows), free(p);
        return fr && fb && ft ? nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory") : NVFP4_ENOMEM;
    }
    s1c_problem_init(p);
    fprintf(fr, "%s\n", ST_RUNS_HEADER);
    fprintf(fb, "arm,seed,band,ratio_lo,ratio_hi,steps,decrease,noise_free_decrease\n");
    fprintf(ft, "arm,seed,step,loss,gd_loss,ratio\n");
    for (size_t j = 0; j < S1C_NARM * seeds; j++) {
        if (!st_job_selected(j, o)) continue;
        uint64_t seed = o->seed_first + j % seeds + 1;
        size_t a = j / seeds;
        s1c_acc acc;
        s1c_traj(p, seed, s1c_arms[a].m, steps, every, lo, gdl, ra, &acc);
        for (size_t i = 0; i < nl; i++) {
            rows[i] = (st_row){.step = i * every, .seed = seed, .tokens = i * every, .lr = S1C_ETA, .loss = lo[i],
                               .ref_loss = gdl[i], .eval_loss = lo[i], .ref_eval_loss = gdl[i]};
            fprintf(ft, "%s,%llu,%zu,%.9g,%.9g,%.6g\n", s1c_arms[a].name, (unsigned long long)seed, i * every, lo[i],
                    gdl[i], ra[i]);
        }
        st_write_run_rows(fr, s1c_arms[a].name, seed, rows, nl);
        for (int b = 0; b < S1C_NBAND; b++)
            fprintf(fb, "%s,%llu,%s,%.17g,%.17g,%zu,%.17g,%.17g\n", s1c_arms[a].name, (unsigned long long)seed,
                    s1c_bands[b].name, s1c_bands[b].lo * SQRT3, s1c_bands[b].hi * SQRT3, acc.steps[b], acc.dec[b],
                    acc.nf_dec[b]);
        if (log && !o->quiet)
            fprintf(log, "[s1c] %-6s seed %llu: loss %.4g after %zu steps (noise-free GD %.4g), ratio %.3g -> %.3g\n",
                    s1c_arms[a].name, (unsigned long long)seed, lo[nl - 1], steps, gdl[nl - 1], ra[0], ra[nl - 1]);
    }
    free(lo), free(gdl), free(ra), free(rows), free(p);
    nvfp4_status rc = st_file_commit(&sr, o->out_dir, "runs.csv", err);
    if (rc == NVFP4_OK) rc = st_file_commit(&sb, o->out_dir, "s1c_bands.csv", err);
    else st_file_discard(&sb);
    if (rc == NVFP4_OK) rc = st_file_commit(&st, o->out_dir, "s1c_trace.csv", err);
    else st_file_discard(&st);
    if (rc == NVFP4_OK) rc = st_summarize(s, o->out_dir, NULL, err);
    return rc;
}

/* ---- findings: per-seed efficiencies from s1c_bands.csv ------------------------------ */
#define S1C_MAXSEED 256
typedef struct {
    uint64_t seed[S1C_MAXSEED];
    double dec[S1C_MAXSEED][S1C_NBAND], nf[S1C_MAXSEED][S1C_NBAND];
    size_t steps[S1C_MAXSEED][S1C_NBAND];
    size_t n;
} s1c_sums;

/* Sums over the arms of each seed (seeds in ascending order). */
static bool s1c_read_bands(const char *dir, s1c_sums *S)
{
    char path[4096], line[512];
    memset(S, 0, sizeof *S);
    snprintf(path, sizeof path, "%s/s1c_bands.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    st_read_line(f, line, sizeof line);
    while (st_read_line(f, line, sizeof line)) {
        char arm[64], band[32];
        unsigned long long seed;
        double rlo, rhi, dec, nf;
        size_t n;
        if (sscanf(line, "%63[^,],%llu,%31[^,],%lf,%lf,%zu,%lf,%lf", arm, &seed, band, &rlo, &rhi, &n, &dec, &nf) != 8)
            continue;
        int b;
        for (b = 0; b < S1C_NBAND; b++)
            if (!strcmp(band, s1c_bands[b].name)) break;
        if (b == S1C_NBAND) continue;
        size_t k;
        for (k = 0; k < S->n; k++)
            if (S->seed[k] == seed) break;
        if (k == S->n) {
            if (S->n == S1C_MAXSEED) continue;
            S->seed[S->n++] = seed;
        }
        S->dec[k][b] += dec;
        S->nf[k][b] += nf;
        S->steps[k][b] += n;
    }
    fclose(f);
    for (size_t i = 1; i < S->n; i++) /* ascending seeds: a merge pairs the same way */
        for (size_t j = i; j > 0 && S->seed[j] < S->seed[j - 1]; j--) {
            s1c_sums tmp;
            tmp.seed[0] = S->seed[j];
            memcpy(tmp.dec[0], S->dec[j], sizeof tmp.dec[0]);
            memcpy(tmp.nf[0], S->nf[j], sizeof tmp.nf[0]);
            memcpy(tmp.steps[0], S->steps[j], sizeof tmp.steps[0]);
            S->seed[j] = S->seed[j - 1];
            memcpy(S->dec[j], S->dec[j - 1], sizeof tmp.dec[0]);
            memcpy(S->nf[j], S->nf[j - 1], sizeof tmp.nf[0]);
            memcpy(S->steps[j], S->steps[j - 1], sizeof tmp.steps[0]);
            S->seed[j - 1] = tmp.seed[0];
            memcpy(S->dec[j - 1], tmp.dec[0], sizeof tmp.dec[0]);
            memcpy(S->nf[j - 1], tmp.nf[0], sizeof tmp.nf[0]);
            memcpy(S->steps[j - 1], tmp.steps[0], sizeof tmp.steps[0]);
        }
    return true;
}

/* Efficiency of band b per seed (seeds with steps in the band only). */
static size_t s1c_eff(const s1c_sums *S, int b, double *e)
{
    size_t n = 0;
    for (size_t k = 0; k < S->n; k++)
        if (S->steps[k][b] && S->nf[k][b] > 0) e[n++] = S->dec[k][b] / S->nf[k][b];
    return n;
}

static const char *const s1c_arm_names[S1C_NARM] = {"m=0.03", "m=0.1", "m=0.3", "m=1", "m=3"};

static void s1c_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)t;
    (void)a;
    s1c_sums *S = malloc(sizeof *S);
    if (!S || !s1c_read_bands(dir, S)) {
        free(S);
        return;
    }
    const char *src = "Chmiel et al. arXiv 2505.19115 Sec. 4 (threshold ||g|| = sqrt(3) x the quantization noise)";
    double eb[S1C_MAXSEED], d[S1C_MAXSEED];
    char buf[512];
    size_t nb = s1c_eff(S, 1, eb);
    st_estimate e;
    st_est_t(eb, nb, &e);
    /* the null is noise-free GD's progress, 1: p from the same t test on eff - 1 */
    for (size_t i = 0; i < nb; i++) d[i] = eb[i] - 1.0;
    st_estimate e1;
    st_est_t(d, nb, &e1);
    e.null_value = 1.0;
    e.p = e1.p;
    snprintf(buf, sizeof buf,
             "efficiency (realized / noise-free loss decrease) of the steps with sqrt(3)/2 <= r < sqrt(3): %.3f, 95%% "
             "CI [%.3f, %.3f] (paired t over %zu seeds, all arms' steps pooled per seed)",
             e.est, e.lo, e.hi, nb);
    st_finding_est(out, "progress stalls once the gradient-to-noise ratio falls below sqrt(3)", src, buf, &e, -1, 0.0,
                   "efficiency below sqrt(3)", s1c_arm_names, S1C_NARM);
    size_t na = 0;
    for (size_t k = 0; k < S->n; k++)
        if (S->steps[k][0] && S->steps[k][1] && S->nf[k][0] > 0 && S->nf[k][1] > 0)
            d[na++] = S->dec[k][0] / S->nf[k][0] - S->dec[k][1] / S->nf[k][1];
    st_estimate e2;
    st_est_t(d, na, &e2);
    snprintf(buf, sizeof buf,
             "efficiency(sqrt(3) <= r < 2 sqrt(3)) - efficiency(sqrt(3)/2 <= r < sqrt(3)) = %+.3f, 95%% CI [%+.3f, "
             "%+.3f] (paired t, %zu seeds)",
             e2.est, e2.lo, e2.hi, na);
    st_finding_est(out, "progress drops as the ratio crosses sqrt(3) from above", src, buf, &e2, +1, NAN,
                   "efficiency drop across sqrt(3)", s1c_arm_names, S1C_NARM);
    /* where the runs really stall: the ratio at the noise floor */
    s1c_problem *p = malloc(sizeof *p);
    if (p) {
        s1c_problem_init(p);
        double fe[S1C_MAXSEED], m, ci;
        size_t nf = s1c_eff(S, 2, fe);
        st_mean_ci(fe, nf, &m, &ci);
        snprintf(buf, sizeof buf,
                 "efficiency with sqrt(3)/4 <= r < sqrt(3)/2: %.3f +- %.3f; the expected loss change is zero at the "
                 "stationary ratio r* = sqrt(mean eta lambda / (2 - eta lambda)) = %.3f for this quadratic and step, "
                 "%.2f x sqrt(3)",
                 m, ci, s1c_floor_ratio(p), s1c_floor_ratio(p) / SQRT3);
        st_finding(out, "where progress stops in this noise model (fixed step, additive noise)", "this study", buf,
                   "measurement");
        free(p);
    }
    free(S);
}

/* s1c_eff.dat: per band (ratio centre in units of sqrt(3)), mean efficiency
 * and 95% interval over seeds; s1c_ratio.dat: per arm, the mean ratio over
 * seeds against the step. */
static nvfp4_status s1c_plots(const char *dir, nvfp4_error *err)
{
    s1c_sums *S = malloc(sizeof *S);
    if (!S) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (!s1c_read_bands(dir, S)) {
        free(S);
        return NVFP4_OK;
    }
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) {
        free(S);
        return NVFP4_ENOMEM;
    }
    fprintf(f, "# ratio_lo ratio_hi ratio_centre mean_efficiency lo hi seeds (ratios in units of sqrt(3))\n");
    for (int b = S1C_NBAND - 1; b >= 0; b--) {
        double e[S1C_MAXSEED], m, ci;
        size_t n = s1c_eff(S, b, e);
        st_mean_ci(e, n, &m, &ci);
        if (!isfinite(ci)) ci = 0;
        if (n)
            fprintf(f, "%g %g %g %.6g %.6g %.6g %zu\n", s1c_bands[b].lo, s1c_bands[b].hi,
                    sqrt(s1c_bands[b].lo * s1c_bands[b].hi), m, m - ci, m + ci, n);
    }
    free(S);
    nvfp4_status st = st_file_commit(&sf, dir, "s1c_eff.dat", err);
    if (st != NVFP4_OK) return st;
    return st_gnuplot(dir, "s1c.gp",
                      "set terminal pngcairo size 900,560 noenhanced\nset output 's1c.png'\n"
                      "stats 's1c_eff.dat' using 7 nooutput\n"
                      "set title sprintf(\"s1c: progress per step against the gradient-to-noise ratio r = ||g|| / "
                      "(sqrt(d) sigma)\\nrealized / noise-free loss decrease, mean and 95%% t interval over %d "
                      "seeds\", int(STATS_max))\n"
                      "set xlabel 'r / sqrt(3) (log scale; the band of each bar)'\nset ylabel 'efficiency'\n"
                      "set logscale x 2\nset xrange [0.1:2.5]\nset yrange [-0.2:1.2]\nset grid\nset key bottom right\n"
                      "set arrow from 1, graph 0 to 1, graph 1 nohead lw 2 dt 2 lc rgb 'red'\n"
                      "set label 'Chmiel: stalls below r = sqrt(3)' at 1.03, 0.1 tc rgb 'red'\n"
                      "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb 'gray'\n"
                      "plot 's1c_eff.dat' using 3:4:1:2:5:6 with xyerrorbars lw 2 pt 7 lc rgb '#203080' "
                      "title 'measured (x bar: band; y bar: 95% interval)'\n",
                      err);
}

const nvfp4_study st_study_s1c = {
    .name = "s1c",
    .wall = "5 s",
    .claim = "fixed-size gradient noise on a quadratic: does progress stall once ||g|| falls below sqrt(3) x the noise "
             "(Chmiel et al. 2505.19115 Sec. 4)?",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 3000,
    .run = s1c_run,
    .findings = s1c_findings,
    .plots = s1c_plots,
    .files = s1c_files,
    .quick_steps = 600,
    .serial = true, /* its 10 seeds take seconds: under MPI rank 0 runs them, instead of every rank running all */
};
