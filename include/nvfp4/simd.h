/*
 * nvfp4/simd.h - which implementation of the fast CPU path runs: the
 * portable scalar code, AVX2 or AVX-512 kernels (x86-64), or NEON kernels
 * (aarch64). Every variant produces the
 * same bytes (tests/check_simd.c), so the choice only changes speed.
 *
 * The variant is chosen once, at the first call that needs it:
 *   1. the environment variable NVFP4_SIMD=scalar|avx2|avx512|neon|auto, if set
 *      (a variant the CPU lacks is an error reported on stderr, and the
 *      best available variant is used instead);
 *   2. otherwise the best the CPU supports (x86-64: __builtin_cpu_supports;
 *      aarch64: NEON, when getauxval(AT_HWCAP) has HWCAP_ASIMD).
 * nvfp4_simd_set() overrides both at run time.
 */
#ifndef NVFP4_SIMD_H
#define NVFP4_SIMD_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

typedef enum {
    NVFP4_SIMD_AUTO = -1,  /* the best the CPU supports */
    NVFP4_SIMD_SCALAR = 0,
    NVFP4_SIMD_AVX2 = 1,   /* AVX2 + FMA CPUs (the kernels use no FMA instruction) */
    NVFP4_SIMD_AVX512 = 2, /* AVX-512 F, BW, VL, DQ, VBMI, VBMI2 (Ice Lake, Zen 4 and later) */
    NVFP4_SIMD_NEON = 3    /* aarch64 Advanced SIMD (Grace and every other ARMv8-A CPU) */
} nvfp4_simd_variant;

#define NVFP4_SIMD_VARIANTS 4

/* The variant now in use (resolving the environment on the first call). */
nvfp4_simd_variant nvfp4_simd_active(void);
/* Whether this CPU (and build) can run v. SCALAR and AUTO: always. */
bool nvfp4_simd_available(nvfp4_simd_variant v);
/* Forces v (AUTO: back to the best available). NVFP4_EUNSUPPORTED with a
 * message when the CPU lacks it; the active variant is then unchanged. */
nvfp4_status nvfp4_simd_set(nvfp4_simd_variant v, nvfp4_error *err);
/* "scalar", "avx2", "avx512", "neon", "auto". */
const char *nvfp4_simd_name(nvfp4_simd_variant v);
bool nvfp4_simd_parse(const char *s, nvfp4_simd_variant *out);

NVFP4_END_DECLS
#endif /* NVFP4_SIMD_H */
