/* cmd_dequantize.c - `nvfp4 dequantize`: decode a bundle's codes and scales
 * back to fp32 with its recipe's formula. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"

static const char usage[] =
    "usage: nvfp4 dequantize BUNDLE -o OUT [--columnwise] [--format safetensors|npy|bin]\n"
    "                        [--expected GOLDEN | --recipe R --shape RxC [--block B] [--rht] [--pad]]\n"
    "\n"
    "Decodes BUNDLE's data, scale (or scale_swizzled) and amax with the recipe named in its\n"
    "metadata and writes the fp32 tensor 'dequant' (logical shape, padding dropped) to OUT:\n"
    "*.npy -> one .npy file, *.safetensors -> safetensors, else a folder (npy or bin).\n"
    "BUNDLE may be a partial one (a kernel's output): only data, a scale and amax are needed;\n"
    "a file without the bundle metadata takes it from --expected GOLDEN (the golden bundle\n"
    "the kernel ran on) or from --recipe, --shape (the input's rows x cols) and --block,\n"
    "--rht, --pad as given to quantize (the orientation follows --columnwise).\n"
    "--columnwise decodes the columnwise (transposed) output; RHT data stays in the Hadamard domain.\n"
    "A grouped bundle (nvfp4 quantize --groups) is decoded expert by expert, each with its amax.\n"
    "Exit: 0 written, 2 usage or input error.\n";

/* the options of `nvfp4 quantize` that decide a bundle's layout */
#define QUANT_ROWS (CLI_QUANT(NVFP4_OPTION_COLUMNWISE) | CLI_QUANT(NVFP4_OPTION_RECIPE) | \
                    CLI_QUANT(NVFP4_OPTION_BLOCK) | CLI_QUANT(NVFP4_OPTION_RHT) | CLI_QUANT(NVFP4_OPTION_PAD))

static const struct option own_longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"expected", required_argument, NULL, 'e'},
                                             {"shape", required_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};

/* A kernel's file has the components but not the bundle's metadata: take it
 * from the golden bundle, or from the metadata of a bundle built for a zero
 * input of the given recipe, shape and options (the same keys and values
 * `nvfp4 quantize` writes). Components the file already names stay. */
/* A grouped bundle (metadata "groups"): each expert with its own amax. */
static int dequantize_grouped(const char *cmd, const nvfp4_tensor_set *s, const char *in, nvfp4_tensor_set *o,
                              const char *out, const char *format)
{
    nvfp4_grouped g;
    nvfp4_error err;
    nvfp4_tensor *d;
    if (nvfp4_bundle_to_grouped(s, in, &g, &err)) return cli_fail_err(cmd, &err);
    size_t shape[2] = {g.rows, g.cols};
    int rc = nvfp4_tset_add(o, "dequant", NVFP4_T_F32, 2, shape, NULL, &d, &err) ||
                     nvfp4_grouped_dequantize(&g, (float *)(void *)d->data, &err)
                 ? cli_fail_err(cmd, &err)
                 : 0;
    nvfp4_grouped_free(&g);
    for (size_t i = 0; !rc && i < s->meta_count; i++)
        if (strcmp(s->meta[i].key, "format") != 0) (void)nvfp4_tset_meta_set(o, s->meta[i].key, s->meta[i].value, NULL);
    return rc ? rc : cli_write_set(cmd, out, format, o);
}

