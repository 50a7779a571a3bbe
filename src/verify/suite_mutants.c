/* suite_mutants.c - the mutant kill search of golden suites: which cases
 * kill which catalogued mutants, the boundary-seeking inputs of the
 * `mutants` suite, the separating cases, and the mutation report
 * (docs/verify.md, "Mutants"). Internal to the library: nvfp4_suite_generate
 * and nvfp4_suite_mutation_report (nvfp4/suite.h) are its callers. */
#include "suite_mutants.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"
#include "nvfp4/trace.h"
#include "core/splitmix.h"

typedef struct {
    const nvfp4_mutant_info *m;
    bool relevant;     /* mutates the recipe at this rounding */
    char *killer;      /* the first case that separates it, or NULL */
    char *causes;      /* what verify names there */
    char *line;        /* the known-bug line, or the first cause line */
    bool named;        /* verify's known-bug cause names it (first or among the alternatives) */
    bool proven;       /* ... first, with status proven: the killing case separates it from every candidate */
} gm_entry;

/* A candidate of verify's on a case of the suite (docs/verify.md, "Proven or
 * consistent"): a recipe variant (every recipe at each rounding, the case's
 * block) or a catalogued mutant of the suite's recipe. */
typedef struct {
    char name[96];
    const char *recipe;         /* a recipe variant (with round), or NULL */
    nvfp4_rounding round;
    const nvfp4_mutant_info *m; /* a mutant */
    long first_case;            /* the first case whose bytes (first_orient: 0 rowwise) differ from the recipe's, or -1 */
    int first_orient;
    char *singled_by;           /* the first case where no other candidate gives its bytes, or NULL */
    bool tried;                 /* a separating case was searched from it */
} gs_cand;

/* A case of the suite, kept for the separating search (x widened to fp32). */
typedef struct {
    float *x;
    size_t rows, cols;
    nvfp4_quant_opts o;
} gs_case;

/* A separating case added, for the report. */
typedef struct {
    char *name;
    size_t pairs;      /* pairs of candidates it separates that no case before did */
    char from[400];    /* how it was found (its description) */
} gs_added;

enum { GS_MET = 1, GS_SEP = 2 }; /* a pair: both evaluated on some case; given different bytes on one */

struct gm_state {
    const char *recipe;
    nvfp4_rounding round;
    nvfp4_scale_layout layout; /* the suite's: scale buffers are compared in it */
    bool causes;
    size_t n;
    gm_entry *e;
    /* separation (gm_separating_case): candidate 0 is the recipe itself */
    gs_cand *c;
    size_t nc;
    uint8_t *pair; /* nc x nc, i < j: GS_MET | GS_SEP */
    gs_case *cases;
    size_t ncases, capcases;
    gs_added *added;
    size_t nadded;
    bool pending;  /* the next case noted is a separating one */
    char desc[400];
};

static bool rounding_fits(const nvfp4_mutant_info *m, nvfp4_rounding r)
{
    if ((m->needs & NVFP4_MUTANT_NEEDS_RN) && r == NVFP4_SR) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_SR) && r != NVFP4_SR) return false;
    return true;
}

static bool sep_candidates(gm_state *s);

gm_state *gm_new(const char *recipe, nvfp4_rounding round, bool causes, nvfp4_scale_layout layout)
{
    gm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->recipe = recipe;
    s->round = round;
    s->layout = layout;
    s->causes = causes;
    s->n = nvfp4_mutant_count();
    s->e = calloc(s->n ? s->n : 1, sizeof *s->e);
    if (!s->e) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++) {
        s->e[i].m = nvfp4_mutant_at(i);
        s->e[i].relevant = nvfp4_mutant_applies_in_layout(s->e[i].m, recipe, NULL, layout) &&
                           rounding_fits(s->e[i].m, round);
    }
    if (!sep_candidates(s)) {
        gm_free(s);
        return NULL;
    }
    return s;
}

void gm_free(gm_state *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].killer);
        free(s->e[i].causes);
        free(s->e[i].line);
    }
    free(s->e);
    for (size_t i = 0; i < s->nc; i++) free(s->c[i].singled_by);
    free(s->c);
    free(s->pair);
    for (size_t i = 0; i < s->ncases; i++) free(s->cases[i].x);
    free(s->cases);
    for (size_t i = 0; i < s->nadded; i++) free(s->added[i].name);
    free(s->added);
    free(s);
}

bool gm_any_alive(const gm_state *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].relevant && !s->e[i].killer) return true;
    return false;
}

static bool same_f32(float a, float b)
{
    uint32_t ua, ub;
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    return ua == ub || (isnan(a) && isnan(b));
}

/* The scales of t in layout l (malloc'd, *n bytes; NULL when out of memory). */
static uint8_t *scales_in_layout(const nvfp4_qtensor *t, nvfp4_scale_layout l, size_t *n)
{
    size_t pr, pc;
    *n = nvfp4_scale_layout_shape(l, t->scale_rows, t->scale_cols, &pr, &pc);
    uint8_t *b = malloc(*n ? *n : 1);
    if (b) nvfp4_scale_to_layout(l, t->scale, t->scale_rows, t->scale_cols, b);
    return b;
}

/* Whether the mutant's orientation differs from the golden one in any byte
 * a kernel writes: codes, linear scales, the scale buffer (in the layout
 * the mutant writes, nvfp4_mutant_scale_layout), amax. */
