/* safetensors.c - the .safetensors format: an 8-byte little-endian header
 * length N, N bytes of JSON ({"name": {"dtype", "shape", "data_offsets"},
 * "__metadata__": {string: string}}), then the data. Offsets are relative to
 * the end of the header. We accept exactly what the reference implementation
 * (huggingface/safetensors, safetensors/src/tensor.rs: validate) accepts:
 * tensors tile the data area from 0 to its end without holes or overlaps,
 * and each tensor's byte count equals prod(shape) * dtype size. */
#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

nvfp4_status io_json_shape(const json_t *arr, const char *fname, const char *tname, unsigned *ndim,
                           size_t *shape, nvfp4_error *err)
{
    if (!json_is_array(arr))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': shape is not an array", fname, tname);
    size_t n = json_array_size(arr);
    if (n > NVFP4_MAX_DIMS)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': %zu dimensions (at most %d)", fname, tname, n,
                               NVFP4_MAX_DIMS);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': shape[%zu] is not a non-negative integer",
                                   fname, tname, i);
        unsigned long long u = (unsigned long long)json_integer_value(v);
        if (u > SIZE_MAX)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': shape[%zu] overflows", fname, tname, i);
        shape[i] = (size_t)u;
    }
    *ndim = (unsigned)n;
    return NVFP4_OK;
}

json_t *io_json_shape_new(unsigned ndim, const size_t *shape)
{
    json_t *a = json_array();
    for (unsigned d = 0; d < ndim; d++) json_array_append_new(a, json_integer((json_int_t)shape[d]));
    return a;
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

typedef struct {
    const char *name;
    nvfp4_tdtype dtype;
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
    size_t begin, end;
} st_entry;

static int cmp_entry(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

static nvfp4_status parse_metadata(const json_t *md, const char *fname, nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (!json_is_object(md))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: __metadata__ is not an object", fname);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)md, k, v) {
        if (!json_is_string(v))
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: __metadata__ value of '%s' is not a string", fname, k);
        nvfp4_status st = io_tset_meta_append(out, k, json_string_value(v), err); /* keys unique */
        if (st) return st;
    }
    return NVFP4_OK;
}

static nvfp4_status parse_entry(const char *name, const json_t *v, const char *fname, size_t data_len,
                                st_entry *e, nvfp4_error *err)
{
    if (!*name) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor with an empty name", fname);
    if (!json_is_object(v))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': entry is not an object", fname, name);
    if (json_object_size(v) != 3)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': expected exactly dtype, shape, data_offsets",
                               fname, name);
    const json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
                 *off = json_object_get(v, "data_offsets");
    if (!json_is_string(dt))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': dtype missing or not a string", fname, name);
    e->name = name;
    if (!nvfp4_tdtype_parse(json_string_value(dt), &e->dtype))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': unknown dtype '%s'", fname, name,
                               json_string_value(dt));
    if (!sh) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': shape missing", fname, name);
    nvfp4_status st = io_json_shape(sh, fname, name, &e->ndim, e->shape, err);
    if (st) return st;
    if (!json_is_array(off) || json_array_size(off) != 2 || !json_is_integer(json_array_get(off, 0)) ||
        !json_is_integer(json_array_get(off, 1)))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': data_offsets is not [begin, end]", fname, name);
    json_int_t b = json_integer_value(json_array_get(off, 0)), en = json_integer_value(json_array_get(off, 1));
    if (b < 0 || en < b || (unsigned long long)en > (unsigned long long)data_len)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: tensor '%s': data_offsets [%lld, %lld] outside the data area (%zu bytes)", fname,
                               name, (long long)b, (long long)en, data_len);
    e->begin = (size_t)b;
    e->end = (size_t)en;
    size_t bytes;
    if (!io_shape_bytes(e->dtype, e->ndim, e->shape, &bytes)) {
        char why[256];
        io_shape_why(e->dtype, e->ndim, e->shape, why, sizeof why);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s': %s", fname, name, why);
    }
    if (bytes != e->end - e->begin)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: tensor '%s': shape and dtype need %zu bytes but data_offsets span %zu", fname, name,
                               bytes, e->end - e->begin);
    return NVFP4_OK;
}

