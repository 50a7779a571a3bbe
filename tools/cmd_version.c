/* cmd_version.c - `nvfp4 version`: print the tool and format versions. */
#include "cli.h"
#include "nvfp4/common.h"

static int run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("nvfp4kit %s\n", nvfp4_version());
    return NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_version = {"version", "print the version", run};
