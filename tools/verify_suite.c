/* verify_suite.c - `nvfp4 verify --suite`: every case of a golden suite
 * against what a kernel wrote for it, one summary, JUnit XML / JSON / TAP
 * for CI (docs/verify.md, "Suite verify"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "verify_cli.h"

static const char *const CMD = "verify";

typedef struct {
    char *name;     /* the case: "edge-e2m1-ties" */
    char *expected; /* its bundle */
    char *actual;   /* the kernel's file, or NULL when missing */
    int verdict;    /* 0 match, 1 differs, 2 error, -1 missing */
    char *summary;  /* one line */
    json_t *outputs;
} vcase;

typedef struct {
    char *dir, recipe[64];
    vcase *c;
    size_t n, cap;
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

/* The first path component of a MANIFEST entry is the case's file or folder. */
static int add_case(vsuite *s, const char *rel)
{
    size_t k = strcspn(rel, "/");
    char comp[1024];
    if (k == 0 || k >= sizeof comp) return 0;
    memcpy(comp, rel, k);
    comp[k] = 0;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->c[i].expected + strlen(s->dir) + 1, comp) == 0) return 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        vcase *c = realloc(s->c, s->cap * sizeof *c);
        if (!c) return cli_fail(CMD, "out of memory");
        s->c = c;
    }
    vcase *c = &s->c[s->n++];
    memset(c, 0, sizeof *c);
    c->expected = join(s->dir, comp, "");
    size_t nl = strlen(comp);
    if (nl > 12 && strcmp(comp + nl - 12, ".safetensors") == 0) comp[nl - 12] = 0;
    c->name = strdup(comp);
    return c->expected && c->name ? 0 : cli_fail(CMD, "out of memory");
}

static int load_manifest(const char *arg, vsuite *s)
{
    bool dir = false;
    if (!exists(arg, &dir)) return cli_fail(CMD, "%s: no such suite folder or MANIFEST", arg);
    char *mpath = dir ? join(arg, "MANIFEST", "") : strdup(arg);
    if (!mpath) return cli_fail(CMD, "out of memory");
    if (dir) s->dir = strdup(arg);
    else {
        const char *sl = strrchr(arg, '/');
        s->dir = sl ? strndup(arg, (size_t)(sl - arg)) : strdup(".");
    }
    FILE *f = fopen(mpath, "r");
    if (!f) {
        int rc = cli_fail(CMD, "%s: cannot read the suite's MANIFEST", mpath);
        free(mpath);
        return rc;
    }
    char line[4096];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (strncmp(line, "# recipe: ", 10) == 0) snprintf(s->recipe, sizeof s->recipe, "%.63s", line + 10);
        if (line[0] == '#' || !line[0]) continue;
        const char *sp = strstr(line, "  ");
        if (strlen(line) < 66 || !sp || sp != line + 64) {
            rc = cli_fail(CMD, "%s: not a MANIFEST line (sha256, two spaces, path): '%.60s'", mpath, line);
            break;
        }
        rc = add_case(s, line + 66);
    }
    fclose(f);
    if (!rc && s->n == 0) rc = cli_fail(CMD, "%s: the MANIFEST lists no case", mpath);
    free(mpath);
    return rc;
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

/* One line: the first cause, else the first differing component. */
static char *summarize(json_t *outputs)
{
    char buf[512] = "";
    size_t i;
    json_t *out;
    json_array_foreach(outputs, i, out) {
        json_t *causes = json_object_get(out, "causes");
        if (json_array_size(causes)) {
            json_t *c0 = json_array_get(causes, 0);
            snprintf(buf, sizeof buf, "%s: cause %s: %s", json_string_value(json_object_get(out, "orientation")),
                     json_string_value(json_object_get(c0, "cause")), json_string_value(json_object_get(c0, "line")));
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
} sbuf;

static void put(sbuf *s, const char *t, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
        char *b = realloc(s->b, s->cap);
        if (!b) abort();
        s->b = b;
    }
    memcpy(s->b + s->n, t, n);
    s->n += n;
    s->b[s->n] = 0;
}
static void puts_(sbuf *s, const char *t) { put(s, t, strlen(t)); }
static void put_xml(sbuf *s, const char *t) /* escaped text or attribute value */
{
    for (; t && *t; t++) {
        unsigned char ch = (unsigned char)*t;
        if (ch == '&') puts_(s, "&amp;");
        else if (ch == '<') puts_(s, "&lt;");
        else if (ch == '>') puts_(s, "&gt;");
        else if (ch == '"') puts_(s, "&quot;");
        else if (ch < 0x20 && ch != '\n' && ch != '\t') puts_(s, "?");
        else put(s, (const char *)&ch, 1);
    }
}

static int write_junit(const char *path, const vsuite *s, size_t failures, size_t errors, size_t skipped,
                       bool require_all)
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
        put_xml(&x, c->summary);
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
    puts_(&x, "  </testsuite>\n</testsuites>\n");
    nvfp4_error err;
    int rc = nvfp4_file_write_atomic(path, x.b, x.n, &err) ? cli_fail(CMD, "%s", err.message) : 0;
    free(x.b);
    return rc;
}

