/*
 * test_filter.c -- the filter's semantics (MODEL.md section 1, include/rbf.h)
 * for every variant: sigma/N-bounded x colliding/non-colliding x
 * retaining/non-retaining x one/two phases.
 *
 * Two kinds of check:
 *   - targeted tests of each rule (test-first, sigma never exceeded, what a
 *     recycle keeps, N counting, contains changing nothing, the two-phase
 *     swap, rbf_recycle, the counters), looking at the bit arrays through
 *     rbf_save_buffer;
 *   - a lock-step run against tests/support/filter_ref.c, a plain
 *     implementation of MODEL.md section 1, on random streams, comparing every
 *     return value and every counter after every call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter_ref.h"
#include "filter_util.h"

static const rbf_hashing HASHINGS[2] = {RBF_COLLIDING, RBF_NON_COLLIDING};
static const rbf_recycle_mode RECYCLES[2] = {RBF_NON_RETAINING, RBF_RETAINING};

static rbf *make(rbf_config c)
{
    rbf *f = NULL;
    int rc = rbf_new(&c, &f);
    if (rc != RBF_OK)
        print_error("rbf_new: %s (bits %llu k %u sigma %llu N %llu)\n", rbf_strerror(rc),
                    (unsigned long long)c.bits, c.hashes, (unsigned long long)c.sigma,
                    (unsigned long long)c.messages);
    assert_int_equal(rc, RBF_OK);
    assert_non_null(f);
    return f;
}

static uint64_t popcount_saved(const rbf *f, int which)
{
    rbf_stats s;
    rbf_get_stats(f, &s);
    uint64_t len, n = 0;
    uint8_t *buf = tu_saved(f, &len);
    assert_non_null(buf);
    for (uint64_t i = 0; i < s.bits; i++)
        n += (uint64_t)tu_saved_bit(buf, s.bits, which, i);
    free(buf);
    return n;
}

/* Number of distinct positions of `hash` (colliding hashing may repeat). */
static uint64_t distinct_positions(const rbf *f, uint64_t hash, uint64_t *pos)
{
    int k = rbf_positions(f, hash, pos);
    assert_true(k > 0);
    uint64_t d = 0;
    for (int i = 0; i < k; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= pos[j] == pos[i];
        d += !dup;
    }
    return d;
}

/* ---------------------------------------------------------------- basics */

static void test_insert_is_test_first(void **state)
{
    (void)state;
    for (int h = 0; h < 2; h++)
        for (unsigned ph = 1; ph <= 2; ph++) {
            rbf *f = make(tu_config(10000 * ph, 5, 4000, 0, HASHINGS[h], RBF_NON_RETAINING, ph, 42));
            uint64_t pos[5];
            uint64_t total = 0;
            for (uint64_t key = 0; key < 50; key++) {
                uint64_t hash = rbf_hash(f, &key, sizeof key);
                rbf_stats before, after;
                rbf_get_stats(f, &before);
                int seen_before = rbf_contains_hash(f, hash);
                int r = rbf_insert_hash(f, hash);
                rbf_get_stats(f, &after);
                /* new iff not all bits were set; bits_set grows by exactly d */
                uint64_t d = 0, dpos = distinct_positions(f, hash, pos);
                (void)dpos;
                uint64_t len;
                uint8_t *buf = tu_saved(f, &len);
                for (unsigned i = 0; i < 5; i++)
                    assert_int_equal(tu_saved_bit(buf, after.bits, 0, pos[i]), 1);
                free(buf);
                d = after.bits_set - before.bits_set;
                assert_int_equal(r, !seen_before);
                if (r == 1) {
                    assert_true(d >= 1);
                    assert_int_equal(after.cycle_messages, before.cycle_messages + 1);
                } else {
                    assert_int_equal(d, 0);
                    assert_int_equal(after.cycle_messages, before.cycle_messages);
                }
                total += d;
                /* the same message again: reported seen, nothing changes */
                assert_int_equal(rbf_insert_hash(f, hash), 0);
                assert_int_equal(rbf_contains_hash(f, hash), 1);
                rbf_stats again;
                rbf_get_stats(f, &again);
                assert_int_equal(again.bits_set, after.bits_set);
                assert_int_equal(again.cycle_messages, after.cycle_messages);
                assert_int_equal(again.inserts, after.inserts + 1);
                assert_int_equal(again.reported_new, after.reported_new);
            }
            assert_int_equal(popcount_saved(f, 0), total);
            rbf_free(f);
        }
}

/* rbf_insert(key) is rbf_insert_hash(rbf_hash(key)); rbf_contains likewise;
 * the batch calls equal the single calls. */
