/* suite_verify.c - suite verification (nvfp4/suite.h, nvfp4_suite_verify):
 * every case of a golden suite against what a kernel wrote for it, each
 * through the library's verify report, the causes tallied over the suite,
 * and the result rendered as text, JSON, TAP or JUnit XML for CI
 * (docs/verify.md, "Suite verify"). `nvfp4 verify --suite` prints these
 * renderings and the Python package returns them. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nvfp4/io.h"
#include "nvfp4/suite.h"
#include "verify/suite_internal.h"

typedef struct {
    char *name;     /* the case: "edge-e2m1-ties" */
    char *expected; /* its bundle */
    char *actual;   /* the kernel's file, or NULL when missing */
    int verdict;    /* 0 match, 1 differs, 2 error, -1 missing */
    char *summary;  /* one line */
    char *error;    /* why the case could not be read (verdict 2) */
    json_t *outputs;
    const nvfp4_manifest_entry **files; /* its MANIFEST entries: CASE, or CASE/FILE for each file of a folder */
    size_t nfiles, first_line; /* files sorted by path */
    bool folder;
} vcase;

typedef struct {
    char *dir, *mpath, recipe[64];
    nvfp4_manifest m;
    const nvfp4_manifest_entry **by_case; /* the entries grouped by case; the cases point into it */
    vcase *c;
    size_t n;
} vsuite;

static bool exists(const char *p, bool *is_dir)
{
    struct stat st;
    if (stat(p, &st) != 0) return false;
    if (is_dir) *is_dir = S_ISDIR(st.st_mode);
    return true;
}

static char *join(const char *a, const char *b, const char *ext)
{
    size_t n = strlen(a) + strlen(b) + strlen(ext) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s%s", a, b, ext);
    return p;
}

/* A JSON string of t (jansson refuses text that is not UTF-8, and a NULL
 * value would drop its key): each byte that does not start well-formed
 * UTF-8 becomes U+FFFD. */
static json_t *json_text(const char *t)
{
    size_t n = strlen(t), k;
    char *u = malloc(3 * n + 1), *o = u;
    if (!u) return json_string("");
    for (size_t i = 0; i < n; i += k ? k : 1) {
        k = nvfp4_utf8_prefix(t + i, n - i);
        if (k) memcpy(o, t + i, k), o += k;
        else memcpy(o, "\xEF\xBF\xBD", 3), o += 3;
    }
    *o = 0;
    json_t *j = json_string(u);
    free(u);
    return j;
}

/* The case of an entry: the first component of its path. */
static size_t case_len(const nvfp4_manifest_entry *e) { return strcspn(e->path, "/"); }

static int cmp_case_then_line(const void *a, const void *b)
{
    const nvfp4_manifest_entry *x = *(const nvfp4_manifest_entry *const *)a;
    const nvfp4_manifest_entry *y = *(const nvfp4_manifest_entry *const *)b;
    size_t kx = case_len(x), ky = case_len(y);
    int c = memcmp(x->path, y->path, kx < ky ? kx : ky);
    if (c == 0 && kx != ky) c = kx < ky ? -1 : 1;
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int cmp_first_line(const void *a, const void *b)
{
    const vcase *x = a, *y = b;
    return (x->first_line > y->first_line) - (x->first_line < y->first_line);
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp((*(const nvfp4_manifest_entry *const *)a)->path, (*(const nvfp4_manifest_entry *const *)b)->path);
}

/* A file of a folder case, by its name inside the folder (k: the case's length). */
static bool case_lists(const vcase *c, size_t k, const char *name)
{
    size_t lo = 0, hi = c->nfiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->files[mid]->path + k + 1, name);
        if (r == 0) return true;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

/* One case per first path component, in the order of their first lines:
 * sorted, not searched, so 200,000 lines group in O(n log n). */
static nvfp4_status group_cases(vsuite *s, nvfp4_error *err)
{
    size_t n = s->m.n;
    s->by_case = malloc(n * sizeof *s->by_case);
    s->c = calloc(n, sizeof *s->c);
    if (!s->by_case || !s->c) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) s->by_case[i] = &s->m.entries[i];
    qsort(s->by_case, n, sizeof *s->by_case, cmp_case_then_line);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1, k = case_len(s->by_case[i]);
        while (j < n && case_len(s->by_case[j]) == k && memcmp(s->by_case[j]->path, s->by_case[i]->path, k) == 0) j++;
        vcase *c = &s->c[s->n++];
        c->files = &s->by_case[i];
        c->nfiles = j - i;
        c->folder = s->by_case[i]->path[k] == '/';
        c->first_line = s->by_case[i]->line;
        qsort(c->files, c->nfiles, sizeof *c->files, cmp_path);
        char *comp = strndup(s->by_case[i]->path, k);
        if (!comp) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        c->expected = join(s->dir, comp, "");
        if (k > 12 && strcmp(comp + k - 12, ".safetensors") == 0) comp[k - 12] = 0;
        c->name = comp;
        if (!c->expected) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        i = j;
    }
    qsort(s->c, s->n, sizeof *s->c, cmp_first_line);
    return 0;
}

