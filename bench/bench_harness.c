/*
 * bench_harness.c -- what every benchmark shares: sorting its rounds to
 * take medians and quantiles, and the machine's load around a run.
 */
#include <stdlib.h>

#include "bench.h"

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
}

double bench_load(void)
{
    double la[1];
    return getloadavg(la, 1) == 1 ? la[0] : -1;
}
