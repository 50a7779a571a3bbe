/* cmd_golden.c - `nvfp4 golden`: generate suites of golden bundles (hard
 * cases and seeded random tensors, TestFloat-style levels) plus a MANIFEST
 * with each file's SHA-256, the generating command, the recipe and the tool
 * version. Every byte depends only on the options: the data come from a
 * seeded splitmix64 stream and transcendental-free arithmetic (a series
 * logarithm, IEEE sqrt), and no file records a time or a path. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_quant.h"
#include "golden_mutants.h"

static const char usage[] =
    "usage: nvfp4 golden --suite edge|random|shapes|mutants|all --recipe R --out DIR\n"
    "                    [--level 1|2] [--seed S] [--round rn|sr] [--format safetensors|npy|bin] [--force]\n"
    "                    [--scale-layout 128x4|8x4|linear]\n"
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
    "--mutants writes nothing: it generates the suite (default all) in memory and prints\n"
    "the mutation report, for every mutant of the recipe the case that kills it and the\n"
    "causes verify names, then the separate-N cases, the pairs not separated and the\n"
    "candidates not singled out; exit 0 when every mutant is killed, 1 when one survives.\n"
    "--scale-layout L writes scale_swizzled in layout L (default 128x4; 8x4 is FlashInfer's\n"
    "is_sf_8x4_layout) and records it in each bundle's metadata scale_swizzle, so a kernel that\n"
    "writes that layout is verified against the suite as it is (docs/semantics.md).\n"
    "--level 1 (default) small; 2 more cases and larger tensors. --seed S (default 1) seeds the\n"
    "random data and, with --round sr, the Philox stream (case k uses offset 4k).\n"
    "The suite is built in a hidden folder beside DIR and swapped into place when complete, so\n"
    "DIR is the whole old suite or the whole new one, never a mix. An existing DIR must be empty\n"
    "or a suite of ours (a MANIFEST listing all it holds); --force replaces any other folder\n"
    "(everything in it is deleted).\n"
    "Exit: 0 written, 2 usage or error.\n";

/* ---- deterministic numbers --------------------------------------------------- */
typedef struct {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double uniform(rng *r) { return ((double)(next_u64(r) >> 11) + 0.5) * 0x1p-53; }

/* ln(u) for u > 0 from +, *, / only (2 atanh series), so it is the same on
 * every IEEE machine, unlike libm's log. */
static double det_log(double u)
{
    int e;
    double m = frexp(u, &e); /* u = m * 2^e, m in [0.5, 1) */
    double t = (m - 1.0) / (m + 1.0), t2 = t * t, term = t, sum = 0.0;
    for (int k = 0; k < 40; k++) {
        sum += term / (double)(2 * k + 1);
        term *= t2;
    }
    return (double)e * 0.6931471805599453 + 2.0 * sum;
}

static double normal(rng *r) /* Marsaglia's polar method */
{
    for (;;) {
        double a = 2.0 * uniform(r) - 1.0, b = 2.0 * uniform(r) - 1.0, s = a * a + b * b;
        if (s > 0.0 && s < 1.0) return a * sqrt(-2.0 * det_log(s) / s);
    }
}

static double laplace(rng *r)
{
    double u = uniform(r) - 0.5;
    return u < 0 ? det_log(1.0 + 2.0 * u) : -det_log(1.0 - 2.0 * u);
}

static float bf16_round(float x) /* RN-even to bf16 (finite inputs) */
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* ---- cases --------------------------------------------------------------------- */
typedef struct {
    const char *name, *desc;
    size_t rows, cols;
    float *x;               /* rows * cols */
    nvfp4_dtype dtype;      /* BF16: x is converted (exactly: bf16 values) */
    nvfp4_block block;      /* DEFAULT: the recipe's */
    bool rht;
} gcase;

static float *alloc_x(gcase *c, size_t rows, size_t cols)
{
    c->rows = rows;
    c->cols = cols;
    c->x = calloc(rows * cols, sizeof(float));
    return c->x;
}

static const float e2m1_ties[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};

/* With global amax 2688, S_enc = 1 and a block whose amax is 6*2^k gets the
 * exact scale 2^k (te), so x = tie*2^k lands exactly on the tie. Block 0:
 * ties; block 1: next float up; block 2: next float down (both signs). */
static void edge_e2m1_ties(gcase *c, int level)
{
    int klo = level >= 2 ? -9 : -6, khi = 8;
    size_t rows = (size_t)(khi - klo + 1) + 1;
    float *x = alloc_x(c, rows, 48);
    x[0] = 2688.0f;
    for (int k = klo; k <= khi; k++) {
        float *row = x + (size_t)(k - klo + 1) * 48, s = ldexpf(1.0f, k);
        for (int b = 0; b < 3; b++) {
            float *blk = row + 16 * b;
            blk[0] = 6.0f * s;
            for (int i = 0; i < 7; i++) {
                float t = e2m1_ties[i] * s;
                if (b == 1) t = nextafterf(t, INFINITY);
                if (b == 2) t = nextafterf(t, 0.0f);
                blk[1 + i] = t;
                blk[8 + i] = -t;
            }
            blk[15] = b == 0 ? -0.0f : (b == 1 ? 6.0f * s : -6.0f * s);
        }
    }
    c->name = "edge-e2m1-ties";
    c->desc = "every E2M1 tie (and its float neighbours) at scales 2^k, global amax 2688";
}

/* Block amaxes 6*m for m each midpoint between consecutive scale values
 * (codes 0 .. last, every step-th) and the neighbouring floats, one block
 * per amax, after a first row holding the global amax that makes S_enc = 1. */
static void scale_ties_case(gcase *c, int level, float (*decode)(uint8_t), int last, float global_amax)
{
    int step = level >= 2 ? 1 : 5;
    size_t nb = 0;
    float bam[3 * 254];
    for (int code = 0; code + 1 <= last; code += step) {
        float lo = decode((uint8_t)code), hi = decode((uint8_t)(code + 1));
        float m = (lo + hi) * 0.5f;
        bam[nb++] = 6.0f * m;
        bam[nb++] = nextafterf(6.0f * m, INFINITY);
        bam[nb++] = nextafterf(6.0f * m, 0.0f);
    }
    size_t cols = 256, per_row = cols / 16, rows = (nb + per_row - 1) / per_row + 1;
    float *x = alloc_x(c, rows, cols);
    x[0] = global_amax;
    for (size_t b = 0; b < nb; b++) {
        float *blk = x + cols + b * 16;
        blk[b % 16] = bam[b];
        for (int i = 1; i < 16; i++) blk[(b + (size_t)i) % 16] = bam[b] * (float)(i % 7 - 3) * 0.125f;
    }
}

/* E4M3 midpoints up to 448 (code 126), global amax 2688 so S_enc = 1. */
static void edge_e4m3_ties(gcase *c, int level)
{
    scale_ties_case(c, level, nvfp4_e4m3_to_f32, 125, 2688.0f);
    c->name = "edge-e4m3-scale-ties";
    c->desc = "block amax 6*m for E4M3 midpoints m and neighbours, global amax 2688";
}

/* UE5M3 recipes (prototype): every UE5M3 midpoint, subnormal ones included,
 * global amax 6 * 114688 = 688128 so S_enc = 1 (te-ue5m3-1level has S_enc =
 * 1 anyway). */
static void edge_ue5m3_ties(gcase *c, int level)
{
    scale_ties_case(c, level, nvfp4_ue5m3_to_f32, 254, 688128.0f);
    c->name = "edge-ue5m3-scale-ties";
    c->desc = "block amax 6*m for UE5M3 midpoints m and neighbours, global amax 688128";
}

static void edge_zero_blocks(gcase *c, int level)
{
    (void)level;
    float *x = alloc_x(c, 16, 64);
    rng r = {7};
    for (size_t i = 0; i < 16 * 64; i++) x[i] = (float)normal(&r);
    for (size_t j = 0; j < 64; j++) x[j] = 0.0f;          /* row 0: all +0 */
    for (size_t j = 0; j < 64; j++) x[64 + j] = -0.0f;    /* row 1: all -0 */
    for (size_t j = 0; j < 16; j++) x[2 * 64 + j] = 0.0f; /* single zero blocks */
    for (size_t j = 16; j < 32; j++) x[3 * 64 + j] = -0.0f;
    for (size_t j = 0; j < 16; j++) x[4 * 64 + 48 + j] = (j & 1) ? -0.0f : 0.0f;
    c->name = "edge-zero-blocks";
    c->desc = "+0, -0 and mixed-zero blocks and rows among normal data";
}

/* Global amax 1e6 with blocks whose amax shrinks by 10x per block: the
 * block scale underflows E4M3 (to a subnormal, then 0). */
static void edge_underflow(gcase *c, int level)
{
    size_t rows = level >= 2 ? 8 : 2;
    float *x = alloc_x(c, rows, 16 * 12);
    x[0] = 1e6f;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < 12; b++) {
            float a = 1e3f * (float)(i + 1);
            for (size_t d = 0; d < b; d++) a /= 10.0f; /* IEEE division, not libm's powf */
            for (size_t k = 0; k < 16; k++)
                if (!(i == 0 && b == 0 && k == 0)) x[i * 192 + b * 16 + k] = a * (float)((int)(k % 5) - 2) * 0.5f;
        }
    c->name = "edge-underflow";
    c->desc = "blocks far below the global amax (1e6): block scales underflow E4M3";
}

