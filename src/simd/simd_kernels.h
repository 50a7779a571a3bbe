/*
 * simd_kernels.h - internal: the vectorized kernels of the fast CPU path and
 * the table through which one variant (scalar, avx2, avx512, neon) is chosen.
 *
 * Kernels on plain arrays: this folder knows no quantizer type (options,
 * plans, results); src/quant/fast.c calls the drivers below. Every kernel
 * reproduces, byte for byte, what the scalar reference (src/quant/reference.c
 * over src/core/) computes for the same configuration (the generic driver
 * of the other E2M1 recipes is described at its section below). The vector code re-expresses the `te` recipe's chain
 * (src/core/recipe.h: TE_ENCODE, BSCALE_TE_MUL, ENC_TE_RECIP, SPECIAL_CUDA,
 * DEQ_TE) lane-wise with the same fp32 operations in the same order; the
 * scalar variant (simd_scalar.c) calls src/core/ directly and is also the
 * fallback for remainders and for RHT groups whose binary64 sums could be
 * inexact.
 *
 * Kernels work on one row or a range of 16-row groups, so the OpenMP drivers
 * (simd_driver.c) can split a tensor without changing a byte: each block
 * depends only on its inputs, the global amax and its counter-based random
 * bits.
 *
 * The x86 kernels are one skeleton per kernel (simd_te_skel.h: the loops,
 * chunking and phases, the per-(input type, RHT, rounding) instances and
 * their dispatch) over lane-wise functions written once (simd_te_lanes.h:
 * codecs, Philox rounds, the RHT paths and their choice) and per-ISA
 * leaves (vector operations, loads, packing, the rowwise and 16x16 group
 * steps, a columnwise strip's tiles and their transposes): simd_avx2.c (8
 * lanes, its vector operations in simd_avx2_ops.h) and simd_avx512.c (16
 * lanes) define the leaves and include both headers once, so each kernel
 * is compiled with its ISA's target flags and everything inlines.
 * Dependencies point one way: the drivers call the kernels through this
 * table only; the kernels call down into simd_scalar.c (remainders, exact
 * fallbacks, the stage's write-out) and src/core/ (the RHT exactness
 * limits: core/hadamard.h).
 */
#ifndef NVFP4_SIMD_KERNELS_H
#define NVFP4_SIMD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "core/recipe.h"
#include "nvfp4/simd.h"

/* The `te` recipe's per-tensor constants, derived from the global amax
 * exactly as nvfp4_core_global_from_amax and nvfp4_core_block_scale do. */
typedef struct {
    float amax;
    float s_enc;   /* nvfp4_core_te_global_encode(amax) */
    float s_dec;   /* 1/s_enc */
    float m;       /* s_enc * fl(1/6): block_amax * m rounds once to E4M3 */
} nvfp4_simd_te_consts;

void nvfp4_simd_te_consts_init(nvfp4_simd_te_consts *k, float amax);
/* The same constants as the core's nvfp4_core_global (the scalar leaves' view of them). */
static inline nvfp4_core_global nvfp4_simd_te_global(const nvfp4_simd_te_consts *k)
{
    nvfp4_core_global g;
    g.amax = k->amax;
    g.s_enc = k->s_enc;
    g.s_dec = k->s_dec;
    g.g = 1.0f;
    return g;
}
/* tab[s] = the te encode multiplier fminf(1/(e4m3(s) * s_dec), FLT_MAX) of
 * scale byte s (nvfp4_core_block_prepare's), for s = 0..0x7E; tab[0x7F] = 0
 * (no satfinite scale is 0x7F). A lookup replaces a division on the
 * columnwise kernels' latency chain. */
void nvfp4_simd_te_inv_table(const nvfp4_simd_te_consts *k, float tab[128]);

/* Stochastic rounding key of one orientation (docs/semantics.md, "The SR bit contract"). */
typedef struct {
    uint64_t seed, offset;
} nvfp4_simd_sr;

/* A whole-tensor columnwise job: input row-major [rows, cols] (fp32, or bf16
 * bits when bf16), output the transposed [cols, rows] codes and scales. */
typedef struct {
    const void *x;
    int bf16;
    size_t rows, cols;        /* input shape; rows % 16 == 0 */
    nvfp4_simd_te_consts k;
    const nvfp4_simd_sr *sr;  /* NULL: RN */
    int tile16;               /* 16x16 blocks */
    int rht;                  /* RHT-16 along the original rows first */
    uint32_t rht_mask[4];     /* src/core/hadamard.h sign mask */
    int rht_round_bf16;
    float rht_w[16];          /* s[i] / 4: set by the vector kernels on their copy of the job */
    float inv_tab[128];       /* te encode multiplier of each scale byte (nvfp4_simd_te_inv_table): likewise */
    uint8_t *data;            /* cols * rows / 2 bytes */
    uint8_t *scale;           /* cols * rows / 16 bytes */
} nvfp4_simd_col_job;

