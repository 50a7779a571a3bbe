/*
 * config.c - studies as JSON files (docs/studies.md, "Study configs"): a
 * study's model, data, training knobs, steps, seeds, recipe and arms, each
 * arm a recipe change over the per-GEMM, per-operand knobs with per-layer
 * overrides by name pattern. Every field is checked on load; an error names
 * the file, the JSON path ($.arms[1].recipe.fprop.a.rounding) and the
 * problem, and unknown keys are refused with the closest known key.
 *
 * The same code applies a config to an nvfp4_train_cfg when a job starts
 * (st_config_job_cfg): loading runs it once per arm, so a config that loads
 * cannot fail later.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/layercfg.h"
#include "study/studies.h"
#include "study/labfile.h"

typedef struct {
    const char *file;
    nvfp4_error *err;
    bool failed;
} ctx;

static bool fail(ctx *c, const char *path, const char *fmt, ...)
{
    if (c->failed) return false;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    nvfp4_error_set(c->err, NVFP4_EINVAL, "%s: %s: %s", c->file, path, msg);
    c->failed = true;
    return false;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 63 || lb >= 63) return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Refuses a key of obj outside the NULL-terminated list keys. */
static bool known_keys(ctx *c, const char *path, json_t *obj, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        const char *best = NULL;
        size_t bd = SIZE_MAX;
        bool ok = false;
        for (const char *const *p = keys; *p; p++) {
            if (!strcmp(*p, k)) ok = true;
            size_t d = edit_distance(k, *p);
            if (d < bd) bd = d, best = *p;
        }
        if (ok) continue;
        if (best && bd <= 2) return fail(c, path, "unknown key '%s' (did you mean '%s'?)", k, best);
        return fail(c, path, "unknown key '%s'", k);
    }
    return true;
}

/* path.key (JSON paths stay far below 200 characters) */
static void sub(char *out, size_t n, const char *path, const char *key) { snprintf(out, n, "%.200s.%.40s", path, key); }

static bool get_size(ctx *c, const char *path, json_t *v, size_t lo, size_t hi, size_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)lo || (uint64_t)json_integer_value(v) > hi)
        return fail(c, path, "expected an integer in %zu..%zu", lo, hi);
    *out = (size_t)json_integer_value(v);
    return true;
}

static bool get_float(ctx *c, const char *path, json_t *v, double lo, double hi, float *out)
{
    if (!json_is_number(v) || !(json_number_value(v) >= lo && json_number_value(v) <= hi))
        return fail(c, path, "expected a number in [%g, %g]", lo, hi);
    *out = (float)json_number_value(v);
    return true;
}

/* One of names (NULL-terminated): its index. */
static bool get_enum(ctx *c, const char *path, json_t *v, const char *const *names, int *out)
{
    const char *s = json_string_value(v);
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        if (s && !strcmp(s, names[i])) {
            *out = i;
            return true;
        }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", names[i]);
    }
    if (!s) return fail(c, path, "expected one of %s", list);
    return fail(c, path, "expected one of %s, got \"%s\"", list, s);
}

