/*
 * cmd_model.c -- `rbf model`.  Not implemented yet: arrives with its issue.
 */
#include <string.h>

#include "cli.h"

int cmd_model(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("Usage: rbf model ...\n(not implemented yet)\n");
        return cli_finish_stdout("model");
    }
    return cli_fail("model", "not implemented yet");
}
