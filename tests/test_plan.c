/*
 * test_plan.c -- the planner against MODEL.md 6 and against exhaustive
 * search over every k and every threshold (no pruning, no monotonicity
 * assumption), and the least-memory inverse against the forward planner.
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

#include "model_util.h"
#include "rbf_model.h"

static void test_model_md_example(void **state)
{
    (void)state;
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    assert_int_equal(o.max_hashes, 32);
    for (unsigned K = 14; K <= 32; K += 18) {
        o.max_hashes = K;
        rbf_plan p;
        assert_int_equal(rbf_plan_memory(1000, 0.01, &o, &p), RBF_OK);
        assert_int_equal(p.sigma_bounded.hashes, 6);
        assert_int_equal(p.sigma_bounded.sigma, 606);
        assert_true(fabs(p.sigma_bounded.expected_messages - 155.5) < 0.05);
        assert_int_equal(p.average_n.hashes, 6);
        assert_int_equal(p.average_n.messages, 155);
        assert_int_equal(p.oracle_n.hashes, 5); /* ties with k = 6: the smaller k wins */
        assert_int_equal(p.oracle_n.messages, 155);
        assert_int_equal(p.worst_case.hashes, 7);
        assert_int_equal(p.worst_case.messages, 104);
        assert_true(fabs(p.worst_case.gain_vs_worst_case - 1.0) < 1e-15);
        /* the paper's "more than 30%" */
        assert_true(p.sigma_bounded.gain_vs_worst_case > 1.3);
        assert_true(fabs(p.sigma_bounded.gain_vs_worst_case -
                         p.sigma_bounded.expected_messages / 104.0) < 1e-12);
        assert_true(p.sigma_bounded.fp <= 0.01 && p.sigma_bounded.fp > 0.0099);
    }
}

/* Exhaustive sigma-bounded / two-phase: every k, every sigma. */
static void exhaustive_sigma(uint64_t M, double eps, unsigned K, int nc, int ret, int two,
                             rbf_plan_choice *best)
{
    memset(best, 0, sizeof *best);
    for (unsigned k = 1; k <= K; k++) {
        if (M < 2 || (nc && k > M))
            break;
        rbf_model_params p = tu_model_params(M, k, nc, ret, RBF_MODEL_FAST);
        double *fp = malloc(M * sizeof *fp), *en = malloc(M * sizeof *en);
        assert_int_equal(rbf_model_sigma_curve(&p, M - 1, fp, en), RBF_OK);
        for (uint64_t s = M - 1; s >= 1; s--) {
            if (s < k)
                break; /* the planner keeps the filter's rule sigma >= k */
            double f = fp[s];
            if (two) {
                if (f > eps)
                    continue; /* f^2 >= f^1 */
                rbf_model_two_phase_result t;
                assert_int_equal(rbf_model_two_phase(&p, s, &t), RBF_OK);
                f = t.fp;
            }
            if (f <= eps) { /* the largest feasible sigma of this k */
                if (!best->feasible || en[s] > best->expected_messages) {
                    best->feasible = 1;
                    best->hashes = k;
                    best->sigma = s;
                    best->expected_messages = en[s];
                    best->fp = f;
                }
                break;
            }
        }
        free(fp);
        free(en);
    }
}

static void test_sigma_exhaustive(void **state)
{
    (void)state;
    const uint64_t Ms[] = {2, 7, 100, 1000, 3001, 20000};
    const double eps[] = {0.3, 0.01, 0.001, 1e-6};
    for (size_t a = 0; a < 6; a++)
        for (size_t b = 0; b < 4; b++)
            for (int v = 0; v < 4; v++) {
                rbf_plan_options o;
                rbf_plan_options_init(&o);
                o.hashing = (v & 1) ? RBF_NON_COLLIDING : RBF_COLLIDING;
                o.recycle = (v >> 1) ? RBF_RETAINING : RBF_NON_RETAINING;
                o.max_hashes = 20;
                rbf_plan pl;
                assert_int_equal(rbf_plan_memory(Ms[a], eps[b], &o, &pl), RBF_OK);
                rbf_plan_choice ex;
                exhaustive_sigma(Ms[a], eps[b], 20, v & 1, v >> 1, 0, &ex);
                char what[96];
                snprintf(what, sizeof what, "M=%llu eps=%g v=%d", (unsigned long long)Ms[a], eps[b], v);
                if (ex.feasible != pl.sigma_bounded.feasible || ex.hashes != pl.sigma_bounded.hashes ||
                    ex.sigma != pl.sigma_bounded.sigma) {
                    print_error("%s: planner k=%u sigma=%llu, exhaustive k=%u sigma=%llu\n", what,
                                pl.sigma_bounded.hashes, (unsigned long long)pl.sigma_bounded.sigma,
                                ex.hashes, (unsigned long long)ex.sigma);
                    fail();
                }
                if (Ms[a] <= 1000) {
                    exhaustive_sigma(Ms[a] / 2, eps[b], 20, v & 1, v >> 1, 1, &ex);
                    if (ex.feasible != pl.two_phase.feasible || ex.hashes != pl.two_phase.hashes ||
                        ex.sigma != pl.two_phase.sigma) {
                        print_error("%s two-phase: planner k=%u sigma=%llu, exhaustive k=%u sigma=%llu\n",
                                    what, pl.two_phase.hashes, (unsigned long long)pl.two_phase.sigma,
                                    ex.hashes, (unsigned long long)ex.sigma);
                        fail();
                    }
                    if (ex.feasible)
                        assert_true(fabs(ex.fp - pl.two_phase.fp) <= 1e-12 * ex.fp);
                }
            }
}

