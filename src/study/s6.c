/*
 * s6.c - study S6, the positive control: linear regression whose weights are
 * stored in bf16 or E4M3 after every update, RN against SR (Gupta et al.
 * ICML 2015; Croci et al. 2022): RN updates stagnate, SR ones do not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/verdict.h"
#include "study/rng.h"

#include "core/bf16.h"
#include "core/e4m3.h"
#include "core/sr_float.h"

#define S6_D 256
#define S6_B 16

typedef enum { W_FP32, W_BF16, W_E4M3 } wfmt;

static float store(wfmt f, bool sr, float x, uint64_t seed, uint64_t idx)
{
    if (f == W_FP32) return x;
    uint32_t r = (uint32_t)(st_uniform(seed, 0x56, idx) * 4294967296.0);
    if (f == W_BF16) return sr ? nvfp4_core_sr_pbits(x, 8, -126, 3.3895313892515355e38f, 0, r) : nvfp4_core_round_bf16(x);
    return sr ? nvfp4_core_sr_pbits(x, 4, -6, 448.0f, 1, r) : nvfp4_core_e4m3_decode(nvfp4_core_e4m3_encode(x, 1));
}

/* All weight formats in lockstep on the same data stream (the data draws
 * dominate the cost): w[0] is FP32, w[1+k] the arm k. risk[k][i]. */
#define S6_NW 5
static void s6_lockstep(uint64_t seed, const wfmt *f, const bool *sr, size_t steps, size_t every, double **risk)
{
    static float w[S6_NW][S6_D];
    float ws[S6_D], x[S6_B][S6_D];
    double y[S6_B];
    memset(w, 0, sizeof w);
    for (int i = 0; i < S6_D; i++) ws[i] = (float)st_normal(seed, 0x60, (uint64_t)i);
    for (size_t s = 0; s < steps; s++) {
        for (int b = 0; b < S6_B; b++) {
            uint64_t base = ((uint64_t)s * S6_B + (uint64_t)b) * (S6_D + 1);
            y[b] = 0.0;
            for (int i = 0; i < S6_D; i++) {
                x[b][i] = (float)st_normal(seed, 0x61, base + (uint64_t)i);
                y[b] += (double)ws[i] * x[b][i];
            }
            y[b] += 0.5 * st_normal(seed, 0x61, base + S6_D);
        }
        double lr = 0.5e-2 * (0.01 + 0.99 * 0.5 * (1.0 + cos(3.14159265358979 * (double)s / (double)steps)));
        for (int k = 0; k < S6_NW; k++) {
            float *wk = w[k];
            if (s % every == 0) {
                double e = 0.0;
                for (int i = 0; i < S6_D; i++) e += ((double)wk[i] - ws[i]) * ((double)wk[i] - ws[i]);
                risk[k][s / every] = e; /* excess risk for isotropic inputs */
            }
            double g[S6_D] = {0};
            for (int b = 0; b < S6_B; b++) {
                double pred = 0.0;
                for (int i = 0; i < S6_D; i++) pred += (double)wk[i] * x[b][i];
                double r = pred - y[b];
                for (int i = 0; i < S6_D; i++) g[i] += r * x[b][i] / S6_B;
            }
            for (int i = 0; i < S6_D; i++)
                wk[i] = store(f[k], sr[k], (float)(wk[i] - lr * g[i]), seed, ((uint64_t)s * S6_D + (uint64_t)i) * 8 + (uint64_t)k);
        }
    }
}

