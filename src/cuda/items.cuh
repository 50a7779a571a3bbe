/*
 * items.cuh - the work items of every CUDA kernel, as __host__ __device__
 * functors: a kernel is a thin grid-stride loop that calls item(i), and the
 * host-emulation backend (nvfp4_cuda_set_emulation) calls the very same
 * item(i) in a host loop. So the indexing, layouts, SR block numbering and
 * per-block math that run on the GPU are also exercised on machines with no
 * GPU (nvfp4-gpu selftest --emulate), and compared byte for byte with the
 * CPU library.
 *
 * No rounding rule lives here: the per-block chain is src/core/recipe.h, the
 * codecs src/core/e2m1.h / e4m3.h, the random bits src/core/philox.h, the
 * RHT src/core/hadamard.h. What is here is addressing: which elements form
 * a block, where the codes and scale bytes go.
 *
 * Golden-path device code is compiled with -fmad=false -prec-div=true
 * -ftz=false (mk/cuda.mk), so every `*`, `+` and `/` in src/core is one
 * correctly rounded IEEE operation, as on the host with -ffp-contract=off.
 */
#ifndef NVFP4_CUDA_ITEMS_CUH
#define NVFP4_CUDA_ITEMS_CUH

#include <stddef.h>
#include <stdint.h>

#include "core/nvfp4_core.h"
#include "core/e2m1.h"
#include "core/e4m3.h"
#include "core/bf16.h"
#include "core/philox.h"
#include "core/recipe.h"
#include "core/hadamard.h"
#include "core/sr_rbits.h"
#include "core/swizzle.h"

/* Loops over the 16 elements of a segment are unrolled on the device, so
 * that the segment's arrays live in registers, not local memory. */
#if defined(__CUDA_ARCH__)
#define NVFP4_UNROLL _Pragma("unroll")
#else
#define NVFP4_UNROLL
#endif

#if defined(__CUDACC__)
#define NVFP4_IT __host__ __device__ __forceinline__
#else
#define NVFP4_IT static inline
#endif

/* Native Blackwell E2M1 conversions (compiled in unless make cuda
 * NATIVE_CVT=0; used only when asked for at run time). Only for the
 * architecture-specific Blackwell targets that have cvt...e2m1x2 and
 * cvt.rs...e2m1x4 (PTX ISA 8.6+: sm_100a, sm_103a). */
#if defined(NVFP4_CUDA_NATIVE_CVT) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) || \
     defined(__CUDA_ARCH_FEAT_SM110_ALL) || defined(__CUDA_ARCH_SPECIFIC__) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define NVFP4_CUDA_NATIVE_ACTIVE 1
#else
#define NVFP4_CUDA_NATIVE_ACTIVE 0
#endif

/* The native SR cast needs the order in which this architecture's cvt.rs
 * reads its random bytes (src/core/sr_rbits.h); where that order is not
 * known (sm_100a so far) SR stays on the software path even when the native
 * path is asked for, and RN alone is native. */
#if NVFP4_CUDA_NATIVE_ACTIVE
#define NVFP4_CUDA_NATIVE_SM (__CUDA_ARCH__ / 10)
#endif

/* t / d and t % d for item indices: 64-bit integer division is a long
 * software sequence on the GPU, 32-bit is short, and every tensor that fits
 * in GPU memory has fewer than 2^32 blocks per dimension in practice. */
NVFP4_IT void nvfp4_cu_divmod(size_t t, size_t d, size_t *q, size_t *r)
{
    if (t <= 0xFFFFFFFFu && d <= 0xFFFFFFFFu) {
        uint32_t t32 = (uint32_t)t, d32 = (uint32_t)d, q32 = t32 / d32;
        *q = q32;
        *r = t32 - q32 * d32;
    } else {
        *q = t / d;
        *r = t % d;
    }
}

