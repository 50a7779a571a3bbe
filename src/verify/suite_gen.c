/* suite_gen.c - golden suite generation (nvfp4/suite.h): the cases of each
 * suite (suite_cases.c) quantized by the recipe, written as bundles into a
 * hidden folder beside the destination with a MANIFEST of their sha256
 * (suite_manifest.c), then swapped into place; the `mutants` suite and the
 * separating cases come from the kill search (suite_mutants.c); the
 * `grouped` suite's cases are grouped bundles (nvfp4_grouped_bundle_build),
 * checked against the grouped mutants (suite_grouped.c). No file
 * records a time or a path, so a suite regenerates byte for byte
 * (`make golden-check`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
#include "verify/suite_internal.h"
#include "verify/suite_mutants.h"

typedef struct {
    const nvfp4_suite_opts *o;
    const char *format;  /* o->format, or "safetensors" */
    const char *out;     /* the temporary folder the suite is built in */
    const char *dest;    /* the folder asked for */
    char command[512];   /* the generating command (recorded in each bundle and the MANIFEST) */
    suite_manifest_writer manifest;
    unsigned index, skipped;
    gm_state *gm;        /* which mutants the cases so far kill (suite mutants, the mutation report) */
    bool report_only;    /* the mutation report: no files */
    suite_grouped_kills gk; /* which grouped mutants the grouped cases kill (the mutation report) */
    char names[64][64];  /* the names of the mutants suite's cases */
    size_t nn;
    nvfp4_error *err;
} gen;

#define say(g, ...) suite_say((g)->o->log, (g)->o->log_ctx, __VA_ARGS__)

/* err's message with the temporary folder's name replaced by the suite's. */
static nvfp4_status suite_fail(const gen *g, const nvfp4_error *e) { return suite_error_renamed(g->err, e, g->out, g->dest); }

/* The options case number idx is quantized with. */
static void case_opts(const gen *g, const gcase *c, unsigned idx, nvfp4_quant_opts *o)
{
    nvfp4_quant_opts_init(o);
    o->recipe = g->o->recipe;
    o->rowwise = o->columnwise = true;
    o->pad = true;
    o->block = c->block;
    o->rounding = g->o->round;
    o->seed = g->o->seed;
    o->offset = 4u * idx;
    o->rht = c->rht;
    o->global_scale_inverted = g->o->global_scale_inverted;
}

/* A built bundle s of case c, with its metadata, written and hashed into the MANIFEST. */
static nvfp4_status write_set(gen *g, const gcase *c, nvfp4_tensor_set *s)
{
    nvfp4_error e;
    nvfp4_file_format ff;
    nvfp4_status st = NVFP4_OK;
    if (nvfp4_tset_meta_set(s, "case", c->name, &e) || nvfp4_tset_meta_set(s, "description", c->desc, &e) ||
        nvfp4_tset_meta_set(s, "generator", g->command, &e)) {
        st = nvfp4_error_set(g->err, e.status, "%s: %s", c->name, e.message);
    } else if (!nvfp4_file_format_parse(g->format, &ff)) {
        st = nvfp4_error_set(g->err, NVFP4_EINVAL, "bad --format '%s'", g->format);
    } else {
        char rel[256], path[2048];
        snprintf(rel, sizeof rel, "%s%s", c->name, strcmp(g->format, "safetensors") == 0 ? ".safetensors" : "");
        snprintf(path, sizeof path, "%s/%s", g->out, rel);
        if (nvfp4_tset_write(path, s, ff, &e)) st = suite_fail(g, &e);
        else {
            if (suite_manifest_hash(&g->manifest, g->out, rel, &e)) st = suite_fail(g, &e);
            say(g, "%s (%zu x %zu)", rel, c->rows, c->cols);
        }
    }
    return st;
}

/* The bundle of a quantized case, in the suite's scale layout, written. */
static nvfp4_status write_case(gen *g, const gcase *c, const void *x, const nvfp4_quantized *q)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error e;
    nvfp4_status st;
    if (nvfp4_bundle_build(q, x, c->dtype, c->rows, c->cols, &s, &e) ||
        (g->o->layout != NVFP4_SCALE_LAYOUT_128X4 && nvfp4_bundle_relayout(&s, g->o->layout, &e)))
        st = nvfp4_error_set(g->err, e.status, "%s: %s", c->name, e.message);
    else st = write_set(g, c, &s);
    nvfp4_tset_free(&s);
    return st;
}