static void test_key_hash_and_batch_paths_agree(void **state)
{
    (void)state;
    rbf_config c = tu_config(2000, 4, 700, 0, RBF_COLLIDING, RBF_RETAINING, 2, 7);
    rbf *a = make(c), *b = make(c), *d = make(c);
    enum { N = 3000 };
    uint64_t *hashes = malloc(N * sizeof *hashes);
    const void **keys = malloc(N * sizeof *keys);
    size_t *lens = malloc(N * sizeof *lens);
    uint64_t *keyv = malloc(N * sizeof *keyv);
    uint8_t *res = malloc(N), *res2 = malloc(N);
    uint64_t rng = 99;
    for (size_t i = 0; i < N; i++) {
        keyv[i] = tu_below(&rng, 900);
        keys[i] = &keyv[i];
        lens[i] = (i % 3) ? sizeof keyv[i] : 5; /* some keys are 5-byte prefixes */
        hashes[i] = rbf_hash(a, keys[i], lens[i]);
    }
    int64_t newc = 0;
    for (size_t i = 0; i < N; i++) {
        int r = rbf_insert(a, keys[i], lens[i]);
        assert_true(r == 0 || r == 1);
        res[i] = (uint8_t)r;
        newc += r;
    }
    assert_int_equal(rbf_insert_many(b, hashes, N, res2), newc);
    assert_memory_equal(res, res2, N);
    assert_int_equal(rbf_insert_keys(d, (const void *const *)keys, lens, N, res2), newc);
    assert_memory_equal(res, res2, N);
    /* contains: single, hash, many */
    int64_t seen = 0;
    for (size_t i = 0; i < N; i++) {
        int r = rbf_contains(a, keys[i], lens[i]);
        assert_int_equal(r, rbf_contains_hash(a, hashes[i]));
        res[i] = (uint8_t)r;
        seen += r;
    }
    assert_int_equal(rbf_contains_many(b, hashes, N, res2), seen);
    assert_memory_equal(res, res2, N);
    assert_int_equal(rbf_insert_many(b, hashes, N, NULL), rbf_insert_many(d, hashes, N, NULL));
    rbf_stats sa, sb, sd;
    rbf_get_stats(b, &sb);
    rbf_get_stats(d, &sd);
    assert_memory_equal(&sb, &sd, sizeof sb);
    rbf_get_stats(a, &sa);
    assert_int_equal(sa.inserts, N);
    assert_int_equal(sa.reported_new, (uint64_t)newc);
    free(hashes);
    free(keys);
    free(lens);
    free(keyv);
    free(res);
    free(res2);
    rbf_free(a);
    rbf_free(b);
    rbf_free(d);
}

/* contains never changes anything, whatever the state. */
static void test_contains_changes_nothing(void **state)
{
    (void)state;
    for (int v = 0; v < 16; v++) {
        int sig = v & 1, h = (v >> 1) & 1, ret = (v >> 2) & 1;
        unsigned ph = 1 + (unsigned)((v >> 3) & 1);
        rbf *f = make(tu_config(1000 * ph, 3, sig ? 300 : 0, sig ? 0 : 100, HASHINGS[h],
                                RECYCLES[ret], ph, 5));
        uint64_t rng = 1000 + (uint64_t)v;
        for (int step = 0; step < 400; step++) {
            uint64_t hash = tu_next(&rng);
            if (step % 2)
                rbf_insert_hash(f, hash);
            uint64_t l1, l2;
            rbf_stats s1, s2;
            rbf_get_stats(f, &s1);
            uint8_t *b1 = tu_saved(f, &l1);
            for (int j = 0; j < 5; j++) {
                uint64_t q = tu_next(&rng);
                int r = rbf_contains_hash(f, q);
                assert_true(r == 0 || r == 1);
                assert_int_equal(rbf_contains_hash(f, q), r);
            }
            uint64_t old = 7;
            rbf_contains(f, &old, sizeof old);
            rbf_contains_many(f, &hash, 1, NULL);
            rbf_get_stats(f, &s2);
            uint8_t *b2 = tu_saved(f, &l2);
            assert_memory_equal(&s1, &s2, sizeof s1);
            assert_int_equal(l1, l2);
            assert_memory_equal(b1, b2, l1);
            free(b1);
            free(b2);
        }
        rbf_free(f);
    }
}

/* ------------------------------------------------------- sigma-bounded */

/* A sigma-bounded filter never holds more than sigma bits: checked after
 * every insertion, on the counter and (periodically) on the array itself. */
