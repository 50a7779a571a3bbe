/*
 * runner.c - the common body of the training studies: every (arm, seed) job
 * trains the arm's config (the study's base config changed by the arm)
 * paired with its FP32 shadow (one per seed, shared by the arms whose
 * configs differ only in the recipe), and runs.csv / layers.csv collect the
 * logged rows in job order, so the files are the same at any thread count
 * and for any sharding (docs/studies.md). It knows no study: the study
 * files pass their base config and arms in.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nvfp4/io.h"

#include "study/studies.h"
#include "study/labfile.h"
#include "study/probe.h"
#include "study/shadow.h"
#include "study/train.h"

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
            fprintf(f, ",%.7g,%.7g,%.5g,%.5g,%.7g,%.5g,%.5g", d->dgrad_cos, d->dgrad_align, d->dgrad_rel_err,
                    d->probe_rel_err, d->probe_cos, d->probe_rel_bias, d->probe_rel_std);
            for (int g = 0; g < 3; g++)
                for (int o = 0; o < 2; o++) fprintf(f, ",%.5g", d->zero_in_frac[g][o]);
            for (int g = 0; g < 3; g++)
                for (int o = 0; o < 2; o++) fprintf(f, ",%.5g", d->zero_scale_frac[g][o]);
            fprintf(f, ",%.5g,%.5g", d->osc_frac, d->hot_persist);
            fputc('\n', f);
        }
    }
}

/* Where job j keeps its checkpoint and, once finished, its output (for
 * --resume): out_dir/.resume/job-<j>.ckpt and .done. */
static void resume_path(const nvfp4_study_opts *o, size_t j, const char *ext, char *buf, size_t n)
{
    snprintf(buf, n, "%s/.resume/job-%zu.%s", o->out_dir, j, ext);
}

/* One progress line: steps done of `steps`, the rate (seconds per step
 * below one step a second, where steps/s would print 0.0) and the ETA it
 * gives. */
static void progress_line(FILE *log, const char *study, const char *arm, uint64_t seed, size_t done, size_t steps,
                          double rate)
{
    double eta = (double)(steps - done) / rate;
    char speed[32];
    if (rate >= 1.0) snprintf(speed, sizeof speed, "%.1f steps/s", rate);
    else snprintf(speed, sizeof speed, "%.1f s/step", 1.0 / rate);
#pragma omp critical(study_log)
    fprintf(log, "[%s] %-14s seed %llu: step %zu/%zu, %s, ETA %.0f min %02.0f s\n", study, arm,
            (unsigned long long)seed, done, steps, speed, floor(eta / 60.0), fmod(eta, 60.0));
}

/* Advances the run to its last step in chunks, with a progress line on the
 * log (steps/s and ETA) at most every 10 s, so long runs show they live,
 * and a checkpoint every o->checkpoint_every steps (or 300 s). */
static nvfp4_status advance_with_progress(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log,
                                          const char *arm, uint64_t seed, nvfp4_run *r, size_t steps,
                                          const char *ckpt, nvfp4_error *err)
{
    size_t chunk = steps / 100 ? steps / 100 : 1, every = o->checkpoint_every, first = nvfp4_run_step(r);
    double t0 = now_s(), last = t0, saved = t0;
    nvfp4_status st = NVFP4_OK;
    while (st == NVFP4_OK && nvfp4_run_step(r) < steps && !nvfp4_run_diverged(r, NULL)) {
        size_t at = nvfp4_run_step(r), to = at + chunk;
        if (every && to > (at / every + 1) * every) to = (at / every + 1) * every;
        st = nvfp4_run_advance(r, to < steps ? to : steps, err);
        double t = now_s();
        size_t done = nvfp4_run_step(r);
        if (st == NVFP4_OK && done < steps && !nvfp4_run_diverged(r, NULL) &&
            (every ? done % every == 0 : t - saved >= 300.0)) {
            st = nvfp4_run_save(r, ckpt, err);
            saved = t;
        }
        if (log && !o->quiet && t - last >= 10.0 && done < steps) {
            progress_line(log, s->name, arm, seed, done, steps, (double)(done - first) / (t - t0));
            last = t;
        }
    }
    return st;
}

bool st_shadow_diverged(const nvfp4_log_row *rows, size_t n, double factor)
{
    if (!n) return false;
    const nvfp4_log_row *first = &rows[0], *last = &rows[n - 1];
    double ref0 = first->ref_eval_loss > 0 ? first->ref_eval_loss : first->ref_loss;
    return !isfinite(last->ref_loss) || !isfinite(last->ref_eval_loss) ||
           (isfinite(ref0) && ref0 > 0 && (last->ref_loss > factor * ref0 || last->ref_eval_loss > factor * ref0));
}

