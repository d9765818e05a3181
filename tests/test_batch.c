/*
 * test_batch.c -- the batch functions (rbf_insert_many, rbf_contains_many,
 * rbf_insert_keys, rbf_contains_keys) give exactly what the same sequence of
 * single calls gives, for every variant: sigma/N-bounded x colliding/non-
 * colliding x retaining/non-retaining x one/two phases.
 *
 * The batch functions compute positions several messages ahead and prefetch
 * them, but must decide in order.  So the streams here are built to catch a
 * batch that looks ahead wrongly: keys from a small universe (a message often
 * repeats one a few places earlier in the same batch, closer than the
 * pipeline's look-ahead), tiny filters (recycles and two-phase swaps happen
 * inside batches), batch sizes around the look-ahead (1, 2, 3, 7, 8, 9, ...)
 * and large ones, k up to 256 (where the look-ahead shrinks).  Three filters
 * with the same configuration run in lock-step: one fed by single calls, one
 * by the batch functions over hashes, one by the batch functions over keys;
 * a fourth, the plain reference model of tests/support/filter_ref.c, says
 * what every answer must be.  After every batch the counters of all four
 * must agree, and the saved bit arrays of the three filters must be
 * byte-identical.  The tests also count, and require, repeats within the
 * look-ahead and recycles inside a batch, so they cannot pass vacuously.
 * (The AVX-512 paths against the scalar code: tests/test_simd.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter/filter_internal.h"
#include "filter_ref.h"
#include "filter_util.h"

#define MAX_BATCH 700

static const rbf_hashing HASHINGS[2] = {RBF_COLLIDING, RBF_NON_COLLIDING};
static const rbf_recycle_mode RECYCLES[2] = {RBF_NON_RETAINING, RBF_RETAINING};

static rbf *make(const rbf_config *c)
{
    rbf *f = NULL;
    int rc = rbf_new(c, &f);
    if (rc != RBF_OK)
        print_error("rbf_new: %s (bits %llu k %u sigma %llu N %llu phases %u)\n",
                    rbf_strerror(rc), (unsigned long long)c->bits, c->hashes,
                    (unsigned long long)c->sigma, (unsigned long long)c->messages, c->phases);
    assert_int_equal(rc, RBF_OK);
    assert_non_null(f);
    return f;
}

/* ---- messages: message u of the universe is a key of u % 19 bytes (0 to
 * 18: the empty key, short keys, longer than 16), a fixed function of u so
 * that a repeat is the same message. */

#define KEY_MAX 18

typedef struct msg {
    uint8_t bytes[KEY_MAX];
    size_t len;
} msg;

static void make_msg(msg *m, uint64_t u, uint64_t salt)
{
    uint64_t s = u ^ salt;
    m->len = (size_t)(u % 19);
    for (size_t i = 0; i < KEY_MAX; i++)
        m->bytes[i] = (uint8_t)(tu_next(&s) >> 56);
}

/* The key pointer passed for message m: NULL for some empty keys (allowed
 * with length 0), else the bytes. */
static const void *msg_ptr(const msg *m, uint64_t u)
{
    return m->len == 0 && (u & 32) ? NULL : m->bytes;
}

/* Batch sizes: around the look-ahead often, sometimes large. */
static size_t pick_batch(uint64_t *rng)
{
    static const size_t small[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 31, 32, 33};
    uint64_t r = tu_below(rng, 10);
    if (r < 6)
        return small[tu_below(rng, sizeof small / sizeof small[0])];
    if (r < 9)
        return 1 + (size_t)tu_below(rng, 100);
    return 1 + (size_t)tu_below(rng, MAX_BATCH);
}

/* Universe indices for a batch: fresh draws, with runs of near repeats (a
 * message that came 1..12 places earlier in the batch) mixed in. */
static void pick_messages(uint64_t *rng, uint64_t universe, uint64_t *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = tu_below(rng, 100);
        if (i > 0 && r < 30)
            u[i] = u[i - 1 - (size_t)tu_below(rng, i < 12 ? i : 12)];
        else
            u[i] = tu_below(rng, universe);
    }
}