static void test_sigma_never_exceeded(void **state)
{
    (void)state;
    const uint64_t sigmas[] = {3, 17, 300, 999};
    for (int v = 0; v < 8; v++) {
        int h = v & 1, ret = (v >> 1) & 1;
        unsigned ph = 1 + (unsigned)((v >> 2) & 1);
        for (size_t si = 0; si < sizeof sigmas / sizeof sigmas[0]; si++) {
            rbf *f = make(tu_config(1000 * ph + ph - 1, 3, sigmas[si], 0, HASHINGS[h],
                                    RECYCLES[ret], ph, 11 + si));
            uint64_t rng = 77 * (uint64_t)v + si, n = 5000 + tu_scaled(15000), cycles_seen = 0;
            for (uint64_t i = 0; i < n; i++) {
                rbf_insert_hash(f, tu_next(&rng));
                rbf_stats s;
                rbf_get_stats(f, &s);
                assert_true(s.bits_set <= sigmas[si]);
                assert_true(s.frozen_bits_set <= sigmas[si]);
                if (i % 997 == 0) {
                    assert_int_equal(popcount_saved(f, 0), s.bits_set);
                    if (ph == 2)
                        assert_int_equal(popcount_saved(f, 1), s.frozen_bits_set);
                }
                cycles_seen = s.cycles;
            }
            assert_true(cycles_seen > 0); /* the run really recycled */
            rbf_free(f);
        }
    }
}

/* After a sigma recycle the active filter holds exactly the triggering
 * message's bits (retaining) or nothing (non-retaining); the triggering
 * message is reported new; a two-phase frozen filter holds the old active
 * filter as it was, without the triggering message. */
static void test_sigma_recycle_retaining_vs_not(void **state)
{
    (void)state;
    for (int v = 0; v < 8; v++) {
        int h = v & 1, ret = (v >> 1) & 1;
        unsigned ph = 1 + (unsigned)((v >> 2) & 1);
        uint64_t m = 500;
        rbf *f = make(tu_config(m * ph, 4, 120, 0, HASHINGS[h], RECYCLES[ret], ph, 3 + (uint64_t)v));
        uint64_t rng = 500 + (uint64_t)v, pos[4];
        int recycles = 0;
        for (int i = 0; i < 5000 && recycles < 20; i++) {
            uint64_t hash = tu_next(&rng);
            rbf_stats before, after;
            rbf_get_stats(f, &before);
            uint64_t l0;
            uint8_t *b0 = tu_saved(f, &l0);
            /* d = distinct positions whose bit is 0 in the active filter */
            uint64_t dp = distinct_positions(f, hash, pos), d = 0;
            for (uint64_t a = 0; a < 4; a++) {
                int dup = 0;
                for (uint64_t b = 0; b < a; b++)
                    dup |= pos[a] == pos[b];
                if (!dup && !tu_saved_bit(b0, m, 0, pos[a]))
                    d++;
            }
            int frozen_all = ph == 2;
            for (unsigned a = 0; a < 4 && ph == 2; a++)
                frozen_all &= tu_saved_bit(b0, m, 1, pos[a]);
            int r = rbf_insert_hash(f, hash);
            rbf_get_stats(f, &after);
            if (d > 0 && before.bits_set + d > 120) {
                /* the recycle */
                recycles++;
                assert_int_equal(after.cycles, before.cycles + 1);
                assert_int_equal(r, !frozen_all);
                uint64_t l1;
                uint8_t *b1 = tu_saved(f, &l1);
                for (uint64_t i2 = 0; i2 < m; i2++) {
                    int want = 0;
                    for (unsigned a = 0; a < 4 && ret; a++)
                        want |= pos[a] == i2;
                    assert_int_equal(tu_saved_bit(b1, m, 0, i2), want);
                    if (ph == 2) /* frozen = active before, without the message */
                        assert_int_equal(tu_saved_bit(b1, m, 1, i2), tu_saved_bit(b0, m, 0, i2));
                }
                assert_int_equal(after.bits_set, ret ? dp : 0);
                assert_int_equal(after.cycle_messages, ret ? 1 : 0);
                assert_int_equal(after.frozen_bits_set, ph == 2 ? before.bits_set : 0);
                free(b1);
            } else {
                assert_int_equal(after.cycles, before.cycles);
                assert_int_equal(after.bits_set, before.bits_set + d);
            }
            free(b0);
        }
        assert_int_equal(recycles, 20);
        rbf_free(f);
    }
}

/* ---------------------------------------------------------- N-bounded */

/* Only bit-setting insertions count; the filter recycles right after the
 * N-th one, whatever the recycle mode. */
