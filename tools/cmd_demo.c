/* cmd_demo.c - `nvfp4 demo`: the main job on built-in defaults. Quantizes a
 * built-in 16-element block (with a tie, an outlier and a negative zero) with
 * the default recipe `te` (TransformerEngine's NVFP4 kernels, docs/semantics.md, "Recipes")
 * and explains every step and every element.
 *
 * The codes, the block scale and the dequantized values come from the public
 * tensor API (nvfp4_quantize / nvfp4_dequantize); the intermediate values
 * shown (S_enc, the encode factor, the scaled value y, the random bytes)
 * come from nvfp4_trace (nvfp4/trace.h), which evaluates the quantizer's own
 * per-block functions, so the demo cannot drift from the library. To grow
 * it: add steps (RHT, GEMM, golden files) as new functions called from
 * run(). */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"
#include "nvfp4/trace.h"

static const char *const CMD = "demo";

enum { DEMO_N = 16 };

/* The example block: 12 is the outlier that sets the amax (so the encode
 * factor is exactly 0.5); 5 and 1.5 land on E2M1 ties (2.5 and 0.75); -0.0
 * and -0.3 show that the sign of zero is kept. */
static const float demo_block[DEMO_N] = {0.8f, -1.3f, 5.0f, 2.2f, -0.0f, 12.0f, 0.1f, -3.1f,
                                         1.5f, 7.0f,  -0.3f, 4.4f, 2.0f, -6.9f, 0.55f, 3.0f};

typedef struct {
    nvfp4_rounding round;
    uint64_t seed, offset;
} demo_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nvfp4 demo [--round rn|sr] [--seed S] [--offset O]\n"
            "\n"
            "Quantizes a built-in 16-value block with the default recipe `te`\n"
            "(TransformerEngine's NVFP4 kernels) and explains each step: global amax,\n"
            "global encode scale, E4M3 block scale, encode factor, and for every element\n"
            "the scaled value, the E2M1 code, its decoded value, the dequantized value\n"
            "and the error.\n"
            "\n"
            "  --round R    rn (default) or sr (stochastic rounding, the SR contract's bits, docs/semantics.md)\n"
            "  --seed S     sr: Philox seed (default 0)\n"
            "  --offset O   sr: Philox offset (default 0)\n"
            "  -h, --help   this text\n");
}

static const char *f32s(char *buf, size_t n, float v)
{
    if (v != v) snprintf(buf, n, "NaN");
    else cli_format_f32(buf, n, v);
    return buf;
}

/* Why element x (scaled to y) got code c: the same classification as
 * `nvfp4 explain`, reduced to a short note. */
static void element_note(char *buf, size_t n, float x, float y, uint8_t c, const demo_opts *o, uint8_t r, float amax)
{
    float a = fabsf(y);
    uint8_t lo = nvfp4_e2m1_from_f32(a, NVFP4_RZ, 0);
    if (fabsf(x) == amax && a >= 6.0f) {
        snprintf(buf, n, "the amax element: scaled to 6, the largest code");
        return;
    }
    if (x == 0.0f) {
        snprintf(buf, n, signbit(x) ? "negative zero keeps its sign: 0x8" : "zero");
        return;
    }
    if (lo == 7u) {
        snprintf(buf, n, "saturates at 6");
        return;
    }
    float lo_v = nvfp4_e2m1_to_f32(lo), hi_v = nvfp4_e2m1_to_f32((uint8_t)(lo + 1u));
    char ls[16], hs[16];
    cli_format_f32(ls, sizeof ls, lo_v);
    cli_format_f32(hs, sizeof hs, hi_v);
    if (a == lo_v) {
        snprintf(buf, n, "exact: y is on the E2M1 grid");
        return;
    }
    if (o->round == NVFP4_SR) {
        unsigned ups = 0;
        for (unsigned k = 0; k < 256u; k++) ups += (nvfp4_e2m1_from_f32(y, NVFP4_SR, (uint8_t)k) & 7u) != lo;
        snprintf(buf, n, "r=%3u: P(|y| -> %s) = %u/256, iff r >= %u", r, hs, ups, 256u - ups);
        return;
    }
    double frac = ((double)a - (double)lo_v) / ((double)hi_v - (double)lo_v);
    if (frac == 0.5) snprintf(buf, n, "tie between %s and %s: goes to the even code", ls, hs);
    else if ((c & 7u) == 0 && signbit(y)) snprintf(buf, n, "rounds to zero and keeps the sign: 0x8 = -0");
    else snprintf(buf, n, "nearest of %s and %s", ls, hs);
}

static int parse_args(int argc, char **argv, demo_opts *o)
{
    o->round = NVFP4_RN;
    o->seed = o->offset = 0;
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        bool known = (len == 7 && strncmp(name, "--round", 7) == 0) || (len == 6 && strncmp(name, "--seed", 6) == 0) ||
                     (len == 8 && strncmp(name, "--offset", 8) == 0);
        if (!known) return cli_fail(CMD, "unexpected argument '%s' (see nvfp4 demo --help)", name);
        if (!v) return cli_fail(CMD, "%s needs a value", name);
        if (!eq) i++;
        if (name[2] == 'r') {
            if (!nvfp4_rounding_parse(cli_value_name("--round", v), &o->round) || o->round == NVFP4_RZ)
                return cli_fail(CMD, "unknown rounding '%s' for the te recipe (expected rn or sr)", v);
        } else if (!cli_parse_u64(v, name[2] == 's' ? &o->seed : &o->offset)) {
            return cli_fail(CMD, "%.*s '%s' is not an unsigned 64-bit integer", (int)len, name, v);
        } else {
            seeded = true;
        }
    }
    if (seeded && o->round != NVFP4_SR) return cli_fail(CMD, "--seed and --offset apply only with --round sr");
    return NVFP4_EXIT_OK;
}

