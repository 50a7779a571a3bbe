/*
 * output.c - what a study leaves on disk: per-step CSV (runs.csv,
 * layers.csv), aggregates over seeds (mean and 95% t confidence interval,
 * GSL), summary.json (jansson) and PNG plots drawn by gnuplot when it is
 * installed. Files go through the library's
 * atomic writer (st_file), so a failed run leaves no half-written file. It
 * names no study: what a study adds (its plots, its own files) comes from
 * its descriptor (studies.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvfp4/io.h"
#include "study/labfile.h"
#include "study/labfile.h"
#include "study/studies.h"

bool st_have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

void st_mean_ci(const double *x, size_t n, double *mean, double *ci)
{
    double m = 0.0, v = 0.0;
    for (size_t i = 0; i < n; i++) m += x[i];
    m = n ? m / (double)n : NAN;
    for (size_t i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    *mean = m;
    if (n < 2) {
        *ci = NAN;
        return;
    }
    double sd = sqrt(v / (double)(n - 1));
    *ci = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sd / sqrt((double)n);
}

/* ---- runs.csv ------------------------------------------------------------ */
const char *const ST_RUNS_HEADER =
    "arm,seed,step,tokens,lr,loss,ref_loss,eval_loss,ref_eval_loss,gap_pct,entropy,drift,diverged,"
    "heldout_loss,ref_heldout_loss,grad_noise,grad_qerr,probe_tokens";
const char *const ST_RUNS_HEADER_V1 =
    "arm,seed,step,tokens,lr,loss,ref_loss,eval_loss,ref_eval_loss,gap_pct,entropy,drift,diverged,"
    "heldout_loss,ref_heldout_loss,grad_noise,grad_qerr";
const char *const ST_LAYERS_HEADER =
    "arm,seed,step,layer,sqnr_fprop,sqnr_dgrad,sqnr_wgrad,wgrad_cos,wgrad_align,gnr,"
    "zero_fprop_a,zero_fprop_b,zero_dgrad_a,zero_dgrad_b,zero_wgrad_a,zero_wgrad_b,"
    "clip_fprop_a,clip_fprop_b,clip_dgrad_a,clip_dgrad_b,clip_wgrad_a,clip_wgrad_b,"
    "dgrad_cos,dgrad_align,dgrad_rel_err,probe_rel_err,probe_cos,probe_rel_bias,probe_rel_std,"
    "zero_in_fprop_a,zero_in_fprop_b,zero_in_dgrad_a,zero_in_dgrad_b,zero_in_wgrad_a,zero_in_wgrad_b,"
    "zero_scale_fprop_a,zero_scale_fprop_b,zero_scale_dgrad_a,zero_scale_dgrad_b,zero_scale_wgrad_a,"
    "zero_scale_wgrad_b,osc_w,hot_persist";

void st_write_run_rows(FILE *f, const char *arm, uint64_t seed, const st_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const st_row *r = &rows[i];
        double gap = r->ref_eval_loss != 0 ? 100.0 * (r->eval_loss - r->ref_eval_loss) / r->ref_eval_loss : NAN;
        /* not probed: nan (rows of the studies without a probe leave both 0;
         * a probe's two independent batches never give a noise of 0) */
        bool probed = r->grad_noise > 0;
        fprintf(f, "%s,%llu,%zu,%llu,%.6g,%.9g,%.9g,%.9g,%.9g,%.6g,%.9g,%.6g,%d,%.9g,%.9g,%.6g,%.6g,%llu\n", arm,
                (unsigned long long)seed, r->step, (unsigned long long)r->tokens, r->lr, r->loss, r->ref_loss,
                r->eval_loss, r->ref_eval_loss, gap, r->entropy, r->drift, r->diverged,
                r->has_heldout ? r->heldout_loss : NAN, r->has_heldout ? r->ref_heldout_loss : NAN,
                probed ? r->grad_noise : NAN, probed ? r->grad_qerr : NAN,
                (unsigned long long)(probed ? r->probe_tokens : 0));
    }
}

/* t->fin: per (arm, seed), in order of appearance, its last row; when the
 * run did not diverge and has held-out evaluations, eval_loss and
 * ref_eval_loss become their means (the final metric: docs/studies.md,
 * "Metric definitions"). */
static bool build_finals(st_table *t)
{
    t->fin = calloc(t->n ? t->n : 1, sizeof *t->fin);
    if (!t->fin) return false;
    t->nfin = 0;
    for (size_t i = 0; i < t->n; i++) {
        const st_row *r = &t->rows[i];
        st_row *f = (st_row *)st_final_row(t, r->arm, r->seed);
        if (!f) t->fin[t->nfin++] = *r;
        else if (r->step > f->step) *f = *r;
    }
    for (size_t k = 0; k < t->nfin; k++) {
        st_row *f = &t->fin[k];
        double h = 0.0, rh = 0.0;
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++) {
            const st_row *r = &t->rows[i];
            if (r->arm == f->arm && r->seed == f->seed && r->has_heldout) {
                h += r->heldout_loss;
                rh += r->ref_heldout_loss;
                n++;
            }
        }
        f->has_heldout = false;
        f->heldout_n = 0;
        if (n && !f->diverged) {
            f->eval_loss = f->heldout_loss = h / (double)n;
            f->ref_eval_loss = f->ref_heldout_loss = rh / (double)n;
            f->heldout_n = n;
        }
    }
    return true;
}

