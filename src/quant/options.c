/*
 * options.c - the quantize option table (nvfp4/options.h): every option's
 * name, vocabulary, default and help written once, the one parser of each
 * option's value, and the orientation rules applied once. It turns names and
 * strings into nvfp4_quant_opts; whether those make a quantization is the
 * plan's decision (plan.c), not this file's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nvfp4/options.h"

static const nvfp4_option table[NVFP4_OPTION_COUNT] = {
    {NVFP4_OPTION_RECIPE, "recipe", "R", "a recipe name: `nvfp4 table --recipes` lists them", "te",
     "the recipe"},
    {NVFP4_OPTION_BLOCK, "block", "B", "1x16, 16x16 or 1x32", "the recipe's", "block shape: 1x16, 16x16 or 1x32"},
    {NVFP4_OPTION_ROUND, "round", "rn|sr", "rn or sr", "rn", "rounding of the elements"},
    {NVFP4_OPTION_SEED, "seed", "S", "a decimal integer from 0 to 2^64-1", "0",
     "Philox seed for sr; docs/semantics.md, SR bit contract"},
    {NVFP4_OPTION_OFFSET, "offset", "O", "a decimal integer from 0 to 2^64-1", "0",
     "Philox offset for sr; docs/semantics.md, SR bit contract"},
    {NVFP4_OPTION_ROWWISE, "rowwise", NULL, NULL, "on when no orientation is named", "the rowwise output"},
    {NVFP4_OPTION_COLUMNWISE, "columnwise", NULL, NULL, "off", "the columnwise (transposed) output"},
    {NVFP4_OPTION_RHT, "rht", NULL, NULL, "off", "random Hadamard transform on the columnwise output"},
    {NVFP4_OPTION_RHT_SIGNS, "rht-signs", "te|seed:N|none", "te, seed:N or none", "te: 0xD7E8", "RHT sign vector"},
    {NVFP4_OPTION_RHT_FP32, "rht-fp32", NULL, NULL, "round to bf16", "keep the RHT output in fp32"},
    {NVFP4_OPTION_PAD, "pad", NULL, NULL, "error", "zero-pad dimensions up to the block"},
    {NVFP4_OPTION_GLOBAL_SCALE_INVERTED, "global-scale-inverted", NULL, NULL, "off",
     "S_enc handed over as 1/S_enc (is_global_scale_inversed)"},
};

const nvfp4_option *nvfp4_option_table(void) { return table; }

/* "--rht-signs", "rht-signs" and "rht_signs" name the same row. */
static bool same_name(const char *given, const char *name)
{
    while (*given == '-') given++;
    for (; *given && *name; given++, name++)
        if (*given != *name && !(*given == '_' && *name == '-')) return false;
    return *given == '\0' && *name == '\0';
}

const nvfp4_option *nvfp4_option_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < NVFP4_OPTION_COUNT; i++)
        if (same_name(name, table[i].name)) return &table[i];
    return NULL;
}

void nvfp4_options_init(nvfp4_options *o)
{
    memset(o, 0, sizeof *o);
    nvfp4_quant_opts_init(&o->quant);
}

bool nvfp4_options_named(const nvfp4_options *o, nvfp4_option_id id) { return (o->named >> id) & 1u; }

bool nvfp4_option_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool parse_flag(const char *s, bool *out)
{
    if (!s || strcmp(s, "true") == 0) *out = true;
    else if (strcmp(s, "false") == 0) *out = false;
    else return false;
    return true;
}

/* "te", "none" or "seed:N" (N decimal). */
static bool parse_rht_signs(const char *s, nvfp4_quant_opts *q)
{
    uint64_t seed;
    if (strcmp(s, "te") == 0) q->rht_signs = NVFP4_RHT_SIGNS_TE;
    else if (strcmp(s, "none") == 0) q->rht_signs = NVFP4_RHT_SIGNS_NONE;
    else if (strncmp(s, "seed:", 5) == 0 && nvfp4_option_parse_u64(s + 5, &seed)) {
        q->rht_signs = NVFP4_RHT_SIGNS_SEEDED;
        q->rht_sign_seed = seed;
    } else return false;
    return true;
}

