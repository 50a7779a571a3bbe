/* fuzz_labdir.c - libFuzzer target for the files a study output folder
 * holds, through `study plot` and `study merge` (nvfp4_study_plot,
 * nvfp4_study_merge): the input is split at its first two NUL bytes into
 * summary.json, runs.csv and layers.csv of one folder; the target plots it
 * again (without gnuplot: PATH is emptied) and merges it alone. Bad files
 * fail with a message naming the folder or the file; never a crash, a leak
 * or a hang. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], out[80];

static void put(const char *name, const uint8_t *p, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(p, 1, n, f);
    fclose(f);
}

/* removes folder d and the plain files in it (all that plot and merge write) */
static void clear(const char *d)
{
    DIR *h = opendir(d);
    char path[512];
    for (struct dirent *e; h && (e = readdir(h)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", d, e->d_name);
        unlink(path);
    }
    if (h) closedir(h);
    rmdir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        setenv("PATH", "/nonexistent", 1); /* no gnuplot: the plot step writes only .dat files */
        snprintf(dir, sizeof dir, "/tmp/fuzz_labdir.%ld", (long)getpid());
        snprintf(out, sizeof out, "%s.merged", dir);
    }
    mkdir(dir, 0700);
    const uint8_t *parts[3] = {data, NULL, NULL};
    size_t lens[3] = {size, 0, 0};
    for (int k = 1; k < 3; k++) {
        const uint8_t *z = memchr(parts[k - 1], 0, lens[k - 1]);
        if (!z) break;
        parts[k] = z + 1;
        lens[k] = lens[k - 1] - (size_t)(z + 1 - parts[k - 1]);
        lens[k - 1] = (size_t)(z - parts[k - 1]);
    }
    static const char *const names[3] = {"summary.json", "runs.csv", "layers.csv"};
    for (int k = 0; k < 3; k++)
        if (parts[k]) put(names[k], parts[k], lens[k]);
    nvfp4_error err;
    bool skipped;
    err.message[0] = '\0';
    if (nvfp4_study_plot(dir, &skipped, &err) != NVFP4_OK && !err.message[0]) abort();
    const char *dirs[1] = {dir};
    err.message[0] = '\0';
    if (nvfp4_study_merge(dirs, 1, out, &err) != NVFP4_OK && !err.message[0]) abort();
    clear(dir);
    clear(out);
    return 0;
}
