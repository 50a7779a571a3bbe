/* ue5m3_ref.h - an independent UE5M3 encoder for the tests (check_formats.c,
 * long_ue5m3.c): the nearest of the 255 finite values, found by a binary
 * search in binary64 over a table built from the definition (bias 15,
 * subnormals m * 2^-17), ties to the even code. Above the largest value
 * 0xFE the next grid point, 1.875 * 2^16, stands for "overflow", which
 * becomes 0xFE (satfinite) or 0xFF (ml_dtypes). It shares no code with
 * src/core/ue5m3.h. */
#ifndef NVFP4_TESTS_UE5M3_REF_H
#define NVFP4_TESTS_UE5M3_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* value of code c from the definition; c = 255 is the virtual 1.875 * 2^16 */
static inline double ue5m3_ref_value(unsigned c)
{
    unsigned e = c >> 3, m = c & 7u;
    return e == 0 ? ldexp((double)m, -17) : ldexp(1.0 + (double)m / 8.0, (int)e - 15);
}

static inline uint8_t ue5m3_ref_encode(float x, int ml_dtypes)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if (isnan(x)) return 0xFF;
    if (x == 0.0f) return 0x00;
    if (u >> 31) return ml_dtypes ? 0xFF : 0x00;
    if (isinf(x)) return ml_dtypes ? 0xFF : 0xFE;
    double v = (double)x;
    unsigned lo = 0, hi = 255; /* invariant: value(lo) <= v, or v above value(255) */
    if (v >= ue5m3_ref_value(255)) return ml_dtypes ? 0xFF : 0xFE;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (ue5m3_ref_value(mid) <= v) lo = mid;
        else hi = mid;
    }
    double dlo = v - ue5m3_ref_value(lo), dhi = ue5m3_ref_value(hi) - v;
    unsigned c = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1u) ? hi : lo);
    if (c == 255) return ml_dtypes ? 0xFF : 0xFE;
    return (uint8_t)c;
}

#endif /* NVFP4_TESTS_UE5M3_REF_H */
