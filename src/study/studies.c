/*
 * studies.c - the built-in studies (research/error-accumulation.md 6): each
 * one is a list of arms (a config change against a base), run for several
 * seeds with the FP32 shadow, written to runs.csv / layers.csv, summarized
 * over seeds and compared with the published claim. S0 lives in s0.c.
 *
 * Studies are never tuned until they agree: sizes and arms follow the
 * research file, and docs/studies.md reports what did not reproduce.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "study/studies.h"
#include "study/study_internal.h"

#include "core/bf16.h"
#include "core/e4m3.h"
#include "core/sr_float.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void st_finding(json_t *arr, const char *claim, const char *source, const char *measured, const char *verdict)
{
    json_t *o = json_object();
    json_object_set_new(o, "claim", json_string(claim));
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "measured", json_string(measured));
    json_object_set_new(o, "verdict", json_string(verdict));
    json_array_append_new(arr, o);
}

/* ---- arms of training studies ---------------------------------------------- */
typedef struct {
    const char *name;
    void (*apply)(nvfp4_train_cfg *c);
    double steps_mult; /* 0 means 1 */
} st_arm;

typedef void (*base_fn)(nvfp4_train_cfg *c, size_t steps);

static int job_selected(size_t j, const nvfp4_study_opts *o)
{
    return o->shard_n <= 1 || j % o->shard_n == o->shard_i;
}

static void write_layer_rows(FILE *f, const char *arm, uint64_t seed, const nvfp4_run *r)
{
    size_t L = nvfp4_run_n_linears(r);
    for (size_t i = 0; i < nvfp4_run_n_logs(r); i++) {
        const nvfp4_log_row *lr = nvfp4_run_log(r, i);
        for (size_t l = 0; l < L; l++) {
            const nvfp4_layer_diag *d = nvfp4_run_diag(r, i, l);
            fprintf(f, "%s,%llu,%zu,%zu,%.5g,%.5g,%.5g,%.7g,%.7g,%.5g", arm, (unsigned long long)seed, lr->step, l,
                    d->sqnr_db[0], d->sqnr_db[1], d->sqnr_db[2], d->wgrad_cos, d->wgrad_align, d->gnr);
            for (int g = 0; g < 3; g++)
                for (int o = 0; o < 2; o++) fprintf(f, ",%.5g", d->zero_frac[g][o]);
            for (int g = 0; g < 3; g++)
                for (int o = 0; o < 2; o++) fprintf(f, ",%.5g", d->clip_frac[g][o]);
            fputc('\n', f);
        }
    }
}

/* One (arm, seed) job: its CSV rows and timing, produced in memory so jobs
 * can run concurrently and still be written in job order. */
typedef struct {
    char *runs, *layers; /* CSV text */
    size_t runs_len, layers_len;
    json_t *timing;
    nvfp4_status st;
    nvfp4_error err;
} job_out;

static void run_job(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, base_fn base, const st_arm *arm,
                    uint64_t seed, size_t steps, job_out *jo)
{
    nvfp4_train_cfg c;
    base(&c, steps);
    c.seed = seed;
    double mult = arm->steps_mult > 0 ? arm->steps_mult : 1.0;
    c.steps = (size_t)llround((double)steps * mult);
    if (c.log_every == 0) c.log_every = c.steps / 40 ? c.steps / 40 : 1;
    if (arm->apply) arm->apply(&c);
    nvfp4_run *r = NULL;
    double t0 = now_s();
    jo->st = nvfp4_run_create(&c, &r, &jo->err);
    if (jo->st == NVFP4_OK) jo->st = nvfp4_run_advance(r, c.steps, &jo->err);
    double dt = now_s() - t0;
    if (jo->st != NVFP4_OK) {
        nvfp4_run_free(r);
        return;
    }
    FILE *fr = open_memstream(&jo->runs, &jo->runs_len), *fl = open_memstream(&jo->layers, &jo->layers_len);
    size_t div_at = 0;
    bool div = nvfp4_run_diverged(r, &div_at);
    size_t n = nvfp4_run_n_logs(r);
    st_row *rows = calloc(n ? n : 1, sizeof *rows);
    double H = nvfp4_run_entropy_rate(r);
    if (!fr || !fl || !rows) {
        jo->st = nvfp4_error_set(&jo->err, NVFP4_ENOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            const nvfp4_log_row *lr = nvfp4_run_log(r, i);
            rows[i] = (st_row){0, lr->step, seed, (uint64_t)lr->step * c.batch, lr->lr, lr->loss, lr->ref_loss,
                               lr->eval_loss, lr->ref_eval_loss, H, lr->drift, (div && i + 1 == n) ? 1 : 0};
        }
        st_write_run_rows(fr, arm->name, seed, rows, n);
        write_layer_rows(fl, arm->name, seed, r);
    }
    free(rows);
    if (fr) fclose(fr);
    if (fl) fclose(fl);
    double qs, rs;
    nvfp4_run_timing(r, &qs, &rs);
    size_t done = nvfp4_run_step(r);
    jo->timing = json_pack("{s:s,s:I,s:I,s:f,s:f,s:f,s:b}", "arm", arm->name, "seed", (json_int_t)seed, "steps",
                           (json_int_t)done, "seconds", dt, "ms_per_step_quantized",
                           done ? 1e3 * qs / (double)done : 0.0, "ms_per_step_fp32",
                           done ? 1e3 * rs / (double)done : 0.0, "diverged", div);
    if (log && !o->quiet) {
        const nvfp4_log_row *last = n ? nvfp4_run_log(r, n - 1) : NULL;
        char line[512];
        int k = snprintf(line, sizeof line,
                         "[%s] %-14s seed %llu: %zu steps in %.1f s (%.2f ms/step quantized, %.2f fp32)%s", s->name,
                         arm->name, (unsigned long long)seed, done, dt, done ? 1e3 * qs / (double)done : 0.0,
                         done ? 1e3 * rs / (double)done : 0.0, div ? " DIVERGED" : "");
        if (last && k > 0 && (size_t)k < sizeof line)
            snprintf(line + k, sizeof line - (size_t)k, ", eval %.5g vs fp32 %.5g (gap %+.2f%%)", last->eval_loss,
                     last->ref_eval_loss, 100.0 * (last->eval_loss - last->ref_eval_loss) / last->ref_eval_loss);
#pragma omp critical(study_log)
        fprintf(log, "%s\n", line);
    }
    nvfp4_run_free(r);
}

