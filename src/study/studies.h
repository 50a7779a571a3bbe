/* studies.h - what a built-in study is, and what the study files
 * (src/study/s*.c, one study each), the registry, the training-study runner,
 * the summarizer and the output code share (not public).
 *
 * A study is one file src/study/<stem>.c with <stem> matching s[0-9]* that
 * defines `const nvfp4_study st_study_<stem>`; mk/study.mk lists those files
 * into build/gen/study_list.h, so the registry (registry.c) and the generic
 * output code (output.c, summary.c) name no study. Everything a study adds
 * beyond runs.csv / layers.csv (findings from its own files, its plots, the
 * files a merge concatenates) it declares in its descriptor.
 */
#ifndef NVFP4_STUDIES_H
#define NVFP4_STUDIES_H

#include <jansson.h>
#include <stdio.h>

#include "nvfp4/study.h"

#define ST_MAX_ARMS 32

typedef struct {
    size_t arm, step;
    uint64_t seed, tokens;
    double lr, loss, ref_loss, eval_loss, ref_eval_loss, entropy, drift;
    int diverged;
    /* a held-out evaluation (task.c, heldout_share): both losses on this
     * step's share of the final metric's held-out set; written as nan when
     * false. In a final row (st_final_row): how many it averages. */
    bool has_heldout;
    double heldout_loss, ref_heldout_loss;
    size_t heldout_n;
    /* the gradient probe (probe.c; nan when the step was not probed) and
     * the tokens of each of its batches (0: not probed, or a runs.csv
     * written before the column: the step's batch) */
    double grad_noise, grad_qerr;
    uint64_t probe_tokens;
} st_row;

typedef struct {
    char arms[ST_MAX_ARMS][48];
    size_t narms;
    st_row *rows;
    size_t n, cap;
    st_row *fin; /* one final row per (arm, seed), in order of appearance (st_read_runs) */
    size_t nfin;
} st_table;

typedef struct {
    size_t seeds, diverged, final_step;
    size_t final_evals; /* held-out evaluations behind every seed's final metric (fewest; 0: the last row's) */
    uint64_t final_tokens;
    double gap_mean, gap_ci, eval_mean, eval_ci, ref_eval_mean, ref_eval_ci, excess_mean, excess_ci;
} st_arm_summary;

struct nvfp4_study {
    const char *name;
    const char *claim;    /* one line, with the citation */
    const char *wall;     /* the default run's measured wall time on 2 cores (docs/studies.md, "Default wall times") */
    size_t seeds, steps;  /* defaults */
    nvfp4_status (*run)(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err);
    /* findings from the per-arm summaries of runs.csv (t->narms may be 0)
     * and from the study's own files in dir (may be NULL) */
    void (*findings)(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out);
    /* PNGs from the study's own files in dir, run when gnuplot exists (may be NULL) */
    nvfp4_status (*plots)(const char *dir, nvfp4_error *err);
    /* the study's own output files (NULL-terminated; may be NULL): a merge
     * concatenates them as they are, keeping the first shard's header */
    const char *const *files;
    size_t quick_steps;   /* --quick: steps (0: 4) */
    /* a study whose arms are a shipped config (studies/<config>.json, built
     * in): run is st_run_config_study; NULL otherwise */
    const char *config;
    /* a study loaded from a config file (nvfp4_study_load_config; owned) */
    struct st_config *cfg;
    bool serial;          /* not made of (arm, seed) jobs: under MPI only rank 0 runs it */
};

/* The config a study from a file leaves in its output folder (configstudy.c). */
#define ST_CONFIG_FILE "config.json"

/* ---- runs.csv / layers.csv (output.c) ------------------------------------------ */
bool st_have_gnuplot(void);
/* mean and half-width of the 95% t confidence interval */
void st_mean_ci(const double *x, size_t n, double *mean, double *ci);
extern const char *const ST_RUNS_HEADER;
/* runs.csv's header before probe_tokens (read, never written) */
extern const char *const ST_RUNS_HEADER_V1;
extern const char *const ST_LAYERS_HEADER;

void st_write_run_rows(FILE *f, const char *arm, uint64_t seed, const st_row *rows, size_t n);
nvfp4_status st_read_runs(const char *dir, st_table *t, nvfp4_error *err);
void st_table_free(st_table *t);
/* The row the summary and the verdicts read for (arm, seed): its last row,
 * with eval_loss and ref_eval_loss the means of its held-out evaluations
 * when it has them and did not diverge (heldout_n says how many); NULL if
 * the table has no such run. */
const st_row *st_final_row(const st_table *t, size_t arm, uint64_t seed);
void st_arm_stats(const st_table *t, size_t arm, st_arm_summary *s);
/* The index of the named arm in t, -1 when absent. */
ssize_t st_arm_index(const st_table *t, const char *name);
/* Per-seed final rows of the named arms, aligned by seed: rows[s*narms + k]
 * is arm k's final row of the s-th seed that all arms have. Returns the
 * number of seeds (at most max). */