static nvfp4_status s6_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    size_t seeds = o->seeds ? o->seeds : s->seeds, steps = o->steps ? o->steps : s->steps;
    size_t every = steps / 100 ? steps / 100 : 1, nl = (steps + every - 1) / every;
    static const struct {
        const char *name;
        wfmt f;
        bool sr;
    } arms[] = {{"bf16-rn", W_BF16, false}, {"bf16-sr", W_BF16, true}, {"e4m3-rn", W_E4M3, false},
                {"e4m3-sr", W_E4M3, true}};
    st_file sfr;
    FILE *f = st_file_open(&sfr, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "%s\n", ST_RUNS_HEADER);
    double *ref = malloc(nl * sizeof *ref), *lo = malloc(nl * sizeof *lo);
    st_row *rows = calloc(nl, sizeof *rows);
    if (!ref || !lo || !rows) {
        free(ref);
        free(lo);
        free(rows);
        st_file_discard(&sfr);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    /* one job per seed: the FP32 reference and the 4 arms in lockstep */
    double *rk[S6_NW];
    for (int k = 0; k < S6_NW; k++) rk[k] = malloc(nl * sizeof(double));
    wfmt fm[S6_NW] = {W_FP32, arms[0].f, arms[1].f, arms[2].f, arms[3].f};
    bool srs[S6_NW] = {false, arms[0].sr, arms[1].sr, arms[2].sr, arms[3].sr};
    for (size_t j = 0; j < seeds; j++) {
        if (!st_job_selected(j, o)) continue;
        uint64_t seed = o->seed_first + j + 1;
        bool ok = true;
        for (int k = 0; k < S6_NW; k++) ok = ok && rk[k];
        if (!ok) break;
        s6_lockstep(seed, fm, srs, steps, every, rk);
        for (int a = 0; a < 4; a++) {
            for (size_t i = 0; i < nl; i++)
                rows[i] = (st_row){.step = i * every, .seed = seed, .tokens = i * every * S6_B, .loss = rk[a + 1][i],
                                   .ref_loss = rk[0][i], .eval_loss = rk[a + 1][i], .ref_eval_loss = rk[0][i]};
            st_write_run_rows(f, arms[a].name, seed, rows, nl);
            if (log && !o->quiet)
                fprintf(log, "[s6] %-8s seed %llu: excess risk %.4g (fp32 weights %.4g)\n", arms[a].name,
                        (unsigned long long)seed, rk[a + 1][nl - 1], rk[0][nl - 1]);
        }
    }
    for (int k = 0; k < S6_NW; k++) free(rk[k]);
    free(ref);
    free(lo);
    free(rows);
    nvfp4_status st = st_file_commit(&sfr, o->out_dir, "runs.csv", err);
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, NULL, err);
    return st;
}

/* A finding on log10 of a final excess-risk ratio per seed, with its t
 * interval: risk(a) / risk(b), or risk(a) / the FP32-weight risk of the same
 * seed (b NULL); against null (a log10 threshold). */
static void s6_finding(const st_table *t, json_t *out, const char *claim, const char *src, const char *a,
                       const char *b, double null, int sign)
{
    const char *arms[2] = {a, b};
    const st_row *r[2 * 256];
    double d[256];
    size_t narms = b ? 2 : 1, n = st_paired_finals(t, arms, narms, r, 256);
    if (!n) return;
    for (size_t i = 0; i < n; i++) {
        const st_row *x = r[i * narms];
        d[i] = log10(x->eval_loss / (b ? r[i * narms + 1]->eval_loss : x->ref_eval_loss)) - null;
    }
    st_estimate e;
    st_est_t(d, n, &e); /* of x - null: the interval and p against null */
    e.est += null;
    e.lo += null;
    e.hi += null;
    e.null_value = null;
    char buf[320];
    snprintf(buf, sizeof buf,
             "log10(risk(%s) / risk(%s)) = %+.3f (x%.3g), 95%% CI [%+.3f, %+.3f] (paired t over %zu seeds) against "
             "%+.3f (x%.3g)",
             a, b ? b : "fp32 weights", e.est, pow(10.0, e.est), e.lo, e.hi, n, null, pow(10.0, null));
    st_finding_est(out, claim, src, buf, &e, sign, NAN, b ? "log10 risk ratio" : "log10 risk ratio to fp32", arms,
                   narms);
}

/* The final excess risks compared as log10 ratios per seed (the risks span
 * decades); "far above" and "close to" use this study's thresholds, stated
 * in each claim. */
static void s6_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "Gupta et al. ICML 2015; Croci et al. R. Soc. Open Sci. 2022";
    s6_finding(t, out, "RN-rounded bf16 weight updates stagnate far above fp32 (more than 100x its excess risk)", src,
               "bf16-rn", NULL, 2.0, +1);
    s6_finding(t, out, "RN-rounded bf16 weight updates stagnate above SR (more than 10x its excess risk)", src,
               "bf16-rn", "bf16-sr", 1.0, +1);
    s6_finding(t, out, "SR bf16 updates reach close to fp32 (within 5x its excess risk)", src, "bf16-sr", NULL,
               log10(5.0), -1);
    s6_finding(t, out, "with E4M3 weight storage SR beats RN (a lower excess risk)",
               "Croci et al. 2022 (stagnation avoidance)", "e4m3-rn", "e4m3-sr", 0.0, +1);
}

const nvfp4_study st_study_s6 = {
    .name = "s6",
    .wall = "27 s",
    .claim = "positive control: bf16/E4M3 weight storage with RN updates stagnates, SR does not (Gupta 2015; Croci 2022)",
    .seeds = 10, /* as every training study (docs/studies.md "How verdicts are decided") */
    .steps = 8000,
    .run = s6_run,
    .serial = true,
    .findings = s6_findings,
    .quick_steps = 8000, /* one seed of the default run (seconds): --quick shows its directions */
};