/* Runs the selected (arm, seed) jobs, `threads` at a time (each job single-
 * threaded inside), and writes their rows in job order: the files do not
 * depend on the thread count. */
static nvfp4_status run_training_study(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, base_fn base,
                                       const st_arm *arms, size_t narms, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t njobs = narms * seeds;
    job_out *jobs = calloc(njobs, sizeof *jobs);
    size_t *sel = calloc(njobs, sizeof *sel), nsel = 0;
    if (!jobs || !sel) {
        free(jobs);
        free(sel);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < njobs; j++)
        if (job_selected(j, o)) sel[nsel++] = j;
    int threads = o->threads > 0 ? o->threads : 1;
    nvfp4_study_set_threads(1); /* one thread inside each job */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (size_t k = 0; k < nsel; k++) {
        size_t j = sel[k];
        run_job(s, o, log, base, &arms[j / seeds], (uint64_t)(j % seeds) + 1, steps, &jobs[j]);
    }
    nvfp4_status st = NVFP4_OK;
    for (size_t k = 0; k < nsel && st == NVFP4_OK; k++)
        if (jobs[sel[k]].st != NVFP4_OK) {
            *err = jobs[sel[k]].err;
            st = jobs[sel[k]].st;
        }
    st_file sfr;
    st_file sfl;
    FILE *fr = NULL, *fl = NULL;
    json_t *timing = json_array();
    if (st == NVFP4_OK) {
        fr = st_file_open(&sfr, err);
        fl = fr ? st_file_open(&sfl, err) : NULL;
        if (!fr || !fl) st = NVFP4_ENOMEM;
    }
    if (st == NVFP4_OK) {
        fprintf(fr, "%s\n", ST_RUNS_HEADER);
        fprintf(fl, "%s\n", ST_LAYERS_HEADER);
        for (size_t k = 0; k < nsel; k++) {
            job_out *jo = &jobs[sel[k]];
            if (jo->runs) fwrite(jo->runs, 1, jo->runs_len, fr);
            if (jo->layers) fwrite(jo->layers, 1, jo->layers_len, fl);
            if (jo->timing) json_array_append(timing, jo->timing);
        }
        st = st_file_commit(&sfr, o->out_dir, "runs.csv", err);
        fr = NULL;
        if (st == NVFP4_OK) st = st_file_commit(&sfl, o->out_dir, "layers.csv", err);
        else st_file_discard(&sfl);
        fl = NULL;
    }
    if (fr) st_file_discard(&sfr);
    if (fl) st_file_discard(&sfl);
    for (size_t j = 0; j < njobs; j++) {
        free(jobs[j].runs);
        free(jobs[j].layers);
        json_decref(jobs[j].timing);
    }
    free(jobs);
    free(sel);
    json_t *extra = json_object();
    json_object_set_new(extra, "timing", timing);
    json_object_set_new(extra, "steps", json_integer((json_int_t)steps));
    json_object_set_new(extra, "seeds", json_integer((json_int_t)seeds));
    json_object_set_new(extra, "threads", json_integer(threads));
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, extra, err);
    else json_decref(extra);
    return st;
}

static ssize_t arm_index(const st_table *t, const char *name)
{
    for (size_t a = 0; a < t->narms; a++)
        if (!strcmp(t->arms[a], name)) return (ssize_t)a;
    return -1;
}

static const st_arm_summary *arm_sum(const st_table *t, const st_arm_summary *a, const char *name)
{
    ssize_t i = arm_index(t, name);
    return i < 0 || !a[i].seeds ? NULL : &a[i];
}

static const char *verdict_ci(double diff, double ci)
{
    if (!isfinite(ci)) return diff > 0 ? "reproduced (single seed: no CI)" : "not reproduced (single seed)";
    if (diff - ci > 0) return "reproduced";
    if (diff + ci < 0) return "not reproduced (opposite sign)";
    return "inconclusive (within the seed CI)";
}

