/* cmd_golden.c - `nvfp4 golden`: generate suites of golden bundles (hard
 * cases and seeded random tensors, TestFloat-style levels) plus a MANIFEST
 * with each file's SHA-256, the generating command, the recipe and the tool
 * version. A thin printer over the library's nvfp4_suite_generate and
 * nvfp4_suite_mutation_report (nvfp4/suite.h), which the Python package
 * calls too: the bytes are the library's. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "nvfp4/suite.h"

static const char usage[] =
    "usage: nvfp4 golden --suite edge|random|shapes|mutants|grouped|all --recipe R --out DIR\n"
    "                    [--level 1|2] [--seed S] [--round rn|sr] [--format safetensors|npy|bin] [--force]\n"
    "                    [--scale-layout 128x4|8x4|linear|kv-v] [--global-scale-inverted]\n"
    "       nvfp4 golden --pack DIR [--recipe R] [--force]\n"
    "\n"
    "Writes one golden bundle per case into DIR (rowwise and columnwise outputs, zero\n"
    "padding on) and DIR/MANIFEST (`sha256sum -c MANIFEST` checks it).\n"
    "  edge    every E2M1 tie at scaled positions and its float neighbours, E4M3 scale ties,\n"
    "          zero and -0 blocks, underflowing blocks, single outliers, NaN/Inf/-0 elements,\n"
    "          global amax 0, Inf, tiny and huge\n"
    "  random  normal, laplace, channel outliers, bf16-exact values and a bf16 input,\n"
    "          and (NVFP4 recipes) the columnwise RHT\n"
    "  shapes  dimensions that are not multiples of 128 or of the block (swizzle and\n"
    "          block padding), each block shape 1x16, 16x16, 1x32 the recipe accepts\n"
    "  mutants inputs searched so that every catalogued kernel bug (nvfp4 table --mutants)\n"
    "          that the other cases leave alive differs from the recipe: block amaxes and\n"
    "          elements around the E4M3 / E2M1 decision boundaries of each formula, plus\n"
    "          specials, RHT, 16x16 and odd shapes as needed (only cases that kill one)\n"
    "  all     the four, so that every catalogued mutant of the recipe at this --round is\n"
    "          killed (golden --mutants lists any that survive; tests hold that none does),\n"
    "          plus separate-N cases (suites all and mutants): each candidate of verify (the\n"
    "          recipe's mutants, every recipe at each rounding) that some case tells from the\n"
    "          recipe but none singles out (another candidate gives its bytes wherever they\n"
    "          differ from the recipe's, so verify could only say `consistent with`) gets an\n"
    "          input, found by a seeded boundary search or the witness search, on which no\n"
    "          other candidate gives its bytes. Pairs that no input tried separates (the same\n"
    "          formula, e.g. te-rowscaled and amax-per-row) and candidates never singled out\n"
    "          are printed on stderr and by --mutants, never dropped.\n"
    "          Left out: the mutants of the other rounding (an SR kernel needs a --round sr\n"
    "          suite too: sr-* bugs; an RN suite has the elem-* rounding bugs), --level 2's\n"
    "          larger cases, and a recipe with no catalogued mutant gets no mutants cases\n"
    "          (nvfp4 table --mutants lists the recipes of each)\n"
    "  grouped grouped (MoE) bundles (nvfp4 quantize --groups; rowwise, RN, 128x4): stacked experts\n"
    "          of m_sizes 5,0,130 (an empty expert, a segment over 128 rows), 1,2,3,4 (K/16 = 6),\n"
    "          0,17,0 and 33,1 (K/16 = 10), whose amaxes differ by up to 10^6, so that both\n"
    "          catalogued grouped mistakes (grouped-shared-global-scale, grouped-unpadded-segments)\n"
    "          change bytes; verify --suite reports them per expert and names the mistake.\n"
    "          Not part of all: all is the suite reference/ holds byte for byte, and grouped\n"
    "          takes neither --round sr nor another --scale-layout; a recipe that refuses\n"
    "          grouping (per-token, 16x16 blocks) is an error; --seed seeds its data,\n"
    "          --level does not change it\n"
    "--mutants writes nothing: it generates the suite (default all) in memory and prints\n"
    "the mutation report, for every mutant of the recipe the case that kills it and the\n"
    "causes verify names, then the separate-N cases, the pairs not separated and the\n"
    "candidates not singled out; exit 0 when every mutant is killed, 1 when one survives.\n"
    "With --suite grouped it verifies each grouped golden against each grouped mutant's outputs\n"
    "and prints, per mutant, how many cases kill it (differ and name it) and the first; on a\n"
    "recipe without a global amax (MX) grouped-shared-global-scale is not applicable.\n"
    "With --scale-layout L the report is for a suite in layout L: the cuBLAS swizzle mutants\n"
    "count only in 128x4, layout-kv-v-as-k only in kv-v.\n"
    "--scale-layout L writes scale_swizzled in layout L (default 128x4; 8x4 is FlashInfer's\n"
    "is_sf_8x4_layout, kv-v the V scales of its NVFP4 KV cache) and records it in each\n"
    "bundle's metadata scale_swizzle, so a kernel that writes that layout is verified against\n"
    "the suite as it is (docs/semantics.md).\n"
    "--global-scale-inverted: every case's global scale handed over inverted, as FlashInfer's\n"
    "is_global_scale_inversed (docs/semantics.md); recipes with an encode scale S_enc only.\n"
    "--level 1 (default) small; 2 more cases and larger tensors. --seed S (default 1) seeds the\n"
    "random data and, with --round sr, the Philox stream (case k uses offset 4k).\n"
    "The suite is built in a hidden folder beside DIR and swapped into place when complete, so\n"
    "DIR is the whole old suite or the whole new one, never a mix. An existing DIR must be empty\n"
    "or a suite of ours (a MANIFEST listing all it holds); --force replaces any other folder\n"
    "(everything in it is deleted).\n"
    "--pack DIR writes a golden pack: conformance vectors for implementers without this tool,\n"
    "readable with a JSON parser and numpy alone (about 4.7 MB): e2m1.json, e4m3.json, ue8m0.json,\n"
    "ue5m3.json (every code decoded; every grid value, tie, subnormal, saturation and special\n"
    "input encoded by each rounding rule), sr.json (te tensors under stochastic rounding with\n"
    "the random byte of every element), suite-*/ golden suites in .npy bundles (edge cases of\n"
    "te, torchao, modelopt, mxfp4-rceil, mxfp8 and te-ue5m3, te's SR edge cases, te's odd\n"
    "shapes in each scale layout), pack.json (the index), MANIFEST and a README.md that\n"
    "explains every file, its fields and byte orders. Checked back with `nvfp4 verify --suite\n"
    "DIR --actual-dir OUTS` (docs/verify.md, \"Golden packs\"). With --recipe R the suites are\n"
    "R's instead: its edge cases (RN, and SR where R has it) and its odd shapes in each scale\n"
    "layout (the codec vectors and sr.json stay). Written aside and swapped in as a suite is;\n"
    "the other options do not apply.\n"
    "Exit: 0 written, 2 usage or error.\n";

/* The library's progress lines and notes, on stderr as before. */
static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "nvfp4 golden: %s\n", line);
}

