/*
 * nvfp4/grouped.h - grouped (MoE) quantization: a stacked tensor
 * [sum(m_sizes), K] whose consecutive row groups (the tokens routed to each
 * expert) are quantized with one global amax per group, as
 * TransformerEngine's split_quantize and mslk's nvfp4_quantize_stacked do.
 *
 * Each group is quantized exactly as nvfp4_quantize would quantize its rows
 * alone (the recipe's own chain, its own amax); the codes and the linear
 * scales are stacked in row order. The swizzled scales are one cuBLAS 128x4
 * segment per group, each padded to a multiple of 128 rows (and of 4 scale
 * columns) with zero bytes, placed back to back: an empty group (m_size 0)
 * has no segment and amax 0. Normative description and sources:
 * docs/semantics.md, "Grouped (MoE) quantization".
 */
#ifndef NVFP4_GROUPED_H
#define NVFP4_GROUPED_H

#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

typedef struct {
    const nvfp4_recipe *recipe;
    nvfp4_quant_opts opts;     /* as resolved by the plan */
    size_t rows, cols;         /* the stacked input: rows = sum of m_sizes */
    size_t ngroups;
    size_t *m_sizes;           /* [ngroups] rows of each group (a copy) */
    float *amax;               /* [ngroups] each group's global amax; 0 for an empty group and MX recipes */
    uint8_t *data;             /* the stacked codes, data_bytes (rows x cols/2 for E2M1) */
    size_t data_bytes;
    uint8_t *scale;            /* the stacked linear scales, rows x scale_cols */
    size_t scale_cols;
    uint8_t *scale_swizzled;   /* one 128x4 segment per non-empty group, swizzled_bytes */
    size_t swizzled_bytes;
} nvfp4_grouped;

/* Quantizes the stacked x (row-major rows x cols, fp32 or bf16 bits) with
 * one global amax per group of m_sizes[0..ngroups-1] rows. opts as for
 * nvfp4_quantize (NULL: defaults), rowwise only: a columnwise output, the
 * RHT, SR, padding, 16x16 blocks and row-scaled recipes are refused
 * (NVFP4_EUNSUPPORTED), as are m_sizes that do not sum to rows
 * (NVFP4_ESHAPE). Free with nvfp4_grouped_free. */
nvfp4_status nvfp4_quantize_grouped(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                    const size_t *m_sizes, size_t ngroups, const nvfp4_quant_opts *opts,
                                    nvfp4_grouped *out, nvfp4_error *err);
void nvfp4_grouped_free(nvfp4_grouped *g);

/* Bytes of the grouped swizzled layout: the sum over groups of
 * nvfp4_swizzled_size(m_sizes[i], scale_cols). 0 on overflow or when every
 * group is empty. */
size_t nvfp4_grouped_swizzled_size(const size_t *m_sizes, size_t ngroups, size_t scale_cols);
/* Byte offset of group i's segment in that layout. */
size_t nvfp4_grouped_segment_offset(const size_t *m_sizes, size_t i, size_t scale_cols);
/* The stacked linear scales (sum(m_sizes) x scale_cols) in the grouped
 * swizzled layout: each group's rows swizzled into its own segment, padding
 * zeroed. swz holds nvfp4_grouped_swizzled_size bytes. */
void nvfp4_grouped_scale_swizzle(const uint8_t *linear, const size_t *m_sizes, size_t ngroups, size_t scale_cols,
                                 uint8_t *swz);

/* Group i as an nvfp4_quantized of its own (borrowed: its data and scale
 * point into g; nvfp4_quantized_free releases nothing of g). NVFP4_EINVAL for
 * an empty group or i out of range. */
nvfp4_status nvfp4_grouped_view(const nvfp4_grouped *g, size_t i, nvfp4_quantized *view, nvfp4_error *err);

/* Dequantizes the stacked tensor into out[rows*cols], each group with its
 * own amax (the recipe's formula). */
nvfp4_status nvfp4_grouped_dequantize(const nvfp4_grouped *g, float *out, nvfp4_error *err);

/* Parses "M1,M2,..." (decimal row counts, zeros allowed) into a malloc'ed
 * array; what names the text in messages (an option or a file). */
nvfp4_status nvfp4_grouped_sizes_parse(const char *text, const char *what, size_t **m_sizes, size_t *ngroups,
                                       nvfp4_error *err);
/* Writes "M1,M2,..." into buf (cap bytes); false when it does not fit. */
bool nvfp4_grouped_sizes_format(const size_t *m_sizes, size_t ngroups, char *buf, size_t cap);

NVFP4_END_DECLS
#endif /* NVFP4_GROUPED_H */
