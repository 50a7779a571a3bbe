/*
 * nvfp4_cuda.cu - the CUDA path (include/nvfp4/cuda.h): memory, launches,
 * and the orchestration of quantize / dequantize / amax / swizzle / GEMM /
 * compare on device pointers. The work items are in items.cuh; the
 * per-block math in src/core/.
 *
 * Two backends run the same items: the GPU (a grid-stride kernel per item
 * type) and, for machines without a GPU, host emulation (a plain loop).
 */
#include <cuda_runtime.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/cuda.h"
#include "nvfp4/gemm.h"
#include "nvfp4/hadamard.h"
#include "cuda/items.cuh"
#include "cuda/check_explain.h"
#include "cuda/internal.h"
extern "C" { /* a C header without its own linkage block */
#include "recipes/recipe.h"
}

static bool g_sync = true; /* launches wait for the kernel (the bench turns it off) */

void nvfp4_cu_set_sync(bool on) { g_sync = on; }

/* ---- launching items ------------------------------------------------------------ */
template <class Item> __global__ void __launch_bounds__(256, 4) run_items(Item it, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) it(i);
}

/* Items that end in a warp reduction need every lane of a warp: exactly one
 * item per thread, n a multiple of 32. */
template <class Item> __global__ void run_items_exact(Item it, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) it(i);
}

#define NVFP4_CU_THREADS 256

template <class Item> static nvfp4_status launch(const Item &it, nvfp4_error *err, const char *what)
{
    size_t n = it.count();
    if (n == 0) return NVFP4_OK;
    if (nvfp4_cuda_emulation()) {
        for (size_t i = 0; i < n; i++) it(i);
        return NVFP4_OK;
    }
    size_t blocks = (n + NVFP4_CU_THREADS - 1) / NVFP4_CU_THREADS;
    if (blocks > 65535u * 16u) blocks = 65535u * 16u; /* grid-stride covers the rest */
    run_items<Item><<<(unsigned)blocks, NVFP4_CU_THREADS>>>(it, n);
    CU_TRY(cudaGetLastError(), what);
    if (g_sync) CU_TRY(cudaDeviceSynchronize(), what);
    return NVFP4_OK;
}

template <class Item> static nvfp4_status launch_exact(const Item &it, nvfp4_error *err, const char *what)
{
    size_t n = it.count();
    if (n == 0) return NVFP4_OK;
    if (nvfp4_cuda_emulation()) {
        for (size_t i = 0; i < n; i++) it(i);
        return NVFP4_OK;
    }
    size_t blocks = (n + NVFP4_CU_THREADS - 1) / NVFP4_CU_THREADS;
    run_items_exact<Item><<<(unsigned)blocks, NVFP4_CU_THREADS>>>(it, n);
    CU_TRY(cudaGetLastError(), what);
    if (g_sync) CU_TRY(cudaDeviceSynchronize(), what);
    return NVFP4_OK;
}

/* The quantize kernel for the block shape, RHT and recipe: the generic
 * kernel runs any descriptor and rounding; a descriptor equal to the te chain
 * takes a kernel compiled for that constant chain (nvfp4_cu_specialize: same
 * rules, switches folded), without the RHT also for a constant rounding mode:
 * thirteen instantiations in all. */
template <int BW, bool TILE, bool RHT, bool TE, int MODE>
static nvfp4_status launch_quant_t(const nvfp4_cu_qparams &p, nvfp4_error *err)
{
    nvfp4_cu_quant_item<BW, TILE, RHT, TE, MODE> it;
    it.p = p;
    return launch(it, err, "quantize kernel");
}

static const nvfp4_core_recipe te_chain = NVFP4_CORE_CHAIN_TE;

template <bool TILE> static nvfp4_status launch_quant_te_mode(const nvfp4_cu_qparams &p, nvfp4_error *err)
{
    if (p.mode == NVFP4_CORE_SR) return launch_quant_t<16, TILE, false, true, NVFP4_CORE_SR>(p, err);
    if (p.mode == NVFP4_CORE_RZ) return launch_quant_t<16, TILE, false, true, NVFP4_CORE_RZ>(p, err);
    return launch_quant_t<16, TILE, false, true, NVFP4_CORE_RN>(p, err);
}

