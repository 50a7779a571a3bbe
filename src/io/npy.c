/* npy.c - numpy's .npy format (numpy/lib/format.py, versions 1.0, 2.0 and
 * 3.0): "\x93NUMPY", major, minor, a 2-byte (1.0) or 4-byte (2.0, 3.0)
 * little-endian header length, a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (R, C), } padded with
 * spaces and a newline, then the data. We read little-endian (or
 * byte-order-free) integer and float types in C order only; BF16 has no
 * numpy dtype and is written as '<u2'. The dict is parsed by a small strict
 * parser for exactly this literal (it is not JSON, so no JSON library fits). */
#include "io_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *descr;
    nvfp4_tdtype dtype;
} descr_table[] = {
    {"<f8", NVFP4_T_F64}, {"<f4", NVFP4_T_F32}, {"<f2", NVFP4_T_F16}, {"<i8", NVFP4_T_I64},
    {"<i4", NVFP4_T_I32}, {"<i2", NVFP4_T_I16}, {"|i1", NVFP4_T_I8},  {"<i1", NVFP4_T_I8},
    {"<u8", NVFP4_T_U64}, {"<u4", NVFP4_T_U32}, {"<u2", NVFP4_T_U16}, {"|u1", NVFP4_T_U8},
    {"<u1", NVFP4_T_U8},
};

static const char *descr_of(nvfp4_tdtype t)
{
    if (t == NVFP4_T_BF16) return "<u2";
    for (size_t i = 0; i < sizeof descr_table / sizeof descr_table[0]; i++)
        if (descr_table[i].dtype == t) return descr_table[i].descr;
    return NULL;
}

/* ---- the header dict ------------------------------------------------------ */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes, copied into out[n]. */
static bool read_str(cursor *c, char *out, size_t n)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || k + 1 >= n) return false;
        out[k++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    out[k] = '\0';
    return true;
}

static bool read_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return false;
    c->p += n;
    return true;
}

static bool read_size(cursor *c, size_t *out)
{
    skip_ws(c);
    if (c->p >= c->end || !isdigit((unsigned char)*c->p)) return false;
    size_t v = 0;
    while (c->p < c->end && isdigit((unsigned char)*c->p)) {
        size_t d = (size_t)(*c->p - '0');
        if (v > (SIZE_MAX - d) / 10) return false;
        v = v * 10 + d;
        c->p++;
    }
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 longs */
    *out = v;
    return true;
}

typedef struct {
    char descr[32];
    bool fortran;
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
} npy_header;

static nvfp4_status read_shape(cursor *c, const char *fname, npy_header *h, nvfp4_error *err)
{
    if (!eat(c, '(')) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: shape is not a tuple", fname);
    h->ndim = 0;
    if (eat(c, ')')) return NVFP4_OK;
    for (;;) {
        if (h->ndim == NVFP4_MAX_DIMS)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: more than %d dimensions", fname,
                                   NVFP4_MAX_DIMS);
        if (!read_size(c, &h->shape[h->ndim]))
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: shape entry is not a non-negative integer"
                                   " (or overflows)", fname);
        h->ndim++;
        bool comma = eat(c, ',');
        if (eat(c, ')')) break;
        if (!comma) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: malformed shape tuple", fname);
    }
    return NVFP4_OK;
}