typedef struct counters {
    uint64_t near_repeats;     /* insertions of a message that came <= 8 places earlier */
    uint64_t batch_recycles;   /* batches of >= 2 messages during which the filter recycled */
    uint64_t batches;
} counters;

static void stats_equal(const rbf *a, const rbf *b, const char *what, uint64_t step)
{
    rbf_stats x, y;
    rbf_get_stats(a, &x);
    rbf_get_stats(b, &y);
    if (memcmp(&x, &y, sizeof x) != 0) {
        print_error("batch %llu: %s: set %llu/%llu frozen %llu/%llu cycles %llu/%llu c %llu/%llu "
                    "inserts %llu/%llu new %llu/%llu\n",
                    (unsigned long long)step, what, (unsigned long long)x.bits_set,
                    (unsigned long long)y.bits_set, (unsigned long long)x.frozen_bits_set,
                    (unsigned long long)y.frozen_bits_set, (unsigned long long)x.cycles,
                    (unsigned long long)y.cycles, (unsigned long long)x.cycle_messages,
                    (unsigned long long)y.cycle_messages, (unsigned long long)x.inserts,
                    (unsigned long long)y.inserts, (unsigned long long)x.reported_new,
                    (unsigned long long)y.reported_new);
        fail();
    }
}

static void ref_stats_equal(const rbf *f, const filter_ref *r, uint64_t step)
{
    rbf_stats x, y;
    rbf_get_stats(f, &x);
    filter_ref_stats(r, &y);
    y.seed = x.seed;
    if (memcmp(&x, &y, sizeof x) != 0) {
        print_error("batch %llu: library and reference model disagree on the counters\n",
                    (unsigned long long)step);
        fail();
    }
}

static void saved_equal(const rbf *a, const rbf *b, const filter_ref *r, uint64_t step)
{
    uint64_t la, lb, where;
    uint8_t *sa = tu_saved(a, &la);
    uint8_t *sb = tu_saved(b, &lb);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_int_equal(la, lb);
    if (memcmp(sa, sb, (size_t)la) != 0) {
        print_error("batch %llu: saved filters differ\n", (unsigned long long)step);
        fail();
    }
    if (r && filter_ref_compare_saved(r, sa, la, &where) != 0) {
        print_error("batch %llu: bit %llu differs from the reference model\n",
                    (unsigned long long)step, (unsigned long long)where);
        fail();
    }
    free(sa);
    free(sb);
}

