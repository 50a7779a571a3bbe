/*
 * s5_gradfid.c - study S5, gradient fidelity through depth: the GPT is
 * trained in FP32 and, at a few checkpoints, the exact gradient of a
 * held-back batch is compared with K quantized-backward gradients of the
 * same weights and batch (K SR keys, no step taken). The forward pass stays
 * FP32, so every difference comes from the backward's quantized GEMMs
 * (Dgrad's dY and W^T, Wgrad's dY^T and X^T). Per linear layer: relative
 * bias ||E[g_q] - g|| / ||g||, relative variance E||g_q - E[g_q]||^2 / ||g||^2
 * and cosine similarity (gradprobe.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/gpt.h"
#include "study/gradprobe.h"
#include "study/seqdata.h"
#include "study/studies.h"
#include "study/labfile.h"
#include "study/verdict.h"

#define S5_NVAR 5
#define S5_NCK 3
static const char *const s5_var[S5_NVAR] = {"rtn", "sr", "rtn-norht", "sr-norht", "sr-all-up"};
static const char *const s5_files[] = {"s5_gradfid.csv", NULL};

/* The backward schemes: the paper's (SR on dY, RHT-16 on both Wgrad
 * inputs, 16x16 W), its RTN twin, both without RHT, and every backward
 * operand SR with E4M3 scales rounded up (no clipping: unbiased). */
static void s5_scheme(size_t v, nvfp4_recipe_cfg *r)
{
    nvfp4_recipe_cfg_paper(r);
    r->first_hp = r->last_hp = 0;
    bool sr = v == 1 || v == 3 || v == 4, rht = v < 2;
    for (int g = NVFP4_GEMM_DGRAD; g <= NVFP4_GEMM_WGRAD; g++) {
        r->q[g][0].rounding = sr ? NVFP4_SR : NVFP4_RN;
        if (!rht) r->q[g][0].rht = r->q[g][1].rht = 0;
        if (v == 4) {
            r->q[g][1].rounding = NVFP4_SR;
            r->q[g][0].scale = r->q[g][1].scale = NVFP4_SS_E4M3_UP;
        }
    }
}

static void s5_base(const nvfp4_study_opts *o, nvfp4_train_cfg *c, size_t steps)
{
    (o->quick ? st_gpt_quick_base : st_gpt_base)(c, steps);
    nvfp4_recipe_cfg_fp32(&c->recipe); /* the checkpoints come from FP32 training */
    c->log_every = steps;
}

static const char *const s5_type[GPT_LIN_PER_BLOCK] = {"qkv", "proj", "fc1", "fc2"};

/* One checkpoint: the exact and the K quantized gradients of each variant,
 * their statistics per block linear, appended to f. */
