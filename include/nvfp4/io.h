/*
 * nvfp4/io.h - the files users exchange (docs/file-formats.md):
 * a generic in-memory tensor set (named tensors with a dtype and a shape,
 * plus string metadata), read and written as one .safetensors file, a folder
 * of .npy files plus meta.json, or a folder of raw little-endian .bin files
 * plus meta.json; single .npy files; and the golden bundle, a tensor set
 * holding one quantization (x, data, scale, scale_swizzled, amax, dequant and
 * the *_t columnwise versions) with its recipe in the metadata.
 *
 * Readers validate everything and fail with NVFP4_EFORMAT (malformed) or
 * NVFP4_EIO (cannot read) and a message that names the file and the problem.
 * Writers write to a temporary name in the destination folder and rename, so
 * a failed write leaves no file behind.
 */
#ifndef NVFP4_IO_H
#define NVFP4_IO_H

#include <stdio.h>

#include "nvfp4/common.h"
#include "nvfp4/quant.h"
#include "nvfp4/grouped.h"

NVFP4_BEGIN_DECLS

/* Element types, named as safetensors names them. */
typedef enum {
    NVFP4_T_F64 = 0, NVFP4_T_F32, NVFP4_T_F16, NVFP4_T_BF16,
    NVFP4_T_I64, NVFP4_T_I32, NVFP4_T_I16, NVFP4_T_I8,
    NVFP4_T_U64, NVFP4_T_U32, NVFP4_T_U16, NVFP4_T_U8,
    /* torch's low-precision dtypes as safetensors names them: bytes a kernel
     * writes for codes and scales (torch.float8_e4m3fn, float8_e5m2,
     * float8_e8m0fnu, float4_e2m1fn_x2). F4 counts elements in its shape,
     * two per byte (element 2j in the low nibble): nbytes = prod(shape)/2. */
    NVFP4_T_F8_E4M3, NVFP4_T_F8_E5M2, NVFP4_T_F8_E8M0, NVFP4_T_F4,
    NVFP4_T_COUNT
} nvfp4_tdtype;

const char *nvfp4_tdtype_name(nvfp4_tdtype t);            /* "F32", "BF16", "U8", ... */
bool nvfp4_tdtype_parse(const char *name, nvfp4_tdtype *out);
size_t nvfp4_tdtype_size(nvfp4_tdtype t);                 /* bytes per element (F4: 1, per two elements) */

#define NVFP4_MAX_DIMS 8

/* One tensor: data is little-endian, C order, nbytes = prod(shape)*size. */
typedef struct {
    char *name;
    nvfp4_tdtype dtype;
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
    size_t nbytes;
    uint8_t *data;
} nvfp4_tensor;

typedef struct {
    char *key, *value;
} nvfp4_meta_entry;

/* A set of uniquely named tensors plus string metadata (key -> value). */
typedef struct {
    nvfp4_tensor *tensors;
    size_t count, cap;
    nvfp4_meta_entry *meta;
    size_t meta_count, meta_cap;
} nvfp4_tensor_set;

void nvfp4_tset_init(nvfp4_tensor_set *s);
void nvfp4_tset_free(nvfp4_tensor_set *s);
/* Adds a copy of data (NULL: zero-filled). Fails on a duplicate or empty
 * name, ndim > NVFP4_MAX_DIMS or a size that overflows. *added (may be NULL)
 * points at the stored tensor until the next add. */
nvfp4_status nvfp4_tset_add(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                            const size_t *shape, const void *data, nvfp4_tensor **added, nvfp4_error *err);
/* Adds data itself, not a copy: a buffer from malloc of the tensor's size, which the set now owns
 * (freed with the set; freed at once when the add fails). For outputs too large to hold twice. */
nvfp4_status nvfp4_tset_add_taken(nvfp4_tensor_set *s, const char *name, nvfp4_tdtype dtype, unsigned ndim,
                                  const size_t *shape, void *data, nvfp4_error *err);
