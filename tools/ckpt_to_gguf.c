/* ckpt_to_gguf.c - `nvfp4 ckpt convert PATH --to gguf -o OUT.gguf`. A GGUF
 * that llama.cpp can run holds the tokenizer, the model's hyperparameters
 * and tensors renamed, merged and permuted the way its loader expects: all
 * of that is llama.cpp's own convert_hf_to_gguf.py, which reads both
 * safetensors conventions, and nothing of it is ours to re-derive. So this
 * runs that converter into a temporary file beside OUT, then proves what it
 * wrote: `ckpt diff` of PATH against it (every layer present, every code and
 * block scale byte carried, q/k rows back from the RoPE order, each decoded
 * weight's change) and `ckpt check` of it; only then is the file renamed
 * onto OUT (docs/checkpoints.md, "convert --to gguf"). */
#include "ckpt_to_gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_io.h"
#include "nvfp4/io.h"

extern char **environ;

/* The converter: --converter FILE, else $NVFP4_GGUF_CONVERTER; NULL with a
 * message when neither names a regular file. */
static const char *find_converter(const char *cmd, const char *opt)
{
    const char *p = opt ? opt : getenv("NVFP4_GGUF_CONVERTER");
    struct stat st;
    if (!p || !*p) {
        cli_fail(cmd, "--to gguf runs llama.cpp's convert_hf_to_gguf.py (it writes the tokenizer and the "
                      "model's hyperparameters, which nvfp4 does not): name it with --converter FILE or "
                      "NVFP4_GGUF_CONVERTER (it is in a llama.cpp source tree, with gguf-py/ beside it)");
        return NULL;
    }
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_fail(cmd, "%s: %s (the converter: llama.cpp's convert_hf_to_gguf.py)",
                 p, stat(p, &st) != 0 ? strerror(errno) : "not a regular file");
        return NULL;
    }
    return p;
}

/* PYTHONPATH for the converter: its tree's gguf-py first (the converter
 * needs the gguf package of its own version), then the caller's. */
static char *python_path(const char *converter)
{
    const char *slash = strrchr(converter, '/'), *old = getenv("PYTHONPATH");
    int dlen = slash ? (int)(slash - converter) : 1;
    const char *dir = slash ? converter : ".";
    size_t n = (size_t)dlen + strlen("PYTHONPATH=/gguf-py:") + (old ? strlen(old) : 0) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "PYTHONPATH=%.*s/gguf-py%s%s", dlen, dir, old && *old ? ":" : "", old && *old ? old : "");
    return s;
}

/* The environment with PYTHONPATH replaced (NULL when out of memory). */
static char **child_env(char *pythonpath)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = malloc((n + 2) * sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PYTHONPATH=", 11) != 0) env[k++] = environ[i];
    env[k++] = pythonpath;
    env[k] = NULL;
    return env;
}

/* Runs python3 CONVERTER IN --outfile TMP, its output into the open file
 * log (an unlinked temporary: nothing to clean up); the converter's exit
 * status, or -1 when it could not be started (errno). */
