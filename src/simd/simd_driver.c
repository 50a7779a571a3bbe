/*
 * simd_driver.c - whole-tensor drivers of the fast CPU path: OpenMP over
 * rows or 16-row groups, calling the active variant's kernels.
 *
 * Determinism: a block's bytes depend only on its inputs, the global amax
 * and its block index (the Philox counter), and an amax is an exact,
 * order-free maximum, so the thread count and schedule change nothing.
 * Dynamic schedules over chunks of a few hundred KiB: on a shared machine a
 * descheduled thread does not hold the others at the barrier, and on an idle
 * one the cost is one atomic per chunk. Columnwise chunks are 8 groups, so
 * each chunk writes whole 64-byte lines of the transposed output.
 */
#include <stdlib.h>
#include <string.h>

#include "core/nvfp4_core.h"
#include "core/parallel.h"
#include "simd/simd_kernels.h"

/* Below this many elements a parallel region costs more than it saves. */
#define SIMD_PARALLEL_MIN 65536
#define AMAX_CHUNK 65536
/* 16-row groups per columnwise work item: 8 groups fill a 64-byte line of
 * every output row, so no two threads write the same line. */
#define COL_CHUNK 8
/* Largest temporary for the one-transform RHT path (bytes). */
#define RHT_TMP_MAX ((size_t)16 << 20)

/* Rows per dynamic work item: about 64 Ki elements. */
static size_t rows_per_chunk(size_t cols)
{
    size_t r = 65536 / (cols ? cols : 1);
    return r ? r : 1;
}

float nvfp4_simd_amax(const void *x, int bf16, size_t n)
{
    const nvfp4_simd_kernels *k = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t nchunk = (n + AMAX_CHUNK - 1) / AMAX_CHUNK;
    float m = 0.0f;
    /* per-chunk maxima are never NaN, so OpenMP's max reduction is exact */
    NVFP4_PAR_FOR_IF(n >= SIMD_PARALLEL_MIN, "omp parallel for reduction(max : m) schedule(dynamic, 1)",
        for (size_t c = 0; c < nchunk; c++) {
            size_t i0 = c * AMAX_CHUNK, len = n - i0 < AMAX_CHUNK ? n - i0 : AMAX_CHUNK;
            float a = bf16 ? k->amax_bf16((const uint16_t *)x + i0, len) : k->amax_f32((const float *)x + i0, len);
            if (a > m) m = a;
        });
    return m;
}

static const void *row_ptr(const void *x, int bf16, size_t elem)
{
    return bf16 ? (const void *)((const uint16_t *)x + elem) : (const void *)((const float *)x + elem);
}

void nvfp4_simd_te_rowwise(const void *x, int bf16, size_t rows, size_t cols, float amax, int tile16,
                           const nvfp4_simd_sr *sr, uint8_t *data, uint8_t *scale)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    nvfp4_simd_te_consts k;
    nvfp4_simd_te_consts_init(&k, amax);
    size_t nb = cols / 16;
    int par = rows * cols >= SIMD_PARALLEL_MIN;
    if (tile16) {
        size_t ng = rows / 16;
        NVFP4_PAR_FOR_IF(par, "omp parallel for schedule(dynamic, 1)",
            for (size_t g = 0; g < ng; g++) {
                uint8_t *s0 = scale + 16 * g * nb;
                kn->tile_scales(&k, row_ptr(x, bf16, 16 * g * cols), bf16, cols, nb, s0);
                for (size_t r = 16 * g; r < 16 * g + 16; r++) {
                    if (r > 16 * g) memcpy(scale + r * nb, s0, nb);
                    kn->row_encode(&k, row_ptr(x, bf16, r * cols), bf16, nb, s0, sr, (uint64_t)r * nb, data + r * (cols / 2));
                }
            });
        return;
    }
    NVFP4_PAR_FOR_IF(par, "omp parallel for schedule(dynamic, rows_per_chunk(cols))",
        for (size_t r = 0; r < rows; r++) {
            kn->row_fused(&k, row_ptr(x, bf16, r * cols), bf16, nb, sr, (uint64_t)r * nb, data + r * (cols / 2),
                          scale + r * nb);
        });
}

void nvfp4_simd_mx_rowwise(const float *x, size_t rows, size_t cols, int rule, const nvfp4_simd_sr *sr,
                           uint8_t *data, uint8_t *scale)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t nb = cols / 32;
    NVFP4_PAR_FOR_IF(rows * cols >= SIMD_PARALLEL_MIN, "omp parallel for schedule(dynamic, rows_per_chunk(cols))",
        for (size_t r = 0; r < rows; r++) {
            kn->mx_row_scales(rule, x + r * cols, nb, scale + r * nb);
            kn->mx_row_encode(rule, x + r * cols, nb, scale + r * nb, sr, (uint64_t)r * nb, data + r * (cols / 2));
        });
}

