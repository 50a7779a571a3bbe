/*
 * nvfp4/formats.h - scalar codecs: FP4 E2M1, FP8 E4M3, UE8M0, UE5M3, BF16,
 * FP16.
 *
 * Semantics (docs/semantics.md, "Scalar codecs") follow NVIDIA's host
 * conversion code in cuda_fp4.hpp / cuda_fp8.hpp / cuda_bf16.hpp /
 * cuda_fp16.hpp (CUDA 13.0). The arithmetic lives in src/core/ and is shared
 * with the CUDA path.
 */
#ifndef NVFP4_FORMATS_H
#define NVFP4_FORMATS_H

#include "nvfp4/common.h"

NVFP4_BEGIN_DECLS

typedef enum {
    NVFP4_RN = 0, /* round to nearest, ties to even */
    NVFP4_RZ = 1, /* round toward zero (saturating at +-6 like cuda_fp4.hpp) */
    NVFP4_SR = 2  /* stochastic: away from zero iff floor(256*frac) + rbits >= 256 */
} nvfp4_rounding;

/* UE8M0 conversion modes of a value to a power of two (see ue8m0 below). */
typedef enum {
    NVFP4_UE8M0_FLOOR = 0, /* floor(log2|x|): cvt.rz.satfinite.ue8m0 */
    NVFP4_UE8M0_RCEIL = 1, /* round up: cvt.rp.satfinite.ue8m0 (NVIDIA's rule) */
    NVFP4_UE8M0_CEIL = 2,  /* ceil(log2|x|) computed exactly in fp32 */
    NVFP4_UE8M0_EVEN = 3,  /* nearest power of two, ties (1.5*2^e) to the even code */
    NVFP4_UE8M0_RN = 4,    /* nearest, ties up: ml_dtypes' cast to float8_e8m0fnu */
    NVFP4_UE8M0_RN_TORCH = 5 /* nearest, ties up: torch's cast to float8_e8m0fnu */
} nvfp4_ue8m0_mode;

/* ---- FP4 E2M1 (cuda_fp4.hpp __nv_cvt_float_to_fp4, __NV_E2M1) ----------- */
/* Returns a code 0..15. rbits is used only for NVFP4_SR. Special values: the
 * sign is always kept, |x| > 6 and +-Inf give +-6, NaN gives +6 (0x7). */
uint8_t nvfp4_e2m1_from_f32(float x, nvfp4_rounding mode, uint8_t rbits);
float nvfp4_e2m1_to_f32(uint8_t code);

/* ---- FP8 E4M3 (cuda_fp8.hpp __nv_cvt_float_to_fp8, __NV_E4M3) ----------- */
/* RN. saturate=true: |x| > 464 and +-Inf give +-448; false: they give
 * 0x7F|sign (NaN). NaN gives 0x7F. */
uint8_t nvfp4_e4m3_from_f32(float x, bool saturate);
float nvfp4_e4m3_to_f32(uint8_t code);

/* ---- UE8M0 ------------------------------------------------------------- */
/* Power-of-two code for |x| (value 2^(code-127)); sign ignored; NaN -> 0xFF,
 * +-Inf and finite overflow -> 0xFE, 0 -> 0x00. FLOOR and RCEIL reproduce
 * cuda_fp8.hpp __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero /
 * cudaRoundPosInf); CEIL and EVEN are the exact-arithmetic variants used by
 * torchao's MX scale modes. RN and RN_TORCH round to nearest with ties up
 * and do not saturate (x >= 1.5*2^127 -> 0xFF): RN is ml_dtypes'
 * float8_e8m0fnu cast (0, negative values, Inf and NaN -> 0xFF; fp32
 * subnormals to the nearest of 2^-127 and 2^-126), RN_TORCH torch's
 * (sign ignored, 0 -> 0x00, Inf and NaN -> 0xFF, every subnormal above
 * 2^-127 -> 0x01); docs/semantics.md, "Scalar codecs". */
uint8_t nvfp4_ue8m0_from_f32(float x, nvfp4_ue8m0_mode mode);
float nvfp4_ue8m0_to_f32(uint8_t code);

/* ---- UE5M3 (prototype NVFP4 block-scale format; CUDA 13.4 __nv_fp8_ue5m3) */
/* Unsigned, bias 15, no infinity, 0xFF the only NaN, largest 0xFE = 114688,
 * subnormals k * 2^-17. Round to nearest even. SATFINITE (the
 * __nv_fp8_ue5m3(float) constructor TransformerEngine's block-scale cast
 * uses): x > 114688 and +Inf give 0xFE, negative values 0x00 (assumed, see
 * docs/semantics.md), NaN 0xFF. ML_DTYPES (ml_dtypes' float8_e5m3fnu cast):
 * x > 118784, +-Inf and negative nonzero values give 0xFF. */
