/*
 * test_model.c -- the sigma-bounded and N-bounded models against the
 * public vectors of MODEL.md 6, against each other (renewal pass vs the
 * paper's method), and against a brute-force dense Markov chain.
 * RBF_TEST_SHRINK (valgrind) thins the grids of the slow tests: every test
 * runs and checks the same properties on fewer points.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "filter_util.h"
#include "model_util.h"
#include "model_brute.h"
#include "rbf_model.h"

/* RBF_TEST_SHRINK > 1: the thinner grids (valgrind runs). */
static int shrunk(void)
{
    return tu_shrink() > 1;
}

/* Whether long double arithmetic really carries more bits than double, at
 * run time: valgrind computes x87 long double in 64-bit doubles, which
 * LDBL_MANT_DIG (compile time) does not see.  1 + 2^-56 is exact with a
 * 64-bit mantissa and rounds to 1 with a 53-bit one. */
static int long_double_is_wider(void)
{
    volatile long double one = 1.0L, tiny = (long double)DBL_EPSILON / 16;
    volatile long double sum = one + tiny;
    return sum != one;
}

static void check_rel(double got, double want, double tol, const char *what)
{
    double den = fabs(want) > 1e-300 ? fabs(want) : 1.0;
    double rel = fabs(got - want) / den;
    if (!(rel <= tol)) {
        print_error("%s: got %.17g want %.17g (rel %.3g > %.3g)\n", what, got, want, rel, tol);
        fail();
    }
}

#define P tu_model_params

/* ---- MODEL.md 6, both methods */
static void test_public_vectors(void **state)
{
    (void)state;
    static const struct {
        uint64_t M;
        unsigned k;
        uint64_t s;
        int nc, ret;
        double fp, en0; /* en0 < 0: not given */
    } v[] = {
        {1000, 3, 300, 0, 0, 0.00750723486414, 119.153581653},
        {1000, 3, 300, 0, 1, 0.00757051775451, -1},
        {1000, 3, 300, 1, 0, 0.0074316810054, 119.034682001},
        {1000, 3, 300, 1, 1, 0.00749439011159, -1},
        {1000, 1, 500, 0, 0, 0.278770815295, -1},
        {10000, 7, 6000, 0, 0, 0.00498180288102, 1309.30819464},
    };
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            rbf_model_params p = P(v[i].M, v[i].k, v[i].nc, v[i].ret, (rbf_model_method)m);
            rbf_model_sigma_result r;
            assert_int_equal(rbf_model_sigma(&p, v[i].s, &r), RBF_OK);
            /* the vectors carry 12 significant digits */
            check_rel(r.fp, v[i].fp, 1e-10, "fp");
            if (v[i].en0 > 0)
                check_rel(r.expected_messages, v[i].en0, 1e-10, "E[N_0]");
        }
    double f;
    assert_int_equal(rbf_model_k1_closed_form(1000, 500, &f), RBF_OK);
    check_rel(f, 0.278770815295, 1e-10, "k=1 closed form");
    for (int m = 0; m < 2; m++) {
        rbf_model_params p = P(500, 3, 0, 0, (rbf_model_method)m);
        rbf_model_two_phase_result t;
        assert_int_equal(rbf_model_two_phase(&p, 200, &t), RBF_OK);
        check_rel(t.fp, 0.0808680840295, 1e-10, "two-phase");
        check_rel(1.0 - (1.0 - t.fp_active) * (1.0 - t.fp_frozen), t.fp, 1e-14, "two-phase parts");
    }
    rbf_model_params p = P(1000, 5, 0, 0, RBF_MODEL_FAST);
    rbf_model_n_result n;
    assert_int_equal(rbf_model_nbounded(&p, 100, &n), RBF_OK);
    check_rel(n.f_w, 0.00944912525434, 1e-10, "f_w");
    check_rel(n.f_o, 0.00183255166536, 1e-10, "f_o");
    check_rel(n.f_a, 0.00183879886327, 1e-10, "f_a");
    check_rel(n.exact_worst, 0.00948248425817, 1e-10, "exact worst");
    check_rel(n.exact_oracle, 0.00183942003614, 1e-10, "exact oracle");
    check_rel(n.exact_real, 0.00185310094183, 1e-10, "exact real");
    assert_int_equal(rbf_model_nbounded(&p, 200, &n), RBF_OK);
    check_rel(n.exact_real, 0.0257235481745, 1e-10, "exact real N=200");
    double fw;
    assert_int_equal(rbf_model_f_w(1000, 5, 100, &fw), RBF_OK);
    check_rel(fw, 0.00944912525434, 1e-10, "rbf_model_f_w");
}

