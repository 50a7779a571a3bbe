/*
 * lowprec.c - S0's scalar arithmetic in fp16 / bf16 / E4M3 / E5M2 with RN or
 * stochastic rounding (the roundings themselves live in src/core/).
 */
#include <math.h>

#include "nvfp4/study.h"
#include "study/rng.h"

#include "core/bf16.h"
#include "core/e4m3.h"
#include "core/e5m2.h"
#include "core/sr_float.h"

const char *nvfp4_lp_name(nvfp4_lp_format f)
{
    static const char *const n[] = {"fp16", "bf16", "e4m3", "e5m2"};
    return (unsigned)f < 4 ? n[f] : "?";
}

/* p (significand bits), emin, largest finite, saturating overflow */
static void lp_params(nvfp4_lp_format f, int *p, int *emin, float *maxv, int *sat)
{
    switch (f) {
    case NVFP4_LP_FP16: *p = 11; *emin = -14; *maxv = 65504.0f; *sat = 0; break;
    case NVFP4_LP_BF16: *p = 8; *emin = -126; *maxv = 3.3895313892515355e38f; *sat = 0; break;
    case NVFP4_LP_E4M3: *p = 4; *emin = -6; *maxv = 448.0f; *sat = 1; break;
    default: *p = 3; *emin = -14; *maxv = 57344.0f; *sat = 1; break;
    }
}

float nvfp4_lp_round(nvfp4_lp_format f, float x, bool sr, uint32_t r)
{
    if (sr) {
        int p, emin, sat;
        float maxv;
        lp_params(f, &p, &emin, &maxv, &sat);
        return nvfp4_core_sr_pbits(x, p, emin, maxv, sat, r);
    }
    switch (f) {
    case NVFP4_LP_FP16: return nvfp4_core_round_fp16(x);
    case NVFP4_LP_BF16: return nvfp4_core_round_bf16(x);
    case NVFP4_LP_E4M3: return nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1));
    default: return nvfp4_core_e5m2_decode(nvfp4_core_e5m2_encode(x, 1));
    }
}

static uint32_t lp_bits(uint64_t seed, uint64_t i)
{
    return (uint32_t)(st_uniform(seed, 0x5330, i) * 4294967296.0);
}

float nvfp4_lp_harmonic(nvfp4_lp_format f, bool sr, uint64_t seed, size_t terms, size_t *frozen_at)
{
    float s = 0.0f;
    if (frozen_at) *frozen_at = 0;
    for (size_t n = 1; n <= terms; n++) {
        float t = nvfp4_lp_round(f, 1.0f / (float)n, sr, lp_bits(seed, 2 * n));
        float ns = nvfp4_lp_round(f, s + t, sr, lp_bits(seed, 2 * n + 1));
        if (frozen_at && !*frozen_at && ns == s) *frozen_at = n;
        s = ns;
    }
    return s;
}

float nvfp4_lp_repeat_add(nvfp4_lp_format f, bool sr, uint64_t seed, float x0, float delta, size_t n)
{
    float d = nvfp4_lp_round(f, delta, false, 0);
    float s = nvfp4_lp_round(f, x0, false, 0);
    for (size_t i = 0; i < n; i++) s = nvfp4_lp_round(f, s + d, sr, lp_bits(seed, i));
    return s;
}