/* ---- one operand: a string (nvfp4_sq_cfg_parse, every field) or an object (the named fields) */
static bool operand(ctx *c, const char *path, json_t *v, nvfp4_sq_cfg *q, unsigned *knobs)
{
    if (json_is_string(v)) {
        if (!nvfp4_sq_cfg_parse(json_string_value(v), q))
            return fail(c, path, "\"%s\" is not an operand description (such as \"nvfp4/16x16/sr\", \"bf16\", "
                                 "\"mxfp4/rht32\")", json_string_value(v));
        *knobs = NVFP4_KNOB_ALL;
        return true;
    }
    if (!json_is_object(v)) return fail(c, path, "expected an operand description string or an object of knobs");
    static const char *const keys[] = {"format", "block", "scale", "rounding", "prescale34", "rht", "rht_signs",
                                       "rht_fp32", NULL};
    static const char *const formats[] = {"fp32", "bf16", "nvfp4", "mxfp4", "fp8", "mxfp8", NULL};
    static const char *const blocks[] = {"1x16", "16x16", "1x32", "default", NULL};
    static const nvfp4_block block_of[] = {NVFP4_BLOCK_1X16, NVFP4_BLOCK_16X16, NVFP4_BLOCK_1X32, NVFP4_BLOCK_DEFAULT};
    static const char *const scales[] = {"e4m3", "e4m3-up", "fp32-scale", "ue8m0-floor", "ue8m0-ceil", "default", NULL};
    static const char *const roundings[] = {"rn", "sr", NULL};
    static const char *const signs[] = {"fixed", "per-step", "none", NULL};
    if (!known_keys(c, path, v, keys)) return false;
    char p[512];
    json_t *x;
    int e;
    if ((x = json_object_get(v, "format"))) {
        sub(p, sizeof p, path, "format");
        if (!get_enum(c, p, x, formats, &e)) return false;
        q->format = (nvfp4_sq_format)e;
        *knobs |= NVFP4_KNOB_FORMAT;
    }
    if ((x = json_object_get(v, "block"))) {
        sub(p, sizeof p, path, "block");
        if (!get_enum(c, p, x, blocks, &e)) return false;
        q->block = block_of[e];
        *knobs |= NVFP4_KNOB_BLOCK;
    }
    if ((x = json_object_get(v, "scale"))) {
        sub(p, sizeof p, path, "scale");
        if (!get_enum(c, p, x, scales, &e)) return false;
        q->scale = (nvfp4_sq_scale)e;
        *knobs |= NVFP4_KNOB_SCALE;
    }
    if ((x = json_object_get(v, "rounding"))) {
        sub(p, sizeof p, path, "rounding");
        if (!get_enum(c, p, x, roundings, &e)) return false;
        q->rounding = e ? NVFP4_SR : NVFP4_RN;
        *knobs |= NVFP4_KNOB_ROUNDING;
    }
    if ((x = json_object_get(v, "prescale34"))) {
        sub(p, sizeof p, path, "prescale34");
        if (!json_is_boolean(x)) return fail(c, p, "expected true or false");
        q->prescale34 = json_is_true(x);
        *knobs |= NVFP4_KNOB_PRESCALE34;
    }
    if ((x = json_object_get(v, "rht"))) {
        size_t d;
        sub(p, sizeof p, path, "rht");
        if (!get_size(c, p, x, 0, 128, &d)) return false;
        if (d && (d < 4 || (d & (d - 1)))) return fail(c, p, "expected 0 (off) or a power of two in 4..128, got %zu", d);
        q->rht = (unsigned)d;
        *knobs |= NVFP4_KNOB_RHT;
    }
    if ((x = json_object_get(v, "rht_signs"))) {
        sub(p, sizeof p, path, "rht_signs");
        if (!get_enum(c, p, x, signs, &e)) return false;
        q->rht_signs = (nvfp4_sq_rht_signs)e;
        *knobs |= NVFP4_KNOB_RHT_SIGNS;
    }
    if ((x = json_object_get(v, "rht_fp32"))) {
        sub(p, sizeof p, path, "rht_fp32");
        if (!json_is_boolean(x)) return fail(c, p, "expected true or false");
        q->rht_fp32 = json_is_true(x);
        *knobs |= NVFP4_KNOB_RHT_FP32;
    }
    return true;
}

/* The operand keys of a recipe or a layer override ("all", "fprop", "dgrad",
 * "wgrad", each GEMM {"a", "b", "both"}) applied to q; knobs[g][o] collects
 * which fields were set. */
static bool gemm_operands(ctx *c, const char *path, json_t *obj, nvfp4_sq_cfg q[3][2], unsigned knobs[3][2])
{
    static const char *const gemms[3] = {"fprop", "dgrad", "wgrad"};
    static const char *const ops[] = {"both", "a", "b", NULL};
    char p[512], pp[600];
    json_t *x;
    if ((x = json_object_get(obj, "all"))) {
        sub(p, sizeof p, path, "all");
        for (int g = 0; g < 3; g++)
            for (int o = 0; o < 2; o++)
                if (!operand(c, p, x, &q[g][o], &knobs[g][o])) return false;
    }
    for (int g = 0; g < 3; g++) {
        json_t *gv = json_object_get(obj, gemms[g]);
        if (!gv) continue;
        sub(p, sizeof p, path, gemms[g]);
        if (!json_is_object(gv)) return fail(c, p, "expected an object with \"a\", \"b\" or \"both\"");
        if (!known_keys(c, p, gv, ops)) return false;
        for (int k = 0; k < 3; k++) {
            json_t *ov = json_object_get(gv, ops[k]);
            if (!ov) continue;
            sub(pp, sizeof pp, p, ops[k]);
            for (int o = 0; o < 2; o++)
                if ((k == 0 || k == o + 1) && !operand(c, pp, ov, &q[g][o], &knobs[g][o])) return false;
        }
    }
    return true;
}

static bool get_hp_format(ctx *c, const char *path, json_t *v, nvfp4_sq_format *out)
{
    static const char *const names[] = {"fp32", "bf16", NULL};
    int e;
    if (!get_enum(c, path, v, names, &e)) return false;
    *out = e ? NVFP4_SQ_BF16 : NVFP4_SQ_FP32;
    return true;
}

static bool layer_override(ctx *c, const char *path, json_t *v, nvfp4_recipe_cfg *r)
{
    static const char *const keys[] = {"match", "hp", "all", "fprop", "dgrad", "wgrad", NULL};
    if (!json_is_object(v)) return fail(c, path, "expected an object {\"match\": PATTERN, ...}");
    if (!known_keys(c, path, v, keys)) return false;
    if (r->n_overrides >= NVFP4_RECIPE_MAX_OVERRIDES)
        return fail(c, path, "at most %d layer overrides per recipe (the study's and the arm's together)",
                    NVFP4_RECIPE_MAX_OVERRIDES);
    nvfp4_layer_override *o = &r->overrides[r->n_overrides];
    memset(o, 0, sizeof *o);
    o->hp = -1;
    char p[512];
    json_t *m = json_object_get(v, "match"), *hp = json_object_get(v, "hp");
    sub(p, sizeof p, path, "match");
    if (!json_is_string(m) || !json_string_length(m) || json_string_length(m) >= sizeof o->match)
        return fail(c, p, "expected a layer-name pattern (fnmatch glob such as \"block*.mlp.*\"), 1..%zu characters",
                    sizeof o->match - 1);
    strcpy(o->match, json_string_value(m));
    if (hp) {
        sub(p, sizeof p, path, "hp");
        if (!json_is_boolean(hp)) return fail(c, p, "expected true (high precision) or false (quantized)");
        o->hp = json_is_true(hp);
    }
    if (!gemm_operands(c, path, v, o->q, o->knobs)) return false;
    r->n_overrides++;
    return true;
}

