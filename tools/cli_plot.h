/*
 * cli_plot.h - the one way the subcommands draw a PNG (`--plot FILE`): data
 * files and a gnuplot script in a temporary folder, gnuplot run on them, the
 * PNG written beside FILE and renamed into place only when gnuplot
 * succeeded (no half-written picture is left behind).
 */
#ifndef NVFP4_TOOLS_CLI_PLOT_H
#define NVFP4_TOOLS_CLI_PLOT_H

#include <stdio.h>

#include "nvfp4/io.h"

/* Both temporaries are registered with the library's atomic writers, so
 * that SIGINT, SIGTERM or SIGHUP at any point removes them. */
typedef struct {
    nvfp4_dir_txn dir;  /* the temporary folder (script and data), never committed */
    nvfp4_file_txn png; /* the PNG being drawn, beside the target, renamed onto it */
    char target[4096];
    FILE *script;       /* write gnuplot commands here (after the terminal lines) */
} cli_plot;

/* Starts a width x height PNG for FILE: checks that gnuplot is installed
 * (else prints "nvfp4 CMD: --plot needs gnuplot ..." and returns 2), makes
 * the temporary folder and opens the script with the terminal, output and
 * font already set. Returns 0 or NVFP4_EXIT_USAGE. */
int cli_plot_begin(const char *cmd, const char *file, int width, int height, cli_plot *p);

/* Opens data file NAME in the temporary folder for writing; the script
 * refers to it as 'NAME' (gnuplot runs in that folder). NULL on failure. */
FILE *cli_plot_data(cli_plot *p, const char *name);

/* Runs gnuplot, renames the PNG into place, removes the temporary files.
 * Returns 0, or prints the problem and returns NVFP4_EXIT_USAGE. */
int cli_plot_finish(const char *cmd, cli_plot *p);

/* Abandons a plot (after an error): removes every temporary file. */
void cli_plot_abort(cli_plot *p);

#endif /* NVFP4_TOOLS_CLI_PLOT_H */
