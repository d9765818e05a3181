/*
 * test_concurrent.c -- many threads on one filter (cfg.concurrent = 1).
 *
 * No timing is asserted: every check holds whatever the interleaving.
 *
 *   - no lost insert: a key whose insert returned (0 or 1) is contained
 *     when no recycle ran between the insert and the membership test
 *     (checked per key, from the inserting thread), for sigma-bounded and
 *     N-bounded, one- and two-phase, retaining and not, colliding and not;
 *     while another thread calls rbf_recycle and another saves;
 *   - sigma never exceeded: a checker thread samples rbf_get_stats
 *     (bits_set <= sigma, cycle_messages < N, reported_new <= inserts) and
 *     the debug hook checks the arrays' popcounts in every exclusive
 *     section; the filters saved by a saver thread while others insert
 *     load (rbf_load_buffer checks that the counts match the arrays);
 *   - counters: inserts and reported_new equal the threads' own counts; an
 *     N-bounded one-phase filter's cycles and cycle_messages are exactly
 *     reported_new / N and reported_new % N (order-independent);
 *   - with no recycle, the bit arrays and bits_set equal those of a
 *     single-threaded filter over the same keys (single calls and batches);
 *   - the false-positive rate of fresh keys under 8 threads lies inside the
 *     model's value +- 5 standard errors, the standard error estimated from
 *     a single-threaded run of the same length (batch means); fixed seeds.
 *
 * Built also with ThreadSanitizer (make test-tsan), which checks that every
 * shared access is atomic or ordered.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "filter/concurrent.h"
#include "filter_util.h"
#include "rbf_model.h"

#define THREADS 8

/* cmocka's assertions may only fail on the main thread: the others count
 * their failures here, and the main thread asserts zero. */
static _Atomic uint64_t thread_failures;
#define TCHECK(cond)                                                                  \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            thread_failures++;                                                        \
        }                                                                             \
    } while (0)

/* The saved form of f (loaded back to check it); len may be NULL. */
static uint8_t *save_and_check(const rbf *f, size_t *len)
{
    uint64_t n = 0;
    uint8_t *buf = tu_saved(f, &n);
    assert_non_null(buf);
    rbf *g = NULL;
    assert_int_equal(rbf_load_buffer(buf, (size_t)n, &g), RBF_OK);
    rbf_free(g);
    if (len)
        *len = (size_t)n;
    return buf;
}

#ifdef RBF_TSAN
#define SCALE 4u /* ThreadSanitizer runs everything 5 to 20 times slower */
#else
#define SCALE 1u
#endif

/* n / SCALE, and fewer under valgrind (RBF_TEST_SHRINK), but at least lo. */
static uint64_t scaled(uint64_t n, uint64_t lo)
{
    uint64_t v = tu_scaled(n / SCALE);
    return v < lo ? lo : v;
}

