/*
 * bench_sim.c -- `rbf bench sim`.  Not implemented yet: arrives with its issue.
 */
#include "bench.h"
#include "cli.h"

int bench_sim_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("bench", "benchmark 'sim' is not implemented yet");
}