static nvfp4_status s5_checkpoint(FILE *f, const nvfp4_train_cfg *cfg, const float *p, st_seqdata *sd, uint64_t seed,
                                  size_t ck_step, size_t K, nvfp4_error *err)
{
    gpt g;
    if (!gpt_alloc(&g, &cfg->model, cfg->batch)) return nvfp4_error_set(err, NVFP4_ENOMEM, "s5: out of memory");
    size_t T = g.T, V = g.V, S = g.S, nl = g.L * GPT_LIN_PER_BLOCK;
    uint32_t *tok = malloc(T * sizeof *tok), *lab = malloc(T * sizeof *lab);
    float *dlog = malloc(T * V * sizeof *dlog), *gex = malloc(g.np * sizeof *gex), *gq = malloc(g.np * sizeof *gq);
    st_gradprobe *pr = calloc(nl, sizeof *pr);
    nvfp4_status st = NVFP4_OK;
    if (!tok || !lab || !dlog || !gex || !gq || !pr) st = nvfp4_error_set(err, NVFP4_ENOMEM, "s5: out of memory");
    /* a batch training never draws (its step index is past any run) */
    if (st == NVFP4_OK) {
        st_seqdata_batch(sd, seed, (size_t)1 << 40 | ck_step, cfg->batch, S, tok, lab);
        st = gpt_forward(&g, p, tok, cfg->batch, cfg, true, 0, NULL, err);
    }
    if (st == NVFP4_OK) {
        nvfp4_ce_loss(g.logits, lab, T, V, dlog);
        st = gpt_backward(&g, p, tok, dlog, cfg, true, 0, NULL, gex, err);
    }
    size_t off[64], len[64];
    for (size_t l = 0; l < nl; l++) {
        const gpt_tblock_off *b = &g.tblk[l / GPT_LIN_PER_BLOCK];
        size_t j = l % GPT_LIN_PER_BLOCK, D = g.D, F = g.F;
        off[l] = j == 0 ? b->wqkv : j == 1 ? b->wproj : j == 2 ? b->wfc1 : b->wfc2;
        len[l] = j == 0 ? 3 * D * D : j == 1 ? D * D : F * D;
    }
    for (size_t v = 0; v < S5_NVAR && st == NVFP4_OK; v++) {
        nvfp4_train_cfg q = *cfg;
        s5_scheme(v, &q.recipe);
        for (size_t l = 0; l < nl && st == NVFP4_OK; l++)
            if (!st_gradprobe_init(&pr[l], gex + off[l], len[l], K / 4))
                st = nvfp4_error_set(err, NVFP4_ENOMEM, "s5: out of memory");
        for (size_t k = 0; k < K && st == NVFP4_OK; k++) {
            /* draw k: its own SR key (the step field of the key) */
            st = gpt_backward(&g, p, tok, dlog, &q, false, ck_step * 4096 + k + 1, NULL, gq, err);
            for (size_t l = 0; l < nl && st == NVFP4_OK; l++) st_gradprobe_add(&pr[l], gq + off[l]);
        }
        for (size_t l = 0; l < nl && st == NVFP4_OK; l++) {
            st_gradprobe_stats s;
            st_gradprobe_finish(&pr[l], &s);
            fprintf(f, "%s,%llu,%zu,%zu,%zu,%s,%zu,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", s5_var[v],
                    (unsigned long long)seed, ck_step, l, l / GPT_LIN_PER_BLOCK, s5_type[l % GPT_LIN_PER_BLOCK],
                    len[l], K, s.grad_norm, s.rel_mse1, s.rel_bias, s.rel_bias_sub, s.rel_var, s.rel_bias_debiased,
                    s.cos_mean);
        }
        for (size_t l = 0; l < nl; l++) st_gradprobe_free(&pr[l]);
    }
    free(tok), free(lab), free(dlog), free(gex), free(gq), free(pr);
    gpt_free(&g);
    return st;
}

/* What every seed's job reads. */
typedef struct {
    const nvfp4_study_opts *o;
    size_t steps, K;
    FILE *log;
} s5_jobs;

/* Seed job j: its training run, with the gradient probes at S5_NCK checkpoints, its rows to f. */
static nvfp4_status s5_seed(void *ctx, size_t j, FILE *f, nvfp4_error *err)
{
    const s5_jobs *sj = ctx;
    nvfp4_train_cfg cfg;
    s5_base(sj->o, &cfg, sj->steps);
    cfg.seed = sj->o->seed_first + j + 1;
    nvfp4_run *r = NULL;
    st_seqdata *sd = NULL;
    float *p = NULL;
    nvfp4_status st = nvfp4_run_create(&cfg, &r, err);
    if (st == NVFP4_OK) st = st_seqdata_create(&cfg, &sd, err);
    if (st == NVFP4_OK && !(p = malloc(nvfp4_run_param_count(r) * sizeof *p)))
        st = nvfp4_error_set(err, NVFP4_ENOMEM, "s5: out of memory");
    for (size_t c = 0; c < S5_NCK && st == NVFP4_OK; c++) {
        size_t at = c * sj->steps / (S5_NCK - 1);
        st = nvfp4_run_advance(r, at, err);
        if (st != NVFP4_OK) break;
        nvfp4_run_params(r, p);
        st = s5_checkpoint(f, &cfg, p, sd, cfg.seed, at, sj->K, err);
        if (sj->log && !sj->o->quiet && st == NVFP4_OK)
            fprintf(sj->log, "[s5] seed %llu: checkpoint at step %zu, %zu variants x %zu draws\n",
                    (unsigned long long)cfg.seed, at, (size_t)S5_NVAR, sj->K);
    }
    free(p);
    st_seqdata_free(sd);
    nvfp4_run_free(r);
    return st;
}

