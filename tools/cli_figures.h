/*
 * cli_figures.h - the teaching pictures of `--plot FILE` (PNG, gnuplot):
 * each returns 0, or prints the problem and returns NVFP4_EXIT_USAGE (2),
 * e.g. when gnuplot is not installed.
 */
#ifndef NVFP4_TOOLS_CLI_FIGURES_H
#define NVFP4_TOOLS_CLI_FIGURES_H

#include "nvfp4/formats.h"
#include "nvfp4/trace.h"

/* table --format e2m1|e4m3 --plot: the grid, every rounding interval, the
 * tie points and where they go, saturation (E4M3: its ranges on a log axis). */
int cli_figure_table(const char *cmd, const char *format, const char *file);

/* explain VALUE --plot: x, its two neighbours, the RN boundary and the SR
 * probabilities (format "e2m1" with rounding, or "e4m3"). */
int cli_figure_value(const char *cmd, const char *file, float x, const char *format, nvfp4_rounding r);

/* explain-block --plot: the inputs, the scaled values on the E2M1 grid with
 * their codes, the dequantized values and their errors. */
int cli_figure_block(const char *cmd, const char *file, const nvfp4_trace_block *t);

/* explain-block --rht --plot: the block before and after the transform,
 * with what each loses to the quantization. */
int cli_figure_rht(const char *cmd, const char *file, const float *x, const float *y, const float *deq_plain,
                   const float *deq_rht, size_t n);

#endif /* NVFP4_TOOLS_CLI_FIGURES_H */
