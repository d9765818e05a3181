/*
 * test_fn_asym.c -- the large-filter cycle laws (src/model/cycles/
 * laws_asym.c, docs/models.md 9.7) against the chain.
 *
 * - sigma-bounded and real-user N-bounded, one and two phases, both
 *   hashings, retaining, k from 1 to 8, 2^16 to 2^18 bits: the laws built
 *   both ways (forced), and everything that is read from them compared:
 *   E[L], the forgetting and miss probabilities from a tick and from a
 *   held repeat at gaps from 1 to past the cycle, the per-age false
 *   positives (through rbf_model_fn), and rbf_model_fn under a uniform and
 *   a Zipf workload.  The bounds asserted are a few times the worst
 *   difference measured (printed), which is O(1/M);
 * - the rule: auto and fast take the large-filter law only where the
 *   chain would be long, exact never;
 * - two-phase cycles longer than 2^17 ticks, whose forgetting is summed
 *   when asked instead of tabled, against the same sum done here from the
 *   public accessors (and the tabled form below 2^17 against it too).
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

#include "model_cycles.h"
#include "model_util.h"
#include "rbf_model.h"

static int shrink(void) { return getenv("RBF_TEST_SHRINK") != NULL; }

static rbf_model_params params(uint64_t bits, unsigned k, int nc, int ret)
{
    return tu_model_params(bits, k, nc, ret, RBF_MODEL_AUTO);
}

static rbf_model_cycles *build(const rbf_model_params *p, const rbf_model_cycle_spec *s, int law)
{
    rbf_model_cycles *c = NULL;
    rbf__cyc_law_method = law;
    int rc = rbf_model_cycles_new(p, s, &c);
    rbf__cyc_law_method = RBF_CYC_LAW_AUTO;
    assert_int_equal(rc, RBF_OK);
    return c;
}

static const char *law_of(const rbf_model_cycles *c)
{
    rbf_model_law l = RBF_MODEL_LAW_NONE;
    assert_int_equal(rbf_model_cycles_get_law(c, &l), RBF_OK);
    return rbf_model_law_name(l);
}

typedef struct {
    double mean, fp, forget, miss, fn;
} worst;

static void upd(double *w, double v)
{
    if (v > *w)
        *w = v;
}

/* a and b (the chain and the large-filter law of the same filter) */
static void compare(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                    const rbf_model_cycles *a, const rbf_model_cycles *b, worst *w)
{
    const double ma = rbf_model_cycles_mean(a), mb = rbf_model_cycles_mean(b);
    upd(&w->mean, fabs(ma - mb) / ma);
    const double fa = rbf_model_cycles_fp(a), fb = rbf_model_cycles_fp(b);
    if (fabs(fa - fb) > 1e-9 * fa)
        printf("fp %.12g %.12g (%.2e)\n", fa, fb, fabs(fa - fb) / fa);
    upd(&w->fp, fabs(fa - fb) / fa);
    const double fr[] = {0.001, 0.1, 0.5, 0.9, 0.97, 0.99, 0.995, 1.0, 1.005, 1.01, 1.03, 1.1,
                         1.5, 1.9, 2.0, 2.05, 2.2, 3.0};
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
        const uint64_t g = (uint64_t)(fr[i] * ma) + 1;
        for (int from = 0; from <= 1; from++) {
            upd(&w->forget, fabs(rbf_model_forget(a, g, (rbf_model_from)from, 0) -
                                 rbf_model_forget(b, g, (rbf_model_from)from, 0)));
            upd(&w->miss, fabs(rbf_model_miss(a, g, (rbf_model_from)from) -
                               rbf_model_miss(b, g, (rbf_model_from)from)));
        }
    }
    /* the false-negative model reads the per-age false positives too */
    rbf_model_workload wl[2];
    memset(wl, 0, sizeof wl);
    wl[0].kind = RBF_WORKLOAD_UNIFORM;
    wl[0].pool = (uint64_t)(1.3 * ma);
    wl[1].kind = RBF_WORKLOAD_ZIPF;
    wl[1].pool = (uint64_t)(20.0 * ma);
    wl[1].exponent = 1.1;
    for (int i = 0; i < (shrink() ? 1 : 2); i++) { /* valgrind, ASan: the uniform one */
        rbf_model_fn_result ra, rb;
        assert_int_equal(rbf_model_fn_with(a, p, s, &wl[i], &ra), RBF_OK);
        assert_int_equal(rbf_model_fn_with(b, p, s, &wl[i], &rb), RBF_OK);
        if (ra.fn > 0.0)
            upd(&w->fn, fabs(ra.fn - rb.fn) / ra.fn);
        upd(&w->fn, fabs(ra.forgotten - rb.forgotten) / fmax(ra.forgotten, 1e-300));
    }
}

/* The filter's law both ways, compared, the differences printed and
 * merged into w. */
