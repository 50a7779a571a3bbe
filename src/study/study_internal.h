/* study_internal.h - what the files of src/study/ share (not public). */
#ifndef NVFP4_STUDY_INTERNAL_H
#define NVFP4_STUDY_INTERNAL_H

#include <stdio.h>

#include "nvfp4/study.h"

/* Dirichlet(alpha) rows keyed by seed (dirichlet.c). */
void st_dirichlet_rows(uint64_t seed, size_t rows, size_t k, double alpha, double *out);

/* Output helpers (output.c). */
bool st_have_gnuplot(void);
/* mean and half-width of the 95% t confidence interval */
void st_mean_ci(const double *x, size_t n, double *mean, double *ci);

/* ---- fingerprints, locks and lab-file reading (fingerprint.c) ------------ */
#include <jansson.h>
#include "study/labfile.h"
#define ST_LOCK_FILE ".lock"
/* The run's fingerprint: study, config_sha256, steps, seeds, quick, version
 * and, for --shard i/n with n > 1, shard [i, n] (o: steps and seeds as run). */
json_t *st_fingerprint(const nvfp4_study *s, const nvfp4_study_opts *o);
/* false when a and b agree (on the shard too when with_shard); otherwise
 * true with why = "--steps 4, not 3" (a's value first). */
bool st_fingerprint_differs(const json_t *a, const json_t *b, bool with_shard, char *why, size_t n);
/* Adds "fingerprint" and "files" (bytes and sha256 of each CSV) to
 * dir/summary.json. */
nvfp4_status st_stamp_summary(const char *dir, const nvfp4_study *s, json_t *fp, nvfp4_error *err);
/* --resume: refuses a .resume of another run; a fresh run clears it. Then
 * records fp in out_dir/.resume/fingerprint.json. */
nvfp4_status st_resume_begin(const nvfp4_study_opts *o, const json_t *fp, nvfp4_error *err);
nvfp4_status st_resume_check(const nvfp4_study_opts *o, const json_t *fp, nvfp4_error *err);
void st_resume_clear(const char *out_dir);
/* nvfp4_study_run's body: lock, resume check, s->run, stamp (rank 0 locks,
 * records and stamps). */
nvfp4_status st_run_fingerprinted(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err);
/* flock on dir/.lock (released by the kernel when the process ends): the
 * descriptor, or -1 with err set when another process holds it. */
int st_lock_dir(const char *dir, nvfp4_error *err);
void st_unlock_dir(const char *dir, int fd);

/* The FP32 shadow diverged by the logged rows (runner.c): its last losses
 * are not finite or exceed factor times its first (the quantized model's
 * rule, nvfp4_train_cfg.diverge_factor). rows must be contiguous. */
bool st_shadow_diverged(const nvfp4_log_row *rows, size_t n, double factor);
#endif