/* Parses runs.csv into rows (arm names interned in `arms`). */
nvfp4_status st_read_runs(const char *dir, st_table *t, nvfp4_error *err)
{
    char path[4096], line[1024];
    memset(t, 0, sizeof *t);
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    char *fbuf;
    bool absent;
    FILE *f = st_open_lab_file(path, &fbuf, &absent, err);
    if (!f) return absent ? NVFP4_OK : NVFP4_EIO; /* absent: no training runs in this study */
    /* v1: written before the probe_tokens column (its rows have 16 values after the arm) */
    bool v1 = false;
    if (!st_read_line(f, line, sizeof line) ||
        (strcmp(line, ST_RUNS_HEADER) != 0 && !(v1 = strcmp(line, ST_RUNS_HEADER_V1) == 0))) {
        fclose(f);
        free(fbuf);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a study runs.csv (unexpected header)", path);
    }
    size_t lineno = 1;
    while (st_read_line(f, line, sizeof line)) {
        lineno++;
        if (!line[0] || !strcmp(line, v1 ? ST_RUNS_HEADER_V1 : ST_RUNS_HEADER)) continue;
        char *save = NULL, *tok = strtok_r(line, ",", &save);
        st_row r;
        memset(&r, 0, sizeof r);
        if (!tok || strlen(tok) >= sizeof t->arms[0]) goto bad;
        size_t a;
        for (a = 0; a < t->narms; a++)
            if (!strcmp(t->arms[a], tok)) break;
        if (a == t->narms) {
            if (t->narms == ST_MAX_ARMS) goto bad;
            strcpy(t->arms[t->narms++], tok);
        }
        double v[17];
        int nv = v1 ? 16 : 17;
        v[16] = 0.0;
        for (int k = 0; k < nv; k++) {
            tok = strtok_r(NULL, ",", &save);
            if (!tok) goto bad;
            char *end;
            v[k] = strtod(tok, &end);
            if (*end) goto bad;
        }
        /* seed, step, tokens and probe_tokens are counts, diverged a flag: anything else
         * is a malformed row (and converting it would be undefined) */
        static const int counts[] = {0, 1, 2, 16}; /* seed, step, tokens, probe_tokens */
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            double c = v[counts[k]];
            if (!(c >= 0 && c <= 9007199254740992.0 && c == floor(c))) goto bad;
        }
        if (v[11] != 0 && v[11] != 1) goto bad;
        r.arm = a;
        r.seed = (uint64_t)v[0];
        r.step = (size_t)v[1];
        r.tokens = (uint64_t)v[2];
        r.lr = v[3];
        r.loss = v[4];
        r.ref_loss = v[5];
        r.eval_loss = v[6];
        r.ref_eval_loss = v[7];
        r.entropy = v[9];
        r.drift = v[10];
        r.diverged = (int)v[11];
        r.has_heldout = isfinite(v[12]) && isfinite(v[13]);
        r.heldout_loss = v[12];
        r.ref_heldout_loss = v[13];
        r.grad_noise = v[14];
        r.grad_qerr = v[15];
        r.probe_tokens = (uint64_t)v[16];
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 1024;
            st_row *nr = realloc(t->rows, nc * sizeof *nr);
            if (!nr) {
                fclose(f);
                free(fbuf);
                return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
            }
            t->rows = nr;
            t->cap = nc;
        }
        t->rows[t->n++] = r;
        continue;
    bad:
        fclose(f);
        free(fbuf);
        st_table_free(t);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: malformed row", path, lineno);
    }
    fclose(f);
    free(fbuf);
    if (!build_finals(t)) {
        st_table_free(t);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    return NVFP4_OK;
}

void st_table_free(st_table *t)
{
    free(t->rows);
    free(t->fin);
    memset(t, 0, sizeof *t);
}

const st_row *st_final_row(const st_table *t, size_t arm, uint64_t seed)
{
    for (size_t i = 0; i < t->nfin; i++)
        if (t->fin[i].arm == arm && t->fin[i].seed == seed) return &t->fin[i];
    return NULL;
}

/* Final row of each (arm, seed) (the summary's and the verdicts' metric). */
static size_t finals(const st_table *t, size_t arm, const st_row **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nfin && n < max; i++)
        if (t->fin[i].arm == arm) out[n++] = &t->fin[i];
    return n;
}

ssize_t st_arm_index(const st_table *t, const char *name)
{
    for (size_t a = 0; a < t->narms; a++)
        if (!strcmp(t->arms[a], name)) return (ssize_t)a;
    return -1;
}

double st_row_gap(const st_row *r) { return 100.0 * (r->eval_loss - r->ref_eval_loss) / r->ref_eval_loss; }

size_t st_paired_finals(const st_table *t, const char *const *arms, size_t narms, const st_row **rows, size_t max)
{
    ssize_t idx[ST_MAX_ARMS];
    if (narms > ST_MAX_ARMS) return 0;
    for (size_t k = 0; k < narms; k++)
        if ((idx[k] = st_arm_index(t, arms[k])) < 0) return 0;
    uint64_t seen[256];
    size_t ns = 0, n = 0;
    for (size_t i = 0; i < t->n && ns < 256; i++) {
        size_t j;
        for (j = 0; j < ns; j++)
            if (seen[j] == t->rows[i].seed) break;
        if (j == ns) seen[ns++] = t->rows[i].seed;
    }
    for (size_t i = 1; i < ns; i++) /* ascending: the same pairing order for a run and a merge */
        for (size_t j = i; j > 0 && seen[j] < seen[j - 1]; j--) {
            uint64_t x = seen[j];
            seen[j] = seen[j - 1];
            seen[j - 1] = x;
        }
    for (size_t j = 0; j < ns && n < max; j++) {
        bool all = true;
        for (size_t k = 0; k < narms && all; k++)
            all = (rows[n * narms + k] = st_final_row(t, (size_t)idx[k], seen[j])) != NULL;
        if (all) n++;
    }
    return n;
}

