/*
 * chain.c - identify's chain inference (vchain.h): which base recipe plus
 * which catalogued deviations, at most one per step, reproduce a kernel's
 * bytes. The chains are run by the mutant quantizer (mutant_quant.c) as one
 * composed mutant; no rounding rule is written here. The search is a
 * coordinate descent over the steps: each step's candidates are tried with
 * the other steps fixed and the one that leaves the fewest differing
 * elements is kept, until a pass changes nothing. A final pass, with the
 * other steps as inferred, tries every known formula of each step: the
 * fitted candidates, the rule of that step of every other registered
 * recipe (its core fields swapped into the base's descriptor) and every
 * catalogued mutant of the step whatever base it is catalogued for. That
 * pass is the evidence of each step's status: proven only when all of them
 * give other bytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipes/recipe.h"
#include "verify/mutant.h"
#include "verify/vchain.h"

/* The steps in the order the chain computes them: each step's candidates
 * are fitted after the steps they depend on. */
static const char *const step_order[NVFP4_CHAIN_NSTEPS] = {"amax",           "global-scale",     "rht",
                                                           "block-scale",    "encode-factor",    "element-rounding",
                                                           "special-values", "layout"};

/* Copies the core fields that step s reads (nothing for the steps with no field of their own:
 * the RHT, the element rounding, the layout) from src into dst. */
static void take_step_rules(size_t s, nvfp4_core_recipe *dst, const nvfp4_core_recipe *src)
{
    switch (s) {
    case 0: dst->amax_nan_propagates = src->amax_nan_propagates; break;
    case 1: dst->global_rule = src->global_rule; break;
    case 3:
        dst->bscale_rule = src->bscale_rule;
        dst->scale_lo = src->scale_lo;
        break;
    case 4:
        dst->enc_rule = src->enc_rule;
        dst->pow2_scale_min = src->pow2_scale_min;
        dst->dequant_rule = src->dequant_rule; /* ENC_EXACT encodes with the dequantization scale */
        break;
    case 6: dst->special = src->special; break;
    default: break;
    }
}

static bool step_has_rules(size_t s) { return s == 0 || s == 1 || s == 3 || s == 4 || s == 6; }

/* Whether recipes a and b compute step s alike. */
static bool same_step_rules(size_t s, const nvfp4_core_recipe *a, const nvfp4_core_recipe *b)
{
    nvfp4_core_recipe x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    take_step_rules(s, &x, a);
    take_step_rules(s, &y, b);
    return nvfp4_core_recipe_equal(&x, &y) != 0;
}

static size_t step_index(const char *step)
{
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++)
        if (step && strcmp(step, step_order[s]) == 0) return s;
    return NVFP4_CHAIN_NSTEPS;
}

bool nvfp4_chain_same_rule(const nvfp4_chain_step *a, const nvfp4_core_recipe *base_a, const nvfp4_chain_step *b,
                           const nvfp4_core_recipe *base_b)
{
    if (a->chosen || b->chosen) return a->chosen == b->chosen;
    size_t s = step_index(a->step);
    return s == NVFP4_CHAIN_NSTEPS || same_step_rules(s, base_a, base_b);
}

const char *nvfp4_chain_status_name(nvfp4_chain_status s)
{
    static const char *const n[] = {"proven", "ambiguous", "best fit", "not explained"};
    return (unsigned)s < 4u ? n[s] : "?";
}

size_t nvfp4_chain_deviations(const nvfp4_chain_result *r)
{
    size_t n = 0;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) n += r->steps[s].chosen != NULL;
    return n;
}

/* One element where a chain's output and the kernel's differ. */
typedef struct {
    bool data;            /* data element, else a scale byte (linear, swizzled) or the amax */
    const char *what;     /* "data element", "scale byte", "swizzled scale byte", "amax" */
    size_t index, row, col;
    uint32_t kernel, chain;
} mism;

typedef struct {
    bool valid;           /* the chain composes and runs */
    size_t data_mis, scale_mis;
    mism first;           /* the first differing element (data first) */
} score;

static size_t total_of(const score *s) { return s->valid ? s->data_mis + s->scale_mis : SIZE_MAX; }

