/* cli_io.c - loading input tensors and writing tensor sets for the CLI. */
#include "cli_io.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *volatile guarded_cmd;

/* Runs first among the exit handlers (registered last): a library called
 * exit() while the command was still running. */
static void runtime_exit_guard(void)
{
    const char *cmd = guarded_cmd;
    if (!cmd) return;
    fprintf(stderr, "nvfp4 %s: a runtime library (OpenMP or BLAS; see its message above) failed and ended the "
                    "command: an error, not a verdict\n", cmd);
    fflush(NULL);
    _exit(NVFP4_EXIT_USAGE); /* not exit(): its status is already 1, and OpenBLAS may hang in its shutdown */
}

void cli_runtime_guard(const char *cmd)
{
    static bool registered;
    if (!registered) registered = atexit(runtime_exit_guard) == 0;
    guarded_cmd = cmd;
}

void cli_runtime_unguard(void) { guarded_cmd = NULL; }

int cli_fail_err(const char *cmd, const nvfp4_error *err) { return cli_fail(cmd, "%s", err->message); }

bool cli_parse_shape(const char *s, size_t *rows, size_t *cols)
{
    const char *x = strchr(s, 'x');
    if (!x) return false;
    char a[32];
    size_t n = (size_t)(x - s);
    if (n == 0 || n >= sizeof a) return false;
    memcpy(a, s, n);
    a[n] = '\0';
    return cli_parse_size(a, rows) && cli_parse_size(x + 1, cols) && *rows > 0 && *cols > 0;
}

void cli_input_free(cli_input *in)
{
    nvfp4_tset_free(&in->owner);
    free(in->raw);
    memset(in, 0, sizeof *in);
}

static bool path_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static int load_raw(const char *cmd, const char *spec, const char *shape, const char *dtype, cli_input *in)
{
    if (!shape || !dtype) return cli_fail(cmd, "%s: a raw input needs --shape RxC and --dtype f32|bf16", spec);
    if (!cli_parse_shape(shape, &in->rows, &in->cols)) return cli_fail(cmd, "bad --shape '%s' (expected RxC)", shape);
    size_t esz;
    if (strcmp(dtype, "f32") == 0) in->dtype = NVFP4_DTYPE_F32, esz = 4;
    else if (strcmp(dtype, "bf16") == 0) in->dtype = NVFP4_DTYPE_BF16, esz = 2;
    else return cli_fail(cmd, "bad --dtype '%s' (f32 or bf16)", dtype);
    size_t n, bytes;
    if (!nvfp4_mul_size(in->rows, in->cols, &n) || !nvfp4_mul_size(n, esz, &bytes))
        return cli_fail(cmd, "--shape %s overflows", shape);
    nvfp4_error err;
    size_t len;
    if (nvfp4_file_read_all(spec, bytes, &in->raw, &len, &err)) {
        if (err.status == NVFP4_EFORMAT)
            return cli_fail(cmd, "%s: file is larger than --shape %s --dtype %s needs (%zu bytes)", spec, shape, dtype,
                            bytes);
        return cli_fail_err(cmd, &err);
    }
    if (len != bytes)
        return cli_fail(cmd, "%s: truncated: --shape %s --dtype %s needs %zu bytes, file has %zu", spec, shape, dtype,
                        bytes, len);
    in->data = in->raw;
    return 0;
}

/* Picks the tensor: by name, else the only one, else "x". */
static const nvfp4_tensor *pick(const nvfp4_tensor_set *s, const char *name)
{
    if (name) return nvfp4_tset_find(s, name);
    if (s->count == 1) return &s->tensors[0];
    return nvfp4_tset_find(s, "x");
}

/* Reads the set at path (a FILE[:NAME] spec, split here in place) and picks the tensor. */
static int load_named(const char *cmd, char *path, cli_input *in)
{
    /* FILE:NAME, unless a file with the whole name exists. */
    const char *name = NULL;
    char *colon = strrchr(path, ':');
    if (colon && !path_exists(path)) {
        *colon = '\0';
        name = colon + 1;
    }
    nvfp4_error err;
    if (nvfp4_tset_read(path, &in->owner, &err)) return cli_fail_err(cmd, &err);
    const nvfp4_tensor *t = pick(&in->owner, name);
    if (!t) {
        if (name) return cli_fail(cmd, "%s: no tensor named '%s'", path, name);
        return cli_fail(cmd, "%s: holds %zu tensors and none is named 'x'; name one as %s:NAME", path,
                        in->owner.count, path);
    }
    if (t->dtype == NVFP4_T_F32) in->dtype = NVFP4_DTYPE_F32;
    else if (t->dtype == NVFP4_T_BF16 || t->dtype == NVFP4_T_U16) in->dtype = NVFP4_DTYPE_BF16;
    else return cli_fail(cmd, "%s: tensor '%s' is %s; the input must be F32 or BF16 ('<f4' or '<u2' in .npy)", path,
                         t->name, nvfp4_tdtype_name(t->dtype));
    if (t->ndim == 1) in->rows = 1, in->cols = t->shape[0];
    else if (t->ndim == 2) in->rows = t->shape[0], in->cols = t->shape[1];
    else return cli_fail(cmd, "%s: tensor '%s' has %u dimensions; the input must be 1-D or 2-D", path, t->name,
                         t->ndim);
    if (in->rows == 0 || in->cols == 0) return cli_fail(cmd, "%s: tensor '%s' is empty", path, t->name);
    in->data = t->data;
    return 0;
}

int cli_input_load(const char *cmd, const char *spec, const char *shape, const char *dtype, cli_input *in)
{
    memset(in, 0, sizeof *in);
    nvfp4_tset_init(&in->owner);
    if (shape || dtype) return load_raw(cmd, spec, shape, dtype, in);
    char *path = strdup(spec); /* sized to the spec: a long path is never cut */
    if (!path) return cli_fail(cmd, "out of memory");
    int rc = load_named(cmd, path, in);
    free(path);
    return rc;
}

int cli_write_set(const char *cmd, const char *path, const char *format, const nvfp4_tensor_set *s)
{
    nvfp4_file_format f = nvfp4_file_format_guess(path);
    if (format && !nvfp4_file_format_parse(format, &f))
        return cli_fail(cmd, "bad --format '%s' (safetensors, npy or bin)", format);
    nvfp4_error err;
    if (nvfp4_tset_write(path, s, f, &err)) return cli_fail_err(cmd, &err);
    cli_say_wrote(cmd, path);
    return 0;
}

/* realpath of path's folder, then "/" and its last component: the name a
 * rename would replace (a symbolic link there is itself that name). NULL
 * when the folder does not resolve; caller frees. */
static char *destination_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!real) return NULL;
    size_t n = strlen(real) + strlen(base) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
    free(real);
    return out;
}

bool cli_same_destination(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) return true;
    char *ra = destination_name(a), *rb = destination_name(b);
    bool same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

bool cli_destination_inside(const char *file, const char *dir)
{
    char *rf = destination_name(file), *rd = realpath(dir, NULL);
    size_t n = rd ? strlen(rd) : 0;
    bool inside = rf && rd && strncmp(rf, rd, n) == 0 && (rf[n] == '/' || n == 1);
    free(rf);
    free(rd);
    return inside;
}
