/*
 * sr_rbits.h - how the Blackwell instruction cvt.rs.satfinite.e2m1x4.f32
 * reads its 32 random bits, and the repack that makes it consume, for each
 * element, exactly the byte that the SR bit contract (philox.h,
 * docs/semantics.md "The SR bit contract") gives that element. Shared by the
 * CUDA kernels (src/cuda/items.cuh), the GPU probe (nvfp4-gpu probe) and the
 * host test (tests/check_sr_rbits.c), so the test exercises the code the
 * kernel runs.
 *
 * Elements are numbered by where their code lands in the 16-bit result d:
 * element k is d[4k+3:4k], i.e. in `cvt.rs... d, {a, b, e, f}, rbits` f is
 * element 0, e element 1, b element 2, a element 3 (PTX ISA 9.0, cvt,
 * Semantics). The rounding rule itself is not here: each element is the
 * scalar SR encoder (e2m1.h, nvfp4_core_e2m1_sr_mag, the PTX carry rule in
 * integer form) applied to the 8 bits the instruction reads for it.
 *
 * What the instruction reads (docs/cuda.md, "Native Blackwell conversions"):
 * - PTX ISA 9.0, section "cvt" (Data Movement and Conversion Instructions),
 *   description of rbits: for .e2m1x4 "lower 8-bits from both 16-bits half
 *   of rbits are used for operands e, f and upper 8-bits from both 16-bits
 *   half of rbits are used for operands a, b" - so elements 0 and 1 read
 *   bytes 0 and 2 and elements 2 and 3 bytes 1 and 3, in an order and bit
 *   order the text leaves open. (Read in the transcription of the 9.0 text
 *   in jialunzhang-psu/ptx-90-parser, docs/instructions/cvt.md, commit
 *   b5d7089.)
 * - Dao-AILab/quack, quack/rounding.py (commit c8ec317, cvt_f32x4_e2m1x4_rs),
 *   probed on B300 (sm_103a): element 0 reads byte 2, element 1 byte 0,
 *   element 2 byte 3, element 3 byte 1, and elements 1 and 3 read their
 *   byte bit-reversed (carry iff bitrev(r) + floor(256*frac) >= 256). Their
 *   sm_100a order is reported unprobed; on sm_100a their f8x4 order is the
 *   straight one while sm_103a permutes it, so sm_103a's e2m1 order is not
 *   evidence for sm_100a. nvfp4_core_rbits_layout_of_sm knows sm_103a only;
 *   `nvfp4-gpu probe` measures the layout on the device it runs on.
 */
#ifndef NVFP4_CORE_SR_RBITS_H
#define NVFP4_CORE_SR_RBITS_H

#include "nvfp4_core.h"
#include "e2m1.h"

/* Element k reads byte byte[k] of rbits (bits 8*byte[k] .. 8*byte[k]+7),
 * bit-reversed when rev[k] is 1 (bit i of the byte then weighs 2^(7-i)). */
typedef struct {
    uint8_t byte[4];
    uint8_t rev[4];
} nvfp4_core_rbits_layout;

/* Byte k to element k, no reversal: what the contract bytes are when taken
 * as a little-endian word (the order this project assumed before). */
NVFP4_HD static inline nvfp4_core_rbits_layout nvfp4_core_rbits_layout_straight(void)
{
    nvfp4_core_rbits_layout l = {{0, 1, 2, 3}, {0, 0, 0, 0}};
    return l;
}

/* sm_103a, after quack's probe (header comment). */
NVFP4_HD static inline nvfp4_core_rbits_layout nvfp4_core_rbits_layout_sm103a(void)
{
    nvfp4_core_rbits_layout l = {{2, 0, 3, 1}, {0, 1, 0, 1}};
    return l;
}

/* The layout of architecture sm (100 for sm_100a, 103 for sm_103a) where it
 * is known; 0 where it is not (the kernels then keep the software SR path:
 * identical bytes, no native cvt.rs). */
NVFP4_HD static inline int nvfp4_core_rbits_layout_of_sm(int sm, nvfp4_core_rbits_layout *l)
{
    if (sm == 103) {
        *l = nvfp4_core_rbits_layout_sm103a();
        return 1;
    }
    return 0; /* sm_100a: unprobed; `nvfp4-gpu probe` on a B200 settles it */
}

/* 1 iff the four elements read four distinct bytes. */
NVFP4_HD static inline int nvfp4_core_rbits_layout_valid(const nvfp4_core_rbits_layout *l)
{
    uint32_t seen = 0;
    for (int k = 0; k < 4; k++) {
        if (l->byte[k] > 3u || l->rev[k] > 1u) return 0;
        seen |= 1u << l->byte[k];
    }
    return seen == 0xFu;
}

NVFP4_HD static inline uint8_t nvfp4_core_bitrev8(uint8_t b)
{
#if defined(__CUDA_ARCH__)
    return (uint8_t)(__brev((unsigned int)b) >> 24); /* one brev instruction */
#else
    uint32_t v = b;
    v = ((v & 0xF0u) >> 4) | ((v & 0x0Fu) << 4);
    v = ((v & 0xCCu) >> 2) | ((v & 0x33u) << 2);
    v = ((v & 0xAAu) >> 1) | ((v & 0x55u) << 1);
    return (uint8_t)v;
#endif
}

/* The 8-bit value element k's carry rule adds when the instruction is given
 * rbits under layout l. */
NVFP4_HD static inline uint8_t nvfp4_core_rbits_read(uint32_t rbits, const nvfp4_core_rbits_layout *l, int k)
{
    uint8_t b = (uint8_t)(rbits >> (8u * l->byte[k]));
    return l->rev[k] ? nvfp4_core_bitrev8(b) : b;
}

/* The rbits word under which element k reads r[k] (r: the contract bytes of
 * elements 4w..4w+3): the inverse of nvfp4_core_rbits_read for a valid l. */
NVFP4_HD static inline uint32_t nvfp4_core_rbits_pack(const uint8_t r[4], const nvfp4_core_rbits_layout *l)
{
    uint32_t w = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t b = l->rev[k] ? nvfp4_core_bitrev8(r[k]) : r[k];
        w |= (uint32_t)b << (8u * l->byte[k]);
    }
    return w;
}

/* Host model of cvt.rs.satfinite.e2m1x4.f32 d, {v[3], v[2], v[1], v[0]},
 * rbits on an architecture with layout l: element k is the scalar SR encoder
 * with the bits the layout reads for it, its code in d[4k+3:4k]. The specials
 * (NaN to 0x7, the kept sign of a zero result) are the cuda_fp4 rules of
 * e2m1.h; `nvfp4-gpu probe` checks them on the device. */
NVFP4_HD static inline uint32_t nvfp4_core_cvt_rs_e2m1x4_model(const float v[4], uint32_t rbits,
                                                              const nvfp4_core_rbits_layout *l)
{
    uint32_t d = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t code = nvfp4_core_e2m1_encode(v[k], NVFP4_CORE_SR, nvfp4_core_rbits_read(rbits, l, k));
        d |= (code & 0xFu) << (4 * k);
    }
    return d;
}

#endif /* NVFP4_CORE_SR_RBITS_H */
