/*
 * s0.c - study S0, pure arithmetic (docs/studies.md, "S0: arithmetic"):
 * (a) stagnation of the harmonic series and of 1 + n*delta, RN vs SR,
 * in fp16 / bf16 / E4M3 / E5M2; (b) n*u versus sqrt(n)*u growth of recursive
 * sums, plain and chunked; (c) quantizer statistics of NVFP4 / MXFP4 configs
 * on normal, Laplace and channel-outlier data; (d) SR averaging of GEMMs;
 * (f) the scale-rounding bias of NVFP4 SR with round-to-nearest E4M3 scales.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/philox.h"
#include "study/studies.h"
#include "study/labfile.h"
#include "study/rng.h"

/* S0's files: no runs.csv; a merge concatenates these. */
static const char *const s0_files[] = {"s0_stagnation.csv", "s0_harmonic.dat", "s0_growth.csv", "s0_quant.csv",
                                       "s0_sravg.csv",      "s0_scalebias.csv", NULL};

/* A sequential Philox stream of 32-bit words for the long S0 loops. */
typedef struct {
    nvfp4_philox_stream st;
} rng32;
static void rng_init(rng32 *r, uint64_t seed, uint64_t stream) { nvfp4_philox_init(&r->st, seed, stream, 0); }
static uint32_t rng_next(rng32 *r) { return nvfp4_philox_next(&r->st); }

/* ---- (a) stagnation ------------------------------------------------------- */
static float harmonic_sr_run(nvfp4_lp_format f, uint64_t seed, size_t terms)
{
    return nvfp4_lp_harmonic(f, true, seed, terms, NULL);
}

static nvfp4_status s0_stagnation(const char *dir, size_t runs, FILE *log, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "experiment,format,rounding,n,value,value_std,frozen_at,exact\n");
    for (int fm = 0; fm < 4; fm++) {
        size_t at;
        float rn = nvfp4_lp_harmonic((nvfp4_lp_format)fm, false, 0, 20000, &at);
        size_t N = 10 * at;
        double exact = 0.0;
        for (size_t n = 1; n <= N; n++) exact += 1.0 / (double)n;
        double s = 0, s2 = 0;
        for (size_t k = 0; k < runs; k++) {
            double v = harmonic_sr_run((nvfp4_lp_format)fm, 1000 + k, N);
            s += v;
            s2 += v * v;
        }
        double m = s / (double)runs, sd = sqrt(fmax(0.0, s2 / (double)runs - m * m) * (double)runs / (double)(runs - 1));
        fprintf(f, "harmonic,%s,rn,%zu,%.9g,0,%zu,%.9g\n", nvfp4_lp_name((nvfp4_lp_format)fm), N, rn, at, exact);
        fprintf(f, "harmonic,%s,sr,%zu,%.9g,%.6g,0,%.9g\n", nvfp4_lp_name((nvfp4_lp_format)fm), N, m, sd, exact);
        if (log) fprintf(log, "[s0] harmonic %s: RN freezes at %.9g from term %zu; SR mean %.4f +- %.4f vs exact %.4f (N=%zu)\n",
                         nvfp4_lp_name((nvfp4_lp_format)fm), rn, at, m, sd, exact, N);
    }
    static const struct {
        nvfp4_lp_format f;
        float delta;
        size_t n;
    } ra[] = {{NVFP4_LP_BF16, 0.001f, 1000}, {NVFP4_LP_FP16, 1e-4f, 10000}, {NVFP4_LP_E4M3, 0.01f, 100},
              {NVFP4_LP_E5M2, 0.01f, 100}};
    for (int i = 0; i < 4; i++) {
        float rn = nvfp4_lp_repeat_add(ra[i].f, false, 0, 1.0f, ra[i].delta, ra[i].n);
        double s = 0, s2 = 0;
        for (size_t k = 0; k < runs; k++) {
            double v = nvfp4_lp_repeat_add(ra[i].f, true, 2000 + k, 1.0f, ra[i].delta, ra[i].n);
            s += v;
            s2 += v * v;
        }
        double m = s / (double)runs, sd = sqrt(fmax(0.0, s2 / (double)runs - m * m) * (double)runs / (double)(runs - 1));
        double exact = 1.0 + (double)ra[i].n * nvfp4_lp_round(ra[i].f, ra[i].delta, false, 0);
        fprintf(f, "repeat_add,%s,rn,%zu,%.9g,0,0,%.9g\n", nvfp4_lp_name(ra[i].f), ra[i].n, rn, exact);
        fprintf(f, "repeat_add,%s,sr,%zu,%.9g,%.6g,0,%.9g\n", nvfp4_lp_name(ra[i].f), ra[i].n, m, sd, exact);
    }
    nvfp4_status st = st_file_commit(&sf, dir, "s0_stagnation.csv", err);
    if (st != NVFP4_OK) return st;
    /* curves for the plot: n, then RN and one SR run per format, exact */
    f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "# n fp16_rn fp16_sr bf16_rn bf16_sr e4m3_rn e4m3_sr e5m2_rn e5m2_sr exact\n");
    float s[8] = {0};
    double ex = 0;
    for (size_t n = 1; n <= 4096; n++) {
        ex += 1.0 / (double)n;
        for (int fm = 0; fm < 4; fm++)
            for (int sr = 0; sr < 2; sr++) {
                uint32_t r1 = (uint32_t)(st_uniform(77, 0x5330, 2 * n) * 4294967296.0);
                uint32_t r2 = (uint32_t)(st_uniform(77, 0x5330, 2 * n + 1) * 4294967296.0);
                float t = nvfp4_lp_round((nvfp4_lp_format)fm, 1.0f / (float)n, sr, r1);
                s[2 * fm + sr] = nvfp4_lp_round((nvfp4_lp_format)fm, s[2 * fm + sr] + t, sr, r2);
            }
        if (n < 64 || (n & (n - 1)) == 0 || n % 32 == 0) {
            fprintf(f, "%zu", n);
            for (int k = 0; k < 8; k++) fprintf(f, " %.9g", s[k]);
            fprintf(f, " %.9g\n", ex);
        }
    }
    return st_file_commit(&sf, dir, "s0_harmonic.dat", err);
}

