/*
 * verify.c - exact comparison of a kernel's quantized output with the
 * golden one: per-component counts, the first N mismatches explained, and
 * the systematic causes found over the whole tensor (docs/verify.md).
 *
 * The reasons and causes only classify: every value the verifier needs is
 * computed through src/core (vchain.h); no rounding rule is written here.
 */
#include "nvfp4/verify.h"
#include "nvfp4/quant.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipes/recipe.h"
#include "verify/gscale.h"
#include "verify/mutant.h"
#include "verify/vchain.h"

void nvfp4_verify_opts_init(nvfp4_verify_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_errors = 10;
}

size_t nvfp4_vview_scale_cols(const nvfp4_vview *v)
{
    size_t bc = v->block_cols ? v->block_cols : 16;
    return (v->cols + bc - 1) / bc;
}

float nvfp4_verify_te_scaled(float x, uint8_t scale_byte, float amax)
{
    return nvfp4_vchain_te_scaled(x, scale_byte, amax);
}

void nvfp4_vreport_add_cause(nvfp4_vreport *rep, nvfp4_cause c, const char *fmt, ...)
{
    if (rep->n_causes >= NVFP4_VERIFY_MAX_CAUSES) return;
    nvfp4_vcause_line *l = &rep->causes[rep->n_causes++];
    memset(l, 0, sizeof *l);
    l->cause = c;
    l->step = nvfp4_cause_step(c);
    l->status = NVFP4_CAUSE_CONSISTENT; /* a detector's pattern: no other candidate compared */
    snprintf(l->evidence, sizeof l->evidence, "a pattern in the bytes; no other candidate of this step was compared");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->line, sizeof l->line, fmt, ap);
    va_end(ap);
}

bool nvfp4_vreport_has_cause(const nvfp4_vreport *rep, nvfp4_cause c)
{
    for (size_t i = 0; i < rep->n_causes; i++)
        if (rep->causes[i].cause == c) return true;
    return false;
}

bool nvfp4_vreport_match(const nvfp4_vreport *rep)
{
    for (unsigned c = 0; c < NVFP4_VC_COUNT; c++)
        if (rep->compared[c] && rep->mismatches[c]) return false;
    return true;
}

void nvfp4_vreport_free(nvfp4_vreport *rep)
{
    free(rep->first);
    rep->first = NULL;
    rep->n_first = 0;
}

/* ---- layout helpers ------------------------------------------------------- */

/* The size of scale_swizzled in the view's layout (nvfp4/layout.h), 0 on overflow. */
static size_t swz_size(const nvfp4_vview *v)
{
    size_t pr, pc;
    return nvfp4_scale_layout_shape(v->scale_layout, v->rows, nvfp4_vview_scale_cols(v), &pr, &pc);
}

static size_t elem_count(const nvfp4_vview *v) { return v->rows * v->cols; }

static size_t data_size(const nvfp4_vview *v)
{
    return v->e4m3_elements ? elem_count(v) : (elem_count(v) + 1) / 2;
}

static uint8_t code_at(const nvfp4_vview *v, const uint8_t *data, size_t i)
{
    if (v->e4m3_elements) return data[i];
    return nvfp4_unpack(data, i);
}

static float elem_value(const nvfp4_vview *v, uint8_t code)
{
    return v->e4m3_elements ? nvfp4_e4m3_to_f32(code) : nvfp4_e2m1_to_f32(code);
}

static float scale_value(const nvfp4_vview *v, uint8_t b)
{
    if (v->ue5m3_scales) return nvfp4_ue5m3_to_f32(b);
    return v->ue8m0_scales ? nvfp4_ue8m0_to_f32(b) : nvfp4_e4m3_to_f32(b);
}

/* E4M3 scale bytes: the te chain's diagnostics (vchain.h) apply. */
static bool e4m3_scales(const nvfp4_vview *v) { return !v->ue8m0_scales && !v->ue5m3_scales; }

/* A scale byte that decodes to 0 (E4M3 either sign, UE5M3 0x00; UE8M0 has no zero). */
static bool scale_is_zero(const nvfp4_vview *v, uint8_t b)
{
    return v->ue5m3_scales ? b == 0u : !v->ue8m0_scales && (b & 0x7Fu) == 0u;
}

static size_t block_rows_of(const nvfp4_vview *v) { return v->block_rows ? v->block_rows : 1; }
static size_t block_cols_of(const nvfp4_vview *v) { return v->block_cols ? v->block_cols : 16; }

/* Linear index of the block that holds element (r, c), row-major over blocks. */
static size_t block_index(const nvfp4_vview *v, size_t r, size_t c)
{
    return (r / block_rows_of(v)) * nvfp4_vview_scale_cols(v) + c / block_cols_of(v);
}

/* Index into the linear scale matrix of element (r, c): one byte per row. */
static size_t scale_index(const nvfp4_vview *v, size_t r, size_t c)
{
    return r * nvfp4_vview_scale_cols(v) + c / block_cols_of(v);
}

/* Element (r, c) of the input in the stored orientation (nvfp4_vview.x and its strides); 0.0f in the
 * padding beyond the elements x holds. */
static float x_at(const nvfp4_vview *v, size_t r, size_t c)
{
    size_t xr = v->x_rows || v->x_cols ? v->x_rows : v->rows, xc = v->x_rows || v->x_cols ? v->x_cols : v->cols;
    if (r >= xr || c >= xc) return 0.0f;
    bool strided = v->x_row_stride || v->x_col_stride;
    return v->x[r * (strided ? v->x_row_stride : v->cols) + c * (strided ? v->x_col_stride : 1)];
}

/* max |x| over the block that holds (r, c), fmaxf semantics (core). */
static float block_amax(const nvfp4_vview *v, size_t r, size_t c)
{
    size_t br = block_rows_of(v), bc = block_cols_of(v);
    size_t r0 = r / br * br, c0 = c / bc * bc;
    float acc = 0.0f;
    for (size_t i = r0; i < r0 + br && i < v->rows; i++)
        for (size_t j = c0; j < c0 + bc && j < v->cols; j++) acc = nvfp4_core_amax_step(acc, x_at(v, i, j), 0);
    return acc;
}

static bool f32_same(float a, float b)
{
    uint32_t ua, ub;
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    if (isnan(a) && isnan(b)) return true;
    return ua == ub;
}

static uint32_t f32_bits(float a)
{
    uint32_t u;
    memcpy(&u, &a, 4);
    return u;
}

/* ---- recording -------------------------------------------------------------- */

typedef struct {
    const nvfp4_vview *e, *a;
    const nvfp4_verify_opts *o;
    nvfp4_vreport *rep;
    const uint8_t *act_scale; /* the actual linear scales (given or unswizzled), or NULL */
    uint8_t *unswizzled;      /* owned */
} vctx;

static void record(vctx *c, const nvfp4_vmismatch *m)
{
    nvfp4_vreport *rep = c->rep;
    rep->mismatches[m->component]++;
    rep->reason_count[m->reason]++;
    if (rep->n_first < rep->max_first) rep->first[rep->n_first++] = *m;
}

static void record_size(vctx *c, nvfp4_vcomponent comp, size_t exp_bytes, size_t act_bytes)
{
    nvfp4_vmismatch m;
    memset(&m, 0, sizeof m);
    m.component = comp;
    m.input = NAN;
    m.scaled = NAN;
    m.expected_value = (float)exp_bytes;
    m.actual_value = (float)act_bytes;
    m.reason = NVFP4_VR_SIZE;
    record(c, &m);
}

/* ---- data ------------------------------------------------------------------- */

