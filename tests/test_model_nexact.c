/*
 * test_model_nexact.c -- the fast exact N-bounded rates (src/model/nbound/nexact.c,
 * docs/models.md 3b "Exact N-bounded rates, fast") against the propagated
 * chain (method exact) and a brute-force dense chain.
 *
 * Every comparison is at 1e-9 relative, the method's promise (the measured
 * gaps are ~1e-13).  Sizes up to 2^18 (the chain costs O(N k sqrt(M)));
 * 2^14 at most under RBF_TEST_SHRINK (valgrind).  The grid's 2^16 half and
 * the 2^18 points of test_real_any_load (about 100 s of the chain) run with
 * RBF_TEST_BIG=1 (make test-big), and the run says so.
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
#include "model_nbound.h"
#include "model_brute.h"
#include "model_util.h"
#include "rbf_model.h"

#define TOL 1e-9

/* One N-bounded case: M bits, k hashes, hashing, N messages. */
typedef struct {
    uint64_t M;
    unsigned k;
    int nc;
    uint64_t N;
} nx_case;

static double rel(double a, double b)
{
    double d = fabs(a - b), m = fabs(b);
    return m > 0.0 ? d / m : d;
}

/* Fast worst/oracle at (M, k, N) against the chain; returns 1 when the fast
 * method took the point itself (its estimate accepted it). */
static int compare_one(uint64_t M, unsigned k, int nc, uint64_t N)
{
    rbf_model_params p = tu_model_params(M, k, nc, 0, RBF_MODEL_EXACT);
    rbf_model_n_result e;
    assert_int_equal(rbf_model_nbounded(&p, N, &e), RBF_OK);
    double w = -1.0, o = -1.0, re = -1.0;
    uint64_t sat = 0;
    int rc = rbf__nexact_fast(&p, N, &w, &o, &sat, &re);
    assert_true(rc == RBF_OK || rc == 1);
    printf("M=%llu k=%u %s N=%llu: worst %.15g / %.15g (%.1e), oracle %.15g / %.15g (%.1e), "
           "estimate %.1e%s\n",
           (unsigned long long)M, k, nc ? "nc" : "c", (unsigned long long)N, w, e.exact_worst,
           rel(w, e.exact_worst), o, e.exact_oracle, rel(o, e.exact_oracle), re,
           rc ? " (refused: chain)" : "");
    if (rc == RBF_OK) {
        assert_true(rel(w, e.exact_worst) <= TOL);
        assert_true(rel(o, e.exact_oracle) <= TOL);
    }
    /* the public function with the fast method gives the same numbers
     * (fast or its fallback) */
    p.method = RBF_MODEL_ASYMPTOTIC;
    if (N <= 20000 || rc == 1) {
        rbf_model_n_result f;
        assert_int_equal(rbf_model_nbounded(&p, N, &f), RBF_OK);
        assert_true(rel(f.exact_worst, e.exact_worst) <= TOL);
        assert_true(rel(f.exact_oracle, e.exact_oracle) <= TOL);
        assert_true(rel(f.exact_real, e.exact_real) <= TOL);
    }
    return rc == RBF_OK;
}

/* The grid: M, k in 1..12, N small, mid-cycle (about half the bits set),
 * late (rho near 1) and past saturation; both hashings. */
static int big(void)
{
    const char *b = getenv("RBF_TEST_BIG");
    return b && *b && strcmp(b, "0") != 0;
}

static void test_fast_vs_chain_grid(void **state)
{
    (void)state;
    const int shrink = tu_shrink() > 1;
    const unsigned nm = shrink ? 1u : big() ? 2u : 1u;
    if (!shrink && nm == 1)
        printf("the grid at M = 2^16: with RBF_TEST_BIG=1 (make test-big)\n");
    static const unsigned ks[] = {1, 2, 3, 5, 8, 12};
    const uint64_t Ms[] = {((uint64_t)1 << 14) + 3, (uint64_t)1 << 16};
    unsigned total = 0, fast = 0;
    for (unsigned mi = 0; mi < nm; mi++) {
        uint64_t M = Ms[mi];
        for (unsigned ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            unsigned k = ks[ki];
            if (mi == 1 && (k == 1 || k == 2 || k == 5))
                continue;
            if (shrink && k != 3 && k != 8) /* valgrind, ASan: two k */
                continue;
            double Md = (double)M;
            uint64_t Nv[4] = {7, (uint64_t)(0.69 * Md / k), (uint64_t)(Md * (log(Md) - 1.0) / k),
                              (uint64_t)(Md * (log(Md) + 75.0) / k)};
            for (int nc = 0; nc < 2; nc++)
                for (unsigned i = 0; i < (shrink ? 2u : 4u); i++) { /* late and past saturation: long chains */
                    total++;
                    fast += (unsigned)compare_one(M, k, nc, Nv[i]);
                }
        }
    }
    printf("fast method took %u of %u points\n", fast, total);
    assert_int_equal(fast, total);
}