typedef struct {
    const float *x;
    size_t rows, cols;
    nvfp4_quant_opts opts;
    bool colwise;
    const nvfp4_vview *act;
    const char *recipe;
    /* candidates per step: -1 first (the recipe's rule), catalog indices, then (the final pass
     * only) foreign mutants and other recipes' rules, donor d as -2 - d */
    int *cands[NVFP4_CHAIN_NSTEPS];
    size_t ncand[NVFP4_CHAIN_NSTEPS], nfit[NVFP4_CHAIN_NSTEPS], nrecipe[NVFP4_CHAIN_NSTEPS];
    nvfp4_core_recipe base_core;
    nvfp4_core_recipe *donor_core;     /* the base's descriptor with one step's rules of another recipe */
    const char **donor_name;
    size_t ndonors;
    score *table[NVFP4_CHAIN_NSTEPS]; /* the last pass's score of each candidate */
    mism *unexplained;                /* the chain's remaining differences (the final evaluation) */
    size_t n_unexplained, cap_unexplained;
    size_t evaluations;
} chain_ctx;

static uint8_t nibble(const uint8_t *d, size_t i) { return (uint8_t)((d[i >> 1] >> (4u * (i & 1u))) & 0xFu); }

static void note(chain_ctx *cx, score *sc, const mism *m, bool keep)
{
    if (m->data) sc->data_mis++;
    else sc->scale_mis++;
    if (sc->data_mis + sc->scale_mis == 1) sc->first = *m;
    if (keep && cx->n_unexplained < cx->cap_unexplained) cx->unexplained[cx->n_unexplained++] = *m;
}

static void compare_bytes(chain_ctx *cx, score *sc, const char *what, const uint8_t *a, size_t an, const uint8_t *b,
                          size_t bn, size_t cols, bool keep)
{
    for (size_t i = 0; i < an; i++) {
        uint8_t cb = i < bn ? b[i] : 0u;
        if (i < bn && a[i] == cb) continue;
        mism m = {false, what, i, cols ? i / cols : 0, cols ? i % cols : i, a[i], cb};
        note(cx, sc, &m, keep);
    }
}

/* The kernel's bytes against one chain's output t (and its swizzled scales). */
static void compare(chain_ctx *cx, const nvfp4_qtensor *t, const uint8_t *swz, size_t swz_bytes, score *sc, bool keep)
{
    const nvfp4_vview *a = cx->act;
    if (a->data) {
        bool same_size = a->data_bytes == t->data_bytes;
        size_t n = a->e4m3_elements ? a->data_bytes : 2 * a->data_bytes, pitch = t->prows ? n / t->prows : n;
        for (size_t i = 0; i < n; i++) {
            uint32_t k = a->e4m3_elements ? a->data[i] : nibble(a->data, i);
            uint32_t c = !same_size ? 0u : a->e4m3_elements ? t->data[i] : nibble(t->data, i);
            if (same_size && k == c) continue;
            mism m = {true, "data element", i, pitch ? i / pitch : 0, pitch ? i % pitch : i, k, c};
            note(cx, sc, &m, keep);
        }
    }
    if (a->scale)
        compare_bytes(cx, sc, "scale byte", a->scale, a->scale_bytes, t->scale, t->scale_rows * t->scale_cols,
                      t->scale_cols, keep);
    if (a->scale_swizzled)
        compare_bytes(cx, sc, "swizzled scale byte", a->scale_swizzled, a->scale_swizzled_bytes, swz, swz_bytes, 0, keep);
    if (a->amax && a->amax_count <= 1) {
        uint32_t ka, ca;
        memcpy(&ka, a->amax, 4);
        memcpy(&ca, &t->amax, 4);
        if (ka != ca) {
            mism m = {false, "amax", 0, 0, 0, ka, ca};
            note(cx, sc, &m, keep);
        }
    }
}

/* Runs the chain pick[] (catalog index per step, -1 the recipe's rule) and scores it. */
static score evaluate(chain_ctx *cx, const int pick[NVFP4_CHAIN_NSTEPS], bool keep)
{
    score sc;
    memset(&sc, 0, sizeof sc);
    const nvfp4_mutant *parts[NVFP4_CHAIN_NSTEPS];
    size_t n = 0;
    const nvfp4_core_recipe *core = NULL;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++)
        if (pick[s] >= 0) parts[n++] = &nvfp4_mutant_catalog[pick[s]];
        else if (pick[s] <= -2) core = &cx->donor_core[-2 - pick[s]];
    nvfp4_mutant m;
    if (!nvfp4_mutant_compose(parts, n, &m)) return sc;
    m.core = core;
    nvfp4_mutant_output out;
    nvfp4_error err;
    cx->evaluations++;
    if (nvfp4_mutant_run(&m, cx->x, NVFP4_DTYPE_F32, cx->rows, cx->cols, &cx->opts, &out, &err)) return sc;
    const nvfp4_qtensor *t = cx->colwise ? &out.q.col : &out.q.row;
    if (cx->colwise ? out.q.has_col : out.q.has_row) {
        sc.valid = true;
        compare(cx, t, out.swizzled[cx->colwise], out.swizzled_bytes[cx->colwise], &sc, keep);
    }
    nvfp4_mutant_output_free(&out);
    return sc;
}