/* ---- the run -------------------------------------------------------------------- */

static void free_suite(vsuite *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].name);
        free(s->c[i].expected);
        free(s->c[i].actual);
        free(s->c[i].summary);
        json_decref(s->c[i].outputs);
    }
    free(s->c);
    free(s->dir);
}

static const char *status_name(int v) { return v == 0 ? "match" : v == 1 ? "mismatch" : v == 2 ? "error" : "missing"; }

int vcli_verify_suite(const char *suite, const char *outs, const nvfp4_verify_opts *o, nvfp4_vcomponent lone,
                      const char *junit, bool json, bool tap, bool require_all)
{
    vsuite s;
    memset(&s, 0, sizeof s);
    bool dir = false;
    int rc = load_manifest(suite, &s);
    if (!rc && (!exists(outs, &dir) || !dir)) rc = cli_fail(CMD, "%s: --actual-dir is not a folder", outs);
    if (rc) {
        free_suite(&s);
        return rc;
    }
    size_t matched = 0, differing = 0, missing = 0, errors = 0;
    nvfp4_verify_opts vo = *o;
    vo.max_errors = vo.max_errors < 3 ? vo.max_errors : 3;
    for (size_t i = 0; i < s.n; i++) {
        vcase *c = &s.c[i];
        c->actual = find_actual(outs, c, s.dir);
        if (!c->actual) {
            c->verdict = -1;
            c->summary = strdup("no output in the actual folder");
            missing++;
            continue;
        }
        c->outputs = json_array();
        c->verdict = vcli_verify_files(c->expected, c->actual, &vo, lone, c->outputs);
        if (c->verdict == 0) {
            matched++;
        } else if (c->verdict == 1) {
            differing++;
            c->summary = summarize(c->outputs);
        } else {
            errors++;
            c->summary = strdup("the expected bundle or the kernel's file could not be read (see the message above)");
        }
    }
    if (tap) {
        printf("1..%zu\n", s.n);
        for (size_t i = 0; i < s.n; i++) {
            const vcase *c = &s.c[i];
            if (c->verdict == 0) printf("ok %zu - %s\n", i + 1, c->name);
            else if (c->verdict == -1 && !require_all) printf("ok %zu - %s # SKIP %s\n", i + 1, c->name, c->summary);
            else printf("not ok %zu - %s # %s\n", i + 1, c->name, c->summary);
        }
    } else if (json) {
        json_t *root = json_object(), *arr = json_array();
        json_object_set_new(root, "suite", json_string(s.dir));
        json_object_set_new(root, "actual_dir", json_string(outs));
        for (size_t i = 0; i < s.n; i++) {
            vcase *c = &s.c[i];
            json_t *j = json_object();
            json_object_set_new(j, "case", json_string(c->name));
            json_object_set_new(j, "status", json_string(status_name(c->verdict)));
            if (c->actual) json_object_set_new(j, "actual", json_string(c->actual));
            if (c->summary) json_object_set_new(j, "summary", json_string(c->summary));
            if (c->outputs) json_object_set(j, "outputs", c->outputs);
            json_array_append_new(arr, j);
        }
        json_object_set_new(root, "cases", arr);
        json_object_set_new(root, "matched", json_integer((json_int_t)matched));
        json_object_set_new(root, "differing", json_integer((json_int_t)differing));
        json_object_set_new(root, "missing", json_integer((json_int_t)missing));
        json_object_set_new(root, "errors", json_integer((json_int_t)errors));
        char *t = json_dumps(root, JSON_INDENT(2));
        if (t) puts(t);
        free(t);
        json_decref(root);
    } else {
        printf("suite %s (%zu cases), actual %s\n", s.dir, s.n, outs);
        for (size_t i = 0; i < s.n; i++) {
            const vcase *c = &s.c[i];
            const char *tag = c->verdict == 0 ? "ok" : c->verdict == 1 ? "DIFFERS" : c->verdict == 2 ? "ERROR" : "missing";
            printf("  %-8s %s%s%s\n", tag, c->name, c->summary && c->verdict ? ": " : "", c->verdict ? c->summary : "");
        }
        printf("summary: %zu matched, %zu differing, %zu missing%s (of %zu cases)\n", matched, differing, missing,
               errors ? ", some unreadable" : "", s.n);
    }
    int verdict = errors ? 2 : (differing || (require_all && missing)) ? 1 : 0;
    if (!errors && matched + differing == 0) verdict = cli_fail(CMD, "%s holds no output for any case of %s", outs, s.dir);
    if (junit && verdict != 2 && write_junit(junit, &s, differing + (require_all ? missing : 0), errors,
                                             require_all ? 0 : missing, require_all))
        verdict = 2;
    if (!tap && !json) printf("verdict: %s\n", verdict == 0 ? "MATCH" : verdict == 1 ? "MISMATCH" : "ERROR");
    free_suite(&s);
    return verdict;
}
