/* check_io.c - the file formats (docs/file-formats.md): round trips of the
 * tensor set through safetensors, .npy, npy folders and bin folders; every
 * class of malformed input gives the expected status and a message naming
 * the file and the problem; overflowing shapes; writers leave no file
 * behind when they fail. */
#include <check.h>
#include "support/check_main.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4.h"
#include "nvfp4/io.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/check_io.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_rf(const char *p)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    ck_assert_int_eq(system(cmd), 0);
}

static void teardown_tmp(void) { rm_rf(tmpdir); }

static char *path_in(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

/* Number of entries in a folder (without . and ..). */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* A sample set: F32 [2,3], BF16 [4], U8 [5], I32 [0] and two metadata keys. */
static void sample_set(nvfp4_tensor_set *s)
{
    nvfp4_tset_init(s);
    float f[6] = {1.0f, -2.5f, 0.0f, -0.0f, 448.0f, 1e-40f};
    uint16_t b[4] = {0x3f80, 0xc000, 0x7f80, 0x0001};
    uint8_t u[5] = {0, 1, 0x7f, 0x80, 0xff};
    size_t s23[2] = {2, 3}, s4[1] = {4}, s5[1] = {5}, s0[1] = {0};
    ck_assert_int_eq(nvfp4_tset_add(s, "x", NVFP4_T_F32, 2, s23, f, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(s, "b", NVFP4_T_BF16, 1, s4, b, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(s, "data", NVFP4_T_U8, 1, s5, u, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(s, "empty", NVFP4_T_I32, 1, s0, NULL, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_meta_set(s, "recipe", "te", NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_meta_set(s, "seed", "42", NULL), NVFP4_OK);
}

static void assert_same_sets(const nvfp4_tensor_set *a, const nvfp4_tensor_set *b, bool meta)
{
    ck_assert_uint_eq(a->count, b->count);
    for (size_t i = 0; i < a->count; i++) {
        const nvfp4_tensor *x = &a->tensors[i], *y = nvfp4_tset_find(b, x->name);
        ck_assert_ptr_nonnull(y);
        ck_assert_int_eq(x->dtype, y->dtype);
        ck_assert_uint_eq(x->ndim, y->ndim);
        for (unsigned d = 0; d < x->ndim; d++) ck_assert_uint_eq(x->shape[d], y->shape[d]);
        ck_assert_uint_eq(x->nbytes, y->nbytes);
        ck_assert_int_eq(memcmp(x->data, y->data, x->nbytes), 0);
    }
    if (meta) {
        ck_assert_uint_eq(a->meta_count, b->meta_count);
        for (size_t i = 0; i < a->meta_count; i++)
            ck_assert_str_eq(a->meta[i].value, nvfp4_tset_meta_get(b, a->meta[i].key));
    }
}

/* ---- round trips ------------------------------------------------------------ */

START_TEST(safetensors_round_trip)
{
    nvfp4_tensor_set s, r;
    sample_set(&s);
    nvfp4_tset_init(&r);
    nvfp4_error err;
    const char *p = path_in("a.safetensors");
    ck_assert_int_eq(nvfp4_safetensors_write(p, &s, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_read(p, &r, &err), NVFP4_OK);
    assert_same_sets(&s, &r, true);
    /* Layout: header length a multiple of 8; F32 first (larger elements first). */
    uint8_t *b;
    size_t n;
    ck_assert_int_eq(nvfp4_file_read_all(p, 1 << 20, &b, &n, &err), NVFP4_OK);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) h = h << 8 | b[i];
    ck_assert_uint_eq(h % 8, 0);
    ck_assert_uint_eq(n, 8 + h + 24 + 8 + 5 + 0);
    float first;
    memcpy(&first, b + 8 + h, 4);
    ck_assert_float_eq(first, 1.0f);
    free(b);
    ck_assert_int_eq(count_entries(tmpdir), 1); /* no temporary file left */
    nvfp4_tset_free(&s);
    nvfp4_tset_free(&r);
}
END_TEST

START_TEST(safetensors_write_is_deterministic)
{
    nvfp4_tensor_set s;
    sample_set(&s);
    char h1[65], h2[65];
    ck_assert_int_eq(nvfp4_safetensors_write(path_in("1.safetensors"), &s, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_safetensors_write(path_in("2.safetensors"), &s, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_sha256_file(path_in("1.safetensors"), h1, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_sha256_file(path_in("2.safetensors"), h2, NULL), NVFP4_OK);
    ck_assert_str_eq(h1, h2);
    nvfp4_tset_free(&s);
}
END_TEST

START_TEST(sha256_known_answer)
{
    char hex[65];
    nvfp4_sha256_hex("abc", 3, hex); /* FIPS 180-2 example */
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(npy_round_trip_each_dtype)
{
    nvfp4_tensor_set s;
    sample_set(&s);
    for (size_t i = 0; i < s.count; i++) {
        const nvfp4_tensor *t = &s.tensors[i];
        char name[64];
        snprintf(name, sizeof name, "%s.npy", t->name);
        nvfp4_error err;
        ck_assert_int_eq(nvfp4_npy_write(path_in(name), t, &err), NVFP4_OK);
        nvfp4_tensor_set r;
        nvfp4_tset_init(&r);
        ck_assert_int_eq(nvfp4_npy_read(path_in(name), t->name, &r, &err), NVFP4_OK);
        const nvfp4_tensor *u = &r.tensors[0];
        /* BF16 has no numpy dtype: it comes back as U16 with the same bits. */
        ck_assert_int_eq(u->dtype, t->dtype == NVFP4_T_BF16 ? NVFP4_T_U16 : t->dtype);
        ck_assert_uint_eq(u->ndim, t->ndim);
        ck_assert_uint_eq(u->nbytes, t->nbytes);
        ck_assert_int_eq(memcmp(u->data, t->data, t->nbytes), 0);
        nvfp4_tset_free(&r);
    }
    /* The header is what numpy writes: 64-byte aligned, '(2, 3)'. */
    uint8_t *b;
    size_t n;
    ck_assert_int_eq(nvfp4_file_read_all(path_in("x.npy"), 1 << 20, &b, &n, NULL), NVFP4_OK);
    ck_assert_uint_eq(n, 128 + 24); /* 10 + 60-char dict + newline, padded to 128 */
    ck_assert_ptr_nonnull(strstr((char *)b + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    ck_assert_int_eq(b[127], '\n');
    free(b);
    nvfp4_tset_free(&s);
}
END_TEST

static void dir_round_trip(nvfp4_file_format fmt)
{
    nvfp4_tensor_set s, r;
    sample_set(&s);
    nvfp4_tset_init(&r);
    nvfp4_error err;
    const char *d = path_in("bundle.d");
    ck_assert_int_eq(nvfp4_tset_write(d, &s, fmt, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_read(d, &r, &err), NVFP4_OK);
    assert_same_sets(&s, &r, true); /* BF16 kept through meta.json */
    ck_assert_int_eq(count_entries(d), 5);
    /* Writing again replaces the folder; nothing else is left in tmpdir. */
    ck_assert_int_eq(nvfp4_tset_write(d, &s, fmt, &err), NVFP4_OK);
    ck_assert_int_eq(count_entries(tmpdir), 1);
    nvfp4_tset_free(&s);
    nvfp4_tset_free(&r);
}

START_TEST(npy_dir_round_trip) { dir_round_trip(NVFP4_FMT_NPY_DIR); }
END_TEST
START_TEST(bin_dir_round_trip) { dir_round_trip(NVFP4_FMT_BIN_DIR); }
END_TEST

/* ---- malformed safetensors --------------------------------------------------- */

/* Writes an 8-byte length (hlen_override if nonzero), the header text and
 * `data_len` bytes of data; reads it back; expects `status` and a message
 * containing the file name and `needle`. */
static void expect_st(const char *header, uint64_t hlen_override, size_t data_len, nvfp4_status status,
                      const char *needle)
{
    size_t h = strlen(header);
    uint64_t hl = hlen_override ? hlen_override : h;
    uint8_t *b = calloc(8 + h + data_len + 1, 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(hl >> (8 * i));
    memcpy(b + 8, header, h);
    const char *p = path_in("bad.safetensors");
    write_bytes(p, b, 8 + h + data_len);
    free(b);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_safetensors_read(p, &s, &err), status);
    ck_assert_msg(strstr(err.message, p) != NULL, "message lacks the file name: %s", err.message);
    ck_assert_msg(strstr(err.message, needle) != NULL, "expected '%s' in: %s", needle, err.message);
    ck_assert_uint_eq(s.count, 0);
    nvfp4_tset_free(&s);
}

START_TEST(safetensors_malformed)
{
    expect_st("{}", 1000, 0, NVFP4_EFORMAT, "truncated: header length 1000");
    expect_st("{}", 1ull << 40, 0, NVFP4_EFORMAT, "is not a safetensors header");
    expect_st("[1,2]", 0, 0, NVFP4_EFORMAT, "does not start with '{'");
    expect_st("{\"x\":", 0, 0, NVFP4_EFORMAT, "not valid JSON");
    expect_st("{\"x\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, 4, NVFP4_EFORMAT,
              "unknown dtype 'F33'");
    expect_st("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4, NVFP4_EFORMAT,
              "need 8 bytes but data_offsets span 4");
    expect_st("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 4, NVFP4_EFORMAT,
              "outside the data area");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[4611686018427387904,8],\"data_offsets\":[0,4]}}", 0, 4,
              NVFP4_EFORMAT, "size in bytes overflows");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 0, 4, NVFP4_EFORMAT,
              "not a non-negative integer");
    /* F4 counts 4-bit elements, two per byte: an odd count is no whole number of bytes (the message said
     * "shape size overflows"); [3, 2] is 6 elements, 3 bytes, and valid, as safetensors counts bits. */
    expect_st("{\"x\":{\"dtype\":\"F4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 0, 1, NVFP4_EFORMAT,
              "tensor 'x': dtype F4 packs two elements per byte, but shape [1] holds 1 element, an odd count");
    expect_st("{\"x\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 0, 2, NVFP4_EFORMAT,
              "shape [3] holds 3 elements, an odd count");
    expect_st("{\"x\":{\"dtype\":\"F4\",\"shape\":[],\"data_offsets\":[0,1]}}", 0, 1, NVFP4_EFORMAT,
              "shape [] holds 1 element, an odd count (no whole number of bytes): a scalar cannot be F4");
    expect_st("{\"x\":{\"dtype\":\"F4\",\"shape\":[3,2],\"data_offsets\":[0,4]}}", 0, 4, NVFP4_EFORMAT,
              "need 3 bytes but data_offsets span 4");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
              "\"y\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}", 0, 6, NVFP4_EFORMAT, "overlaps");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}", 0, 6, NVFP4_EFORMAT, "hole");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 0, 9, NVFP4_EFORMAT,
              "data area has 9 bytes but the tensors cover 4");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
              "\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 0, 2, NVFP4_EFORMAT, "duplicate");
    expect_st("{\"__metadata__\":{\"a\":1}}", 0, 0, NVFP4_EFORMAT, "is not a string");
    expect_st("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":0}}", 0, 1, NVFP4_EFORMAT,
              "expected exactly dtype, shape, data_offsets");
}
END_TEST

START_TEST(safetensors_too_short_and_missing)
{
    const char *p = path_in("short.safetensors");
    write_bytes(p, "\x02\0\0", 3);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_safetensors_read(p, &s, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "too short"));
    ck_assert_int_eq(nvfp4_safetensors_read(path_in("nope.safetensors"), &s, &err), NVFP4_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "nope.safetensors: cannot open"));
    nvfp4_tset_free(&s);
}
END_TEST

/* A FIFO (no writer), a device or a directory is refused without blocking. */
START_TEST(non_regular_files_refused)
{
    const char *fifo = path_in("f.safetensors");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *dir = path_in("d.npy");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    alarm(10); /* a reader that waits on the FIFO fails the test instead of hanging */
    ck_assert_int_eq(nvfp4_safetensors_read(fifo, &s, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, fifo) && strstr(err.message, "is a FIFO"), "%s", err.message);
    ck_assert_int_eq(nvfp4_npy_read(fifo, "x", &s, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "is a FIFO"), "%s", err.message);
    uint8_t *b = NULL;
    size_t n = 0;
    ck_assert_int_eq(nvfp4_file_read_all(fifo, 100, &b, &n, &err), NVFP4_EIO);
    ck_assert_int_eq(nvfp4_file_read_all("/dev/zero", 100, &b, &n, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "/dev/zero: is a character device"), "%s", err.message);
    ck_assert_int_eq(nvfp4_npy_read(dir, "x", &s, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, dir) && strstr(err.message, "is a directory"), "%s", err.message);
    char meta[600];
    snprintf(meta, sizeof meta, "%s/meta.json", dir);
    ck_assert_int_eq(mkfifo(meta, 0600), 0);
    ck_assert_int_eq(nvfp4_tdir_read(dir, &s, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, meta) && strstr(err.message, "is a FIFO"), "%s", err.message);
    alarm(0);
    nvfp4_tset_free(&s);
}
END_TEST

/* A message too long for nvfp4_error is cut in the middle: the start of the
 * path and the problem at the end stay. A long folder path is never cut. */
START_TEST(long_paths_and_messages)
{
    char big[3000];
    memset(big, 'p', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    nvfp4_error err;
    nvfp4_error_set(&err, NVFP4_EIO, "%s/x.npy: the problem", big);
    ck_assert_uint_eq(strlen(err.message), sizeof err.message - 1);
    ck_assert_msg(strstr(err.message, "...") && strstr(err.message, "x.npy: the problem"), "%s", err.message);
    ck_assert_int_eq(err.message[0], 'p');
    /* a folder under a 1,100-character path: written, read back, replaced */
    char dir[1200];
    snprintf(dir, sizeof dir, "%s", tmpdir);
    while (strlen(dir) < 1080) {
        strcat(dir, "/abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz");
        ck_assert_int_eq(mkdir(dir, 0700), 0);
    }
    strcat(dir, "/out");
    nvfp4_tensor_set s, r;
    nvfp4_tset_init(&s);
    nvfp4_tset_init(&r);
    size_t shape[1] = {3};
    const float v[3] = {1, 2, 3};
    ck_assert_int_eq(nvfp4_tset_add(&s, "x", NVFP4_T_F32, 1, shape, v, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tdir_write(dir, &s, NVFP4_FMT_BIN_DIR, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tdir_write(dir, &s, NVFP4_FMT_NPY_DIR, &err), NVFP4_OK);
    ck_assert_msg(nvfp4_tdir_read(dir, &r, &err) == NVFP4_OK, "%s", err.message);
    ck_assert_uint_eq(r.count, 1);
    ck_assert_int_eq(memcmp(r.tensors[0].data, v, sizeof v), 0);
    nvfp4_tset_free(&s);
    nvfp4_tset_free(&r);
}
END_TEST

/* ---- malformed npy -------------------------------------------------------------- */

static void expect_npy(const char *dict, size_t data_len, const char *magic, nvfp4_status status, const char *needle)
{
    uint8_t b[1024] = {0};
    size_t h = strlen(dict);
    memcpy(b, magic, 8);
    b[8] = (uint8_t)h;
    b[9] = 0;
    memcpy(b + 10, dict, h);
    const char *p = path_in("bad.npy");
    write_bytes(p, b, 10 + h + data_len);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_npy_read(p, "x", &s, &err), status);
    ck_assert_msg(strstr(err.message, p) != NULL, "message lacks the file name: %s", err.message);
    ck_assert_msg(strstr(err.message, needle) != NULL, "expected '%s' in: %s", needle, err.message);
    nvfp4_tset_free(&s);
}

START_TEST(npy_malformed)
{
    const char *v1 = "\x93NUMPY\x01\x00";
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "\x93NUMPX\x01\x00",
               NVFP4_EFORMAT, "bad magic");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "\x93NUMPY\x04\x00",
               NVFP4_EFORMAT, "unsupported .npy version 4.0");
    expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", 16, v1, NVFP4_EFORMAT,
               "fortran_order True is not supported");
    expect_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8, v1, NVFP4_EFORMAT,
               "big-endian dtype '>f4'");
    expect_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16, v1, NVFP4_EFORMAT,
               "unsupported npy dtype '<c8'");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", 8, v1, NVFP4_EFORMAT,
               "truncated data: shape needs 12 bytes, file has 8");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 8, v1, NVFP4_EFORMAT,
               "4 bytes of trailing data");
    expect_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n", 0, v1,
               NVFP4_EFORMAT, "size in bytes overflows");
    expect_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999999,), }\n", 0, v1,
               NVFP4_EFORMAT, "overflows");
    expect_npy("{'descr': '<f4', 'shape': (2,), }\n", 8, v1, NVFP4_EFORMAT, "needs descr, fortran_order and shape");
    expect_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, v1,
               NVFP4_EFORMAT, "repeated key 'descr'");
    expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } junk\n", 8, v1, NVFP4_EFORMAT,
               "junk after the dict");
    /* The header length itself runs past the end of the file. */
    uint8_t b[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 200, 0, '{', '}'};
    write_bytes(path_in("t.npy"), b, sizeof b);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_npy_read(path_in("t.npy"), "x", &s, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "truncated: header length 200"));
    nvfp4_tset_free(&s);
}
END_TEST

