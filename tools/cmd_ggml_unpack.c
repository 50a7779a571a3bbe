/* cmd_ggml_unpack.c - `nvfp4 ggml-unpack`: llama.cpp NVFP4 blocks
 * (block_nvfp4, as `nvfp4 quantize --ggml-out` writes them and a ggml
 * kernel stores them) into the library's code and scale tensors, a kernel
 * output that `nvfp4 verify` and `nvfp4 identify` read (docs/file-formats.md,
 * section 3.6). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/ggml.h"

static const char usage[] =
    "usage: nvfp4 ggml-unpack IN --shape RxC -o OUT [--format safetensors|npy|bin]\n"
    "\n"
    "Reads IN, the raw bytes of a GGML_TYPE_NVFP4 tensor of R rows and C columns (C a\n"
    "multiple of 64: R*C/64 blocks of 36 bytes, each 4 UE4M3 scale bytes and 32 code bytes),\n"
    "and writes OUT with the tensors data [R, C/2] (two E2M1 codes per byte, element 2j in the\n"
    "low nibble) and scale [R, C/16]: the rowwise components of a golden bundle, which\n"
    "`nvfp4 verify --expected BUNDLE --actual OUT` compares (recipe ggml).\n"
    "\n"
    "Exit: 0 written, 2 usage or input error.\n";

enum { OPT_SHAPE = 256, OPT_FORMAT };
static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static const char *CMD = "ggml-unpack";

/* The two tensors of the unpacked blocks. */
static int unpack_into_set(const char *path, const uint8_t *buf, size_t len, size_t rows, size_t cols,
                           nvfp4_tensor_set *s)
{
    nvfp4_error err;
    size_t dshape[2] = {rows, cols / 2}, sshape[2] = {rows, cols / 16};
    nvfp4_tensor *d, *sc;
    if (nvfp4_tset_add(s, "data", NVFP4_T_U8, 2, dshape, NULL, &d, &err) ||
        nvfp4_tset_add(s, "scale", NVFP4_T_U8, 2, sshape, NULL, &sc, &err))
        return cli_fail_err(CMD, &err);
    d = nvfp4_tset_find(s, "data"); /* the first pointer is stale after the second add */
    if (nvfp4_ggml_nvfp4_unpack(buf, len, rows, cols, d->data, sc->data, &err))
        return cli_fail(CMD, "%s: %s", path, err.message);
    return NVFP4_EXIT_OK;
}

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    const char *out = NULL, *shape = NULL, *format = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_FORMAT: format = optarg; break;
        default: return cli_fail(CMD, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cli_fail(CMD, "expected one input file (see --help)");
    if (!out) return cli_fail(CMD, "missing -o OUT");
    size_t rows, cols;
    if (!shape || !cli_parse_shape(shape, &rows, &cols)) return cli_fail(CMD, "--shape RxC is required (e.g. 4096x4096)");
    size_t need = nvfp4_ggml_nvfp4_size(rows, cols);
    if (need == 0 && cols % NVFP4_GGML_NVFP4_BLOCK != 0)
        return cli_fail(CMD, "--shape %s: the columns must be a multiple of 64 (ggml's NVFP4 block)", shape);
    if (need == 0) /* nvfp4_ggml_nvfp4_size's other zero: rows * cols/64 * 36 bytes do not fit in a size_t */
        return cli_fail(CMD, "--shape %s: %zu x %zu elements overflow: their ggml NVFP4 blocks would take 2^64 bytes "
                        "or more", shape, rows, cols);
    uint8_t *buf = NULL;
    size_t len = 0;
    nvfp4_error err;
    const char *in = argv[optind];
    /* one byte more than needed, so that a longer file is reported with its size below */
    if (nvfp4_file_read_all(in, need + 1, &buf, &len, &err)) return cli_fail_err(CMD, &err);
    int rc;
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    if (len != need)
        rc = cli_fail(CMD, "%s: %zu bytes, but %zu x %zu elements take %zu bytes of ggml NVFP4 blocks", in, len, rows, cols,
                      need);
    else if (!(rc = unpack_into_set(in, buf, len, rows, cols, &s)))
        rc = cli_write_set(CMD, out, format, &s);
    nvfp4_tset_free(&s);
    free(buf);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_ggml_unpack = {"ggml-unpack", "llama.cpp NVFP4 blocks -> code and scale tensors for verify",
                                                 run};
