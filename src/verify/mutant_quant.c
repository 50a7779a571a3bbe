/*
 * mutant_quant.c - the mutant quantizer: nvfp4_quantize's layout and, for a
 * mutant that changes arithmetic, each stored orientation recomputed with
 * the recipe chain of src/core/recipe.h in which one step is the mutant's
 * hook (src/verify/mutant.h). With no hook the chain reproduces the scalar
 * reference path byte for byte (tests/check_mutants.c asserts it).
 */
#include <stdlib.h>
#include <string.h>

#include "core/bf16.h"
#include "core/hadamard.h"
#include "core/philox.h"
#include "verify/mutant.h"
#include "recipes/recipe.h"

const char *nvfp4_mutant_recipe_family(const char *recipe)
{
    if (!recipe) recipe = "te";
    if (strcmp(recipe, "te") == 0 || strcmp(recipe, "te-pyref") == 0 || strncmp(recipe, "te-4over6", 9) == 0)
        return "te";
    if (strncmp(recipe, "torchao", 7) == 0) return "torchao";
    if (strcmp(recipe, "modelopt") == 0) return "modelopt";
    if (strncmp(recipe, "mxfp4-", 6) == 0) return "mxfp4";
    return NULL;
}

static bool list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && strncmp(p, word, n) == 0) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

bool nvfp4_mutant_applies(const nvfp4_mutant_info *m, const char *recipe, const nvfp4_quant_opts *o)
{
    if (!m || !list_has(m->recipes, recipe ? recipe : "te")) return false;
    if (m->needs & NVFP4_MUTANT_NEEDS_KV_V) return false; /* only against goldens in that layout */
    if (!o) return true;
    if ((m->needs & NVFP4_MUTANT_NEEDS_RN) && o->rounding == NVFP4_SR) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_SR) && o->rounding != NVFP4_SR) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_RHT) && !(o->rht && o->columnwise)) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_2D) && o->block != NVFP4_BLOCK_16X16) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_1D) && o->block == NVFP4_BLOCK_16X16) return false;
    return true;
}

nvfp4_scale_layout nvfp4_mutant_scale_layout(const nvfp4_mutant_info *m)
{
    return m && (m->needs & NVFP4_MUTANT_NEEDS_KV_V) ? NVFP4_SCALE_LAYOUT_KV_V : NVFP4_SCALE_LAYOUT_128X4;
}

bool nvfp4_mutant_applies_in_layout(const nvfp4_mutant_info *m, const char *recipe, const nvfp4_quant_opts *o,
                                    nvfp4_scale_layout l)
{
    if (m && (m->needs & NVFP4_MUTANT_NEEDS_128X4) && l != NVFP4_SCALE_LAYOUT_128X4) return false;
    if (!m || !(m->needs & NVFP4_MUTANT_NEEDS_KV_V)) return nvfp4_mutant_applies(m, recipe, o);
    nvfp4_mutant_info plain = *m;
    plain.needs &= ~(unsigned)NVFP4_MUTANT_NEEDS_KV_V;
    return l == NVFP4_SCALE_LAYOUT_KV_V && nvfp4_mutant_applies(&plain, recipe, o);
}

