/* cmd_quantize.c - `nvfp4 quantize`: quantize a tensor with a named recipe and
 * write a golden bundle (docs/file-formats.md). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "nvfp4/ggml.h"

static const char usage_head[] =
    "usage: nvfp4 quantize IN -o OUT [--recipe R] [--rowwise] [--columnwise] [--columnwise-only|--also-columnwise]\n"
    "                      [--block 1x16|16x16|1x32] [--round rn|sr] [--seed S] [--offset O]\n"
    "                      [--rht] [--rht-signs te|seed:N|none] [--rht-fp32] [--pad]\n"
    "                      [--format safetensors|npy|bin] [--shape RxC --dtype f32|bf16]\n"
    "                      [--scale-layout 128x4|8x4|linear|kv-v] [--global-scale-inverted]\n"
    "                      [--ggml-out FILE] [--groups M1,M2,...]\n"
    "\n"
    "Quantizes IN with recipe R (default te; `nvfp4 table --recipes` lists them) and writes\n"
    "the golden bundle OUT: x, data, scale, scale_swizzled, amax, dequant (rowwise) and\n"
    "data_t, scale_t, scale_t_swizzled... for the columnwise output (the transposed tensor).\n"
    "\n"
    "IN   FILE.npy ('<f4', or '<u2' holding bf16 bits), FILE.safetensors[:NAME] or a\n"
    "     folder with meta.json (the only tensor, or 'x', unless :NAME), or a raw\n"
    "     little-endian file with --shape RxC --dtype f32|bf16.\n"
    "OUT  *.safetensors -> one safetensors file; otherwise a folder of .npy files plus\n"
    "     meta.json (--format bin: raw .bin files plus meta.json).\n"
    "\n"
    "  --columnwise-only         the columnwise output only\n"
    "  --also-columnwise         the rowwise and the columnwise output (the C API's\n"
    "                            o.columnwise = true, whose rowwise is on by default)\n"
    "  --rowwise, --columnwise   the outputs to compute, as a set (default: rowwise only):\n"
    "                            --columnwise alone is --columnwise-only, with --rowwise\n"
    "                            it is --also-columnwise\n"
    ;
/* here the lines of the quantize option group (QUANT_ROWS) */
static const char usage_tail[] =
    "  --scale-layout L          the layout of scale_swizzled (and scale_t_swizzled): 128x4\n"
    "                            (cublas-128x4, the default), 8x4 (flashinfer-8x4: FlashInfer's\n"
    "                            is_sf_8x4_layout), linear (kv-k: the K scales of an NVFP4 KV\n"
    "                            cache) or kv-v (trtllm-kv-v: the V scales of FlashInfer's and\n"
    "                            TRT-LLM's KV cache, 4-token interleave); recorded in the metadata\n"
    "                            scale_swizzle (docs/file-formats.md, docs/semantics.md)\n"
    "  --ggml-out FILE           also write the rowwise codes and scales as llama.cpp's NVFP4\n"
    "                            blocks (block_nvfp4, docs/file-formats.md); recipes ggml and\n"
    "                            torchao-1level, a multiple of 64 columns; written together\n"
    "                            with OUT or not at all, never OUT itself or inside it\n"
    "  --groups M1,M2,...        grouped (MoE) quantization: IN stacks the tokens of each expert,\n"
    "                            M_i rows for expert i (0 for an expert with none; the sizes\n"
    "                            sum to the rows of IN); each expert gets its own global amax\n"
    "                            (amax holds one per expert) and its own 128x4 scale segment,\n"
    "                            padded to 128 rows (TransformerEngine's split_quantize, mslk's\n"
    "                            nvfp4_quantize_stacked, whose pipeline is --recipe mslk-stacked).\n"
    "                            Rowwise, RN, 1x16/1x32 blocks; the bundle carries m_sizes\n"
    "                            and the metadata groups\n"
    "                            (docs/semantics.md, \"Grouped (MoE) quantization\")\n"
    "An existing OUT or FILE must be a regular file (or a folder for a folder OUT): a FIFO,\n"
    "a device or a link to one is refused, never replaced.\n"
    "Exit: 0 written, 2 usage or input error.\n";

/* every row of the option table; the help lists those not described above */
#define QUANT_ROWS CLI_QUANT_ALL
#define QUANT_HELP_ROWS (QUANT_ROWS & ~(CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_ROWWISE) | \
                                        CLI_QUANT(NVFP4_OPTION_COLUMNWISE)))

enum { OPT_FORMAT = 256, OPT_SHAPE, OPT_DTYPE, OPT_GGML, OPT_COL_ONLY, OPT_ALSO_COL, OPT_LAYOUT, OPT_GROUPS };