/* A grouped case: nvfp4_quantize_grouped's options (the recipe, rowwise, RN,
 * no padding), the grouped bundle written; the mutation report verifies it
 * against each grouped mutant. A recipe that refuses grouping fails the
 * suite (every case has the same options, so none would be written). */
static nvfp4_status emit_grouped(gen *g, gcase *c)
{
    g->index++;
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = g->o->recipe;
    nvfp4_grouped q;
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error e;
    nvfp4_status st = nvfp4_quantize_grouped(c->x, c->dtype, c->rows, c->cols, c->m_sizes, c->ngroups, &o, &q, &e);
    if (st) {
        st = nvfp4_error_set(g->err, st, "%s: recipe %s: %s", c->name, g->o->recipe, e.message);
    } else {
        if (nvfp4_grouped_bundle_build(&q, c->x, c->dtype, &s, &e))
            st = nvfp4_error_set(g->err, e.status, "%s: %s", c->name, e.message);
        else if (g->report_only)
            st = suite_grouped_note(&g->gk, c->name, &s, c->x, c->dtype, c->rows, c->cols, c->m_sizes, c->ngroups, &o,
                                    g->err);
        else st = write_set(g, c, &s);
        nvfp4_grouped_free(&q);
    }
    nvfp4_tset_free(&s);
    free(c->x);
    c->x = NULL;
    return st;
}

/* Quantizes a case and writes it (or, for the mutation report, only notes
 * which mutants it kills); frees its input. */
static nvfp4_status emit(gen *g, gcase *c)
{
    unsigned idx = g->index++;
    nvfp4_quant_opts o;
    case_opts(g, c, idx, &o);
    size_t n = c->rows * c->cols;
    uint16_t *xb = NULL;
    const void *x = c->x;
    nvfp4_status st = NVFP4_OK;
    if (c->dtype == NVFP4_DTYPE_BF16) {
        if (!(xb = malloc(n * sizeof *xb))) {
            free(c->x);
            c->x = NULL;
            return nvfp4_error_set(g->err, NVFP4_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &c->x[i], 4);
            xb[i] = (uint16_t)(u >> 16); /* exact: the values are bf16 */
        }
        x = xb;
    }
    nvfp4_quantized q;
    nvfp4_error e;
    nvfp4_status qs = nvfp4_quantize(x, c->dtype, c->rows, c->cols, &o, &q, &e);
    if (qs == NVFP4_EINVAL || qs == NVFP4_EUNSUPPORTED) {
        /* The recipe does not take this block shape or the RHT: skip, and say so. */
        say(g, "%s: skipped for recipe %s: %s", c->name, g->o->recipe, e.message);
        g->skipped++;
    } else if (qs) {
        st = nvfp4_error_set(g->err, qs, "%s: %s", c->name, e.message);
    } else {
        if (g->gm) gm_note(g->gm, c->name, x, c->dtype, c->rows, c->cols, &o, &q, true);
        if (!g->report_only) st = write_case(g, c, x, &q);
    }
    nvfp4_quantized_free(&q); /* also after a failed quantize, which leaves q empty */
    free(xb);
    free(c->x);
    c->x = NULL;
    return st;
}

/* ---- the suites --------------------------------------------------------------------------------- */

static nvfp4_status suite_edge(gen *g)
{
    void (*const fns[])(gcase *, int) = {suite_edge_e2m1_ties, suite_edge_e4m3_ties, suite_edge_zero_blocks,
                                         suite_edge_underflow, suite_edge_outliers, suite_edge_specials};
    nvfp4_status rc = NVFP4_OK;
    for (size_t i = 0; !rc && i < sizeof fns / sizeof fns[0]; i++) {
        gcase c = {0};
        fns[i](&c, g->o->level);
        rc = emit(g, &c);
    }
    if (!rc && nvfp4_recipe_get_info(nvfp4_recipe_find(g->o->recipe))->scale_format == NVFP4_SCALEFMT_UE5M3) {
        gcase c = {0};
        suite_edge_ue5m3_ties(&c, g->o->level);
        rc = emit(g, &c);
    }
    for (int w = 0; !rc && w < 5; w++) {
        gcase c = {0};
        suite_edge_amax(&c, w);
        rc = emit(g, &c);
    }
    return rc;
}