/* Run `batches` random batches through the three filters and the model. */
static void lockstep(const rbf_config *c, uint64_t universe, uint64_t batches, uint64_t rng,
                     counters *cnt)
{
    rbf *one = make(c), *many = make(c), *keys = make(c);
    filter_ref ref;
    assert_int_equal(filter_ref_init(&ref, c), 0);
    uint64_t salt = tu_next(&rng);
    uint64_t *u = malloc(MAX_BATCH * sizeof *u);
    uint64_t *hashes = malloc(MAX_BATCH * sizeof *hashes);
    msg *msgs = malloc(MAX_BATCH * sizeof *msgs);
    const void **kp = malloc(MAX_BATCH * sizeof *kp);
    size_t *lens = malloc(MAX_BATCH * sizeof *lens);
    uint8_t *want = malloc(MAX_BATCH), *got_h = malloc(MAX_BATCH), *got_k = malloc(MAX_BATCH);
    uint64_t *pos = malloc(RBF_MAX_HASHES * sizeof *pos);
    assert_true(u && hashes && msgs && kp && lens && want && got_h && got_k && pos);
    uint64_t check_bits_every = ref.m <= 4096 ? 1 : 17;

    for (uint64_t step = 0; step < batches; step++) {
        size_t n = pick_batch(&rng);
        pick_messages(&rng, universe, u, n);
        for (size_t i = 0; i < n; i++) {
            make_msg(&msgs[i], u[i], salt);
            kp[i] = msg_ptr(&msgs[i], u[i]);
            lens[i] = msgs[i].len;
            hashes[i] = rbf_hash(one, kp[i], lens[i]);
        }
        uint64_t op = tu_below(&rng, 100);
        int with_results = tu_below(&rng, 4) != 0; /* results == NULL a quarter of the time */
        if (op < 75) {
            rbf_stats before;
            rbf_get_stats(one, &before);
            int64_t want_new = 0;
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(rbf_positions(one, hashes[i], pos), (int)c->hashes);
                int r = rbf_insert(one, kp[i], lens[i]);
                assert_int_equal(r, filter_ref_insert(&ref, pos));
                want[i] = (uint8_t)r;
                want_new += r;
                if (i > 0)
                    for (size_t j = i >= 8 ? i - 8 : 0; j < i; j++)
                        if (u[j] == u[i]) {
                            cnt->near_repeats++;
                            break;
                        }
            }
            rbf_stats after;
            rbf_get_stats(one, &after);
            if (n >= 2 && after.cycles != before.cycles)
                cnt->batch_recycles++;
            assert_int_equal(rbf_insert_many(many, hashes, n, with_results ? got_h : NULL),
                             want_new);
            assert_int_equal(rbf_insert_keys(keys, kp, lens, n, with_results ? got_k : NULL),
                             want_new);
            if (with_results) {
                assert_memory_equal(got_h, want, n);
                assert_memory_equal(got_k, want, n);
            }
        } else if (op < 98) {
            int64_t want_seen = 0;
            for (size_t i = 0; i < n; i++) {
                rbf_positions(one, hashes[i], pos);
                int r = rbf_contains(one, kp[i], lens[i]);
                assert_int_equal(r, filter_ref_contains(&ref, pos));
                assert_int_equal(rbf_contains_hash(one, hashes[i]), r);
                want[i] = (uint8_t)r;
                want_seen += r;
            }
            assert_int_equal(rbf_contains_many(many, hashes, n, with_results ? got_h : NULL),
                             want_seen);
            assert_int_equal(rbf_contains_keys(keys, kp, lens, n, with_results ? got_k : NULL),
                             want_seen);
            if (with_results) {
                assert_memory_equal(got_h, want, n);
                assert_memory_equal(got_k, want, n);
            }
        } else {
            assert_int_equal(rbf_recycle(one), RBF_OK);
            assert_int_equal(rbf_recycle(many), RBF_OK);
            assert_int_equal(rbf_recycle(keys), RBF_OK);
            filter_ref_recycle(&ref);
        }
        cnt->batches++;
        stats_equal(one, many, "single vs rbf_*_many", step);
        stats_equal(one, keys, "single vs rbf_*_keys", step);
        ref_stats_equal(one, &ref, step);
        if (step % check_bits_every == 0 || step + 1 == batches) {
            saved_equal(one, many, &ref, step);
            saved_equal(one, keys, NULL, step);
        }
    }
    free(u);
    free(hashes);
    free(msgs);
    free(kp);
    free(lens);
    free(want);
    free(got_h);
    free(got_k);
    free(pos);
    filter_ref_free(&ref);
    rbf_free(one);
    rbf_free(many);
    rbf_free(keys);
}

/* Whether RBF_TEST_SHRINK cut the loop counts (valgrind runs). */
static int shrunk(void)
{
    return tu_scaled(1000) != 1000;
}

struct bcase {
    uint64_t m; /* bits per filter */
    unsigned k;
    uint64_t sigma;
    uint64_t n;
    uint64_t universe;
    uint64_t batches;
};

static void run_cases(const struct bcase *cases, size_t ncases, uint64_t rng)
{
    counters total = {0, 0, 0};
    for (size_t ci = 0; ci < ncases; ci++) {
        const struct bcase *bc = &cases[ci];
        for (int v = 0; v < 16; v++) {
            int sig = v & 1, h = (v >> 1) & 1, ret = (v >> 2) & 1;
            unsigned ph = 1 + (unsigned)((v >> 3) & 1);
            rbf_config c = tu_config(ph == 2 ? 2 * bc->m + (ci & 1) : bc->m, bc->k,
                                     sig ? bc->sigma : 0, sig ? 0 : bc->n, HASHINGS[h],
                                     RECYCLES[ret], ph, tu_next(&rng));
            counters cnt = {0, 0, 0};
            lockstep(&c, bc->universe, tu_scaled(bc->batches), tu_next(&rng), &cnt);
            /* every variant saw recycles inside batches and near repeats
             * (checked on full-length runs; RBF_TEST_SHRINK runs are too
             * short to promise it) */
            if (!shrunk() && (cnt.batch_recycles == 0 || cnt.near_repeats == 0)) {
                print_error("case %zu variant %d: %llu recycles inside batches, %llu near "
                            "repeats: the stream did not exercise the pipeline\n",
                            ci, v, (unsigned long long)cnt.batch_recycles,
                            (unsigned long long)cnt.near_repeats);
                fail();
            }
            total.batch_recycles += cnt.batch_recycles;
            total.near_repeats += cnt.near_repeats;
            total.batches += cnt.batches;
        }
    }
    assert_true(total.batches > 0);
}

