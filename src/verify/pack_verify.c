/* pack_verify.c - a kernel's outputs against a golden pack (nvfp4/suite.h,
 * nvfp4_pack_verify; `nvfp4 verify --suite PACK --actual-dir OUTS`): every
 * file of the pack checked against its MANIFEST, then each vector file's
 * output columns compared value by value with OUTS's file of the same name
 * (the differing rows printed with their inputs), and each suite of the
 * pack verified by nvfp4_suite_verify against OUTS's folder of the same
 * name. The pack's layout: pack_gen.c and the README.md it writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nvfp4/io.h"
#include "verify/pack_internal.h"

enum { PART_MATCH = 0, PART_DIFFER = 1, PART_UNREADABLE = 2, PART_MISSING = 3 };
#define PACK_SHOWN_PER_FILE 5 /* differing rows printed per vector file */

typedef struct {
    const char *pack, *outs;
    nvfp4_strbuf out;
    size_t count[4]; /* by PART_* */
    bool altered;
} pverify;

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* The pack folder of arg: arg itself, or the folder of arg when arg is a
 * pack's MANIFEST (as --suite takes a suite's folder or its MANIFEST). */
static bool pack_folder(const char *arg, char *buf, size_t n)
{
    size_t len = arg ? strlen(arg) : 0;
    if (!len || len + sizeof "/" PACK_INDEX > n) return false;
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    if (strcmp(base, "MANIFEST") == 0 && !is_dir(arg)) {
        if (base == arg) snprintf(buf, n, ".");
        else snprintf(buf, n, "%.*s", (int)(base - arg - 1 > 0 ? base - arg - 1 : 1), arg);
    } else {
        snprintf(buf, n, "%s", arg);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", buf, PACK_INDEX);
    return exists(path);
}

bool nvfp4_pack_is(const char *path)
{
    char dir[3100];
    return pack_folder(path, dir, sizeof dir);
}

/* ---- the MANIFEST -------------------------------------------------------------------------------- */

/* Every file the MANIFEST lists has its sha256 (a suite's MANIFEST then
 * vouches for its bundles: nvfp4_suite_verify checks them). */
static void check_manifest(pverify *v, const nvfp4_manifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        char path[4096], hex[65];
        nvfp4_error e;
        snprintf(path, sizeof path, "%s/%s", v->pack, m->entries[i].path);
        if (nvfp4_sha256_file(path, hex, &e)) {
            nvfp4_strbuf_printf(&v->out, "%s: cannot be read: %s\n", m->entries[i].path, e.message);
            v->altered = true;
        } else if (strcmp(hex, m->entries[i].sha256) != 0) {
            nvfp4_strbuf_printf(&v->out, "%s: sha256 differs from the pack's MANIFEST (line %zu): the pack was "
                                "altered\n", m->entries[i].path, m->entries[i].line);
            v->altered = true;
        }
    }
}

/* ---- vector files -------------------------------------------------------------------------------- */

static bool is_nan_bits(json_int_t b) { return (b & 0x7FFFFFFF) > 0x7F800000; }

static bool in_list(json_t *list, const char *name)
{
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s) if (json_is_string(s) && strcmp(json_string_value(s), name) == 0) return true;
    return false;
}

static json_t *table_named(json_t *file, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(file, "tables"), i, t)
    {
        json_t *n = json_object_get(t, "name");
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0) return t;
    }
    return NULL;
}

/* The inputs of row i of table t, "name=value ..." (columns as long as the output). */
static void print_inputs(nvfp4_strbuf *b, json_t *t, size_t i, size_t len)
{
    const char *key;
    json_t *col;
    json_object_foreach(json_object_get(t, "inputs"), key, col)
    {
        if (json_array_size(col) != len) continue;
        json_t *v = json_array_get(col, i);
        if (json_is_integer(v)) nvfp4_strbuf_printf(b, " %s=%lld", key, (long long)json_integer_value(v));
        else if (json_is_string(v)) nvfp4_strbuf_printf(b, " %s=%s", key, json_string_value(v));
    }
}

typedef struct {
    size_t values, differ, shown;
    char problem[512]; /* why OUTS's file cannot be compared, or "" */
} vcompare;

/* One output column: exp (the pack's) against act (OUTS's), value by value. */
static void compare_column(pverify *v, vcompare *c, const char *file, json_t *t, const char *tname, const char *key,
                           json_t *exp, json_t *act, bool fbits)
{
    size_t n = json_array_size(exp);
    if (!json_is_array(act) || json_array_size(act) != n) {
        snprintf(c->problem, sizeof c->problem, "table '%s' output '%s': %s (expected an array of %zu integers)",
                 tname, key, !act ? "missing" : json_is_array(act) ? "wrong length" : "not an array", n);
        return;
    }
    for (size_t i = 0; i < n && !c->problem[0]; i++) {
        json_t *a = json_array_get(act, i);
        json_int_t e = json_integer_value(json_array_get(exp, i)), g;
        if (!json_is_integer(a)) {
            snprintf(c->problem, sizeof c->problem, "table '%s' output '%s'[%zu]: not an integer", tname, key, i);
            return;
        }
        g = json_integer_value(a);
        c->values++;
        if (g == e || (fbits && is_nan_bits(g) && is_nan_bits(e))) continue;
        if (c->differ++ < PACK_SHOWN_PER_FILE) {
            nvfp4_strbuf_printf(&v->out, "  %s %s.%s[%zu]: expected %lld (0x%llx), got %lld (0x%llx);", file, tname,
                                key, i, (long long)e, (unsigned long long)e, (long long)g, (unsigned long long)g);
            print_inputs(&v->out, t, i, n);
            nvfp4_strbuf_printf(&v->out, "\n");
        }
    }
}

