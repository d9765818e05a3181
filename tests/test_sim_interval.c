/*
 * test_sim_interval.c -- rbf_sim_interval, the simulator's mean, standard
 * deviation and Student-t interval, against values computed by hand.
 *
 * The t quantiles come from closed forms, not from GSL (which the library
 * uses): t(p, 1) = tan(pi (p - 1/2)), t(p, 2) = (2p - 1) / sqrt(2p(1 - p)),
 * and for 4 degrees of freedom, with a = 4p(1 - p) and
 * q = cos(acos(sqrt(a)) / 3) / sqrt(a), t(p, 4) = 2 sqrt(q - 1).  Evaluated
 * once (Python, double precision) and written here as constants:
 *   t(0.995, 4) = 4.604094871349992    t(0.975, 4) = 2.7764451051977934
 *   t(0.995, 1) = 63.6567411628717     t(0.995, 2) = 9.924843200918287
 * The simulator's own results must be this same computation over the
 * epoch rates (checked bit for bit on a small run).
 */
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbf_sim.h"

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("got %.17g, want %.17g (relative tolerance %g)\n", got, want, rel);
        fail();
    }
}

/* x = 1..5: mean 3, sum of squares 10, sd = sqrt(10 / 4), sd / sqrt(5) = sqrt(1/2). */
static void test_five_values(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5};
    rbf_sim_stat s;
    assert_int_equal(rbf_sim_interval(x, 5, 0.99, &s), RBF_OK);
    assert_int_equal(s.has_ci, 1);
    assert_close(s.mean, 3.0, 1e-15);
    assert_close(s.stddev, sqrt(2.5), 1e-15);
    double half = 4.604094871349992 * sqrt(0.5);
    assert_close(s.ci_low, 3.0 - half, 1e-12);
    assert_close(s.ci_high, 3.0 + half, 1e-12);

    assert_int_equal(rbf_sim_interval(x, 5, 0.95, &s), RBF_OK);
    half = 2.7764451051977934 * sqrt(0.5);
    assert_close(s.ci_low, 3.0 - half, 1e-12);
    assert_close(s.ci_high, 3.0 + half, 1e-12);
}

/* Fewer values, other degrees of freedom, an asymmetric sample. */
static void test_small_samples(void **state)
{
    (void)state;
    rbf_sim_stat s;
    const double two[] = {0, 1}; /* mean 1/2, sd sqrt(1/2), sd / sqrt(2) = 1/2 */
    assert_int_equal(rbf_sim_interval(two, 2, 0.99, &s), RBF_OK);
    assert_close(s.stddev, sqrt(0.5), 1e-15);
    assert_close(s.ci_high - s.mean, 63.6567411628717 * 0.5, 1e-12);
    assert_close(s.mean - s.ci_low, 63.6567411628717 * 0.5, 1e-12);

    const double three[] = {2, 4, 9}; /* mean 5, squares 9 + 1 + 16 = 26, sd sqrt(13) */
    assert_int_equal(rbf_sim_interval(three, 3, 0.99, &s), RBF_OK);
    assert_close(s.mean, 5.0, 1e-15);
    assert_close(s.stddev, sqrt(13.0), 1e-15);
    double half = 9.924843200918287 * sqrt(13.0 / 3.0);
    assert_close(s.ci_low, 5.0 - half, 1e-12);
    assert_close(s.ci_high, 5.0 + half, 1e-12);

    const double one[] = {0.25}; /* one value: no interval */
    assert_int_equal(rbf_sim_interval(one, 1, 0.99, &s), RBF_OK);
    assert_int_equal(s.has_ci, 0);
    assert_true(s.mean == 0.25 && s.stddev == 0 && s.ci_low == 0.25 && s.ci_high == 0.25);

    const double same[] = {7, 7, 7, 7}; /* no spread: a zero-width interval */
    assert_int_equal(rbf_sim_interval(same, 4, 0.99, &s), RBF_OK);
    assert_int_equal(s.has_ci, 1);
    assert_true(s.mean == 7 && s.stddev == 0 && s.ci_low == 7 && s.ci_high == 7);
}

static void test_invalid(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3};
    rbf_sim_stat s;
    memset(&s, 0xff, sizeof s);
    assert_int_equal(rbf_sim_interval(x, 0, 0.99, &s), RBF_EINVAL);
    assert_true(s.mean == 0 && s.has_ci == 0); /* zeroed */
    assert_int_equal(rbf_sim_interval(NULL, 3, 0.99, &s), RBF_EINVAL);
    assert_int_equal(rbf_sim_interval(x, 3, 0.99, NULL), RBF_EINVAL);
    const double bad_levels[] = {0, 1, -0.5, 1.5, NAN};
    for (size_t i = 0; i < sizeof bad_levels / sizeof bad_levels[0]; i++)
        assert_int_equal(rbf_sim_interval(x, 3, bad_levels[i], &s), RBF_EINVAL);
}