/* Key j of thread t: 16 distinct bytes. */
static void make_key(uint8_t out[16], uint64_t t, uint64_t j)
{
    uint64_t s = t * 0x1000003ULL + j * 0x9E3779B97F4A7C15ULL + 77;
    uint64_t a = rbf_splitmix64(&s), b = rbf_splitmix64(&s);
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

static rbf *new_conc(rbf_config c)
{
    c.concurrent = 1;
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    rbf_config got;
    rbf_get_config(f, &got);
    assert_int_equal(got.concurrent, 1);
    rbf__conc_set_debug(f, 1);
    return f;
}

/* ---- no lost insert, sigma held, counters, under recycles and saves */

typedef struct stress {
    rbf *f;
    rbf_config cfg;
    uint64_t per;            /* keys per inserting thread */
    int recycler;            /* thread 0 also calls rbf_recycle */
    pthread_barrier_t start;
    _Atomic int done;        /* inserting threads finished */
    /* results */
    _Atomic uint64_t lost, checked, calls, news;
    _Atomic uint64_t samples, bad_samples, saves, bad_saves, recycles;
} stress;

typedef struct worker {
    stress *st;
    uint64_t t;
} worker;

static uint64_t cycles_now(rbf *f)
{
    rbf_stats s;
    rbf_get_stats(f, &s);
    return s.cycles;
}

static void *insert_thread(void *arg)
{
    worker *w = arg;
    stress *st = w->st;
    uint8_t key[16];
    uint64_t lost = 0, checked = 0, calls = 0, news = 0, rec = 0;
    pthread_barrier_wait(&st->start);
    for (uint64_t j = 0; j < st->per; j++) {
        /* every fourth key repeats one of this thread's recent keys */
        uint64_t kj = (j % 4 == 3 && j > 8) ? j - 1 - (j * 7) % 8 : j;
        make_key(key, w->t, kj);
        uint64_t c0 = cycles_now(st->f);
        int r = (j % 3 == 0) ? (int)rbf_insert_keys(st->f, (const void *const[]){key},
                                                    (const size_t[]){16}, 1, NULL)
                             : rbf_insert(st->f, key, 16);
        TCHECK(r == 0 || r == 1);
        calls++;
        news += (uint64_t)r;
        int h = rbf_contains(st->f, key, 16);
        uint64_t c1 = cycles_now(st->f);
        if (c0 == c1) {
            checked++;
            lost += h != 1;
        }
        if (st->recycler && w->t == 0 && j % 997 == 500) {
            assert_int_equal(rbf_recycle(st->f), RBF_OK);
            rec++;
        }
    }
    st->lost += lost;
    st->checked += checked;
    st->calls += calls;
    st->news += news;
    st->recycles += rec;
    return NULL;
}

/* Samples the counters while the others insert. */
static void *check_thread(void *arg)
{
    stress *st = arg;
    pthread_barrier_wait(&st->start);
    uint64_t n = 0, bad = 0;
    do { /* at least one sample, however the threads are scheduled */
        rbf_stats s;
        rbf_get_stats(st->f, &s);
        n++;
        if (st->cfg.sigma && (s.bits_set > st->cfg.sigma || s.frozen_bits_set > st->cfg.sigma))
            bad++;
        if (st->cfg.messages && s.cycle_messages >= st->cfg.messages)
            bad++;
        if (s.reported_new > s.inserts)
            bad++;
    } while (!st->done);
    st->samples += n;
    st->bad_samples += bad;
    return NULL;
}

/* Saves while the others insert; every saved state must load. */
static void *save_thread(void *arg)
{
    stress *st = arg;
    pthread_barrier_wait(&st->start);
    uint64_t n = 0, bad = 0;
    while (!st->done) {
        uint64_t size;
        TCHECK(rbf_save_size(st->f, &size) == RBF_OK);
        void *buf = malloc(size);
        TCHECK(buf != NULL);
        if (!buf)
            break;
        TCHECK(rbf_save_buffer(st->f, buf, size) == RBF_OK);
        rbf *g = NULL;
        int rc = rbf_load_buffer(buf, size, &g);
        if (rc != RBF_OK) {
            bad++;
        } else {
            rbf_stats s;
            rbf_get_stats(g, &s);
            if (st->cfg.sigma && s.bits_set > st->cfg.sigma)
                bad++;
            rbf_config gc;
            rbf_get_config(g, &gc);
            if (gc.concurrent != 0) /* not stored in the file */
                bad++;
        }
        rbf_free(g);
        free(buf);
        n++;
        sched_yield();
    }
    st->saves += n;
    st->bad_saves += bad;
    return NULL;
}

/* THREADS inserting threads (keys of streams tbase, tbase + 1, ...), the
 * stats checker and the saver, started together and joined. */
static void run_threads(stress *st, uint64_t tbase)
{
    pthread_barrier_init(&st->start, NULL, THREADS + 2);
    pthread_t th[THREADS + 2];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].st = st;
        w[t].t = (uint64_t)t + tbase;
        assert_int_equal(pthread_create(&th[t], NULL, insert_thread, &w[t]), 0);
    }
    assert_int_equal(pthread_create(&th[THREADS], NULL, check_thread, st), 0);
    assert_int_equal(pthread_create(&th[THREADS + 1], NULL, save_thread, st), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    st->done = 1;
    pthread_join(th[THREADS], NULL);
    pthread_join(th[THREADS + 1], NULL);
    pthread_barrier_destroy(&st->start);
}

