/* fingerprint.h - a study run's fingerprint, its folder lock and --resume
 * (fingerprint.c). Not public. */
#ifndef NVFP4_STUDY_FINGERPRINT_H
#define NVFP4_STUDY_FINGERPRINT_H

#include <jansson.h>
#include <stdio.h>

#include "nvfp4/study.h"

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

#endif