/* The recipe keys only the GPT takes, checked once the job's model is
 * final (job_cfg); and how its high-precision blocks were last set: the
 * paper's rule is resolved then, as an arm may change n_blocks after the
 * study's recipe named the rule. */
typedef struct {
    bool paper;       /* "bf16_blocks": "paper", not overridden since */
    char path[512];   /* where bf16_blocks was last given ("" if never) */
    char train[512];  /* where bf16_training was last set true ("" if never) */
} blocks_rule;

/* "bf16_blocks": {"first": n, "last": m} (blocks; each 0 when absent) or
 * "paper" (st_paper_bf16_blocks): those blocks' linears in the
 * high-precision format, BF16 (an hp_format in the same object wins). */
static bool bf16_blocks(ctx *c, const char *path, json_t *v, nvfp4_recipe_cfg *r, blocks_rule *br)
{
    static const char *const keys[] = {"first", "last", NULL};
    snprintf(br->path, sizeof br->path, "%s", path);
    r->hp = NVFP4_SQ_BF16;
    if (json_is_string(v) && !strcmp(json_string_value(v), "paper")) {
        br->paper = true;
        return true;
    }
    if (!json_is_object(v))
        return fail(c, path, "expected \"paper\" (NVIDIA 2509.25149's first 2 and last 8 of 62 blocks, scaled) or "
                             "{\"first\": N, \"last\": M}");
    if (!known_keys(c, path, v, keys)) return false;
    char p[600];
    json_t *x;
    br->paper = false;
    r->first_hp = r->last_hp = 0;
    if ((x = json_object_get(v, "first"))) {
        sub(p, sizeof p, path, "first");
        if (!get_size(c, p, x, 0, 31, &r->first_hp)) return false;
    }
    if ((x = json_object_get(v, "last"))) {
        sub(p, sizeof p, path, "last");
        if (!get_size(c, p, x, 0, 31, &r->last_hp)) return false;
    }
    return true;
}

/* A study config's "recipe" object (a run's scheme: nvfp4_recipe_cfg)
 * applied on top of r. */
static bool scheme(ctx *c, const char *path, json_t *v, nvfp4_recipe_cfg *r, blocks_rule *br)
{
    static const char *const keys[] = {"preset", "all", "fprop", "dgrad", "wgrad", "first_hp", "last_hp",
                                       "hp_format", "bf16_blocks", "bf16_training", "layers", NULL};
    static const char *const presets[] = {"paper", "mxfp4", "fp32", NULL};
    if (!json_is_object(v)) return fail(c, path, "expected a recipe object");
    if (!known_keys(c, path, v, keys)) return false;
    char p[512];
    json_t *x;
    int e;
    if ((x = json_object_get(v, "preset"))) {
        sub(p, sizeof p, path, "preset");
        if (!get_enum(c, p, x, presets, &e)) return false;
        size_t nov = r->n_overrides; /* a preset replaces the GEMM configs, not the overrides */
        nvfp4_layer_override ov[NVFP4_RECIPE_MAX_OVERRIDES];
        memcpy(ov, r->overrides, sizeof ov);
        if (e == 0) nvfp4_recipe_cfg_paper(r);
        else if (e == 1) nvfp4_recipe_cfg_mxfp4(r);
        else nvfp4_recipe_cfg_fp32(r);
        r->n_overrides = nov;
        memcpy(r->overrides, ov, sizeof ov);
        br->paper = false; /* a preset sets its own first_hp / last_hp */
    }
    unsigned knobs[3][2] = {{0}};
    if (!gemm_operands(c, path, v, r->q, knobs)) return false;
    if ((x = json_object_get(v, "bf16_blocks"))) {
        if (json_object_get(v, "first_hp") || json_object_get(v, "last_hp"))
            return fail(c, path, "\"bf16_blocks\" and \"first_hp\" / \"last_hp\" set the same layers: give one");
        sub(p, sizeof p, path, "bf16_blocks");
        if (!bf16_blocks(c, p, x, r, br)) return false;
    }
    if ((x = json_object_get(v, "first_hp"))) {
        sub(p, sizeof p, path, "first_hp");
        if (!get_size(c, p, x, 0, 64, &r->first_hp)) return false;
        br->paper = false;
    }
    if ((x = json_object_get(v, "last_hp"))) {
        sub(p, sizeof p, path, "last_hp");
        if (!get_size(c, p, x, 0, 64, &r->last_hp)) return false;
        br->paper = false;
    }
    if ((x = json_object_get(v, "hp_format"))) {
        sub(p, sizeof p, path, "hp_format");
        if (!get_hp_format(c, p, x, &r->hp)) return false;
    }
    if ((x = json_object_get(v, "bf16_training"))) {
        sub(p, sizeof p, path, "bf16_training");
        if (!json_is_boolean(x)) return fail(c, p, "expected true or false");
        r->bf16_training = json_is_true(x);
        if (r->bf16_training) snprintf(br->train, sizeof br->train, "%s", p);
    }
    if ((x = json_object_get(v, "layers"))) {
        sub(p, sizeof p, path, "layers");
        if (!json_is_array(x)) return fail(c, p, "expected an array of layer overrides");
        size_t i;
        json_t *lv;
        json_array_foreach(x, i, lv) {
            char pi[600];
            snprintf(pi, sizeof pi, "%.200s[%zu]", p, i);
            if (!layer_override(c, pi, lv, r)) return false;
        }
    }
    return true;
}