/* Applies value to q; false when value is not in the option's vocabulary. */
static bool apply(nvfp4_option_id id, const char *value, nvfp4_quant_opts *q)
{
    const nvfp4_recipe *r;
    switch (id) {
    case NVFP4_OPTION_RECIPE:
        if (!value || !(r = nvfp4_recipe_find(value))) return false;
        q->recipe = nvfp4_recipe_get_info(r)->name;
        return true;
    case NVFP4_OPTION_BLOCK: return value && nvfp4_block_parse(value, &q->block);
    case NVFP4_OPTION_ROUND: /* RZ is the library's; no recipe's kernel quantizes with it */
        if (value && strcmp(value, "rn") == 0) q->rounding = NVFP4_RN;
        else if (value && strcmp(value, "sr") == 0) q->rounding = NVFP4_SR;
        else return false;
        return true;
    case NVFP4_OPTION_SEED: return nvfp4_option_parse_u64(value, &q->seed);
    case NVFP4_OPTION_OFFSET: return nvfp4_option_parse_u64(value, &q->offset);
    case NVFP4_OPTION_ROWWISE: return parse_flag(value, &q->rowwise);
    case NVFP4_OPTION_COLUMNWISE: return parse_flag(value, &q->columnwise);
    case NVFP4_OPTION_RHT: return parse_flag(value, &q->rht);
    case NVFP4_OPTION_RHT_SIGNS: return value && parse_rht_signs(value, q);
    case NVFP4_OPTION_RHT_FP32: return parse_flag(value, &q->rht_fp32);
    case NVFP4_OPTION_PAD: return parse_flag(value, &q->pad);
    case NVFP4_OPTION_GLOBAL_SCALE_INVERTED: return parse_flag(value, &q->global_scale_inverted);
    case NVFP4_OPTION_COUNT: break;
    }
    return false;
}

nvfp4_status nvfp4_options_set(nvfp4_options *o, const char *name, const char *value, nvfp4_error *err)
{
    const nvfp4_option *opt = nvfp4_option_find(name);
    if (!opt) return nvfp4_error_set(err, NVFP4_EINVAL, "unknown quantize option '%s'", name ? name : "(null)");
    nvfp4_quant_opts q = o->quant;
    if (!apply(opt->id, value, &q)) {
        if (opt->id == NVFP4_OPTION_RECIPE)
            return nvfp4_error_set(err, NVFP4_EINVAL, "unknown recipe '%s' (%s)", value ? value : "(none)",
                                   opt->allowed);
        if (!opt->values)
            return nvfp4_error_set(err, NVFP4_EINVAL, "bad %s '%s' (a flag: true or false)", name, value);
        return nvfp4_error_set(err, NVFP4_EINVAL, "bad %s '%s' (%s)", name, value ? value : "(none)", opt->allowed);
    }
    o->quant = q;
    o->named |= 1u << opt->id;
    return NVFP4_OK;
}

nvfp4_status nvfp4_options_finish(nvfp4_options *o, unsigned rules, nvfp4_error *err)
{
    nvfp4_quant_opts *q = &o->quant;
    bool row = nvfp4_options_named(o, NVFP4_OPTION_ROWWISE) && q->rowwise;
    bool col = nvfp4_options_named(o, NVFP4_OPTION_COLUMNWISE) && q->columnwise;
    if (q->rht && !col) {
        if (!(rules & NVFP4_OPTIONS_RHT_SELECTS_COLUMNWISE))
            return nvfp4_error_set(err, NVFP4_EINVAL, "--rht applies to the columnwise output: add --columnwise");
        if (row)
            return nvfp4_error_set(err, NVFP4_EINVAL,
                                   "--rowwise excludes --rht (the RHT is on the columnwise output)");
        col = true;
    }
    /* the outputs as a set: those named, rowwise only when none is */
    q->rowwise = row || !col;
    q->columnwise = col;
    return NVFP4_OK;
}

/* The value of a flag option, or -1 for an option that takes a value. */
static int flag_value(const nvfp4_quant_opts *q, nvfp4_option_id id)
{
    switch (id) {
    case NVFP4_OPTION_ROWWISE: return q->rowwise;
    case NVFP4_OPTION_COLUMNWISE: return q->columnwise;
    case NVFP4_OPTION_RHT: return q->rht;
    case NVFP4_OPTION_RHT_FP32: return q->rht_fp32;
    case NVFP4_OPTION_PAD: return q->pad;
    case NVFP4_OPTION_GLOBAL_SCALE_INVERTED: return q->global_scale_inverted;
    default: return -1;
    }
}

bool nvfp4_options_format(const nvfp4_quant_opts *q, nvfp4_option_id id, char *buf, size_t n)
{
    int flag = flag_value(q, id);
    const char *s = flag >= 0 ? (flag ? "true" : "false") : NULL;
    switch (id) {
    case NVFP4_OPTION_RECIPE: s = q->recipe ? q->recipe : "te"; break;
    case NVFP4_OPTION_BLOCK: s = nvfp4_block_name(q->block); break;
    case NVFP4_OPTION_ROUND: s = nvfp4_rounding_name(q->rounding); break;
    case NVFP4_OPTION_SEED: return (size_t)snprintf(buf, n, "%" PRIu64, q->seed) < n;
    case NVFP4_OPTION_OFFSET: return (size_t)snprintf(buf, n, "%" PRIu64, q->offset) < n;
    case NVFP4_OPTION_RHT_SIGNS:
        if (q->rht_signs == NVFP4_RHT_SIGNS_SEEDED)
            return (size_t)snprintf(buf, n, "seed:%" PRIu64, q->rht_sign_seed) < n;
        s = nvfp4_rht_signs_name(q->rht_signs);
        break;
    default: break;
    }
    return s && (size_t)snprintf(buf, n, "%s", s) < n;
}
