/*
 * test_sim_truth.c -- the simulator's ground-truth bookkeeping on tiny
 * sequences checked by hand (docs/simulator.md gives the definitions).
 *
 * Filters of 8 bits per filter with k = 1, so each message is one position.
 * Messages are found by searching hashes whose position is known: A, B, G
 * share position 0 (B and G are false positives once A is in), C at 1, D at
 * 2, E at 3, H also at 3, F at 4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbf_sim.h"

enum { NEW = RBF_SIM_FNEW, FP = RBF_SIM_FFP, EACH = RBF_SIM_FEACH, REP = RBF_SIM_FREPEAT,
       FN = RBF_SIM_FFN, REC = RBF_SIM_FRECYCLE };

/* The nth (0-based) hash >= 1 whose single position in an 8-bit filter is p. */
static uint64_t hash_at(uint64_t p, int nth)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = 8;
    c.hashes = 1;
    c.sigma = 2;
    rbf *f;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    for (uint64_t h = 1;; h++) {
        uint64_t pos;
        assert_int_equal(rbf_positions(f, h, &pos), 1);
        if (pos == p && nth-- == 0) {
            rbf_free(f);
            return h;
        }
    }
}

static uint64_t A, B, C, D, E, F, G, H;

static int setup(void **state)
{
    (void)state;
    A = hash_at(0, 0);
    B = hash_at(0, 1);
    G = hash_at(0, 2);
    C = hash_at(1, 0);
    D = hash_at(2, 0);
    E = hash_at(3, 0);
    H = hash_at(3, 1);
    F = hash_at(4, 0);
    return 0;
}

static rbf_sim_config cfg_of(uint64_t bits, uint64_t sigma, uint64_t n, int retaining,
                             unsigned phases, int oracle)
{
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    c.filter.bits = bits;
    c.filter.hashes = 1;
    c.filter.sigma = sigma;
    c.filter.messages = n;
    c.filter.recycle = retaining ? RBF_RETAINING : RBF_NON_RETAINING;
    c.filter.phases = phases;
    c.oracle = oracle;
    return c;
}

static void check(const rbf_sim_config *c, const uint64_t *seq, const uint8_t *want, size_t n,
                  rbf_sim_counts *out)
{
    uint8_t got[64];
    assert_true(n <= sizeof got);
    assert_int_equal(rbf_sim_sequence(c, seq, n, out, got), RBF_OK);
    for (size_t i = 0; i < n; i++) {
        if (got[i] != want[i])
            print_error("arrival %zu: flags %u, expected %u\n", i, got[i], want[i]);
        assert_int_equal(got[i], want[i]);
    }
    assert_int_equal(out->arrivals, n);
    assert_int_equal(out->anomalies, 0);
}

/* One-phase sigma = 2, non-retaining.  D passes sigma and is forgotten; A
 * and D then come back as false negatives; B is a false positive twice (in
 * both cycles, position 0 being set by A each time). */
static void one_phase_non_retaining(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(8, 2, 0, 0, 1, 0);
    const uint64_t seq[] = {A, A, B, B, C, D, A, D, B};
    const uint8_t want[] = {NEW, REP, NEW | FP | EACH, REP | EACH, NEW, NEW | REC,
                            NEW | REP | FN, NEW | REP | FN, NEW | FP | EACH | REP};
    rbf_sim_counts k;
    check(&c, seq, want, 9, &k);
    assert_int_equal(k.new_arrivals, 7);
    assert_int_equal(k.fp_first, 2);
    assert_int_equal(k.fp_each, 3);
    assert_int_equal(k.repeats, 5);
    assert_int_equal(k.false_negatives, 2);
    assert_int_equal(k.cycles, 1);
}

/* Same sequence, retaining: D is kept in the fresh filter, so its repeat is
 * held and reported seen. */
static void one_phase_retaining(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(8, 2, 0, 1, 1, 0);
    const uint64_t seq[] = {A, A, B, B, C, D, A, D, B};
    const uint8_t want[] = {NEW, REP, NEW | FP | EACH, REP | EACH, NEW, NEW | REC,
                            NEW | REP | FN, REP, NEW | FP | EACH | REP};
    rbf_sim_counts k;
    check(&c, seq, want, 9, &k);
    assert_int_equal(k.new_arrivals, 6);
    assert_int_equal(k.false_negatives, 1);
    assert_int_equal(k.repeats, 5);
}

/* N-bounded, real user, N = 2: a false positive sets no bit and is not
 * counted; the recycle follows the second bit-setting message, which was
 * inserted (held until the clear). */