static const struct option own_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"columnwise-only", no_argument, NULL, OPT_COL_ONLY}, {"also-columnwise", no_argument, NULL, OPT_ALSO_COL},
    {"format", required_argument, NULL, OPT_FORMAT}, {"shape", required_argument, NULL, OPT_SHAPE},
    {"dtype", required_argument, NULL, OPT_DTYPE}, {"ggml-out", required_argument, NULL, OPT_GGML},
    {"scale-layout", required_argument, NULL, OPT_LAYOUT}, {"groups", required_argument, NULL, OPT_GROUPS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

typedef struct {
    const uint8_t *buf;
    size_t len;
} ggml_bytes;

static nvfp4_status put_ggml_bytes(FILE *f, void *ctx, nvfp4_error *err)
{
    const ggml_bytes *g = ctx;
    (void)err; /* a short write shows as a stream error, reported by the writer */
    if (g->len) (void)fwrite(g->buf, 1, g->len, f);
    return NVFP4_OK;
}

/* --ggml-out, first step: the rowwise orientation as block_nvfp4 bytes
 * (nvfp4/ggml.h) in a temporary file beside path, renamed by
 * nvfp4_file_txn_commit once the bundle is written. */
static int stage_ggml(const char *cmd, const char *path, const nvfp4_quantized *q, nvfp4_file_txn *t)
{
    size_t n = nvfp4_ggml_nvfp4_size(q->row.rows, q->row.cols);
    uint8_t *buf = n ? malloc(n) : NULL;
    nvfp4_error err;
    int rc = NVFP4_EXIT_OK;
    ggml_bytes g = {buf, n};
    if (n && !buf) rc = cli_fail(cmd, "out of memory for %zu bytes of ggml blocks", n);
    else if (nvfp4_ggml_nvfp4_pack(&q->row, buf, n, &err) || nvfp4_file_txn_write(t, path, put_ggml_bytes, &g, &err))
        rc = cli_fail_err(cmd, &err); /* the message names path */
    free(buf);
    return rc;
}

/* The bundle and the ggml blocks are written together or not at all: the
 * ggml file is staged first (everything that can fail for it fails there),
 * then the bundle is written (atomically), then the ggml file is renamed
 * into place. Only that last rename can fail after the bundle is written
 * (the destination turned into a FIFO meanwhile, say): then a bundle file is
 * removed again; a bundle folder cannot be, and the message says so. */
static int write_outputs(const char *cmd, const char *out, const char *format, const nvfp4_tensor_set *b,
                         const char *ggml_out, const nvfp4_quantized *q)
{
    nvfp4_file_txn t;
    int rc = ggml_out ? stage_ggml(cmd, ggml_out, q, &t) : 0;
    if (rc) return rc;
    rc = cli_write_set(cmd, out, format, b);
    if (!ggml_out) return rc;
    if (rc) {
        nvfp4_file_txn_abort(&t);
        return rc;
    }
    nvfp4_error err;
    if (!nvfp4_file_txn_commit(&t, &err)) {
        cli_say_wrote(cmd, ggml_out);
        return 0;
    }
    struct stat st;
    if (lstat(out, &st) == 0 && S_ISREG(st.st_mode) && unlink(out) == 0) return cli_fail_err(cmd, &err);
    return cli_fail(cmd, "%s (the bundle %s was written)", err.message, out);
}

/* The recipes whose bytes ggml's decoder reads as they are meant: E2M1 codes,
 * an E4M3 byte per 1x16 block, no global scale. */
static bool ggml_layout_fits(const nvfp4_quant_opts *o)
{
    const nvfp4_recipe_info *r = nvfp4_recipe_get_info(nvfp4_recipe_find(o->recipe));
    nvfp4_block b = o->block == NVFP4_BLOCK_DEFAULT ? r->default_block : o->block;
    return r->elem == NVFP4_ELEM_E2M1 && r->scale_format == NVFP4_SCALEFMT_E4M3 && !r->has_global_amax &&
           b == NVFP4_BLOCK_1X16;
}

/* --groups: the grouped bundle of the stacked input (nvfp4/grouped.h). */
static int quantize_grouped(const char *cmd, const cli_input *in, const char *groups, const nvfp4_quant_opts *o,
                            const char *out, const char *format)
{
    size_t *m = NULL, n = 0;
    nvfp4_grouped g = {0};
    nvfp4_error err;
    nvfp4_tensor_set b;
    nvfp4_tset_init(&b);
    int rc = NVFP4_EXIT_OK;
    if (nvfp4_grouped_sizes_parse(groups, "--groups", &m, &n, &err) ||
        nvfp4_quantize_grouped(in->data, in->dtype, in->rows, in->cols, m, n, o, &g, &err) ||
        nvfp4_grouped_bundle_build(&g, in->data, in->dtype, &b, &err))
        rc = cli_fail_err(cmd, &err);
    else rc = cli_write_set(cmd, out, format, &b);
    nvfp4_grouped_free(&g);
    nvfp4_tset_free(&b);
    free(m);
    return rc;
}

static int run(int argc, char **argv)
{
    const char *cmd = "quantize";
    if (cli_wants_help(argc, argv)) {
        fputs(usage_head, stdout);
        cli_quant_usage(stdout, QUANT_HELP_ROWS);
        fputs(usage_tail, stdout);
        return NVFP4_EXIT_OK;
    }
    nvfp4_options g;
    nvfp4_options_init(&g);
    struct option longopts[48];
    cli_quant_longopts(longopts, 48, own_longopts, QUANT_ROWS);
    const char *out = NULL, *format = NULL, *shape = NULL, *dtype = NULL, *ggml_out = NULL, *groups = NULL;
    bool col_only = false;
    nvfp4_scale_layout layout = NVFP4_SCALE_LAYOUT_128X4;
    optind = 1;
    opterr = 0;
    int c, rc;
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_COL_ONLY:
            col_only = true;
            if ((rc = cli_quant_flag(cmd, NVFP4_OPTION_COLUMNWISE, &g))) return rc;
            break;
        case OPT_ALSO_COL:
            if ((rc = cli_quant_flag(cmd, NVFP4_OPTION_ROWWISE, &g)) ||
                (rc = cli_quant_flag(cmd, NVFP4_OPTION_COLUMNWISE, &g)))
                return rc;
            break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_SHAPE: shape = optarg; break;
        case OPT_DTYPE: dtype = optarg; break;
        case OPT_GGML: ggml_out = optarg; break;
        case OPT_GROUPS: groups = optarg; break;
        case OPT_LAYOUT:
            if (!nvfp4_scale_layout_parse(optarg, &layout))
                return cli_fail(cmd, "bad --scale-layout '%s' (128x4, 8x4, linear, kv-k or kv-v)", optarg);
            break;
        default:
            if (!cli_quant_is(c)) return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
            if ((rc = cli_quant_set(cmd, c, optarg, &g))) return rc;
        }
    }
    if (optind != argc - 1) return cli_fail(cmd, "expected one input file (see --help)");
    if (!out) return cli_fail(cmd, "missing -o OUT");
    if (col_only && nvfp4_options_named(&g, NVFP4_OPTION_ROWWISE))
        return cli_fail(cmd, "--columnwise-only excludes --rowwise and --also-columnwise");
    if ((rc = cli_quant_finish(cmd, &g, 0))) return rc;
    const nvfp4_quant_opts o = g.quant;
    if (ggml_out && !ggml_layout_fits(&o))
        return cli_fail(cmd, "--ggml-out takes a recipe with E2M1 codes, 1x16 E4M3 scales and no global scale (ggml, torchao-1level)");
    if (ggml_out && !o.rowwise) return cli_fail(cmd, "--ggml-out writes the rowwise output: add --rowwise");
    if (ggml_out && cli_same_destination(out, ggml_out))
        return cli_fail(cmd, "-o and --ggml-out name the same file (%s): give each its own", ggml_out);
    if (ggml_out && cli_destination_inside(ggml_out, out))
        return cli_fail(cmd, "--ggml-out %s is inside the bundle folder -o %s: write it elsewhere", ggml_out, out);

    if (groups && (ggml_out || layout != NVFP4_SCALE_LAYOUT_128X4))
        return cli_fail(cmd, "--groups writes the per-expert 128x4 layout: it takes neither --ggml-out nor --scale-layout");

    cli_input in;
    rc = cli_input_load(cmd, argv[optind], shape, dtype, &in);
    if (rc) {
        cli_input_free(&in);
        return rc;
    }
    if (groups) {
        rc = quantize_grouped(cmd, &in, groups, &o, out, format);
        cli_input_free(&in);
        return rc;
    }
    if (in.rows * in.cols >= ((size_t)1 << 22))
        fprintf(stderr, "nvfp4 quantize: %zu x %zu elements...\n", in.rows, in.cols);
    nvfp4_quantized q;
    nvfp4_error err;
    nvfp4_tensor_set b;
    nvfp4_tset_init(&b);
    if (nvfp4_quantize(in.data, in.dtype, in.rows, in.cols, &o, &q, &err) ||
        nvfp4_bundle_build_taking(&q, in.data, in.dtype, in.rows, in.cols, &b, &err) || /* codes not held twice */
        (layout != NVFP4_SCALE_LAYOUT_128X4 && nvfp4_bundle_relayout(&b, layout, &err)))
        rc = cli_fail_err(cmd, &err);
    else if (ggml_out && in.cols % NVFP4_GGML_NVFP4_BLOCK != 0)
        rc = cli_fail(cmd, "--ggml-out: %zu columns are not a multiple of 64 (ggml's NVFP4 block)", in.cols);
    else rc = write_outputs(cmd, out, format, &b, ggml_out, &q);
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&b);
    cli_input_free(&in);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_quantize = {"quantize", "quantize a tensor into a golden bundle", run};