/* Small filters: recycles and swaps inside most batches. */
static void test_batch_equals_single_small(void **state)
{
    (void)state;
    static const struct bcase cases[] = {
        {1000, 3, 300, 100, 400, 60},  /* the paper's setup */
        {64, 2, 40, 9, 60, 60},        /* tiny */
        {4099, 7, 7, 1, 50, 40},       /* sigma = k, N = 1: every new message recycles */
        {2000, 7, 1000, 150, 600, 60}, /* k = 7, sigma = M/2 */
        {130, 1, 60, 20, 200, 60},     /* k = 1 */
    };
    run_cases(cases, sizeof cases / sizeof cases[0], 77);
}

/* Large k: the look-ahead shrinks to a few messages (k = 256 is the
 * maximum). */
static void test_batch_equals_single_large_k(void **state)
{
    (void)state;
    static const struct bcase cases[] = {
        {3000, 150, 1500, 12, 80, 25},
        {2600, 256, 1300, 5, 40, 20},
    };
    run_cases(cases, sizeof cases / sizeof cases[0], 78);
}

/* A filter large enough for the huge-page allocation path (several MiB),
 * with N small enough that it still recycles inside batches. */
static void test_batch_equals_single_big_filter(void **state)
{
    (void)state;
    uint64_t rng = 79;
    for (unsigned ph = 1; ph <= 2; ph++) {
        rbf_config c = tu_config((UINT64_C(1) << 25) * ph, 5, 0, 40, RBF_COLLIDING,
                                 RBF_NON_RETAINING, ph, tu_next(&rng));
        counters cnt = {0, 0, 0};
        lockstep(&c, 200, tu_scaled(30), tu_next(&rng), &cnt);
        assert_true(shrunk() || cnt.batch_recycles > 0);
    }
}

/* A message repeated back to back inside one batch is seen from its second
 * arrival on, whatever the look-ahead; a recycle between two arrivals makes
 * the second new again. */
static void test_repeats_inside_one_batch(void **state)
{
    (void)state;
    rbf_config c = tu_config(4096, 7, 0, 3, RBF_COLLIDING, RBF_NON_RETAINING, 1, 5);
    rbf *f = make(&c);
    uint64_t h[12];
    uint8_t res[12];
    for (int i = 0; i < 12; i++)
        h[i] = 0x1234567890abcdefULL; /* one message, twelve times */
    assert_int_equal(rbf_insert_many(f, h, 12, res), 1);
    assert_int_equal(res[0], 1);
    for (int i = 1; i < 12; i++)
        assert_int_equal(res[i], 0);
    /* N = 3: messages a b c fill the cycle, the filter recycles, a is new again */
    rbf_recycle(f);
    uint64_t s[5] = {11, 22, 33, 11, 22};
    for (int i = 0; i < 5; i++)
        s[i] = tu_next(&s[i]);
    assert_int_equal(rbf_insert_many(f, s, 5, res), 5);
    rbf_stats st;
    rbf_get_stats(f, &st);
    assert_int_equal(st.cycles, 2);       /* one rbf_recycle, one N recycle */
    assert_int_equal(st.cycle_messages, 2); /* the second a and b */
    rbf_free(f);
}