static nvfp4_status suite_random(gen *g)
{
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(nvfp4_recipe_find(g->o->recipe));
    int kinds = info->has_global_amax && info->elem == NVFP4_ELEM_E2M1 ? 6 : 5;
    nvfp4_status rc = NVFP4_OK;
    for (int k = 0; !rc && k < kinds; k++) {
        gcase c = {0};
        suite_random_case(&c, k, g->o->level, g->o->seed);
        rc = emit(g, &c);
    }
    return rc;
}

static nvfp4_status suite_shapes(gen *g)
{
    static const size_t l1[][2] = {{1, 16}, {3, 48}, {130, 48}, {128, 80}, {17, 33}};
    static const size_t l2[][2] = {{1, 16}, {3, 48}, {130, 48}, {128, 80}, {17, 33}, {257, 200}, {512, 272}, {33, 1000}};
    const size_t(*s)[2] = g->o->level >= 2 ? l2 : l1;
    size_t ns = g->o->level >= 2 ? sizeof l2 / sizeof l2[0] : sizeof l1 / sizeof l1[0];
    static const nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
    nvfp4_status rc = NVFP4_OK;
    for (size_t i = 0; !rc && i < ns; i++)
        for (size_t b = 0; !rc && b < 3; b++) {
            gcase c = {0};
            suite_shapes_case(&c, s[i][0], s[i][1], blocks[b], g->o->seed);
            rc = emit(g, &c);
        }
    return rc;
}

static nvfp4_status suite_grouped(gen *g)
{
    nvfp4_status rc = NVFP4_OK;
    for (size_t k = 0; !rc && k < suite_grouped_count(); k++) {
        gcase c = {0};
        suite_grouped_case(&c, k, g->o->seed);
        rc = emit_grouped(g, &c);
    }
    return rc;
}

/* ---- the mutants suite (the kill search: suite_mutants.c) --------------------------------------- */

/* The name of the next case of the mutants suite ("mutants-NAME"). */
static const char *next_name(gen *g, const char *fmt, const char *name)
{
    char *slot = g->names[g->nn < 63 ? g->nn : 63]; /* the loops stop at 64 names; never past the table */
    g->nn++;
    snprintf(slot, sizeof g->names[0], fmt, name);
    return slot;
}

/* A pool case is emitted only when it kills a mutant that every case so far
 * leaves alive: it is quantized with the options emit would give it and
 * each live mutant compared with it. */
static nvfp4_status try_case(gen *g, gcase *c, const char *name)
{
    c->name = name;
    nvfp4_quant_opts o;
    case_opts(g, c, g->index, &o);
    nvfp4_quantized q;
    nvfp4_error e;
    size_t kills = 0;
    if (c->dtype == NVFP4_DTYPE_F32 && nvfp4_quantize(c->x, c->dtype, c->rows, c->cols, &o, &q, &e) == NVFP4_OK) {
        kills = gm_note(g->gm, name, c->x, c->dtype, c->rows, c->cols, &o, &q, false);
        nvfp4_quantized_free(&q);
    }
    if (!kills) {
        free(c->x);
        c->x = NULL;
        return NVFP4_OK;
    }
    return emit(g, c);
}

/* Boundary-seeking inputs, then the 4over6 tile ties, while a mutant lives. */
static nvfp4_status mutants_boundary(gen *g)
{
    nvfp4_status rc = NVFP4_OK;
    for (size_t k = 0; !rc && k < gm_boundary_count() && gm_any_alive(g->gm); k++) {
        gcase c = {0};
        char num[32];
        if ((rc = gm_boundary_case(g->o->recipe, k, &c.x, &c.rows, &c.cols, &c.desc, g->err))) break;
        snprintf(num, sizeof num, "%zu", k);
        rc = try_case(g, &c, next_name(g, "mutants-boundary-%s", num));
    }
    if (!rc && gm_any_alive(g->gm)) { /* 4over6 on 16x16 tiles: exact ties between the candidates */
        gcase c = {0};
        if (!(rc = gm_tile_ties_case(g->o->recipe, &c.x, &c.rows, &c.cols, &c.desc, g->err)) && c.x) {
            c.block = NVFP4_BLOCK_16X16;
            rc = try_case(g, &c, next_name(g, "%s", "mutants-tile-ties"));
        }
    }
    return rc;
}