static void n_bounded_real_user(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(8, 0, 2, 0, 1, 0);
    const uint64_t seq[] = {A, A, B, B, C, C, D, A, A};
    const uint8_t want[] = {NEW, REP, NEW | FP | EACH, REP | EACH, NEW | REC,
                            NEW | REP | FN, NEW | REC, NEW | REP | FN, REP};
    rbf_sim_counts k;
    check(&c, seq, want, 9, &k);
    assert_int_equal(k.cycles, 2);
    assert_int_equal(k.fp_first, 1);
}

/* Oracle, N = 2: every truly new arrival counts, false positives too; the
 * simulator recycles right after the second. */
static void oracle(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(8, 0, 2, 0, 1, 1);
    const uint64_t seq[] = {A, A, B, B, C, A, C};
    const uint8_t want[] = {NEW, REP, NEW | FP | EACH | REC, NEW | REP | FN, NEW | REC,
                            NEW | REP | FN, NEW | REP | FN | REC};
    rbf_sim_counts k;
    check(&c, seq, want, 7, &k);
    assert_int_equal(k.cycles, 3);
    assert_int_equal(k.new_arrivals, 6);
}

/* Two-phase, 16 bits = two filters of 8, sigma = 2, non-retaining.  A held
 * in the frozen filter is a repeat; a message held only in the filter that
 * was just cleared (C) is a false negative; H is a false positive through
 * the frozen filter only, and its insertion into the active one triggers a
 * recycle that forgets it. */
static void two_phase(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(16, 2, 0, 0, 2, 0);
    const uint64_t seq[] = {A, C, D, A, B, E, F, C, B, G, H, H};
    const uint8_t want[] = {
        NEW,                /* A: active {0} */
        NEW,                /* C: active {0,1} */
        NEW | REC,          /* D: frozen {0,1}, active {} */
        REP,                /* A: held by the frozen filter; active {0} */
        NEW | FP | EACH,    /* B: position 0 set in the active filter */
        NEW,                /* E: active {0,3} */
        NEW | REC,          /* F: frozen {0,3}, active {} */
        NEW | REP | FN,     /* C: its filter was cleared; active {1} */
        REP | EACH,         /* B: held by the frozen filter (false-positive spell); active {0,1} */
        NEW | FP | EACH,    /* G: position 0 in both */
        NEW | FP | EACH | REC, /* H: position 3 only in the frozen filter; frozen {0,1} */
        NEW | REP | FN,     /* H: forgotten, reported new */
    };
    rbf_sim_counts k;
    check(&c, seq, want, 12, &k);
    assert_int_equal(k.cycles, 3);
    assert_int_equal(k.fp_first, 3);
    assert_int_equal(k.fp_each, 4);
    assert_int_equal(k.false_negatives, 2);
}

/* Two-phase retaining: the triggering message goes into the fresh active
 * filter and stays held for two cycles. */
static void two_phase_retaining(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(16, 2, 0, 1, 2, 0);
    const uint64_t seq[] = {A, C, D, E, F, D, G};
    const uint8_t want[] = {
        NEW,       /* A: active {0} */
        NEW,       /* C: active {0,1} */
        NEW | REC, /* D: frozen {0,1}, active {2} */
        NEW,       /* E: active {2,3} */
        NEW | REC, /* F: frozen {2,3}, active {4} */
        REP,       /* D: held by the frozen filter; active {4,2} */
        NEW | REC, /* G: position 0 in neither filter; passes sigma: frozen {2,4}, active {0} */
    };
    rbf_sim_counts k;
    check(&c, seq, want, 7, &k);
    assert_int_equal(k.false_negatives, 0);
}

/* Argument checks. */
static void bad_arguments(void **state)
{
    (void)state;
    rbf_sim_config c = cfg_of(8, 2, 0, 0, 1, 0);
    rbf_sim_counts k;
    uint64_t h = 1;
    assert_int_equal(rbf_sim_sequence(NULL, &h, 1, &k, NULL), RBF_EINVAL);
    assert_int_equal(rbf_sim_sequence(&c, NULL, 1, &k, NULL), RBF_EINVAL);
    assert_int_equal(rbf_sim_sequence(&c, &h, 1, NULL, NULL), RBF_EINVAL);
    assert_int_equal(rbf_sim_sequence(&c, NULL, 0, &k, NULL), RBF_OK);
    assert_int_equal(k.arrivals, 0);
    c.filter.sigma = 8; /* sigma must be below the bits */
    assert_int_equal(rbf_sim_sequence(&c, &h, 1, &k, NULL), RBF_EINVAL);
    c = cfg_of(8, 2, 0, 0, 1, 1); /* oracle without messages */
    assert_int_equal(rbf_sim_sequence(&c, &h, 1, &k, NULL), RBF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_phase_non_retaining),
        cmocka_unit_test(one_phase_retaining),
        cmocka_unit_test(n_bounded_real_user),
        cmocka_unit_test(oracle),
        cmocka_unit_test(two_phase),
        cmocka_unit_test(two_phase_retaining),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