/* Whether m can change this orientation at all: the columnwise-only layout bug leaves a
 * rowwise output as it is, so it would be listed as an alternative of every rowwise chain. */
static bool visible(const nvfp4_mutant_info *m, bool colwise)
{
    return colwise || strcmp(m->name, "layout-colwise-not-transposed") != 0;
}

/* The first recipe a mutant is catalogued for: its hooks assume that recipe's formats. */
static const nvfp4_recipe *home_recipe(const nvfp4_mutant_info *m)
{
    char name[64];
    size_t k = strcspn(m->recipes, ",");
    snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name ? k : sizeof name - 1), m->recipes);
    return nvfp4_recipe_find(name);
}

/* Whether recipe r's descriptor can stand in for the base's in one step: the same element
 * and scale formats and block length (the steps' formulas differ, not the data layout). */
static bool same_formats(const nvfp4_core_recipe *r, const nvfp4_core_recipe *base)
{
    return r->elem == base->elem && r->scale_format == base->scale_format && r->block_len == base->block_len;
}

/* A catalogued mutant of another base that can run on this one (same formats, its needs met). */
static bool foreign(const chain_ctx *cx, const nvfp4_mutant_info *m)
{
    const nvfp4_recipe *home = home_recipe(m);
    return home && !nvfp4_mutant_applies(m, cx->recipe, &cx->opts) &&
           same_formats(nvfp4_recipe_core(home), &cx->base_core) && nvfp4_mutant_applies(m, home->info.name, &cx->opts);
}

/* The rule of step s of every registered recipe whose formula differs from the base's (and from
 * the ones already listed), as donors. */
static void add_recipe_rules(chain_ctx *cx, size_t s)
{
    if (!step_has_rules(s)) return;
    for (size_t i = 0; i < nvfp4_recipe_count(); i++) {
        const nvfp4_recipe *r = nvfp4_recipe_at(i);
        const nvfp4_core_recipe *rc = nvfp4_recipe_core(r);
        if (!same_formats(rc, &cx->base_core) || same_step_rules(s, rc, &cx->base_core)) continue;
        bool seen = false;
        for (size_t k = cx->nfit[s]; k < cx->ncand[s] && !seen; k++) {
            int c = cx->cands[s][k];
            seen = c <= -2 && same_step_rules(s, rc, &cx->donor_core[-2 - c]);
        }
        if (seen) continue;
        nvfp4_core_recipe mixed = cx->base_core;
        take_step_rules(s, &mixed, rc);
        cx->donor_core[cx->ndonors] = mixed;
        cx->donor_name[cx->ndonors] = r->info.name;
        cx->cands[s][cx->ncand[s]++] = -2 - (int)cx->ndonors++;
        cx->nrecipe[s]++;
    }
}

static int find_candidates(chain_ctx *cx)
{
    size_t nm = nvfp4_mutant_catalog_size, nr = nvfp4_recipe_count();
    cx->donor_core = malloc((nr * NVFP4_CHAIN_NSTEPS + 1) * sizeof *cx->donor_core);
    cx->donor_name = malloc((nr * NVFP4_CHAIN_NSTEPS + 1) * sizeof *cx->donor_name);
    if (!cx->donor_core || !cx->donor_name) return -1;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        cx->cands[s] = malloc((nm + nr + 1) * sizeof(int));
        cx->table[s] = calloc(nm + nr + 1, sizeof(score));
        if (!cx->cands[s] || !cx->table[s]) return -1;
        cx->cands[s][cx->ncand[s]++] = -1;
        for (size_t i = 0; i < nm; i++) {
            const nvfp4_mutant_info *m = &nvfp4_mutant_catalog[i].info;
            if (strcmp(nvfp4_mutant_step_id(m), step_order[s]) == 0 && nvfp4_mutant_applies(m, cx->recipe, &cx->opts) &&
                visible(m, cx->colwise))
                cx->cands[s][cx->ncand[s]++] = (int)i;
        }
        cx->nfit[s] = cx->ncand[s];
        for (size_t i = 0; i < nm; i++) {
            const nvfp4_mutant_info *m = &nvfp4_mutant_catalog[i].info;
            if (strcmp(nvfp4_mutant_step_id(m), step_order[s]) == 0 && visible(m, cx->colwise) && foreign(cx, m))
                cx->cands[s][cx->ncand[s]++] = (int)i;
        }
        add_recipe_rules(cx, s);
    }
    return 0;
}

