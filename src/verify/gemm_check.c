/*
 * gemm_check.c - the engine of `nvfp4 gemm-check` (docs/verify.md,
 * "gemm-check"): every output of a kernel's GEMM against the rigorous
 * any-order fp32 bound of nvfp4_gemm_error_bound, and, when outputs fall
 * outside it or differ from the te order, the cause named from the bytes:
 * outputs rounded to bf16, a constant ratio to the exact result (a missing
 * or doubled global scale or alpha), D written transposed or an operand's
 * other orientation, an accumulation order. It reads results; it computes
 * no golden value of its own (nvfp4_gemm and nvfp4_gemm_error_bound do).
 */
#include "nvfp4/formats.h"
#include "nvfp4/gemm.h"
#include "nvfp4/verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gemm_cause_names[NVFP4_GEMM_CAUSE_COUNT] = {"bf16-output", "constant-ratio", "transposed",
                                                                      "accumulation-order"};

const char *nvfp4_gemm_cause_name(nvfp4_gemm_cause c)
{
    return (unsigned)c < NVFP4_GEMM_CAUSE_COUNT ? gemm_cause_names[c] : "?";
}

void nvfp4_gemm_check(const float *actual, const float *te, const double *exact, const double *bound, size_t n,
                      nvfp4_gemm_check_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->total = n;
    for (size_t i = 0; i < n; i++) {
        double a = (double)actual[i], x = exact[i], b = bound[i];
        if (te) {
            uint32_t ua, ut;
            memcpy(&ua, &actual[i], 4);
            memcpy(&ut, &te[i], 4);
            rep->te_equal += ua == ut || (isnan(actual[i]) && isnan(te[i]));
        }
        if (!isfinite(a) || !isfinite(x)) {
            bool same = (isnan(a) && isnan(x)) || a == x;
            if (!same) {
                rep->nan_mismatch++;
                rep->outside_bound++;
                rep->worst_ratio = INFINITY;
                rep->worst_index = i;
            }
            continue;
        }
        double d = fabs(a - x);
        double ratio = d == 0.0 ? 0.0 : (b > 0.0 ? d / b : INFINITY);
        if (ratio > 1.0) rep->outside_bound++;
        if (ratio > rep->worst_ratio) {
            rep->worst_ratio = ratio;
            rep->worst_index = i;
        }
    }
    rep->within_bound = rep->outside_bound == 0;
    rep->equals_te = te && rep->te_equal == n;
}

/* ---- causes -------------------------------------------------------------------------- */

static void add_gcause(nvfp4_gemm_check_report *rep, nvfp4_gemm_cause c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void add_gcause(nvfp4_gemm_check_report *rep, nvfp4_gemm_cause c, const char *fmt, ...)
{
    if (rep->n_causes >= NVFP4_GEMM_CAUSE_COUNT) return;
    nvfp4_gemm_cause_line *l = &rep->causes[rep->n_causes++];
    l->cause = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->line, sizeof l->line, fmt, ap);
    va_end(ap);
}

static bool bf16_representable(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0xFFFFu) == 0;
}

/* The kernel's output read as a hypothesis sees it. */
typedef struct {
    const float *act;
    size_t m, n;
    bool transposed; /* D written column-major: element (i, j) at j*m + i */
    double widen;    /* relative slack for an output rounded to bf16 (2^-8: half a bf16 ulp is at most that) */
} gemm_view;

/* Outputs that do NOT satisfy |D - r exact| <= |r| bound + rel |r exact| + widen |D| + 2^-149: a kernel that
 * computes r times the golden GEMM, in any fp32 order, with a scale constant of its own (rel covers that
 * constant's rounding, a few units of fp32 roundoff). Non-finite outputs must match non-finite exact ones. */
static size_t misfits(const gemm_view *v, const double *exact, const double *bound, double r, double rel)
{
    size_t bad = 0;
    for (size_t i = 0; i < v->m; i++)
        for (size_t j = 0; j < v->n; j++) {
            double e = exact[i * v->n + j], b = bound[i * v->n + j];
            double a = (double)v->act[v->transposed ? j * v->m + i : i * v->n + j];
            if (!isfinite(e) || !isfinite(a) || !isfinite(b)) {
                bad += !((isnan(a) && isnan(e)) || a == e * r);
                continue;
            }
            double tol = fabs(r) * b + rel * fabs(r * e) + v->widen * fabs(a) + 0x1p-149;
            bad += fabs(a - r * e) > tol;
        }
    return bad;
}