/* The suite's MANIFEST, read whole and checked line by line by the library
 * (nvfp4_manifest_read: a FIFO or /dev/zero is refused, not waited on; a
 * line the format does not describe is an error with its file and line). */
static nvfp4_status load_manifest(const char *arg, vsuite *s, nvfp4_error *err)
{
    bool dir = false;
    if (!exists(arg, &dir)) return nvfp4_error_set(err, NVFP4_EIO, "%s: no such suite folder or MANIFEST", arg);
    s->mpath = dir ? join(arg, "MANIFEST", "") : strdup(arg);
    if (!s->mpath) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (dir) s->dir = strdup(arg);
    else {
        const char *sl = strrchr(arg, '/');
        s->dir = sl ? strndup(arg, (size_t)(sl - arg)) : strdup(".");
    }
    if (!s->dir) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_status st = nvfp4_manifest_read(s->mpath, &s->m, err);
    if (st) return st;
    snprintf(s->recipe, sizeof s->recipe, "%s", s->m.recipe);
    return group_cases(s, err);
}

/* Before a golden is used: each file the MANIFEST lists for the case has the
 * sha256 it lists, and a folder case holds nothing else (a file the MANIFEST
 * does not describe would be read unchecked). Returns the problem, or NULL. */
static char *golden_problem(const vsuite *s, const vcase *c)
{
    char msg[1400];
    msg[0] = 0;
    for (size_t i = 0; i < c->nfiles && !msg[0]; i++) {
        const nvfp4_manifest_entry *e = c->files[i];
        char *p = join(s->dir, e->path, ""), hex[65];
        nvfp4_error err;
        if (!p) return strdup("out of memory");
        if (nvfp4_sha256_file(p, hex, &err))
            snprintf(msg, sizeof msg, "%s (listed on line %zu of %s)", err.message, e->line, s->mpath);
        else if (strcmp(hex, e->sha256) != 0)
            snprintf(msg, sizeof msg, "%s: golden altered after generation: its sha256 is %.16s..., line %zu of %s "
                     "says %.16s...", p, hex, e->line, s->mpath, e->sha256);
        free(p);
    }
    if (msg[0] || !c->folder) return msg[0] ? strdup(msg) : NULL;
    DIR *d = opendir(c->expected);
    if (!d) {
        snprintf(msg, sizeof msg, "%s: cannot list: %s", c->expected, strerror(errno));
        return strdup(msg);
    }
    size_t k = strlen(c->expected) - strlen(s->dir) - 1; /* the case's component */
    struct dirent *de;
    while (!msg[0] && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (!case_lists(c, k, de->d_name))
            snprintf(msg, sizeof msg, "%s/%s: not listed in %s (the MANIFEST does not describe it)", c->expected,
                     de->d_name, s->mpath);
    }
    closedir(d);
    return msg[0] ? strdup(msg) : NULL;
}

/* OUTS/<file of the case>, OUTS/CASE.safetensors, OUTS/CASE (a folder), OUTS/CASE.npy. */
static char *find_actual(const char *outs, const vcase *c, const char *dir)
{
    const char *comp = c->expected + strlen(dir) + 1;
    static const char *const ext[] = {".safetensors", "", ".npy"};
    char *p = join(outs, comp, "");
    if (p && exists(p, NULL)) return p;
    free(p);
    for (size_t i = 0; i < 3; i++) {
        p = join(outs, c->name, ext[i]);
        if (p && exists(p, NULL)) return p;
        free(p);
    }
    return NULL;
}

/* ---- causes over the suite ------------------------------------------------------- */

/* How specific a cause line is, 0 most: a catalogued formula that reproduces
 * the bytes; a whole-tensor relation checked on every byte (another recipe or
 * orientation exactly, a layout, a formula); a policy seen in (nearly) every
 * difference; a statistical SR finding; the nearest other recipe (a ranking,
 * not an explanation). */
