/*
 * merge.c - the commands on finished run folders: `study plot DIR`
 * (aggregates and plots again from runs.csv) and `study merge` (the runs of
 * shard folders concatenated into one folder, then summarized). The only
 * file of the lab's output side that looks a study up in the registry.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "study/study_internal.h"
#include "study/studies.h"

static nvfp4_status read_study_name(const char *dir, char *name, size_t n, nvfp4_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    const char *s = j ? json_string_value(json_object_get(j, "study")) : NULL;
    if (!s) {
        json_decref(j);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: missing or not a study summary (%s)", path, je.text);
    }
    snprintf(name, n, "%s", s);
    json_decref(j);
    return NVFP4_OK;
}

/* The study of a run folder: a built-in one by name, or the one its
 * config.json defines (a study run from a file; *owned is then set, to be
 * freed with nvfp4_study_free). NULL, and *owned NULL, when neither. */
static nvfp4_status study_of(const char *dir, const char *name, const nvfp4_study **st, nvfp4_study **owned,
                             nvfp4_error *err)
{
    *owned = NULL;
    *st = nvfp4_study_find(name);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, ST_CONFIG_FILE);
    if (*st || access(path, F_OK) != 0) return NVFP4_OK;
    nvfp4_status s = nvfp4_study_load_config(path, owned, err);
    if (s != NVFP4_OK) return s;
    if (strcmp((*owned)->name, name)) {
        s = nvfp4_error_set(err, NVFP4_EFORMAT, "%s defines study %s, but the folder's summary.json holds %s", path,
                            (*owned)->name, name);
        nvfp4_study_free(*owned);
        *owned = NULL;
        return s;
    }
    *st = *owned;
    return NVFP4_OK;
}

nvfp4_status nvfp4_study_plot(const char *dir, bool *skipped, nvfp4_error *err)
{
    char name[128];
    nvfp4_status s = read_study_name(dir, name, sizeof name, err);
    if (s != NVFP4_OK) return s;
    const nvfp4_study *st;
    nvfp4_study *owned;
    s = study_of(dir, name, &st, &owned, err);
    if (s == NVFP4_OK) s = st_aggregate_and_plot(dir, st, name, skipped, err);
    nvfp4_study_free(owned);
    return s;
}

/* ---- merge ------------------------------------------------------------------- */
static nvfp4_status concat_csv(const char *const *dirs, size_t n, const char *out, const char *name,
                               const char *header, nvfp4_error *err)
{
    st_file sf;
    char path[4096], line[4096];
    FILE *f = NULL;
    for (size_t d = 0; d < n; d++) {
        snprintf(path, sizeof path, "%s/%s", dirs[d], name);
        FILE *in = fopen(path, "r");
        if (!in) continue;
        if (!f) {
            f = st_file_open(&sf, err);
            if (!f) {
                fclose(in);
                return NVFP4_ENOMEM;
            }
            if (header) fprintf(f, "%s\n", header);
        }
        bool first = true;
        while (st_read_line(in, line, sizeof line)) {
            if (first) {
                first = false;
                if (header && strcmp(line, header) != 0) {
                    fclose(in);
                    st_file_discard(&sf);
                    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header differs from the other shards", path);
                }
                if (header) continue;
                if (d) continue; /* headerless-format files: keep the first header only */
            }
            fprintf(f, "%s\n", line);
        }
        fclose(in);
    }
    return f ? st_file_commit(&sf, out, name, err) : NVFP4_OK;
}

/* The job blocks of a shard's CSV (runs of lines with the same "arm,seed"
 * prefix), after its header: the text of each, in the shard's order. */
typedef struct {
    char **text;
    size_t n;
} blocks;

static void blocks_free(blocks *b)
{
    for (size_t i = 0; i < b->n; i++) free(b->text[i]);
    free(b->text);
}