const char *nvfp4_mutant_step_id(const nvfp4_mutant_info *m)
{
    static const char *const special[] = {"elem-nan", "elem-negzero", "elem-sat"};
    if (!m) return "recipe";
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (strncmp(m->name, special[i], strlen(special[i])) == 0) return "special-values";
    if (strcmp(m->name, "2d-tile-amax-first-row") == 0) return "amax";
    static const char *const map[][2] = {{"encode factor", "encode-factor"}, {"block scale", "block-scale"},
                                         {"global scale", "global-scale"},   {"global amax", "amax"},
                                         {"block amax", "amax"},             {"element cast", "element-rounding"},
                                         {"SR bits", "element-rounding"},    {"layout", "layout"},
                                         {"RHT", "rht"},                     {"2D scaling", "block-scale"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(m->step, map[i][0]) == 0) return map[i][1];
    return "recipe";
}

/* ---- the recipe's own steps ---------------------------------------------- */

float nvfp4_mutant_tensor_amax_of(const float *b, size_t n, int nanprop)
{
    if (nanprop)
        for (size_t i = 0; i < n; i++)
            if (nvfp4_core_isnan(b[i])) return nvfp4_core_f32_from_bits(0x7FC00000u);
    return nvfp4_amax_f32(b, n);
}

float nvfp4_mutant_default_block_amax(const nvfp4_mctx *c, size_t row, size_t bcol)
{
    size_t pc = c->l->pcols, bl = c->l->block_len;
    int nanprop = c->r->amax_nan_propagates;
    float a = 0.0f;
    if (c->l->tile16) {
        size_t r0 = row / 16 * 16;
        for (size_t r = r0; r < r0 + 16 && r < c->l->prows; r++)
            for (size_t k = 0; k < 16; k++) a = nvfp4_core_amax_step(a, c->b[r * pc + bcol * 16 + k], nanprop);
        return a;
    }
    for (size_t k = 0; k < bl; k++) a = nvfp4_core_amax_step(a, c->b[row * pc + bcol * bl + k], nanprop);
    return a;
}

void nvfp4_mutant_default_rht(const nvfp4_mctx *c, float *b, const uint32_t mask[4])
{
    size_t groups = c->l->prows * (c->l->pcols / 16);
    for (size_t g = 0; g < groups; g++) nvfp4_core_rht_forward_group(b + g * 16, b + g * 16, 16u, mask, !c->p->opts.rht_fp32);
}

/* x in the stored orientation, zero padded (as src/quant/reference.c). */
static float *stored(const nvfp4_quant_plan *p, const void *x, bool colwise)
{
    const nvfp4_quant_layout *l = colwise ? &p->col : &p->row;
    size_t n = l->prows * l->pcols;
    float *b = calloc(n ? n : 1, sizeof *b);
    if (!b) return NULL;
    for (size_t i = 0; i < p->rows; i++)
        for (size_t j = 0; j < p->cols; j++) {
            size_t k = i * p->cols + j;
            float v = p->dtype == NVFP4_DTYPE_BF16 ? nvfp4_core_bf16_decode(((const uint16_t *)x)[k])
                                                   : ((const float *)x)[k];
            if (colwise) b[j * l->pcols + i] = v;
            else b[i * l->pcols + j] = v;
        }
    return b;
}

void nvfp4_mutant_4over6_tile_errors(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax, float e4[16],
                                     float e6[16], uint8_t *s4, uint8_t *s6)
{
    size_t pc = c->l->pcols;
    const float *t = c->b + (c->row / 16 * 16) * pc + c->bcol * 16;
    nvfp4_core_4over6_scales(c->r, g, bamax, s4, s6);
    for (size_t r = 0; r < 16; r++) {
        e4[r] = nvfp4_core_4over6_seg_error(c->r, g, *s4, t + r * pc);
        e6[r] = nvfp4_core_4over6_seg_error(c->r, g, *s6, t + r * pc);
    }
}

uint8_t nvfp4_mutant_default_scale(const nvfp4_mctx *c, const nvfp4_core_global *g, float bamax)
{
    if (nvfp4_core_is_4over6(c->r) && c->l->tile16) {
        float e4[16], e6[16];
        uint8_t s4, s6;
        nvfp4_mutant_4over6_tile_errors(c, g, bamax, e4, e6, &s4, &s6);
        return nvfp4_core_4over6_pick(nvfp4_core_4over6_tile_sum(e4), nvfp4_core_4over6_tile_sum(e6), s4, s6);
    }
    if (nvfp4_core_is_4over6(c->r) && c->block_x) return nvfp4_core_4over6_seg(c->r, g, bamax, c->block_x);
    return nvfp4_core_block_scale(c->r, g, bamax);
}

float nvfp4_mutant_row_amax(const nvfp4_mctx *c, size_t row)
{
    return nvfp4_mutant_tensor_amax_of(c->b + row * c->l->pcols, c->l->pcols, c->r->amax_nan_propagates);
}

float nvfp4_mutant_y(const nvfp4_mctx *c, const nvfp4_core_block *b, float x)
{
    if (c->m && c->m->scaled) return c->m->scaled(c, b, x);
    return nvfp4_core_scaled(c->r, b, x);
}

uint8_t nvfp4_mutant_default_elem(const nvfp4_mctx *c, const nvfp4_core_block *b, float x, uint8_t rbits)
{
    if (!(c->m && c->m->scaled)) return nvfp4_core_encode_elem(c->r, b, x, c->mode, rbits);
    float y = c->m->scaled(c, b, x);
    if (c->r->elem == NVFP4_CORE_ELEM_E4M3) return nvfp4_core_e4m3_encode(y, 1);
    return nvfp4_core_e2m1_cast(c->r, y, c->mode, rbits);
}

static void encode_row(const nvfp4_mutant *m, const nvfp4_mctx *c, size_t row, const nvfp4_core_global *gt,
                       uint8_t *scale, uint8_t *out)
{
    size_t bl = c->l->block_len, nb = c->l->pcols / bl;
    const float *x = c->b + row * c->l->pcols;
    int e4m3 = c->r->elem == NVFP4_CORE_ELEM_E4M3;
    uint8_t rb[16] = {0};
    float row_local = m->local_amax && m->local_amax_per_row ? m->local_amax(c, row, 0) : 0.0f;
    for (size_t b = 0; b < nb; b++) {
        nvfp4_core_global g = *gt;
        if (m->local_amax) {
            float a = m->local_amax_per_row ? row_local : m->local_amax(c, row, b);
            g = m->global ? m->global(c, a) : nvfp4_core_global_from_amax(c->r, a);
        }
        float bamax = m->block_amax ? m->block_amax(c, row, b) : nvfp4_mutant_default_block_amax(c, row, b);
        nvfp4_mctx cb = *c;
        cb.block_x = x + b * bl;
        cb.row = row;
        cb.bcol = b;
        uint8_t s = m->bscale ? m->bscale(&cb, &g, bamax) : nvfp4_mutant_default_scale(&cb, &g, bamax);
        scale[b] = s;
        nvfp4_core_block blk = m->prepare ? m->prepare(c, &g, s) : nvfp4_core_block_prepare(c->r, &g, s);
        for (size_t i = 0; i < bl; i++) {
            size_t j = b * bl + i;
            if (c->mode == NVFP4_CORE_SR && (i & 15u) == 0) {
                if (m->rbytes) m->rbytes(c, row, (size_t)row * nb + b, i >> 4, rb);
                else nvfp4_core_sr_block_bytes(c->seed, c->l->sr_offset + (i >> 4), (uint64_t)row * nb + b, rb);
            }
            uint8_t q = m->elem ? m->elem(c, &blk, x[j], rb[i & 15u]) : nvfp4_mutant_default_elem(c, &blk, x[j], rb[i & 15u]);
            if (m->special) q = m->special(c, x[j], nvfp4_mutant_y(c, &blk, x[j]), q);
            if (e4m3) out[j] = q;
            else if (j & 1u) out[j >> 1] = (uint8_t)(out[j >> 1] | (q << 4));
            else out[j >> 1] = q;
        }
    }
}

static bool arithmetic(const nvfp4_mutant *m)
{
    return m->core || m->transform || m->tensor_amax || m->local_amax || m->global || m->block_amax || m->bscale ||
           m->prepare || m->scaled || m->elem || m->special || m->rbytes;
}

/* The recipe's global scale, handed over inverted when the options say so (a mutant of the global
 * step computes the scale the kernel works with itself). */
static nvfp4_core_global recipe_global(const nvfp4_mctx *c, float amax)
{
    nvfp4_core_global g = nvfp4_core_global_from_amax(c->r, amax);
    return c->p->opts.global_scale_inverted ? nvfp4_core_global_handed_inverted(g) : g;
}

static nvfp4_status orientation(const nvfp4_mutant *m, const nvfp4_quant_plan *p, const void *x, bool colwise,
                                nvfp4_mutant_output *out, nvfp4_error *err)
{
    const nvfp4_quant_layout *l = colwise ? &p->col : &p->row;
    nvfp4_qtensor *t = colwise ? &out->q.col : &out->q.row;
    nvfp4_mctx c;
    memset(&c, 0, sizeof c);
    c.r = m->core ? m->core : nvfp4_recipe_core(p->recipe);
    c.p = p;
    c.l = l;
    c.m = m;
    c.colwise = colwise;
    c.mode = p->opts.rounding == NVFP4_SR ? NVFP4_CORE_SR : p->opts.rounding == NVFP4_RZ ? NVFP4_CORE_RZ : NVFP4_CORE_RN;
    c.seed = p->opts.seed;
    float *pre = stored(p, x, colwise), *b = NULL;
    if (!pre) return nvfp4_error_set(err, NVFP4_ENOMEM, "mutant: out of memory");
    size_t n = l->prows * l->pcols;
    b = pre;
    if (colwise && p->opts.rht) {
        b = malloc(n * sizeof *b);
        if (!b) {
            free(pre);
            return nvfp4_error_set(err, NVFP4_ENOMEM, "mutant: out of memory");
        }
        memcpy(b, pre, n * sizeof *b);
        c.b = b;
        c.pre = pre;
        if (m->transform) m->transform(&c, b);
        else nvfp4_mutant_default_rht(&c, b, p->rht_mask);
    }
    c.b = b;
    c.pre = pre;
    int uses_amax = c.r->global_rule != NVFP4_CORE_GLOBAL_NONE;
    c.amax = uses_amax ? nvfp4_mutant_tensor_amax_of(b, n, c.r->amax_nan_propagates) : 0.0f;
    if (arithmetic(m)) {
        float amax = uses_amax && m->tensor_amax ? m->tensor_amax(&c) : c.amax;
        nvfp4_core_global g = m->global ? m->global(&c, amax) : recipe_global(&c, amax);
        size_t row_bytes = l->data_bytes / l->prows;
        bool row_scaled = nvfp4_core_recipe_row_scaled(c.r);
        for (size_t i = 0; i < l->prows; i++) {
            nvfp4_core_global gi = g;
            if (row_scaled) { /* te-rowscaled: each stored row's own amax, which the kernel writes too */
                float a = m->local_amax ? m->local_amax(&c, i, 0) : nvfp4_mutant_row_amax(&c, i);
                if (t->row_amax) t->row_amax[i] = a;
                gi = m->global ? m->global(&c, a) : recipe_global(&c, a);
            }
            encode_row(m, &c, i, &gi, t->scale + i * l->scale_cols, t->data + i * row_bytes);
        }
        /* a recipe without a global amax writes none (te-ue5m3-1level: S_enc = 1, no amax), as the library */
        t->amax = nvfp4_recipe_get_info(p->recipe)->has_global_amax ? amax : 0.0f;
    }
    nvfp4_scale_layout target = nvfp4_mutant_scale_layout(&m->info);
    size_t pr, pc, zn = target == NVFP4_SCALE_LAYOUT_128X4 ? nvfp4_swizzled_size(t->scale_rows, t->scale_cols)
                                                           : nvfp4_scale_layout_shape(target, t->scale_rows,
                                                                                      t->scale_cols, &pr, &pc);
    uint8_t *swz = malloc(zn ? zn : 1);
    if (!swz) {
        if (b != pre) free(b);
        free(pre);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "mutant: out of memory");
    }
    if (target == NVFP4_SCALE_LAYOUT_128X4) nvfp4_scale_swizzle(t->scale, t->scale_rows, t->scale_cols, swz);
    else nvfp4_scale_to_layout(target, t->scale, t->scale_rows, t->scale_cols, swz);
    if (m->layout) m->layout(&c, t, swz, zn);
    out->swizzled[colwise] = swz;
    out->swizzled_bytes[colwise] = zn;
    if (b != pre) free(b);
    free(pre);
    return NVFP4_OK;
}