static int cause_rank(const char *cause, const char *line)
{
    static const char *const exact[] = {"different-recipe", "transposed-data", "swapped-nibbles",
                                        "linear-for-swizzled", "swizzled-for-linear", "block-scale-formula",
                                        "encode-factor", "sr-byte-order", "scale-permuted", "scale-layout"};
    static const char *const policy[] = {"ties-away", "negative-zero", "nan-policy", "underflow-zeroed",
                                         "padding-bytes", "scale-off-by-one"};
    if (!cause) return 5;
    if (strcmp(cause, "known-bug") == 0) return 0;
    if (strcmp(cause, "different-recipe") == 0 && line && strstr(line, "nearest")) return 4;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(cause, exact[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof policy / sizeof policy[0]; i++)
        if (strcmp(cause, policy[i]) == 0) return 2;
    return 3;
}

/* A cause as the suite groups it: its name, plus what tells two stories of
 * that name apart: the mutant of a known-bug, the recipe of a different-recipe
 * line (its counts cut off). Lines that differ only in counts are one story. */
static void cause_key(const char *cause, const char *line, char *key, size_t n)
{
    size_t k = 0;
    if (line && strcmp(cause, "known-bug") == 0) k = strcspn(line, ":");
    else if (line && strcmp(cause, "different-recipe") == 0) {
        /* the recipe named, without how many other candidates also match
         * on this case ("matches X and 2 other candidates exactly (...)") */
        k = strcspn(line, "(");
        const char *and_others = strstr(line, " and ");
        if (and_others && (size_t)(and_others - line) < k) k = (size_t)(and_others - line);
    }
    while (k > 0 && line[k - 1] == ' ') k--;
    snprintf(key, n, "%s%s%.*s", cause, k ? ": " : "", (int)k, line ? line : "");
}

/* A cause object of a report: proven when it says so (a report without
 * statuses proves nothing here). */
static bool cause_proven(json_t *c)
{
    const char *st = json_string_value(json_object_get(c, "status"));
    return st && strcmp(st, "proven") == 0;
}

typedef struct {
    char key[192], cause[64], line[512]; /* cause: a grouped pair's name is 55 */
    const char *example; /* the first case that names it */
    int rank;
    size_t cases, proven, rowwise, columnwise, seen_in; /* seen_in: 1 + the last case counted */
} ctally;

typedef struct {
    ctally *t;
    size_t n, cap;
    size_t reasons[32];
    const char *reason_names[32];
    size_t n_reasons, differing, uncaused;
} stally;

static ctally *tally_slot(stally *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->t[i].key, key) == 0) return &s->t[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        ctally *t = realloc(s->t, cap * sizeof *t);
        if (!t) return NULL;
        s->t = t;
        s->cap = cap;
    }
    ctally *c = &s->t[s->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->key, sizeof c->key, "%s", key);
    return c;
}

/* key: the story (cause_key), or NULL to take it from the cause and its line. */
static void tally_one(stally *s, size_t case_index, const char *case_name, const char *orientation, const char *key,
                      const char *cause, const char *line, bool proven, int rank)
{
    char kbuf[192];
    if (!key) cause_key(cause, line, kbuf, sizeof kbuf), key = kbuf;
    ctally *c = tally_slot(s, key);
    if (!c) return;
    if (!c->example) {
        snprintf(c->cause, sizeof c->cause, "%s", cause);
        snprintf(c->line, sizeof c->line, "%s", line ? line : "");
        c->example = case_name;
        c->rank = rank;
    }
    bool col = orientation && strcmp(orientation, "columnwise") == 0;
    col ? c->columnwise++ : c->rowwise++;
    if (c->seen_in == case_index + 1) return; /* both orientations of one case: one case */
    c->seen_in = case_index + 1;
    c->cases++;
    c->proven += proven;
}

static void tally_reasons(stally *s, json_t *reasons)
{
    const char *name;
    json_t *v;
    json_object_foreach(reasons, name, v) {
        size_t i = 0;
        while (i < s->n_reasons && strcmp(s->reason_names[i], name) != 0) i++;
        if (i == s->n_reasons) {
            if (i == sizeof s->reasons / sizeof s->reasons[0]) continue;
            s->reason_names[s->n_reasons++] = name; /* borrowed from the case's outputs */
            s->reasons[i] = 0;
        }
        s->reasons[i] += (size_t)json_integer_value(v);
    }
}

/* Size findings are tallied as causes of their own ("size: amax"). */
static void tally_case(stally *s, size_t ci, const char *name, json_t *outputs)
{
    size_t i, before = 0;
    json_t *out;
    s->differing++;
    for (size_t k = 0; k < s->n; k++) before += s->t[k].cases;
    json_array_foreach(outputs, i, out) {
        const char *orient = json_string_value(json_object_get(out, "orientation"));
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(out, "causes"), j, c) {
            const char *cause = json_string_value(json_object_get(c, "cause"));
            const char *line = json_string_value(json_object_get(c, "line"));
            if (cause) tally_one(s, ci, name, orient, NULL, cause, line, cause_proven(c), cause_rank(cause, line));
        }
        const char *key;
        json_t *k;
        json_object_foreach(json_object_get(out, "components"), key, k) {
            const char *f = json_string_value(json_object_get(k, "size_finding"));
            char skey[64]; /* one story per component (both orientations), whatever the counts */
            snprintf(skey, sizeof skey, "size: %s", key);
            if (f) tally_one(s, ci, name, orient, skey, "size", f, false, 1); /* a fact, not a cause */
        }
        tally_reasons(s, json_object_get(out, "reasons"));
    }
    size_t after = 0;
    for (size_t k = 0; k < s->n; k++) after += s->t[k].cases;
    if (after == before) s->uncaused++;
}

