/* ckpt_decode.h - how each convention decodes a stored weight, for the
 * files of src/ckpt/ that compare decoded values (convert.c, diff.c): the
 * dequantization rule of the convention's writer (the core descriptor of
 * recipe `modelopt` or `compressed-tensors`) and the global its stored
 * per-tensor float gives it (modelopt: g = v, a multiplier;
 * compressed-tensors: s_enc = v, a divisor). fp4(code) under scale byte s
 * then decodes as nvfp4_core_dequant_value(rule, &global, s, code). */
#ifndef NVFP4_CKPT_DECODE_H
#define NVFP4_CKPT_DECODE_H

#include "ckpt_internal.h"
#include "recipes/recipe.h"

const nvfp4_core_recipe *ckpt_conv_core(nvfp4_ckpt_convention conv);
nvfp4_core_global ckpt_stored_global(nvfp4_ckpt_convention conv, float v);

#endif