static void expect_same(const rbf_sim_stat *a, const rbf_sim_stat *b)
{
    assert_true(a->mean == b->mean);
    assert_true(a->stddev == b->stddev);
    assert_true(a->ci_low == b->ci_low);
    assert_true(a->ci_high == b->ci_high);
    assert_int_equal(a->has_ci, b->has_ci);
}

/* The simulator's results are rbf_sim_interval over the epoch rates at
 * level 0.99, bit for bit. */
/* One run on one thread: M bits, k hashes, sigma, uniform:pool (0: the
 * default), 20000 arrivals in each of `epochs` epochs. */
static void run_small(uint64_t bits, unsigned k, uint64_t sigma, uint64_t pool, unsigned epochs,
                      rbf_sim_result *r)
{
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    c.filter.bits = bits;
    c.filter.hashes = k;
    c.filter.sigma = sigma;
    if (pool)
        c.workload.pool = pool;
    c.arrivals = 20000;
    c.epochs = epochs;
    c.threads = 1;
    assert_int_equal(rbf_sim_run(&c, r), RBF_OK);
}

static void test_simulator_uses_it(void **state)
{
    (void)state;
    rbf_sim_result r;
    run_small(1000, 3, 500, 0, 5, &r);
    double fp[5], fn[5], mpc[5];
    for (unsigned e = 0; e < 5; e++) {
        fp[e] = r.epoch_rates[e].fp;
        fn[e] = r.epoch_rates[e].fn;
        mpc[e] = r.epoch_rates[e].messages_per_cycle;
    }
    rbf_sim_stat s;
    assert_true(r.fp.ci_high > r.fp.ci_low); /* a real interval, not a degenerate one */
    assert_int_equal(rbf_sim_interval(fp, 5, 0.99, &s), RBF_OK);
    expect_same(&s, &r.fp);
    assert_int_equal(rbf_sim_interval(fn, 5, 0.99, &s), RBF_OK);
    expect_same(&s, &r.fn);
    assert_int_equal(rbf_sim_interval(mpc, 5, 0.99, &s), RBF_OK);
    expect_same(&s, &r.messages_per_cycle);
    rbf_sim_result_free(&r);
}

/* No event over the whole run: the epochs agree on 0 and the t interval
 * has no width; the result's interval is the exact binomial bound instead,
 * [0, 1 - 0.005^(1/den)].  A filter of 2^20 bits holding a few hundred
 * messages has no false positives (rate about 1e-30) and forgets nothing. */
static void test_no_events(void **state)
{
    (void)state;
    rbf_sim_result r;
    run_small(1u << 20, 7, 3000, 300, 4, &r);
    assert_true(r.total.fp_first == 0 && r.total.false_negatives == 0);
    assert_true(r.total.new_arrivals > 0 && r.total.repeats > 0);
    double hi_fp = 1.0 - pow(0.005, 1.0 / (double)r.total.new_arrivals);
    double hi_fn = 1.0 - pow(0.005, 1.0 / (double)r.total.repeats);
    printf("no events: fp [%g, %g] over %llu new, fn [%g, %g] over %llu repeats\n", r.fp.ci_low,
           r.fp.ci_high, (unsigned long long)r.total.new_arrivals, r.fn.ci_low, r.fn.ci_high,
           (unsigned long long)r.total.repeats);
    assert_true(r.fp.mean == 0 && r.fp.ci_low == 0 && r.fp.ci_high == hi_fp);
    assert_true(r.fn.mean == 0 && r.fn.ci_low == 0 && r.fn.ci_high == hi_fn);
    assert_true(r.fp_first.ci_high > 0 && r.fp_each.ci_high > 0);
    /* 4 epochs of the same 300 first arrivals: -ln(0.005) / 1200 = 0.004415 */
    assert_true(r.total.new_arrivals == 1200 && hi_fp > 0.00440 && hi_fp < 0.00442);
    rbf_sim_result_free(&r);
}

/* rbf_sim_model_inside_ci99: the verdict rbf simulate prints, from the
 * interval and the events the model expects. */
static void test_model_verdict(void **state)
{
    (void)state;
    rbf_sim_result r;
    memset(&r, 0, sizeof r);
    r.total.new_arrivals = 100000;
    r.fp.has_ci = 1;
    r.fp.ci_low = 0.009;
    r.fp.ci_high = 0.011;
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.010), 1);
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.009), 1); /* the ends count */
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.011), 1);
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.012), 0);
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.008), 0);
    /* 1e-4 x 1e5 = 10 expected: judged; 9.9e-5: too few */
    r.fp.ci_low = 0.0;
    r.fp.ci_high = 5e-5;
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 1e-4), 0);
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 9.9e-5), -1);
    r.fp.has_ci = 0; /* one epoch: no interval */
    assert_int_equal(rbf_sim_model_inside_ci99(&r, 0.010), -1);
    assert_int_equal(rbf_sim_model_inside_ci99(NULL, 0.010), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_values),
        cmocka_unit_test(test_small_samples),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_simulator_uses_it),
        cmocka_unit_test(test_no_events),
        cmocka_unit_test(test_model_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