static bool differs(const nvfp4_quantized *q, const nvfp4_mutant_info *m, const nvfp4_mutant_output *mo, bool colwise)
{
    const nvfp4_qtensor *a = colwise ? &q->col : &q->row, *b = colwise ? &mo->q.col : &mo->q.row;
    if (a->data_bytes != b->data_bytes || memcmp(a->data, b->data, a->data_bytes)) return true;
    size_t sn = a->scale_rows * a->scale_cols;
    if (sn != b->scale_rows * b->scale_cols || memcmp(a->scale, b->scale, sn)) return true;
    if (nvfp4_recipe_get_info(q->recipe)->has_global_amax && !same_f32(a->amax, b->amax)) return true;
    if (a->row_amax) /* row-scaled: the amax of every stored row is written too */
        for (size_t i = 0; i < a->prows; i++)
            if (!b->row_amax || !same_f32(a->row_amax[i], b->row_amax[i])) return true;
    size_t zn;
    uint8_t *swz = scales_in_layout(a, nvfp4_mutant_scale_layout(m), &zn);
    if (!swz) return true;
    bool d = zn != mo->swizzled_bytes[colwise] || memcmp(swz, mo->swizzled[colwise], zn) != 0;
    free(swz);
    return d;
}

/* x widened and laid out in the stored orientation, zero padded. */
static float *oriented(const void *x, nvfp4_dtype dt, size_t rows, size_t cols, const nvfp4_qtensor *t, bool colwise)
{
    size_t n = t->prows * t->pcols;
    float *o = calloc(n ? n : 1, sizeof *o);
    if (!o) return NULL;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            size_t k = i * cols + j;
            float v = dt == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)x)[k]) : ((const float *)x)[k];
            if (colwise) o[j * t->pcols + i] = v;
            else o[i * t->pcols + j] = v;
        }
    return o;
}

/* A mutant as a kernel writing the suite's layout would show it: its scale
 * buffer in `layout` (made from its linear scales, malloc'd into *owned),
 * but for a layout mutant of that layout, whose own buffer is the mistake. */
static void mutant_view(const nvfp4_vview *geom, const nvfp4_mutant_info *m, const nvfp4_mutant_output *mo,
                        bool colwise, nvfp4_scale_layout layout, uint8_t **owned, nvfp4_vview *v);

static void mutant_view_own(const nvfp4_vview *geom, const nvfp4_mutant_info *m, const nvfp4_mutant_output *mo,
                            bool colwise, nvfp4_vview *v)
{
    const nvfp4_qtensor *t = colwise ? &mo->q.col : &mo->q.row;
    *v = *geom;
    v->x = NULL;
    v->data = t->data;
    v->data_bytes = t->data_bytes;
    v->scale = t->scale;
    v->scale_bytes = t->scale_rows * t->scale_cols;
    v->scale_swizzled = mo->swizzled[colwise];
    v->scale_swizzled_bytes = mo->swizzled_bytes[colwise];
    v->scale_layout = nvfp4_mutant_scale_layout(m); /* the cuBLAS buffer, or the KV-cache layout it mistakes */
    v->amax = geom->amax ? (t->row_amax ? t->row_amax : &t->amax) : NULL; /* row-scaled: one per stored row */
    v->dequant = NULL;
    v->dequant_count = 0;
}

static void mutant_view(const nvfp4_vview *geom, const nvfp4_mutant_info *m, const nvfp4_mutant_output *mo,
                        bool colwise, nvfp4_scale_layout layout, uint8_t **owned, nvfp4_vview *v)
{
    mutant_view_own(geom, m, mo, colwise, v);
    *owned = NULL;
    if (v->scale_layout == layout) return;
    size_t n;
    if (!(*owned = scales_in_layout(colwise ? &mo->q.col : &mo->q.row, layout, &n))) return;
    v->scale_swizzled = *owned;
    v->scale_swizzled_bytes = n;
    v->scale_layout = layout;
}

static char *dup_s(const char *s) { return s ? strdup(s) : NULL; }

/* Whether word is an item of the ", "-separated list. */
static bool in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *e = strstr(p, ", ");
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && strncmp(p, word, n) == 0) return true;
        p = e ? e + 2 : p + k;
    }
    return false;
}

/* Runs verify on the killing orientation with every applicable mutant as a
 * candidate and records the causes it names. */
