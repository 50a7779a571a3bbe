/*
 * merge.c - the commands on finished run folders: `study plot DIR`
 * (aggregates and plots again from runs.csv) and `study merge` (the runs of
 * shard folders concatenated into one folder, then summarized). The only
 * file of the lab's output side that looks a study up in the registry.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "study/labfile.h"
#include "study/fingerprint.h"
#include "nvfp4/io.h"
#include "study/studies.h"

static nvfp4_status read_study_name(const char *dir, char *name, size_t n, nvfp4_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = st_load_lab_json(path, NULL, err);
    if (!j) return NVFP4_EFORMAT;
    const char *s = json_string_value(json_object_get(j, "study"));
    if (!s || strlen(s) >= n) {
        json_decref(j);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a study summary (no \"study\" name)", path);
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
    struct stat sb;
    if (*st || (lstat(path, &sb) != 0 && errno == ENOENT)) return NVFP4_OK;
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
        char *buf;
        bool absent;
        FILE *in = st_open_lab_file(path, &buf, &absent, err);
        if (!in && absent) continue;
        if (!in) {
            if (f) st_file_discard(&sf);
            return NVFP4_EIO;
        }
        if (!f) {
            f = st_file_open(&sf, err);
            if (!f) {
                fclose(in);
                free(buf);
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
                    free(buf);
                    st_file_discard(&sf);
                    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header differs from the other shards", path);
                }
                if (header) continue;
                if (d) continue; /* headerless-format files: keep the first header only */
            }
            fprintf(f, "%s\n", line);
        }
        fclose(in);
        free(buf);
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

static bool read_blocks(const char *path, blocks *b, nvfp4_error *err)
{
    char *buf;
    FILE *in = st_open_lab_file(path, &buf, NULL, err);
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
    free(buf);
    if (!ok) nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    return ok;
}

/* ---- what merge refuses: folders that are not the shards of one run ---------- */
static void shard_of(const json_t *fp, json_int_t *i, json_int_t *m)
{
    json_t *sh = json_object_get(fp, "shard");
    *i = 0;
    *m = 1;
    if (json_is_array(sh) && json_array_size(sh) == 2) {
        *i = json_integer_value(json_array_get(sh, 0));
        *m = json_integer_value(json_array_get(sh, 1));
    }
}

static void shard_text(json_int_t i, json_int_t m, char *buf, size_t n)
{
    if (m <= 1) snprintf(buf, n, "the whole run (no --shard)");
    else snprintf(buf, n, "shard %lld/%lld", (long long)i, (long long)m);
}

/* Every folder's summary.json has a fingerprint; all agree but for the
 * shard; the shards are 0..n-1 of one --shard count, each once. order[i]
 * is then the folder of shard i. */
static nvfp4_status check_shards(const char *const *dirs, size_t n, json_t **sums, size_t *order, nvfp4_error *err)
{
    json_t *fp0 = NULL;
    json_int_t i0 = 0, m0 = 1;
    for (size_t i = 0; i < n; i++) order[i] = SIZE_MAX;
    for (size_t d = 0; d < n; d++) {
        json_t *fp = json_object_get(sums[d], "fingerprint");
        char why[256], a[64], b[64];
        if (!json_is_object(fp))
            return nvfp4_error_set(err, NVFP4_EFORMAT,
                                   "merge: %s/summary.json has no fingerprint (written by an older nvfp4, or not a "
                                   "study run): cannot tell which run it belongs to",
                                   dirs[d]);
        json_int_t i, m;
        shard_of(fp, &i, &m);
        if (m < 1 || i < 0 || i >= m)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s/summary.json: invalid shard %lld/%lld", dirs[d],
                                   (long long)i, (long long)m);
        if (!fp0) {
            fp0 = fp;
            i0 = i;
            m0 = m;
        } else if (st_fingerprint_differs(fp, fp0, false, why, sizeof why)) {
            return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s is of another run than %s: %s", dirs[d], dirs[0],
                                   why);
        } else if (m != m0) {
            shard_text(i, m, a, sizeof a);
            shard_text(i0, m0, b, sizeof b);
            return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s is %s, but %s is %s: another --shard count",
                                   dirs[d], a, dirs[0], b);
        }
        if ((size_t)i < n && order[i] != SIZE_MAX) {
            shard_text(i, m, a, sizeof a);
            return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s and %s are both %s", dirs[order[i]], dirs[d], a);
        }
        if ((size_t)i < n) order[i] = d;
    }
    if ((size_t)m0 < n)
        return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %zu folders given for the %lld shards of one run", n,
                               (long long)m0);
    if ((size_t)m0 != n) {
        char missing[512] = "";
        for (json_int_t i = 0, k = 0; i < m0 && k < 8; i++) {
            bool have = false;
            for (size_t d = 0; d < n; d++) {
                json_int_t j, m;
                shard_of(json_object_get(sums[d], "fingerprint"), &j, &m);
                have |= j == i;
            }
            if (have) continue;
            size_t l = strlen(missing);
            snprintf(missing + l, sizeof missing - l, "%s%lld/%lld", k++ ? ", " : "", (long long)i, (long long)m0);
        }
        return nvfp4_error_set(err, NVFP4_EINVAL, "merge: shard %s missing (%zu of the run's %lld shards given)",
                               missing, n, (long long)m0);
    }
    return NVFP4_OK;
}