static void test_n_bounded_counts_bit_setting_only(void **state)
{
    (void)state;
    for (int v = 0; v < 8; v++) {
        int h = v & 1, ret = (v >> 1) & 1;
        unsigned ph = 1 + (unsigned)((v >> 2) & 1);
        const uint64_t N = 25;
        rbf *f = make(tu_config(4096 * ph, 3, 0, N, HASHINGS[h], RECYCLES[ret], ph, 9));
        uint64_t rng = 4242 + (uint64_t)v, hashes[64];
        for (int cycle = 0; cycle < 4; cycle++) {
            uint64_t setting = 0, nh = 0;
            while (setting < N) {
                rbf_stats before, after;
                rbf_get_stats(f, &before);
                assert_int_equal(before.cycle_messages, setting);
                assert_int_equal(before.cycles, (uint64_t)cycle);
                uint64_t hash = tu_next(&rng);
                rbf_insert_hash(f, hash);
                rbf_get_stats(f, &after);
                if (before.bits_set == after.bits_set && after.cycles == before.cycles) {
                    /* set no bit: a false positive; not counted */
                    assert_int_equal(after.cycle_messages, setting);
                    continue;
                }
                setting++;
                hashes[nh++] = hash;
                /* repeats of earlier messages of this cycle set no bit */
                if (setting < N)
                    for (uint64_t j = 0; j < nh; j++) {
                        assert_int_equal(rbf_insert_hash(f, hashes[j]), 0);
                        rbf_stats again;
                        rbf_get_stats(f, &again);
                        assert_int_equal(again.cycle_messages, setting);
                        assert_int_equal(again.cycles, (uint64_t)cycle);
                    }
            }
            rbf_stats s;
            rbf_get_stats(f, &s);
            /* right after the N-th bit-setting insertion */
            assert_int_equal(s.cycles, (uint64_t)cycle + 1);
            assert_int_equal(s.cycle_messages, 0);
            assert_int_equal(s.bits_set, 0);
            assert_int_equal(popcount_saved(f, 0), 0);
            if (ph == 2) {
                /* the cycle's messages are all still reported seen */
                assert_true(s.frozen_bits_set > 0);
                for (uint64_t j = 0; j < nh; j++)
                    assert_int_equal(rbf_contains_hash(f, hashes[j]), 1);
            }
        }
        rbf_free(f);
    }
}

/* N = 1: every bit-setting insertion recycles at once. */
static void test_n_bounded_one(void **state)
{
    (void)state;
    rbf *f = make(tu_config(1000, 2, 0, 1, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1));
    uint64_t rng = 1;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(rbf_insert_hash(f, tu_next(&rng)), 1);
        rbf_stats s;
        rbf_get_stats(f, &s);
        assert_int_equal(s.cycles, (uint64_t)i + 1);
        assert_int_equal(s.bits_set, 0);
    }
    rbf_free(f);
}

/* ---------------------------------------------------------- two-phase */

/* Old messages stay reported seen through the frozen filter for one more
 * cycle and are gone after the next swap (unless the new cycle's bits cover
 * them, which is checked exactly from their positions). */
static void test_two_phase_swap(void **state)
{
    (void)state;
    for (int v = 0; v < 8; v++) {
        int sig = v & 1, h = (v >> 1) & 1, ret = (v >> 2) & 1;
        uint64_t m = 2048;
        rbf *f = make(tu_config(2 * m + 1, 3, sig ? 400 : 0, sig ? 0 : 100, HASHINGS[h],
                                RECYCLES[ret], 2, 21));
        rbf_stats s;
        rbf_get_stats(f, &s);
        assert_int_equal(s.bits, m); /* floor((2m+1)/2) */
        uint64_t rng = 31 + (uint64_t)v;
        enum { MAXC = 2000 };
        uint64_t *prev = malloc(MAXC * sizeof *prev), *cur = malloc(MAXC * sizeof *cur);
        size_t nprev = 0, ncur = 0;
        uint64_t last_cycles = 0;
        int swaps = 0;
        while (swaps < 6) {
            uint64_t hash = tu_next(&rng);
            int r = rbf_insert_hash(f, hash);
            rbf_get_stats(f, &s);
            if (s.cycles != last_cycles) {
                last_cycles = s.cycles;
                swaps++;
                /* the cycle that just ended is now frozen: all its messages
                 * (not the trigger) are still seen */
                for (size_t j = 0; j < ncur; j++)
                    assert_int_equal(rbf_contains_hash(f, cur[j]), 1);
                /* the cycle before is gone: seen only if its bits are all set
                 * in the active or the frozen filter */
                uint64_t len;
                uint8_t *buf = tu_saved(f, &len);
                size_t gone = 0;
                for (size_t j = 0; j < nprev; j++) {
                    uint64_t pos[3];
                    rbf_positions(f, prev[j], pos);
                    int in_a = 1, in_f = 1;
                    for (int a = 0; a < 3; a++) {
                        in_a &= tu_saved_bit(buf, m, 0, pos[a]);
                        in_f &= tu_saved_bit(buf, m, 1, pos[a]);
                    }
                    assert_int_equal(rbf_contains_hash(f, prev[j]), in_a || in_f);
                    gone += !(in_a || in_f);
                }
                free(buf);
                if (nprev > 20)
                    assert_true(gone > nprev / 2); /* most really forgotten */
                memcpy(prev, cur, ncur * sizeof *cur);
                nprev = ncur;
                ncur = 0;
                if (sig && ret && r == 1)
                    cur[ncur++] = hash; /* retained into the new cycle */
                if (!sig)
                    assert_int_equal(s.bits_set, 0);
            } else if (r == 1) {
                assert_true(ncur < MAXC);
                cur[ncur++] = hash;
            }
        }
        free(prev);
        free(cur);
        rbf_free(f);
    }
}