static void name_causes(gm_state *s, gm_entry *e, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
                        const nvfp4_quant_opts *o, const nvfp4_quantized *q, const nvfp4_mutant_output *mo,
                        bool colwise)
{
    nvfp4_vview ev;
    uint8_t *swizzled = NULL;
    nvfp4_error verr;
    if (nvfp4_vview_from_quantized(q, colwise, &ev, &swizzled, &verr)) return;
    uint8_t *in_layout = NULL; /* the golden's scale buffer in the suite's layout, as its bundle holds it */
    if (s->layout != NVFP4_SCALE_LAYOUT_128X4) {
        size_t n;
        if (!(in_layout = scales_in_layout(colwise ? &q->col : &q->row, s->layout, &n))) {
            nvfp4_free(swizzled);
            return;
        }
        ev.scale_swizzled = in_layout;
        ev.scale_swizzled_bytes = n;
        ev.scale_layout = s->layout;
    }
    float *xo = NULL;
    if (!(colwise && q->opts.rht)) {
        xo = oriented(x, dt, rows, cols, colwise ? &q->col : &q->row, colwise);
        ev.x = xo;
    }
    nvfp4_vview av;
    uint8_t *av_buf;
    mutant_view(&ev, e->m, mo, colwise, s->layout, &av_buf, &av);
    nvfp4_mutant_output *outs = calloc(s->n, sizeof *outs);
    nvfp4_vcandidate *cand = calloc(s->n, sizeof *cand);
    uint8_t **bufs = calloc(s->n, sizeof *bufs);
    size_t nc = 0;
    for (size_t i = 0; outs && cand && bufs && i < s->n; i++) {
        if (!nvfp4_mutant_applies_in_layout(s->e[i].m, s->recipe, o, s->layout)) continue;
        nvfp4_error err;
        if (nvfp4_mutant_quantize(s->e[i].m, x, dt, rows, cols, o, &outs[i], &err)) continue;
        cand[nc].name = s->e[i].m->name;
        mutant_view(&ev, s->e[i].m, &outs[i], colwise, s->layout, &bufs[i], &cand[nc].view);
        cand[nc].mutant = s->e[i].m;
        nc++;
    }
    nvfp4_verify_opts vo;
    nvfp4_verify_opts_init(&vo);
    vo.max_errors = 0;
    vo.candidates = cand;
    vo.n_candidates = nc;
    vo.expected_name = s->recipe;
    nvfp4_vreport rep;
    nvfp4_error err;
    if (nvfp4_verify(&ev, &av, &vo, &rep, &err) == NVFP4_OK) {
        char buf[1024] = "";
        size_t len = 0;
        for (size_t i = 0; i < rep.n_causes && len + 40 < sizeof buf; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", nvfp4_cause_name(rep.causes[i].cause));
        e->causes = dup_s(rep.n_causes ? buf : "none");
        const char *line = NULL;
        const nvfp4_vcause_line *kb = NULL;
        for (size_t i = 0; i < rep.n_causes; i++)
            if (rep.causes[i].cause == NVFP4_CAUSE_KNOWN_BUG) kb = &rep.causes[i], line = kb->line;
        /* named: the known-bug cause names this mutant, first (proven or not)
         * or among the alternatives that give the same bytes on the case */
        e->named = kb && (strncmp(kb->line, e->m->name, strlen(e->m->name)) == 0 || in_list(kb->alternatives, e->m->name));
        e->proven = e->named && kb->status == NVFP4_CAUSE_PROVEN && strncmp(kb->line, e->m->name, strlen(e->m->name)) == 0;
        if (!line && rep.n_causes) line = rep.causes[0].line;
        e->line = dup_s(line);
        nvfp4_vreport_free(&rep);
    }
    for (size_t i = 0; outs && i < s->n; i++) nvfp4_mutant_output_free(&outs[i]);
    for (size_t i = 0; bufs && i < s->n; i++) free(bufs[i]);
    free(outs);
    free(cand);
    free(bufs);
    free(av_buf);
    free(xo);
    free(in_layout);
    nvfp4_free(swizzled);
}

static void sep_note(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
                     const nvfp4_quant_opts *o);

size_t gm_note(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
               const nvfp4_quant_opts *o, const nvfp4_quantized *q, bool commit)
{
    size_t killed = 0;
    for (size_t i = 0; i < s->n; i++) {
        gm_entry *e = &s->e[i];
        if (!e->relevant || e->killer || !nvfp4_mutant_applies_in_layout(e->m, s->recipe, o, s->layout)) continue;
        nvfp4_mutant_output mo;
        nvfp4_error err;
        if (nvfp4_mutant_quantize(e->m, x, dt, rows, cols, o, &mo, &err)) continue;
        int where = -1;
        for (int cw = 0; cw < 2 && where < 0; cw++)
            if ((cw ? q->has_col : q->has_row) && (cw ? mo.q.has_col : mo.q.has_row) && differs(q, e->m, &mo, cw != 0))
                where = cw;
        if (where >= 0) {
            killed++;
            if (commit) {
                e->killer = dup_s(case_name);
                if (s->causes) name_causes(s, e, x, dt, rows, cols, o, q, &mo, where != 0);
            }
        }
        nvfp4_mutant_output_free(&mo);
    }
    if (commit) sep_note(s, case_name, x, dt, rows, cols, o);
    return killed;
}

/* ---- boundary-seeking inputs ------------------------------------------------------ */

/* Global amaxes: 2688 gives S_enc = 1 (a power of two); the others give
 * encode factors with full significands, where formulas that are equal in
 * real arithmetic round differently. */
static const float boundary_amax[] = {2688.0f, 1000.0f, 3.7f, 0.0123f, 123456.0f};

size_t gm_boundary_count(void) { return sizeof boundary_amax / sizeof boundary_amax[0]; }

static float nudge(float v, int k)
{
    for (; k > 0; k--) v = nextafterf(v, INFINITY);
    for (; k < 0; k++) v = nextafterf(v, 0.0f);
    return v;
}

/* The boundary-seeking input of R x C (rows a multiple of the tile's) under
 * global amax A. variant 0 is the `mutants-boundary-K` pattern; other
 * variants shift which E4M3 codes and nudges each block takes, and (with
 * special) end the last row with a block of zeros and values far below the
 * scale's underflow (its scale is 0: te saturates there, an encode factor
 * without the FLT_MAX clamp gives 0 * Inf), and in odd variants a NaN, for
 * the separating search. */
static int boundary_input(const char *recipe, size_t R, size_t C, float A, unsigned variant, bool special, float **xp,
                          nvfp4_error *err)
{
    static const float mids[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    const nvfp4_recipe *rec = nvfp4_recipe_find(recipe);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(rec);
    size_t bl = info->default_block == NVFP4_BLOCK_1X32 ? 32 : 16, nbc = C / bl, v = variant;
    float *x = calloc(R * C, sizeof *x);
    uint8_t *scale = NULL;
    float *f = NULL, *ones = NULL;
    if (!x) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    /* pass 1: the block amaxes alone. Block b sweeps the E4M3 codes: its
     * amax is 6 * (midpoint of codes c, c+1) / S_enc, nudged -3..3 ulps. */
    for (size_t b = 0; b < R * nbc; b++) {
        size_t code = 8 + (b * 7 + v * 13) % 117;
        float lo = nvfp4_e4m3_to_f32((uint8_t)code), hi = nvfp4_e4m3_to_f32((uint8_t)(code + 1));
        float val = 0.5f * (lo + hi) * 6.0f;
        if (info->has_global_amax) val = val * (A / 2688.0f);
        else val = ldexpf(1.0f, (int)((b + v * 5) % 40) - 20) * (1.0f + (float)((b + v) % 16) / 16.0f);
        val = nudge(val, (int)((b + v) % 7) - 3);
        x[b * bl + (b % bl)] = (b & 1) ? -val : val;
    }
    if (info->has_global_amax) x[0] = A;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_quantized q;
    if (nvfp4_quantize(x, NVFP4_DTYPE_F32, R, C, &o, &q, err)) {
        free(x);
        return err->status;
    }
    /* pass 2: each block's encode factor (the scaled value of x = 1), then
     * the other elements one to three ulps around m / factor for the
     * E2M1 midpoints m, so that y lands around every rounding boundary. */
    scale = q.row.scale;
    f = malloc(R * C * sizeof *f);
    ones = malloc(R * C * sizeof *ones);
    int rc = 0;
    if (!f || !ones) rc = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < R * C; i++) ones[i] = 1.0f;
    bool scaled = true; /* recipes without a scaled value (ggml's nearest-value search): block amaxes only */
    nvfp4_status ts = rc ? NVFP4_OK : nvfp4_trace_scaled(rec, q.row.amax, scale, R, C, bl, ones, f, err);
    if (ts == NVFP4_EUNSUPPORTED) scaled = false;
    else if (ts) rc = ts;
    for (size_t b = 0; !rc && scaled && b < R * nbc; b++) {
        float bam = fabsf(x[b * bl + (b % bl)]);
        for (size_t i = 0; i < bl; i++) {
            size_t j = b * bl + i;
            if (i == b % bl || (b == 0 && i == 0) || !(f[j] > 0.0f) || isinf(f[j])) continue;
            float m = mids[(i + b + v) % 7], val = nudge(m / f[j], (int)((i * 3 + b + v) % 7) - 3);
            if (!(val <= bam)) continue;
            x[j] = (i + b) & 2 ? -val : val;
        }
    }
    if (!rc && special && R * nbc > 1) { /* the last block: zeros and values whose block scale underflows to 0 */
        size_t b = R * nbc - 1;
        float tiny = (info->has_global_amax ? A : 1.0f) * 0x1p-40f;
        for (size_t i = 0; i < bl; i++) x[b * bl + i] = i % 4 == 0 ? 0.0f : i % 4 == 1 ? -0.0f : i % 4 == 2 ? tiny : -tiny;
        /* odd variants: a NaN element there too (the recipes part on NaN: ignored by te's fmaxf amax, every
         * scale 0x7F in FlashInfer's reference, a NaN amax in torchao's) */
        if (v & 1u) x[b * bl + bl - 1] = NAN;
    }
    nvfp4_quantized_free(&q);
    free(f);
    free(ones);
    if (rc) {
        free(x);
        return rc;
    }
    *xp = x;
    return 0;
}

int gm_boundary_case(const char *recipe, size_t k, float **xp, size_t *rows, size_t *cols, const char **desc,
                     nvfp4_error *err)
{
    int rc = boundary_input(recipe, 32, 256, boundary_amax[k % gm_boundary_count()], 0, false, xp, err);
    if (rc) return rc;
    *rows = 32;
    *cols = 256;
    *desc = "block amaxes around E4M3 decision boundaries, elements around E2M1 midpoints after the encode factor";
    return 0;
}

/* 16x16 tiles whose map-to-4 and map-to-6 candidates have equal errors:
 * global amax A with S_enc(A) = 1 (A = 6 * the recipe's E4M3 bound, read
 * off as the scaled value of x = 1 under amax 1 and scale 1.0), tile 0
 * holds A alone, tile 1 has block amax 6 (s6 = 1, s4 = 1.5) and elements
 * from {0, +-1.5, +-3, +-6}, on both grids: both errors 0, a tie. */
int gm_tile_ties_case(const char *recipe, float **xp, size_t *rows, size_t *cols, const char **desc, nvfp4_error *err)
{
    static const float both[7] = {0.0f, 1.5f, 3.0f, 6.0f, -1.5f, -3.0f, -6.0f};
    const nvfp4_recipe *rec = nvfp4_recipe_find(recipe);
    *xp = NULL;
    if (!rec || !nvfp4_recipe_get_info(rec)->has_global_amax) return 0;
    uint8_t one = 0x38; /* E4M3 1.0 */
    float ones[16], f[16];
    nvfp4_error terr;
    for (int i = 0; i < 16; i++) ones[i] = 1.0f;
    if (nvfp4_trace_scaled(rec, 1.0f, &one, 1, 16, 16, ones, f, &terr) != NVFP4_OK) return 0;
    float A = f[0]; /* S_enc(1) = 6 * bound, so S_enc(A) = 1 */
    float *x = calloc(16 * 32, sizeof *x);
    if (!x) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    x[0] = A;
    for (size_t r = 0; r < 16; r++)
        for (size_t k = 0; k < 16; k++) x[r * 32 + 16 + k] = both[(r + k) % 7];
    x[16] = 6.0f;
    *xp = x;
    *rows = 16;
    *cols = 32;
    *desc = "16x16 tiles whose 4over6 candidates tie (elements on both grids, S_enc = 1)";
    return 0;
}

/* ---- separation: pairs of candidates that no case tells apart ---------------------- */
/* A suite run can only say "consistent with A, B" for a kernel whose bytes
 * two candidates give on every case. After the kill search, each candidate
 * with a partner that no case separates starts a witness search
 * (nvfp4_witness_search, docs/verify.md, "Witnesses") from the first case
 * where its bytes differ from the recipe's; the input found becomes a
 * `separate-N` case when it separates a pair no case before did. The search
 * is seeded, so the suite regenerates byte for byte. Pairs it cannot
 * separate are listed (gm_report, gm_print_unseparated), never dropped. */

static bool sep_candidates(gm_state *s)
{
    size_t nr = nvfp4_recipe_count(), cap = 2 * nr + s->n + 1;
    s->c = calloc(cap, sizeof *s->c);
    if (!s->c) return false;
    gs_cand *c = &s->c[s->nc++]; /* the recipe itself first */
    c->recipe = s->recipe;
    c->round = s->round;
    for (size_t i = 0; i < nr; i++) {
        const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_at(i));
        for (int rnd = 0; rnd < 2; rnd++) {
            nvfp4_rounding r = rnd ? NVFP4_SR : NVFP4_RN;
            if ((rnd && !info->supports_sr) || (strcmp(info->name, s->recipe) == 0 && r == s->round)) continue;
            c = &s->c[s->nc++];
            c->recipe = info->name;
            c->round = r;
        }
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].relevant) s->c[s->nc++].m = s->e[i].m;
    for (size_t i = 0; i < s->nc; i++) {
        c = &s->c[i];
        c->first_case = -1;
        if (c->m) snprintf(c->name, sizeof c->name, "%s", c->m->name);
        else snprintf(c->name, sizeof c->name, "%s %s", c->recipe, nvfp4_rounding_name(c->round));
    }
    s->pair = calloc(s->nc * s->nc, 1);
    return s->pair != NULL;
}