/* ---- (b) growth: recursive sums in a low-precision accumulator ------------------ */
static double lowp_sum(nvfp4_lp_format f, bool sr, size_t chunk, const float *x, size_t n, rng32 *r)
{
    float s = 0.0f, c = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (chunk) {
            c = nvfp4_lp_round(f, c + x[i], sr, sr ? rng_next(r) : 0);
            if ((i + 1) % chunk == 0 || i + 1 == n) {
                s = nvfp4_lp_round(f, s + c, sr, sr ? rng_next(r) : 0);
                c = 0.0f;
            }
        } else {
            s = nvfp4_lp_round(f, s + x[i], sr, sr ? rng_next(r) : 0);
        }
    }
    return s;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static nvfp4_status s0_growth(const char *dir, size_t reps, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "data,format,rounding,chunk,n,median_rel_err\n");
    const size_t nmax = (size_t)1 << 15;
    float *x = malloc(nmax * sizeof *x);
    if (!x) {
        st_file_discard(&sf);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    static const char *const data[] = {"uniform", "mu1", "mu0"};
    static const nvfp4_lp_format fm[] = {NVFP4_LP_BF16, NVFP4_LP_FP16};
    for (int d = 0; d < 3; d++)
        for (int fi = 0; fi < 2; fi++)
            for (int sr = 0; sr < 2; sr++)
                for (int ch = 0; ch < 2; ch++)
                    for (size_t n = 256; n <= nmax; n *= 4) {
                        double e[32];
                        for (size_t k = 0; k < reps; k++) {
                            double exact = 0.0;
                            uint64_t seed = 31 + k;
                            for (size_t i = 0; i < n; i++) {
                                double v = d == 0 ? st_uniform(seed, 0xB0, i)
                                                  : (d == 1 ? 1.0 : 0.0) + st_normal(seed, 0xB1, i);
                                x[i] = nvfp4_lp_round(fm[fi], (float)v, false, 0); /* addends exact in the format */
                                exact += x[i];
                            }
                            rng32 r;
                            rng_init(&r, seed, 0xB2);
                            double s = lowp_sum(fm[fi], sr, ch ? 64 : 0, x, n, &r);
                            e[k] = fabs(s - exact) / fabs(exact);
                        }
                        qsort(e, reps, sizeof *e, cmp_d);
                        fprintf(f, "%s,%s,%s,%d,%zu,%.6g\n", data[d], nvfp4_lp_name(fm[fi]), sr ? "sr" : "rn",
                                ch ? 64 : 0, n, e[reps / 2]);
                    }
    free(x);
    return st_file_commit(&sf, dir, "s0_growth.csv", err);
}

/* ---- (c) quantizer statistics -------------------------------------------------------- */
#define QR 256
#define QK 1024

