/* cmd_cvt.c - `nvfp4 cvt`: a TestFloat-style conversion pipe. One fp32 value
 * per line on stdin, one hex code per line on stdout, through the library's
 * scalar encoders (docs/semantics.md, "Scalar codecs"); with --from, the
 * reverse through the decoders.
 *
 * Stochastic rounding takes the random byte of input line i (counting value
 * lines from 0) from the SR contract of docs/semantics.md as if the lines were
 * the elements of one row: byte i%16 of nvfp4_sr_block_bytes(seed, offset,
 * block = i/16), i.e. byte i%4 (little-endian) of word (i%16)/4 of
 * curand_init(seed, i/16, 4*offset) + curand4(). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nvfp4/formats.h"
#include "nvfp4/philox.h"

static const char *const CMD = "cvt";

typedef enum { TO_E2M1, TO_E4M3, TO_UE8M0, TO_BF16, TO_FP16 } target;

typedef struct {
    target to;
    nvfp4_rounding round;
    bool saturate;
    nvfp4_ue8m0_mode mode;
    uint64_t seed, offset;
} cvt_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nvfp4 cvt --to e2m1|e4m3|ue8m0|bf16|fp16 [--round rn|rz|sr]\n"
            "                 [--seed S] [--offset O] [--nosat]\n"
            "                 [--mode floor|rceil|ceil|even|rn|rn-torch]\n"
            "\n"
            "Reads one fp32 value per line from stdin (decimal, C99 hex float, inf, nan,\n"
            "or a 0x-prefixed 8-digit fp32 bit pattern; blanks around it are ignored)\n"
            "and prints one code per line: 0xN for e2m1, 0xNN for e4m3 and ue8m0,\n"
            "0xNNNN for bf16 and fp16 (upper-case hex digits).\n"
            "\n"
            "  --to F       target format (required)\n"
            "  --round R    e2m1: rn (default), rz or sr; the other formats are rn only\n"
            "  --seed S     sr: Philox seed (default 0)\n"
            "  --offset O   sr: Philox offset (default 0); value line i (from 0) uses byte\n"
            "               i%%16 of the SR block bytes of block i/16 (docs/semantics.md: SR bit contract)\n"
            "  --nosat      e4m3: overflow gives NaN (0x7F|sign) instead of +-448\n"
            "  --mode M     ue8m0: floor (default), rceil, ceil, even, or round to nearest\n"
            "               with ties up as ml_dtypes (rn) or torch (rn-torch) cast to\n"
            "               float8_e8m0fnu (docs/semantics.md, \"Scalar codecs\")\n"
            "  -h, --help   this text\n"
            "\n"
            "A line that is not a value stops the run with its line number; exit 2.\n"
            "\n"
            "nvfp4 cvt --from e2m1|e4m3|ue8m0|bf16|fp16 decodes instead: one code per\n"
            "line (hex, 0x optional: 0x7, 7E, 0x3F80), one value per line, written as\n"
            "the shortest decimal that reads back as the same fp32 (nan for NaN codes).\n");
}

static bool parse_target(const char *s, target *t)
{
    static const char *const names[] = {"e2m1", "e4m3", "ue8m0", "bf16", "fp16"};
    for (int k = 0; k < 5; k++)
        if (strcmp(s, names[k]) == 0) {
            *t = (target)k;
            return true;
        }
    return false;
}

/* Parses the command line into o; returns NVFP4_EXIT_OK or a usage error. */
static int parse_args(int argc, char **argv, cvt_opts *o)
{
    const char *to = NULL, *round = NULL, *seed = NULL, *offset = NULL, *mode = NULL;
    bool nosat = false;
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if ((v = cli_option_value(argc, argv, &i, "--to", &missing))) to = v;
        else if ((v = cli_option_value(argc, argv, &i, "--round", &missing))) round = v;
        else if ((v = cli_option_value(argc, argv, &i, "--seed", &missing))) seed = v;
        else if ((v = cli_option_value(argc, argv, &i, "--offset", &missing))) offset = v;
        else if ((v = cli_option_value(argc, argv, &i, "--mode", &missing))) mode = v;
        else if (missing) return cli_fail(CMD, "%s needs a value", argv[i]);
        else if (strcmp(argv[i], "--nosat") == 0) nosat = true;
        else return cli_fail(CMD, "unexpected argument '%s' (see nvfp4 cvt --help)", argv[i]);
    }
    if (!to) return cli_fail(CMD, "--to is required (e2m1, e4m3, ue8m0, bf16 or fp16)");
    if (!parse_target(to, &o->to)) return cli_fail(CMD, "unknown target '%s' (expected e2m1, e4m3, ue8m0, bf16 or fp16)", to);
    o->round = NVFP4_RN;
    if (round && !nvfp4_rounding_parse(round, &o->round)) return cli_fail(CMD, "unknown rounding '%s' (expected rn, rz or sr)", round);
    if (o->round != NVFP4_RN && o->to != TO_E2M1) return cli_fail(CMD, "--round %s applies to e2m1 only; %s is rn", round, to);
    if ((seed || offset) && o->round != NVFP4_SR) return cli_fail(CMD, "--seed and --offset apply only with --round sr");
    o->seed = o->offset = 0;
    if (seed && !cli_parse_u64(seed, &o->seed)) return cli_fail(CMD, "--seed '%s' is not an unsigned 64-bit integer", seed);
    if (offset && !cli_parse_u64(offset, &o->offset)) return cli_fail(CMD, "--offset '%s' is not an unsigned 64-bit integer", offset);
    if (nosat && o->to != TO_E4M3) return cli_fail(CMD, "--nosat applies to e4m3 only");
    o->saturate = !nosat;
    o->mode = NVFP4_UE8M0_FLOOR;
    if (mode && o->to != TO_UE8M0) return cli_fail(CMD, "--mode applies to ue8m0 only");
    if (mode && !nvfp4_ue8m0_mode_parse(mode, &o->mode))
        return cli_fail(CMD, "unknown ue8m0 mode '%s' (expected floor, rceil, ceil, even, rn or rn-torch)", mode);
    return NVFP4_EXIT_OK;
}

