/*
 * gscale.c - the global scale a kernel used, read back from its block scale
 * bytes (gscale.h).
 *
 * Positive finite fp32 values are ordered as their bit patterns, so the
 * search runs over the integers 1 .. 0x7F7FFFFF. For one block the bytes
 * of a monotone rule rise (S_enc) or fall (g) with the parameter, so the
 * values giving byte k form one interval, found by two binary searches of
 * 31 steps. Most blocks do not narrow the running intersection [lo, hi]:
 * when the rule gives k at both ends, monotonicity gives k between them,
 * and the block costs two evaluations instead of 62.
 */
#include "verify/gscale.h"

#include <stdio.h>
#include <string.h>

#include "recipes/recipe.h"
#include "verify/mutant.h"

#define PARAM_MIN 1u           /* the smallest positive subnormal */
#define PARAM_MAX 0x7F7FFFFFu  /* FLT_MAX */

bool nvfp4_gscale_monotone(const nvfp4_core_recipe *r, bool *decode)
{
    bool s_enc_global = r->global_rule == NVFP4_CORE_GLOBAL_TE_ENCODE ||
                        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP ||
                        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_FI ||
                        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT ||
                        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_BF16 ||
                        r->global_rule == NVFP4_CORE_GLOBAL_TORCH_RECIP_CT_FP16 ||
                        r->global_rule == NVFP4_CORE_GLOBAL_RECIP_OF_DECODE;
    if (r->scale_format != NVFP4_CORE_SCALE_E4M3) return false;
    switch (r->bscale_rule) {
    case NVFP4_CORE_BSCALE_TE_MUL:
    case NVFP4_CORE_BSCALE_DIV_THEN_GLOBAL:
    case NVFP4_CORE_BSCALE_GLOBAL_FIRST:
        *decode = false;
        return s_enc_global;
    case NVFP4_CORE_BSCALE_DIV_DIV:
    case NVFP4_CORE_BSCALE_DIV_PRODUCT:
        *decode = true;
        return r->global_rule == NVFP4_CORE_GLOBAL_DECODE_DIV;
    default:
        /* compressed-tensors' zero-scale replacement and 4over6's choice
         * are not monotone; MX and ggml have no global parameter */
        return false;
    }
}

float nvfp4_gscale_param(const nvfp4_core_recipe *r, const nvfp4_core_global *g)
{
    bool decode = false;
    (void)nvfp4_gscale_monotone(r, &decode);
    return decode ? g->g : g->s_enc;
}

uint8_t nvfp4_gscale_byte_at(const nvfp4_core_recipe *r, float p, float bamax)
{
    nvfp4_core_global g;
    g.amax = 0.0f; /* no monotone rule reads it */
    g.s_enc = p;
    g.s_dec = 1.0f / p;
    g.g = p;
    return nvfp4_core_block_scale(r, &g, bamax);
}

/* The byte as a key that never falls as the parameter grows. */
static int key_at(const nvfp4_core_recipe *r, bool decode, uint32_t u, float bamax)
{
    int b = nvfp4_gscale_byte_at(r, nvfp4_core_f32_from_bits(u), bamax);
    return decode ? -b : b;
}

/* The smallest u in [PARAM_MIN, PARAM_MAX] whose key is >= k (> k when
 * strict), or PARAM_MAX + 1 when none is. */
static uint32_t lower_bound(const nvfp4_core_recipe *r, bool decode, float bamax, int k, bool strict)
{
    uint32_t lo = PARAM_MIN, hi = PARAM_MAX + 1u;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        int v = key_at(r, decode, mid, bamax);
        if (strict ? v > k : v >= k)
            hi = mid;
        else
            lo = mid + 1u;
    }
    return lo;
}

static bool finite_amax(float a) { return a == a && a <= NVFP4_CORE_FLT_MAX; }

void nvfp4_gscale_infer(const nvfp4_core_recipe *r, const float *bamax, const uint8_t *bytes, size_t n,
                        nvfp4_gscale_interval *out)
{
    *out = (nvfp4_gscale_interval){0};
    bool decode = false;
    if (!nvfp4_gscale_monotone(r, &decode)) return;
    out->decode = decode;
    uint32_t lo = PARAM_MIN, hi = PARAM_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!finite_amax(bamax[i])) continue;
        out->blocks++;
        /* E4M3 bytes 0x00..0x7E rise with the value; a negative or NaN byte no parameter gives */
        int want = bytes[i] > 0x7Eu ? 1000 : bytes[i];
        if (decode) want = -want;
        if (key_at(r, decode, lo, bamax[i]) == want && key_at(r, decode, hi, bamax[i]) == want) continue;
        uint32_t first = lower_bound(r, decode, bamax[i], want, false);
        uint32_t past = lower_bound(r, decode, bamax[i], want, true);
        if (first < lo) first = lo;
        if (past > hi + 1u) past = hi + 1u;
        if (first >= past || key_at(r, decode, first, bamax[i]) != want) {
            out->applies = true;
            out->empty = true;
            out->conflict = i;
            return;
        }
        lo = first;
        hi = past - 1u;
    }
    out->applies = out->blocks > 0;
    out->lo = nvfp4_core_f32_from_bits(lo);
    out->hi = nvfp4_core_f32_from_bits(hi);
    out->count = (uint64_t)(hi - lo) + 1u;
}

bool nvfp4_gscale_block_interval(const nvfp4_core_recipe *r, float bamax, uint8_t byte, float *lo, float *hi)
{
    bool decode = false;
    if (!nvfp4_gscale_monotone(r, &decode) || !finite_amax(bamax) || byte > 0x7Eu) return false;
    int want = decode ? -(int)byte : (int)byte;
    uint32_t first = lower_bound(r, decode, bamax, want, false);
    uint32_t past = lower_bound(r, decode, bamax, want, true);
    if (first >= past || key_at(r, decode, first, bamax) != want) return false;
    *lo = nvfp4_core_f32_from_bits(first);
    *hi = nvfp4_core_f32_from_bits(past - 1u);
    return true;
}

