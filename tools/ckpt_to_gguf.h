/* ckpt_to_gguf.h - `nvfp4 ckpt convert PATH --to gguf`: llama.cpp's
 * converter run into a temporary file, its output proven by ckpt diff and
 * ckpt check, then renamed onto OUT (ckpt_to_gguf.c). */
#ifndef NVFP4_CLI_CKPT_TO_GGUF_H
#define NVFP4_CLI_CKPT_TO_GGUF_H

#include "nvfp4/ckpt.h"

/* src (already scanned into rsrc, with no error finding) of folder `in`
 * written to the GGUF file out by the converter (converter_opt, or
 * $NVFP4_GGUF_CONVERTER); prints what was carried and the check of the
 * output. Exit status: 0 written, 1 the output does not carry the bytes
 * or has an error finding (out left as it was), 2 no converter, the
 * converter failed (its last output shown) or a file is unreadable. */
int ckpt_convert_to_gguf(const char *cmd, nvfp4_ckpt *src, const nvfp4_ckpt_report *rsrc, const char *in,
                         const char *out, const char *converter_opt);

#endif
