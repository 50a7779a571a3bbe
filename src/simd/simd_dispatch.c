/*
 * simd_dispatch.c - choosing the variant of the fast CPU path: the
 * NVFP4_SIMD environment variable, nvfp4_simd_set(), or the best the CPU
 * supports (GCC/clang __builtin_cpu_supports on x86-64, the kernel's
 * hardware capabilities on aarch64).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/simd.h"
#include "simd/simd_kernels.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* ---- fork safety ------------------------------------------------------------------
 * libgomp keeps the worker threads of a parallel region parked in a pool for
 * the next one. fork() copies only the calling thread, so in the child that
 * thread's pool names workers that do not exist, and its next parallel region
 * (nvfp4_simd_amax's, say) waits for them forever: a Python process that
 * quantized, then os.fork()ed or started a multiprocessing "fork" pool, hung
 * in GOMP_parallel. libgomp cannot rebuild the pool, so in the child the
 * thread that forked runs its parallel regions on one thread: a team of one
 * never touches the pool. Results do not change (every kernel gives the same
 * bytes at any thread count, docs/semantics.md); threads the child starts
 * later get pools of their own and run in parallel as usual, and processes
 * started by exec or multiprocessing's "spawn" / "forkserver" are unaffected.
 * The handler is installed when the library is loaded, so it also covers a
 * fork made before the first call into the library. It sets that thread's
 * OpenMP thread count, so the host program's own OpenMP loops on it (when
 * they share this libgomp) run on one thread too, which also keeps them from
 * hanging. Regions with an explicit num_threads clause (the study runner's)
 * are not covered: the lab is not meant to run in a forked child. */
#ifdef _OPENMP /* a build without OpenMP (the fuzz targets) has no pool to lose */
#include <omp.h>

static void one_thread_after_fork(void) { omp_set_num_threads(1); }

__attribute__((constructor)) static void install_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, one_thread_after_fork);
}
#endif

static const char *const variant_names[NVFP4_SIMD_VARIANTS] = {"scalar", "avx2", "avx512", "neon"};

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
    case NVFP4_SIMD_NEON: return false;
    }
    return false;
#elif defined(__aarch64__)
    /* Advanced SIMD is architecturally mandatory on ARMv8-A, but a kernel
     * can hide it: ask it where it tells (HWCAP_ASIMD). */
    if (v == NVFP4_SIMD_AUTO || v == NVFP4_SIMD_SCALAR) return true;
#if defined(__linux__)
    return v == NVFP4_SIMD_NEON && (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
    return v == NVFP4_SIMD_NEON;
#endif
#else
    return v == NVFP4_SIMD_AUTO || v == NVFP4_SIMD_SCALAR;
#endif
}

static nvfp4_simd_variant best_available(void)
{
    if (nvfp4_simd_available(NVFP4_SIMD_NEON)) return NVFP4_SIMD_NEON;
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
        fprintf(stderr, "nvfp4: NVFP4_SIMD=%s is not one of scalar, avx2, avx512, neon, auto; using auto\n", s);
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
    case NVFP4_SIMD_NEON:
        return nvfp4_simd_kernels_neon.row_encode ? &nvfp4_simd_kernels_neon : &nvfp4_simd_kernels_scalar;
    default: return &nvfp4_simd_kernels_scalar;
    }
}