/* Sorted by offset, the tensors must tile [0, data_len) exactly. */
static nvfp4_status check_tiling(st_entry *e, size_t n, const char *fname, size_t data_len, nvfp4_error *err)
{
    qsort(e, n, sizeof *e, cmp_entry);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].begin < pos)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s' overlaps tensor '%s'", fname, e[i].name,
                                   e[i - 1].name);
        if (e[i].begin > pos)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: hole in the data area before tensor '%s' (offset %zu)",
                                   fname, e[i].name, pos);
        pos = e[i].end;
    }
    if (pos != data_len)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: data area has %zu bytes but the tensors cover %zu", fname,
                               data_len, pos);
    return NVFP4_OK;
}

/* data: the data area in memory, or NULL to read it from f (positioned at
 * its start), each tensor straight into its own buffer. */
static nvfp4_status parse_header(const json_t *root, const char *fname, const uint8_t *data, FILE *f, size_t data_len,
                                 nvfp4_tensor_set *out, nvfp4_error *err)
{
    size_t n = json_object_size(root);
    st_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    size_t ne = 0;
    nvfp4_status st = NVFP4_OK;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)root, k, v) {
        if (strcmp(k, "__metadata__") == 0) st = parse_metadata(v, fname, out, err);
        else st = parse_entry(k, v, fname, data_len, &e[ne++], err);
        if (st) break;
    }
    if (!st) st = check_tiling(e, ne, fname, data_len, err);
    for (size_t i = 0; !st && i < ne; i++) { /* in offset order: the file is read front to back */
        nvfp4_tensor *t = NULL;
        st = io_tset_add_unique(out, e[i].name, e[i].dtype, e[i].ndim, e[i].shape, data ? data + e[i].begin : NULL,
                                &t, err);
        if (!st && !data && t->nbytes && fread(t->data, 1, t->nbytes, f) != t->nbytes)
            st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", fname);
    }
    free(e);
    return st;
}

/* The number of ':' outside JSON strings: the key/value pairs of every
 * object. A scan costs a fraction of a second on a 100 MB header, while
 * building the objects of a header of small entries costs far more time and
 * memory (jansson: ~7 s and ~2 GB for 1.5 M entries), so the count decides
 * before the parse. Malformed JSON is left to the parser's message. */
static size_t json_pairs_outside_strings(const char *s, size_t n)
{
    size_t pairs = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') in_string = true;
        else if (c == ':') pairs++;
    }
    return pairs;
}

/* buf holds the first `have` bytes of a file of len bytes: all of it, or
 * (f not NULL) the 8-byte length and the header, the rest read from f. */
static nvfp4_status parse_file(const uint8_t *buf, size_t have, size_t len, FILE *f, const char *fname,
                               nvfp4_tensor_set *out, nvfp4_error *err)
{
    if (len < 8 || have < 8)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: too short for the 8-byte header length (%zu bytes)", fname,
                               len);
    uint64_t hlen = load_le64(buf);
    if (hlen < 2 || hlen > IO_MAX_HEADER)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header length %llu is not a safetensors header (2..%zu)",
                               fname, (unsigned long long)hlen, IO_MAX_HEADER);
    if (hlen > len - 8)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated: header length %llu but only %zu bytes follow",
                               fname, (unsigned long long)hlen, len - 8);
    if (have < 8 + hlen) return nvfp4_error_set(err, NVFP4_EIO, "%s: read error", fname);
    if (buf[8] != '{')
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header does not start with '{' (not a safetensors file?)",
                               fname);
    size_t pairs = json_pairs_outside_strings((const char *)buf + 8, (size_t)hlen);
    if (pairs > IO_MAX_HEADER_PAIRS)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: header has %zu JSON key/value pairs, more than the %zu this reader accepts "
                               "(about %zu tensors)",
                               fname, pairs, IO_MAX_HEADER_PAIRS, IO_MAX_HEADER_PAIRS / 4);
    json_error_t je;
    /* JSON_REJECT_DUPLICATES: the keys (tensor names) are unique, checked by
     * jansson's hash table, so parse_header adds them without a search. */
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header is not valid JSON: %s (at byte %d)", fname, je.text,
                               je.position);
    nvfp4_status st;
    if (!json_is_object(root)) st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header is not a JSON object", fname);
    else {
        nvfp4_tensor_set tmp;
        nvfp4_tset_init(&tmp);
        st = parse_header(root, fname, f ? NULL : buf + 8 + hlen, f, len - 8 - (size_t)hlen, &tmp, err);
        if (st) nvfp4_tset_free(&tmp);
        else {
            nvfp4_tset_free(out);
            *out = tmp;
        }
    }
    json_decref(root);
    return st;
}