/* Proven first (where the reports give statuses), then the most specific,
 * then the most cases, then the order of first appearance (stable). */
static bool tally_before(const ctally *a, const ctally *b)
{
    if ((a->proven > 0) != (b->proven > 0)) return a->proven > 0;
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->cases > b->cases;
}

static void tally_sort(stally *s)
{
    for (size_t i = 1; i < s->n; i++) {
        ctally v = s->t[i];
        size_t j = i;
        while (j > 0 && tally_before(&v, &s->t[j - 1])) {
            s->t[j] = s->t[j - 1];
            j--;
        }
        s->t[j] = v;
    }
}

/* The suite's story, one line per cause: printed after the cases, and the
 * JUnit testsuite's system-out. */
static void tally_text(const stally *s, size_t ncases, FILE *f)
{
    if (!s->differing) return;
    fprintf(f, "causes over the %zu differing of %zu cases (most specific first):\n", s->differing, ncases);
    for (size_t i = 0; i < s->n; i++) {
        const ctally *c = &s->t[i];
        fprintf(f, "  %zu of %zu case%s (", c->cases, s->differing, s->differing == 1 ? "" : "s");
        if (c->rowwise) fprintf(f, "rowwise %zu%s", c->rowwise, c->columnwise ? ", " : "");
        if (c->columnwise) fprintf(f, "columnwise %zu", c->columnwise);
        fprintf(f, ")%s %s: %s [%s]\n", c->proven && c->proven == c->cases ? " proven" : "",
                c->cause, c->line, c->example);
    }
    if (s->uncaused) fprintf(f, "  %zu case%s with no cause named\n", s->uncaused, s->uncaused == 1 ? "" : "s");
    fprintf(f, "reasons over all cases:");
    for (size_t i = 0; i < s->n_reasons; i++) fprintf(f, " %s %zu", s->reason_names[i], s->reasons[i]);
    fprintf(f, "\n");
}

static json_t *tally_json(const stally *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const ctally *c = &s->t[i];
        json_t *j = json_object();
        json_object_set_new(j, "cause", json_text(c->cause));
        json_object_set_new(j, "key", json_text(c->key));
        json_object_set_new(j, "cases", json_integer((json_int_t)c->cases));
        json_object_set_new(j, "proven_cases", json_integer((json_int_t)c->proven));
        json_object_set_new(j, "rowwise", json_integer((json_int_t)c->rowwise));
        json_object_set_new(j, "columnwise", json_integer((json_int_t)c->columnwise));
        json_object_set_new(j, "line", json_text(c->line));
        json_object_set_new(j, "example_case", json_text(c->example));
        json_array_append_new(arr, j);
    }
    return arr;
}

/* One line for a differing case: its most specific cause (and how many more
 * it has), else a size finding, else the first differing component. */
static char *summarize(json_t *outputs)
{
    char buf[768] = "";
    size_t i, ncauses = 0;
    json_t *out, *best = NULL, *best_out = NULL;
    int best_rank = 99;
    json_array_foreach(outputs, i, out) {
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(out, "causes"), j, c) {
            const char *cause = json_string_value(json_object_get(c, "cause"));
            const char *line = json_string_value(json_object_get(c, "line"));
            int r = cause_rank(cause, line) - (cause_proven(c) ? 10 : 0);
            ncauses++;
            if (r < best_rank) best_rank = r, best = c, best_out = out;
        }
    }
    if (best) {
        int k = snprintf(buf, sizeof buf, "%s: cause %s: %s", json_string_value(json_object_get(best_out, "orientation")),
                         json_string_value(json_object_get(best, "cause")), json_string_value(json_object_get(best, "line")));
        if (ncauses > 1 && k > 0 && (size_t)k < sizeof buf)
            snprintf(buf + k, sizeof buf - (size_t)k, " (+%zu more cause%s)", ncauses - 1, ncauses > 2 ? "s" : "");
        return strdup(buf);
    }
    json_array_foreach(outputs, i, out) {
        const char *key;
        json_t *k;
        json_object_foreach(json_object_get(out, "components"), key, k) {
            const char *f = json_string_value(json_object_get(k, "size_finding"));
            if (!f) continue;
            snprintf(buf, sizeof buf, "%s: %s", json_string_value(json_object_get(out, "orientation")), f);
            return strdup(buf);
        }
    }
    json_array_foreach(outputs, i, out) {
        const char *key;
        json_t *k;
        json_object_foreach(json_object_get(out, "components"), key, k) {
            if (strcmp(json_string_value(json_object_get(k, "status")), "mismatch") != 0) continue;
            snprintf(buf, sizeof buf, "%s: %s: %lld of %lld differ", json_string_value(json_object_get(out, "orientation")),
                     key, (long long)json_integer_value(json_object_get(k, "mismatches")),
                     (long long)json_integer_value(json_object_get(k, "compared")));
            return strdup(buf);
        }
    }
    return strdup("differs");
}

