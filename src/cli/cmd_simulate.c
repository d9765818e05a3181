/*
 * cmd_simulate.c -- `rbf simulate`.  Not implemented yet: arrives with its issue.
 */
#include <string.h>

#include "cli.h"

int cmd_simulate(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("Usage: rbf simulate ...\n(not implemented yet)\n");
        return cli_finish_stdout("simulate");
    }
    return cli_fail("simulate", "not implemented yet");
}