static nvfp4_status parse_dict(const char *txt, size_t n, const char *fname, npy_header *h, nvfp4_error *err)
{
    cursor c = {txt, txt + n};
    bool seen_d = false, seen_f = false, seen_s = false;
    if (!eat(&c, '{')) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header is not a dict", fname);
    while (!eat(&c, '}')) {
        char key[32];
        if (!read_str(&c, key, sizeof key) || !eat(&c, ':'))
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: malformed dict", fname);
        nvfp4_status st = NVFP4_OK;
        if (strcmp(key, "descr") == 0 && !seen_d) {
            seen_d = true;
            if (!read_str(&c, h->descr, sizeof h->descr))
                st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: descr is not a simple dtype string "
                                     "(structured dtypes are not supported)", fname);
        } else if (strcmp(key, "fortran_order") == 0 && !seen_f) {
            seen_f = true;
            if (read_word(&c, "True")) h->fortran = true;
            else if (read_word(&c, "False")) h->fortran = false;
            else st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: fortran_order is not True/False", fname);
        } else if (strcmp(key, "shape") == 0 && !seen_s) {
            seen_s = true;
            st = read_shape(&c, fname, h, err);
        } else {
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: unexpected or repeated key '%s'", fname, key);
        }
        if (st) return st;
        if (!eat(&c, ',')) {
            if (eat(&c, '}')) break;
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: malformed dict", fname);
        }
    }
    skip_ws(&c);
    if (c.p != c.end) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: junk after the dict", fname);
    if (!seen_d || !seen_f || !seen_s)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header: needs descr, fortran_order and shape", fname);
    return NVFP4_OK;
}

static nvfp4_status dtype_of_descr(const char *descr, const char *fname, nvfp4_tdtype *out, nvfp4_error *err)
{
    for (size_t i = 0; i < sizeof descr_table / sizeof descr_table[0]; i++)
        if (strcmp(descr, descr_table[i].descr) == 0) {
            *out = descr_table[i].dtype;
            return NVFP4_OK;
        }
    if (descr[0] == '>')
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: big-endian dtype '%s' is not supported (use '<')", fname,
                               descr);
    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: unsupported npy dtype '%s'", fname, descr);
}

/* Where the array lies in a .npy of len bytes, from its first `have` bytes
 * (at least the preamble and header when they fit in len): every check of
 * the format, so the file reader needs only the header in memory. */
typedef struct {
    nvfp4_tdtype dt;
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
    size_t data_off, bytes;
} npy_layout;

/* The preamble plus header length of a .npy (0 if buf has no valid preamble). */
static size_t npy_header_end(const uint8_t *buf, size_t have)
{
    if (have < 12 || memcmp(buf, "\x93NUMPY", 6) != 0 || buf[6] < 1 || buf[6] > 3) return 0;
    size_t pre = buf[6] == 1 ? 10 : 12;
    size_t hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                              : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    return pre + hlen;
}

static nvfp4_status npy_layout_of(const uint8_t *buf, size_t have, size_t len, const char *fname, npy_layout *L,
                                  nvfp4_error *err)
{
    if (have < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a .npy file (bad magic)", fname);
    unsigned major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: unsupported .npy version %u.%u", fname, major, minor);
    size_t pre = major == 1 ? 10 : 12;
    if (have < pre) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated .npy preamble", fname);
    size_t hlen = major == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                             : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    if (hlen > len - pre)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated: header length %zu but only %zu bytes follow",
                               fname, hlen, len - pre);
    if (hlen > IO_MAX_HEADER) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: npy header too long", fname);
    if (hlen > have - pre) return nvfp4_error_set(err, NVFP4_EIO, "%s: read error", fname);
    npy_header h;
    memset(&h, 0, sizeof h);
    nvfp4_status st = parse_dict((const char *)buf + pre, hlen, fname, &h, err);
    if (st) return st;
    if (h.fortran)
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: fortran_order True is not supported: save a C-order array "
                               "(np.save(f, np.ascontiguousarray(a)))", fname);
    L->dt = NVFP4_T_U8;
    st = dtype_of_descr(h.descr, fname, &L->dt, err);
    if (st) return st;
    if (!io_shape_bytes(L->dt, h.ndim, h.shape, &L->bytes)) {
        char why[256];
        io_shape_why(L->dt, h.ndim, h.shape, why, sizeof why);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %s", fname, why);
    }
    size_t avail = len - pre - hlen;
    if (avail < L->bytes)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated data: shape needs %zu bytes, file has %zu", fname,
                               L->bytes, avail);
    if (avail > L->bytes)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: %zu bytes of trailing data after the array", fname,
                               avail - L->bytes);
    L->ndim = h.ndim;
    memcpy(L->shape, h.shape, sizeof L->shape);
    L->data_off = pre + hlen;
    return NVFP4_OK;
}

