/*
 * nvfp4/cuda.h - the CUDA path on device pointers (library libnvfp4_cuda.so,
 * built by `make cuda`): quantize with a named recipe, dequantize, global
 * amax, scale swizzle, the `te`-order emulated GEMM, and a device-side
 * comparison of another kernel's output with ours (mismatch count and the
 * first mismatches by index).
 *
 * Every kernel calls the rounding rules of src/core/ (compiled for the
 * device), so the bytes equal the CPU library's (include/nvfp4/quant.h) for
 * the same recipe and options. Semantics, the list of correctly rounded
 * operations and a complete example: docs/cuda.md.
 *
 * Pointers marked "device" are CUDA device pointers (cudaMalloc or
 * nvfp4_cuda_alloc). Functions are synchronous: they return after the work
 * is done. With host emulation switched on (nvfp4_cuda_set_emulation, a test
 * aid) the same kernel bodies run on the CPU, one work item at a time, and
 * every "device" pointer is a host pointer from nvfp4_cuda_alloc.
 *
 * This header is C; it needs no CUDA header.
 */
#ifndef NVFP4_CUDA_H
#define NVFP4_CUDA_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

NVFP4_BEGIN_DECLS

/* Status returned when no CUDA device is present (and emulation is off):
 * NVFP4_EUNSUPPORTED, with a message that starts with "no CUDA device". */

/* ---- devices and memory -------------------------------------------------- */
/* Number of usable CUDA devices (0 when none or no driver). */
int nvfp4_cuda_device_count(void);
/* "NVIDIA H200 (sm_90), driver 13.0, runtime 13.0" into buf. */
nvfp4_status nvfp4_cuda_device_describe(char *buf, size_t n, nvfp4_error *err);

/* Runs every kernel body on the host instead (test aid; see above).
 * Not thread-safe: set it once before any other call. */
void nvfp4_cuda_set_emulation(bool on);
bool nvfp4_cuda_emulation(void);

/* Device memory that works in both modes. */
nvfp4_status nvfp4_cuda_alloc(void **dptr, size_t bytes, nvfp4_error *err);
void nvfp4_cuda_free(void *dptr);
nvfp4_status nvfp4_cuda_upload(void *dst_device, const void *src_host, size_t bytes, nvfp4_error *err);
nvfp4_status nvfp4_cuda_download(void *dst_host, const void *src_device, size_t bytes, nvfp4_error *err);

/* ---- quantize ------------------------------------------------------------ */
/* One orientation on the device; fields as nvfp4_qtensor (quant.h). */
typedef struct {
    size_t rows, cols;            /* logical shape of this orientation */
    size_t prows, pcols;          /* padded shape */
    uint8_t *data;                /* device: packed codes (E2M1) or bytes (E4M3 elements) */
    size_t data_bytes;
    uint8_t *scale;               /* device: linear [scale_rows, scale_cols] */
    size_t scale_rows, scale_cols;
    uint8_t *scale_swizzled;      /* device: cuBLAS 128x4 layout, zero padded */
    size_t scale_swizzled_bytes;
    float amax;                   /* global amax (post-RHT when rht); 0 for MX recipes; row-scaled
                                     recipes: the maximum of row_amax */
    bool rht;
    float *row_amax;              /* device: row-scaled recipes (te-rowscaled), the amax of each stored
                                     row, prows floats (padded rows 0), as nvfp4_qtensor.row_amax;
                                     NULL for every other recipe */
} nvfp4_cuda_qtensor;

typedef struct {
    char recipe[32];              /* resolved recipe name */
    nvfp4_quant_opts opts;        /* as resolved (opts.recipe points at `recipe`) */
    nvfp4_cuda_qtensor row, col;
    bool has_row, has_col;
} nvfp4_cuda_quantized;

/* Quantizes x (device, row-major rows x cols, fp32 or bf16 bits) with the
 * same options and errors as nvfp4_quantize. The library allocates the
 * outputs; free them with nvfp4_cuda_quantized_free. */
nvfp4_status nvfp4_cuda_quantize(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                 const nvfp4_quant_opts *opts, nvfp4_cuda_quantized *out, nvfp4_error *err);
void nvfp4_cuda_quantized_free(nvfp4_cuda_quantized *q);

/* out (device, fp32, rows*cols of the orientation): as nvfp4_dequantize
 * (row-scaled recipes: each stored row with its own amax from row_amax). */
nvfp4_status nvfp4_cuda_dequantize(const nvfp4_cuda_quantized *q, bool columnwise, float *out, nvfp4_error *err);

/* max |x| over n elements of a device tensor, fmaxf semantics (NaN ignored,
 * Inf counts); the result is independent of the launch configuration. */
nvfp4_status nvfp4_cuda_amax(const void *x, nvfp4_dtype dtype, size_t n, float *amax, nvfp4_error *err);

/* linear [rows, cols] (device) -> swz (device, nvfp4_swizzled_size bytes). */
nvfp4_status nvfp4_cuda_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz,
                                      nvfp4_error *err);

/* D[M, N] (device fp32) = te-order GEMM of two NVFP4 operands (E2M1
 * elements, E4M3 scales, 16-element blocks along K), as nvfp4_gemm with
 * NVFP4_GEMM_TE: one thread per output, block partials exact, sequential
 * fp32 sum over k, then times alpha. */
