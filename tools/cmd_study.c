/* cmd_study.c - `nvfp4 study list | run NAME | plot DIR | merge OUT DIR...`:
 * the error-accumulation laboratory (docs/studies.md). */
#include <cblas.h>
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_suggest.h"
#include "nvfp4/study.h"

/* Set by the MPI build's main (tools/mpi/nvfp4_mpi.c) before the command
 * runs; NULL in the plain nvfp4. */
extern const nvfp4_study_dist *nvfp4_cli_study_dist;
const nvfp4_study_dist *nvfp4_cli_study_dist = NULL;

static void usage(FILE *f)
{
    fputs("usage: nvfp4 study list\n"
          "       nvfp4 study run NAME|--config FILE.json [--seeds N] [--steps N] [--out DIR] [--shard i/n]\n"
          "                 [--threads T (default 2)] [--quick] [--quiet] [--resume] [--checkpoint-every N]\n"
          "                 [--target-ci W [--max-seeds N (default 64)] [--seed-batch B]] [--own-shadows]\n"
          "                 [--first-seed K]\n"
          "       nvfp4 study show NAME\n"
          "       nvfp4 study bench [--json] [--steps N (default 8)] [--threads LIST (default 1,2)] [--arms LIST]\n"
          "                 [--rounds R (default 3)]\n"
          "       nvfp4 study plot DIR\n"
          "       nvfp4 study merge --out DIR SHARD_DIR...\n"
          "Runs a built-in study (see `nvfp4 study list`), writing runs.csv, layers.csv, summary.json and PNG\n"
          "plots (when gnuplot is installed) into DIR (default: study-out/NAME). --steps sets the training\n"
          "steps (S0: the repetition count); --quick runs the study's CI-sized preset (most GPT studies:\n"
          "a tiny GPT for 6 steps; s2-layers, s3-format, s3-switch, s6\n"
          "and s7-gpt: one seed of the default run; others: 4 steps), 1 seed unless --steps / --seeds say\n"
          "otherwise; --shard i/n runs every n-th job starting at i (0-based), for\n"
          "job arrays; `merge` combines shard folders in job order and recomputes the summary. --first-seed K\n"
          "runs seeds K .. K+N-1 (N: --seeds) instead of 1 .. N, the same bytes per seed: `merge` joins such\n"
          "folders whose seeds tile 1 .. M into the M-seed run (seeds spread over machines or days). --config runs a\n"
          "study defined by a JSON file (`show NAME` prints a built-in one's, studies/NAME.json); --resume\n"
          "continues a killed run in the same --out folder from each job's last checkpoint (every\n"
          "--checkpoint-every N steps, default every 300 s), skipping finished jobs and reading a seed's\n"
          "shared FP32 shadow from its kept trace (kept when it trained 60 s or more, or with\n"
          "--checkpoint-every): the same bytes; it refuses a folder left by another config, --steps, --seeds,\n"
          "--shard or OpenBLAS kernel (the files depend on it: OPENBLAS_CORETYPE), and a damaged checkpoint\n"
          "or trace (SHA-256).\n"
          "summary.json carries the run's fingerprint and each CSV's size and SHA-256: merge exits 2 for a shard\n"
          "given twice, a missing one, shards of another run, or a truncated or changed CSV. run and merge lock\n"
          "their folder (OUT/.lock; a second one exits 2). Under MPI\n"
          "(nvfp4-mpi, built where mpicc exists) `mpirun -np N nvfp4-mpi study run ...` spreads the (arm, seed)\n"
          "jobs over the ranks, with the files of one process. --target-ci W adds seeds in batches (--seed-batch,\n"
          "default the first batch's --seeds) until every finding's 95% interval is narrower than W (in its\n"
          "statistic's unit) or --max-seeds is reached; its verdicts divide the 5% level over the planned\n"
          "looks (docs/studies.md \"Sequential runs\"). The FP32 shadow (the baseline) is trained once\n"
          "per seed and read by every arm of that seed that shares its config but for the recipe;\n"
          "--own-shadows trains one beside every job instead (the same bytes, for timing). `bench` times one training\n"
          "step of the default GPT (nvfp4_train_cfg_gpt) under the fp32, bf16, fp8, mxfp8 and nvfp4 (paper)\n"
          "arms and nvfp4-bf16 (the paper recipe with BF16 arithmetic, as the GPT studies run it)\n"
          "(--arms: those listed; fp32 always runs, the ratios' base) in one run, with each step's ratio\n"
          "to the fp32 arm's and its fraction of the machine's SGEMM\n"
          "rate (OpenBLAS sgemm on the step's linear GEMM shapes, timed in the same run); the arms run R\n"
          "times in turn (--rounds) and each figure is the median over the rounds, each ratio taken within\n"
          "a round (the range of the ratio to fp32 in brackets). docs/studies.md.\n",
          f);
}