static nvfp4_vreason classify_code(vctx *c, size_t r, size_t col, uint8_t ec, uint8_t ac, float *x_out, float *y_out)
{
    const nvfp4_vview *e = c->e;
    size_t si = scale_index(e, r, col);
    uint8_t es = e->scale && si < e->scale_bytes ? e->scale[si] : 0;
    *x_out = NAN;
    *y_out = NAN;
    if (e->x) *x_out = x_at(e, r, col);
    bool te_like = e->x && e->scale && e->amax && e4m3_scales(e) && !e->e4m3_elements;
    /* the kernel's implied scaled value: its own scale byte and global amax where it wrote them */
    uint8_t ks = c->act_scale && e->scale && si < e->scale_bytes ? c->act_scale[si] : es;
    float kamax = e->amax ? *e->amax : NAN;
    if (c->a->amax && (c->a->amax_count ? c->a->amax_count : 1) == (e->amax_count ? e->amax_count : 1))
        kamax = *c->a->amax;
    float y = te_like ? nvfp4_vchain_te_scaled(*x_out, ks, kamax) : NAN;
    *y_out = y;
    if (e->x && isnan(*x_out)) return NVFP4_VR_NAN_POLICY;
    if (c->act_scale && e->scale && si < e->scale_bytes && c->act_scale[si] != es) return NVFP4_VR_SCALE_BYTE;
    if (e->e4m3_elements) return NVFP4_VR_ROUNDING;
    if ((ec & 7u) == 0 && (ac & 7u) == 0) return NVFP4_VR_SIGN_OF_ZERO;
    if (c->o->sr_scaled) {
        float ys = c->o->sr_scaled[r * e->cols + col];
        *y_out = ys;
        uint8_t dn = nvfp4_core_e2m1_encode(ys, NVFP4_CORE_SR, 0), up = nvfp4_core_e2m1_encode(ys, NVFP4_CORE_SR, 255);
        if ((ac == dn || ac == up) && (ec == dn || ec == up)) return NVFP4_VR_SR_BITS;
    }
    if (e->scale && scale_is_zero(e, es)) return NVFP4_VR_SCALE_UNDERFLOW;
    if (!te_like) return NVFP4_VR_ROUNDING;
    if (!(fabsf(y) <= 6.0f)) return NVFP4_VR_SATURATION;
    if (nvfp4_vchain_is_e2m1_tie(y)) return NVFP4_VR_TIE_RULE;
    if (nvfp4_vchain_ulps_to_boundary(y) <= 2.0f) return NVFP4_VR_NEAR_BOUNDARY;
    return NVFP4_VR_ROUNDING;
}

/* Per-tensor tallies the cause detectors need. */
typedef struct {
    size_t mism, ties_away, ties_other, negzero, nan, underflow_zeroed, near, scale_follow, other;
} data_tally;

static void compare_data(vctx *c, data_tally *t)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    memset(t, 0, sizeof *t);
    c->rep->compared[NVFP4_VC_DATA] = true;
    if (a->data_bytes != e->data_bytes) {
        record_size(c, NVFP4_VC_DATA, e->data_bytes, a->data_bytes);
        return;
    }
    size_t n = elem_count(e);
    c->rep->total[NVFP4_VC_DATA] = n;
    for (size_t i = 0; i < n; i++) {
        uint8_t ec = code_at(e, e->data, i), ac = code_at(e, a->data, i);
        if (ec == ac) continue;
        size_t r = i / e->cols, col = i % e->cols;
        nvfp4_vmismatch m;
        m.component = NVFP4_VC_DATA;
        m.index = i;
        m.row = r;
        m.col = col;
        m.block = block_index(e, r, col);
        m.expected_code = ec;
        m.actual_code = ac;
        m.expected_value = elem_value(e, ec);
        m.actual_value = elem_value(e, ac);
        m.reason = classify_code(c, r, col, ec, ac, &m.input, &m.scaled);
        record(c, &m);
        t->mism++;
        bool same_sign = (ec & 8u) == (ac & 8u);
        switch (m.reason) {
        case NVFP4_VR_TIE_RULE:
            if (same_sign && (ac & 7u) == (ec & 7u) + 1u) t->ties_away++;
            else t->ties_other++;
            break;
        case NVFP4_VR_SIGN_OF_ZERO:
            if (ec == 0x8u && ac == 0x0u) t->negzero++;
            else t->other++;
            break;
        case NVFP4_VR_NAN_POLICY: t->nan++; break;
        case NVFP4_VR_SCALE_UNDERFLOW:
            if ((ac & 7u) == 0) t->underflow_zeroed++;
            else t->other++;
            break;
        case NVFP4_VR_NEAR_BOUNDARY: t->near++; break;
        case NVFP4_VR_SCALE_BYTE: t->scale_follow++; break;
        default: t->other++; break;
        }
    }
}

/* ---- scales ------------------------------------------------------------------ */

typedef struct {
    size_t mism, off_by_one_up, off_by_one_down;
} scale_tally;

static void compare_scale_linear(vctx *c, scale_tally *t)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    memset(t, 0, sizeof *t);
    c->rep->compared[NVFP4_VC_SCALE] = true;
    if (a->scale_bytes != e->scale_bytes) {
        record_size(c, NVFP4_VC_SCALE, e->scale_bytes, a->scale_bytes);
        return;
    }
    size_t scols = nvfp4_vview_scale_cols(e);
    c->rep->total[NVFP4_VC_SCALE] = e->scale_bytes;
    for (size_t i = 0; i < e->scale_bytes; i++) {
        uint8_t es = e->scale[i], as = a->scale[i];
        if (es == as) continue;
        nvfp4_vmismatch m;
        m.component = NVFP4_VC_SCALE;
        m.index = i;
        m.row = i / scols;
        m.col = (i % scols) * block_cols_of(e);
        m.block = block_index(e, m.row, m.col);
        m.expected_code = es;
        m.actual_code = as;
        m.expected_value = scale_value(e, es);
        m.actual_value = scale_value(e, as);
        m.input = NAN;
        m.scaled = NAN;
        m.reason = NVFP4_VR_SCALE_BYTE;
        if (e->x && e->rows && m.col < e->cols) {
            m.input = block_amax(e, m.row, m.col); /* the block amax */
            if (e->amax && e4m3_scales(e)) {
                float s_enc = nvfp4_core_te_global_encode(*e->amax);
                float mult = s_enc * NVFP4_CORE_INV6;
                m.scaled = m.input * mult; /* what te casts to E4M3 */
            }
            if (isnan(m.input)) m.reason = NVFP4_VR_NAN_POLICY;
        }
        bool nan_scale = !e4m3_scales(e) ? (es == 0xFFu || as == 0xFFu) : ((es & 0x7Fu) == 0x7Fu || (as & 0x7Fu) == 0x7Fu);
        if (nan_scale) m.reason = NVFP4_VR_NAN_POLICY; /* a NaN scale byte (0x7F/0xFF) is NaN, not an underflow */
        else if (scale_is_zero(e, es)) m.reason = NVFP4_VR_SCALE_UNDERFLOW;
        else if (e4m3_scales(e) && (es & 0x7Fu) == 0x7Eu && fabsf(m.scaled) > 448.0f) m.reason = NVFP4_VR_SATURATION;
        else if (e->ue5m3_scales && es == 0xFEu) m.reason = NVFP4_VR_SATURATION;
        record(c, &m);
        t->mism++;
        if (e->ue5m3_scales) { /* unsigned: every byte is a magnitude */
            if (as == es + 1u) t->off_by_one_up++;
            else if (as + 1u == es) t->off_by_one_down++;
        } else if ((es & 0x80u) == (as & 0x80u)) {
            if ((as & 0x7Fu) == (es & 0x7Fu) + 1u) t->off_by_one_up++;
            else if ((as & 0x7Fu) + 1u == (es & 0x7Fu)) t->off_by_one_down++;
        }
    }
}

typedef struct {
    size_t mism, padding;
    unsigned pad_value[256];
} swz_tally;

static void compare_scale_swizzled(vctx *c, swz_tally *t)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    memset(t, 0, sizeof *t);
    c->rep->compared[NVFP4_VC_SCALE_SWIZZLED] = true;
    if (a->scale_swizzled_bytes != e->scale_swizzled_bytes) {
        record_size(c, NVFP4_VC_SCALE_SWIZZLED, e->scale_swizzled_bytes, a->scale_swizzled_bytes);
        return;
    }
    size_t n = e->scale_swizzled_bytes, scols = nvfp4_vview_scale_cols(e);
    /* Which bytes are padding: those no (r, c) of the logical matrix maps to (all of them when the buffer
     * is not the swizzled size of the view); asked only of differing bytes, so no map of the buffer is
     * built (it was as large as the buffer: 128 MiB for a 1 x 2^24 tensor). */
    bool layout_known = swz_size(e) == n;
    c->rep->total[NVFP4_VC_SCALE_SWIZZLED] = n;
    for (size_t i = 0; i < n; i++) {
        uint8_t es = e->scale_swizzled[i], as = a->scale_swizzled[i];
        if (es == as) continue;
        nvfp4_vmismatch m;
        memset(&m, 0, sizeof m);
        m.component = NVFP4_VC_SCALE_SWIZZLED;
        m.index = i;
        m.input = NAN;
        m.scaled = NAN;
        m.expected_code = es;
        m.actual_code = as;
        m.expected_value = scale_value(e, es);
        m.actual_value = scale_value(e, as);
        size_t r, k;
        bool is_data = layout_known && nvfp4_scale_layout_position(e->scale_layout, i, e->rows, scols, &r, &k);
        m.reason = is_data ? NVFP4_VR_SCALE_BYTE : NVFP4_VR_PADDING;
        if (!is_data) {
            t->padding++;
            t->pad_value[as]++;
        }
        record(c, &m);
        t->mism++;
    }
}

