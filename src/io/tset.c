/* tset.c - the in-memory tensor set: tensors and metadata added, found and
 * removed, and the tensor names checked for duplicates. It reads and writes
 * no files (the readers and writers in this folder fill and walk it). */
#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

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