template <bool TE> static nvfp4_status launch_quant_16(const nvfp4_cu_qparams &p, nvfp4_error *err)
{
    if (p.rht) {
        if (p.tile == 16) return launch_quant_t<16, true, true, TE, -1>(p, err);
        return launch_quant_t<16, false, true, TE, -1>(p, err);
    }
    if (TE) return p.tile == 16 ? launch_quant_te_mode<true>(p, err) : launch_quant_te_mode<false>(p, err);
    if (p.tile == 16) return launch_quant_t<16, true, false, false, -1>(p, err);
    return launch_quant_t<16, false, false, false, -1>(p, err);
}

static nvfp4_status launch_quant(const nvfp4_cu_qparams &p, nvfp4_error *err)
{
    if (p.rht && p.bw != 16) return nvfp4_error_set(err, NVFP4_EINVAL, "RHT needs 1x16 blocks or 16x16 tiles");
    if (p.bw == 32) return launch_quant_t<32, false, false, false, -1>(p, err);
    if (nvfp4_core_recipe_equal(&p.r, &te_chain)) return launch_quant_16<true>(p, err);
    return launch_quant_16<false>(p, err);
}

/* ---- amax ------------------------------------------------------------------------- */
/* Threads of the amax pass: enough to fill an H200 several times over; the
 * result does not depend on it (max is order-free). */
#define NVFP4_CU_AMAX_THREADS (132u * 2048u)

static nvfp4_status amax_bits(const void *x, bool bf16, size_t n, int nanprop, float *amax, nvfp4_error *err)
{
    uint32_t *d = NULL, h = 0;
    nvfp4_status st = nvfp4_cuda_alloc((void **)&d, sizeof *d, err);
    if (st) return st;
    nvfp4_cu_amax_item it;
    it.x = x;
    it.bf16 = bf16;
    it.nanprop = nanprop;
    it.n = n;
    it.T = NVFP4_CU_AMAX_THREADS;
    it.vec = (uintptr_t)x % 16 == 0;
    it.out = d;
    if (!(st = nvfp4_cu_memset0(d, sizeof *d, err)) && !(st = launch_exact(it, err, "amax kernel")))
        st = nvfp4_cuda_download(&h, d, sizeof h, err);
    nvfp4_cuda_free(d);
    if (!st) *amax = nvfp4_core_f32_from_bits(h);
    return st;
}

extern "C" nvfp4_status nvfp4_cuda_amax(const void *x, nvfp4_dtype dtype, size_t n, float *amax, nvfp4_error *err)
{
    if (!x || !amax) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_amax: NULL argument");
    return amax_bits(x, dtype == NVFP4_DTYPE_BF16, n, 0, amax, err);
}

/* ---- swizzle ------------------------------------------------------------------------ */
extern "C" nvfp4_status nvfp4_cuda_scale_swizzle(const uint8_t *linear, size_t rows, size_t cols, uint8_t *swz,
                                                 nvfp4_error *err)
{
    nvfp4_cu_swizzle_item it;
    it.lin = linear;
    it.rows = rows;
    it.cols = cols;
    if (!nvfp4_core_swizzle_padded_shape(rows, cols, &it.prows, &it.pcols))
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_scale_swizzle: %zu x %zu scales overflow", rows, cols);
    it.swz = swz;
    return launch(it, err, "swizzle kernel");
}

/* ---- quantize ---------------------------------------------------------------------- */

static void qtensor_free(nvfp4_cuda_qtensor *t)
{
    nvfp4_cuda_free(t->data);
    nvfp4_cuda_free(t->scale);
    nvfp4_cuda_free(t->scale_swizzled);
    nvfp4_cuda_free(t->row_amax);
    t->data = t->scale = t->scale_swizzled = NULL;
    t->row_amax = NULL;
}

