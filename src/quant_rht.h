/* quant_rht.h - internal: the RHT applied to the columnwise stored tensor
 * (DESIGN.md 3.4), through src/core/hadamard.h. */
#ifndef NVFP4_QUANT_RHT_H
#define NVFP4_QUANT_RHT_H

#include "nvfp4/quant.h"

/* Transforms every aligned group of 16 along each row of the row-major
 * [rows, cols] buffer b in place (cols % 16 == 0): TE's forward RHT-16 with
 * the sign vector of o->rht_signs, rounded to bf16 unless o->rht_fp32. */
nvfp4_status nvfp4_quant_rht_rows(const nvfp4_quant_opts *o, float *b, size_t rows, size_t cols, nvfp4_error *err);

#endif /* NVFP4_QUANT_RHT_H */
