/* formats.c - the public scalar codec API over the shared src/core/ code. */
#include "nvfp4/formats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/e2m1.h"
#include "core/e4m3.h"
#include "core/ue5m3.h"
#include "core/ue8m0.h"

uint8_t nvfp4_e2m1_from_f32(float x, nvfp4_rounding mode, uint8_t rbits)
{
    return nvfp4_core_e2m1_encode(x, (int)mode, rbits);
}

float nvfp4_e2m1_to_f32(uint8_t code) { return nvfp4_core_e2m1_decode(code); }

uint8_t nvfp4_e4m3_from_f32(float x, bool saturate) { return nvfp4_core_e4m3_encode(x, saturate); }

float nvfp4_e4m3_to_f32(uint8_t code) { return nvfp4_core_e4m3_decode(code); }

uint8_t nvfp4_ue8m0_from_f32(float x, nvfp4_ue8m0_mode mode)
{
    switch (mode) {
    case NVFP4_UE8M0_FLOOR: return nvfp4_core_ue8m0_cvt(x, 0);
    case NVFP4_UE8M0_RCEIL: return nvfp4_core_ue8m0_cvt(x, 1);
    case NVFP4_UE8M0_CEIL: return nvfp4_core_ue8m0_exact(x, 0);
    case NVFP4_UE8M0_EVEN: return nvfp4_core_ue8m0_exact(x, 1);
    case NVFP4_UE8M0_RN: return nvfp4_core_ue8m0_rn(x, 0);
    case NVFP4_UE8M0_RN_TORCH: return nvfp4_core_ue8m0_rn(x, 1);
    }
    return 0xFFu;
}

float nvfp4_ue8m0_to_f32(uint8_t code) { return nvfp4_core_ue8m0_decode(code); }

uint8_t nvfp4_ue5m3_from_f32(float x, nvfp4_ue5m3_mode mode) { return nvfp4_core_ue5m3_encode(x, (int)mode); }

float nvfp4_ue5m3_to_f32(uint8_t code) { return nvfp4_core_ue5m3_decode(code); }

uint16_t nvfp4_bf16_from_f32(float x) { return nvfp4_core_bf16_encode(x); }
float nvfp4_bf16_to_f32(uint16_t bits) { return nvfp4_core_bf16_decode(bits); }
uint16_t nvfp4_fp16_from_f32(float x) { return nvfp4_core_fp16_encode(x); }
float nvfp4_fp16_to_f32(uint16_t bits) { return nvfp4_core_fp16_decode(bits); }

static const char *const rounding_names[] = {"rn", "rz", "sr"};
static const char *const ue8m0_names[] = {"floor", "rceil", "ceil", "even", "rn", "rn-torch"};
#define UE8M0_MODES (sizeof ue8m0_names / sizeof ue8m0_names[0])

const char *nvfp4_rounding_name(nvfp4_rounding r)
{
    return (unsigned)r < 3u ? rounding_names[r] : "?";
}

bool nvfp4_rounding_parse(const char *s, nvfp4_rounding *out)
{
    for (unsigned i = 0; i < 3u; i++)
        if (strcmp(s, rounding_names[i]) == 0) {
            *out = (nvfp4_rounding)i;
            return true;
        }
    return false;
}

const char *nvfp4_ue8m0_mode_name(nvfp4_ue8m0_mode m)
{
    return (unsigned)m < UE8M0_MODES ? ue8m0_names[m] : "?";
}

bool nvfp4_ue8m0_mode_parse(const char *s, nvfp4_ue8m0_mode *out)
{
    for (unsigned i = 0; i < UE8M0_MODES; i++)
        if (strcmp(s, ue8m0_names[i]) == 0) {
            *out = (nvfp4_ue8m0_mode)i;
            return true;
        }
    return false;
}

/* ---- nvfp4_format_f32_shortest ------------------------------------------ */

/* The significant digits (no point, no trailing zeros) and the decimal
 * exponent of the first one, from a "%.Ne" string of a non-negative value. */