/* The seeds run as jobs, --threads at a time and spread over MPI ranks, on
 * one OpenBLAS thread each (st_run_row_jobs): the CSV's bytes do not depend
 * on the thread or process count. */
static nvfp4_status s5_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    s5_jobs sj = {o, steps, o->quick ? 8 : 32, log};
    char *rows = NULL;
    size_t len = 0;
    nvfp4_status st = st_run_row_jobs(o, seeds, s5_seed, &sj, &rows, &len, err);
    if (st != NVFP4_OK || (o->dist && o->dist->size > 1 && o->dist->rank != 0)) return st; /* rank 0 writes */
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) st = NVFP4_ENOMEM;
    if (f) {
        fprintf(f, "variant,seed,step,layer,block,type,params,K,grad_norm,rel_mse1,rel_bias,rel_bias_quarter,rel_var,"
                   "rel_bias_debiased,cos_mean\n");
        if (len) fwrite(rows, 1, len, f);
        st = st_file_commit(&sf, o->out_dir, "s5_gradfid.csv", err);
    }
    free(rows);
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, NULL, err);
    return st;
}

/* ---- findings ------------------------------------------------------------------------------ */
#define S5_MAXROW 8192
typedef struct {
    char var[16];
    uint64_t seed;
    size_t step, layer;
    char type[8];
    double v[7]; /* grad_norm rel_mse1 rel_bias rel_bias_quarter rel_var rel_bias_debiased cos_mean */
} s5_row;

static size_t s5_read(const char *dir, s5_row *r, size_t max)
{
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/s5_gradfid.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0;
    st_read_line(f, line, sizeof line);
    while (n < max && st_read_line(f, line, sizeof line)) {
        s5_row *x = &r[n];
        unsigned long long seed;
        size_t blk, params, K;
        if (sscanf(line, "%15[^,],%llu,%zu,%zu,%zu,%7[^,],%zu,%zu,%lf,%lf,%lf,%lf,%lf,%lf,%lf", x->var, &seed, &x->step,
                   &x->layer, &blk, x->type, &params, &K, &x->v[0], &x->v[1], &x->v[2], &x->v[3], &x->v[4], &x->v[5],
                   &x->v[6]) == 15) {
            x->seed = seed;
            n++;
        }
    }
    fclose(f);
    return n;
}

/* Per unit (seed, checkpoint) of variant var: the mean over layers of
 * column c, or of rel_bias / rel_bias_quarter (c < 0). Units in file order. */
static size_t s5_units(const s5_row *r, size_t n, const char *var, int c, double *out, uint64_t *useed,
                       size_t *ustep)
{
    size_t nu = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i].var, var)) continue;
        size_t u;
        for (u = 0; u < nu; u++)
            if (useed[u] == r[i].seed && ustep[u] == r[i].step) break;
        if (u == nu) {
            useed[nu] = r[i].seed;
            ustep[nu] = r[i].step;
            out[nu++] = 0;
        }
    }
    for (size_t u = 0; u < nu; u++) {
        double s = 0;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(r[i].var, var) && r[i].seed == useed[u] && r[i].step == ustep[u]) {
                s += c < 0 ? r[i].v[2] / r[i].v[3] : r[i].v[c];
                k++;
            }
        out[u] = s / (double)k;
    }
    return nu;
}

