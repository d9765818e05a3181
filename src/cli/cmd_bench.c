/*
 * cmd_bench.c -- `rbf bench`: the benchmarks live in bench/.
 */
#include "bench.h"
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
    return bench_dispatch(argc, argv);
}