extern "C" void nvfp4_cuda_quantized_free(nvfp4_cuda_quantized *q)
{
    if (!q) return;
    qtensor_free(&q->row);
    qtensor_free(&q->col);
    q->has_row = q->has_col = false;
}

/* Elements per scale along a stored row, from the tensor's own layout. */
static size_t block_len_of(const nvfp4_cuda_qtensor *t) { return t->pcols / t->scale_cols; }

/* The plan of the CPU library (nvfp4_quant_plan_init: options, shapes,
 * counters, RHT mask decided in one place), recorded in out. */
static nvfp4_status make_plan(const nvfp4_quant_opts *opts, nvfp4_dtype dtype, size_t rows, size_t cols,
                              nvfp4_cuda_quantized *out, nvfp4_quant_plan *qp, nvfp4_error *err)
{
    nvfp4_status st = nvfp4_quant_plan_init(qp, opts, dtype, rows, cols, err);
    if (st) return st;
    if (qp->opts.global_scale_inverted) /* the kernels derive S_enc themselves */
        return nvfp4_error_set(err, NVFP4_EINVAL, "global_scale_inverted: the CPU quantizer only (not the CUDA path)");
    snprintf(out->recipe, sizeof out->recipe, "%s", qp->opts.recipe);
    out->opts = qp->opts;
    out->opts.recipe = out->recipe;
    return NVFP4_OK;
}

/* Kernel parameters and tensor shape of one orientation of the plan. */
static void params_from_plan(const nvfp4_quant_plan *qp, bool colwise, nvfp4_cu_qparams *p, nvfp4_cuda_qtensor *t)
{
    const nvfp4_quant_layout *l = colwise ? &qp->col : &qp->row;
    const nvfp4_quant_opts *o = &qp->opts;
    memset(p, 0, sizeof *p);
    p->rows = qp->rows;
    p->cols = qp->cols;
    p->colwise = colwise;
    p->srows = l->rows;
    p->scols = l->cols;
    p->psrows = l->prows;
    p->pscols = l->pcols;
    p->bw = (int)l->block_len;
    p->tile = l->tile16 ? 16 : 1;
    p->rht = colwise && o->rht;
    p->rht_bf16 = !o->rht_fp32;
    if (p->rht) memcpy(p->rht_mask, qp->rht_mask, sizeof p->rht_mask);
    p->mode = o->rounding == NVFP4_SR ? NVFP4_CORE_SR : (o->rounding == NVFP4_RZ ? NVFP4_CORE_RZ : NVFP4_CORE_RN);
    p->seed = o->seed;
    p->offset = l->sr_offset;
    p->r = qp->recipe->core;
    p->scale_cols = l->scale_cols;
    memset(t, 0, sizeof *t);
    t->rows = l->rows;
    t->cols = l->cols;
    t->prows = l->prows;
    t->pcols = l->pcols;
    t->data_bytes = l->data_bytes;
    t->scale_rows = l->scale_rows;
    t->scale_cols = l->scale_cols;
    t->scale_swizzled_bytes = nvfp4_swizzled_size(t->scale_rows, t->scale_cols);
    t->rht = p->rht;
}

/* Row-scaled recipes: t->row_amax (device, one per stored row) from its own
 * kernel, read by the quantize items through p->row_amax. Other recipes:
 * nothing. */
static nvfp4_status row_amaxes(nvfp4_cu_qparams *p, nvfp4_cuda_qtensor *t, nvfp4_error *err)
{
    if (!nvfp4_core_recipe_row_scaled(&p->r)) return NVFP4_OK;
    nvfp4_status st = nvfp4_cuda_alloc((void **)&t->row_amax, (t->prows ? t->prows : 1) * sizeof(float), err);
    if (st) return st;
    p->row_amax = t->row_amax;
    if (p->rht) {
        nvfp4_cu_row_amax_item<true> it;
        it.p = *p;
        it.out = t->row_amax;
        return launch(it, err, "row amax kernel");
    }
    nvfp4_cu_row_amax_item<false> it;
    it.p = *p;
    it.out = t->row_amax;
    return launch(it, err, "row amax kernel");
}

