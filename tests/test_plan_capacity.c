/*
 * test_plan_capacity.c -- the least-memory planners (rbf_plan_messages,
 * rbf_plan_messages_two_phase) and the plan policies option:
 *
 *   1. on every hashing/recycling variant, rates 0.1 .. 1e-9 and capacities
 *      1 .. 1e9 (a thinner grid under RBF_TEST_SHRINK): capacity(bits) >= N > capacity(bits - 1), by the memory
 *      planner, and the plan handed back equals rbf_plan_memory(bits);
 *      asking for one policy gives the same bits and choice;
 *   2. rbf_plan_options.policies: only the policies asked for are planned,
 *      each equal to the full plan's; unknown bits are refused;
 *   3. the capacity search prunes k values a few bits below a full search
 *      with a bound that allows for the capacity's small fall as memory
 *      grows (4 times its first-order size): on a grid of filters the
 *      exact fall stays below that allowance and a smaller filter's sigma
 *      is never larger.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "filter_util.h"
#include "plan_internal.h"
#include "rbf_model.h"

static const rbf_plan_choice *pick(const rbf_plan *p, int two)
{
    return two ? &p->two_phase : &p->sigma_bounded;
}

static void assert_same_choice(const rbf_plan_choice *a, const rbf_plan_choice *b)
{
    assert_int_equal(a->feasible, b->feasible);
    assert_int_equal(a->hashes, b->hashes);
    assert_int_equal(a->sigma, b->sigma);
    assert_true(a->expected_messages == b->expected_messages);
    assert_true(a->fp == b->fp);
}

static void test_capacity_contract(void **state)
{
    (void)state;
    const uint64_t Ns[] = {73, 123457, 1, 1000, 1000000000};
    const double eps[] = {1e-3, 1e-9, 0.1};
    /* RBF_TEST_SHRINK (valgrind, ASan): the first two of each */
    const size_t nN = tu_shrink() > 1 ? 2 : 5, nE = tu_shrink() > 1 ? 2 : 3;
    unsigned checked = 0;
    for (int v = 0; v < 4; v++)
        for (size_t e = 0; e < nE; e++)
            for (size_t a = 0; a < nN; a++)
                for (int two = 0; two < 2; two++) {
                    rbf_plan_options o;
                    rbf_plan_options_init(&o);
                    o.hashing = (v & 1) ? RBF_NON_COLLIDING : RBF_COLLIDING;
                    o.recycle = (v & 2) ? RBF_RETAINING : RBF_NON_RETAINING;
                    uint64_t bits = 0, bits1 = 0;
                    rbf_plan pl, at, below, one;
                    int rc = two ? rbf_plan_messages_two_phase(Ns[a], eps[e], &o, &bits, &pl)
                                 : rbf_plan_messages(Ns[a], eps[e], &o, &bits, &pl);
                    assert_int_equal(rc, RBF_OK);
                    assert_int_equal(pl.bits, bits);
                    /* the plan handed back is the memory planner's at bits */
                    assert_int_equal(rbf_plan_memory(bits, eps[e], &o, &at), RBF_OK);
                    assert_same_choice(&pl.sigma_bounded, &at.sigma_bounded);
                    assert_same_choice(&pl.two_phase, &at.two_phase);
                    assert_same_choice(&pl.average_n, &at.average_n);
                    assert_int_equal(pl.average_n.messages, at.average_n.messages);
                    const rbf_plan_choice *c = pick(&at, two);
                    assert_true(c->feasible && c->expected_messages >= (double)Ns[a]);
                    /* one bit less does not hold N */
                    assert_int_equal(rbf_plan_memory(bits - 1, eps[e], &o, &below), RBF_OK);
                    const rbf_plan_choice *d = pick(&below, two);
                    if (d->feasible && d->expected_messages >= (double)Ns[a]) {
                        print_error("variant %d eps=%g N=%llu two=%d: bits %llu, but %llu bits "
                                    "hold %.9f\n",
                                    v, eps[e], (unsigned long long)Ns[a], two,
                                    (unsigned long long)bits, (unsigned long long)(bits - 1),
                                    d->expected_messages);
                        fail();
                    }
                    /* the one policy the filter is built with: same answer */
                    o.policies = two ? RBF_PLAN_TWO_PHASE : RBF_PLAN_SIGMA_BOUNDED;
                    rc = two ? rbf_plan_messages_two_phase(Ns[a], eps[e], &o, &bits1, &one)
                             : rbf_plan_messages(Ns[a], eps[e], &o, &bits1, &one);
                    assert_int_equal(rc, RBF_OK);
                    assert_int_equal(bits1, bits);
                    assert_same_choice(pick(&one, two), pick(&pl, two));
                    assert_false(pick(&one, !two)->feasible);
                    assert_false(one.average_n.feasible || one.oracle_n.feasible ||
                                 one.worst_case.feasible);
                    checked++;
                }
    print_message("capacity contract on %u searches\n", checked);
}

