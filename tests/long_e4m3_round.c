/* long_e4m3_round.c - `make check-long`: nvfp4_core_e4m3_round_sat, the
 * float-domain form of the E4M3 satfinite round trip that the lab's FP8 fake
 * quantizer vectorizes, against decode(encode(x, 1)) for every one of the
 * 2^32 fp32 bit patterns, bit for bit (NaN included). About 17 s of CPU. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/e4m3.h"

int main(void)
{
    uint64_t bad = 0;
    uint32_t first = 0xFFFFFFFFu;
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static) reduction(+ : bad) reduction(min : first)
    for (int64_t hi = 0; hi < 65536; hi++) {
        for (uint32_t lo = 0; lo < 65536u; lo++) {
            uint32_t u = ((uint32_t)hi << 16) | lo;
            float x = nvfp4_core_f32_from_bits(u);
            uint32_t want = nvfp4_core_f32_bits(nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1)));
            if (nvfp4_core_f32_bits(nvfp4_core_e4m3_round_sat(x)) != want) {
                bad++;
                if (u < first) first = u;
            }
        }
    }
    printf("long_e4m3_round: all 2^32 fp32 inputs, round_sat vs decode(encode(x, 1)): %s, %" PRIu64
           " mismatches%s", bad ? "FAIL" : "PASS", bad, bad ? "" : "\n");
    if (bad) printf(", first at 0x%08" PRIx32 "\n", first);
    printf("  (%.1f s, %d OpenMP threads)\n", omp_get_wtime() - t0, omp_get_max_threads());
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
