/* suite_manifest.c - the MANIFEST of a golden suite as the generator writes
 * it (a `#` header, then `sha256  path` lines: docs/file-formats.md,
 * section 6) and the check that an existing folder is a suite of ours
 * before it is replaced. The lines are read back by nvfp4_manifest_read
 * (src/io/manifest.c), the one parser; this file only writes and looks up. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verify/suite_internal.h"

void suite_manifest_add(suite_manifest_writer *w, const char *line)
{
    size_t n = strlen(line);
    if (w->failed) return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = (w->len + n + 1) * 2 + 4096;
        char *t = realloc(w->text, cap);
        if (!t) {
            w->failed = true;
            return;
        }
        w->text = t;
        w->cap = cap;
    }
    memcpy(w->text + w->len, line, n + 1);
    w->len += n;
}

void suite_manifest_writer_free(suite_manifest_writer *w)
{
    free(w->text);
    memset(w, 0, sizeof *w);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A folder case: one line per file, sorted by name (at most 64 files: a
 * bundle folder holds a dozen). */
static nvfp4_status hash_folder(suite_manifest_writer *w, const char *root, const char *rel, const char *path,
                                nvfp4_error *err)
{
    DIR *d = opendir(path);
    if (!d) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot list", path);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    nvfp4_status st = NVFP4_OK;
    while ((e = readdir(d)) != NULL && n < 64)
        if (e->d_name[0] != '.' && !(names[n++] = strdup(e->d_name))) {
            n--;
            st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
            break;
        }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    for (size_t i = 0; i < n; i++) {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", rel, names[i]);
        if (!st) st = suite_manifest_hash(w, root, sub, err);
        free(names[i]);
    }
    return st;
}

nvfp4_status suite_manifest_hash(suite_manifest_writer *w, const char *root, const char *rel, nvfp4_error *err)
{
    char path[2048], hex[65], line[2300];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return hash_folder(w, root, rel, path, err);
    nvfp4_status s = nvfp4_sha256_file(path, hex, err);
    if (s) return s;
    snprintf(line, sizeof line, "%s  %s\n", hex, rel);
    suite_manifest_add(w, line);
    return w->failed ? nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory") : NVFP4_OK;
}

static int cmp_entry_path(const void *a, const void *b)
{
    return strcmp(((const nvfp4_manifest_entry *)a)->path, ((const nvfp4_manifest_entry *)b)->path);
}

void suite_manifest_sort(nvfp4_manifest *m) { qsort(m->entries, m->n, sizeof *m->entries, cmp_entry_path); }

bool suite_manifest_lists(const nvfp4_manifest *m, const char *name)
{
    if (strcmp(name, "MANIFEST") == 0) return true;
    size_t lo = 0, hi = m->n, k = strlen(name);
    while (lo < hi) { /* the first entry not below name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->entries[mid].path, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == m->n || strncmp(m->entries[lo].path, name, k) != 0) return false;
    return m->entries[lo].path[k] == '\0' || m->entries[lo].path[k] == '/';
}

/* The MANIFEST is read once, by the library's reader (a FIFO there is
 * refused, not waited on; a malformed one makes the folder not ours). */
nvfp4_status suite_check_replaceable(const char *dir, bool force, nvfp4_error *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0) return NVFP4_OK;
    if (!S_ISDIR(st.st_mode))
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s: exists and is not a folder; not overwriting", dir);
    if (force) return NVFP4_OK;
    DIR *d = opendir(dir);
    if (!d) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot list: %s", dir, strerror(errno));
    nvfp4_manifest m;
    nvfp4_error merr;
    char *mpath = malloc(strlen(dir) + sizeof "/MANIFEST");
    bool ours = false;
    if (mpath) {
        sprintf(mpath, "%s/MANIFEST", dir);
        ours = nvfp4_manifest_read(mpath, &m, &merr) == NVFP4_OK;
        if (ours && !m.ours) nvfp4_manifest_free(&m), ours = false;
        if (ours) suite_manifest_sort(&m);
        free(mpath);
    }
    struct dirent *e;
    nvfp4_status rc = NVFP4_OK;
    while (!rc && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!ours || !suite_manifest_lists(&m, e->d_name))
            rc = nvfp4_error_set(err, NVFP4_EINVAL, "%s: not empty and not a golden suite of this tool ('%s' is not in "
                                 "a MANIFEST of ours); not overwriting (--force replaces it)", dir, e->d_name);
    }
    closedir(d);
    if (ours) nvfp4_manifest_free(&m);
    return rc;
}

void suite_say(nvfp4_suite_log_fn log, void *ctx, const char *fmt, ...)
{
    if (!log) return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log(ctx, line);
}

nvfp4_status suite_error_renamed(nvfp4_error *err, const nvfp4_error *e, const char *tmp, const char *dest)
{
    const char *at = dest && tmp && tmp != dest ? strstr(e->message, tmp) : NULL;
    if (!at) return nvfp4_error_set(err, e->status, "%s", e->message);
    return nvfp4_error_set(err, e->status, "%.*s%s%s", (int)(at - e->message), e->message, dest, at + strlen(tmp));
}