START_TEST(npy_version2_and_scalar)
{
    /* v2.0 header (4-byte length), 0-d array. */
    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n";
    uint8_t b[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
    size_t h = strlen(dict);
    b[8] = (uint8_t)h;
    memcpy(b + 12, dict, h);
    double v = 1.5;
    memcpy(b + 12 + h, &v, 8);
    write_bytes(path_in("v2.npy"), b, 12 + h + 8);
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    ck_assert_int_eq(nvfp4_npy_read(path_in("v2.npy"), "x", &s, NULL), NVFP4_OK);
    ck_assert_int_eq(s.tensors[0].dtype, NVFP4_T_F64);
    ck_assert_uint_eq(s.tensors[0].ndim, 0);
    ck_assert_uint_eq(s.tensors[0].nbytes, 8);
    nvfp4_tset_free(&s);
}
END_TEST

/* ---- malformed folders ----------------------------------------------------------- */

static void expect_dir_error(const char *dir, nvfp4_status status, const char *needle)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_tdir_read(dir, &s, &err), status);
    ck_assert_msg(strstr(err.message, dir) != NULL, "message lacks the folder: %s", err.message);
    ck_assert_msg(strstr(err.message, needle) != NULL, "expected '%s' in: %s", needle, err.message);
    nvfp4_tset_free(&s);
}

