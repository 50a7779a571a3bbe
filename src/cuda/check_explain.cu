/*
 * check_explain.cu - host side of nvfp4_cuda_check_quantized: when the
 * kernel's output differs, both outputs and the input are downloaded and
 * run through the CPU verifier (nvfp4_verify, with the catalogued mutants of
 * the recipe as candidates), so the report carries the reason of each first
 * mismatch and the cause lines that `nvfp4 verify` prints, not only counts.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/check_explain.h"
#include "nvfp4/verify.h"

namespace {

struct host_bufs {
    float *x = nullptr, *xo = nullptr, *ours_row_amax = nullptr;
    uint8_t *ours_data = nullptr, *ours_scale = nullptr, *ours_swz = nullptr, *their_codes = nullptr,
            *their_scales = nullptr;
    nvfp4_mutant_output *mut = nullptr;
    size_t nmut = 0;
    ~host_bufs()
    {
        free(x), free(xo), free(ours_row_amax), free(ours_data), free(ours_scale), free(ours_swz), free(their_codes), free(their_scales);
        for (size_t i = 0; i < nmut; i++) nvfp4_mutant_output_free(&mut[i]);
        free(mut);
    }
};

bool download(void **dst, const void *src, size_t n, nvfp4_error *err, nvfp4_status *st)
{
    *dst = malloc(n ? n : 1);
    if (!*dst) {
        *st = nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_cuda_check_quantized: out of host memory");
        return false;
    }
    *st = nvfp4_cuda_download(*dst, src, n, err);
    return *st == NVFP4_OK;
}

void geometry(const nvfp4_cuda_qtensor *t, const nvfp4_recipe_info *info, nvfp4_block blk, nvfp4_vview *v)
{
    memset(v, 0, sizeof *v);
    v->rows = t->prows;
    v->cols = t->pcols;
    v->block_rows = blk == NVFP4_BLOCK_16X16 ? 16 : 1;
    v->block_cols = blk == NVFP4_BLOCK_1X32 ? 32 : 16;
    v->e4m3_elements = info->elem == NVFP4_ELEM_E4M3;
    v->ue8m0_scales = info->scale_format == NVFP4_SCALEFMT_UE8M0;
    v->ue5m3_scales = info->scale_format == NVFP4_SCALEFMT_UE5M3;
    v->dequant_cols = t->cols;
}

} // namespace

nvfp4_status nvfp4_cu_check_explain(const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                                    const nvfp4_cuda_quantized *q, bool columnwise, const uint8_t *codes,
                                    const uint8_t *scales, bool scales_swizzled, const float *amax,
                                    nvfp4_cuda_check_report *rep, nvfp4_error *err)
{
    bool differs = rep->code_mismatches || rep->scale_mismatches || (rep->amax_checked && !rep->amax_equal);
    if (!differs) return NVFP4_OK;
    const nvfp4_cuda_qtensor *t = columnwise ? &q->col : &q->row;
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(q->recipe));
    host_bufs h;
    nvfp4_status st = NVFP4_OK;
    size_t n = rows * cols, esz = dtype == NVFP4_DTYPE_BF16 ? 2 : 4, ns = t->scale_rows * t->scale_cols;
    void *xr = nullptr;
    if (!download(&xr, x, n * esz, err, &st)) {
        free(xr);
        return st;
    }
    h.x = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!h.x) {
        free(xr);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_cuda_check_quantized: out of host memory");
    }
    for (size_t i = 0; i < n; i++)
        h.x[i] = dtype == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)xr)[i]) : ((const float *)xr)[i];
    free(xr);
    if (!download((void **)&h.ours_data, t->data, t->data_bytes, err, &st) ||
        !download((void **)&h.ours_scale, t->scale, ns, err, &st) ||
        !download((void **)&h.ours_swz, t->scale_swizzled, t->scale_swizzled_bytes, err, &st) ||
        !download((void **)&h.their_codes, codes, t->data_bytes, err, &st))
        return st;
    size_t their_ns = scales_swizzled ? t->scale_swizzled_bytes : ns;
    if (scales && !download((void **)&h.their_scales, scales, their_ns, err, &st)) return st;
    size_t namax = t->row_amax ? t->prows : 0; /* row-scaled: one amax per stored row, compared one by one */
    if (t->row_amax && !download((void **)&h.ours_row_amax, t->row_amax, namax * sizeof(float), err, &st)) return st;

    nvfp4_vview ev, av;
    geometry(t, info, q->opts.block, &ev);
    ev.data = h.ours_data;
    ev.data_bytes = t->data_bytes;
    ev.scale = h.ours_scale;
    ev.scale_bytes = ns;
    ev.scale_swizzled = h.ours_swz;
    ev.scale_swizzled_bytes = t->scale_swizzled_bytes;
    ev.amax = !info->has_global_amax ? nullptr : t->row_amax ? h.ours_row_amax : &t->amax;
    ev.amax_count = namax;
    if (!(columnwise && q->opts.rht)) { /* the input in the stored orientation, zero padded */
        size_t np = t->prows * t->pcols;
        h.xo = (float *)calloc(np ? np : 1, sizeof(float));
        if (!h.xo) return nvfp4_error_set(err, NVFP4_ENOMEM, "nvfp4_cuda_check_quantized: out of host memory");
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                h.xo[columnwise ? j * t->pcols + i : i * t->pcols + j] = h.x[i * cols + j];
        ev.x = h.xo;
    }
    av = ev;
    av.x = nullptr;
    av.data = h.their_codes;
    av.scale = av.scale_swizzled = nullptr;
    av.scale_bytes = av.scale_swizzled_bytes = 0;
    if (h.their_scales && scales_swizzled) av.scale_swizzled = h.their_scales, av.scale_swizzled_bytes = their_ns;
    else if (h.their_scales) av.scale = h.their_scales, av.scale_bytes = their_ns;
    av.amax = amax && info->has_global_amax ? amax : nullptr;

    /* the catalogued mutants of the recipe, computed on the host */
    size_t nm = nvfp4_mutant_count();
    h.mut = (nvfp4_mutant_output *)calloc(nm ? nm : 1, sizeof *h.mut);
    nvfp4_vcandidate *cand = (nvfp4_vcandidate *)calloc(nm ? nm : 1, sizeof *cand);
    size_t nc = 0;
    nvfp4_quant_opts o = q->opts;
    for (size_t i = 0; h.mut && cand && i < nm; i++) {
        const nvfp4_mutant_info *m = nvfp4_mutant_at(i);
        if (!nvfp4_mutant_applies(m, q->recipe, &o)) continue;
        nvfp4_error e2;
        nvfp4_mutant_output *mo = &h.mut[h.nmut];
        if (nvfp4_mutant_quantize(m, h.x, NVFP4_DTYPE_F32, rows, cols, &o, mo, &e2) != NVFP4_OK) continue;
        h.nmut++;
        const nvfp4_qtensor *mt = columnwise ? &mo->q.col : &mo->q.row;
        nvfp4_vview v = av;
        v.data = mt->data;
        v.data_bytes = mt->data_bytes;
        v.scale = mt->scale;
        v.scale_bytes = mt->scale_rows * mt->scale_cols;
        v.scale_swizzled = mo->swizzled[columnwise];
        v.scale_swizzled_bytes = mo->swizzled_bytes[columnwise];
        v.amax = nullptr;
        cand[nc].name = m->name;
        cand[nc].view = v;
        cand[nc].transposed = false;
        cand[nc].mutant = m;
        nc++;
    }
    nvfp4_verify_opts vo;
    nvfp4_verify_opts_init(&vo);
    vo.max_errors = 4 * NVFP4_CUDA_CHECK_FIRST + 2;
    vo.candidates = cand;
    vo.n_candidates = nc;
    vo.expected_name = q->recipe;
    nvfp4_vreport vr;
    st = nvfp4_verify(&ev, &av, &vo, &vr, err);
    free(cand);
    if (st) return st;
    for (size_t r = 0; r < NVFP4_VR_COUNT; r++) rep->reason_count[r] = vr.reason_count[r];
    for (size_t k = 0; k < rep->n_first_codes; k++) rep->first_code_reasons[k] = NVFP4_VR_ROUNDING;
    for (size_t k = 0; k < rep->n_first_scales; k++) rep->first_scale_reasons[k] = NVFP4_VR_SCALE_BYTE;
    for (size_t i = 0; i < vr.n_first; i++) {
        const nvfp4_vmismatch *m = &vr.first[i];
        bool scale_comp = m->component == (scales_swizzled ? NVFP4_VC_SCALE_SWIZZLED : NVFP4_VC_SCALE);
        for (size_t k = 0; m->component == NVFP4_VC_DATA && k < rep->n_first_codes; k++)
            if (rep->first_codes[k].index == m->index) rep->first_code_reasons[k] = m->reason;
        for (size_t k = 0; scale_comp && k < rep->n_first_scales; k++)
            if (rep->first_scales[k].index == m->index) rep->first_scale_reasons[k] = m->reason;
        for (size_t k = 0; m->component == NVFP4_VC_AMAX && k < rep->n_first_amax; k++)
            if (rep->first_amax[k].index == m->row) rep->first_amax_reasons[k] = m->reason;
    }
    rep->n_causes = vr.n_causes;
    for (size_t i = 0; i < vr.n_causes; i++) rep->causes[i] = vr.causes[i];
    rep->explained = true;
    nvfp4_vreport_free(&vr);
    return NVFP4_OK;
}
