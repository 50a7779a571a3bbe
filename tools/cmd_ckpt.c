/* cmd_ckpt.c - `nvfp4 ckpt inspect|check PATH`: NVFP4 model checkpoints in
 * the modelopt and compressed-tensors conventions (docs/checkpoints.md). The
 * reading, statistics and checks are the library's (include/nvfp4/ckpt.h);
 * this file parses options and prints. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "ckpt_to_gguf.h"
#include "nvfp4/ckpt.h"
#include "nvfp4/formats.h"

static const char usage[] =
    "usage: nvfp4 ckpt inspect PATH [--json]\n"
    "       nvfp4 ckpt check PATH [--original ORIG] [--json] [--strict]\n"
    "       nvfp4 ckpt convert PATH --to modelopt|compressed-tensors -o OUT\n"
    "       nvfp4 ckpt convert PATH --to gguf -o OUT.gguf [--converter convert_hf_to_gguf.py]\n"
    "       nvfp4 ckpt diff A B [--json]\n"
    "\n"
    "PATH is a checkpoint folder: *.safetensors (one file, or shards listed by\n"
    "model.safetensors.index.json) with hf_quant_config.json (modelopt) or config.json\n"
    "holding a quantization_config (compressed-tensors), or a llama.cpp .gguf file\n"
    "(GGML_TYPE_NVFP4 tensors, their .scale / .input_scale, prec_a4 marking; inspect,\n"
    "check and diff). Tensors are read memory-mapped, one layer at a time.\n"
    "\n"
    "inspect  the convention, the scheme, and one row per NVFP4 layer: shape, the stored\n"
    "         global scale, the weight amax it implies (2688 x weight_scale_2, or\n"
    "         2688 / weight_global_scale), the largest decoded |weight|, the E4M3 block\n"
    "         scales (smallest nonzero, largest, count of zeros), the share of each of\n"
    "         the 16 codes (0x0..0xF, in percent), activation precision (W4A4 or W4A16)\n"
    "         and whether an input scale is present.\n"
    "check    decodes every NVFP4 layer and prints one line per finding:\n"
    "         SEVERITY CATEGORY TENSOR: evidence and fix. Categories: global-scale-missing,\n"
    "         global-scale-nonfinite, global-scale-garbage, global-scale-reciprocal,\n"
    "         scale-shape, scale-layout, scale-nonfinite, dtype-mismatch,\n"
    "         input-scale-missing, activation-precision (a weight-only layer that stores an\n"
    "         input scale), and with --original decode-error and nibble-order (errors);\n"
    "         fused-global-scale-mismatch (a hazard: correct per layer, wrong in a runtime\n"
    "         that fuses q/k/v or gate/up with one scale). The rules: docs/checkpoints.md.\n"
    "\n"
    "convert  writes PATH in the other convention to the new folder OUT: codes and block\n"
    "         scales byte for byte; weight <-> weight_packed, weight_scale_2 (amax/2688) <->\n"
    "         weight_global_scale (2688/amax) and input_scale <-> input_global_scale as the\n"
    "         fp32 reciprocal, the largest change of a decoded weight it causes printed;\n"
    "         the same shards, hf_quant_config.json / config.json as each writer writes\n"
    "         them, other files copied. OUT appears whole or not at all. A checkpoint\n"
    "         with an error finding is refused (exit 1); the output is checked (exit 1\n"
    "         if that check finds an error).\n"
    "         --to gguf runs llama.cpp's convert_hf_to_gguf.py (--converter FILE or\n"
    "         $NVFP4_GGUF_CONVERTER; python3 with gguf-py/ of its tree on PYTHONPATH), which\n"
    "         writes the tokenizer, hyperparameters, merged experts and RoPE-ordered q/k,\n"
    "         into a temporary file beside OUT.gguf; OUT.gguf is written only when ckpt diff\n"
    "         shows every code and block scale byte carried and ckpt check finds no error\n"
    "         (exit 1 otherwise; exit 2 when the converter fails, its last output shown).\n"
    "\n"
    "diff     pairs the NVFP4 layers of two checkpoints of the same model by name (either\n"
    "         convention) and prints per layer the share of equal code and scale bytes,\n"
    "         the elements whose decoded values differ (each side decoded by its own\n"
    "         convention's rule), the relative RMS and largest difference, and a verdict\n"
    "         (same numbers; same bytes but another global-scale reading; another\n"
    "         writer's rule or other weights; only in A or B). Exit 0 when every layer\n"
    "         has the same numbers, 1 otherwise. One side may be the GGUF llama.cpp's\n"
    "         converter made of the other: layers paired by the converter's names\n"
    "         (blk.N.attn_q, ffn_gate_exps and each expert's rows), the llama q/k rows\n"
    "         put back in their order with the file's head counts.\n"
    "\n"
    "  --original ORIG  (check) the unquantized weights (a .safetensors file or a folder\n"
    "            of them, P.weight for each layer P): per layer the relative RMS and the\n"
    "            largest absolute error of the decoded weights, the error of a correct\n"
    "            quantization (the convention writer's rule), and which writer's rule\n"
    "            gives exactly the stored bytes (modelopt 0.47, compressed-tensors\n"
    "            0.20.1 on fp32, bf16 or fp16 weights; own or fused-group amax; a Mixtral\n"
    "            expert also found as w1/w3/w2). decode-error when the error exceeds\n"
    "            2x the correct one; nibble-order (or scale-layout) when swapped nibbles\n"
    "            (or swizzled scales) decode within it. For a GGUF file each tensor is\n"
    "            compared with the modules the converter made it of (each expert's rows\n"
    "            of a merged tensor; q/k rows read back from the RoPE order)\n"
    "  --json    print {\"convention\", \"scheme\", \"findings\": [{\"tensor\", \"category\",\n"
    "            \"severity\", \"message\"}], \"layers\": [...]} instead of text\n"
    "  --strict  (check) hazards count as errors\n"
    "  --to CONV, -o OUT  (convert) the target convention and the new folder (a file\n"
    "            for gguf)\n"
    "  --converter FILE  (convert --to gguf) llama.cpp's convert_hf_to_gguf.py\n"
    "\n"
    "Exit: 0 no error (hazards are shown), 1 a finding is an error (or a hazard with\n"
    "--strict), 2 usage error or an unreadable checkpoint (the message names the file).\n";

static const char *CMD = "ckpt";

enum { OPT_JSON = 256, OPT_STRICT, OPT_ORIGINAL, OPT_TO, OPT_CONVERTER };
static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
                                         {"strict", no_argument, NULL, OPT_STRICT},
                                         {"original", required_argument, NULL, OPT_ORIGINAL},
                                         {"to", required_argument, NULL, OPT_TO},
                                         {"converter", required_argument, NULL, OPT_CONVERTER},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static void on_progress(size_t done, size_t total, const char *what, void *ctx)
{
    (void)ctx;
    cli_progress(CMD, done, total, what);
}

static void print_num(char *buf, size_t n, bool have, double v)
{
    if (!have) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.6g", v);
}

/* The width of the layer column: 48, or the longest name (a MoE expert's
 * names run past 48). */
