/*
 * codec_digest.c - prints one 64-bit FNV-1a hash per scalar codec function
 * over a fixed input set, so that builds with different compilers and
 * optimization levels can be compared byte for byte (tests/determinism.sh).
 *
 * Inputs: every hard case of tests/hardcases.h plus a seeded sample of 2^24
 * fp32 bit patterns (splitmix64, seed 0x6e76667034). SR draws its byte for
 * input i from the input's own hash, so every (value, byte) pairing is fixed.
 * Also hashed: all decoders over all codes, the Philox stream and the SR
 * block bytes of DESIGN.md 3.3 for many (seed, offset, block) triples.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "hardcases.h"
#include "nvfp4.h"

typedef struct {
    uint64_t h;
} fnv;

static void fnv_init(fnv *f) { f->h = 0xcbf29ce484222325ull; }

static void fnv_bytes(fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ull;
    }
}

static void fnv_u32(fnv *f, uint32_t v) { fnv_bytes(f, &v, sizeof v); }

enum { SAMPLE = 1 << 24 };

enum {
    H_E2M1_RN, H_E2M1_RZ, H_E2M1_SR, H_E4M3_SAT, H_E4M3_NOSAT,
    H_UE8M0_FLOOR, H_UE8M0_RCEIL, H_UE8M0_CEIL, H_UE8M0_EVEN, H_BF16, H_FP16, H_N
};
static const char *const names[H_N] = {"e2m1_rn", "e2m1_rz", "e2m1_sr", "e4m3_sat", "e4m3_nosat",
                                       "ue8m0_floor", "ue8m0_rceil", "ue8m0_ceil", "ue8m0_even", "bf16", "fp16"};

static void encode_one(fnv h[H_N], uint32_t u)
{
    float x = hc_f32(u);
    uint8_t r = (uint8_t)((u * 0x9E3779B1u) >> 24);
    fnv_u32(&h[H_E2M1_RN], nvfp4_e2m1_from_f32(x, NVFP4_RN, 0));
    fnv_u32(&h[H_E2M1_RZ], nvfp4_e2m1_from_f32(x, NVFP4_RZ, 0));
    fnv_u32(&h[H_E2M1_SR], nvfp4_e2m1_from_f32(x, NVFP4_SR, r));
    fnv_u32(&h[H_E4M3_SAT], nvfp4_e4m3_from_f32(x, true));
    fnv_u32(&h[H_E4M3_NOSAT], nvfp4_e4m3_from_f32(x, false));
    fnv_u32(&h[H_UE8M0_FLOOR], nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_FLOOR));
    fnv_u32(&h[H_UE8M0_RCEIL], nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_RCEIL));
    fnv_u32(&h[H_UE8M0_CEIL], nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_CEIL));
    fnv_u32(&h[H_UE8M0_EVEN], nvfp4_ue8m0_from_f32(x, NVFP4_UE8M0_EVEN));
    fnv_u32(&h[H_BF16], nvfp4_bf16_from_f32(x));
    fnv_u32(&h[H_FP16], nvfp4_fp16_from_f32(x));
}

static void digest_encoders(void)
{
    fnv h[H_N];
    for (int k = 0; k < H_N; k++) fnv_init(&h[k]);
    size_t nh = hardcases_f32(NULL, 0);
    uint32_t *hard = malloc(nh * sizeof *hard);
    if (!hard) exit(2);
    hardcases_f32(hard, nh);
    for (size_t i = 0; i < nh; i++) encode_one(h, hard[i]);
    free(hard);
    uint64_t st = 0x6e76667034ull;
    for (size_t i = 0; i < SAMPLE; i++) encode_one(h, (uint32_t)hc_splitmix64(&st));
    for (int k = 0; k < H_N; k++) printf("%-14s %016" PRIx64 "\n", names[k], h[k].h);
}

static void digest_decoders(void)
{
    fnv h;
    fnv_init(&h);
    for (unsigned c = 0; c < 16; c++) fnv_u32(&h, hc_bits(nvfp4_e2m1_to_f32((uint8_t)c)));
    for (unsigned c = 0; c < 256; c++) fnv_u32(&h, hc_bits(nvfp4_e4m3_to_f32((uint8_t)c)));
    for (unsigned c = 0; c < 256; c++) fnv_u32(&h, hc_bits(nvfp4_ue8m0_to_f32((uint8_t)c)));
    for (unsigned c = 0; c < 65536; c++) fnv_u32(&h, hc_bits(nvfp4_bf16_to_f32((uint16_t)c)));
    for (unsigned c = 0; c < 65536; c++) fnv_u32(&h, hc_bits(nvfp4_fp16_to_f32((uint16_t)c)));
    printf("%-14s %016" PRIx64 "\n", "decoders", h.h);
}

static void digest_random_bits(void)
{
    fnv h;
    fnv_init(&h);
    for (uint64_t seed = 0; seed < 4; seed++)
        for (uint64_t offset = 0; offset < 4; offset++)
            for (uint64_t b = 0; b < 65536; b++) {
                uint8_t bytes[16];
                nvfp4_sr_block_bytes(seed * 0x9E3779B97F4A7C15ull, offset, b * 7919u, bytes);
                fnv_bytes(&h, bytes, sizeof bytes);
            }
    printf("%-14s %016" PRIx64 "\n", "sr_block_bytes", h.h);
    fnv_init(&h);
    nvfp4_philox_stream s;
    nvfp4_philox_init(&s, 0x123456789abcdef0ull, 5, 3);
    for (int i = 0; i < 100000; i++) fnv_u32(&h, nvfp4_philox_next(&s));
    printf("%-14s %016" PRIx64 "\n", "philox_stream", h.h);
}

int main(void)
{
    digest_encoders();
    digest_decoders();
    digest_random_bits();
    return 0;
}