/* ---- seed batches (`study run --target-ci`): unsharded folders of one run
 * but for their seeds, first_seed .. first_seed + seeds - 1, which must tile
 * 1 .. N without a gap or an overlap ------------------------------------------ */
static json_int_t first_seed_of(const json_t *fp)
{
    json_t *v = json_object_get(fp, "first_seed");
    return json_is_integer(v) ? json_integer_value(v) : 1;
}

static json_int_t seeds_of(const json_t *fp) { return json_integer_value(json_object_get(fp, "seeds")); }

/* Whether the folders are seed batches: two or more, none sharded, and one
 * starting past seed 1 (two whole runs from seed 1 are refused as shards). */
static bool seed_batches(json_t **sums, size_t n)
{
    bool later = false;
    for (size_t d = 0; d < n; d++) {
        json_t *fp = json_object_get(sums[d], "fingerprint");
        json_int_t i, m;
        if (!json_is_object(fp)) return false;
        shard_of(fp, &i, &m);
        if (m != 1) return false;
        later |= first_seed_of(fp) > 1;
    }
    return n > 1 && later;
}

/* The fingerprint without its seed range, for comparing batches. */
static json_t *without_seeds(const json_t *fp)
{
    json_t *c = json_deep_copy(fp);
    json_object_del(c, "seeds");
    json_object_del(c, "first_seed");
    return c;
}

static nvfp4_status check_batches(const char *const *dirs, size_t n, json_t **sums, size_t *order, json_int_t *total,
                                  nvfp4_error *err)
{
    json_t *fp0 = without_seeds(json_object_get(sums[0], "fingerprint"));
    nvfp4_status s = NVFP4_OK;
    for (size_t d = 0; d < n; d++) {
        json_t *fp = without_seeds(json_object_get(sums[d], "fingerprint"));
        char why[256];
        if (st_fingerprint_differs(fp, fp0, false, why, sizeof why) && s == NVFP4_OK)
            s = nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s is of another run than %s: %s", dirs[d], dirs[0], why);
        json_decref(fp);
        order[d] = d;
    }
    json_decref(fp0);
    if (s != NVFP4_OK) return s;
    /* by first seed (insertion sort: a handful of batches) */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            json_int_t x = first_seed_of(json_object_get(sums[order[b]], "fingerprint"));
            json_int_t y = first_seed_of(json_object_get(sums[order[b - 1]], "fingerprint"));
            if (x >= y) break;
            size_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    json_int_t next = 1;
    for (size_t k = 0; k < n; k++) {
        const json_t *fp = json_object_get(sums[order[k]], "fingerprint");
        json_int_t first = first_seed_of(fp), cnt = seeds_of(fp);
        if (cnt < 1) return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s/summary.json: invalid seeds", dirs[order[k]]);
        if (first > next)
            return nvfp4_error_set(err, NVFP4_EINVAL, "merge: seeds %lld..%lld missing (no folder holds them)",
                                   (long long)next, (long long)first - 1);
        if (first < next)
            return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s holds seeds %lld..%lld, which another folder holds too",
                                   dirs[order[k]], (long long)first, (long long)(first + cnt - 1));
        next = first + cnt;
    }
    *total = next - 1;
    return NVFP4_OK;
}

/* The CSV files of dir are those its summary.json records (size and
 * sha256): a truncated or altered file is refused. */
