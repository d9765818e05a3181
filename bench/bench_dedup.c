/*
 * bench_dedup.c -- `rbf bench dedup`.  Not implemented yet: arrives with its issue.
 */
#include "bench.h"
#include "cli.h"

int bench_dedup_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("bench", "benchmark 'dedup' is not implemented yet");
}
