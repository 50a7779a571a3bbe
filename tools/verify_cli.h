/*
 * verify_cli.h - what the verify command and golden --mutants share: a
 * quantization result as a verifier view (nvfp4/verify.h), and verify of
 * one bundle against one kernel file. The reports themselves (text and
 * JSON) are the library's (nvfp4_verify_bundle_report and friends).
 */
#ifndef NVFP4_TOOLS_VERIFY_CLI_H
#define NVFP4_TOOLS_VERIFY_CLI_H

#include <jansson.h>

#include "nvfp4/io.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

/* A view plus the buffers it owns. */
typedef struct {
    nvfp4_vview v;
    float *x_owned;
    uint8_t *swz_owned;
    float *dq_owned;          /* a BF16/F16 dequant widened, or the expected one rounded to it */
    nvfp4_tdtype dequant_dtype; /* the actual file's dequant dtype (F32, BF16 or F16) */
    size_t srows, scols;      /* logical shape of the orientation */
    bool any;                 /* at least one component present */
    const char *missing[NVFP4_VC_COUNT];
} vcli_view;

void vcli_view_free(vcli_view *v);

/* verify of one bundle against one kernel file (cmd_verify.c): appends one
 * report object per orientation to outputs (a JSON array) and prints nothing
 * but errors. 0 match, 1 mismatch, 2 error. */
int vcli_verify_files(const char *expected, const char *actual, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      json_t *outputs);

/* verify --suite (verify_suite.c). */
int vcli_verify_suite(const char *suite, const char *actual_dir, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      const char *junit, bool json, bool tap, bool require_all);

#endif /* NVFP4_TOOLS_VERIFY_CLI_H */
