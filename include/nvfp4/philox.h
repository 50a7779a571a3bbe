/*
 * nvfp4/philox.h - Philox4x32-10 exactly as cuRAND, a stream with the
 * semantics of curand_init / curand / curand4, and the stochastic-rounding
 * bit contract of docs/semantics.md.
 */
#ifndef NVFP4_PHILOX_H
#define NVFP4_PHILOX_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

/* One Philox4x32-10 block: out = Philox(ctr, key). */
void nvfp4_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* cuRAND's curandStatePhilox4_32_10_t, in C. */
typedef struct {
    uint32_t ctr[4];
    uint32_t key[2];
    uint32_t output[4];
    unsigned state; /* index of the next word of output, 0..3 */
} nvfp4_philox_stream;

/* curand_init(seed, subsequence, offset, &st). */
void nvfp4_philox_init(nvfp4_philox_stream *st, uint64_t seed, uint64_t subsequence, uint64_t offset);
/* curand(&st): the next 32-bit word. */
uint32_t nvfp4_philox_next(nvfp4_philox_stream *st);
/* curand4(&st): the next four words. */
void nvfp4_philox_next4(nvfp4_philox_stream *st, uint32_t out[4]);
/* skipahead(n, &st) and skipahead_sequence(n, &st). */
void nvfp4_philox_skipahead(nvfp4_philox_stream *st, uint64_t n);
void nvfp4_philox_skipahead_sequence(nvfp4_philox_stream *st, uint64_t n);

/* docs/semantics.md, "The SR bit contract": the 16 random bytes (bytes[i] for element i) of the
 * 16-element block with linear index `block` in the stored orientation,
 * for a tensor quantized with (seed, offset). Equals curand_init(seed, block,
 * 4*offset) followed by curand4(); element 4w+k takes bits 8k..8k+7 of word w.
 * A 32-element block uses offset and offset+1; a columnwise output uses
 * offset+1 (offset+2 for 32-element blocks). */
void nvfp4_sr_block_bytes(uint64_t seed, uint64_t offset, uint64_t block, uint8_t bytes[16]);

NVFP4_END_DECLS
#endif /* NVFP4_PHILOX_H */
