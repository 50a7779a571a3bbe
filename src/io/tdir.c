/* tdir.c - a folder of tensors plus meta.json: NAME.npy files (for numpy
 * users) or raw little-endian NAME.bin files (for C harnesses that fread).
 * meta.json (docs/file-formats.md):
 *   {"format": "nvfp4kit-tensors", "format_version": "1", "storage": "npy"|"bin",
 *    "metadata": {string: string},
 *    "tensors": [{"name", "file", "dtype", "shape", "bytes", "sha256"}, ...]}
 * A folder is written under a temporary name and renamed into place. */
#include "io_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define TDIR_FORMAT "nvfp4kit-tensors"
#define TDIR_VERSION "1"

/* "dir/file", sized to fit (no path is ever truncated); caller frees; NULL
 * when out of memory. */
static char *path_join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + 1 + strlen(file) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, file);
    return p;
}

bool io_name_is_file_safe(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 200 || name[0] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.'))
            return false;
    }
    return true;
}

/* Where the tensor files come from: the disk, or memory (fuzzing). */
typedef struct {
    const char *dir;
    size_t nfiles;
    const char *const *names;
    const uint8_t *const *bufs;
    const size_t *lens;
} file_source;

static nvfp4_status source_load(const file_source *src, const char *file, const char *path, uint8_t **buf,
                                size_t *len, bool *owned, nvfp4_error *err)
{
    if (!src->names) {
        *owned = true;
        return nvfp4_file_read_all(path, SIZE_MAX, buf, len, err);
    }
    for (size_t i = 0; i < src->nfiles; i++)
        if (strcmp(src->names[i], file) == 0) {
            *buf = (uint8_t *)src->bufs[i];
            *len = src->lens[i];
            *owned = false;
            return NVFP4_OK;
        }
    return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open: No such file or directory", path);
}

static const char *get_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static nvfp4_status check_header(const json_t *root, const char *mfile, bool *is_npy, nvfp4_error *err)
{
    if (!json_is_object(root)) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a JSON object", mfile);
    const char *f = get_str(root, "format"), *v = get_str(root, "format_version"), *s = get_str(root, "storage");
    if (!f || strcmp(f, TDIR_FORMAT) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: \"format\" is not \"" TDIR_FORMAT "\"", mfile);
    if (!v || strcmp(v, TDIR_VERSION) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: unsupported format_version (this tool reads \"" TDIR_VERSION
                               "\")", mfile);
    if (!s || (strcmp(s, "npy") != 0 && strcmp(s, "bin") != 0))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: \"storage\" is not \"npy\" or \"bin\"", mfile);
    *is_npy = strcmp(s, "npy") == 0;
    return NVFP4_OK;
}

static nvfp4_status read_metadata(const json_t *root, const char *mfile, nvfp4_tensor_set *out, nvfp4_error *err)
{
    const json_t *md = json_object_get(root, "metadata");
    if (!md) return NVFP4_OK;
    if (!json_is_object(md)) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: \"metadata\" is not an object", mfile);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)md, k, v) {
        if (!json_is_string(v))
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: metadata value of '%s' is not a string", mfile, k);
        nvfp4_status st = io_tset_meta_append(out, k, json_string_value(v), err); /* keys unique */
        if (st) return st;
    }
    return NVFP4_OK;
}

/* The npy file's own dtype/shape must be what meta.json says (BF16 is '<u2'). */
static nvfp4_status adopt_npy(nvfp4_tensor_set *out, const char *path, const char *name, nvfp4_tdtype dt,
                              unsigned ndim, const size_t *shape, const uint8_t *buf, size_t len, nvfp4_error *err)
{
    nvfp4_tensor_set one;
    nvfp4_tset_init(&one);
    nvfp4_status st = nvfp4_npy_parse(buf, len, path, name, &one, err);
    if (st) goto done;
    nvfp4_tensor *t = &one.tensors[0];
    bool dt_ok = t->dtype == dt || (dt == NVFP4_T_BF16 && t->dtype == NVFP4_T_U16);
    bool sh_ok = t->ndim == ndim;
    for (unsigned d = 0; sh_ok && d < ndim; d++) sh_ok = t->shape[d] == shape[d];
    if (!dt_ok || !sh_ok) {
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: dtype or shape differs from meta.json", path);
        goto done;
    }
    st = io_tset_add_unique(out, name, dt, ndim, shape, t->data, NULL, err);
done:
    nvfp4_tset_free(&one);
    return st;
}

