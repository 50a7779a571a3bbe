/*
 * labfile.c - the lab's file plumbing, below every file that reads or
 * writes a study folder: folders made on the way, study files composed in
 * memory and handed whole to the library's atomic writer (a failed or
 * interrupted run leaves no half-written file), and lab files (CSV, JSON,
 * .done) read whole, refusing a FIFO, a device or a folder without waiting
 * on it. It knows no study, table or verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nvfp4/io.h"
#include "study/labfile.h"

bool st_mkdir_p(const char *dir, nvfp4_error *err)
{
    char buf[4096];
    if (strlen(dir) >= sizeof buf) {
        nvfp4_error_set(err, NVFP4_EINVAL, "output folder name too long");
        return false;
    }
    strcpy(buf, dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) break;
            *p = '/';
        }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        nvfp4_error_set(err, NVFP4_EIO, "cannot create folder %s: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

/* Study files are composed in memory and handed to the library's atomic
 * writer whole: a failed or interrupted run leaves no half-written file. */
FILE *st_file_open(st_file *sf, nvfp4_error *err)
{
    sf->buf = NULL;
    sf->len = 0;
    sf->f = open_memstream(&sf->buf, &sf->len);
    if (!sf->f) nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return sf->f;
}

void st_file_discard(st_file *sf)
{
    if (sf->f) fclose(sf->f);
    free(sf->buf);
    sf->f = NULL;
    sf->buf = NULL;
}

nvfp4_status st_file_commit(st_file *sf, const char *dir, const char *name, nvfp4_error *err)
{
    char path[4096];
    bool ok = !ferror(sf->f);
    ok = (fclose(sf->f) == 0) && ok;
    sf->f = NULL;
    nvfp4_status st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        st = nvfp4_error_set(err, NVFP4_EINVAL, "%s/%s: path too long", dir, name);
    else if (!ok)
        st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    else
        st = nvfp4_file_write_atomic(path, sf->buf, sf->len, err);
    free(sf->buf);
    sf->buf = NULL;
    return st;
}

bool st_read_line(FILE *f, char *buf, size_t n)
{
    if (!fgets(buf, (int)n, f)) return false;
    buf[strcspn(buf, "\r\n")] = 0;
    return true;
}

FILE *st_open_lab_file(const char *path, char **buf, bool *absent, nvfp4_error *err)
{
    struct stat sb;
    uint8_t *b = NULL;
    size_t len = 0;
    *buf = NULL;
    if (absent) *absent = lstat(path, &sb) != 0 && errno == ENOENT;
    if (absent && *absent) return NULL;
    if (nvfp4_file_read_all(path, ST_MAX_LAB_FILE, &b, &len, err) != NVFP4_OK) return NULL;
    FILE *f = len ? fmemopen(b, len, "r") : fopen("/dev/null", "r");
    if (!f) {
        free(b);
        nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    *buf = (char *)b;
    return f;
}

json_t *st_load_lab_json(const char *path, bool *absent, nvfp4_error *err)
{
    char *buf;
    FILE *f = st_open_lab_file(path, &buf, absent, err);
    if (!f) return NULL;
    json_error_t je;
    json_t *j = json_loadf(f, 0, &je);
    fclose(f);
    free(buf);
    if (!j) nvfp4_error_set(err, NVFP4_EFORMAT, "%s: line %d: %s", path, je.line, je.text);
    return j;
}

nvfp4_status st_write_summed(FILE *f, void (*compose)(FILE *m, const void *ctx), const void *ctx, const char *what,
                             nvfp4_error *err)
{
    char *buf = NULL, hex[65];
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", what);
    compose(m, ctx);
    bool ok = !ferror(m);
    ok = fclose(m) == 0 && ok;
    if (!ok) {
        free(buf);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", what);
    }
    nvfp4_sha256_hex(buf, len, hex);
    if (fwrite(buf, 1, len, f) == len) fprintf(f, "%s\n", hex);
    free(buf);
    return NVFP4_OK;
}

bool st_summed_ok(const uint8_t *buf, size_t len, size_t *body)
{
    char hex[65];
    if (len < ST_SUM_LINE_LEN) return false;
    *body = len - ST_SUM_LINE_LEN;
    nvfp4_sha256_hex(buf, *body, hex);
    return !memcmp(hex, buf + *body, 64) && buf[len - 1] == '\n';
}
