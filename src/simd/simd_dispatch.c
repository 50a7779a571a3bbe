/*
 * simd_dispatch.c - choosing the variant of the fast CPU path: the
 * NVFP4_SIMD environment variable, nvfp4_simd_set(), or the best the CPU
 * supports (GCC/clang __builtin_cpu_supports).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/simd.h"
#include "simd/simd_kernels.h"

static const char *const variant_names[NVFP4_SIMD_VARIANTS] = {"scalar", "avx2", "avx512"};

/* -2: not resolved yet; otherwise a nvfp4_simd_variant. */
static _Atomic int active_variant = -2;

const char *nvfp4_simd_name(nvfp4_simd_variant v)
{
    if (v == NVFP4_SIMD_AUTO) return "auto";
    return (unsigned)v < NVFP4_SIMD_VARIANTS ? variant_names[v] : "?";
}

bool nvfp4_simd_parse(const char *s, nvfp4_simd_variant *out)
{
    if (strcmp(s, "auto") == 0) {
        *out = NVFP4_SIMD_AUTO;
        return true;
    }
    for (int i = 0; i < NVFP4_SIMD_VARIANTS; i++)
        if (strcmp(s, variant_names[i]) == 0) {
            *out = (nvfp4_simd_variant)i;
            return true;
        }
    return false;
}

bool nvfp4_simd_available(nvfp4_simd_variant v)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    switch (v) {
    case NVFP4_SIMD_AUTO:
    case NVFP4_SIMD_SCALAR: return true;
    case NVFP4_SIMD_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case NVFP4_SIMD_AVX512:
        /* DQ for vreduceps (the RHT kernels' integer split), VBMI2 for the
         * concatenating shifts that pack the columnwise codes (2 ops per
         * row instead of 4: columnwise +6%, RHT + quantize +4% on Zen 4),
         * VBMI for the byte permute that transposes the columnwise scale
         * bytes (every VBMI2 CPU has it): Ice Lake, Sapphire Rapids,
         * Zen 4 and later. Skylake-SP and Cascade Lake get avx2. */
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
    }
    return false;
#else
    return v == NVFP4_SIMD_AUTO || v == NVFP4_SIMD_SCALAR;
#endif
}

static nvfp4_simd_variant best_available(void)
{
    if (nvfp4_simd_available(NVFP4_SIMD_AVX512)) return NVFP4_SIMD_AVX512;
    if (nvfp4_simd_available(NVFP4_SIMD_AVX2)) return NVFP4_SIMD_AVX2;
    return NVFP4_SIMD_SCALAR;
}

static nvfp4_simd_variant from_environment(void)
{
    const char *s = getenv("NVFP4_SIMD");
    nvfp4_simd_variant v;
    if (!s || !*s) return best_available();
    if (!nvfp4_simd_parse(s, &v)) {
        fprintf(stderr, "nvfp4: NVFP4_SIMD=%s is not one of scalar, avx2, avx512, auto; using auto\n", s);
        return best_available();
    }
    if (v == NVFP4_SIMD_AUTO) return best_available();
    if (!nvfp4_simd_available(v)) {
        fprintf(stderr, "nvfp4: NVFP4_SIMD=%s: this CPU lacks it; using %s\n", s,
                nvfp4_simd_name(best_available()));
        return best_available();
    }
    return v;
}

nvfp4_simd_variant nvfp4_simd_active(void)
{
    int v = atomic_load(&active_variant);
    if (v == -2) {
        int want = (int)from_environment();
        int expected = -2;
        /* A concurrent nvfp4_simd_set wins over the environment. */
        if (!atomic_compare_exchange_strong(&active_variant, &expected, want)) return (nvfp4_simd_variant)expected;
        v = want;
    }
    return (nvfp4_simd_variant)v;
}

nvfp4_status nvfp4_simd_set(nvfp4_simd_variant v, nvfp4_error *err)
{
    if (v < NVFP4_SIMD_AUTO || v >= NVFP4_SIMD_VARIANTS)
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown SIMD variant %d", (int)v);
    if (!nvfp4_simd_available(v))
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "this CPU cannot run the %s variant", nvfp4_simd_name(v));
    atomic_store(&active_variant, (int)(v == NVFP4_SIMD_AUTO ? best_available() : v));
    return NVFP4_OK;
}

const nvfp4_simd_kernels *nvfp4_simd_kernels_for(nvfp4_simd_variant v)
{
    if (v == NVFP4_SIMD_AUTO) v = nvfp4_simd_active();
    switch (v) {
    /* a table without kernels (a build for another architecture) is never
     * available, but stay safe: fall back to scalar */
    case NVFP4_SIMD_AVX512:
        return nvfp4_simd_kernels_avx512.row_encode ? &nvfp4_simd_kernels_avx512 : &nvfp4_simd_kernels_scalar;
    case NVFP4_SIMD_AVX2:
        return nvfp4_simd_kernels_avx2.row_encode ? &nvfp4_simd_kernels_avx2 : &nvfp4_simd_kernels_scalar;
    default: return &nvfp4_simd_kernels_scalar;
    }
}