/* Every output column of every table of the pack's file against OUTS's. */
static int compare_vectors(pverify *v, const char *file, json_t *exp, json_t *act)
{
    vcompare c = {0};
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(exp, "tables"), i, t)
    {
        const char *tname = json_string_value(json_object_get(t, "name")), *key;
        json_t *at = tname ? table_named(act, tname) : NULL, *col;
        if (!at) {
            snprintf(c.problem, sizeof c.problem, "no table '%s'", tname ? tname : "?");
            break;
        }
        json_object_foreach(json_object_get(t, "outputs"), key, col)
        {
            compare_column(v, &c, file, t, tname, key, col, json_object_get(json_object_get(at, "outputs"), key),
                           in_list(json_object_get(t, "float_bits"), key));
            if (c.problem[0]) break;
        }
        if (c.problem[0]) break;
    }
    if (c.problem[0]) {
        nvfp4_strbuf_printf(&v->out, "%s: ERROR: %s/%s: %s\n", file, v->outs, file, c.problem);
        return PART_UNREADABLE;
    }
    if (c.differ) {
        nvfp4_strbuf_printf(&v->out, "%s: MISMATCH: %zu of %zu values differ%s\n", file, c.differ, c.values,
                            c.differ > PACK_SHOWN_PER_FILE ? " (the first ones above)" : " (above)");
        return PART_DIFFER;
    }
    nvfp4_strbuf_printf(&v->out, "%s: match (%zu values)\n", file, c.values);
    return PART_MATCH;
}

static int verify_vectors(pverify *v, const char *file)
{
    char ep[4096], ap[4096];
    snprintf(ep, sizeof ep, "%s/%s", v->pack, file);
    snprintf(ap, sizeof ap, "%s/%s", v->outs, file);
    if (!exists(ap)) {
        nvfp4_strbuf_printf(&v->out, "%s: missing (no %s)\n", file, ap);
        return PART_MISSING;
    }
    json_error_t je;
    json_t *exp = json_load_file(ep, 0, &je);
    if (!exp) {
        nvfp4_strbuf_printf(&v->out, "%s: ERROR: %s: line %d: %s\n", file, ep, je.line, je.text);
        return PART_UNREADABLE;
    }
    json_t *act = json_load_file(ap, 0, &je);
    int part;
    if (!act) {
        nvfp4_strbuf_printf(&v->out, "%s: ERROR: %s: line %d: %s\n", file, ap, je.line, je.text);
        part = PART_UNREADABLE;
    } else {
        part = compare_vectors(v, file, exp, act);
    }
    json_decref(exp);
    json_decref(act);
    return part;
}

/* ---- suites -------------------------------------------------------------------------------------- */

static int verify_one_suite(pverify *v, const char *dir, const nvfp4_suite_verify_opts *so)
{
    char ep[4096], ap[4096];
    snprintf(ep, sizeof ep, "%s/%s", v->pack, dir);
    snprintf(ap, sizeof ap, "%s/%s", v->outs, dir);
    if (!is_dir(ap)) {
        nvfp4_strbuf_printf(&v->out, "%s: missing (no folder %s)\n", dir, ap);
        return PART_MISSING;
    }
    nvfp4_suite_result *r;
    nvfp4_error e;
    if (nvfp4_suite_verify(ep, ap, so, &r, &e)) {
        nvfp4_strbuf_printf(&v->out, "%s: ERROR: %s\n", dir, e.message);
        return PART_UNREADABLE;
    }
    size_t counts[4];
    nvfp4_suite_result_counts(r, counts);
    int verdict = nvfp4_suite_result_verdict(r);
    for (size_t i = 0; i < nvfp4_suite_result_cases(r); i++) {
        nvfp4_case_status cs = nvfp4_suite_result_case_status(r, i);
        if (cs == NVFP4_CASE_MATCH || cs == NVFP4_CASE_MISSING) continue;
        const char *why = cs == NVFP4_CASE_ERROR ? nvfp4_suite_result_case_error(r, i)
                                                 : nvfp4_suite_result_case_summary(r, i);
        nvfp4_strbuf_printf(&v->out, "  %s %s: %s: %s\n", dir, nvfp4_suite_result_case_name(r, i),
                            cs == NVFP4_CASE_ERROR ? "ERROR" : "MISMATCH", why ? why : "differs");
    }
    const char *msg = nvfp4_suite_result_message(r);
    nvfp4_strbuf_printf(&v->out, "%s: %s: %zu cases match, %zu differ, %zu missing, %zu unreadable%s%s\n", dir,
                        verdict == 0 ? "match" : verdict == 1 ? "MISMATCH" : "ERROR", counts[0], counts[1], counts[2],
                        counts[3], msg ? "; " : "", msg ? msg : "");
    nvfp4_suite_result_free(r);
    return verdict == 0 ? PART_MATCH : verdict == 1 ? PART_DIFFER : PART_UNREADABLE;
}