static void write_meta(const char *dir, const char *json)
{
    char p[512];
    mkdir(dir, 0777);
    snprintf(p, sizeof p, "%s/meta.json", dir);
    write_bytes(p, json, strlen(json));
}

START_TEST(dir_malformed)
{
    const char *d = path_in("d");
    nvfp4_tensor_set s;
    sample_set(&s);
    ck_assert_int_eq(nvfp4_tdir_write(d, &s, NVFP4_FMT_BIN_DIR, NULL), NVFP4_OK);
    nvfp4_tset_free(&s);
    char p[512];
    /* A truncated .bin: the sha256 in meta.json no longer matches. */
    snprintf(p, sizeof p, "%s/x.bin", d);
    ck_assert_int_eq(truncate(p, 20), 0);
    expect_dir_error(d, NVFP4_EFORMAT, "sha256 differs");
    /* Without sha256, the byte count catches it. */
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"x\",\"file\":\"x.bin\",\"dtype\":\"F32\",\"shape\":[2,3]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "truncated: shape F32 needs 24 bytes, file has 20");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"y\",\"file\":\"../y.bin\",\"dtype\":\"F32\",\"shape\":[1]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "\"file\" must be \"y.bin\"");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"y\",\"file\":\"y.bin\",\"dtype\":\"F32\",\"shape\":[1]}]}");
    expect_dir_error(d, NVFP4_EIO, "y.bin: cannot open");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"U8\",\"shape\":[5]},"
                  "{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"U8\",\"shape\":[5]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "duplicate tensor name 'data'");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"2\",\"storage\":\"bin\",\"tensors\":[]}");
    expect_dir_error(d, NVFP4_EFORMAT, "unsupported format_version");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"U8\",\"shape\":[5],\"bytes\":6}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "\"bytes\" does not match");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"Q7\",\"shape\":[5]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "unknown dtype 'Q7'");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"U8\",\"shape\":[18446744073709551615]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "too big integer");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"F4\",\"shape\":[1,3]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "tensor 'data': dtype F4 packs two elements per byte, but shape [1, 3] holds "
                     "3 elements");
    write_meta(d, "{\"format\":\"nvfp4kit-tensors\",\"format_version\":\"1\",\"storage\":\"bin\",\"tensors\":"
                  "[{\"name\":\"data\",\"file\":\"data.bin\",\"dtype\":\"U8\",\"shape\":[4294967296,4294967296]}]}");
    expect_dir_error(d, NVFP4_EFORMAT, "shape [4294967296, 4294967296]: its size in bytes overflows (2^64 or more)");
    write_meta(d, "{\"format\": \"nvfp4kit-tensors\", ");
    expect_dir_error(d, NVFP4_EFORMAT, "not valid JSON");
}
END_TEST

