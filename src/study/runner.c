/*
 * runner.c - the common body of the training studies: every (arm, seed) job
 * trains the arm's config (the study's base config changed by the arm) next
 * to its FP32 shadow, and runs.csv / layers.csv collect the logged rows in
 * job order, so the files are the same at any thread count and for any
 * sharding (docs/studies.md). It knows no study: the study files pass their
 * base config and arms in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "study/studies.h"
#include "study/study_internal.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool st_job_selected(size_t j, const nvfp4_study_opts *o)
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

/* Advances the run to its last step in chunks, with a progress line on the
 * log (steps/s and ETA) at most every 10 s, so long runs show they live. */
static nvfp4_status advance_with_progress(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log,
                                          const char *arm, uint64_t seed, nvfp4_run *r, size_t steps,
                                          nvfp4_error *err)
{
    size_t chunk = steps / 100 ? steps / 100 : 1;
    double t0 = now_s(), last = t0;
    nvfp4_status st = NVFP4_OK;
    while (st == NVFP4_OK && nvfp4_run_step(r) < steps && !nvfp4_run_diverged(r, NULL)) {
        size_t to = nvfp4_run_step(r) + chunk;
        st = nvfp4_run_advance(r, to < steps ? to : steps, err);
        double t = now_s();
        size_t done = nvfp4_run_step(r);
        if (log && !o->quiet && t - last >= 10.0 && done < steps) {
            double rate = (double)done / (t - t0), eta = (double)(steps - done) / rate;
#pragma omp critical(study_log)
            fprintf(log, "[%s] %-14s seed %llu: step %zu/%zu, %.1f steps/s, ETA %.0f min %02.0f s\n", s->name, arm,
                    (unsigned long long)seed, done, steps, rate, floor(eta / 60.0), fmod(eta, 60.0));
            last = t;
        }
    }
    return st;
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

static void run_job(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, st_base_fn base, const st_arm *arm,
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
    if (jo->st == NVFP4_OK) jo->st = advance_with_progress(s, o, log, arm->name, seed, r, c.steps, &jo->err);
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
nvfp4_status st_run_training(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, st_base_fn base,
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
        if (st_job_selected(j, o)) sel[nsel++] = j;
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