static int fill_metadata(const char *cmd, nvfp4_tensor_set *s, const char *expected, const nvfp4_quant_opts *o,
                         size_t rows, size_t cols)
{
    nvfp4_tensor_set m;
    nvfp4_tset_init(&m);
    nvfp4_error err;
    int rc = 0;
    if (expected) {
        if (nvfp4_tset_read(expected, &m, &err)) rc = cli_fail_err(cmd, &err);
    } else {
        size_t n = rows * cols;
        float *z = calloc(n ? n : 1, sizeof *z);
        nvfp4_quantized q;
        memset(&q, 0, sizeof q);
        if (!z) rc = cli_fail(cmd, "out of memory");
        else if (nvfp4_quantize(z, NVFP4_DTYPE_F32, rows, cols, o, &q, &err) ||
                 nvfp4_bundle_build(&q, z, NVFP4_DTYPE_F32, rows, cols, &m, &err))
            rc = cli_fail_err(cmd, &err);
        nvfp4_quantized_free(&q);
        free(z);
    }
    for (size_t i = 0; !rc && i < m.meta_count; i++)
        if (nvfp4_tset_meta_set(s, m.meta[i].key, m.meta[i].value, &err)) rc = cli_fail_err(cmd, &err);
    /* the orientations are those whose codes the file holds */
    if (!rc && (nvfp4_tset_meta_set(s, "rowwise", nvfp4_tset_find(s, "data") ? "true" : "false", &err) ||
                nvfp4_tset_meta_set(s, "columnwise", nvfp4_tset_find(s, "data_t") ? "true" : "false", &err)))
        rc = cli_fail_err(cmd, &err);
    nvfp4_tset_free(&m);
    return rc;
}

static int run(int argc, char **argv)
{
    const char *cmd = "dequantize";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    const char *out = NULL, *format = NULL, *expected = NULL, *shape_arg = NULL;
    nvfp4_options g;
    nvfp4_options_init(&g);
    struct option longopts[24];
    cli_quant_longopts(longopts, 24, own_longopts, QUANT_ROWS);
    size_t rows = 0, cols = 0;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'f') format = optarg;
        else if (c == 'e') expected = optarg;
        else if (c == 's') shape_arg = optarg;
        else if (cli_quant_is(c)) {
            if ((rc = cli_quant_set(cmd, c, optarg, &g))) return rc;
        } else return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
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
    nvfp4_quant_opts qo = g.quant; /* recipe NULL unless --recipe */
    const char *recipe = qo.recipe;
    bool colwise = nvfp4_options_named(&g, NVFP4_OPTION_COLUMNWISE); /* the orientation decoded */
    if (expected && (recipe || shape_arg)) return cli_fail(cmd, "--expected excludes --recipe/--shape");
    if ((recipe || shape_arg || qo.rht || qo.pad || qo.block) && !(recipe && shape_arg))
        return cli_fail(cmd, "--recipe R and --shape RxC go together (and --block, --rht, --pad need them)");
    if (shape_arg && !cli_parse_shape(shape_arg, &rows, &cols)) return cli_fail(cmd, "bad --shape '%s' (RxC)", shape_arg);
    /* the outputs of the quantization described: --columnwise, or --rht (on the columnwise output) */
    if ((rc = cli_quant_finish(cmd, &g, NVFP4_OPTIONS_RHT_SELECTS_COLUMNWISE))) return rc;
    qo = g.quant;
    if (nvfp4_tset_read(in, &s, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    if ((expected || recipe) && (rc = fill_metadata(cmd, &s, expected, &qo, rows, cols))) goto done;
    if (nvfp4_tset_meta_get(&s, "groups") ? nvfp4_grouped_bundle_validate(&s, in, false, &err)
                                          : nvfp4_bundle_validate(&s, in, false, &err)) {
        rc = cli_fail_err(cmd, &err);
        goto done;
    }
    /* The decoder needs codes, scales and amaxes: the bundle's input and
     * reference decodes go before the codes are copied out, the rest after,
     * so the peak memory is about the bundle itself (docs/performance.md). */
    static const char *const unneeded[] = {"x", "dequant", "dequant_t"};
    for (size_t i = 0; i < sizeof unneeded / sizeof unneeded[0]; i++) nvfp4_tset_remove(&s, unneeded[i]);
    if (nvfp4_tset_meta_get(&s, "groups")) {
        rc = colwise ? cli_fail(cmd, "%s: a grouped bundle has no columnwise output", in)
                     : dequantize_grouped(cmd, &s, in, &o, out, format);
        goto done;
    }
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