static void test_batch_arguments(void **state)
{
    (void)state;
    rbf_config c = tu_config(1000, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 9);
    rbf *f = make(&c);
    uint64_t h[2] = {1, 2};
    uint8_t res[3];
    const void *kp[3] = {"a", NULL, "c"};
    size_t lens[3] = {1, 4, 1};
    assert_int_equal(rbf_insert_many(NULL, h, 2, res), RBF_EINVAL);
    assert_int_equal(rbf_contains_many(NULL, h, 2, res), RBF_EINVAL);
    assert_int_equal(rbf_insert_many(f, NULL, 2, res), RBF_EINVAL);
    assert_int_equal(rbf_contains_many(f, NULL, 2, res), RBF_EINVAL);
    assert_int_equal(rbf_insert_many(f, NULL, 0, NULL), 0);
    assert_int_equal(rbf_contains_many(f, NULL, 0, NULL), 0);
    assert_int_equal(rbf_insert_keys(NULL, kp, lens, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_contains_keys(NULL, kp, lens, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_insert_keys(f, NULL, lens, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_insert_keys(f, kp, NULL, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_contains_keys(f, NULL, lens, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_contains_keys(f, kp, NULL, 1, NULL), RBF_EINVAL);
    assert_int_equal(rbf_insert_keys(f, NULL, NULL, 0, NULL), 0);
    assert_int_equal(rbf_contains_keys(f, NULL, NULL, 0, NULL), 0);
    /* a NULL key with a length, third of three: nothing at all is processed */
    assert_int_equal(rbf_insert_keys(f, kp, lens, 3, res), RBF_EINVAL);
    assert_int_equal(rbf_contains_keys(f, kp, lens, 3, res), RBF_EINVAL);
    rbf_stats st;
    rbf_get_stats(f, &st);
    assert_int_equal(st.inserts, 0);
    assert_int_equal(st.bits_set, 0);
    /* a NULL key of length 0 is the empty message */
    lens[1] = 0;
    assert_int_equal(rbf_insert_keys(f, kp, lens, 3, res), 3);
    assert_int_equal(rbf_contains(f, NULL, 0), 1);
    assert_int_equal(rbf_contains(f, "", 0), 1);
    assert_int_equal(rbf_contains_keys(f, kp, lens, 3, res), 3);
    rbf_free(f);
}

/* The scalar hot path, forced with RBF_NO_SIMD on a machine that has
 * AVX-512, gives the same batch results too. */
static void test_batch_equals_single_scalar_path(void **state)
{
    (void)state;
    static const struct bcase cases[] = {
        {1000, 3, 300, 100, 400, 40},
        {2000, 7, 1000, 150, 600, 40},
    };
    const char *old = getenv("RBF_NO_SIMD");
    setenv("RBF_NO_SIMD", "1", 1);
    run_cases(cases, sizeof cases / sizeof cases[0], 80);
    if (!old)
        unsetenv("RBF_NO_SIMD");
}

/* The same on the AVX2 path (RBF_NO_AVX512) and on the portable fast path
 * (RBF_NO_AVX2), whatever the machine: each path's batches equal its
 * single calls (and tests/test_fast_portable.c, test_flat_avx2.c compare
 * each path with the reference). */
static void run_cases_with(const char *var)
{
    static const struct bcase cases[] = {
        {1000, 3, 300, 100, 400, 40},
        {2000, 7, 1000, 150, 600, 40},
    };
    const char *old = getenv(var);
    setenv(var, "1", 1);
    run_cases(cases, sizeof cases / sizeof cases[0], 80);
    if (!old)
        unsetenv(var);
}

static void test_batch_equals_single_avx2_path(void **state)
{
    (void)state;
    run_cases_with("RBF_NO_AVX512");
}

static void test_batch_equals_single_portable_path(void **state)
{
    (void)state;
    run_cases_with("RBF_NO_AVX2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_arguments),
        cmocka_unit_test(test_repeats_inside_one_batch),
        cmocka_unit_test(test_batch_equals_single_small),
        cmocka_unit_test(test_batch_equals_single_large_k),
        cmocka_unit_test(test_batch_equals_single_big_filter),
        cmocka_unit_test(test_batch_equals_single_scalar_path),
        cmocka_unit_test(test_batch_equals_single_avx2_path),
        cmocka_unit_test(test_batch_equals_single_portable_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
