/* pack_gen.c - golden packs (nvfp4/suite.h, nvfp4_pack_generate): the
 * language-neutral conformance vectors of `nvfp4 golden --pack DIR` for
 * implementers without this tool. A pack holds the codec vectors
 * (pack_vectors.c), the stochastic-rounding cases with the random byte of
 * every element (sr.json, below), golden suites of block and tensor cases
 * per recipe and scale layout in the .npy bundle format (written by
 * nvfp4_suite_generate, from the suite case tables: no second case table),
 * a README.md that explains every file, pack.json (the index verify reads)
 * and a MANIFEST. Built in a hidden folder beside DIR and swapped into
 * place, like a suite; every byte depends only on the tool version and
 * the options (the suites of the default set or of one recipe). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
#include "nvfp4/trace.h"
#include "verify/pack_internal.h"
#include "verify/suite_internal.h"

typedef struct {
    const char *recipe, *suite;
    nvfp4_rounding round;
    nvfp4_scale_layout layout;
} pack_suite;

/* The golden suites of the default pack: every recipe family's edge cases
 * in the cuBLAS layout, the SR edge cases, and the odd shapes (where the
 * layouts' padding differs) of te in each scale layout. About 4.3 MB of
 * the pack's 4.7. */
static const pack_suite default_suites[] = {
    {"te", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"te", "edge", NVFP4_SR, NVFP4_SCALE_LAYOUT_128X4},
    {"te", "shapes", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"te", "shapes", NVFP4_RN, NVFP4_SCALE_LAYOUT_LINEAR},
    {"te", "shapes", NVFP4_RN, NVFP4_SCALE_LAYOUT_8X4},
    {"torchao", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"modelopt", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"mxfp4-rceil", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"mxfp8", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
    {"te-ue5m3", "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4},
};
#define PACK_MAX_SUITES 16

/* The suites of a pack for one recipe (opts.recipe): what the default pack
 * has for te, for that recipe: its edge cases (RN, and SR where it has SR)
 * in the cuBLAS layout and its odd shapes in each layout. */
static size_t recipe_suites(const char *recipe, pack_suite *out)
{
    static const nvfp4_scale_layout layouts[] = {NVFP4_SCALE_LAYOUT_128X4, NVFP4_SCALE_LAYOUT_LINEAR,
                                                 NVFP4_SCALE_LAYOUT_8X4};
    size_t n = 0;
    out[n++] = (pack_suite){recipe, "edge", NVFP4_RN, NVFP4_SCALE_LAYOUT_128X4};
    if (nvfp4_recipe_get_info(nvfp4_recipe_find(recipe))->supports_sr)
        out[n++] = (pack_suite){recipe, "edge", NVFP4_SR, NVFP4_SCALE_LAYOUT_128X4};
    for (size_t i = 0; i < 3; i++) out[n++] = (pack_suite){recipe, "shapes", NVFP4_RN, layouts[i]};
    return n;
}

/* The SR cases of sr.json: edge cases of the suite tables (te, seed 1),
 * each with the SR offset (4 * its index) it has in `nvfp4 golden --suite
 * edge --round sr`, so that its random bytes are those of the pack's
 * suite-te-edge-sr case of the same name (rowwise). */
static const struct {
    void (*make)(gcase *, int);
    unsigned suite_index; /* its place in the edge suite (suite_gen.c, suite_edge) */
} sr_cases[] = {{suite_edge_e2m1_ties, 0}, {suite_edge_zero_blocks, 2}, {suite_edge_specials, 5}};
#define PACK_SR_SEED 1u

static void suite_dir_name(const pack_suite *p, char *buf, size_t n)
{
    snprintf(buf, n, "suite-%s-%s-%s-%s", p->recipe, p->suite, nvfp4_rounding_name(p->round),
             nvfp4_scale_layout_name(p->layout));
}

typedef struct {
    const nvfp4_pack_opts *o;
    pack_suite suites[PACK_MAX_SUITES];
    size_t nsuites;
    const char *out, *dest;
    char command[160]; /* the generating command, without the folder */
    suite_manifest_writer manifest;
    nvfp4_error *err;
} pgen;

#define say(g, ...) suite_say((g)->o->log, (g)->o->log_ctx, __VA_ARGS__)

/* err's message with the temporary folder's name replaced by the pack's. */
static nvfp4_status pack_fail(const pgen *g, const nvfp4_error *e) { return suite_error_renamed(g->err, e, g->out, g->dest); }

/* Writes text as the pack's file rel and lists it in the MANIFEST. */
static nvfp4_status write_text(pgen *g, const char *rel, const char *text, size_t len)
{
    char path[2048];
    nvfp4_error e;
    snprintf(path, sizeof path, "%s/%s", g->out, rel);
    if (nvfp4_file_write_atomic(path, text, len, &e) || suite_manifest_hash(&g->manifest, g->out, rel, &e))
        return pack_fail(g, &e);
    say(g, "%s (%zu bytes)", rel, len);
    return NVFP4_OK;
}

/* Rewrites indented JSON text in place so that each array of scalars (a
 * column) stands on one line, "[1, 2, 3]", as a reader wants to see it: in
 * such an array every whitespace byte outside strings is layout, dropped,
 * and each comma gets one space. Returns the new length. */
static size_t inline_scalar_arrays(char *s)
{
    size_t w = 0;
    bool in_string = false, escaped = false, inline_array = false;
    for (size_t i = 0; s[i]; i++) {
        char ch = s[i];
        if (in_string) {
            in_string = escaped || ch != '"';
            escaped = !escaped && ch == '\\';
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[') {
            size_t j = i + 1;
            while (s[j] == ' ' || s[j] == '\n') j++;
            inline_array = s[j] != '{' && s[j] != '[';
        } else if (inline_array && (ch == ' ' || ch == '\n')) {
            continue;
        } else if (inline_array && ch == ']') {
            inline_array = false;
        } else if (inline_array && ch == ',') {
            s[w++] = ',';
            ch = ' ';
        }
        s[w++] = ch;
    }
    s[w] = '\0';
    return w;
}

/* Dumps j (taken) as the pack's file rel: keys in insertion order, one
 * space of indent, each column on one line, a final newline. */
static nvfp4_status write_json(pgen *g, const char *rel, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) return nvfp4_error_set(g->err, NVFP4_ENOMEM, "%s: out of memory", rel);
    size_t n = inline_scalar_arrays(text);
    char *t = realloc(text, n + 2);
    if (!t) {
        free(text);
        return nvfp4_error_set(g->err, NVFP4_ENOMEM, "%s: out of memory", rel);
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    nvfp4_status st = write_text(g, rel, t, n + 1);
    free(t);
    return st;
}

/* ---- sr.json: the quantizer under SR, with each element's random byte ------------------------------- */

/* One SR case as a table: the quantizer's rowwise output (codes, scales,
 * global amax) and, per element, the random byte and the scaled value its
 * rounding saw, as the library's trace of each block gives them. */
static nvfp4_status sr_table(pgen *g, json_t *tables, gcase *c, unsigned idx)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = "te";
    o.rounding = NVFP4_SR;
    o.seed = PACK_SR_SEED;
    o.offset = 4u * idx;
    nvfp4_quantized q;
    nvfp4_error e;
    if (nvfp4_quantize(c->x, NVFP4_DTYPE_F32, c->rows, c->cols, &o, &q, &e))
        return nvfp4_error_set(g->err, e.status, "sr.json: %s: %s", c->name, e.message);
    char desc[256];
    snprintf(desc, sizeof desc, "%s under stochastic rounding: %s", c->name, c->desc);
    pack_table t;
    nvfp4_status st = NVFP4_OK;
    bool ok = pack_table_new(&t, tables, c->name, desc) &&
              !json_object_set_new(t.obj, "recipe", json_string("te")) &&
              !json_object_set_new(t.obj, "rows", json_integer((json_int_t)c->rows)) &&
              !json_object_set_new(t.obj, "cols", json_integer((json_int_t)c->cols)) &&
              !json_object_set_new(t.obj, "block", json_string("1x16")) &&
              !json_object_set_new(t.obj, "seed", json_integer(PACK_SR_SEED)) &&
              !json_object_set_new(t.obj, "offset", json_integer((json_int_t)o.offset));
    json_t *xb = pack_col(&t, "x_bits", false, false), *rb = pack_col(&t, "rbits", false, false),
           *yb = pack_col(&t, "scaled_bits", false, false), *code = pack_col(&t, "code", true, false),
           *scale = pack_col(&t, "scale", true, false), *amax = pack_col(&t, "amax_bits", true, true);
    ok = ok && pack_put_int(amax, pack_f32_bits(q.row.amax));
    size_t nb = c->cols / 16;
    for (size_t r = 0; ok && !st && r < c->rows; r++)
        for (size_t b = 0; ok && !st && b < nb; b++) {
            nvfp4_trace_block tb;
            if (nvfp4_trace(c->x, NVFP4_DTYPE_F32, c->rows, c->cols, &o, r, b, &tb, &e)) {
                st = nvfp4_error_set(g->err, e.status, "sr.json: %s: %s", c->name, e.message);
                break;
            }
            ok = pack_put_int(scale, q.row.scale[r * nb + b]);
            for (size_t i = 0; ok && i < 16; i++) {
                size_t j = r * c->cols + b * 16 + i;
                const nvfp4_trace_elem *el = &tb.elem[i];
                if (el->code != nvfp4_unpack(q.row.data, j) || tb.scale != q.row.scale[r * nb + b])
                    st = nvfp4_error_set(g->err, NVFP4_EINVAL, "sr.json: %s: the trace of row %zu block %zu "
                                         "differs from the quantizer", c->name, r, b);
                ok = pack_put_int(xb, pack_f32_bits(c->x[j])) && pack_put_int(rb, el->rbits) &&
                     pack_put_int(yb, pack_f32_bits(el->scaled)) && pack_put_int(code, el->code);
            }
        }
    nvfp4_quantized_free(&q);
    if (!st && !ok) st = nvfp4_error_set(g->err, NVFP4_ENOMEM, "sr.json: out of memory");
    return st;
}

static nvfp4_status write_sr(pgen *g)
{
    json_t *tables, *f = pack_vectors_file("sr", "NVFP4 (recipe te) tensors quantized with stochastic rounding: "
                                                 "each element's input, random byte and scaled value, the "
                                                 "codes, block scales and global amax", &tables);
    if (!f) return nvfp4_error_set(g->err, NVFP4_ENOMEM, "sr.json: out of memory");
    nvfp4_status st = NVFP4_OK;
    for (unsigned k = 0; !st && k < sizeof sr_cases / sizeof sr_cases[0]; k++) {
        gcase c = {0};
        sr_cases[k].make(&c, 1);
        st = c.x ? sr_table(g, tables, &c, sr_cases[k].suite_index)
                 : nvfp4_error_set(g->err, NVFP4_ENOMEM, "out of memory");
        free(c.x);
    }
    if (st) {
        json_decref(f);
        return st;
    }
    return write_json(g, "sr.json", f);
}

/* ---- the codec vectors, the suites, the index and the README ---------------------------------------- */

static const struct {
    const char *file;
    json_t *(*make)(void);
} vector_files[] = {{"e2m1.json", pack_vectors_e2m1},
                    {"e4m3.json", pack_vectors_e4m3},
                    {"ue8m0.json", pack_vectors_ue8m0},
                    {"ue5m3.json", pack_vectors_ue5m3}};
#define PACK_NVECTORS (sizeof vector_files / sizeof vector_files[0])

static nvfp4_status write_vectors(pgen *g)
{
    nvfp4_status st = NVFP4_OK;
    for (size_t i = 0; !st && i < PACK_NVECTORS; i++) {
        json_t *j = vector_files[i].make();
        st = j ? write_json(g, vector_files[i].file, j)
               : nvfp4_error_set(g->err, NVFP4_ENOMEM, "%s: out of memory", vector_files[i].file);
    }
    return st ? st : write_sr(g);
}

static void forward_log(void *ctx, const char *line)
{
    const pgen *g = ctx;
    say(g, "  %s", line);
}

static nvfp4_status write_suites(pgen *g)
{
    for (size_t i = 0; i < g->nsuites; i++) {
        const pack_suite *p = &g->suites[i];
        char name[128], path[2048], rel[256];
        suite_dir_name(p, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", g->out, name);
        nvfp4_suite_opts so;
        nvfp4_suite_opts_init(&so);
        so.suite = p->suite;
        so.recipe = p->recipe;
        so.round = p->round;
        so.layout = p->layout;
        so.format = "npy";
        so.log = forward_log;
        so.log_ctx = g;
        say(g, "%s", name);
        nvfp4_error e;
        if (nvfp4_suite_generate(path, &so, &e)) return pack_fail(g, &e);
        snprintf(rel, sizeof rel, "%s/MANIFEST", name);
        if (suite_manifest_hash(&g->manifest, g->out, rel, &e)) return pack_fail(g, &e);
    }
    return NVFP4_OK;
}

static json_t *index_json(const pgen *g)
{
    json_t *j = json_object(), *vec = json_array(), *suites = json_array();
    if (!j || !vec || !suites) {
        json_decref(j), json_decref(vec), json_decref(suites);
        return NULL;
    }
    json_object_set_new(j, "format", json_string(PACK_FORMAT));
    json_object_set_new(j, "format_version", json_string(PACK_FORMAT_VERSION));
    json_object_set_new(j, "tool", json_string("nvfp4kit"));
    json_object_set_new(j, "tool_version", json_string(nvfp4_version()));
    json_object_set_new(j, "generator", json_string(g->command));
    for (size_t i = 0; i < PACK_NVECTORS; i++) json_array_append_new(vec, json_string(vector_files[i].file));
    json_array_append_new(vec, json_string("sr.json"));
    json_object_set_new(j, "vectors", vec);
    for (size_t i = 0; i < g->nsuites; i++) {
        const pack_suite *p = &g->suites[i];
        char name[128];
        suite_dir_name(p, name, sizeof name);
        json_t *s = json_object();
        json_object_set_new(s, "dir", json_string(name));
        json_object_set_new(s, "recipe", json_string(p->recipe));
        json_object_set_new(s, "suite", json_string(p->suite));
        json_object_set_new(s, "rounding", json_string(nvfp4_rounding_name(p->round)));
        json_object_set_new(s, "scale_layout", json_string(nvfp4_scale_layout_name(p->layout)));
        json_array_append_new(suites, s);
    }
    json_object_set_new(j, "suites", suites);
    return j; /* a failed set above (out of memory) only drops a key: verify then names what is missing */
}

/* The README: pack_readme.c's text with the suites listed. */
static nvfp4_status write_readme(pgen *g)
{
    nvfp4_strbuf b = {0};
    pack_readme(&b);
    for (size_t i = 0; i < g->nsuites; i++) {
        const pack_suite *p = &g->suites[i];
        char name[128];
        suite_dir_name(p, name, sizeof name);
        nvfp4_strbuf_printf(&b, "| `%s/` | %s | %s | %s | %s |\n", name, p->recipe, p->suite,
                            nvfp4_rounding_name(p->round), nvfp4_scale_layout_name(p->layout));
    }
    pack_readme_tail(&b);
    char *text = nvfp4_strbuf_take(&b);
    if (!text) return nvfp4_error_set(g->err, NVFP4_ENOMEM, "README.md: out of memory");
    nvfp4_status st = write_text(g, "README.md", text, strlen(text));
    nvfp4_free(text);
    return st;
}

static nvfp4_status generate_into(pgen *g)
{
    char head[512];
    snprintf(head, sizeof head,
             "# nvfp4kit golden suite: a golden pack (README.md); check with: sha256sum -c MANIFEST, then the same "
             "in each suite-* folder\n# tool: nvfp4kit %s\n# command: %s\n",
             nvfp4_version(), g->command);
    suite_manifest_add(&g->manifest, head);
    nvfp4_status st = write_readme(g);
    if (!st) st = write_json(g, PACK_INDEX, index_json(g));
    if (!st) st = write_vectors(g);
    if (!st) st = write_suites(g);
    if (!st && g->manifest.failed) st = nvfp4_error_set(g->err, NVFP4_ENOMEM, "out of memory");
    if (!st) {
        char mpath[2048];
        nvfp4_error e;
        snprintf(mpath, sizeof mpath, "%s/MANIFEST", g->out);
        if (nvfp4_file_write_atomic(mpath, g->manifest.text, g->manifest.len, &e)) st = pack_fail(g, &e);
    }
    return st;
}

void nvfp4_pack_opts_init(nvfp4_pack_opts *o) { memset(o, 0, sizeof *o); }

nvfp4_status nvfp4_pack_generate(const char *dir, const nvfp4_pack_opts *o, nvfp4_error *err)
{
    nvfp4_pack_opts defaults;
    if (!o) nvfp4_pack_opts_init(&defaults), o = &defaults;
    if (!dir) return nvfp4_error_set(err, NVFP4_EINVAL, "no output folder given");
    if (o->recipe && (strlen(o->recipe) > 64 || !nvfp4_recipe_find(o->recipe)))
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%.64s' (nvfp4 table --recipes lists them)",
                               o->recipe);
    if (strlen(dir) > 1500)
        return nvfp4_error_set(err, NVFP4_EINVAL, "--pack: path too long (%zu characters; at most 1500)", strlen(dir));
    nvfp4_status st = suite_check_replaceable(dir, o->force, err);
    if (st) return st;
    nvfp4_dir_txn txn;
    if ((st = nvfp4_dir_txn_begin(&txn, dir, err))) return st;
    pgen g;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.out = txn.tmp;
    g.dest = dir;
    g.err = err;
    if (o->recipe) {
        g.nsuites = recipe_suites(o->recipe, g.suites);
        snprintf(g.command, sizeof g.command, "nvfp4 golden --pack --recipe %s", o->recipe);
    } else {
        g.nsuites = sizeof default_suites / sizeof default_suites[0];
        memcpy(g.suites, default_suites, sizeof default_suites);
        snprintf(g.command, sizeof g.command, "nvfp4 golden --pack");
    }
    st = generate_into(&g);
    if (!st && (st = nvfp4_dir_txn_commit(&txn, err)) == NVFP4_OK)
        say(&g, "golden pack in %s (README.md explains every file)", dir);
    if (st) nvfp4_dir_txn_abort(&txn);
    suite_manifest_writer_free(&g.manifest);
    return st;
}