static void make_data(int kind, uint64_t seed, float *x)
{
    for (size_t i = 0; i < (size_t)QR * QK; i++) {
        double v;
        if (kind == 1) { /* Laplace(0, 1/sqrt(2)): unit variance */
            double u = st_uniform(seed, 0xC1, i) - 0.5;
            v = -(u < 0 ? -1.0 : 1.0) * log(1.0 - 2.0 * fabs(u)) / sqrt(2.0);
        } else {
            v = st_normal(seed, 0xC0, i);
        }
        if (kind == 2 && (i % QK) % 64 == 0) v *= 20.0; /* channel outliers along the reduction axis */
        x[i] = (float)v;
    }
}

typedef struct {
    const char *name;
    const char *cfg;
} qconf;

static const qconf qconfs[] = {
    {"nvfp4-1x16-rn", "nvfp4/1x16/rn"},           {"nvfp4-1x16-sr", "nvfp4/1x16/sr"},
    {"nvfp4-16x16-rn", "nvfp4/16x16/rn"},         {"nvfp4-1x16-rht16-rn", "nvfp4/1x16/rn/rht16"},
    {"nvfp4-1x16-rht16-sr", "nvfp4/1x16/sr/rht16"}, {"mxfp4-floor-rn", "mxfp4/ue8m0-floor/rn"},
    {"mxfp4-ceil-rn", "mxfp4/rn"},                {"mxfp4-ceil-sr", "mxfp4/sr"},
    {"mxfp4-ceil-rht16-rn", "mxfp4/rn/rht16"},    {"fp4-fp32scale-rn", "nvfp4/1x16/fp32-scale/rn"},
};

static nvfp4_status s0_quant(const char *dir, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "data,config,nmse,sqnr_db,zero_pct,clip_pct,shrink\n");
    float *x = malloc((size_t)QR * QK * sizeof *x), *h = malloc((size_t)QR * QK * sizeof *h),
          *q = malloc((size_t)QR * QK * sizeof *q);
    nvfp4_status st = NVFP4_OK;
    if (!x || !h || !q) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    static const char *const dn[] = {"normal", "laplace", "channel-outlier"};
    for (int d = 0; d < 3 && st == NVFP4_OK; d++) {
        make_data(d, 5, x);
        for (size_t c = 0; c < sizeof qconfs / sizeof *qconfs && st == NVFP4_OK; c++) {
            nvfp4_sq_cfg cfg;
            nvfp4_sq_cfg_parse(qconfs[c].cfg, &cfg);
            nvfp4_sq_key key = {11, 0, 0, 0, 0};
            nvfp4_sq_stats ss = {0, 0, 0, 0, 0};
            /* reference in the domain the quantizer sees (RHT'd, fp32) */
            memcpy(h, x, (size_t)QR * QK * sizeof *h);
            if (cfg.rht) st = nvfp4_sq_rht_rows(h, QR, QK, cfg.rht, cfg.rht_signs, &key, err);
            if (st == NVFP4_OK) st = nvfp4_sq_fakequant(&cfg, x, QR, QK, &key, q, &ss, err);
            if (st != NVFP4_OK) break;
            double ee = 0, xx = 0, qx = 0;
            for (size_t i = 0; i < (size_t)QR * QK; i++) {
                double e = (double)q[i] - h[i];
                ee += e * e;
                xx += (double)h[i] * h[i];
                qx += (double)q[i] * h[i];
            }
            fprintf(f, "%s,%s,%.6g,%.4f,%.4f,%.4f,%.6f\n", dn[d], qconfs[c].name, ee / xx, 10 * log10(xx / ee),
                    100.0 * (double)ss.zeros / (double)ss.n, 100.0 * (double)ss.clips / (double)ss.n, qx / xx);
        }
    }
    free(x);
    free(h);
    free(q);
    if (st != NVFP4_OK) {
        st_file_discard(&sf);
        return st;
    }
    return st_file_commit(&sf, dir, "s0_quant.csv", err);
}

/* ---- (d) SR averaging and (f) scale-rounding bias: GEMM level ------------------------------ */
#define GM 64
#define GK 1024

/* A ~ data, B = 0.5 A + noise (correlated, so C has a large mean part). */
static void gemm_operands(int outliers, float *a, float *b)
{
    for (size_t i = 0; i < (size_t)GM * GK; i++) {
        double va = st_normal(21, 0xD0, i), vb = 0.5 * va + st_normal(21, 0xD1, i);
        if (outliers && (i % GK) % 64 == 0) {
            va *= 20;
            vb *= 20;
        }
        a[i] = (float)va;
        b[i] = (float)vb;
    }
}