static void edge_outliers(gcase *c, int level)
{
    size_t rows = level >= 2 ? 64 : 16;
    float *x = alloc_x(c, rows, 64);
    rng r = {11};
    for (size_t i = 0; i < rows * 64; i++) x[i] = (float)(normal(&r) * 0.01);
    for (size_t i = 0; i < rows; i++) x[i * 64 + (i * 7) % 64] = (i & 1) ? -100.0f : 100.0f;
    c->name = "edge-outliers";
    c->desc = "N(0, 0.01) blocks with one +-100 outlier per row at varying positions";
}

static void edge_specials(gcase *c, int level)
{
    (void)level;
    float *x = alloc_x(c, 16, 32);
    rng r = {13};
    for (size_t i = 0; i < 16 * 32; i++) x[i] = (float)normal(&r);
    x[3] = NAN;
    x[32 + 5] = -NAN;
    for (size_t k = 0; k < 16; k++) x[2 * 32 + k] = NAN;     /* an all-NaN block */
    x[3 * 32 + 1] = -0.0f;
    x[4 * 32 + 17] = -1e-30f;                                /* negative underflow */
    x[5 * 32 + 9] = 1e-40f;                                  /* subnormal input */
    c->name = "edge-nan-neg-zero";
    c->desc = "NaN elements and an all-NaN block, -0, negative underflow, subnormal inputs";
}

