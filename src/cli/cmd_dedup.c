/*
 * cmd_dedup.c -- `rbf dedup`.  Not implemented yet: arrives with its issue.
 */
#include <string.h>

#include "cli.h"

int cmd_dedup(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("Usage: rbf dedup ...\n(not implemented yet)\n");
        return cli_finish_stdout("dedup");
    }
    return cli_fail("dedup", "not implemented yet");
}