void st_arm_stats(const st_table *t, size_t arm, st_arm_summary *s)
{
    const st_row *f[256];
    size_t n = finals(t, arm, f, 256);
    double gap[256], ev[256], rev[256], ex[256];
    memset(s, 0, sizeof *s);
    s->seeds = n;
    for (size_t i = 0; i < n; i++) {
        gap[i] = 100.0 * (f[i]->eval_loss - f[i]->ref_eval_loss) / f[i]->ref_eval_loss;
        ev[i] = f[i]->eval_loss;
        rev[i] = f[i]->ref_eval_loss;
        ex[i] = f[i]->eval_loss - f[i]->entropy;
        if (f[i]->diverged) s->diverged++;
        if (i == 0 || f[i]->heldout_n < s->final_evals) s->final_evals = f[i]->heldout_n;
        if (f[i]->step > s->final_step) s->final_step = f[i]->step;
        s->final_tokens = f[i]->tokens;
    }
    st_mean_ci(gap, n, &s->gap_mean, &s->gap_ci);
    st_mean_ci(ev, n, &s->eval_mean, &s->eval_ci);
    st_mean_ci(rev, n, &s->ref_eval_mean, &s->ref_eval_ci);
    st_mean_ci(ex, n, &s->excess_mean, &s->excess_ci);
}

/* gap_agg.dat: per arm (gnuplot index), step, mean gap %, lo, hi, seeds,
 * mean eval losses, tokens (the x axis of gap.png and loss.png). */
static nvfp4_status write_gap_agg(const char *dir, const st_table *t, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    for (size_t a = 0; a < t->narms; a++) {
        fprintf(f, "# arm %s\n# step mean_gap_pct lo hi n mean_eval_loss mean_fp32_eval_loss tokens\n", t->arms[a]);
        /* steps present for this arm, in increasing order */
        size_t last = (size_t)-1;
        for (;;) {
            size_t next = (size_t)-1;
            for (size_t i = 0; i < t->n; i++)
                if (t->rows[i].arm == a && (last == (size_t)-1 || t->rows[i].step > last) && t->rows[i].step < next)
                    next = t->rows[i].step;
            if (next == (size_t)-1) break;
            double g[256], ev = 0.0, rv = 0.0;
            size_t n = 0;
            uint64_t tokens = 0;
            for (size_t i = 0; i < t->n && n < 256; i++)
                if (t->rows[i].arm == a && t->rows[i].step == next && t->rows[i].ref_eval_loss != 0) {
                    tokens = t->rows[i].tokens;
                    g[n++] = 100.0 * (t->rows[i].eval_loss - t->rows[i].ref_eval_loss) / t->rows[i].ref_eval_loss;
                    ev += t->rows[i].eval_loss;
                    rv += t->rows[i].ref_eval_loss;
                }
            double m, ci;
            st_mean_ci(g, n, &m, &ci);
            if (!isfinite(ci)) ci = 0.0;
            if (isfinite(m))
                fprintf(f, "%zu %.6g %.6g %.6g %zu %.8g %.8g %llu\n", next, m, m - ci, m + ci, n, ev / (double)n,
                        rv / (double)n, (unsigned long long)tokens);
            last = next;
        }
        fprintf(f, "\n\n");
    }
    return st_file_commit(&sf, dir, "gap_agg.dat", err);
}

static size_t arm_last_step(const st_table *t, size_t a)
{
    size_t last = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].arm == a && t->rows[i].step > last) last = t->rows[i].step;
    return last;
}

/* paired_agg.dat: per arm after the first (gnuplot index, in the order of
 * `# arm` lines), tokens, step, mean over seeds of gap(arm) - gap(first arm)
 * of the same seed at the same step, and its 95% t interval: the band of the
 * paired difference the verdicts test, not of each arm's own spread. An arm
 * of another length than the first (a token multiple of s3-format or
 * s11-format) is left out: it reaches step k at another point of its own
 * schedule. */
static nvfp4_status write_paired_agg(const char *dir, const st_table *t, bool *has, nvfp4_error *err)
{
    st_file sf;
    for (size_t a = 0; a < t->narms; a++) has[a] = false;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    for (size_t a = 1; a < t->narms; a++) {
        if (arm_last_step(t, a) != arm_last_step(t, 0)) continue;
        size_t lines = 0, last = (size_t)-1;
        for (;;) {
            size_t next = (size_t)-1;
            for (size_t i = 0; i < t->n; i++)
                if (t->rows[i].arm == a && (last == (size_t)-1 || t->rows[i].step > last) && t->rows[i].step < next)
                    next = t->rows[i].step;
            if (next == (size_t)-1) break;
            last = next;
            double d[256];
            size_t n = 0;
            uint64_t tokens = 0;
            for (size_t i = 0; i < t->n && n < 256; i++) {
                const st_row *r = &t->rows[i];
                if (r->arm != a || r->step != next) continue;
                for (size_t j = 0; j < t->n; j++) {
                    const st_row *b = &t->rows[j];
                    if (b->arm == 0 && b->step == next && b->seed == r->seed) {
                        d[n++] = st_row_gap(r) - st_row_gap(b);
                        tokens = r->tokens;
                        break;
                    }
                }
            }
            if (!n) continue;
            double m, ci;
            st_mean_ci(d, n, &m, &ci);
            if (!isfinite(ci)) ci = 0.0;
            if (!isfinite(m)) continue;
            if (!lines++) fprintf(f, "# arm %s\n# tokens step mean_paired_gap_diff lo hi n\n", t->arms[a]);
            fprintf(f, "%llu %zu %.6g %.6g %.6g %zu\n", (unsigned long long)tokens, next, m, m - ci, m + ci, n);
        }
        if (lines) {
            fprintf(f, "\n\n");
            has[a] = true;
        }
    }
    return st_file_commit(&sf, dir, "paired_agg.dat", err);
}

