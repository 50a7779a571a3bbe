/*
 * merge.c - the commands on finished run folders: `study plot DIR`
 * (aggregates and plots again from runs.csv) and `study merge` (the runs of
 * shard folders concatenated into one folder, then summarized). The only
 * file of the lab's output side that looks a study up in the registry.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

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

nvfp4_status nvfp4_study_plot(const char *dir, bool *skipped, nvfp4_error *err)
{
    char name[128];
    nvfp4_status s = read_study_name(dir, name, sizeof name, err);
    if (s != NVFP4_OK) return s;
    return st_aggregate_and_plot(dir, nvfp4_study_find(name), name, skipped, err);
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
    const nvfp4_study *st = nvfp4_study_find(name);
    if (!st) return nvfp4_error_set(err, NVFP4_EINVAL, "merge: unknown study %s", name);
    if (!st_mkdir_p(out_dir, err)) return NVFP4_EIO;
    s = concat_csv(dirs, n, out_dir, "runs.csv", ST_RUNS_HEADER, err);
    if (s == NVFP4_OK) s = concat_csv(dirs, n, out_dir, "layers.csv", ST_LAYERS_HEADER, err);
    for (const char *const *f = st->files; s == NVFP4_OK && f && *f; f++)
        s = concat_csv(dirs, n, out_dir, *f, NULL, err);
    if (s == NVFP4_OK) s = st_summarize(st, out_dir, NULL, err);
    return s;
}