/* ---- amax and dequant ---------------------------------------------------------- */

static void compare_amax(vctx *c)
{
    size_t ne = c->e->amax_count ? c->e->amax_count : 1, na = c->a->amax_count ? c->a->amax_count : 1;
    c->rep->compared[NVFP4_VC_AMAX] = true;
    if (ne != na) { /* e.g. a per-row amax where the recipe has one: nothing compared (total 0) */
        record_size(c, NVFP4_VC_AMAX, 4 * ne, 4 * na);
        return;
    }
    c->rep->total[NVFP4_VC_AMAX] = ne;
    /* one amax, or one per stored row (row-scaled recipes: m.row names it) */
    for (size_t i = 0; i < ne; i++) {
        float ev = c->e->amax[i], av = c->a->amax[i];
        if (f32_same(ev, av)) continue;
        nvfp4_vmismatch m;
        memset(&m, 0, sizeof m);
        m.component = NVFP4_VC_AMAX;
        m.row = i;
        m.input = NAN;
        m.scaled = NAN;
        m.expected_code = f32_bits(ev);
        m.actual_code = f32_bits(av);
        m.expected_value = ev;
        m.actual_value = av;
        m.reason = NVFP4_VR_VALUE;
        record(c, &m);
    }
}

static size_t dq_cols(const nvfp4_vview *v) { return v->dequant_cols ? v->dequant_cols : v->cols; }

static void compare_dequant(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    c->rep->compared[NVFP4_VC_DEQUANT] = true;
    if (a->dequant_count != e->dequant_count) {
        record_size(c, NVFP4_VC_DEQUANT, e->dequant_count * 4, a->dequant_count * 4);
        return;
    }
    size_t n = e->dequant_count, dc = dq_cols(e);
    c->rep->total[NVFP4_VC_DEQUANT] = n;
    bool codes = a->data && a->data_bytes == e->data_bytes;
    for (size_t i = 0; i < n; i++) {
        float ev = e->dequant[i], av = a->dequant[i];
        if (f32_same(ev, av)) continue;
        nvfp4_vmismatch m;
        memset(&m, 0, sizeof m);
        m.component = NVFP4_VC_DEQUANT;
        m.index = i;
        m.row = i / dc;
        m.col = i % dc;
        size_t ei = m.row * e->cols + m.col; /* the element in the (padded) code layout */
        m.block = block_index(e, m.row, m.col);
        m.input = e->x ? x_at(e, m.row, m.col) : NAN;
        m.scaled = NAN;
        m.expected_code = f32_bits(ev);
        m.actual_code = f32_bits(av);
        m.expected_value = ev;
        m.actual_value = av;
        m.reason = NVFP4_VR_VALUE;
        size_t si = scale_index(e, m.row, m.col);
        if (codes && code_at(e, e->data, ei) != code_at(e, a->data, ei)) m.reason = NVFP4_VR_FOLLOWS;
        if (c->act_scale && e->scale && si < e->scale_bytes && c->act_scale[si] != e->scale[si])
            m.reason = NVFP4_VR_FOLLOWS;
        record(c, &m);
    }
}

/* ---- systematic causes ----------------------------------------------------------- */

static double pct(size_t a, size_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* Mismatching bytes of data against expected codes with each byte's nibbles swapped. */
static void detect_swapped_nibbles(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (e->e4m3_elements || !a->data || a->data_bytes != e->data_bytes || !c->rep->mismatches[NVFP4_VC_DATA]) return;
    size_t raw = 0, swapped = 0, n = e->data_bytes;
    for (size_t i = 0; i < n; i++) {
        uint8_t eb = e->data[i], ab = a->data[i];
        uint8_t sw = (uint8_t)((eb >> 4) | (eb << 4));
        raw += eb != ab;
        swapped += sw != ab;
    }
    if (swapped == 0 || swapped * 100 < raw)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SWAPPED_NIBBLES,
                                "data: nibbles swapped in %zu of %zu differing bytes: element 2j belongs in the LOW "
                                "nibble of byte j, element 2j+1 in the high nibble",
                                raw - swapped, raw);
}

/* The actual codes equal the expected codes written in the other orientation
 * (column-major), or a candidate flagged as the transposed output matches. */
static void detect_transposed_layout(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (!a->data || a->data_bytes != e->data_bytes || !c->rep->mismatches[NVFP4_VC_DATA]) return;
    size_t rows = e->rows, cols = e->cols, n = rows * cols, same = 0;
    if (rows < 2 || cols < 2) return;
    /* actual element j of the transposed [cols, rows] matrix is expected (j % rows, j / rows) */
    for (size_t j = 0; j < n; j++) {
        size_t r = j % rows, col = j / rows;
        same += code_at(e, a->data, j) == code_at(e, e->data, r * cols + col);
    }
    if (same == n)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_TRANSPOSED_DATA,
                                "data: the codes are the expected ones stored transposed ([%zu, %zu] instead of "
                                "[%zu, %zu]%s)", cols, rows, rows, cols, rows % 2 ? "" : ": two rows paired in each "
                                "byte, the MN-major packing of Triton's dot_scaled (lhs_k_pack / rhs_k_pack False)");
}

static void detect_scale_layouts(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    /* linear bytes in the swizzled slot: compare the prefix that linear covers */
    if (a->scale_swizzled && e->scale && c->rep->mismatches[NVFP4_VC_SCALE_SWIZZLED] &&
        a->scale_swizzled_bytes >= e->scale_bytes && e->scale_bytes > 0 &&
        memcmp(a->scale_swizzled, e->scale, e->scale_bytes) == 0)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_LINEAR_FOR_SWIZZLED,
                                "scale_swizzled: holds the LINEAR scale layout (row-major [%zu, %zu]); the %s "
                                "layout was expected (nvfp4_scale_to_layout)%s",
                                e->rows, nvfp4_vview_scale_cols(e), nvfp4_scale_layout_name(e->scale_layout),
                                e->scale_layout == NVFP4_SCALE_LAYOUT_KV_V ? ": the KV cache's V scales written "
                                "unswizzled, as K's" : "");
    if (a->scale && e->scale_swizzled && c->rep->mismatches[NVFP4_VC_SCALE] && a->scale_bytes > 0 &&
        a->scale_bytes <= e->scale_swizzled_bytes && memcmp(a->scale, e->scale_swizzled, a->scale_bytes) == 0)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SWIZZLED_FOR_LINEAR,
                                "scale: holds the %s SWIZZLED layout; the linear row-major layout was "
                                "expected (nvfp4_scale_from_layout)", nvfp4_scale_layout_name(e->scale_layout));
}

/* The catalogued placements of the linear scales in the 128x4 swizzled buffer
 * that are pure permutations (src/verify/mutants.c), tried against the
 * kernel's scale_swizzled when it differs. */
static const char *const scale_placements[] = {"layout-swizzle-padded-stride", "layout-swizzle-plain-tile",
                                               "layout-swizzle-cols-unpadded"};
#define N_PLACEMENTS (sizeof scale_placements / sizeof scale_placements[0])

/* Of the bytes placement `swz` puts a nonzero scale in, how many the kernel's
 * buffer holds equal (*placed: how many it puts). */
static size_t placement_agreement(const uint8_t *swz, const uint8_t *act, size_t n, size_t *placed)
{
    size_t eq = 0;
    *placed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!swz[i]) continue;
        (*placed)++;
        eq += act[i] == swz[i];
    }
    return eq;
}