static void test_policies(void **state)
{
    (void)state;
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    assert_int_equal(o.policies, 0);
    rbf_plan full, p;
    const uint64_t M = 123457;
    assert_int_equal(rbf_plan_memory(M, 1e-4, &o, &full), RBF_OK);
    assert_true(full.sigma_bounded.feasible && full.two_phase.feasible &&
                full.average_n.feasible && full.oracle_n.feasible && full.worst_case.feasible);
    for (uint64_t pol = 1; pol <= RBF_PLAN_ALL; pol++) {
        o.policies = pol;
        assert_int_equal(rbf_plan_memory(M, 1e-4, &o, &p), RBF_OK);
        assert_int_equal(p.bits, M);
        if (pol & RBF_PLAN_SIGMA_BOUNDED)
            assert_same_choice(&p.sigma_bounded, &full.sigma_bounded);
        else
            assert_false(p.sigma_bounded.feasible);
        if (pol & RBF_PLAN_TWO_PHASE)
            assert_same_choice(&p.two_phase, &full.two_phase);
        else
            assert_false(p.two_phase.feasible);
        if (pol & RBF_PLAN_N_BOUNDED) {
            assert_int_equal(p.average_n.messages, full.average_n.messages);
            assert_int_equal(p.oracle_n.messages, full.oracle_n.messages);
            assert_int_equal(p.worst_case.messages, full.worst_case.messages);
            /* the gain is against the worst case, which is planned */
            assert_true(p.average_n.gain_vs_worst_case == full.average_n.gain_vs_worst_case);
        } else {
            assert_false(p.average_n.feasible || p.oracle_n.feasible || p.worst_case.feasible);
        }
    }
    o.policies = 8;
    assert_int_equal(rbf_plan_memory(M, 1e-4, &o, &p), RBF_EINVAL);
    uint64_t bits;
    assert_int_equal(rbf_plan_messages(1000, 1e-4, &o, &bits, NULL), RBF_EINVAL);
}

static void test_memo_fall(void **state)
{
    (void)state;
    const unsigned ks[] = {1, 3, 5, 21, 2, 8, 13, 32};
    const uint64_t Ms[] = {1013, 5011, 300, 20011};
    const double eps[] = {0.01, 1e-7, 1e-4};
    /* RBF_TEST_SHRINK (valgrind, ASan): a thinner grid, k = 5 at 1013
     * bits (the largest fall measured) kept */
    const int shrink = tu_shrink() > 1;
    const size_t nK = shrink ? 4 : 8, nM = shrink ? 2 : 4, nE = shrink ? 2 : 3;
    double worst = 0.0;
    unsigned pairs = 0;
    for (int nc = 0; nc < 2; nc++)
        for (int two = 0; two < 2; two++)
            for (size_t e = 0; e < nE; e++)
                for (size_t i = 0; i < nK; i++)
                    for (size_t j = 0; j < nM; j++) {
                        const unsigned k = ks[i];
                        const uint64_t M0 = Ms[j];
                        int f0, f1;
                        uint64_t s0, s1;
                        double c0, c1, fp;
                        assert_int_equal(rbf__plan_sigma_k(M0, k, nc, 0, two, RBF_MODEL_EXACT,
                                                           eps[e], &f0, &s0, &c0, &fp),
                                         RBF_OK);
                        if (!f0)
                            continue;
                        const double x = (double)s0 / (double)M0;
                        const double per_bit = (x / (1.0 - x) + log1p(-x)) / (double)k;
                        for (uint64_t d = 1; d <= 64; d *= 4) {
                            assert_int_equal(rbf__plan_sigma_k(M0 - d, k, nc, 0, two,
                                                               RBF_MODEL_EXACT, eps[e], &f1,
                                                               &s1, &c1, &fp),
                                             RBF_OK);
                            if (!f1)
                                continue;
                            assert_true(s1 <= s0);
                            const double fall = c1 - c0; /* > 0: the smaller holds more */
                            const double allow = 4.0 * per_bit * (double)d;
                            if (fall > 0.0 && fall / allow > worst)
                                worst = fall / allow;
                            if (fall > allow + 1e-9 * c0) {
                                print_error("nc=%d two=%d eps=%g k=%u M=%llu-%llu: capacity "
                                            "%.9f -> %.9f, more than the allowance %.3g\n",
                                            nc, two, eps[e], k, (unsigned long long)M0,
                                            (unsigned long long)d, c0, c1, allow);
                                fail();
                            }
                            pairs++;
                        }
                    }
    print_message("%u pairs; the largest fall is %.2f of the allowance\n", pairs, worst);
    assert_true(pairs > (shrink ? 80u : 300u));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_contract),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_memo_fall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