static void edge_amax(gcase *c, int which)
{
    float *x = alloc_x(c, 16, 32);
    rng r = {17 + (uint64_t)which};
    for (size_t i = 0; i < 16 * 32; i++) {
        double v = normal(&r);
        switch (which) {
        case 0: x[i] = (i & 3) ? 0.0f : -0.0f; break;
        case 1: x[i] = (float)v; break;
        case 2: x[i] = (float)(v * 1e-40); break;
        case 3: x[i] = (float)(v * 1e-30); break;
        default: x[i] = (float)(v * 1e37); break;
        }
    }
    static const char *const names[] = {"edge-amax-zero", "edge-amax-inf", "edge-amax-subnormal", "edge-amax-tiny",
                                        "edge-amax-huge"};
    static const char *const descs[] = {"all zeros (+0 and -0): global amax 0",
                                        "one +Inf and one -Inf element: global amax Inf",
                                        "all values subnormal (~1e-40)", "all values ~1e-30", "values ~1e37 and FLT_MAX"};
    if (which == 1) {
        x[5] = INFINITY;
        x[40] = -INFINITY;
    }
    if (which == 4) x[7] = FLT_MAX;
    c->name = names[which];
    c->desc = descs[which];
}

/* Blocks of 32 whose UE8M0 scale is byte 0x00 (2^-127) or the bytes just
 * above it, for MXFP4 (block amax up to 6 * 2^-127 under RCEIL, below 2^-124
 * under FLOOR) and MXFP8 (up to 448 * 2^-127): how a kernel encodes with the
 * smallest scale (2^-127, the 2^-126 of torchao's clamp, a reciprocal of 1)
 * shows only where the scaled elements reach E2M1 / E4M3 codes above 0.
 * edge-amax-subnormal's elements (1e-40) round to 0 under RN. */
static void edge_ue8m0_min_scale(gcase *c, int level)
{
    (void)level;
    static const float amax_over_2m127[] = {6.0f, 5.0f, 4.0f, 3.0f, 7.0f, 8.0f, 12.0f, 16.0f, 24.0f,
                                            256.0f, 300.0f, 448.0f, 512.0f};
    size_t nb = sizeof amax_over_2m127 / sizeof amax_over_2m127[0];
    float *x = alloc_x(c, 2, 32 * nb);
    for (size_t b = 0; b < nb; b++) {
        float a = amax_over_2m127[b] * 0x1p-127f; /* exact: a small integer times a power of two */
        for (size_t r = 0; r < 2; r++) {
            float *blk = x + r * 32 * nb + 32 * b;
            for (size_t i = 0; i < 32; i++) blk[i] = a * (float)((int)((i + 3 * b + r) % 15) - 7) * 0.125f;
            blk[(b + 5 * r) % 32] = r ? -a : a;
        }
    }
    c->name = "edge-ue8m0-min-scale";
    c->desc = "blocks of 32 with amax 3..512 times 2^-127: UE8M0 scale byte 0x00 and the bytes above it";
}