/* scale_swizzled follows another placement of the expected scale bytes: the
 * rule is that of the placements compared (the expected cuBLAS one and the
 * catalogued permutations), the one under which the kernel's buffer agrees
 * on the most placed bytes is named when it agrees on at least 90% of them
 * and on at least 20 points more than the expected placement. The values may
 * differ slightly (the scale arithmetic is another step); the positions are
 * what this decides. Proven when it agrees on every placed byte and no other
 * placement does; else consistent, the placements as good listed. */
static void detect_scale_permutation(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (!a->scale_swizzled || !e->scale || !e->scale_swizzled || !c->rep->mismatches[NVFP4_VC_SCALE_SWIZZLED] ||
        a->scale_swizzled_bytes != e->scale_swizzled_bytes || !e->scale_bytes ||
        e->scale_layout != NVFP4_SCALE_LAYOUT_128X4) /* the catalogued placements are of the 128x4 buffer */
        return;
    size_t n = e->scale_swizzled_bytes, placed, sc = nvfp4_vview_scale_cols(e);
    size_t eq_exp = placement_agreement(e->scale_swizzled, a->scale_swizzled, n, &placed);
    double f_exp = placed ? (double)eq_exp / (double)placed : 1.0;
    uint8_t *swz = malloc(n);
    uint8_t *lin = malloc(e->scale_bytes);
    if (!swz || !lin) goto done;
    double f[N_PLACEMENTS] = {0};
    size_t best = N_PLACEMENTS, exact = 0;
    for (size_t k = 0; k < N_PLACEMENTS; k++) {
        const nvfp4_mutant *m = (const nvfp4_mutant *)(const void *)nvfp4_mutant_find(scale_placements[k]);
        if (!m || !m->layout) continue;
        memcpy(lin, e->scale, e->scale_bytes);
        nvfp4_qtensor t;
        memset(&t, 0, sizeof t);
        t.scale = lin;
        t.scale_cols = sc;
        t.scale_rows = sc ? e->scale_bytes / sc : 0;
        nvfp4_mctx mc;
        memset(&mc, 0, sizeof mc);
        m->layout(&mc, &t, swz, n);
        size_t p, eq = placement_agreement(swz, a->scale_swizzled, n, &p);
        f[k] = p ? (double)eq / (double)p : 0.0;
        exact += p && eq == p && memcmp(swz, e->scale_swizzled, n) != 0;
        if (best == N_PLACEMENTS || f[k] > f[best]) best = k;
    }
    if (best == N_PLACEMENTS || f[best] < 0.9 || f[best] < f_exp + 0.2) goto done;
    char alts[256] = "";
    for (size_t k = 0; k < N_PLACEMENTS; k++)
        if (k != best && f[k] >= f[best])
            snprintf(alts + strlen(alts), sizeof alts - strlen(alts), "%s%s", alts[0] ? ", " : "", scale_placements[k]);
    size_t before = c->rep->n_causes;
    nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SCALE_PERMUTED,
                            "scale_swizzled: your scales are placed as %s, where the cuBLAS 128x4 layout was "
                            "expected (a permutation: %.1f%% of the scale bytes it places agree, %.1f%% under the "
                            "expected layout)",
                            scale_placements[best], 100.0 * f[best], 100.0 * f_exp);
    if (c->rep->n_causes == before) goto done; /* the report's cause list is full */
    nvfp4_vcause_line *l = &c->rep->causes[c->rep->n_causes - 1];
    l->step = "layout";
    snprintf(l->alternatives, sizeof l->alternatives, "%s", alts);
    if (f[best] == 1.0 && exact == 1 && !alts[0]) {
        l->status = NVFP4_CAUSE_PROVEN;
        snprintf(l->evidence, sizeof l->evidence, "every scale byte it places agrees, and no other of the %zu "
                 "placements compared does", (size_t)N_PLACEMENTS + 1);
    } else {
        l->status = NVFP4_CAUSE_CONSISTENT;
        snprintf(l->evidence, sizeof l->evidence, "the positions follow it; %s", f[best] == 1.0 ?
                 "another placement agrees as well" : "some scale values differ too (another step)");
    }
done:
    free(swz);
    free(lin);
}

/* Whether buf, read in layout l, holds exactly the linear scales lin
 * (rows x cols): every scale byte equal. */
static bool layout_holds(nvfp4_scale_layout l, const uint8_t *buf, size_t n, const uint8_t *lin, size_t rows,
                         size_t cols)
{
    size_t pr, pc;
    if (nvfp4_scale_layout_shape(l, rows, cols, &pr, &pc) != n) return false;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < cols; k++)
            if (buf[nvfp4_scale_layout_offset(l, r, k, cols)] != lin[r * cols + k]) return false;
    return true;
}

/* scale_swizzled holds the expected scales in another named layout
 * (nvfp4/layout.h): read in that layout, every scale byte equals the
 * expected linear one, while read in the expected layout they do not. The
 * layouts that fit are named; proven when exactly one fits and the codes
 * were compared and all equal (then the scales and codes are the expected
 * ones, only their placement differs); else consistent. The linear layout
 * in a buffer of another size is linear-for-swizzled's. */
static void detect_scale_layout_mismatch(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    size_t sc = nvfp4_vview_scale_cols(e), n = a->scale_swizzled_bytes;
    if (!a->scale_swizzled || !e->scale || !e->scale_bytes || !c->rep->mismatches[NVFP4_VC_SCALE_SWIZZLED] ||
        e->scale_bytes != e->rows * sc || layout_holds(e->scale_layout, a->scale_swizzled, n, e->scale, e->rows, sc))
        return;
    char fits[128] = "";
    size_t n_fit = 0;
    nvfp4_scale_layout first = NVFP4_SCALE_LAYOUT_COUNT;
    for (unsigned l = 0; l < NVFP4_SCALE_LAYOUT_COUNT; l++) {
        if (l == (unsigned)e->scale_layout || !layout_holds((nvfp4_scale_layout)l, a->scale_swizzled, n, e->scale, e->rows, sc))
            continue;
        if (l == NVFP4_SCALE_LAYOUT_LINEAR && nvfp4_vreport_has_cause(c->rep, NVFP4_CAUSE_LINEAR_FOR_SWIZZLED)) return;
        snprintf(fits + strlen(fits), sizeof fits - strlen(fits), "%s%s", n_fit ? ", " : "",
                 nvfp4_scale_layout_name((nvfp4_scale_layout)l));
        if (!n_fit++) first = (nvfp4_scale_layout)l;
    }
    if (!n_fit) return;
    bool codes_equal = c->rep->compared[NVFP4_VC_DATA] && !c->rep->mismatches[NVFP4_VC_DATA];
    size_t before = c->rep->n_causes;
    nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SCALE_LAYOUT,
                            "scale_swizzled: your scales are in layout %s where %s was expected (every one of the "
                            "%zu scale bytes read in %s equals the expected one: a permutation, not wrong values)",
                            n_fit == 1 ? nvfp4_scale_layout_name(first) : fits,
                            nvfp4_scale_layout_name(e->scale_layout), e->scale_bytes,
                            n_fit == 1 ? "it" : "each");
    if (c->rep->n_causes == before) return; /* the report's cause list is full */
    nvfp4_vcause_line *l = &c->rep->causes[c->rep->n_causes - 1];
    l->step = "layout";
    if (n_fit == 1 && codes_equal) {
        l->status = NVFP4_CAUSE_PROVEN;
        snprintf(l->evidence, sizeof l->evidence, "all %zu scale bytes equal under %s, none of the other %u layouts "
                 "holds them, and all %zu codes equal", e->scale_bytes, nvfp4_scale_layout_name(first),
                 (unsigned)NVFP4_SCALE_LAYOUT_COUNT - 1, c->rep->total[NVFP4_VC_DATA]);
    } else {
        l->status = NVFP4_CAUSE_CONSISTENT;
        snprintf(l->alternatives, sizeof l->alternatives, "%s", n_fit > 1 ? fits : "");
        snprintf(l->evidence, sizeof l->evidence, "%s", n_fit > 1 ? "on this shape several layouts place the scales "
                 "alike" : !c->rep->compared[NVFP4_VC_DATA] ? "the scale bytes agree under it; the codes were not "
                 "compared" : "the scale bytes agree under it; some codes differ (another step)");
    }
}