/* A file or folder name of pack.json: a plain name inside the pack (no
 * '/', not hidden), so an index cannot point outside the pack or OUTS. */
static bool plain_name(json_t *s)
{
    const char *n = json_string_value(s);
    return n && n[0] && n[0] != '.' && !strchr(n, '/') && strlen(n) < 256;
}

static void bad_name(pverify *v)
{
    nvfp4_strbuf_printf(&v->out, "%s: ERROR: an entry is not a plain file name\n", PACK_INDEX);
    v->count[PART_UNREADABLE]++;
}

/* ---- the call ------------------------------------------------------------------------------------ */

static nvfp4_status load_index(const char *pack, json_t **index, nvfp4_error *err)
{
    char path[4200];
    json_error_t je;
    snprintf(path, sizeof path, "%s/%s", pack, PACK_INDEX);
    *index = json_load_file(path, 0, &je);
    if (!*index) return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: line %d: %s", path, je.line, je.text);
    json_t *f = json_object_get(*index, "format");
    if (!json_is_string(f) || strcmp(json_string_value(f), PACK_FORMAT) != 0 ||
        !json_is_array(json_object_get(*index, "vectors")) || !json_is_array(json_object_get(*index, "suites"))) {
        json_decref(*index);
        *index = NULL;
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a golden pack index (format \"%s\" with vectors and "
                               "suites expected)", path, PACK_FORMAT);
    }
    return NVFP4_OK;
}

static int final_verdict(pverify *v, bool require_all)
{
    size_t *k = v->count;
    nvfp4_strbuf_printf(&v->out, "pack: %zu parts match, %zu differ, %zu missing, %zu unreadable\n", k[PART_MATCH],
                        k[PART_DIFFER], k[PART_MISSING], k[PART_UNREADABLE]);
    if (v->altered || k[PART_UNREADABLE]) return 2;
    if (!k[PART_MATCH] && !k[PART_DIFFER]) {
        nvfp4_strbuf_printf(&v->out, "%s holds none of the pack's parts\n", v->outs);
        return 2;
    }
    return k[PART_DIFFER] || (require_all && k[PART_MISSING]) ? 1 : 0;
}

nvfp4_status nvfp4_pack_verify(const char *pack, const char *actual_dir, const nvfp4_suite_verify_opts *o,
                               char **text, int *verdict, nvfp4_error *err)
{
    nvfp4_suite_verify_opts defaults;
    if (!o) nvfp4_suite_verify_opts_init(&defaults), o = &defaults;
    *text = NULL;
    *verdict = 2;
    if (!pack || !actual_dir) return nvfp4_error_set(err, NVFP4_EINVAL, "a pack and an actual folder are needed");
    if (strlen(pack) > 3000 || strlen(actual_dir) > 3000)
        return nvfp4_error_set(err, NVFP4_EINVAL, "path too long (at most 3000 characters)");
    if (!is_dir(actual_dir)) return nvfp4_error_set(err, NVFP4_EINVAL, "%s: not a folder", actual_dir);
    char folder[3100];
    if (pack_folder(pack, folder, sizeof folder)) pack = folder; /* PACK/MANIFEST: its folder */
    json_t *index;
    nvfp4_status st = load_index(pack, &index, err);
    if (st) return st;
    char mpath[4200];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST", pack);
    nvfp4_manifest m;
    if ((st = nvfp4_manifest_read(mpath, &m, err))) {
        json_decref(index);
        return st;
    }
    pverify v = {.pack = pack, .outs = actual_dir};
    nvfp4_strbuf_printf(&v.out, "golden pack %s against %s\n", pack, actual_dir);
    check_manifest(&v, &m);
    nvfp4_manifest_free(&m);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(index, "vectors"), i, e)
    {
        if (plain_name(e)) v.count[verify_vectors(&v, json_string_value(e))]++;
        else bad_name(&v);
    }
    json_array_foreach(json_object_get(index, "suites"), i, e)
    {
        json_t *d = json_object_get(e, "dir");
        if (plain_name(d)) v.count[verify_one_suite(&v, json_string_value(d), o)]++;
        else bad_name(&v);
    }
    json_decref(index);
    *verdict = final_verdict(&v, o->require_all);
    if (!(*text = nvfp4_strbuf_take(&v.out))) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return NVFP4_OK;
}