/* One larger size (mid-cycle) and k up to 32. */
static void test_fast_vs_chain_big(void **state)
{
    (void)state;
    if (tu_shrink() > 1) {
        assert_true(compare_one(4099, 20, 0, 150));
        return;
    }
    assert_true(compare_one((uint64_t)1 << 18, 5, 0, 36000));
    assert_true(compare_one((uint64_t)1 << 18, 5, 1, 36000));
    assert_true(compare_one((uint64_t)1 << 16, 32, 0, 1400));
    assert_true(compare_one((uint64_t)1 << 16, 32, 1, 1400));
    assert_true(compare_one((uint64_t)1 << 16, 20, 1, 1));
    assert_true(compare_one((uint64_t)1 << 16, 20, 0, 2));
}

/* Huge M, small N: the chain is cheap there (the window is narrow). */
static void test_fast_vs_chain_huge_m(void **state)
{
    (void)state;
    const uint64_t M40 = (uint64_t)1 << 40;
    assert_true(compare_one(M40, 8, 0, 1000));
    assert_true(compare_one(M40, 8, 1, 1000));
    assert_true(compare_one(M40, 3, 0, 100000));
    assert_true(compare_one(M40, 3, 1, 100000));
}

/* Brute force (dense matrices of every hash tuple) at tiny M: where the
 * fast method accepts a point it is within 1e-9; each single term is within
 * its own error estimate. */
static void test_brute_tiny(void **state)
{
    (void)state;
    unsigned taken = 0;
    for (int nc = 0; nc < 2; nc++)
        for (unsigned M = 3; M <= 9; M += 2)
            for (unsigned k = 1; k <= 3; k++) {
                if (nc && k > M)
                    continue;
                for (unsigned N = 1; N <= 25; N += 4) {
                    double bw, bo, br;
                    assert_int_equal(brute_nbounded(M, k, nc, N, &bw, &bo, &br), 0);
                    rbf_model_params p = tu_model_params(M, k, nc, 0, RBF_MODEL_EXACT);
                    double re;
                    double v = rbf__nexact_term(&p, N, &re);
                    if (isfinite(re))
                        assert_true(rel(v, bw) <= re + 1e-14);
                    double w, o;
                    uint64_t sat;
                    if (rbf__nexact_fast(&p, N, &w, &o, &sat, &re) == RBF_OK) {
                        taken++;
                        assert_true(rel(w, bw) <= TOL);
                        assert_true(rel(o, bo) <= TOL);
                    }
                }
            }
    printf("fast method took %u tiny points\n", taken);
    assert_true(taken >= 40);
}

/* Real user at light load: from the oracle sum when rho(min(M,(N-1)k)) <=
 * 1e-10; against the chain. */
static void test_real_light_load(void **state)
{
    (void)state;
    static const nx_case cs[] = {{(uint64_t)1 << 20, 8, 0, 3000},
              {(uint64_t)1 << 20, 8, 1, 3000},
              {(uint64_t)1 << 23, 4, 0, 2000},
              {(uint64_t)1 << 30, 7, 1, 20000}};
    for (unsigned i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        rbf_model_params p = tu_model_params(cs[i].M, cs[i].k, cs[i].nc, 0, RBF_MODEL_EXACT);
        uint64_t top = (cs[i].N - 1) * cs[i].k;
        double rmax = 1.0;
        assert_int_equal(rbf_model_rho(cs[i].M, cs[i].k, p.hashing, top, &rmax), RBF_OK);
        assert_true(rmax <= RBF__NEXACT_REAL_RMAX);
        rbf_model_n_result e, f;
        assert_int_equal(rbf_model_nbounded(&p, cs[i].N, &e), RBF_OK);
        p.method = RBF_MODEL_ASYMPTOTIC;
        assert_int_equal(rbf_model_nbounded(&p, cs[i].N, &f), RBF_OK);
        printf("real, M=%llu k=%u N=%llu: %.15g / chain %.15g (%.1e), rmax %.1e\n",
               (unsigned long long)cs[i].M, cs[i].k, (unsigned long long)cs[i].N, f.exact_real,
               e.exact_real, rel(f.exact_real, e.exact_real), rmax);
        assert_true(rel(f.exact_real, e.exact_real) <= TOL);
        assert_true(rel(f.exact_oracle, e.exact_oracle) <= TOL);
    }
}