/* One candidate's output on a case. */
typedef struct {
    bool ran;
    nvfp4_quantized q;       /* a recipe variant's */
    nvfp4_mutant_output mo;  /* a mutant's */
    uint8_t *swz[2];         /* a variant's swizzled scales */
    size_t swz_bytes[2];
} gs_run;

/* The bytes a kernel writes in one orientation (those verify matches
 * candidates on: data, scale, scale_swizzled) and their hash. */
typedef struct {
    bool has;
    const uint8_t *p[3];
    size_t len[3];
    uint64_t h;
} gs_bytes;

static void run_free(gs_run *r)
{
    if (!r->ran) return;
    nvfp4_quantized_free(&r->q);
    nvfp4_mutant_output_free(&r->mo);
    free(r->swz[0]);
    free(r->swz[1]);
}

static bool run_candidate(const gm_state *s, const gs_cand *c, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
                          const nvfp4_quant_opts *o, gs_run *r)
{
    memset(r, 0, sizeof *r);
    nvfp4_error err;
    const nvfp4_quantized *q = &r->q;
    if (c->m) {
        if (!nvfp4_mutant_applies_in_layout(c->m, s->recipe, o, s->layout) ||
            nvfp4_mutant_quantize(c->m, x, dt, rows, cols, o, &r->mo, &err))
            return false;
        r->ran = true;
        if (nvfp4_mutant_scale_layout(c->m) == s->layout) return true; /* its own buffer is in the suite's layout */
        q = &r->mo.q;
    } else {
        nvfp4_quant_opts v = *o;
        v.recipe = c->recipe;
        v.rounding = c->round;
        if (nvfp4_quantize(x, dt, rows, cols, &v, &r->q, &err)) return false;
        r->ran = true;
    }
    /* the scale buffer in the suite's layout (cuBLAS's 128x4 for most suites) */
    for (int cw = 0; cw < 2; cw++)
        if (cw ? q->has_col : q->has_row) r->swz[cw] = scales_in_layout(cw ? &q->col : &q->row, s->layout, &r->swz_bytes[cw]);
    return true;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return (h ^ n) * 0x100000001B3ull;
}