/* The edge, random and shape generators, for mutants that show only on
 * specials, the RHT, 16x16 tiles or padded layouts. */
static nvfp4_status mutants_from_pool(gen *g)
{
    void (*const edges[])(gcase *, int) = {suite_edge_specials, suite_edge_zero_blocks, suite_edge_underflow,
                                           suite_edge_outliers, suite_edge_e4m3_ties, suite_edge_e2m1_ties};
    nvfp4_status rc = NVFP4_OK;
    for (size_t i = 0; !rc && i < sizeof edges / sizeof edges[0] && gm_any_alive(g->gm); i++) {
        gcase c = {0};
        edges[i](&c, g->o->level);
        rc = try_case(g, &c, next_name(g, "mutants-%s", c.name));
    }
    for (int w = 0; !rc && w < 5 && gm_any_alive(g->gm); w++) {
        gcase c = {0};
        suite_edge_amax(&c, w);
        rc = try_case(g, &c, next_name(g, "mutants-%s", c.name));
    }
    static const int kinds[] = {0, 5, 2};
    for (size_t i = 0; !rc && i < 3 && gm_any_alive(g->gm); i++) {
        gcase c = {0};
        suite_random_case(&c, kinds[i], g->o->level, g->o->seed);
        rc = try_case(g, &c, next_name(g, "mutants-%s", c.name));
    }
    static const size_t shp[][2] = {{130, 48}, {3, 48}, {17, 33}, {40, 272}};
    static const nvfp4_block blocks[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32};
    for (size_t i = 0; !rc && i < 4 && gm_any_alive(g->gm); i++)
        for (size_t b = 0; !rc && b < 3 && g->nn < 64; b++) {
            gcase c = {0};
            suite_shapes_case(&c, shp[i][0], shp[i][1], blocks[b], g->o->seed);
            rc = try_case(g, &c, next_name(g, "mutants-%s", c.name));
        }
    /* last, so that it is written only for what every case before leaves alive (MX encodes of byte 0 under RN) */
    if (!rc && gm_any_alive(g->gm) && g->nn < 64) {
        gcase c = {0};
        suite_edge_ue8m0_min_scale(&c, g->o->level);
        rc = try_case(g, &c, next_name(g, "mutants-%s", c.name));
    }
    return rc;
}

/* Inputs that separate the candidates no case tells apart, then the pairs
 * left unseparated as notes. */
static nvfp4_status mutants_separating(gen *g)
{
    nvfp4_status rc = NVFP4_OK;
    for (unsigned k = 1; !rc && g->nn < 64; k++) {
        gcase c = {0};
        char num[32];
        if ((rc = gm_separating_case(g->gm, g->o->seed, 4u * g->index, &c.x, &c.rows, &c.cols, &c.block, &c.desc)) ||
            !c.x)
            break;
        snprintf(num, sizeof num, "%u", k);
        c.name = next_name(g, "separate-%s", num);
        rc = emit(g, &c);
    }
    if (!rc && !g->report_only && g->o->log) {
        char *notes = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&notes, &len);
        if (f) {
            gm_print_unseparated(g->gm, f);
            fclose(f);
            char *save = NULL;
            for (char *line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                say(g, "%s", line);
        }
        free(notes);
    }
    return rc;
}

static nvfp4_status suite_mutants(gen *g)
{
    nvfp4_status rc = mutants_boundary(g);
    if (!rc) rc = mutants_from_pool(g);
    if (!rc) rc = mutants_separating(g);
    return rc;
}

/* The suites o->suite names, in their order (all: the four; grouped only by
 * its name, so that the bytes of every all suite, reference/ among them,
 * stay what they were). */
static nvfp4_status generate_cases(gen *g, const char *suite)
{
    bool all = strcmp(suite, "all") == 0;
    nvfp4_status rc = NVFP4_OK;
    if (strcmp(suite, "grouped") == 0) return suite_grouped(g);
    if (!rc && (all || strcmp(suite, "edge") == 0)) rc = suite_edge(g);
    if (!rc && (all || strcmp(suite, "random") == 0)) rc = suite_random(g);
    if (!rc && (all || strcmp(suite, "shapes") == 0)) rc = suite_shapes(g);
    if (!rc && g->gm && (all || strcmp(suite, "mutants") == 0)) rc = suite_mutants(g);
    return rc;
}