/* Exhaustive N-bounded from the definitions (long double). */
static void test_nbounded_exhaustive(void **state)
{
    (void)state;
    const uint64_t Ms[] = {10, 1000, 5000};
    const double eps[] = {0.2, 0.01, 0.0001};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++) {
            uint64_t M = Ms[a];
            rbf_plan pl;
            assert_int_equal(rbf_plan_memory(M, eps[b], NULL, &pl), RBF_OK);
            uint64_t bw = 0, bo = 0, ba = 0;
            unsigned kw = 0, ko = 0, ka = 0;
            for (unsigned k = 1; k <= 32; k++) {
                long double so = 0, sr = 0;
                uint64_t nw = 0, no = 0, na = 0;
                /* z = (1-1/M)^{kN} by long-double products (drift ~N ulps of
                 * 1e-19), f = (1-z)^k by k products */
                const long double q = powl(1.0L - 1.0L / M, (long double)k);
                long double z = 1.0L, fN = 0.0L;
                for (uint64_t N = 1; N < 4 * M; N++) {
                    long double fprev = fN;
                    z *= q;
                    fN = 1.0L;
                    for (unsigned e = 0; e < k; e++)
                        fN *= 1.0L - z;
                    so += fprev;
                    sr += fprev / (1 - fprev);
                    if (fN <= eps[b])
                        nw = N;
                    if (so / N <= eps[b])
                        no = N;
                    if (sr / (N + sr) <= eps[b])
                        na = N;
                }
                if (nw > bw) { bw = nw; kw = k; }
                if (no > bo) { bo = no; ko = k; }
                if (na > ba) { ba = na; ka = k; }
            }
            assert_int_equal(pl.worst_case.messages, bw);
            assert_int_equal(pl.oracle_n.messages, bo);
            assert_int_equal(pl.average_n.messages, ba);
            if (bw)
                assert_int_equal(pl.worst_case.hashes, kw);
            if (bo)
                assert_int_equal(pl.oracle_n.hashes, ko);
            if (ba)
                assert_int_equal(pl.average_n.hashes, ka);
        }
}

/* An eps so near 1 that eps^(1/k) rounds to 1 makes the inverse of f_w
 * infinite; the worst-case search still ends, at the N a walk over f_w
 * itself finds (the command line once hung here). */
static void test_worst_case_eps_near_one(void **state)
{
    (void)state;
    const double eps = 0.9999999999999999;
    const uint64_t Ms[] = {64, 512};
    for (size_t a = 0; a < 2; a++) {
        rbf_plan pl;
        assert_int_equal(rbf_plan_memory(Ms[a], eps, NULL, &pl), RBF_OK);
        uint64_t best = 0;
        for (unsigned k = 1; k <= 32; k++) {
            double f = 0.0;
            uint64_t N = 0;
            for (;; N++) {
                assert_int_equal(rbf_model_f_w(Ms[a], k, N + 1, &f), RBF_OK);
                if (f > eps)
                    break;
            }
            if (N > best)
                best = N;
        }
        assert_true(best > 0);
        assert_int_equal(pl.worst_case.messages, best);
    }
}

/* The least memory: capacity(bits) >= N > capacity(bits - 1). */
static void test_plan_messages(void **state)
{
    (void)state;
    const uint64_t Ns[] = {1, 10, 155, 1000, 12345};
    const double eps[] = {0.01, 0.001};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 2; b++)
            for (int two = 0; two < 2; two++) {
                uint64_t bits = 0;
                rbf_plan pl, below;
                int rc = two ? rbf_plan_messages_two_phase(Ns[a], eps[b], NULL, &bits, &pl)
                             : rbf_plan_messages(Ns[a], eps[b], NULL, &bits, &pl);
                assert_int_equal(rc, RBF_OK);
                assert_int_equal(pl.bits, bits);
                const rbf_plan_choice *c = two ? &pl.two_phase : &pl.sigma_bounded;
                assert_true(c->feasible && c->expected_messages >= (double)Ns[a]);
                assert_int_equal(rbf_plan_memory(bits - 1, eps[b], NULL, &below), RBF_OK);
                const rbf_plan_choice *d = two ? &below.two_phase : &below.sigma_bounded;
                if (d->feasible && d->expected_messages >= (double)Ns[a]) {
                    print_error("N=%llu eps=%g two=%d: bits %llu, but %llu bits hold %.6f\n",
                                (unsigned long long)Ns[a], eps[b], two, (unsigned long long)bits,
                                (unsigned long long)(bits - 1), d->expected_messages);
                    fail();
                }
            }
    /* M = 1000, eps = 0.01 holds 155.5: so 155 messages need at most 1000 bits */
    uint64_t bits;
    assert_int_equal(rbf_plan_messages(155, 0.01, NULL, &bits, NULL), RBF_OK);
    assert_true(bits <= 1000 && bits > 900);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_md_example),
        cmocka_unit_test(test_sigma_exhaustive),
        cmocka_unit_test(test_nbounded_exhaustive),
        cmocka_unit_test(test_plan_messages),
        cmocka_unit_test(test_worst_case_eps_near_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