/* ---- the quantize kernel's parameters ------------------------------------- */
struct nvfp4_cu_qparams {
    const void *x;            /* original tensor, row-major rows x cols */
    int bf16;                 /* x holds bf16 bits */
    size_t rows, cols;        /* original logical shape */
    int colwise;              /* stored orientation is the transpose */
    size_t srows, scols;      /* stored logical shape */
    size_t psrows, pscols;    /* stored padded shape */
    int bw;                   /* block length along a stored row: 16 or 32 */
    int tile;                 /* 16: one scale per 16x16 tile; 1 otherwise */
    int rht, rht_bf16;        /* RHT-16 along the stored rows */
    uint32_t rht_mask[4];
    int mode;                 /* NVFP4_CORE_RN or NVFP4_CORE_SR */
    uint64_t seed, offset;    /* offset already includes the columnwise shift */
    int vec;                  /* rowwise loads may be 16-byte vectors */
    int native;               /* use the native cvt where compiled in */
    nvfp4_core_recipe r;
    nvfp4_core_global g;
    uint8_t *data;            /* packed codes / E4M3 bytes */
    uint8_t *scale;           /* linear [psrows, scale_cols] */
    size_t scale_cols;
    const float *row_amax;    /* row-scaled recipes: the psrows amaxes of nvfp4_cu_row_amax_item */
};

NVFP4_IT float nvfp4_cu_load(const nvfp4_cu_qparams &p, size_t r, size_t c)
{
    size_t i = r * p.cols + c;
    if (p.bf16) return nvfp4_core_bf16_decode(((const uint16_t *)p.x)[i]);
    return ((const float *)p.x)[i];
}

/* The 16 values of stored row j, columns 16s..16s+15 (zero outside the
 * logical tensor: the padding), as stored in x. */
NVFP4_IT void nvfp4_cu_fetch_seg(const nvfp4_cu_qparams &p, size_t j, size_t s, float v[16])
{
    size_t c0 = 16 * s;
#if defined(__CUDA_ARCH__)
    if (p.vec && !p.colwise && j < p.srows && c0 + 16 <= p.scols) {
        size_t i = j * p.cols + c0;
        if (p.bf16) {
            const uint4 *q = (const uint4 *)((const uint16_t *)p.x + i);
            uint4 a = q[0], b = q[1];
            uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
            NVFP4_UNROLL
            for (int k = 0; k < 8; k++) {
                v[2 * k] = nvfp4_core_bf16_decode((uint16_t)(w[k] & 0xFFFFu));
                v[2 * k + 1] = nvfp4_core_bf16_decode((uint16_t)(w[k] >> 16));
            }
        } else {
            const float4 *q = (const float4 *)((const float *)p.x + i);
            NVFP4_UNROLL
            for (int k = 0; k < 4; k++) {
                float4 f = q[k];
                v[4 * k] = f.x;
                v[4 * k + 1] = f.y;
                v[4 * k + 2] = f.z;
                v[4 * k + 3] = f.w;
            }
        }
    } else
#endif
    {
        NVFP4_UNROLL
        for (int k = 0; k < 16; k++) {
            size_t c = c0 + (size_t)k;
            if (j >= p.srows || c >= p.scols) v[k] = 0.0f;
            else v[k] = p.colwise ? nvfp4_cu_load(p, c, j) : nvfp4_cu_load(p, j, c);
        }
    }
}

/* The segment as quantized: after the RHT when the orientation has one. RHT
 * is a template parameter so that kernels without it never take the
 * address of v (which would move it to local memory). */
template <bool RHT> NVFP4_IT void nvfp4_cu_fetch(const nvfp4_cu_qparams &p, size_t j, size_t s, float v[16])
{
    nvfp4_cu_fetch_seg(p, j, s, v);
    if (RHT) nvfp4_core_rht_forward_group(v, v, 16u, p.rht_mask, p.rht_bf16);
}

NVFP4_IT float nvfp4_cu_seg_amax(const nvfp4_cu_qparams &p, const float v[16], float acc)
{
    NVFP4_UNROLL
    for (int k = 0; k < 16; k++) acc = nvfp4_core_amax_step(acc, v[k], p.r.amax_nan_propagates);
    return acc;
}

