/*
 * cli_quant.h - the quantize option group of the `nvfp4` subcommands: the
 * rows of the library's option table (nvfp4/options.h) as getopt_long
 * entries that a subcommand concatenates with its own (git's
 * parse_options_concat), one parser for them, and their --help lines
 * generated from the table. A subcommand that quantizes names the rows it
 * takes; it never re-declares, re-parses or re-defaults them.
 */
#ifndef NVFP4_TOOLS_CLI_QUANT_H
#define NVFP4_TOOLS_CLI_QUANT_H

#include <getopt.h>
#include <stdio.h>

#include "nvfp4/options.h"

/* A set of table rows: CLI_QUANT(NVFP4_OPTION_RHT) | ... */
#define CLI_QUANT(id) (1u << (id))
#define CLI_QUANT_ALL ((1u << NVFP4_OPTION_COUNT) - 1u)

/* The getopt value of the group's row id (above every subcommand's own). */
#define CLI_QUANT_VAL_BASE 0x4000

/* own (ended by a NULL name) and then the rows in `rows`, into out (cap
 * entries, the end marker included); returns out. Aborts if cap is too
 * small: a programming error, caught by every test that runs the command. */
struct option *cli_quant_longopts(struct option *out, size_t cap, const struct option *own, unsigned rows);

/* True when getopt returned one of the group's rows. */
bool cli_quant_is(int c);

/* Applies the value of the group's option c to o: 0, or NVFP4_EXIT_USAGE
 * after "nvfp4 CMD: bad --rht-signs 'x' (te, seed:N or none)". */
int cli_quant_set(const char *cmd, int c, const char *value, nvfp4_options *o);

/* Names the flag option id (for a subcommand's alias of it, such as
 * quantize's --also-columnwise): as cli_quant_set. */
int cli_quant_flag(const char *cmd, nvfp4_option_id id, nvfp4_options *o);

/* nvfp4_options_finish: 0, or NVFP4_EXIT_USAGE after the message. */
int cli_quant_finish(const char *cmd, nvfp4_options *o, unsigned rules);

/* The --help lines of the rows in `rows`, in table order:
 * "  --rht-signs te|seed:N|none  RHT sign vector (default: te: 0xD7E8)". */
void cli_quant_usage(FILE *f, unsigned rows);

#endif /* NVFP4_TOOLS_CLI_QUANT_H */