static int run_converter(const char *converter, const char *in, const char *tmp, FILE *log)
{
    char *pp = python_path(converter), **env = pp ? child_env(pp) : NULL;
    posix_spawn_file_actions_t fa;
    int rc = -1;
    if (env && posix_spawn_file_actions_init(&fa) == 0) {
        posix_spawn_file_actions_adddup2(&fa, fileno(log), 1);
        posix_spawn_file_actions_adddup2(&fa, fileno(log), 2);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        char *argv[] = {"python3", (char *)converter, (char *)in, "--outfile", (char *)tmp, NULL};
        pid_t pid;
        int status;
        if (posix_spawnp(&pid, "python3", &fa, NULL, argv, env) == 0) {
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    free(env);
    free(pp);
    return rc;
}

/* The last lines of the converter's log on stderr. */
static void show_log_tail(FILE *f)
{
    char buf[2048];
    long end = (fseek(f, 0, SEEK_END) == 0) ? ftell(f) : 0;
    long from = end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0;
    size_t n = fseek(f, from, SEEK_SET) == 0 ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    fprintf(stderr, "--- the converter's last output ---\n%s%s", buf, n && buf[n - 1] != '\n' ? "\n" : "");
}

/* What the converter wrote, against the source: every layer of the source
 * in the GGUF with every code and scale byte equal. The largest change of a
 * decoded weight (the fp32 reciprocal of a compressed-tensors global scale)
 * into *change / layer. NVFP4_EXIT_OK when carried, NVFP4_EXIT_MISMATCH
 * (with a message) when not. */
static int proven_carried(const char *cmd, const nvfp4_ckpt_diff *d, double *change, const char **layer,
                          size_t *changed)
{
    *change = 0;
    *layer = NULL;
    *changed = 0;
    for (size_t i = 0; i < d->nlayers; i++) {
        const nvfp4_ckpt_diff_layer *l = &d->layers[i];
        if (!l->in_a) continue; /* a GGUF tensor no source layer maps to: reported by nothing here */
        if (!l->in_b || !l->compared || l->code_equal != 1 || l->scale_equal != 1) {
            cli_fail(cmd, "the converter's output does not carry %s: %s (codes %.4f, scales %.4f equal); "
                          "OUT not written", l->name, nvfp4_ckpt_diff_verdict(l), l->code_equal, l->scale_equal);
            return NVFP4_EXIT_MISMATCH;
        }
        if (l->elements_differ) (*changed)++;
        if (l->max_abs_diff > *change) {
            *change = l->max_abs_diff;
            *layer = l->name;
        }
    }
    return 0;
}

static void free_scan(nvfp4_ckpt *c, nvfp4_ckpt_report *r)
{
    nvfp4_ckpt_report_free(r);
    nvfp4_ckpt_close(c);
}

/* Diff and check of the temporary GGUF: NVFP4_EXIT_OK when both pass,
 * NVFP4_EXIT_MISMATCH when a byte is not carried or the check finds an
 * error, NVFP4_EXIT_USAGE when it cannot be read. */
static int verify(const char *cmd, nvfp4_ckpt *src, const nvfp4_ckpt_report *rsrc, const char *tmp, const char *out)
{
    nvfp4_error err;
    nvfp4_ckpt *g;
    nvfp4_ckpt_report rg;
    if (nvfp4_ckpt_open(tmp, &g, &err)) return cli_fail_err(cmd, &err);
    if (nvfp4_ckpt_scan(g, NULL, NULL, &rg, &err)) {
        nvfp4_ckpt_close(g);
        return cli_fail_err(cmd, &err);
    }
    nvfp4_ckpt_diff d;
    int rc;
    if (nvfp4_ckpt_diff_run(src, rsrc, g, &rg, &d, &err)) rc = cli_fail_err(cmd, &err);
    else {
        double change;
        const char *layer;
        size_t changed;
        rc = proven_carried(cmd, &d, &change, &layer, &changed);
        if (!rc) {
            printf("%s -> gguf (llama.cpp's convert_hf_to_gguf.py): %zu layers in %zu GGUF tensors; ckpt diff: every "
                   "code and block scale byte carried, q/k rows in llama.cpp's RoPE order\n",
                   nvfp4_ckpt_convention_name(rsrc->convention), rsrc->nlayers, rg.nlayers);
            if (changed)
                printf("%zu layers decode differently (the converter's fp32 reciprocal of the global scale): "
                       "largest change of a decoded weight %.6g (%s)\n", changed, change, layer);
            size_t errs = nvfp4_ckpt_report_errors(&rg, false);
            printf("check of %s: %zu error%s, %zu hazard%s\n", out, errs, errs == 1 ? "" : "s",
                   rg.nfindings - errs, rg.nfindings - errs == 1 ? "" : "s");
            for (size_t i = 0; i < rg.nfindings; i++)
                printf("%s %s %s: %s\n", nvfp4_ckpt_severity_name(rg.findings[i].severity), rg.findings[i].category,
                       rg.findings[i].tensor, rg.findings[i].message);
            if (errs) {
                cli_fail(cmd, "the converter's output has errors (above); OUT not written");
                rc = NVFP4_EXIT_MISMATCH;
            }
        }
        nvfp4_ckpt_diff_free(&d);
    }
    free_scan(g, &rg);
    return rc;
}

int ckpt_convert_to_gguf(const char *cmd, nvfp4_ckpt *src, const nvfp4_ckpt_report *rsrc, const char *in,
                         const char *out, const char *converter_opt)
{
    const char *converter = find_converter(cmd, converter_opt);
    if (!converter) return NVFP4_EXIT_USAGE;
    nvfp4_error err;
    nvfp4_file_txn t;
    if (nvfp4_file_txn_begin(&t, out, &err)) return cli_fail_err(cmd, &err);
    FILE *log = tmpfile();
    if (!log) {
        nvfp4_file_txn_abort(&t);
        return cli_fail(cmd, "cannot create a temporary file for the converter's output: %s", strerror(errno));
    }
    int status = run_converter(converter, in, t.tmp, log), rc;
    if (status != 0) {
        if (status < 0) rc = cli_fail(cmd, "cannot run python3 %s: %s", converter, strerror(errno));
        else {
            show_log_tail(log);
            rc = cli_fail(cmd, "%s exited with status %d on %s (its output above); OUT not written", converter,
                          status, in);
        }
    } else rc = verify(cmd, src, rsrc, t.tmp, out);
    fclose(log);
    if (rc) {
        nvfp4_file_txn_abort(&t);
        return rc;
    }
    if (nvfp4_file_txn_commit(&t, &err)) return cli_fail_err(cmd, &err);
    printf("nvfp4 %s: wrote %s\n", cmd, out);
    return NVFP4_EXIT_OK;
}