static void s5_shrink_finding(const s5_row *r, size_t n, json_t *out, const char *var, const char *claim,
                              const char *src)
{
    double x[512], d[512];
    uint64_t us[512];
    size_t ust[512];
    size_t nu = s5_units(r, n, var, -1, x, us, ust);
    if (!nu) return;
    for (size_t i = 0; i < nu; i++) d[i] = x[i] - 1.0;
    st_estimate e, e1;
    st_est_t(x, nu, &e);
    st_est_t(d, nu, &e1);
    e.null_value = 1.0;
    e.p = e1.p;
    char buf[512];
    snprintf(buf, sizeof buf,
             "%s: ||mean of K draws - g|| / ||mean of K/4 draws - g|| = %.3f, 95%% CI [%.3f, %.3f] (mean over the "
             "block linears; paired t over %zu (seed, checkpoint) units); 0.5 if unbiased, 1 if all bias",
             var, e.est, e.lo, e.hi, nu);
    const char *arms[1] = {var};
    st_finding_est(out, claim, src, buf, &e, -1, 0.5, "error shrink K/4 to K", arms, 1);
}

static void s5_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)t;
    (void)a;
    s5_row *r = malloc(S5_MAXROW * sizeof *r);
    if (!r) return;
    size_t n = s5_read(dir, r, S5_MAXROW);
    if (!n) {
        free(r);
        return;
    }
    const char *src = "Chmiel et al. arXiv 2505.19115 Sec. 3 (SR is unbiased; RTN is not)";
    s5_shrink_finding(r, n, out, "sr-all-up",
                      "with every backward operand SR (scales rounded up) the quantized gradient is unbiased: the "
                      "error of a K-draw mean shrinks as 1/sqrt(K)",
                      src);
    s5_shrink_finding(r, n, out, "sr",
                      "the paper recipe's backward (SR on dY only; W and X rounded to nearest) is unbiased: its "
                      "K-draw error shrinks as 1/sqrt(K)",
                      "NVIDIA arXiv 2509.25149 Sec. 4.3 (SR on gradients for unbiased estimates)");
    /* RTN: every draw identical, so the mean's error cannot shrink */
    double x[512], y[512], d[512];
    uint64_t us[512];
    size_t ust[512];
    size_t nu = s5_units(r, n, "rtn", -1, x, us, ust);
    bool ones = nu > 0;
    double worst = 0;
    for (size_t i = 0; i < nu; i++) {
        ones = ones && fabs(x[i] - 1.0) < 1e-9;
        if (fabs(x[i] - 1.0) > worst) worst = fabs(x[i] - 1.0);
    }
    char buf[640];
    snprintf(buf, sizeof buf, "rtn: the K-draw / K/4-draw error ratio departs from 1 by at most %.3g over %zu units",
             worst, nu);
    if (nu)
        st_finding_criterion(out, "RTN's gradient error does not average out over draws (a pure bias)", src, buf, ones,
                             "fixed criterion: every unit's ratio within 1e-9 of 1");
    /* SR's price: the single-draw error against RTN's */
    size_t ns = s5_units(r, n, "sr", 1, x, us, ust), nr = s5_units(r, n, "rtn", 1, y, us, ust);
    if (ns && ns == nr) {
        for (size_t i = 0; i < ns; i++) d[i] = x[i] - y[i];
        st_estimate e;
        st_est_t(d, ns, &e);
        snprintf(buf, sizeof buf,
                 "single-draw relative squared error E||g_q - g||^2/||g||^2, sr - rtn = %+.4g, 95%% CI [%+.4g, %+.4g] "
                 "(mean over block linears, paired t over %zu units)",
                 e.est, e.lo, e.hi, ns);
        const char *arms[2] = {"sr", "rtn"};
        st_finding_est(out, "one SR gradient is noisier than one RTN gradient (the variance SR pays for no bias)",
                       "Chmiel et al. arXiv 2505.19115 Sec. 3; this repository's S0 (SR NMSE about 2x RN)", buf, &e,
                       +1, NAN, "single-draw error difference", arms, 2);
    }
    /* by depth: bias and spread of the paper recipe, per block and type (means over units) */
    int k = snprintf(buf, sizeof buf, "sr (paper recipe), relative bias / relative std per layer:");
    for (size_t l = 0; l < 64 && k > 0 && (size_t)k < sizeof buf; l++) {
        double sb = 0, sv = 0;
        size_t c = 0;
        const char *ty = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(r[i].var, "sr") && r[i].layer == l) {
                sb += r[i].v[5];
                sv += sqrt(r[i].v[4]);
                c++;
                ty = r[i].type;
            }
        if (!c) break;
        k += snprintf(buf + k, sizeof buf - (size_t)k, " b%zu.%s %.3g/%.3g;", l / GPT_LIN_PER_BLOCK, ty, sb / (double)c,
                      sv / (double)c);
    }
    st_finding(out, "bias and variance of the paper recipe's gradient by depth", "this study", buf, "measurement");
    free(r);
}