static bool model(ctx *c, const char *path, json_t *v, nvfp4_model_cfg *m)
{
    static const char *const keys[] = {"d_in", "d_model", "d_hidden", "d_out", "n_blocks", "block_kind", "act",
                                       "loss", "vocab", "ctx", "emb_dim", "n_heads", "seq_len", "norm",
                                       "untied_head", NULL};
    static const char *const kinds[] = {"plain", "residual", NULL};
    static const char *const acts[] = {"relu", "sqrelu", "gelu", "none", NULL};
    static const char *const losses[] = {"mse", "ce", NULL};
    static const char *const norms[] = {"rms", "layer", NULL};
    if (!json_is_object(v)) return fail(c, path, "expected a model object");
    if (!known_keys(c, path, v, keys)) return false;
    struct {
        const char *k;
        size_t *f, hi;
    } sizes[] = {{"d_in", &m->d_in, 1 << 16},      {"d_model", &m->d_model, 1 << 16}, {"d_hidden", &m->d_hidden, 1 << 16},
                 {"d_out", &m->d_out, 1 << 16},    {"n_blocks", &m->n_blocks, 31},    {"vocab", &m->vocab, 1 << 16},
                 {"ctx", &m->ctx, 1024},           {"emb_dim", &m->emb_dim, 1 << 16}, {"n_heads", &m->n_heads, 256},
                 {"seq_len", &m->seq_len, 1 << 16}};
    char p[512];
    json_t *x;
    int e;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if ((x = json_object_get(v, sizes[i].k))) {
            sub(p, sizeof p, path, sizes[i].k);
            if (!get_size(c, p, x, 0, sizes[i].hi, sizes[i].f)) return false;
        }
    struct {
        const char *k;
        const char *const *names;
        int *f;
    } enums[] = {{"block_kind", kinds, (int *)&m->block_kind}, {"act", acts, (int *)&m->act},
                 {"loss", losses, (int *)&m->loss}, {"norm", norms, (int *)&m->norm}};
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
        if ((x = json_object_get(v, enums[i].k))) {
            sub(p, sizeof p, path, enums[i].k);
            if (!get_enum(c, p, x, enums[i].names, &e)) return false;
            *enums[i].f = e;
        }
    if ((x = json_object_get(v, "untied_head"))) {
        sub(p, sizeof p, path, "untied_head");
        if (!json_is_boolean(x)) return fail(c, p, "expected true or false");
        m->untied_head = json_is_true(x);
    }
    return true;
}