static nvfp4_status read_tensor(const json_t *e, size_t idx, const char *mfile, bool is_npy, const file_source *src,
                                nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (!json_is_object(e)) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensors[%zu] is not an object", mfile, idx);
    const char *name = get_str(e, "name"), *file = get_str(e, "file"), *dts = get_str(e, "dtype");
    const char *sha = get_str(e, "sha256");
    const json_t *jsha = json_object_get(e, "sha256");
    if (!name || !io_name_is_file_safe(name))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensors[%zu]: name missing or not usable as a file name",
                               mfile, idx);
    char want[256];
    snprintf(want, sizeof want, "%s.%s", name, is_npy ? "npy" : "bin");
    if (!file || strcmp(file, want) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': \"file\" must be \"%s\"", mfile, name, want);
    nvfp4_tdtype dt;
    if (!dts || !nvfp4_tdtype_parse(dts, &dt))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': unknown dtype '%s'", mfile, name,
                               dts ? dts : "(missing)");
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
    const json_t *sh = json_object_get(e, "shape");
    if (!sh) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': shape missing", mfile, name);
    nvfp4_status st = io_json_shape(sh, mfile, name, &ndim, shape, err);
    if (st) return st;
    size_t bytes;
    if (!io_shape_bytes(dt, ndim, shape, &bytes)) {
        char why[256];
        io_shape_why(dt, ndim, shape, why, sizeof why);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': %s", mfile, name, why);
    }
    if (jsha && !sha)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': \"sha256\" is not a string", mfile, name);
    const json_t *jb = json_object_get(e, "bytes");
    if (jb && (!json_is_integer(jb) || json_integer_value(jb) < 0 ||
               (unsigned long long)json_integer_value(jb) != (unsigned long long)bytes))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': \"bytes\" does not match shape and dtype (%zu)",
                               mfile, name, bytes);
    char *path = path_join(src->dir, file);
    if (!path) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    uint8_t *buf;
    size_t len;
    bool owned;
    st = source_load(src, file, path, &buf, &len, &owned, err);
    if (st) {
        free(path);
        return st;
    }
    if (sha) {
        char hex[65];
        nvfp4_sha256_hex(buf, len, hex);
        if (strcasecmp(hex, sha) != 0) /* hex digits in either case */
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: sha256 differs from meta.json (file changed or corrupt)",
                                 path);
    }
    if (!st && is_npy) st = adopt_npy(out, path, name, dt, ndim, shape, buf, len, err);
    else if (!st && len != bytes)
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s: shape %s needs %zu bytes, file has %zu", path,
                             len < bytes ? "truncated" : "too long", nvfp4_tdtype_name(dt), bytes, len);
    else if (!st) st = io_tset_add_unique(out, name, dt, ndim, shape, buf, NULL, err);
    if (owned) free(buf);
    free(path);
    return st;
}

/* Duplicate names, found by sorting (O(n log n)); read_tensor then adds
 * without searching. */
static nvfp4_status check_unique_names(const json_t *ts, const char *mfile, nvfp4_error *err)
{
    size_t n = json_array_size(ts), k = 0;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", mfile);
    for (size_t i = 0; i < n; i++) {
        const char *name = get_str(json_array_get(ts, i), "name");
        if (name) names[k++] = name;
    }
    const char *dup = io_first_duplicate(names, k);
    nvfp4_status st = dup ? nvfp4_error_set(err, NVFP4_EFORMAT, "%s: duplicate tensor name '%s'", mfile, dup)
                          : NVFP4_OK;
    free(names);
    return st;
}

static nvfp4_status parse_meta(const char *json, size_t json_len, const file_source *src, nvfp4_tensor_set *out,
                               nvfp4_error *err)
{
    char *mfile = path_join(src->dir, "meta.json");
    if (!mfile) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    json_error_t je;
    json_t *root = json_loadb(json, json_len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        nvfp4_status bad = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not valid JSON: %s (line %d)", mfile, je.text,
                                           je.line);
        free(mfile);
        return bad;
    }
    nvfp4_tensor_set tmp;
    nvfp4_tset_init(&tmp);
    bool is_npy = false;
    nvfp4_status st = check_header(root, mfile, &is_npy, err);
    if (!st) st = read_metadata(root, mfile, &tmp, err);
    const json_t *ts = json_object_get(root, "tensors");
    if (!st && !json_is_array(ts))
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: \"tensors\" missing or not an array", mfile);
    if (!st) st = check_unique_names(ts, mfile, err);
    for (size_t i = 0; !st && i < json_array_size(ts); i++)
        st = read_tensor(json_array_get(ts, i), i, mfile, is_npy, src, &tmp, err);
    json_decref(root);
    free(mfile);
    if (st) nvfp4_tset_free(&tmp);
    else {
        nvfp4_tset_free(out);
        *out = tmp;
    }
    return st;
}

