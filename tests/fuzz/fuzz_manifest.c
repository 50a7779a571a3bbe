/* fuzz_manifest.c - libFuzzer target for the golden suite's MANIFEST reader
 * (nvfp4_manifest_parse): any bytes either parse into entries that keep the
 * promises of nvfp4/io.h (relative UTF-8 paths of one or two components, no
 * '.' or '..', each listed once, lowercase sums, lines in order) or fail
 * with a message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entry(const nvfp4_manifest_entry *e, size_t prev_line)
{
    size_t n = strlen(e->path);
    if (n == 0 || e->path[0] == '/' || e->path[n - 1] == '/' || strstr(e->path, "//")) abort();
    const char *slash = strchr(e->path, '/');
    if (slash && strchr(slash + 1, '/')) abort();
    for (const char *c = e->path; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) { /* each component */
        size_t k = strcspn(c, "/");
        if ((k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.')) abort();
    }
    for (size_t i = 0, k; i < n; i += k)
        if ((k = nvfp4_utf8_prefix(e->path + i, n - i)) == 0) abort();
    for (int i = 0; i < 64; i++)
        if (!strchr("0123456789abcdef", e->sha256[i])) abort();
    if (e->sha256[64] != '\0' || e->line <= prev_line) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nvfp4_manifest m;
    nvfp4_error err;
    err.message[0] = '\0';
    if (nvfp4_manifest_parse((const char *)data, size, "MANIFEST", &m, &err) != NVFP4_OK) {
        if (strncmp(err.message, "MANIFEST", 8) != 0) abort();
        if (m.entries || m.n) abort();
        return 0;
    }
    if (m.n == 0) abort();
    for (size_t i = 0; i < m.n; i++) {
        check_entry(&m.entries[i], i ? m.entries[i - 1].line : 0);
        for (size_t j = i + 1; j < m.n && j < i + 64; j++) /* neighbours: duplicates were refused */
            if (strcmp(m.entries[i].path, m.entries[j].path) == 0) abort();
    }
    nvfp4_manifest_free(&m);
    return 0;
}
