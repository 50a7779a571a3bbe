/* tset_rw.c - read or write a tensor set in any of the formats by path. */
#include "io_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *nvfp4_file_format_name(nvfp4_file_format f)
{
    switch (f) {
    case NVFP4_FMT_SAFETENSORS: return "safetensors";
    case NVFP4_FMT_NPY_DIR: return "npy";
    case NVFP4_FMT_BIN_DIR: return "bin";
    case NVFP4_FMT_NPY: return "npy-file";
    }
    return "?";
}

bool nvfp4_file_format_parse(const char *name, nvfp4_file_format *out)
{
    if (strcmp(name, "safetensors") == 0) *out = NVFP4_FMT_SAFETENSORS;
    else if (strcmp(name, "npy") == 0) *out = NVFP4_FMT_NPY_DIR;
    else if (strcmp(name, "bin") == 0) *out = NVFP4_FMT_BIN_DIR;
    else return false;
    return true;
}

nvfp4_file_format nvfp4_file_format_guess(const char *path)
{
    if (ends_with(path, ".safetensors")) return NVFP4_FMT_SAFETENSORS;
    if (ends_with(path, ".npy")) return NVFP4_FMT_NPY;
    return NVFP4_FMT_NPY_DIR;
}

nvfp4_status nvfp4_tset_read(const char *path, nvfp4_tensor_set *out, nvfp4_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return nvfp4_error_set(err, NVFP4_EIO, "%s: %s", path,
                               errno == ENOENT ? "no such file or folder" : strerror(errno));
    if (S_ISDIR(st.st_mode)) return nvfp4_tdir_read(path, out, err);
    if (ends_with(path, ".npy")) {
        nvfp4_tensor_set tmp;
        nvfp4_tset_init(&tmp);
        nvfp4_status s = nvfp4_npy_read(path, "x", &tmp, err);
        if (s) nvfp4_tset_free(&tmp);
        else {
            nvfp4_tset_free(out);
            *out = tmp;
        }
        return s;
    }
    return nvfp4_safetensors_read(path, out, err);
}

nvfp4_status nvfp4_tset_write(const char *path, const nvfp4_tensor_set *s, nvfp4_file_format fmt, nvfp4_error *err)
{
    switch (fmt) {
    case NVFP4_FMT_SAFETENSORS: return nvfp4_safetensors_write(path, s, err);
    case NVFP4_FMT_NPY_DIR:
    case NVFP4_FMT_BIN_DIR: return nvfp4_tdir_write(path, s, fmt, err);
    case NVFP4_FMT_NPY:
        if (s->count != 1)
            return nvfp4_error_set(err, NVFP4_EINVAL, "%s: a .npy file holds one tensor, not %zu (use a folder)", path,
                                   s->count);
        return nvfp4_npy_write(path, &s->tensors[0], err);
    }
    return nvfp4_error_set(err, NVFP4_EINVAL, "%s: unknown format", path);
}