/* Takes hook h of a part into the composed slot *slot: false when the slot is taken. */
#define TAKE(slot, h)                                                                                                  \
    do {                                                                                                               \
        if (h) {                                                                                                       \
            if (slot) return false;                                                                                    \
            slot = h;                                                                                                  \
        }                                                                                                              \
    } while (0)

bool nvfp4_mutant_compose(const nvfp4_mutant *const *parts, size_t n, nvfp4_mutant *out)
{
    memset(out, 0, sizeof *out);
    out->info = (nvfp4_mutant_info){"recipe", "none", "the recipe", "composed", "", 0};
    if (n > NVFP4_MUTANT_MAX_PARTS) return false;
    size_t nopts = 0;
    for (size_t i = 0; i < n; i++) {
        const nvfp4_mutant *p = parts[i];
        if (i == 0) out->info = p->info;
        if (p->opts) out->more_opts[nopts++] = p->opts;
        TAKE(out->transform, p->transform);
        TAKE(out->tensor_amax, p->tensor_amax);
        TAKE(out->local_amax, p->local_amax);
        if (p->local_amax) out->local_amax_per_row = p->local_amax_per_row;
        TAKE(out->global, p->global);
        TAKE(out->block_amax, p->block_amax);
        TAKE(out->bscale, p->bscale);
        TAKE(out->prepare, p->prepare);
        TAKE(out->scaled, p->scaled);
        TAKE(out->elem, p->elem);
        TAKE(out->special, p->special);
        TAKE(out->rbytes, p->rbytes);
        TAKE(out->layout, p->layout);
    }
    return true;
}
#undef TAKE