typedef struct {
    const char *name;
    /* max |x| with fmaxf semantics (NaN ignored, Inf counts) */
    float (*amax_f32)(const float *x, size_t n);
    float (*amax_bf16)(const uint16_t *x, size_t n);
    /* te, 1x16 blocks: the nb scale bytes of one row of 16*nb elements */
    void (*row_scales)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, uint8_t *scale);
    /* te, 16x16 tiles: the nb tile scale bytes of the 16 rows starting at x
     * (row stride `stride` elements) */
    void (*tile_scales)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t stride, size_t nb,
                        uint8_t *scale);
    /* te: codes of one row of 16*nb elements given its scale bytes; SR
     * block b of the row has linear index block0 + b */
    void (*row_encode)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const uint8_t *scale,
                       const nvfp4_simd_sr *sr, uint64_t block0, uint8_t *out);
    /* row_scales and row_encode in one pass over the row (each block loaded
     * once): what the drivers use; the split pair is the tests' view */
    void (*row_fused)(const nvfp4_simd_te_consts *k, const void *x, int bf16, size_t nb, const nvfp4_simd_sr *sr,
                      uint64_t block0, uint8_t *out, uint8_t *scale);
    /* columnwise (optionally RHT'd) quantize of input row groups [g0, g1)
     * (a group is 16 rows; g0 % 8 == 0 and g1 - g0 <= 8: one output line) */
    void (*col_quant)(const nvfp4_simd_col_job *j, size_t g0, size_t g1);
    /* max |RHT(x)| (as rounded) over row groups [g0, g1) of the job */
    float (*rht_amax)(const nvfp4_simd_col_job *j, size_t g0, size_t g1);
    /* the same, also storing RHT(x) of those rows into out (row-major like
     * x: bf16 bits when j->rht_round_bf16, else fp32) */
    float (*rht_apply)(const nvfp4_simd_col_job *j, size_t g0, size_t g1, void *out);
    /* te dequantize of one row of 16*nb elements; `stream`: the output may
     * be written with streaming (non-temporal) stores where the ISA has them */
    void (*row_dequant)(const uint8_t *data, const uint8_t *scale, size_t nb, float amax, int stream, float *out);
    /* MXFP4 1x32 (rule NVFP4_SIMD_MX_*): UE8M0 scales of one fp32 row of
     * 32*nb elements, and its codes (SR: block b takes Philox(offset, block0
     * + b) for elements 0..15 and Philox(offset + 1, ...) for 16..31) */
    void (*mx_row_scales)(int rule, const float *x, size_t nb, uint8_t *scale);
    void (*mx_row_encode)(int rule, const float *x, size_t nb, const uint8_t *scale, const nvfp4_simd_sr *sr,
                          uint64_t block0, uint8_t *out);
} nvfp4_simd_kernels;

/* MXFP4 recipes the kernels implement (src/recipes/mxfp4_floor.c and
 * mxfp4_rceil.c): FLOOR = torchao to_mx (NaN in a block makes its scale
 * 0xFF, an fp32 scale of +Inf: finite elements become +-0, NaN and Inf
 * 0x3; the encode divisor is at least 2^-126); RCEIL = NVIDIA
 * cvt.rp.satfinite.ue8m0 of bamax * fl(1/6) (NaN elements ignored, NaN code
 * 0x7). */
enum { NVFP4_SIMD_MX_FLOOR = 0, NVFP4_SIMD_MX_RCEIL = 1 };

extern const nvfp4_simd_kernels nvfp4_simd_kernels_scalar;
extern const nvfp4_simd_kernels nvfp4_simd_kernels_avx2;
extern const nvfp4_simd_kernels nvfp4_simd_kernels_avx512;
/* aarch64 (simd_neon.c; elsewhere a table of null kernels, never selected) */
extern const nvfp4_simd_kernels nvfp4_simd_kernels_neon;

/* The kernels of a variant (AUTO: the active one). */
const nvfp4_simd_kernels *nvfp4_simd_kernels_for(nvfp4_simd_variant v);

/* ---- scalar pieces the vector kernels reuse (simd_scalar.c) ------------ */

/* Element (r, c) of the job's input as fp32. */
float nvfp4_simd_col_load(const nvfp4_simd_col_job *j, size_t r, size_t c);
/* The 16 values of column c in row group g, RHT'd when the job asks. */
void nvfp4_simd_col_group(const nvfp4_simd_col_job *j, size_t g, size_t c, float v[16]);
/* Columnwise quantize of one (group, column) block with the scalar code;
 * tile_amax < 0: the block's own amax. */
