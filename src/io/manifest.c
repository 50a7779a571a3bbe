/* manifest.c - the MANIFEST of a golden suite (docs/file-formats.md, section
 * 6): `sha256sum` lines under a `#` header, read by `nvfp4 verify --suite`
 * and by `nvfp4 golden` (which replaces only a suite of its own). Everything
 * the format does not describe is refused with the file and line, never
 * skipped: a reader that skips a line verifies less than the suite holds. */
#include "io_internal.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char OUR_HEADER[] = "# nvfp4kit golden suite";

size_t nvfp4_utf8_prefix(const char *s, size_t n)
{
    static const uint32_t min_of[4] = {0, 0x80, 0x800, 0x10000};
    const unsigned char *p = (const unsigned char *)s;
    if (n == 0) return 0;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t k = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
    if (k == 0 || n <= k) return 0; /* a stray continuation byte, or cut short */
    uint32_t cp = c & (0x7Fu >> (k + 1));
    for (size_t i = 1; i <= k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if (cp < min_of[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0; /* overlong, too big, surrogate */
    return k + 1;
}

bool io_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if ((k = nvfp4_utf8_prefix(s + i, n - i)) == 0) return false;
    return true;
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* What is wrong with a path of an entry, or NULL: relative, one or two
 * components (CASE or CASE/FILE), none empty, "." or "..", UTF-8 without
 * control characters (the case name goes into JUnit XML and JSON). */
static const char *path_problem(const char *p, size_t n)
{
    if (p[0] == '/') return "an absolute path (entries are relative to the suite folder)";
    if (!io_utf8_valid(p, n)) return "a path that is not UTF-8";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7F) return "a control character in the path";
    size_t parts = 0;
    for (size_t i = 0; i <= n;) { /* p is not NUL-terminated: a line inside the file's bytes */
        const char *slash = memchr(p + i, '/', n - i);
        size_t k = slash ? (size_t)(slash - (p + i)) : n - i;
        if (k == 0) return "an empty path component ('//' or a '/' at an end)";
        if ((k == 1 && p[i] == '.') || (k == 2 && p[i] == '.' && p[i + 1] == '.')) return "a '.' or '..' component";
        parts++;
        i += k + 1;
    }
    if (parts > 2) return "a path more than two levels deep (CASE or CASE/FILE)";
    return NULL;
}

static nvfp4_status add_entry(nvfp4_manifest *m, size_t *cap, const char *hex, const char *path, size_t plen,
                              size_t line, const char *fname, nvfp4_error *err)
{
    if (m->n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        nvfp4_manifest_entry *e = realloc(m->entries, c * sizeof *e);
        if (!e) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
        m->entries = e;
        *cap = c;
    }
    nvfp4_manifest_entry *e = &m->entries[m->n];
    for (int i = 0; i < 64; i++) e->sha256[i] = (char)(hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] - 'A' + 'a' : hex[i]);
    e->sha256[64] = '\0';
    e->path = strndup(path, plen);
    e->line = line;
    if (!e->path) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    m->n++;
    return NVFP4_OK;
}

static nvfp4_status parse_line(nvfp4_manifest *m, size_t *cap, const char *s, size_t n, size_t line,
                               const char *fname, nvfp4_error *err)
{
    if (n > NVFP4_MANIFEST_MAX_LINE)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: line of %zu characters (at most %d)", fname, line, n,
                               NVFP4_MANIFEST_MAX_LINE);
    if (memchr(s, '\0', n)) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: a NUL byte", fname, line);
    if (line == 1) m->ours = n >= sizeof OUR_HEADER - 1 && memcmp(s, OUR_HEADER, sizeof OUR_HEADER - 1) == 0;
    if (n == 0) return NVFP4_OK;
    if (s[0] == '#') {
        if (n > 10 && memcmp(s, "# recipe: ", 10) == 0) {
            size_t k = n - 10 < sizeof m->recipe ? n - 10 : sizeof m->recipe - 1;
            memcpy(m->recipe, s + 10, k);
            m->recipe[k] = '\0';
        }
        return NVFP4_OK;
    }
    bool hex = n > 66;
    for (size_t i = 0; hex && i < 64; i++) hex = is_hex(s[i]);
    if (!hex || s[64] != ' ' || s[65] != ' ')
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: not a MANIFEST line (64 hex digits of sha256, two "
                               "spaces, a path relative to the suite): '%.*s'", fname, line, (int)(n < 60 ? n : 60), s);
    const char *why = path_problem(s + 66, n - 66);
    if (why) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: %s", fname, line, why);
    return add_entry(m, cap, s, s + 66, n - 66, line, fname, err);
}