static nvfp4_status quantize_orientation(nvfp4_cu_qparams *p, nvfp4_cuda_qtensor *t, float amax, bool has_global,
                                         nvfp4_error *err)
{
    nvfp4_status st;
    p->g = nvfp4_core_global_from_amax(&p->r, has_global ? amax : 0.0f);
    t->amax = has_global ? amax : 0.0f;
    if ((st = row_amaxes(p, t, err))) return st;
    if ((st = nvfp4_cuda_alloc((void **)&t->data, t->data_bytes, err))) return st;
    if ((st = nvfp4_cuda_alloc((void **)&t->scale, t->scale_rows * t->scale_cols, err))) return st;
    if ((st = nvfp4_cuda_alloc((void **)&t->scale_swizzled, t->scale_swizzled_bytes, err))) return st;
    p->data = t->data;
    p->scale = t->scale;
    if ((st = launch_quant(*p, err))) return st;
    return nvfp4_cuda_scale_swizzle(t->scale, t->scale_rows, t->scale_cols, t->scale_swizzled, err);
}

/* Global amax of the values an orientation quantizes: the input's, or, after
 * the RHT, the transformed values'. */
static nvfp4_status orientation_amax(const nvfp4_cu_qparams *p, float *amax, nvfp4_error *err)
{
    if (!p->rht) return amax_bits(p->x, p->bf16 != 0, p->rows * p->cols, p->r.amax_nan_propagates, amax, err);
    uint32_t *d = NULL, h = 0;
    nvfp4_status st = nvfp4_cuda_alloc((void **)&d, sizeof *d, err);
    if (st) return st;
    nvfp4_cu_rht_amax_item it;
    it.p = *p;
    it.out = d;
    it.padded_count = nvfp4_core_roundup(p->psrows * (p->pscols / 16), 32);
    if (!(st = nvfp4_cu_memset0(d, sizeof *d, err)) && !(st = launch_exact(it, err, "RHT amax kernel")))
        st = nvfp4_cuda_download(&h, d, sizeof h, err);
    nvfp4_cuda_free(d);
    if (!st) *amax = nvfp4_core_f32_from_bits(h);
    return st;
}

static bool native_requested(void)
{
    const char *e = getenv("NVFP4_CUDA_NATIVE_CVT");
    return e && strcmp(e, "1") == 0;
}

