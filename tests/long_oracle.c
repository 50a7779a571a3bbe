/* long_oracle.c - `make check-long`: every one of the 2^32 fp32 bit patterns
 * through each scalar encoder, ours against NVIDIA's host conversion code
 * (tests/oracles/compare.h), and every code through each decoder. Prints the
 * elapsed time and the mismatch count per encoder; exits non-zero on any
 * mismatch. Without the CUDA toolkit it prints a skip line and passes. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "hardcases.h"
#include "nvfp4.h"

#if NVFP4_HAVE_CUDA_ORACLES
#include "oracles/compare.h"

/* Mismatches of one encoder over all 2^32 inputs; the smallest failing
 * pattern is kept for the report. */
static uint64_t sweep(const oracle_encoder_pair *p, uint32_t *first_bad)
{
    uint64_t bad = 0;
    uint32_t first = 0xFFFFFFFFu;
#pragma omp parallel for schedule(static) reduction(+ : bad) reduction(min : first)
    for (int64_t hi = 0; hi < 65536; hi++) {
        for (uint32_t lo = 0; lo < 65536u; lo++) {
            uint32_t u = ((uint32_t)hi << 16) | lo;
            float x = hc_f32(u);
            if (p->ours(x) != p->nvidia(x)) {
                bad++;
                if (u < first) first = u;
            }
        }
    }
    *first_bad = first;
    return bad;
}

/* Decoded values must agree bit for bit, except that any NaN matches any
 * NaN (payloads of decoded NaNs are not part of the contract). */
static int same_value(float a, float b)
{
    if (a != a && b != b) return 1;
    return hc_bits(a) == hc_bits(b);
}

static uint64_t decoders(void)
{
    uint64_t bad = 0;
    for (unsigned c = 0; c < 16u; c++) bad += !same_value(nvfp4_e2m1_to_f32((uint8_t)c), oracle_e2m1_to_f32((uint8_t)c));
    for (unsigned c = 0; c < 256u; c++) {
        bad += !same_value(nvfp4_e4m3_to_f32((uint8_t)c), oracle_e4m3_to_f32((uint8_t)c));
        bad += !same_value(nvfp4_ue8m0_to_f32((uint8_t)c), oracle_ue8m0_to_f32((uint8_t)c));
    }
    for (unsigned h = 0; h < 65536u; h++) {
        bad += !same_value(nvfp4_bf16_to_f32((uint16_t)h), oracle_bf16_to_f32((uint16_t)h));
        bad += !same_value(nvfp4_fp16_to_f32((uint16_t)h), oracle_fp16_to_f32((uint16_t)h));
    }
    return bad;
}

int main(void)
{
    uint64_t total = 0;
    double t_all = omp_get_wtime();
    printf("long_oracle: all 2^32 fp32 inputs per encoder vs NVIDIA host code, %d OpenMP threads\n",
           omp_get_max_threads());
    for (int e = 0; e < ORACLE_N_ENCODERS; e++) {
        double t0 = omp_get_wtime();
        uint32_t first;
        uint64_t bad = sweep(&oracle_encoders[e], &first);
        printf("  %-66s mismatches %" PRIu64 "  (%.1f s)", oracle_encoders[e].name, bad, omp_get_wtime() - t0);
        if (bad) printf("  first at 0x%08" PRIx32, first);
        printf("\n");
        fflush(stdout);
        total += bad;
    }
    uint64_t dbad = decoders();
    printf("  %-66s mismatches %" PRIu64 "\n", "decoders (all e2m1/e4m3/ue8m0/bf16/fp16 codes)", dbad);
    total += dbad;
    printf("long_oracle: %s, %" PRIu64 " mismatches, %.1f s in all\n", total ? "FAIL" : "PASS", total,
           omp_get_wtime() - t_all);
    return total ? EXIT_FAILURE : EXIT_SUCCESS;
}
#else
int main(void)
{
    printf("long_oracle: SKIP (built without the CUDA toolkit: no NVIDIA host conversion code to compare with)\n");
    return EXIT_SUCCESS;
}
#endif
