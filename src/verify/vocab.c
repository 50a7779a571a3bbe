/*
 * vocab.c - the verifier's words: component, reason and cause names, the
 * one-sentence reasons, the chain step each cause concerns and the two
 * statuses (nvfp4/verify.h). The comparison (verify.c) and the SR test
 * (sr.c) both name causes with them; they depend on no other file here.
 */
#include "nvfp4/verify.h"

#include <string.h>

static const char *const comp_names[NVFP4_VC_COUNT] = {"data", "scale", "scale_swizzled", "amax", "dequant"};

const char *nvfp4_vcomponent_name(nvfp4_vcomponent c)
{
    return (unsigned)c < NVFP4_VC_COUNT ? comp_names[c] : "?";
}

bool nvfp4_vcomponent_parse(const char *s, nvfp4_vcomponent *out)
{
    for (unsigned i = 0; i < NVFP4_VC_COUNT; i++)
        if (s && strcmp(s, comp_names[i]) == 0) {
            *out = (nvfp4_vcomponent)i;
            return true;
        }
    return false;
}

static const char *const reason_names[NVFP4_VR_COUNT] = {
    "rounding", "tie-rule", "scale-byte", "sign-of-zero", "nan-policy", "saturation",
    "scale-underflow", "near-boundary", "padding", "value", "follows", "size", "sr-bits"};

static const char *const reason_texts[NVFP4_VR_COUNT] = {
    "the code differs and the scaled value is not at or near a rounding boundary",
    "the scaled value is an exact E2M1 midpoint: ties go to the even code",
    "the block's scale byte differs; the element code follows from it",
    "+0 versus -0: the sign of a zero result is kept (-0 and negative underflow give 0x8)",
    "the input is NaN: the E2M1 code of NaN is 0x7 (+6)",
    "|scaled value| > 6 or infinite: the code saturates to +-6",
    "the block scale underflows E4M3 to 0: te codes then saturate to +-6 while the dequantized value is 0",
    "the scaled value lies within 2 ulp of a rounding boundary: the encode factor differs in its last bits",
    "a padding byte of the swizzled scale layout (te writes zeros)",
    "the value differs while the codes and scales it derives from agree",
    "follows from a differing code or scale byte of the same element",
    "the component has the wrong number of bytes and was not compared element by element",
    "SR golden: the code is the other stochastic-rounding neighbour of the scaled value (different random bits)"};

const char *nvfp4_vreason_name(nvfp4_vreason r) { return (unsigned)r < NVFP4_VR_COUNT ? reason_names[r] : "?"; }
const char *nvfp4_vreason_text(nvfp4_vreason r) { return (unsigned)r < NVFP4_VR_COUNT ? reason_texts[r] : "?"; }

static const char *const cause_names[NVFP4_CAUSE_COUNT] = {
    "swapped-nibbles", "transposed-data", "linear-for-swizzled", "swizzled-for-linear", "padding-bytes",
    "scale-off-by-one", "ties-away", "negative-zero", "nan-policy", "underflow-zeroed", "block-scale-formula",
    "encode-factor", "different-recipe", "sr-byte-order", "biased-sr", "sr-dependent", "known-bug", "scale-permuted",
    "scale-layout", "global-scale"};

const char *nvfp4_cause_name(nvfp4_cause c) { return (unsigned)c < NVFP4_CAUSE_COUNT ? cause_names[c] : "?"; }

const char *nvfp4_cause_status_name(nvfp4_cause_status s) { return s == NVFP4_CAUSE_PROVEN ? "proven" : "consistent"; }

const char *nvfp4_cause_step(nvfp4_cause c)
{
    switch (c) {
    case NVFP4_CAUSE_SWAPPED_NIBBLES:
    case NVFP4_CAUSE_TRANSPOSED_DATA:
    case NVFP4_CAUSE_LINEAR_FOR_SWIZZLED:
    case NVFP4_CAUSE_SWIZZLED_FOR_LINEAR:
    case NVFP4_CAUSE_SCALE_PERMUTED:
    case NVFP4_CAUSE_SCALE_LAYOUT:
    case NVFP4_CAUSE_PADDING_BYTES: return "layout";
    case NVFP4_CAUSE_SCALE_OFF_BY_ONE:
    case NVFP4_CAUSE_BLOCK_SCALE_FORMULA: return "block-scale";
    case NVFP4_CAUSE_ENCODE_FACTOR: return "encode-factor";
    case NVFP4_CAUSE_GLOBAL_SCALE: return "global-scale";
    case NVFP4_CAUSE_TIES_AWAY:
    case NVFP4_CAUSE_SR_BYTE_ORDER:
    case NVFP4_CAUSE_BIASED_SR:
    case NVFP4_CAUSE_SR_DEPENDENT: return "element-rounding";
    case NVFP4_CAUSE_NEGATIVE_ZERO:
    case NVFP4_CAUSE_NAN_POLICY:
    case NVFP4_CAUSE_UNDERFLOW_ZEROED: return "special-values";
    default: return "recipe";
    }
}