/* rbf_recycle: one-phase clears; two-phase clears the frozen filter and
 * swaps; counts a cycle and resets the cycle's message count. */
static void test_rbf_recycle(void **state)
{
    (void)state;
    for (unsigned ph = 1; ph <= 2; ph++) {
        rbf *f = make(tu_config(3000 * ph, 4, 0, 500, RBF_NON_COLLIDING, RBF_NON_RETAINING, ph, 8));
        uint64_t rng = 2;
        for (int i = 0; i < 50; i++)
            rbf_insert_hash(f, tu_next(&rng));
        rbf_stats s0, s1, s2;
        rbf_get_stats(f, &s0);
        uint64_t l0;
        uint8_t *b0 = tu_saved(f, &l0);
        assert_int_equal(rbf_recycle(f), RBF_OK);
        rbf_get_stats(f, &s1);
        assert_int_equal(s1.cycles, s0.cycles + 1);
        assert_int_equal(s1.cycle_messages, 0);
        assert_int_equal(s1.bits_set, 0);
        assert_int_equal(s1.inserts, s0.inserts);
        assert_int_equal(s1.reported_new, s0.reported_new);
        assert_int_equal(s1.frozen_bits_set, ph == 2 ? s0.bits_set : 0);
        uint64_t l1;
        uint8_t *b1 = tu_saved(f, &l1);
        for (uint64_t i = 0; i < s1.bits; i++) {
            assert_int_equal(tu_saved_bit(b1, s1.bits, 0, i), 0);
            if (ph == 2)
                assert_int_equal(tu_saved_bit(b1, s1.bits, 1, i), tu_saved_bit(b0, s1.bits, 0, i));
        }
        free(b0);
        free(b1);
        assert_int_equal(rbf_recycle(f), RBF_OK);
        rbf_get_stats(f, &s2);
        assert_int_equal(s2.cycles, s0.cycles + 2);
        assert_int_equal(s2.bits_set, 0);
        assert_int_equal(s2.frozen_bits_set, 0);
        assert_int_equal(popcount_saved(f, 0), 0);
        rbf_free(f);
    }
}

static void test_stats_fields(void **state)
{
    (void)state;
    rbf_config c = tu_config(1001, 3, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 2, 0xabcdef);
    rbf *f = make(c);
    rbf_stats s;
    rbf_get_stats(f, &s);
    assert_int_equal(s.bits, 500);
    assert_int_equal(s.seed, 0xabcdef);
    assert_int_equal(s.bits_set + s.frozen_bits_set + s.cycles + s.cycle_messages + s.inserts +
                         s.reported_new,
                     0);
    rbf_config back;
    rbf_get_config(f, &back);
    assert_int_equal(back.bits, c.bits);
    assert_int_equal(back.hashes, c.hashes);
    assert_int_equal(back.sigma, c.sigma);
    assert_int_equal(back.messages, c.messages);
    assert_int_equal(back.hashing, c.hashing);
    assert_int_equal(back.recycle, c.recycle);
    assert_int_equal(back.phases, c.phases);
    assert_int_equal(back.seed, c.seed);
    rbf_free(f);
    f = make(tu_config(777, 2, 100, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1));
    rbf_get_stats(f, &s);
    assert_int_equal(s.bits, 777);
    assert_int_equal(s.frozen_bits_set, 0);
    rbf_free(f);
}

/* ------------------------------------------------------- bad arguments */

/* rbf_insert_positions_many is n calls of rbf_insert_positions, and both
 * are rbf_insert_hash on the hash the positions came from: every result
 * (with RBF_RECYCLED exactly when the filter recycled), every counter and
 * the saved bits agree, on every variant, k from 1 to 12, concurrent or
 * not, in blocks of random sizes over a pool of repeating messages. */