/* 2^40 and 2^44 bits, 10^12 messages: answers (fast path taken), values
 * ordered as they must be (colliding: exact_worst >= f_w by Jensen;
 * oracle < worst). */
static void test_huge(void **state)
{
    (void)state;
    const uint64_t Ms[] = {(uint64_t)1 << 40, (uint64_t)1 << 44};
    for (unsigned i = 0; i < 2; i++)
        for (int nc = 0; nc < 2; nc++) {
            rbf_model_params p = tu_model_params(Ms[i], 7, nc, 0, RBF_MODEL_AUTO);
            double w, o, re;
            uint64_t sat;
            assert_int_equal(rbf__nexact_fast(&p, 1000000000000ull, &w, &o, &sat, &re), RBF_OK);
            double fw;
            assert_int_equal(rbf_model_f_w(Ms[i], 7, 1000000000000ull, &fw), RBF_OK);
            printf("M=2^%d k=7 %s N=1e12: worst %.15g (f_w %.15g), oracle %.15g, estimate %.1e\n",
                   i ? 44 : 40, nc ? "nc" : "c", w, fw, o, re);
            assert_true(w > 0.0 && w <= 1.0 && o > 0.0 && o < w);
            if (!nc) /* Jensen; f_w is the colliding formula */
                assert_true(w >= fw * (1.0 - 1e-12));
            assert_true(re <= 1e-11);
        }
}

/* Past saturation (M q1^(N-1) < 1e-30) the real user's rate is 1 without
 * the chain, as the chain says. */
static void test_real_saturated(void **state)
{
    (void)state;
    for (int nc = 0; nc < 2; nc++) {
        rbf_model_params p = tu_model_params(4099, 4, nc, 0, RBF_MODEL_EXACT);
        uint64_t N = 90000;
        rbf_model_n_result e, f;
        assert_int_equal(rbf_model_nbounded(&p, N, &e), RBF_OK);
        p.method = RBF_MODEL_ASYMPTOTIC;
        assert_int_equal(rbf_model_nbounded(&p, N, &f), RBF_OK);
        printf("saturated %s: real %g / chain %g, worst %g / %g, oracle %.15g / %.15g, "
               "saturated_at %llu / %llu\n",
               nc ? "nc" : "c", f.exact_real, e.exact_real, f.exact_worst, e.exact_worst,
               f.exact_oracle, e.exact_oracle, (unsigned long long)f.saturated_at,
               (unsigned long long)e.saturated_at);
        assert_true(e.saturated_at > 0 && f.saturated_at > 0);
        assert_true(e.exact_real == 1.0 && f.exact_real == 1.0);
        assert_true(rel(f.exact_oracle, e.exact_oracle) <= TOL);
        assert_true(f.exact_worst == 1.0);
    }
}

/* The real user at any load (potentials of the fill chain): against the
 * propagation at 2^16 and 2^18 bits its value must be within its own
 * error estimate (and that estimate small, so the check bites), accepted
 * or not; where it accepts, within 1e-9. */
