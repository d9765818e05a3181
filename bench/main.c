/*
 * main.c -- build/rbf-bench: the benchmarks as a standalone program.
 * `rbf-bench WHAT [ARGS]` is the same as `rbf bench WHAT [ARGS]`.
 */
#include "bench.h"

int main(int argc, char **argv)
{
    argv[0] = (char *)"bench";
    return bench_dispatch(argc, argv);
}