void nvfp4_simd_scalar_col_block(const nvfp4_simd_col_job *j, size_t g, size_t c, float tile_amax);

/* Columnwise staging: a strip of up to NVFP4_SIMD_STAGE_COLS output rows
 * times up to 8 groups (one 64-byte line of each output row, 8 scale bytes)
 * is assembled here and then written out line by line: the output rows are
 * rows/2 bytes apart (a power of two for power-of-two shapes), so writing
 * 8 bytes at a time into hundreds of them thrashes the cache sets. */
#define NVFP4_SIMD_STAGE_COLS 256
typedef struct {
    _Alignas(64) uint8_t data[NVFP4_SIMD_STAGE_COLS][64];
    uint8_t scale[NVFP4_SIMD_STAGE_COLS][8];
} nvfp4_simd_col_stage;
/* A pass whose larger side (its input or its output) is this large (bytes;
 * 16 MiB) writes its output with streaming stores: the pass outgrows a
 * core's share of the last-level cache, so caching the output would only
 * evict the input. A smaller output stays in cache for its reader (the lab
 * dequantizes each operand's codes and hands the values to a GEMM right
 * after: streamed, both were read back from memory). The bytes are the
 * same; tests set it to 0 to compare the two kinds of store. */
extern size_t nvfp4_simd_stream_min_bytes;

/* Whether the columnwise job's codes are written with streaming stores
 * (its input is the larger side). */
static inline int nvfp4_simd_col_streams(const nvfp4_simd_col_job *j)
{
    return j->rows * j->cols * (j->bf16 ? 2u : 4u) >= nvfp4_simd_stream_min_bytes;
}

/* Writes output rows s0..s1-1, groups g0..g1-1 (g0 % 8 == 0, g1 - g0 <= 8)
 * from the stage to the job's outputs (streaming stores when aligned and
 * nvfp4_simd_col_streams). */
void nvfp4_simd_col_stage_flush(const nvfp4_simd_col_job *j, const nvfp4_simd_col_stage *st, size_t s0, size_t s1,
                                size_t g0, size_t g1);
/* Whether groups g0..g1-1 fill whole 64-byte-aligned lines of every output
 * row, which the columnwise kernels then write straight from registers
 * (streaming stores when nvfp4_simd_col_streams; otherwise through the
 * stage). */
static inline int nvfp4_simd_col_whole_lines(const nvfp4_simd_col_job *j, size_t g0, size_t g1)
{
    return g1 - g0 == 8 && ((uintptr_t)(j->data + 8 * g0) & 63u) == 0 && (j->rows / 2) % 64 == 0;
}

/* ---- whole-tensor drivers (simd_driver.c), OpenMP, active variant ------ */

float nvfp4_simd_amax(const void *x, int bf16, size_t n);
/* Rowwise te quantize of [rows, cols] (cols % 16 == 0; rows % 16 == 0 for
 * tiles): data rows*cols/2 bytes, scale rows*cols/16 bytes. */
void nvfp4_simd_te_rowwise(const void *x, int bf16, size_t rows, size_t cols, float amax, int tile16,
                           const nvfp4_simd_sr *sr, uint8_t *data, uint8_t *scale);
void nvfp4_simd_te_columnwise(const nvfp4_simd_col_job *j);
/* MXFP4 1x32 rowwise quantize (cols % 32 == 0): scale rows*cols/32 bytes. */
void nvfp4_simd_mx_rowwise(const float *x, size_t rows, size_t cols, int rule, const nvfp4_simd_sr *sr,
                           uint8_t *data, uint8_t *scale);
float nvfp4_simd_rht_amax(const nvfp4_simd_col_job *j);
/* nvfp4_simd_rht_amax, also storing in *input_amax the amax of the job's
 * input (as nvfp4_simd_amax gives it), taken from each 16-row group right
 * after its transform, while the group is in cache: one read of the input
 * from memory for both amaxes. */
float nvfp4_simd_rht_amax_and_input_amax(const nvfp4_simd_col_job *j, float *input_amax);
/* Whether an RHT columnwise quantize transforms twice (the transform is
 * too large to keep, RHT_TMP_MAX) rather than storing it: the one place
 * this is decided; callers ask once per tensor and pass the answer on. */
int nvfp4_simd_rht_transforms_twice(const nvfp4_simd_col_job *j);
/* RHT columnwise quantize with the post-RHT amax: two passes. Unless twice
 * (nvfp4_simd_rht_transforms_twice's answer) the first stores the
 * transform (bf16 or fp32) for the second; otherwise (or on a failed
 * allocation) both passes compute it. j->k is set from the post-RHT amax,
 * which is returned. */