static nvfp4_status check_files(const nvfp4_study *st, const char *dir, json_t *sum, nvfp4_error *err)
{
    json_t *files = json_object_get(sum, "files"), *rec;
    const char *name;
    char path[4096], hex[65];
    if (!json_is_object(files))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s/summary.json records no \"files\"", dir);
    json_object_foreach(files, name, rec) {
        json_t *bytes = json_object_get(rec, "bytes");
        const char *sha = json_string_value(json_object_get(rec, "sha256"));
        if (!name[0] || name[0] == '.' || strchr(name, '/') || !json_is_integer(bytes) || !sha)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s/summary.json: malformed \"files\" entry", dir);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        struct stat sb;
        if (lstat(path, &sb) != 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s: missing (its summary.json records it)", path);
        if (S_ISREG(sb.st_mode) && (json_int_t)sb.st_size != json_integer_value(bytes))
            return nvfp4_error_set(err, NVFP4_EFORMAT,
                                   "merge: %s: %lld bytes, but its summary.json records %lld: truncated or changed "
                                   "after the run",
                                   path, (long long)sb.st_size, (long long)json_integer_value(bytes));
        nvfp4_status s = nvfp4_sha256_file(path, hex, err);
        if (s != NVFP4_OK) return s;
        if (strcmp(hex, sha))
            return nvfp4_error_set(err, NVFP4_EFORMAT,
                                   "merge: %s: its sha256 differs from the one its summary.json records: changed "
                                   "after the run",
                                   path);
    }
    static const char *const csv[] = {"runs.csv", "layers.csv"};
    for (size_t k = 0; k < 2 + 64; k++) {
        const char *f = k < 2 ? csv[k] : (st->files ? st->files[k - 2] : NULL);
        if (!f) break;
        snprintf(path, sizeof path, "%s/%s", dir, f);
        struct stat sb;
        if (!json_object_get(files, f) && lstat(path, &sb) == 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "merge: %s: not recorded in its summary.json (not of this run)",
                                   path);
    }
    return NVFP4_OK;
}

/* name in the merged folder: the folders' job blocks taken in turns of
 * turn[i] blocks from folder order[i] (turn NULL: one each), so the file is
 * the one-process run's. Shards take one each: job j was the (j / n)-th job
 * of shard j % n. Seed batches take their seed count each: an arm's jobs are
 * its seeds in order, batch after batch. */
static nvfp4_status interleave_csv(const char *const *dirs, size_t n, const size_t *order, const size_t *turn,
                                   const char *out, const char *name, const char *header, nvfp4_error *err)
{
    blocks *b = calloc(n, sizeof *b);
    if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    char path[4096];
    nvfp4_status s = NVFP4_OK;
    for (size_t i = 0; i < n && s == NVFP4_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[order[i]], name);
        if (!read_blocks(path, &b[i], err)) s = err->status != NVFP4_OK ? err->status : NVFP4_EIO;
    }
    st_file sf;
    FILE *f = s == NVFP4_OK ? st_file_open(&sf, err) : NULL;
    if (s == NVFP4_OK && !f) s = NVFP4_ENOMEM;
    if (f) {
        fprintf(f, "%s\n", header);
        for (size_t k = 0, left = 1; left; k++) {
            left = 0;
            for (size_t i = 0; i < n; i++) {
                size_t t = turn ? turn[i] : 1;
                for (size_t q = k * t; q < (k + 1) * t && q < b[i].n; q++) {
                    fputs(b[i].text[q], f);
                    left = 1;
                }
            }
        }
        s = st_file_commit(&sf, out, name, err);
    }
    for (size_t i = 0; i < n; i++) blocks_free(&b[i]);
    free(b);
    return s;
}

/* summary.json facts of the run (timing in job order, taken in turns as
 * interleave_csv takes the rows; steps, seeds, threads) */