static int cmd_list(void)
{
    for (size_t i = 0; i < nvfp4_study_count(); i++) {
        const nvfp4_study *s = nvfp4_study_at(i);
        const char *wall = nvfp4_study_wall(s);
        printf("%-10s %s%s", nvfp4_study_name(s), nvfp4_study_claim(s), nvfp4_study_config_text(s) ? " [config]" : "");
        if (wall) printf(" (default run: %s on 2 cores)", wall);
        putchar('\n');
    }
    return NVFP4_EXIT_OK;
}

static bool parse_shard(const char *s, size_t *i, size_t *n)
{
    const char *slash = strchr(s, '/');
    char a[32], b[32];
    if (!slash || (size_t)(slash - s) >= sizeof a || strlen(slash + 1) >= sizeof b) return false;
    memcpy(a, s, (size_t)(slash - s));
    a[slash - s] = 0;
    strcpy(b, slash + 1);
    return cli_parse_size(a, i) && cli_parse_size(b, n) && *n > 0 && *i < *n;
}

/* The study called name, ignoring case where that is unambiguous (S0 is s0). */
static const nvfp4_study *find_study(const char *name)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < nvfp4_study_count() && n < 64; i++) names[n++] = nvfp4_study_name(nvfp4_study_at(i));
    const char *m = cli_match_name(name, names, n);
    if (m) return nvfp4_study_find(m);
    cli_fail("study", "unknown study '%s' (nvfp4 study list)", name);
    const char *c = cli_closest(name, names, n);
    if (c) fprintf(stderr, "nvfp4: did you mean 'nvfp4 study run %s'?\n", c);
    return NULL;
}

/* "summary.json, 6 CSV files, 4 PNG plots": what the run left in dir. */
static void list_outputs(const char *dir, char *buf, size_t n)
{
    size_t png = 0, csv = 0, used = 0;
    bool summary = false;
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".png") == 0) png++;
        if (len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) csv++;
        summary |= strcmp(e->d_name, "summary.json") == 0;
    }
    closedir(d);
    if (summary) used += (size_t)snprintf(buf, n, "summary.json");
    if (csv && used < n)
        used += (size_t)snprintf(buf + used, n - used, "%s%zu CSV file%s", used ? ", " : "", csv, csv == 1 ? "" : "s");
    if (png && used < n) snprintf(buf + used, n - used, "%s%zu PNG plot%s", used ? ", " : "", png, png == 1 ? "" : "s");
}

static int run_study(const nvfp4_study *s, int first, int argc, char **argv);

/* The summary's "noise_to_quant" (the gradient probe), one line per arm:
 * is the quantization error drowned by the sampling noise? */
static void print_noise_to_quant(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *root = json_load_file(path, 0, NULL);
    json_t *arr = root ? json_object_get(root, "noise_to_quant") : NULL;
    size_t i;
    json_t *o;
    if (json_array_size(arr))
        printf("gradient sampling noise / quantization error (||g_A - g_B|| / ||g_q - g_A||, last probe, mean over "
               "seeds):\n");
    json_array_foreach(arr, i, o) {
        printf("  %-16s %8.3g  (noise %.3g, error %.3g, step %lld, %lld seeds)",
               json_string_value(json_object_get(o, "arm")), json_number_value(json_object_get(o, "noise_to_qerr")),
               json_number_value(json_object_get(o, "noise_mean")), json_number_value(json_object_get(o, "qerr_mean")),
               (long long)json_integer_value(json_object_get(o, "step")),
               (long long)json_integer_value(json_object_get(o, "seeds")));
        json_t *parity = json_object_get(o, "tokens_for_parity");
        if (json_is_number(parity)) { /* null where the noise scale is undefined (noise^2 >= 2) */
            json_t *ci = json_object_get(o, "tokens_for_parity_ci90");
            printf("; noise = error at %.3g tokens per step", json_number_value(parity));
            if (json_is_number(json_array_get(ci, 0)))
                printf(" (90%%: %.3g to ", json_number_value(json_array_get(ci, 0)));
            if (json_is_number(json_array_get(ci, 0)) && json_is_number(json_array_get(ci, 1)))
                printf("%.3g)", json_number_value(json_array_get(ci, 1)));
            else if (json_is_number(json_array_get(ci, 0)))
                printf("unbounded)");
            printf(", now %lld", (long long)json_integer_value(json_object_get(o, "tokens_per_step")));
        }
        printf("\n");
    }
    json_decref(root);
}

