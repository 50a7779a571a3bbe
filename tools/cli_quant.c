/* cli_quant.c - the quantize option group (cli_quant.h): getopt entries,
 * parsing and --help lines, all read from the library's option table. */
#include "cli_quant.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct option *cli_quant_longopts(struct option *out, size_t cap, const struct option *own, unsigned rows)
{
    size_t n = 0;
    for (; own && own->name; own++) {
        if (n + 1 >= cap) abort();
        out[n++] = *own;
    }
    const nvfp4_option *t = nvfp4_option_table();
    for (unsigned id = 0; id < NVFP4_OPTION_COUNT; id++) {
        if (!(rows & CLI_QUANT(id))) continue;
        if (n + 1 >= cap) abort();
        out[n++] = (struct option){t[id].name, t[id].values ? required_argument : no_argument, NULL,
                                   CLI_QUANT_VAL_BASE + (int)id};
    }
    out[n] = (struct option){NULL, 0, NULL, 0};
    return out;
}

bool cli_quant_is(int c) { return c >= CLI_QUANT_VAL_BASE && c < CLI_QUANT_VAL_BASE + NVFP4_OPTION_COUNT; }

int cli_quant_set(const char *cmd, int c, const char *value, nvfp4_options *o)
{
    char name[40];
    snprintf(name, sizeof name, "--%s", nvfp4_option_table()[c - CLI_QUANT_VAL_BASE].name);
    nvfp4_error err;
    if (nvfp4_options_set(o, name, value, &err)) return cli_fail(cmd, "%s", err.message);
    return NVFP4_EXIT_OK;
}

int cli_quant_flag(const char *cmd, nvfp4_option_id id, nvfp4_options *o)
{
    return cli_quant_set(cmd, CLI_QUANT_VAL_BASE + (int)id, NULL, o);
}

int cli_quant_finish(const char *cmd, nvfp4_options *o, unsigned rules)
{
    nvfp4_error err;
    if (nvfp4_options_finish(o, rules, &err)) return cli_fail(cmd, "%s", err.message);
    return NVFP4_EXIT_OK;
}

void cli_quant_usage(FILE *f, unsigned rows)
{
    const nvfp4_option *t = nvfp4_option_table();
    for (unsigned id = 0; id < NVFP4_OPTION_COUNT; id++) {
        if (!(rows & CLI_QUANT(id))) continue;
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", t[id].name, t[id].values ? " " : "", t[id].values ? t[id].values : "");
        /* the help column of the subcommands' own option lines */
        fprintf(f, "  %-*s%s%s (default: %s)\n", 26, left, strlen(left) >= 26 ? "  " : "", t[id].help,
                t[id].default_value);
    }
}
