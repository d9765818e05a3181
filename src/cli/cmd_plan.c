/*
 * cmd_plan.c -- `rbf plan`.  Not implemented yet: arrives with its issue.
 */
#include <string.h>

#include "cli.h"

int cmd_plan(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("Usage: rbf plan ...\n(not implemented yet)\n");
        return cli_finish_stdout("plan");
    }
    return cli_fail("plan", "not implemented yet");
}