static int cmd_run(int argc, char **argv)
{
    if (argc < 3) return cli_fail("study", "run: which study? (nvfp4 study list, or --config FILE.json)");
    nvfp4_study *loaded = NULL;
    const nvfp4_study *s = NULL;
    int first = 3;
    const char *cfg = !strcmp(argv[2], "--config") ? (argc > 3 ? argv[3] : NULL) : NULL;
    size_t l2 = strlen(argv[2]);
    if (!strcmp(argv[2], "--config")) {
        if (!cfg) return cli_fail("study", "--config needs a file");
        first = 4;
    } else if (l2 > 5 && !strcmp(argv[2] + l2 - 5, ".json")) {
        cfg = argv[2];
    }
    if (cfg) {
        nvfp4_error lerr = {NVFP4_OK, ""};
        if (nvfp4_study_load_config(cfg, &loaded, &lerr) != NVFP4_OK) return cli_fail("study", "%s", lerr.message);
        s = loaded;
    } else {
        s = find_study(argv[2]);
    }
    if (!s) return NVFP4_EXIT_USAGE;
    int rc = run_study(s, first, argc, argv);
    nvfp4_study_free(loaded);
    return rc;
}

static int run_study(const nvfp4_study *s, int first, int argc, char **argv)
{
    nvfp4_study_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 2; /* concurrent (arm, seed) jobs; results never depend on it */
    char def[256];
    snprintf(def, sizeof def, "study-out/%s", nvfp4_study_name(s));
    o.out_dir = def;
    o.dist = nvfp4_cli_study_dist;
    bool root = !o.dist || o.dist->rank == 0;
    nvfp4_study_seq seq = {0.0, 64, 0};
    bool sequential = false, seq_opt = false;
    size_t first_seed = 1;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t n;
        if (!strcmp(a, "--quiet")) {
            o.quiet = true;
            continue;
        }
        if (!strcmp(a, "--quick")) {
            o.quick = true;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            o.resume = true;
            continue;
        }
        if (!strcmp(a, "--own-shadows")) {
            o.own_shadows = true;
            continue;
        }
        if (!v) return cli_fail("study", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--seeds")) {
            if (!cli_parse_size(v, &o.seeds) || !o.seeds || o.seeds > 256)
                return cli_fail("study", "--seeds: expected 1..256, got '%s'", v);
        } else if (!strcmp(a, "--first-seed")) {
            if (!cli_parse_size(v, &first_seed) || !first_seed || first_seed > 65536)
                return cli_fail("study", "--first-seed: expected 1..65536, got '%s'", v);
            o.seed_first = first_seed - 1;
        } else if (!strcmp(a, "--steps")) {
            if (!cli_parse_size(v, &o.steps) || !o.steps) return cli_fail("study", "--steps: expected a positive integer, got '%s'", v);
        } else if (!strcmp(a, "--checkpoint-every")) {
            if (!cli_parse_size(v, &o.checkpoint_every) || !o.checkpoint_every)
                return cli_fail("study", "--checkpoint-every: expected a positive step count, got '%s'", v);
        } else if (!strcmp(a, "--out")) {
            o.out_dir = v;
        } else if (!strcmp(a, "--target-ci")) {
            char *end;
            seq.target_ci = strtod(v, &end);
            if (*end || end == v || !(seq.target_ci > 0.0) || seq.target_ci > 1e300)
                return cli_fail("study", "--target-ci: expected a positive width, got '%s'", v);
            sequential = true;
        } else if (!strcmp(a, "--max-seeds")) {
            if (!cli_parse_size(v, &seq.max_seeds) || seq.max_seeds < 2 || seq.max_seeds > 256)
                return cli_fail("study", "--max-seeds: expected 2..256, got '%s'", v);
            seq_opt = true;
        } else if (!strcmp(a, "--seed-batch")) {
            if (!cli_parse_size(v, &seq.seed_batch) || !seq.seed_batch || seq.seed_batch > 256)
                return cli_fail("study", "--seed-batch: expected 1..256, got '%s'", v);
            seq_opt = true;
        } else if (!strcmp(a, "--shard")) {
            if (!parse_shard(v, &o.shard_i, &o.shard_n)) return cli_fail("study", "--shard: expected i/n with 0 <= i < n, got '%s'", v);
        } else if (!strcmp(a, "--threads")) {
            if (!cli_parse_size(v, &n) || !n || n > 256) return cli_fail("study", "--threads: expected 1..256, got '%s'", v);
            o.threads = (int)n;
        } else {
            return cli_fail("study", "unknown option '%s'", a);
        }
    }
    if (seq_opt && !sequential) return cli_fail("study", "--max-seeds and --seed-batch need --target-ci");
    if (sequential && o.seed_first)
        return cli_fail("study", "--first-seed: not with --target-ci (its batches choose their own seeds)");
    nvfp4_error err = {NVFP4_OK, ""};
    nvfp4_status st = sequential ? nvfp4_study_run_sequential(s, &o, &seq, stderr, &err)
                                 : nvfp4_study_run(s, &o, stderr, &err);
    if (st != NVFP4_OK) return cli_fail("study", "%s", err.message);
    if (!root) return NVFP4_EXIT_OK; /* rank 0 wrote the files */
    char wrote[160];
    list_outputs(o.out_dir, wrote, sizeof wrote);
    printf("%s: results in %s (%s%s)\n", nvfp4_study_name(s), o.out_dir, wrote,
           system("command -v gnuplot >/dev/null 2>&1") == 0 ? "" : "; plots skipped: gnuplot not found");
    if (!o.quiet) print_noise_to_quant(o.out_dir);
    return NVFP4_EXIT_OK;
}