/* On one OpenBLAS thread whatever --threads says: OpenBLAS's sgemm bytes
 * depend on its thread count (0.3.21: this shape differs in 30% of its
 * elements between 1 and 2 threads), and S0's tables must not. */
static void gemm(const float *a, const float *b, float *c)
{
    int threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, GM, GM, GK, 1.0f, a, GK, b, GK, 0.0f, c, GM);
    openblas_set_num_threads(threads);
}

/* mean over T draws of Q(A) Q(B)^T into acc (double), for draws t0..t0+T-1 */
static nvfp4_status q_gemm_draw(const nvfp4_sq_cfg *cfg, const float *a, const float *b, uint64_t draw, float *qa,
                                float *qb, float *c, nvfp4_error *err)
{
    nvfp4_sq_key ka = {draw, 0, 0, 0, 0}, kb = {draw, 0, 0, 0, 1};
    nvfp4_status s = nvfp4_sq_fakequant(cfg, a, GM, GK, &ka, qa, NULL, err);
    if (s == NVFP4_OK) s = nvfp4_sq_fakequant(cfg, b, GM, GK, &kb, qb, NULL, err);
    if (s == NVFP4_OK) gemm(qa, qb, c);
    return s;
}

static double rel_err(const double *m, const float *ref, size_t n, double *align)
{
    double ee = 0, rr = 0, mr = 0;
    for (size_t i = 0; i < n; i++) {
        ee += (m[i] - ref[i]) * (m[i] - ref[i]);
        rr += (double)ref[i] * ref[i];
        mr += m[i] * ref[i];
    }
    if (align) *align = mr / rr;
    return sqrt(ee / rr);
}

static nvfp4_status s0_gemm_studies(const char *dir, size_t draws, nvfp4_error *err)
{
    size_t n = (size_t)GM * GK;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *qa = malloc(n * sizeof *qa),
          *qb = malloc(n * sizeof *qb), *c = malloc(GM * GM * sizeof *c), *ref = malloc(GM * GM * sizeof *ref);
    double *acc = malloc(GM * GM * sizeof *acc), *mean = malloc(GM * GM * sizeof *mean);
    st_file sf;
    nvfp4_status st = NVFP4_OK;
    FILE *f = NULL;
    if (!a || !b || !qa || !qb || !c || !ref || !acc || !mean) {
        st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        goto done;
    }
    /* (d) SR averaging */
    f = st_file_open(&sf, err);
    if (!f) {
        st = NVFP4_ENOMEM;
        goto done;
    }
    fprintf(f, "config,T,rel_err,alignment\n");
    gemm_operands(0, a, b);
    gemm(a, b, ref);
    static const char *const avg_cfg[] = {"nvfp4/1x16/rn", "nvfp4/1x16/sr", "nvfp4/1x16/e4m3-up/sr", "mxfp4/sr"};
    for (int ci = 0; ci < 4 && st == NVFP4_OK; ci++) {
        nvfp4_sq_cfg cfg;
        nvfp4_sq_cfg_parse(avg_cfg[ci], &cfg);
        memset(acc, 0, GM * GM * sizeof *acc);
        size_t next = 1;
        for (size_t t = 1; t <= draws && st == NVFP4_OK; t++) {
            st = q_gemm_draw(&cfg, a, b, 100 + t, qa, qb, c, err);
            for (size_t i = 0; i < GM * GM; i++) acc[i] += c[i];
            if (t == next) {
                double al = NAN;
                for (size_t i = 0; i < GM * GM; i++) mean[i] = acc[i] / (double)t;
                double re = rel_err(mean, ref, GM * GM, &al);
                fprintf(f, "%s,%zu,%.6g,%.6f\n", avg_cfg[ci], t, re, al);
                next *= 2;
            }
        }
    }
    if (st == NVFP4_OK) st = st_file_commit(&sf, dir, "s0_sravg.csv", err);
    else {
        st_file_discard(&sf);
    }
    f = NULL;
    if (st != NVFP4_OK) goto done;
    /* (f) scale-rounding bias: alignment <E[C_q], C>/<C, C> over `draws` SR draws */
    f = st_file_open(&sf, err);
    if (!f) {
        st = NVFP4_ENOMEM;
        goto done;
    }
    fprintf(f, "data,config,alignment,rel_err_of_mean\n");
    static const char *const bias_cfg[] = {"nvfp4/1x16/rn", "nvfp4/1x16/sr", "nvfp4/1x16/e4m3-up/sr",
                                           "nvfp4/1x16/sr/pre34", "mxfp4/sr", "mxfp4/ue8m0-floor/sr"};
    for (int o = 0; o < 2 && st == NVFP4_OK; o++) {
        gemm_operands(o, a, b);
        gemm(a, b, ref);
        for (int ci = 0; ci < 6 && st == NVFP4_OK; ci++) {
            nvfp4_sq_cfg cfg;
            nvfp4_sq_cfg_parse(bias_cfg[ci], &cfg);
            memset(acc, 0, GM * GM * sizeof *acc);
            size_t T = cfg.rounding == NVFP4_SR ? draws : 1;
            for (size_t t = 1; t <= T && st == NVFP4_OK; t++) {
                st = q_gemm_draw(&cfg, a, b, 500 + t, qa, qb, c, err);
                for (size_t i = 0; i < GM * GM; i++) acc[i] += c[i];
            }
            double al = NAN;
            for (size_t i = 0; i < GM * GM; i++) mean[i] = acc[i] / (double)T;
            double re = rel_err(mean, ref, GM * GM, &al);
            fprintf(f, "%s,%s,%.6f,%.6g\n", o ? "channel-outlier" : "normal", bias_cfg[ci], al, re);
        }
    }
    if (st == NVFP4_OK) st = st_file_commit(&sf, dir, "s0_scalebias.csv", err);
    else {
        st_file_discard(&sf);
    }
done:
    free(a);
    free(b);
    free(qa);
    free(qb);
    free(c);
    free(ref);
    free(acc);
    free(mean);
    return st;
}

