/*
 * splitmix.h - SplitMix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; the constants of Vigna's
 * splitmix64.c): the one non-cryptographic stream every part of the project
 * draws its test data, golden-suite inputs, witnesses and bootstrap indices
 * from. Not the stochastic-rounding generator (that is Philox, philox.h).
 * Shared by the C library, the tools, the tests and the CUDA host code.
 */
#ifndef NVFP4_CORE_SPLITMIX_H
#define NVFP4_CORE_SPLITMIX_H

#include "nvfp4_core.h"

/* Advances *state by the golden-ratio increment and returns the mixed value. */
NVFP4_HD static inline uint64_t nvfp4_core_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
