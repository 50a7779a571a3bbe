/*
 * verify_cli.h - what the verify command and its suite mode share: verify
 * of one bundle against one kernel file. The reports themselves (text and
 * JSON) are the library's (nvfp4_verify_bundle_report and friends).
 */
#ifndef NVFP4_TOOLS_VERIFY_CLI_H
#define NVFP4_TOOLS_VERIFY_CLI_H

#include <jansson.h>

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

/* verify of one bundle against one kernel file (cmd_verify.c): appends one
 * report object per orientation to outputs (a JSON array) and prints
 * nothing. 0 match, 1 mismatch, 2 error (its message in msg). */
int vcli_verify_files(const char *expected, const char *actual, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      json_t *outputs, char *msg, size_t msg_size);

/* verify --suite (verify_suite.c). */
int vcli_verify_suite(const char *suite, const char *actual_dir, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      const char *junit, bool json, bool tap, bool require_all);

/* --witness of verify and identify (cli_witness.c): searches, writes wo->path and prints the witness
 * report after the command's text, or, given the command's JSON, that JSON with a "witness" member.
 * 0, or 2 with the message printed. */
int vcli_witness(const char *cmd, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                 const nvfp4_tensor_set *actual, nvfp4_witness_opts *wo, const char *report_json);

#endif /* NVFP4_TOOLS_VERIFY_CLI_H */