/* ---- bench ---------------------------------------------------------------------- */
typedef struct {
    const char *name;
    const char *operand; /* every operand of every quantized linear; NULL: the paper's recipe */
    bool bf16_training;  /* the quantized model's arithmetic in BF16, as the GPT studies' arms run */
} bench_arm;

static const bench_arm bench_arms[] = {{"fp32", "fp32", false},  {"bf16", "bf16", false},
                                       {"fp8", "fp8", false},    {"mxfp8", "mxfp8", false},
                                       {"nvfp4", NULL, false},   {"nvfp4-bf16", NULL, true}};

/* One arm's timing (bench_arm_run); ran: whether it was listed. */
typedef struct {
    bool ran;
    double ms, shadow_ms, cpu;
} bench_result;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ms per step of the quantized model and of its FP32 shadow, over `steps`
 * plain steps: step 0 and the last step evaluate and take diagnostics, so
 * the timing window leaves them (and one warm-up step) out; and *cpu_ms,
 * the process CPU time per step of both models together
 * (robust to other load on the machine; with threads, it counts spinning). */
static bool bench_arm_run(const bench_arm *a, size_t steps, double *ms_q, double *ms_ref, double *cpu_ms,
                          size_t *params, nvfp4_error *err)
{
    nvfp4_train_cfg c;
    nvfp4_train_cfg_gpt(&c);
    c.steps = steps + 3;
    c.log_every = c.steps;
    if (a->operand) {
        nvfp4_sq_cfg q;
        if (!nvfp4_sq_cfg_parse(a->operand, &q)) return false;
        for (int g = 0; g < 3; g++)
            for (int o = 0; o < 2; o++) c.recipe.q[g][o] = q;
    }
    c.recipe.bf16_training = a->bf16_training;
    nvfp4_run *r = NULL;
    if (nvfp4_run_create(&c, &r, err) != NVFP4_OK) return false;
    double q0, r0, q1, r1;
    bool ok = nvfp4_run_advance(r, 2, err) == NVFP4_OK;
    nvfp4_run_timing(r, &q0, &r0);
    double c0 = cpu_s();
    ok = ok && nvfp4_run_advance(r, 2 + steps, err) == NVFP4_OK;
    *cpu_ms = 1e3 * (cpu_s() - c0) / (double)steps;
    nvfp4_run_timing(r, &q1, &r1);
    *ms_q = 1e3 * (q1 - q0) / (double)steps;
    *ms_ref = 1e3 * (r1 - r0) / (double)steps;
    *params = nvfp4_run_param_count(r);
    nvfp4_run_free(r);
    return ok;
}