/* Length of the first component of an entry's path (the case). */
static size_t case_len(const char *path) { return strcspn(path, "/"); }

static int cmp_by_path(const void *a, const void *b)
{
    const nvfp4_manifest_entry *x = *(nvfp4_manifest_entry *const *)a, *y = *(nvfp4_manifest_entry *const *)b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A path listed twice, or a case listed both as a file (CASE) and as a
 * folder (CASE/FILE): sorted, each shows next to its twin (a file CASE sorts
 * right before CASE/...), O(n log n) for any number of lines. */
static nvfp4_status check_unique(const nvfp4_manifest *m, const char *fname, nvfp4_error *err)
{
    if (m->n < 2) return NVFP4_OK;
    nvfp4_manifest_entry **v = malloc(m->n * sizeof *v);
    if (!v) return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", fname);
    for (size_t i = 0; i < m->n; i++) v[i] = &m->entries[i];
    qsort(v, m->n, sizeof *v, cmp_by_path);
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 1; i < m->n && !st; i++) {
        const nvfp4_manifest_entry *a = v[i - 1], *b = v[i];
        const nvfp4_manifest_entry *later = a->line > b->line ? a : b, *first = a->line > b->line ? b : a;
        size_t k = strlen(a->path);
        if (strcmp(a->path, b->path) == 0)
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: '%s' is listed twice (also on line %zu)", fname,
                                 later->line, b->path, first->line);
        else if (case_len(a->path) == k && strncmp(a->path, b->path, k) == 0 && b->path[k] == '/')
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s:%zu: '%s' is listed as a file and as a folder (line %zu)",
                                 fname, later->line, a->path, first->line);
    }
    free(v);
    return st;
}

nvfp4_status nvfp4_manifest_parse(const char *text, size_t len, const char *fname, nvfp4_manifest *m,
                                  nvfp4_error *err)
{
    memset(m, 0, sizeof *m);
    size_t cap = 0, line = 0;
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 0; i < len && !st;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        size_t k = n && text[i + n - 1] == '\r' ? n - 1 : n;
        st = parse_line(m, &cap, text + i, k, ++line, fname, err);
        i += n + 1;
    }
    if (!st) st = check_unique(m, fname, err);
    if (!st && m->n == 0) st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the MANIFEST lists no case", fname);
    if (st) nvfp4_manifest_free(m);
    return st;
}

nvfp4_status nvfp4_manifest_read(const char *path, nvfp4_manifest *m, nvfp4_error *err)
{
    memset(m, 0, sizeof *m);
    uint8_t *buf = NULL;
    size_t len = 0;
    /* a regular file only (a FIFO or /dev/zero is refused, not waited on), of bounded size */
    nvfp4_status st = nvfp4_file_read_all(path, NVFP4_MANIFEST_MAX_BYTES, &buf, &len, err);
    if (!st) st = nvfp4_manifest_parse((const char *)buf, len, path, m, err);
    free(buf);
    return st;
}

void nvfp4_manifest_free(nvfp4_manifest *m)
{
    for (size_t i = 0; i < m->n; i++) free(m->entries[i].path);
    free(m->entries);
    memset(m, 0, sizeof *m);
}
