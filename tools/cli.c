/* cli.c - helpers shared by the subcommands. */
#include "cli.h"

#include "cli_suggest.h"
#include "nvfp4/formats.h"
#include "nvfp4/options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nvfp4 %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return NVFP4_EXIT_USAGE;
}

void cli_say_wrote(const char *cmd, const char *path)
{
    fprintf(stderr, "nvfp4 %s: wrote %s\n", cmd, path);
}

/* -1 not decided yet, then 0 or 1 */
static int progress_on = -1;
static bool progress_drawn;

static bool progress_wanted(void)
{
    if (progress_on < 0) {
        const char *e = getenv("NVFP4_PROGRESS");
        progress_on = e && *e ? strcmp(e, "0") != 0 : isatty(STDERR_FILENO);
    }
    return progress_on;
}

void cli_progress(const char *cmd, size_t done, size_t total, const char *what)
{
    if (!progress_wanted()) return;
    /* \r and erase-to-end-of-line: one line, redrawn */
    fprintf(stderr, "\rnvfp4 %s: [%zu/%zu] %s\033[K", cmd, done, total, what ? what : "");
    fflush(stderr);
    progress_drawn = true;
}

void cli_progress_end(void)
{
    if (!progress_drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    progress_drawn = false;
}

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return true;
    }
    return false;
}

static bool is_hex_bits(const char *s)
{
    if (!(s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) return false;
    size_t n = strlen(s + 2);
    if (n != 8) return false;
    for (size_t i = 0; i < 8; i++)
        if (!strchr("0123456789abcdefABCDEF", s[2 + i])) return false;
    return true;
}

bool cli_parse_f32(const char *s, float *out)
{
    if (!s || !*s) return false;
    /* A 0x token must be an 8-digit bit pattern or a hex float with a point
     * or a p exponent: "0x3f80000" would otherwise read as the integer
     * 66584576, almost surely a mistyped bit pattern. */
    const char *h = (*s == '-' || *s == '+') ? s + 1 : s;
    if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X') && !strpbrk(h, "pP.") && (h != s || strlen(h) != 10))
        return false;
    if (is_hex_bits(s)) {
        uint32_t u = (uint32_t)strtoul(s + 2, NULL, 16);
        memcpy(out, &u, sizeof *out);
        return true;
    }
    char *end;
    errno = 0;
    /* strtof rounds the decimal string to the nearest float correctly
     * (glibc), so "0.1" gives the fp32 nearest to 0.1. ERANGE is fine:
     * overflow gives Inf and underflow a (signed) zero or subnormal. */
    float v = strtof(s, &end);
    if (end == s || *end != '\0') return false;
    *out = v;
    return true;
}

/* The recipe names, for matching a --recipe value ignoring case. */
static size_t recipe_names(const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < nvfp4_recipe_count() && n < cap; i++)
        names[n++] = nvfp4_recipe_get_info(nvfp4_recipe_at(i))->name;
    return n;
}

const char *cli_value_name(const char *option, const char *value)
{
    static const char *const name_valued[] = {"format", "from", "to", "round", "mode", "tile", "block"};
    static const char *const names[] = {"e2m1", "e4m3", "ue8m0", "bf16", "fp16", "rn", "rz", "sr", "floor",
                                        "rceil", "ceil", "even", "safetensors", "npy", "bin", "1x16", "16x16", "1x32"};
    if (!option || !value) return value;
    while (*option == '-') option++;
    const char *m = NULL;
    if (strcmp(option, "recipe") == 0) {
        const char *recipes[64];
        m = cli_match_name(value, recipes, recipe_names(recipes, 64));
    }
    for (size_t o = 0; !m && o < sizeof name_valued / sizeof name_valued[0]; o++)
        if (strcmp(option, name_valued[o]) == 0) m = cli_match_name(value, names, sizeof names / sizeof names[0]);
    return m ? m : value;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    int index = -1;
    int c = getopt_long(argc, argv, shortopts, longopts, &index);
    if (c != -1 && c != '?' && index >= 0 && optarg) optarg = (char *)(uintptr_t)cli_value_name(longopts[index].name, optarg);
    return c;
}

const char *cli_option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return cli_value_name(name, argv[*i] + n + 1);
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    ++*i;
    return cli_value_name(name, argv[*i]);
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    return nvfp4_option_parse_u64(s, out); /* the library's rule for every integer option */
}

bool cli_parse_size(const char *s, size_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > SIZE_MAX) return false;
    *out = (size_t)v;
    return true;
}

void cli_format_f32(char *buf, size_t n, float x) { nvfp4_format_f32_shortest(x, buf, n); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, size_t n, double *lo, double *hi)
{
    qsort(v, n, sizeof *v, cmp_double);
    if (lo) *lo = v[0];
    if (hi) *hi = v[n - 1];
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