static void random_case(gcase *c, int kind, int level, uint64_t seed)
{
    size_t rows = level >= 2 ? 256 : 64, cols = level >= 2 ? 512 : 128;
    float *x = alloc_x(c, rows, cols);
    rng r = {seed * (uint64_t)0x100000001B3 + (uint64_t)kind};
    for (size_t i = 0; i < rows * cols; i++) {
        double v = kind == 1 ? laplace(&r) : normal(&r);
        x[i] = (float)v;
    }
    static const char *const names[] = {"random-normal", "random-laplace", "random-channel-outliers",
                                        "random-bf16-exact", "random-bf16-input", "random-normal-rht"};
    static const char *const descs[] = {"N(0, 1)", "Laplace(0, 1)",
                                        "N(0, 1) with every 16th column scaled by 100 (channel outliers)",
                                        "N(0, 1) rounded to bf16, fp32 input", "N(0, 1) as a bf16 input tensor",
                                        "N(0, 1), columnwise output through the RHT (TE signs, bf16)"};
    if (kind == 2)
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 3; j < cols; j += 16) x[i * cols + j] *= 100.0f;
    if (kind == 3 || kind == 4)
        for (size_t i = 0; i < rows * cols; i++) x[i] = bf16_round(x[i]);
    if (kind == 4) c->dtype = NVFP4_DTYPE_BF16;
    if (kind == 5) c->rht = true;
    c->name = names[kind];
    c->desc = descs[kind];
}

static void shapes_case(gcase *c, size_t rows, size_t cols, nvfp4_block b, uint64_t seed)
{
    float *x = alloc_x(c, rows, cols);
    rng r = {seed ^ (rows * 1000003u + cols)};
    for (size_t i = 0; i < rows * cols; i++) x[i] = (float)normal(&r);
    c->block = b;
    static char names[64][64], descs[64][96];
    static int k;
    k = (k + 1) % 64;
    snprintf(names[k], sizeof names[k], "shapes-%zux%zu-%s", rows, cols, nvfp4_block_name(b));
    snprintf(descs[k], sizeof descs[k], "N(0, 1), %zu x %zu, block %s (padded where needed)", rows, cols,
             nvfp4_block_name(b));
    c->name = names[k];
    c->desc = descs[k];
}

/* ---- writing ---------------------------------------------------------------------- */
typedef struct {
    const char *recipe, *format, *out, *suite;
    const char *dest; /* --out; out is the temporary folder the suite is built in */
    bool force;
    int level;
    uint64_t seed;
    nvfp4_rounding round;
    nvfp4_scale_layout layout; /* of scale_swizzled (--scale-layout) */
    char command[512];
    char *manifest;
    size_t mlen, mcap;
    unsigned index, skipped;
    gm_state *gm;     /* which mutants the cases so far kill (suite mutants, --mutants) */
    bool report_only; /* --mutants: no files */
} gen;

static void manifest_add(gen *g, const char *line)
{
    size_t n = strlen(line);
    if (g->mlen + n + 1 > g->mcap) {
        g->mcap = (g->mlen + n + 1) * 2 + 4096;
        g->manifest = realloc(g->manifest, g->mcap);
        if (!g->manifest) abort();
    }
    memcpy(g->manifest + g->mlen, line, n + 1);
    g->mlen += n;
}

/* ---- the suite folder: built aside, swapped into place ---------------------------- */

/* err's message with the temporary folder's name replaced by the suite's. */
static int suite_fail(const gen *g, const nvfp4_error *err)
{
    const char *at = g->dest && g->out != g->dest ? strstr(err->message, g->out) : NULL;
    if (!at) return cli_fail("golden", "%s", err->message);
    return cli_fail("golden", "%.*s%s%s", (int)(at - err->message), err->message, g->dest, at + strlen(g->out));
}

static int suite_write_set(const gen *g, const char *path, const char *fmt, const nvfp4_tensor_set *s)
{
    nvfp4_file_format f;
    nvfp4_error err;
    if (!nvfp4_file_format_parse(fmt, &f)) return cli_fail("golden", "bad --format '%s'", fmt);
    return nvfp4_tset_write(path, s, f, &err) ? suite_fail(g, &err) : 0;
}

static int cmp_entry_path(const void *a, const void *b)
{
    return strcmp(((const nvfp4_manifest_entry *)a)->path, ((const nvfp4_manifest_entry *)b)->path);
}

/* True when the sorted entries list name (a case: a file, or a folder
 * through its files "name/..."). */