static gs_bytes run_bytes(const gs_run *r, bool is_mutant, int cw)
{
    gs_bytes b = {0};
    const nvfp4_quantized *q = is_mutant ? &r->mo.q : &r->q;
    if (!r->ran || !(cw ? q->has_col : q->has_row)) return b;
    const nvfp4_qtensor *t = cw ? &q->col : &q->row;
    b.p[0] = t->data, b.len[0] = t->data_bytes;
    b.p[1] = t->scale, b.len[1] = t->scale_rows * t->scale_cols;
    b.p[2] = r->swz[cw] ? r->swz[cw] : is_mutant ? r->mo.swizzled[cw] : NULL;
    b.len[2] = r->swz[cw] ? r->swz_bytes[cw] : is_mutant ? r->mo.swizzled_bytes[cw] : 0;
    if (!b.p[2]) return b;
    b.h = 0xCBF29CE484222325ull;
    for (int k = 0; k < 3; k++) b.h = fnv(b.h, b.p[k], b.len[k]);
    b.has = true;
    return b;
}

static bool bytes_differ(const gs_bytes *a, const gs_bytes *b)
{
    if (a->h != b->h) return true;
    for (int k = 0; k < 3; k++)
        if (a->len[k] != b->len[k] || (a->len[k] && memcmp(a->p[k], b->p[k], a->len[k]))) return true;
    return false;
}

/* Every candidate on one case. A mutant that does not apply to the case's
 * options writes the recipe's bytes (its step is not reached); recipe
 * variants are not evaluated on the columnwise RHT output (verify re-quantizes
 * x only outside the Hadamard domain). Returns the pairs this case separates
 * that no case noted before did; commit records them (and case_name);
 * *want_alone says whether candidate want gives bytes no other one gives. */
