/* tset.c - the in-memory tensor set, element types, whole-file reads, atomic
 * writes (temporary name in the same folder, then rename) and SHA-256. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

static const struct {
    const char *name;
    size_t size;
} dtype_table[NVFP4_T_COUNT] = {
    [NVFP4_T_F64] = {"F64", 8},  [NVFP4_T_F32] = {"F32", 4}, [NVFP4_T_F16] = {"F16", 2},
    [NVFP4_T_BF16] = {"BF16", 2}, [NVFP4_T_I64] = {"I64", 8}, [NVFP4_T_I32] = {"I32", 4},
    [NVFP4_T_I16] = {"I16", 2},  [NVFP4_T_I8] = {"I8", 1},   [NVFP4_T_U64] = {"U64", 8},
    [NVFP4_T_U32] = {"U32", 4},  [NVFP4_T_U16] = {"U16", 2}, [NVFP4_T_U8] = {"U8", 1},
    [NVFP4_T_F8_E4M3] = {"F8_E4M3", 1}, [NVFP4_T_F8_E5M2] = {"F8_E5M2", 1}, [NVFP4_T_F8_E8M0] = {"F8_E8M0", 1},
    [NVFP4_T_F4] = {"F4", 1}, /* two elements per byte: see io_shape_bytes */
};

const char *nvfp4_tdtype_name(nvfp4_tdtype t)
{
    return (unsigned)t < NVFP4_T_COUNT ? dtype_table[t].name : "?";
}

size_t nvfp4_tdtype_size(nvfp4_tdtype t) { return (unsigned)t < NVFP4_T_COUNT ? dtype_table[t].size : 0; }

bool nvfp4_tdtype_parse(const char *name, nvfp4_tdtype *out)
{
    for (unsigned i = 0; i < NVFP4_T_COUNT; i++)
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (nvfp4_tdtype)i;
            return true;
        }
    return false;
}

void nvfp4_tset_init(nvfp4_tensor_set *s) { memset(s, 0, sizeof *s); }

void nvfp4_tset_free(nvfp4_tensor_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) {
        free(s->tensors[i].name);
        free(s->tensors[i].data);
    }
    for (size_t i = 0; i < s->meta_count; i++) {
        free(s->meta[i].key);
        free(s->meta[i].value);
    }
    free(s->tensors);
    free(s->meta);
    memset(s, 0, sizeof *s);
}

nvfp4_tensor *nvfp4_tset_find(const nvfp4_tensor_set *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->tensors[i].name, name) == 0) return &s->tensors[i];
    return NULL;
}

void nvfp4_tset_remove(nvfp4_tensor_set *s, const char *name)
{
    nvfp4_tensor *t = nvfp4_tset_find(s, name);
    if (!t) return;
    size_t i = (size_t)(t - s->tensors);
    free(t->name);
    free(t->data);
    memmove(&s->tensors[i], &s->tensors[i + 1], (s->count - i - 1) * sizeof *t);
    s->count--;
}