static void test_positions_many(void **state)
{
    (void)state;
    const unsigned ks[] = {1, 3, 8, 12};
    uint64_t rs = 99;
    int cases = 0;
    for (size_t ki = 0; ki < 4; ki++)
        for (unsigned ph = 1; ph <= 2; ph++)
            for (int hi = 0; hi < 2; hi++)
                for (int ri = 0; ri < 2; ri++)
                    for (int nb = 0; nb < 2; nb++)
                        for (int conc = 0; conc < 2; conc++)
                        for (int blk = 0; blk < 2; blk++) {
                            const unsigned k = ks[ki];
                            if (nb && ri)
                                continue; /* retaining is sigma-bounded */
                            /* blocked: whole blocks of 512 bits per filter */
                            rbf_config c = tu_config(blk ? 1024 * ph : 1000, k, nb ? 0 : 150,
                                                     nb ? 60 : 0, HASHINGS[hi], RECYCLES[ri], ph, 5);
                            c.layout = blk ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
                            rbf *ref = make(c);
                            c.concurrent = (unsigned)conc;
                            rbf *one = make(c), *many = make(c), *quiet = make(c);
                            enum { POOL = 400 };
                            static uint64_t pos[POOL * 12], hashes[POOL];
                            for (unsigned i = 0; i < POOL; i++) {
                                hashes[i] = tu_next(&rs);
                                assert_int_equal(rbf_positions(ref, hashes[i], pos + i * k), (int)k);
                            }
                            uint32_t ids[300];
                            uint8_t res[300];
                            for (int round = 0; round < 40; round++) {
                                size_t n = (size_t)tu_below(&rs, 300);
                                for (size_t j = 0; j < n; j++)
                                    ids[j] = (uint32_t)tu_below(&rs, POOL);
                                assert_int_equal(rbf_insert_positions_many(many, pos, ids, n, res),
                                                 (int64_t)n);
                                /* results may be NULL: the same insertions */
                                assert_int_equal(rbf_insert_positions_many(quiet, pos, ids, n, NULL),
                                                 (int64_t)n);
                                for (size_t j = 0; j < n; j++) {
                                    rbf_stats a, b;
                                    rbf_get_stats(ref, &a);
                                    int want = rbf_insert_hash(ref, hashes[ids[j]]);
                                    rbf_get_stats(ref, &b);
                                    want |= (b.cycles != a.cycles) * RBF_RECYCLED;
                                    if (res[j] != want ||
                                        rbf_insert_positions(one, pos + (uint64_t)ids[j] * k) != want)
                                        fail_msg("k %u phases %u %s %s %s conc %d blocked %d: "
                                                 "message %zu of round %d: want %d, many %d",
                                                 k, ph, hi ? "non-colliding" : "colliding",
                                                 ri ? "retaining" : "non-retaining",
                                                 nb ? "N" : "sigma", conc, blk, j, round, want,
                                                 res[j]);
                                }
                            }
                            rbf_stats a, b, d, e;
                            rbf_get_stats(quiet, &e);
                            rbf_get_stats(ref, &a);
                            rbf_get_stats(one, &b);
                            rbf_get_stats(many, &d);
                            assert_true(a.cycles > 1); /* the runs recycled */
                            assert_int_equal(rbf_cycles(many), a.cycles);
                            const uint64_t av[] = {a.bits_set, a.frozen_bits_set, a.cycles,
                                                   a.cycle_messages, a.inserts, a.reported_new};
                            const uint64_t bv[] = {b.bits_set, b.frozen_bits_set, b.cycles,
                                                   b.cycle_messages, b.inserts, b.reported_new};
                            const uint64_t dv[] = {d.bits_set, d.frozen_bits_set, d.cycles,
                                                   d.cycle_messages, d.inserts, d.reported_new};
                            const uint64_t ev[] = {e.bits_set, e.frozen_bits_set, e.cycles,
                                                   e.cycle_messages, e.inserts, e.reported_new};
                            for (int i = 0; i < 6; i++) {
                                assert_int_equal(bv[i], av[i]);
                                assert_int_equal(dv[i], av[i]);
                                assert_int_equal(ev[i], av[i]);
                            }
                            uint64_t la, ld;
                            uint8_t *sa = tu_saved(ref, &la), *sd = tu_saved(many, &ld);
                            assert_int_equal(la, ld);
                            assert_memory_equal(sa, sd, la);
                            free(sa);
                            free(sd);
                            /* a position outside the filter: the messages before it are done */
                            uint64_t bad[12 * 3];
                            memcpy(bad, pos, 2 * k * sizeof *bad);
                            for (unsigned j = 0; j < k; j++)
                                bad[2 * k + j] = j == k - 1 ? c.bits : pos[j];
                            const uint32_t bids[3] = {0, 1, 2};
                            rbf_get_stats(many, &a);
                            assert_int_equal(rbf_insert_positions_many(many, bad, bids, 3, res),
                                             RBF_EINVAL);
                            rbf_get_stats(many, &b);
                            assert_int_equal(b.inserts, a.inserts + 2);
                            assert_int_equal(rbf_insert_positions_many(many, NULL, bids, 1, res),
                                             RBF_EINVAL);
                            assert_int_equal(rbf_insert_positions_many(NULL, pos, bids, 1, res),
                                             RBF_EINVAL);
                            assert_int_equal(rbf_insert_positions_many(many, pos, bids, 0, NULL), 0);
                            rbf_free(ref);
                            rbf_free(one);
                            rbf_free(many);
                            rbf_free(quiet);
                            cases++;
                        }
    assert_int_equal(cases, 4 * 2 * 2 * 3 * 2 * 2);
}