static size_t sep_case(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
                       const nvfp4_quant_opts *o, bool commit, size_t want, bool *want_alone)
{
    if (want_alone) *want_alone = false;
    size_t n = s->nc, gain = 0;
    gs_run *r = calloc(n, sizeof *r);
    gs_bytes *b = calloc(n, sizeof *b);
    if (!r || !b) {
        free(r);
        free(b);
        return 0;
    }
    for (size_t i = 0; i < n; i++) run_candidate(s, &s->c[i], x, dt, rows, cols, o, &r[i]);
    for (int cw = 0; cw < 2; cw++) {
        if (!r[0].ran || !(cw ? r[0].q.has_col : r[0].q.has_row)) continue;
        for (size_t i = 0; i < n; i++) {
            b[i] = run_bytes(&r[i], s->c[i].m != NULL, cw);
            if (s->c[i].m && !r[i].ran && !nvfp4_mutant_applies(s->c[i].m, s->recipe, o)) b[i] = b[0];
            if (!s->c[i].m && i && cw && o->rht) b[i].has = false;
        }
        for (size_t i = 0; i < n; i++) {
            if (!b[i].has) continue;
            bool alone = i > 0;
            for (size_t j = 0; j < n; j++) {
                if (j == i || !b[j].has) continue;
                bool d = bytes_differ(&b[i], &b[j]);
                alone = alone && d;
                if (j < i) continue;
                uint8_t *p = &s->pair[i * n + j];
                if (d && !(*p & GS_SEP)) gain++;
                if (commit) *p |= GS_MET | (d ? GS_SEP : 0);
            }
            if (i == want && alone) *want_alone = true;
            if (!commit) continue;
            if (alone && !s->c[i].singled_by) s->c[i].singled_by = dup_s(case_name);
            if (i && s->c[i].first_case < 0 && bytes_differ(&b[i], &b[0]))
                s->c[i].first_case = (long)s->ncases, s->c[i].first_orient = cw;
        }
    }
    for (size_t i = 0; i < n; i++) run_free(&r[i]);
    free(r);
    free(b);
    return gain;
}

/* Notes a case the suite holds: its pairs, and its input for later searches. */
static void sep_note(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
                     const nvfp4_quant_opts *o)
{
    size_t gain = sep_case(s, case_name, x, dt, rows, cols, o, true, SIZE_MAX, NULL);
    if (s->pending) {
        s->pending = false;
        gs_added *a = realloc(s->added, (s->nadded + 1) * sizeof *a);
        if (a) {
            s->added = a;
            a = &s->added[s->nadded++];
            a->name = dup_s(case_name);
            a->pairs = gain;
            snprintf(a->from, sizeof a->from, "%s", s->desc);
        }
    }
    if (s->ncases == s->capcases) {
        size_t cap = s->capcases ? 2 * s->capcases : 64;
        gs_case *g = realloc(s->cases, cap * sizeof *g);
        if (!g) return;
        s->cases = g;
        s->capcases = cap;
    }
    gs_case *k = &s->cases[s->ncases];
    size_t nx = rows * cols;
    k->x = malloc((nx ? nx : 1) * sizeof *k->x);
    if (!k->x) return;
    for (size_t i = 0; i < nx; i++)
        k->x[i] = dt == NVFP4_DTYPE_BF16 ? nvfp4_bf16_to_f32(((const uint16_t *)x)[i]) : ((const float *)x)[i];
    k->rows = rows;
    k->cols = cols;
    k->o = *o;
    s->ncases++;
}

/* The first candidate that some case tells from the recipe, that no case
 * singles out (some other candidate gives its bytes wherever it differs from
 * the recipe: verify can only say "consistent with") and no search started from. */
static size_t next_leader(const gm_state *s)
{
    for (size_t i = 1; i < s->nc; i++)
        if (!s->c[i].tried && !s->c[i].singled_by && s->c[i].first_case >= 0) return i;
    return SIZE_MAX;
}

/* The case the search for candidate i starts from, and its orientation:
 * where its bytes first differ from the recipe's, else the first case;
 * never the columnwise RHT output (the witness search does not take it). */
static long start_case(const gm_state *s, const gs_cand *c, int *cw)
{
    if (c->first_case >= 0 && !(c->first_orient == 1 && s->cases[c->first_case].o.rht)) {
        *cw = c->first_orient;
        return c->first_case;
    }
    *cw = 0;
    for (size_t k = 0; k < s->ncases; k++)
        if (!s->cases[k].o.rht) return (long)k;
    return -1;
}

/* The candidate's bytes on case k as a kernel's output (orientation cw). */
static bool kernel_output(const gm_state *s, const gs_cand *c, const gs_case *k, int cw, nvfp4_tensor_set *a)
{
    gs_run r;
    if (!run_candidate(s, c, k->x, NVFP4_DTYPE_F32, k->rows, k->cols, &k->o, &r)) {
        c = &s->c[0]; /* a mutant that does not apply writes the recipe's bytes */
        if (!run_candidate(s, c, k->x, NVFP4_DTYPE_F32, k->rows, k->cols, &k->o, &r)) return false;
    }
    gs_bytes b = run_bytes(&r, c->m != NULL, cw);
    static const char *const names[2][3] = {{"data", "scale", "scale_swizzled"}, {"data_t", "scale_t", "scale_swizzled_t"}};
    nvfp4_error err;
    bool ok = b.has;
    for (int i = 0; ok && i < 3; i++) {
        size_t shape[1] = {b.len[i]};
        ok = nvfp4_tset_add(a, names[cw][i], NVFP4_T_U8, 1, shape, b.p[i], NULL, &err) == NVFP4_OK;
    }
    run_free(&r);
    return ok;
}

/* Global amaxes tried by the boundary search: full-significand encode
 * factors (formulas equal in real arithmetic round apart there), then
 * seeded ones across 2^-20 .. 2^20 (a fixed seed: the suite regenerates). */
#define SEP_TRIES 40
static float sep_amax(unsigned t, uint64_t *rs)
{
    static const float fixed[] = {1000.0f, 3.7f, 0.0123f, 123456.0f};
    if (t < sizeof fixed / sizeof fixed[0]) return fixed[t];
    uint64_t z = nvfp4_core_splitmix64(rs);
    return ldexpf(1.0f + (float)(z >> 40) / 16777216.0f, (int)((z >> 8) % 41) - 20);
}