static bool train(ctx *c, const char *path, json_t *v, nvfp4_train_cfg *t)
{
    static const char *const keys[] = {"batch", "log_every", "lr", "lr_min_frac", "warmup_frac", "decay_frac",
                                       "beta1", "beta2", "adam_eps", "weight_decay", "momentum", "init_scale",
                                       "label_noise", "diverge_factor", "grad_clip", "schedule", "optimizer",
                                       "data", "heldout_tokens", "heldout_evals", "accum_steps", "probe_every",
                                       "probe_draws", "probe_scale", NULL};
    static const char *const scheds[] = {"cosine", "wsd", "constant", NULL};
    static const char *const opts[] = {"adam", "sgd", NULL};
    static const char *const datas[] = {"markov", "fortunes", NULL};
    if (!json_is_object(v)) return fail(c, path, "expected a training object");
    if (!known_keys(c, path, v, keys)) return false;
    struct {
        const char *k;
        float *f;
        double lo, hi;
    } floats[] = {{"lr", &t->lr, 0, 10},
                  {"lr_min_frac", &t->lr_min_frac, 0, 1},
                  {"warmup_frac", &t->warmup_frac, 0, 1},
                  {"decay_frac", &t->decay_frac, 0, 1},
                  {"beta1", &t->beta1, 0, 1},
                  {"beta2", &t->beta2, 0, 1},
                  {"adam_eps", &t->adam_eps, 0, 1},
                  {"weight_decay", &t->weight_decay, 0, 10},
                  {"momentum", &t->momentum, 0, 1},
                  {"init_scale", &t->init_scale, 0, 100},
                  {"label_noise", &t->label_noise, 0, 100},
                  {"diverge_factor", &t->diverge_factor, 0, 1e30},
                  {"grad_clip", &t->grad_clip, 0, 1e30}};
    char p[512];
    json_t *x;
    int e;
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
        if ((x = json_object_get(v, floats[i].k))) {
            sub(p, sizeof p, path, floats[i].k);
            if (!get_float(c, p, x, floats[i].lo, floats[i].hi, floats[i].f)) return false;
        }
    if ((x = json_object_get(v, "batch"))) {
        sub(p, sizeof p, path, "batch");
        if (!get_size(c, p, x, 1, 1 << 20, &t->batch)) return false;
    }
    if ((x = json_object_get(v, "log_every"))) {
        sub(p, sizeof p, path, "log_every");
        if (!get_size(c, p, x, 0, SIZE_MAX >> 1, &t->log_every)) return false;
    }
    if ((x = json_object_get(v, "heldout_tokens"))) {
        sub(p, sizeof p, path, "heldout_tokens");
        if (!get_size(c, p, x, 0, (size_t)1 << 30, &t->heldout_tokens)) return false;
    }
    if ((x = json_object_get(v, "heldout_evals"))) {
        sub(p, sizeof p, path, "heldout_evals");
        if (!get_size(c, p, x, 0, 1000, &t->heldout_evals)) return false;
    }
    if ((x = json_object_get(v, "accum_steps"))) {
        sub(p, sizeof p, path, "accum_steps");
        if (!get_size(c, p, x, 1, 4096, &t->accum_steps)) return false;
    }
    if ((x = json_object_get(v, "probe_every"))) {
        sub(p, sizeof p, path, "probe_every");
        if (!get_size(c, p, x, 0, SIZE_MAX >> 1, &t->probe_every)) return false;
    }
    if ((x = json_object_get(v, "probe_draws"))) {
        sub(p, sizeof p, path, "probe_draws");
        if (!get_size(c, p, x, 1, 64, &t->probe_draws)) return false;
    }
    if ((x = json_object_get(v, "probe_scale"))) {
        sub(p, sizeof p, path, "probe_scale");
        if (!get_size(c, p, x, 1, 64, &t->probe_scale)) return false;
    }
    if ((x = json_object_get(v, "schedule"))) {
        sub(p, sizeof p, path, "schedule");
        if (!get_enum(c, p, x, scheds, &e)) return false;
        t->sched = (nvfp4_schedule)e;
    }
    if ((x = json_object_get(v, "optimizer"))) {
        sub(p, sizeof p, path, "optimizer");
        if (!get_enum(c, p, x, opts, &e)) return false;
        t->opt = (nvfp4_optimizer)e;
    }
    if ((x = json_object_get(v, "data"))) {
        sub(p, sizeof p, path, "data");
        if (!get_enum(c, p, x, datas, &e)) return false;
        t->data = (nvfp4_data)e;
    }
    return true;
}

/* "80%" of the arm's steps (steps * 80 / 100, rounded down) or a step number. */
static bool switch_step(ctx *c, const char *path, json_t *v, size_t steps, size_t *out)
{
    if (json_is_integer(v)) return get_size(c, path, v, 0, SIZE_MAX >> 1, out);
    const char *s = json_string_value(v);
    unsigned pct;
    char tail[4];
    if (!s || sscanf(s, "%u%3s", &pct, tail) != 2 || strcmp(tail, "%") || pct > 100)
        return fail(c, path, "expected a step number or a percentage of the arm's steps such as \"80%%\"");
    *out = steps * pct / 100;
    return true;
}

/* ---- the study ----------------------------------------------------------------- */
struct st_config {
    char *file, *name, *claim;
    json_t *root;
    size_t seeds, steps, quick_steps, narms;
};