/* SR bytes of stored segment (j, s): docs/semantics.md, "The SR bit contract". A 16-element block is
 * its own Philox block; a 32-element block b uses offset for elements 0..15
 * and offset+1 for 16..31; the segments of a 16x16 tile are numbered as the
 * 1x16 segments of the stored orientation. */
NVFP4_IT void nvfp4_cu_seg_rbits(const nvfp4_cu_qparams &p, size_t j, size_t s, uint8_t rb[16])
{
    if (p.mode != NVFP4_CORE_SR) return;
    if (p.bw == 32) nvfp4_core_sr_block_bytes(p.seed, p.offset + (s & 1u), j * (p.pscols / 32) + s / 2, rb);
    else nvfp4_core_sr_block_bytes(p.seed, p.offset, j * (p.pscols / 16) + s, rb);
}

#if NVFP4_CUDA_NATIVE_ACTIVE
/* cvt.rn.satfinite.e2m1x2.f32 d, a, b: a to the high nibble, b to the low. */
__device__ __forceinline__ uint32_t nvfp4_cu_cvt_rn_x2(float lo, float hi)
{
    uint16_t d;
    asm("{\n\t.reg .b8 t;\n\tcvt.rn.satfinite.e2m1x2.f32 t, %1, %2;\n\tcvt.u16.u8 %0, t;\n\t}"
        : "=h"(d) : "f"(hi), "f"(lo));
    return d;
}
/* cvt.rs.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits: f = e0 in the low
 * nibble, a = e3 in the high one. rbits goes to the instruction as given: the
 * caller repacks the contract bytes with nvfp4_core_rbits_pack. */
__device__ __forceinline__ uint32_t nvfp4_cu_cvt_rs_x4(float e0, float e1, float e2, float e3, uint32_t rbits)
{
    uint16_t d;
    asm("cvt.rs.satfinite.e2m1x4.f32 %0, {%1, %2, %3, %4}, %5;"
        : "=h"(d) : "f"(e3), "f"(e2), "f"(e1), "f"(e0), "r"(rbits));
    return d;
}
#endif

/* Encodes one stored segment and writes its codes. */
NVFP4_IT void nvfp4_cu_encode_seg(const nvfp4_cu_qparams &p, size_t j, size_t s, const float v[16],
                                  const nvfp4_core_block &blk)
{
    uint8_t rb[16] = {0};
    nvfp4_cu_seg_rbits(p, j, s, rb);
    size_t e0 = j * p.pscols + 16 * s;
    if (p.r.elem == NVFP4_CORE_ELEM_E4M3) {
        NVFP4_UNROLL
        for (int k = 0; k < 16; k++) p.data[e0 + (size_t)k] = nvfp4_core_encode_elem(&p.r, &blk, v[k], p.mode, 0);
        return;
    }
    uint32_t w[2] = {0, 0};
#if NVFP4_CUDA_NATIVE_ACTIVE
    nvfp4_core_rbits_layout lay = nvfp4_core_rbits_layout_straight();
    bool sr_known = nvfp4_core_rbits_layout_of_sm(NVFP4_CUDA_NATIVE_SM, &lay) != 0; /* a compile-time constant */
    if (p.native && (p.mode == NVFP4_CORE_RN || (p.mode == NVFP4_CORE_SR && sr_known)) &&
        p.r.enc_rule == NVFP4_CORE_ENC_TE_RECIP && p.r.special == NVFP4_CORE_SPECIAL_CUDA) {
        float y[16];
        NVFP4_UNROLL
        for (int k = 0; k < 16; k++) y[k] = nvfp4_core_scaled(&p.r, &blk, v[k]);
        NVFP4_UNROLL
        for (int q = 0; q < 4; q++) {
            uint32_t n4;
            if (sr_known && p.mode == NVFP4_CORE_SR) {
                /* element 4q+k must read contract byte rb[4q+k]: the
                 * instruction's own byte order and bit order are undone here */
                uint32_t rw = nvfp4_core_rbits_pack(rb + 4 * q, &lay);
                n4 = nvfp4_cu_cvt_rs_x4(y[4 * q], y[4 * q + 1], y[4 * q + 2], y[4 * q + 3], rw);
            } else {
                n4 = nvfp4_cu_cvt_rn_x2(y[4 * q], y[4 * q + 1]) | (nvfp4_cu_cvt_rn_x2(y[4 * q + 2], y[4 * q + 3]) << 8);
            }
            w[q >> 1] |= (n4 & 0xFFFFu) << (16 * (q & 1));
        }
    } else
#endif
    {
        NVFP4_UNROLL
        for (int k = 0; k < 16; k++) {
            uint32_t code = nvfp4_core_encode_elem(&p.r, &blk, v[k], p.mode, rb[k]) & 0xFu;
            w[k >> 3] |= code << (4 * (k & 7));
        }
    }
    uint8_t *dst = p.data + e0 / 2;
#if defined(__CUDA_ARCH__)
    *(uint2 *)dst = make_uint2(w[0], w[1]); /* e0 is a multiple of 16: 8-byte aligned */
#else
    for (int b = 0; b < 8; b++) dst[b] = (uint8_t)(w[b >> 2] >> (8 * (b & 3)));
#endif
}