nvfp4_tensor *nvfp4_tset_find(const nvfp4_tensor_set *s, const char *name);
/* Removes one tensor (no-op if absent). */
void nvfp4_tset_remove(nvfp4_tensor_set *s, const char *name);
/* Sets (or replaces) a metadata entry. */
nvfp4_status nvfp4_tset_meta_set(nvfp4_tensor_set *s, const char *key, const char *value, nvfp4_error *err);
const char *nvfp4_tset_meta_get(const nvfp4_tensor_set *s, const char *key); /* NULL if absent */
/* Element count of a tensor (fits: nbytes did). */
size_t nvfp4_tensor_numel(const nvfp4_tensor *t);

/* ---- formats ----------------------------------------------------------- */
typedef enum {
    NVFP4_FMT_SAFETENSORS = 0, /* one .safetensors file */
    NVFP4_FMT_NPY_DIR = 1,     /* folder: NAME.npy per tensor + meta.json */
    NVFP4_FMT_BIN_DIR = 2,     /* folder: NAME.bin per tensor (raw LE) + meta.json */
    NVFP4_FMT_NPY = 3          /* one .npy file: exactly one tensor, no metadata */
} nvfp4_file_format;

const char *nvfp4_file_format_name(nvfp4_file_format f);   /* "safetensors", "npy", "bin", "npy-file" */
bool nvfp4_file_format_parse(const char *name, nvfp4_file_format *out); /* safetensors|npy|bin */

/* safetensors: 8-byte LE header length, JSON header, data. */
nvfp4_status nvfp4_safetensors_parse(const uint8_t *buf, size_t len, const char *fname, nvfp4_tensor_set *out,
                                     nvfp4_error *err);
nvfp4_status nvfp4_safetensors_read(const char *path, nvfp4_tensor_set *out, nvfp4_error *err);
nvfp4_status nvfp4_safetensors_write(const char *path, const nvfp4_tensor_set *s, nvfp4_error *err);

/* The header of a .safetensors file without its data (for files too large to
 * load: checkpoints, which are read memory-mapped). Validated exactly as
 * nvfp4_safetensors_read validates (dtype, shape against the byte count,
 * tiling of the data area); offset is the absolute position of a tensor's
 * first byte in the file. Entries in file order. */
typedef struct {
    char *name;
    nvfp4_tdtype dtype;
    unsigned ndim;
    size_t shape[NVFP4_MAX_DIMS];
    size_t offset, nbytes;
} nvfp4_st_entry;
typedef struct {
    nvfp4_st_entry *entries;
    size_t count;
    size_t file_size;
} nvfp4_st_index;
nvfp4_status nvfp4_safetensors_read_index(const char *path, nvfp4_st_index *out, nvfp4_error *err);
void nvfp4_st_index_free(nvfp4_st_index *ix);

/* .npy v1.0/v2.0 (v3.0 read too), little-endian, C order. BF16 is stored as
 * '<u2'; a bare '<u2' .npy reads back as U16 (the folder's meta.json keeps
 * BF16). The tensor is appended to `out` under `name`. */
nvfp4_status nvfp4_npy_parse(const uint8_t *buf, size_t len, const char *fname, const char *name,
                             nvfp4_tensor_set *out, nvfp4_error *err);
nvfp4_status nvfp4_npy_read(const char *path, const char *name, nvfp4_tensor_set *out, nvfp4_error *err);
nvfp4_status nvfp4_npy_write(const char *path, const nvfp4_tensor *t, nvfp4_error *err);

/* Folder + meta.json (npy or bin, as meta.json's "format" says). Writing
 * builds the folder under a temporary name and renames it into place (an
 * existing folder written by us is replaced). */
nvfp4_status nvfp4_tdir_read(const char *dir, nvfp4_tensor_set *out, nvfp4_error *err);
nvfp4_status nvfp4_tdir_write(const char *dir, const nvfp4_tensor_set *s, nvfp4_file_format fmt,
                              nvfp4_error *err);
/* Parses meta.json text (fuzzing entry point); tensor files come from
 * `files` (names[i] -> bufs[i], lens[i]) instead of the disk. */