static void detect_padding(vctx *c, const swz_tally *t)
{
    if (!t->padding || t->padding != t->mism) return;
    unsigned best = 0;
    for (unsigned v = 1; v < 256; v++)
        if (t->pad_value[v] > t->pad_value[best]) best = v;
    nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_PADDING_BYTES,
                            "scale_swizzled: only padding bytes differ (%zu), most hold 0x%02X (%u); padding must be "
                            "0x00 as TE's swizzle writes it",
                            t->padding, best, best);
}

static void detect_scale_off_by_one(vctx *c, const scale_tally *t)
{
    if (!t->mism || t->off_by_one_up + t->off_by_one_down != t->mism) return;
    nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SCALE_OFF_BY_ONE,
                            "scale: every differing scale byte (%zu of %zu blocks) is off by one code (+1: %zu, -1: "
                            "%zu): a rounding difference in the block-scale arithmetic",
                            t->mism, c->rep->total[NVFP4_VC_SCALE], t->off_by_one_up, t->off_by_one_down);
}

/* Whether catalogued mutants were given as candidates: their exact matches
 * then name the formulas with a status (detect_exact_matches), so the
 * single-formula detectors below would only repeat one of them unchecked. */
static bool has_mutant_candidates(const vctx *c)
{
    for (size_t i = 0; i < c->o->n_candidates; i++)
        if (c->o->candidates[i].mutant) return true;
    return false;
}

/* Recompute the scale bytes with the known wrong block-scale formulas. */
static void detect_block_scale_formula(vctx *c, const scale_tally *t)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (has_mutant_candidates(c)) return;
    if (!t->mism || !e->x || !e->amax || !e4m3_scales(e) || !a->scale || a->scale_bytes != e->scale_bytes) return;
    size_t scols = nvfp4_vview_scale_cols(e), agree = 0, n = e->scale_bytes;
    for (size_t i = 0; i < n; i++) {
        size_t r = i / scols, col = (i % scols) * block_cols_of(e);
        uint8_t alt = nvfp4_vchain_scale_div6_then_senc(block_amax(e, r, col), *e->amax);
        agree += alt == a->scale[i];
    }
    if (agree == n)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_BLOCK_SCALE_FORMULA,
                                "scale: every byte equals e4m3((block_amax/6)*S_enc), which rounds twice; te computes "
                                "e4m3(block_amax*(S_enc*fl(1/6))) with the product S_enc*fl(1/6) first");
}

/* Recompute the codes with the encode factor S_enc/s (with the actual scales). */
static void detect_encode_factor(vctx *c, const data_tally *t)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (has_mutant_candidates(c)) return;
    if (!t->mism || !e->x || !e->amax || !e->scale || e->e4m3_elements || !e4m3_scales(e)) return;
    if (t->near + t->ties_other + t->ties_away == 0) return;
    size_t n = elem_count(e), agree = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = i / e->cols, col = i % e->cols;
        uint8_t s = e->scale[scale_index(e, r, col)];
        float y = x_at(e, r, col) * nvfp4_vchain_factor_senc_over_s(s, *e->amax);
        agree += nvfp4_core_e2m1_encode(y, NVFP4_CORE_RN, 0) == code_at(e, a->data, i);
    }
    if (agree == n)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_ENCODE_FACTOR,
                                "data: every code equals e2m1(x*(S_enc/s)); te's encode factor is 1/(s*S_dec), which "
                                "differs in the last bit for about a third of the scales (%zu codes flipped)",
                                t->mism);
}

/* A policy is named when it explains (nearly) every differing code: at least
 * 90%, so that one unrelated difference does not hide it. */
static bool most(size_t part, size_t all) { return part && part * 10 >= all * 9; }

static void detect_element_policies(vctx *c, const data_tally *t)
{
    if (!t->mism) return;
    if (most(t->ties_away, t->mism))
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_TIES_AWAY,
                                "data: E2M1 ties rounded away from zero: %zu of %zu differing codes are exact midpoints "
                                "rounded up in magnitude; ties must go to the even code (0, 1, 2, 4 | 0.5, 1.5, 3, 6 are "
                                "odd)",
                                t->ties_away, t->mism);
    if (most(t->negzero, t->mism))
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_NEGATIVE_ZERO,
                                "data: -0 written as +0 (%zu codes 0x8 became 0x0): the sign of zero results is kept "
                                "(-0.0 and negative underflow give 0x8)",
                                t->negzero);
    if (most(t->nan, t->mism))
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_NAN_POLICY,
                                "data: NaN inputs differ (%zu of %zu): te writes NaN as 0x7 (+6), satfinite", t->nan,
                                t->mism);
    if (most(t->underflow_zeroed, t->mism))
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_UNDERFLOW_ZEROED,
                                "data: blocks whose scale underflows to 0 got code 0 (%zu elements); te's encode factor "
                                "becomes FLT_MAX there and the codes saturate to +-6",
                                t->underflow_zeroed);
}

/* An SR golden whose codes differ while the scales agree: infer which random
 * byte each element consumed (src/verify/sr.c, bit-exact mode, one sample). */
static void detect_sr_byte_order(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    const nvfp4_verify_opts *o = c->o;
    if (!o->sr_scaled || e->e4m3_elements || !a->data || a->data_bytes != e->data_bytes) return;
    if (!c->rep->mismatches[NVFP4_VC_DATA] || c->rep->mismatches[NVFP4_VC_SCALE]) return;
    size_t n = elem_count(e);
    uint8_t *codes = malloc(n ? n : 1);
    if (!codes) return;
    for (size_t i = 0; i < n; i++) codes[i] = code_at(e, a->data, i);
    const uint8_t *cp[1] = {codes};
    nvfp4_sr_input in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.y = o->sr_scaled;
    in.samples = 1;
    in.codes = cp;
    in.alpha = 0.001;
    in.bitexact = true;
    in.seed = o->sr_seed;
    in.offset = o->sr_offset;
    in.offset_step = 1;
    in.block_elems = o->sr_block_elems == 32 ? 32 : 16;
    nvfp4_sr_report sr;
    if (nvfp4_sr_test(&in, &sr, NULL) == NVFP4_OK && sr.byte_map_found && sr.bitexact_mismatches)
        for (size_t i = 0; i < sr.n_causes; i++)
            if (sr.causes[i].cause == NVFP4_CAUSE_SR_BYTE_ORDER)
                nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_SR_BYTE_ORDER, "%s", sr.causes[i].line);
    free(codes);
}

/* a's scale_swizzled equals k's: byte for byte in the same layout; else k's
 * linear scales laid out in a's layout, padding zero (the candidates are
 * computed in the cuBLAS layout, the expected view may name another). */
static bool swizzled_equal(const nvfp4_vview *a, const nvfp4_vview *k)
{
    if (a->scale_layout == k->scale_layout)
        return k->scale_swizzled && a->scale_swizzled_bytes == k->scale_swizzled_bytes &&
               !memcmp(a->scale_swizzled, k->scale_swizzled, a->scale_swizzled_bytes);
    size_t sc = nvfp4_vview_scale_cols(a), n = a->scale_swizzled_bytes;
    if (!k->scale || k->scale_bytes != a->rows * sc || swz_size(a) != n) return false;
    for (size_t i = 0; i < n; i++) {
        size_t r, col;
        bool is_scale = nvfp4_scale_layout_position(a->scale_layout, i, a->rows, sc, &r, &col);
        if (a->scale_swizzled[i] != (is_scale ? k->scale[r * sc + col] : 0)) return false;
    }
    return true;
}

/* Compare the actual view with each candidate (components the actual holds). */
static bool view_equal_present(const nvfp4_vview *a, const nvfp4_vview *k)
{
    bool any = false;
    if (a->data) {
        if (!k->data || a->data_bytes != k->data_bytes || memcmp(a->data, k->data, a->data_bytes)) return false;
        any = true;
    }
    if (a->scale) {
        if (!k->scale || a->scale_bytes != k->scale_bytes || memcmp(a->scale, k->scale, a->scale_bytes)) return false;
        any = true;
    }
    if (a->scale_swizzled) {
        if (!swizzled_equal(a, k)) return false;
        any = true;
    }
    return any;
}

/* The first element or byte where candidate view k differs from the actual
 * output, as "element (r, c) is 0xA, NAME gives 0xB"; false when none. */