static void run_stress(rbf_config cfg, uint64_t per, int recycler, const char *name)
{
    stress st;
    memset(&st, 0, sizeof st);
    st.cfg = cfg;
    st.per = per;
    st.recycler = recycler;
    st.f = new_conc(cfg);
    run_threads(&st, 0);

    rbf_stats s;
    rbf_get_stats(st.f, &s);
    print_message("%s: %llu inserts, %llu cycles (%llu by rbf_recycle), %llu slow paths, %llu of "
                  "%llu keys checked at once, %llu stats samples, %llu saves\n",
                  name, (unsigned long long)s.inserts, (unsigned long long)s.cycles,
                  (unsigned long long)st.recycles,
                  (unsigned long long)rbf__conc_slow_paths(st.f),
                  (unsigned long long)st.checked, (unsigned long long)st.calls,
                  (unsigned long long)st.samples, (unsigned long long)st.saves);
    assert_int_equal(st.lost, 0);
    /* The check is not vacuous, whatever the scheduling: a key goes
     * unchecked only when a recycle falls between its insert and its
     * contains, and each recycle can do that to at most one key per
     * inserting thread. */
    rbf_stats s0;
    rbf_get_stats(st.f, &s0);
    assert_true(st.calls - st.checked <= s0.cycles * THREADS);
    assert_int_equal(st.bad_samples, 0);
    assert_int_equal(st.bad_saves, 0);
    assert_true(st.samples > 0);
    assert_int_equal(rbf__conc_violations(st.f), 0);
    assert_int_equal(s.inserts, st.calls);
    assert_int_equal(s.reported_new, st.news);
    assert_true(s.cycles > st.recycles); /* thresholds were reached too */
    if (cfg.sigma)
        assert_true(s.bits_set <= cfg.sigma);
    else
        assert_true(s.cycle_messages < cfg.messages);
    /* the final state is consistent: it saves and loads (counts == arrays) */
    free(save_and_check(st.f, NULL));
    assert_int_equal(thread_failures, 0);
    rbf_free(st.f);
}