nvfp4_status nvfp4_tdir_parse_mem(const char *json, size_t json_len, const char *dirname, size_t nfiles,
                                  const char *const *names, const uint8_t *const *bufs, const size_t *lens,
                                  nvfp4_tensor_set *out, nvfp4_error *err);

/* Any of the above by path: a folder (meta.json), NAME.npy (one tensor
 * named "x"), or a .safetensors file. */
nvfp4_status nvfp4_tset_read(const char *path, nvfp4_tensor_set *out, nvfp4_error *err);
/* Writes in the given format (NVFP4_FMT_NPY needs exactly one tensor). */
nvfp4_status nvfp4_tset_write(const char *path, const nvfp4_tensor_set *s, nvfp4_file_format fmt,
                              nvfp4_error *err);
/* Guesses the output format from a path: *.safetensors -> safetensors,
 * *.npy -> npy file, anything else (a folder) -> the npy folder. */
nvfp4_file_format nvfp4_file_format_guess(const char *path);

/* Reads a whole file (for the raw input path; fails on > max bytes). */
nvfp4_status nvfp4_file_read_all(const char *path, size_t max, uint8_t **buf, size_t *len, nvfp4_error *err);
/* Writes bytes to path through a temporary file in the same folder. */
nvfp4_status nvfp4_file_write_atomic(const char *path, const void *buf, size_t len, nvfp4_error *err);

/* ---- atomic file writing ------------------------------------------------ */
/* The one atomic writer of the toolkit (bundles, study outputs, training
 * checkpoints): `write` streams the contents into f, a temporary file
 * "<dir>/.<base>.tmp-XXXXXX" beside path (mode 0666 & ~umask), which is
 * renamed onto path only when write returned NVFP4_OK, the stream saw no
 * error and it closed cleanly. On any failure the temporary file is removed
 * and path is left as it was, so no half-written file remains; err then
 * names path (or holds the status and message write set itself).
 * A destination that exists must be a regular file (see
 * nvfp4_file_check_destination): a FIFO, a device, a socket or a folder is
 * refused with NVFP4_EIO before anything is written, never replaced. */
typedef nvfp4_status (*nvfp4_file_writer)(FILE *f, void *ctx, nvfp4_error *err);
nvfp4_status nvfp4_file_write_atomic_with(const char *path, nvfp4_file_writer write, void *ctx, nvfp4_error *err);

/* NVFP4_OK when path may be replaced by a new regular file: it does not
 * exist, is a regular file, or is a symbolic link to a regular file or to
 * nothing (the link itself is replaced; nothing is written through it).
 * Otherwise NVFP4_EIO, the message naming path and what it is ("is a FIFO,
 * not a regular file; refusing to replace it"). Every writer of the toolkit
 * checks this before writing and again just before its rename. */
nvfp4_status nvfp4_file_check_destination(const char *path, nvfp4_error *err);

/* The atomic writer in two steps, for outputs that succeed or fail together
 * (quantize -o with --ggml-out): txn_write writes the temporary file (on
 * failure nothing remains and t needs no abort); commit renames it onto
 * path (checking path again); abort removes it. Exactly one of commit and
 * abort follows a successful txn_write. */
typedef struct {
    char *dest, *tmp;
    int slot; /* internal: the signal-cleanup registration */
} nvfp4_file_txn;
nvfp4_status nvfp4_file_txn_write(nvfp4_file_txn *t, const char *path, nvfp4_file_writer write, void *ctx,
                                  nvfp4_error *err);
nvfp4_status nvfp4_file_txn_commit(nvfp4_file_txn *t, nvfp4_error *err);
void nvfp4_file_txn_abort(nvfp4_file_txn *t);
/* For a file another program writes (ckpt convert --to gguf runs llama.cpp's
 * converter): begin creates the empty temporary file beside path (checked
 * as for txn_write, removed if a signal ends the process) and names it in
 * t->tmp; the caller has it written there, then commits or aborts. */
nvfp4_status nvfp4_file_txn_begin(nvfp4_file_txn *t, const char *path, nvfp4_error *err);

