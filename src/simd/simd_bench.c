/*
 * simd_bench.c - the kernel table of `nvfp4 bench` (nvfp4/bench.h): each
 * entry runs one whole-tensor driver of the fast path (simd_driver.c) on
 * the caller's buffers. Timing, the memcpy bound, page handling and the
 * public-API rows (nvfp4_quantize) belong to the caller; this file only
 * knows what each kernel is and what it reads and writes. Like the rest of
 * src/simd/ it knows no quantizer type.
 */
#include <stdlib.h>
#include <string.h>

#include "core/hadamard.h"
#include "nvfp4/bench.h"
#include "simd/simd_kernels.h"

struct nvfp4_bench {
    nvfp4_bench_buffers b;
    size_t n;
    float amax, rht_amax;
    nvfp4_simd_sr sr;
    nvfp4_simd_col_job col, rht, rhtb; /* rhtb: bf16 input, as TE requires for its RHT */
};

/* ---- the kernels -------------------------------------------------------- */

static void k_amax(nvfp4_bench *c) { c->amax = nvfp4_simd_amax(c->b.x, 0, c->n); }
static void k_amax_bf16(nvfp4_bench *c) { (void)nvfp4_simd_amax(c->b.x_bf16, 1, c->n); }

static void k_rn(nvfp4_bench *c)
{
    nvfp4_simd_te_rowwise(c->b.x, 0, c->b.rows, c->b.cols, c->amax, 0, NULL, c->b.data, c->b.scale);
}

static void k_rn_with_amax(nvfp4_bench *c)
{
    float a = nvfp4_simd_amax(c->b.x, 0, c->n);
    nvfp4_simd_te_rowwise(c->b.x, 0, c->b.rows, c->b.cols, a, 0, NULL, c->b.data, c->b.scale);
}

static void k_rn_bf16(nvfp4_bench *c)
{
    nvfp4_simd_te_rowwise(c->b.x_bf16, 1, c->b.rows, c->b.cols, c->amax, 0, NULL, c->b.data, c->b.scale);
}

static void k_sr(nvfp4_bench *c)
{
    nvfp4_simd_te_rowwise(c->b.x, 0, c->b.rows, c->b.cols, c->amax, 0, &c->sr, c->b.data, c->b.scale);
}

static void k_2d(nvfp4_bench *c)
{
    nvfp4_simd_te_rowwise(c->b.x, 0, c->b.rows, c->b.cols, c->amax, 1, NULL, c->b.data, c->b.scale);
}

static void k_mx_floor(nvfp4_bench *c)
{
    nvfp4_simd_mx_rowwise(c->b.x, c->b.rows, c->b.cols, NVFP4_SIMD_MX_FLOOR, NULL, c->b.data, c->b.scale);
}

static void k_mx_rceil(nvfp4_bench *c)
{
    nvfp4_simd_mx_rowwise(c->b.x, c->b.rows, c->b.cols, NVFP4_SIMD_MX_RCEIL, NULL, c->b.data, c->b.scale);
}

static void k_col(nvfp4_bench *c) { nvfp4_simd_te_columnwise(&c->col); }
static void k_rht_amax(nvfp4_bench *c) { c->rht_amax = nvfp4_simd_rht_amax(&c->rht); }
static void k_rht(nvfp4_bench *c) { nvfp4_simd_te_columnwise(&c->rht); }
static void k_rht_with_amax(nvfp4_bench *c)
{
    (void)nvfp4_simd_te_columnwise_rht(&c->rht, nvfp4_simd_rht_transforms_twice(&c->rht));
}
static void k_rht_bf16(nvfp4_bench *c) { nvfp4_simd_te_columnwise(&c->rhtb); }
static void k_rht_with_amax_bf16(nvfp4_bench *c)
{
    (void)nvfp4_simd_te_columnwise_rht(&c->rhtb, nvfp4_simd_rht_transforms_twice(&c->rhtb));
}

static void k_dequant(nvfp4_bench *c)
{
    nvfp4_simd_te_dequantize(c->b.data, c->b.scale, c->b.rows, c->b.cols, c->amax, c->b.f32_out);
}

static void k_swizzle(nvfp4_bench *c)
{
    nvfp4_simd_scale_swizzle(c->b.scale, c->b.rows, c->b.cols / 16, c->b.swizzled);
}

typedef struct {
    const char *name;
    double in_bytes, out_bytes; /* per element */
    void (*run)(nvfp4_bench *c);
} bench_kernel;