/* ---- writers leave nothing behind ---------------------------------------------- */

START_TEST(failed_writes_leave_no_file)
{
    nvfp4_tensor_set s;
    sample_set(&s);
    nvfp4_error err;
    /* The destination is an existing folder: refused before writing, nothing left. */
    mkdir(path_in("taken.safetensors"), 0777);
    ck_assert_int_eq(nvfp4_safetensors_write(path_in("taken.safetensors"), &s, &err), NVFP4_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "taken.safetensors: is a directory, not a regular file"));
    ck_assert_int_eq(count_entries(tmpdir), 1);
    ck_assert_int_eq(count_entries(path_in("taken.safetensors")), 0);
    /* A folder that is not ours is never replaced. */
    mkdir(path_in("foreign"), 0777);
    write_bytes(path_in("foreign/keep.txt"), "k", 1);
    ck_assert_int_eq(nvfp4_tdir_write(path_in("foreign"), &s, NVFP4_FMT_NPY_DIR, &err), NVFP4_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "not overwriting"));
    ck_assert_int_eq(count_entries(path_in("foreign")), 1);
    /* A folder of ours plus a file of the user's: refused, the user's file kept. */
    ck_assert_int_eq(nvfp4_tdir_write(path_in("ours"), &s, NVFP4_FMT_NPY_DIR, &err), NVFP4_OK);
    int n_ours = count_entries(path_in("ours"));
    write_bytes(path_in("ours/user.txt"), "u", 1);
    ck_assert_int_eq(nvfp4_tdir_write(path_in("ours"), &s, NVFP4_FMT_BIN_DIR, &err), NVFP4_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "holds 'user.txt'"));
    ck_assert_int_eq(count_entries(path_in("ours")), n_ours + 1);
    unlink(path_in("ours/user.txt"));
    ck_assert_int_eq(nvfp4_tdir_write(path_in("ours"), &s, NVFP4_FMT_BIN_DIR, &err), NVFP4_OK);
    ck_assert_int_eq(count_entries(path_in("ours")), n_ours);
    rm_rf(path_in("ours"));
    /* A tensor name unusable as a file name fails the folder write: nothing left. */
    size_t one = 1;
    ck_assert_int_eq(nvfp4_tset_add(&s, "a b", NVFP4_T_U8, 1, &one, NULL, NULL, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tdir_write(path_in("out.d"), &s, NVFP4_FMT_BIN_DIR, &err), NVFP4_EINVAL);
    ck_assert_int_eq(count_entries(tmpdir), 2);
    /* A folder that does not exist: EIO, no file. */
    ck_assert_int_eq(nvfp4_safetensors_write(path_in("no/such/dir.safetensors"), &s, &err), NVFP4_EIO);
    ck_assert_int_eq(count_entries(tmpdir), 2);
    nvfp4_tset_free(&s);
}
END_TEST