nvfp4_status st_config_write(const st_config *sc, const char *dir, const char *name, nvfp4_error *err)
{
    st_file sf;
    FILE *f = st_file_open(&sf, err);
    if (!f) return NVFP4_ENOMEM;
    if (json_dumpf(sc->root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
        st_file_discard(&sf);
        return nvfp4_error_set(err, NVFP4_EIO, "%s/%s: cannot write the study config", dir, name);
    }
    fputc('\n', f);
    return st_file_commit(&sf, dir, name, err);
}

char *st_config_canonical(const st_config *sc) { return json_dumps(sc->root, JSON_COMPACT | JSON_SORT_KEYS); }

static const char *const MODEL_PRESETS[] = {"mlp", "tinylm", "gpt", NULL};

/* The job config of arm a (steps: the study's step count before the arm's
 * multiplier) without the seed; the runner sets seed, steps and log_every. */
static bool job_cfg(ctx *c, const st_config *sc, size_t a, size_t steps, bool quick, nvfp4_train_cfg *t, double *mult)
{
    json_t *root = sc->root, *x, *arm = json_array_get(json_object_get(root, "arms"), a);
    int e;
    if (!get_enum(c, "$.model.preset", json_object_get(json_object_get(root, "model"), "preset"), MODEL_PRESETS, &e))
        return false;
    if (e == 0) {
        nvfp4_train_cfg_init(t);
        t->steps = steps;
        t->log_every = 0;
    } else if (e == 1) {
        st_tinylm_base(t, steps);
    } else {
        st_gpt_base(t, steps);
    }
    json_t *mo = json_deep_copy(json_object_get(root, "model"));
    json_object_del(mo, "preset");
    bool ok = model(c, "$.model", mo, &t->model);
    json_decref(mo);
    if (!ok) return false;
    if ((x = json_object_get(root, "train")) && !train(c, "$.train", x, t)) return false;
    if (quick && e == 2) t->heldout_tokens = ST_QUICK_HELDOUT_TOKENS; /* as the built-in GPT studies' */
    if (quick && (x = json_object_get(root, "quick"))) {
        json_t *qm = json_object_get(x, "model"), *qt = json_object_get(x, "train");
        if (qm && !model(c, "$.quick.model", qm, &t->model)) return false;
        if (qt && !train(c, "$.quick.train", qt, t)) return false;
    }
    blocks_rule br = {false, "", ""};
    if ((x = json_object_get(root, "recipe")) && !scheme(c, "$.recipe", x, &t->recipe, &br)) return false;
    char p[128], pp[512];
    snprintf(p, sizeof p, "$.arms[%zu]", a);
    *mult = 1.0;
    if ((x = json_object_get(arm, "steps_mult"))) {
        float m;
        sub(pp, sizeof pp, p, "steps_mult");
        if (!get_float(c, pp, x, 1e-3, 1e3, &m)) return false;
        *mult = json_number_value(x);
    }
    t->steps = (size_t)llround((double)steps * *mult);
    if ((x = json_object_get(arm, "model"))) {
        sub(pp, sizeof pp, p, "model");
        if (!model(c, pp, x, &t->model)) return false;
    }
    if ((x = json_object_get(arm, "train"))) {
        sub(pp, sizeof pp, p, "train");
        if (!train(c, pp, x, t)) return false;
    }
    if ((x = json_object_get(arm, "recipe"))) {
        sub(pp, sizeof pp, p, "recipe");
        if (!scheme(c, pp, x, &t->recipe, &br)) return false;
    }
    if (br.path[0] && t->model.arch != NVFP4_ARCH_GPT)
        return fail(c, br.path, "bf16_blocks counts transformer blocks: the GPT's (model preset \"gpt\"); other "
                                "models take first_hp / last_hp (linears)");
    if (t->recipe.bf16_training && t->model.arch != NVFP4_ARCH_GPT)
        return fail(c, br.train, "bf16_training applies to the GPT's arithmetic (model preset \"gpt\")");
    if (br.paper) st_paper_bf16_blocks(t->model.n_blocks, &t->recipe.first_hp, &t->recipe.last_hp);
    if ((x = json_object_get(arm, "switch_fwd"))) {
        sub(pp, sizeof pp, p, "switch_fwd");
        if (!switch_step(c, pp, x, t->steps, &t->switch_fwd_step)) return false;
    }
    if ((x = json_object_get(arm, "switch_bwd"))) {
        sub(pp, sizeof pp, p, "switch_bwd");
        if (!switch_step(c, pp, x, t->steps, &t->switch_bwd_step)) return false;
    }
    if (t->probe_every && t->model.arch != NVFP4_ARCH_GPT)
        return fail(c, "$.train.probe_every", "the gradient probe needs the GPT (\"model\": {\"preset\": \"gpt\"})");
    if (t->probe_scale > 1 && !t->probe_every)
        return fail(c, "$.train.probe_scale", "scales the gradient probe's batches: set probe_every too");
    if (t->accum_steps > 1 && t->model.arch != NVFP4_ARCH_GPT)
        return fail(c, "$.train.accum_steps", "gradient accumulation needs the GPT (\"model\": {\"preset\": \"gpt\"})");
    return true;
}

/* ---- values that cannot train ------------------------------------------------- */
/* The JSON path of where the job config of arm a took section.key from: the
 * arm, the quick preset, the study, or else the model preset's default. */
static void key_path(const st_config *sc, size_t a, bool quick, const char *sect, const char *key, char *out,
                     size_t n)
{
    json_t *root = sc->root, *arm = json_array_get(json_object_get(root, "arms"), a);
    const char *preset = json_string_value(json_object_get(json_object_get(root, "model"), "preset"));
    if (json_object_get(json_object_get(arm, sect), key))
        snprintf(out, n, "$.arms[%zu].%s.%s", a, sect, key);
    else if (quick && json_object_get(json_object_get(json_object_get(root, "quick"), sect), key))
        snprintf(out, n, "$.quick.%s.%s", sect, key);
    else if (json_object_get(json_object_get(root, sect), key))
        snprintf(out, n, "$.%s.%s", sect, key);
    else
        snprintf(out, n, "$.%s.%s (the \"%s\" preset's value%s)", sect, key, preset ? preset : "?",
                 quick ? ", --quick" : "");
}

#define BAD(sect, key, ...)                                                                                           \
    do {                                                                                                               \
        key_path(sc, a, quick, sect, key, p, sizeof p);                                                                \
        return fail(c, p, __VA_ARGS__);                                                                                \
    } while (0)

static bool trainable_model(ctx *c, const st_config *sc, size_t a, bool quick, const nvfp4_train_cfg *t)
{
    const nvfp4_model_cfg *m = &t->model;
    char p[400];
    if (!m->d_model) BAD("model", "d_model", "must be > 0 (a model of width 0 cannot train)");
    if (m->arch == NVFP4_ARCH_GPT) {
        struct {
            const char *k;
            size_t v;
        } need[] = {{"vocab", m->vocab},      {"seq_len", m->seq_len}, {"n_heads", m->n_heads},
                    {"d_hidden", m->d_hidden}, {"n_blocks", m->n_blocks}};
        for (size_t i = 0; i < sizeof need / sizeof *need; i++)
            if (!need[i].v) BAD("model", need[i].k, "must be > 0 in a GPT");
        if (m->d_model % m->n_heads) BAD("model", "n_heads", "%zu does not divide d_model %zu", m->n_heads, m->d_model);
        if (m->n_blocks > 15) BAD("model", "n_blocks", "a GPT has at most 15 blocks, got %zu", m->n_blocks);
        if (t->data == NVFP4_DATA_FORTUNES && m->vocab != 256)
            BAD("model", "vocab", "the fortunes text is byte tokens: vocab must be 256, got %zu", m->vocab);
        if (t->data == NVFP4_DATA_MARKOV && (m->vocab < 2 || m->vocab > 64))
            BAD("model", "vocab", "Markov data needs vocab 2..64 (its table has vocab^3 entries), got %zu", m->vocab);
        return true;
    }
    if (!m->d_out) BAD("model", "d_out", "must be > 0");
    if (m->vocab) {
        if (m->vocab < 2 || m->vocab > 256) BAD("model", "vocab", "expected 2..256 (0: no language model), got %zu", m->vocab);
        if (m->ctx < 2) BAD("model", "ctx", "a language model needs a context of at least 2 tokens, got %zu", m->ctx);
        if (!m->emb_dim) BAD("model", "emb_dim", "must be > 0 in a language model");
        if (m->d_in != m->ctx * m->emb_dim)
            BAD("model", "d_in", "must be ctx * emb_dim = %zu, got %zu", m->ctx * m->emb_dim, m->d_in);
        if (m->d_out != m->vocab) BAD("model", "d_out", "must equal vocab %zu, got %zu", m->vocab, m->d_out);
    } else if (!m->d_in) {
        BAD("model", "d_in", "must be > 0");
    }
    if (m->block_kind == NVFP4_BLOCK_RESIDUAL && !m->d_hidden)
        BAD("model", "d_hidden", "residual blocks need d_hidden > 0");
    return true;
}

static bool trainable_optimizer(ctx *c, const st_config *sc, size_t a, bool quick, const nvfp4_train_cfg *t)
{
    char p[400];
    if (!(t->lr > 0)) BAD("train", "lr", "must be > 0 (a learning rate of 0 trains nothing)");
    if (!(t->init_scale > 0)) BAD("train", "init_scale", "must be > 0 (all-zero weights never leave their symmetry)");
    if (!(t->diverge_factor > 1)) BAD("train", "diverge_factor", "must be > 1 (the loss ratio that counts as divergence)");
    if (t->opt == NVFP4_OPT_ADAM) {
        if (!(t->beta1 < 1)) BAD("train", "beta1", "must be in [0, 1): at 1 the first moment never moves from 0");
        if (!(t->beta2 < 1)) BAD("train", "beta2", "must be in [0, 1): at 1 the bias correction divides by 0");
        if (!(t->adam_eps > 0)) BAD("train", "adam_eps", "must be > 0: at 0 a zero second moment divides 0 by 0");
    } else if (!(t->momentum < 1)) {
        BAD("train", "momentum", "must be in [0, 1): at 1 the velocity never decays");
    }
    return true;
}
#undef BAD

void st_config_free(st_config *sc)
{
    if (!sc) return;
    json_decref(sc->root);
    free(sc->file);
    free(sc->name);
    free(sc->claim);
    free(sc);
}

static bool string_field(ctx *c, json_t *root, const char *key, bool required, size_t max, char **out)
{
    char p[64];
    snprintf(p, sizeof p, "$.%s", key);
    json_t *v = json_object_get(root, key);
    *out = NULL;
    if (!v && !required) return true;
    if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > max)
        return fail(c, p, "%s a string of 1..%zu characters", v ? "expected" : "missing:", max);
    *out = strdup(json_string_value(v));
    return true;
}