static bool manifest_lists(const nvfp4_manifest *m, const char *name)
{
    if (strcmp(name, "MANIFEST") == 0) return true;
    size_t lo = 0, hi = m->n, k = strlen(name);
    while (lo < hi) { /* the first entry not below name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->entries[mid].path, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == m->n || strncmp(m->entries[lo].path, name, k) != 0) return false;
    return m->entries[lo].path[k] == '\0' || m->entries[lo].path[k] == '/';
}

/* An existing --out is replaced only if it is empty or a suite of ours:
 * everything in it is listed by its MANIFEST (which replacing deletes). The
 * MANIFEST is read once, by the library's reader (a FIFO there is refused,
 * not waited on; a malformed one makes the folder not ours). */
static int suite_check_replaceable(const char *dir, bool force)
{
    struct stat st;
    if (lstat(dir, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return cli_fail("golden", "%s: exists and is not a folder; not overwriting", dir);
    if (force) return 0;
    DIR *d = opendir(dir);
    if (!d) return cli_fail("golden", "%s: cannot list: %s", dir, strerror(errno));
    nvfp4_manifest m;
    nvfp4_error err;
    char *mpath = malloc(strlen(dir) + sizeof "/MANIFEST");
    bool ours = false;
    if (mpath) {
        sprintf(mpath, "%s/MANIFEST", dir);
        ours = nvfp4_manifest_read(mpath, &m, &err) == NVFP4_OK;
        if (ours && !m.ours) nvfp4_manifest_free(&m), ours = false;
        if (ours) qsort(m.entries, m.n, sizeof *m.entries, cmp_entry_path);
        free(mpath);
    }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!ours || !manifest_lists(&m, e->d_name))
            rc = cli_fail("golden", "%s: not empty and not a golden suite of this tool ('%s' is not in a MANIFEST of "
                          "ours); not overwriting (--force replaces it)", dir, e->d_name);
    }
    closedir(d);
    if (ours) nvfp4_manifest_free(&m);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Adds "sha256  relpath" lines for a file, or for each file of a folder. */
static int manifest_hash(gen *g, const char *rel)
{
    char path[2048], hex[65], line[2300];
    nvfp4_error err;
    snprintf(path, sizeof path, "%s/%s", g->out, rel);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return cli_fail("golden", "%s: cannot list", path);
        char *names[64];
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < 64)
            if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n, sizeof names[0], cmp_str);
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", rel, names[i]);
            if (!rc) rc = manifest_hash(g, sub);
            free(names[i]);
        }
        return rc;
    }
    if (nvfp4_sha256_file(path, hex, &err)) return suite_fail(g, &err);
    snprintf(line, sizeof line, "%s  %s\n", hex, rel);
    manifest_add(g, line);
    return 0;
}

/* The options case number idx is quantized with. */
static void case_opts(const gen *g, const gcase *c, unsigned idx, nvfp4_quant_opts *o)
{
    nvfp4_quant_opts_init(o);
    o->recipe = g->recipe;
    o->rowwise = o->columnwise = true;
    o->pad = true;
    o->block = c->block;
    o->rounding = g->round;
    o->seed = g->seed;
    o->offset = 4u * idx;
    o->rht = c->rht;
}

static int emit(gen *g, gcase *c)
{
    unsigned idx = g->index++;
    nvfp4_quant_opts o;
    case_opts(g, c, idx, &o);
    size_t n = c->rows * c->cols;
    uint16_t *xb = NULL;
    const void *x = c->x;
    if (c->dtype == NVFP4_DTYPE_BF16) {
        xb = malloc(n * sizeof *xb);
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &c->x[i], 4);
            xb[i] = (uint16_t)(u >> 16); /* exact: the values are bf16 */
        }
        x = xb;
    }
    nvfp4_quantized q;
    nvfp4_error err;
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    int rc = 0;
    nvfp4_status st = nvfp4_quantize(x, c->dtype, c->rows, c->cols, &o, &q, &err);
    if (st == NVFP4_EINVAL || st == NVFP4_EUNSUPPORTED) {
        /* The recipe does not take this block shape or the RHT: skip, and say so. */
        fprintf(stderr, "nvfp4 golden: %s: skipped for recipe %s: %s\n", c->name, g->recipe, err.message);
        g->skipped++;
        goto done;
    }
    if (!st && g->gm) gm_note(g->gm, c->name, x, c->dtype, c->rows, c->cols, &o, &q, true);
    if (!st && g->report_only) goto done;
    if (st || nvfp4_bundle_build(&q, x, c->dtype, c->rows, c->cols, &s, &err) ||
        (g->layout != NVFP4_SCALE_LAYOUT_128X4 && nvfp4_bundle_relayout(&s, g->layout, &err)) ||
        nvfp4_tset_meta_set(&s, "case", c->name, &err) || nvfp4_tset_meta_set(&s, "description", c->desc, &err) ||
        nvfp4_tset_meta_set(&s, "generator", g->command, &err)) {
        rc = cli_fail(c->name ? "golden" : "golden", "%s: %s", c->name, err.message);
        goto done;
    }
    char rel[256], path[2048];
    const char *fmt = g->format ? g->format : "safetensors";
    snprintf(rel, sizeof rel, "%s%s", c->name, strcmp(fmt, "safetensors") == 0 ? ".safetensors" : "");
    snprintf(path, sizeof path, "%s/%s", g->out, rel);
    if ((rc = suite_write_set(g, path, fmt, &s))) goto done;
    rc = manifest_hash(g, rel);
    fprintf(stderr, "nvfp4 golden: %s (%zu x %zu)\n", rel, c->rows, c->cols);