size_t nvfp4_tensor_numel(const nvfp4_tensor *t)
{
    size_t n = 1;
    for (unsigned d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

bool io_shape_bytes(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, size_t *bytes)
{
    size_t n = nvfp4_tdtype_size(dtype);
    if (n == 0) return false;
    for (unsigned d = 0; d < ndim; d++)
        if (!nvfp4_mul_size(n, shape[d], &n)) return false;
    if (dtype == NVFP4_T_F4) { /* safetensors' F4 shape counts 4-bit elements */
        if (n % 2) return false;
        n /= 2;
    }
    *bytes = n;
    return true;
}

/* The dimensions as "[a, b]" ("[]" for a scalar), cut short with "..." when they do not fit. */
static void shape_text(unsigned ndim, const size_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (unsigned d = 0; d < ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%zu", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
    if (k >= n && n > 4) memcpy(buf + n - 4, "...", 4);
}

void io_shape_why(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, char *why, size_t n)
{
    char sh[96];
    shape_text(ndim, shape, sh, sizeof sh);
    size_t elems = 1;
    bool fits = true;
    for (unsigned d = 0; d < ndim && fits; d++) fits = nvfp4_mul_size(elems, shape[d], &elems);
    if (dtype == NVFP4_T_F4 && fits && elems % 2)
        snprintf(why, n, "dtype F4 packs two elements per byte, but shape %s holds %zu element%s, an odd count "
                 "(no whole number of bytes)%s", sh, elems, elems == 1 ? "" : "s",
                 ndim == 0 ? ": a scalar cannot be F4" : "");
    else if (nvfp4_tdtype_size(dtype) == 0)
        snprintf(why, n, "unknown dtype %d", (int)dtype);
    else
        snprintf(why, n, "shape %s: its size in bytes overflows (2^%zu or more)", sh, sizeof(size_t) * 8);
}

nvfp4_status nvfp4_tset_add(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                            const size_t *shape, const void *data, nvfp4_tensor **added, nvfp4_error *err)
{
    if (name && nvfp4_tset_find(s, name))
        return nvfp4_error_set(err, NVFP4_EINVAL, "duplicate tensor name '%s'", name);
    return io_tset_add_unique(s, name, dtype, ndim, shape, data, added, err);
}

static nvfp4_status add_tensor(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                               const size_t *shape, const void *copy, void *take, nvfp4_tensor **added,
                               nvfp4_error *err);

nvfp4_status nvfp4_tset_add_taken(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                                  const size_t *shape, void *data, nvfp4_error *err)
{
    nvfp4_status st = name && nvfp4_tset_find(s, name)
                          ? nvfp4_error_set(err, NVFP4_EINVAL, "duplicate tensor name '%s'", name)
                          : add_tensor(s, name, dtype, ndim, shape, NULL, data, NULL, err);
    if (st) free(data);
    return st;
}

nvfp4_status io_tset_add_unique(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                                const size_t *shape, const void *data, nvfp4_tensor **added, nvfp4_error *err)
{
    return add_tensor(s, name, dtype, ndim, shape, data, NULL, added, err);
}

/* One new tensor: a copy of `copy` (NULL: zeros), or the buffer `take` itself when given. */
static nvfp4_status add_tensor(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                               const size_t *shape, const void *copy, void *take, nvfp4_tensor **added,
                               nvfp4_error *err)
{
    if (!name || !*name) return nvfp4_error_set(err, NVFP4_EINVAL, "tensor with an empty name");
    if ((unsigned)dtype >= NVFP4_T_COUNT)
        return nvfp4_error_set(err, NVFP4_EINVAL, "tensor '%s': unknown dtype", name);
    if (ndim > NVFP4_MAX_DIMS)
        return nvfp4_error_set(err, NVFP4_EINVAL, "tensor '%s': %u dimensions (at most %d)", name, ndim,
                               NVFP4_MAX_DIMS);
    if (strcmp(name, "__metadata__") == 0)
        return nvfp4_error_set(err, NVFP4_EINVAL, "the tensor name __metadata__ is reserved");
    size_t bytes;
    if (!io_shape_bytes(dtype, ndim, shape, &bytes)) {
        char why[256];
        io_shape_why(dtype, ndim, shape, why, sizeof why);
        return nvfp4_error_set(err, dtype == NVFP4_T_F4 ? NVFP4_EINVAL : NVFP4_ENOMEM, "tensor '%s': %s", name, why);
    }
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        nvfp4_tensor *t = realloc(s->tensors, cap * sizeof *t);
        if (!t) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        s->tensors = t;
        s->cap = cap;
    }
    nvfp4_tensor t;
    memset(&t, 0, sizeof t);
    t.name = strdup(name);
    t.data = take ? take : malloc(bytes ? bytes : 1);
    if (!t.name || !t.data) {
        free(t.name);
        if (!take) free(t.data);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "tensor '%s': out of memory (%zu bytes)", name, bytes);
    }
    t.dtype = dtype;
    t.ndim = ndim;
    for (unsigned d = 0; d < ndim; d++) t.shape[d] = shape[d];
    t.nbytes = bytes;
    if (!take && copy && bytes) memcpy(t.data, copy, bytes);
    else if (!take) memset(t.data, 0, bytes ? bytes : 1); /* a taken buffer holds the caller's bytes */
    s->tensors[s->count] = t;
    if (added) *added = &s->tensors[s->count];
    s->count++;
    return NVFP4_OK;
}

nvfp4_status nvfp4_tset_meta_set(nvfp4_tensor_set *s, const char *key, const char *value, nvfp4_error *err)
{
    for (size_t i = 0; i < s->meta_count; i++)
        if (strcmp(s->meta[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
            free(s->meta[i].value);
            s->meta[i].value = v;
            return NVFP4_OK;
        }
    return io_tset_meta_append(s, key, value, err);
}

nvfp4_status io_tset_meta_append(nvfp4_tensor_set *s, const char *key, const char *value, nvfp4_error *err)
{
    char *v = strdup(value);
    if (!v) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (s->meta_count == s->meta_cap) {
        size_t cap = s->meta_cap ? 2 * s->meta_cap : 16;
        nvfp4_meta_entry *m = realloc(s->meta, cap * sizeof *m);
        if (!m) {
            free(v);
            return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        }
        s->meta = m;
        s->meta_cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    s->meta[s->meta_count].key = k;
    s->meta[s->meta_count].value = v;
    s->meta_count++;
    return NVFP4_OK;
}

const char *nvfp4_tset_meta_get(const nvfp4_tensor_set *s, const char *key)
{
    for (size_t i = 0; i < s->meta_count; i++)
        if (strcmp(s->meta[i].key, key) == 0) return s->meta[i].value;
    return NULL;
}

/* ---- files -------------------------------------------------------------- */

const char *io_file_kind(unsigned mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISREG(mode)) return "a regular file";
    return "not a regular file";
}

/* The one place a reader opens a file: O_NONBLOCK so that a FIFO (or a
 * device) cannot make open() wait for a writer, then fstat on the descriptor
 * (no race with a stat of the name), and only a regular file is read. */
FILE *io_open_regular(const char *path, struct stat *st, nvfp4_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, st) != 0) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st->st_mode)) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a regular file; refusing to read it", path,
                        io_file_kind((unsigned)st->st_mode));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

