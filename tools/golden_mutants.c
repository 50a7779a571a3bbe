/* golden_mutants.c - which golden cases kill which catalogued mutants, the
 * boundary-seeking inputs of the `mutants` suite, and the mutation report
 * (docs/verify.md, "Mutants"). */
#include "golden_mutants.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nvfp4/trace.h"
#include "verify_cli.h"

typedef struct {
    const nvfp4_mutant_info *m;
    bool relevant;     /* mutates the recipe at this rounding */
    char *killer;      /* the first case that separates it, or NULL */
    char *causes;      /* what verify names there */
    char *line;        /* the known-bug line, or the first cause line */
    bool named;        /* verify's known-bug cause names it (first or among the alternatives) */
    bool proven;       /* ... first, with status proven: the killing case separates it from every candidate */
} gm_entry;

struct gm_state {
    const char *recipe;
    nvfp4_rounding round;
    bool causes;
    size_t n;
    gm_entry *e;
};

static bool rounding_fits(const nvfp4_mutant_info *m, nvfp4_rounding r)
{
    if ((m->needs & NVFP4_MUTANT_NEEDS_RN) && r == NVFP4_SR) return false;
    if ((m->needs & NVFP4_MUTANT_NEEDS_SR) && r != NVFP4_SR) return false;
    return true;
}