void nvfp4_simd_te_columnwise(const nvfp4_simd_col_job *j)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t ng = j->rows / 16, nchunk = (ng + COL_CHUNK - 1) / COL_CHUNK;
    NVFP4_PAR_FOR_IF(j->rows * j->cols >= SIMD_PARALLEL_MIN, "omp parallel for schedule(dynamic, 1)",
        for (size_t c = 0; c < nchunk; c++) {
            kn->col_quant(j, c * COL_CHUNK, (c + 1) * COL_CHUNK < ng ? (c + 1) * COL_CHUNK : ng);
        });
}

float nvfp4_simd_rht_amax(const nvfp4_simd_col_job *j)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t ng = j->rows / 16;
    float m = 0.0f;
    NVFP4_PAR_FOR_IF(j->rows * j->cols >= SIMD_PARALLEL_MIN, "omp parallel for reduction(max : m) schedule(dynamic, 1)",
        for (size_t g = 0; g < ng; g++) {
            float a = kn->rht_amax(j, g, g + 1);
            if (a > m) m = a;
        });
    return m;
}

float nvfp4_simd_rht_amax_and_input_amax(const nvfp4_simd_col_job *j, float *input_amax)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t ng = j->rows / 16, group = 16 * j->cols;
    float m = 0.0f, in = 0.0f;
    /* both maxima are never NaN (as in nvfp4_simd_amax), so the max
     * reductions are exact */
    NVFP4_PAR_FOR_IF(j->rows * j->cols >= SIMD_PARALLEL_MIN, "omp parallel for reduction(max : m, in) schedule(dynamic, 1)",
        for (size_t g = 0; g < ng; g++) {
            float a = kn->rht_amax(j, g, g + 1);
            if (a > m) m = a;
            /* the group's 16 rows are contiguous and still in cache */
            float b = j->bf16 ? kn->amax_bf16((const uint16_t *)j->x + g * group, group)
                              : kn->amax_f32((const float *)j->x + g * group, group);
            if (b > in) in = b;
        });
    *input_amax = in;
    return m;
}

/* Large tensors transform twice instead of storing the transform: faulting
 * in a fresh temporary costs more than the second transform
 * (docs/performance.md, "Measured design choices"); small ones stay in
 * cache. The one place this is decided: the caller asks once and passes
 * the answer on. */
int nvfp4_simd_rht_transforms_twice(const nvfp4_simd_col_job *j)
{
    return j->rows * j->cols * (j->rht_round_bf16 ? 2u : 4u) > RHT_TMP_MAX;
}

float nvfp4_simd_te_columnwise_rht(nvfp4_simd_col_job *j, int twice)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t ng = j->rows / 16, n = j->rows * j->cols;
    size_t tmp_bytes = n * (j->rht_round_bf16 ? 2 : 4);
    void *tmp = !twice ? malloc(tmp_bytes + 1) : NULL; /* a failed allocation transforms twice too */
    if (!tmp) {
        float a = nvfp4_simd_rht_amax(j);
        nvfp4_simd_te_consts_init(&j->k, a);
        nvfp4_simd_te_columnwise(j);
        return a;
    }
    float m = 0.0f;
    NVFP4_PAR_FOR_IF(n >= SIMD_PARALLEL_MIN, "omp parallel for reduction(max : m) schedule(dynamic, 1)",
        for (size_t g = 0; g < ng; g++) {
            float a = kn->rht_apply(j, g, g + 1, tmp);
            if (a > m) m = a;
        });
    /* quantize the stored transform: same values, so the same bytes */
    nvfp4_simd_col_job q = *j;
    q.x = tmp;
    q.bf16 = j->rht_round_bf16;
    q.rht = 0;
    nvfp4_simd_te_consts_init(&q.k, m);
    nvfp4_simd_te_columnwise(&q);
    j->k = q.k;
    free(tmp);
    return m;
}

/* Streaming stores for outputs of nvfp4_simd_stream_min_bytes or more only
 * (simd_kernels.h; the output is the larger side): streaming the lab's
 * fake-quantized operands, which its GEMM reads right after, cost about 9%
 * of an NVFP4 training step. */
void nvfp4_simd_te_dequantize(const uint8_t *data, const uint8_t *scale, size_t rows, size_t cols, float amax,
                              float *out)
{
    const nvfp4_simd_kernels *kn = nvfp4_simd_kernels_for(NVFP4_SIMD_AUTO);
    size_t nb = cols / 16;
    int stream = rows * cols * sizeof(float) >= nvfp4_simd_stream_min_bytes;
    NVFP4_PAR_FOR_IF(rows * cols >= SIMD_PARALLEL_MIN, "omp parallel for schedule(dynamic, rows_per_chunk(cols))",
        for (size_t r = 0; r < rows; r++) {
            kn->row_dequant(data + r * (cols / 2), scale + r * nb, nb, amax, stream, out + r * cols);
        });
}
