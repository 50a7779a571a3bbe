/* amax.c - global amax of fp32 and bf16 tensors (fmaxf semantics: NaN
 * elements are ignored, Inf counts). Max is exact and order-free, so the
 * OpenMP split cannot change the result.
 *
 * The maximum is taken over the magnitude bit patterns: for non-NaN values
 * the patterns of |x| order as the values do (+0 lowest, +Inf highest), and
 * a NaN pattern (above Inf's) counts as 0, which is what fmaxf's running
 * maximum from 0 gives (nvfp4_core_amax_step with NaN ignored). An integer
 * maximum vectorizes; the float loop with its NaN test did not, and the
 * lab's FP8 operands spent 28% of their quantization time in it. */
#include <string.h>

#include "nvfp4/quant.h"

#include "core/bf16.h"
#include "core/parallel.h"
#include "core/recipe.h"

#define AMAX_PARALLEL_MIN 65536
#define AMAX_CHUNK 16384
#define F32_INF_BITS 0x7F800000u

/* Magnitudes fit 31 bits: signed maxima, which SSE2 has. */
static inline int32_t f32_magnitude_or_zero(float x)
{
    int32_t u;
    memcpy(&u, &x, sizeof u);
    u &= 0x7FFFFFFF;
    return u > (int32_t)F32_INF_BITS ? 0 : u;
}

/* One chunk's maximum in GCC/clang vector types (4 lanes: the baseline
 * x86-64 and AArch64 registers), two accumulators deep. GCC 12 at -O2 left
 * the plain loop scalar, and `omp simd` kept its reduction in a stack array
 * (a store and reload per vector). */
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));
#define SPLAT(x) ((i32x4){(x), (x), (x), (x)})

static inline __attribute__((always_inline)) i32x4 max4(i32x4 a, i32x4 b)
{
    i32x4 gt = a > b;
    return (a & gt) | (b & ~gt);
}

/* |x| patterns of 4 fp32 values, NaN patterns as 0. */
static inline __attribute__((always_inline)) i32x4 magnitudes_f32(const float *x)
{
    i32x4 v;
    memcpy(&v, x, sizeof v);
    v &= SPLAT(0x7FFFFFFF);
    return v & ~(v > SPLAT((int32_t)F32_INF_BITS));
}

static int32_t chunk_max_f32(const float *x, size_t n)
{
    i32x4 m0 = SPLAT(0), m1 = SPLAT(0);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        m0 = max4(m0, magnitudes_f32(x + i));
        m1 = max4(m1, magnitudes_f32(x + i + 4));
    }
    m0 = max4(m0, m1);
    int32_t m = 0;
    for (int k = 0; k < 4; k++) m = m0[k] > m ? m0[k] : m;
    for (; i < n; i++) {
        int32_t a = f32_magnitude_or_zero(x[i]);
        m = a > m ? a : m;
    }
    return m;
}

/* bf16: each pattern widened to the fp32 one it decodes to (a 16-bit shift). */
static int32_t chunk_max_bf16(const uint16_t *x, size_t n)
{
    i32x4 m0 = SPLAT(0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        u32x4 w = {x[i], x[i + 1], x[i + 2], x[i + 3]};
        i32x4 v = (i32x4)(w << 16) & SPLAT(0x7FFFFFFF);
        m0 = max4(m0, v & ~(v > SPLAT((int32_t)F32_INF_BITS)));
    }
    int32_t m = 0;
    for (int k = 0; k < 4; k++) m = m0[k] > m ? m0[k] : m;
    for (; i < n; i++) {
        int32_t a = (int32_t)((uint32_t)x[i] << 16) & 0x7FFFFFFF;
        a = a > (int32_t)F32_INF_BITS ? 0 : a;
        m = a > m ? a : m;
    }
    return m;
}

float nvfp4_amax_f32(const float *x, size_t n)
{
    size_t nchunk = (n + AMAX_CHUNK - 1) / AMAX_CHUNK;
    int32_t m = 0;
    NVFP4_PAR_FOR_IF(n >= AMAX_PARALLEL_MIN, "omp parallel for reduction(max : m) schedule(static)",
        for (size_t c = 0; c < nchunk; c++) {
            size_t i0 = c * AMAX_CHUNK;
            int32_t a = chunk_max_f32(x + i0, n - i0 < AMAX_CHUNK ? n - i0 : AMAX_CHUNK);
            m = a > m ? a : m;
        });
    return nvfp4_core_f32_from_bits((uint32_t)m);
}

float nvfp4_amax_bf16(const uint16_t *x, size_t n)
{
    size_t nchunk = (n + AMAX_CHUNK - 1) / AMAX_CHUNK;
    int32_t m = 0;
    NVFP4_PAR_FOR_IF(n >= AMAX_PARALLEL_MIN, "omp parallel for reduction(max : m) schedule(static)",
        for (size_t c = 0; c < nchunk; c++) {
            size_t i0 = c * AMAX_CHUNK;
            int32_t a = chunk_max_bf16(x + i0, n - i0 < AMAX_CHUNK ? n - i0 : AMAX_CHUNK);
            m = a > m ? a : m;
        });
    return nvfp4_core_f32_from_bits((uint32_t)m);
}