static nvfp4_status s0_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    /* S0 is one job: only shard 0 runs it. --steps scales the repetition counts. */
    if (o->shard_n > 1 && o->shard_i != 0) return st_summarize(s, o->out_dir, NULL, err);
    size_t reps = o->steps ? o->steps : 50;
    if (reps < 3) reps = 3;
    FILE *lg = o->quiet ? NULL : log;
    nvfp4_status st = s0_stagnation(o->out_dir, reps, lg, err);
    if (st == NVFP4_OK) st = s0_growth(o->out_dir, reps < 31 ? (reps | 1) : 31, err);
    if (st == NVFP4_OK) st = s0_quant(o->out_dir, err);
    if (st == NVFP4_OK) st = s0_gemm_studies(o->out_dir, reps < 32 ? reps : 32, err);
    if (st == NVFP4_OK) st = st_summarize(s, o->out_dir, NULL, err);
    return st;
}

/* ---- findings ---------------------------------------------------------------------------------- */
typedef struct {
    char f[8][48];
} csv_fields;

/* Calls back for each row of a CSV in dir (header skipped). */
static size_t read_csv(const char *dir, const char *name, csv_fields *rows, size_t max)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0;
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return 0;
    }
    while (n < max && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        memset(&rows[n], 0, sizeof rows[n]);
        char *save = NULL;
        int k = 0;
        for (char *t = strtok_r(line, ",", &save); t && k < 8; t = strtok_r(NULL, ",", &save), k++)
            snprintf(rows[n].f[k], sizeof rows[n].f[k], "%s", t);
        n++;
    }
    fclose(f);
    return n;
}

static const csv_fields *find_row(const csv_fields *r, size_t n, const char *a, const char *b, const char *c)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].f[0], a) && !strcmp(r[i].f[1], b) && (!c || !strcmp(r[i].f[2], c))) return &r[i];
    return NULL;
}