/* One pass of a step's linear GEMMs of the default GPT on buffers a, b, o:
 * for every linear (per block qkv d->3d, proj d->d, fc1 d->f, fc2 f->d; the
 * head d->vocab) its three GEMMs (Fprop, Dgrad, Wgrad) on the step's
 * batch x seq_len tokens. The attention's score products are left out.
 * Returns the GEMMs' work in flop. */
static double sgemm_step_pass(const nvfp4_train_cfg *c, float *a, float *b, float *o)
{
    size_t d = c->model.d_model, f = c->model.d_hidden, v = c->model.vocab, t = c->batch * c->model.seq_len;
    size_t shape[5][2] = {{d, 3 * d}, {d, d}, {d, f}, {f, d}, {d, v}}; /* in, out */
    double work = 0.0;
    for (size_t k = 0; k < 5; k++) {
        size_t n_of = k == 4 ? 1 : c->model.n_blocks;
        int in = (int)shape[k][0], out = (int)shape[k][1], T = (int)t;
        for (size_t j = 0; j < n_of; j++) {
            /* Fprop Y[t,out] = X W^T, Dgrad dX[t,in] = dY W, Wgrad dW[out,in] = dY^T X */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, out, in, 1.0f, a, in, b, in, 0.0f, o, out);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, in, out, 1.0f, o, out, b, in, 0.0f, a, in);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, T, 1.0f, o, out, a, in, 0.0f, b, in);
            work += 3.0 * 2.0 * (double)t * (double)in * (double)out;
        }
    }
    return work;
}

/* The machine's SGEMM time for one step's linear GEMMs, measured now and run
 * the way the bench's models run: at one thread, one pass with OpenBLAS on
 * one thread; at two or more, a model and its FP32 shadow take one thread
 * each side by side (train.c, pair_concurrent), so two one-thread passes run
 * side by side and the bound is their wall time (shared caches and memory
 * bandwidth count against the bound as they count against the step).
 * Best of `reps`. *gflop: one pass's work; *cpu_ms: the process CPU time per
 * pass. Returns wall ms, or -1 when out of memory. */
static double sgemm_step_ms(const nvfp4_train_cfg *c, int threads, int reps, double *gflop, double *cpu_ms)
{
    size_t d = c->model.d_model, f = c->model.d_hidden, v = c->model.vocab, t = c->batch * c->model.seq_len;
    size_t big = 3 * d > f ? 3 * d : f;
    if (v > big) big = v;
    int copies = threads >= 2 ? 2 : 1;
    float *buf[2][3] = {{NULL}};
    bool ok = true;
    for (int k = 0; k < copies; k++) {
        buf[k][0] = calloc(t * big, sizeof(float));
        buf[k][1] = calloc(big * big, sizeof(float));
        buf[k][2] = calloc(t * big, sizeof(float));
        ok = ok && buf[k][0] && buf[k][1] && buf[k][2];
        for (size_t i = 0; ok && i < t * big; i++) buf[k][0][i] = buf[k][2][i] = (float)(i % 7) * 0.25f - 0.75f;
        for (size_t i = 0; ok && i < big * big; i++) buf[k][1][i] = (float)(i % 5) * 0.125f - 0.25f;
    }
    double best = -1.0, work = 0.0, best_cpu = -1.0;
    int blas = openblas_get_num_threads();
    if (copies > 1) openblas_set_num_threads(1);
    for (int rep = 0; ok && rep < reps; rep++) {
        double t0 = cpu_wall_s(), c0 = cpu_s();
#pragma omp parallel for num_threads(copies) schedule(static, 1) reduction(max : work)
        for (int k = 0; k < copies; k++) work = sgemm_step_pass(c, buf[k][0], buf[k][1], buf[k][2]);
        double ms = 1e3 * (cpu_wall_s() - t0), cms = 1e3 * (cpu_s() - c0) / (double)copies;
        if (best < 0 || ms < best) best = ms;
        if (best_cpu < 0 || cms < best_cpu) best_cpu = cms;
    }
    openblas_set_num_threads(blas);
    for (int k = 0; k < copies; k++)
        for (int j = 0; j < 3; j++) free(buf[k][j]);
    *gflop = work * 1e-9;
    *cpu_ms = best_cpu;
    return ok ? best : -1.0;
}