gm_state *gm_new(const char *recipe, nvfp4_rounding round, bool causes)
{
    gm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->recipe = recipe;
    s->round = round;
    s->causes = causes;
    s->n = nvfp4_mutant_count();
    s->e = calloc(s->n ? s->n : 1, sizeof *s->e);
    if (!s->e) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++) {
        s->e[i].m = nvfp4_mutant_at(i);
        s->e[i].relevant = nvfp4_mutant_applies(s->e[i].m, recipe, NULL) && rounding_fits(s->e[i].m, round);
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

/* Whether the mutant's orientation differs from the golden one in any byte
 * a kernel writes: codes, linear or swizzled scales, amax. */
static bool differs(const nvfp4_quantized *q, const nvfp4_mutant_output *mo, bool colwise)
{
    const nvfp4_qtensor *a = colwise ? &q->col : &q->row, *b = colwise ? &mo->q.col : &mo->q.row;
    if (a->data_bytes != b->data_bytes || memcmp(a->data, b->data, a->data_bytes)) return true;
    size_t sn = a->scale_rows * a->scale_cols;
    if (sn != b->scale_rows * b->scale_cols || memcmp(a->scale, b->scale, sn)) return true;
    if (nvfp4_recipe_get_info(q->recipe)->has_global_amax && !same_f32(a->amax, b->amax)) return true;
    if (a->row_amax) /* row-scaled: the amax of every stored row is written too */
        for (size_t i = 0; i < a->prows; i++)
            if (!b->row_amax || !same_f32(a->row_amax[i], b->row_amax[i])) return true;
    size_t zn = nvfp4_swizzled_size(a->scale_rows, a->scale_cols);
    uint8_t *swz = malloc(zn ? zn : 1);
    if (!swz) return true;
    nvfp4_scale_swizzle(a->scale, a->scale_rows, a->scale_cols, swz);
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

static void mutant_view(const nvfp4_vview *geom, const nvfp4_mutant_output *mo, bool colwise, nvfp4_vview *v)
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
    v->amax = geom->amax ? (t->row_amax ? t->row_amax : &t->amax) : NULL; /* row-scaled: one per stored row */
    v->dequant = NULL;
    v->dequant_count = 0;
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
    float *xo = NULL;
    if (!(colwise && q->opts.rht)) {
        xo = oriented(x, dt, rows, cols, colwise ? &q->col : &q->row, colwise);
        ev.x = xo;
    }
    nvfp4_vview av;
    mutant_view(&ev, mo, colwise, &av);
    nvfp4_mutant_output *outs = calloc(s->n, sizeof *outs);
    nvfp4_vcandidate *cand = calloc(s->n, sizeof *cand);
    size_t nc = 0;
    for (size_t i = 0; outs && cand && i < s->n; i++) {
        if (!nvfp4_mutant_applies(s->e[i].m, s->recipe, o)) continue;
        nvfp4_error err;
        if (nvfp4_mutant_quantize(s->e[i].m, x, dt, rows, cols, o, &outs[i], &err)) continue;
        cand[nc].name = s->e[i].m->name;
        mutant_view(&ev, &outs[i], colwise, &cand[nc].view);
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
    free(outs);
    free(cand);
    free(xo);
    nvfp4_free(swizzled);
}

size_t gm_note(gm_state *s, const char *case_name, const void *x, nvfp4_dtype dt, size_t rows, size_t cols,
               const nvfp4_quant_opts *o, const nvfp4_quantized *q, bool commit)
{
    size_t killed = 0;
    for (size_t i = 0; i < s->n; i++) {
        gm_entry *e = &s->e[i];
        if (!e->relevant || e->killer || !nvfp4_mutant_applies(e->m, s->recipe, o)) continue;
        nvfp4_mutant_output mo;
        nvfp4_error err;
        if (nvfp4_mutant_quantize(e->m, x, dt, rows, cols, o, &mo, &err)) continue;
        int where = -1;
        for (int cw = 0; cw < 2 && where < 0; cw++)
            if ((cw ? q->has_col : q->has_row) && (cw ? mo.q.has_col : mo.q.has_row) && differs(q, &mo, cw != 0))
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

int gm_boundary_case(const char *recipe, size_t k, float **xp, size_t *rows, size_t *cols, const char **desc)
{
    static const float mids[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    const nvfp4_recipe *rec = nvfp4_recipe_find(recipe);
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(rec);
    size_t R = 32, C = 256, bl = info->default_block == NVFP4_BLOCK_1X32 ? 32 : 16, nbc = C / bl;
    float A = boundary_amax[k % gm_boundary_count()];
    float *x = calloc(R * C, sizeof *x);
    uint8_t *scale = NULL;
    float *f = NULL, *ones = NULL;
    if (!x) return cli_fail("golden", "out of memory");
    /* pass 1: the block amaxes alone. Block b sweeps the E4M3 codes: its
     * amax is 6 * (midpoint of codes c, c+1) / S_enc, nudged -3..3 ulps. */
    for (size_t b = 0; b < R * nbc; b++) {
        size_t code = 8 + (b * 7) % 117;
        float lo = nvfp4_e4m3_to_f32((uint8_t)code), hi = nvfp4_e4m3_to_f32((uint8_t)(code + 1));
        float v = 0.5f * (lo + hi) * 6.0f;
        if (info->has_global_amax) v = v * (A / 2688.0f);
        else v = ldexpf(1.0f, (int)(b % 40) - 20) * (1.0f + (float)(b % 16) / 16.0f);
        v = nudge(v, (int)(b % 7) - 3);
        x[b * bl + (b % bl)] = (b & 1) ? -v : v;
    }
    if (info->has_global_amax) x[0] = A;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_quantized q;
    nvfp4_error err;
    if (nvfp4_quantize(x, NVFP4_DTYPE_F32, R, C, &o, &q, &err)) {
        free(x);
        return cli_fail("golden", "%s", err.message);
    }
    /* pass 2: each block's encode factor (the scaled value of x = 1), then
     * the other 15 elements one to three ulps around m / factor for the
     * E2M1 midpoints m, so that y lands around every rounding boundary. */
    scale = q.row.scale;
    f = malloc(R * C * sizeof *f);
    ones = malloc(R * C * sizeof *ones);
    int rc = 0;
    if (!f || !ones) rc = cli_fail("golden", "out of memory");
    for (size_t i = 0; !rc && i < R * C; i++) ones[i] = 1.0f;
    bool scaled = true; /* recipes without a scaled value (ggml's nearest-value search): block amaxes only */
    nvfp4_status ts = rc ? NVFP4_OK : nvfp4_trace_scaled(rec, q.row.amax, scale, R, C, bl, ones, f, &err);
    if (ts == NVFP4_EUNSUPPORTED) scaled = false;
    else if (ts) rc = cli_fail("golden", "%s", err.message);
    for (size_t b = 0; !rc && scaled && b < R * nbc; b++) {
        float bam = fabsf(x[b * bl + (b % bl)]);
        for (size_t i = 0; i < bl; i++) {
            size_t j = b * bl + i;
            if (i == b % bl || (b == 0 && i == 0) || !(f[j] > 0.0f) || isinf(f[j])) continue;
            float m = mids[(i + b) % 7], v = nudge(m / f[j], (int)((i * 3 + b) % 7) - 3);
            if (!(v <= bam)) continue;
            x[j] = (i + b) & 2 ? -v : v;
        }
    }
    nvfp4_quantized_free(&q);
    free(f);
    free(ones);
    if (rc) {
        free(x);
        return rc;
    }
    *xp = x;
    *rows = R;
    *cols = C;
    *desc = "block amaxes around E4M3 decision boundaries, elements around E2M1 midpoints after the encode factor";
    return 0;
}

/* 16x16 tiles whose map-to-4 and map-to-6 candidates have equal errors:
 * global amax A with S_enc(A) = 1 (A = 6 * the recipe's E4M3 bound, read
 * off as the scaled value of x = 1 under amax 1 and scale 1.0), tile 0
 * holds A alone, tile 1 has block amax 6 (s6 = 1, s4 = 1.5) and elements
 * from {0, +-1.5, +-3, +-6}, on both grids: both errors 0, a tie. */
int gm_tile_ties_case(const char *recipe, float **xp, size_t *rows, size_t *cols, const char **desc)
{
    static const float both[7] = {0.0f, 1.5f, 3.0f, 6.0f, -1.5f, -3.0f, -6.0f};
    const nvfp4_recipe *rec = nvfp4_recipe_find(recipe);
    *xp = NULL;
    if (!rec || !nvfp4_recipe_get_info(rec)->has_global_amax) return 0;
    uint8_t one = 0x38; /* E4M3 1.0 */
    float ones[16], f[16];
    nvfp4_error err;
    for (int i = 0; i < 16; i++) ones[i] = 1.0f;
    if (nvfp4_trace_scaled(rec, 1.0f, &one, 1, 16, 16, ones, f, &err) != NVFP4_OK) return 0;
    float A = f[0]; /* S_enc(1) = 6 * bound, so S_enc(A) = 1 */
    float *x = calloc(16 * 32, sizeof *x);
    if (!x) return cli_fail("golden", "out of memory");
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

/* ---- the report ------------------------------------------------------------------- */

int gm_report(const gm_state *s, const char *suite, bool json)
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
            json_array_append_new(arr, j);
        }
        json_object_set_new(o, "mutants", arr);
        json_object_set_new(o, "relevant", json_integer((json_int_t)relevant));
        json_object_set_new(o, "killed", json_integer((json_int_t)killed));
        json_object_set_new(o, "named", json_integer((json_int_t)named));
        char *t = json_dumps(o, JSON_INDENT(2));
        if (t) puts(t);
        free(t);
        json_decref(o);
    } else {
        printf("mutation report: recipe %s, rounding %s, suite %s\n", s->recipe, nvfp4_rounding_name(s->round), suite);
        printf("  %-30s %-14s %-28s %s\n", "mutant", "step", "killed by", "verify names");
        for (size_t i = 0; i < s->n; i++) {
            const gm_entry *e = &s->e[i];
            if (!e->relevant) continue;
            printf("  %-30s %-14s %-28s %s%s\n", e->m->name, e->m->step, e->killer ? e->killer : "SURVIVES",
                   e->causes ? e->causes : "-", e->killer && !e->named ? " (NOT NAMED)" : "");
        }
        printf("killed %zu of %zu mutants of %s (%zu in the catalog), %zu named by verify\n", killed, relevant,
               s->recipe, s->n, named);
    }
    return killed == relevant && named == relevant ? 0 : 1;
}