/* The SR byte of value number i (docs/semantics.md, "The SR bit contract"), cached per 16-value block. */
static uint8_t sr_byte(const cvt_opts *o, uint64_t i)
{
    static uint8_t bytes[16];
    static uint64_t cached = UINT64_MAX;
    if (i / 16 != cached) {
        cached = i / 16;
        nvfp4_sr_block_bytes(o->seed, o->offset, cached, bytes);
    }
    return bytes[i % 16];
}

static void print_code(const cvt_opts *o, float x, uint64_t i)
{
    switch (o->to) {
    case TO_E2M1: printf("0x%X\n", nvfp4_e2m1_from_f32(x, o->round, o->round == NVFP4_SR ? sr_byte(o, i) : 0)); break;
    case TO_E4M3: printf("0x%02X\n", nvfp4_e4m3_from_f32(x, o->saturate)); break;
    case TO_UE8M0: printf("0x%02X\n", nvfp4_ue8m0_from_f32(x, o->mode)); break;
    case TO_BF16: printf("0x%04X\n", nvfp4_bf16_from_f32(x)); break;
    case TO_FP16: printf("0x%04X\n", nvfp4_fp16_from_f32(x)); break;
    }
}

/* Strips leading and trailing blanks (and a CR from CRLF files) in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Reads a hex code of at most max; false unless the whole token is hex. */
static bool parse_code(const char *s, unsigned max, unsigned *out)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
    if (!*s || strlen(s) > 4) return false;
    unsigned v = 0;
    for (; *s; s++) {
        if (!isxdigit((unsigned char)*s)) return false;
        v = v * 16u + (unsigned)(isdigit((unsigned char)*s) ? *s - '0' : tolower((unsigned char)*s) - 'a' + 10);
    }
    *out = v;
    return v <= max;
}

/* `cvt --from F`: code per line -> value per line, through the decoders. */
static int decode(int argc, char **argv)
{
    const char *from = NULL;
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v = cli_option_value(argc, argv, &i, "--from", &missing);
        if (v) from = v;
        else if (missing) return cli_fail(CMD, "--from needs a format");
        else return cli_fail(CMD, "--from decodes codes and takes no other option (got '%s')", argv[i]);
    }
    target t;
    if (!parse_target(from, &t)) return cli_fail(CMD, "unknown format '%s' (expected e2m1, e4m3, ue8m0, bf16 or fp16)", from);
    static const unsigned max[] = {0xFu, 0xFFu, 0xFFu, 0xFFFFu, 0xFFFFu};
    char *line = NULL;
    size_t cap = 0;
    unsigned long long lineno = 0;
    int rc = NVFP4_EXIT_OK;
    while (rc == NVFP4_EXIT_OK && getline(&line, &cap, stdin) != -1) {
        lineno++;
        char *s = trim(line);
        unsigned c;
        if (!parse_code(s, max[t], &c)) {
            rc = cli_fail(CMD, "line %llu: '%.40s' is not a code of %s (hex, 0x0 to 0x%X)", lineno, s, from, max[t]);
            break;
        }
        float x = t == TO_E2M1    ? nvfp4_e2m1_to_f32((uint8_t)c)
                  : t == TO_E4M3  ? nvfp4_e4m3_to_f32((uint8_t)c)
                  : t == TO_UE8M0 ? nvfp4_ue8m0_to_f32((uint8_t)c)
                  : t == TO_BF16  ? nvfp4_bf16_to_f32((uint16_t)c)
                                  : nvfp4_fp16_to_f32((uint16_t)c);
        char b[32];
        printf("%s\n", nvfp4_format_f32_shortest(x, b, sizeof b));
    }
    free(line);
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == NVFP4_EXIT_OK) rc = cli_fail(CMD, "cannot write the output");
    return rc;
}

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return NVFP4_EXIT_OK;
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--from") == 0 || strncmp(argv[i], "--from=", 7) == 0) return decode(argc, argv);
    cvt_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != NVFP4_EXIT_OK) return rc;
    char *line = NULL;
    size_t cap = 0;
    uint64_t lineno = 0;
    rc = NVFP4_EXIT_OK;
    while (getline(&line, &cap, stdin) != -1) {
        lineno++;
        char *t = trim(line);
        float x;
        if (*t == '\0') {
            rc = cli_fail(CMD, "line %llu: empty line (expected one fp32 value)", (unsigned long long)lineno);
            break;
        }
        if (!cli_parse_f32(t, &x)) {
            rc = cli_fail(CMD, "line %llu: cannot read '%.40s%s' as an fp32 value (decimal, hex float, inf, nan, or 0x + 8 hex digits)",
                          (unsigned long long)lineno, t, strlen(t) > 40 ? "..." : "");
            break;
        }
        print_code(&o, x, lineno - 1);
    }
    free(line);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == NVFP4_EXIT_OK) rc = cli_fail(CMD, "cannot write the output");
    }
    return rc;
}

const nvfp4_cli_command nvfp4_cmd_cvt = {"cvt", "convert fp32 values from stdin to codes, or codes to values (--from)", run};