/* ---- the public calls --------------------------------------------------------------------------- */

void nvfp4_suite_opts_init(nvfp4_suite_opts *o)
{
    memset(o, 0, sizeof *o);
    o->recipe = "te";
    o->level = 1;
    o->seed = 1;
    o->round = NVFP4_RN;
    o->layout = NVFP4_SCALE_LAYOUT_128X4;
}

bool nvfp4_suite_name_valid(const char *name)
{
    static const char *const names[] = {"edge", "random", "shapes", "mutants", "grouped", "all"};
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) return true;
    return false;
}

/* What every call checks: the suite name (unless NULL is allowed), the recipe, level, rounding, format. */
static nvfp4_status check_opts(const nvfp4_suite_opts *o, bool suite_may_be_null, nvfp4_error *err)
{
    nvfp4_file_format ff;
    if (!(suite_may_be_null && !o->suite) && !nvfp4_suite_name_valid(o->suite))
        return nvfp4_error_set(err, NVFP4_EINVAL, "bad suite '%s' (edge, random, shapes, mutants, grouped or all)",
                               o->suite ? o->suite : "(none)");
    if (!o->recipe || !nvfp4_recipe_find(o->recipe))
        return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%s'", o->recipe ? o->recipe : "(none)");
    if (o->level < 1 || o->level > 2) return nvfp4_error_set(err, NVFP4_EINVAL, "bad level %d (1 or 2)", o->level);
    if (o->round != NVFP4_RN && o->round != NVFP4_SR)
        return nvfp4_error_set(err, NVFP4_EINVAL, "bad rounding (rn or sr)");
    if (o->format && !nvfp4_file_format_parse(o->format, &ff))
        return nvfp4_error_set(err, NVFP4_EINVAL, "bad --format '%s'", o->format);
    if (o->round == NVFP4_SR && !nvfp4_recipe_get_info(nvfp4_recipe_find(o->recipe))->supports_sr)
        return nvfp4_error_set(err, NVFP4_EINVAL, "recipe %s has no stochastic rounding", o->recipe);
    if (o->global_scale_inverted) { /* the plan says whether the recipe has an S_enc to hand over */
        nvfp4_quant_opts q;
        nvfp4_quant_opts_init(&q);
        q.recipe = o->recipe;
        q.global_scale_inverted = true;
        nvfp4_quant_plan p;
        nvfp4_status st = nvfp4_quant_plan_init(&p, &q, NVFP4_DTYPE_F32, 1, 32, err);
        if (st) return st;
    }
    bool grouped = o->suite && strcmp(o->suite, "grouped") == 0;
    if (grouped && o->round == NVFP4_SR)
        return nvfp4_error_set(err, NVFP4_EINVAL, "suite grouped is RN only (grouped quantization has no stochastic "
                               "rounding)");
    if (grouped && o->layout != NVFP4_SCALE_LAYOUT_128X4)
        return nvfp4_error_set(err, NVFP4_EINVAL, "suite grouped is 128x4 only (its scale_swizzled is one padded "
                               "128x4 segment per expert)");
    if (grouped && o->global_scale_inverted)
        return nvfp4_error_set(err, NVFP4_EINVAL, "suite grouped does not take the inverted global scale (grouped "
                               "quantization hands no S_enc over)");
    return NVFP4_OK;
}

/* The command without --out, so the MANIFEST does not depend on where it was written. */
static void generator_command(gen *g)
{
    const nvfp4_suite_opts *o = g->o;
    bool other_layout = o->layout != NVFP4_SCALE_LAYOUT_128X4;
    snprintf(g->command, sizeof g->command,
             "nvfp4 golden --suite %s --recipe %s --level %d --seed %llu --round %s%s%s%s%s%s", o->suite, o->recipe,
             o->level, (unsigned long long)o->seed, nvfp4_rounding_name(o->round), o->format ? " --format " : "",
             o->format ? o->format : "", other_layout ? " --scale-layout " : "",
             other_layout ? nvfp4_scale_layout_name(o->layout) : "",
             o->global_scale_inverted ? " --global-scale-inverted" : "");
}