nvfp4_status nvfp4_safetensors_parse(const uint8_t *buf, size_t len, const char *fname, nvfp4_tensor_set *out,
                                     nvfp4_error *err)
{
    return parse_file(buf, len, len, NULL, fname, out, err);
}

/* Reads the header, then each tensor straight into its buffer: the file is
 * never held twice in memory. */
nvfp4_status nvfp4_safetensors_read(const char *path, nvfp4_tensor_set *out, nvfp4_error *err)
{
    struct stat fst;
    FILE *f = io_open_regular(path, &fst, err);
    if (!f) return NVFP4_EIO;
    size_t len = (size_t)fst.st_size, have = len < 8 ? len : 8;
    uint8_t pre[8], *b = pre;
    nvfp4_status st = NVFP4_OK;
    if (fread(pre, 1, have, f) != have) st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    uint64_t hlen = have == 8 ? load_le64(pre) : 0;
    if (!st && hlen >= 2 && hlen <= IO_MAX_HEADER && hlen <= len - 8) {
        b = malloc(8 + (size_t)hlen);
        if (!b) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
        else {
            memcpy(b, pre, 8);
            if (fread(b + 8, 1, (size_t)hlen, f) != hlen) st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
            have = 8 + (size_t)hlen;
        }
    }
    if (!st) st = parse_file(b, have, len, f, path, out, err);
    if (b != pre) free(b);
    fclose(f);
    return st;
}

/* Written order: larger elements first, then by name (as the Python writer
 * does), so every tensor is aligned to its element size. */
static int cmp_write_order(const void *a, const void *b)
{
    const nvfp4_tensor *x = *(const nvfp4_tensor *const *)a, *y = *(const nvfp4_tensor *const *)b;
    size_t sx = nvfp4_tdtype_size(x->dtype), sy = nvfp4_tdtype_size(y->dtype);
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->name, y->name);
}

typedef struct {
    const uint8_t *hdr;
    size_t hlen;
    const nvfp4_tensor **order;
    size_t count;
} st_stream;

static nvfp4_status write_st_stream(FILE *f, void *ctx, nvfp4_error *err)
{
    const st_stream *w = ctx;
    (void)err; /* a short write shows as a stream error, reported by the atomic writer */
    (void)fwrite(w->hdr, 1, w->hlen, f);
    for (size_t i = 0; i < w->count; i++)
        if (w->order[i]->nbytes) (void)fwrite(w->order[i]->data, 1, w->order[i]->nbytes, f);
    return NVFP4_OK;
}

nvfp4_status nvfp4_safetensors_write(const char *path, const nvfp4_tensor_set *s, nvfp4_error *err)
{
    const nvfp4_tensor **order = calloc(s->count ? s->count : 1, sizeof *order);
    if (!order) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < s->count; i++) order[i] = &s->tensors[i];
    qsort(order, s->count, sizeof *order, cmp_write_order);

    json_t *root = json_object();
    if (s->meta_count) {
        json_t *md = json_object();
        for (size_t i = 0; i < s->meta_count; i++)
            json_object_set_new(md, s->meta[i].key, json_string(s->meta[i].value));
        json_object_set_new(root, "__metadata__", md);
    }
    size_t pos = 0;
    for (size_t i = 0; i < s->count; i++) {
        const nvfp4_tensor *t = order[i];
        json_t *e = json_object();
        json_object_set_new(e, "dtype", json_string(nvfp4_tdtype_name(t->dtype)));
        json_object_set_new(e, "shape", io_json_shape_new(t->ndim, t->shape));
        json_t *off = json_array();
        json_array_append_new(off, json_integer((json_int_t)pos));
        json_array_append_new(off, json_integer((json_int_t)(pos + t->nbytes)));
        json_object_set_new(e, "data_offsets", off);
        json_object_set_new(root, t->name, e);
        pos += t->nbytes;
    }
    char *hdr = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    nvfp4_status st = NVFP4_OK;
    uint8_t *buf = NULL;
    if (!hdr) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: cannot encode the header", path);
    size_t hlen = 0;
    if (!st) {
        /* Pad the header with spaces so the data area starts 8-aligned. */
        hlen = (strlen(hdr) + 7) / 8 * 8;
        buf = malloc(8 + hlen);
        if (!buf) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory (%zu bytes)", path, 8 + hlen);
    }
    if (!st) {
        for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
        memset(buf + 8, ' ', hlen);
        memcpy(buf + 8, hdr, strlen(hdr));
        /* The header, then each tensor from its own buffer: no copy of the data. */
        st_stream w = {buf, 8 + hlen, order, s->count};
        st = nvfp4_file_write_atomic_with(path, write_st_stream, &w, err);
    }
    free(buf);
    free(hdr);
    free(order);
    return st;
}

