/*
 * bench_filter.c -- `rbf bench filter`.  Not implemented yet: arrives with its issue.
 */
#include "bench.h"
#include "cli.h"

int bench_filter_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("bench", "benchmark 'filter' is not implemented yet");
}