/* The most linear layers layers.png draws. */
#define ST_MAX_LAYERS 64

/* layers_agg.dat: per arm, per layer: mean SQNR (Fprop, Dgrad, Wgrad), Wgrad
 * cosine, gnr, over every logged step and seed with a quantized GEMM.
 * quantized[l] tells whether any arm quantized a GEMM of layer l: the others
 * ran in high precision in every arm and have no bar. */
static nvfp4_status write_layers_agg(const char *dir, const st_table *t, size_t *nlayers,
                                     bool quantized[ST_MAX_LAYERS], nvfp4_error *err)
{
    st_file sf;
    char path[4096], line[2048];
    *nlayers = 0;
    for (size_t l = 0; l < ST_MAX_LAYERS; l++) quantized[l] = false;
    snprintf(path, sizeof path, "%s/layers.csv", dir);
    char *fbuf;
    bool absent;
    FILE *in = st_open_lab_file(path, &fbuf, &absent, err);
    if (!in) return absent ? NVFP4_OK : NVFP4_EIO;
    enum { ML = ST_MAX_LAYERS };
    /* per arm and layer: sums and counts of SQNR F/D/W, Wgrad cosine, gnr;
     * each metric is averaged only over the steps where its GEMM was
     * quantized (an FP32 GEMM reports 300 dB and is left out) */
    double (*acc)[ML][10] = calloc(ST_MAX_ARMS, sizeof *acc);
    if (!acc) {
        fclose(in);
        free(fbuf);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    st_read_line(in, line, sizeof line);
    while (st_read_line(in, line, sizeof line)) {
        char *save = NULL, *tok = strtok_r(line, ",", &save);
        if (!tok) continue;
        size_t a;
        for (a = 0; a < t->narms; a++)
            if (!strcmp(t->arms[a], tok)) break;
        if (a == t->narms) continue;
        double v[9];
        int k;
        for (k = 0; k < 9; k++) {
            tok = strtok_r(NULL, ",", &save);
            if (!tok) break;
            v[k] = strtod(tok, NULL);
        }
        if (k < 9) continue;
        if (!(v[2] >= 0 && v[2] < ML)) continue; /* a layer index, or a malformed row */
        size_t l = (size_t)v[2];
        if (l + 1 > *nlayers) *nlayers = l + 1;
        for (int g = 0; g < 3; g++)
            if (v[3 + g] < 299) {
                acc[a][l][g] += v[3 + g];
                acc[a][l][5 + g] += 1;
            }
        if (v[5] < 299) {
            acc[a][l][3] += v[6];
            acc[a][l][4] += v[8] > 1e6 ? 1e6 : v[8];
            acc[a][l][8] += 1;
        }
    }
    fclose(in);
    free(fbuf);
    FILE *f = st_file_open(&sf, err);
    if (!f) {
        free(acc);
        return NVFP4_ENOMEM;
    }
    bool any = false;
    for (size_t a = 0; a < t->narms; a++) {
        fprintf(f, "# arm %s\n# layer sqnr_fprop sqnr_dgrad sqnr_wgrad wgrad_cos gnr\n", t->arms[a]);
        for (size_t l = 0; l < *nlayers; l++) {
            double *q = acc[a][l];
            if (q[5] + q[6] + q[7] == 0) continue; /* a high-precision layer in this arm */
            any = quantized[l] = true;
#define AVG(sum, cnt) ((cnt) > 0 ? (sum) / (cnt) : NAN)
            fprintf(f, "%zu %.5g %.5g %.5g %.6g %.5g\n", l, AVG(q[0], q[5]), AVG(q[1], q[6]), AVG(q[2], q[7]),
                    AVG(q[3], q[8]), AVG(q[4], q[8]));
#undef AVG
        }
        fprintf(f, "\n\n");
    }
    free(acc);
    if (!any) *nlayers = 0; /* every layer in high precision: no per-layer SQNR to plot */
    return st_file_commit(&sf, dir, "layers_agg.dat", err);
}

/* ---- gnuplot ------------------------------------------------------------------ */
/* Runs `gnuplot name` inside dir without a shell (any character may appear
 * in dir, a quote too), its stderr discarded. SIGINT, SIGTERM and SIGHUP
 * wait while it draws (a second or so): a signal then ends the process
 * after the figure is whole, and the atomic writer's handler removes its
 * temporaries, so an interrupted plot leaves neither half a PNG nor a
 * temporary file. */
static bool run_gnuplot(const char *dir, const char *name)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 2);
        if (chdir(dir) != 0) _exit(127);
        execlp("gnuplot", "gnuplot", name, (char *)NULL);
        _exit(127);
    }
    int status = -1;
    bool ok = pid > 0;
    while (ok && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) ok = false;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The line types every study figure draws its series with (arm k of a
 * training study is line type k + 1 in gap.png, paired.png, loss.png and
 * layers.png alike): the Okabe-Ito colours (Okabe and Ito, "Color Universal
 * Design", 2008; apart for the common colour-vision deficiencies), yellow
 * left out because it vanishes on white and black kept for references,
 * each with its own dash type, so that overlapping arms stay apart, in
 * greyscale too. Seven colours against eight dash types: the (colour, dash)
 * pair repeats only after 56 line types, beyond ST_MAX_ARMS. */
static const char *const palette_colour[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                             "#E69F00", "#56B4E9", "#505050"};
static const char *const palette_dash[] = {"1", "2", "4", "(8,3,2,3,2,3)", "(3,2)", "5", "(12,4)", "(1,2)"};

static void write_palette(FILE *f)
{
    const size_t nc = sizeof palette_colour / sizeof *palette_colour;
    const size_t nd = sizeof palette_dash / sizeof *palette_dash;
    for (size_t k = 0; k < ST_MAX_ARMS; k++)
        fprintf(f, "set linetype %zu lc rgb '%s' dt %s\n", k + 1, palette_colour[k % nc], palette_dash[k % nd]);
    fprintf(f, "set linetype cycle %d\n", ST_MAX_ARMS);
}

nvfp4_status st_gnuplot(const char *dir, const char *name, const char *script, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    write_palette(f);
    fputs(script, f);
    nvfp4_status s = st_file_commit(&sf, dir, name, err);
    if (s != NVFP4_OK) return s;
    if (!run_gnuplot(dir, name)) return nvfp4_error_set(err, NVFP4_EIO, "gnuplot failed on %s/%s", dir, name);
    return NVFP4_OK;
}

/* A 95% band: light enough that five overlapping bands stay told apart,
 * each arm's mean line drawn over all of them. */
#define ST_BAND_FILL "fs transparent solid 0.12 noborder"

static void append(char **buf, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#include <stdarg.h>
static void append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    char *nb = realloc(*buf, *len + (size_t)n + 1);
    if (!nb) return;
    *buf = nb;
    va_start(ap, fmt);
    vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

/* Smallest and largest positive value of a column over the rows (eval
 * losses, or gaps when gap is set), and whether any gap is <= 0. */
static void value_range(const st_table *t, bool gap, double *lo, double *hi, bool *nonpos)
{
    *lo = INFINITY;
    *hi = 0;
    *nonpos = false;
    for (size_t i = 0; i < t->n; i++) {
        const st_row *r = &t->rows[i];
        double v[2] = {r->eval_loss, r->ref_eval_loss};
        if (gap) v[0] = v[1] = r->ref_eval_loss != 0 ? 100.0 * (r->eval_loss - r->ref_eval_loss) / r->ref_eval_loss : 0;
        for (int k = 0; k < 2; k++) {
            if (!isfinite(v[k])) continue;
            if (v[k] <= 0) *nonpos = true;
            else {
                if (v[k] < *lo) *lo = v[k];
                if (v[k] > *hi) *hi = v[k];
            }
        }
    }
}

/* The most seeds any arm has: a title promises an interval over seeds only
 * where there are several. */
static size_t most_seeds(const st_table *t)
{
    size_t most = 0;
    for (size_t a = 0; a < t->narms; a++) {
        size_t n = 0;
        for (size_t i = 0; i < t->nfin; i++) n += t->fin[i].arm == a;
        if (n > most) most = n;
    }
    return most;
}

/* Early in a run the gaps swing by points of % (a few evaluations of a model
 * still near its initial loss), later by hundredths, and the later part is
 * what the findings read. When the data's whole range (bands included) is
 * over 4x that of its second half, the script fits the y axis to the second
 * half (and 0) and says so in a label; else gnuplot's own range stands.
 * `file` has the tokens in column xcol and the band in columns lo, hi;
 * x_half: half the largest token count. An earlier point enters the second
 * half's stats as 0, which its range holds anyway: stats never sees an
 * empty selection (a fatal error in gnuplot). */
static void append_late_yrange(char **s, size_t *len, const char *file, int xcol, int lo, int hi, double x_half)
{
    append(s, len,
           "stats '%s' using %d nooutput\nall_lo = STATS_min\nstats '%s' using %d nooutput\nall_hi = STATS_max\n"
           "stats '%s' using ($%d >= %.17g ? $%d : 0) nooutput\nlate_lo = STATS_min < 0 ? STATS_min : 0\n"
           "stats '%s' using ($%d >= %.17g ? $%d : 0) nooutput\nlate_hi = STATS_max > 0 ? STATS_max : 0\n"
           "if (all_hi - all_lo > 4 * (late_hi - late_lo)) {\n"
           "  pad = (late_hi > late_lo ? late_hi - late_lo : 1) * 0.08\n"
           "  set yrange [late_lo - pad:late_hi + pad]\n"
           "  set label 1 'y axis fits the second half of the run; earlier points leave the frame' at graph 0.02, "
           "graph 0.96 front\n"
           "}\n",
           file, lo, file, hi, file, xcol, x_half, lo, file, xcol, x_half, hi);
}

/* The largest token count of arm a's rows (ALL_ARMS: of every row). */
#define ALL_ARMS SIZE_MAX
static double arm_max_tokens(const st_table *t, size_t a)
{
    double m = 0;
    for (size_t i = 0; i < t->n; i++)
        if ((a == ALL_ARMS || t->rows[i].arm == a) && (double)t->rows[i].tokens > m) m = (double)t->rows[i].tokens;
    return m;
}

/* paired.png: gap(arm) - gap(first arm) of the same seed against tokens,
 * mean and the 95% band of the per-seed paired difference */
static nvfp4_status plot_paired(const char *dir, const st_table *t, const bool *has, const char *title,
                                nvfp4_error *err)
{
    char *s = NULL;
    size_t len = 0, k = 0, n = 0;
    for (size_t a = 1; a < t->narms; a++) n += has[a];
    if (!n) return NVFP4_OK;
    char spread[96];
    size_t nseeds = most_seeds(t);
    if (nseeds > 1)
        snprintf(spread, sizeof spread, "line: mean over %zu seeds; band: 95%% t interval of the paired difference",
                 nseeds);
    else snprintf(spread, sizeof spread, "one seed: no interval");
    append(&s, &len,
           "set terminal pngcairo size 900,560 noenhanced\nset output 'paired.png'\n"
           "set title \"%s: gap(arm) - gap(%s) of the same seed\\n(%s)\"\n"
           "set xlabel 'tokens (runs.csv)'\nset ylabel 'paired gap difference (points of %%)'\nset key outside right\n"
           "set grid\nset xzeroaxis lt -1 lw 1.5\n",
           title, t->arms[0],
           spread);
    /* the paired arms have the first arm's steps (paired_agg.dat leaves out the others) */
    append_late_yrange(&s, &len, "paired_agg.dat", 1, 4, 5, arm_max_tokens(t, 0) / 2.0);
    append(&s, &len, "plot ");
    /* every band first, then every mean line: a later band never covers an earlier line */
    for (size_t a = 1; a < t->narms; a++)
        if (has[a])
            append(&s, &len, "'paired_agg.dat' index %zu using 1:4:5 with filledcurves " ST_BAND_FILL " lc %zu notitle, ",
                   k++, a + 1);
    k = 0;
    for (size_t a = 1; a < t->narms; a++) {
        if (!has[a]) continue;
        append(&s, &len, "'paired_agg.dat' index %zu using 1:3 with lines lw 2 lt %zu title '%s'%s", k, a + 1,
               t->arms[a], k + 1 < n ? ", " : "\n");
        k++;
    }
    nvfp4_status st = s ? st_gnuplot(dir, "paired.gp", s, err) : NVFP4_ENOMEM;
    free(s);
    return st;
}

/* More arms than this and gap.png draws one panel per arm: five 95% bands
 * laid over each other merge into one area whatever their colours. */
#define ST_GAP_OVERLAY_MAX_ARMS 4

/* gap.png with every arm on one axis: the bands first, then the mean lines,
 * so that a later band never covers an earlier line */
static void gap_overlay_script(char **s, size_t *len, const st_table *t, const char *title, const char *spread,
                               bool loggap)
{
    append(s, len,
           "set terminal pngcairo size 900,560 noenhanced\nset output 'gap.png'\n"
           "set title '%s: relative eval-loss gap to the FP32 shadow (%s)'\n"
           "set xlabel 'tokens (runs.csv)'\nset ylabel 'gap (%%)%s'\nset key outside right\nset grid\n%s",
           title, spread, loggap ? ", log scale" : "", loggap ? "set logscale y\nset format y '%g'\n" : "");
    if (!loggap) append_late_yrange(s, len, "gap_agg.dat", 8, 3, 4, arm_max_tokens(t, ALL_ARMS) / 2.0);
    append(s, len, "plot ");
    for (size_t a = 0; a < t->narms; a++)
        append(s, len, "'gap_agg.dat' index %zu using 8:3:4 with filledcurves " ST_BAND_FILL " lc %zu notitle, ", a,
               a + 1);
    for (size_t a = 0; a < t->narms; a++)
        append(s, len, "'gap_agg.dat' index %zu using 8:2 with lines lw 2 lt %zu title '%s'%s", a, a + 1, t->arms[a],
               a + 1 < t->narms ? ", " : "\n");
}

/* gap.png as small multiples: one panel per arm on a shared y axis, its band
 * and mean line, with the first arm's mean as a thin black line under it in
 * every other panel to compare against. The y range is taken over every arm's
 * band (gnuplot's stats) so that the panels read on one scale; a log axis
 * takes the range of the per-seed gaps, which are all positive there. */
/* A tick step of 1, 2 or 5 times a power of ten giving 2 to 5 intervals up
 * to max: a panel a third of the figure wide has room for that many plain
 * six-digit numbers. */
static double tick_step(double max)
{
    if (!(max > 0)) return 1;
    double p = pow(10.0, floor(log10(max / 2.0)));
    return max / p >= 10 ? 5 * p : max / p >= 4 ? 2 * p : p;
}

static void gap_panels_script(char **s, size_t *len, const st_table *t, const char *title, const char *spread,
                              bool loggap, double lo, double hi)
{
    size_t cols = t->narms <= 6 ? 3 : 4, rows = (t->narms + cols - 1) / cols;
    append(s, len,
           "set terminal pngcairo size %zu,%zu noenhanced\nset output 'gap.png'\n",
           cols * 380, rows * 300 + 60);
    if (loggap) append(s, len, "set logscale y\nset format y '%%g'\nset yrange [%.6g:%.6g]\n", lo, hi);
    else
        append(s, len, "stats 'gap_agg.dat' using 3 nooutput\nylo = STATS_min\n"
                       "stats 'gap_agg.dat' using 4 nooutput\nyhi = STATS_max\n"
                       "pad = (yhi > ylo ? yhi - ylo : 1) * 0.05\nset yrange [ylo - pad:yhi + pad]\n");
    append(s, len,
           "set multiplot layout %zu,%zu title \"%s: relative eval-loss gap to the FP32 shadow, one panel per arm\\n"
           "(%s; black: %s's mean)\"\n"
           "set grid\nset key top right\nset xlabel 'tokens (runs.csv)'\nset ylabel 'gap (%%)%s'\n"
           "set format x '%%g'\n",
           rows, cols, title, spread, t->arms[0], loggap ? ", log scale" : "");
    for (size_t a = 0; a < t->narms; a++) {
        append(s, len,
               "set title '%s'\nset xtics 0, %.6g\nplot 'gap_agg.dat' index %zu using 8:3:4 with filledcurves "
               ST_BAND_FILL " lc %zu notitle, ",
               t->arms[a], tick_step(arm_max_tokens(t, a)), a, a + 1);
        if (a) append(s, len, "'' index 0 using 8:2 with lines lw 1 dt 1 lc rgb 'black' notitle, ");
        append(s, len, "'' index %zu using 8:2 with lines lw 2 lt %zu notitle\n", a, a + 1);
    }
    append(s, len, "unset multiplot\n");
}

/* Says on the layers plot why slots are empty (the first and last layers
 * of the s3 studies, the BF16 blocks of a GPT): one label per run of
 * adjacent high-precision slots, centred on it, so that neighbouring labels
 * never overprint; written across the run where it is wide enough (about
 * 850 px of plot over nlayers slots, 110 px for the two-line label), up
 * the slots otherwise. */
static void label_high_precision_runs(char **s, size_t *len, size_t nlayers, const bool *quantized)
{
    const double plot_px = 850.0, label_px = 110.0;
    for (size_t l0 = 0; l0 < nlayers; l0++) {
        if (quantized[l0]) continue;
        size_t l1 = l0;
        while (l1 + 1 < nlayers && !quantized[l1 + 1]) l1++;
        double mid = 0.5 * (double)(l0 + l1), run_px = (double)(l1 - l0 + 1) * plot_px / (double)nlayers;
        if (run_px >= label_px)
            append(s, len, "set label \"high precision\\n(not quantized)\" at %g, graph 0.5 center\n", mid);
        else
            append(s, len, "set label \"high precision (not quantized)\" at %g, graph 0.5 center rotate by 90\n", mid);
        l0 = l1;
    }
}

static nvfp4_status plot_training(const char *dir, const st_table *t, size_t nlayers, const bool *quantized,
                                  const char *title, nvfp4_error *err)
{
    char *s = NULL;
    size_t len = 0;
    char spread[64];
    size_t nseeds = most_seeds(t);
    char mean_over[48];
    if (nseeds > 1) snprintf(spread, sizeof spread, "line: mean over %zu seeds, band: 95%% CI", nseeds);
    else snprintf(spread, sizeof spread, "one seed: no interval");
    if (nseeds > 1) snprintf(mean_over, sizeof mean_over, "mean over %zu seeds", nseeds);
    else snprintf(mean_over, sizeof mean_over, "one seed");
    double lo, hi;
    bool nonpos;
    /* gaps spanning decades (s1a, s6: up to 1e9 %) on a log axis, when all are positive */
    value_range(t, true, &lo, &hi, &nonpos);
    bool loggap = !nonpos && hi > 1000.0 * lo;
    if (t->narms > ST_GAP_OVERLAY_MAX_ARMS) gap_panels_script(&s, &len, t, title, spread, loggap, lo, hi);
    else gap_overlay_script(&s, &len, t, title, spread, loggap);
    nvfp4_status st = s ? st_gnuplot(dir, "gap.gp", s, err) : NVFP4_ENOMEM;
    free(s);
    if (st != NVFP4_OK) return st;
    s = NULL;
    len = 0;
    /* a log axis only where the losses span more than a decade: across 1-10 it squeezes the arms together */
    value_range(t, false, &lo, &hi, &nonpos);
    bool logloss = !nonpos && hi > 10.0 * lo;
    append(&s, &len,
           "set terminal pngcairo size 900,560 noenhanced\nset output 'loss.png'\n"
           "set title '%s: eval loss (%s; no band); black: the FP32 shadow of the first arm'\n"
           "set xlabel 'tokens (runs.csv)'\nset ylabel 'eval loss%s'\n%sset key outside right\nset grid\n"
           "plot 'gap_agg.dat' index 0 using 8:7 with lines lw 3 lc rgb 'black' title 'FP32', ",
           title, mean_over, logloss ? ", log scale" : "", logloss ? "set logscale y\nset format y '%g'\n" : "");
    for (size_t a = 0; a < t->narms; a++)
        append(&s, &len, "'gap_agg.dat' index %zu using 8:6 with lines lw 2 lt %zu title '%s'%s", a, a + 1,
               t->arms[a], a + 1 < t->narms ? ", " : "\n");
    st = s ? st_gnuplot(dir, "loss.gp", s, err) : NVFP4_ENOMEM;
    free(s);
    if (st != NVFP4_OK || !nlayers) return st;
    s = NULL;
    len = 0;
    /* bars, one cluster per layer, one bar per arm (arm a at layer + offset) */
    double w = 0.8 / (double)t->narms;
    append(&s, &len,
           "set terminal pngcairo size 1100,640 noenhanced\nset output 'layers.png'\nset multiplot layout 2,1 title "
           "\"%s: per-layer SQNR of the quantized GEMMs (bars: mean over the logged steps and %zu seed%s)\\n"
           "a layer without bars ran in high precision in every arm (not quantized: no SQNR)\"\n"
           "set xlabel 'linear layer (index in layers.csv)'\nset xtics 1\nset grid ytics\nset key outside right\n"
           "set style fill solid 0.6 border -1\nset boxwidth %g absolute\nset xrange [-0.6:%g]\nset yrange [0:*]\n",
           title, nseeds, nseeds == 1 ? "" : "s", w, (double)nlayers - 0.4);
    label_high_precision_runs(&s, &len, nlayers, quantized);
    append(&s, &len, "set ylabel 'Wgrad SQNR (dB)'\nplot ");
    for (size_t a = 0; a < t->narms; a++)
        append(&s, &len, "'layers_agg.dat' index %zu using ($1 - 0.4 + %g):4 with boxes lc %zu dt 1 title '%s'%s", a,
               w * ((double)a + 0.5), a + 1, t->arms[a], a + 1 < t->narms ? ", " : "\n");
    append(&s, &len, "set ylabel 'Fprop output SQNR (dB)'\nplot ");
    for (size_t a = 0; a < t->narms; a++)
        append(&s, &len, "'layers_agg.dat' index %zu using ($1 - 0.4 + %g):2 with boxes lc %zu dt 1 title '%s'%s", a,
               w * ((double)a + 0.5), a + 1, t->arms[a], a + 1 < t->narms ? ", " : "\n");
    append(&s, &len, "unset multiplot\n");
    st = s ? st_gnuplot(dir, "layers.gp", s, err) : NVFP4_ENOMEM;
    free(s);
    return st;
}

nvfp4_status st_aggregate_and_plot(const char *dir, const nvfp4_study *study, const char *title, bool *skipped,
                                   nvfp4_error *err)
{
    st_table t;
    nvfp4_status s = st_read_runs(dir, &t, err);
    size_t nl = 0;
    bool quantized[ST_MAX_LAYERS];
    if (s == NVFP4_OK && t.n) s = write_gap_agg(dir, &t, err);
    if (s == NVFP4_OK && t.n) s = write_layers_agg(dir, &t, &nl, quantized, err);
    bool has[ST_MAX_ARMS] = {false};
    if (s == NVFP4_OK && t.n) s = write_paired_agg(dir, &t, has, err);
    if (skipped) *skipped = !st_have_gnuplot();
    if (s == NVFP4_OK && t.n && st_have_gnuplot()) s = plot_training(dir, &t, nl, quantized, title, err);
    if (s == NVFP4_OK && t.n && st_have_gnuplot()) s = plot_paired(dir, &t, has, title, err);
    if (s == NVFP4_OK && study && study->plots && st_have_gnuplot()) s = study->plots(dir, err);
    st_table_free(&t);
    return s;
}

/* ---- tokens-to-match figure (s3-format, s11-format) ---------------------- */
nvfp4_status st_plot_tokens_to_match(const char *dir, const char *const names[5], double published,
                                     nvfp4_error *err)
{
    static const double mult[5] = {1.0, 1.0, 1.25, 1.36, 1.5};
    st_table t;
    nvfp4_status st = st_read_runs(dir, &t, err);
    if (st != NVFP4_OK) return st;
    const st_row *rows[5 * 256];
    size_t n = st_paired_finals(&t, names, 5, rows, 256);
    double m[5], ci[5];
    for (size_t k = 0; k < 5 && n; k++) {
        double x[256];
        for (size_t i = 0; i < n; i++) x[i] = rows[i * 5 + k]->eval_loss - rows[i * 5 + k]->entropy;
        st_mean_ci(x, n, &m[k], &ci[k]);
        if (!isfinite(ci[k])) ci[k] = 0.0;
    }
    st_table_free(&t);
    if (!n) return NVFP4_OK;
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "# token_multiple mean_final_excess_loss lo hi arm (95%% t interval over %zu seeds)\n", n);
    for (size_t k = 1; k < 5; k++)
        fprintf(f, "%g %.8g %.8g %.8g %s\n", mult[k], m[k], m[k] - ci[k], m[k] + ci[k], names[k]);
    st = st_file_commit(&sf, dir, "ttm.dat", err);
    if (st != NVFP4_OK) return st;
    char *s = NULL;
    size_t len = 0;
    append(&s, &len,
           "set terminal pngcairo size 900,560 noenhanced\nset output 'ttm.png'\n"
           "set title \"tokens-to-match: MXFP4 at 1-1.5x the tokens against %s (the target line)\\n"
           "final excess loss: mean and 95%% t interval over %zu seeds\"\n"
           "set xlabel 'MXFP4 tokens / NVFP4 tokens'\n"
           "set ylabel 'final excess loss (nats; eval CE - entropy rate, or the CE)'\nset grid\n"
           "set key bottom left box opaque\nset xrange [0.95:1.55]\n"
           "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lw 2 lc rgb 'dark-green'\n"
           "set label 'published %.2fx' at %g, graph 0.95 left offset 0.5,0 tc rgb 'dark-green'\n"
           "set object 1 rect from graph 0, first %.8g to graph 1, first %.8g fc rgb 'red' fs transparent solid 0.12 "
           "noborder\n"
           "plot %.8g with lines lw 2 dt 1 lc rgb 'red' title '%s (target), band: 95%% CI', "
           "'ttm.dat' using 1:2:3:4 with yerrorlines lw 2 dt 1 pt 7 lc rgb 'blue' title 'MXFP4'\n",
           names[0], n, published, published, published, published, m[0] - ci[0], m[0] + ci[0], m[0], names[0]);
    st = s ? st_gnuplot(dir, "ttm.gp", s, err) : NVFP4_ENOMEM;
    free(s);
    return st;
}