nvfp4_status nvfp4_file_read_all(const char *path, size_t max, uint8_t **buf, size_t *len, nvfp4_error *err)
{
    struct stat st;
    FILE *f = io_open_regular(path, &st, err);
    if (!f) return NVFP4_EIO; /* err set by io_open_regular */
    if ((unsigned long long)st.st_size > (unsigned long long)max) {
        fclose(f);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: file too large (%lld bytes)", path, (long long)st.st_size);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) {
        fclose(f);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory (%zu bytes)", path, n);
    }
    size_t got = fread(b, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(b);
        return nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    }
    *buf = b;
    *len = n;
    return NVFP4_OK;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *io_first_duplicate(const char **names, size_t n)
{
    if (n < 2) return NULL;
    qsort(names, n, sizeof *names, cmp_str_ptr);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) return names[i];
    return NULL;
}

char *io_path_join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + 1 + strlen(file) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* A temporary name next to `path` ("<dir>/.<base>.tmp-XXXXXX"). */
char *io_temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = dlen + strlen(base) + 16;
    char *t = malloc(n);
    if (!t) return NULL;
    snprintf(t, n, "%.*s.%s.tmp-XXXXXX", (int)dlen, path, base);
    return t;
}

/* The one check every writer makes before it creates a temporary file and
 * again just before the rename: the rename would replace whatever has the
 * destination's name, so a FIFO, a device node (as root: /dev/null, /dev/full),
 * a socket or a folder there is refused, never swapped for a regular file. A
 * symbolic link is itself replaced by the rename (nothing is written through
 * it), but one that points to such a file is refused too: the user named a
 * special file. Only a name that does not exist, a regular file, a link to a
 * regular file and a link to nothing are written. */
nvfp4_status nvfp4_file_check_destination(const char *path, nvfp4_error *err)
{
    struct stat ls, ts;
    /* Nothing there that a rename could replace (no such name, a missing
     * folder, a name too long): creating the temporary reports the problem. */
    if (lstat(path, &ls) != 0) return NVFP4_OK;
    if (S_ISREG(ls.st_mode)) return NVFP4_OK;
    if (!S_ISLNK(ls.st_mode))
        return nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a regular file; refusing to replace it", path,
                               io_file_kind((unsigned)ls.st_mode));
    if (stat(path, &ts) != 0) {
        if (errno == ENOENT) return NVFP4_OK; /* a link to nothing: the rename replaces the link */
        return nvfp4_error_set(err, NVFP4_EIO, "%s: is a symbolic link that cannot be followed: %s", path,
                               strerror(errno));
    }
    if (S_ISREG(ts.st_mode)) return NVFP4_OK;
    return nvfp4_error_set(err, NVFP4_EIO, "%s: is a symbolic link to %s, not to a regular file; refusing to replace it",
                           path, io_file_kind((unsigned)ts.st_mode));
}