static bool read_blocks(const char *path, blocks *b)
{
    FILE *in = fopen(path, "r");
    memset(b, 0, sizeof *b);
    if (!in) return false;
    char line[4096], key[160] = "";
    FILE *cur = NULL;
    size_t len, cap = 0;
    bool first = true, ok = true;
    while (ok && st_read_line(in, line, sizeof line)) {
        if (first) {
            first = false;
            continue;
        }
        const char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        size_t kl = c2 ? (size_t)(c2 - line) : strlen(line);
        if (!cur || kl >= sizeof key || strncmp(key, line, kl) || key[kl]) {
            if (cur) fclose(cur);
            if (b->n == cap) {
                cap = cap ? 2 * cap : 16;
                char **t = realloc(b->text, cap * sizeof *t);
                if (!t) {
                    ok = false;
                    cur = NULL;
                    break;
                }
                b->text = t;
            }
            b->text[b->n] = NULL;
            cur = open_memstream(&b->text[b->n], &len);
            b->n++;
            snprintf(key, sizeof key, "%.*s", (int)(kl < sizeof key ? kl : sizeof key - 1), line);
            if (!cur) ok = false;
        }
        if (cur) fprintf(cur, "%s\n", line);
    }
    if (cur) fclose(cur);
    fclose(in);
    return ok;
}

/* The shard folders of one sharded run, in shard order (--shard i/n with
 * each i once): order[i] is the folder of shard i; false when they are not. */
static bool shard_order(const char *const *dirs, size_t n, json_t **sums, size_t *order)
{
    for (size_t i = 0; i < n; i++) order[i] = SIZE_MAX;
    for (size_t d = 0; d < n; d++) {
        json_t *sh = json_object_get(sums[d], "shard");
        json_int_t i = json_integer_value(json_array_get(sh, 0)), m = json_integer_value(json_array_get(sh, 1));
        (void)dirs;
        if (!json_is_array(sh) || m != (json_int_t)n || i < 0 || i >= m || order[i] != SIZE_MAX) return false;
        order[i] = d;
    }
    return true;
}

/* name in the merged folder: the shards' job blocks round-robin (job j was
 * the (j / n)-th job of shard j % n), so the file is the unsharded run's. */
static nvfp4_status interleave_csv(const char *const *dirs, size_t n, const size_t *order, const char *out,
                                   const char *name, const char *header, nvfp4_error *err)
{
    blocks *b = calloc(n, sizeof *b);
    if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    char path[4096];
    nvfp4_status s = NVFP4_OK;
    for (size_t i = 0; i < n && s == NVFP4_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[order[i]], name);
        if (!read_blocks(path, &b[i])) s = nvfp4_error_set(err, NVFP4_EIO, "merge: cannot read %s", path);
    }
    st_file sf;
    FILE *f = s == NVFP4_OK ? st_file_open(&sf, err) : NULL;
    if (s == NVFP4_OK && !f) s = NVFP4_ENOMEM;
    if (f) {
        fprintf(f, "%s\n", header);
        for (size_t k = 0, left = 1; left; k++) {
            left = 0;
            for (size_t i = 0; i < n; i++)
                if (k < b[i].n) {
                    fputs(b[i].text[k], f);
                    left = 1;
                }
        }
        s = st_file_commit(&sf, out, name, err);
    }
    for (size_t i = 0; i < n; i++) blocks_free(&b[i]);
    free(b);
    return s;
}

/* summary.json facts of the run (timing in job order, steps, seeds, threads) */
static json_t *merged_extra(json_t **sums, size_t n, const size_t *order)
{
    json_t *extra = json_object(), *timing = json_array();
    static const char *const keep[] = {"steps", "seeds", "threads"};
    if (order) {
        for (size_t k = 0, any = 1; any; k++) {
            any = 0;
            for (size_t i = 0; i < n; i++) {
                json_t *t = json_array_get(json_object_get(sums[order[i]], "timing"), k);
                if (t) json_array_append(timing, t), any = 1;
            }
        }
    } else {
        for (size_t i = 0; i < n; i++)
            if (json_is_array(json_object_get(sums[i], "timing")))
                json_array_extend(timing, json_object_get(sums[i], "timing"));
    }
    json_object_set_new(extra, "timing", timing);
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(sums[0], keep[i]);
        if (v) json_object_set(extra, keep[i], v);
    }
    return extra;
}