/* ---- the k = 1 closed form equals both methods wherever it applies */
static void test_k1_closed_form(void **state)
{
    (void)state;
    static const uint64_t Ms[] = {2, 3, 10, 101, 1000, 4096};
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (uint64_t s = 1; s < Ms[i]; s += 1 + Ms[i] / 17) {
            double f;
            assert_int_equal(rbf_model_k1_closed_form(Ms[i], s, &f), RBF_OK);
            for (int m = 0; m < 2; m++) {
                rbf_model_params p = P(Ms[i], 1, 0, 0, (rbf_model_method)m);
                rbf_model_sigma_result r;
                assert_int_equal(rbf_model_sigma(&p, s, &r), RBF_OK);
                check_rel(r.fp, f, 1e-12, "k=1");
            }
        }
}

/* ---- renewal pass == paper's method on a grid */
static void test_fast_equals_paper(void **state)
{
    (void)state;
    static const uint64_t Ms[] = {2, 3, 5, 10, 37, 100, 257, 1000};
    static const unsigned ks[] = {1, 2, 3, 5, 8, 13};
    /* shrunk: M up to 257 (the paper's method is the slow one) */
    const size_t nM = sizeof Ms / sizeof Ms[0] - (shrunk() ? 1 : 0);
    int cases = 0;
    for (size_t a = 0; a < nM; a++)
        for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
            for (int nc = 0; nc < 2; nc++)
                for (int ret = 0; ret < 2; ret++) {
                    uint64_t M = Ms[a];
                    unsigned k = ks[b];
                    if (nc && k > M)
                        continue;
                    uint64_t step = M > 40 ? M / 13 : 1;
                    for (uint64_t s = 1; s < M; s += step) {
                        if (ret && s < k)
                            continue;
                        rbf_model_params pf = P(M, k, nc, ret, RBF_MODEL_FAST);
                        rbf_model_params pp = P(M, k, nc, ret, RBF_MODEL_PAPER);
                        rbf_model_sigma_result rf, rp;
                        assert_int_equal(rbf_model_sigma(&pf, s, &rf), RBF_OK);
                        assert_int_equal(rbf_model_sigma(&pp, s, &rp), RBF_OK);
                        char what[96];
                        snprintf(what, sizeof what, "M=%llu k=%u s=%llu nc=%d ret=%d",
                                 (unsigned long long)M, k, (unsigned long long)s, nc, ret);
                        check_rel(rf.fp, rp.fp, 1e-10, what);
                        /* E[N_0]: renewal sum vs the backward recursion of IV-F */
                        check_rel(rf.expected_messages, rp.expected_messages, 1e-10, what);
                        rbf_model_two_phase_result tf, tp;
                        assert_int_equal(rbf_model_two_phase(&pf, s, &tf), RBF_OK);
                        assert_int_equal(rbf_model_two_phase(&pp, s, &tp), RBF_OK);
                        check_rel(tf.fp, tp.fp, 1e-10, what);
                        check_rel(tf.fp_frozen, tp.fp_frozen, 1e-10, what);
                        cases++;
                    }
                }
    assert_true(cases > 500);
}