/* One pass over the steps; with fit, each step takes its best fitted candidate (ties keep the
 * current one, so the recipe's own rule wins a tie); without, every known formula of each step
 * is scored (the final pass). Returns whether a step changed. */
static bool pass(chain_ctx *cx, int pick[NVFP4_CHAIN_NSTEPS], score *cur, bool fit)
{
    bool changed = false;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        int keep = pick[s];
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < (fit ? cx->nfit[s] : cx->ncand[s]); k++) {
            int c = cx->cands[s][k];
            if (c == keep) {
                cx->table[s][k] = *cur;
            } else {
                pick[s] = c;
                cx->table[s][k] = evaluate(cx, pick, false);
                pick[s] = keep;
            }
            if (fit && c != keep && total_of(&cx->table[s][k]) < total_of(cur) &&
                (best == SIZE_MAX || total_of(&cx->table[s][k]) < total_of(&cx->table[s][best])))
                best = k;
        }
        if (best != SIZE_MAX) {
            pick[s] = cx->cands[s][best];
            *cur = cx->table[s][best];
            changed = true;
        }
    }
    return changed;
}

/* Occam: a deviation taken early in the descent may be no better than the recipe's rule
 * once the other steps are fitted; such a step goes back to the recipe's rule. Returns
 * whether a step changed. */
static bool simplify(chain_ctx *cx, int pick[NVFP4_CHAIN_NSTEPS], score *cur)
{
    bool changed = false;
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        if (pick[s] < 0) continue;
        int keep = pick[s];
        pick[s] = -1;
        score sc = evaluate(cx, pick, false);
        if (total_of(&sc) <= total_of(cur)) {
            *cur = sc;
            changed = true;
        } else {
            pick[s] = keep;
        }
    }
    return changed;
}

static const nvfp4_mutant_info *info_of(int c) { return c < 0 ? NULL : &nvfp4_mutant_catalog[c].info; }

/* A candidate's name: the mutant's, "R's rule" for another recipe's rule, "the recipe's rule". */
static void name_of(const chain_ctx *cx, int c, char *buf, size_t n)
{
    if (c >= 0) snprintf(buf, n, "%s", nvfp4_mutant_catalog[c].info.name);
    else if (c == -1) snprintf(buf, n, "the recipe's rule");
    else snprintf(buf, n, "%s's rule", cx->donor_name[-2 - c]);
}

static void add_alt(const chain_ctx *cx, nvfp4_chain_step *st, int c)
{
    if (st->n_alts < NVFP4_CHAIN_MAX_ALTS) {
        if (c == -1) st->alts[st->n_alts][0] = '\0';
        else name_of(cx, c, st->alts[st->n_alts], sizeof st->alts[st->n_alts]);
    }
    st->n_alts++;
}

/* What the final pass compared: "the recipe's rule, 3 other recipes' rules and 12 catalogued mutants". */
static void scope(const chain_ctx *cx, size_t s, char *buf, size_t n)
{
    size_t nmut = cx->ncand[s] - 1 - cx->nrecipe[s];
    snprintf(buf, n, "%zu candidate%s: the recipe's rule, %zu other recipe%s rule%s, %zu catalogued mutant%s",
             cx->ncand[s], cx->ncand[s] == 1 ? "" : "s", cx->nrecipe[s], cx->nrecipe[s] == 1 ? "'s" : "s'",
             cx->nrecipe[s] == 1 ? "" : "s", nmut, nmut == 1 ? "" : "s");
}