done:
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&s);
    free(xb);
    free(c->x);
    c->x = NULL;
    return rc;
}

static int suite_edge(gen *g)
{
    void (*const fns[])(gcase *, int) = {edge_e2m1_ties, edge_e4m3_ties, edge_zero_blocks, edge_underflow,
                                         edge_outliers, edge_specials};
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof fns / sizeof fns[0]; i++) {
        gcase c = {0};
        fns[i](&c, g->level);
        rc = emit(g, &c);
    }
    if (!rc && nvfp4_recipe_get_info(nvfp4_recipe_find(g->recipe))->scale_format == NVFP4_SCALEFMT_UE5M3) {
        gcase c = {0};
        edge_ue5m3_ties(&c, g->level);
        rc = emit(g, &c);
    }
    for (int w = 0; !rc && w < 5; w++) {
        gcase c = {0};
        edge_amax(&c, w);
        rc = emit(g, &c);
    }
    return rc;
}

static int suite_random(gen *g)
{
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(g->recipe));
    int kinds = info->has_global_amax && info->elem == NVFP4_ELEM_E2M1 ? 6 : 5;
    int rc = 0;
    for (int k = 0; !rc && k < kinds; k++) {
        gcase c = {0};
        random_case(&c, k, g->level, g->seed);
        rc = emit(g, &c);
    }
    return rc;
}

static int suite_shapes(gen *g)
{
    static const size_t l1[][2] = {{1, 16}, {3, 48}, {130, 48}, {128, 80}, {17, 33}};
    static const size_t l2[][2] = {{1, 16}, {3, 48}, {130, 48}, {128, 80}, {17, 33}, {257, 200}, {512, 272}, {33, 1000}};
    const size_t(*s)[2] = g->level >= 2 ? l2 : l1;
    size_t ns = g->level >= 2 ? sizeof l2 / sizeof l2[0] : sizeof l1 / sizeof l1[0];
    static const nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
    int rc = 0;
    for (size_t i = 0; !rc && i < ns; i++)
        for (size_t b = 0; !rc && b < 3; b++) {
            gcase c = {0};
            shapes_case(&c, s[i][0], s[i][1], blocks[b], g->seed);
            rc = emit(g, &c);
        }
    return rc;
}

/* ---- the mutants suite (tools/golden_mutants.c) --------------------------------- */

/* A pool case is emitted only when it kills a mutant that every case so far
 * leaves alive: it is quantized with the options emit would give it and
 * each live mutant compared with it. */
static int try_case(gen *g, gcase *c, const char *name)
{
    c->name = name;
    nvfp4_quant_opts o;
    case_opts(g, c, g->index, &o);
    nvfp4_quantized q;
    nvfp4_error err;
    size_t kills = 0;
    if (c->dtype == NVFP4_DTYPE_F32 && nvfp4_quantize(c->x, c->dtype, c->rows, c->cols, &o, &q, &err) == NVFP4_OK) {
        kills = gm_note(g->gm, name, c->x, c->dtype, c->rows, c->cols, &o, &q, false);
        nvfp4_quantized_free(&q);
    }
    if (!kills) {
        free(c->x);
        c->x = NULL;
        return 0;
    }
    return emit(g, c);
}