static void manifest_header(gen *g)
{
    char head[1024];
    const nvfp4_suite_opts *o = g->o;
    snprintf(head, sizeof head,
             "# nvfp4kit golden suite (docs/file-formats.md); check with: sha256sum -c MANIFEST\n"
             "# tool: nvfp4kit %s\n# command: %s\n# recipe: %s\n# rounding: %s\n# seed: %llu\n# level: %d\n",
             nvfp4_version(), g->command, o->recipe, nvfp4_rounding_name(o->round), (unsigned long long)o->seed,
             o->level);
    suite_manifest_add(&g->manifest, head);
}

/* The cases into txn's folder, then the MANIFEST. */
static nvfp4_status generate_into(gen *g)
{
    const char *suite = g->o->suite;
    if (strcmp(suite, "all") == 0 || strcmp(suite, "mutants") == 0) {
        g->gm = gm_new(g->o->recipe, g->o->round, false, g->o->layout);
        if (!g->gm) return nvfp4_error_set(g->err, NVFP4_ENOMEM, "out of memory");
    }
    nvfp4_status rc = generate_cases(g, suite);
    if (rc) return rc;
    if (g->manifest.failed) return nvfp4_error_set(g->err, NVFP4_ENOMEM, "out of memory");
    char mpath[2048];
    nvfp4_error e;
    snprintf(mpath, sizeof mpath, "%s/MANIFEST", g->out);
    if (nvfp4_file_write_atomic(mpath, g->manifest.text, g->manifest.len, &e)) return suite_fail(g, &e);
    return NVFP4_OK;
}

nvfp4_status nvfp4_suite_generate(const char *dir, const nvfp4_suite_opts *o, nvfp4_error *err)
{
    nvfp4_suite_opts defaults;
    if (!o) nvfp4_suite_opts_init(&defaults), o = &defaults;
    nvfp4_status st = check_opts(o, false, err);
    if (st) return st;
    if (!dir) return nvfp4_error_set(err, NVFP4_EINVAL, "no output folder given");
    /* The suite's paths are DIR/NAME in 2048-byte buffers: refuse, never cut. */
    if (strlen(dir) > 1500)
        return nvfp4_error_set(err, NVFP4_EINVAL, "--out: path too long (%zu characters; at most 1500)", strlen(dir));
    if ((st = suite_check_replaceable(dir, o->force, err))) return st;
    nvfp4_dir_txn txn;
    if ((st = nvfp4_dir_txn_begin(&txn, dir, err))) return st;
    gen g;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.format = o->format ? o->format : "safetensors";
    g.out = txn.tmp;
    g.dest = dir;
    g.err = err;
    generator_command(&g);
    manifest_header(&g);
    st = generate_into(&g);
    if (!st && (st = nvfp4_dir_txn_commit(&txn, err)) == NVFP4_OK)
        say(&g, "%u bundles (%u skipped) and MANIFEST in %s", g.index - g.skipped, g.skipped, dir);
    if (st) nvfp4_dir_txn_abort(&txn); /* nothing of a failed run stays; an old suite stays whole */
    gm_free(g.gm);
    suite_manifest_writer_free(&g.manifest);
    return st;
}

nvfp4_status nvfp4_suite_mutation_report(const nvfp4_suite_opts *o, bool json, char **text, int *verdict,
                                         nvfp4_error *err)
{
    *text = NULL;
    *verdict = 1;
    nvfp4_suite_opts defaults;
    if (!o) nvfp4_suite_opts_init(&defaults), o = &defaults;
    nvfp4_status st = check_opts(o, true, err);
    if (st) return st;
    gen g;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.format = o->format ? o->format : "safetensors";
    g.err = err;
    g.report_only = true;
    const char *suite = o->suite ? o->suite : "all";
    g.gm = gm_new(o->recipe, o->round, true, o->layout);
    if (!g.gm) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    g.gk.global_amax = nvfp4_recipe_get_info(nvfp4_recipe_find(o->recipe))->has_global_amax;
    st = generate_cases(&g, suite);
    size_t len = 0;
    FILE *f = st ? NULL : open_memstream(text, &len);
    if (!st && !f) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (f) {
        *verdict = strcmp(suite, "grouped") == 0 ? suite_grouped_report(&g.gk, o->recipe, json, f)
                                                 : gm_report(g.gm, suite, json, f);
        fclose(f);
    }
    gm_free(g.gm);
    return st;
}
