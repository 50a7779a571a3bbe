/*
 * verdict.c - the laboratory's statistics and verdict rules (verdict.h): every
 * training study's finding is a paired per-seed estimate with a 95% interval,
 * corrected with Holm over the study's findings and decided by one fixed rule.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/splitmix.h"
#include "study/verdict.h"

void st_est_t(const double *d, size_t n, st_estimate *e)
{
    double m = 0.0, v = 0.0;
    for (size_t i = 0; i < n; i++) m += d[i];
    m = n ? m / (double)n : NAN;
    for (size_t i = 0; i < n; i++) v += (d[i] - m) * (d[i] - m);
    e->method = "paired t";
    e->n = n;
    e->est = m;
    e->null_value = 0.0;
    e->lo = e->hi = NAN;
    e->p = 1.0;
    if (n < 2) return;
    double se = sqrt(v / (double)(n - 1)) / sqrt((double)n), df = (double)(n - 1);
    double h = gsl_cdf_tdist_Pinv(0.975, df) * se;
    e->lo = m - h;
    e->hi = m + h;
    if (se > 0)
        e->p = 2.0 * gsl_cdf_tdist_Q(fabs(m) / se, df);
    else
        e->p = m == 0.0 ? 1.0 : 0.0; /* identical differences: no spread */
    if (e->p > 1.0) e->p = 1.0;
}