nvfp4_status nvfp4_mutant_run(const nvfp4_mutant *m, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                              const nvfp4_quant_opts *opts, nvfp4_mutant_output *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    nvfp4_quant_opts o;
    if (opts) o = *opts;
    else nvfp4_quant_opts_init(&o);
    if (m->opts) m->opts(&o);
    for (size_t i = 0; i < NVFP4_MUTANT_MAX_PARTS && m->more_opts[i]; i++) m->more_opts[i](&o);
    nvfp4_quant_plan plan;
    nvfp4_status st = nvfp4_quant_plan_init(&plan, &o, dtype, rows, cols, err);
    if (st) return st;
    if ((st = nvfp4_quantize(x, dtype, rows, cols, &o, &out->q, err))) return st;
    for (int colwise = 0; colwise < 2; colwise++) {
        if (!(colwise ? out->q.has_col : out->q.has_row)) continue;
        if ((st = orientation(m, &plan, x, colwise != 0, out, err))) {
            nvfp4_mutant_output_free(out);
            return st;
        }
    }
    return NVFP4_OK;
}

void nvfp4_mutant_output_free(nvfp4_mutant_output *o)
{
    nvfp4_quantized_free(&o->q);
    free(o->swizzled[0]);
    free(o->swizzled[1]);
    memset(o, 0, sizeof *o);
}
