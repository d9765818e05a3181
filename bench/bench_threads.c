/*
 * bench_threads.c -- `rbf bench filter --threads N`: test-and-insert
 * throughput of one filter shared by 1, 2, ..., N threads.
 *
 * Rows, for each thread count T:
 *
 *   concurrent   one filter with cfg.concurrent = 1, T threads inserting
 *                into it at once (the lock-free path);
 *   mutex        one single-writer filter (concurrent = 0) behind a
 *                pthread mutex taken around every rbf_insert;
 *   per-thread   T single-writer filters of the same size, one per thread
 *                (T times the memory, and each remembers only its thread's
 *                messages: what a program does today to avoid the lock);
 *
 * and, for reference, the single-writer filter on one thread without a lock
 * (concurrent = 0, the ordinary rbf_insert).
 *
 * Method: every thread inserts `keys` fresh 16-byte keys per round, each
 * key one rbf_insert call, from a buffer generated before the round
 * (untimed).  The threads wait at a barrier; the round's time runs from the
 * barrier to the last thread's end, so it includes any imbalance between
 * threads.  Throughput = T x keys / time.  One warm-up round, then `reps`
 * timed rounds; the rounds of all rows and thread counts are interleaved
 * (round r of every row, then round r+1) so that load from elsewhere hits
 * them alike; the median round is reported.
 *
 * Each thread also measures its own CPU time (CLOCK_THREAD_CPUTIME_ID) over
 * its loop; "CPU ns/insert" is the threads' CPU time over the inserts.  On
 * a machine with free cores the wall-clock throughput is what counts; on a
 * loaded or small machine, where threads wait for a core, the CPU time per
 * insert still shows what an insert costs at each thread count (contention
 * included), and T / (CPU ns per insert) is the throughput T free cores
 * would give ("if T free cores"; not for the mutex row, whose threads wait
 * for the lock without using CPU, so more cores do not help it).  The filters are sigma-bounded
 * with sigma = half their bits and keep recycling, inside the timed
 * region, as in use.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli_util.h"
#include "rbf.h"

#define CMD "bench filter"
#define KEY_LEN 16u

enum row { ROW_SINGLE, ROW_CONC, ROW_MUTEX, ROW_PER_THREAD, ROW_LIMIT, NROWS };
static const char *const row_names[NROWS] = {"single-writer, no lock", "concurrent",
                                             "mutex", "per-thread", "shared-array limit"};

typedef struct shared {
    const bench_threads_opts *o;
    uint64_t bytes;
    enum row row;
    unsigned threads;
    rbf *one;             /* the shared filter (concurrent, mutex, single) */
    rbf **own;            /* per-thread filters */
    uint64_t *array;      /* the limit row's shared array (bytes / 8 words) */
    pthread_mutex_t lock;
    pthread_barrier_t go;
    uint8_t **keys;       /* per thread: keys x KEY_LEN bytes */
    volatile uint64_t sink;
    double cpu_ns[BENCH_MAX_THREADS]; /* each thread's CPU time in the last round */
} shared;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct worker {
    shared *s;
    unsigned t;
} worker;

static void gen_keys(uint8_t *out, uint64_t n, uint64_t stream, uint64_t *next)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t j = (*next)++;
        uint64_t a = rbf_splitmix64_mix(stream + (2 * j + 1) * RBF_GOLDEN);
        uint64_t b = rbf_splitmix64_mix(stream + (2 * j + 2) * RBF_GOLDEN);
        memcpy(out + i * KEY_LEN, &a, 8);
        memcpy(out + i * KEY_LEN + 8, &b, 8);
    }
}


/* The machine's limit for the concurrent filter's access pattern: per key,
 * k random bits of one array shared by every thread, each tested and, if
 * clear, set by an atomic fetch-OR that counts it (the k lines are first
 * prefetched for writing, all at once, as the concurrent filter does) -- no hashing (the key's
 * own bytes give the positions), no counters, no recycling; the array is
 * cleared before each round (untimed), so it fills as a filter does.  What two threads gain here
 * over one is what any lock-free shared filter of this size can gain on
 * this machine: each line a thread writes must first move from the cache
 * of the core that wrote it last. */