static void test_null_arguments(void **state)
{
    (void)state;
    rbf *f = make(tu_config(100, 2, 50, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1));
    uint64_t pos[2];
    assert_int_equal(rbf_insert(NULL, "a", 1), RBF_EINVAL);
    assert_int_equal(rbf_insert(f, NULL, 1), RBF_EINVAL);
    assert_int_equal(rbf_contains(NULL, "a", 1), RBF_EINVAL);
    assert_int_equal(rbf_contains(f, NULL, 3), RBF_EINVAL);
    assert_int_equal(rbf_insert_hash(NULL, 1), RBF_EINVAL);
    assert_int_equal(rbf_contains_hash(NULL, 1), RBF_EINVAL);
    assert_true(rbf_insert_many(NULL, pos, 1, NULL) < 0);
    assert_true(rbf_insert_many(f, NULL, 1, NULL) < 0);
    assert_true(rbf_contains_many(NULL, pos, 1, NULL) < 0);
    assert_true(rbf_insert_keys(f, NULL, NULL, 1, NULL) < 0);
    assert_true(rbf_positions(NULL, 1, pos) < 0);
    assert_true(rbf_positions(f, 1, NULL) < 0);
    assert_true(rbf_recycle(NULL) < 0);
    rbf *g = (rbf *)&pos; /* must be overwritten with NULL */
    assert_int_equal(rbf_new(NULL, &g), RBF_EINVAL);
    assert_null(g);
    /* the empty message is a message */
    assert_int_equal(rbf_insert(f, NULL, 0), 1);
    assert_int_equal(rbf_insert(f, "", 0), 0);
    assert_int_equal(rbf_contains(f, NULL, 0), 1);
    rbf_stats s;
    rbf_get_stats(f, &s);
    assert_int_equal(s.inserts, 2);
    rbf_free(f);
    rbf_free(NULL);
    for (int code = -6; code <= 0; code++)
        assert_non_null(rbf_strerror(code));
    assert_non_null(rbf_strerror(-1000));
    assert_non_null(rbf_strerror(12345));
    assert_string_equal(rbf_version(), RBF_VERSION_STRING);
}

/* ------------------------------------------------ lock-step with model */

struct lockstep_case {
    uint64_t m;      /* bits per filter */
    unsigned k;
    uint64_t sigma;  /* used when sigma-bounded */
    uint64_t n;      /* used when N-bounded */
    uint64_t universe;
};

static void compare_stats(const rbf *f, const filter_ref *r, uint64_t seed, uint64_t step)
{
    rbf_stats a, b;
    rbf_get_stats(f, &a);
    filter_ref_stats(r, &b);
    b.seed = seed;
    if (memcmp(&a, &b, sizeof a) != 0) {
        print_error("step %llu: lib bits %llu set %llu frozen %llu cycles %llu c %llu ins %llu "
                    "new %llu | ref %llu %llu %llu %llu %llu %llu %llu\n",
                    (unsigned long long)step, (unsigned long long)a.bits,
                    (unsigned long long)a.bits_set, (unsigned long long)a.frozen_bits_set,
                    (unsigned long long)a.cycles, (unsigned long long)a.cycle_messages,
                    (unsigned long long)a.inserts, (unsigned long long)a.reported_new,
                    (unsigned long long)b.bits, (unsigned long long)b.bits_set,
                    (unsigned long long)b.frozen_bits_set, (unsigned long long)b.cycles,
                    (unsigned long long)b.cycle_messages, (unsigned long long)b.inserts,
                    (unsigned long long)b.reported_new);
        fail();
    }
}

static void compare_bits(const rbf *f, const filter_ref *r, uint64_t step)
{
    uint64_t len, where;
    uint8_t *buf = tu_saved(f, &len);
    assert_non_null(buf);
    if (filter_ref_compare_saved(r, buf, len, &where) != 0) {
        print_error("step %llu: bit arrays differ at %llu\n", (unsigned long long)step,
                    (unsigned long long)where);
        fail();
    }
    free(buf);
}

