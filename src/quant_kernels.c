/* quant_kernels.c - the scalar row kernels (the reference every fast path is
 * tested against) and the kernel selection hook. */
#include "quant_kernels.h"

#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "simd/simd_hook.h"

#include "core/philox.h"

static int force_scalar = 0;

void nvfp4_quant_kernels_force_scalar(int on) { force_scalar = on; }
int nvfp4_quant_kernels_scalar_forced(void) { return force_scalar; }

void *nvfp4_quant_alloc_output(size_t bytes)
{
    if (bytes == 0) bytes = 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge && bytes <= SIZE_MAX - huge) {
        size_t rounded = (bytes + huge - 1) / huge * huge; /* C11 aligned_alloc wants a multiple */
        void *p = aligned_alloc(huge, rounded);
        /* advice only: without transparent huge pages the buffer still works */
        if (p) (void)madvise(p, rounded, MADV_HUGEPAGE);
        if (p) return p;
    }
#endif
    return malloc(bytes);
}

static void scalar_row_scales(const nvfp4_qk_ctx *c, const float *x, uint8_t *scale)
{
    size_t nb = c->cols / c->block_len;
    int nanprop = c->core->amax_nan_propagates;
    for (size_t b = 0; b < nb; b++) {
        const float *blk = x + b * c->block_len;
        float amax = 0.0f;
        for (size_t i = 0; i < c->block_len; i++) amax = nvfp4_core_amax_step(amax, blk[i], nanprop);
        scale[b] = nvfp4_core_block_scale(c->core, &c->global, amax);
    }
}

/* The 16 random bytes of 16-element segment `seg` (0 or 1) of block `b`
 * (DESIGN.md 3.3): a 32-element block takes its second half from offset+1. */
static void sr_bytes(const nvfp4_qk_ctx *c, uint64_t block, unsigned seg, uint8_t bytes[16])
{
    nvfp4_core_sr_block_bytes(c->seed, c->offset + seg, block, bytes);
}

static void scalar_row_encode(const nvfp4_qk_ctx *c, const float *x, size_t row, const uint8_t *scale, uint8_t *out)
{
    size_t bl = c->block_len, nb = c->cols / bl;
    int e4m3 = c->core->elem == NVFP4_CORE_ELEM_E4M3;
    uint8_t rb[16] = {0};
    for (size_t b = 0; b < nb; b++) {
        nvfp4_core_block blk = nvfp4_core_block_prepare(c->core, &c->global, scale[b]);
        uint64_t sr_block = (uint64_t)row * nb + b;
        for (size_t i = 0; i < bl; i++) {
            size_t j = b * bl + i;
            if (c->mode == NVFP4_CORE_SR && (i & 15u) == 0) sr_bytes(c, sr_block, (unsigned)(i >> 4), rb);
            uint8_t q = nvfp4_core_encode_elem(c->core, &blk, x[j], c->mode, rb[i & 15u]);
            if (e4m3) out[j] = q;
            else if (j & 1u) out[j >> 1] = (uint8_t)(out[j >> 1] | (q << 4));
            else out[j >> 1] = q;
        }
    }
}

static const nvfp4_quant_kernels scalar_kernels = {"scalar", scalar_row_scales, scalar_row_encode};

const nvfp4_quant_kernels *nvfp4_quant_kernels_scalar(void) { return &scalar_kernels; }

const nvfp4_quant_kernels *nvfp4_quant_kernels_select(const nvfp4_qk_ctx *c)
{
    if (force_scalar) return &scalar_kernels;
    const nvfp4_quant_kernels *k = nvfp4_simd_quant_kernels(c);
    return k ? k : &scalar_kernels;
}