static void test_real_any_load(void **state)
{
    (void)state;
    static const unsigned ks[] = {2, 5, 12};
    static const double fill[] = {0.3, 0.7, 2.0};
    const uint64_t Ms[] = {(uint64_t)1 << 16, (uint64_t)1 << 18};
    const unsigned nm = tu_shrink() > 1 || !big() ? 1u : 2u;
    if (tu_shrink() <= 1 && nm == 1)
        printf("the points at M = 2^18: with RBF_TEST_BIG=1 (make test-big)\n");
    for (unsigned mi = 0; mi < nm; mi++)
        for (int nc = 0; nc < 2; nc++)
            for (unsigned ki = 0; ki < 3; ki++)
                for (unsigned fi = 0; fi < 3; fi++) {
                    uint64_t M = Ms[mi];
                    unsigned k = ks[ki];
                    if (mi == 1 && (fi != 1 || k == 2))
                        continue;
                    if (tu_shrink() > 1 && (k != 5 || fi == 2)) /* valgrind, ASan: four points */
                        continue;
                    uint64_t N = (uint64_t)(fill[fi] * (double)M / k);
                    rbf_model_params p = tu_model_params(M, k, nc, 0, RBF_MODEL_EXACT);
                    rbf_model_n_result e;
                    assert_int_equal(rbf_model_nbounded(&p, N, &e), RBF_OK);
                    double r = -1.0, re = -1.0, rw = -1.0;
                    int rc = rbf__nreal_fast(&p, N, &r, &re, &rw);
                    printf("real any load M=%llu k=%u %s N=%llu: %.15g / chain %.15g (%.1e), "
                           "estimate %.1e, rc %d\n",
                           (unsigned long long)M, k, nc ? "nc" : "c", (unsigned long long)N, r,
                           e.exact_real, rel(r, e.exact_real), re, rc);
                    assert_true(rc == RBF_OK || rc == 1);
                    if (e.exact_real == 1.0) {
                        assert_true(rc == 1 || r == 1.0);
                        continue;
                    }
                    assert_true(rel(r, e.exact_real) <= re);
                    assert_true(re <= 2e-5);
                    if (rc == RBF_OK) {
                        assert_true(rel(r, e.exact_real) <= TOL);
                        assert_true(rel(rw, e.exact_real_worst) <= TOL);
                    }
                }
    if (tu_shrink() > 1) /* the long chains below run in the normal build */
        return;
    /* Heavy load at sizes the second-order expansion refused (its
     * estimate was ~1e-8 at 2^16 and k = 12 needed 2^24): the terms to
     * O(1/N^2), the overshoot solved by iteration and the interpolation's
     * own error must be accepted here and agree with the chain to 1e-10 */
    static const nx_case acc[] = {{65536, 5, 0, 9175}, {65536, 5, 1, 9175}, {65536, 3, 0, 21845},
               {262144, 12, 0, 15291}, {262144, 8, 1, 32768}};
    for (unsigned i = 0; i < sizeof acc / sizeof acc[0]; i++) {
        rbf_model_params q = tu_model_params(acc[i].M, acc[i].k, acc[i].nc, 0, RBF_MODEL_EXACT);
        rbf_model_n_result ex;
        assert_int_equal(rbf_model_nbounded(&q, acc[i].N, &ex), RBF_OK);
        double rr = -1.0, rre = -1.0, rw = -1.0;
        int rc2 = rbf__nreal_fast(&q, acc[i].N, &rr, &rre, &rw);
        printf("real heavy load M=%llu k=%u %s N=%llu: %.15g / chain %.15g (%.1e), "
               "estimate %.1e, rc %d\n",
               (unsigned long long)acc[i].M, acc[i].k, acc[i].nc ? "nc" : "c",
               (unsigned long long)acc[i].N, rr, ex.exact_real, rel(rr, ex.exact_real), rre, rc2);
        printf("  worst %.15g / chain %.15g (%.1e)\n", rw, ex.exact_real_worst,
               rel(rw, ex.exact_real_worst));
        assert_int_equal(rc2, RBF_OK);
        assert_true(rel(rr, ex.exact_real) <= 1e-10);
        assert_true(rel(rr, ex.exact_real) <= rre);
        assert_true(rel(rw, ex.exact_real_worst) <= 1e-10);
    }
    /* past the bit-setting messages a filling takes: 1, as the chain */
    rbf_model_params p = tu_model_params(65536, 7, 0, 0, RBF_MODEL_EXACT);
    rbf_model_n_result e;
    assert_int_equal(rbf_model_nbounded(&p, 60000, &e), RBF_OK);
    double r = -1.0, re;
    assert_int_equal(rbf__nreal_fast(&p, 60000, &r, &re, NULL), RBF_OK);
    assert_true(e.exact_real == 1.0 && r == 1.0);
    /* just below a whole filling (about 24276 bit-setting messages at
     * k = 7) the propagation has mass >= 1e-30 on a full filter and says
     * 1: the fast method must not give a finite rate there */
    assert_int_equal(rbf_model_nbounded(&p, 23800, &e), RBF_OK);
    assert_true(e.exact_real == 1.0);
    r = -1.0;
    int rc = rbf__nreal_fast(&p, 23800, &r, &re, NULL);
    assert_true(rc == 1 || r == 1.0);
}

