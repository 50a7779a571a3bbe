/*
 * sequential.c - a study run in batches of seeds (`nvfp4 study run
 * --target-ci W`): after each batch the batches so far are merged into the
 * output folder, and the run stops once every statistical finding's 95%
 * interval is narrower than W, or when the seeds reach the cap. Each batch is
 * a run folder of its own (out/batches/seeds-A-B) holding seeds A..B, so the
 * merged rows are those of one run of all the seeds. The rule looks at the
 * intervals' widths only, never at an estimate or a p-value, and the final
 * verdicts divide the 5% level over the looks the plan allows (Bonferroni
 * over looks): docs/studies.md "Sequential runs" states why that bounds the
 * error of stopping early.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/verdict.h"

/* The widest 95% interval of the statistical findings of dir/summary.json
 * (INFINITY when one is unbounded or missing; 0 when there is none), the
 * number of such findings, and the claim of the widest. */
static nvfp4_status widest_interval(const char *dir, double *widest, size_t *nstat, char *claim, size_t nclaim,
                                    nvfp4_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s (line %d)", path, je.text, je.line);
    *widest = 0.0;
    *nstat = 0;
    claim[0] = '\0';
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(root, "findings"), i, f) {
        json_t *ci = json_object_get(json_object_get(f, "stats"), "ci95");
        if (!json_object_get(f, "stats")) continue;
        (*nstat)++;
        json_t *lo = json_array_get(ci, 0), *hi = json_array_get(ci, 1);
        double w = json_is_number(lo) && json_is_number(hi) ? json_number_value(hi) - json_number_value(lo) : INFINITY;
        if (!(w <= *widest)) {
            *widest = w;
            snprintf(claim, nclaim, "%s", json_string_value(json_object_get(f, "claim")));
        }
    }
    json_decref(root);
    return NVFP4_OK;
}

/* summary.json facts of the whole sequential run: the merged folder's
 * timing, steps and threads, the total seeds and the plan. */
static json_t *sequential_extra(const char *dir, size_t seeds, json_t *plan)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *root = json_load_file(path, 0, NULL), *extra = json_object();
    static const char *const keep[] = {"timing", "steps", "threads"};
    for (size_t k = 0; root && k < 3; k++) {
        json_t *v = json_object_get(root, keep[k]);
        if (v) json_object_set(extra, keep[k], v);
    }
    json_decref(root);
    json_object_set_new(extra, "seeds", json_integer((json_int_t)seeds));
    json_object_set_new(extra, "sequential", plan);
    return extra;
}

static nvfp4_status check_plan(const nvfp4_study *s, const nvfp4_study_opts *o, const nvfp4_study_seq *q,
                               size_t *first, size_t *batch, size_t *cap, nvfp4_error *err)
{
    if (!(q->target_ci > 0.0) || !isfinite(q->target_ci))
        return nvfp4_error_set(err, NVFP4_EINVAL, "--target-ci: expected a positive width");
    if ((o->dist && o->dist->size > 1) || o->shard_n > 1 || o->resume)
        return nvfp4_error_set(err, NVFP4_EINVAL, "--target-ci runs its batches in one process: not with MPI, "
                                                  "--shard or --resume");
    *first = o->seeds ? o->seeds : o->quick ? 1 : s->seeds;
    *batch = q->seed_batch ? q->seed_batch : *first;
    *cap = q->max_seeds;
    if (*first < 2)
        return nvfp4_error_set(err, NVFP4_EINVAL, "--target-ci: the first batch needs at least 2 seeds (an interval); "
                                                  "give --seeds");
    if (*cap < *first || *cap > 256)
        return nvfp4_error_set(err, NVFP4_EINVAL, "--max-seeds: expected %zu..256 (at least the first batch), got %zu",
                               *first, *cap);
    return NVFP4_OK;
}

nvfp4_status nvfp4_study_run_sequential(const nvfp4_study *s, const nvfp4_study_opts *o, const nvfp4_study_seq *q,
                                        FILE *log, nvfp4_error *err)
{
    size_t first = 0, batch = 0, cap = 0;
    nvfp4_status st = check_plan(s, o, q, &first, &batch, &cap, err);
    if (st != NVFP4_OK) return st;
    /* the looks the plan allows, fixed before any data: the first batch, then one per batch up to the cap */
    size_t looks = 1 + (cap - first + batch - 1) / batch;
    char(*dirs)[4096] = calloc(looks, sizeof *dirs);
    const char **dp = calloc(looks, sizeof *dp);
    if (!dirs || !dp) {
        free(dirs);
        free(dp);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    size_t n = 0, k = 0, nstat = 0;
    double widest = INFINITY;
    char claim[512] = "";
    while (st == NVFP4_OK && k < looks) {
        size_t size = k ? (batch < cap - n ? batch : cap - n) : first;
        nvfp4_study_opts bo = *o;
        bo.seeds = size;
        bo.seed_first = n;
        snprintf(dirs[k], sizeof dirs[k], "%s/batches/seeds-%zu-%zu", o->out_dir, n + 1, n + size);
        bo.out_dir = dp[k] = dirs[k];
        st = nvfp4_study_run(s, &bo, log, err);
        n += size;
        k++;
        if (st == NVFP4_OK) st = nvfp4_study_merge(dp, k, o->out_dir, err);
        if (st == NVFP4_OK) st = widest_interval(o->out_dir, &widest, &nstat, claim, sizeof claim, err);
        if (st != NVFP4_OK) break;
        if (log && !o->quiet)
            fprintf(log, "[%s] --target-ci %g: after %zu seeds the widest 95%% interval is %g (%s)\n",
                    nvfp4_study_name(s), q->target_ci, n, widest, nstat ? claim : "no statistical finding");
        if (widest < q->target_ci || n >= cap) break;
    }
    free(dirs);
    free(dp);
    if (st != NVFP4_OK) return st;
    json_t *plan = json_object();
    json_object_set_new(plan, "target_ci", json_real(q->target_ci));
    json_object_set_new(plan, "first_seeds", json_integer((json_int_t)first));
    json_object_set_new(plan, "seed_batch", json_integer((json_int_t)batch));
    json_object_set_new(plan, "max_seeds", json_integer((json_int_t)cap));
    json_object_set_new(plan, "looks_planned", json_integer((json_int_t)looks));
    json_object_set_new(plan, "looks", json_integer((json_int_t)k));
    json_object_set_new(plan, "stopped", json_string(widest < q->target_ci ? "every interval narrower than target_ci"
                                                                           : "max_seeds reached"));
    json_object_set_new(plan, "widest_ci", isfinite(widest) ? json_real(widest) : json_string("inf"));
    return st_summarize(s, o->out_dir, sequential_extra(o->out_dir, n, plan), err);
}
