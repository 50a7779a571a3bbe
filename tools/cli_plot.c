/* cli_plot.c - PNG pictures through gnuplot for `--plot FILE` (cli_plot.h). */
#include "cli_plot.h"

#include <dirent.h>
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

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        char path[512];
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

void cli_plot_abort(cli_plot *p)
{
    if (p->script) fclose(p->script);
    p->script = NULL;
    if (p->png_tmp[0]) unlink(p->png_tmp);
    if (p->dir[0]) remove_dir(p->dir);
    p->png_tmp[0] = p->dir[0] = '\0';
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
    if (nvfp4_file_check_destination(file, &err)) return cli_fail(cmd, "--plot: %s", err.message);
    /* the PNG is drawn beside its target, so that the final rename stays on
     * one file system and is atomic */
    snprintf(p->png_tmp, sizeof p->png_tmp, "%s.tmpXXXXXX", file);
    int fd = mkstemp(p->png_tmp);
    if (fd < 0) {
        p->png_tmp[0] = '\0';
        return cli_fail(cmd, "%s: cannot create a file there", file);
    }
    close(fd);
    char abs[4096];
    if (p->png_tmp[0] != '/' && getcwd(abs, sizeof abs)) {
        char rel[4200];
        snprintf(rel, sizeof rel, "%s", p->png_tmp);
        snprintf(p->png_tmp, sizeof p->png_tmp, "%.2000s/%.2000s", abs, rel);
    }
    const char *tmpdir = getenv("TMPDIR");
    snprintf(p->dir, sizeof p->dir, "%s/nvfp4-plot-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(p->dir)) {
        p->dir[0] = '\0';
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: cannot create a temporary folder");
    }
    p->script = cli_plot_data(p, "plot.gp");
    if (!p->script) {
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: cannot write the gnuplot script");
    }
    fprintf(p->script, "set terminal %s size %d,%d\nset output ", png_terminal(), width, height);
    put_quoted(p->script, p->png_tmp);
    fprintf(p->script, "\nset encoding utf8\n");
    return 0;
}

FILE *cli_plot_data(cli_plot *p, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", p->dir, name);
    return fopen(path, "w");
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
    char command[600];
    snprintf(command, sizeof command, "cd '%s' && gnuplot plot.gp 2> gnuplot.err", p->dir);
    int rc = system(command);
    FILE *f;
    long size = 0;
    if (rc == 0 && (f = fopen(p->png_tmp, "rb")) != NULL) {
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fclose(f);
    }
    if (rc != 0 || size <= 0) {
        char err[512] = "";
        char path[512];
        snprintf(path, sizeof path, "%s/gnuplot.err", p->dir);
        if ((f = fopen(path, "r")) != NULL) {
            size_t n = fread(err, 1, sizeof err - 1, f);
            err[n] = '\0';
            fclose(f);
        }
        cli_plot_abort(p);
        return cli_fail(cmd, "%s: gnuplot failed%s%s", p->target, *err ? ": " : "", err);
    }
    /* mkstemp made it 0600: give the picture the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    chmod(p->png_tmp, 0666 & ~mask);
    nvfp4_error err;
    if (nvfp4_file_check_destination(p->target, &err)) { /* again: it may have changed while gnuplot ran */
        cli_plot_abort(p);
        return cli_fail(cmd, "--plot: %s", err.message);
    }
    if (rename(p->png_tmp, p->target) != 0) {
        cli_plot_abort(p);
        return cli_fail(cmd, "%s: cannot rename the picture into place", p->target);
    }
    p->png_tmp[0] = '\0';
    cli_plot_abort(p);
    cli_say_wrote(cmd, p->target);
    return 0;
}