static size_t count_nonzero_finite(const double *x, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += isfinite(x[i]) && x[i] != 0.0;
    return c;
}

/* 1. bf16 outputs: every finite nonzero output has its low 16 bits zero while at least two te outputs do not.
 * An fp32 result whose low 16 bits are uniform is bf16-representable with probability 2^-16, so m such
 * outputs all being so by chance has probability 2^-16m <= 2^-32. Returns whether it was named. */
static bool cause_bf16(nvfp4_gemm_check_report *rep, const gemm_view *v, const float *te, const double *exact,
                       const double *bound, size_t *outside)
{
    size_t mn = v->m * v->n, nf = 0, nb = 0, te_not = 0, rn_te = 0;
    for (size_t i = 0; i < mn; i++) {
        if (isfinite(v->act[i]) && v->act[i] != 0.0f) {
            nf++;
            nb += bf16_representable(v->act[i]);
        }
        if (isfinite(te[i]) && te[i] != 0.0f && !bf16_representable(te[i])) te_not++;
        rn_te += nvfp4_bf16_to_f32(nvfp4_bf16_from_f32(te[i])) == v->act[i];
    }
    if (!nf || nb != nf || te_not < 2) return false;
    gemm_view w = *v;
    w.widen = 0x1p-8;
    size_t out = misfits(&w, exact, bound, 1.0, 0.0);
    *outside = out;
    add_gcause(rep, NVFP4_GEMM_CAUSE_BF16_OUTPUT,
               "gemm: all %zu finite nonzero outputs are bf16-representable (low 16 bits zero) where %zu of the te "
               "order's are not: the kernel rounds D to bf16; %zu of %zu equal bf16-RN of the te result, and %zu lie "
               "outside the any-order bound widened by one bf16 rounding",
               nf, te_not, rn_te, mn, out);
    return true;
}

/* 2. a constant ratio r = D / exact. Candidates from the two global scales
 * (decode scale g = amax/2688, so the golden carries g_A g_B through alpha)
 * and alpha; a fit is every output within r times the bound (see misfits).
 * Named as proven when one candidate ratio fits and no other does; as
 * consistent with a list when several coincide (equal amaxes). */
typedef struct {
    double r;
    const char *what;
} ratio_candidate;

static void cause_ratio(nvfp4_gemm_check_report *rep, const gemm_view *v, const double *exact, const double *bound,
                        float amax_a, float amax_b, bool has_global, float alpha)
{
    size_t mn = v->m * v->n;
    if (count_nonzero_finite(exact, mn) < 2) return; /* any ratio fits one value */
    const double rel = 0x1p-22;
    double ga = (double)amax_a / 2688.0, gb = (double)amax_b / 2688.0;
    ratio_candidate c[8];
    size_t nc = 0;
    if (has_global && ga > 0 && gb > 0 && isfinite(ga) && isfinite(gb)) {
        c[nc++] = (ratio_candidate){1.0 / (ga * gb), "both global scales missing (ratio (2688/amax_A)(2688/amax_B))"};
        c[nc++] = (ratio_candidate){1.0 / ga, "A's global scale missing (ratio 2688/amax_A)"};
        c[nc++] = (ratio_candidate){1.0 / gb, "B's global scale missing (ratio 2688/amax_B)"};
        c[nc++] = (ratio_candidate){ga * gb, "both global scales applied twice (ratio amax_A amax_B / 2688^2)"};
        c[nc++] = (ratio_candidate){ga, "A's global scale applied twice (ratio amax_A/2688)"};
        c[nc++] = (ratio_candidate){gb, "B's global scale applied twice (ratio amax_B/2688)"};
    }
    if (alpha != 1.0f && alpha != 0.0f) {
        c[nc++] = (ratio_candidate){1.0 / (double)alpha, "alpha not applied (ratio 1/alpha)"};
        c[nc++] = (ratio_candidate){(double)alpha, "alpha applied twice (ratio alpha)"};
    }
    char list[256] = "", rs[32];
    size_t fits = 0, len = 0;
    double r_fit = 0;
    for (size_t k = 0; k < nc; k++) {
        if (fabs(c[k].r - 1.0) <= rel || misfits(v, exact, bound, c[k].r, rel)) continue;
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s", fits ? "; " : "",
                                c[k].what);
        fits++;
        r_fit = c[k].r;
    }
    if (fits) {
        add_gcause(rep, NVFP4_GEMM_CAUSE_CONSTANT_RATIO, "gemm: D = %s x exact on every output: %s %s",
                   nvfp4_format_f64_digits(r_fit, 7, rs, sizeof rs), fits == 1 ? "proven (no other candidate fits):"
                                                                               : "consistent with each of:", list);
        return;
    }
    /* no named ratio: estimate one from the largest exact output and test it */
    size_t big = 0;
    for (size_t i = 0; i < mn; i++)
        if (isfinite(exact[i]) && fabs(exact[i]) > fabs(exact[big])) big = i;
    size_t bi = big / v->n, bj = big % v->n;
    double a = (double)v->act[v->transposed ? bj * v->m + bi : big], r = a / exact[big];
    if (!isfinite(r) || r == 0.0 || fabs(r - 1.0) <= v->widen + 0x1p-20 || misfits(v, exact, bound, r, 0x1p-20))
        return;
    /* the nearest power of two, if it fits too, is the simpler story (a scale exponent off) */
    char p2[48] = "";
    double r2 = copysign(exp2(round(log2(fabs(r)))), r);
    if (!misfits(v, exact, bound, r2, 0x1p-20)) {
        snprintf(p2, sizeof p2, " (%s2^%d: a scale exponent off)", r < 0 ? "-" : "", (int)round(log2(fabs(r))));
        r = r2;
    }
    add_gcause(rep, NVFP4_GEMM_CAUSE_CONSTANT_RATIO,
               "gemm: D = %s x exact on every output%s; no global scale or alpha of this GEMM gives that ratio",
               nvfp4_format_f64_digits(r, 7, rs, sizeof rs), p2);
}