static void test_stress_variants(void **state)
{
    (void)state;
    const uint64_t per = scaled(6000, 1500);
    const uint64_t M = 1u << 16;
    struct {
        uint64_t sigma, n;
        rbf_hashing h;
        rbf_recycle_mode r;
        unsigned phases, k;
        const char *name;
    } v[] = {
        {8000, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 4, "sigma, 1 phase, non-retaining"},
        {8000, 0, RBF_COLLIDING, RBF_RETAINING, 1, 4, "sigma, 1 phase, retaining"},
        {6000, 0, RBF_NON_COLLIDING, RBF_NON_RETAINING, 1, 5, "sigma, 1 phase, non-colliding"},
        {4000, 0, RBF_COLLIDING, RBF_NON_RETAINING, 2, 4, "sigma, 2 phases, non-retaining"},
        {4000, 0, RBF_COLLIDING, RBF_RETAINING, 2, 3, "sigma, 2 phases, retaining"},
        {0, 1500, RBF_COLLIDING, RBF_NON_RETAINING, 1, 4, "N, 1 phase"},
        {0, 1000, RBF_NON_COLLIDING, RBF_NON_RETAINING, 2, 4, "N, 2 phases"},
        {40, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 40, "sigma = k = 40 (unmerged words)"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        rbf_config c = tu_config(M, v[i].k, v[i].sigma, v[i].n, v[i].h, v[i].r, v[i].phases,
                                 1000 + i);
        run_stress(c, per, 1, v[i].name);
    }
}

/* N-bounded, one phase, distinct keys, no rbf_recycle: every message that
 * sets a bit returns 1 and counts, so cycles = reported_new / N exactly. */
static void test_nbounded_exact_cycles(void **state)
{
    (void)state;
    for (unsigned n = 1; n <= 1000; n *= 10) {
        rbf_config c = tu_config(1u << 16, 4, 0, n, RBF_COLLIDING, RBF_NON_RETAINING, 1, 7 + n);
        stress st;
        memset(&st, 0, sizeof st);
        st.cfg = c;
        st.per = n == 1 ? scaled(300, 100) : scaled(3000, 1000);
        st.f = new_conc(c);
        run_threads(&st, 100);
        rbf_stats s;
        rbf_get_stats(st.f, &s);
        assert_int_equal(st.lost, 0);
        assert_int_equal(st.bad_samples, 0);
        assert_int_equal(st.bad_saves, 0);
        assert_int_equal(s.reported_new, st.news);
        assert_int_equal(s.cycles, s.reported_new / n);
        assert_int_equal(s.cycle_messages, s.reported_new % n);
        assert_int_equal(rbf__conc_violations(st.f), 0);
        assert_int_equal(thread_failures, 0);
        rbf_free(st.f);
    }
}

/* ---- equal to a single-threaded filter when nothing recycles */

typedef struct same {
    rbf *f;
    const uint64_t *hashes;
    uint64_t n;    /* hashes in all */
    int batch;
    pthread_barrier_t start;
} same;

typedef struct same_worker {
    same *s;
    uint64_t t;
} same_worker;

/* Thread t inserts the hashes i with i % THREADS == t, and also those of
 * thread t + 1 in every eighth stretch (the same messages from two threads
 * at once). */
static void *same_thread(void *arg)
{
    same_worker *w = arg;
    same *s = w->s;
    pthread_barrier_wait(&s->start);
    uint64_t buf[64];
    size_t nb = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        uint64_t owner = i % THREADS;
        int mine = owner == w->t || (owner == (w->t + 1) % THREADS && (i / 4096) % 8 == 0);
        if (!mine)
            continue;
        if (s->batch) {
            buf[nb++] = s->hashes[i];
            if (nb == 64) {
                TCHECK(rbf_insert_many(s->f, buf, nb, NULL) >= 0);
                nb = 0;
            }
        } else {
            TCHECK(rbf_insert_hash(s->f, s->hashes[i]) >= 0);
        }
    }
    if (nb)
        TCHECK(rbf_insert_many(s->f, buf, nb, NULL) >= 0);
    return NULL;
}

static void test_same_as_single_threaded(void **state)
{
    (void)state;
    const uint64_t M = 1u << 20, n = scaled(60000, 10000);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    assert_non_null(hashes);
    uint64_t g = 99;
    for (uint64_t i = 0; i < n; i++)
        hashes[i] = tu_next(&g);
    for (int v = 0; v < 6; v++) {
        unsigned phases = v % 2 ? 2 : 1;
        rbf_hashing h = v >= 4 ? RBF_NON_COLLIDING : RBF_COLLIDING;
        int batch = v / 2 == 1;
        rbf_config c = tu_config(M, 5, M / (2 * phases) - 1, 0, h, RBF_NON_RETAINING, phases, 5);
        rbf *ref = NULL;
        assert_int_equal(rbf_new(&c, &ref), RBF_OK);
        for (uint64_t i = 0; i < n; i++)
            rbf_insert_hash(ref, hashes[i]);
        same s = {.f = new_conc(c), .hashes = hashes, .n = n, .batch = batch};
        pthread_barrier_init(&s.start, NULL, THREADS);
        pthread_t th[THREADS];
        same_worker w[THREADS];
        for (int t = 0; t < THREADS; t++) {
            w[t].s = &s;
            w[t].t = (uint64_t)t;
            assert_int_equal(pthread_create(&th[t], NULL, same_thread, &w[t]), 0);
        }
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&s.start);
        rbf_stats a, b;
        rbf_get_stats(ref, &a);
        rbf_get_stats(s.f, &b);
        assert_int_equal(a.cycles, 0);
        assert_int_equal(b.cycles, 0);
        assert_int_equal(b.bits_set, a.bits_set);
        assert_true(b.inserts > a.inserts); /* the shared stretches were inserted twice */
        /* the bit arrays, byte for byte (the body of the saved form) */
        size_t la, lb;
        uint8_t *sa = save_and_check(ref, &la), *sb = save_and_check(s.f, &lb);
        assert_int_equal(thread_failures, 0);
        assert_int_equal(la, lb);
        assert_memory_equal(sa + 128, sb + 128, la - 128 - 8);
        /* every message is held */
        for (uint64_t i = 0; i < n; i++)
            assert_int_equal(rbf_contains_hash(s.f, hashes[i]), 1);
        assert_int_equal(rbf_contains_many(s.f, hashes, (size_t)n, NULL), (int64_t)n);
        free(sa);
        free(sb);
        rbf_free(ref);
        rbf_free(s.f);
    }
    free(hashes);
}