static bool deciding_element(const vctx *c, const nvfp4_vview *k, const char *name, char *buf, size_t n)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (a->data && k->data && a->data_bytes == k->data_bytes && a->data_bytes == e->data_bytes)
        for (size_t i = 0; i < elem_count(e); i++) {
            uint8_t ac = code_at(e, a->data, i), kc = code_at(e, k->data, i);
            if (ac != kc) {
                snprintf(buf, n, "element (%zu, %zu) is 0x%X, %s gives 0x%X", i / e->cols, i % e->cols, ac, name, kc);
                return true;
            }
        }
    if (a->scale && k->scale && a->scale_bytes == k->scale_bytes) {
        size_t sc = nvfp4_vview_scale_cols(e);
        for (size_t i = 0; i < a->scale_bytes; i++)
            if (a->scale[i] != k->scale[i]) {
                snprintf(buf, n, "scale (%zu, %zu) is 0x%02X, %s gives 0x%02X", sc ? i / sc : 0, sc ? i % sc : 0,
                         a->scale[i], name, k->scale[i]);
                return true;
            }
    }
    if (a->scale_swizzled && k->scale_swizzled && a->scale_swizzled_bytes == k->scale_swizzled_bytes)
        for (size_t i = 0; i < a->scale_swizzled_bytes; i++)
            if (a->scale_swizzled[i] != k->scale_swizzled[i]) {
                snprintf(buf, n, "scale_swizzled byte %zu is 0x%02X, %s gives 0x%02X", i, a->scale_swizzled[i], name,
                         k->scale_swizzled[i]);
                return true;
            }
    return false;
}

static const char *cand_step(const nvfp4_vcandidate *k) { return k->mutant ? nvfp4_mutant_step_id(k->mutant) : "recipe"; }

static void append(char *buf, size_t n, const char *word)
{
    size_t len = strlen(buf);
    if (len + strlen(word) + 8 < n) snprintf(buf + len, n - len, "%s%s", len ? ", " : "", word);
    else if (len + 5 < n && !strstr(buf, ", ...")) snprintf(buf + len, n - len, ", ...");
}

/* Status of the cause naming candidate `first` among the exact matches
 * match[0..nm): proven when it is the only one, the evidence citing for
 * up to three other candidates of its step the element that excludes
 * them; else consistent, the other matches listed as alternatives. */
static void set_status(vctx *c, nvfp4_vcause_line *l, const nvfp4_vcandidate *first, const nvfp4_vcandidate *const *match,
                       size_t nm)
{
    const nvfp4_verify_opts *o = c->o;
    l->step = cand_step(first);
    l->evidence[0] = l->alternatives[0] = '\0';
    if (nm > 1) {
        l->status = NVFP4_CAUSE_CONSISTENT;
        for (size_t i = 0; i < nm; i++)
            if (match[i] != first) append(l->alternatives, sizeof l->alternatives, match[i]->name);
        snprintf(l->evidence, sizeof l->evidence, "%zu candidates give exactly these bytes", nm);
        return;
    }
    l->status = NVFP4_CAUSE_PROVEN;
    size_t same_step = 0, cited = 0, len = 0;
    for (size_t i = 0; i < o->n_candidates; i++) {
        const nvfp4_vcandidate *k = &o->candidates[i];
        if (k == first || k->transposed || strcmp(cand_step(k), l->step) != 0) continue;
        same_step++;
        char one[160];
        if (cited < 3 && deciding_element(c, &k->view, k->name, one, sizeof one) &&
            len + strlen(one) + 4 < sizeof l->evidence) {
            len += (size_t)snprintf(l->evidence + len, sizeof l->evidence - len, "%s%s", cited ? "; " : "", one);
            cited++;
        }
    }
    if (len + 60 < sizeof l->evidence)
        snprintf(l->evidence + len, sizeof l->evidence - len, "%sthe only one of %zu candidates (%zu of step %s) to "
                 "match", len ? "; " : "", o->n_candidates, same_step + 1, l->step);
}

/* A kernel whose bytes equal a mutant of the global scale or the encode
 * factor scales by another factor: an element whose te scaled value is an
 * exact E2M1 midpoint is not a tie for it but a value a few ulps away. */
static void relabel_ties(vctx *c, const char *step)
{
    if (strcmp(step, "global-scale") != 0 && strcmp(step, "encode-factor") != 0) return;
    nvfp4_vreport *rep = c->rep;
    for (size_t i = 0; i < rep->n_first; i++)
        if (rep->first[i].reason == NVFP4_VR_TIE_RULE) rep->first[i].reason = NVFP4_VR_NEAR_BOUNDARY;
    size_t moved = rep->reason_count[NVFP4_VR_TIE_RULE];
    rep->reason_count[NVFP4_VR_TIE_RULE] = 0;
    rep->reason_count[NVFP4_VR_NEAR_BOUNDARY] += moved;
}

/* Every candidate whose bytes equal the actual output exactly, catalogued
 * mutants and recipe variants alike: the first mutant is named with its
 * formula (cause known-bug), the first recipe too (different-recipe); each
 * is proven only when no other candidate gives the same bytes. */
static void detect_exact_matches(vctx *c, bool *any)
{
    const nvfp4_verify_opts *o = c->o;
    const nvfp4_vcandidate **match = malloc(o->n_candidates * sizeof *match);
    if (!match) return;
    size_t nm = 0;
    const nvfp4_vcandidate *mutant = NULL, *recipe = NULL, *transposed = NULL;
    for (size_t i = 0; i < o->n_candidates; i++) {
        const nvfp4_vcandidate *k = &o->candidates[i];
        if (!view_equal_present(c->a, &k->view)) continue;
        if (k->transposed) {
            if (!transposed) transposed = k;
            continue;
        }
        match[nm++] = k;
        if (k->mutant && !mutant) mutant = k;
        if (!k->mutant && !recipe) recipe = k;
    }
    *any = nm || transposed;
    if (mutant) relabel_ties(c, nvfp4_mutant_step_id(mutant->mutant));
    if (mutant) {
        const nvfp4_mutant_info *m = mutant->mutant;
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_KNOWN_BUG, "%s: your kernel computes %s (%s): %s", m->name,
                                m->formula, m->step, m->source);
        if (c->rep->n_causes) set_status(c, &c->rep->causes[c->rep->n_causes - 1], mutant, match, nm);
    }
    if (transposed)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_TRANSPOSED_DATA,
                                "data: the output equals the other orientation (%s): rows and columns are swapped",
                                transposed->name);
    else if (recipe) {
        const char *exp = o->expected_name ? o->expected_name : "the expected one";
        if (nm == 1)
            nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_DIFFERENT_RECIPE,
                                    "recipe: the output matches recipe %s exactly, not %s", recipe->name, exp);
        else
            nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_DIFFERENT_RECIPE,
                                    "recipe: the output matches %s and %zu other candidates exactly "
                                    "(indistinguishable on this input), not %s",
                                    recipe->name, nm - 1, exp);
        if (c->rep->n_causes) set_status(c, &c->rep->causes[c->rep->n_causes - 1], recipe, match, nm);
    }
    free(match);
}

static void detect_candidates(vctx *c)
{
    const nvfp4_verify_opts *o = c->o;
    if (!o->n_candidates) return;
    bool data_or_scale_bad = c->rep->mismatches[NVFP4_VC_DATA] || c->rep->mismatches[NVFP4_VC_SCALE] ||
                             c->rep->mismatches[NVFP4_VC_SCALE_SWIZZLED];
    if (!data_or_scale_bad) return;
    bool any = false;
    detect_exact_matches(c, &any);
    if (any) return;
    /* no exact match: name the nearest when it beats the expected recipe */
    nvfp4_vrank *rank = malloc(o->n_candidates * sizeof *rank);
    nvfp4_vcandidate *recipes = malloc(o->n_candidates * sizeof *recipes);
    size_t nr = 0;
    for (size_t i = 0; rank && recipes && i < o->n_candidates; i++)
        if (!o->candidates[i].mutant) recipes[nr++] = o->candidates[i];
    if (!rank || !recipes || !nr) {
        free(rank);
        free(recipes);
        return;
    }
    nvfp4_identify_rank(c->a, recipes, nr, rank);
    free(recipes);
    size_t exp_total = 0, exp_match = 0;
    if (c->a->data && c->a->data_bytes == c->e->data_bytes) {
        exp_total += c->e->data_bytes;
        for (size_t i = 0; i < c->e->data_bytes; i++) exp_match += c->a->data[i] == c->e->data[i];
    }
    double exp_frac = exp_total ? (double)exp_match / (double)exp_total : 0.0;
    double best = rank[0].data_total ? (double)rank[0].data_match / (double)rank[0].data_total : 0.0;
    if (best > exp_frac && rank[0].data_total)
        nvfp4_vreport_add_cause(c->rep, NVFP4_CAUSE_DIFFERENT_RECIPE,
                                "recipe: nearest other recipe is %s (%.4f%% of data bytes match, %.4f%% for %s)",
                                rank[0].name, pct(rank[0].data_match, rank[0].data_total), 100.0 * exp_frac,
                                o->expected_name ? o->expected_name : "the expected recipe");
    free(rank);
}

