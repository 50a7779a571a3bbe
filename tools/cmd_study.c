/* cmd_study.c - `nvfp4 study list | run NAME | plot DIR | merge OUT DIR...`:
 * the error-accumulation laboratory (docs/studies.md). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_suggest.h"
#include "nvfp4/study.h"

static void usage(FILE *f)
{
    fputs("usage: nvfp4 study list\n"
          "       nvfp4 study run NAME [--seeds N] [--steps N] [--out DIR] [--shard i/n] [--threads T (default 2)] [--quiet]\n"
          "       nvfp4 study plot DIR\n"
          "       nvfp4 study merge --out DIR SHARD_DIR...\n"
          "Runs a built-in study (see `nvfp4 study list`), writing runs.csv, layers.csv, summary.json and PNG\n"
          "plots (when gnuplot is installed) into DIR (default: study-out/NAME). --steps sets the training\n"
          "steps (S0: the repetition count); --shard i/n runs every n-th job starting at i (0-based), for\n"
          "job arrays; `merge` combines shard folders and recomputes the summary. docs/studies.md.\n",
          f);
}

static int cmd_list(void)
{
    for (size_t i = 0; i < nvfp4_study_count(); i++) {
        const nvfp4_study *s = nvfp4_study_at(i);
        printf("%-10s %s\n", nvfp4_study_name(s), nvfp4_study_claim(s));
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

/* "summary.json, runs.csv, 3 PNG plots": what the run left in dir. */
static void list_outputs(const char *dir, char *buf, size_t n)
{
    static const char *const files[] = {"summary.json", "runs.csv", "layers.csv"};
    size_t used = 0, png = 0;
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return;
    bool have[3] = {false, false, false};
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".png") == 0) png++;
        for (size_t i = 0; i < 3; i++) have[i] |= strcmp(e->d_name, files[i]) == 0;
    }
    closedir(d);
    for (size_t i = 0; i < 3 && used < n; i++)
        if (have[i]) used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", files[i]);
    if (png && used < n) snprintf(buf + used, n - used, "%s%zu PNG plot%s", used ? ", " : "", png, png == 1 ? "" : "s");
}

static int cmd_run(int argc, char **argv)
{
    if (argc < 3) return cli_fail("study", "run: which study? (nvfp4 study list)");
    const nvfp4_study *s = find_study(argv[2]);
    if (!s) return NVFP4_EXIT_USAGE;
    nvfp4_study_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 2; /* concurrent (arm, seed) jobs; results never depend on it */
    char def[256];
    snprintf(def, sizeof def, "study-out/%s", nvfp4_study_name(s));
    o.out_dir = def;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t n;
        if (!strcmp(a, "--quiet")) {
            o.quiet = true;
            continue;
        }
        if (!v) return cli_fail("study", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--seeds")) {
            if (!cli_parse_size(v, &o.seeds) || !o.seeds || o.seeds > 256)
                return cli_fail("study", "--seeds: expected 1..256, got '%s'", v);
        } else if (!strcmp(a, "--steps")) {
            if (!cli_parse_size(v, &o.steps) || !o.steps) return cli_fail("study", "--steps: expected a positive integer, got '%s'", v);
        } else if (!strcmp(a, "--out")) {
            o.out_dir = v;
        } else if (!strcmp(a, "--shard")) {
            if (!parse_shard(v, &o.shard_i, &o.shard_n)) return cli_fail("study", "--shard: expected i/n with 0 <= i < n, got '%s'", v);
        } else if (!strcmp(a, "--threads")) {
            if (!cli_parse_size(v, &n) || !n || n > 256) return cli_fail("study", "--threads: expected 1..256, got '%s'", v);
            o.threads = (int)n;
        } else {
            return cli_fail("study", "unknown option '%s'", a);
        }
    }
    nvfp4_error err = {NVFP4_OK, ""};
    nvfp4_status st = nvfp4_study_run(s, &o, stderr, &err);
    if (st != NVFP4_OK) return cli_fail("study", "%s", err.message);
    char wrote[160];
    list_outputs(o.out_dir, wrote, sizeof wrote);
    printf("%s: results in %s (%s%s)\n", nvfp4_study_name(s), o.out_dir, wrote,
           system("command -v gnuplot >/dev/null 2>&1") == 0 ? "" : "; plots skipped: gnuplot not found");
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
    static const char *const subs[] = {"list", "run", "plot", "merge"};
    cli_fail("study", "unknown subcommand '%s' (list, run, plot, merge)", sub);
    const char *c = cli_closest(sub, subs, 4);
    if (c) fprintf(stderr, "nvfp4: did you mean 'nvfp4 study %s'?\n", c);
    return NVFP4_EXIT_USAGE;
}

const nvfp4_cli_command nvfp4_cmd_study = {"study", "error-accumulation studies: list, run, plot, merge", run};
