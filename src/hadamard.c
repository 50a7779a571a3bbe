/*
 * hadamard.c - the random Hadamard transform on row-major tensors: each
 * aligned group of d consecutive elements of a row goes through the group
 * transform of src/core/hadamard.h (the arithmetic lives there only).
 * Rows are independent, so the OpenMP split cannot change any byte.
 */
#include "nvfp4/hadamard.h"

#include "core/hadamard.h"
#include "core/parallel.h"

void nvfp4_rht_config_init(nvfp4_rht_config *c)
{
    c->size = 16;
    c->signs = NVFP4_RHT_SIGNS_TE;
    c->sign_seed = 0;
    c->keep_fp32 = false;
}

nvfp4_status nvfp4_rht_sign_mask(const nvfp4_rht_config *c, uint32_t mask[4], nvfp4_error *err)
{
    if (!c) return nvfp4_error_set(err, NVFP4_EINVAL, "rht: no configuration given");
    if (!nvfp4_core_rht_size_ok(c->size))
        return nvfp4_error_set(err, NVFP4_EINVAL, "rht: size %u is not a power of two from 4 to 128", c->size);
    switch (c->signs) {
    case NVFP4_RHT_SIGNS_TE:
        if (c->size != 16)
            return nvfp4_error_set(err, NVFP4_EINVAL,
                                   "rht: TransformerEngine's fixed sign vector has 16 entries, size is %u "
                                   "(use seeded or no signs)",
                                   c->size);
        nvfp4_core_rht_mask_te(mask);
        return NVFP4_OK;
    case NVFP4_RHT_SIGNS_SEEDED: nvfp4_core_rht_mask_seeded(c->sign_seed, mask); return NVFP4_OK;
    case NVFP4_RHT_SIGNS_NONE: nvfp4_core_rht_mask_none(mask); return NVFP4_OK;
    }
    return nvfp4_error_set(err, NVFP4_EINVAL, "rht: unknown sign vector kind %d", (int)c->signs);
}

nvfp4_status nvfp4_rht_signs_fill(const nvfp4_rht_config *c, float *signs, nvfp4_error *err)
{
    uint32_t mask[4];
    nvfp4_status st = nvfp4_rht_sign_mask(c, mask, err);
    if (st != NVFP4_OK) return st;
    if (!signs) return nvfp4_error_set(err, NVFP4_EINVAL, "rht: no output buffer for the signs");
    for (unsigned i = 0; i < c->size; i++) signs[i] = nvfp4_core_rht_sign_neg(mask, i) ? -1.0f : 1.0f;
    return NVFP4_OK;
}

static nvfp4_status rht_apply(const nvfp4_rht_config *c, const float *x, size_t rows, size_t cols, float *out,
                              int forward, nvfp4_error *err)
{
    uint32_t mask[4];
    nvfp4_status st = nvfp4_rht_sign_mask(c, mask, err);
    if (st != NVFP4_OK) return st;
    size_t n;
    if (!nvfp4_mul_size(rows, cols, &n))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "rht: shape [%zu, %zu] overflows size_t", rows, cols);
    if (cols % c->size != 0)
        return nvfp4_error_set(err, NVFP4_ESHAPE, "rht: %zu columns are not a multiple of the transform size %u",
                               cols, c->size);
    if (n == 0) return NVFP4_OK;
    if (!x || !out) return nvfp4_error_set(err, NVFP4_EINVAL, "rht: null input or output");
    const unsigned d = c->size;
    const int bf16 = c->keep_fp32 ? 0 : 1;
    const size_t groups = n / d; /* rows are whole groups: groups never straddle rows */
    NVFP4_PAR_FOR_IF(groups >= 4096, "omp parallel for schedule(static)",
        for (size_t g = 0; g < groups; g++) {
            const float *src = x + g * d;
            float *dst = out + g * d;
            if (forward) nvfp4_core_rht_forward_group(src, dst, d, mask, bf16);
            else nvfp4_core_rht_inverse_group(src, dst, d, mask, bf16);
        });
    return NVFP4_OK;
}

nvfp4_status nvfp4_rht_forward(const nvfp4_rht_config *c, const float *x, size_t rows, size_t cols, float *out,
                               nvfp4_error *err)
{
    return rht_apply(c, x, rows, cols, out, 1, err);
}

nvfp4_status nvfp4_rht_inverse(const nvfp4_rht_config *c, const float *x, size_t rows, size_t cols, float *out,
                               nvfp4_error *err)
{
    return rht_apply(c, x, rows, cols, out, 0, err);
}