/* ---- identification ------------------------------------------------------------------ */

static size_t count_equal(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    if (!a || !b || na != nb) return 0;
    size_t s = 0;
    for (size_t i = 0; i < na; i++) s += a[i] == b[i];
    return s;
}

void nvfp4_identify_rank(const nvfp4_vview *actual, const nvfp4_vcandidate *cand, size_t n, nvfp4_vrank *rank)
{
    for (size_t i = 0; i < n; i++) {
        const nvfp4_vview *k = &cand[i].view;
        nvfp4_vrank *r = &rank[i];
        memset(r, 0, sizeof *r);
        r->name = cand[i].name;
        if (actual->data) {
            r->data_total = actual->data_bytes > k->data_bytes ? actual->data_bytes : k->data_bytes;
            r->data_match = count_equal(actual->data, actual->data_bytes, k->data, k->data_bytes);
        }
        if (actual->scale) {
            r->scale_total = actual->scale_bytes > k->scale_bytes ? actual->scale_bytes : k->scale_bytes;
            r->scale_match = count_equal(actual->scale, actual->scale_bytes, k->scale, k->scale_bytes);
        } else if (actual->scale_swizzled) {
            size_t kn = k->scale_swizzled_bytes;
            r->scale_total = actual->scale_swizzled_bytes > kn ? actual->scale_swizzled_bytes : kn;
            r->scale_match = count_equal(actual->scale_swizzled, actual->scale_swizzled_bytes, k->scale_swizzled, kn);
        }
        size_t tot = r->data_total + r->scale_total;
        r->fraction = tot ? (double)(r->data_match + r->scale_match) / (double)tot : 0.0;
    }
    /* insertion sort: stable, n is small */
    for (size_t i = 1; i < n; i++) {
        nvfp4_vrank v = rank[i];
        size_t j = i;
        while (j > 0 && rank[j - 1].fraction < v.fraction) {
            rank[j] = rank[j - 1];
            j--;
        }
        rank[j] = v;
    }
}

/* ---- entry point ------------------------------------------------------------------------- */

static nvfp4_status check_expected(const nvfp4_vview *e, nvfp4_error *err)
{
    if (!e->rows || !e->cols) return nvfp4_error_set(err, NVFP4_EINVAL, "verify: the expected output has an empty shape");
    size_t n;
    if (!nvfp4_mul_size(e->rows, e->cols, &n)) return nvfp4_error_set(err, NVFP4_ENOMEM, "verify: shape overflows");
    if (e->data && e->data_bytes != data_size(e))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "verify: expected data has %zu bytes, its shape needs %zu",
                               e->data_bytes, data_size(e));
    if (e->scale && e->scale_bytes != e->rows * nvfp4_vview_scale_cols(e))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "verify: expected scale has %zu bytes, its shape needs %zu",
                               e->scale_bytes, e->rows * nvfp4_vview_scale_cols(e));
    if (e->scale_swizzled && e->scale_swizzled_bytes != swz_size(e))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "verify: expected scale_swizzled has %zu bytes, its shape needs %zu "
                               "in the %s layout", e->scale_swizzled_bytes, swz_size(e),
                               nvfp4_scale_layout_name(e->scale_layout));
    if (e->dequant && (dq_cols(e) > e->cols || e->dequant_count % dq_cols(e) || e->dequant_count / dq_cols(e) > e->rows))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "verify: expected dequant has %zu values, its shape needs %zu",
                               e->dequant_count, n);
    return NVFP4_OK;
}

/* The actual scales in linear order: given, or unswizzled from the swizzled
 * component when that has the right size (used to explain code mismatches). */
static void actual_linear_scales(vctx *c)
{
    const nvfp4_vview *e = c->e, *a = c->a;
    if (!e->scale) return;
    if (a->scale && a->scale_bytes == e->scale_bytes) {
        c->act_scale = a->scale;
        return;
    }
    size_t scols = nvfp4_vview_scale_cols(e);
    if (!a->scale_swizzled || a->scale_swizzled_bytes != swz_size(e)) return;
    c->unswizzled = malloc(e->scale_bytes ? e->scale_bytes : 1);
    if (!c->unswizzled) return;
    nvfp4_scale_from_layout(e->scale_layout, a->scale_swizzled, e->rows, scols, c->unswizzled);
    c->act_scale = c->unswizzled;
}

/* ---- the global scale the kernel used (gscale.h) ------------------------------- */

/* Whether block (r, c)'s amax is the same under every catalogued block-amax
 * rule: no NaN or Inf in it, its largest magnitude a positive element (a
 * signed max agrees), and for a 16x16 tile the first row holds it. */
static bool block_amax_robust(const nvfp4_vview *v, size_t r, size_t c, float bamax)
{
    size_t br = block_rows_of(v), bc = block_cols_of(v);
    size_t r0 = r / br * br, c0 = c / bc * bc;
    float smax = -INFINITY, first = 0.0f;
    for (size_t i = r0; i < r0 + br && i < v->rows; i++)
        for (size_t j = c0; j < c0 + bc && j < v->cols; j++) {
            float x = x_at(v, i, j);
            if (!isfinite(x)) return false;
            smax = x > smax ? x : smax;
            if (i == r0) first = nvfp4_core_amax_step(first, x, 0);
        }
    return smax == bamax && (br == 1 || first == bamax);
}

static bool block_has_nan(const nvfp4_vview *v, size_t r, size_t c)
{
    size_t br = block_rows_of(v), bc = block_cols_of(v);
    size_t r0 = r / br * br, c0 = c / bc * bc;
    for (size_t i = r0; i < r0 + br && i < v->rows; i++)
        for (size_t j = c0; j < c0 + bc && j < v->cols; j++)
            if (isnan(x_at(v, i, j))) return true;
    return false;
}

/* "inside: VALUE (NAMES); ..." for the known global rules whose value lies in the interval. */
static void list_inside(const nvfp4_core_recipe *core, float amax, const nvfp4_vreport *rep, char *buf, size_t n)
{
    nvfp4_gscale_named cand[48];
    size_t nc = nvfp4_gscale_candidates(core, amax, cand, 48), used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < nc; k++) {
        if (!(cand[k].value >= rep->gscale_lo && cand[k].value <= rep->gscale_hi)) continue;
        int w = snprintf(buf + used, n - used, "%s%.9g (%s)", used ? "; " : "inside: ", (double)cand[k].value,
                         cand[k].name);
        if (w < 0 || (size_t)w >= n - used) {
            buf[used] = '\0';
            snprintf(buf + used, n - used, "%s", used ? "; ..." : "inside: ...");
            break;
        }
        used += (size_t)w;
    }
    if (!used) snprintf(buf, n, "no known global rule gives a value inside");
}

/* Drops the causes of type t (a pattern a proven cause explains). */
static void drop_causes(nvfp4_vreport *rep, nvfp4_cause t)
{
    size_t k = 0;
    for (size_t i = 0; i < rep->n_causes; i++)
        if (rep->causes[i].cause != t) rep->causes[k++] = rep->causes[i];
    rep->n_causes = k;
}

/* Reads back the S_enc (or g) the kernel's block scales were computed with
 * and, when the recipe's own value cannot have given them, says so: proven
 * when a block whose amax every catalogued block-amax rule agrees on
 * excludes it and no other known block-scale formula gives the bytes with it. */