static json_t *merged_extra(json_t **sums, size_t n, const size_t *order, const size_t *turn)
{
    json_t *extra = json_object(), *timing = json_array();
    static const char *const keep[] = {"steps", "seeds", "threads"};
    if (order) {
        for (size_t k = 0, any = 1; any; k++) {
            any = 0;
            for (size_t i = 0; i < n; i++) {
                size_t t = turn ? turn[i] : 1;
                for (size_t q = k * t; q < (k + 1) * t; q++) {
                    json_t *x = json_array_get(json_object_get(sums[order[i]], "timing"), q);
                    if (x) json_array_append(timing, x), any = 1;
                }
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

/* Merges the checked shard folders (or seed batches: seeds > 0, their total)
 * of study st into out_dir. */
static nvfp4_status merge_study(const nvfp4_study *st, const char *const *dirs, size_t n, json_t **sums,
                                const size_t *order, json_int_t seeds, const char *out_dir, nvfp4_error *err)
{
    nvfp4_status s = NVFP4_OK;
    /* the jobs in the unsharded run's order; a study not made of jobs: the
     * folders' rows one after the other, in shard order */
    const char **sorted = calloc(n, sizeof *sorted);
    if (!sorted) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) sorted[i] = dirs[order[i]];
    /* seed batches: each folder's turn is its seed count (the jobs of one arm) */
    size_t *turn = seeds ? calloc(n, sizeof *turn) : NULL;
    if (seeds && !turn) {
        free(sorted);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    for (size_t i = 0; turn && i < n; i++) turn[i] = (size_t)seeds_of(json_object_get(sums[order[i]], "fingerprint"));
    char path[4096];
    snprintf(path, sizeof path, "%s/layers.csv", dirs[0]);
    struct stat sb;
    bool layers = lstat(path, &sb) == 0;
    if (!st->serial) {
        s = interleave_csv(dirs, n, order, turn, out_dir, "runs.csv", ST_RUNS_HEADER, err);
        if (s == NVFP4_OK && layers) s = interleave_csv(dirs, n, order, turn, out_dir, "layers.csv", ST_LAYERS_HEADER, err);
    } else {
        s = concat_csv(sorted, n, out_dir, "runs.csv", ST_RUNS_HEADER, err);
        if (s == NVFP4_OK) s = concat_csv(sorted, n, out_dir, "layers.csv", ST_LAYERS_HEADER, err);
    }
    for (const char *const *f = st->files; s == NVFP4_OK && f && *f; f++)
        s = concat_csv(sorted, n, out_dir, *f, NULL, err);
    free(sorted);
    json_t *extra = merged_extra(sums, n, order, turn);
    free(turn);
    if (seeds) json_object_set_new(extra, "seeds", json_integer(seeds)); /* seed batches: all of them */
    if (s == NVFP4_OK) s = st_summarize(st, out_dir, extra, err);
    else json_decref(extra);
    return s;
}

static nvfp4_status merge_checked(const nvfp4_study *st, const char *const *dirs, size_t n, json_t **sums,
                                  const char *out_dir, nvfp4_error *err)
{
    size_t *order = calloc(n, sizeof *order);
    if (!order) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    json_int_t total = 0; /* seed batches: the seeds of the merged run */
    bool batches = seed_batches(sums, n);
    nvfp4_status s = batches ? check_batches(dirs, n, sums, order, &total, err) : check_shards(dirs, n, sums, order, err);
    for (size_t d = 0; d < n && s == NVFP4_OK; d++) s = check_files(st, dirs[d], sums[d], err);
    int lock = -1;
    if (s == NVFP4_OK && !st_mkdir_p(out_dir, err)) s = NVFP4_EIO;
    if (s == NVFP4_OK && (lock = st_lock_dir(out_dir, err)) < 0) s = NVFP4_EINVAL;
    if (s == NVFP4_OK) s = merge_study(st, dirs, n, sums, order, batches ? total : 0, out_dir, err);
    if (s == NVFP4_OK) {
        /* the merged folder is the unsharded run's: its fingerprint without
         * the shard (or, of seed batches, with all their seeds) */
        json_t *fp = json_deep_copy(json_object_get(sums[0], "fingerprint"));
        json_object_del(fp, "shard");
        if (batches) {
            json_object_del(fp, "first_seed");
            json_object_set_new(fp, "seeds", json_integer(total));
        }
        s = st_stamp_summary(out_dir, st, fp, err);
        json_decref(fp);
    }
    st_unlock_dir(out_dir, lock);
    free(order);
    return s;
}

/* A study run from a file merges with the config.json of its first folder:
 * that file must be the config its fingerprint names. */
static nvfp4_status check_config_file(const nvfp4_study *owned, const char *dir, json_t *sum, nvfp4_error *err)
{
    const char *want = json_string_value(json_object_get(json_object_get(sum, "fingerprint"), "config_sha256"));
    char *text = st_config_canonical(owned->cfg), hex[65];
    if (!text) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_sha256_hex(text, strlen(text), hex);
    free(text);
    if (want && strcmp(want, hex))
        return nvfp4_error_set(err, NVFP4_EINVAL, "merge: %s/%s is not the config its summary.json was run with", dir,
                               ST_CONFIG_FILE);
    return NVFP4_OK;
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
    const nvfp4_study *st;
    nvfp4_study *owned;
    s = study_of(dirs[0], name, &st, &owned, err);
    if (s != NVFP4_OK) return s;
    if (!st)
        return nvfp4_error_set(err, NVFP4_EINVAL, "merge: unknown study %s (not built in, and %s has no %s)", name,
                               dirs[0], ST_CONFIG_FILE);
    json_t **sums = calloc(n, sizeof *sums);
    if (!sums) s = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && s == NVFP4_OK; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.json", dirs[i]);
        if (!(sums[i] = st_load_lab_json(path, NULL, err))) s = NVFP4_EFORMAT;
    }
    if (s == NVFP4_OK && owned) s = check_config_file(owned, dirs[0], sums[0], err);
    if (s == NVFP4_OK) s = merge_checked(st, dirs, n, sums, out_dir, err);
    if (s == NVFP4_OK && owned) s = st_config_write(owned->cfg, out_dir, ST_CONFIG_FILE, err);
    for (size_t i = 0; sums && i < n; i++) json_decref(sums[i]);
    free(sums);
    nvfp4_study_free(owned);
    return s;
}
