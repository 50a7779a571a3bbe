/*
 * cli.h - what every `nvfp4` subcommand file (tools/cmd_*.c) shares.
 *
 * A subcommand is one file tools/cmd_NAME.c that defines
 *     const nvfp4_cli_command nvfp4_cmd_NAME = { "name", "one-line summary", run };
 * The Makefile collects the files into the dispatch table, so adding a
 * subcommand touches no other file. Exit codes: 0 success/match,
 * 1 mismatch, 2 usage or input error.
 */
#ifndef NVFP4_TOOLS_CLI_H
#define NVFP4_TOOLS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nvfp4/quant.h"

#define NVFP4_EXIT_OK 0
#define NVFP4_EXIT_MISMATCH 1
#define NVFP4_EXIT_USAGE 2

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} nvfp4_cli_command;

/* Prints "nvfp4 NAME: message" to stderr and returns NVFP4_EXIT_USAGE. */
int cli_fail(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "nvfp4 NAME: wrote PATH" to stderr: every command that writes a
 * file says which, once it is in place. */
void cli_say_wrote(const char *cmd, const char *path);

/* Progress of a long command ("nvfp4 NAME: [done/total] what") on one
 * stderr line, redrawn in place, only when stderr is a terminal: in pipes,
 * logs and tests the output stays byte for byte what it was without it.
 * cli_progress_end clears the line. NVFP4_PROGRESS=1 forces it on, =0 off
 * (tests/cli/test_progress.sh). */
void cli_progress(const char *cmd, size_t done, size_t total, const char *what);
void cli_progress_end(void);

/* True if argv holds -h or --help. */
bool cli_wants_help(int argc, char **argv);

/* argv[*i] is --name VALUE or --name=VALUE: returns VALUE and advances *i
 * past a separate value; NULL if argv[*i] is another option, or (with
 * *missing set) if the value is missing. */
const char *cli_option_value(int argc, char **argv, int *i, const char *name, bool *missing);

/* The value of option (with or without its dashes) as the subcommand
 * compares it: a recipe name (--recipe) or a format, rounding, mode,
 * layout or block name (--format, --from, --to, --round, --mode, --tile,
 * --block) that matches one known name ignoring case is that name
 * (`--recipe TE` is te, `--round=SR` is sr); anything else is value itself.
 * cli_option_value and cli_getopt apply it, so argv is never rewritten. */
const char *cli_value_name(const char *option, const char *value);

/* getopt_long, with optarg passed through cli_value_name for the long
 * option it belongs to. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* Strict number parsers: the whole string must be consumed. Floats accept
 * decimal, C99 hex floats (with a point or a p exponent), inf/nan, and
 * 0x-prefixed 8-digit fp32 bit patterns; any other 0x token is refused.
 * Integers (every integer option, --shape RxC, seed:N) are decimal digits
 * only, 0 to 2^64-1: no sign, no blank, no 0x, and a leading 0 is not octal. */
bool cli_parse_f32(const char *s, float *out);
bool cli_parse_u64(const char *s, uint64_t *out);
bool cli_parse_size(const char *s, size_t *out);

/* The median of v[0..n) (n >= 1), sorting v in place; *lo and *hi (each may
 * be NULL) get its extremes. For the benchmarks' repeated measurements. */
double cli_median(double *v, size_t n, double *lo, double *hi);

/* Shortest decimal that reads back as the same float, without an exponent
 * for 1e-5 <= |x| < 1e6 (nvfp4_format_f32_shortest). */
void cli_format_f32(char *buf, size_t n, float x);

#endif /* NVFP4_TOOLS_CLI_H */