extern "C" nvfp4_status nvfp4_cuda_quantize(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                            const nvfp4_quant_opts *opts, nvfp4_cuda_quantized *out, nvfp4_error *err)
{
    if (!x || !out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_quantize: NULL argument");
    memset(out, 0, sizeof *out);
    nvfp4_quant_plan qp;
    nvfp4_status st = make_plan(opts, dtype, rows, cols, out, &qp, err);
    if (st) return st;
    if ((st = nvfp4_cu_need_device(err))) return st;
    bool has_global = qp.recipe->info.has_global_amax;
    nvfp4_cu_qparams pr, pc;
    if (qp.has_row) params_from_plan(&qp, false, &pr, &out->row);
    if (qp.has_col) params_from_plan(&qp, true, &pc, &out->col);
    bool vec = ((uintptr_t)x % 16 == 0) && (dtype == NVFP4_DTYPE_BF16 ? cols % 8 == 0 : cols % 4 == 0);
    float amax_x = 0.0f;
    bool have_amax_x = false;
    for (int o = 0; o < 2; o++) {
        bool col = o == 1;
        if (col ? !out->opts.columnwise : !out->opts.rowwise) continue;
        nvfp4_cu_qparams *p = col ? &pc : &pr;
        p->x = x;
        p->bf16 = dtype == NVFP4_DTYPE_BF16;
        p->vec = vec;
        p->native = native_requested();
        float amax = 0.0f;
        if (has_global) {
            if (p->rht) {
                st = orientation_amax(p, &amax, err);
            } else if (have_amax_x) {
                amax = amax_x; /* TE copies the rowwise amax when there is no RHT */
            } else {
                st = orientation_amax(p, &amax, err);
                amax_x = amax;
                have_amax_x = true;
            }
            if (st) break;
        }
        nvfp4_cuda_qtensor *t = col ? &out->col : &out->row;
        if ((st = quantize_orientation(p, t, amax, has_global, err))) break;
        if (col) out->has_col = true;
        else out->has_row = true;
    }
    if (st) nvfp4_cuda_quantized_free(out);
    return st;
}

/* ---- dequantize ---------------------------------------------------------------- */
extern "C" nvfp4_status nvfp4_cuda_dequantize(const nvfp4_cuda_quantized *q, bool columnwise, float *out, nvfp4_error *err)
{
    if (!q || !out) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_dequantize: NULL argument");
    if (columnwise ? !q->has_col : !q->has_row)
        return nvfp4_error_set(err, NVFP4_EINVAL, "the quantized tensor has no %s output", columnwise ? "columnwise" : "rowwise");
    const nvfp4_recipe *r = nvfp4_recipe_find(q->recipe);
    if (!r) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%s'", q->recipe);
    const nvfp4_cuda_qtensor *t = columnwise ? &q->col : &q->row;
    bool row_scaled = nvfp4_core_recipe_row_scaled(nvfp4_recipe_core(r));
    if (row_scaled && !t->row_amax)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe '%s' dequantizes with one amax per row, and the %s "
                               "result has no row_amax", q->recipe, columnwise ? "columnwise" : "rowwise");
    nvfp4_cu_dequant_item it;
    it.data = t->data;
    it.scale = t->scale;
    it.srows = t->rows;
    it.scols = t->cols;
    it.psrows = t->prows;
    it.pscols = t->pcols;
    it.scale_cols = t->scale_cols;
    it.bw = (int)block_len_of(t);
    it.r = *nvfp4_recipe_core(r);
    it.g = nvfp4_core_global_from_amax(&it.r, t->amax);
    it.row_amax = row_scaled ? t->row_amax : NULL;
    it.out = out;
    it.vec = it.r.elem == NVFP4_CORE_ELEM_E2M1 && (uintptr_t)t->data % 8 == 0 && (uintptr_t)out % 16 == 0 &&
             t->cols % 4 == 0;
    return launch(it, err, "dequantize kernel");
}

/* ---- GEMM ------------------------------------------------------------------------ */
extern "C" nvfp4_status nvfp4_cuda_gemm_te(const nvfp4_cuda_quantized *a, bool a_col, const nvfp4_cuda_quantized *b,
                                           bool b_col, float alpha_in, float *d, nvfp4_error *err)
{
    if (!a || !b || !d) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_gemm_te: NULL argument");
    if ((a_col ? !a->has_col : !a->has_row) || (b_col ? !b->has_col : !b->has_row))
        return nvfp4_error_set(err, NVFP4_EINVAL, "GEMM operand lacks the asked orientation");
    const nvfp4_cuda_qtensor *ta = a_col ? &a->col : &a->row, *tb = b_col ? &b->col : &b->row;
    const nvfp4_recipe *ra = nvfp4_recipe_find(a->recipe), *rb = nvfp4_recipe_find(b->recipe);
    if (!ra || !rb) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe");
    const nvfp4_core_recipe *ca = nvfp4_recipe_core(ra), *cb = nvfp4_recipe_core(rb);
    if (ca->elem != NVFP4_CORE_ELEM_E2M1 || cb->elem != NVFP4_CORE_ELEM_E2M1 || ca->scale_format != NVFP4_CORE_SCALE_E4M3 ||
        cb->scale_format != NVFP4_CORE_SCALE_E4M3 || block_len_of(ta) != 16 || block_len_of(tb) != 16)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "the CUDA te GEMM takes NVFP4 operands (E2M1, E4M3 scales, 16-blocks)");
    if (ta->pcols != tb->pcols || ta->cols != tb->cols)
        return nvfp4_error_set(err, NVFP4_EINVAL, "GEMM K mismatch: %zu vs %zu", ta->cols, tb->cols);
    nvfp4_cu_gemm_item it;
    it.a = ta->data;
    it.sa = ta->scale;
    it.b = tb->data;
    it.sb = tb->scale;
    it.M = ta->rows;
    it.N = tb->rows;
    it.Kp = ta->pcols;
    it.a_scale_cols = ta->scale_cols;
    it.b_scale_cols = tb->scale_cols;
    it.alpha = nvfp4_gemm_alpha(alpha_in, ta->amax, tb->amax); /* the CPU library's alpha (src/gemm.c) */
    it.d = d;
    return launch(it, err, "gemm kernel");
}