float nvfp4_simd_te_columnwise_rht(nvfp4_simd_col_job *j, int twice);
void nvfp4_simd_te_dequantize(const uint8_t *data, const uint8_t *scale, size_t rows, size_t cols, float amax,
                              float *out);
/* cuBLAS 128x4 swizzle of a linear [rows, cols] scale matrix (same bytes as
 * nvfp4_scale_swizzle). */
void nvfp4_simd_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz);

/* ---- generic driver: the other E2M1 recipes (simd_generic.c) -----------
 *
 * Every recipe with E2M1 elements whose encode rule is a product, a
 * quotient (E4M3 scales, or the power-of-two divisors of UE8M0 scales),
 * the bf16 fma, the exact comparison or ggml's nearest search
 * (nvfp4_simd_gen_supports), with 1x16, 16x16 or 1x32 blocks, runs one
 * driver: per block its amax (a vector leaf), its scale byte and
 * encode state from the SAME src/core/ calls the reference path makes
 * (nvfp4_core_block_scale, the 4over6 scale/pick/tile-sum functions,
 * nvfp4_core_block_prepare: once per block, 1/16 of the work), then the
 * elements through a vector leaf per encode rule and the recipe's E2M1
 * special-value policy. The leaves below are the per-rule pieces; the
 * scalar ones call src/core/ element by element (the oracle and the
 * scalar variant's), the AVX2 ones (simd_avx2_generic.c) serve the avx2
 * and avx512 variants (every AVX-512 CPU has AVX2). */

typedef struct {
    /* block amax of each of the nb 16-element blocks at x, as a left-to-right
     * nvfp4_core_amax_step fold with the recipe's NaN rule */
    void (*block_amax)(const float *x, size_t nb, int nan_propagates, float *bamax);
    /* max |x[0..n)| with fmaxf semantics (NaN ignored), and in *any_nan
     * whether some element is NaN: one pass for the NaN-propagating amax */
    float (*amax_nan)(const float *x, size_t n, int *any_nan);
    /* the 16 SR bytes (nvfp4_core_sr_block_bytes) of blocks block0 .. block0 + nb - 1 at rb + 16 b */
    void (*sr_bytes)(const nvfp4_simd_sr *sr, uint64_t block0, size_t nb, uint8_t *rb);
    /* packed codes of the nb 16-element segments at x: segment b with encode state factor[b]
     * (nvfp4_core_block_prepare) and, when rb is not NULL, SR with its bytes
     * rb + 16 b (RN otherwise) */
    void (*encode)(const nvfp4_core_recipe *r, const float *x, size_t nb, const float *factor, const uint8_t *rb,
                   uint8_t *out);
    /* 4over6: nvfp4_core_4over6_seg_error of the segment x[0..15] under each
     * candidate scale byte s[c], whose encode state is f[c] */
    void (*err_4over6)(const nvfp4_core_recipe *r, const nvfp4_core_global *g, const float *x, const uint8_t s[2],
                       const float f[2], float err[2]);
} nvfp4_simd_gen_leaves;

extern const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_scalar;
extern const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_avx2;
extern const nvfp4_simd_gen_leaves nvfp4_simd_gen_leaves_neon; /* simd_neon.c, aarch64 */
/* The leaves of a variant (AUTO: the active one). */
const nvfp4_simd_gen_leaves *nvfp4_simd_gen_leaves_for(nvfp4_simd_variant v);

/* Whether the generic driver implements the recipe's chain. */
int nvfp4_simd_gen_supports(const nvfp4_core_recipe *r);

/* One stored orientation: the fp32 rows as the reference path stores them
 * (transposed, zero padded), quantized with the recipe. */
typedef struct {
    const nvfp4_core_recipe *r;
    const float *x;          /* [rows, cols] */
    size_t rows, cols;       /* cols % block_len == 0; rows % 16 == 0 for tiles */
    size_t block_len;        /* the layout's: 16 (1x16, 16x16) or 32 (1x32) */
    int tile16;              /* 16x16 blocks */
    float amax;              /* the tensor amax the global state derives from */
    const nvfp4_simd_sr *sr; /* NULL: RN */
    uint8_t *data;           /* rows * cols / 2 bytes */
    uint8_t *scale;          /* rows * cols / 16 bytes */
    float *row_amax;         /* row-scaled recipes: one amax per row (written) */
} nvfp4_simd_gen_job;

/* The tensor amax with the recipe's NaN rule (reference.c tensor_amax): a
 * canonical quiet NaN when a NaN propagates, else the fmaxf amax. */
float nvfp4_simd_gen_tensor_amax(const float *x, size_t n, int nan_propagates);
/* 0, or -1 when out of memory (nothing else can fail). */
int nvfp4_simd_gen_quantize(const nvfp4_simd_gen_job *j);

#endif /* NVFP4_SIMD_KERNELS_H */
