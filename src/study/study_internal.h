/* study_internal.h - what the files of src/study/ share (not public). */
#ifndef NVFP4_STUDY_INTERNAL_H
#define NVFP4_STUDY_INTERNAL_H

#include <stdio.h>

#include "nvfp4/study.h"

nvfp4_block sq_block_resolved(const nvfp4_sq_cfg *c);
nvfp4_sq_scale sq_scale_resolved(const nvfp4_sq_cfg *c);
const char *sq_block_name(nvfp4_block b);
/* The operand config of a high-precision linear under recipe r (r->hp). */
void st_sq_cfg_hp(const nvfp4_recipe_cfg *r, nvfp4_sq_cfg *c);
/* The config each GEMM operand of linear l (nvfp4_model_layer_name's order)
 * runs with at training step `step`, in every model (MLP, tiny LM, GPT):
 * FP32 for the FP32 shadow; otherwise nvfp4_recipe_layer_cfg's, with the
 * high-precision config (r->hp) for high-precision layers and for the passes
 * past a switch step (switch_fwd_step: Fprop; switch_bwd_step: Dgrad, Wgrad). */
void st_lin_cfg(const nvfp4_train_cfg *tc, bool shadow, size_t l, size_t step, nvfp4_sq_cfg q[3][2]);
/* The GPT blocks the NVFP4 paper's rule keeps in BF16 for a model of
 * n_blocks blocks (its first 2 and last 8 of 62, scaled; docs/studies.md,
 * "BF16 blocks"): *first leading and *last trailing blocks. */
void st_paper_bf16_blocks(size_t n_blocks, size_t *first, size_t *last);
uint64_t sq_derive(uint64_t seed, uint32_t a, uint32_t b, uint32_t c, uint32_t tag);

/* nvfp4_sq_fakequant of an operand [rows x k] handed in as its transpose
 * xt ([k x rows], e.g. dY for Wgrad's dY^T): the same bytes, without a
 * transposed copy where the library's columnwise output serves. */
nvfp4_status st_fakequant_t(const nvfp4_sq_cfg *c, const float *xt, size_t k, size_t rows, const nvfp4_sq_key *key,
                            float *out, nvfp4_sq_stats *stats, nvfp4_error *err);


void st_dirichlet_rows(uint64_t seed, size_t rows, size_t k, double alpha, double *out);

/* Output helpers (output.c). */
bool st_mkdir_p(const char *dir, nvfp4_error *err);
/* One line of f without its line ending; false at the end of the file. */
bool st_read_line(FILE *f, char *buf, size_t n);
/* A study file composed in memory (st_file_open gives its stream), then
 * written to dir/name by nvfp4_file_write_atomic (st_file_commit) or
 * dropped (st_file_discard); either one closes the stream. */
typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} st_file;
FILE *st_file_open(st_file *sf, nvfp4_error *err);
nvfp4_status st_file_commit(st_file *sf, const char *dir, const char *name, nvfp4_error *err);
void st_file_discard(st_file *sf);
bool st_have_gnuplot(void);
/* mean and half-width of the 95% t confidence interval */
void st_mean_ci(const double *x, size_t n, double *mean, double *ci);

/* ---- fingerprints, locks and lab-file reading (fingerprint.c) ------------ */
#include <jansson.h>
#define ST_MAX_LAB_FILE ((size_t)1 << 30)
#define ST_LOCK_FILE ".lock"
/* A lab file (CSV, JSON, .done) read whole as a stream; a FIFO, a device or
 * a folder is refused without waiting on it. Free *buf after fclose. NULL
 * with *absent set (when absent is given) when the file does not exist. */
FILE *st_open_lab_file(const char *path, char **buf, bool *absent, nvfp4_error *err);
json_t *st_load_lab_json(const char *path, bool *absent, nvfp4_error *err);
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
