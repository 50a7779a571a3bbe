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

#endif /* NVFP4_TOOLS_VERIFY_CLI_H */
