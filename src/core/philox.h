/*
 * philox.h - Philox4x32-10 exactly as cuRAND (curand_philox4x32_x.h, CUDA
 * 13.0) and Random123, and the stochastic-rounding bit contract of
 * docs/semantics.md, "The SR bit contract". Shared verbatim by the C library and the CUDA kernels.
 */
#ifndef NVFP4_CORE_PHILOX_H
#define NVFP4_CORE_PHILOX_H

#include "nvfp4_core.h"

#define NVFP4_PHILOX_M0 0xD2511F53u
#define NVFP4_PHILOX_M1 0xCD9E8D57u
#define NVFP4_PHILOX_W0 0x9E3779B9u
#define NVFP4_PHILOX_W1 0xBB67AE85u

NVFP4_HD static inline void nvfp4_core_philox_round(uint32_t c[4], const uint32_t k[2])
{
#if defined(__CUDA_ARCH__)
    /* the same 32x32 -> 64 products as halves: one IMAD.HI and one IMAD
     * each, where the 64-bit product form costs a wide multiply sequence */
    uint32_t hi0 = __umulhi(NVFP4_PHILOX_M0, c[0]), lo0 = NVFP4_PHILOX_M0 * c[0];
    uint32_t hi1 = __umulhi(NVFP4_PHILOX_M1, c[2]), lo1 = NVFP4_PHILOX_M1 * c[2];
#else
    uint64_t p0 = (uint64_t)NVFP4_PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)NVFP4_PHILOX_M1 * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
#endif
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

/* Ten rounds; the key is bumped by the Weyl constants between rounds. */
NVFP4_HD static inline void nvfp4_core_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k[0] += NVFP4_PHILOX_W0;
            k[1] += NVFP4_PHILOX_W1;
        }
        nvfp4_core_philox_round(c, k);
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
    out[3] = c[3];
}

/* docs/semantics.md, "The SR bit contract": the 16 random bytes for the 16-element block with linear
 * index `block` (in the stored orientation) of a tensor quantized with
 * (seed, offset). Equals curand_init(seed, block, 4*offset) then curand4():
 * ctr = {lo(offset), hi(offset), lo(block), hi(block)}, key = {lo(seed),
 * hi(seed)}. Word w serves elements 4w..4w+3, element 4w+k takes bits
 * 8k..8k+7, so bytes[i] is element i's byte on a little-endian view. */
NVFP4_HD static inline void nvfp4_core_sr_block_bytes(uint64_t seed, uint64_t offset, uint64_t block, uint8_t bytes[16])
{
    uint32_t ctr[4] = {(uint32_t)offset, (uint32_t)(offset >> 32), (uint32_t)block, (uint32_t)(block >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    nvfp4_core_philox4x32_10(ctr, key, w);
    for (int i = 0; i < 16; i++) bytes[i] = (uint8_t)(w[i >> 2] >> (8 * (i & 3)));
}

#endif /* NVFP4_CORE_PHILOX_H */