/* exact_real_worst, E[rho(B'_N)], against an independent propagation:
 * the two-phase real-user cycle law (cycles.c, its own chain) gives the
 * rate (E_fp + N rho_F)/(N + E_fp) and the mean N + E_fp, which the CLI
 * now computes from rbf_model_nbounded alone.  Also: exact_real_worst is at
 * least exact_worst (B'_N >= B_N) and, past a sure filling, 1. */
static void test_real_worst(void **state)
{
    (void)state;
    static const nx_case cs[] = {{500, 3, 0, 100}, {2000, 5, 1, 300}, {4096, 7, 0, 600}, {1000, 1, 0, 900},
              {3000, 12, 0, 200}, {8192, 4, 1, 2500}};
    for (unsigned i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        rbf_model_params p = tu_model_params(cs[i].M, cs[i].k, cs[i].nc, 0, RBF_MODEL_EXACT);
        rbf_model_n_result e;
        assert_int_equal(rbf_model_nbounded(&p, cs[i].N, &e), RBF_OK);
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.phases = 2;
        s.messages = cs[i].N;
        rbf_model_cycles *c = NULL;
        assert_int_equal(rbf_model_cycles_new(&p, &s, &c), RBF_OK);
        double n = (double)cs[i].N, efp = n * e.exact_real / (1.0 - e.exact_real);
        double fp = (efp + n * e.exact_real_worst) / (n + efp);
        printf("real worst M=%llu k=%u N=%llu: %.15g (worst %.15g); two-phase %.15g / cycles "
               "%.15g, mean %.12g / %.12g\n",
               (unsigned long long)cs[i].M, cs[i].k, (unsigned long long)cs[i].N,
               e.exact_real_worst, e.exact_worst, fp, rbf_model_cycles_fp(c), n + efp,
               rbf_model_cycles_mean(c));
        assert_true(e.exact_real_worst >= e.exact_worst * (1.0 - 1e-12));
        assert_true(rel(fp, rbf_model_cycles_fp(c)) <= 1e-11);
        assert_true(rel(n + efp, rbf_model_cycles_mean(c)) <= 1e-11);
        rbf_model_cycles_free(c);
    }
    rbf_model_params p = tu_model_params(65536, 7, 0, 0, RBF_MODEL_EXACT);
    rbf_model_n_result e;
    assert_int_equal(rbf_model_nbounded(&p, 60000, &e), RBF_OK);
    assert_true(e.exact_real == 1.0 && e.exact_real_worst == 1.0);
}

/* The heavy-load chain (a message at a time by its kernel table,
 * nbounded.c) against the hash-by-hash chain of --method exact: the same
 * law summed in another order, so every value within 1e-12 relative, the
 * same saturated_at, and 1 where the hash-by-hash chain says 1.  Auto at
 * these sizes propagates; lowering rbf__nb_heavy_chain to 0 makes it step
 * by the kernel. */