/* Row-scaled recipes (te-rowscaled): the amax of stored row j over the
 * whole padded row, in the order of the CPU's tensor_amax (left to right;
 * fmaxf is exact, so the order only matters for which NaN is kept). */
template <bool RHT> NVFP4_IT float nvfp4_cu_row_amax(const nvfp4_cu_qparams &p, size_t j)
{
    float v[16], a = 0.0f;
    for (size_t s = 0; s < p.pscols / 16; s++) {
        nvfp4_cu_fetch<RHT>(p, j, s, v);
        a = nvfp4_cu_seg_amax(p, v, a);
    }
    return a;
}

/* One item per stored row (padded rows too: amax 0): out[j] = the row's
 * amax, which the quantize items read (p.row_amax) and the result returns
 * (nvfp4_cuda_qtensor.row_amax) for dequantize. */
template <bool RHT> struct nvfp4_cu_row_amax_item {
    nvfp4_cu_qparams p;
    float *out;
    NVFP4_IT size_t count() const { return p.psrows; }
    NVFP4_IT void operator()(size_t j) const { out[j] = nvfp4_cu_row_amax<RHT>(p, j); }
};

/* The recipe an item runs: the descriptor passed at run time, or, when TE
 * is set, the constant NVFP4_CORE_CHAIN_TE of src/core/recipe.h. With a
 * constant descriptor the compiler folds every rule switch of src/core away,
 * so the kernel holds only the te chain's path (the generic kernel inlines
 * every rule of every recipe for all 16 elements of a segment, a large body
 * whose branches and instruction fetches dominate its time). The rules
 * themselves are the same functions either way; the host takes TE only for
 * a descriptor equal to the chain (nvfp4_core_recipe_equal). */
template <bool TE, int MODE> NVFP4_IT nvfp4_cu_qparams nvfp4_cu_specialize(const nvfp4_cu_qparams &p)
{
    nvfp4_cu_qparams q = p;
    if (TE) {
        const nvfp4_core_recipe te = NVFP4_CORE_CHAIN_TE;
        q.r = te;
    }
    if (MODE >= 0) q.mode = MODE; /* the rounding as a constant too: one cast path per element */
    return q;
}