#define CODES (0.5 + 1.0 / 16.0)    /* packed E2M1 codes + one E4M3 scale per 16 elements */
#define MX_CODES (0.5 + 1.0 / 32.0) /* packed E2M1 codes + one UE8M0 scale per 32 elements */

static const bench_kernel kernels[] = {
    {"amax_f32", 4, 0, k_amax},
    {"amax_bf16", 2, 0, k_amax_bf16},
    {"quant_1x16_rn", 4, CODES, k_rn},
    {"quant_1x16_rn_bf16", 2, CODES, k_rn_bf16},
    {"quant_1x16_rn+amax", 4, CODES, k_rn_with_amax},
    {"quant_1x16_sr", 4, CODES, k_sr},
    {"quant_16x16_rn", 4, CODES, k_2d},
    {"quant_colwise_rn", 4, CODES, k_col},
    {"mxfp4_1x32_floor", 4, MX_CODES, k_mx_floor},
    {"mxfp4_1x32_rceil", 4, MX_CODES, k_mx_rceil},
    {"rht_amax", 4, 0, k_rht_amax},
    {"rht16_quant_colwise", 4, CODES, k_rht},
    {"rht16_quant+amax", 4, CODES, k_rht_with_amax},
    {"rht16_quant_colwise_bf16", 2, CODES, k_rht_bf16},
    {"rht16_quant+amax_bf16", 2, CODES, k_rht_with_amax_bf16},
    {"dequant_1x16", CODES, 4, k_dequant},
    {"scale_swizzle", 1.0 / 16.0, 1.0 / 16.0, k_swizzle},
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

size_t nvfp4_bench_kernel_count(void) { return NKERNELS; }
const char *nvfp4_bench_kernel_name(size_t k) { return k < NKERNELS ? kernels[k].name : NULL; }
double nvfp4_bench_kernel_in_bytes(size_t k) { return k < NKERNELS ? kernels[k].in_bytes : 0.0; }
double nvfp4_bench_kernel_out_bytes(size_t k) { return k < NKERNELS ? kernels[k].out_bytes : 0.0; }

void nvfp4_bench_run(nvfp4_bench *b, size_t k)
{
    if (b && k < NKERNELS) kernels[k].run(b);
}

/* ---- setup -------------------------------------------------------------- */

/* A columnwise job over the te chain, TE's RHT signs and bf16 RHT output
 * (its defaults); consts set once the amax that keys them is known. */
static void col_job(const nvfp4_bench *c, nvfp4_simd_col_job *j, int rht)
{
    memset(j, 0, sizeof *j);
    j->x = c->b.x;
    j->rows = c->b.rows;
    j->cols = c->b.cols;
    j->rht = rht;
    nvfp4_core_rht_mask_te(j->rht_mask);
    j->rht_round_bf16 = 1;
    j->data = c->b.col_data;
    j->scale = c->b.col_scale;
}

nvfp4_bench *nvfp4_bench_prepare(const nvfp4_bench_buffers *bufs, nvfp4_error *err)
{
    if (!bufs || bufs->rows == 0 || bufs->cols == 0 || bufs->rows % 16 || bufs->cols % 32) {
        nvfp4_error_set(err, NVFP4_ESHAPE, "nvfp4_bench_prepare: the tensor must be a nonzero multiple of 16 rows "
                                           "and 32 columns");
        return NULL;
    }
    nvfp4_bench *c = calloc(1, sizeof *c);
    if (!c) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_bench_prepare: out of memory");
        return NULL;
    }
    c->b = *bufs;
    c->n = bufs->rows * bufs->cols;
    c->sr.seed = 12345;
    c->sr.offset = 0;
    c->amax = nvfp4_simd_amax(c->b.x, 0, c->n);
    col_job(c, &c->col, 0);
    nvfp4_simd_te_consts_init(&c->col.k, c->amax);
    col_job(c, &c->rht, 1);
    c->rht_amax = nvfp4_simd_rht_amax(&c->rht);
    nvfp4_simd_te_consts_init(&c->rht.k, c->rht_amax);
    col_job(c, &c->rhtb, 1);
    c->rhtb.x = c->b.x_bf16;
    c->rhtb.bf16 = 1;
    nvfp4_simd_te_consts_init(&c->rhtb.k, nvfp4_simd_rht_amax(&c->rhtb));
    k_rn(c); /* codes for dequantize and swizzle */
    return c;
}

void nvfp4_bench_free(nvfp4_bench *b) { free(b); }
