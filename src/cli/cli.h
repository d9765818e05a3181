/*
 * cli.h -- shared pieces of the rbf command-line tool.
 * The option, output and progress helpers are the util module's
 * (src/util/cli_util.h).
 */
#ifndef RBF_CLI_H
#define RBF_CLI_H

#include "cli_util.h"

/* One subcommand: `rbf NAME ...` calls run(argc, argv) with argv[0] = NAME. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_command;

/* The whole command line: `rbf ARGS...`, returning the exit status
 * (cli_main.c).  main() calls it; so does the fuzz harness. */
int rbf_cli_main(int argc, char **argv);

/* The subcommands (one file each: cmd_NAME.c). */
int cmd_model(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_reproduce(int argc, char **argv);
int cmd_dedup(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