/* 3. transposed: D written column-major, or an operand's other orientation (the quantization of its
 * transpose, where the bundle holds it with the same shape) in place of the one given. */
static nvfp4_status cause_transposed(nvfp4_gemm_check_report *rep, const gemm_view *v, const double *exact,
                                     const double *bound, const nvfp4_quantized *a, bool acol,
                                     const nvfp4_quantized *b, bool bcol, float alpha, nvfp4_error *err)
{
    if (v->m > 1 && v->n > 1) {
        gemm_view t = *v;
        t.transposed = true;
        if (!misfits(&t, exact, bound, 1.0, 0.0)) {
            add_gcause(rep, NVFP4_GEMM_CAUSE_TRANSPOSED,
                       "gemm: D is written transposed (column-major): element (i, j) is at j*M + i, where every "
                       "output lies within the any-order bound");
            return NVFP4_OK;
        }
    }
    size_t mn = v->m * v->n, k = (acol ? &a->col : &a->row)->cols;
    double *ex = malloc((mn ? mn : 1) * sizeof *ex), *bd = malloc((mn ? mn : 1) * sizeof *bd);
    if (!ex || !bd) {
        free(ex), free(bd);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "gemm-check: out of memory");
    }
    static const char *const side[2] = {"rowwise", "columnwise"};
    for (int flip = 1; flip <= 3; flip++) { /* 1: A, 2: B, 3: both */
        bool fa = flip & 1, fb = flip & 2, ac = fa ? !acol : acol, bc = fb ? !bcol : bcol;
        const nvfp4_qtensor *ta = ac ? &a->col : &a->row, *tb = bc ? &b->col : &b->row;
        if ((ac ? !a->has_col : !a->has_row) || (bc ? !b->has_col : !b->has_row)) continue;
        if (ta->rows != v->m || tb->rows != v->n || ta->cols != k || tb->cols != k) continue;
        nvfp4_error e2;
        if (nvfp4_gemm_error_bound(a, ac, b, bc, alpha, bd, ex, &e2) != NVFP4_OK) continue;
        if (misfits(v, ex, bd, 1.0, 0.0)) continue;
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", fa ? (acol ? "A's rowwise output" : "A's columnwise output (A^T quantized)") : "",
                 fa && fb ? " and " : "", fb ? (bcol ? "B's rowwise output" : "B's columnwise output (B^T quantized)") : "");
        add_gcause(rep, NVFP4_GEMM_CAUSE_TRANSPOSED,
                   "gemm: a transposed operand: every output lies within the any-order bound of the GEMM that uses %s "
                   "in place of the %s one given",
                   what, fa ? side[acol] : side[bcol]);
        break;
    }
    free(ex), free(bd);
    return NVFP4_OK;
}