static void test_kernel_chain(void **state)
{
    (void)state;
    static const nx_case cs[] = {
        {1000, 1, 0, 300},   {1000, 3, 0, 120},  {1000, 3, 1, 700},  {3001, 7, 0, 250},
        {3001, 7, 1, 600},   {3001, 12, 0, 90},  {3001, 12, 1, 400}, {16387, 5, 1, 3000},
        {16387, 12, 0, 1800}, {16387, 32, 0, 400}, {16387, 32, 1, 900}, {64, 8, 0, 40},
        {64, 8, 1, 12},      {200, 2, 0, 2000}};
    const double keep = rbf__nb_heavy_chain;
    double worst = 0.0;
    for (unsigned i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        rbf_model_params pe = tu_model_params(cs[i].M, cs[i].k, cs[i].nc, 0, RBF_MODEL_EXACT);
        rbf_model_params pa = tu_model_params(cs[i].M, cs[i].k, cs[i].nc, 0, RBF_MODEL_AUTO);
        rbf_model_n_result e, a;
        assert_int_equal(rbf_model_nbounded(&pe, cs[i].N, &e), RBF_OK);
        rbf__nb_heavy_chain = 0.0;
        int rc = rbf_model_nbounded(&pa, cs[i].N, &a);
        rbf__nb_heavy_chain = keep;
        assert_int_equal(rc, RBF_OK);
        const double ev[] = {e.exact_worst, e.exact_oracle, e.exact_real, e.exact_real_worst};
        const double av[] = {a.exact_worst, a.exact_oracle, a.exact_real, a.exact_real_worst};
        printf("kernel chain M=%llu k=%u %s N=%llu: real %.15g / %.15g, worst %.15g / %.15g\n",
               (unsigned long long)cs[i].M, cs[i].k, cs[i].nc ? "nc" : "c",
               (unsigned long long)cs[i].N, a.exact_real, e.exact_real, a.exact_worst,
               e.exact_worst);
        for (unsigned j = 0; j < 4; j++) {
            if (ev[j] == 1.0)
                assert_true(av[j] == 1.0);
            double r = rel(av[j], ev[j]);
            if (r > worst)
                worst = r;
            assert_true(r <= 1e-12);
        }
        assert_int_equal(a.saturated_at, e.saturated_at);
    }
    printf("kernel chain: worst relative gap %.3g\n", worst);
    /* where the fast method answers (2^16 bits, k = 5, mid-cycle) the
     * chain can still be asked for (rbf__nb_chain_only, the benchmarks'
     * reference): fast, kernel chain and hash steps agree */
    {
        rbf_model_params pe = tu_model_params(65536, 5, 0, 0, RBF_MODEL_EXACT);
        rbf_model_params pf = tu_model_params(65536, 5, 0, 0, RBF_MODEL_ASYMPTOTIC);
        rbf_model_n_result e, f, c;
        assert_int_equal(rbf_model_nbounded(&pe, 12000, &e), RBF_OK);
        assert_int_equal(rbf_model_nbounded(&pf, 12000, &f), RBF_OK);
        rbf__nb_heavy_chain = 0.0;
        rbf__nb_chain_only = 1;
        int rc = rbf_model_nbounded(&pf, 12000, &c);
        rbf__nb_heavy_chain = keep;
        rbf__nb_chain_only = 0;
        assert_int_equal(rc, RBF_OK);
        printf("kernel chain 2^16/5/12000: real %.15g, fast %.15g, exact %.15g\n", c.exact_real,
               f.exact_real, e.exact_real);
        assert_true(rel(c.exact_real, e.exact_real) <= 1e-12);
        assert_true(rel(c.exact_real_worst, e.exact_real_worst) <= 1e-12);
        assert_true(rel(f.exact_real, e.exact_real) <= 1e-9);
        assert_true(c.exact_real != f.exact_real); /* the chain ran, not the fast path */
    }
    /* the cases reach both ends: a value that saturates and one far from 1 */
    rbf_model_params pe = tu_model_params(200, 2, 0, 0, RBF_MODEL_EXACT);
    rbf_model_n_result e;
    assert_int_equal(rbf_model_nbounded(&pe, 2000, &e), RBF_OK);
    assert_true(e.exact_real == 1.0);
}

/* The non-colliding hash-by-hash chain reads its factors from per-hash
 * tables, or divides as it goes where the tables would be too large
 * (rbf__nb_qtab_max): the same divisions of the same integers, so the two
 * give the same doubles, bit for bit, plain and conditioned (exact_real),
 * from a light load to past saturation. */
static void test_nc_factor_tables(void **state)
{
    (void)state;
    static const nx_case cs[] = {{64, 8, 1, 12},     {1000, 3, 1, 700},  {3001, 12, 1, 400},
                                 {16387, 5, 1, 3000}, {16387, 32, 1, 900}, {200, 2, 1, 2000},
                                 {65536, 32, 1, 3000}};
    const size_t keep = rbf__nb_qtab_max;
    /* valgrind, ASan: not the 2^16-bit case (seconds there) */
    const unsigned n = (unsigned)(sizeof cs / sizeof cs[0]) - (tu_shrink() > 1);
    for (unsigned i = 0; i < n; i++) {
        rbf_model_params pe = tu_model_params(cs[i].M, cs[i].k, 1, 0, RBF_MODEL_EXACT);
        rbf_model_n_result t, d;
        assert_int_equal(rbf_model_nbounded(&pe, cs[i].N, &t), RBF_OK);
        rbf__nb_qtab_max = 0;
        int rc = rbf_model_nbounded(&pe, cs[i].N, &d);
        rbf__nb_qtab_max = keep;
        assert_int_equal(rc, RBF_OK);
        printf("nc factors M=%llu k=%u N=%llu: real %.17g / %.17g\n",
               (unsigned long long)cs[i].M, cs[i].k, (unsigned long long)cs[i].N, t.exact_real,
               d.exact_real);
        assert_true(t.exact_worst == d.exact_worst);
        assert_true(t.exact_oracle == d.exact_oracle);
        assert_true(t.exact_real == d.exact_real);
        assert_true(t.exact_real_worst == d.exact_real_worst);
        assert_int_equal(t.saturated_at, d.saturated_at);
        assert_true(t.exact_worst > 0.0);
    }
}