static void describe(char *buf, size_t n, const mism *m)
{
    if (m->data)
        snprintf(buf, n, "%s %zu (row %zu, col %zu): kernel 0x%X", m->what, m->index, m->row, m->col, m->kernel);
    else if (strcmp(m->what, "scale byte") == 0)
        snprintf(buf, n, "%s %zu (row %zu, block %zu): kernel 0x%02X", m->what, m->index, m->row, m->col, m->kernel);
    else
        snprintf(buf, n, "%s %zu: kernel 0x%02X", m->what, m->index, m->kernel);
}

/* An exact chain: proven unless another known formula of the step also gives every byte. */
static void settle_exact(chain_ctx *cx, size_t s, int chosen, nvfp4_chain_step *st)
{
    size_t nearest = SIZE_MAX;
    for (size_t k = 0; k < cx->ncand[s]; k++) {
        int c = cx->cands[s][k];
        if (c == chosen) continue;
        const score *sc = &cx->table[s][k];
        if (total_of(sc) == 0) add_alt(cx, st, c);
        else if (sc->valid && (nearest == SIZE_MAX || total_of(sc) < total_of(&cx->table[s][nearest]))) nearest = k;
    }
    char among[160];
    scope(cx, s, among, sizeof among);
    if (st->n_alts) {
        st->status = NVFP4_CHAIN_AMBIGUOUS;
        snprintf(st->evidence, sizeof st->evidence, "%zu other formula%s give%s the same bytes on this input (of %s)",
                 st->n_alts, st->n_alts == 1 ? "" : "s", st->n_alts == 1 ? "s" : "", among);
        return;
    }
    st->status = NVFP4_CHAIN_PROVEN;
    if (nearest == SIZE_MAX) {
        snprintf(st->evidence, sizeof st->evidence, "no other known formula for this step, recipe and options");
        return;
    }
    const score *sc = &cx->table[s][nearest];
    char d[160], nn[64];
    describe(d, sizeof d, &sc->first);
    name_of(cx, cx->cands[s][nearest], nn, sizeof nn);
    snprintf(st->evidence, sizeof st->evidence,
             "proven among %s, the others with the other steps as inferred: all differ; the nearest, %s, at %s, it "
             "gives 0x%X%s", among, nn, d, sc->first.chain, total_of(sc) > 1 ? " (and more)" : "");
}

/* A chain that is not exact: each step's best candidate (ties listed), and the steps the
 * remaining elements point at marked not explained. */
static void settle_inexact(chain_ctx *cx, size_t s, int chosen, size_t cur_total, nvfp4_chain_step *st)
{
    st->status = NVFP4_CHAIN_BEST_FIT;
    for (size_t k = 0; k < cx->ncand[s]; k++) {
        int c = cx->cands[s][k];
        if (c != chosen && total_of(&cx->table[s][k]) == cur_total && st->n_alts < NVFP4_CHAIN_MAX_ALTS)
            add_alt(cx, st, c);
    }
    snprintf(st->evidence, sizeof st->evidence, "the chain leaves %zu elements unexplained, so no step is proven",
             cur_total);
}

/* The stored-orientation input of a data element (NaN when outside the input). */
static float input_at(const chain_ctx *cx, const mism *m)
{
    size_t r = cx->colwise ? m->col : m->row, c = cx->colwise ? m->row : m->col;
    if (r >= cx->rows || c >= cx->cols) return NAN;
    return cx->x[r * cx->cols + c];
}

/* Which step an unexplained element points at: scale bytes at the block scale (or the
 * steps before it), data elements of NaN, Inf or zero inputs at the special values, the
 * other data elements at the element rounding (or the encode factor). */
static size_t step_of_unexplained(const chain_ctx *cx, const mism *m)
{
    if (!m->data) return 3; /* block-scale */
    float v = input_at(cx, m);
    if (isnan(v) || isinf(v) || v == 0.0f) return 6; /* special-values */
    return 5;                                         /* element-rounding */
}

