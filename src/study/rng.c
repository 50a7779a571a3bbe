/*
 * rng.c - the lab's keyed random numbers: uniform and normal draws that are
 * pure functions of (seed, stream, index) over Philox-4x32-10 (Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011), so that any draw
 * can be made on any thread. It knows nothing of what the streams are for
 * (rng.h names them).
 */
#include <math.h>

#include "nvfp4/philox.h"
#include "study/rng.h"

/* The four 32-bit words of counter (index, stream) under key seed. */
static void philox_words(uint64_t seed, uint64_t stream, uint64_t index, uint32_t o[4])
{
    uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)stream, (uint32_t)(stream >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    nvfp4_philox4x32_10(ctr, key, o);
}

double st_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t o[4];
    philox_words(seed, stream, index, o);
    return ((double)(o[0] >> 5) * 67108864.0 + (double)(o[1] >> 6) + 0.5) / 9007199254740992.0;
}

double st_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t o[4];
    philox_words(seed, stream, index, o);
    double u1 = ((double)o[0] + 0.5) / 4294967296.0, u2 = ((double)o[1] + 0.5) / 4294967296.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