/* Paired difference over seeds of the final eval loss of two arms, in % of
 * the FP32 shadow: mean and CI of (gap_a - gap_b). */
static bool paired_gap_diff(const st_table *t, const char *a, const char *b, double *mean, double *ci)
{
    ssize_t ia = arm_index(t, a), ib = arm_index(t, b);
    if (ia < 0 || ib < 0) return false;
    double d[256];
    size_t n = 0;
    for (uint64_t seed = 1; seed <= 256; seed++) {
        const st_row *ra = NULL, *rb = NULL;
        for (size_t i = 0; i < t->n; i++) {
            const st_row *r = &t->rows[i];
            if (r->seed != seed) continue;
            if ((ssize_t)r->arm == ia && (!ra || r->step > ra->step)) ra = r;
            if ((ssize_t)r->arm == ib && (!rb || r->step > rb->step)) rb = r;
        }
        if (ra && rb)
            d[n++] = 100.0 * (ra->eval_loss - ra->ref_eval_loss) / ra->ref_eval_loss -
                     100.0 * (rb->eval_loss - rb->ref_eval_loss) / rb->ref_eval_loss;
    }
    if (!n) return false;
    st_mean_ci(d, n, mean, ci);
    return true;
}

static void finding_paired(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                           const char *better)
{
    double m, ci;
    char buf[256];
    if (!paired_gap_diff(t, worse, better, &m, &ci)) return;
    snprintf(buf, sizeof buf, "gap(%s) - gap(%s) = %+.3f %% +- %.3f (95%% CI over seeds, paired)", worse, better, m,
             ci);
    st_finding(out, claim, source, buf, verdict_ci(m, ci));
}

/* ---- S1b: MLP teacher-student ------------------------------------------------------ */
static void s1b_base(nvfp4_train_cfg *c, size_t steps)
{
    nvfp4_train_cfg_init(c);
    c->model.d_in = 64;
    c->model.d_model = 128;
    c->model.d_out = 16;
    c->model.n_blocks = 1;
    c->model.block_kind = NVFP4_BLOCK_PLAIN;
    c->model.act = NVFP4_ACT_SQRELU;
    c->batch = 256;
    c->steps = steps;
    c->lr = 2e-3f;
    c->label_noise = 0.05f;
    c->log_every = 0;
    /* all three GEMMs of every linear in NVFP4 1x16 RN (arm i) */
    for (int g = 0; g < 3; g++)
        for (int o = 0; o < 2; o++) nvfp4_sq_cfg_nvfp4(&c->recipe.q[g][o]);
    c->recipe.first_hp = c->recipe.last_hp = 0;
}
static void a_sr_grad(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_DGRAD][0].rounding = NVFP4_SR;
    c->recipe.q[NVFP4_GEMM_WGRAD][0].rounding = NVFP4_SR;
}
static void a_chmiel(nvfp4_train_cfg *c)
{
    a_sr_grad(c);
    c->recipe.q[NVFP4_GEMM_WGRAD][1].rounding = NVFP4_SR;
}
static void a_chmiel_bwd80(nvfp4_train_cfg *c)
{
    a_chmiel(c);
    c->switch_bwd_step = c->steps * 8 / 10;
}
static void a_chmiel_fwd80(nvfp4_train_cfg *c)
{
    a_chmiel(c);
    c->switch_fwd_step = c->steps * 8 / 10;
}
static const st_arm s1b_arms[] = {
    {"rtn", NULL, 0}, {"sr-grad", a_sr_grad, 0}, {"chmiel", a_chmiel, 0},
    {"chmiel-bwd80", a_chmiel_bwd80, 0}, {"chmiel-fwd80", a_chmiel_fwd80, 0},
};
static nvfp4_status s1b_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return run_training_study(s, o, log, s1b_base, s1b_arms, sizeof s1b_arms / sizeof *s1b_arms, err);
}
static void s1b_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    (void)a;
    finding_paired(t, out,
                   "the gap is forward-dominated: a forward switch to high precision at 80% recovers more than a "
                   "backward switch",
                   "NVIDIA arXiv 2509.25149 App. D (Chmiel et al. arXiv 2505.19115 Sec. 5 found the backward switch "
                   "enough)",
                   "chmiel-bwd80", "chmiel-fwd80");
    finding_paired(t, out, "SR on gradients lowers the loss gap versus RTN everywhere",
                   "Chmiel et al. arXiv 2505.19115 Sec. 3 Fig. 3 (at 350M; research 6.0 pilot: not at 20k params)",
                   "rtn", "sr-grad");
}

