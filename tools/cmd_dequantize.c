/* cmd_dequantize.c - `nvfp4 dequantize`: decode a bundle's codes and scales
 * back to fp32 with its recipe's formula. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"

static const char usage[] =
    "usage: nvfp4 dequantize BUNDLE -o OUT [--columnwise] [--format safetensors|npy|bin]\n"
    "\n"
    "Decodes BUNDLE's data, scale (or scale_swizzled) and amax with the recipe named in its\n"
    "metadata and writes the fp32 tensor 'dequant' (logical shape, padding dropped) to OUT:\n"
    "*.npy -> one .npy file, *.safetensors -> safetensors, else a folder (npy or bin).\n"
    "BUNDLE may be a partial one (a kernel's output): only data, a scale and amax are needed.\n"
    "--columnwise decodes the columnwise (transposed) output; RHT data stays in the Hadamard domain.\n"
    "Exit: 0 written, 2 usage or input error.\n";

static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                         {"columnwise", no_argument, NULL, 'c'},
                                         {"format", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static int run(int argc, char **argv)
{
    const char *cmd = "dequantize";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    const char *out = NULL, *format = NULL;
    bool colwise = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'c') colwise = true;
        else if (c == 'f') format = optarg;
        else return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
    }
    if (optind != argc - 1) return cli_fail(cmd, "expected one bundle (see --help)");
    if (!out) return cli_fail(cmd, "missing -o OUT");
    const char *in = argv[optind];
    nvfp4_tensor_set s, o;
    nvfp4_tset_init(&s);
    nvfp4_tset_init(&o);
    nvfp4_error err;
    nvfp4_quantized q;
    memset(&q, 0, sizeof q);
    int rc = 0;
    if (nvfp4_tset_read(in, &s, &err) || nvfp4_bundle_validate(&s, in, false, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    /* The decoder needs codes, scales and amaxes: the bundle's input and
     * reference decodes go before the codes are copied out, the rest after,
     * so the peak memory is about the bundle itself (docs/performance.md). */
    static const char *const unneeded[] = {"x", "dequant", "dequant_t"};
    for (size_t i = 0; i < sizeof unneeded / sizeof unneeded[0]; i++) nvfp4_tset_remove(&s, unneeded[i]);
    if (nvfp4_bundle_to_quantized(&s, in, &q, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    while (s.count) nvfp4_tset_remove(&s, s.tensors[s.count - 1].name); /* the metadata stays */
    if (colwise ? !q.has_col : !q.has_row) {
        rc = cli_fail(cmd, "%s: has no %s output", in, colwise ? "columnwise" : "rowwise");
        goto done;
    }
    const nvfp4_qtensor *t = colwise ? &q.col : &q.row;
    size_t shape[2] = {t->rows, t->cols};
    nvfp4_tensor *d;
    if (nvfp4_tset_add(&o, "dequant", NVFP4_T_F32, 2, shape, NULL, &d, &err) ||
        nvfp4_dequantize(&q, colwise, (float *)(void *)d->data, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    /* Keep the provenance, but the output is a plain tensor set, not a bundle. */
    for (size_t i = 0; i < s.meta_count; i++)
        if (strcmp(s.meta[i].key, "format") != 0) (void)nvfp4_tset_meta_set(&o, s.meta[i].key, s.meta[i].value, NULL);
    rc = cli_write_set(cmd, out, format, &o);
done:
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&s);
    nvfp4_tset_free(&o);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_dequantize = {"dequantize", "decode a bundle back to fp32", run};