static void both_ways(const rbf_model_params *p, const rbf_model_cycle_spec *s, worst *w)
{
    rbf_model_cycles *a = build(p, s, RBF_CYC_LAW_CHAIN);
    rbf_model_cycles *b = build(p, s, RBF_CYC_LAW_ASYM);
    assert_string_not_equal(law_of(a), "large-filter");
    assert_string_equal(law_of(b), "large-filter");
    worst w1 = {0, 0, 0, 0, 0};
    compare(p, s, a, b, &w1);
    printf("M' %llu k %u phases %u %s %llu%s%s: mean %.2e fp %.2e forget %.2e miss %.2e "
           "fn %.2e\n",
           (unsigned long long)p->bits, p->hashes, s->phases, s->sigma ? "sigma" : "N",
           (unsigned long long)(s->sigma ? s->sigma : s->messages),
           p->hashing == RBF_NON_COLLIDING ? " non-colliding" : "",
           p->recycle == RBF_RETAINING ? " retaining" : "", w1.mean, w1.fp, w1.forget, w1.miss,
           w1.fn);
    upd(&w->mean, w1.mean);
    upd(&w->fp, w1.fp);
    upd(&w->forget, w1.forget);
    upd(&w->miss, w1.miss);
    upd(&w->fn, w1.fn);
    rbf_model_cycles_free(a);
    rbf_model_cycles_free(b);
}

static void test_sigma_asym_vs_chain(void **state)
{
    (void)state;
    static const struct {
        uint64_t M;
        unsigned k, phases;
        double sfrac;
        int nc, ret;
    } cs[] = {
        {131072, 4, 1, 0.4, 0, 0}, {131072, 1, 1, 0.6, 0, 0}, {131072, 8, 1, 0.45, 0, 0},
        {131072, 6, 1, 0.3, 1, 1}, {262144, 4, 2, 0.2, 0, 0}, {262144, 3, 2, 0.4, 1, 0},
        {131072, 5, 2, 0.3, 0, 1}, {65536, 2, 1, 0.5, 0, 1},
    };
    worst w = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (shrink() && cs[i].M / cs[i].phases > 65536)
            continue; /* valgrind, ASan: the filters of 2^16 bits */
        rbf_model_params p = params(cs[i].M / cs[i].phases, cs[i].k, cs[i].nc, cs[i].ret);
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.phases = cs[i].phases;
        s.sigma = (uint64_t)(cs[i].sfrac * (double)p.bits);
        both_ways(&p, &s, &w);
    }
    /* measured: mean 5.6e-11, forget 2.7e-8, miss 2.7e-8, fn 1.5e-9 */
    assert_true(w.mean < 1e-9);
    assert_true(w.fp < 1e-12);
    assert_true(w.forget < 2e-7);
    assert_true(w.miss < 2e-7);
    assert_true(w.fn < 2e-8);
}

static void test_nreal_asym_vs_chain(void **state)
{
    (void)state;
    static const struct {
        uint64_t M;
        unsigned k, phases;
        double nfrac; /* N = nfrac M' / k */
        int nc;
    } cs[] = {
        {131072, 4, 1, 0.4, 0}, {131072, 2, 1, 0.6, 0}, {131072, 3, 1, 0.3, 1},
        {262144, 4, 2, 0.4, 0}, {131072, 7, 2, 0.25, 0}, {65536, 1, 1, 0.5, 0},
    };
    worst w = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (shrink() && cs[i].M / cs[i].phases > 65536)
            continue; /* valgrind, ASan: the filters of 2^16 bits */
        rbf_model_params p = params(cs[i].M / cs[i].phases, cs[i].k, cs[i].nc, 0);
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.phases = cs[i].phases;
        s.messages = (uint64_t)(cs[i].nfrac * (double)p.bits / cs[i].k);
        both_ways(&p, &s, &w);
    }
    /* measured: mean 3.6e-13, fp 3.6e-9, forget 5.3e-8, miss 1.5e-7, fn 1.1e-8 */
    assert_true(w.mean < 1e-11);
    assert_true(w.fp < 5e-8);
    assert_true(w.forget < 5e-7);
    assert_true(w.miss < 1e-6);
    assert_true(w.fn < 1e-7);
}

/* auto and fast: the chain where it is short, the large-filter law where
 * it is long; exact: always the chain */