/* ---- both methods == brute-force dense Markov chain (tiny M) */
static void test_brute_force(void **state)
{
    (void)state;
    int cases = 0;
    for (unsigned M = 2; M <= 7; M++)
        for (unsigned k = 1; k <= 3; k++)
            for (int nc = 0; nc < 2; nc++)
                for (int ret = 0; ret < 2; ret++) {
                    if (nc && k > M)
                        continue;
                    for (unsigned s = 1; s < M; s++) {
                        if (ret && s < k)
                            continue;
                        double bfp, ben0;
                        assert_int_equal(brute_sigma(M, k, nc, ret, 0, s, &bfp, &ben0), 0);
                        char what[80];
                        snprintf(what, sizeof what, "brute M=%u k=%u s=%u nc=%d ret=%d", M, k, s, nc,
                                 ret);
                        for (int m = 0; m < 2; m++) {
                            rbf_model_params p = P(M, k, nc, ret, (rbf_model_method)m);
                            rbf_model_sigma_result r;
                            assert_int_equal(rbf_model_sigma(&p, s, &r), RBF_OK);
                            check_rel(r.fp, bfp, 1e-10, what);
                            check_rel(r.expected_messages, ben0, 1e-10, what);
                            if (!ret) {
                                double b2;
                                assert_int_equal(brute_two_phase(M, k, nc, s, &b2), 0);
                                rbf_model_two_phase_result t;
                                assert_int_equal(rbf_model_two_phase(&p, s, &t), RBF_OK);
                                check_rel(t.fp, b2, 1e-10, what);
                            }
                        }
                        cases++;
                    }
                }
    assert_true(cases > 100);
}

/* ---- the retaining model's one approximation: with colliding hashing the
 * retained message's distinct-bit count is biased by having triggered the
 * recycle; the model (paper and MODEL.md alike) treats it as a fresh
 * message.  Non-colliding has no bias (always k bits): exact there. */
static void test_retaining_correlation(void **state)
{
    (void)state;
    double a, b, e1, e2;
    assert_int_equal(brute_sigma(6, 3, 1, 1, 1, 4, &a, &e1), 0);
    assert_int_equal(brute_sigma(6, 3, 1, 1, 0, 4, &b, &e2), 0);
    check_rel(a, b, 1e-12, "non-colliding retaining: no correlation");
    assert_int_equal(brute_sigma(3, 2, 0, 1, 1, 2, &a, &e1), 0);
    assert_int_equal(brute_sigma(3, 2, 0, 1, 0, 2, &b, &e2), 0);
    /* 11/27 true vs 31/81 model at M=3, k=2, sigma=2 */
    check_rel(a, 11.0 / 27.0, 1e-12, "colliding retaining, true chain");
    check_rel(b, 31.0 / 81.0, 1e-12, "colliding retaining, model chain");
}

/* ---- exact N-bounded rates == dense propagation (tiny M) */
static void test_nbounded_brute(void **state)
{
    (void)state;
    for (unsigned M = 1; M <= 9; M++)
        for (unsigned k = 1; k <= 3; k++)
            for (int nc = 0; nc < 2; nc++) {
                if (nc && k > M)
                    continue;
                for (unsigned N = 1; N <= 2 * M + 2; N++) {
                    double w, o, r;
                    brute_nbounded(M, k, nc, N, &w, &o, &r);
                    rbf_model_params p = P(M, k, nc, 0, RBF_MODEL_FAST);
                    rbf_model_n_result n;
                    assert_int_equal(rbf_model_nbounded(&p, N, &n), RBF_OK);
                    char what[64];
                    snprintf(what, sizeof what, "nb M=%u k=%u nc=%d N=%u", M, k, nc, N);
                    check_rel(n.exact_worst, w, 1e-12, what);
                    check_rel(n.exact_oracle, o, 1e-12, what);
                    check_rel(n.exact_real, r, 1e-12, what);
                }
            }
}