/* Whether a recipe's global rule yields the parameter r's block-scale rule reads. */
static bool same_family(const nvfp4_core_recipe *r, const nvfp4_core_recipe *other)
{
    nvfp4_core_recipe t = *r;
    t.global_rule = other->global_rule;
    bool d1 = false, d2 = false;
    return nvfp4_gscale_monotone(r, &d1) && nvfp4_gscale_monotone(&t, &d2) && d1 == d2;
}

static void add_named(nvfp4_gscale_named *out, size_t *n, size_t max, const char *name, float value)
{
    if (!(value > 0.0f) || !(value <= NVFP4_CORE_FLT_MAX)) return; /* no block-scale rule reads such a value */
    for (size_t i = 0; i < *n; i++)
        if (nvfp4_core_f32_bits(out[i].value) == nvfp4_core_f32_bits(value)) {
            if (!strstr(out[i].name, name) && strlen(out[i].name) + strlen(name) + 3 < sizeof out[i].name) {
                strcat(out[i].name, ", ");
                strcat(out[i].name, name);
            }
            return;
        }
    if (*n >= max) return;
    snprintf(out[*n].name, sizeof out[*n].name, "%s", name);
    out[*n].value = value;
    (*n)++;
}

size_t nvfp4_gscale_candidates(const nvfp4_core_recipe *r, float amax, nvfp4_gscale_named *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < nvfp4_recipe_count(); i++) {
        const nvfp4_recipe *rec = nvfp4_recipe_at(i);
        const nvfp4_core_recipe *o = nvfp4_recipe_core(rec);
        if (!same_family(r, o)) continue;
        nvfp4_core_recipe t = *r;
        t.global_rule = o->global_rule;
        nvfp4_core_global g = nvfp4_core_global_from_amax(&t, amax);
        char name[64];
        snprintf(name, sizeof name, "%s", rec->info.name);
        add_named(out, &n, max, name, nvfp4_gscale_param(r, &g));
    }
    nvfp4_mctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    for (size_t i = 0; i < nvfp4_mutant_catalog_size; i++) {
        const nvfp4_mutant *m = &nvfp4_mutant_catalog[i];
        if (!m->global || m->core) continue;
        nvfp4_core_global g = m->global(&c, amax);
        add_named(out, &n, max, m->info.name, nvfp4_gscale_param(r, &g));
    }
    return n;
}

/* Whether `token` is one of the comma-separated names in list. */
static bool in_list(const char *list, const char *token)
{
    size_t k = strlen(token);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == k && strncmp(p, token, k) == 0) return true;
        p += len;
        p += *p == ',';
        while (*p == ' ') p++;
    }
    return false;
}

static void append_name(char *names, size_t len, const char *name)
{
    size_t used = strlen(names);
    snprintf(names + used, len - used, "%s%s", used ? ", " : "", name);
}

size_t nvfp4_gscale_other_bscales(const nvfp4_core_recipe *r, const char *recipe, float amax, const float *bamax,
                                  const uint8_t *bytes, size_t n, char *names, size_t names_len)
{
    names[0] = '\0';
    size_t found = 0;
    nvfp4_core_global g = nvfp4_core_global_from_amax(r, amax);
    float p = nvfp4_gscale_param(r, &g);
    /* the registered recipes' block-scale rules that read the same parameter */
    uint32_t seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < nvfp4_recipe_count(); i++) {
        const nvfp4_recipe *rec = nvfp4_recipe_at(i);
        const nvfp4_core_recipe *o = nvfp4_recipe_core(rec);
        nvfp4_core_recipe t = *r;
        t.bscale_rule = o->bscale_rule;
        t.scale_lo = o->scale_lo;
        bool d0 = false, d1 = false;
        if (!nvfp4_gscale_monotone(&t, &d1) || !nvfp4_gscale_monotone(r, &d0) || d0 != d1) continue;
        if (t.bscale_rule == r->bscale_rule && nvfp4_core_f32_bits(t.scale_lo) == nvfp4_core_f32_bits(r->scale_lo))
            continue;
        uint32_t id = (uint32_t)t.bscale_rule << 24 ^ nvfp4_core_f32_bits(t.scale_lo);
        bool dup = false;
        for (size_t k = 0; k < nseen; k++) dup = dup || seen[k] == id;
        if (dup || nseen == 64) continue;
        seen[nseen++] = id;
        bool all = true;
        for (size_t b = 0; b < n && all; b++)
            if (finite_amax(bamax[b])) all = nvfp4_gscale_byte_at(&t, p, bamax[b]) == bytes[b];
        if (!all) continue;
        char name[80];
        snprintf(name, sizeof name, "%s's block-scale rule", rec->info.name);
        append_name(names, names_len, name);
        found++;
    }
    /* the catalogued block-scale mutants of this recipe (4over6's per-block choice needs the
     * elements, which no monotone recipe has) */
    nvfp4_mctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    for (size_t i = 0; i < nvfp4_mutant_catalog_size; i++) {
        const nvfp4_mutant *m = &nvfp4_mutant_catalog[i];
        if (!m->bscale || m->core || (m->info.needs & NVFP4_MUTANT_NEEDS_1D) || !in_list(m->info.recipes, recipe))
            continue;
        bool all = true;
        for (size_t b = 0; b < n && all; b++)
            if (finite_amax(bamax[b])) all = m->bscale(&c, &g, bamax[b]) == bytes[b];
        if (!all) continue;
        append_name(names, names_len, m->info.name);
        found++;
    }
    return found;
}