/* One 1D block (BW elements along stored row j, block b): scale, codes. */
template <int BW, bool RHT> NVFP4_IT void nvfp4_cu_quant_row_block(const nvfp4_cu_qparams &p, size_t j, size_t b)
{
    const int nseg = BW / 16;
    float v[BW];
    size_t s0 = b * (size_t)nseg;
    float bamax = 0.0f;
    NVFP4_UNROLL
    for (int q = 0; q < nseg; q++) {
        nvfp4_cu_fetch<RHT>(p, j, s0 + (size_t)q, v + 16 * q);
        bamax = nvfp4_cu_seg_amax(p, v + 16 * q, bamax);
    }
    nvfp4_core_global g = p.g;
    if (nvfp4_core_recipe_row_scaled(&p.r)) g = nvfp4_core_global_from_amax(&p.r, p.row_amax[j]);
    /* 4over6 (1x16 only): the lower-error candidate of src/core/recipe.h */
    uint8_t sb = nvfp4_core_is_4over6(&p.r) ? nvfp4_core_4over6_seg(&p.r, &g, bamax, v)
                                            : nvfp4_core_block_scale(&p.r, &g, bamax);
    nvfp4_core_block blk = nvfp4_core_block_prepare(&p.r, &g, sb);
    NVFP4_UNROLL
    for (int q = 0; q < nseg; q++) nvfp4_cu_encode_seg(p, j, s0 + (size_t)q, v + 16 * q, blk);
    p.scale[j * p.scale_cols + b] = sb;
}

/* 4over6 on a 16x16 tile: both candidates' errors of each of its 16 rows (a
 * third pass over the cached tile), summed in TE's warp order */
template <bool RHT> NVFP4_IT uint8_t nvfp4_cu_four_over_six_tile(const nvfp4_cu_qparams &p, size_t J, size_t b, float bamax)
{
    float v[16], e4[16], e6[16];
    uint8_t s4, s6;
    nvfp4_core_4over6_scales(&p.r, &p.g, bamax, &s4, &s6);
    for (size_t i = 0; i < 16; i++) {
        nvfp4_cu_fetch<RHT>(p, 16 * J + i, b, v);
        e4[i] = nvfp4_core_4over6_seg_error(&p.r, &p.g, s4, v);
        e6[i] = nvfp4_core_4over6_seg_error(&p.r, &p.g, s6, v);
    }
    return nvfp4_core_4over6_pick(nvfp4_core_4over6_tile_sum(e4), nvfp4_core_4over6_tile_sum(e6), s4, s6);
}

/* 16x16 tile (J, b): the tile amax over 16 segments, then each segment again
 * (the second fetch hits the cache; it keeps 16 floats live, not 256). */
template <bool RHT> NVFP4_IT void nvfp4_cu_quant_tile16(const nvfp4_cu_qparams &p, size_t J, size_t b)
{
    float v[16];
    float bamax = 0.0f;
    for (size_t i = 0; i < 16; i++) {
        nvfp4_cu_fetch<RHT>(p, 16 * J + i, b, v);
        bamax = nvfp4_cu_seg_amax(p, v, bamax);
    }
    uint8_t sb = nvfp4_core_is_4over6(&p.r) ? nvfp4_cu_four_over_six_tile<RHT>(p, J, b, bamax)
                                            : nvfp4_core_block_scale(&p.r, &p.g, bamax);
    nvfp4_core_block blk = nvfp4_core_block_prepare(&p.r, &p.g, sb);
    for (size_t i = 0; i < 16; i++) {
        nvfp4_cu_fetch<RHT>(p, 16 * J + i, b, v);
        nvfp4_cu_encode_seg(p, 16 * J + i, b, v, blk);
        p.scale[(16 * J + i) * p.scale_cols + b] = sb;
    }
}

/* One item = one scale block of the stored orientation: BW elements along
 * a stored row (16 or 32), or a 16x16 tile when TILE. The block shape is a
 * template parameter (and so is the RHT) so that every loop bound is a
 * constant and the values stay in registers; TE selects the constant te
 * chain and MODE >= 0 a constant rounding mode (nvfp4_cu_specialize; -1:
 * p.mode at run time). Item order puts neighbouring threads on
 * neighbouring addresses of x: along the stored row for rowwise, along the
 * stored rows (= original columns) for columnwise. */