/* ---- atomic folder writing ---------------------------------------------- */
/* A folder (a folder output, a golden suite) is built under a temporary
 * sibling name, "<parent>/.<base>.tmp-XXXXXX" (tmp), then swapped into place
 * by commit in one step (renameat2 RENAME_EXCHANGE where the file system has
 * it; otherwise the old folder aside, the new in: never a mix of the two);
 * the old folder is then removed with everything in it, so the caller must
 * have checked that the old folder holds only what it is allowed to delete.
 * abort (and a failed commit) removes the temporary folder. While it exists
 * the temporary folder (like the atomic writer's temporary file) is removed
 * if SIGINT, SIGTERM or SIGHUP ends the process. */
typedef struct {
    char *dest, *tmp;
    int slot;  /* internal: the signal-cleanup registration */
    bool live; /* internal: tmp names a folder of ours */
} nvfp4_dir_txn;
nvfp4_status nvfp4_dir_txn_begin(nvfp4_dir_txn *t, const char *dest, nvfp4_error *err);
nvfp4_status nvfp4_dir_txn_commit(nvfp4_dir_txn *t, nvfp4_error *err);
void nvfp4_dir_txn_abort(nvfp4_dir_txn *t);

/* ---- golden suite MANIFEST ----------------------------------------------- */
/* docs/file-formats.md, section 6: `#` header lines (the first one ours:
 * "# nvfp4kit golden suite ..."; "# recipe: R"), blank lines, and entries
 * "<64 hex digits of sha256><two spaces><path>", the path relative to the
 * suite folder: CASE (a file) or CASE/FILE (a folder case lists each of its
 * files). Anything else is refused with NVFP4_EFORMAT and "FILE:LINE: what":
 * a line over NVFP4_MANIFEST_MAX_LINE characters, a NUL byte, an absolute
 * path, an empty, "." or ".." component, more than two components, a path
 * that is not UTF-8 or holds a control character, a path listed twice, a
 * case listed as a file and as a folder, no entry at all. The file must be
 * a regular file of at most NVFP4_MANIFEST_MAX_BYTES (a FIFO or a device is
 * refused without waiting on it). Checking the goldens' sha256 is the
 * caller's (nvfp4_sha256_file). */
#define NVFP4_MANIFEST_MAX_LINE 1023
#define NVFP4_MANIFEST_MAX_BYTES ((size_t)256 << 20)
typedef struct {
    char sha256[65]; /* lowercase */
    char *path;
    size_t line; /* 1-based, for messages */
} nvfp4_manifest_entry;
typedef struct {
    nvfp4_manifest_entry *entries; /* in file order */
    size_t n;
    bool ours;       /* the first line is this tool's header */
    char recipe[64]; /* "# recipe: R", or "" */
} nvfp4_manifest;
nvfp4_status nvfp4_manifest_read(const char *path, nvfp4_manifest *m, nvfp4_error *err);
/* The same on text in memory (fuzzing entry point); fname names it in messages. */
nvfp4_status nvfp4_manifest_parse(const char *text, size_t len, const char *fname, nvfp4_manifest *m,
                                  nvfp4_error *err);
void nvfp4_manifest_free(nvfp4_manifest *m);
/* Length (1..4) of the well-formed UTF-8 sequence that starts s[0..n), or 0
 * when s does not start one (overlong forms and surrogates are not). */
size_t nvfp4_utf8_prefix(const char *s, size_t n);

/* SHA-256 of a buffer as 64 lowercase hex digits plus NUL. */
void nvfp4_sha256_hex(const void *buf, size_t len, char hex[65]);
nvfp4_status nvfp4_sha256_file(const char *path, char hex[65], nvfp4_error *err);

/* ---- golden bundle ------------------------------------------------------ */
#define NVFP4_BUNDLE_FORMAT "nvfp4kit-golden-bundle" /* the metadata "format" of every bundle */
#define NVFP4_BUNDLE_FORMAT_VERSION "1"

/* Builds the bundle of q (quantized from x: rows x cols, dtype) into out
 * (initialized by the caller): x, data, scale, scale_swizzled, amax, dequant
 * for the rowwise output, *_t for the columnwise one, and the metadata. */
