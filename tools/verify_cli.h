/*
 * verify_cli.h - what verify and identify share in the CLI: the --witness
 * printer (cli_witness.c). The reports themselves (text and JSON, one case
 * or a suite) are the library's (nvfp4/verify.h, nvfp4/suite.h).
 */
#ifndef NVFP4_TOOLS_VERIFY_CLI_H
#define NVFP4_TOOLS_VERIFY_CLI_H

#include <jansson.h>

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

/* --witness of verify and identify (cli_witness.c): searches, writes wo->path and prints the witness
 * report after the command's text, or, given the command's JSON, that JSON with a "witness" member.
 * 0, or 2 with the message printed. */
int vcli_witness(const char *cmd, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                 const nvfp4_tensor_set *actual, nvfp4_witness_opts *wo, const char *report_json);

#endif /* NVFP4_TOOLS_VERIFY_CLI_H */