static bool check_top(ctx *c, st_config *sc)
{
    static const char *const keys[] = {"name", "claim", "seeds", "steps", "model", "train", "recipe", "quick",
                                       "arms", NULL};
    static const char *const quick_keys[] = {"steps", "model", "train", NULL};
    static const char *const arm_keys[] = {"name", "recipe", "model", "train", "steps_mult", "switch_fwd",
                                           "switch_bwd", NULL};
    json_t *root = sc->root, *x;
    if (!json_is_object(root)) return fail(c, "$", "expected a study object");
    if (!known_keys(c, "$", root, keys)) return false;
    if (!string_field(c, root, "name", true, 40, &sc->name)) return false;
    for (const char *p = sc->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            return fail(c, "$.name", "expected lower-case letters, digits, '-' and '_', got \"%s\"", sc->name);
    if (!string_field(c, root, "claim", false, 400, &sc->claim)) return false;
    if (!sc->claim) sc->claim = strdup("(study config)");
    sc->seeds = 1;
    sc->quick_steps = 4;
    if ((x = json_object_get(root, "seeds")) && !get_size(c, "$.seeds", x, 1, 256, &sc->seeds)) return false;
    if (!(x = json_object_get(root, "steps"))) return fail(c, "$.steps", "missing: the training steps");
    if (!get_size(c, "$.steps", x, 1, SIZE_MAX >> 8, &sc->steps)) return false;
    json_t *m = json_object_get(root, "model");
    if (!json_is_object(m) || !json_object_get(m, "preset"))
        return fail(c, "$.model", "missing: an object with \"preset\" (\"mlp\", \"tinylm\" or \"gpt\")");
    if ((x = json_object_get(root, "quick"))) {
        if (!json_is_object(x)) return fail(c, "$.quick", "expected an object");
        if (!known_keys(c, "$.quick", x, quick_keys)) return false;
        json_t *qs = json_object_get(x, "steps");
        if (qs && !get_size(c, "$.quick.steps", qs, 1, SIZE_MAX >> 8, &sc->quick_steps)) return false;
    }
    json_t *arms = json_object_get(root, "arms");
    if (!json_is_array(arms) || !json_array_size(arms) || json_array_size(arms) > ST_MAX_ARMS)
        return fail(c, "$.arms", "expected an array of 1..%d arms", ST_MAX_ARMS);
    sc->narms = json_array_size(arms);
    for (size_t a = 0; a < sc->narms; a++) {
        char p[64], pn[80];
        json_t *arm = json_array_get(arms, a);
        snprintf(p, sizeof p, "$.arms[%zu]", a);
        snprintf(pn, sizeof pn, "%s.name", p);
        if (!json_is_object(arm)) return fail(c, p, "expected an arm object {\"name\": ..., ...}");
        if (!known_keys(c, p, arm, arm_keys)) return false;
        const char *n = json_string_value(json_object_get(arm, "name"));
        if (!n || !*n || strlen(n) >= 48 || strpbrk(n, ",\"\n"))
            return fail(c, pn, "expected a name of 1..47 characters without ',', '\"' or line breaks");
        for (size_t b = 0; b < a; b++)
            if (!strcmp(n, json_string_value(json_object_get(json_array_get(arms, b), "name"))))
                return fail(c, pn, "arm name \"%s\" used twice", n);
    }
    /* apply every arm once (normal and quick): what loads cannot fail at run time */
    for (size_t a = 0; a < sc->narms; a++)
        for (int q = 0; q < 2; q++) {
            nvfp4_train_cfg t;
            double mult;
            if (!job_cfg(c, sc, a, q ? sc->quick_steps : sc->steps, q, &t, &mult)) return false;
            if (!trainable_model(c, sc, a, q, &t) || !trainable_optimizer(c, sc, a, q, &t)) return false;
        }
    return true;
}

st_config *st_config_parse(const char *text, size_t len, const char *file, nvfp4_error *err)
{
    ctx c = {file, err, false};
    st_config *sc = calloc(1, sizeof *sc);
    if (!sc) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    json_error_t je;
    sc->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    sc->file = strdup(file);
    if (!sc->root) {
        nvfp4_error_set(err, NVFP4_EINVAL, "%s: line %d column %d: %s", file, je.line, je.column, je.text);
        st_config_free(sc);
        return NULL;
    }
    if (!check_top(&c, sc)) {
        st_config_free(sc);
        return NULL;
    }
    return sc;
}

const char *st_config_name(const st_config *sc) { return sc->name; }
const char *st_config_claim(const st_config *sc) { return sc->claim; }
size_t st_config_narms(const st_config *sc) { return sc->narms; }
size_t st_config_seeds(const st_config *sc) { return sc->seeds; }
size_t st_config_steps(const st_config *sc) { return sc->steps; }
size_t st_config_quick_steps(const st_config *sc) { return sc->quick_steps; }
const char *st_config_arm_name(const st_config *sc, size_t a)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(sc->root, "arms"), a), "name"));
}

void st_config_job_cfg(const st_config *sc, size_t a, size_t steps, bool quick, nvfp4_train_cfg *t)
{
    nvfp4_error e;
    ctx c = {sc->file, &e, false};
    double mult;
    job_cfg(&c, sc, a, steps, quick, t, &mult); /* checked at load */
}