nvfp4_status nvfp4_tdir_parse_mem(const char *json, size_t json_len, const char *dirname, size_t nfiles,
                                  const char *const *names, const uint8_t *const *bufs, const size_t *lens,
                                  nvfp4_tensor_set *out, nvfp4_error *err)
{
    file_source src = {dirname, nfiles, names, bufs, lens};
    static const char *const none[1] = {""};
    if (!names) src.names = none; /* memory mode even with no files */
    return parse_meta(json, json_len, &src, out, err);
}

nvfp4_status nvfp4_tdir_read(const char *dir, nvfp4_tensor_set *out, nvfp4_error *err)
{
    char *mpath = path_join(dir, "meta.json");
    if (!mpath) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    uint8_t *b;
    size_t n;
    nvfp4_status st = nvfp4_file_read_all(mpath, IO_MAX_HEADER, &b, &n, err);
    free(mpath);
    if (st) return st;
    file_source src = {dir, 0, NULL, NULL, NULL};
    st = parse_meta((const char *)b, n, &src, out, err);
    free(b);
    return st;
}

/* ---- writing ---------------------------------------------------------------- */

static nvfp4_status write_plain(const char *path, const void *buf, size_t len, nvfp4_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create: %s", path, strerror(errno));
    errno = 0;
    bool ok = len == 0 || fwrite(buf, 1, len, f) == len;
    int e = errno;
    if (fclose(f) != 0 && ok) ok = false, e = errno;
    return ok ? NVFP4_OK : nvfp4_error_set(err, NVFP4_EIO, "%s: write failed: %s", path, strerror(e ? e : EIO));
}

static nvfp4_status write_contents(const char *tmp, const char *dir, const nvfp4_tensor_set *s, bool npy,
                                   nvfp4_error *err)
{
    json_t *root = json_object(), *md = json_object(), *ts = json_array();
    json_object_set_new(root, "format", json_string(TDIR_FORMAT));
    json_object_set_new(root, "format_version", json_string(TDIR_VERSION));
    json_object_set_new(root, "storage", json_string(npy ? "npy" : "bin"));
    for (size_t i = 0; i < s->meta_count; i++) json_object_set_new(md, s->meta[i].key, json_string(s->meta[i].value));
    json_object_set_new(root, "metadata", md);
    json_object_set_new(root, "tensors", ts);
    nvfp4_status st = NVFP4_OK;
    char *path = NULL;
    for (size_t i = 0; !st && i < s->count; i++) {
        const nvfp4_tensor *t = &s->tensors[i];
        if (!io_name_is_file_safe(t->name)) {
            st = nvfp4_error_set(err, NVFP4_EINVAL, "%s: tensor name '%s' cannot be a file name", dir, t->name);
            break;
        }
        char file[256];
        snprintf(file, sizeof file, "%s.%s", t->name, npy ? "npy" : "bin");
        free(path);
        path = path_join(tmp, file);
        if (!path) {
            st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
            break;
        }
        st = npy ? nvfp4_npy_write(path, t, err) : write_plain(path, t->data, t->nbytes, err);
        char hex[65];
        if (!st) st = nvfp4_sha256_file(path, hex, err);
        if (st) break;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(t->name));
        json_object_set_new(e, "file", json_string(file));
        json_object_set_new(e, "dtype", json_string(nvfp4_tdtype_name(t->dtype)));
        json_object_set_new(e, "shape", io_json_shape_new(t->ndim, t->shape));
        json_object_set_new(e, "bytes", json_integer((json_int_t)t->nbytes));
        json_object_set_new(e, "sha256", json_string(hex));
        json_array_append_new(ts, e);
    }
    if (!st) {
        char *txt = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
        free(path);
        path = path_join(tmp, "meta.json");
        if (!txt || !path) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: cannot encode meta.json", dir);
        else {
            size_t n = strlen(txt);
            txt[n] = '\n'; /* replace the NUL: meta.json ends with a newline */
            st = write_plain(path, txt, n + 1, err);
        }
        free(txt);
    }
    json_decref(root);
    free(path);
    return st;
}