static int suite_mutants(gen *g)
{
    static char names[64][64];
    size_t nn = 0;
    int rc = 0;
    for (size_t k = 0; !rc && k < gm_boundary_count() && gm_any_alive(g->gm); k++) {
        gcase c = {0};
        if ((rc = gm_boundary_case(g->recipe, k, &c.x, &c.rows, &c.cols, &c.desc))) break;
        snprintf(names[nn], sizeof names[nn], "mutants-boundary-%zu", k);
        rc = try_case(g, &c, names[nn++]);
    }
    if (!rc && gm_any_alive(g->gm)) { /* 4over6 on 16x16 tiles: exact ties between the candidates */
        gcase c = {0};
        if (!(rc = gm_tile_ties_case(g->recipe, &c.x, &c.rows, &c.cols, &c.desc)) && c.x) {
            c.block = NVFP4_BLOCK_16X16;
            snprintf(names[nn], sizeof names[nn], "mutants-tile-ties");
            rc = try_case(g, &c, names[nn++]);
        }
    }
    /* then the edge, random and shape generators, for mutants that show only
     * on specials, the RHT, 16x16 tiles or padded layouts */
    void (*const edges[])(gcase *, int) = {edge_specials, edge_zero_blocks, edge_underflow, edge_outliers,
                                           edge_e4m3_ties, edge_e2m1_ties};
    for (size_t i = 0; !rc && i < sizeof edges / sizeof edges[0] && gm_any_alive(g->gm); i++) {
        gcase c = {0};
        edges[i](&c, g->level);
        snprintf(names[nn], sizeof names[nn], "mutants-%s", c.name);
        rc = try_case(g, &c, names[nn++]);
    }
    for (int w = 0; !rc && w < 5 && gm_any_alive(g->gm); w++) {
        gcase c = {0};
        edge_amax(&c, w);
        snprintf(names[nn], sizeof names[nn], "mutants-%s", c.name);
        rc = try_case(g, &c, names[nn++]);
    }
    static const int kinds[] = {0, 5, 2};
    for (size_t i = 0; !rc && i < 3 && gm_any_alive(g->gm); i++) {
        gcase c = {0};
        random_case(&c, kinds[i], g->level, g->seed);
        snprintf(names[nn], sizeof names[nn], "mutants-%s", c.name);
        rc = try_case(g, &c, names[nn++]);
    }
    static const size_t shp[][2] = {{130, 48}, {3, 48}, {17, 33}, {40, 272}};
    static const nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
    for (size_t i = 0; !rc && i < 4 && gm_any_alive(g->gm); i++)
        for (size_t b = 0; !rc && b < 3 && nn < 64; b++) {
            gcase c = {0};
            shapes_case(&c, shp[i][0], shp[i][1], blocks[b], g->seed);
            snprintf(names[nn], sizeof names[nn], "mutants-%s", c.name);
            rc = try_case(g, &c, names[nn++]);
        }
    /* last, so that it is written only for what every case before leaves alive (MX encodes of byte 0 under RN) */
    if (!rc && gm_any_alive(g->gm) && nn < 64) {
        gcase c = {0};
        edge_ue8m0_min_scale(&c, g->level);
        snprintf(names[nn], sizeof names[nn], "mutants-%s", c.name);
        rc = try_case(g, &c, names[nn++]);
    }
    /* then inputs that separate the candidates no case tells apart (golden_mutants.c) */
    for (unsigned k = 1; !rc && nn < 64; k++) {
        gcase c = {0};
        if ((rc = gm_separating_case(g->gm, g->seed, 4u * g->index, &c.x, &c.rows, &c.cols, &c.block, &c.desc)) || !c.x)
            break;
        snprintf(names[nn], sizeof names[nn], "separate-%u", k);
        c.name = names[nn++];
        rc = emit(g, &c);
    }
    if (!rc && !g->report_only) gm_print_unseparated(g->gm, stderr);
    return rc;
}

/* golden --mutants: the suite generated in memory, then the report. */
static int mutation_report(gen *g, bool json)
{
    if (!g->suite) g->suite = "all";
    g->report_only = true;
    g->gm = gm_new(g->recipe, g->round, true);
    if (!g->gm) return cli_fail("golden", "out of memory");
    bool all = strcmp(g->suite, "all") == 0;
    int rc = 0;
    if (!rc && (all || strcmp(g->suite, "edge") == 0)) rc = suite_edge(g);
    if (!rc && (all || strcmp(g->suite, "random") == 0)) rc = suite_random(g);
    if (!rc && (all || strcmp(g->suite, "shapes") == 0)) rc = suite_shapes(g);
    if (!rc && (all || strcmp(g->suite, "mutants") == 0)) rc = suite_mutants(g);
    if (!rc) rc = gm_report(g->gm, g->suite, json);
    gm_free(g->gm);
    g->gm = NULL;
    return rc;
}

