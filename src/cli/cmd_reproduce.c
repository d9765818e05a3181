/*
 * cmd_reproduce.c -- `rbf reproduce`.  Not implemented yet: arrives with its issue.
 */
#include <string.h>

#include "cli.h"

int cmd_reproduce(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("Usage: rbf reproduce ...\n(not implemented yet)\n");
        return cli_finish_stdout("reproduce");
    }
    return cli_fail("reproduce", "not implemented yet");
}
