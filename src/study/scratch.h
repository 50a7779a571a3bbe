/* scratch.h - per-thread growable scratch buffers (scratch.c). Not public. */
#ifndef NVFP4_STUDY_SCRATCH_H
#define NVFP4_STUDY_SCRATCH_H

#include <stddef.h>

/* The slots of the per-thread scratch buffers. */
typedef enum {
    ST_SCR_QX, ST_SCR_QW, ST_SCR_B1, ST_SCR_B2, ST_SCR_B3, ST_SCR_B4, /* layers.c: one linear call's operands */
    ST_SCR_FQ_T, ST_SCR_FQ_SRC,                                       /* fakequant.c: transposed / source copy */
    ST_SCR_FQ_DATA, ST_SCR_FQ_SCALE,                                  /* fakequant.c: quantized codes, scales */
    ST_SCR_FQ_BF16,                                                   /* fakequant.c: an operand narrowed to BF16 */
    ST_SCR_BF_W, ST_SCR_BF_DY,                                        /* gpt.c: BF16 copies (bf16_training) */
    ST_SCRATCH_SLOTS
} st_scratch_slot;

/* This thread's buffer for slot, grown to at least bytes (kept across
 * calls; freed when the thread exits); NULL when out of memory. */
void *st_scratch(st_scratch_slot slot, size_t bytes);

#endif