template <int BW, bool TILE, bool RHT, bool TE, int MODE> struct nvfp4_cu_quant_item {
    nvfp4_cu_qparams p;
    NVFP4_IT size_t count() const { return (p.psrows / (TILE ? 16u : 1u)) * (p.pscols / (size_t)BW); }
    NVFP4_IT void operator()(size_t t) const
    {
        size_t nb = p.pscols / (size_t)BW, nj = p.psrows / (TILE ? 16u : 1u);
        size_t jb, b;
        if (p.colwise) nvfp4_cu_divmod(t, nj, &b, &jb);
        else nvfp4_cu_divmod(t, nb, &jb, &b);
        const nvfp4_cu_qparams q = nvfp4_cu_specialize<TE, MODE>(p);
        if (TILE) nvfp4_cu_quant_tile16<RHT>(q, jb, b);
        else nvfp4_cu_quant_row_block<BW, RHT>(q, jb, b);
    }
};

/* ---- global amax ------------------------------------------------------------ */
/* Max |x| kept as the bits of a non-negative float in one uint32: for
 * non-negative floats (NaN excluded) integer order is float order, so an
 * atomicMax gives the same result in any order. A NaN, when the recipe
 * propagates it, enters as the canonical 0x7FC00000, above +Inf. */
NVFP4_IT uint32_t nvfp4_cu_amax_bits(float a, int nan_propagates)
{
    uint32_t u = nvfp4_core_f32_bits(a) & 0x7FFFFFFFu;
    if (u > 0x7F800000u) return nan_propagates ? 0x7FC00000u : 0u;
    return u;
}

NVFP4_IT void nvfp4_cu_amax_publish(uint32_t *out, uint32_t m)
{
#if defined(__CUDA_ARCH__)
    m = __reduce_max_sync(0xFFFFFFFFu, m);
    if ((threadIdx.x & 31u) == 0) atomicMax(out, m);
#else
    if (m > *out) *out = m;
#endif
}

/* Item t of T (T a multiple of 32, every thread runs exactly one item) reads
 * elements t, t+T, ... in 16-byte vectors where aligned. */
struct nvfp4_cu_amax_item {
    const void *x;
    int bf16, nanprop;
    int vec; /* x is 16-byte aligned: the device loads 16-byte vectors */
    size_t n, T;
    uint32_t *out;
    NVFP4_IT size_t count() const { return T; }
    NVFP4_IT uint32_t max_of(uint32_t m, float v) const
    {
        uint32_t u = nvfp4_cu_amax_bits(v, nanprop);
        return u > m ? u : m;
    }
    NVFP4_IT void operator()(size_t t) const
    {
        uint32_t m = 0;
        size_t per = bf16 ? 8 : 4; /* elements per 16-byte vector */
        size_t nv = n / per;
#if defined(__CUDA_ARCH__)
        if (vec) {
            for (size_t i = t; i < nv; i += T) {
                uint4 q = ((const uint4 *)x)[i];
                uint32_t w[4] = {q.x, q.y, q.z, q.w};
                NVFP4_UNROLL
                for (int k = 0; k < 4; k++) {
                    if (bf16) {
                        m = max_of(m, nvfp4_core_bf16_decode((uint16_t)(w[k] & 0xFFFFu)));
                        m = max_of(m, nvfp4_core_bf16_decode((uint16_t)(w[k] >> 16)));
                    } else {
                        m = max_of(m, nvfp4_core_f32_from_bits(w[k]));
                    }
                }
            }
        } else
#endif
        for (size_t i = t; i < nv; i += T) {
            for (size_t k = 0; k < per; k++) {
                float v = bf16 ? nvfp4_core_bf16_decode(((const uint16_t *)x)[i * per + k]) : ((const float *)x)[i * per + k];
                uint32_t u = nvfp4_cu_amax_bits(v, nanprop);
                m = u > m ? u : m;
            }
        }
        for (size_t i = nv * per + t; i < n; i += T) {
            float v = bf16 ? nvfp4_core_bf16_decode(((const uint16_t *)x)[i]) : ((const float *)x)[i];
            uint32_t u = nvfp4_cu_amax_bits(v, nanprop);
            m = u > m ? u : m;
        }
        nvfp4_cu_amax_publish(out, m);
    }
};

/* The amax of a stored orientation after its RHT (the transform changes the
 * values, so the plain amax of x does not apply): one item per segment. */
