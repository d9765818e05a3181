/*
 * bench.h -- the benchmarks.  Each is `int bench_NAME_main(int argc, char
 * **argv)` with argv[0] = NAME, reachable as `rbf bench NAME` and as
 * `build/rbf-bench NAME`.  Timings belong here, never in tests.
 */
#ifndef RBF_BENCH_H
#define RBF_BENCH_H

int bench_dispatch(int argc, char **argv); /* argv[0] = "bench" */

int bench_filter_main(int argc, char **argv); /* bench_filter.c: issue "filter throughput" */
int bench_model_main(int argc, char **argv);  /* bench_model.c: fast vs paper, plan time */
int bench_sim_main(int argc, char **argv);    /* bench_sim.c: simulator arrivals per second */
int bench_dedup_main(int argc, char **argv);  /* bench_dedup.c: rbf dedup vs awk, sort -u */

#endif
