/* cli_plot.c - PNG pictures through gnuplot for `--plot FILE` (cli_plot.h). */
#include "cli_plot.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "nvfp4/io.h"

static bool have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* pngcairo draws antialiased text and lines; the libgd png terminal is the
 * fallback of a gnuplot built without cairo. */
static const char *png_terminal(void)
{
    static const char *term;
    if (!term)
        term = system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0 ? "pngcairo enhanced font 'Sans,10'"
                                                                                  : "png enhanced font 'Sans,10'";
    return term;
}

void cli_plot_abort(cli_plot *p)
{
    if (p->script) fclose(p->script);
    p->script = NULL;
    /* a zeroed transaction has no temporary and no registration of its own */
    if (p->png.tmp) nvfp4_file_txn_abort(&p->png);
    if (p->dir.tmp) nvfp4_dir_txn_abort(&p->dir);
}

/* gnuplot single-quoted string: a ' is written twice. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

int cli_plot_begin(const char *cmd, const char *file, int width, int height, cli_plot *p)
{
    memset(p, 0, sizeof *p);
    if (!have_gnuplot())
        return cli_fail(cmd, "--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)");
    if (strlen(file) >= sizeof p->target) return cli_fail(cmd, "--plot: the path is too long");
    snprintf(p->target, sizeof p->target, "%s", file);
    nvfp4_error err;
    /* the PNG is drawn beside its target, so that the final rename stays on
     * one file system and is atomic (the destination is checked here too) */
    if (nvfp4_file_txn_begin(&p->png, file, &err)) return cli_fail(cmd, "--plot: %s", err.message);
    const char *tmpdir = getenv("TMPDIR");
    char scratch[4096];
    snprintf(scratch, sizeof scratch, "%s/nvfp4-plot", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (nvfp4_dir_txn_begin(&p->dir, scratch, &err)) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: %s (the scratch folder goes in TMPDIR, else /tmp)", err.message);
    }
    (void)chmod(p->dir.tmp, 0700); /* the data is the user's: not readable by others in /tmp */
    p->script = cli_plot_data(p, "plot.gp");
    if (!p->script) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: cannot write the gnuplot script");
    }
    /* gnuplot runs in the temporary folder: the PNG's path made absolute */
    char cwd[4096] = "";
    if (p->png.tmp[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: cannot tell the current folder");
    }
    fprintf(p->script, "set terminal %s size %d,%d\nset output ", png_terminal(), width, height);
    size_t n = strlen(cwd) + strlen(p->png.tmp) + 2;
    char *png = malloc(n);
    if (!png) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: out of memory");
    }
    snprintf(png, n, "%s%s%s", cwd, *cwd ? "/" : "", p->png.tmp);
    put_quoted(p->script, png);
    free(png);
    fprintf(p->script, "\nset encoding utf8\n");
    return 0;
}

/* dir/name, malloc'd (NULL: out of memory). */
static char *in_dir(const cli_plot *p, const char *name)
{
    size_t n = strlen(p->dir.tmp) + strlen(name) + 2;
    char *path = malloc(n);
    if (path) snprintf(path, n, "%s/%s", p->dir.tmp, name);
    return path;
}

FILE *cli_plot_data(cli_plot *p, const char *name)
{
    char *path = in_dir(p, name);
    FILE *f = path ? fopen(path, "w") : NULL;
    free(path);
    return f;
}

/* Runs gnuplot on plot.gp in the temporary folder, its stderr into
 * gnuplot.err there; the folder's name goes to the shell single-quoted
 * (a ' in it written as '\''). Returns system()'s status, -1 on no memory. */
static int run_gnuplot(const cli_plot *p)
{
    const char *d = p->dir.tmp;
    size_t n = 64;
    for (const char *c = d; *c; c++) n += *c == '\'' ? 4 : 1;
    char *command = malloc(n), *o = command;
    if (!command) return -1;
    o += sprintf(o, "cd '");
    for (const char *c = d; *c; c++) o += *c == '\'' ? sprintf(o, "'\\''") : sprintf(o, "%c", *c);
    sprintf(o, "' && gnuplot plot.gp 2> gnuplot.err");
    int rc = system(command);
    free(command);
    return rc;
}

int cli_plot_finish(const char *cmd, cli_plot *p)
{
    fprintf(p->script, "unset output\n");
    bool ok = fflush(p->script) == 0 && !ferror(p->script);
    fclose(p->script);
    p->script = NULL;
    if (!ok) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: cannot write the gnuplot script");
    }
    int rc = run_gnuplot(p);
    struct stat st;
    if (rc != 0 || stat(p->png.tmp, &st) != 0 || st.st_size <= 0) {
        char err[512] = "";
        char *path = in_dir(p, "gnuplot.err");
        FILE *f = path ? fopen(path, "r") : NULL;
        free(path);
        if (f) {
            size_t n = fread(err, 1, sizeof err - 1, f);
            err[n] = '\0';
            fclose(f);
        }
        cli_plot_abort(p);
        return cli_fail(cmd, "%s: gnuplot failed%s%s", p->target, *err ? ": " : "", err);
    }
    /* the destination is checked again: it may have changed while gnuplot ran */
    nvfp4_error err;
    nvfp4_status s = nvfp4_file_txn_commit(&p->png, &err); /* removes the temporary on failure */
    cli_plot_abort(p);
    if (s) return cli_fail(cmd, "--plot: %s", err.message);
    cli_say_wrote(cmd, p->target);
    return 0;
}