nvfp4_status nvfp4_npy_parse(const uint8_t *buf, size_t len, const char *fname, const char *name,
                             nvfp4_tensor_set *out, nvfp4_error *err)
{
    npy_layout L;
    nvfp4_status st = npy_layout_of(buf, len, len, fname, &L, err);
    if (st) return st;
    return nvfp4_tset_add(out, name, L.dt, L.ndim, L.shape, buf + L.data_off, NULL, err);
}

/* Reads the header, then the array straight into the tensor: the file is
 * never held twice (peak memory one copy of the data, not two). */
nvfp4_status nvfp4_npy_read(const char *path, const char *name, nvfp4_tensor_set *out, nvfp4_error *err)
{
    struct stat fst;
    FILE *f = io_open_regular(path, &fst, err);
    if (!f) return NVFP4_EIO;
    size_t len = (size_t)fst.st_size, have = len < 12 ? len : 12;
    uint8_t pre[12], *hdr = pre;
    nvfp4_status st = NVFP4_OK;
    if (fread(pre, 1, have, f) != have) st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    size_t end = st ? 0 : npy_header_end(pre, have);
    if (!st && end > have && end <= len && end - 12 <= IO_MAX_HEADER) {
        hdr = malloc(end);
        if (!hdr) st = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
        else {
            memcpy(hdr, pre, have);
            if (fread(hdr + have, 1, end - have, f) != end - have)
                st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
            have = end;
        }
    }
    npy_layout L;
    nvfp4_tensor *t = NULL;
    if (!st) st = npy_layout_of(hdr, have, len, path, &L, err);
    if (!st) st = nvfp4_tset_add(out, name, L.dt, L.ndim, L.shape, NULL, &t, err);
    if (!st && L.bytes && fread(t->data, 1, L.bytes, f) != L.bytes) {
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
        nvfp4_tset_remove(out, name);
    }
    if (hdr != pre) free(hdr);
    fclose(f);
    return st;
}

typedef struct {
    const uint8_t *hdr;
    size_t hlen;
    const nvfp4_tensor *t;
} npy_stream;

static nvfp4_status write_npy_stream(FILE *f, void *ctx, nvfp4_error *err)
{
    const npy_stream *w = ctx;
    (void)err; /* a short write shows as a stream error, reported by the atomic writer */
    (void)fwrite(w->hdr, 1, w->hlen, f);
    if (w->t->nbytes) (void)fwrite(w->t->data, 1, w->t->nbytes, f);
    return NVFP4_OK;
}

nvfp4_status nvfp4_npy_write(const char *path, const nvfp4_tensor *t, nvfp4_error *err)
{
    const char *descr = descr_of(t->dtype);
    if (!descr) return nvfp4_error_set(err, NVFP4_EINVAL, "%s: dtype %s has no npy equivalent", path,
                                       nvfp4_tdtype_name(t->dtype));
    char dict[512];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (unsigned d = 0; d < t->ndim; d++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%zu,%s", t->shape[d], d + 1 < t->ndim ? " " : "");
    if (t->ndim > 1) k--; /* numpy writes (3, 4) but (3,) */
    k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
    /* Pad with spaces and a newline so the data starts 64-aligned (numpy). */
    size_t total_hdr = ((size_t)10 + (size_t)k + 1 + 63) / 64 * 64;
    size_t hlen = total_hdr - 10;
    uint8_t buf[640]; /* the dict is under 512 bytes: the header fits */
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, (size_t)k);
    buf[total_hdr - 1] = '\n';
    /* The data go from the tensor to the file: no copy of the array. */
    npy_stream w = {buf, total_hdr, t};
    return nvfp4_file_write_atomic_with(path, write_npy_stream, &w, err);
}
