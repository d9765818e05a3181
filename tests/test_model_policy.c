/*
 * test_model_policy.c -- rbf_model_policy, the one-call policy model the
 * Python package's rbf.model uses, against the functions it assembles
 * (exact equality: it must be the same numbers), and its edge cases:
 *
 * - sigma-bounded: fp and cycle_mean of the cycle-length law, fn,
 *   forgotten and tick_fraction of rbf_model_fn, the forgetting gaps of
 *   rbf_model_forget / rbf_model_miss;
 * - N-bounded without a workload: the oracle's rate (exact_oracle; two
 *   phases 1 - (1 - exact_oracle)(1 - exact_worst)) and a cycle of N;
 * - a real user whose filter fills before N (1000 bits, k = 2, N = 800):
 *   stuck, fp = 1, no cycles;
 * - bad arguments: RBF_EINVAL.
 * (python/tests/test_models.py also compares it with `rbf model --json`.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbf_model.h"

static rbf_model_params params(uint64_t bits, unsigned k)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = bits;
    p.hashes = k;
    return p;
}

static void test_sigma_with_workload_and_gaps(void **state)
{
    (void)state;
    rbf_model_params p = params(1000, 3);
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.sigma = 300;
    rbf_model_workload w;
    memset(&w, 0, sizeof w);
    w.kind = RBF_MODEL_WL_UNIFORM;
    w.pool = 1000;
    const uint64_t gaps[3] = {10, 100, 1000};
    double fo[3], mi[3];
    rbf_model_policy_result r;
    assert_int_equal(rbf_model_policy(&p, &s, &w, gaps, 3, fo, mi, &r), RBF_OK);

    rbf_model_cycles *c = NULL;
    assert_int_equal(rbf_model_cycles_new(&p, &s, &c), RBF_OK);
    rbf_model_fn_result fr;
    assert_int_equal(rbf_model_fn(&p, &s, &w, &fr), RBF_OK);
    assert_true(r.fp == rbf_model_cycles_fp(c));
    assert_true(r.cycle_mean == rbf_model_cycles_mean(c));
    assert_true(r.fn == fr.fn && r.forgotten == fr.forgotten &&
                r.tick_fraction == fr.tick_fraction);
    for (int i = 0; i < 3; i++) {
        assert_true(fo[i] == rbf_model_forget(c, gaps[i], RBF_MODEL_FROM_TICK, 0));
        assert_true(mi[i] == rbf_model_miss(c, gaps[i], RBF_MODEL_FROM_TICK));
    }
    assert_true(fo[0] < fo[1] && fo[1] < fo[2]);
    assert_int_equal(r.stuck, 0);
    assert_int_equal(r.has_cycles, 1);
    /* the sigma-bounded rate is the renewal model's */
    rbf_model_sigma_result sr;
    assert_int_equal(rbf_model_sigma(&p, 300, &sr), RBF_OK);
    assert_true(fabs(r.fp - sr.fp) < 1e-10);
    rbf_model_cycles_free(c);
}

static void test_oracle_direct(void **state)
{
    (void)state;
    for (unsigned phases = 1; phases <= 2; phases++) {
        rbf_model_params p = params(1000, 3);
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.messages = 100;
        s.oracle = 1;
        s.phases = phases;
        rbf_model_policy_result r;
        assert_int_equal(rbf_model_policy(&p, &s, NULL, NULL, 0, NULL, NULL, &r), RBF_OK);
        rbf_model_n_result n;
        assert_int_equal(rbf_model_nbounded(&p, 100, &n), RBF_OK);
        double want = phases == 2 ? 1.0 - (1.0 - n.exact_oracle) * (1.0 - n.exact_worst)
                                  : n.exact_oracle;
        assert_true(r.fp == want);
        assert_true(r.cycle_mean == 100.0);
        assert_int_equal(r.has_cycles, 0);
        assert_int_equal(r.stuck, 0);
    }
}

static void test_stuck(void **state)
{
    (void)state;
    rbf_model_params p = params(1000, 2);
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.messages = 800;
    const uint64_t g = 5;
    double fo = -1, mi = -1;
    rbf_model_policy_result r;
    assert_int_equal(rbf_model_policy(&p, &s, NULL, &g, 1, &fo, &mi, &r), RBF_OK);
    assert_int_equal(r.stuck, 1);
    assert_int_equal(r.has_cycles, 0);
    assert_true(r.fp == 1.0 && r.cycle_mean == 0.0 && r.fn == 0.0);
    assert_true(fo == 0.0 && mi == 0.0);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    rbf_model_params p = params(1000, 3);
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.sigma = 300;
    rbf_model_policy_result r;
    const uint64_t g = 5;
    assert_int_equal(rbf_model_policy(NULL, &s, NULL, NULL, 0, NULL, NULL, &r), RBF_EINVAL);
    assert_int_equal(rbf_model_policy(&p, NULL, NULL, NULL, 0, NULL, NULL, &r), RBF_EINVAL);
    assert_int_equal(rbf_model_policy(&p, &s, NULL, NULL, 0, NULL, NULL, NULL), RBF_EINVAL);
    assert_int_equal(rbf_model_policy(&p, &s, NULL, &g, 1, NULL, NULL, &r), RBF_EINVAL);
    s.sigma = 1000; /* not below the bits */
    assert_int_equal(rbf_model_policy(&p, &s, NULL, NULL, 0, NULL, NULL, &r), RBF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigma_with_workload_and_gaps),
        cmocka_unit_test(test_oracle_direct),
        cmocka_unit_test(test_stuck),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