START_TEST(tset_rejects_duplicates_and_overflow)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    size_t sh[2] = {2, 2};
    ck_assert_int_eq(nvfp4_tset_add(&s, "a", NVFP4_T_F32, 2, sh, NULL, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_add(&s, "a", NVFP4_T_F32, 2, sh, NULL, NULL, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "duplicate tensor name 'a'"));
    size_t big[2] = {SIZE_MAX / 2, 3};
    ck_assert_int_eq(nvfp4_tset_add(&s, "b", NVFP4_T_U8, 2, big, NULL, NULL, &err), NVFP4_ENOMEM);
    ck_assert_ptr_nonnull(strstr(err.message, "overflows"));
    size_t odd[1] = {3};
    ck_assert_int_eq(nvfp4_tset_add(&s, "c", NVFP4_T_F4, 1, odd, NULL, NULL, &err), NVFP4_EINVAL);
    ck_assert_str_eq(err.message, "tensor 'c': dtype F4 packs two elements per byte, but shape [3] holds 3 "
                     "elements, an odd count (no whole number of bytes)");
    ck_assert_int_eq(nvfp4_tset_add(&s, "__metadata__", NVFP4_T_U8, 2, sh, NULL, NULL, &err), NVFP4_EINVAL);
    ck_assert_uint_eq(s.count, 1);
    nvfp4_tset_remove(&s, "a");
    ck_assert_uint_eq(s.count, 0);
    nvfp4_tset_free(&s);
}
END_TEST


/* ---- bundles ------------------------------------------------------------------------ */

/* A 32 x 48 te bundle with both outputs. */
static void sample_bundle(nvfp4_tensor_set *b, nvfp4_quantized *q)
{
    float x[32 * 48];
    for (int i = 0; i < 32 * 48; i++) x[i] = (float)((i * 37) % 101 - 50) * 0.0625f;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = o.columnwise = true;
    nvfp4_error err;
    ck_assert_msg(nvfp4_quantize(x, NVFP4_DTYPE_F32, 32, 48, &o, q, &err) == NVFP4_OK, "%s", err.message);
    nvfp4_tset_init(b);
    ck_assert_msg(nvfp4_bundle_build(q, x, NVFP4_DTYPE_F32, 32, 48, b, &err) == NVFP4_OK, "%s", err.message);
}

START_TEST(bundle_components_and_round_trip)
{
    nvfp4_tensor_set b, r;
    nvfp4_quantized q, q2;
    sample_bundle(&b, &q);
    static const char *const names[] = {"x", "data", "scale", "scale_swizzled", "amax", "dequant",
                                        "data_t", "scale_t", "scale_t_swizzled", "amax_t", "dequant_t"};
    ck_assert_uint_eq(b.count, 11);
    for (size_t i = 0; i < 11; i++) ck_assert_ptr_nonnull(nvfp4_tset_find(&b, names[i]));
    ck_assert_uint_eq(nvfp4_tset_find(&b, "data")->shape[1], 24);
    ck_assert_uint_eq(nvfp4_tset_find(&b, "scale_t_swizzled")->shape[0], 128);
    ck_assert_uint_eq(nvfp4_tset_find(&b, "scale_t_swizzled")->shape[1], 4);
    ck_assert_str_eq(nvfp4_tset_meta_get(&b, "recipe"), "te");
    ck_assert_str_eq(nvfp4_tset_meta_get(&b, "format_version"), NVFP4_BUNDLE_FORMAT_VERSION);
    nvfp4_error err;
    const char *p = path_in("b.safetensors");
    ck_assert_int_eq(nvfp4_tset_write(p, &b, NVFP4_FMT_SAFETENSORS, &err), NVFP4_OK);
    nvfp4_tset_init(&r);
    ck_assert_msg(nvfp4_bundle_load(p, &r, &err) == NVFP4_OK, "%s", err.message);
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&r, p, &q2, &err), NVFP4_OK);
    ck_assert_str_eq(q2.opts.recipe, "te");
    ck_assert_int_eq(memcmp(q2.col.data, q.col.data, q.col.data_bytes), 0);
    float d[32 * 48];
    ck_assert_int_eq(nvfp4_dequantize(&q2, true, d, &err), NVFP4_OK);
    ck_assert_int_eq(memcmp(d, nvfp4_tset_find(&r, "dequant_t")->data, sizeof d), 0);
    nvfp4_quantized_free(&q2);
    /* A partial bundle with only data + scale_swizzled + amax: scales are un-swizzled. */
    nvfp4_tset_remove(&r, "scale");
    nvfp4_tset_remove(&r, "dequant");
    nvfp4_tset_remove(&r, "x");
    ck_assert_int_eq(nvfp4_bundle_validate(&r, p, false, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_bundle_validate(&r, p, true, &err), NVFP4_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.message, "lacks the input 'x'"));
    ck_assert_int_eq(nvfp4_bundle_to_quantized(&r, p, &q2, &err), NVFP4_OK);
    ck_assert_int_eq(memcmp(q2.row.scale, q.row.scale, q.row.scale_rows * q.row.scale_cols), 0);
    nvfp4_quantized_free(&q2);
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&b);
    nvfp4_tset_free(&r);
}
END_TEST