/* ---- false-positive rate of fresh keys under concurrency */

typedef struct fpst {
    rbf *f;
    uint64_t per;
    pthread_barrier_t start;
    _Atomic uint64_t seen;
} fpst;

typedef struct fp_worker {
    fpst *s;
    uint64_t t;
} fp_worker;

static void *fp_thread(void *arg)
{
    fp_worker *w = arg;
    fpst *s = w->s;
    uint64_t g = 0xF00D + w->t * 0x10001, seen = 0;
    pthread_barrier_wait(&s->start);
    for (uint64_t j = 0; j < s->per; j++)
        seen += rbf_insert_hash(s->f, tu_next(&g)) == 0; /* fresh: 0 is a false positive */
    s->seen += seen;
    return NULL;
}

static void test_fp_rate_in_model_interval(void **state)
{
    (void)state;
    const uint64_t M = 4096, sigma = 1200;
    const unsigned k = 3;
    const uint64_t per = scaled(100000, 10000), total = per * THREADS;
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = M;
    p.hashes = k;
    rbf_model_sigma_result mr;
    assert_int_equal(rbf_model_sigma(&p, sigma, &mr), RBF_OK);

    /* The single-threaded reference: batch means give the standard error
     * of a run's rate. */
    rbf_config c = tu_config(M, k, sigma, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 31337);
    rbf *ref = NULL;
    assert_int_equal(rbf_new(&c, &ref), RBF_OK);
    const unsigned B = 40;
    double sum = 0, sum2 = 0;
    uint64_t g = 12345, ref_seen = 0;
    for (unsigned b = 0; b < B; b++) {
        uint64_t seen = 0;
        for (uint64_t j = 0; j < total / B; j++)
            seen += rbf_insert_hash(ref, tu_next(&g)) == 0;
        double r = (double)seen / (double)(total / B);
        sum += r;
        sum2 += r * r;
        ref_seen += seen;
    }
    double mean = sum / B, var = (sum2 - B * mean * mean) / (B - 1);
    double se = sqrt(var / B);
    double ref_rate = (double)ref_seen / (double)(total / B * B);
    rbf_free(ref);

    fpst s = {.f = new_conc(c), .per = per};
    pthread_barrier_init(&s.start, NULL, THREADS);
    pthread_t th[THREADS];
    fp_worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].s = &s;
        w[t].t = (uint64_t)t;
        assert_int_equal(pthread_create(&th[t], NULL, fp_thread, &w[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&s.start);
    rbf_stats st;
    rbf_get_stats(s.f, &st);
    double rate = (double)s.seen / (double)total;
    print_message("fp rate: model %.5f, single-threaded %.5f, %d threads %.5f (se %.5f; %llu "
                  "cycles, %llu slow paths)\n",
                  mr.fp, ref_rate, THREADS, rate, se, (unsigned long long)st.cycles,
                  (unsigned long long)rbf__conc_slow_paths(s.f));
    assert_int_equal(rbf__conc_violations(s.f), 0);
    assert_int_equal(st.inserts, total);
    assert_int_equal(st.reported_new, total - s.seen);
    /* z = 5: a false alarm has probability below 1e-6 */
    assert_true(fabs(ref_rate - mr.fp) <= 5 * se);
    assert_true(fabs(rate - mr.fp) <= 5 * se);
    rbf_free(s.f);
}

/* ---- one thread: a concurrent filter answers exactly as a single writer */

static void test_lockstep_single_thread(void **state)
{
    (void)state;
    struct {
        uint64_t bits, sigma, n;
        rbf_hashing h;
        rbf_recycle_mode r;
        unsigned phases, k;
    } v[] = {
        {20000, 3000, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 4},
        {20000, 3000, 0, RBF_COLLIDING, RBF_RETAINING, 1, 4},
        {20000, 2000, 0, RBF_NON_COLLIDING, RBF_NON_RETAINING, 1, 6},
        {20000, 2000, 0, RBF_COLLIDING, RBF_NON_RETAINING, 2, 4},
        {20000, 2000, 0, RBF_COLLIDING, RBF_RETAINING, 2, 3},
        {20000, 0, 700, RBF_COLLIDING, RBF_NON_RETAINING, 1, 4},
        {20000, 0, 500, RBF_NON_COLLIDING, RBF_NON_RETAINING, 2, 5},
        {640, 0, 3, RBF_COLLIDING, RBF_NON_RETAINING, 2, 9},
        {4096, 60, 0, RBF_COLLIDING, RBF_RETAINING, 1, 40},
        {4096, 400, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 40}, /* repeated bits, slow path */
    };
    const uint64_t steps = 20000 / SCALE;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        rbf_config c = tu_config(v[i].bits, v[i].k, v[i].sigma, v[i].n, v[i].h, v[i].r,
                                 v[i].phases, 40 + i);
        rbf *a = NULL;
        assert_int_equal(rbf_new(&c, &a), RBF_OK);
        rbf *b = new_conc(c);
        uint64_t g = 7 + i;
        for (uint64_t j = 0; j < steps; j++) {
            uint64_t h = tu_below(&g, 3000); /* a small pool: repeats, two-phase copies */
            uint64_t hs[4] = {h, h + 1, h + 7, h};
            uint8_t ra[4], rb[4];
            switch (j % 5) {
            case 0:
                assert_int_equal(rbf_insert(b, &h, sizeof h), rbf_insert(a, &h, sizeof h));
                break;
            case 1:
                assert_int_equal(rbf_insert_many(b, hs, 4, rb), rbf_insert_many(a, hs, 4, ra));
                assert_memory_equal(ra, rb, 4);
                break;
            default:
                assert_int_equal(rbf_insert_hash(b, h), rbf_insert_hash(a, h));
            }
            uint64_t q = tu_below(&g, 6000);
            assert_int_equal(rbf_contains_hash(b, q), rbf_contains_hash(a, q));
            if (j % 4999 == 4998) {
                assert_int_equal(rbf_recycle(a), RBF_OK);
                assert_int_equal(rbf_recycle(b), RBF_OK);
            }
        }
        rbf_stats sa, sb;
        rbf_get_stats(a, &sa);
        rbf_get_stats(b, &sb);
        assert_memory_equal(&sa, &sb, sizeof sa);
        assert_true(sa.cycles > 4);
        size_t la, lb;
        uint8_t *pa = save_and_check(a, &la), *pb = save_and_check(b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(pa, pb, la); /* the whole saved form, header included */
        free(pa);
        free(pb);
        assert_int_equal(rbf__conc_violations(b), 0);
        rbf_free(a);
        rbf_free(b);
    }
}

/* ---- configuration, switching, saving */

static void test_config_and_switch(void **state)
{
    (void)state;
    rbf_config c = tu_config(1u << 14, 4, 3000, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 3);
    const char *why = NULL;
    c.concurrent = 2;
    assert_int_equal(rbf_config_check(&c, &why), RBF_EINVAL);
    assert_non_null(strstr(why, "concurrent"));
    c.concurrent = 1;
    /* the blocked layout works concurrently too (same positions, atomic
     * ORs on its one line): lock-step with a single-writer blocked filter */
    c.layout = RBF_LAYOUT_BLOCKED;
    assert_int_equal(rbf_config_check(&c, &why), RBF_OK);
    {
        rbf_config s1 = c;
        s1.concurrent = 0;
        rbf *fc, *fs;
        assert_int_equal(rbf_new(&c, &fc), RBF_OK);
        assert_int_equal(rbf_new(&s1, &fs), RBF_OK);
        uint64_t st = 99;
        for (int i = 0; i < 20000; i++) {
            uint64_t h = tu_next(&st) % 5000; /* repeats */
            assert_int_equal(rbf_insert_hash(fc, h), rbf_insert_hash(fs, h));
            assert_int_equal(rbf_contains_hash(fc, h ^ 1), rbf_contains_hash(fs, h ^ 1));
        }
        rbf_stats a, b;
        rbf_get_stats(fc, &a);
        rbf_get_stats(fs, &b);
        assert_true(a.bits_set == b.bits_set && a.cycles == b.cycles && a.cycles > 0 &&
                    a.reported_new == b.reported_new);
        rbf_free(fc);
        rbf_free(fs);
    }
    c.layout = RBF_LAYOUT_FLAT;
    assert_int_equal(rbf_config_check(&c, &why), RBF_OK);
    assert_int_equal(rbf_set_concurrent(NULL, 1), RBF_EINVAL);

    /* single-writer filter, switched on and off: same state throughout */
    c.concurrent = 0;
    rbf *a = NULL, *b = NULL;
    assert_int_equal(rbf_new(&c, &a), RBF_OK);
    assert_int_equal(rbf_new(&c, &b), RBF_OK);
    assert_int_equal(rbf_set_concurrent(a, 2), RBF_EINVAL);
    uint64_t g = 1;
    for (int i = 0; i < 5000; i++) {
        uint64_t h = tu_next(&g);
        if (i == 1000)
            assert_int_equal(rbf_set_concurrent(b, 1), RBF_OK);
        if (i == 4000)
            assert_int_equal(rbf_set_concurrent(b, 0), RBF_OK);
        assert_int_equal(rbf_insert_hash(b, h), rbf_insert_hash(a, h));
        assert_int_equal(rbf_contains_hash(b, h ^ 1), rbf_contains_hash(a, h ^ 1));
        if (i == 2500) {
            assert_int_equal(rbf_recycle(a), RBF_OK);
            assert_int_equal(rbf_recycle(b), RBF_OK);
        }
    }
    rbf_stats sa, sb;
    rbf_get_stats(a, &sa);
    rbf_get_stats(b, &sb);
    assert_memory_equal(&sa, &sb, sizeof sa);
    assert_true(sa.cycles >= 2);
    /* a loaded filter is single-writer, and may be made concurrent */
    size_t len;
    assert_int_equal(rbf_set_concurrent(b, 1), RBF_OK);
    uint8_t *buf = save_and_check(b, &len);
    rbf *l = NULL;
    assert_int_equal(rbf_load_buffer(buf, len, &l), RBF_OK);
    rbf_config lc;
    rbf_get_config(l, &lc);
    assert_int_equal(lc.concurrent, 0);
    assert_int_equal(rbf_set_concurrent(l, 1), RBF_OK);
    rbf_get_config(l, &lc);
    assert_int_equal(lc.concurrent, 1);
    rbf_stats sl;
    rbf_get_stats(l, &sl);
    assert_memory_equal(&sa, &sl, sizeof sa);
    free(buf);
    rbf_free(a);
    rbf_free(b);
    rbf_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_and_switch),
        cmocka_unit_test(test_lockstep_single_thread),
        cmocka_unit_test(test_same_as_single_threaded),
        cmocka_unit_test(test_stress_variants),
        cmocka_unit_test(test_nbounded_exact_cycles),
        cmocka_unit_test(test_fp_rate_in_model_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