static void print_steps(const nvfp4_quantized *q, const nvfp4_trace_block *t)
{
    char s1[48], s2[48], s3[48];
    printf("step 1  global amax    amax  = max |x| = %s   (the tensor is this one block)\n", f32s(s1, sizeof s1, q->row.amax));
    printf("step 2  global scale   S_enc = fminf(2688/amax, FLT_MAX) = %s,  S_dec = 1/S_enc = %s\n",
           f32s(s1, sizeof s1, t->s_enc), f32s(s2, sizeof s2, t->s_dec));
    printf("step 3  block scale    s     = e4m3_rn_satfinite(block_amax * (S_enc * fl(1/6))) = 0x%02X = %s\n",
           q->row.scale[0], f32s(s1, sizeof s1, nvfp4_e4m3_to_f32(q->row.scale[0])));
    printf("step 4  encode factor  inv   = fminf(1/(s * S_dec), FLT_MAX) = %s\n", f32s(s1, sizeof s1, t->factor));
    printf("step 5  elements       y = x * inv,  code = e2m1(y),  dequant = fp4(code) * ((s * amax) * fl(1/2688))\n");
    printf("                       dequant scale (s * amax) * fl(1/2688) = %s\n", f32s(s3, sizeof s3, t->dequant_scale));
}

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return NVFP4_EXIT_OK;
    }
    demo_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != NVFP4_EXIT_OK) return rc;

    nvfp4_quant_opts qo;
    nvfp4_quant_opts_init(&qo);
    qo.recipe = "te";
    qo.rounding = o.round;
    qo.seed = o.seed;
    qo.offset = o.offset;
    nvfp4_quantized q;
    nvfp4_error err = {0};
    if (nvfp4_quantize(demo_block, NVFP4_DTYPE_F32, 1, DEMO_N, &qo, &q, &err) != NVFP4_OK)
        return cli_fail(CMD, "quantization failed: %s", err.message);
    float deq[DEMO_N];
    if (nvfp4_dequantize(&q, false, deq, &err) != NVFP4_OK) {
        nvfp4_quantized_free(&q);
        return cli_fail(CMD, "dequantization failed: %s", err.message);
    }
    nvfp4_trace_block t;
    if (nvfp4_trace(demo_block, NVFP4_DTYPE_F32, 1, DEMO_N, &qo, 0, 0, &t, &err) != NVFP4_OK) {
        nvfp4_quantized_free(&q);
        return cli_fail(CMD, "trace failed: %s", err.message);
    }

    printf("nvfp4 demo: one 16-value block through recipe `te` (%s), rounding %s",
           nvfp4_recipe_get_info(q.recipe)->provenance, nvfp4_rounding_name(o.round));
    if (o.round == NVFP4_SR) printf(", seed %llu, offset %llu", (unsigned long long)o.seed, (unsigned long long)o.offset);
    printf("\n\n");
    print_steps(&q, &t);
    printf("\n  i           x           y  code       fp4     dequant       error  note\n");
    double sq = 0.0, maxerr = 0.0;
    for (int i = 0; i < DEMO_N; i++) {
        float x = demo_block[i];
        float y = t.elem[i].scaled;
        uint8_t c = nvfp4_unpack(q.row.data, (size_t)i);
        float e = deq[i] - x;
        char xs[48], ys[48], fs[48], ds[48], es[48], note[96];
        element_note(note, sizeof note, x, y, c, &o, t.elem[i].rbits, q.row.amax);
        printf("%3d %11s %11s   0x%X %9s %11s %11s  %s\n", i, f32s(xs, sizeof xs, x), f32s(ys, sizeof ys, y), c,
               f32s(fs, sizeof fs, nvfp4_e2m1_to_f32(c)), f32s(ds, sizeof ds, deq[i]), f32s(es, sizeof es, e), note);
        sq += (double)e * (double)e;
        if (fabs((double)e) > maxerr) maxerr = fabs((double)e);
    }
    printf("\npacked codes (element 2j in the low nibble of byte j):");
    for (size_t j = 0; j < q.row.data_bytes; j++) printf(" %02X", q.row.data[j]);
    printf("\nblock scale byte (E4M3): %02X   global amax (fp32): %a\n", q.row.scale[0], (double)q.row.amax);
    char ms[32], rs[32];
    printf("error: max |dequant - x| = %s, RMS = %s\n", nvfp4_format_f64_digits(maxerr, 9, ms, sizeof ms),
           nvfp4_format_f64_digits(sqrt(sq / DEMO_N), 9, rs, sizeof rs));
    printf("\nnext: nvfp4 explain VALUE (one value in detail), nvfp4 table (all code points)\n");
    nvfp4_quantized_free(&q);
    return NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_demo = {"demo", "quantize a built-in example block with recipe te and explain it", run};