void nvfp4_st_index_free(nvfp4_st_index *ix)
{
    if (!ix) return;
    for (size_t i = 0; i < ix->count; i++) free(ix->entries[i].name);
    free(ix->entries);
    ix->entries = NULL;
    ix->count = 0;
}

/* The entries of a parsed header, validated as parse_header validates them,
 * copied out with absolute offsets (data_start + begin). */
static nvfp4_status index_from_header(const json_t *root, const char *fname, size_t data_start, size_t data_len,
                                      nvfp4_st_index *out, nvfp4_error *err)
{
    size_t n = json_object_size(root);
    st_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    size_t ne = 0;
    nvfp4_status st = NVFP4_OK;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)root, k, v) {
        if (strcmp(k, "__metadata__") == 0) continue;
        st = parse_entry(k, v, fname, data_len, &e[ne++], err);
        if (st) break;
    }
    if (!st) st = check_tiling(e, ne, fname, data_len, err);
    if (!st) {
        out->entries = calloc(ne ? ne : 1, sizeof *out->entries);
        if (!out->entries) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    }
    for (size_t i = 0; !st && i < ne; i++) {
        nvfp4_st_entry *o = &out->entries[i];
        o->name = strdup(e[i].name);
        if (!o->name) {
            st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
            break;
        }
        out->count = i + 1;
        o->dtype = e[i].dtype;
        o->ndim = e[i].ndim;
        memcpy(o->shape, e[i].shape, sizeof o->shape);
        o->offset = data_start + e[i].begin;
        o->nbytes = e[i].end - e[i].begin;
    }
    free(e);
    return st;
}

nvfp4_status nvfp4_safetensors_read_index(const char *path, nvfp4_st_index *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat fst;
    FILE *f = io_open_regular(path, &fst, err);
    if (!f) return NVFP4_EIO;
    size_t len = (size_t)fst.st_size;
    out->file_size = len;
    uint8_t pre[8];
    char *hdr = NULL;
    nvfp4_status st = NVFP4_OK;
    uint64_t hlen = 0;
    if (len < 8 || fread(pre, 1, 8, f) != 8)
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: too short for the 8-byte header length (%zu bytes)", path, len);
    if (!st) {
        hlen = load_le64(pre);
        if (hlen < 2 || hlen > IO_MAX_HEADER)
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header length %llu is not a safetensors header (2..%zu)",
                                 path, (unsigned long long)hlen, IO_MAX_HEADER);
        else if (hlen > len - 8)
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated: header length %llu but only %zu bytes follow",
                                 path, (unsigned long long)hlen, len - 8);
    }
    if (!st && !(hdr = malloc((size_t)hlen))) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    if (!st && fread(hdr, 1, (size_t)hlen, f) != hlen) st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    fclose(f);
    if (!st && hdr[0] != '{')
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header does not start with '{' (not a safetensors file?)", path);
    if (!st && json_pairs_outside_strings(hdr, (size_t)hlen) > IO_MAX_HEADER_PAIRS)
        st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header has more JSON key/value pairs than the %zu this reader "
                             "accepts", path, IO_MAX_HEADER_PAIRS);
    json_t *root = NULL;
    if (!st) {
        json_error_t je;
        root = json_loadb(hdr, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header is not valid JSON: %s (at byte %d)", path, je.text,
                                 je.position);
        else if (!json_is_object(root))
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: header is not a JSON object", path);
    }
    if (!st) st = index_from_header(root, path, 8 + (size_t)hlen, len - 8 - (size_t)hlen, out, err);
    if (st) nvfp4_st_index_free(out);
    json_decref(root);
    free(hdr);
    return st;
}
