/* io_internal.h - helpers shared by the readers and writers in src/io/. */
#ifndef NVFP4_IO_INTERNAL_H
#define NVFP4_IO_INTERNAL_H

#include <stdio.h>
#include <sys/stat.h>

#include <jansson.h>

#include "nvfp4/io.h"

/* prod(shape) * size(dtype) without overflow; false if it overflows, or for
 * F4 (two elements per byte) when the element count is odd. */
bool io_shape_bytes(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, size_t *bytes);
/* Why io_shape_bytes refused a shape, as a clause for a message: "dtype F4
 * packs two elements per byte, but shape [3] holds 3 elements, an odd count
 * ..." or "shape [a, b]: its size in bytes overflows ...". */
void io_shape_why(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, char *why, size_t n);

/* Opens path for reading and fstats it; refuses (NULL, err set: EIO, the
 * message names the file and what it is) anything but a regular file, without
 * ever blocking on a FIFO or device. Every reader in src/io/ opens through it. */
FILE *io_open_regular(const char *path, struct stat *st, nvfp4_error *err);

/* "a directory", "a FIFO", "a symbolic link", ... for an st_mode (from lstat or stat). */
const char *io_file_kind(unsigned mode);

/* nvfp4_tset_add and nvfp4_tset_meta_set without the linear search for the
 * name: for readers whose names are known to be unique and new (a JSON
 * object's keys under JSON_REJECT_DUPLICATES, or names checked sorted), so a
 * header of n entries loads in O(n log n), not O(n^2). */
nvfp4_status io_tset_add_unique(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                                const size_t *shape, const void *data, nvfp4_tensor **added, nvfp4_error *err);
nvfp4_status io_tset_meta_append(nvfp4_tensor_set *s, const char *key, const char *value, nvfp4_error *err);

/* Sorts names[0..n) and returns the first name that occurs twice, or NULL. */
const char *io_first_duplicate(const char **names, size_t n);

/* Reads a JSON array of non-negative integers into shape[]. */
nvfp4_status io_json_shape(const json_t *arr, const char *fname, const char *tname, unsigned *ndim,
                           size_t *shape, nvfp4_error *err);
json_t *io_json_shape_new(unsigned ndim, const size_t *shape);

/* A tensor name that is safe as a file name: [A-Za-z0-9_.-], not starting
 * with '.', at most 200 characters. */
bool io_name_is_file_safe(const char *name);

/* Registers a temporary file or folder to be removed if SIGINT, SIGTERM or
 * SIGHUP ends the process before it is renamed or removed (atomic.c);
 * returns the slot for io_temp_unregister (-1: not registered). */
int io_temp_register(const char *path);
void io_temp_unregister(int slot);

/* Removes a file, or a folder and what it holds (a few levels deep), never
 * following symbolic links and building no paths; true when it is gone. */
bool io_remove_tree(const char *path);

/* Rewrites err's message so that a path under the temporary folder tmp
 * names the destination dest instead (the user never sees a temp name). */
void io_error_retarget(nvfp4_error *err, const char *tmp, const char *dest);

/* True when s[0..n) is well-formed UTF-8. */
bool io_utf8_valid(const char *s, size_t n);

/* Largest header we accept (safetensors' own limit is 100 MB). */
#define IO_MAX_HEADER ((size_t)100 * 1000 * 1000)
/* Most key/value pairs a safetensors header may hold: 2^20, about 262,000
 * tensors of four pairs each (checkpoints hold a few thousand per file);
 * a bigger header is refused before it is parsed. */
#define IO_MAX_HEADER_PAIRS ((size_t)1 << 20)

#endif