double st_mde80(const st_estimate *e)
{
    if (e->n < 2 || !isfinite(e->lo) || !isfinite(e->hi)) return NAN;
    double half = 0.5 * (e->hi - e->lo);
    if (!strcmp(e->method, "paired t")) {
        double df = (double)(e->n - 1), t975 = gsl_cdf_tdist_Pinv(0.975, df);
        return (t975 + gsl_cdf_tdist_Pinv(0.80, df)) * half / t975;
    }
    double z975 = gsl_cdf_ugaussian_Pinv(0.975);
    return (z975 + gsl_cdf_ugaussian_Pinv(0.80)) * half / z975;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void st_est_boot(st_boot_stat stat, const void *ctx, size_t n, double null_value, st_estimate *e)
{
    e->method = "paired percentile bootstrap";
    e->n = n;
    e->null_value = null_value;
    e->lo = e->hi = NAN;
    e->p = 1.0;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    double *r = malloc(ST_BOOT_RESAMPLES * sizeof *r);
    if (!idx || !r || !n) {
        free(idx);
        free(r);
        e->est = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++) idx[i] = i;
    e->est = stat(idx, n, ctx);
    if (n >= 2) {
        uint64_t s = ST_BOOT_SEED;
        size_t below = 0, above = 0;
        for (size_t b = 0; b < ST_BOOT_RESAMPLES; b++) {
            for (size_t i = 0; i < n; i++) idx[i] = (size_t)(nvfp4_core_splitmix64(&s) % n);
            double v = stat(idx, n, ctx);
            r[b] = isnan(v) ? INFINITY : v;
            if (r[b] <= null_value) below++;
            if (r[b] >= null_value) above++;
        }
        qsort(r, ST_BOOT_RESAMPLES, sizeof *r, cmp_double);
        e->lo = r[(size_t)floor(0.025 * ST_BOOT_RESAMPLES)];
        e->hi = r[(size_t)ceil(0.975 * ST_BOOT_RESAMPLES) - 1];
        double p = 2.0 * ((double)(below < above ? below : above) + 1.0) / (ST_BOOT_RESAMPLES + 1.0);
        e->p = p > 1.0 ? 1.0 : p;
    }
    free(idx);
    free(r);
}

void st_holm(const double *p, size_t n, double *adj)
{
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!ord) {
        for (size_t i = 0; i < n; i++) adj[i] = 1.0; /* no memory: decide nothing */
        return;
    }
    for (size_t i = 0; i < n; i++) ord[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort by p (stable; n is a handful) */
        for (size_t j = i; j > 0 && p[ord[j]] < p[ord[j - 1]]; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    double run = 0.0;
    for (size_t k = 0; k < n; k++) {
        double a = (double)(n - k) * p[ord[k]];
        if (a > 1.0) a = 1.0;
        if (a < run) a = run; /* step-down: adjusted p never decreases */
        run = a;
        adj[ord[k]] = a;
    }
    free(ord);
}

const char *st_verdict_name(st_verdict v)
{
    switch (v) {
    case ST_V_REPRODUCED: return "reproduced";
    case ST_V_DIRECTION: return "direction only";
    case ST_V_NOT: return "not reproduced";
    default: return "inconclusive";
    }
}

double st_seeds_needed(const st_estimate *e)
{
    if (e->n < 2 || !isfinite(e->lo) || !isfinite(e->hi)) return NAN;
    double delta = fabs((isnan(e->est) ? INFINITY : e->est) - e->null_value), n0 = (double)e->n;
    if (isinf(delta)) return 2.0;
    if (delta == 0.0) return INFINITY; /* a tie: no number of seeds detects it */
    double half = 0.5 * (e->hi - e->lo);
    if (strcmp(e->method, "paired t")) { /* bootstrap: SE = half / z_0.975 shrinks as 1/sqrt(n) */
        double z975 = gsl_cdf_ugaussian_Pinv(0.975), z80 = gsl_cdf_ugaussian_Pinv(0.80);
        double n = ceil(n0 * pow((z975 + z80) * (half / z975) / delta, 2.0));
        return n > 1e9 ? INFINITY : n < 2.0 ? 2.0 : n;
    }
    double sd = half / gsl_cdf_tdist_Pinv(0.975, n0 - 1.0) * sqrt(n0); /* per-seed standard deviation */
    if (sd == 0.0) return 2.0;
    /* the normal-quantile answer is a lower bound (t quantiles exceed z), so
     * the search starts there and steps up a few seeds at most */
    double z = gsl_cdf_ugaussian_Pinv(0.975) + gsl_cdf_ugaussian_Pinv(0.80);
    double n = ceil(pow(z * sd / delta, 2.0));
    if (n > 1e9) return INFINITY;
    for (n = n < 2.0 ? 2.0 : n; n <= 1e9; n += 1.0)
        if ((gsl_cdf_tdist_Pinv(0.975, n - 1.0) + gsl_cdf_tdist_Pinv(0.80, n - 1.0)) * sd / sqrt(n) <= delta) return n;
    return INFINITY;
}

bool st_underpowered(const st_estimate *e, double published)
{
    double mde = st_mde80(e);
    double target = isfinite(published) ? fabs(published - e->null_value)
                                        : fabs((isnan(e->est) ? INFINITY : e->est) - e->null_value);
    return !(mde <= target); /* NAN (no interval) is underpowered too */
}

st_verdict st_verdict_decide(const st_estimate *e, double p_holm, int expected_sign, double published,
                             double ceiling, const char **rule)
{
    double s = expected_sign < 0 ? -1.0 : 1.0;
    if (e->n < 2 || isnan(e->lo) || isnan(e->hi)) {
        *rule = "fewer than 2 paired seeds: no interval";
        return ST_V_INCONCLUSIVE;
    }
    /* the published band, in the estimate's orientation (s * (x - null)) */
    bool sized = isfinite(published);
    double pub = s * (published - e->null_value), lo = s * (e->lo - e->null_value), hi = s * (e->hi - e->null_value);
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    double band_lo = pub * (1.0 - ST_VERDICT_BAND), band_hi = pub * (1.0 + ST_VERDICT_BAND);
    double est = isnan(e->est) ? INFINITY : e->est; /* a NAN statistic counts as +infinity (verdict.h) */
    /* out of reach: the band starts beyond the largest value the run's statistic can take */
    bool reachable = !sized || !isfinite(ceiling) || s * (ceiling - e->null_value) >= band_lo;
    /* a tie (the estimate equals the null value) is significant in no direction, whatever its p */
    bool tie = est == e->null_value;
    bool sig = !tie && p_holm < ST_VERDICT_ALPHA, right = s * (est - e->null_value) > 0;
    if (sig && !right) {
        *rule = "significant after Holm, opposite sign";
        return ST_V_NOT;
    }
    if (sig) {
        if (!sized) {
            *rule = "significant after Holm, published direction (the source states no size)";
            return ST_V_REPRODUCED;
        }
        if (!reachable) {
            *rule = "significant after Holm, published direction; the published value -50% lies beyond the "
                    "largest value this run can reach";
            return ST_V_DIRECTION;
        }
        if (hi >= band_lo && lo <= band_hi) {
            *rule = "significant after Holm, published direction, interval meets the published value +-50%";
            return ST_V_REPRODUCED;
        }
        *rule = "significant after Holm, published direction, interval misses the published value +-50%";
        return ST_V_DIRECTION;
    }
    if (sized && pub > 0 && hi < band_lo) {
        if (!reachable) {
            *rule = "not significant after Holm; the published value -50% lies beyond the largest value this run "
                    "can reach, so missing it rules nothing out";
            return ST_V_INCONCLUSIVE;
        }
        *rule = "not significant, and the interval lies below the published value -50%";
        return ST_V_NOT;
    }
    *rule = tie ? "a tie: the estimate equals the null value, which is never a win" : "not significant after Holm";
    return ST_V_INCONCLUSIVE;
}

/* JSON has no infinity: a bootstrap bound "not within the arms" is written "inf" */
static json_t *num(double v)
{
    if (isinf(v)) return json_string(v > 0 ? "inf" : "-inf");
    return isnan(v) ? json_null() : json_real(v);
}

/* seeds_needed: an integer, or "inf" (a tie, or more than 10^9), or null */
static json_t *seeds_json(double n) { return isfinite(n) ? json_integer((json_int_t)n) : num(n); }

json_t *st_finding_est(json_t *arr, const char *claim, const char *source, const char *measured,
                       const st_estimate *e, int expected_sign, double published, const char *statistic,
                       const char *const *arms, size_t narms)
{
    json_t *o = json_object();
    json_object_set_new(o, "claim", json_string(claim));
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "measured", json_string(measured));
    json_object_set_new(o, "verdict", json_string("inconclusive")); /* set by st_verdicts_finalize */
    json_t *x = json_object();
    json_object_set_new(x, "statistic", json_string(statistic));
    json_t *ja = json_array();
    for (size_t k = 0; k < narms; k++) json_array_append_new(ja, json_string(arms[k]));
    json_object_set_new(x, "arms", ja);
    json_object_set_new(x, "method", json_string(e->method));
    json_object_set_new(x, "seeds", json_integer((json_int_t)e->n));
    json_object_set_new(x, "estimate", num(e->est));
    json_object_set_new(x, "ci95", json_pack("[oo]", num(e->lo), num(e->hi)));
    json_object_set_new(x, "mde80", num(st_mde80(e)));
    json_object_set_new(x, "seeds_needed", seeds_json(st_seeds_needed(e)));
    json_object_set_new(x, "underpowered", json_boolean(st_underpowered(e, published)));
    json_object_set_new(x, "null", json_real(e->null_value));
    json_object_set_new(x, "p", json_real(e->p));
    json_object_set_new(x, "expected_sign", json_integer(expected_sign < 0 ? -1 : 1));
    json_object_set_new(o, "stats", x);
    json_object_set_new(o, "published", num(published));
    json_array_append_new(arr, o);
    return o;
}

void st_finding_set_ceiling(json_t *finding, double ceiling)
{
    json_t *x = json_object_get(finding, "stats");
    if (x) json_object_set_new(x, "ceiling", num(ceiling));
}

void st_finding_criterion(json_t *arr, const char *claim, const char *source, const char *measured, bool met,
                          const char *criterion)
{
    json_t *o = json_object();
    json_object_set_new(o, "claim", json_string(claim));
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "measured", json_string(measured));
    json_object_set_new(o, "verdict", json_string(met ? "reproduced" : "not reproduced"));
    json_object_set_new(o, "rule", json_string(criterion));
    json_array_append_new(arr, o);
}