static void lockstep_run(const rbf_config *c, uint64_t universe, uint64_t steps, uint64_t rng)
{
    rbf *f = make(*c);
    filter_ref r;
    assert_int_equal(filter_ref_init(&r, c), 0);
    uint64_t pos[RBF_MAX_HASHES];
    uint64_t salt = tu_next(&rng);
    uint64_t bits_every = r.m <= 256 ? 1 : 61;
    for (uint64_t step = 0; step < steps; step++) {
        uint64_t op = tu_below(&rng, 100);
        uint64_t key = tu_below(&rng, universe) ^ salt;
        if (op < 60) { /* insert by hash */
            uint64_t hash = tu_next(&(uint64_t){key});
            assert_int_equal(rbf_positions(f, hash, pos), (int)c->hashes);
            int want = filter_ref_insert(&r, pos);
            assert_int_equal(rbf_insert_hash(f, hash), want);
        } else if (op < 75) { /* insert by key bytes */
            uint64_t hash = rbf_hash(f, &key, sizeof key);
            rbf_positions(f, hash, pos);
            int want = filter_ref_insert(&r, pos);
            assert_int_equal(rbf_insert(f, &key, sizeof key), want);
        } else if (op < 80) { /* a small batch */
            uint64_t hs[8];
            uint8_t res[8];
            int64_t want_new = 0;
            uint8_t want[8];
            for (int j = 0; j < 8; j++) {
                uint64_t kj = tu_below(&rng, universe) ^ salt;
                hs[j] = tu_next(&(uint64_t){kj});
                rbf_positions(f, hs[j], pos);
                want[j] = (uint8_t)filter_ref_insert(&r, pos);
                want_new += want[j];
            }
            assert_int_equal(rbf_insert_many(f, hs, 8, res), want_new);
            assert_memory_equal(res, want, 8);
        } else if (op < 99) { /* contains */
            uint64_t hash = tu_next(&(uint64_t){key});
            rbf_positions(f, hash, pos);
            assert_int_equal(rbf_contains_hash(f, hash), filter_ref_contains(&r, pos));
        } else { /* an explicit recycle */
            filter_ref_recycle(&r);
            assert_int_equal(rbf_recycle(f), RBF_OK);
        }
        compare_stats(f, &r, c->seed, step);
        if (c->sigma)
            assert_true(r.b <= c->sigma);
        if (step % bits_every == 0)
            compare_bits(f, &r, step);
    }
    compare_bits(f, &r, steps);
    /* it really exercised recycling */
    assert_true(r.cycles > 2);
    filter_ref_free(&r);
    rbf_free(f);
}

static void test_lockstep_every_variant(void **state)
{
    (void)state;
    const struct lockstep_case cases[] = {
        {1000, 3, 300, 100, 400},  /* the paper's setup */
        {32, 2, 31, 5, 40},        /* tiny, sigma = per-filter bits - 1 */
        {4099, 7, 7, 1, 50},       /* sigma = k (smallest), N = 1 */
        {64, 40, 63, 3, 30},       /* k close to M (non-colliding edge) */
        {130, 1, 60, 20, 200},     /* k = 1 */
        {700, 16, 250, 40, 300},
    };
    uint64_t rng = 2024;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int v = 0; v < 16; v++) {
            const struct lockstep_case *lc = &cases[ci];
            int sig = v & 1, h = (v >> 1) & 1, ret = (v >> 2) & 1;
            unsigned ph = 1 + (unsigned)((v >> 3) & 1);
            /* odd totals for two phases: floor(M/2) per filter */
            rbf_config c = tu_config(ph == 2 ? 2 * lc->m + (ci & 1) : lc->m, lc->k,
                                     sig ? lc->sigma : 0, sig ? 0 : lc->n, HASHINGS[h],
                                     RECYCLES[ret], ph, tu_next(&rng));
            lockstep_run(&c, lc->universe, tu_scaled(20000), tu_next(&rng));
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_is_test_first),
        cmocka_unit_test(test_key_hash_and_batch_paths_agree),
        cmocka_unit_test(test_contains_changes_nothing),
        cmocka_unit_test(test_sigma_never_exceeded),
        cmocka_unit_test(test_sigma_recycle_retaining_vs_not),
        cmocka_unit_test(test_n_bounded_counts_bit_setting_only),
        cmocka_unit_test(test_n_bounded_one),
        cmocka_unit_test(test_two_phase_swap),
        cmocka_unit_test(test_rbf_recycle),
        cmocka_unit_test(test_stats_fields),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_positions_many),
        cmocka_unit_test(test_lockstep_every_variant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