static int name_width(size_t width, const char *name) { return (int)(strlen(name) > width ? strlen(name) : width); }

static int layer_column(const nvfp4_ckpt_report *rep)
{
    int w = 48;
    for (size_t i = 0; i < rep->nlayers; i++) w = name_width((size_t)w, rep->layers[i].name);
    return w;
}

static void print_layers(const nvfp4_ckpt_report *rep)
{
    int nw = layer_column(rep);
    printf("%-*s %-12s %-11s %-11s %-11s %-11s %-23s %s\n", nw, "layer", "shape", "global", "amax", "|w|max",
           "act", "scales min/max/zeros", "codes % (0x0..0xF)");
    for (size_t i = 0; i < rep->nlayers; i++) {
        const nvfp4_ckpt_layer *l = &rep->layers[i];
        char shape[32], g[24], a[24], d[24], sc[64], act[16];
        snprintf(shape, sizeof shape, "%zux%zu", l->rows, l->cols);
        print_num(g, sizeof g, l->has_global, l->global_scale);
        print_num(a, sizeof a, l->has_global, l->amax_implied);
        print_num(d, sizeof d, l->decoded, l->amax_decoded);
        if (l->decoded)
            snprintf(sc, sizeof sc, "%.4g/%.4g/%llu", l->scale_min, l->scale_max, (unsigned long long)l->scale_zero);
        else snprintf(sc, sizeof sc, "(not decoded)");
        snprintf(act, sizeof act, "%s%s", l->weight_only ? "W4A16" : "W4A4", l->has_input_scale ? "+in" : "");
        printf("%-*s %-12s %-11s %-11s %-11s %-11s %-23s", nw, l->name, shape, g, a, d, act, sc);
        uint64_t total = 0;
        for (int k = 0; k < 16; k++) total += l->code_hist[k];
        for (int k = 0; k < 16; k++) printf(" %.1f", total ? 100.0 * (double)l->code_hist[k] / (double)total : 0.0);
        printf("\n");
    }
}

