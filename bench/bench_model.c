/*
 * bench_model.c -- `rbf bench model`.  Not implemented yet: arrives with its issue.
 */
#include "bench.h"
#include "cli.h"

int bench_model_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("bench", "benchmark 'model' is not implemented yet");
}