size_t st_paired_finals(const st_table *t, const char *const *arms, size_t narms, const st_row **rows, size_t max);
/* Final eval-loss gap to the FP32 shadow, in % of the shadow. */
double st_row_gap(const st_row *r);
/* aggregates and plots of a study output folder (s: its study, may be NULL) */
nvfp4_status st_aggregate_and_plot(const char *dir, const nvfp4_study *s, const char *title, bool *skipped,
                                   nvfp4_error *err);
/* writes script as dir/name and runs gnuplot on it in dir */
nvfp4_status st_gnuplot(const char *dir, const char *name, const char *script, nvfp4_error *err);
/* ttm.dat and ttm.png: the final excess loss (mean, 95% t interval over
 * seeds) of the MXFP4 arms names[1..4] at 1, 1.25, 1.36 and 1.5x the tokens
 * against NVFP4's (names[0]) as the target line, and the published factor */
nvfp4_status st_plot_tokens_to_match(const char *dir, const char *const names[5], double published,
                                     nvfp4_error *err);

/* ---- summary.json and findings (summary.c) ---------------------------------------- */
/* summary.json from the CSVs in dir (+ plots); extra: study-run facts (may be NULL, stolen) */
nvfp4_status st_summarize(const nvfp4_study *s, const char *dir, json_t *extra, nvfp4_error *err);
/* one finding: claim, citation, measured text, verdict (a fixed result; the
 * statistical findings go through verdict.h) */
void st_finding(json_t *arr, const char *claim, const char *source, const char *measured, const char *verdict);
/* the summary of the named arm, NULL when absent or without seeds */
const st_arm_summary *st_arm_sum(const st_table *t, const st_arm_summary *a, const char *name);
/* Paired difference over seeds of the final eval-loss gaps of two arms (in %
 * of the FP32 shadow): mean and 95% CI half-width of gap(a) - gap(b). */
bool st_paired_gap_diff(const st_table *t, const char *a, const char *b, double *mean, double *ci);
/* A finding that arm `worse` has the larger gap (paired t over seeds; the
 * verdict by the rules of verdict.h). published: the published size of
 * gap(worse) - gap(better) in points (NAN: the source gives a direction). */
void st_finding_diff(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                     const char *better, double published);
void st_finding_paired(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                       const char *better); /* st_finding_diff without a published size */
/* A finding that arm recovers a fraction of base's gap: (mean gap(base) -
 * mean gap(arm)) / mean gap(base), st_gap_fraction_est; published: the
 * published fraction; ceiling 1 (arm at the FP32 shadow). */
void st_finding_recovered(const st_table *t, json_t *out, const char *claim, const char *source, const char *base,
                          const char *arm, double published);
/* A finding that arm `worse` trails `better` by a published fraction of the
 * same run's NVFP4 gap (scale-free): (mean gap(worse) - mean gap(better)) /
 * mean gap(nvfp4), nvfp4 one of the two arms; ceiling 1 when nvfp4 is `worse`. */
void st_finding_nvfp4_fraction(const st_table *t, json_t *out, const char *claim, const char *source,
                               const char *worse, const char *better, const char *nvfp4, double published);

/* ---- the component ablations of NVIDIA's recipe (s8_ablate.c) ------------------------- */
/* s8-ablate's findings, each read from the arms it names where the run has
 * them (paper, no-2d, no-rht, no-sr, no-bf16, fp8, bf16, wgrad-only; a
 * finding whose arms are absent is left out): s8-ablate and s8-regime. */
void st_s8_ablation_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out);
/* The three component ablations (no-2d, no-rht, no-sr) against the arm
 * `base`, on the loss and on the gradient error: s8-ablate's and
 * s8-regime's against "paper", s8-all-nvfp4's against "all-nvfp4". */
void st_s8_component_findings(const st_table *t, json_t *out, const char *base);
/* Quantizing the paper's BF16 blocks raises the loss: arm `quantized` (those
 * blocks NVFP4) against arm `paper` (the paper's rule). */
void st_s8_bf16_blocks_finding(const st_table *t, json_t *out, const char *quantized, const char *paper);

/* ---- the gradient probe's columns (gradnoise.c) ---------------------------------------- */
/* summary.json "noise_to_quant": per arm with probed rows, the mean over
 * seeds (95% t half-width) of grad_noise and grad_qerr at each seed's last
 * probed step, noise_to_qerr, the ratio of those means, the step's tokens,
 * and from the means the noise scale and the tokens per step at which the
 * noise would equal the error (st_noise_scale_tokens, st_tokens_for_parity). */
void st_gradnoise_summary(const st_table *t, json_t *root);
/* B r^2/(2 - r^2): the gradient noise scale in tokens from the probe's noise
 * r at a batch of `tokens`; NAN for r^2 >= 2. */
double st_noise_scale_tokens(double noise, double tokens);
/* 2 B_noise/(e^2 (1 + B_noise/B)): the batch at which the noise equals the
 * error e measured at a batch of B tokens, the error's absolute size held
 * fixed; NAN for e = 0 or an undefined noise scale or batch. */