struct nvfp4_cu_rht_amax_item {
    nvfp4_cu_qparams p;
    uint32_t *out;
    size_t padded_count; /* items rounded up to a multiple of 32 */
    NVFP4_IT size_t count() const { return padded_count; }
    NVFP4_IT void operator()(size_t t) const
    {
        size_t nj = p.psrows, ns = p.pscols / 16;
        uint32_t m = 0;
        if (t < nj * ns) {
            float v[16];
            size_t s, j;
            nvfp4_cu_divmod(t, nj, &s, &j);
            nvfp4_cu_fetch<true>(p, j, s, v);
            for (int k = 0; k < 16; k++) {
                uint32_t u = nvfp4_cu_amax_bits(v[k], p.r.amax_nan_propagates);
                m = u > m ? u : m;
            }
        }
        nvfp4_cu_amax_publish(out, m);
    }
};

/* ---- dequantize -------------------------------------------------------------- */
struct nvfp4_cu_dequant_item {
    const uint8_t *data, *scale;
    size_t srows, scols, psrows, pscols, scale_cols;
    int bw;
    nvfp4_core_recipe r;
    nvfp4_core_global g;
    const float *row_amax; /* row-scaled recipes: one amax per stored row (g from row_amax[j]); else NULL */
    float *out;
    int vec; /* E2M1 codes 8-byte aligned, out 16-byte aligned and scols % 4 == 0: whole segments in vectors */
    NVFP4_IT size_t count() const { return psrows * (pscols / 16); }
    NVFP4_IT void operator()(size_t t) const
    {
        size_t ns = pscols / 16, j, s;
        nvfp4_cu_divmod(t, ns, &j, &s);
        if (j >= srows) return;
        nvfp4_core_global gj = row_amax ? nvfp4_core_global_from_amax(&r, row_amax[j]) : g;
        float d = nvfp4_core_dequant_scale(&r, &gj, scale[j * scale_cols + (16 * s) / (size_t)bw]);
#if defined(__CUDA_ARCH__)
        /* A whole segment: one 8-byte load of its 16 codes and four 16-byte
         * stores (the element loop below stores 4 bytes per lane at a 64-byte
         * lane stride, which wastes most of each memory transaction). */
        if (vec && 16 * s + 16 <= scols) {
            uint2 w = *(const uint2 *)(data + (j * pscols + 16 * s) / 2);
            float4 *o = (float4 *)(out + j * scols + 16 * s);
            NVFP4_UNROLL
            for (int q = 0; q < 4; q++) {
                uint32_t h = (q < 2 ? w.x : w.y) >> (16 * (q & 1));
                o[q] = make_float4(nvfp4_core_dequant_scaled(&r, &gj, d, (uint8_t)(h & 0xFu)),
                                   nvfp4_core_dequant_scaled(&r, &gj, d, (uint8_t)((h >> 4) & 0xFu)),
                                   nvfp4_core_dequant_scaled(&r, &gj, d, (uint8_t)((h >> 8) & 0xFu)),
                                   nvfp4_core_dequant_scaled(&r, &gj, d, (uint8_t)((h >> 12) & 0xFu)));
            }
            return;
        }
#endif
        for (size_t k = 0; k < 16; k++) {
            size_t c = 16 * s + k;
            if (c >= scols) break;
            size_t e = j * pscols + c;
            uint8_t code = r.elem == NVFP4_CORE_ELEM_E4M3 ? data[e] : (uint8_t)((data[e / 2] >> (4 * (e & 1))) & 0xFu);
            out[j * scols + c] = nvfp4_core_dequant_scaled(&r, &gj, d, code); /* FlashInfer per-token: times p */
        }
    }
};

/* ---- scale swizzle (cuBLAS 128x4, docs/semantics.md, "Tensor layout") ---------------- */
/* The layout (padding and byte offset) is core/swizzle.h's, shared with the CPU library. */
/* One item per swizzled byte, padding written as zero. */
struct nvfp4_cu_swizzle_item {
    const uint8_t *lin;
    size_t rows, cols, prows, pcols;
    uint8_t *swz;
    NVFP4_IT size_t count() const { return prows * pcols; }
    NVFP4_IT void operator()(size_t t) const
    {
        size_t r, c;
        nvfp4_cu_divmod(t, pcols, &r, &c);
        swz[nvfp4_core_swizzle_offset(r, c, cols)] = (r < rows && c < cols) ? lin[r * cols + c] : (uint8_t)0;
    }
};