/* 1. the boundary search: small boundary inputs (4 rows, or one row of
 * 16x16 tiles, of 8 blocks) with an underflowing block, under the amaxes
 * of sep_amax, until one singles out candidate `lead`. */
static float *sep_by_boundary(gm_state *s, size_t lead, const nvfp4_quant_opts *eo, size_t *rows, size_t *cols)
{
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(s->recipe));
    size_t bl = info->default_block == NVFP4_BLOCK_1X32 ? 32 : 16;
    size_t R = eo->block == NVFP4_BLOCK_16X16 ? 16 : 4, C = 8 * bl;
    uint64_t rs = 0x5E9A2A7E;
    for (unsigned t = 0; t < SEP_TRIES; t++) {
        float A = sep_amax(t, &rs), *x = NULL;
        nvfp4_error berr; /* out of memory here: the witness search is tried next */
        if (boundary_input(s->recipe, R, C, A, 1 + t, true, &x, &berr)) return NULL;
        bool alone = false;
        sep_case(s, NULL, x, NVFP4_DTYPE_F32, R, C, eo, false, lead, &alone);
        if (alone) {
            *rows = R, *cols = C;
            return x;
        }
        free(x);
    }
    return NULL;
}

/* 2. the witness search (nvfp4_witness_search) from case k, the candidate's
 * bytes there as the kernel's: its input if it singles out `lead`. */
static float *sep_by_witness(gm_state *s, size_t lead, const gs_case *k, int cw, const nvfp4_quant_opts *eo,
                             size_t *rows, size_t *cols)
{
    nvfp4_tensor_set act;
    nvfp4_tset_init(&act);
    if (!kernel_output(s, &s->c[lead], k, cw, &act)) {
        nvfp4_tset_free(&act);
        return NULL;
    }
    nvfp4_witness_opts wo;
    nvfp4_witness_opts_init(&wo);
    wo.quant = *eo;
    wo.orientation = cw;
    wo.actual_name = s->c[lead].name;
    nvfp4_witness w;
    nvfp4_error err;
    nvfp4_status st = nvfp4_witness_search(k->x, NVFP4_DTYPE_F32, k->rows, k->cols, &act, &wo, &w, &err);
    nvfp4_tset_free(&act);
    const nvfp4_tensor *wx = st == NVFP4_OK && w.found ? nvfp4_tset_find(&w.bundle, "x") : NULL;
    float *x = NULL;
    if (wx && wx->dtype == NVFP4_T_F32 && wx->ndim == 2 && (x = malloc(wx->nbytes ? wx->nbytes : 1))) {
        memcpy(x, wx->data, wx->nbytes);
        *rows = wx->shape[0], *cols = wx->shape[1];
        bool alone = false;
        sep_case(s, NULL, x, NVFP4_DTYPE_F32, *rows, *cols, eo, false, lead, &alone);
        if (!alone) free(x), x = NULL;
    }
    nvfp4_witness_free(&w);
    return x;
}

int gm_separating_case(gm_state *s, uint64_t seed, uint64_t offset, float **xp, size_t *rows, size_t *cols,
                       nvfp4_block *block, const char **desc)
{
    *xp = NULL;
    for (size_t lead; (lead = next_leader(s)) != SIZE_MAX;) {
        gs_cand *c = &s->c[lead];
        c->tried = true;
        int cw;
        long ki = start_case(s, c, &cw);
        if (ki < 0) continue;
        const gs_case *k = &s->cases[ki];
        nvfp4_quant_opts eo = k->o; /* the options the case is written with (case_opts in suite_gen.c) */
        eo.rht = false;
        eo.seed = seed;
        eo.offset = offset;
        const char *how = "boundary inputs under seeded global amaxes";
        float *x = sep_by_boundary(s, lead, &eo, rows, cols);
        if (!x) how = "the witness search (docs/verify.md, \"Witnesses\")";
        if (!x) x = sep_by_witness(s, lead, k, cw, &eo, rows, cols);
        if (!x) continue;
        snprintf(s->desc, sizeof s->desc,
                 "singles out %s (no other candidate of verify gives its bytes here; on the cases before, another "
                 "gave them wherever they differ from the recipe's), found by %s", c->name, how);
        s->pending = true;
        *xp = x;
        *block = eo.block;
        *desc = s->desc;
        return 0;
    }
    return 0;
}

/* Pairs that both ran on some case and no case separates, "A = B; ..." into
 * buf; returns how many. */
static size_t unseparated(const gm_state *s, char *buf, size_t size)
{
    size_t n = s->nc, count = 0, len = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            uint8_t p = s->pair[i * n + j];
            if (!(p & GS_MET) || (p & GS_SEP)) continue;
            count++;
            if (buf && len + strlen(s->c[i].name) + strlen(s->c[j].name) + 8 < size)
                len += (size_t)snprintf(buf + len, size - len, "%s%s = %s", len ? "; " : "", s->c[i].name,
                                        s->c[j].name);
        }
    return count;
}

/* Candidates that some case tells from the recipe but none singles out:
 * wherever they differ from it, another candidate gives the same bytes. */
static size_t not_singled(const gm_state *s, char *buf, size_t size)
{
    size_t count = 0, len = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 1; i < s->nc; i++) {
        if (s->c[i].singled_by || s->c[i].first_case < 0) continue;
        count++;
        if (len + strlen(s->c[i].name) + 8 < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", s->c[i].name);
    }
    return count;
}

void gm_print_unseparated(const gm_state *s, FILE *f)
{
    char buf[4096];
    size_t k = unseparated(s, buf, sizeof buf);
    if (k)
        fprintf(f, "%zu pair%s of candidates no case separates (same bytes on every case and on every "
                   "input the searches tried; verify can only say `consistent with` between them): %s\n",
                k, k == 1 ? "" : "s", buf);
    k = not_singled(s, buf, sizeof buf);
    if (k)
        fprintf(f, "%zu candidate%s no case singles out (wherever %s bytes differ from the recipe's, "
                   "another candidate gives them too, on every case and every input the searches tried): %s\n",
                k, k == 1 ? "" : "s", k == 1 ? "its" : "their", buf);
}