/* ---- S3: tiny LM on an order-2 Markov source ---------------------------------------- */
static void s3_base(nvfp4_train_cfg *c, size_t steps)
{
    nvfp4_train_cfg_init(c);
    /* V = 32, context 4 (research 6 S3 has V = 64, context 8 and 3M tokens:
     * ~10x our 2-core budget; at that size 600 steps stay near the unigram
     * loss, see docs/studies.md) */
    c->model.vocab = 32;
    c->model.ctx = 4;
    c->model.emb_dim = 32;
    c->model.d_in = 128;
    c->model.d_model = 64;
    c->model.d_hidden = 256;
    c->model.d_out = 32;
    c->model.n_blocks = 2;
    c->model.block_kind = NVFP4_BLOCK_RESIDUAL;
    c->model.act = NVFP4_ACT_SQRELU;
    c->model.loss = NVFP4_LOSS_CE;
    c->batch = 256;
    c->steps = steps;
    c->lr = 3e-3f;
    c->lr_min_frac = 0.01f;
    c->log_every = 0;
    nvfp4_recipe_cfg_paper(&c->recipe); /* input projection and head FP32 */
}
static void a_mxfp4(nvfp4_train_cfg *c) { nvfp4_recipe_cfg_mxfp4(&c->recipe); }
static const st_arm s3_format_arms[] = {
    {"nvfp4", NULL, 0},          {"mxfp4-x1.00", a_mxfp4, 1.0}, {"mxfp4-x1.25", a_mxfp4, 1.25},
    {"mxfp4-x1.36", a_mxfp4, 1.36}, {"mxfp4-x1.50", a_mxfp4, 1.5},
};
static nvfp4_status s3_format_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return run_training_study(s, o, log, s3_base, s3_format_arms, sizeof s3_format_arms / sizeof *s3_format_arms,
                              err);
}
static void s3_format_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    const st_arm_summary *nv = arm_sum(t, a, "nvfp4");
    const char *names[4] = {"mxfp4-x1.00", "mxfp4-x1.25", "mxfp4-x1.36", "mxfp4-x1.50"};
    const double mult[4] = {1.0, 1.25, 1.36, 1.5};
    if (!nv) return;
    double target = nv->excess_mean, prev_x = 0, prev_m = 0, ttm = NAN;
    char buf[512];
    int have = 0;
    for (int i = 0; i < 4; i++) {
        const st_arm_summary *m = arm_sum(t, a, names[i]);
        if (!m) continue;
        if (have && prev_x > 0 && isnan(ttm) && prev_m > target && m->excess_mean <= target)
            ttm = prev_x + (mult[i] - prev_x) * (prev_m - target) / (prev_m - m->excess_mean);
        if (!have && m->excess_mean <= target) ttm = mult[i]; /* matched already at 1.0x (or better) */
        prev_x = mult[i];
        prev_m = m->excess_mean;
        have = 1;
    }
    const st_arm_summary *m1 = arm_sum(t, a, "mxfp4-x1.00");
    if (m1) {
        snprintf(buf, sizeof buf,
                 "final excess loss (CE - entropy rate): nvfp4 %.4f +- %.4f, mxfp4 %.4f +- %.4f nats; gaps to FP32 "
                 "%.2f%% vs %.2f%%",
                 nv->excess_mean, nv->excess_ci, m1->excess_mean, m1->excess_ci, nv->gap_mean, m1->gap_mean);
        finding_paired(t, out, "MXFP4 trails NVFP4 at equal tokens",
                       "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6 (8B: 2.5% vs 1.5% gap to BF16)", "mxfp4-x1.00",
                       "nvfp4");
        st_finding(out, "excess loss at equal tokens", "this study", buf, "measurement");
    }
    if (isnan(ttm))
        snprintf(buf, sizeof buf, "MXFP4 did not reach NVFP4's final excess loss within 1.5x the tokens");
    else
        snprintf(buf, sizeof buf, "MXFP4 reaches NVFP4's final excess loss at %.2fx the tokens (interpolated)", ttm);
    /* the factor is only as solid as the equal-token difference it rests on */
    double dm = NAN, dci = NAN;
    bool sig = paired_gap_diff(t, "mxfp4-x1.00", "nvfp4", &dm, &dci) && isfinite(dci) && dm - dci > 0;
    const char *v = isnan(ttm)   ? "not reproduced (factor > 1.5)"
                    : ttm <= 1.0 ? "not reproduced (factor <= 1)"
                    : sig        ? "reproduced (factor > 1)"
                                 : "inconclusive (factor > 1, but the equal-token difference is within the seed CI)";
    st_finding(out, "MXFP4 needs more tokens to match NVFP4 (1.36x at 8B/1T)", "NVIDIA arXiv 2509.25149 Sec. 5 Fig. 6b",
               buf, v);
}

