/*
 * nvfp4/options.h - the quantize options as one table: each option's name,
 * its value vocabulary, its default and a line of help, with one call that
 * validates and applies a named value to nvfp4_quant_opts and one that
 * applies the defaults and implications once every value is in.
 *
 * Who reads the table: the `nvfp4` subcommands that quantize (one shared
 * option group, usage text generated from `help` and `values`) and the
 * Python package (nvfp4kit reads the rht-signs vocabulary through
 * nvfp4_options_set / nvfp4_options_format). The plan (nvfp4_quant_plan_init)
 * still checks the combination it is given: this table decides how a name
 * and a string become options, the plan decides whether the options make a
 * quantization (CPFloat keeps the same split: parse, then validate once).
 */
#ifndef NVFP4_OPTIONS_H
#define NVFP4_OPTIONS_H

#include "nvfp4/common.h"
#include "nvfp4/quant.h"

NVFP4_BEGIN_DECLS

/* ---- the table ---------------------------------------------------------- */
/* One row per option. `name` is the CLI spelling without the dashes
 * ("rht-signs" is `--rht-signs`); Python's keyword is the same name with '_'
 * for '-' (rht_signs). */
typedef enum {
    NVFP4_OPTION_RECIPE,
    NVFP4_OPTION_BLOCK,
    NVFP4_OPTION_ROUND,
    NVFP4_OPTION_SEED,
    NVFP4_OPTION_OFFSET,
    NVFP4_OPTION_ROWWISE,
    NVFP4_OPTION_COLUMNWISE,
    NVFP4_OPTION_RHT,
    NVFP4_OPTION_RHT_SIGNS,
    NVFP4_OPTION_RHT_FP32,
    NVFP4_OPTION_PAD,
    NVFP4_OPTION_GLOBAL_SCALE_INVERTED,
    NVFP4_OPTION_COUNT
} nvfp4_option_id;

typedef struct {
    nvfp4_option_id id;
    const char *name;          /* "rht-signs" */
    const char *values;        /* the accepted values as usage shows them ("te|seed:N|none"), or a
                                  placeholder for an open set ("S", "NAME"); NULL for a flag */
    const char *allowed;       /* the same in words, as error messages name them ("te, seed:N or none") */
    const char *default_value; /* what applies when the option is not given ("te: 0xD7E8") */
    const char *help;          /* one line, without the default */
} nvfp4_option;

/* The NVFP4_OPTION_COUNT rows, in nvfp4_option_id order. */
const nvfp4_option *nvfp4_option_table(void);

/* The row named name ("rht-signs", "--rht-signs" or "rht_signs"), or NULL. */
const nvfp4_option *nvfp4_option_find(const char *name);

/* ---- applying values ---------------------------------------------------- */
/* Options being collected: the quantize options and which were named. */
typedef struct {
    nvfp4_quant_opts quant;
    uint32_t named; /* bit (1u << id) for each option given to nvfp4_options_set */
} nvfp4_options;

/* nvfp4_quant_opts_init's defaults, nothing named. */
void nvfp4_options_init(nvfp4_options *o);

/* True when option id was given to nvfp4_options_set. */
bool nvfp4_options_named(const nvfp4_options *o, nvfp4_option_id id);
/* The integer rule of every integer option (seed, offset, seed:N, the CLI's counts): decimal digits only,
 * 0 to 2^64-1, no sign, blank or 0x, and a leading 0 is not octal ("010" is ten). */
bool nvfp4_option_parse_u64(const char *s, uint64_t *out);

/* Validates value for the option called name (any spelling
 * nvfp4_option_find takes) and applies it to o->quant. A flag takes NULL,
 * "true" or "false". Names and values are exact (the CLI matches case
 * before it calls this). NVFP4_EINVAL with a message that names the option
 * as the caller spelled it, the value and the allowed values ("bad
 * --rht-signs 'maybe' (te, seed:N or none)"); o is unchanged then. */
nvfp4_status nvfp4_options_set(nvfp4_options *o, const char *name, const char *value, nvfp4_error *err);

/* Rules for nvfp4_options_finish. */
enum {
    /* --rht with no orientation named selects the columnwise output (a
     * command that reads or compares one orientation: identify,
     * dequantize). Without it the outputs are exactly those named, and
     * --rht needs --columnwise (quantize). */
    NVFP4_OPTIONS_RHT_SELECTS_COLUMNWISE = 1u << 0
};

/* Applies the defaults and implications once all values are in: the
 * outputs are the orientations named (--rowwise, --columnwise), rowwise
 * only when none is; --rht needs the columnwise output (see the rule
 * above). NVFP4_EINVAL naming the options when they conflict. The
 * recipe's block, the RHT's block shapes, SR support and the shape are
 * left to nvfp4_quant_plan_init, which checks every combination. */
nvfp4_status nvfp4_options_finish(nvfp4_options *o, unsigned rules, nvfp4_error *err);

/* The value of option id in opts as nvfp4_options_set reads it back
 * ("seed:5" for seeded RHT signs, "1x16", "true"); the recipe's name, or
 * "te" for NULL. Returns false when buf (n bytes) is too small. */
bool nvfp4_options_format(const nvfp4_quant_opts *opts, nvfp4_option_id id, char *buf, size_t n);

NVFP4_END_DECLS
#endif /* NVFP4_OPTIONS_H */