static void expect_bundle_error(nvfp4_tensor_set *b, const char *needle)
{
    nvfp4_error err;
    nvfp4_quantized q;
    ck_assert_int_eq(nvfp4_bundle_validate(b, "b.safetensors", true, &err), NVFP4_EFORMAT);
    ck_assert_msg(strstr(err.message, "b.safetensors") != NULL, "no file name: %s", err.message);
    ck_assert_msg(strstr(err.message, needle) != NULL, "expected '%s' in: %s", needle, err.message);
    ck_assert_int_eq(nvfp4_bundle_to_quantized(b, "b.safetensors", &q, &err), NVFP4_EFORMAT);
}

/* nvfp4_bundle_build_taking: the same tensors, in the same order, as nvfp4_bundle_build, the codes and
 * scales being q's own buffers (not copies); q then borrows them and stays usable while the set lives. */
START_TEST(bundle_build_taking_same_tensors)
{
    nvfp4_tensor_set b, t;
    nvfp4_quantized q, q2;
    sample_bundle(&b, &q);
    float x[32 * 48];
    for (int i = 0; i < 32 * 48; i++) x[i] = (float)((i * 37) % 101 - 50) * 0.0625f;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.rowwise = o.columnwise = true;
    nvfp4_error err;
    ck_assert_int_eq(nvfp4_quantize(x, NVFP4_DTYPE_F32, 32, 48, &o, &q2, &err), NVFP4_OK);
    const uint8_t *row_data = q2.row.data, *col_scale = q2.col.scale;
    nvfp4_tset_init(&t);
    ck_assert_msg(nvfp4_bundle_build_taking(&q2, x, NVFP4_DTYPE_F32, 32, 48, &t, &err) == NVFP4_OK, "%s", err.message);
    ck_assert(q2.borrowed);
    ck_assert_ptr_eq(nvfp4_tset_find(&t, "data")->data, row_data);
    ck_assert_ptr_eq(nvfp4_tset_find(&t, "scale_t")->data, col_scale);
    ck_assert_uint_eq(t.count, b.count);
    for (size_t i = 0; i < b.count; i++) {
        ck_assert_str_eq(t.tensors[i].name, b.tensors[i].name);
        ck_assert_uint_eq(t.tensors[i].nbytes, b.tensors[i].nbytes);
        ck_assert_int_eq(memcmp(t.tensors[i].data, b.tensors[i].data, b.tensors[i].nbytes), 0);
    }
    float d[32 * 48];
    ck_assert_int_eq(nvfp4_dequantize(&q2, false, d, &err), NVFP4_OK); /* q2 reads the set's buffers */
    ck_assert_int_eq(memcmp(d, nvfp4_tset_find(&b, "dequant")->data, sizeof d), 0);
    nvfp4_quantized_free(&q2); /* leaves the codes to the set */
    nvfp4_tset_free(&t);
    /* a taken buffer under a name already there is refused, and freed (ASan / valgrind see no leak) */
    size_t sh[1] = {4};
    uint8_t *buf = malloc(4);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(nvfp4_tset_add_taken(&b, "data", NVFP4_T_U8, 1, sh, buf, &err), NVFP4_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.message, "duplicate tensor name 'data'"));
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&b);
}
END_TEST

