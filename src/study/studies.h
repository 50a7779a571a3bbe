/* studies.h - the study registry and the output tables shared by
 * studies.c, s0.c and output.c (not public). */
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
} st_row;

typedef struct {
    char arms[ST_MAX_ARMS][48];
    size_t narms;
    st_row *rows;
    size_t n, cap;
} st_table;

typedef struct {
    size_t seeds, diverged, final_step;
    uint64_t final_tokens;
    double gap_mean, gap_ci, eval_mean, eval_ci, ref_eval_mean, ref_eval_ci, excess_mean, excess_ci;
} st_arm_summary;

struct nvfp4_study {
    const char *name;
    const char *claim;    /* one line, with the citation */
    size_t seeds, steps;  /* defaults */
    nvfp4_status (*run)(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err);
    /* study-specific findings from the per-arm summaries (may be NULL) */
    void (*findings)(const st_table *t, const st_arm_summary *a, json_t *out);
};

extern const char *const ST_RUNS_HEADER;
extern const char *const ST_LAYERS_HEADER;

void st_write_run_rows(FILE *f, const char *arm, uint64_t seed, const st_row *rows, size_t n);
nvfp4_status st_read_runs(const char *dir, st_table *t, nvfp4_error *err);
void st_arm_stats(const st_table *t, size_t arm, st_arm_summary *s);
nvfp4_status st_aggregate_and_plot(const char *dir, const char *title, bool *skipped, nvfp4_error *err);
/* summary.json from the CSVs in dir (+ plots); extra: study-run facts (may be NULL, stolen) */
nvfp4_status st_summarize(const nvfp4_study *s, const char *dir, json_t *extra, nvfp4_error *err);

/* S0 (s0.c) */
nvfp4_status st_s0_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err);
nvfp4_status st_s0_plots(const char *dir, nvfp4_error *err);
size_t st_s0_file_count(void);
const char *st_s0_file(size_t i);
/* fills the S0 findings from its CSVs (called by st_summarize) */
void st_s0_findings(const char *dir, json_t *out);

/* one finding: claim, citation, measured text, verdict "reproduced" /
 * "not reproduced" / "inconclusive" */
void st_finding(json_t *arr, const char *claim, const char *source, const char *measured, const char *verdict);

#endif
