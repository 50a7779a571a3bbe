/* fakequant.h - the lab's fake quantizer's internal calls (fakequant.c);
 * its public calls are nvfp4_sq_* in nvfp4/study.h. Not public. */
#ifndef NVFP4_STUDY_FAKEQUANT_H
#define NVFP4_STUDY_FAKEQUANT_H

#include "nvfp4/study.h"

/* The quantization block (qblock) shape and scale kind a config resolves to
 * (its format's default where it leaves them unset), and a qblock's name. */
nvfp4_block sq_qblock_resolved(const nvfp4_sq_cfg *c);
nvfp4_sq_scale sq_scale_resolved(const nvfp4_sq_cfg *c);
const char *sq_qblock_name(nvfp4_block b);
/* A 64-bit key derived from seed and (a, b, c, tag) by one Philox block. */
uint64_t sq_derive(uint64_t seed, uint32_t a, uint32_t b, uint32_t c, uint32_t tag);

/* nvfp4_sq_fakequant of an operand [rows x k] handed in as its transpose
 * xt ([k x rows], e.g. dY for Wgrad's dY^T): the same bytes, without a
 * transposed copy where the library's columnwise output serves. */
nvfp4_status st_fakequant_t(const nvfp4_sq_cfg *c, const float *xt, size_t k, size_t rows, const nvfp4_sq_key *key,
                            float *out, nvfp4_sq_stats *stats, nvfp4_error *err);

/* t[c][r] = a[r][c] in cache-friendly tiles. */
void st_transpose(const float *a, size_t rows, size_t cols, float *t);

#endif