nvfp4_status nvfp4_bundle_build(const nvfp4_quantized *q, const void *x, nvfp4_dtype dtype, size_t rows,
                                size_t cols, nvfp4_tensor_set *out, nvfp4_error *err);
/* The same bundle, the set taking q's code and scale buffers instead of copying them (the quantized
 * output is not held twice): q is then borrowed (its pointers stay valid while out lives, and
 * nvfp4_quantized_free leaves them to the set). A q that is already borrowed is copied as above. */
nvfp4_status nvfp4_bundle_build_taking(nvfp4_quantized *q, const void *x, nvfp4_dtype dtype, size_t rows,
                                       size_t cols, nvfp4_tensor_set *out, nvfp4_error *err);

/* Checks that s is a well-formed bundle: metadata (format version, recipe,
 * block, rounding, shapes) and the shape of every component present. With
 * need_all false, components may be absent (a kernel's partial output). */
nvfp4_status nvfp4_bundle_validate(const nvfp4_tensor_set *s, const char *fname, bool need_all, nvfp4_error *err);

/* Reconstructs the quantization described by a complete bundle (data,
 * scale, amax of each orientation present; the options from the metadata).
 * Free with nvfp4_quantized_free. */
nvfp4_status nvfp4_bundle_to_quantized(const nvfp4_tensor_set *s, const char *fname, nvfp4_quantized *q,
                                       nvfp4_error *err);

/* The quantization options recorded in a bundle's metadata. */
nvfp4_status nvfp4_bundle_opts(const nvfp4_tensor_set *s, const char *fname, nvfp4_quant_opts *o,
                               nvfp4_error *err);

/* The layout of the bundle's scale_swizzled components: its metadata
 * "scale_swizzle" (docs/file-formats.md), NVFP4_SCALE_LAYOUT_128X4 when the
 * key is absent; an unknown value is an error naming fname. */
nvfp4_status nvfp4_bundle_scale_layout(const nvfp4_tensor_set *s, const char *fname, nvfp4_scale_layout *l,
                                       nvfp4_error *err);
/* Rewrites scale_swizzled (and scale_t_swizzled) of a bundle that holds the
 * linear scales in layout l, padding zero, and records l in its metadata.
 * nvfp4_bundle_build writes the cuBLAS 128x4 layout; quantize, golden and
 * verify --scale-layout call this for another. */
nvfp4_status nvfp4_bundle_relayout(nvfp4_tensor_set *s, nvfp4_scale_layout l, nvfp4_error *err);

/* ---- grouped (MoE) bundles (docs/file-formats.md, 3.7 "Grouped bundles") ---- */
/* The rowwise bundle of the stacked tensor with the grouped components:
 * scale_swizzled in the per-group padded layout, amax F32 [ngroups], m_sizes
 * I64 [ngroups], dequant with each group's amax, metadata "groups" (M1,M2,...)
 * and "group_scale_padding" (128). */
nvfp4_status nvfp4_grouped_bundle_build(const nvfp4_grouped *g, const void *x, nvfp4_dtype dtype,
                                        nvfp4_tensor_set *out, nvfp4_error *err);
/* The validation of a bundle with "groups" metadata (nvfp4_bundle_validate
 * refuses one; nvfp4_bundle_load calls this for it). */
nvfp4_status nvfp4_grouped_bundle_validate(const nvfp4_tensor_set *s, const char *fname, bool need_all,
                                           nvfp4_error *err);
/* The grouped quantization a grouped bundle holds (data, scale, amax); the
 * swizzled scales rebuilt from the linear ones. Free with nvfp4_grouped_free. */
nvfp4_status nvfp4_bundle_to_grouped(const nvfp4_tensor_set *s, const char *fname, nvfp4_grouped *g,
                                     nvfp4_error *err);

/* Reads and validates a bundle (any format; a grouped one with
 * nvfp4_grouped_bundle_validate). */
nvfp4_status nvfp4_bundle_load(const char *path, nvfp4_tensor_set *out, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_IO_H */