static int64_t limit_loop(uint64_t *a, uint64_t bits, unsigned k, const uint8_t *keys,
                          uint64_t n)
{
    int64_t r = 0;
    uint64_t w[64], b[64];
    if (k > 64)
        k = 64;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h1, h2;
        memcpy(&h1, keys + i * KEY_LEN, 8);
        memcpy(&h2, keys + i * KEY_LEN + 8, 8);
        for (unsigned j = 0; j < k; j++) { /* all k lines requested at once, for writing */
            uint64_t p = (uint64_t)(((unsigned __int128)(h1 + j * h2) * bits) >> 64);
            w[j] = p >> 6;
            b[j] = 1ULL << (p & 63);
#if defined(__x86_64__) && defined(__GNUC__)
            __asm__ volatile("prefetchw %0" : : "m"(*(const char *)&a[w[j]]));
#else
            __builtin_prefetch(&a[w[j]], 1, 3);
#endif
        }
        for (unsigned j = 0; j < k; j++)
            if (!(__atomic_load_n(&a[w[j]], __ATOMIC_RELAXED) & b[j]))
                r += (__atomic_fetch_or(&a[w[j]], b[j], __ATOMIC_RELAXED) & b[j]) == 0;
    }
    return r;
}

/* One cache line's trip between two threads, ns: two threads pass a
 * counter back and forth (each waits for the other's store, then stores),
 * min(20 000, keys / 4) times (few on a short run, whose machine may be busy); median of 5 runs.  On a machine whose cores share a cache
 * this is tens of ns; between chiplets or sockets, or between virtual CPUs
 * placed far apart, hundreds. */
typedef struct pingpong {
    _Alignas(64) volatile uint64_t turn;
    uint64_t trips;
} pingpong;

/* Wait for turn i, then pass the counter on. */
static void take_turn(pingpong *p, uint64_t i)
{
    unsigned spins = 0;
    while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != i)
        if (++spins > 2000u) { /* no free core: let the other side run */
            sched_yield();
            spins = 0;
        }
    __atomic_store_n(&p->turn, i + 1, __ATOMIC_RELEASE);
}

static void *pong(void *arg)
{
    pingpong *p = arg;
    for (uint64_t i = 1; i < 2 * p->trips; i += 2)
        take_turn(p, i);
    return NULL;
}

static double line_trip_ns(uint64_t trips)
{
    double v[5];
    for (int run = 0; run < 5; run++) {
        pingpong *p = aligned_alloc(64, sizeof *p);
        if (!p)
            return -1;
        p->turn = 0;
        p->trips = trips;
        pthread_t th;
        if (pthread_create(&th, NULL, pong, p) != 0) {
            free(p);
            return -1;
        }
        double t0 = cli_wall_seconds();
        for (uint64_t i = 0; i < 2 * p->trips; i += 2)
            take_turn(p, i);
        pthread_join(th, NULL);
        v[run] = (cli_wall_seconds() - t0) * 1e9 / (2.0 * (double)p->trips);
        free(p);
    }
    qsort(v, 5, sizeof v[0], bench_cmp_double);
    return v[2];
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    shared *s = w->s;
    const uint8_t *k = s->keys[w->t];
    const uint64_t n = s->o->keys;
    int64_t r = 0;
    pthread_barrier_wait(&s->go);
    double c0 = thread_cpu_ns();
    switch (s->row) {
    case ROW_SINGLE:
    case ROW_CONC:
        for (uint64_t i = 0; i < n; i++)
            r += rbf_insert(s->one, k + i * KEY_LEN, KEY_LEN);
        break;
    case ROW_MUTEX:
        for (uint64_t i = 0; i < n; i++) {
            pthread_mutex_lock(&s->lock);
            r += rbf_insert(s->one, k + i * KEY_LEN, KEY_LEN);
            pthread_mutex_unlock(&s->lock);
        }
        break;
    case ROW_PER_THREAD: {
        rbf *f = s->own[w->t];
        for (uint64_t i = 0; i < n; i++)
            r += rbf_insert(f, k + i * KEY_LEN, KEY_LEN);
        break;
    }
    case ROW_LIMIT: /* no filter: k atomic ORs per key at random bits of a shared array */
        r = limit_loop(s->array, s->bytes * 8, s->o->k, k, n);
        break;
    default: break;
    }
    s->cpu_ns[w->t] = thread_cpu_ns() - c0;
    s->sink += (uint64_t)r;
    return NULL;
}