/* The files meta.json lists (its "tensors"[].file), plus meta.json itself:
 * what a folder of ours holds. NULL (err set) when meta.json is not ours. */
static json_t *listed_files(const char *dir, nvfp4_error *err)
{
    char *m = path_join(dir, "meta.json");
    if (!m) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    uint8_t *b = NULL;
    size_t n = 0;
    json_t *root = NULL, *files = NULL;
    bool is_npy;
    if (nvfp4_file_read_all(m, IO_MAX_HEADER, &b, &n, err) == NVFP4_OK)
        root = json_loadb((const char *)b, n, JSON_REJECT_DUPLICATES, NULL);
    free(b);
    nvfp4_error ignored;
    const json_t *ts = root ? json_object_get(root, "tensors") : NULL;
    if (root && check_header(root, m, &is_npy, &ignored) == NVFP4_OK && json_is_array(ts)) {
        files = json_array();
        json_array_append_new(files, json_string("meta.json"));
        for (size_t i = 0; i < json_array_size(ts); i++) {
            const char *f = get_str(json_array_get(ts, i), "file");
            if (f && io_name_is_file_safe(f)) json_array_append_new(files, json_string(f));
        }
    }
    json_decref(root);
    free(m);
    return files;
}

static bool listed(const json_t *files, const char *name)
{
    for (size_t i = 0; i < json_array_size(files); i++)
        if (strcmp(json_string_value(json_array_get(files, i)), name) == 0) return true;
    return false;
}

/* An existing destination is replaced only if it is empty or holds nothing
 * but a meta.json of ours and the regular files it lists: replacing removes
 * the old folder, and a file this tool did not write is never deleted. */
static nvfp4_status check_replaceable(const char *dir, nvfp4_error *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0) return NVFP4_OK;
    if (!S_ISDIR(st.st_mode)) {
        struct stat target;
        if (S_ISLNK(st.st_mode) && stat(dir, &target) == 0)
            return nvfp4_error_set(err, NVFP4_EIO, "%s: is a symbolic link to %s; refusing to replace it",
                                   dir, io_file_kind((unsigned)target.st_mode));
        return nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a folder; refusing to replace it", dir,
                               io_file_kind((unsigned)st.st_mode));
    }
    DIR *d = opendir(dir);
    if (!d) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot list: %s", dir, strerror(errno));
    json_t *files = NULL;
    nvfp4_status rc = NVFP4_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!files && !(files = listed_files(dir, err))) {
            rc = nvfp4_error_set(err, NVFP4_EIO, "%s: folder exists, is not empty and has no meta.json of this tool; "
                                 "not overwriting", dir);
            break;
        }
        struct stat es;
        bool regular = fstatat(dirfd(d), e->d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(es.st_mode);
        if (!regular || !listed(files, e->d_name))
            rc = nvfp4_error_set(err, NVFP4_EIO, "%s: holds '%s', which its meta.json does not list (not written by "
                                 "this tool); not overwriting", dir, e->d_name);
    }
    closedir(d);
    json_decref(files);
    return rc;
}

nvfp4_status nvfp4_tdir_write(const char *dir, const nvfp4_tensor_set *s, nvfp4_file_format fmt, nvfp4_error *err)
{
    if (fmt != NVFP4_FMT_NPY_DIR && fmt != NVFP4_FMT_BIN_DIR)
        return nvfp4_error_set(err, NVFP4_EINVAL, "%s: not a folder format", dir);
    nvfp4_dir_txn t;
    nvfp4_status st = nvfp4_dir_txn_begin(&t, dir, err);
    if (st) return st;
    st = check_replaceable(t.dest, err);
    if (!st) st = write_contents(t.tmp, t.dest, s, fmt == NVFP4_FMT_NPY_DIR, err);
    if (st) io_error_retarget(err, t.tmp, t.dest); /* name the destination, not the temporary */
    if (!st) return nvfp4_dir_txn_commit(&t, err);
    nvfp4_dir_txn_abort(&t);
    return st;
}