static const gs_cand *sep_find(const gm_state *s, const nvfp4_mutant_info *m)
{
    for (size_t i = 0; i < s->nc; i++)
        if (s->c[i].m == m) return &s->c[i];
    return NULL;
}

/* ---- the report ------------------------------------------------------------------- */

int gm_report(const gm_state *s, const char *suite, bool json, FILE *f)
{
    size_t relevant = 0, killed = 0, named = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].relevant) {
            relevant++;
            killed += s->e[i].killer != NULL;
            named += s->e[i].killer && (!s->causes || s->e[i].named);
        }
    if (json) {
        json_t *o = json_object(), *arr = json_array();
        json_object_set_new(o, "recipe", json_string(s->recipe));
        json_object_set_new(o, "rounding", json_string(nvfp4_rounding_name(s->round)));
        json_object_set_new(o, "suite", json_string(suite));
        for (size_t i = 0; i < s->n; i++) {
            const gm_entry *e = &s->e[i];
            if (!e->relevant) continue;
            json_t *j = json_object();
            json_object_set_new(j, "mutant", json_string(e->m->name));
            json_object_set_new(j, "step", json_string(e->m->step));
            json_object_set_new(j, "killed_by", e->killer ? json_string(e->killer) : json_null());
            json_object_set_new(j, "causes", e->causes ? json_string(e->causes) : json_null());
            json_object_set_new(j, "line", e->line ? json_string(e->line) : json_null());
            json_object_set_new(j, "named", json_boolean(e->named));
            json_object_set_new(j, "proven", json_boolean(e->proven));
            const gs_cand *c = sep_find(s, e->m);
            json_object_set_new(j, "singled_out_by", c && c->singled_by ? json_string(c->singled_by) : json_null());
            json_array_append_new(arr, j);
        }
        json_object_set_new(o, "mutants", arr);
        json_t *sep = json_array(), *un = json_array();
        for (size_t i = 0; i < s->nadded; i++) {
            json_t *j = json_object();
            json_object_set_new(j, "case", json_string(s->added[i].name));
            json_object_set_new(j, "pairs", json_integer((json_int_t)s->added[i].pairs));
            json_object_set_new(j, "description", json_string(s->added[i].from));
            json_array_append_new(sep, j);
        }
        for (size_t i = 0; i < s->nc; i++)
            for (size_t j = i + 1; j < s->nc; j++) {
                uint8_t p = s->pair[i * s->nc + j];
                if ((p & GS_MET) && !(p & GS_SEP)) {
                    json_t *pr = json_array();
                    json_array_append_new(pr, json_string(s->c[i].name));
                    json_array_append_new(pr, json_string(s->c[j].name));
                    json_array_append_new(un, pr);
                }
            }
        json_t *ns = json_array();
        for (size_t i = 1; i < s->nc; i++)
            if (!s->c[i].singled_by && s->c[i].first_case >= 0) json_array_append_new(ns, json_string(s->c[i].name));
        json_object_set_new(o, "not_singled_out", ns);
        json_object_set_new(o, "separating", sep);
        json_object_set_new(o, "unseparated", un);
        json_object_set_new(o, "candidates", json_integer((json_int_t)s->nc));
        json_object_set_new(o, "relevant", json_integer((json_int_t)relevant));
        json_object_set_new(o, "killed", json_integer((json_int_t)killed));
        json_object_set_new(o, "named", json_integer((json_int_t)named));
        char *t = json_dumps(o, JSON_INDENT(2));
        if (t) fprintf(f, "%s\n", t);
        free(t);
        json_decref(o);
    } else {
        fprintf(f, "mutation report: recipe %s, rounding %s, suite %s\n", s->recipe, nvfp4_rounding_name(s->round), suite);
        fprintf(f, "  %-30s %-14s %-28s %s\n", "mutant", "step", "killed by", "verify names");
        for (size_t i = 0; i < s->n; i++) {
            const gm_entry *e = &s->e[i];
            if (!e->relevant) continue;
            fprintf(f, "  %-30s %-14s %-28s %s%s\n", e->m->name, e->m->step, e->killer ? e->killer : "SURVIVES",
                   e->causes ? e->causes : "-", e->killer && !e->named ? " (NOT NAMED)" : "");
        }
        fprintf(f, "killed %zu of %zu mutants of %s (%zu in the catalog), %zu named by verify\n", killed, relevant,
               s->recipe, s->n, named);
        for (size_t i = 0; i < s->nadded; i++)
            fprintf(f, "separating case %s: %s; it separates %zu pair%s no case before did\n", s->added[i].name,
                   s->added[i].from, s->added[i].pairs, s->added[i].pairs == 1 ? "" : "s");
        char buf[4096];
        size_t k = unseparated(s, buf, sizeof buf);
        if (k)
            fprintf(f, "not separated: %zu pair%s of the %zu candidates give the same bytes on every case and on every input "
                   "the searches tried: %s\n", k, k == 1 ? "" : "s", s->nc, buf);
        else
            fprintf(f, "separated: every pair of the %zu candidates (recipe variants and mutants) differs on some case\n",
                   s->nc);
        k = not_singled(s, buf, sizeof buf);
        if (k)
            fprintf(f, "not singled out: %zu candidate%s give bytes another candidate gives too wherever they differ from "
                   "the recipe's (verify: consistent at best): %s\n", k, k == 1 ? "" : "s", buf);
    }
    return killed == relevant && named == relevant ? 0 : 1;
}