nvfp4_status nvfp4_cuda_gemm_te(const nvfp4_cuda_quantized *a, bool a_columnwise, const nvfp4_cuda_quantized *b,
                                bool b_columnwise, float alpha_in, float *d, nvfp4_error *err);

/* ---- compare another kernel's output with ours, on the device ------------ */
typedef enum {
    NVFP4_CUDA_CMP_U8 = 0,  /* bytes (scales, E4M3 elements); index = byte */
    NVFP4_CUDA_CMP_FP4 = 1, /* packed E2M1 codes; index = element (nibble), n = elements */
    NVFP4_CUDA_CMP_F32 = 2, /* fp32 bit patterns (amax, dequantized values); -0 != +0, NaN == same NaN bits */
    NVFP4_CUDA_CMP_F32_NANEQ = 3 /* fp32 bit patterns, but any NaN equals any NaN: a NaN made by arithmetic
                                    (NaN * x, 0 * Inf) carries the platform's payload (x86 SSE: the operand's,
                                    or 0xFFC00000; NVIDIA GPUs: 0x7FFFFFFF), which no rule decides */
} nvfp4_cuda_cmp_kind;

typedef struct {
    uint64_t index;    /* element index */
    uint32_t expected; /* ours: byte, nibble or fp32 bits */
    uint32_t actual;   /* theirs */
} nvfp4_cuda_mismatch;

/* Compares n elements of `expected` (ours) and `actual` (theirs), both
 * device pointers. *count receives the number of differing elements; the
 * first min(count, max_first) of them in index order go to first[] (host
 * array, may be NULL when max_first is 0). */
nvfp4_status nvfp4_cuda_compare(nvfp4_cuda_cmp_kind kind, const void *expected, const void *actual, size_t n,
                                uint64_t *count, nvfp4_cuda_mismatch *first, size_t max_first, nvfp4_error *err);

/* ---- one call: is a kernel's quantized output ours? ----------------------- */
#define NVFP4_CUDA_CHECK_FIRST 8

typedef struct {
    uint64_t code_mismatches, scale_mismatches; /* differing elements / scale bytes */
    bool amax_checked, amax_equal;              /* bit patterns; amax_equal: every compared amax */
    float amax_expected, amax_actual;           /* the tensor amax, or for a row-scaled recipe the first
                                                   differing row's (the maximum of the rows when none differs) */
    size_t amax_count;                          /* amaxes compared: 1, or prows for a row-scaled recipe */
    uint64_t amax_mismatches;                   /* differing amaxes (row-scaled: differing rows) */
    size_t n_first_amax;
    nvfp4_cuda_mismatch first_amax[NVFP4_CUDA_CHECK_FIRST]; /* index = stored row (0 for the tensor amax) */
    size_t n_first_codes, n_first_scales;
    nvfp4_cuda_mismatch first_codes[NVFP4_CUDA_CHECK_FIRST];  /* by index, ours vs theirs */
    nvfp4_cuda_mismatch first_scales[NVFP4_CUDA_CHECK_FIRST];
    /* When anything differs, the CPU verifier's explanation (nvfp4/verify.h,
     * what `nvfp4 verify` prints): the reason of each first mismatch, the
     * count of every reason over the whole tensor, and the cause lines
     * (known kernel bugs of the mutant catalog named "your kernel computes"). */
    bool explained;
    nvfp4_vreason first_code_reasons[NVFP4_CUDA_CHECK_FIRST];
    nvfp4_vreason first_scale_reasons[NVFP4_CUDA_CHECK_FIRST];
    nvfp4_vreason first_amax_reasons[NVFP4_CUDA_CHECK_FIRST]; /* NVFP4_VR_VALUE, as verify's amax lines */
    size_t reason_count[NVFP4_VR_COUNT];
    nvfp4_vcause_line causes[NVFP4_VERIFY_MAX_CAUSES];
    size_t n_causes;
} nvfp4_cuda_check_report;

/* Quantizes x (device) with opts on the device and compares one orientation
 * (columnwise or rowwise) with a kernel's output: codes (device, our layout:
 * packed E2M1 nibbles or E4M3 bytes, padded shape), scales (device, may be
 * NULL to skip; linear [scale_rows, scale_cols] or, when scales_swizzled, the
 * cuBLAS 128x4 layout of nvfp4_swizzled_size bytes) and amax (host pointer,
 * may be NULL to skip: one float, or for a row-scaled recipe (te-rowscaled)
 * prows floats, the amax of each stored row as nvfp4_cuda_qtensor.row_amax,
 * each compared bit for bit). The report says how many differ, lists the first
 * ones with their reasons and names the systematic causes (the input and
 * both outputs are then downloaded and explained by nvfp4_verify on the
 * host). The status is about the call, not the match: NVFP4_OK with nonzero
 * counts means the kernel differs. */
nvfp4_status nvfp4_cuda_check_quantized(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                        const nvfp4_quant_opts *opts, bool columnwise, const uint8_t *codes,
                                        const uint8_t *scales, bool scales_swizzled, const float *amax,
                                        nvfp4_cuda_check_report *report, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_CUDA_H */