/* 4. within the bound but not the te order: which of the fp32 orders we
 * know reproduces every output bit for bit (consistent with that order:
 * another order may give the same bytes). */
static nvfp4_status cause_order(nvfp4_gemm_check_report *rep, const gemm_view *v, const nvfp4_quantized *a, bool acol,
                                const nvfp4_quantized *b, bool bcol, float alpha, nvfp4_error *err)
{
    static const struct {
        nvfp4_gemm_order order;
        const char *name;
    } orders[] = {{NVFP4_GEMM_REVERSE, "reverse sequential"},
                  {NVFP4_GEMM_PAIRWISE, "pairwise"},
                  {NVFP4_GEMM_EXACT, "correctly rounded (exact sum)"}};
    size_t mn = v->m * v->n;
    float *d = malloc((mn ? mn : 1) * sizeof *d);
    if (!d) return nvfp4_error_set(err, NVFP4_ENOMEM, "gemm-check: out of memory");
    char list[160] = "";
    size_t len = 0, hits = 0;
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        nvfp4_status st = nvfp4_gemm(a, acol, b, bcol, alpha, orders[o].order, d, err);
        if (st != NVFP4_OK) {
            free(d);
            return st;
        }
        if (memcmp(d, v->act, mn * sizeof *d) != 0) continue;
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s", hits ? ", " : "",
                                orders[o].name);
        hits++;
    }
    free(d);
    char wr[32];
    add_gcause(rep, NVFP4_GEMM_CAUSE_ACCUMULATION_ORDER,
               "gemm: an accumulation order: every output lies within the any-order fp32 bound (worst %s of it) and "
               "%zu of %zu differ from the te order (sequential over K); %s%s",
               nvfp4_format_f64_digits(rep->worst_ratio, 3, wr, sizeof wr), rep->total - rep->te_equal, rep->total,
               hits ? "bit-identical on every output to the order: " : "none of the reverse, pairwise and exact orders "
                                                                      "reproduces it bit for bit (split-K or a "
                                                                      "tensor-core reduction tree?)",
               list);
    return NVFP4_OK;
}

nvfp4_status nvfp4_gemm_check_causes(const nvfp4_quantized *a, bool acol, const nvfp4_quantized *b, bool bcol,
                                     float alpha, const float *actual, nvfp4_gemm_check_report *rep, nvfp4_error *err)
{
    if (!a || !b || !actual || !rep) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm-check: a NULL argument");
    rep->n_causes = 0;
    if (acol ? !a->has_col : !a->has_row) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm-check: A lacks that output");
    if (bcol ? !b->has_col : !b->has_row) return nvfp4_error_set(err, NVFP4_EINVAL, "gemm-check: B lacks that output");
    const nvfp4_qtensor *ta = acol ? &a->col : &a->row, *tb = bcol ? &b->col : &b->row;
    gemm_view v = {actual, ta->rows, tb->rows, false, 0.0};
    size_t mn = v.m * v.n;
    if (rep->equals_te) return NVFP4_OK;
    float *te = malloc((mn ? mn : 1) * sizeof *te);
    double *ex = malloc((mn ? mn : 1) * sizeof *ex), *bd = malloc((mn ? mn : 1) * sizeof *bd);
    nvfp4_status st = !te || !ex || !bd ? nvfp4_error_set(err, NVFP4_ENOMEM, "gemm-check: out of memory") : NVFP4_OK;
    if (!st) st = nvfp4_gemm(a, acol, b, bcol, alpha, NVFP4_GEMM_TE, te, err);
    if (!st) st = nvfp4_gemm_error_bound(a, acol, b, bcol, alpha, bd, ex, err);
    if (!st) {
        if (rep->within_bound) {
            st = cause_order(rep, &v, a, acol, b, bcol, alpha, err);
        } else {
            size_t outside = 0;
            bool bf16 = cause_bf16(rep, &v, te, ex, bd, &outside);
            if (bf16) v.widen = 0x1p-8;
            if (bf16 && !outside) goto done; /* an fp32 result within the bound, rounded to bf16: nothing more */
            bool global = nvfp4_recipe_get_info(a->recipe) && nvfp4_recipe_get_info(a->recipe)->has_global_amax;
            cause_ratio(rep, &v, ex, bd, ta->amax, tb->amax, global, alpha);
            st = cause_transposed(rep, &v, ex, bd, a, acol, b, bcol, alpha, err);
        }
    }
done:
    free(te), free(ex), free(bd);
    return st;
}
