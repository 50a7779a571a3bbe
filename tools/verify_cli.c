/* verify_cli.c - a quantization result as a verifier view (golden --mutants).
 * The reports' views of bundles and kernel files live in the library
 * (src/verify/report_views.c). */
#include "verify_cli.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

void vcli_view_free(vcli_view *v)
{
    free(v->x_owned);
    free(v->swz_owned);
    free(v->dq_owned);
    memset(v, 0, sizeof *v);
}

static void geometry_view(const nvfp4_qtensor *t, const nvfp4_recipe_info *info, nvfp4_block blk, nvfp4_vview *v)
{
    memset(v, 0, sizeof *v);
    v->rows = t->prows;
    v->cols = t->pcols;
    v->block_rows = blk == NVFP4_BLOCK_16X16 ? 16 : 1;
    v->block_cols = blk == NVFP4_BLOCK_1X32 ? 32 : 16;
    v->e4m3_elements = info->elem == NVFP4_ELEM_E4M3;
    v->ue8m0_scales = info->scale_format == NVFP4_SCALEFMT_UE8M0;
    v->dequant_cols = t->cols;
}

int vcli_view_from_q(const nvfp4_quantized *q, bool colwise, vcli_view *out)
{
    memset(out, 0, sizeof *out);
    const nvfp4_qtensor *t = colwise ? &q->col : &q->row;
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(q->recipe);
    geometry_view(t, info, q->opts.block, &out->v);
    out->srows = t->rows;
    out->scols = t->cols;
    out->v.data = t->data;
    out->v.data_bytes = t->data_bytes;
    out->v.scale = t->scale;
    out->v.scale_bytes = t->scale_rows * t->scale_cols;
    size_t zn = nvfp4_swizzled_size(t->scale_rows, t->scale_cols);
    out->swz_owned = malloc(zn ? zn : 1);
    if (!out->swz_owned) return NVFP4_EXIT_USAGE;
    nvfp4_scale_swizzle(t->scale, t->scale_rows, t->scale_cols, out->swz_owned);
    out->v.scale_swizzled = out->swz_owned;
    out->v.scale_swizzled_bytes = zn;
    if (info->has_global_amax) out->v.amax = t->row_amax ? t->row_amax : &t->amax;
    if (t->row_amax) out->v.amax_count = t->prows; /* row-scaled: one per stored row */
    out->any = true;
    return 0;
}