typedef enum { NVFP4_UE5M3_SATFINITE = 0, NVFP4_UE5M3_ML_DTYPES = 1 } nvfp4_ue5m3_mode;
uint8_t nvfp4_ue5m3_from_f32(float x, nvfp4_ue5m3_mode mode);
float nvfp4_ue5m3_to_f32(uint8_t code);

/* ---- BF16 and FP16, round to nearest even (cuda_bf16/cuda_fp16 _rn) ---- */
uint16_t nvfp4_bf16_from_f32(float x);
float nvfp4_bf16_to_f32(uint16_t bits);
uint16_t nvfp4_fp16_from_f32(float x);
float nvfp4_fp16_to_f32(uint16_t bits);

/* ---- packing: element 2j is the low nibble of byte j ------------------- */
static inline uint8_t nvfp4_pack2(uint8_t even, uint8_t odd) { return (uint8_t)((even & 0xFu) | ((odd & 0xFu) << 4)); }
static inline uint8_t nvfp4_unpack(const uint8_t *packed, size_t i) { return (uint8_t)((packed[i >> 1] >> (4 * (i & 1))) & 0xFu); }

/* ---- printing an fp32 value as people write it ------------------------ */
/* Writes into buf (n bytes; 16 always suffice) the shortest decimal that
 * reads back (strtof) as exactly x: 240, 0.0078125, 448, -0, 0.1. Values
 * with 1e-5 <= |x| < 1e6 never use an exponent (0.00001525878906 is written
 * out); smaller and larger ones use the %g style with one digit before the
 * point (1.1754944e-38). NaN prints as nan, infinities as inf/-inf. Returns
 * buf; a buf too small gets a truncated, terminated string. */
char *nvfp4_format_f32_shortest(float x, char *buf, size_t n);
/* The same rendering for a computed double (an error, a probability): x
 * rounded to `significant` digits (1..17), trailing zeros dropped, no
 * exponent for 1e-5 <= |x| < 1e6: (0.1 + 0.2, 9) gives 0.3, (1.25e-5, 3)
 * gives 0.0000125. */
char *nvfp4_format_f64_digits(double x, int significant, char *buf, size_t n);

/* Parse/print helpers for names used by the CLI and file metadata. */
const char *nvfp4_rounding_name(nvfp4_rounding r);
bool nvfp4_rounding_parse(const char *s, nvfp4_rounding *out);
const char *nvfp4_ue8m0_mode_name(nvfp4_ue8m0_mode m);
bool nvfp4_ue8m0_mode_parse(const char *s, nvfp4_ue8m0_mode *out);

/* ---- reports as text (nvfp4 explain; nvfp4/verify.h's reports) ---------- */
/* A growable, NUL-terminated string the report functions append to. Start
 * from {0}; after an allocation failure `failed` is set and further appends
 * are ignored. */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} nvfp4_strbuf;

void nvfp4_strbuf_printf(nvfp4_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Hands the text over (malloc'd, "" when nothing was appended; free with
 * nvfp4_free) and empties b; NULL after an allocation failure. */
char *nvfp4_strbuf_take(nvfp4_strbuf *b);
void nvfp4_strbuf_free(nvfp4_strbuf *b);
/* free() of the library's allocator, for callers in other languages. */
void nvfp4_free(void *p);

/* The formats `nvfp4 explain` explains. */
typedef enum { NVFP4_EXPLAIN_E2M1 = 0, NVFP4_EXPLAIN_E4M3 = 1, NVFP4_EXPLAIN_UE8M0 = 2 } nvfp4_explain_format;
bool nvfp4_explain_format_parse(const char *s, nvfp4_explain_format *out); /* "e2m1", "e4m3", "ue8m0" */

/* Appends to out the text of `nvfp4 explain` for x: its fp32 fields, the
 * two neighbours in format f, the code chosen by the library's encoder and
 * the rule that chose it. label is the value as the user wrote it (printed
 * on the "input" line). rounding: e2m1 only (rn, rz or sr; e4m3 takes rn);
 * saturate: e4m3 only; mode: the ue8m0 mode marked as chosen. NVFP4_EINVAL
 * (with the CLI's message) for an option that does not apply to f. */
nvfp4_status nvfp4_explain(const char *label, float x, nvfp4_explain_format f, nvfp4_rounding rounding,
                           bool saturate, nvfp4_ue8m0_mode mode, nvfp4_strbuf *out, nvfp4_error *err);

NVFP4_END_DECLS
#endif /* NVFP4_FORMATS_H */