/* golden --mutants: the suite generated in memory, then the report. */
static int mutation_report(const nvfp4_suite_opts *o, bool json)
{
    char *text = NULL;
    int verdict = 1;
    nvfp4_error err;
    if (nvfp4_suite_mutation_report(o, json, &text, &verdict, &err)) return cli_fail_err("golden", &err);
    fputs(text, stdout);
    free(text);
    return verdict;
}

/* golden --pack DIR: the library writes the pack; only --recipe and --force combine with it. */
static int write_pack(const char *dir, const char *recipe, bool force, bool other_options)
{
    if (other_options)
        return cli_fail("golden", "--pack DIR takes only --recipe and --force (the pack's contents are fixed)");
    nvfp4_pack_opts po;
    nvfp4_pack_opts_init(&po);
    po.recipe = recipe;
    po.force = force;
    po.log = log_line;
    nvfp4_error err;
    return nvfp4_pack_generate(dir, &po, &err) ? cli_fail_err("golden", &err) : NVFP4_EXIT_OK;
}

/* the suite's recipe and rounding (its --seed seeds the case generator: golden's own) */
#define QUANT_ROWS (CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_ROUND) | \
                    CLI_QUANT(NVFP4_OPTION_GLOBAL_SCALE_INVERTED))
enum {
    OPT_SUITE = 256, OPT_OUT, OPT_LEVEL, OPT_SEED, OPT_FORMAT, OPT_FORCE, OPT_MUTANTS, OPT_JSON, OPT_LAYOUT, OPT_PACK
};
static const struct option own_longopts[] = {
    {"suite", required_argument, NULL, OPT_SUITE},
    {"out", required_argument, NULL, OPT_OUT},     {"level", required_argument, NULL, OPT_LEVEL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"format", required_argument, NULL, OPT_FORMAT}, {"force", no_argument, NULL, OPT_FORCE},
    {"mutants", no_argument, NULL, OPT_MUTANTS}, {"json", no_argument, NULL, OPT_JSON},
    {"scale-layout", required_argument, NULL, OPT_LAYOUT},
    {"pack", required_argument, NULL, OPT_PACK},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

static int run(int argc, char **argv)
{
    const char *cmd = "golden";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    nvfp4_suite_opts g;
    nvfp4_suite_opts_init(&g);
    g.log = log_line;
    const char *out = NULL, *pack = NULL;
    int others = 0; /* options other than --pack and --force */
    optind = 1;
    opterr = 0;
    int c, qrc;
    uint64_t u;
    nvfp4_file_format ff;
    bool report = false, json = false;
    nvfp4_options q;
    nvfp4_options_init(&q);
    struct option longopts[24];
    cli_quant_longopts(longopts, 24, own_longopts, QUANT_ROWS);
    while ((c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        others += c != OPT_PACK && c != OPT_FORCE && c != CLI_QUANT_VAL_BASE + NVFP4_OPTION_RECIPE;
        switch (c) {
        case OPT_PACK: pack = optarg; break;
        case OPT_SUITE:
            if (!nvfp4_suite_name_valid(optarg))
                return cli_fail(cmd, "bad --suite '%s' (edge, random, shapes, mutants, grouped or all)", optarg);
            g.suite = optarg;
            break;
        case OPT_OUT: out = optarg; break;
        case OPT_FORCE: g.force = true; break;
        case OPT_MUTANTS: report = true; break;
        case OPT_JSON: json = true; break;
        case OPT_LEVEL:
            if (!cli_parse_u64(optarg, &u) || u < 1 || u > 2) return cli_fail(cmd, "bad --level '%s' (1 or 2)", optarg);
            g.level = (int)u;
            break;
        case OPT_SEED:
            if (!cli_parse_u64(optarg, &g.seed)) return cli_fail(cmd, "bad --seed '%s'", optarg);
            break;
        case OPT_FORMAT:
            if (!nvfp4_file_format_parse(optarg, &ff)) return cli_fail(cmd, "bad --format '%s'", optarg);
            g.format = optarg;
            break;
        case OPT_LAYOUT:
            if (!nvfp4_scale_layout_parse(optarg, &g.layout))
                return cli_fail(cmd, "bad --scale-layout '%s' (128x4, 8x4, linear, kv-k or kv-v)", optarg);
            break;
        default:
            if (!cli_quant_is(c)) return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
            if ((qrc = cli_quant_set(cmd, c, optarg, &q))) return qrc;
        }
    }
    if (q.quant.recipe) g.recipe = q.quant.recipe;
    g.round = q.quant.rounding;
    g.global_scale_inverted = q.quant.global_scale_inverted;
    if (optind != argc) return cli_fail(cmd, "unexpected argument '%s'", argv[optind]);
    if (pack) return write_pack(pack, q.quant.recipe, g.force, others > 0);
    if (report) {
        if (out) return cli_fail(cmd, "--mutants writes nothing: drop --out");
        return mutation_report(&g, json);
    }
    if (json) return cli_fail(cmd, "--json goes with --mutants");
    if (!g.suite || !out) return cli_fail(cmd, "need --suite and --out DIR (see --help)");
    nvfp4_error err;
    return nvfp4_suite_generate(out, &g, &err) ? cli_fail_err(cmd, &err) : NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_golden = {"golden", "generate golden bundle suites with a MANIFEST", run};