/* ---- f_o and f_a by their definitions (pow, no recurrences) */
static void test_nbounded_bounds(void **state)
{
    (void)state;
    static const uint64_t Ms[] = {2, 10, 1000, 65536, (uint64_t)1 << 33};
    static const unsigned ks[] = {1, 4, 9, 31};
    static const uint64_t Ns[] = {1, 2, 7, 100, 5000};
    /* The exact propagation costs O(k M N): skipped for M > big and N > 1000
     * (shrunk: M = 65536 with N = 5000 goes too). */
    const uint64_t big = shrunk() ? 1000 : 100000;
    /* Without a wider long double the references below are computed in
     * double (see the tolerance). */
    const int wide = long_double_is_wider();
    if (!wide)
        print_message("long double is no wider than double here (valgrind?): "
                      "the f_o / f_a references get a double-precision tolerance\n");
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 5; c++) {
                uint64_t M = Ms[a], N = Ns[c];
                unsigned k = ks[b];
                if (M > big && N > 1000)
                    continue;
                long double so = 0, sr = 0;
                for (uint64_t i = 1; i <= N; i++) {
                    long double y = 1.0L - powl(1.0L - 1.0L / (long double)M, (long double)k * (i - 1));
                    long double f = powl(y, (long double)k);
                    so += f;
                    sr += f < 1 ? f / (1 - f) : INFINITY;
                }
                rbf_model_params p = P(M, k, 0, 0, RBF_MODEL_FAST);
                rbf_model_n_result n;
                assert_int_equal(rbf_model_nbounded(&p, N, &n), RBF_OK);
                char what[64];
                snprintf(what, sizeof what, "bounds M=%llu k=%u N=%llu", (unsigned long long)M, k,
                         (unsigned long long)N);
                /* long double 1-(1-1/M)^x loses ~log10(M) digits near 0 */
                double tol = M > 1000 ? 1e-8 : 1e-11;
                /* Without a wider long double (valgrind) the references are
                 * double: pow's error of about an ulp of q = (1-1/M)^x is an
                 * absolute error ~u (u = DBL_EPSILON / 2) in y = 1 - q ~ x/M,
                 * a relative one ~u M / x; y^k multiplies it by k, and
                 * x = k (i-1) >= k, so each term of so and sr is good to
                 * ~u M relatively (M a power of two: 1/M and 1-1/M are exact;
                 * for M = 1000 the inexact 1-1/M adds ~u k M < 4e-12).  Sums
                 * of positive terms and the ratios keep that within a small
                 * factor, so the tolerance becomes max(tol, 4 M DBL_EPSILON):
                 * 7.6e-6 at M = 2^33 (seen there: 2.7e-8), unchanged for
                 * the smaller M. */
                if (!wide && tol < 4.0 * DBL_EPSILON * (double)M)
                    tol = 4.0 * DBL_EPSILON * (double)M;
                check_rel(n.f_o, (double)(so / N), tol, what);
                check_rel(n.f_a, isinf((double)sr) ? 1.0 : (double)(sr / (N + sr)), tol, what);
                /* Jensen: the exact rate is above the classic formula */
                assert_true(n.exact_worst >= n.f_w * (1 - 1e-12));
                assert_true(n.f_a >= n.f_o * (1 - 1e-12));
                assert_true(n.exact_real >= n.exact_oracle * (1 - 1e-12) || n.exact_real == 1.0);
            }
}

/* ---- f_sigma^1 is non-decreasing in sigma (proven in docs/models.md; the
 * planner relies on it) and so is f_sigma^2 (checked here, not proven) */
static void test_monotone(void **state)
{
    (void)state;
    static const uint64_t Ms[] = {2, 5, 16, 100, 1000};
    for (size_t a = 0; a < 5; a++)
        for (unsigned k = 1; k <= 12; k++)
            for (int nc = 0; nc < 2; nc++)
                for (int ret = 0; ret < 2; ret++) {
                    uint64_t M = Ms[a];
                    if (nc && k > M)
                        continue;
                    rbf_model_params p = P(M, k, nc, ret, RBF_MODEL_FAST);
                    double *fp = malloc(M * sizeof *fp), *en = malloc(M * sizeof *en);
                    assert_int_equal(rbf_model_sigma_curve(&p, M - 1, fp, en), RBF_OK);
                    double prev2 = 0.0;
                    for (uint64_t s = 1; s < M; s++) {
                        assert_true(fp[s] >= fp[s - 1] * (1 - 1e-13));
                        assert_true(en[s] >= en[s - 1]);
                        if ((ret && s < k) || (M > 100 && s % 37 != 0))
                            continue;
                        rbf_model_sigma_result r;
                        assert_int_equal(rbf_model_sigma(&p, s, &r), RBF_OK);
                        check_rel(fp[s], r.fp, 1e-13, "curve vs point");
                        check_rel(en[s], r.expected_messages, 1e-13, "curve vs point");
                        if (M <= 100) {
                            rbf_model_two_phase_result t;
                            assert_int_equal(rbf_model_two_phase(&p, s, &t), RBF_OK);
                            assert_true(t.fp >= prev2 * (1 - 1e-12));
                            assert_true(t.fp >= t.fp_active);
                            prev2 = t.fp;
                        }
                    }
                    free(fp);
                    free(en);
                }
}