/* --original: one row per compared layer. */
static void print_comparison(const nvfp4_ckpt_report *rep)
{
    int nw = layer_column(rep);
    printf("%-*s %-11s %-11s %-11s %-11s %s\n", nw, "layer", "rel.rms", "correct", "max|err|", "swapped", "written by");
    for (size_t i = 0; i < rep->nlayers; i++) {
        const nvfp4_ckpt_layer *l = &rep->layers[i];
        if (!l->compared) {
            printf("%-*s (not compared: no %s.weight in the original, or not decodable)\n", nw, l->name, l->name);
            continue;
        }
        printf("%-*s %-11.4g %-11.4g %-11.4g %-11.4g %s%s\n", nw, l->name, l->err_rel_rms, l->ref_rel_rms, l->err_max_abs,
               l->err_swapped_rel_rms, l->written_by ? l->written_by : "no known writer's rule",
               !l->written_by ? "" : l->written_group_amax ? "'s rule, fused group amax" : "'s rule");
    }
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

static void print_findings(const nvfp4_ckpt_report *rep, bool strict)
{
    for (size_t i = 0; i < rep->nfindings; i++) {
        const nvfp4_ckpt_finding *f = &rep->findings[i];
        printf("%s %s %s: %s\n", strict ? "error" : nvfp4_ckpt_severity_name(f->severity), f->category, f->tensor,
               f->message);
    }
    size_t errs = nvfp4_ckpt_report_errors(rep, strict), all = rep->nfindings;
    printf("%zu layer%s in %zu file%s: %zu error%s, %zu hazard%s%s\n", rep->nlayers, plural(rep->nlayers), rep->nfiles,
           plural(rep->nfiles), errs, plural(errs), all - errs, plural(all - errs), strict ? " (--strict)" : "");
}

/* Scans path; prints its findings when there are errors. NULL rep on a read failure (message printed). */
static int scan_or_fail(const char *path, nvfp4_ckpt **ck, nvfp4_ckpt_report *rep)
{
    nvfp4_error err;
    if (nvfp4_ckpt_open(path, ck, &err)) return cli_fail_err(CMD, &err);
    nvfp4_status st = nvfp4_ckpt_scan(*ck, on_progress, NULL, rep, &err);
    cli_progress_end();
    if (st) {
        nvfp4_ckpt_report_free(rep);
        nvfp4_ckpt_close(*ck);
        return cli_fail_err(CMD, &err);
    }
    return NVFP4_EXIT_OK;
}

static int run_convert(const char *path, const char *to, const char *out, const char *converter)
{
    if (!to || !out) return cli_fail(CMD, "convert needs --to modelopt|compressed-tensors|gguf and -o OUT");
    nvfp4_ckpt_convention conv;
    if (!strcmp(to, "modelopt")) conv = NVFP4_CKPT_MODELOPT;
    else if (!strcmp(to, "compressed-tensors")) conv = NVFP4_CKPT_COMPRESSED_TENSORS;
    else if (!strcmp(to, "gguf")) conv = NVFP4_CKPT_GGUF;
    else return cli_fail(CMD, "--to %s: modelopt, compressed-tensors or gguf", to);
    if (converter && conv != NVFP4_CKPT_GGUF) return cli_fail(CMD, "--converter applies to --to gguf only");
    nvfp4_ckpt *ck;
    nvfp4_ckpt_report rep;
    int rc = scan_or_fail(path, &ck, &rep);
    if (rc) return rc;
    if (nvfp4_ckpt_report_errors(&rep, false)) {
        print_findings(&rep, false);
        fprintf(stderr, "nvfp4 ckpt: %s has errors (above); convert carries bytes and would carry them too: "
                "fix them first\n", path);
        nvfp4_ckpt_report_free(&rep);
        nvfp4_ckpt_close(ck);
        return NVFP4_EXIT_MISMATCH;
    }
    if (conv == NVFP4_CKPT_GGUF) {
        rc = rep.convention == NVFP4_CKPT_GGUF ? cli_fail(CMD, "%s is a GGUF file already", path)
                                               : ckpt_convert_to_gguf(CMD, ck, &rep, path, out, converter);
        nvfp4_ckpt_report_free(&rep);
        nvfp4_ckpt_close(ck);
        return rc;
    }
    nvfp4_error err;
    nvfp4_ckpt_convert_result res;
    nvfp4_status st = nvfp4_ckpt_convert(ck, &rep, conv, out, &res, &err);
    const char *from = nvfp4_ckpt_convention_name(rep.convention);
    nvfp4_ckpt_report_free(&rep);
    nvfp4_ckpt_close(ck);
    if (st) return cli_fail_err(CMD, &err);
    printf("%s -> %s: %zu layers, %zu tensors in %zu file%s; codes and block scales copied byte for byte, %zu "
           "per-tensor scales converted\n", from, to, res.layers, res.tensors, res.files, plural(res.files),
           res.scales_converted);
    if (res.scales_converted && strcmp(from, to) != 0)
        printf("largest change of a decoded weight (fp32 reciprocal of the global scale): %.6g (%s)\n",
               res.max_decode_change, res.max_change_layer[0] ? res.max_change_layer : "-");
    rc = scan_or_fail(out, &ck, &rep);
    if (rc) return rc;
    size_t errs = nvfp4_ckpt_report_errors(&rep, false);
    printf("check of %s: %zu error%s, %zu hazard%s\n", out, errs, plural(errs), rep.nfindings - errs,
           plural(rep.nfindings - errs));
    if (errs) print_findings(&rep, false);
    nvfp4_ckpt_report_free(&rep);
    nvfp4_ckpt_close(ck);
    return errs ? NVFP4_EXIT_MISMATCH : NVFP4_EXIT_OK;
}

static int run_diff(const char *pa, const char *pb, bool json)
{
    nvfp4_ckpt *a, *b;
    nvfp4_ckpt_report ra, rb;
    int rc = scan_or_fail(pa, &a, &ra);
    if (rc) return rc;
    if ((rc = scan_or_fail(pb, &b, &rb))) {
        nvfp4_ckpt_report_free(&ra);
        nvfp4_ckpt_close(a);
        return rc;
    }
    nvfp4_error err;
    nvfp4_ckpt_diff d;
    nvfp4_status st = nvfp4_ckpt_diff_run(a, &ra, b, &rb, &d, &err);
    size_t same = 0;
    for (size_t i = 0; !st && i < d.nlayers; i++) same += d.layers[i].compared && !d.layers[i].elements_differ;
    if (st) rc = cli_fail_err(CMD, &err);
    else if (json) {
        char *s = nvfp4_ckpt_diff_json(&d);
        if (!s) rc = cli_fail(CMD, "out of memory");
        else {
            puts(s);
            free(s);
        }
    } else {
        printf("A: %s (%s)\nB: %s (%s)\n", pa, nvfp4_ckpt_convention_name(ra.convention), pb,
               nvfp4_ckpt_convention_name(rb.convention));
        int nw = 48;
        for (size_t i = 0; i < d.nlayers; i++) nw = name_width((size_t)nw, d.layers[i].name);
        printf("%-*s %-8s %-8s %-12s %-11s %-11s %s\n", nw, "layer", "codes=", "scales=", "values!=", "rel.rms",
               "max|diff|", "verdict");
        for (size_t i = 0; i < d.nlayers; i++) {
            const nvfp4_ckpt_diff_layer *l = &d.layers[i];
            if (!l->compared) {
                printf("%-*s %s\n", nw, l->name, nvfp4_ckpt_diff_verdict(l));
                continue;
            }
            char vals[32];
            snprintf(vals, sizeof vals, "%llu", (unsigned long long)l->elements_differ);
            printf("%-*s %-8.4f %-8.4f %-12s %-11.4g %-11.4g %s\n", nw, l->name, l->code_equal, l->scale_equal, vals,
                   l->rel_rms_diff, l->max_abs_diff, nvfp4_ckpt_diff_verdict(l));
        }
        printf("%zu of %zu layers have the same numbers\n", same, d.nlayers);
    }
    if (!rc && same != d.nlayers) rc = NVFP4_EXIT_MISMATCH;
    if (!st) nvfp4_ckpt_diff_free(&d);
    nvfp4_ckpt_report_free(&ra);
    nvfp4_ckpt_report_free(&rb);
    nvfp4_ckpt_close(a);
    nvfp4_ckpt_close(b);
    return rc;
}

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    bool json = false, strict = false;
    const char *original = NULL, *to = NULL, *out = NULL, *converter = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = cli_getopt(argc, argv, "ho:", longopts)) != -1) {
        switch (c) {
        case OPT_JSON: json = true; break;
        case OPT_STRICT: strict = true; break;
        case OPT_ORIGINAL: original = optarg; break;
        case OPT_TO: to = optarg; break;
        case 'o': out = optarg; break;
        case OPT_CONVERTER: converter = optarg; break;
        default: return cli_fail(CMD, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (argc - optind == 3 && !strcmp(argv[optind], "diff")) {
        if (strict || original || to || out || converter) return cli_fail(CMD, "diff takes --json only (see --help)");
        return run_diff(argv[optind + 1], argv[optind + 2], json);
    }
    if (argc - optind != 2) return cli_fail(CMD, "expected ACTION PATH: inspect PATH or check PATH (see --help)");
    const char *action = argv[optind], *path = argv[optind + 1];
    bool check = strcmp(action, "check") == 0;
    if (strcmp(action, "convert") == 0) {
        if (json || strict || original) return cli_fail(CMD, "convert takes --to and -o only (see --help)");
        return run_convert(path, to, out, converter);
    }
    if (to || out || converter) return cli_fail(CMD, "--to, -o and --converter apply to convert only");
    if (!check && strcmp(action, "inspect") != 0)
        return cli_fail(CMD, "unknown action '%s': inspect, check or convert (see --help)", action);
    if (strict && !check) return cli_fail(CMD, "--strict applies to check only");
    if (original && !check) return cli_fail(CMD, "--original applies to check only");
    nvfp4_error err;
    nvfp4_ckpt *ck;
    if (nvfp4_ckpt_open(path, &ck, &err)) return cli_fail_err(CMD, &err);
    nvfp4_ckpt_report rep;
    nvfp4_status st = nvfp4_ckpt_scan(ck, on_progress, NULL, &rep, &err);
    cli_progress_end();
    if (!st && original) st = nvfp4_ckpt_compare(ck, original, &rep, &err);
    nvfp4_ckpt_close(ck);
    if (st) {
        nvfp4_ckpt_report_free(&rep);
        return cli_fail_err(CMD, &err);
    }
    int rc = NVFP4_EXIT_OK;
    if (json) {
        char *s = nvfp4_ckpt_report_json(&rep);
        if (!s) rc = cli_fail(CMD, "out of memory");
        else {
            puts(s);
            free(s);
        }
    } else {
        printf("convention: %s\nscheme: %s\n", nvfp4_ckpt_convention_name(rep.convention), rep.scheme);
        if (original) print_comparison(&rep);
        if (check) print_findings(&rep, strict);
        else print_layers(&rep);
    }
    if (rc == NVFP4_EXIT_OK && check && nvfp4_ckpt_report_errors(&rep, strict)) rc = NVFP4_EXIT_MISMATCH;
    nvfp4_ckpt_report_free(&rep);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_ckpt = {
    "ckpt", "model checkpoints (modelopt, compressed-tensors, GGUF): inspect, check, convert, diff", run};