/* the suite's recipe and rounding (its --seed seeds the case generator: golden's own) */
#define QUANT_ROWS (CLI_QUANT(NVFP4_OPTION_RECIPE) | CLI_QUANT(NVFP4_OPTION_ROUND))
enum { OPT_SUITE = 256, OPT_OUT, OPT_LEVEL, OPT_SEED, OPT_FORMAT, OPT_FORCE, OPT_MUTANTS, OPT_JSON, OPT_LAYOUT };
static const struct option own_longopts[] = {
    {"suite", required_argument, NULL, OPT_SUITE},
    {"out", required_argument, NULL, OPT_OUT},     {"level", required_argument, NULL, OPT_LEVEL},
    {"seed", required_argument, NULL, OPT_SEED},
    {"format", required_argument, NULL, OPT_FORMAT}, {"force", no_argument, NULL, OPT_FORCE},
    {"mutants", no_argument, NULL, OPT_MUTANTS}, {"json", no_argument, NULL, OPT_JSON},
    {"scale-layout", required_argument, NULL, OPT_LAYOUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

static int run(int argc, char **argv)
{
    const char *cmd = "golden";
    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return NVFP4_EXIT_OK;
    }
    gen g;
    memset(&g, 0, sizeof g);
    g.recipe = "te";
    g.level = 1;
    g.seed = 1;
    g.round = NVFP4_RN;
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
        switch (c) {
        case OPT_SUITE:
            if (strcmp(optarg, "edge") && strcmp(optarg, "random") && strcmp(optarg, "shapes") &&
                strcmp(optarg, "mutants") && strcmp(optarg, "all"))
                return cli_fail(cmd, "bad --suite '%s' (edge, random, shapes, mutants or all)", optarg);
            g.suite = optarg;
            break;
        case OPT_OUT: g.out = g.dest = optarg; break;
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
                return cli_fail(cmd, "bad --scale-layout '%s' (128x4, 8x4 or linear)", optarg);
            break;
        default:
            if (!cli_quant_is(c)) return cli_fail(cmd, "unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
            if ((qrc = cli_quant_set(cmd, c, optarg, &q))) return qrc;
        }
    }
    if (q.quant.recipe) g.recipe = q.quant.recipe;
    g.round = q.quant.rounding;
    if (optind != argc) return cli_fail(cmd, "unexpected argument '%s'", argv[optind]);
    if (report) {
        if (g.out) return cli_fail(cmd, "--mutants writes nothing: drop --out");
        const nvfp4_recipe_info *ri = nvfp4_recipe_get_info(nvfp4_recipe_find(g.recipe));
        if (g.round == NVFP4_SR && !ri->supports_sr) return cli_fail(cmd, "recipe %s has no stochastic rounding", g.recipe);
        return mutation_report(&g, json);
    }
    if (json) return cli_fail(cmd, "--json goes with --mutants");
    if (!g.suite || !g.out) return cli_fail(cmd, "need --suite and --out DIR (see --help)");
    /* The suite's paths are DIR/NAME in 2048-byte buffers: refuse, never cut. */
    if (strlen(g.out) > 1500)
        return cli_fail(cmd, "--out: path too long (%zu characters; at most 1500)", strlen(g.out));
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(g.recipe));
    if (g.round == NVFP4_SR && !info->supports_sr) return cli_fail(cmd, "recipe %s has no stochastic rounding", g.recipe);
    nvfp4_dir_txn txn;
    nvfp4_error terr;
    if (suite_check_replaceable(g.dest, g.force)) return NVFP4_EXIT_USAGE;
    if (nvfp4_dir_txn_begin(&txn, g.dest, &terr)) return cli_fail_err(cmd, &terr);
    g.out = txn.tmp;
    /* The command without --out, so the MANIFEST does not depend on where it was written. */
    snprintf(g.command, sizeof g.command, "nvfp4 golden --suite %s --recipe %s --level %d --seed %llu --round %s%s%s%s%s",
             g.suite, g.recipe, g.level, (unsigned long long)g.seed, nvfp4_rounding_name(g.round),
             g.format ? " --format " : "", g.format ? g.format : "",
             g.layout != NVFP4_SCALE_LAYOUT_128X4 ? " --scale-layout " : "",
             g.layout != NVFP4_SCALE_LAYOUT_128X4 ? nvfp4_scale_layout_name(g.layout) : "");
    char head[1024];
    snprintf(head, sizeof head,
             "# nvfp4kit golden suite (docs/file-formats.md); check with: sha256sum -c MANIFEST\n"
             "# tool: nvfp4kit %s\n# command: %s\n# recipe: %s\n# rounding: %s\n# seed: %llu\n# level: %d\n",
             nvfp4_version(), g.command, g.recipe, nvfp4_rounding_name(g.round), (unsigned long long)g.seed, g.level);
    manifest_add(&g, head);
    bool all = strcmp(g.suite, "all") == 0;
    int rc = 0;
    if (all || strcmp(g.suite, "mutants") == 0) g.gm = gm_new(g.recipe, g.round, false);
    if (!rc && (all || strcmp(g.suite, "edge") == 0)) rc = suite_edge(&g);
    if (!rc && (all || strcmp(g.suite, "random") == 0)) rc = suite_random(&g);
    if (!rc && (all || strcmp(g.suite, "shapes") == 0)) rc = suite_shapes(&g);
    if (!rc && g.gm) rc = suite_mutants(&g);
    if (!rc) {
        char mpath[2048];
        nvfp4_error err;
        snprintf(mpath, sizeof mpath, "%s/MANIFEST", g.out);
        if (nvfp4_file_write_atomic(mpath, g.manifest, g.mlen, &err)) rc = suite_fail(&g, &err);
        else if (nvfp4_dir_txn_commit(&txn, &err)) rc = cli_fail_err(cmd, &err);
        else fprintf(stderr, "nvfp4 golden: %u bundles (%u skipped) and MANIFEST in %s\n", g.index - g.skipped,
                     g.skipped, g.dest);
    }
    if (rc) nvfp4_dir_txn_abort(&txn); /* nothing of a failed run stays; an old suite stays whole */
    gm_free(g.gm);
    free(g.manifest);
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_golden = {"golden", "generate golden bundle suites with a MANIFEST", run};
