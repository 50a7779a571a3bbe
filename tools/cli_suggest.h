/*
 * cli_suggest.h - helping people who mistype a name: "did you mean" by edit
 * distance, case-insensitive matches where unambiguous, and a subcommand's
 * option list read from its --help text.
 */
#ifndef NVFP4_TOOLS_CLI_SUGGEST_H
#define NVFP4_TOOLS_CLI_SUGGEST_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* Damerau-Levenshtein distance (optimal string alignment: insert, delete,
 * substitute, swap two adjacent letters), ignoring case. */
size_t cli_edit_distance(const char *a, const char *b);

/* The name closest to s within 2 edits (fewer edits than either word has
 * letters; the first of equally close names), or NULL. An abbreviation that
 * keeps the first letter and the order of the rest ("colwise" for
 * "columnwise") counts as one edit. */
const char *cli_closest(const char *s, const char *const *names, size_t n);

/* s itself if it is one of names, else the one name equal to s ignoring
 * case, else NULL (also when two names match ignoring case). */
const char *cli_match_name(const char *s, const char *const *names, size_t n);

/* Prints "nvfp4: did you mean WHAT 'NAME'?" when a name is close to s. */
void cli_print_suggestion(FILE *f, const char *what, const char *s, const char *const *names, size_t n);

/* What `nvfp4 CMD --help` prints (malloc'd), or NULL. */
char *cli_help_text(const nvfp4_cli_command *cmd);

/* The distinct --options named in a help text (malloc'd strings in a
 * malloc'd array, freed with cli_free_names); returns their number. */
size_t cli_help_options(const char *help, char ***out);
void cli_free_names(char **names, size_t n);

#endif /* NVFP4_TOOLS_CLI_SUGGEST_H */