void st_finding_inconclusive(json_t *arr, const char *claim, const char *source, const char *measured,
                             const char *why)
{
    json_t *o = json_object();
    json_object_set_new(o, "claim", json_string(claim));
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "measured", json_string(measured));
    json_object_set_new(o, "verdict", json_string("inconclusive"));
    json_object_set_new(o, "rule", json_string(why));
    json_array_append_new(arr, o);
}

static double jval(const json_t *v)
{
    if (json_is_number(v)) return json_number_value(v);
    if (json_is_string(v)) return json_string_value(v)[0] == '-' ? -INFINITY : INFINITY;
    return NAN;
}
static double jnum(const json_t *o, const char *k) { return jval(json_object_get(o, k)); }

void st_verdicts_finalize(json_t *arr) { st_verdicts_finalize_looks(arr, 1); }

void st_verdicts_finalize_looks(json_t *arr, size_t looks)
{
    size_t n = json_array_size(arr), m = 0;
    double *p = calloc(n ? n : 1, sizeof *p), *adj = malloc((n ? n : 1) * sizeof *adj);
    size_t *which = malloc((n ? n : 1) * sizeof *which);
    if (!p || !adj || !which) goto out;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_object_get(json_array_get(arr, i), "stats");
        if (x) {
            which[m] = i;
            p[m] = jnum(x, "p") * (double)looks; /* Bonferroni over the looks */
            if (!(p[m] <= 1.0)) p[m] = 1.0;
            m++;
        }
    }
    st_holm(p, m, adj);
    for (size_t k = 0; k < m; k++) {
        json_t *o = json_array_get(arr, which[k]), *x = json_object_get(o, "stats");
        json_t *ci = json_object_get(x, "ci95");
        st_estimate e = {.method = "", .n = (size_t)json_integer_value(json_object_get(x, "seeds")),
                         .est = jnum(x, "estimate"), .lo = jval(json_array_get(ci, 0)),
                         .hi = jval(json_array_get(ci, 1)), .null_value = jnum(x, "null"), .p = p[k]};
        const char *rule;
        st_verdict v = st_verdict_decide(&e, adj[k], (int)json_integer_value(json_object_get(x, "expected_sign")),
                                         jnum(o, "published"), jnum(x, "ceiling"), &rule);
        if (looks > 1) {
            json_object_set_new(x, "looks", json_integer((json_int_t)looks));
            json_object_set_new(x, "p_looks", json_real(p[k]));
        }
        json_object_set_new(x, "p_holm", json_real(adj[k]));
        json_object_set_new(x, "holm_family", json_integer((json_int_t)m));
        json_object_set_new(o, "verdict", json_string(st_verdict_name(v)));
        json_object_set_new(o, "rule", json_string(rule));
    }
out:
    free(p);
    free(adj);
    free(which);
}