/* Near a full filter the potentials need their fifth to eighth terms and
 * the fourth cumulant of J(B'_N) (nexact.c): with them the fast value is
 * accepted there and matches the chain (the kernel chain,
 * rbf__nb_chain_only) to 1e-10; measured gaps 7e-13, 4e-12 and (N =
 * 52620, 0.95 of a whole filling) 1.4e-11 and 1.3e-11.  Without the fifth
 * and sixth terms the first two were refused (estimates 2.5e-9 and
 * 2.7e-9); without kappa4 and the seventh and eighth terms the last two
 * were (6.4e-9). */
static void test_real_near_full(void **state)
{
    (void)state;
    static const nx_case cs[] = {{262144, 16, 0, 40960},
                                 {262144, 24, 1, 21845},
                                 {262144, 16, 0, 52620},
                                 {262144, 16, 1, 52620}};
    const double keep = rbf__nb_heavy_chain;
    for (unsigned i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        rbf_model_params p = tu_model_params(cs[i].M, cs[i].k, cs[i].nc, 0, RBF_MODEL_ASYMPTOTIC);
        double r = 0, re = 0, rw = 0;
        assert_int_equal(rbf__nreal_fast(&p, cs[i].N, &r, &re, &rw), RBF_OK);
        rbf_model_n_result c;
        rbf__nb_heavy_chain = 0.0;
        rbf__nb_chain_only = 1;
        int rc = rbf_model_nbounded(&p, cs[i].N, &c);
        rbf__nb_heavy_chain = keep;
        rbf__nb_chain_only = 0;
        assert_int_equal(rc, RBF_OK);
        double e = c.exact_real / (1.0 - c.exact_real), f = r / (1.0 - r);
        printf("near full M=%llu k=%u N=%llu: E_fp gap %.3g (estimate %.3g), worst gap %.3g\n",
               (unsigned long long)cs[i].M, cs[i].k, (unsigned long long)cs[i].N, rel(f, e), re,
               rel(rw, c.exact_real_worst));
        assert_true(c.exact_real > 1e-3 && c.exact_real < 0.5); /* heavy load */
        assert_true(rel(f, e) <= 1e-10 && rel(f, e) <= re);
        assert_true(rel(rw, c.exact_real_worst) <= 1e-10);
    }
}

/* The real user's chain on a full filter (nexact.c, rbf__nreal_full_logp):
 * the WKB/Bahadur-Rao estimate of log P(B'_c = M) against the exact law of
 * B'_c (a dense chain conditioned on setting a bit, no cut) wherever that
 * is between e^-150 and e^-3; measured within 0.05 to 0.9 of it.  And the
 * decision that estimate makes: past the cut by more than its slack the
 * fast path says exact_real = 1 with the propagation; short of it by more
 * than the slack it does not. */