/* ---- JUnit XML ------------------------------------------------------------------ */
typedef struct {
    char *b;
    size_t n, cap;
    bool failed; /* out of memory: the text is dropped (junit_text returns NULL) */
} sbuf;

static void put(sbuf *s, const char *t, size_t n)
{
    if (s->failed) return;
    if (s->n + n + 1 > s->cap) {
        size_t cap = (s->n + n + 1) * 2;
        char *b = realloc(s->b, cap);
        if (!b) {
            s->failed = true;
            return;
        }
        s->b = b;
        s->cap = cap;
    }
    memcpy(s->b + s->n, t, n);
    s->n += n;
    s->b[s->n] = 0;
}
static void puts_(sbuf *s, const char *t) { put(s, t, strlen(t)); }
/* Escaped text or attribute value. Every character is one XML 1.0 allows:
 * control characters but tab and newline become '?', and each byte that
 * does not start well-formed UTF-8 (a path given on the command line, a
 * message quoting one) becomes U+FFFD, as do U+FFFE and U+FFFF; case names
 * are UTF-8 already (the MANIFEST reader refuses others). */
static void put_xml(sbuf *s, const char *t)
{
    size_t n = t ? strlen(t) : 0;
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)t[i];
        size_t k = nvfp4_utf8_prefix(t + i, n - i);
        if (ch == '&') puts_(s, "&amp;");
        else if (ch == '<') puts_(s, "&lt;");
        else if (ch == '>') puts_(s, "&gt;");
        else if (ch == '"') puts_(s, "&quot;");
        else if (ch < 0x20 && ch != '\n' && ch != '\t') puts_(s, "?");
        else if (k == 0 || (k == 3 && ch == 0xEF && (unsigned char)t[i + 1] == 0xBF && (unsigned char)t[i + 2] >= 0xBE))
            puts_(s, "\xEF\xBF\xBD");
        else put(s, t + i, k);
        i += k ? k : 1;
    }
}

/* The JUnit XML of a suite (malloc'd). */
static char *junit_text(const vsuite *s, size_t failures, size_t errors, size_t skipped, bool require_all,
                        const char *story)
{
    sbuf x = {0};
    char num[160];
    puts_(&x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"nvfp4 verify ");
    put_xml(&x, s->dir);
    snprintf(num, sizeof num, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", s->n, failures,
             errors, skipped);
    puts_(&x, num);
    for (size_t i = 0; i < s->n; i++) {
        const vcase *c = &s->c[i];
        puts_(&x, "    <testcase classname=\"nvfp4.golden.");
        put_xml(&x, s->recipe[0] ? s->recipe : "suite");
        puts_(&x, "\" name=\"");
        put_xml(&x, c->name);
        puts_(&x, "\"");
        if (c->verdict == 0) {
            puts_(&x, "/>\n");
            continue;
        }
        puts_(&x, ">\n      ");
        const char *tag = c->verdict == 1 ? "failure" : c->verdict == 2 ? "error" : require_all ? "failure" : "skipped";
        puts_(&x, "<");
        puts_(&x, tag);
        puts_(&x, " message=\"");
        put_xml(&x, c->verdict == 2 && c->error ? c->error : c->summary);
        puts_(&x, "\"");
        if (c->verdict == 1 && c->outputs) {
            char *d = json_dumps(c->outputs, JSON_INDENT(1));
            puts_(&x, ">");
            put_xml(&x, d);
            free(d);
            puts_(&x, "</failure>\n");
        } else {
            puts_(&x, "/>\n");
        }
        puts_(&x, "    </testcase>\n");
    }
    if (story && *story) {
        puts_(&x, "    <system-out>");
        put_xml(&x, story);
        puts_(&x, "</system-out>\n");
    }
    puts_(&x, "  </testsuite>\n</testsuites>\n");
    if (x.failed) free(x.b), x.b = NULL;
    return x.b;
}

/* ---- the run -------------------------------------------------------------------- */

struct nvfp4_suite_result {
    vsuite s;
    stally t;
    char *outs;             /* the actual folder, as given */
    size_t count[4];        /* matched, differing, missing, unreadable */
    bool require_all;
    int verdict;
    char message[700];      /* why the verdict is 2, or "" */
};

static void free_suite(vsuite *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].name);
        free(s->c[i].expected);
        free(s->c[i].actual);
        free(s->c[i].summary);
        free(s->c[i].error);
        json_decref(s->c[i].outputs);
    }
    free(s->c);
    free(s->by_case);
    free(s->dir);
    free(s->mpath);
    nvfp4_manifest_free(&s->m);
}

