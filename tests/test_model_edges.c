/*
 * test_model_edges.c -- numerics of the models at the edges: k = 1..64, M from 1 to 2^40, every valid sigma for small M,
 * eps down to 1e-15.  Every result is a number in [0, 1] (rates) or a
 * finite non-negative count, or RBF_EINVAL for invalid input.
 * RBF_TEST_SHRINK (valgrind) thins the grids: every test runs and checks
 * the same properties on fewer points (M still up to 2^40 in test_large_m;
 * smaller maxima for the every-sigma sweep and the planner's O(k M) scans).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "filter_util.h"
#include "model_util.h"
#include "rbf_model.h"

/* RBF_TEST_SHRINK > 1: the thinner grids (valgrind runs). */
static int shrunk(void)
{
    return tu_shrink() > 1;
}

#define IS_PROB(x) ((x) >= 0.0 && (x) <= 1.0) /* false for NaN */

#define P tu_model_params

/* Domain errors are reported, never a silent value. */
static void test_domain_errors(void **state)
{
    (void)state;
    double v = -1;
    assert_int_equal(rbf_model_rho(0, 3, RBF_COLLIDING, 0, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(100, 0, RBF_COLLIDING, 0, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(100, 3, RBF_COLLIDING, 101, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(100, 3, (rbf_hashing)7, 50, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(2, 3, RBF_NON_COLLIDING, 1, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(100, RBF_MAX_HASHES + 1, RBF_COLLIDING, 1, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_rho(100, 3, RBF_COLLIDING, 50, NULL), RBF_EINVAL);
    assert_int_equal(rbf_model_f_w(0, 3, 10, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_f_w(100, 0, 10, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_f_w(100, 3, 10, NULL), RBF_EINVAL);
    assert_true(v == -1);
    assert_int_equal(rbf_model_rho(100, 2, RBF_COLLIDING, 50, &v), RBF_OK);
    assert_true(v == 0.25);
    assert_int_equal(rbf_model_rho(4, 2, RBF_NON_COLLIDING, 2, &v), RBF_OK);
    assert_true(fabs(v - 1.0 / 6.0) < 1e-15);
    assert_int_equal(rbf_model_f_w(1000, 5, 0, &v), RBF_OK);
    assert_true(v == 0);
}

static void test_invalid(void **state)
{
    (void)state;
    rbf_model_sigma_result r;
    rbf_model_two_phase_result t;
    rbf_model_n_result n;
    rbf_model_params p = P(0, 3, 0, 0, RBF_MODEL_FAST);
    assert_int_equal(rbf_model_sigma(&p, 1, &r), RBF_EINVAL); /* bits 0 */
    p = P(100, 0, 0, 0, RBF_MODEL_FAST);
    assert_int_equal(rbf_model_sigma(&p, 10, &r), RBF_EINVAL); /* k 0 */
    assert_int_equal(rbf_model_nbounded(&p, 10, &n), RBF_EINVAL);
    p = P(100, RBF_MAX_HASHES + 1, 0, 0, RBF_MODEL_FAST);
    assert_int_equal(rbf_model_sigma(&p, 10, &r), RBF_EINVAL);
    p = P(100, 3, 0, 0, RBF_MODEL_FAST);
    assert_int_equal(rbf_model_sigma(&p, 0, &r), RBF_EINVAL);   /* sigma 0 */
    assert_int_equal(rbf_model_sigma(&p, 100, &r), RBF_EINVAL); /* sigma >= M */
    assert_int_equal(rbf_model_sigma(&p, 10, NULL), RBF_EINVAL);
    assert_int_equal(rbf_model_sigma(NULL, 10, &r), RBF_EINVAL);
    assert_int_equal(rbf_model_two_phase(&p, 100, &t), RBF_EINVAL);
    assert_int_equal(rbf_model_nbounded(&p, 0, &n), RBF_EINVAL); /* N 0 */
    assert_int_equal(rbf_model_sigma_curve(&p, 100, NULL, NULL), RBF_EINVAL);
    p = P(5, 6, 1, 0, RBF_MODEL_FAST); /* non-colliding with k > M */
    assert_int_equal(rbf_model_sigma(&p, 3, &r), RBF_EINVAL);
    assert_int_equal(rbf_model_nbounded(&p, 3, &n), RBF_EINVAL);
    p = P(100, 5, 0, 1, RBF_MODEL_FAST); /* retaining with sigma < k */
    assert_int_equal(rbf_model_sigma(&p, 4, &r), RBF_EINVAL);
    assert_int_equal(rbf_model_sigma(&p, 5, &r), RBF_OK);
    p = P(100, 5, 0, 0, RBF_MODEL_FAST); /* enums in range, reserved words zero */
    p.hashing = (rbf_hashing)2;
    assert_int_equal(rbf_model_sigma(&p, 50, &r), RBF_EINVAL);
    p = P(100, 5, 0, 0, RBF_MODEL_FAST);
    p.recycle = (rbf_recycle_mode)2;
    assert_int_equal(rbf_model_sigma(&p, 50, &r), RBF_EINVAL);
    p = P(100, 5, 0, 0, RBF_MODEL_FAST);
    p.reserved_[7] = 1;
    assert_int_equal(rbf_model_sigma(&p, 50, &r), RBF_EINVAL);
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    po.reserved_[3] = 1;
    rbf_plan pl_res;
    assert_int_equal(rbf_plan_memory(1000, 0.01, &po, &pl_res), RBF_EINVAL);
    p = P(100, 5, 0, 0, (rbf_model_method)7);
    assert_int_equal(rbf_model_sigma(&p, 50, &r), RBF_EINVAL);
    double f;
    assert_int_equal(rbf_model_k1_closed_form(1, 0, &f), RBF_EINVAL);
    assert_int_equal(rbf_model_k1_closed_form(10, 10, &f), RBF_EINVAL);
    assert_int_equal(rbf_model_k1_closed_form(10, 5, NULL), RBF_EINVAL);

    rbf_plan pl;
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    uint64_t bits;
    const double bad_eps[] = {0.0, 1.0, -0.5, 2.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        assert_int_equal(rbf_plan_memory(1000, bad_eps[i], &o, &pl), RBF_EINVAL);
        assert_int_equal(rbf_plan_messages(100, bad_eps[i], &o, &bits, &pl), RBF_EINVAL);
    }
    assert_int_equal(rbf_plan_memory(0, 0.01, &o, &pl), RBF_EINVAL);
    assert_int_equal(rbf_plan_messages(0, 0.01, &o, &bits, &pl), RBF_EINVAL);
    o.max_hashes = 0;
    assert_int_equal(rbf_plan_memory(1000, 0.01, &o, &pl), RBF_EINVAL);
}

static void check_sigma_all(uint64_t M, unsigned k, int nc, int ret, uint64_t s, int paper)
{
    rbf_model_params p = P(M, k, nc, ret, paper ? RBF_MODEL_PAPER : RBF_MODEL_FAST);
    rbf_model_sigma_result r;
    rbf_model_two_phase_result t;
    int rc = rbf_model_sigma(&p, s, &r);
    int valid = s >= 1 && s < M && !(nc && k > M) && !(ret && s < k);
    assert_int_equal(rc, valid ? RBF_OK : RBF_EINVAL);
    if (!valid)
        return;
    assert_true(IS_PROB(r.fp));
    assert_true(r.expected_messages >= 0.0 && isfinite(r.expected_messages));
    assert_int_equal(rbf_model_two_phase(&p, s, &t), RBF_OK);
    assert_true(IS_PROB(t.fp) && IS_PROB(t.fp_active) && IS_PROB(t.fp_frozen));
}

/* Every valid sigma for small M, every k up to 64, all variants (shrunk:
 * M up to 16). */
static void test_small_m_every_sigma(void **state)
{
    (void)state;
    const uint64_t maxM = shrunk() ? 16 : 24;
    for (uint64_t M = 1; M <= maxM; M++)
        for (unsigned k = 1; k <= 64; k++)
            for (int nc = 0; nc < 2; nc++)
                for (int ret = 0; ret < 2; ret++)
                    for (uint64_t s = 0; s <= M; s++)
                        check_sigma_all(M, k, nc, ret, s, (M <= 12) && (k <= 16));
}

/* Large M, up to 2^40: cheap sigma values, rho, f_w, nbounded with small N.
 * k: 1..8, 15, 22, ..., 64 (shrunk: 1, 2, 4, 8, 22, 36, 50, 64). */
static void test_large_m(void **state)
{
    (void)state;
    const uint64_t Ms[] = {1000, (uint64_t)1 << 20, (uint64_t)1 << 32, (uint64_t)1 << 40};
    const int shrink = shrunk();
    for (size_t i = 0; i < 4; i++)
        for (unsigned k = 1; k <= 64; k += shrink ? (k < 8 ? k : 14) : (k < 8 ? 1 : 7)) {
            uint64_t M = Ms[i];
            const uint64_t bs[] = {0, 1, k, M / 2, M - 1, M, M + 5};
            for (size_t j = 0; j < 7; j++)
                for (int nc = 0; nc < 2; nc++) {
                    double r = -1;
                    int rc = rbf_model_rho(M, k, nc ? RBF_NON_COLLIDING : RBF_COLLIDING, bs[j], &r);
                    /* the domain: b <= M, and non-colliding needs k <= M;
                     * outside it an error, and nothing written */
                    if (bs[j] > M || (nc && k > M)) {
                        assert_int_equal(rc, RBF_EINVAL);
                        assert_true(r == -1);
                    } else {
                        assert_int_equal(rc, RBF_OK);
                        assert_true(IS_PROB(r));
                    }
                }
            const uint64_t ns[] = {0, 1, M / k, M, M * 64, UINT64_MAX};
            for (size_t j = 0; j < 6; j++) {
                double fw = -1;
                assert_int_equal(rbf_model_f_w(M, k, ns[j], &fw), RBF_OK);
                assert_true(IS_PROB(fw));
            }
            const uint64_t ss[] = {1, k, 2000};
            for (size_t j = 0; j < 3; j++)
                for (int nc = 0; nc < 2; nc++)
                    for (int ret = 0; ret < 2; ret++)
                        if (ss[j] < M)
                            check_sigma_all(M, k, nc, ret, ss[j], 0);
            rbf_model_params p = P(M, k, 0, 0, RBF_MODEL_FAST);
            rbf_model_n_result n;
            const uint64_t Ns[] = {1, 7, 200};
            for (size_t j = 0; j < 3; j++) {
                assert_int_equal(rbf_model_nbounded(&p, Ns[j], &n), RBF_OK);
                assert_true(IS_PROB(n.f_w) && IS_PROB(n.f_o) && IS_PROB(n.f_a));
                assert_true(IS_PROB(n.exact_worst) && IS_PROB(n.exact_oracle) && IS_PROB(n.exact_real));
            }
        }
    /* the whole curve near a full filter: 1 - rho(b) is tiny, no NaN */
    for (unsigned k = 1; k <= 64; k *= 2) {
        uint64_t M = 5000;
        double *fp = malloc(M * sizeof *fp), *en = malloc(M * sizeof *en);
        rbf_model_params p = P(M, k, k % 2, 0, RBF_MODEL_FAST);
        assert_int_equal(rbf_model_sigma_curve(&p, M - 1, fp, en), RBF_OK);
        for (uint64_t s = 0; s < M; s++) {
            assert_true(IS_PROB(fp[s]));
            assert_true(isfinite(en[s]) && en[s] >= 0.0);
        }
        free(fp);
        free(en);
    }
}

/* N-bounded over every N up to past a full filter, small M (shrunk: every
 * sixth M instead of every third). */
static void test_nbounded_small(void **state)
{
    (void)state;
    const uint64_t stepM = shrunk() ? 6 : 3;
    for (uint64_t M = 1; M <= 40; M += stepM)
        for (unsigned k = 1; k <= 64; k += 9)
            for (int nc = 0; nc < 2; nc++) {
                rbf_model_params p = P(M, k, nc, 0, RBF_MODEL_FAST);
                rbf_model_n_result n;
                for (uint64_t N = 1; N <= 3 * M + 3; N += 2) {
                    int rc = rbf_model_nbounded(&p, N, &n);
                    if (nc && k > M) {
                        assert_int_equal(rc, RBF_EINVAL);
                        continue;
                    }
                    assert_int_equal(rc, RBF_OK);
                    assert_true(IS_PROB(n.f_w) && IS_PROB(n.f_o) && IS_PROB(n.f_a));
                    assert_true(IS_PROB(n.exact_worst) && IS_PROB(n.exact_oracle));
                    assert_true(IS_PROB(n.exact_real));
                }
            }
}

/* The planner from eps = 1e-15 to nearly 1.  Shrunk: M up to 1000 (the
 * planner scans O(k M)) and one variant per (eps, M), in turn, so that
 * every eps, every M and every variant still appears. */
static void test_plan_edges(void **state)
{
    (void)state;
    const double eps[] = {1e-15, 1e-9, 1e-3, 0.3, 0.999999};
    const uint64_t Ms[] = {1, 2, 3, 10, 1000, 65536};
    const int shrink = shrunk();
    const size_t nM = shrink ? 5 : 6;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < nM; j++)
            for (int v = 0; v < 4; v++) {
                if (shrink && (size_t)v != (i + j) % 4)
                    continue;
                rbf_plan_options o;
                rbf_plan_options_init(&o);
                o.max_hashes = 64;
                o.hashing = (v & 1) ? RBF_NON_COLLIDING : RBF_COLLIDING;
                o.recycle = (v >> 1) ? RBF_RETAINING : RBF_NON_RETAINING;
                rbf_plan pl;
                assert_int_equal(rbf_plan_memory(Ms[j], eps[i], &o, &pl), RBF_OK);
                const rbf_plan_choice *c[] = {&pl.sigma_bounded, &pl.average_n, &pl.oracle_n,
                                              &pl.worst_case, &pl.two_phase};
                for (int q = 0; q < 5; q++) {
                    assert_true(IS_PROB(c[q]->fp));
                    if (c[q]->feasible) {
                        assert_true(c[q]->fp <= eps[i]);
                        assert_true(c[q]->hashes >= 1 && c[q]->hashes <= 64);
                        assert_true(c[q]->expected_messages > 0.0);
                    }
                    assert_true(isfinite(c[q]->gain_vs_worst_case));
                }
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domain_errors),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_small_m_every_sigma),
        cmocka_unit_test(test_large_m),
        cmocka_unit_test(test_nbounded_small),
        cmocka_unit_test(test_plan_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