/* ---- the curve functions equal the single-point functions */
static void test_curves(void **state)
{
    (void)state;
    for (unsigned k = 1; k <= 9; k += 4)
        for (int v = 0; v < 4; v++) {
            uint64_t M = 300;
            rbf_model_params p = P(M, k, v & 1, v >> 1, RBF_MODEL_FAST);
            rbf_model_two_phase_result *rows = malloc(M * sizeof *rows);
            assert_int_equal(rbf_model_two_phase_curve(&p, M - 1, rows), RBF_OK);
            for (uint64_t s = 1; s < M; s += 7) {
                if ((v >> 1) && s < k)
                    continue;
                rbf_model_two_phase_result t;
                assert_int_equal(rbf_model_two_phase(&p, s, &t), RBF_OK);
                check_rel(rows[s].fp, t.fp, 1e-13, "two-phase curve");
                check_rel(rows[s].fp_frozen, t.fp_frozen, 1e-13, "two-phase curve frozen");
                check_rel(rows[s].expected_messages, t.expected_messages, 1e-13, "curve E[N_0]");
            }
            free(rows);
            rbf_model_n_result *nr = malloc(150 * sizeof *nr);
            assert_int_equal(rbf_model_nbounded_curve(&p, 150, nr), RBF_OK);
            for (uint64_t N = 1; N <= 150; N += 37) {
                rbf_model_n_result n;
                assert_int_equal(rbf_model_nbounded(&p, N, &n), RBF_OK);
                const double *a = &nr[N - 1].f_w, *b = &n.f_w;
                for (int q = 0; q < 6; q++)
                    check_rel(a[q], b[q], 1e-13, "nbounded curve");
            }
            free(nr);
        }
}

static int cancel_at(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    int *calls = ctx;
    (*calls)++;
    return done > 0;
}

static void test_progress_cancel(void **state)
{
    (void)state;
    int calls = 0;
    rbf_model_params p = P(1u << 20, 4, 0, 0, RBF_MODEL_FAST);
    p.progress = cancel_at;
    p.progress_ctx = &calls;
    rbf_model_sigma_result r;
    assert_int_equal(rbf_model_sigma(&p, (1u << 20) - 1, &r), RBF_ECANCELED);
    assert_true(calls >= 1);
    p.method = RBF_MODEL_PAPER;
    p.bits = 100000;
    assert_int_equal(rbf_model_sigma(&p, 90000, &r), RBF_ECANCELED);
    p.recycle = (1) ? RBF_RETAINING : RBF_NON_RETAINING;
    assert_int_equal(rbf_model_sigma(&p, 90000, &r), RBF_ECANCELED);
    p.method = RBF_MODEL_FAST;
    p.recycle = (0) ? RBF_RETAINING : RBF_NON_RETAINING;
    rbf_model_n_result n;
    assert_int_equal(rbf_model_nbounded(&p, 5000, &n), RBF_ECANCELED);
    double *fp = malloc(100000 * sizeof *fp);
    assert_int_equal(rbf_model_sigma_curve(&p, 99999, fp, NULL), RBF_ECANCELED);
    free(fp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_vectors),  cmocka_unit_test(test_k1_closed_form),
        cmocka_unit_test(test_fast_equals_paper), cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_nbounded_brute),  cmocka_unit_test(test_nbounded_bounds),
        cmocka_unit_test(test_monotone), cmocka_unit_test(test_retaining_correlation),        cmocka_unit_test(test_progress_cancel), cmocka_unit_test(test_curves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