static const char *diverged_note(bool quantized, bool shadow)
{
    if (!quantized && !shadow) return "";
    return !shadow ? " DIVERGED" : !quantized ? " DIVERGED (the FP32 shadow)" : " DIVERGED (both models)";
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

static void free_jobs(job_out *jobs, size_t n)
{
    for (size_t k = 0; jobs && k < n; k++) {
        free(jobs[k].runs);
        free(jobs[k].layers);
        json_decref(jobs[k].timing);
    }
    free(jobs);
}

/* A job's output as bytes (MPI messages, .done files): a header line with
 * the status and the three lengths, the error message line, then the runs
 * and layers CSV text and the timing JSON. */
static bool job_pack(const job_out *jo, char **buf, size_t *len)
{
    char *t = jo->timing ? json_dumps(jo->timing, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    size_t tl = t ? strlen(t) : 0;
    FILE *f = open_memstream(buf, len);
    if (!f) {
        free(t);
        return false;
    }
    fprintf(f, "NVF4JOB1 %d %zu %zu %zu\n%s\n", (int)jo->st, jo->runs_len, jo->layers_len, tl, jo->err.message);
    if (jo->runs_len) fwrite(jo->runs, 1, jo->runs_len, f);
    if (jo->layers_len) fwrite(jo->layers, 1, jo->layers_len, f);
    if (tl) fwrite(t, 1, tl, f);
    free(t);
    return fclose(f) == 0;
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

static bool job_unpack(const char *buf, size_t len, job_out *jo)
{
    int st, used = 0;
    size_t rl, ll, tl;
    if (len < 9 || memcmp(buf, "NVF4JOB1 ", 9) || !memchr(buf, '\n', len)) return false;
    if (sscanf(buf, "NVF4JOB1 %d %zu %zu %zu%n", &st, &rl, &ll, &tl, &used) != 4 || used <= 0 ||
        (size_t)used >= len || buf[used] != '\n')
        return false;
    used++; /* the message line follows */
    const char *msg = buf + used, *nl = memchr(msg, '\n', len - (size_t)used);
    if (!nl) return false;
    const char *p = nl + 1;
    if ((size_t)(buf + len - p) != rl + ll + tl) return false;
    memset(jo, 0, sizeof *jo);
    jo->st = (nvfp4_status)st;
    jo->err.status = jo->st;
    snprintf(jo->err.message, sizeof jo->err.message, "%.*s", (int)(nl - msg), msg);
    jo->runs = dup_bytes(p, rl);
    jo->layers = dup_bytes(p + rl, ll);
    jo->runs_len = rl;
    jo->layers_len = ll;
    if (tl) jo->timing = json_loadb(p + rl + ll, tl, 0, NULL);
    return jo->runs && jo->layers && (!tl || jo->timing);
}

/* A .done file is job_pack's bytes and a last line "NVF4SUM <sha256 of
 * them>", so that a changed byte is refused instead of merged. */
#define DONE_SUM_LEN 73 /* "NVF4SUM " + 64 hex digits + '\n' */

static bool done_write(const char *path, const job_out *jo)
{
    char *buf = NULL, hex[65];
    size_t len = 0;
    if (!job_pack(jo, &buf, &len)) return false;
    char *all = realloc(buf, len + DONE_SUM_LEN + 1);
    bool ok = all != NULL;
    if (ok) {
        buf = all;
        nvfp4_sha256_hex(buf, len, hex);
        snprintf(buf + len, DONE_SUM_LEN + 1, "NVF4SUM %s\n", hex);
        nvfp4_error e;
        ok = nvfp4_file_write_atomic(path, buf, len + DONE_SUM_LEN, &e) == NVFP4_OK;
    }
    free(buf);
    return ok;
}

/* --resume: the finished job j's output from its .done file: 1 when
 * loaded, 0 when there is none (the job runs), -1 when the file is not a
 * sound .done of this job (jo->st and jo->err say why; the study stops). */
static int job_load_done(const nvfp4_study_opts *o, size_t j, const char *arm, uint64_t seed, job_out *jo)
{
    char path[4096], hex[65];
    uint8_t *buf = NULL;
    size_t len = 0;
    struct stat sb;
    resume_path(o, j, "done", path, sizeof path);
    if (lstat(path, &sb) != 0) return 0;
    jo->st = nvfp4_file_read_all(path, ST_MAX_LAB_FILE, &buf, &len, &jo->err);
    if (jo->st != NVFP4_OK) return -1;
    size_t body = len >= DONE_SUM_LEN ? len - DONE_SUM_LEN : 0;
    if (body) nvfp4_sha256_hex(buf, body, hex);
    bool sound = body && !memcmp(buf + body, "NVF4SUM ", 8) && !memcmp(buf + body + 8, hex, 64) &&
                 buf[len - 1] == '\n' && job_unpack((const char *)buf, body, jo) && jo->st == NVFP4_OK;
    free(buf);
    json_t *t = sound ? jo->timing : NULL;
    const char *tarm = json_string_value(json_object_get(t, "arm"));
    if (sound && (!tarm || strcmp(tarm, arm) ||
                  json_integer_value(json_object_get(t, "seed")) != (json_int_t)seed))
        sound = false;
    if (sound) return 1;
    free(jo->runs);
    free(jo->layers);
    json_decref(jo->timing);
    memset(jo, 0, sizeof *jo);
    jo->st = nvfp4_error_set(&jo->err, NVFP4_EFORMAT,
                             "--resume: %s is damaged or not job %zu's (%s, seed %llu): its checksum or contents do "
                             "not match; remove it to run that job again",
                             path, j, arm, (unsigned long long)seed);
    return -1;
}

/* The run of job j: a fresh one, or with --resume the one of its last
 * checkpoint (which must hold the same config). */
static nvfp4_status job_start(const nvfp4_study_opts *o, const nvfp4_train_cfg *c, const char *ckpt, nvfp4_run **r,
                              nvfp4_error *err)
{
    struct stat sb;
    if (o->resume && lstat(ckpt, &sb) == 0) {
        nvfp4_status st = nvfp4_run_load(ckpt, r, err);
        if (st != NVFP4_OK) return st;
        if (memcmp(nvfp4_run_cfg(*r), c, sizeof *c) != 0) {
            nvfp4_run_free(*r);
            *r = NULL;
            return nvfp4_error_set(err, NVFP4_EINVAL,
                                   "%s: checkpoint of another configuration (not this study's job); remove %s/.resume "
                                   "or run without --resume",
                                   ckpt, o->out_dir);
        }
        return NVFP4_OK;
    }
    return nvfp4_run_create(c, r, err);
}

/* The config of arm a's job with this seed (the runner logs 40 rows unless
 * the config says). */
static void job_cfg(const nvfp4_study_opts *o, const st_jobs *jobs, size_t a, uint64_t seed, size_t steps,
                    nvfp4_train_cfg *c)
{
    jobs->cfg(jobs->ctx, a, steps, o->quick, c);
    c->seed = seed;
    if (c->log_every == 0) c->log_every = c->steps / 40 ? c->steps / 40 : 1;
}

/* The FP32 shadow shared by this process's jobs of one seed whose configs
 * differ only where the shadow does not look (st_shadow_key): trained once,
 * read by each of them (docs/studies.md, "The baseline"). */
typedef struct {
    nvfp4_train_cfg cfg, key; /* the config of its first job, and its key */
    size_t users;             /* this process's jobs with that key */
    bool needed;              /* one of them has not finished before (--resume) */
    st_shadow *sh;
    nvfp4_status st;
    nvfp4_error err;
} shadow_slot;

/* r reads its shadow from the slot; or, a run resumed from the checkpoint of
 * a shared-shadow job and left alone now, from a trace trained for it (*own). */
static nvfp4_status attach_shadow(const shadow_slot *slot, const nvfp4_train_cfg *c, nvfp4_run *r, st_shadow **own,
                                  nvfp4_error *err)
{
    if (slot) {
        if (slot->st != NVFP4_OK) {
            *err = slot->err;
            return slot->st;
        }
        return st_run_share_shadow(r, slot->sh, err);
    }
    if (!st_run_shadow_external(r)) return NVFP4_OK;
    nvfp4_status st = st_shadow_train(c, NULL, NULL, own, err);
    return st == NVFP4_OK ? st_run_share_shadow(r, *own, err) : st;
}

static void run_job(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, const st_jobs *jobs, size_t a,
                    size_t j, uint64_t seed, size_t steps, bool pair, const shadow_slot *slot, job_out *jo)
{
    const char *arm = jobs->arm_name(jobs->ctx, a);
    int finished = o->resume ? job_load_done(o, j, arm, seed, jo) : 0;
    if (finished < 0) return;
    if (finished > 0) {
        if (log && !o->quiet) {
#pragma omp critical(study_log)
            fprintf(log, "[%s] %-14s seed %llu: finished before, skipped (--resume)\n", s->name, arm,
                    (unsigned long long)seed);
        }
        return;
    }
    nvfp4_train_cfg c;
    job_cfg(o, jobs, a, seed, steps, &c);
    char ckpt[4096], done_path[4096];
    resume_path(o, j, "ckpt", ckpt, sizeof ckpt);
    resume_path(o, j, "done", done_path, sizeof done_path);
    nvfp4_run *r = NULL;
    st_shadow *own = NULL;
    double t0 = now_s();
    jo->st = job_start(o, &c, ckpt, &r, &jo->err);
    if (jo->st == NVFP4_OK) jo->st = attach_shadow(slot, &c, r, &own, &jo->err);
    if (jo->st == NVFP4_OK) st_run_pair(r, pair);
    if (jo->st == NVFP4_OK) jo->st = advance_with_progress(s, o, log, arm, seed, r, c.steps, ckpt, &jo->err);
    double dt = now_s() - t0;
    if (jo->st != NVFP4_OK) {
        nvfp4_run_free(r);
        st_shadow_free(own);
        return;
    }
    FILE *fr = open_memstream(&jo->runs, &jo->runs_len), *fl = open_memstream(&jo->layers, &jo->layers_len);
    size_t div_at = 0;
    bool qdiv = nvfp4_run_diverged(r, &div_at), div = qdiv;
    size_t n = nvfp4_run_n_logs(r);
    /* the FP32 shadow diverging (a config it cannot train on) counts too:
     * its gap would otherwise be read as the quantized arm's */
    bool refdiv = n && st_shadow_diverged(nvfp4_run_log(r, 0), n, c.diverge_factor);
    div = div || refdiv;
    st_row *rows = calloc(n ? n : 1, sizeof *rows);
    double H = nvfp4_run_entropy_rate(r);
    if (!fr || !fl || !rows) {
        jo->st = nvfp4_error_set(&jo->err, NVFP4_ENOMEM, "out of memory");
    } else {
        /* a GPT batch row is a sequence of seq_len predicted tokens; the other models predict one per row */
        uint64_t tokens_per_step = (uint64_t)c.batch * (c.model.arch == NVFP4_ARCH_GPT ? c.model.seq_len : 1) *
                                   (c.accum_steps > 1 ? c.accum_steps : 1);
        uint64_t probe_tokens = tokens_per_step * st_probe_scale(&c);
        for (size_t i = 0; i < n; i++) {
            const nvfp4_log_row *lr = nvfp4_run_log(r, i);
            rows[i] = (st_row){0, lr->step, seed, (uint64_t)lr->step * tokens_per_step, lr->lr, lr->loss, lr->ref_loss,
                               lr->eval_loss, lr->ref_eval_loss, H, lr->drift, (div && i + 1 == n) ? 1 : 0,
                               isfinite(lr->heldout_loss), lr->heldout_loss, lr->ref_heldout_loss, 0,
                               lr->grad_noise, lr->grad_qerr, probe_tokens};
        }
        st_write_run_rows(fr, arm, seed, rows, n);
        write_layer_rows(fl, arm, seed, r);
    }
    free(rows);
    if (fr) fclose(fr);
    if (fl) fclose(fl);
    double qs, rs;
    nvfp4_run_timing(r, &qs, &rs);
    size_t done = nvfp4_run_step(r);
    jo->timing = json_pack("{s:s,s:I,s:I,s:f,s:f,s:f,s:b}", "arm", arm, "seed", (json_int_t)seed, "steps",
                           (json_int_t)done, "seconds", dt, "ms_per_step_quantized",
                           done ? 1e3 * qs / (double)done : 0.0, "ms_per_step_fp32",
                           done ? 1e3 * rs / (double)done : 0.0, "diverged", div);
    if (jo->timing && div)
        json_object_set_new(jo->timing, "diverged_model",
                            json_string(qdiv && refdiv ? "both" : qdiv ? "quantized" : "fp32"));
    if (log && !o->quiet) {
        const nvfp4_log_row *last = n ? nvfp4_run_log(r, n - 1) : NULL;
        char line[512];
        int k = snprintf(line, sizeof line,
                         "[%s] %-14s seed %llu: %zu steps in %.1f s (%.2f ms/step quantized, %.2f fp32)%s", s->name,
                         arm, (unsigned long long)seed, done, dt, done ? 1e3 * qs / (double)done : 0.0,
                         done ? 1e3 * rs / (double)done : 0.0, diverged_note(qdiv, refdiv));
        if (last && k > 0 && (size_t)k < sizeof line)
            snprintf(line + k, sizeof line - (size_t)k, ", eval %.5g vs fp32 %.5g (gap %+.2f%%)", last->eval_loss,
                     last->ref_eval_loss, 100.0 * (last->eval_loss - last->ref_eval_loss) / last->ref_eval_loss);
#pragma omp critical(study_log)
        fprintf(log, "%s\n", line);
    }
    nvfp4_run_free(r);
    st_shadow_free(own);
    /* finished: its output survives a kill of the study (--resume skips it) */
    if (jo->st == NVFP4_OK && done_write(done_path, jo)) unlink(ckpt);
}

/* MPI: rank 0 receives the output of every job another rank ran. */
static nvfp4_status gather_jobs(const nvfp4_study_dist *d, const size_t *sel, size_t nsel, job_out *jobs,
                                nvfp4_error *err)
{
    nvfp4_status st = NVFP4_OK;
    for (size_t k = 0; k < nsel; k++) {
        int owner = (int)(k % (size_t)d->size);
        if (owner == 0 || (d->rank != 0 && d->rank != owner)) continue;
        job_out *jo = &jobs[sel[k]];
        char *buf = NULL;
        size_t len = 0;
        if (d->rank == owner) {
            if (!job_pack(jo, &buf, &len)) buf = NULL, len = 0;
            if (!d->move_to_root(d->ctx, owner, &buf, &len) && st == NVFP4_OK)
                st = nvfp4_error_set(err, NVFP4_EIO, "study: sending a job's output to rank 0 failed");
        } else {
            if (!d->move_to_root(d->ctx, owner, &buf, &len) || !job_unpack(buf, len, jo)) {
                if (st == NVFP4_OK)
                    st = nvfp4_error_set(err, NVFP4_EIO, "study: receiving job %zu's output from rank %d failed",
                                         sel[k], owner);
            }
        }
        free(buf);
    }
    return st;
}

static void remove_resume_dir(const nvfp4_study_opts *o, size_t njobs)
{
    char path[4096];
    for (size_t j = 0; j < njobs; j++) {
        resume_path(o, j, "done", path, sizeof path);
        unlink(path);
        resume_path(o, j, "ckpt", path, sizeof path);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/.resume", o->out_dir);
    DIR *d = opendir(path);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) { /* the shadow traces */
        size_t n = strlen(e->d_name);
        char f[4096 + 256];
        if (!strncmp(e->d_name, "shadow-", 7) && n > 6 && !strcmp(e->d_name + n - 6, ".trace")) {
            snprintf(f, sizeof f, "%s/%s", path, e->d_name);
            unlink(f);
        }
    }
    if (d) closedir(d);
    rmdir(path);
}

/* What every job of one st_run_jobs call shares. */
typedef struct {
    const nvfp4_study *s;
    const nvfp4_study_opts *o;
    FILE *log;
    const st_jobs *js;
    size_t seeds, steps;
    int threads;
    job_out *jobs;
} job_set;

/* Jobs list[0..n) (job numbers), `threads` at a time, job list[i] reading
 * the shadow of slot[i] (NULL: its own). */
static void run_list(const job_set *js, const size_t *list, shadow_slot *const *slot, size_t n)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(js->threads)
    for (size_t i = 0; i < n; i++) {
        size_t j = list[i];
        run_job(js->s, js->o, js->log, js->js, j / js->seeds, j, js->o->seed_first + (j % js->seeds) + 1, js->steps,
                false, slot[i], &js->jobs[j]);
    }
}

/* A shared shadow's progress line, like a job's (advance_with_progress):
 * at most every 10 s, so that a wave's shadows show they live. */
typedef struct {
    const job_set *js;
    uint64_t seed;
    double t0, last;
} shadow_log;

static void shadow_progress(void *ctx, size_t done, size_t steps)
{
    shadow_log *l = ctx;
    double t = now_s();
    if (t - l->last < 10.0 || done >= steps) return;
    progress_line(l->js->log, l->js->s->name, "fp32-shadow", l->seed, done, steps, (double)done / (t - l->t0));
    l->last = t;
}

/* Where a shared shadow's trace is kept for --resume: out_dir/.resume/
 * shadow-<seed>-<first 16 hex digits of the SHA-256 of its key>.trace (one
 * seed may have shadows of several keys: s4's lengths). */
static void shadow_trace_path(const nvfp4_study_opts *o, const shadow_slot *sl, char *buf, size_t n)
{
    char hex[65];
    nvfp4_sha256_hex(&sl->key, sizeof sl->key, hex);
    snprintf(buf, n, "%s/.resume/shadow-%llu-%.16s.trace", o->out_dir, (unsigned long long)sl->cfg.seed, hex);
}

/* A trace is kept when retraining would cost more than the file: its
 * training took at least this long, or checkpoints go by steps
 * (--checkpoint-every N), the user's sign that the run will be resumed. */
#define SHADOW_KEEP_S 60.0

static void train_shadow(const job_set *js, shadow_slot *sl)
{
    double t0 = now_s();
    shadow_log l = {js, sl->cfg.seed, t0, t0};
    bool show = js->log && !js->o->quiet;
    char trace[4096];
    shadow_trace_path(js->o, sl, trace, sizeof trace);
    if (js->o->resume && access(trace, F_OK) == 0) {
        sl->st = st_shadow_load(trace, &sl->key, &sl->sh, &sl->err);
        if (sl->st == NVFP4_OK && show) {
#pragma omp critical(study_log)
            fprintf(js->log, "[%s] %-14s seed %llu: trace read from %s, shared by %zu jobs\n", js->s->name,
                    "fp32-shadow", (unsigned long long)sl->cfg.seed, trace, sl->users);
        }
        return;
    }
    sl->st = st_shadow_train(&sl->cfg, show ? shadow_progress : NULL, &l, &sl->sh, &sl->err);
    if (sl->st == NVFP4_OK && (now_s() - t0 >= SHADOW_KEEP_S || js->o->checkpoint_every)) {
        nvfp4_error e = {NVFP4_OK, ""};
        /* the trace saves time on resume only: a failed write costs that, not the run */
        if (st_shadow_save(sl->sh, trace, &e) != NVFP4_OK && js->log) {
#pragma omp critical(study_log)
            fprintf(js->log, "[%s] warning: the seed %llu shadow's trace was not kept (%s): --resume would train it "
                             "again\n",
                    js->s->name, (unsigned long long)sl->cfg.seed, e.message);
        }
    }
    if (sl->st == NVFP4_OK && js->log && !js->o->quiet) {
#pragma omp critical(study_log)
        fprintf(js->log, "[%s] %-14s seed %llu: %zu steps in %.1f s, shared by %zu jobs (%.1f MB held)\n",
                js->s->name, "fp32-shadow", (unsigned long long)sl->cfg.seed, sl->cfg.steps, now_s() - t0, sl->users,
                (double)st_shadow_bytes(sl->sh) / 1048576.0);
    }
}

/* Whether the slot's jobs read one shadow: two or more of them, one not
 * finished before, and sharing not turned off. */
static bool slot_shared(const job_set *set, const shadow_slot *sl)
{
    return sl->users >= 2 && sl->needed && !set->o->own_shadows;
}

/* The selected jobs sel[first], sel[first + stride], ... of this process.
 * Those whose shadow another of them shares (same seed, same config but for
 * the recipe and switch steps: st_shadow_key) run in waves of `threads`
 * shadows: the wave's shadows trained side by side, then its jobs, each
 * reading its seed's shadow, then the shadows freed, so that at most
 * `threads` traces are held at a time; the other jobs train their own
 * shadow. The bytes are those of every job with its own shadow. */
static void run_my_jobs(const job_set *set, const size_t *sel, size_t nsel, size_t first, size_t stride)
{
    size_t nmine = nsel > first ? (nsel - first + stride - 1) / stride : 0, nslots = 0;
    size_t *slot_of = calloc(nmine ? nmine : 1, sizeof *slot_of), *list = calloc(nmine ? nmine : 1, sizeof *list);
    shadow_slot *slots = calloc(nmine ? nmine : 1, sizeof *slots), **lslot = calloc(nmine ? nmine : 1, sizeof *lslot);
    bool ok = slot_of && list && slots && lslot;
    for (size_t i = 0; ok && i < nmine; i++) {
        size_t j = sel[first + i * stride], k = 0;
        nvfp4_train_cfg c, key;
        job_cfg(set->o, set->js, j / set->seeds, set->o->seed_first + (j % set->seeds) + 1, set->steps, &c);
        st_shadow_key(&c, &key);
        while (k < nslots && memcmp(&slots[k].key, &key, sizeof key) != 0) k++;
        if (k == nslots) {
            memcpy(&slots[k].cfg, &c, sizeof c);
            memcpy(&slots[k].key, &key, sizeof key);
            nslots++;
        }
        char done[4096];
        resume_path(set->o, j, "done", done, sizeof done);
        slots[k].users++;
        slots[k].needed = slots[k].needed || !set->o->resume || access(done, F_OK) != 0;
        slot_of[i] = k;
    }
    size_t wave = set->threads > 0 ? (size_t)set->threads : 1, w = 0;
    while (ok) { /* the next wave: up to `threads` shared shadows */
        size_t ws[64], nw = 0;
        for (; w < nslots && nw < wave && nw < 64; w++)
            if (slot_shared(set, &slots[w])) ws[nw++] = w;
        if (!nw) break;
#pragma omp parallel for schedule(dynamic, 1) num_threads(set->threads)
        for (size_t i = 0; i < nw; i++) train_shadow(set, &slots[ws[i]]);
        size_t n = 0;
        for (size_t i = 0; i < nmine; i++)
            for (size_t k = 0; k < nw; k++)
                if (slot_of[i] == ws[k]) {
                    list[n] = sel[first + i * stride];
                    lslot[n++] = &slots[ws[k]];
                }
        run_list(set, list, lslot, n);
        for (size_t k = 0; k < nw; k++) {
            st_shadow_free(slots[ws[k]].sh);
            slots[ws[k]].sh = NULL;
        }
    }
    size_t n = 0; /* the jobs with a shadow of their own (all of them if out of memory) */
    for (size_t i = 0; list && lslot && i < nmine; i++)
        if (!ok || !slot_shared(set, &slots[slot_of[i]])) {
            list[n] = sel[first + i * stride];
            lslot[n++] = NULL;
        }
    if (list && lslot) run_list(set, list, lslot, n);
    else /* not even the lists: one job at a time, each with its own shadow */
        for (size_t k = first; k < nsel; k += stride)
            run_job(set->s, set->o, set->log, set->js, sel[k] / set->seeds, sel[k],
                    set->o->seed_first + (sel[k] % set->seeds) + 1, set->steps, false, NULL, &set->jobs[sel[k]]);
    free(slot_of);
    free(list);
    free(slots);
    free(lslot);
}

/* Runs the selected (arm, seed) jobs, `threads` at a time (each job single-
 * threaded inside, or a lone job's two models side by side; under MPI,
 * those of this rank), and writes their rows in
 * job order: the files do not depend on the thread or process count. */
nvfp4_status st_run_jobs(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, const st_jobs *js,
                         nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t njobs = js->narms * seeds;
    const nvfp4_study_dist *d = o->dist && o->dist->size > 1 ? o->dist : NULL;
    job_out *jobs = calloc(njobs, sizeof *jobs);
    size_t *sel = calloc(njobs, sizeof *sel), nsel = 0;
    nvfp4_status setup = NVFP4_OK;
    if (!jobs || !sel) {
        setup = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    } else {
        for (size_t j = 0; j < njobs; j++)
            if (st_job_selected(j, o)) sel[nsel++] = j;
        char rdir[4096];
        snprintf(rdir, sizeof rdir, "%s/.resume", o->out_dir);
        if (mkdir(rdir, 0777) != 0 && access(rdir, W_OK) != 0)
            setup = nvfp4_error_set(err, NVFP4_EIO, "cannot create %s", rdir);
    }
    if (d && d->all_ok && !d->all_ok(d->ctx, setup == NVFP4_OK) && setup == NVFP4_OK)
        setup = nvfp4_error_set(err, NVFP4_EIO, "another MPI rank could not start its jobs (this is rank %d of %d)",
                                d->rank, d->size);
    if (setup != NVFP4_OK) {
        free(jobs);
        free(sel);
        return setup;
    }
    int threads = o->threads > 0 ? o->threads : 1;
    size_t stride = d ? (size_t)d->size : 1, first = d ? (size_t)d->rank : 0;
    size_t nmine = nsel > first ? (nsel - first + stride - 1) / stride : 0;
    /* A lone job with threads to spare steps its quantized model and its
     * FP32 shadow concurrently (train.c), the same bytes. */
    bool pair = nmine == 1 && threads >= 2;
    nvfp4_study_set_threads(1); /* one thread inside each job */
    if (pair) /* outside any parallel region: the pair's team is then the
               * top level one, whose threads libgomp keeps from step to step
               * (a nested team gets fresh threads at every step) */
        run_job(s, o, log, js, sel[first] / seeds, sel[first], o->seed_first + (sel[first] % seeds) + 1, steps, true, NULL,
                &jobs[sel[first]]);
    else {
        job_set set = {s, o, log, js, seeds, steps, threads, jobs};
        run_my_jobs(&set, sel, nsel, first, stride);
    }
    nvfp4_status st = d ? gather_jobs(d, sel, nsel, jobs, err) : NVFP4_OK;
    bool root = !d || d->rank == 0;
    for (size_t k = 0; root && k < nsel && st == NVFP4_OK; k++)
        if (jobs[sel[k]].st != NVFP4_OK) {
            *err = jobs[sel[k]].err;
            st = jobs[sel[k]].st;
        }
    st_file sfr;
    st_file sfl;
    FILE *fr = NULL, *fl = NULL;
    json_t *timing = json_array();
    if (st == NVFP4_OK && root) {
        fr = st_file_open(&sfr, err);
        fl = fr ? st_file_open(&sfl, err) : NULL;
        if (!fr || !fl) st = NVFP4_ENOMEM;
    }
    if (st == NVFP4_OK && root) {
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
    free_jobs(jobs, njobs);
    free(sel);
    if (!root) {
        json_decref(timing);
        return st;
    }
    json_t *extra = json_object();
    json_object_set_new(extra, "timing", timing);
    json_object_set_new(extra, "steps", json_integer((json_int_t)steps));
    json_object_set_new(extra, "seeds", json_integer((json_int_t)seeds));
    json_object_set_new(extra, "threads", json_integer(threads));
    if (o->shard_n > 1) json_object_set_new(extra, "shard", json_pack("[I,I]", (json_int_t)o->shard_i, (json_int_t)o->shard_n));
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, extra, err);
    else json_decref(extra);
    if (st == NVFP4_OK) remove_resume_dir(o, njobs);
    return st;
}

/* ---- a study's own jobs (st_run_row_jobs) --------------------------------------- */
typedef struct {
    st_row_job_fn fn;
    void *ctx;
} row_jobs;

/* Job k's rows into jo->runs (in memory), its status and error beside them. */
static void run_row_job(const row_jobs *rj, size_t k, job_out *jo)
{
    memset(jo, 0, sizeof *jo);
    FILE *f = open_memstream(&jo->runs, &jo->runs_len);
    if (!f) {
        jo->st = nvfp4_error_set(&jo->err, NVFP4_ENOMEM, "out of memory");
        return;
    }
    jo->st = rj->fn(rj->ctx, k, f, &jo->err);
    if (fclose(f) != 0 && jo->st == NVFP4_OK) jo->st = nvfp4_error_set(&jo->err, NVFP4_ENOMEM, "out of memory");
}

nvfp4_status st_run_row_jobs(const nvfp4_study_opts *o, size_t n, st_row_job_fn fn, void *ctx, char **rows,
                             size_t *rows_len, nvfp4_error *err)
{
    *rows = NULL;
    *rows_len = 0;
    const nvfp4_study_dist *d = o->dist && o->dist->size > 1 ? o->dist : NULL;
    job_out *jobs = calloc(n ? n : 1, sizeof *jobs);
    size_t *sel = calloc(n ? n : 1, sizeof *sel), nsel = 0;
    bool mine = jobs && sel;
    /* every rank passes the gate, so that none is left waiting for rows that will not come */
    bool all = !d || !d->all_ok || d->all_ok(d->ctx, mine);
    if (!mine || !all) {
        free(jobs);
        free(sel);
        return !mine ? nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory")
                     : nvfp4_error_set(err, NVFP4_EIO, "another MPI rank could not start its jobs (this is rank %d of %d)",
                                       d->rank, d->size);
    }
    for (size_t k = 0; k < n; k++)
        if (st_job_selected(k, o)) sel[nsel++] = k;
    size_t stride = d ? (size_t)d->size : 1, first = d ? (size_t)d->rank : 0;
    long nmine = nsel > first ? (long)((nsel - first + stride - 1) / stride) : 0;
    row_jobs rj = {fn, ctx};
    nvfp4_study_set_threads(1); /* one thread inside each job: OpenBLAS's bytes depend on its thread count */
#pragma omp parallel for schedule(dynamic, 1) num_threads(o->threads > 0 ? o->threads : 1)
    for (long i = 0; i < nmine; i++) run_row_job(&rj, sel[first + (size_t)i * stride], &jobs[sel[first + (size_t)i * stride]]);
    nvfp4_status st = d ? gather_jobs(d, sel, nsel, jobs, err) : NVFP4_OK;
    FILE *out = st == NVFP4_OK && (!d || d->rank == 0) ? open_memstream(rows, rows_len) : NULL;
    if (st == NVFP4_OK && (!d || d->rank == 0) && !out) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; out && i < nsel && st == NVFP4_OK; i++) {
        job_out *jo = &jobs[sel[i]];
        if (jo->st != NVFP4_OK) {
            *err = jo->err;
            st = jo->st;
        } else if (jo->runs_len) {
            fwrite(jo->runs, 1, jo->runs_len, out);
        }
    }
    if (out && fclose(out) != 0 && st == NVFP4_OK) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (st != NVFP4_OK) {
        free(*rows);
        *rows = NULL;
        *rows_len = 0;
    }
    free_jobs(jobs, n);
    free(sel);
    return st;
}

/* The jobs of a C study: its base config changed by each arm's function. */
typedef struct {
    st_base_fn base;
    const st_arm *arms;
} c_jobs;

static const char *c_arm_name(const void *ctx, size_t a) { return ((const c_jobs *)ctx)->arms[a].name; }

static void c_arm_cfg(const void *ctx, size_t a, size_t steps, bool quick, nvfp4_train_cfg *c)
{
    const c_jobs *cj = ctx;
    const st_arm *arm = &cj->arms[a];
    (void)quick;
    cj->base(c, steps);
    double mult = arm->steps_mult > 0 ? arm->steps_mult : 1.0;
    c->steps = (size_t)llround((double)steps * mult);
    if (arm->apply) arm->apply(c);
}

nvfp4_status st_run_training(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, st_base_fn base,
                             const st_arm *arms, size_t narms, nvfp4_error *err)
{
    c_jobs cj = {base, arms};
    st_jobs js = {narms, c_arm_name, c_arm_cfg, &cj};
    return st_run_jobs(s, o, log, &js, err);
}