void nvfp4_suite_result_free(nvfp4_suite_result *r)
{
    if (!r) return;
    free_suite(&r->s);
    free(r->t.t);
    free(r->outs);
    free(r);
}

static const char *status_name(int v) { return v == 0 ? "match" : v == 1 ? "mismatch" : v == 2 ? "error" : "missing"; }

/* The suite's story (tally_text) as a string, for JUnit and TAP. */
static char *tally_string(const stally *t, size_t ncases)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    tally_text(t, ncases, f);
    fclose(f);
    return buf;
}

static void print_tap(const vsuite *s, const stally *t, bool require_all, FILE *f)
{
    fprintf(f, "1..%zu\n", s->n);
    for (size_t i = 0; i < s->n; i++) {
        const vcase *c = &s->c[i];
        if (c->verdict == 0) fprintf(f, "ok %zu - %s\n", i + 1, c->name);
        else if (c->verdict == -1 && !require_all) fprintf(f, "ok %zu - %s # SKIP %s\n", i + 1, c->name, c->summary);
        else if (c->verdict == 2) fprintf(f, "not ok %zu - %s # ERROR %s\n", i + 1, c->name, c->error);
        else fprintf(f, "not ok %zu - %s # %s\n", i + 1, c->name, c->summary);
    }
    char *story = tally_string(t, s->n);
    char *save = NULL;
    for (char *line = story ? strtok_r(story, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
        fprintf(f, "# %s\n", line);
    free(story);
}

static void print_json(const vsuite *s, const char *outs, const stally *t, const size_t count[4], FILE *f)
{
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "suite", json_text(s->dir));
    json_object_set_new(root, "actual_dir", json_text(outs));
    for (size_t i = 0; i < s->n; i++) {
        vcase *c = &s->c[i];
        json_t *j = json_object();
        json_object_set_new(j, "case", json_text(c->name));
        json_object_set_new(j, "status", json_string(status_name(c->verdict)));
        if (c->actual) json_object_set_new(j, "actual", json_text(c->actual));
        if (c->summary) json_object_set_new(j, "summary", json_text(c->summary));
        if (c->error) json_object_set_new(j, "error", json_text(c->error));
        if (c->outputs) json_object_set(j, "outputs", c->outputs);
        json_array_append_new(arr, j);
    }
    json_object_set_new(root, "cases", arr);
    json_object_set_new(root, "causes", tally_json(t));
    json_t *rs = json_object();
    for (size_t i = 0; i < t->n_reasons; i++)
        json_object_set_new(rs, t->reason_names[i], json_integer((json_int_t)t->reasons[i]));
    json_object_set_new(root, "reasons", rs);
    json_object_set_new(root, "uncaused", json_integer((json_int_t)t->uncaused));
    json_object_set_new(root, "matched", json_integer((json_int_t)count[0]));
    json_object_set_new(root, "differing", json_integer((json_int_t)count[1]));
    json_object_set_new(root, "missing", json_integer((json_int_t)count[2]));
    json_object_set_new(root, "errors", json_integer((json_int_t)count[3]));
    char *text = json_dumps(root, JSON_INDENT(2));
    if (text) fprintf(f, "%s\n", text);
    free(text);
    json_decref(root);
}

static void print_text(const vsuite *s, const char *outs, const stally *t, const size_t count[4], FILE *f)
{
    fprintf(f, "suite %s (%zu cases), actual %s\n", s->dir, s->n, outs);
    for (size_t i = 0; i < s->n; i++) {
        const vcase *c = &s->c[i];
        const char *tag = c->verdict == 0 ? "ok" : c->verdict == 1 ? "DIFFERS" : c->verdict == 2 ? "ERROR" : "missing";
        const char *why = c->verdict == 2 ? c->error : c->verdict ? c->summary : NULL;
        fprintf(f, "  %-8s %s%s%s\n", tag, c->name, why ? ": " : "", why ? why : "");
    }
    tally_text(t, s->n, f);
    fprintf(f, "summary: %zu matched, %zu differing, %zu missing", count[0], count[1], count[2]);
    if (count[3]) fprintf(f, ", %zu unreadable", count[3]);
    fprintf(f, " (of %zu cases)\n", s->n);
}

/* A grouped report (docs/verify.md 3d) as one output of orientation
 * "grouped": its components, causes and experts, and the line of each
 * cause followed by the experts that differ. */
static json_t *grouped_output(json_t *root)
{
    json_t *experts = json_object_get(root, "experts"), *e, *c;
    char list[192] = "";
    size_t i, n = 0, len = 0;
    json_array_foreach(experts, i, e) {
        const char *st = json_string_value(json_object_get(e, "status"));
        if (!st || strcmp(st, "mismatch") != 0) continue;
        if (len < sizeof list - 24)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld", n ? ", " : "",
                                    (long long)json_integer_value(json_object_get(e, "expert")));
        n++;
    }
    json_t *causes = json_deep_copy(json_object_get(root, "causes"));
    json_array_foreach(causes, i, c) {
        char line[512];
        const char *what = json_string_value(json_object_get(c, "line"));
        if (n) snprintf(line, sizeof line, "%s (expert%s %s differ%s)", what, n == 1 ? "" : "s", list, n == 1 ? "s" : "");
        else snprintf(line, sizeof line, "%s (no expert's own bytes differ)", what);
        json_object_set_new(c, "line", json_string(line));
    }
    return json_pack("{s:s,s:O,s:o,s:O,s:O}", "orientation", "grouped", "components",
                     json_object_get(root, "components"), "causes", causes ? causes : json_array(), "experts",
                     experts ? experts : json_null(), "grouped", json_object_get(root, "grouped"));
}