static void a_rht_none(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_WGRAD][0].rht = 0;
    c->recipe.q[NVFP4_GEMM_WGRAD][1].rht = 0;
}
static void a_rht_fprop(nvfp4_train_cfg *c)
{
    a_rht_none(c);
    c->recipe.q[NVFP4_GEMM_FPROP][0].rht = 16;
    c->recipe.q[NVFP4_GEMM_FPROP][1].rht = 16;
}
static void a_rht_dgrad(nvfp4_train_cfg *c)
{
    a_rht_none(c);
    c->recipe.q[NVFP4_GEMM_DGRAD][0].rht = 16;
    c->recipe.q[NVFP4_GEMM_DGRAD][1].rht = 16;
}
static const st_arm s3_rht_arms[] = {
    {"rht-wgrad", NULL, 0}, {"rht-none", a_rht_none, 0}, {"rht-fprop", a_rht_fprop, 0}, {"rht-dgrad", a_rht_dgrad, 0},
};
static nvfp4_status s3_rht_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return run_training_study(s, o, log, s3_base, s3_rht_arms, sizeof s3_rht_arms / sizeof *s3_rht_arms, err);
}
static void s3_rht_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    (void)a;
    const char *src = "NVIDIA arXiv 2509.25149 App. E.4.1 Fig. 11 (1.2B)";
    finding_paired(t, out, "RHT on Wgrad is no worse than no RHT", src, "rht-none", "rht-wgrad");
    finding_paired(t, out, "RHT on Fprop degrades the loss (vs Wgrad)", src, "rht-fprop", "rht-wgrad");
    finding_paired(t, out, "RHT on Dgrad degrades the loss (vs Wgrad)", src, "rht-dgrad", "rht-wgrad");
}

static void a_sw_fwd(nvfp4_train_cfg *c) { c->switch_fwd_step = c->steps * 8 / 10; }
static void a_sw_bwd(nvfp4_train_cfg *c) { c->switch_bwd_step = c->steps * 8 / 10; }
static void a_sw_both(nvfp4_train_cfg *c)
{
    a_sw_fwd(c);
    a_sw_bwd(c);
}
static const st_arm s3_switch_arms[] = {
    {"no-switch", NULL, 0}, {"fwd@80%", a_sw_fwd, 0}, {"bwd@80%", a_sw_bwd, 0}, {"both@80%", a_sw_both, 0},
};
static nvfp4_status s3_switch_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return run_training_study(s, o, log, s3_base, s3_switch_arms, sizeof s3_switch_arms / sizeof *s3_switch_arms,
                              err);
}
static void s3_switch_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    (void)a;
    const char *src = "NVIDIA arXiv 2509.25149 App. D Fig. 7 (12B: fwd-only 1.5% -> 0.5%, bwd-only no gain)";
    finding_paired(t, out, "a late forward switch recovers part of the gap", src, "no-switch", "fwd@80%");
    finding_paired(t, out, "switching both recovers the gap", src, "no-switch", "both@80%");
    finding_paired(t, out, "a forward switch beats a backward-only switch", src, "bwd@80%", "fwd@80%");
}

static void a_w1d(nvfp4_train_cfg *c)
{
    c->recipe.q[NVFP4_GEMM_FPROP][1].block = NVFP4_BLOCK_1X16;
    c->recipe.q[NVFP4_GEMM_DGRAD][1].block = NVFP4_BLOCK_1X16;
}
static const st_arm s3_2d_arms[] = {{"w-16x16", NULL, 0}, {"w-1x16", a_w1d, 0}};
static nvfp4_status s3_2d_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    return run_training_study(s, o, log, s3_base, s3_2d_arms, 2, err);
}
static void s3_2d_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    (void)a;
    finding_paired(t, out,
                   "16x16 (consistent) weights beat 1x16 weights quantized along different axes in Fprop and Dgrad",
                   "NVIDIA arXiv 2509.25149 App. E.5 Fig. 14 (1.2B)", "w-1x16", "w-16x16");
}

/* ---- S1a: noisy GD on a quadratic (Chmiel et al. Fig. 4) -------------------------------- */
#define S1A_D 512

static double s1a_loss(const double *th, const double *lam)
{
    double l = 0.0;
    for (int i = 0; i < S1A_D; i++) l += 0.5 * lam[i] * th[i] * th[i];
    return l;
}

/* One trajectory: k = noise multiple of the critical sigma (||g||/sqrt(3d)),
 * bias = constant deterministic error on every coordinate (in units of the
 * initial critical sigma). Step: the optimal eta* of Chmiel Sec. 4. */
static void s1a_traj(uint64_t seed, double k, double bias, size_t steps, size_t every, double *out_loss)
{
    double th[S1A_D], lam[S1A_D], g[S1A_D], tr = 0.0;
    for (int i = 0; i < S1A_D; i++) {
        lam[i] = pow(10.0, -3.0 + 3.0 * i / (S1A_D - 1.0));
        tr += lam[i];
        th[i] = st_normal(seed, 0x51A, (uint64_t)i);
    }
    double eps = 0.0;
    for (size_t s = 0; s < steps; s++) {
        double gg = 0.0, ghg = 0.0;
        for (int i = 0; i < S1A_D; i++) {
            g[i] = lam[i] * th[i];
            gg += g[i] * g[i];
            ghg += lam[i] * g[i] * g[i];
        }
        if (s == 0) eps = bias * sqrt(gg / (3.0 * S1A_D));
        double sigma = k * sqrt(gg / (3.0 * S1A_D));
        double eta = gg > 0 ? gg / (ghg + sigma * sigma * tr) : 0.0;
        if (bias > 0) eta = 1.0; /* fixed step mu for the bias arm (App. B.2) */
        if (s % every == 0) out_loss[s / every] = s1a_loss(th, lam);
        for (int i = 0; i < S1A_D; i++) {
            double n = sigma > 0 ? sigma * st_normal(seed, 0x51B, (uint64_t)s * S1A_D + (uint64_t)i) : 0.0;
            th[i] -= eta * (g[i] + n + eps);
        }
    }
}