static void test_asym_rule(void **state)
{
    (void)state;
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    rbf_model_params small = params(20000, 4, 0, 0), big = params(1000000, 4, 0, 0);
    s.sigma = 8000;
    rbf_model_cycles *c = NULL;
    assert_int_equal(rbf_model_cycles_new(&small, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "chain");
    rbf_model_cycles_free(c);
    /* fast: from 2^12 bits whatever the cost */
    small.method = RBF_MODEL_ASYMPTOTIC;
    assert_int_equal(rbf_model_cycles_new(&small, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "large-filter");
    rbf_model_cycles_free(c);
    rbf_model_params tiny = params(4000, 4, 0, 0);
    tiny.method = RBF_MODEL_ASYMPTOTIC;
    s.sigma = 1600;
    assert_int_equal(rbf_model_cycles_new(&tiny, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "chain");
    rbf_model_cycles_free(c);
    s.sigma = 400000;
    for (int m = 0; m < 2; m++) {
        big.method = m ? RBF_MODEL_ASYMPTOTIC : RBF_MODEL_AUTO;
        assert_int_equal(rbf_model_cycles_new(&big, &s, &c), RBF_OK);
        assert_string_equal(law_of(c), "large-filter");
        rbf_model_cycles_free(c);
    }
    rbf_model_cycle_spec_init(&s);
    s.messages = 100000;
    big.method = RBF_MODEL_AUTO;
    assert_int_equal(rbf_model_cycles_new(&big, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "large-filter");
    rbf_model_cycles_free(c);
    /* exact: the chain, also where it is long (a filter of 2^18 bits, whose
     * chain auto skips) */
    rbf_model_params mid = params(262144, 4, 0, 0);
    rbf_model_cycle_spec_init(&s);
    s.sigma = 100000;
    assert_true(rbf__cyc_sigma_chain_cost(&mid, s.sigma) > CYC_ASYM_BUDGET);
    assert_int_equal(rbf_model_cycles_new(&mid, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "large-filter");
    rbf_model_cycles_free(c);
    mid.method = RBF_MODEL_EXACT;
    assert_int_equal(rbf_model_cycles_new(&mid, &s, &c), RBF_OK);
    assert_string_equal(law_of(c), "chain");
    rbf_model_cycles_free(c);
    assert_int_equal(rbf_model_cycles_get_law(NULL, NULL), RBF_EINVAL);
    assert_string_equal(rbf_model_law_name((rbf_model_law)99), "");
}

/* Two phases: the forgetting of a tick, trig + sum_l P(L = l) (F(g - l) -
 * trig), F the one-phase (active filter) forgetting, trig its value at 0
 * when the trigger is held by neither filter; the miss likewise from the
 * one-phase miss.  Summed here from the public accessors, against the
 * tabled form (cycles up to 2^17 ticks) and the form summed when asked
 * (longer cycles). */
static void check_two_phase_sums(const rbf_model_cycles *c, int sigma_nonret)
{
    uint64_t len = rbf_model_cycles_max(c);
    const double mean = rbf_model_cycles_mean(c);
    const double trig = sigma_nonret ? rbf_model_forget(c, 0, RBF_MODEL_FROM_TICK, 1) : 0.0;
    uint64_t l0 = 0;
    while (rbf_model_cycles_pmf(c, l0) == 0.0)
        l0++;
    const double fr[] = {0.3, 0.99, 1.0, 1.01, 1.5, 1.98, 2.0, 2.02, 2.5};
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
        const uint64_t g = (uint64_t)(fr[i] * mean);
        double f = 0.0, fh = 0.0;
        for (uint64_t l = l0; l <= len && l <= g; l++) {
            const double pl = rbf_model_cycles_pmf(c, l);
            f += pl * (rbf_model_forget(c, g - l, RBF_MODEL_FROM_TICK, 1) - trig);
            fh += pl * rbf_model_forget(c, g - l, RBF_MODEL_FROM_HELD, 1);
        }
        const double want = fmin(1.0, trig + f);
        assert_true(fabs(rbf_model_forget(c, g, RBF_MODEL_FROM_TICK, 0) - want) < 1e-10);
        assert_true(fabs(rbf_model_forget(c, g, RBF_MODEL_FROM_HELD, 0) - fmin(fh, 1.0)) < 1e-10);
        const double m = rbf_model_miss(c, g, RBF_MODEL_FROM_TICK);
        assert_true(m >= 0.0 && m <= rbf_model_forget(c, g, RBF_MODEL_FROM_TICK, 0) + 1e-12);
    }
}

static void test_two_phase_long(void **state)
{
    (void)state;
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.phases = 2;
    /* about 2^14 ticks a cycle (tabled), then just past 2^17 (summed when
     * asked), both from the large-filter law */
    const uint64_t Ms[] = {262144, 2097152};
    for (int i = 0; i < 2; i++) {
        rbf_model_params p = params(Ms[i] / 2, 4, 0, 0);
        s.sigma = (uint64_t)(0.4 * (double)p.bits);
        rbf_model_cycles *c = build(&p, &s, RBF_CYC_LAW_ASYM);
        assert_true((rbf_model_cycles_max(c) > CYC_MAX_CONV) == (i == 1));
        check_two_phase_sums(c, 1);
        rbf_model_cycles_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asym_rule),
        cmocka_unit_test(test_two_phase_long),
        cmocka_unit_test(test_sigma_asym_vs_chain),
        cmocka_unit_test(test_nreal_asym_vs_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