static nvfp4_status merge_study(const nvfp4_study *st, const char *const *dirs, size_t n, const char *out_dir,
                                nvfp4_error *err);

nvfp4_status nvfp4_study_merge(const char *const *dirs, size_t n, const char *out_dir, nvfp4_error *err)
{
    if (!n) return nvfp4_error_set(err, NVFP4_EINVAL, "merge: no input folders");
    char name[128];
    nvfp4_status s = read_study_name(dirs[0], name, sizeof name, err);
    for (size_t i = 1; i < n && s == NVFP4_OK; i++) {
        char other[128];
        s = read_study_name(dirs[i], other, sizeof other, err);
        if (s == NVFP4_OK && strcmp(other, name))
            s = nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s holds study %s, %s holds %s", dirs[0], name, dirs[i],
                                other);
    }
    if (s != NVFP4_OK) return s;
    const nvfp4_study *st;
    nvfp4_study *owned;
    s = study_of(dirs[0], name, &st, &owned, err);
    if (s != NVFP4_OK) return s;
    if (!st)
        return nvfp4_error_set(err, NVFP4_EINVAL, "merge: unknown study %s (not built in, and %s has no %s)", name,
                               dirs[0], ST_CONFIG_FILE);
    s = merge_study(st, dirs, n, out_dir, err);
    if (s == NVFP4_OK && owned) s = st_config_write(owned->cfg, out_dir, ST_CONFIG_FILE, err);
    nvfp4_study_free(owned);
    return s;
}

/* Merges the folders of study st into out_dir (nvfp4_study_merge). */
static nvfp4_status merge_study(const nvfp4_study *st, const char *const *dirs, size_t n, const char *out_dir,
                                nvfp4_error *err)
{
    nvfp4_status s = NVFP4_OK;
    if (!st_mkdir_p(out_dir, err)) return NVFP4_EIO;
    json_t **sums = calloc(n, sizeof *sums);
    size_t *order = calloc(n, sizeof *order);
    if (!sums || !order) {
        free(sums);
        free(order);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.json", dirs[i]);
        sums[i] = json_load_file(path, 0, NULL);
    }
    /* all shards of one sharded run: the jobs in the unsharded run's order;
     * otherwise the folders' rows one after the other */
    bool ordered = !st->serial && shard_order(dirs, n, sums, order);
    char path[4096];
    snprintf(path, sizeof path, "%s/layers.csv", dirs[0]);
    bool layers = access(path, R_OK) == 0;
    if (ordered) {
        s = interleave_csv(dirs, n, order, out_dir, "runs.csv", ST_RUNS_HEADER, err);
        if (s == NVFP4_OK && layers) s = interleave_csv(dirs, n, order, out_dir, "layers.csv", ST_LAYERS_HEADER, err);
    } else {
        s = concat_csv(dirs, n, out_dir, "runs.csv", ST_RUNS_HEADER, err);
        if (s == NVFP4_OK) s = concat_csv(dirs, n, out_dir, "layers.csv", ST_LAYERS_HEADER, err);
    }
    for (const char *const *f = st->files; s == NVFP4_OK && f && *f; f++)
        s = concat_csv(dirs, n, out_dir, *f, NULL, err);
    json_t *extra = sums[0] ? merged_extra(sums, n, ordered ? order : NULL) : NULL;
    for (size_t i = 0; i < n; i++) json_decref(sums[i]);
    free(sums);
    free(order);
    if (s == NVFP4_OK) s = st_summarize(st, out_dir, extra, err);
    else json_decref(extra);
    return s;
}