/* ---- comparison ---------------------------------------------------------------- */
#define NVFP4_CU_CMP_CHUNK 4096u

NVFP4_IT uint32_t nvfp4_cu_cmp_elem(int kind, const void *a, size_t i)
{
    if (kind == 1) return (((const uint8_t *)a)[i / 2] >> (4 * (i & 1))) & 0xFu;
    if (kind == 2 || kind == 3) return ((const uint32_t *)a)[i];
    return ((const uint8_t *)a)[i];
}

/* Whether two elements differ: bit patterns, except that kind 3
 * (NVFP4_CUDA_CMP_F32_NANEQ) lets any NaN equal any NaN. */
NVFP4_IT bool nvfp4_cu_cmp_differ(int kind, uint32_t e, uint32_t a)
{
    if (e == a) return false;
    if (kind == 3 && (e & 0x7FFFFFFFu) > 0x7F800000u && (a & 0x7FFFFFFFu) > 0x7F800000u) return false;
    return true;
}

struct nvfp4_cu_cmp_item {
    int kind;
    const void *exp, *act;
    size_t n;
    uint32_t *counts; /* one per chunk */
    NVFP4_IT size_t count() const { return (n + NVFP4_CU_CMP_CHUNK - 1) / NVFP4_CU_CMP_CHUNK; }
    NVFP4_IT void operator()(size_t t) const
    {
        uint32_t c = 0;
        size_t end = (t + 1) * NVFP4_CU_CMP_CHUNK;
        if (end > n) end = n;
        for (size_t i = t * NVFP4_CU_CMP_CHUNK; i < end; i++)
            c += nvfp4_cu_cmp_differ(kind, nvfp4_cu_cmp_elem(kind, exp, i), nvfp4_cu_cmp_elem(kind, act, i));
        counts[t] = c;
    }
};

/* ---- te-order GEMM --------------------------------------------------------------- */
/* D[m][n] = ((sum_k fl32 of the exact block partials, k in order) * alpha).
 * A block partial is (dot of 16 E2M1 products) * (sa * sb): the dot is a
 * multiple of 1/4 below 577 and the E4M3 product has at most 8 significant
 * bits, so each partial is exact in fp32 whatever the evaluation order. */
struct nvfp4_cu_gemm_item {
    const uint8_t *a, *sa, *b, *sb;
    size_t M, N, Kp, a_scale_cols, b_scale_cols; /* Kp: padded K (a multiple of 16) */
    float alpha;
    float *d;
    NVFP4_IT size_t count() const { return M * N; }
    NVFP4_IT void operator()(size_t t) const
    {
        size_t m, n;
        nvfp4_cu_divmod(t, N, &m, &n);
        const uint8_t *pa = a + m * Kp / 2, *pb = b + n * Kp / 2;
        float acc = 0.0f;
        for (size_t kb = 0; kb < Kp / 16; kb++) {
            float dot = 0.0f;
            for (size_t k = 0; k < 16; k++) {
                size_t e = kb * 16 + k;
                float x = nvfp4_core_e2m1_decode((uint8_t)((pa[e / 2] >> (4 * (e & 1))) & 0xFu));
                float y = nvfp4_core_e2m1_decode((uint8_t)((pb[e / 2] >> (4 * (e & 1))) & 0xFu));
                float prod = x * y;
                dot = dot + prod;
            }
            float sprod = nvfp4_core_e4m3_decode(sa[m * a_scale_cols + kb]) * nvfp4_core_e4m3_decode(sb[n * b_scale_cols + kb]);
            float part = dot * sprod;
            acc = acc + part;
        }
        d[t] = acc * alpha;
    }
};

#endif /* NVFP4_CUDA_ITEMS_CUH */