static nvfp4_status s1a_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t every = steps / 100 ? steps / 100 : 1, nl = (steps + every - 1) / every;
    static const struct {
        const char *name;
        double k, bias;
    } arms[] = {{"k=0.5", 0.5, 0}, {"k=1", 1.0, 0}, {"k=2", 2.0, 0}, {"bias", 0.0, 0.01}};
    st_file sfr;
    FILE *f = st_file_open(&sfr, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "%s\n", ST_RUNS_HEADER);
    double *ref = malloc(nl * sizeof *ref), *lo = malloc(nl * sizeof *lo);
    st_row *rows = calloc(nl, sizeof *rows);
    if (!ref || !lo || !rows) {
        free(ref);
        free(lo);
        free(rows);
        st_file_discard(&sfr);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < 4 * seeds; j++) {
        if (!job_selected(j, o)) continue;
        uint64_t seed = j % seeds + 1;
        s1a_traj(seed, 0.0, 0.0, steps, every, ref);
        s1a_traj(seed, arms[j / seeds].k, arms[j / seeds].bias, steps, every, lo);
        for (size_t i = 0; i < nl; i++)
            rows[i] = (st_row){0, i * every, seed, i * every, 0, lo[i], ref[i], lo[i], ref[i], 0, 0, 0};
        st_write_run_rows(f, arms[j / seeds].name, seed, rows, nl);
        if (log && !o->quiet)
            fprintf(log, "[s1a] %-6s seed %llu: loss %.4g after %zu steps (noise-free GD %.4g)\n",
                    arms[j / seeds].name, (unsigned long long)seed, lo[nl - 1], steps, ref[nl - 1]);
    }
    free(ref);
    free(lo);
    free(rows);
    nvfp4_status st = st_file_commit(&sfr, o->out_dir, "runs.csv", err);
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, NULL, err);
    return st;
}

/* Progress of an arm: log10 reduction achieved / log10 reduction of noise-free GD. */
static double s1a_progress(const st_table *t, const char *arm)
{
    ssize_t a = arm_index(t, arm);
    if (a < 0) return NAN;
    double p[256];
    size_t n = 0;
    for (uint64_t seed = 1; seed <= 256 && n < 256; seed++) {
        const st_row *first = NULL, *last = NULL;
        for (size_t i = 0; i < t->n; i++) {
            const st_row *r = &t->rows[i];
            if ((ssize_t)r->arm != a || r->seed != seed) continue;
            if (!first || r->step < first->step) first = r;
            if (!last || r->step > last->step) last = r;
        }
        if (first && last && last->ref_loss > 0)
            p[n++] = log10(first->loss / last->loss) / log10(first->ref_loss / last->ref_loss);
    }
    double m, ci;
    st_mean_ci(p, n, &m, &ci);
    return m;
}

static void s1a_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    (void)a;
    double p05 = s1a_progress(t, "k=0.5"), p1 = s1a_progress(t, "k=1"), p2 = s1a_progress(t, "k=2"),
           pb = s1a_progress(t, "bias");
    char buf[256];
    const char *src = "Chmiel et al. arXiv 2505.19115 Sec. 4 Fig. 4";
    snprintf(buf, sizeof buf,
             "fraction of noise-free GD's log-loss reduction achieved: k=0.5 %.3f, k=1 %.3f, k=2 %.3f", p05, p1, p2);
    st_finding(out, "k = 0.5 tracks noise-free GD, k = 1 slows, k = 2 stalls", src, buf,
               (p05 > 0.8 && p1 < p05 && p2 < p1 && p2 < 0.5) ? "reproduced"
               : (p05 > p1 && p1 > p2) ? "partly reproduced (ordered, but k = 2 does not stall)"
                                       : "not reproduced");
    snprintf(buf, sizeof buf, "bias arm achieved %.3f of the noise-free log-loss reduction", pb);
    st_finding(out, "a deterministic rounding bias leaves an irreducible loss floor (SR does not)",
               "Chmiel et al. arXiv 2505.19115 App. B.2", buf, pb < 0.9 ? "reproduced" : "not reproduced");
}

/* ---- S6: low-precision weight storage (positive control) ---------------------------------- */
#define S6_D 256
#define S6_B 16

typedef enum { W_FP32, W_BF16, W_E4M3 } wfmt;

static float store(wfmt f, bool sr, float x, uint64_t seed, uint64_t idx)
{
    if (f == W_FP32) return x;
    uint32_t r = (uint32_t)(st_uniform(seed, 0x56, idx) * 4294967296.0);
    if (f == W_BF16) return sr ? nvfp4_core_sr_pbits(x, 8, -126, 3.3895313892515355e38f, 0, r) : nvfp4_core_round_bf16(x);
    return sr ? nvfp4_core_sr_pbits(x, 4, -6, 448.0f, 1, r) : nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1));
}

/* All weight formats in lockstep on the same data stream (the data draws
 * dominate the cost): w[0] is FP32, w[1+k] the arm k. risk[k][i]. */