static void split_e_string(const char *tmp, char digits[24], int *exp10)
{
    size_t k = 0;
    const char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && k < 23) digits[k++] = *p;
    while (k > 1 && digits[k - 1] == '0') k--;
    digits[k] = '\0';
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
}

/* The shortest significand that reads back as x: %.{0..8}e gives 1 to 9
 * significant digits (9 always round-trip an fp32) and strtof, correctly
 * rounded in glibc, says which is the first that does. */
static void shortest_digits(float x, char digits[24], int *exp10)
{
    char tmp[40];
    for (int prec = 0; prec <= 8; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, (double)x);
        if (strtof(tmp, NULL) == x) break;
    }
    split_e_string(tmp, digits, exp10);
}

/* d1 d2 ... dk x 10^e written out without an exponent: "240", "0.0078125". */
static void render_positional(char *out, size_t n, bool negative, const char *digits, int e)
{
    char s[64];
    size_t j = 0, k = strlen(digits);
    if (negative) s[j++] = '-';
    if (e < 0) {
        s[j++] = '0';
        s[j++] = '.';
        for (int z = 0; z < -e - 1; z++) s[j++] = '0';
        for (size_t i = 0; i < k; i++) s[j++] = digits[i];
    } else {
        for (size_t i = 0; i <= (size_t)e; i++) s[j++] = i < k ? digits[i] : '0';
        if (k > (size_t)e + 1) {
            s[j++] = '.';
            for (size_t i = (size_t)e + 1; i < k; i++) s[j++] = digits[i];
        }
    }
    s[j] = '\0';
    snprintf(out, n, "%s", s);
}

/* The one rendering rule: positional when the decimal lies in [1e-5, 1e6)
 * (1e-5f, just below 10^-5, prints as 0.00001), else d.ddde+XX. */
static void render_decimal(char *out, size_t n, bool negative, const char *digits, int e)
{
    if (e >= -5 && e <= 5) render_positional(out, n, negative, digits, e);
    else
        snprintf(out, n, "%s%c%s%se%c%02d", negative ? "-" : "", digits[0], digits[1] ? "." : "", digits + 1,
                 e < 0 ? '-' : '+', e < 0 ? -e : e);
}

/* nan, inf, -inf, 0, -0: true if x was one of them (written to buf). */
static bool render_special(double x, char *buf, size_t n)
{
    bool negative = signbit(x) != 0;
    if (isnan(x)) snprintf(buf, n, "nan");
    else if (isinf(x)) snprintf(buf, n, negative ? "-inf" : "inf");
    else if (x == 0.0) snprintf(buf, n, negative ? "-0" : "0");
    else return false;
    return true;
}

char *nvfp4_format_f32_shortest(float x, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    if (render_special((double)x, buf, n)) return buf;
    char digits[24];
    int e;
    shortest_digits(fabsf(x), digits, &e);
    render_decimal(buf, n, signbit(x) != 0, digits, e);
    return buf;
}

char *nvfp4_format_f64_digits(double x, int significant, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    if (render_special(x, buf, n)) return buf;
    if (significant < 1) significant = 1;
    if (significant > 17) significant = 17;
    char tmp[40], digits[24];
    int e;
    snprintf(tmp, sizeof tmp, "%.*e", significant - 1, fabs(x));
    split_e_string(tmp, digits, &e);
    render_decimal(buf, n, signbit(x) != 0, digits, e);
    return buf;
}

/* ---- nvfp4_strbuf ---------------------------------------------------------- */
void nvfp4_strbuf_printf(nvfp4_strbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t want = b->len + (size_t)n + 1, cap = b->cap ? b->cap : 256;
        while (cap < want) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
}

char *nvfp4_strbuf_take(nvfp4_strbuf *b)
{
    char *s = b->failed ? NULL : b->data ? b->data : calloc(1, 1);
    if (b->failed) free(b->data);
    memset(b, 0, sizeof *b);
    return s;
}

void nvfp4_strbuf_free(nvfp4_strbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void nvfp4_free(void *p) { free(p); }
