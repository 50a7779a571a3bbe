/* long_ue5m3.c - `make check-long`: the UE5M3 encoder (src/core/ue5m3.h),
 * both modes, against the independent table search of tests/ue5m3_ref.h
 * for every one of the 2^32 fp32 bit patterns. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/ue5m3.h"
#include "ue5m3_ref.h"

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
            for (int ml = 0; ml < 2; ml++) {
                if (nvfp4_core_ue5m3_encode(x, ml) != ue5m3_ref_encode(x, ml)) {
                    bad++;
                    if (u < first) first = u;
                }
            }
        }
    }
    printf("long_ue5m3: all 2^32 fp32 inputs x {satfinite, ml_dtypes}, encoder vs table search: %s, %" PRIu64
           " mismatches%s", bad ? "FAIL" : "PASS", bad, bad ? "" : "\n");
    if (bad) printf(", first at 0x%08" PRIx32 "\n", first);
    printf("  (%.1f s, %d OpenMP threads)\n", omp_get_wtime() - t0, omp_get_max_threads());
    return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