nvfp4_status nvfp4_file_txn_write(nvfp4_file_txn *t, const char *path, nvfp4_file_writer write, void *ctx,
                                  nvfp4_error *err)
{
    memset(t, 0, sizeof *t);
    t->slot = -1;
    nvfp4_status st = nvfp4_file_check_destination(path, err);
    if (st) return st;
    t->dest = strdup(path);
    t->tmp = io_temp_name(path);
    if (!t->dest || !t->tmp) {
        nvfp4_file_txn_abort(t);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    int fd = mkstemp(t->tmp);
    if (fd < 0) {
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create a temporary file: %s", path, strerror(errno));
        free(t->tmp);
        t->tmp = NULL; /* nothing of ours to remove */
        nvfp4_file_txn_abort(t);
        return st;
    }
    t->slot = io_temp_register(t->tmp); /* removed if a signal ends the process mid-write */
    /* mkstemp creates 0600; give the file the usual umask-based mode. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    FILE *f = fdopen(fd, "wb");
    bool ok = f != NULL;
    if (ok) {
        st = write(f, ctx, err);
        ok = st == NVFP4_OK && !ferror(f);
        ok = (fclose(f) == 0) && ok;
    } else {
        close(fd);
    }
    if (!ok && st == NVFP4_OK) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed: %s", path, strerror(errno));
    if (st) nvfp4_file_txn_abort(t);
    return st;
}

nvfp4_status nvfp4_file_txn_commit(nvfp4_file_txn *t, nvfp4_error *err)
{
    /* checked again: the destination may have changed while the file was written */
    nvfp4_status st = nvfp4_file_check_destination(t->dest, err);
    if (!st && rename(t->tmp, t->dest) != 0)
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot rename into place: %s", t->dest, strerror(errno));
    if (!st) {
        free(t->tmp); /* renamed: nothing to remove */
        t->tmp = NULL;
    }
    nvfp4_file_txn_abort(t);
    return st;
}

void nvfp4_file_txn_abort(nvfp4_file_txn *t)
{
    if (t->tmp) (void)unlink(t->tmp);
    io_temp_unregister(t->slot);
    free(t->tmp);
    free(t->dest);
    memset(t, 0, sizeof *t);
    t->slot = -1;
}

nvfp4_status nvfp4_file_write_atomic_with(const char *path, nvfp4_file_writer write, void *ctx, nvfp4_error *err)
{
    nvfp4_file_txn t;
    nvfp4_status st = nvfp4_file_txn_write(&t, path, write, ctx, err);
    return st ? st : nvfp4_file_txn_commit(&t, err);
}

typedef struct {
    const void *buf;
    size_t len;
} io_bytes;

static nvfp4_status write_bytes(FILE *f, void *ctx, nvfp4_error *err)
{
    const io_bytes *b = ctx;
    (void)err; /* a short write shows as a stream error, reported by the caller */
    if (b->len) (void)fwrite(b->buf, 1, b->len, f);
    return NVFP4_OK;
}

nvfp4_status nvfp4_file_write_atomic(const char *path, const void *buf, size_t len, nvfp4_error *err)
{
    io_bytes b = {buf, len};
    return nvfp4_file_write_atomic_with(path, write_bytes, &b, err);
}

void nvfp4_sha256_hex(const void *buf, size_t len, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
}

/* Streams the file through the digest in 1 MiB pieces: hashing a large
 * tensor file costs no memory of its size. */
nvfp4_status nvfp4_sha256_file(const char *path, char hex[65], nvfp4_error *err)
{
    struct stat st;
    FILE *f = io_open_regular(path, &st, err);
    if (!f) return NVFP4_EIO;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    size_t cap = (size_t)1 << 20;
    unsigned char *buf = malloc(cap);
    nvfp4_status rc = NVFP4_OK;
    if (!md || !buf || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
        rc = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    size_t got;
    while (!rc && (got = fread(buf, 1, cap, f)) > 0)
        if (EVP_DigestUpdate(md, buf, got) != 1) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: hashing failed", path);
    if (!rc && ferror(f)) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    unsigned char out[32];
    unsigned int outlen = 0;
    if (!rc && EVP_DigestFinal_ex(md, out, &outlen) != 1) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: hashing failed", path);
    if (!rc)
        for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    if (!rc) hex[64] = '\0';
    EVP_MD_CTX_free(md);
    free(buf);
    fclose(f);
    return rc;
}
