/*
 * s2_layers.c - study S2-layers, layer sensitivity on the GPT (gptbase.c,
 * d = 64) on English text: everything in NVFP4 (the head too), then one
 * layer type (attn.qkv, attn.proj, mlp.fc1, mlp.fc2, head) or one block kept
 * in BF16 through a per-layer override: the fraction of the all-NVFP4 gap
 * each group recovers, ranked (NVIDIA arXiv 2509.25149 Sec. 4.1 and App. E.2
 * keep the last blocks and the head in BF16). Its arms: studies/s2-layers.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/summary.h"
#include "study/verdict.h"

#define S2_GROUPS 7
static const char *const s2_base = "all-nvfp4";
static const char *const s2_groups[S2_GROUPS] = {"qkv-bf16",  "proj-bf16",   "fc1-bf16",   "fc2-bf16",
                                                 "head-bf16", "block0-bf16", "block1-bf16"};

/* Fraction of the base's final gap that arm recovers (a ratio of the mean
 * gaps, with its paired percentile bootstrap interval), as its finding. */
static bool s2_fraction(const st_table *t, const char *arm, st_estimate *e)
{
    double g;
    return st_gap_fraction_est(t, s2_base, arm, true, e, &g) && !isnan(e->est);
}

/* The groups in decreasing order of their mean fraction recovered. */
static size_t s2_ranked(const st_table *t, size_t *order, st_estimate *est)
{
    size_t n = 0;
    for (size_t g = 0; g < S2_GROUPS; g++)
        if (s2_fraction(t, s2_groups[g], &est[g])) order[n++] = g;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && est[order[j]].est > est[order[j - 1]].est; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    return n;
}

static void s2_findings(const st_table *t, const st_arm_summary *a, const char *dir, json_t *out)
{
    (void)a;
    (void)dir;
    const char *src = "NVIDIA arXiv 2509.25149 Sec. 4.1, App. E.2 (the last blocks and the head kept in BF16)";
    char claim[160];
    for (size_t g = 0; g < S2_GROUPS; g++) {
        snprintf(claim, sizeof claim, "keeping %.*s in BF16 recovers part of the all-NVFP4 gap",
                 (int)(strlen(s2_groups[g]) - 5), s2_groups[g]);
        st_finding_recovered(t, out, claim, src, s2_base, s2_groups[g], NAN);
    }
    st_finding_paired(t, out, "the last block is more sensitive than the first (keeping it in BF16 recovers more)",
                      src, "block0-bf16", "block1-bf16");
    size_t order[S2_GROUPS];
    st_estimate est[S2_GROUPS];
    size_t n = s2_ranked(t, order, est);
    if (!n) return;
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "fraction of the all-NVFP4 gap recovered, ranked:");
    for (size_t i = 0; i < n && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s %.3f [%.3f, %.3f]", i ? ";" : "",
                                s2_groups[order[i]], est[order[i]].est, est[order[i]].lo, est[order[i]].hi);
    st_finding(out, "layer groups ranked by the gap they recover in BF16", "this study", buf, "measurement");
}

/* s2_layers.dat and s2.png: the ranked fractions as bars with their 95% intervals. */
static nvfp4_status s2_plots(const char *dir, nvfp4_error *err)
{
    st_table t;
    nvfp4_status st = st_read_runs(dir, &t, err);
    if (st != NVFP4_OK) return st;
    size_t order[S2_GROUPS];
    st_estimate est[S2_GROUPS];
    size_t n = s2_ranked(&t, order, est);
    st_table_free(&t);
    if (!n) return NVFP4_OK;
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    fprintf(f, "# rank group fraction_recovered lo hi seeds (the ratio of the mean gaps; lo, hi: its 95%% paired "
               "percentile bootstrap interval)\n");
    for (size_t i = 0; i < n; i++) {
        const st_estimate *e = &est[order[i]];
        fprintf(f, "%zu %s %.6g %.6g %.6g %zu\n", i, s2_groups[order[i]], e->est, isfinite(e->lo) ? e->lo : e->est,
                isfinite(e->hi) ? e->hi : e->est, e->n);
    }
    st = st_file_commit(&sf, dir, "s2_layers.dat", err);
    if (st != NVFP4_OK) return st;
    return st_gnuplot(dir, "s2.gp",
                      "set terminal pngcairo size 900,520 noenhanced\nset output 's2.png'\n"
                      "set title \"s2-layers: fraction of the all-NVFP4 gap recovered by keeping one group in BF16\\n"
                      "(final eval loss; bars: ratio of the mean gaps, whiskers: 95% bootstrap interval)\"\n"
                      "set ylabel 'fraction of the gap recovered'\nset grid ytics\nset key off\n"
                      "set style fill solid 0.5 border -1\nset boxwidth 0.6\nset xtics rotate by -30\n"
                      "set xzeroaxis lt -1\n"
                      "plot 's2_layers.dat' using 1:3:xtic(2) with boxes lc 3, "
                      "'' using 1:3:4:5 with yerrorbars dt 1 lc rgb 'black' pt 0 lw 1.5\n",
                      err);
}

const nvfp4_study st_study_s2_layers = {
    .name = "s2-layers",
    .wall = "6 min 56 s",
    .claim = "GPT on English text: which linears must stay in BF16 - each layer type and each block kept in BF16 "
             "while the rest (head included) is NVFP4 (NVIDIA 2509.25149 Sec. 4.1, App. E.2)",
    .seeds = 10, /* paired t with 9 degrees of freedom (docs/studies.md "How verdicts are decided") */
    .steps = 400,
    .run = st_run_config_study,
    .config = "s2-layers", /* its arms: studies/s2-layers.json */
    .findings = s2_findings,
    .plots = s2_plots,
    .quick_steps = 400, /* one seed of the default run: the fractions of the gap need its size */
};
