/*
 * cli_main.c -- the rbf command: a table of subcommands.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rbf.h"

static const cli_command commands[] = {
    {"model", "average false-positive rate and messages per cycle from the models", cmd_model},
    {"plan", "size a filter: best k and threshold for a target average rate", cmd_plan},
    {"simulate", "run the real filter on a workload and measure its rates", cmd_simulate},
    {"reproduce", "regenerate the paper's figures and a checked claims report", cmd_reproduce},
    {"dedup", "drop repeated lines from a stream in fixed memory", cmd_dedup},
    {"bench", "benchmarks: filter throughput, model and simulator speed", cmd_bench},
};

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf [--help] [--version] COMMAND [ARGS]\n"
            "\n"
            "Recycling Bloom filters: Bloom filters that clear themselves when full,\n"
            "sized by their average false-positive rate.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp,
            "\n"
            "Run 'rbf COMMAND --help' for a command's options.\n"
            "\n"
            "Examples:\n"
            "  rbf plan --memory 1MiB --fp 0.001      best k and sigma for 1 MiB of filter\n"
            "  rbf model --bits 1000 --hashes 3 --sigma 300 --json\n"
            "  rbf simulate --bits 1000 --hashes 3 --sigma 300 --arrivals 1000000\n"
            "  rbf dedup --memory 256MiB access.log > unique.log\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 usage error.\n");
}

int rbf_cli_main(int argc, char **argv)
{
    /* A closed pipe (rbf ... | head) must end quietly: handle EPIPE where
     * output is written instead of dying by SIGPIPE mid-line. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help")) {
        /* `rbf help COMMAND`: that command's help; nothing else follows */
        if (!strcmp(a, "help") && argc == 3) {
            char *hv[] = {argv[2], (char *)"--help", NULL};
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(argv[2], commands[i].name))
                    return commands[i].run(2, hv);
            fprintf(stderr, "rbf: help: unknown command '%s' (try 'rbf --help')\n", argv[2]);
            return CLI_EXIT_USAGE;
        }
        if (argc > 2) {
            fprintf(stderr, "rbf: %s: unexpected argument '%s' (try 'rbf --help')\n", a,
                    argv[strcmp(a, "help") ? 2 : 3]);
            return CLI_EXIT_USAGE;
        }
        usage(stdout);
        return cli_finish_stdout(NULL);
    }
    if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
        if (argc > 2) {
            fprintf(stderr, "rbf: %s: unexpected argument '%s' (try 'rbf --help')\n", a, argv[2]);
            return CLI_EXIT_USAGE;
        }
        printf("rbf %s\n", rbf_version());
        return cli_finish_stdout(NULL);
    }
    if (a[0] == '-') {
        fprintf(stderr, "rbf: unknown option '%s' (try 'rbf --help')\n", a);
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(a, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "rbf: unknown command '%s' (try 'rbf --help')\n", a);
    return CLI_EXIT_USAGE;
}