static bool parse_threads(const char *s, int *t, size_t *n)
{
    char buf[64];
    if (strlen(s) >= sizeof buf) return false;
    strcpy(buf, s);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t v;
        if (*n == 8 || !cli_parse_size(tok, &v) || !v || v > 256) return false;
        t[(*n)++] = (int)v;
    }
    return *n > 0;
}

/* Whether `name` is in the comma-separated `list` (NULL: every arm). */
static bool bench_arm_listed(const char *list, const char *name)
{
    if (!list) return true;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

/* Every name of `list` is an arm of the bench. */
static bool bench_arms_valid(const char *list)
{
    size_t na = sizeof bench_arms / sizeof *bench_arms, found = 0, names = 1;
    for (const char *p = list; *p; p++) names += *p == ',';
    for (size_t k = 0; k < na; k++) found += bench_arm_listed(list, bench_arms[k].name);
    return *list && found == names;
}

#define BENCH_MAX_ROUNDS 32
#define BENCH_NARMS (sizeof bench_arms / sizeof *bench_arms)

/* One round: every listed arm (fp32 always) one after the other. */
static bool bench_round(const char *arm_list, size_t steps, bench_result *res, size_t *params, nvfp4_error *err,
                        size_t *failed)
{
    for (size_t k = 0; k < BENCH_NARMS; k++) {
        res[k].ran = false;
        if (k > 0 && !bench_arm_listed(arm_list, bench_arms[k].name)) continue;
        if (!bench_arm_run(&bench_arms[k], steps, &res[k].ms, &res[k].shadow_ms, &res[k].cpu, params, err)) {
            *failed = k;
            return false;
        }
        res[k].ran = true;
    }
    return true;
}

/* Per arm over the rounds: medians of its ms per step, of its shadow's, of
 * its model's CPU time (the pair's less one FP32 model's), and of the
 * round's ratios to the fp32 arm and to its shadow (each ratio taken
 * within one round, where the machine's speed was the same for both);
 * lo / hi: the range of the ratio to fp32 over the rounds. */
typedef struct {
    double ms, shadow_ms, cpu, ratio, ratio_lo, ratio_hi, shadow_ratio, cpu_ratio;
} bench_summary;

static bench_summary bench_summarize(bench_result r[][BENCH_NARMS], size_t rounds, size_t k)
{
    double ms[BENCH_MAX_ROUNDS], sh[BENCH_MAX_ROUNDS], cpu[BENCH_MAX_ROUNDS], ra[BENCH_MAX_ROUNDS],
        rs[BENCH_MAX_ROUNDS], rc[BENCH_MAX_ROUNDS];
    bench_summary o;
    for (size_t i = 0; i < rounds; i++) {
        double f = r[i][0].ms, fcpu = r[i][0].cpu / 2.0; /* the fp32 arm: both models are FP32 */
        ms[i] = r[i][k].ms;
        sh[i] = r[i][k].shadow_ms;
        cpu[i] = r[i][k].cpu - fcpu;
        ra[i] = f > 0 ? ms[i] / f : 0.0;
        rs[i] = sh[i] > 0 ? ms[i] / sh[i] : 0.0;
        rc[i] = fcpu > 0 ? cpu[i] / fcpu : 0.0;
    }
    o.ms = cli_median(ms, rounds, NULL, NULL);
    o.shadow_ms = cli_median(sh, rounds, NULL, NULL);
    o.cpu = cli_median(cpu, rounds, NULL, NULL);
    o.ratio = cli_median(ra, rounds, &o.ratio_lo, &o.ratio_hi);
    o.shadow_ratio = cli_median(rs, rounds, NULL, NULL);
    o.cpu_ratio = cli_median(rc, rounds, NULL, NULL);
    return o;
}

static int cmd_bench(int argc, char **argv)
{
    bool as_json = false;
    size_t steps = 8, nt = 2, rounds = 3;
    int threads[8] = {1, 2};
    const char *arm_list = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            as_json = true;
        } else if (!strcmp(a, "--steps") && v) {
            if (!cli_parse_size(v, &steps) || !steps) return cli_fail("study", "--steps: expected a positive integer, got '%s'", v);
            i++;
        } else if (!strcmp(a, "--rounds") && v) {
            if (!cli_parse_size(v, &rounds) || !rounds || rounds > BENCH_MAX_ROUNDS)
                return cli_fail("study", "--rounds: expected an integer in 1..%d, got '%s'", BENCH_MAX_ROUNDS, v);
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            if (!parse_threads(v, threads, &nt)) return cli_fail("study", "--threads: expected a list such as 1,2, got '%s'", v);
            i++;
        } else if (!strcmp(a, "--arms") && v) {
            if (!bench_arms_valid(v)) return cli_fail("study", "--arms: expected a list of fp32, bf16, fp8, mxfp8, nvfp4, nvfp4-bf16, got '%s'", v);
            arm_list = v;
            i++;
        } else {
            return cli_fail("study", "bench: unknown option or missing value '%s'", a);
        }
    }
    json_t *rows = json_array();
    size_t params = 0;
    nvfp4_train_cfg c;
    nvfp4_train_cfg_gpt(&c);
    static bench_result res[BENCH_MAX_ROUNDS][BENCH_NARMS];
    for (size_t ti = 0; ti < nt; ti++) {
        nvfp4_study_set_threads(threads[ti]);
        /* the bound before and after the arms, the faster of the two: a
         * bound taken while the shared machine was slow would make every
         * fraction too large (above 1) */
        double gflop = 0.0, sgemm_cpu = 0.0, sgemm_cpu2 = 0.0;
        double sgemm_ms = sgemm_step_ms(&c, threads[ti], 5, &gflop, &sgemm_cpu);
        for (size_t r = 0; r < rounds; r++) {
            nvfp4_error err = {NVFP4_OK, ""};
            size_t failed = 0;
            if (!bench_round(arm_list, steps, res[r], &params, &err, &failed)) {
                json_decref(rows);
                return cli_fail("study", "bench %s: %s", bench_arms[failed].name, err.message);
            }
        }
        double after = sgemm_step_ms(&c, threads[ti], 5, &gflop, &sgemm_cpu2);
        if (after > 0 && (sgemm_ms < 0 || after < sgemm_ms)) sgemm_ms = after;
        if (sgemm_cpu2 > 0 && sgemm_cpu2 < sgemm_cpu) sgemm_cpu = sgemm_cpu2;
        for (size_t k = 0; k < BENCH_NARMS; k++) {
            if (!res[0][k].ran) continue;
            bench_summary b = bench_summarize(res, rounds, k);
            /* the step's fraction of the SGEMM rate: the SGEMM time of its
             * linear GEMMs over the step's time */
            double frac = b.ms > 0 && sgemm_ms > 0 ? sgemm_ms / b.ms : 0.0;
            double cpu_frac = b.cpu > 0 && sgemm_cpu > 0 ? sgemm_cpu / b.cpu : 0.0;
            json_t *row = json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "arm", bench_arms[k].name, "threads",
                                    threads[ti], "ms_per_step", b.ms, "ratio_to_fp32", b.ratio, "shadow_ms_per_step",
                                    b.shadow_ms, "ratio_to_shadow", b.shadow_ratio, "cpu_ms_per_step", b.cpu,
                                    "cpu_ratio_to_fp32", b.cpu_ratio);
            json_object_set_new(row, "ratio_to_fp32_range", json_pack("[f,f]", b.ratio_lo, b.ratio_hi));
            json_object_set_new(row, "bf16_training", json_boolean(bench_arms[k].bf16_training));
            json_object_set_new(row, "sgemm_ms_per_step", json_real(sgemm_ms));
            json_object_set_new(row, "sgemm_gflops", json_real(sgemm_ms > 0 ? gflop / (sgemm_ms * 1e-3) : 0.0));
            json_object_set_new(row, "fraction_of_sgemm", json_real(frac));
            json_object_set_new(row, "sgemm_cpu_ms_per_step", json_real(sgemm_cpu));
            json_object_set_new(row, "cpu_fraction_of_sgemm", json_real(cpu_frac));
            json_array_append_new(rows, row);
            if (!as_json)
                printf("threads %d  %-10s %8.2f ms/step  %5.2fx fp32 [%.2f, %.2f]  (its fp32 shadow %.2f ms, %.2fx)  "
                       "CPU %.2f ms, %.2fx  SGEMM fraction %.2f (CPU %.2f)\n",
                       threads[ti], bench_arms[k].name, b.ms, b.ratio, b.ratio_lo, b.ratio_hi, b.shadow_ms,
                       b.shadow_ratio, b.cpu, b.cpu_ratio, frac, cpu_frac);
        }
        if (!as_json)
            printf("threads %d  SGEMM of the step's linear GEMMs: %.2f ms (CPU %.2f ms; %.2f GFLOP, %.1f GFLOP/s, "
                   "best of 5 before and 5 after the arms, measured now%s)\n",
                   threads[ti], sgemm_ms, sgemm_cpu, gflop, sgemm_ms > 0 ? gflop / (sgemm_ms * 1e-3) : 0.0,
                   threads[ti] >= 2 ? "; two one-thread copies side by side, as the model and its shadow run" : "");
    }
    if (as_json) {
        json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "model", "gpt (nvfp4_train_cfg_gpt)",
                              "params", (json_int_t)params, "d_model", (json_int_t)c.model.d_model, "n_blocks",
                              (json_int_t)c.model.n_blocks, "seq_len", (json_int_t)c.model.seq_len, "batch",
                              (json_int_t)c.batch, "vocab", (json_int_t)c.model.vocab, "steps", (json_int_t)steps,
                              "rounds", (json_int_t)rounds, "arms", rows);
        char *txt = json_dumps(o, JSON_INDENT(2));
        if (txt) puts(txt);
        free(txt);
        json_decref(o);
    } else {
        printf("default GPT: %zu parameters, d_model %zu, %zu blocks, %zu tokens x %zu sequences per step; %zu timed "
               "steps; %zu rounds of the arms one after the other (medians; [ ]: the range of the ratio)\n",
               params, c.model.d_model, c.model.n_blocks, c.model.seq_len, c.batch, steps, rounds);
        json_decref(rows);
    }
    return NVFP4_EXIT_OK;
}

