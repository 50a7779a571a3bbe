/* cmd_version.c - `nvfp4 version`: print the tool and format versions. */
#include "cli.h"
#include "nvfp4/common.h"

static int run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        printf("usage: nvfp4 version\n\nPrints the tool's version. Takes no arguments.\n");
        return NVFP4_EXIT_OK;
    }
    if (argc > 1) return cli_fail("version", "unexpected argument '%s' (see --help)", argv[1]);
    printf("nvfp4kit %s\n", nvfp4_version());
    return NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_version = {"version", "print the version", run};
