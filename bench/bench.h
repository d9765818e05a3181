/*
 * bench.h -- the benchmarks.  Each is `int bench_NAME_main(int argc, char
 * **argv)` with argv[0] = NAME, reachable as `rbf bench NAME` and as
 * `build/rbf-bench NAME`.  Timings belong here, never in tests.
 */
#ifndef RBF_BENCH_H
#define RBF_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* The harness (bench_harness.c): qsort's comparison of doubles, an
 * ascending sort of n rounds (for medians and quantiles), and the
 * one-minute load average (-1 when unknown). */
int bench_cmp_double(const void *a, const void *b);
void bench_sort(double *v, size_t n);
double bench_load(void);

int bench_dispatch(int argc, char **argv); /* argv[0] = "bench" */

int bench_filter_main(int argc, char **argv); /* bench_filter.c: filter throughput */
int bench_model_main(int argc, char **argv);  /* bench_model.c: fast vs paper, plan time */
int bench_plan_main(int argc, char **argv);   /* bench_plan.c: planner time per reservation */
int bench_sim_main(int argc, char **argv);    /* bench_sim.c: simulator arrivals per second */
int bench_dedup_main(int argc, char **argv);  /* bench_dedup.c: rbf dedup vs awk, sort -u */

/* `rbf bench filter --threads N` (bench_threads.c): one filter shared by 1..N
 * threads, concurrent vs mutex-guarded vs per-thread filters. */
#define BENCH_MAX_THREADS 64u
typedef struct bench_threads_opts {
    unsigned threads;      /* N: thread counts 1..N */
    const uint64_t *sizes; /* filter sizes in bytes */
    size_t nsizes;
    uint64_t keys;         /* inserts per thread per round */
    unsigned reps;
    unsigned k;
    unsigned phases;
    int hashing;           /* an rbf_hashing */
    int recycle;           /* an rbf_recycle_mode */
    uint64_t seed;
    int json;
} bench_threads_opts;
int bench_threads_run(const bench_threads_opts *o);

#endif
