/* formats.c - the public scalar codec API over the shared src/core/ code. */
#include "nvfp4/formats.h"

#include <string.h>

#include "core/bf16.h"
#include "core/e2m1.h"
#include "core/e4m3.h"
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
    }
    return 0xFFu;
}

float nvfp4_ue8m0_to_f32(uint8_t code) { return nvfp4_core_ue8m0_decode(code); }

uint16_t nvfp4_bf16_from_f32(float x) { return nvfp4_core_bf16_encode(x); }
float nvfp4_bf16_to_f32(uint16_t bits) { return nvfp4_core_bf16_decode(bits); }
uint16_t nvfp4_fp16_from_f32(float x) { return nvfp4_core_fp16_encode(x); }
float nvfp4_fp16_to_f32(uint16_t bits) { return nvfp4_core_fp16_decode(bits); }

static const char *const rounding_names[] = {"rn", "rz", "sr"};
static const char *const ue8m0_names[] = {"floor", "rceil", "ceil", "even"};

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
    return (unsigned)m < 4u ? ue8m0_names[m] : "?";
}

bool nvfp4_ue8m0_mode_parse(const char *s, nvfp4_ue8m0_mode *out)
{
    for (unsigned i = 0; i < 4u; i++)
        if (strcmp(s, ue8m0_names[i]) == 0) {
            *out = (nvfp4_ue8m0_mode)i;
            return true;
        }
    return false;
}
