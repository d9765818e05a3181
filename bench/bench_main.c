/*
 * bench_main.c -- `rbf bench WHAT`: the table of benchmarks.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli_util.h"

static const struct {
    const char *name;
    const char *summary;
    int (*run)(int, char **);
} benches[] = {
    {"filter", "insert/contains ns per op vs libbloom, and the machine's limit", bench_filter_main},
    {"model", "full sigma sweep, fast vs paper method; rbf plan time", bench_model_main},
    {"plan", "planner time of planned reservations (p50/p95/max per layout and mode)",
     bench_plan_main},
    {"sim", "simulator arrivals per second on the paper's setup", bench_sim_main},
    {"dedup", "rbf dedup lines per second vs awk '!seen[$0]++' and sort -u", bench_dedup_main},
};

int bench_dispatch(int argc, char **argv)
{
    size_t n = sizeof benches / sizeof benches[0];
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *fp = argc < 2 ? stderr : stdout;
        fprintf(fp, "Usage: rbf bench WHAT [OPTIONS]   (or build/rbf-bench WHAT)\n\nBenchmarks:\n");
        for (size_t i = 0; i < n; i++)
            fprintf(fp, "  %-8s %s\n", benches[i].name, benches[i].summary);
        fprintf(fp, "  %-8s every benchmark above with its defaults\n", "all");
        fprintf(fp, "\nRun 'rbf bench WHAT --help' for its options.\n");
        return argc < 2 ? CLI_EXIT_USAGE : cli_finish_stdout("bench");
    }
    if (!strcmp(argv[1], "all")) {
        if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("Usage: rbf bench all\n\nRuns every benchmark with its defaults (several minutes);\n"
                   "run 'rbf bench WHAT --help' for each one's options.\n");
            return cli_finish_stdout("bench");
        }
        if (argc > 2)
            return cli_usage("bench", "'all' takes no options, got '%s'", argv[2]);
        int worst = 0;
        for (size_t i = 0; i < n; i++) {
            char *av[] = {(char *)benches[i].name, NULL};
            printf("== rbf bench %s\n", benches[i].name);
            fflush(stdout);
            cli_getopt_reset();
            int rc = benches[i].run(1, av);
            if (rc > worst)
                worst = rc;
        }
        return worst;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(argv[1], benches[i].name)) {
            cli_getopt_reset();
            return benches[i].run(argc - 1, argv + 1);
        }
    return cli_usage("bench", "unknown benchmark '%s'", argv[1]);
}