static int make_filter(const bench_threads_opts *o, uint64_t bytes, unsigned concurrent, rbf **out)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bytes * 8;
    c.hashes = o->k;
    c.phases = o->phases;
    c.sigma = c.bits / o->phases / 2;
    c.hashing = (rbf_hashing)o->hashing;
    c.recycle = (rbf_recycle_mode)o->recycle;
    c.seed = o->seed;
    c.concurrent = concurrent;
    return rbf_new(&c, out);
}

/* One timed round of a row at T threads: ns for the whole round; *cpu
 * receives the threads' CPU ns per insert. */
static double run_round(shared *s, uint64_t *next_key, uint64_t stream, double *cpu)
{
    unsigned T = s->threads;
    for (unsigned t = 0; t < T; t++)
        gen_keys(s->keys[t], s->o->keys, stream + t * 0x5851f42d4c957f2dULL, next_key);
    if (s->row == ROW_LIMIT)
        memset(s->array, 0, s->bytes);
    pthread_t th[BENCH_MAX_THREADS];
    worker w[BENCH_MAX_THREADS];
    pthread_barrier_init(&s->go, NULL, T + 1);
    for (unsigned t = 0; t < T; t++) {
        w[t].s = s;
        w[t].t = t;
        if (pthread_create(&th[t], NULL, run_worker, &w[t]) != 0) {
            /* cannot happen with the small counts allowed; run inline */
            return -1;
        }
    }
    pthread_barrier_wait(&s->go);
    double t0 = cli_wall_seconds();
    for (unsigned t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    double t1 = cli_wall_seconds();
    pthread_barrier_destroy(&s->go);
    double c = 0;
    for (unsigned t = 0; t < T; t++)
        c += s->cpu_ns[t];
    *cpu = c / ((double)T * (double)s->o->keys);
    return (t1 - t0) * 1e9;
}

typedef struct cell {
    double *ns;  /* per round */
    double *cpu; /* CPU ns per insert, per round */
    double mops;
    double cpu_med;
} cell;

/* One size's rows as JSON (an element of "sizes"). */
static void print_size_json(const bench_threads_opts *o, cell (*cells)[BENCH_MAX_THREADS + 1],
                            uint64_t bytes, uint64_t cycles, size_t si)
{
    const unsigned N = o->threads;
    printf("%s{\"bytes\":%llu,\"concurrent_cycles\":%llu,\"rows\":[", si ? "," : "",
           (unsigned long long)bytes, (unsigned long long)cycles);
    int first = 1;
    for (int r = 0; r < NROWS; r++)
        for (unsigned T = 1; T <= N; T++) {
            if (r == ROW_SINGLE && T > 1)
                break;
            printf("%s{\"implementation\":", first ? "" : ",");
            first = 0;
            cli_json_string(stdout, row_names[r]);
            printf(",\"threads\":%u,\"mops\":", T);
            cli_json_double(stdout, cells[r][T].mops);
            printf(",\"cpu_ns_per_insert\":");
            cli_json_double(stdout, cells[r][T].cpu_med);
            printf(",\"mops_if_free_cores\":");
            if (r == ROW_MUTEX)
                printf("null");
            else
                cli_json_double(stdout, (double)T * 1e3 / cells[r][T].cpu_med);
            printf(",\"ns_per_insert_per_thread\":");
            cli_json_double(stdout, cells[r][T].ns[o->reps / 2] / (double)o->keys);
            printf(",\"rounds_ns\":[");
            for (unsigned i = 0; i < o->reps; i++) {
                if (i)
                    putchar(',');
                cli_json_double(stdout, cells[r][T].ns[i]);
            }
            printf("]}");
        }
    printf("],\"limit_2t_over_1t\":");
    if (N >= 2)
        cli_json_double(stdout, cells[ROW_LIMIT][2].mops / cells[ROW_LIMIT][1].mops);
    else
        printf("null");
    printf(",\"concurrent_2t_over_1t\":");
    if (N >= 2)
        cli_json_double(stdout, cells[ROW_CONC][2].mops / cells[ROW_CONC][1].mops);
    else
        printf("null");
    printf(",\"concurrent_2t_over_1t_if_free_cores\":");
    if (N >= 2)
        cli_json_double(stdout, 2 * cells[ROW_CONC][1].cpu_med /
                                    cells[ROW_CONC][2].cpu_med);
    else
        printf("null");
    printf("}");
}

/* One size's table. */
static void print_size_text(const bench_threads_opts *o, cell (*cells)[BENCH_MAX_THREADS + 1],
                            uint64_t bytes, uint64_t cycles)
{
    const unsigned N = o->threads;
    printf("\n%llu KiB per filter (concurrent filter: %llu recycles)\n",
           (unsigned long long)(bytes >> 10), (unsigned long long)cycles);
    printf("  wall clock: Mops/s (all threads)                            CPU ns per insert (if T free cores: Mops/s)\n");
    printf("  threads  concurrent (vs 1T)   mutex  per-thread  limit (vs 1T)   concurrent        mutex   per-thread        limit\n");
    for (unsigned T = 1; T <= N; T++) {
        printf("  %7u  %10.1f %6.2fx %7.1f %11.1f %6.1f %6.2fx", T, cells[ROW_CONC][T].mops,
               cells[ROW_CONC][T].mops / cells[ROW_CONC][1].mops,
               cells[ROW_MUTEX][T].mops, cells[ROW_PER_THREAD][T].mops,
               cells[ROW_LIMIT][T].mops,
               cells[ROW_LIMIT][T].mops / cells[ROW_LIMIT][1].mops);
        const int rows4[4] = {ROW_CONC, ROW_MUTEX, ROW_PER_THREAD, ROW_LIMIT};
        for (int q = 0; q < 4; q++) {
            double cn = cells[rows4[q]][T].cpu_med;
            if (rows4[q] == ROW_MUTEX) /* serialised: no more cores help */
                printf("  %6.1f (    -)", cn);
            else
                printf("  %6.1f (%5.1f)", cn, (double)T * 1e3 / cn);
        }
        putchar('\n');
    }
    printf("  single-writer filter (concurrent = 0), one thread, no lock: %.1f Mops/s, "
           "%.1f CPU ns per insert\n",
           cells[ROW_SINGLE][1].mops, cells[ROW_SINGLE][1].cpu_med);
    if (N >= 2)
        printf("  2 threads / 1 thread, concurrent = 1: %.2fx wall clock; %.2fx if 2 "
               "free cores (from CPU time per insert)\n",
               cells[ROW_CONC][2].mops / cells[ROW_CONC][1].mops,
               2 * cells[ROW_CONC][1].cpu_med / cells[ROW_CONC][2].cpu_med);
    if (N >= 2)
        printf("  the machine's limit (limit: k tested-and-set random bits of one shared array "
               "per key, no filter): 2 threads / 1 thread = %.2fx\n",
               cells[ROW_LIMIT][2].mops / cells[ROW_LIMIT][1].mops);
}

int bench_threads_run(const bench_threads_opts *o)
{
    const unsigned N = o->threads;
    int rc = 0;
    double load0 = bench_load();
    if (o->json)
        printf("{\"benchmark\":\"filter-threads\",\"rbf_version\":\"%s\",\"hashes\":%u,"
               "\"key_bytes\":%u,\"keys_per_thread_per_round\":%llu,\"reps\":%u,"
               "\"warmup_rounds\":1,\"phases\":%u,\"seed\":%llu,\"max_threads\":%u,\"sizes\":[",
               rbf_version(), o->k, KEY_LEN, (unsigned long long)o->keys, o->reps, o->phases,
               (unsigned long long)o->seed, N);
    else
        printf("rbf bench filter --threads %u: k = %u, 16-byte fresh keys, one rbf_insert per key, "
               "%llu keys per thread per round, median of %u rounds after 1 warm-up (rows and "
               "thread counts interleaved)\nrbf: %s, %s, %u phase%s, sigma = bits per filter / 2; "
               "load average %.2f at start\n",
               N, o->k, (unsigned long long)o->keys, o->reps,
               o->hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding",
               o->recycle == RBF_RETAINING ? "retaining" : "non-retaining", o->phases,
               o->phases == 1 ? "" : "s", load0);
    for (size_t si = 0; si < o->nsizes && rc == 0; si++) {
        uint64_t bytes = o->sizes[si];
        shared s;
        memset(&s, 0, sizeof s);
        s.o = o;
        s.bytes = bytes;
        pthread_mutex_init(&s.lock, NULL);
        s.keys = calloc(N, sizeof *s.keys);
        s.own = calloc(N, sizeof *s.own);
        s.array = aligned_alloc(64, (size_t)bytes);
        rbf *single = NULL, *conc = NULL, *mutexed = NULL;
        cell cells[NROWS][BENCH_MAX_THREADS + 1];
        memset(cells, 0, sizeof cells);
        int ok = s.keys && s.own && s.array && make_filter(o, bytes, 0, &single) == RBF_OK &&
                 make_filter(o, bytes, 1, &conc) == RBF_OK &&
                 make_filter(o, bytes, 0, &mutexed) == RBF_OK;
        for (unsigned t = 0; ok && t < N; t++)
            ok = (s.keys[t] = malloc(o->keys * KEY_LEN)) != NULL &&
                 make_filter(o, bytes, 0, &s.own[t]) == RBF_OK;
        for (int r = 0; ok && r < NROWS; r++)
            for (unsigned T = 1; ok && T <= N; T++)
                ok = (cells[r][T].ns = calloc(o->reps, sizeof(double))) != NULL &&
                     (cells[r][T].cpu = calloc(o->reps, sizeof(double))) != NULL;
        if (!ok) {
            rc = cli_fail(CMD, "out of memory for %llu-byte filters x %u threads",
                          (unsigned long long)bytes, N);
        }
        uint64_t next_key = 0, stream = rbf_splitmix64_mix(o->seed ^ 0x7417eadULL);
        for (unsigned round = 0; ok && round <= o->reps; round++) {
            for (int r = 0; ok && r < NROWS; r++) {
                for (unsigned T = 1; T <= N; T++) {
                    if (r == ROW_SINGLE && T > 1)
                        break;
                    s.row = (enum row)r;
                    s.threads = T;
                    s.one = r == ROW_SINGLE ? single : r == ROW_CONC ? conc : mutexed;
                    double cpu = 0;
                    double ns = run_round(&s, &next_key, stream, &cpu);
                    if (ns < 0) {
                        rc = cli_fail(CMD, "cannot create %u threads", T);
                        ok = 0;
                        break;
                    }
                    if (round > 0) { /* round 0 warms up */
                        cells[r][T].ns[round - 1] = ns;
                        cells[r][T].cpu[round - 1] = cpu;
                    }
                }
            }
        }
        if (ok) {
            for (int r = 0; r < NROWS; r++)
                for (unsigned T = 1; T <= N; T++) {
                    if (r == ROW_SINGLE && T > 1)
                        break;
                    qsort(cells[r][T].ns, o->reps, sizeof(double), bench_cmp_double);
                    double med = cells[r][T].ns[o->reps / 2];
                    cells[r][T].mops = (double)T * (double)o->keys / med * 1e3;
                    qsort(cells[r][T].cpu, o->reps, sizeof(double), bench_cmp_double);
                    cells[r][T].cpu_med = cells[r][T].cpu[o->reps / 2];
                }
            rbf_stats cs;
            rbf_get_stats(conc, &cs);
            if (o->json)
                print_size_json(o, cells, bytes, cs.cycles, si);
            else
                print_size_text(o, cells, bytes, cs.cycles);
        }
        for (int r = 0; r < NROWS; r++)
            for (unsigned T = 1; T <= N; T++) {
                free(cells[r][T].ns);
                free(cells[r][T].cpu);
            }
        for (unsigned t = 0; t < N; t++) {
            if (s.keys)
                free(s.keys[t]);
            if (s.own)
                rbf_free(s.own[t]);
        }
        free(s.keys);
        free(s.own);
        free(s.array);
        rbf_free(single);
        rbf_free(conc);
        rbf_free(mutexed);
        pthread_mutex_destroy(&s.lock);
    }
    if (rc)
        return rc;
    double trip = N >= 2 ? line_trip_ns(o->keys / 4 < 20000 ? (o->keys / 4 ? o->keys / 4 : 1) : 20000) : -1;
    double load1 = bench_load();
    if (o->json) {
        printf("],\"line_trip_ns\":");
        if (trip > 0)
            cli_json_double(stdout, trip);
        else
            printf("null");
        printf(",\"load_start\":");
        cli_json_double(stdout, load0);
        printf(",\"load_end\":");
        cli_json_double(stdout, load1);
        printf("}\n");
    } else {
        if (trip > 0)
            printf("\none cache line's trip from one thread to another (ping-pong, median of 5): "
                   "%.0f ns\n",
                   trip);
        printf("\nload average %.2f at end\n", load1);
    }
    return cli_finish_stdout(CMD);
}