START_TEST(bundle_malformed)
{
    nvfp4_tensor_set b;
    nvfp4_quantized q;
    sample_bundle(&b, &q);
    nvfp4_quantized_free(&q);
    size_t wrong[2] = {32, 23};
    nvfp4_tset_remove(&b, "data");
    ck_assert_int_eq(nvfp4_tset_add(&b, "data", NVFP4_T_U8, 2, wrong, NULL, NULL, NULL), NVFP4_OK);
    expect_bundle_error(&b, "component 'data' is U8 [32, 23], expected U8 [32, 24]");
    nvfp4_tset_remove(&b, "data");
    expect_bundle_error(&b, "lacks the component 'data'");
    struct {
        const char *key, *value, *needle;
    } bad[] = {
        {"format_version", "2", "format_version '2'"},
        {"recipe", "nope", "unknown recipe 'nope'"},
        {"block", "3x3", "block '3x3'"},
        {"rounding", "up", "rounding 'up'"},
        {"rows", "18446744073709551615", "too large"},
        {"rows", "18446744073709551616", "not a decimal integer"},
        {"seed", "18446744073709551616", "not a decimal integer"},
        {"seed", " 1", "not a decimal integer"},
        {"offset", "0x10", "not a decimal integer"},
        {"rows", "-3", "not a decimal integer"},
        {"rows", "1099511627777", "too large"},
        {"cols", "47", "not a multiple of the 1x16 block and pad is false"},
        {"rowwise", "yes", "not true/false"},
        {"seed", "", "not a decimal integer"},
        {"format", "other", "not a golden bundle (metadata \"format\" is 'other'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nvfp4_tensor_set c;
        sample_bundle(&c, &q);
        nvfp4_quantized_free(&q);
        ck_assert_int_eq(nvfp4_tset_meta_set(&c, bad[i].key, bad[i].value, NULL), NVFP4_OK);
        expect_bundle_error(&c, bad[i].needle);
        nvfp4_tset_free(&c);
    }
    nvfp4_tset_free(&b);
    /* no "format" key at all: rejected too (docs/file-formats.md section 4) */
    nvfp4_tensor_set nf;
    sample_bundle(&nf, &q);
    nvfp4_quantized_free(&q);
    for (size_t i = 0; i < nf.meta_count; i++)
        if (strcmp(nf.meta[i].key, "format") == 0) nf.meta[i].key[0] = 'F'; /* "Format": not the key */
    expect_bundle_error(&nf, "not a golden bundle (metadata \"format\" is missing");
    nvfp4_tset_free(&nf);
    /* every uint64 a writer accepts reads back: 2^64-1 for the seed, offset and sign seed */
    nvfp4_tensor_set c;
    sample_bundle(&c, &q);
    nvfp4_quantized_free(&q);
    const char *max = "18446744073709551615";
    ck_assert_int_eq(nvfp4_tset_meta_set(&c, "seed", max, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_meta_set(&c, "offset", max, NULL), NVFP4_OK);
    ck_assert_int_eq(nvfp4_tset_meta_set(&c, "rht_sign_seed", max, NULL), NVFP4_OK);
    nvfp4_quant_opts o;
    nvfp4_error err;
    ck_assert_msg(nvfp4_bundle_opts(&c, "b.safetensors", &o, &err) == NVFP4_OK, "%s", err.message);
    ck_assert(o.seed == UINT64_MAX && o.offset == UINT64_MAX && o.rht_sign_seed == UINT64_MAX);
    nvfp4_tset_free(&c);
}
END_TEST

/* Writers refuse a special file at the destination and leave it as it was;
 * a link to a regular file is replaced, its target untouched. */
START_TEST(writers_refuse_special_files)
{
    const char *fifo = path_in("f.safetensors"), *link = path_in("null.safetensors");
    const char *reg = path_in("r.bin"), *rlink = path_in("rl.bin");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(symlink("/dev/null", link), 0);
    nvfp4_error err;
    alarm(10);
    ck_assert_int_eq(nvfp4_file_write_atomic(fifo, "abc", 3, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, fifo) && strstr(err.message, "is a FIFO, not a regular file; refusing to replace it"),
                  "%s", err.message);
    ck_assert_int_eq(nvfp4_file_write_atomic(link, "abc", 3, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "is a symbolic link to a character device"), "%s", err.message);
    ck_assert_int_eq(nvfp4_file_check_destination(tmpdir, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "is a directory"), "%s", err.message);
    alarm(0);
    struct stat st;
    ck_assert(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    ck_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    ck_assert(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    ck_assert_int_eq(nvfp4_file_check_destination(path_in("new.bin"), &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_file_write_atomic(reg, "old", 3, &err), NVFP4_OK);
    ck_assert_int_eq(symlink(reg, rlink), 0);
    ck_assert_int_eq(nvfp4_file_write_atomic(rlink, "new!", 4, &err), NVFP4_OK);
    ck_assert(lstat(rlink, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
    ck_assert(lstat(reg, &st) == 0 && st.st_size == 3);
}
END_TEST

static nvfp4_status put_two_bytes(FILE *f, void *ctx, nvfp4_error *err)
{
    (void)ctx, (void)err;
    fputs("hi", f);
    return NVFP4_OK;
}

/* The staged writer: nothing under the name until commit; abort leaves no
 * temporary; a commit onto a name that became a FIFO meanwhile is refused. */
START_TEST(staged_write_commit_and_abort)
{
    const char *dest = path_in("s.bin");
    nvfp4_file_txn t;
    nvfp4_error err;
    struct stat st;
    ck_assert_int_eq(nvfp4_file_txn_write(&t, dest, put_two_bytes, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(lstat(dest, &st), -1);
    ck_assert_int_eq(count_entries(tmpdir), 1); /* the temporary */
    nvfp4_file_txn_abort(&t);
    ck_assert_int_eq(count_entries(tmpdir), 0);
    ck_assert_int_eq(nvfp4_file_txn_write(&t, dest, put_two_bytes, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(nvfp4_file_txn_commit(&t, &err), NVFP4_OK);
    ck_assert(lstat(dest, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 2);
    ck_assert_int_eq(nvfp4_file_txn_write(&t, dest, put_two_bytes, NULL, &err), NVFP4_OK);
    ck_assert_int_eq(unlink(dest), 0);
    ck_assert_int_eq(mkfifo(dest, 0600), 0);
    ck_assert_int_eq(nvfp4_file_txn_commit(&t, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "is a FIFO"), "%s", err.message);
    ck_assert(lstat(dest, &st) == 0 && S_ISFIFO(st.st_mode));
    ck_assert_int_eq(count_entries(tmpdir), 1); /* the FIFO only */
}
END_TEST

/* begin: an empty temporary beside dest, named in t.tmp, that another
 * writer fills; commit puts its bytes under dest; abort removes it; a FIFO
 * at dest is refused before anything is created. */
START_TEST(begun_file_written_by_another)
{
    const char *dest = path_in("b.gguf");
    nvfp4_file_txn t;
    nvfp4_error err;
    struct stat st;
    ck_assert_int_eq(nvfp4_file_txn_begin(&t, dest, &err), NVFP4_OK);
    ck_assert(stat(t.tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
    ck_assert(strncmp(t.tmp, tmpdir, strlen(tmpdir)) == 0 && strstr(t.tmp, "/.b.gguf.tmp-"));
    FILE *f = fopen(t.tmp, "wb");
    ck_assert(f && fputs("GGUF", f) >= 0 && fclose(f) == 0);
    ck_assert_int_eq(lstat(dest, &st), -1);
    ck_assert_int_eq(nvfp4_file_txn_commit(&t, &err), NVFP4_OK);
    ck_assert(lstat(dest, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
    ck_assert_int_eq(nvfp4_file_txn_begin(&t, dest, &err), NVFP4_OK);
    nvfp4_file_txn_abort(&t);
    ck_assert_int_eq(count_entries(tmpdir), 1); /* dest only */
    ck_assert_int_eq(unlink(dest), 0);
    ck_assert_int_eq(mkfifo(dest, 0600), 0);
    ck_assert_int_eq(nvfp4_file_txn_begin(&t, dest, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "is a FIFO"), "%s", err.message);
    ck_assert_int_eq(count_entries(tmpdir), 1);
}
END_TEST

static nvfp4_status manifest_of(const char *text, nvfp4_manifest *m, nvfp4_error *err)
{
    return nvfp4_manifest_parse(text, strlen(text), "M", m, err);
}

#define SUM "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF"

/* Every line the format does not describe is refused with its line number. */
START_TEST(manifest_lines)
{
    nvfp4_manifest m;
    nvfp4_error err;
    ck_assert_int_eq(manifest_of("# nvfp4kit golden suite (x)\n# recipe: te\r\n\n" SUM "  a.safetensors\n" SUM
                                 "  b/meta.json\n" SUM "  b/x.npy", &m, &err), NVFP4_OK);
    ck_assert(m.ours);
    ck_assert_str_eq(m.recipe, "te");
    ck_assert_uint_eq(m.n, 3);
    ck_assert_str_eq(m.entries[2].path, "b/x.npy");
    ck_assert_uint_eq(m.entries[2].line, 6);
    ck_assert_str_eq(m.entries[0].sha256, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    nvfp4_manifest_free(&m);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"# x\n" SUM "  /etc/passwd\n", "M:2: an absolute path"},
        {SUM "  a/../b\n", "M:1: a '.' or '..' component"},
        {SUM "  ./a\n", "M:1: a '.' or '..' component"},
        {SUM "  a/b/c\n", "M:1: a path more than two levels deep"},
        {SUM "  a/\n", "M:1: an empty path component"},
        {SUM " a\n", "M:1: not a MANIFEST line"},
        {SUM "  \n", "M:1: not a MANIFEST line"},
        {"0123  a\n", "M:1: not a MANIFEST line"},
        {SUM " *a\n", "M:1: not a MANIFEST line"},
        {SUM "  a\xff\n", "M:1: a path that is not UTF-8"},
        {SUM "  a\xc0\xaf\n", "M:1: a path that is not UTF-8"},       /* overlong '/' */
        {SUM "  a\xed\xa0\x80\n", "M:1: a path that is not UTF-8"},   /* a surrogate */
        {SUM "  a\tb\n", "M:1: a control character"},
        {"\n" SUM "  a\n" SUM "  a\n", "M:3: 'a' is listed twice (also on line 2)"},
        {SUM "  a/x\n" SUM "  a\n", "M:2: 'a' is listed as a file and as a folder (line 1)"},
        {"# only a header\n", "M: the MANIFEST lists no case"},
        {"", "M: the MANIFEST lists no case"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(manifest_of(bad[i].text, &m, &err), NVFP4_EFORMAT);
        ck_assert_msg(strstr(err.message, bad[i].want), "case %zu: '%s' lacks '%s'", i, err.message, bad[i].want);
        ck_assert_ptr_null(m.entries);
    }
    char nul[] = SUM "  a\0b\n";
    ck_assert_int_eq(nvfp4_manifest_parse(nul, sizeof nul - 1, "M", &m, &err), NVFP4_EFORMAT);
    ck_assert_msg(strstr(err.message, "M:1: a NUL byte"), "%s", err.message);
    char longl[1200];
    snprintf(longl, sizeof longl, "%s  %01000d\n", SUM, 7);
    ck_assert_int_eq(manifest_of(longl, &m, &err), NVFP4_EFORMAT);
    ck_assert_msg(strstr(err.message, "M:1: line of 1066 characters (at most 1023)"), "%s", err.message);
    longl[1023] = '\n', longl[1024] = '\0'; /* 1,023 characters: the limit */
    ck_assert_msg(manifest_of(longl, &m, &err) == NVFP4_OK, "%s", err.message);
    nvfp4_manifest_free(&m);
    alarm(10);
    ck_assert_int_eq(nvfp4_manifest_read("/dev/zero", &m, &err), NVFP4_EIO);
    ck_assert_msg(strstr(err.message, "/dev/zero: is a character device"), "%s", err.message);
    alarm(0);
}
END_TEST

/* nvfp4_utf8_prefix: the length of one well-formed sequence, 0 otherwise. */
START_TEST(utf8_prefix)
{
    ck_assert_uint_eq(nvfp4_utf8_prefix("a", 1), 1);
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xc3\xa9", 2), 2);
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xe2\x82\xac", 3), 3);
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xf0\x9f\x98\x80", 4), 4);
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xe2\x82\xac", 2), 0);     /* cut short */
    ck_assert_uint_eq(nvfp4_utf8_prefix("\x80", 1), 0);             /* a continuation byte */
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xe0\x80\xaf", 3), 0);     /* overlong */
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xf4\x90\x80\x80", 4), 0); /* above U+10FFFF */
    ck_assert_uint_eq(nvfp4_utf8_prefix("\xff", 1), 0);
    ck_assert_uint_eq(nvfp4_utf8_prefix("", 0), 0);
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("formats");
    tcase_add_checked_fixture(tc, make_tmpdir, teardown_tmp);
    tcase_add_test(tc, safetensors_round_trip);
    tcase_add_test(tc, safetensors_write_is_deterministic);
    tcase_add_test(tc, sha256_known_answer);
    tcase_add_test(tc, npy_round_trip_each_dtype);
    tcase_add_test(tc, npy_dir_round_trip);
    tcase_add_test(tc, bin_dir_round_trip);
    tcase_add_test(tc, safetensors_malformed);
    tcase_add_test(tc, safetensors_too_short_and_missing);
    tcase_add_test(tc, non_regular_files_refused);
    tcase_add_test(tc, long_paths_and_messages);
    tcase_add_test(tc, npy_malformed);
    tcase_add_test(tc, npy_version2_and_scalar);
    tcase_add_test(tc, dir_malformed);
    tcase_add_test(tc, failed_writes_leave_no_file);
    tcase_add_test(tc, tset_rejects_duplicates_and_overflow);
    tcase_add_test(tc, bundle_components_and_round_trip);
    tcase_add_test(tc, bundle_build_taking_same_tensors);
    tcase_add_test(tc, bundle_malformed);
    tcase_add_test(tc, writers_refuse_special_files);
    tcase_add_test(tc, staged_write_commit_and_abort);
    tcase_add_test(tc, begun_file_written_by_another);
    tcase_add_test(tc, manifest_lines);
    tcase_add_test(tc, utf8_prefix);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return nvfp4_check_run(io_suite());
}