static void test_full_filter_tail(void **state)
{
    (void)state;
    static const struct {
        uint64_t M;
        unsigned k;
        int nc;
    } cs[] = {{4096, 6, 0}, {4096, 16, 1}, {8192, 3, 0}, {4096, 1, 0}};
    unsigned ncase = tu_shrink() > 1 ? 1 : sizeof cs / sizeof cs[0];
    for (unsigned i = 0; i < ncase; i++) {
        const uint64_t M = cs[i].M;
        const unsigned k = cs[i].k;
        rbf_model_params p = tu_model_params(M, k, cs[i].nc, 0, RBF_MODEL_ASYMPTOTIC);
        double *T = malloc((size_t)M * (k + 1) * sizeof *T);
        double *P = calloc(M + 1, sizeof *P), *Q = calloc(M + 1, sizeof *Q);
        assert_non_null(T);
        assert_non_null(P);
        assert_non_null(Q);
        for (uint64_t b = 0; b < M; b++) {
            double *t = T + b * (k + 1), z = 0.0;
            rbf__model_step_dist(M, k, cs[i].nc, b, t);
            for (unsigned d = 1; d <= k; d++)
                z += t[d];
            for (unsigned d = 1; d <= k; d++)
                t[d] /= z;
        }
        P[0] = 1.0;
        unsigned checked = 0;
        double worst = 0.0;
        for (uint64_t c = 1; c <= 4 * M; c++) {
            memset(Q, 0, (M + 1) * sizeof *Q);
            Q[M] = P[M];
            for (uint64_t b = 0; b < M; b++) {
                if (P[b] == 0.0)
                    continue;
                const double *t = T + b * (k + 1);
                for (unsigned d = 1; d <= k && b + d <= M; d++)
                    Q[b + d] += P[b] * t[d];
            }
            double *x = P;
            P = Q;
            Q = x;
            double lx = log(P[M]);
            if (k == 1) { /* D = M exactly: -inf, then 0 */
                if (c == M - 1 || c == M) {
                    double lp = 0.0;
                    assert_int_equal(rbf__nreal_full_logp(&p, c, &lp), RBF_OK);
                    assert_true(c == M ? lp == 0.0 : lp == -INFINITY);
                    checked++;
                }
                if (c == M)
                    break;
                continue;
            }
            if (lx < -150.0 || (c % 7 != 0 && lx < -3.0))
                continue;
            if (lx > -3.0)
                break;
            double lp = 0.0;
            assert_int_equal(rbf__nreal_full_logp(&p, c, &lp), RBF_OK);
            double g = fabs(lp - lx);
            if (g > worst)
                worst = g;
            assert_true(g <= 1.0);
            checked++;
        }
        printf("full filter M=%llu k=%u %s: %u points, worst |log P gap| %.3f\n",
               (unsigned long long)M, k, cs[i].nc ? "nc" : "c", checked, worst);
        assert_true(checked >= 2);
        free(T);
        free(P);
        free(Q);
    }
    if (tu_shrink() > 1)
        return;
    /* the decisions at 65536 bits: the propagation keeps a full filter
     * from N = 7939 on with k = 32 (where the estimate of log P(B'_{N-1} =
     * M) is -62.9) and from N = 48465 on with k = 2 (-60.97); the fast
     * path says full 3 above its cut (-63.4 and -61.0) and not full 3
     * below it */
    static const struct {
        unsigned k;
        uint64_t N;
    } ds[] = {{32, 7880}, {32, 7900}, {2, 48401}, {2, 48421},
              {32, 7975}, {32, 8000}, {2, 48501}, {2, 48521}};
    for (unsigned i = 0; i < 8; i++) {
        rbf_model_params p = tu_model_params(65536, ds[i].k, 0, 0, RBF_MODEL_EXACT);
        const uint64_t N = ds[i].N;
        rbf_model_n_result e;
        assert_int_equal(rbf_model_nbounded(&p, N, &e), RBF_OK);
        double r = -1.0, re = -1.0;
        int rc = rbf__nreal_fast(&p, N, &r, &re, NULL);
        printf("full filter decision k=%u N=%llu: propagation %.15g, fast rc %d %.15g\n", ds[i].k,
               (unsigned long long)N, e.exact_real, rc, r);
        if (i < 4) {
            assert_true(e.exact_real < 1.0);
            assert_true(rc == 1 || r < 1.0);
        } else {
            assert_true(e.exact_real == 1.0);
            assert_int_equal(rc, RBF_OK);
            assert_true(r == 1.0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_filter_tail),
        cmocka_unit_test(test_real_worst),
        cmocka_unit_test(test_kernel_chain),
        cmocka_unit_test(test_nc_factor_tables),
        cmocka_unit_test(test_real_near_full),
        cmocka_unit_test(test_brute_tiny),
        cmocka_unit_test(test_real_light_load),
        cmocka_unit_test(test_real_saturated),
        cmocka_unit_test(test_real_any_load),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_fast_vs_chain_huge_m),
        cmocka_unit_test(test_fast_vs_chain_big),
        cmocka_unit_test(test_fast_vs_chain_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