/* Loads BUNDLE and FILE and runs the library's verify report (JSON), whose
 * "outputs" (one object per orientation; a grouped bundle's one, from
 * grouped_output) are appended to outputs.
 * 0 match, 1 mismatch, 2 error (its message in msg). */
static int verify_case_files(const char *expected, const char *actual, const nvfp4_verify_opts *o,
                             nvfp4_vcomponent lone, json_t *outputs, char *msg, size_t msg_size)
{
    nvfp4_tensor_set b, act;
    nvfp4_tset_init(&b);
    nvfp4_tset_init(&act);
    nvfp4_report rep;
    memset(&rep, 0, sizeof rep);
    nvfp4_error err;
    int rc;
    if (nvfp4_bundle_load(expected, &b, &err) || nvfp4_tset_read(actual, &act, &err)) {
        rc = 2;
    } else {
        nvfp4_verify_bundle_opts bo;
        nvfp4_verify_bundle_opts_init(&bo);
        bo.expected_name = expected;
        bo.actual_name = actual;
        bo.verify = *o;
        bo.lone = lone;
        bo.what = NVFP4_REPORT_JSON;
        rc = nvfp4_verify_bundle_report(&b, &act, &bo, &rep, &err) ? 2 : rep.verdict;
    }
    if (rc == 2) {
        snprintf(msg, msg_size, "%s", err.message);
    } else {
        json_t *root = rep.json ? json_loads(rep.json, 0, NULL) : NULL;
        json_t *arr = json_object_get(root, "outputs");
        if (json_object_get(root, "grouped")) json_array_append_new(outputs, grouped_output(root));
        else if (!json_is_array(arr)) rc = 2, snprintf(msg, msg_size, "out of memory");
        else json_array_extend(outputs, arr);
        json_decref(root);
    }
    nvfp4_report_free(&rep);
    nvfp4_tset_free(&act);
    nvfp4_tset_free(&b);
    return rc;
}

/* One case: its output found, its golden checked, then compared. */
static void verify_case(nvfp4_suite_result *r, size_t i, const nvfp4_verify_opts *vo, nvfp4_vcomponent lone)
{
    vsuite *s = &r->s;
    vcase *c = &s->c[i];
    c->actual = find_actual(r->outs, c, s->dir);
    if (!c->actual) {
        c->verdict = -1;
        c->summary = strdup("no output in the actual folder");
        r->count[2]++;
        return;
    }
    if ((c->error = golden_problem(s, c)) != NULL) {
        c->verdict = 2;
        r->count[3]++;
        return;
    }
    char msg[sizeof((nvfp4_error *)0)->message + 64];
    c->outputs = json_array();
    c->verdict = verify_case_files(c->expected, c->actual, vo, lone, c->outputs, msg, sizeof msg);
    if (c->verdict == 0) {
        r->count[0]++;
    } else if (c->verdict == 1) {
        r->count[1]++;
        c->summary = summarize(c->outputs);
        tally_case(&r->t, i, c->name, c->outputs);
    } else {
        c->verdict = 2;
        r->count[3]++;
        c->error = strdup(msg);
        json_decref(c->outputs);
        c->outputs = NULL;
    }
}

void nvfp4_suite_verify_opts_init(nvfp4_suite_verify_opts *o)
{
    memset(o, 0, sizeof *o);
    nvfp4_verify_opts_init(&o->verify);
    o->lone = NVFP4_VC_DATA;
}

/* Every case is verified and reported, whatever the others do: an unreadable
 * one is an error entry (JUnit <error>, JSON status error, TAP not ok), never
 * a lost report. Verdict 2 when a case is unreadable or OUTS holds none, else
 * 1 when one differs (or is missing with require_all), else 0. */