static int run(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv)) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? NVFP4_EXIT_USAGE : NVFP4_EXIT_OK;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "list")) return cmd_list();
    if (!strcmp(sub, "run")) return cmd_run(argc, argv);
    if (!strcmp(sub, "bench")) return cmd_bench(argc, argv);
    if (!strcmp(sub, "show")) {
        if (argc != 3) return cli_fail("study", "show: expected one study name");
        const nvfp4_study *s = find_study(argv[2]);
        if (!s) return NVFP4_EXIT_USAGE;
        const char *t = nvfp4_study_config_text(s);
        if (!t) return cli_fail("study", "show: %s is written in C alone (no config)", nvfp4_study_name(s));
        fputs(t, stdout);
        return NVFP4_EXIT_OK;
    }
    nvfp4_error err = {NVFP4_OK, ""};
    if (!strcmp(sub, "plot")) {
        if (argc != 3) return cli_fail("study", "plot: expected one folder");
        bool skipped = false;
        if (nvfp4_study_plot(argv[2], &skipped, &err) != NVFP4_OK) return cli_fail("study", "%s", err.message);
        if (skipped) fprintf(stderr, "nvfp4 study: plots skipped: gnuplot not found (apt-get install gnuplot-nox)\n");
        else printf("plots redrawn in %s\n", argv[2]);
        return NVFP4_EXIT_OK;
    }
    if (!strcmp(sub, "merge")) {
        const char *out = NULL;
        const char **dirs = calloc((size_t)argc, sizeof *dirs);
        size_t n = 0;
        if (!dirs) return cli_fail("study", "out of memory");
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
            else dirs[n++] = argv[i];
        }
        int rc = NVFP4_EXIT_OK;
        if (!out || !n) rc = cli_fail("study", "merge: expected --out DIR and at least one shard folder");
        else if (nvfp4_study_merge(dirs, n, out, &err) != NVFP4_OK) rc = cli_fail("study", "%s", err.message);
        else printf("merged %zu folders into %s\n", n, out);
        free(dirs);
        return rc;
    }
    static const char *const subs[] = {"list", "run", "show", "bench", "plot", "merge"};
    cli_fail("study", "unknown subcommand '%s' (list, run, show, bench, plot, merge)", sub);
    const char *c = cli_closest(sub, subs, 6);
    if (c) fprintf(stderr, "nvfp4: did you mean 'nvfp4 study %s'?\n", c);
    return NVFP4_EXIT_USAGE;
}

const nvfp4_cli_command nvfp4_cmd_study = {"study", "error-accumulation studies: list, run, bench, plot, merge", run};