double st_tokens_for_parity(double noise_scale, double qerr, double tokens);
/* A finding that arm `worse` has the larger gradient error: per seed, the
 * mean of grad_qerr over its probed steps; paired t of worse - better over
 * the seeds both have (statistic "gradient error difference"). */
void st_finding_qerr(const st_table *t, json_t *out, const char *claim, const char *source, const char *worse,
                     const char *better);

/* ---- training studies (runner.c) --------------------------------------------------- */
/* The FP32 shadow diverged by the logged rows (runner.c): its last losses
 * are not finite or exceed factor times its first (the quantized model's
 * rule, nvfp4_train_cfg.diverge_factor). rows must be contiguous. */
bool st_shadow_diverged(const nvfp4_log_row *rows, size_t n, double factor);
/* One arm: a config change against the study's base config. */
typedef struct {
    const char *name;
    void (*apply)(nvfp4_train_cfg *c);
    double steps_mult; /* 0 means 1 */
} st_arm;

typedef void (*st_base_fn)(nvfp4_train_cfg *c, size_t steps);

/* The jobs of a training study: narms arms, each with a job config from
 * cfg (the seed, steps multiplier and log_every are set by the runner when
 * set_steps is false). */
typedef struct {
    size_t narms;
    const char *(*arm_name)(const void *ctx, size_t a);
    /* the config of arm a at the study's step count `steps` (before the arm's
     * multiplier) with c->steps set to the arm's steps */
    void (*cfg)(const void *ctx, size_t a, size_t steps, bool quick, nvfp4_train_cfg *c);
    const void *ctx;
} st_jobs;
nvfp4_status st_run_jobs(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, const st_jobs *jobs,
                         nvfp4_error *err);

/* ---- study configs (config.c) -------------------------------------------------------- */
typedef struct st_config st_config;
/* Parses and checks a study config (file names it in errors); NULL on error. */
st_config *st_config_parse(const char *text, size_t len, const char *file, nvfp4_error *err);
void st_config_free(st_config *sc);
/* Writes the config as JSON to dir/name (atomically). */
nvfp4_status st_config_write(const st_config *sc, const char *dir, const char *name, nvfp4_error *err);
/* The config's JSON with sorted keys, compact (its fingerprint's content); free() it. */
char *st_config_canonical(const st_config *sc);
const char *st_config_name(const st_config *sc);
const char *st_config_claim(const st_config *sc);
size_t st_config_narms(const st_config *sc);
size_t st_config_seeds(const st_config *sc);
size_t st_config_steps(const st_config *sc);
size_t st_config_quick_steps(const st_config *sc);
const char *st_config_arm_name(const st_config *sc, size_t a);
void st_config_job_cfg(const st_config *sc, size_t a, size_t steps, bool quick, nvfp4_train_cfg *c);
/* The run function of a config study (its .config built in, or its .cfg). */
nvfp4_status st_run_config_study(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err);
/* The text of the built-in config `name` (studies/<name>.json), NULL if none. */
const char *st_builtin_config(const char *name);

/* A study's own jobs, not (arm, seed) training runs (s5's seeds): job k
 * writes its rows to `rows`. st_run_row_jobs runs the jobs of this shard
 * and MPI rank `threads` at a time, one thread inside each, carries the
 * other ranks' rows to rank 0, and there (or in a lone process) returns
 * every job's rows in job order in *rows (malloc'd, *rows_len bytes): the
 * same bytes at any thread or process count. Other ranks get none. The
 * first failed job's error is returned (on rank 0). */
typedef nvfp4_status (*st_row_job_fn)(void *ctx, size_t k, FILE *rows, nvfp4_error *err);
nvfp4_status st_run_row_jobs(const nvfp4_study_opts *o, size_t n, st_row_job_fn fn, void *ctx, char **rows,
                             size_t *rows_len, nvfp4_error *err);
/* Whether job j belongs to this shard (--shard i/n). */
bool st_job_selected(size_t j, const nvfp4_study_opts *o);
/* Runs every (arm, seed) job of this shard with the FP32 shadow, writes
 * runs.csv and layers.csv (the same bytes at any thread count) and the
 * summary. */
nvfp4_status st_run_training(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, st_base_fn base,
                             const st_arm *arms, size_t narms, nvfp4_error *err);

/* The tiny LM on the order-2 Markov source that every S3 study trains (tinylm.c). */
void st_tinylm_base(nvfp4_train_cfg *c, size_t steps);
/* The GPT studies' base configs (gptbase.c): the default GPT
 * (nvfp4_train_cfg_gpt) on the fortunes text, and its CI-sized --quick
 * variant (d_model 32, 32 tokens x 4 sequences). */
void st_gpt_base(nvfp4_train_cfg *c, size_t steps);
void st_gpt_quick_base(nvfp4_train_cfg *c, size_t steps);
/* The held-out tokens of every GPT --quick run, built in or configured (a
 * config's "quick" block may set its own): the default's 102,400 made the
 * evaluation most of a quick run. */
#define ST_QUICK_HELDOUT_TOKENS 4096

#endif
