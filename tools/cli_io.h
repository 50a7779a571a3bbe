/*
 * cli_io.h - input and output helpers for the subcommands that read and
 * write tensor files (quantize, dequantize, rht, gemm, golden).
 */
#ifndef NVFP4_TOOLS_CLI_IO_H
#define NVFP4_TOOLS_CLI_IO_H

#include "nvfp4/io.h"

/* A 2-D input tensor (a 1-D one is taken as 1 x n). `data` points into
 * `owner` or into `raw`; free both with cli_input_free. */
typedef struct {
    const void *data;
    nvfp4_dtype dtype;
    size_t rows, cols;
    nvfp4_tensor_set owner;
    uint8_t *raw;
} cli_input;

/* Loads SPEC: FILE.npy ('<f4' as f32; '<u2' as bf16 bits), FILE.safetensors
 * or a folder with meta.json (":NAME" picks a tensor; else the only tensor or
 * the one named "x"), or a raw little-endian file when shape ("RxC") and
 * dtype ("f32" or "bf16") are given. Returns 0 or prints the error and
 * returns NVFP4_EXIT_USAGE. */
int cli_input_load(const char *cmd, const char *spec, const char *shape, const char *dtype, cli_input *in);
void cli_input_free(cli_input *in);

/* "RxC" -> rows, cols (both > 0). */
bool cli_parse_shape(const char *s, size_t *rows, size_t *cols);

/* Writes a set to path in the named format (NULL: from the path, see
 * nvfp4_file_format_guess). Returns 0 or prints the error and returns 2. */
int cli_write_set(const char *cmd, const char *path, const char *format, const nvfp4_tensor_set *s);

/* True when writing a and b would replace the same name: the same string,
 * or the same last component in the same (resolved) folder. */
bool cli_same_destination(const char *a, const char *b);
/* True when the file file would be written inside the existing folder dir
 * (or a folder below it). */
bool cli_destination_inside(const char *file, const char *dir);

/* Between guard and unguard, a runtime library that ends the process with
 * exit() (libgomp's "Thread creation failed", OpenBLAS out of memory: both
 * exit(1)) makes it exit 2 with a message instead, so such a failure never
 * reads as exit 1, "mismatch", in verify or gemm-check. */
void cli_runtime_guard(const char *cmd);
void cli_runtime_unguard(void);

/* Prints "nvfp4 CMD: <error message>" and returns NVFP4_EXIT_USAGE. */
int cli_fail_err(const char *cmd, const nvfp4_error *err);

#endif