/* S0 writes no runs.csv: its findings come from its own files. */
static void s0_findings(const st_table *runs, const st_arm_summary *arms, const char *dir, json_t *out)
{
    (void)runs;
    (void)arms;
    csv_fields *r = calloc(512, sizeof *r);
    if (!r) return;
    char buf[512];
    size_t n = read_csv(dir, "s0_stagnation.csv", r, 512);
    static const char *const fm[] = {"fp16", "bf16", "e4m3", "e5m2"};
    static const double want_v[] = {7.0859375, 5.0625, 3.0, 2.0};
    static const int want_at[] = {513, 65, 9, 5};
    for (int i = 0; i < 4 && n; i++) {
        const csv_fields *rn = find_row(r, n, "harmonic", fm[i], "rn"), *sr = find_row(r, n, "harmonic", fm[i], "sr");
        if (!rn || !sr) continue;
        double v = atof(rn->f[4]), m = atof(sr->f[4]), sd = atof(sr->f[5]), ex = 0;
        int at = atoi(rn->f[6]);
        ex = atof(rn->f[7]);
        snprintf(buf, sizeof buf, "%s RN stops at %.9g from term %d; SR mean %.4f (std %.4f) vs exact %.4f at n=%s",
                 fm[i], v, at, m, sd, ex, rn->f[3]);
        st_finding(out, "RN harmonic sum freezes at the exact constant; SR tracks ln n + gamma",
                   "Higham (harmonic note); Connolly-Higham-Mary SISC 2021", buf,
                   (v == want_v[i] && at == want_at[i]) ? "reproduced" : "not reproduced");
    }
    n = read_csv(dir, "s0_quant.csv", r, 512);
    if (n) {
        const csv_fields *a = find_row(r, n, "normal", "nvfp4-1x16-rn", NULL),
                         *b = find_row(r, n, "normal", "nvfp4-1x16-sr", NULL),
                         *c = find_row(r, n, "normal", "nvfp4-16x16-rn", NULL),
                         *d = find_row(r, n, "normal", "mxfp4-ceil-rn", NULL),
                         *e = find_row(r, n, "channel-outlier", "mxfp4-ceil-rn", NULL),
                         *g = find_row(r, n, "channel-outlier", "mxfp4-ceil-rht16-rn", NULL),
                         *h = find_row(r, n, "channel-outlier", "nvfp4-1x16-rn", NULL),
                         *k = find_row(r, n, "channel-outlier", "nvfp4-1x16-rht16-rn", NULL);
        if (a && b && c && d) {
            double na = atof(a->f[2]), nb = atof(b->f[2]), nc = atof(c->f[2]), nd = atof(d->f[2]);
            snprintf(buf, sizeof buf, "normal data NMSE: NVFP4 RN %.3g, SR %.3g (x%.2f), 16x16 %.3g, MXFP4 %.3g", na,
                     nb, nb / na, nc, nd);
            st_finding(out, "NMSE(SR) ~ 2 x NMSE(RN)", "Quartet 2505.14669 (2.77e-2 vs 1.37e-2)", buf,
                       (nb / na > 1.5 && nb / na < 2.6) ? "reproduced" : "not reproduced");
            st_finding(out, "NVFP4 < MXFP4 < and 2D 16x16 > 1D 1x16 in NMSE", "NVIDIA 2509.25149 Sec. 2, 4.3", buf,
                       (na < nd && nc > na) ? "reproduced" : "not reproduced");
        }
        if (e && g && h && k) {
            snprintf(buf, sizeof buf,
                     "channel outliers: MXFP4 %s -> %s with RHT16; NVFP4 RN %s -> %s with RHT16", e->f[2], g->f[2],
                     h->f[2], k->f[2]);
            st_finding(out, "RHT helps MXFP4 a lot with channel outliers and hurts NVFP4 RN there",
                       "Tseng 2502.20586; NVIDIA 2509.25149 App. E.4.1", buf,
                       (atof(g->f[2]) < 0.7 * atof(e->f[2]) && atof(k->f[2]) > atof(h->f[2])) ? "reproduced"
                                                                                             : "not reproduced");
        }
        const csv_fields *fl = find_row(r, n, "normal", "mxfp4-floor-rn", NULL);
        if (fl) {
            snprintf(buf, sizeof buf, "MXFP4 floor-scale shrink <Q(x),x>/<x,x> = %s, clipped %s%%", fl->f[6], fl->f[5]);
            st_finding(out, "OCP floor-scale MXFP4 clips and shrinks by ~2%", "Tseng 2502.20586; OCP MX v1.0 (floor scale)",
                       buf, atof(fl->f[6]) < 0.99 ? "reproduced" : "not reproduced");
        }
    }
    n = read_csv(dir, "s0_sravg.csv", r, 512);
    if (n) {
        const csv_fields *s1 = find_row(r, n, "nvfp4/1x16/sr", "1", NULL), *rn = find_row(r, n, "nvfp4/1x16/rn", "1", NULL);
        const csv_fields *sl = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(r[i].f[0], "nvfp4/1x16/e4m3-up/sr")) sl = &r[i];
        const csv_fields *u1 = find_row(r, n, "nvfp4/1x16/e4m3-up/sr", "1", NULL);
        if (s1 && rn && sl && u1) {
            double T = atof(sl->f[1]), slope = log(atof(sl->f[2]) / atof(u1->f[2])) / log(T);
            snprintf(buf, sizeof buf,
                     "single draw: RN %s, SR %s; SR (scale rounded up) error of the mean falls as T^%.3f up to T=%g",
                     rn->f[2], s1->f[2], slope, T);
            st_finding(out, "the mean of T SR GEMMs converges like 1/sqrt(T); RN does not move",
                       "TransformerEngine tests/pytorch/nvfp4/test_nvfp4_sr_quantize.py criterion", buf,
                       (slope < -0.4 && slope > -0.6) ? "reproduced" : "not reproduced");
        }
    }
    n = read_csv(dir, "s0_scalebias.csv", r, 512);
    if (n) {
        const csv_fields *a = find_row(r, n, "normal", "nvfp4/1x16/sr", NULL),
                         *b = find_row(r, n, "normal", "nvfp4/1x16/e4m3-up/sr", NULL),
                         *c = find_row(r, n, "channel-outlier", "nvfp4/1x16/sr", NULL),
                         *d = find_row(r, n, "channel-outlier", "nvfp4/1x16/e4m3-up/sr", NULL);
        if (a && b && c && d) {
            snprintf(buf, sizeof buf,
                     "alignment of mean SR GEMM: RN-E4M3 scales %s (normal) / %s (outliers); scales rounded up %s / %s",
                     a->f[2], c->f[2], b->f[2], d->f[2]);
            st_finding(out, "NVFP4 SR with RN E4M3 block scales is biased low (0.993 normal, 0.975 outliers); "
                            "rounding the scale up removes it",
                       "no published source: a consequence of SR inside a block whose RN scale can round down", buf,
                       (atof(a->f[2]) < 0.998 && atof(c->f[2]) < atof(a->f[2]) && fabs(atof(b->f[2]) - 1) < 0.003)
                           ? "reproduced"
                           : "not reproduced");
        }
    }
    n = read_csv(dir, "s0_growth.csv", r, 512);
    if (n) {
        double rn = NAN, sr = NAN, rn0 = NAN, sr0 = NAN;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(r[i].f[1], "bf16") || strcmp(r[i].f[3], "0") || strcmp(r[i].f[4], "16384")) continue;
            double v = atof(r[i].f[5]);
            if (!strcmp(r[i].f[0], "mu1")) *(strcmp(r[i].f[2], "rn") ? &sr : &rn) = v;
            if (!strcmp(r[i].f[0], "mu0")) *(strcmp(r[i].f[2], "rn") ? &sr0 : &rn0) = v;
        }
        snprintf(buf, sizeof buf,
                 "bf16 sum of 16384 (1 + N(0,1)) terms: RN rel. error %.3g, SR %.3g; zero-mean control: RN %.3g, SR %.3g",
                 rn, sr, rn0, sr0);
        st_finding(out, "RN accumulation error jumps once the sum outgrows the addends (n*u), SR stays bounded "
                        "(sqrt(n)*u); zero-mean data shows no gap",
                   "Connolly-Higham-Mary SISC 2021", buf,
                   (rn > 5 * sr && sr < 0.1) ? "reproduced" : "not reproduced");
    }
    free(r);
}