static void mark_unexplained(chain_ctx *cx, nvfp4_chain_result *res)
{
    size_t count[NVFP4_CHAIN_NSTEPS] = {0};
    char list[NVFP4_CHAIN_NSTEPS][256];
    memset(list, 0, sizeof list);
    for (size_t i = 0; i < cx->n_unexplained; i++) {
        size_t s = step_of_unexplained(cx, &cx->unexplained[i]);
        if (count[s]++ < 3) {
            char d[160];
            describe(d, sizeof d, &cx->unexplained[i]);
            size_t len = strlen(list[s]);
            snprintf(list[s] + len, sizeof list[s] - len, "%s%s, chain 0x%X", len ? "; " : "", d,
                     cx->unexplained[i].chain);
        }
    }
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        if (!count[s]) continue;
        nvfp4_chain_step *st = &res->steps[s];
        st->status = NVFP4_CHAIN_NOT_EXPLAINED;
        /* %.255s: list[s] never holds more (its row is 256 bytes); said so that
         * GCC's aarch64 build does not take it for the whole 2-D array */
        snprintf(st->evidence, sizeof st->evidence, "%zu%s element%s no candidate explains%s: %.255s", count[s],
                 cx->n_unexplained == cx->cap_unexplained ? "+" : "", count[s] == 1 ? "" : "s",
                 s == 3 ? " (this step or the steps before it)" : s == 5 ? " (this step or the encode factor)" : "",
                 list[s]);
    }
}

/* The registered recipes whose rule of step s is the base's ("te,te-pyref,..."). */
static void recipes_sharing(size_t s, const nvfp4_core_recipe *base, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!step_has_rules(s)) return;
    for (size_t i = 0; i < nvfp4_recipe_count() && len < n; i++) {
        const nvfp4_core_recipe *rc = nvfp4_recipe_core(nvfp4_recipe_at(i));
        if (same_formats(rc, base) && same_step_rules(s, rc, base))
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", nvfp4_recipe_at(i)->info.name);
    }
}

int nvfp4_chain_infer(const float *x, size_t rows, size_t cols, const nvfp4_quant_opts *base, const char *base_name,
                      bool colwise, const nvfp4_vview *actual, nvfp4_chain_result *res)
{
    memset(res, 0, sizeof *res);
    snprintf(res->base, sizeof res->base, "%s", base_name ? base_name : base->recipe);
    chain_ctx cx;
    memset(&cx, 0, sizeof cx);
    cx.x = x, cx.rows = rows, cx.cols = cols, cx.colwise = colwise, cx.act = actual;
    cx.opts = *base;
    cx.opts.rowwise = !colwise;
    cx.opts.columnwise = colwise;
    cx.recipe = base->recipe ? base->recipe : "te";
    const nvfp4_recipe *br = nvfp4_recipe_find(cx.recipe);
    if (!br) return -1;
    cx.base_core = res->core = *nvfp4_recipe_core(br);
    cx.cap_unexplained = 4096;
    cx.unexplained = malloc(cx.cap_unexplained * sizeof *cx.unexplained);
    int rc = cx.unexplained && find_candidates(&cx) == 0 ? 0 : -1;
    if (rc == 0) {
        int pick[NVFP4_CHAIN_NSTEPS];
        for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) pick[s] = -1;
        score cur = evaluate(&cx, pick, false);
        bool changed = true;
        for (int p = 0; p < 6 && changed; p++) changed = pass(&cx, pick, &cur, true);
        simplify(&cx, pick, &cur);
        pass(&cx, pick, &cur, false); /* the final chain's table, every known formula of each step */
        cur = evaluate(&cx, pick, true);
        res->exact = cur.valid && total_of(&cur) == 0;
        res->data_mismatch = cur.data_mis;
        res->scale_mismatch = cur.scale_mis;
        for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
            nvfp4_chain_step *st = &res->steps[s];
            st->step = step_order[s];
            st->chosen = info_of(pick[s]);
            st->n_candidates = cx.nfit[s] - 1;
            st->n_recipe_rules = cx.nrecipe[s];
            st->n_mutants = cx.ncand[s] - 1 - cx.nrecipe[s];
            if (pick[s] == -1) recipes_sharing(s, &cx.base_core, st->rule_recipes, sizeof st->rule_recipes);
            if (res->exact) settle_exact(&cx, s, pick[s], st);
            else settle_inexact(&cx, s, pick[s], total_of(&cur), st);
            if (st->n_candidates) res->n_steps++;
        }
        if (!res->exact) mark_unexplained(&cx, res);
        res->evaluations = cx.evaluations;
    }
    for (size_t s = 0; s < NVFP4_CHAIN_NSTEPS; s++) {
        free(cx.cands[s]);
        free(cx.table[s]);
    }
    free(cx.unexplained);
    free(cx.donor_core);
    free(cx.donor_name);
    return rc;
}