nvfp4_status nvfp4_suite_verify(const char *suite, const char *outs, const nvfp4_suite_verify_opts *o,
                                nvfp4_suite_result **res, nvfp4_error *err)
{
    *res = NULL;
    nvfp4_suite_verify_opts defaults;
    if (!o) nvfp4_suite_verify_opts_init(&defaults), o = &defaults;
    if (!suite || !outs) return nvfp4_error_set(err, NVFP4_EINVAL, "a suite and an actual folder are needed");
    nvfp4_suite_result *r = calloc(1, sizeof *r);
    if (!r || !(r->outs = strdup(outs))) {
        free(r);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    r->require_all = o->require_all;
    bool dir = false;
    nvfp4_status st = load_manifest(suite, &r->s, err);
    if (!st && (!exists(outs, &dir) || !dir))
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: --actual-dir is not a folder", outs);
    if (st) {
        nvfp4_suite_result_free(r);
        return st;
    }
    nvfp4_verify_opts vo = o->verify;
    vo.max_errors = vo.max_errors < 3 ? vo.max_errors : 3;
    for (size_t i = 0; i < r->s.n; i++) {
        if (o->progress) o->progress(o->progress_ctx, i, r->s.n, r->s.c[i].name);
        verify_case(r, i, &vo, o->lone);
    }
    tally_sort(&r->t);
    const size_t *count = r->count;
    r->verdict = count[3] ? 2 : (count[1] || (o->require_all && count[2])) ? 1 : 0;
    if (!count[3] && count[0] + count[1] == 0) {
        r->verdict = 2;
        snprintf(r->message, sizeof r->message, "%s holds no output for any case of %s", outs, r->s.dir);
    }
    if (count[3])
        snprintf(r->message, sizeof r->message, "%zu of %zu cases could not be read (ERROR in the report)", count[3],
                 r->s.n);
    *res = r;
    return NVFP4_OK;
}

int nvfp4_suite_result_verdict(const nvfp4_suite_result *r) { return r->verdict; }
const char *nvfp4_suite_result_message(const nvfp4_suite_result *r) { return r->message[0] ? r->message : NULL; }
void nvfp4_suite_result_counts(const nvfp4_suite_result *r, size_t counts[4])
{
    memcpy(counts, r->count, sizeof r->count);
}
size_t nvfp4_suite_result_cases(const nvfp4_suite_result *r) { return r->s.n; }

static const vcase *case_at(const nvfp4_suite_result *r, size_t i) { return i < r->s.n ? &r->s.c[i] : NULL; }

const char *nvfp4_suite_result_case_name(const nvfp4_suite_result *r, size_t i)
{
    return case_at(r, i) ? case_at(r, i)->name : NULL;
}
nvfp4_case_status nvfp4_suite_result_case_status(const nvfp4_suite_result *r, size_t i)
{
    return case_at(r, i) ? (nvfp4_case_status)case_at(r, i)->verdict : NVFP4_CASE_ERROR;
}
const char *nvfp4_suite_result_case_actual(const nvfp4_suite_result *r, size_t i)
{
    return case_at(r, i) ? case_at(r, i)->actual : NULL;
}
const char *nvfp4_suite_result_case_summary(const nvfp4_suite_result *r, size_t i)
{
    return case_at(r, i) ? case_at(r, i)->summary : NULL;
}
const char *nvfp4_suite_result_case_error(const nvfp4_suite_result *r, size_t i)
{
    return case_at(r, i) ? case_at(r, i)->error : NULL;
}
char *nvfp4_suite_result_case_json(const nvfp4_suite_result *r, size_t i)
{
    const vcase *c = case_at(r, i);
    return c && c->outputs ? json_dumps(c->outputs, JSON_INDENT(2)) : NULL;
}

/* The JUnit file: missing outputs are failures with require_all, else skipped. */
static char *render_junit(const nvfp4_suite_result *r)
{
    const size_t *count = r->count;
    char *story = tally_string(&r->t, r->s.n);
    char *x = junit_text(&r->s, count[1] + (r->require_all ? count[2] : 0), count[3], r->require_all ? 0 : count[2],
                         r->require_all, story);
    free(story);
    return x;
}

char *nvfp4_suite_result_render(const nvfp4_suite_result *r, nvfp4_suite_format fmt)
{
    if (fmt == NVFP4_SUITE_JUNIT) return render_junit(r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (fmt == NVFP4_SUITE_TAP) print_tap(&r->s, &r->t, r->require_all, f);
    else if (fmt == NVFP4_SUITE_JSON) print_json(&r->s, r->outs, &r->t, r->count, f);
    else print_text(&r->s, r->outs, &r->t, r->count, f);
    fclose(f);
    return buf;
}

nvfp4_status nvfp4_suite_result_write_junit(const nvfp4_suite_result *r, const char *path, nvfp4_error *err)
{
    char *x = render_junit(r);
    if (!x) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_status st = nvfp4_file_write_atomic(path, x, strlen(x), err);
    free(x);
    return st;
}