/* ---- plots ---------------------------------------------------------------------------------------- */
static bool exists(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    if (f) fclose(f);
    return f != NULL;
}

static nvfp4_status s0_plots(const char *dir, nvfp4_error *err)
{
    nvfp4_status s = NVFP4_OK;
    if (exists(dir, "s0_harmonic.dat"))
        s = st_gnuplot(dir, "s0_harmonic.gp",
               "set terminal pngcairo size 900,560 noenhanced\nset output 's0_harmonic.png'\n"
               "set title 'S0: harmonic series, recursive sum rounded each step (RN solid, SR dashed)'\n"
               "set logscale x\nset xlabel 'terms n'\nset ylabel 'sum'\nset key top left\nset grid\n"
               "plot 's0_harmonic.dat' u 1:10 w l lw 3 lc rgb 'black' t 'exact', "
               "'' u 1:2 w l lw 1.5 dt 1 lc 1 t 'fp16 RN', '' u 1:3 w l lw 1.5 dt 2 lc 1 t 'fp16 SR', "
               "'' u 1:4 w l lw 1.5 dt 1 lc 2 t 'bf16 RN', '' u 1:5 w l lw 1.5 dt 2 lc 2 t 'bf16 SR', "
               "'' u 1:6 w l lw 1.5 dt 1 lc 3 t 'e4m3 RN', '' u 1:7 w l lw 1.5 dt 2 lc 3 t 'e4m3 SR', "
               "'' u 1:8 w l lw 1.5 dt 1 lc 4 t 'e5m2 RN', '' u 1:9 w l lw 1.5 dt 2 lc 4 t 'e5m2 SR'\n",
               err);
    if (s == NVFP4_OK && exists(dir, "s0_growth.csv"))
        s = st_gnuplot(dir, "s0_growth.gp",
               "set terminal pngcairo size 900,560 noenhanced\nset output 's0_growth.png'\n"
               "set title 'S0: bf16 recursive sum of (1 + N(0,1)): median relative error over the repetitions (31 by default)'\n"
               "set datafile separator ','\nset logscale xy\nset xlabel 'n'\nset ylabel 'relative error'\n"
               "set key top left\nset grid\n"
               "f(d,fm,r,c)=(strcol(1) eq d && strcol(2) eq fm && strcol(3) eq r && strcol(4) eq c) ? $6 : NaN\n"
               "plot 's0_growth.csv' u 5:(f('mu1','bf16','rn','0')) w lp t 'RN', "
               "'' u 5:(f('mu1','bf16','sr','0')) w lp t 'SR', "
               "'' u 5:(f('mu1','bf16','rn','64')) w lp t 'RN, chunk 64', "
               "'' u 5:(f('mu1','bf16','sr','64')) w lp t 'SR, chunk 64', "
               "'' u 5:(f('mu0','bf16','rn','0')) w lp dt 2 t 'RN, zero mean', "
               "'' u 5:(f('mu0','bf16','sr','0')) w lp dt 2 t 'SR, zero mean'\n",
               err);
    if (s == NVFP4_OK && exists(dir, "s0_sravg.csv"))
        s = st_gnuplot(dir, "s0_sravg.gp",
               "set terminal pngcairo size 900,560 noenhanced\nset output 's0_sravg.png'\n"
               "set title \"S0: relative error of the mean of T quantized GEMMs against the FP32 GEMM\\n"
               "(64x64, K=1024; ||mean - exact||_F / ||exact||_F, one sequence of draws)\"\n"
               "set datafile separator ','\nset logscale xy\nset xlabel 'T (quantized GEMMs averaged)'\n"
               "set ylabel 'relative error'\nset grid\nset key top right box opaque\n"
               "f(c)=(strcol(1) eq c) ? $3 : NaN\n"
               "plot 's0_sravg.csv' u 2:(f('nvfp4/1x16/rn')) w lp t 'NVFP4 RN', "
               "'' u 2:(f('nvfp4/1x16/sr')) w lp t 'NVFP4 SR', "
               "'' u 2:(f('nvfp4/1x16/e4m3-up/sr')) w lp t 'NVFP4 SR, scale rounded up', "
               "'' u 2:(f('mxfp4/sr')) w lp t 'MXFP4 SR', "
               /* the reference slope in black, drawn last: no series hides it */
               "0.13/sqrt(x) w l lw 2.5 dt (10,6) lc rgb 'black' t 'reference slope: 0.13/sqrt(T)'\n",
               err);
    if (s == NVFP4_OK && exists(dir, "s0_quant.csv"))
        s = st_gnuplot(dir, "s0_quant.gp",
               "set terminal pngcairo size 1000,600 noenhanced\nset output 's0_quant.png'\n"
               "set title 'S0: quantizer NMSE (256x1024 tensors, blocks along rows)'\n"
               "set datafile separator ','\nset style data histograms\nset style histogram cluster gap 1\n"
               "set style fill solid 0.8 border -1\nset key top left\nset logscale y\nset ylabel 'NMSE'\nset xtics rotate by -35\nset grid y\n"
               "plot 's0_quant.csv' u ((strcol(1) eq 'normal') ? $3 : 1/0):xtic(2) every ::1::10 t 'normal' dt 1, "
               "'' u ((strcol(1) eq 'laplace') ? $3 : 1/0) every ::11::20 t 'laplace' dt 1, "
               "'' u ((strcol(1) eq 'channel-outlier') ? $3 : 1/0) every ::21::30 t 'channel outliers' dt 1\n",
               err);
    return s;
}

const nvfp4_study st_study_s0 = {
    .name = "s0",
    .wall = "4 s",
    .claim = "arithmetic: RN stagnates (fp16 harmonic sum stops at 7.0859375), SR does not; NVFP4 < MXFP4 in NMSE; "
             "SR averages out like 1/sqrt(T); RN-E4M3 scales bias NVFP4 SR (Higham; Connolly-Higham-Mary 2021; "
             "Quartet 2505.14669)",
    .seeds = 1,
    .steps = 0,
    .run = s0_run,
    .serial = true,
    .findings = s0_findings,
    .plots = s0_plots,
    .files = s0_files,
};