#define S6_NW 5
static void s6_lockstep(uint64_t seed, const wfmt *f, const bool *sr, size_t steps, size_t every, double **risk)
{
    static float w[S6_NW][S6_D];
    float ws[S6_D], x[S6_B][S6_D];
    double y[S6_B];
    memset(w, 0, sizeof w);
    for (int i = 0; i < S6_D; i++) ws[i] = (float)st_normal(seed, 0x60, (uint64_t)i);
    for (size_t s = 0; s < steps; s++) {
        for (int b = 0; b < S6_B; b++) {
            uint64_t base = ((uint64_t)s * S6_B + (uint64_t)b) * (S6_D + 1);
            y[b] = 0.0;
            for (int i = 0; i < S6_D; i++) {
                x[b][i] = (float)st_normal(seed, 0x61, base + (uint64_t)i);
                y[b] += (double)ws[i] * x[b][i];
            }
            y[b] += 0.5 * st_normal(seed, 0x61, base + S6_D);
        }
        double lr = 0.5e-2 * (0.01 + 0.99 * 0.5 * (1.0 + cos(3.14159265358979 * (double)s / (double)steps)));
        for (int k = 0; k < S6_NW; k++) {
            float *wk = w[k];
            if (s % every == 0) {
                double e = 0.0;
                for (int i = 0; i < S6_D; i++) e += ((double)wk[i] - ws[i]) * ((double)wk[i] - ws[i]);
                risk[k][s / every] = e; /* excess risk for isotropic inputs */
            }
            double g[S6_D] = {0};
            for (int b = 0; b < S6_B; b++) {
                double pred = 0.0;
                for (int i = 0; i < S6_D; i++) pred += (double)wk[i] * x[b][i];
                double r = pred - y[b];
                for (int i = 0; i < S6_D; i++) g[i] += r * x[b][i] / S6_B;
            }
            for (int i = 0; i < S6_D; i++)
                wk[i] = store(f[k], sr[k], (float)(wk[i] - lr * g[i]), seed, ((uint64_t)s * S6_D + (uint64_t)i) * 8 + (uint64_t)k);
        }
    }
}

static nvfp4_status s6_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t every = steps / 100 ? steps / 100 : 1, nl = (steps + every - 1) / every;
    static const struct {
        const char *name;
        wfmt f;
        bool sr;
    } arms[] = {{"bf16-rn", W_BF16, false}, {"bf16-sr", W_BF16, true}, {"e4m3-rn", W_E4M3, false},
                {"e4m3-sr", W_E4M3, true}};
    st_file sfr;
    FILE *f = st_file_open(&sfr, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "%s\n", ST_RUNS_HEADER);
    double *ref = malloc(nl * sizeof *ref), *lo = malloc(nl * sizeof *lo);
    st_row *rows = calloc(nl, sizeof *rows);
    if (!ref || !lo || !rows) {
        free(ref);
        free(lo);
        free(rows);
        st_file_discard(&sfr);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    /* one job per seed: the FP32 reference and the 4 arms in lockstep */
    double *rk[S6_NW];
    for (int k = 0; k < S6_NW; k++) rk[k] = malloc(nl * sizeof(double));
    wfmt fm[S6_NW] = {W_FP32, arms[0].f, arms[1].f, arms[2].f, arms[3].f};
    bool srs[S6_NW] = {false, arms[0].sr, arms[1].sr, arms[2].sr, arms[3].sr};
    for (size_t j = 0; j < seeds; j++) {
        if (!job_selected(j, o)) continue;
        uint64_t seed = j + 1;
        bool ok = true;
        for (int k = 0; k < S6_NW; k++) ok = ok && rk[k];
        if (!ok) break;
        s6_lockstep(seed, fm, srs, steps, every, rk);
        for (int a = 0; a < 4; a++) {
            for (size_t i = 0; i < nl; i++)
                rows[i] = (st_row){0, i * every, seed, i * every * S6_B, 0, rk[a + 1][i], rk[0][i], rk[a + 1][i], rk[0][i], 0, 0, 0};
            st_write_run_rows(f, arms[a].name, seed, rows, nl);
            if (log && !o->quiet)
                fprintf(log, "[s6] %-8s seed %llu: excess risk %.4g (fp32 weights %.4g)\n", arms[a].name,
                        (unsigned long long)seed, rk[a + 1][nl - 1], rk[0][nl - 1]);
        }
    }
    for (int k = 0; k < S6_NW; k++) free(rk[k]);
    free(ref);
    free(lo);
    free(rows);
    nvfp4_status st = st_file_commit(&sfr, o->out_dir, "runs.csv", err);
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, NULL, err);
    return st;
}