static void detect_global_scale(vctx *c)
{
    const nvfp4_vview *e = c->e;
    nvfp4_vreport *rep = c->rep;
    const nvfp4_recipe *rec = c->o->recipe ? nvfp4_recipe_find(c->o->recipe) : NULL;
    if (!rec || !e->x || !e->amax || e->amax_count > 1 || !c->act_scale || !e4m3_scales(e) || e->e4m3_elements ||
        nvfp4_vreport_match(rep))
        return;
    const nvfp4_core_recipe *core = nvfp4_recipe_core(rec);
    bool decode = false;
    if (!nvfp4_gscale_monotone(core, &decode) || !isfinite(*e->amax)) return;
    size_t scols = nvfp4_vview_scale_cols(e), n = e->scale_bytes;
    float *bamax = malloc((n ? n : 1) * sizeof *bamax);
    if (!bamax) return;
    for (size_t i = 0; i < n; i++) {
        size_t r = i / scols, col = (i % scols) * block_cols_of(e);
        bamax[i] = block_has_nan(e, r, col) ? NAN : block_amax(e, r, col); /* NaN blocks do not constrain */
    }
    const uint8_t *act = c->act_scale;
    nvfp4_gscale_interval iv;
    nvfp4_gscale_infer(core, bamax, act, n, &iv);
    float amax = *e->amax;
    nvfp4_core_global g0 = nvfp4_core_global_from_amax(core, amax);
    float p0 = nvfp4_gscale_param(core, &g0);
    if (iv.applies) {
        rep->gscale_known = true;
        rep->gscale_decode = decode;
        rep->gscale_empty = iv.empty;
        rep->gscale_lo = iv.lo;
        rep->gscale_hi = iv.hi;
        rep->gscale_count = iv.empty ? 0 : iv.count;
        rep->gscale_expected = p0;
    }
    if (!iv.applies || iv.empty || (p0 >= iv.lo && p0 <= iv.hi)) {
        free(bamax);
        return;
    }
    size_t dec = SIZE_MAX;
    for (size_t i = 0; i < n && dec == SIZE_MAX; i++) {
        size_t r = i / scols, col = (i % scols) * block_cols_of(e);
        if (isfinite(bamax[i]) && nvfp4_gscale_byte_at(core, p0, bamax[i]) != act[i] &&
            block_amax_robust(e, r, col, bamax[i]))
            dec = i;
    }
    char inside[240], others[300];
    list_inside(core, amax, rep, inside, sizeof inside);
    size_t nalt = nvfp4_gscale_other_bscales(core, c->o->recipe, amax, bamax, act, n, others, sizeof others);
    const char *pn = decode ? "g" : "S_enc";
    double a_lo = decode ? 2688.0 * iv.lo : 2688.0 / iv.hi, a_hi = decode ? 2688.0 * iv.hi : 2688.0 / iv.lo;
    nvfp4_vreport_add_cause(rep, NVFP4_CAUSE_GLOBAL_SCALE,
                            "scale: under %s's block-scale rule your scales need %s in [%.9g, %.9g] (%llu fp32 "
                            "values, amax about [%.7g, %.7g]); its rule gives %.9g for amax %.9g, outside; %s",
                            c->o->recipe, pn, (double)iv.lo, (double)iv.hi, (unsigned long long)iv.count, a_lo, a_hi,
                            (double)p0, (double)amax, inside);
    if (rep->n_causes && rep->causes[rep->n_causes - 1].cause == NVFP4_CAUSE_GLOBAL_SCALE) {
        nvfp4_vcause_line *l = &rep->causes[rep->n_causes - 1];
        if (nalt == 0 && dec != SIZE_MAX) {
            float lo = 0.0f, hi = 0.0f;
            nvfp4_gscale_block_interval(core, bamax[dec], act[dec], &lo, &hi);
            l->status = NVFP4_CAUSE_PROVEN;
            snprintf(l->evidence, sizeof l->evidence,
                     "block %zu (row %zu, block column %zu, block amax %.9g): your byte 0x%02X needs %s in [%.9g, "
                     "%.9g], %.9g gives 0x%02X; no other known block-scale formula gives your bytes with %.9g",
                     dec, dec / scols, dec % scols, (double)bamax[dec], act[dec], pn, (double)lo, (double)hi,
                     (double)p0, nvfp4_gscale_byte_at(core, p0, bamax[dec]), (double)p0);
            relabel_ties(c, "global-scale");
            drop_causes(rep, NVFP4_CAUSE_SCALE_OFF_BY_ONE); /* the off-by-one bytes come from the other S_enc */
        } else {
            snprintf(l->evidence, sizeof l->evidence, "%s",
                     nalt ? "other block-scale formulas give your bytes with the recipe's own value"
                          : "every block that excludes the recipe's value has an amax some catalogued block-amax "
                            "rule computes otherwise (NaN or Inf, a negative largest element, a tile's other rows)");
            snprintf(l->alternatives, sizeof l->alternatives, "%s", others);
        }
    }
    free(bamax);
}

nvfp4_status nvfp4_verify(const nvfp4_vview *expected, const nvfp4_vview *actual, const nvfp4_verify_opts *opts,
                          nvfp4_vreport *rep, nvfp4_error *err)
{
    nvfp4_verify_opts defaults;
    if (!opts) {
        nvfp4_verify_opts_init(&defaults);
        opts = &defaults;
    }
    memset(rep, 0, sizeof *rep);
    nvfp4_status st = check_expected(expected, err);
    if (st != NVFP4_OK) return st;
    rep->max_first = opts->max_errors;
    if (rep->max_first) {
        rep->first = calloc(rep->max_first, sizeof *rep->first);
        if (!rep->first) return nvfp4_error_set(err, NVFP4_ENOMEM, "verify: out of memory");
    }
    unsigned mask = opts->components ? opts->components : (1u << NVFP4_VC_COUNT) - 1u;
    const void *ep[NVFP4_VC_COUNT] = {expected->data, expected->scale, expected->scale_swizzled, expected->amax,
                                      expected->dequant};
    const void *ap[NVFP4_VC_COUNT] = {actual->data, actual->scale, actual->scale_swizzled, actual->amax, actual->dequant};
    for (unsigned i = 0; i < NVFP4_VC_COUNT; i++) {
        rep->expected_present[i] = ep[i] != NULL;
        rep->actual_present[i] = ap[i] != NULL;
    }
    vctx c = {expected, actual, opts, rep, NULL, NULL};
    actual_linear_scales(&c);
    bool want[NVFP4_VC_COUNT];
    for (unsigned i = 0; i < NVFP4_VC_COUNT; i++) want[i] = (mask >> i) & 1u && ep[i] && ap[i];

    data_tally dt;
    scale_tally stl;
    swz_tally swt;
    memset(&dt, 0, sizeof dt);
    memset(&stl, 0, sizeof stl);
    memset(&swt, 0, sizeof swt);
    /* the most telling mismatches first: the amax (global scale), then the
     * scales, then the codes that follow from them */
    if (want[NVFP4_VC_AMAX]) compare_amax(&c);
    if (want[NVFP4_VC_SCALE]) compare_scale_linear(&c, &stl);
    if (want[NVFP4_VC_SCALE_SWIZZLED]) compare_scale_swizzled(&c, &swt);
    if (want[NVFP4_VC_DATA]) compare_data(&c, &dt);
    if (want[NVFP4_VC_DEQUANT]) compare_dequant(&c);

    if (want[NVFP4_VC_DATA]) {
        detect_swapped_nibbles(&c);
        detect_transposed_layout(&c);
        detect_element_policies(&c, &dt);
        detect_encode_factor(&c, &dt);
        detect_sr_byte_order(&c);
    }
    if (want[NVFP4_VC_SCALE] || want[NVFP4_VC_SCALE_SWIZZLED]) detect_scale_layouts(&c);
    if (want[NVFP4_VC_SCALE_SWIZZLED]) detect_scale_permutation(&c);
    if (want[NVFP4_VC_SCALE_SWIZZLED]) detect_scale_layout_mismatch(&c);
    if (want[NVFP4_VC_SCALE_SWIZZLED]) detect_padding(&c, &swt);
    if (want[NVFP4_VC_SCALE]) {
        detect_scale_off_by_one(&c, &stl);
        detect_block_scale_formula(&c, &stl);
    }
    detect_candidates(&c);
    if (want[NVFP4_VC_SCALE] || want[NVFP4_VC_SCALE_SWIZZLED]) detect_global_scale(&c);
    free(c.unswizzled);
    return NVFP4_OK;
}