/* s5_layers.dat: per layer (rows), per variant (columns), the mean over
 * units of the debiased relative bias and of the relative std; s5.png:
 * clustered bars of both on log axes. */
static nvfp4_status s5_plots(const char *dir, nvfp4_error *err)
{
    s5_row *r = malloc(S5_MAXROW * sizeof *r);
    if (!r) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    size_t n = s5_read(dir, r, S5_MAXROW);
    if (!n) {
        free(r);
        return NVFP4_OK;
    }
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) {
        free(r);
        return NVFP4_ENOMEM;
    }
    fprintf(f, "layer");
    for (size_t v = 0; v < S5_NVAR; v++) fprintf(f, " bias_%s", s5_var[v]);
    for (size_t v = 0; v < S5_NVAR; v++) fprintf(f, " std_%s", s5_var[v]);
    fprintf(f, "\n");
    for (size_t l = 0; l < 64; l++) {
        double m[2][S5_NVAR] = {{0}};
        size_t c[S5_NVAR] = {0};
        const char *ty = NULL;
        for (size_t i = 0; i < n; i++)
            for (size_t v = 0; v < S5_NVAR; v++)
                if (r[i].layer == l && !strcmp(r[i].var, s5_var[v])) {
                    m[0][v] += r[i].v[5];
                    m[1][v] += sqrt(r[i].v[4]);
                    c[v]++;
                    ty = r[i].type;
                }
        if (!ty) break;
        fprintf(f, "b%zu.%s", l / GPT_LIN_PER_BLOCK, ty);
        /* a zero (RTN's spread, an unbiased bias) cannot sit on a log axis: floor at 1e-4 */
        for (int w = 0; w < 2; w++)
            for (size_t v = 0; v < S5_NVAR; v++) {
                double x = c[v] ? m[w][v] / (double)c[v] : NAN;
                fprintf(f, " %.6g", x < 1e-4 ? 1e-4 : x);
            }
        fprintf(f, "\n");
    }
    free(r);
    nvfp4_status st = st_file_commit(&sf, dir, "s5_layers.dat", err);
    if (st != NVFP4_OK) return st;
    return st_gnuplot(
        dir, "s5.gp",
        "set terminal pngcairo size 1100,800 noenhanced\nset output 's5.png'\n"
        "set multiplot layout 2,1 title \"s5: quantized-backward gradient vs the exact gradient, per linear layer "
        "(mean over seeds and checkpoints;\\na missing bar is exactly zero: RTN draws do not differ, so they have no spread)\"\n"
        "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
        "set logscale y\nset format y '%g'\nset grid ytics\nset key outside right autotitle columnhead\nset yrange [1e-4:1]\n"
        "set ylabel 'relative bias (debiased)'\n"
        "plot for [v=2:6] 's5_layers.dat' using v:xtic(1) dt 1\n"
        "set ylabel 'relative std of one draw'\nset xlabel 'linear layer (block.type, input side first; the backward runs from right to "
        "left)'\n"
        "plot for [v=7:11] 's5_layers.dat' using v:xtic(1) dt 1\nunset multiplot\n",
        err);
}

const nvfp4_study st_study_s5_gradfid = {
    .name = "s5",
    .wall = "3 min 20 s",
    .claim = "GPT checkpoints: bias, variance and cosine of the quantized backward's gradient per layer, RTN vs SR, "
             "with/without RHT (Chmiel et al. 2505.19115 Sec. 3)",
    .seeds = 10, /* 30 (seed, checkpoint) units; 10 minutes on 2 cores (docs/studies.md S5) */
    .steps = 200,
    .run = s5_run,
    .findings = s5_findings,
    .plots = s5_plots,
    .files = s5_files,
    .quick_steps = 20,
};