static void s6_findings(const st_table *t, const st_arm_summary *a, json_t *out)
{
    const st_arm_summary *rn = arm_sum(t, a, "bf16-rn"), *sr = arm_sum(t, a, "bf16-sr");
    const st_arm_summary *ern = arm_sum(t, a, "e4m3-rn"), *esr = arm_sum(t, a, "e4m3-sr");
    char buf[320];
    if (rn && sr) {
        snprintf(buf, sizeof buf, "final excess risk: bf16 RN %.4g, bf16 SR %.4g, fp32 weights %.4g", rn->eval_mean,
                 sr->eval_mean, rn->ref_eval_mean);
        const char *src = "Gupta et al. ICML 2015; Croci et al. R. Soc. Open Sci. 2022; research 6.0 (0.51 vs 2.2e-3 vs 1e-3)";
        st_finding(out, "RN-rounded bf16 weight updates stagnate far above fp32 (and above SR)", src, buf,
                   (rn->eval_mean > 10 * sr->eval_mean && rn->eval_mean > 100 * rn->ref_eval_mean) ? "reproduced"
                                                                                                  : "not reproduced");
        st_finding(out, "SR bf16 updates reach close to fp32 (within 5x)", src, buf,
                   sr->eval_mean < 5 * sr->ref_eval_mean ? "reproduced" : "not reproduced");
    }
    if (ern && esr) {
        snprintf(buf, sizeof buf, "final excess risk: E4M3 RN %.4g, E4M3 SR %.4g", ern->eval_mean, esr->eval_mean);
        st_finding(out, "with E4M3 weight storage SR beats RN", "Croci et al. 2022 (stagnation avoidance)", buf,
                   ern->eval_mean > esr->eval_mean ? "reproduced" : "not reproduced");
    }
}

/* ---- registry ------------------------------------------------------------------------------- */
static const nvfp4_study studies[] = {
    {"s0", "arithmetic: RN stagnates (fp16 harmonic sum stops at 7.0859375), SR does not; NVFP4 < MXFP4 in NMSE; SR "
           "averages out like 1/sqrt(T); RN-E4M3 scales bias NVFP4 SR (Higham; Connolly-Higham-Mary 2021; research 6.0)",
     1, 0, st_s0_run, NULL},
    {"s1a", "noisy GD on a quadratic: noise at 0.5x the sqrt(3) threshold tracks GD, 1x slows, 2x stalls (Chmiel et "
            "al. 2505.19115 Fig. 4)",
     3, 3000, s1a_run, s1a_findings},
    {"s1b", "MLP teacher-student in NVFP4: RTN vs SR placements and 80% forward/backward switches (Chmiel Sec. 3-5; "
            "NVIDIA 2509.25149 App. D)",
     3, 1200, s1b_run, s1b_findings},
    {"s3-format", "tiny LM on Markov text: MXFP4 needs more tokens than NVFP4 to reach the same loss (NVIDIA "
                  "2509.25149 Sec. 5: 1.36x)",
     3, 800, s3_format_run, s3_format_findings},
    {"s3-rht", "tiny LM: RHT helps on Wgrad, hurts on Fprop/Dgrad (NVIDIA 2509.25149 App. E.4.1 Fig. 11)", 3, 800,
     s3_rht_run, s3_rht_findings},
    {"s3-switch", "tiny LM: switching the forward pass to high precision late recovers the gap, backward-only does "
                  "not (NVIDIA 2509.25149 App. D)",
     3, 800, s3_switch_run, s3_switch_findings},
    {"s3-2d", "tiny LM: 16x16 weight scales (same bytes in Fprop and Dgrad) beat inconsistent 1x16 (NVIDIA 2509.25149 "
              "App. E.5)",
     3, 800, s3_2d_run, s3_2d_findings},
    {"s6", "positive control: bf16/E4M3 weight storage with RN updates stagnates, SR does not (Gupta 2015; Croci 2022)",
     3, 8000, s6_run, s6_findings},
};

size_t nvfp4_study_count(void) { return sizeof studies / sizeof *studies; }
const nvfp4_study *nvfp4_study_at(size_t i) { return i < nvfp4_study_count() ? &studies[i] : NULL; }
const nvfp4_study *nvfp4_study_find(const char *name)
{
    for (size_t i = 0; i < nvfp4_study_count(); i++)
        if (name && !strcmp(studies[i].name, name)) return &studies[i];
    return NULL;
}
const char *nvfp4_study_name(const nvfp4_study *s) { return s->name; }
const char *nvfp4_study_claim(const nvfp4_study *s) { return s->claim; }

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
    json_t *fnd = json_array();
    if (s->findings && t.narms) s->findings(&t, sums, fnd);
    if (!strcmp(s->name, "s0")) st_s0_findings(dir, fnd);
    json_object_set_new(root, "findings", fnd);
    if (extra) json_object_update(root, extra);
    json_decref(extra);
    free(t.rows);
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
    return st_aggregate_and_plot(dir, s->name, &skipped, err);
}

nvfp4_status nvfp4_study_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    if (!o->out_dir) return nvfp4_error_set(err, NVFP4_EINVAL, "study: no output folder");
    if (o->shard_n && o->shard_i >= o->shard_n)
        return nvfp4_error_set(err, NVFP4_EINVAL, "study: shard %zu/%zu out of range", o->shard_i, o->shard_n);
    if (!st_mkdir_p(o->out_dir, err)) return NVFP4_EIO;
    nvfp4_study_set_threads(o->threads > 0 ? o->threads : 1);
    return s->run(s, o, log, err);
}