/* ---- compare ---------------------------------------------------------------------- */
extern "C" nvfp4_status nvfp4_cuda_compare(nvfp4_cuda_cmp_kind kind, const void *expected, const void *actual, size_t n,
                                           uint64_t *count, nvfp4_cuda_mismatch *first, size_t max_first, nvfp4_error *err)
{
    if (!expected || !actual || !count || (max_first && !first))
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_compare: NULL argument");
    if (kind != NVFP4_CUDA_CMP_U8 && kind != NVFP4_CUDA_CMP_FP4 && kind != NVFP4_CUDA_CMP_F32 &&
        kind != NVFP4_CUDA_CMP_F32_NANEQ)
        return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_compare: unknown kind %d", (int)kind);
    *count = 0;
    if (n == 0) return NVFP4_OK;
    nvfp4_cu_cmp_item it;
    it.kind = (int)kind;
    it.exp = expected;
    it.act = actual;
    it.n = n;
    size_t nchunks = it.count();
    uint32_t *dcounts = NULL;
    nvfp4_status st = nvfp4_cuda_alloc((void **)&dcounts, nchunks * sizeof *dcounts, err);
    if (st) return st;
    it.counts = dcounts;
    uint32_t *hcounts = (uint32_t *)malloc(nchunks * sizeof *hcounts);
    if (!hcounts) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (!st) st = launch(it, err, "compare kernel");
    if (!st) st = nvfp4_cuda_download(hcounts, dcounts, nchunks * sizeof *hcounts, err);
    nvfp4_cuda_free(dcounts);
    /* The first mismatches: download only the chunks that hold them and
     * scan those on the host, in index order (deterministic). */
    size_t elem_bytes_num = (kind == NVFP4_CUDA_CMP_F32 || kind == NVFP4_CUDA_CMP_F32_NANEQ) ? 4 : 1, elem_bytes_den = kind == NVFP4_CUDA_CMP_FP4 ? 2 : 1;
    size_t chunk_bytes = NVFP4_CU_CMP_CHUNK * elem_bytes_num / elem_bytes_den;
    uint8_t *he = NULL, *ha = NULL;
    size_t found = 0;
    if (!st && max_first) {
        he = (uint8_t *)malloc(chunk_bytes);
        ha = (uint8_t *)malloc(chunk_bytes);
        if (!he || !ha) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    for (size_t c = 0; !st && c < nchunks; c++) {
        *count += hcounts[c];
        if (hcounts[c] == 0 || found >= max_first) continue;
        size_t i0 = c * NVFP4_CU_CMP_CHUNK, i1 = i0 + NVFP4_CU_CMP_CHUNK < n ? i0 + NVFP4_CU_CMP_CHUNK : n;
        size_t off = i0 * elem_bytes_num / elem_bytes_den;
        size_t bytes = ((i1 - i0) * elem_bytes_num + elem_bytes_den - 1) / elem_bytes_den;
        if ((st = nvfp4_cuda_download(he, (const uint8_t *)expected + off, bytes, err))) break;
        if ((st = nvfp4_cuda_download(ha, (const uint8_t *)actual + off, bytes, err))) break;
        for (size_t i = 0; i < i1 - i0 && found < max_first; i++) {
            uint32_t e = nvfp4_cu_cmp_elem((int)kind, he, i), a = nvfp4_cu_cmp_elem((int)kind, ha, i);
            if (nvfp4_cu_cmp_differ((int)kind, e, a)) {
                first[found].index = i0 + i;
                first[found].expected = e;
                first[found].actual = a;
                found++;
            }
        }
    }
    free(he);
    free(ha);
    free(hcounts);
    return st;
}

/* ---- internal: prepared quantize for the benchmark (internal.h) ---------------- */
nvfp4_status nvfp4_cu_quantize_prepare(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                       const nvfp4_quant_opts *opts, bool colwise, nvfp4_cu_prepared *pp,
                                       nvfp4_error *err)
{
    memset(pp, 0, sizeof *pp);
    nvfp4_quant_opts o;
    if (opts) o = *opts;
    else nvfp4_quant_opts_init(&o);
    o.rowwise = !colwise; /* the one orientation prepared */
    o.columnwise = colwise;
    nvfp4_quant_plan qp;
    nvfp4_status st = make_plan(&o, dtype, rows, cols, &pp->q, &qp, err);
    if (st) return st;
    if ((st = nvfp4_cu_need_device(err))) return st;
    const nvfp4_recipe *r = qp.recipe;
    params_from_plan(&qp, colwise, &pp->p, &pp->t);
    pp->p.x = x;
    pp->p.bf16 = dtype == NVFP4_DTYPE_BF16;
    pp->p.vec = ((uintptr_t)x % 16 == 0) && (dtype == NVFP4_DTYPE_BF16 ? cols % 8 == 0 : cols % 4 == 0);
    pp->p.native = native_requested();
    float amax = 0.0f;
    bool has_global = nvfp4_recipe_get_info(r)->has_global_amax;
    if (has_global && (st = orientation_amax(&pp->p, &amax, err))) return st;
    pp->p.g = nvfp4_core_global_from_amax(&pp->p.r, has_global ? amax : 0.0f);
    pp->t.amax = has_global ? amax : 0.0f;
    nvfp4_cuda_qtensor *t = &pp->t;
    if ((st = row_amaxes(&pp->p, t, err)) || (st = nvfp4_cuda_alloc((void **)&t->data, t->data_bytes, err)) ||
        (st = nvfp4_cuda_alloc((void **)&t->scale, t->scale_rows * t->scale_cols, err))) {
        qtensor_free(t);
        return st;
    }
    pp->p.data = t->data;
    pp->p.scale = t->scale;
    return NVFP4_OK;
}

nvfp4_status nvfp4_cu_quantize_launch(const nvfp4_cu_prepared *pp, nvfp4_error *err)
{
    return launch_quant(pp->p, err);
}

nvfp4_status nvfp4_cu_amax_launch(const void *x, nvfp4_dtype dtype, size_t n, uint32_t *d_out, nvfp4_error *err)
{
    nvfp4_cu_amax_item it;
    it.x = x;
    it.bf16 = dtype == NVFP4_DTYPE_BF16;
    it.nanprop = 0;
    it.n = n;
    it.T = NVFP4_CU_AMAX_THREADS;
    it.vec = (uintptr_t)x % 16 == 0;
    it.out = d_out;
    return launch_exact(it, err, "amax kernel");
}

void nvfp4_cu_prepared_free(nvfp4_cu_prepared *pp) { qtensor_free(&pp->t); }

/* ---- check a kernel's quantized output --------------------------------------------- */
static void note_amax(nvfp4_cuda_check_report *rep, size_t i, float ours, float theirs)
{
    if (nvfp4_core_f32_bits(ours) == nvfp4_core_f32_bits(theirs)) return;
    if (rep->amax_mismatches == 0) rep->amax_expected = ours, rep->amax_actual = theirs;
    if (rep->n_first_amax < NVFP4_CUDA_CHECK_FIRST) {
        nvfp4_cuda_mismatch *m = &rep->first_amax[rep->n_first_amax++];
        m->index = i;
        m->expected = nvfp4_core_f32_bits(ours);
        m->actual = nvfp4_core_f32_bits(theirs);
        rep->first_amax_reasons[rep->n_first_amax - 1] = NVFP4_VR_VALUE;
    }
    rep->amax_mismatches++;
}

/* The tensor amax, or for a row-scaled recipe every stored row's amax (the
 * scale of each row depends on its own, so a wrong row is a wrong result even
 * when the maximum is right). theirs: host, 1 or prows floats. */
static nvfp4_status compare_amaxes(const nvfp4_cuda_qtensor *t, const float *theirs, nvfp4_cuda_check_report *rep,
                                   nvfp4_error *err)
{
    rep->amax_checked = true;
    rep->amax_count = t->row_amax ? t->prows : 1;
    if (!t->row_amax) {
        rep->amax_expected = t->amax, rep->amax_actual = *theirs;
        note_amax(rep, 0, t->amax, *theirs);
    } else {
        float *ours = (float *)malloc((t->prows ? t->prows : 1) * sizeof(float));
        if (!ours) return nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_cuda_check_quantized: out of host memory");
        nvfp4_status st = nvfp4_cuda_download(ours, t->row_amax, t->prows * sizeof(float), err);
        if (st) {
            free(ours);
            return st;
        }
        float their_max = 0.0f;
        for (size_t i = 0; i < t->prows; i++) their_max = fmaxf(their_max, theirs[i]);
        rep->amax_expected = t->amax, rep->amax_actual = their_max;
        for (size_t i = 0; i < t->prows; i++) note_amax(rep, i, ours[i], theirs[i]);
        free(ours);
    }
    rep->amax_equal = rep->amax_mismatches == 0;
    return NVFP4_OK;
}

extern "C" nvfp4_status nvfp4_cuda_check_quantized(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                                   const nvfp4_quant_opts *opts, bool columnwise, const uint8_t *codes,
                                                   const uint8_t *scales, bool scales_swizzled, const float *amax,
                                                   nvfp4_cuda_check_report *rep, nvfp4_error *err)
{
    if (!codes || !rep) return nvfp4_error_set(err, NVFP4_EINVAL, "nvfp4_cuda_check_quantized: NULL argument");
    memset(rep, 0, sizeof *rep);
    nvfp4_quant_opts o;
    if (opts) o = *opts;
    else nvfp4_quant_opts_init(&o);
    o.rowwise = !columnwise;
    o.columnwise = columnwise;
    nvfp4_cuda_quantized q;
    nvfp4_status st = nvfp4_cuda_quantize(x, dtype, rows, cols, &o, &q, err);
    if (st) return st;
    const nvfp4_cuda_qtensor *t = columnwise ? &q.col : &q.row;
    const nvfp4_recipe *r = nvfp4_recipe_find(q.recipe);
    bool e4m3 = nvfp4_recipe_core(r)->elem == NVFP4_CORE_ELEM_E4M3;
    size_t n = t->prows * t->pcols;
    st = nvfp4_cuda_compare(e4m3 ? NVFP4_CUDA_CMP_U8 : NVFP4_CUDA_CMP_FP4, t->data, codes, n, &rep->code_mismatches,
                            rep->first_codes, NVFP4_CUDA_CHECK_FIRST, err);
    rep->n_first_codes = rep->code_mismatches < NVFP4_CUDA_CHECK_FIRST ? (size_t)rep->code_mismatches : NVFP4_CUDA_CHECK_FIRST;
    if (!st && scales) {
        const uint8_t *ours = scales_swizzled ? t->scale_swizzled : t->scale;
        size_t ns = scales_swizzled ? t->scale_swizzled_bytes : t->scale_rows * t->scale_cols;
        st = nvfp4_cuda_compare(NVFP4_CUDA_CMP_U8, ours, scales, ns, &rep->scale_mismatches, rep->first_scales,
                                NVFP4_CUDA_CHECK_FIRST, err);
        rep->n_first_scales =
            rep->scale_mismatches < NVFP4_CUDA_CHECK_FIRST ? (size_t)rep->scale_mismatches : NVFP4_CUDA_CHECK_FIRST;
    }
    if (!st && amax) st = compare_amaxes(t, amax, rep, err);
    if (!st) st = nvfp4_cu_check_explain(x, dtype, rows, cols, &q, columnwise, codes, scales, scales_swizzled, amax, rep, err);
    nvfp4_cuda_quantized_free(&q);
    return st;
}
