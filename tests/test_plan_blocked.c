/*
 * test_plan_blocked.c -- the blocked planners (src/plan/plan_blocked.c) against
 * slower, independent searches:
 *
 *  1. rbf_plan_blocked_memory (a mean-field guess, then Newton/secant on the
 *     model) against the 2.0 planner kept as rbf__plan_blocked_memory_ref
 *     (a walk over k from the flat plan's k, each sigma bracketed by
 *     steps of s/8 and narrowed): on a grid of memories, rates and the
 *     four variants the new plan holds at least as many messages per cycle
 *     (equal, or more), and with the same k the same sigma;
 *  2. rbf_plan_blocked_capacity against a search over
 *     rbf_plan_blocked_memory: the plan at the answer holds the capacity,
 *     one block less does not, and the answer is the reference search's
 *     (a scan of every block count from 1 for small capacities; for large
 *     ones doubling from the flat layout's least memory, then bisection);
 *  3. the flat planner's asymptotic method against the exact renewal pass
 *     (rbf_plan_memory, method ASYMPTOTIC vs EXACT): the same k and
 *     thresholds, capacities within 1e-9 relative;
 *  4. arguments, and cancellation through the progress callback;
 *  5. allocation failures (one at a time, a sample of them): RBF_ENOMEM and
 *     nothing leaked, and the plan unchanged when none fails.
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

static int shrunk(void)
{
    return tu_shrink() > 1;
}

static rbf_plan_options opts(int nc, int ret)
{
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    o.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    o.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    return o;
}

/* ---- 1. the planner against the 2.0 planner */

static void test_memory_vs_reference(void **state)
{
    (void)state;
    static const struct {
        uint64_t bits;
        double eps;
        int nc, ret;
    } cs[] = {
        {(uint64_t)1 << 17, 0.01, 0, 0},  {(uint64_t)1 << 24, 1e-6, 0, 0},
        {(uint64_t)1 << 36, 0.001, 1, 0}, {(uint64_t)1 << 20, 0.1, 0, 1},
        {(uint64_t)1 << 28, 1e-9, 1, 1},  {8192, 0.001, 0, 0},
    };
    const size_t n = shrunk() ? 1 : sizeof cs / sizeof cs[0];
    for (size_t i = 0; i < n; i++) {
        rbf_plan_options o = opts(cs[i].nc, cs[i].ret);
        rbf_plan_choice a, r;
        unsigned evals = 0;
        assert_int_equal(rbf__plan_blocked_memory_evals(cs[i].bits, cs[i].eps, &o, &a, &evals),
                         RBF_OK);
        assert_int_equal(rbf__plan_blocked_memory_ref(cs[i].bits, cs[i].eps, &o, &r), RBF_OK);
        print_message("M = %llu eps = %g nc %d ret %d: planner k = %u sigma = %llu E[N_0] = %.6f "
                      "(%u evaluations); reference k = %u sigma = %llu E[N_0] = %.6f\n",
                      (unsigned long long)cs[i].bits, cs[i].eps, cs[i].nc, cs[i].ret, a.hashes,
                      (unsigned long long)a.sigma, a.expected_messages, evals, r.hashes,
                      (unsigned long long)r.sigma, r.expected_messages);
        assert_true(a.feasible && r.feasible);
        assert_true(a.expected_messages >= r.expected_messages * (1.0 - 1e-12));
        assert_true(a.fp <= cs[i].eps * (1.0 + 1e-6));
        if (a.hashes == r.hashes) {
            assert_int_equal(a.sigma, r.sigma);
            assert_true(fabs(a.fp - r.fp) <= 1e-15 * r.fp);
        }
        assert_true(fabs(a.gain_vs_worst_case - r.gain_vs_worst_case) <=
                    1e-12 * r.gain_vs_worst_case);
        /* a handful of model evaluations, not the reference's dozens */
        assert_true(evals >= 2 && evals <= 40);
    }
}

/* ---- 2. least memory against a search over the memory planner */

static double cap_at(uint64_t blocks, double eps, const rbf_plan_options *o)
{
    rbf_plan_choice c;
    int rc = rbf_plan_blocked_memory(blocks * RBF_MODEL_BLOCK_BITS, eps, o, &c);
    assert_int_equal(rc, RBF_OK);
    return c.feasible ? c.expected_messages : 0.0;
}

static void test_capacity_vs_search(void **state)
{
    (void)state;
    static const struct {
        uint64_t capacity;
        double eps;
        int nc, ret;
        int scan; /* 1: scan every block count from 1 */
    } cs[] = {
        {1, 0.01, 0, 0, 1},         {100, 0.01, 0, 0, 1},      {300, 1e-6, 1, 1, 0},
        /* two to four blocks: the Edgeworth sums the search moves on are
         * percents off there, the answer is decided on the exact ones */
        {50, 1e-6, 0, 0, 1},        {40, 1e-9, 1, 0, 1},
        {1000, 0.001, 0, 1, 0},     {10000000, 0.01, 0, 0, 0},
        {(uint64_t)1e10, 1e-9, 0, 0, 0},
    };
    const size_t n = shrunk() ? 2 : sizeof cs / sizeof cs[0];
    for (size_t i = 0; i < n; i++) {
        rbf_plan_options o = opts(cs[i].nc, cs[i].ret);
        const double C = (double)cs[i].capacity;
        uint64_t bits = 0;
        rbf_plan_choice c;
        assert_int_equal(rbf_plan_blocked_capacity(cs[i].capacity, cs[i].eps, &o, &bits, &c),
                         RBF_OK);
        assert_true(bits >= RBF_MODEL_BLOCK_BITS && bits % RBF_MODEL_BLOCK_BITS == 0);
        uint64_t B = bits / RBF_MODEL_BLOCK_BITS;
        /* *out is the memory planner's plan at *bits */
        rbf_plan_choice m;
        assert_int_equal(rbf_plan_blocked_memory(bits, cs[i].eps, &o, &m), RBF_OK);
        assert_true(c.feasible && m.feasible);
        assert_int_equal(c.hashes, m.hashes);
        assert_int_equal(c.sigma, m.sigma);
        assert_true(c.expected_messages == m.expected_messages && c.fp == m.fp);
        assert_true(c.expected_messages >= C && c.fp <= cs[i].eps);
        double below = B > 1 ? cap_at(B - 1, cs[i].eps, &o) : 0.0;
        assert_true(below < C);
        /* the reference search */
        uint64_t ref;
        if (cs[i].scan) {
            ref = 1;
            while (cap_at(ref, cs[i].eps, &o) < C)
                ref++;
        } else {
            /* from the flat layout's least memory (blocked holds fewer
             * messages per bit, checked), doubling, then bisection */
            uint64_t fbits = 0;
            assert_int_equal(rbf_plan_messages(cs[i].capacity, cs[i].eps, &o, &fbits, NULL),
                             RBF_OK);
            uint64_t lo = fbits / RBF_MODEL_BLOCK_BITS, hi = lo + 1; /* cap(lo) < C <= cap(hi) */
            if (lo)
                assert_true(cap_at(lo, cs[i].eps, &o) < C);
            while (cap_at(hi, cs[i].eps, &o) < C) {
                lo = hi;
                hi *= 2;
            }
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (cap_at(mid, cs[i].eps, &o) >= C)
                    hi = mid;
                else
                    lo = mid;
            }
            ref = hi;
        }
        print_message("capacity %llu eps %g nc %d ret %d: %llu blocks (k = %u, sigma = %llu, "
                      "E[N_0] = %.4f; one block less: %.4f); reference search %llu blocks\n",
                      (unsigned long long)cs[i].capacity, cs[i].eps, cs[i].nc, cs[i].ret,
                      (unsigned long long)B, c.hashes, (unsigned long long)c.sigma,
                      c.expected_messages, below, (unsigned long long)ref);
        assert_int_equal(B, ref);
    }
}

/* ---- 3. the flat planner: asymptotic method against the exact pass */

static double rel(double a, double b)
{
    return fabs(a - b) / fmax(fabs(b), 1e-300);
}

static void test_flat_fast_vs_exact(void **state)
{
    (void)state;
    static const struct {
        uint64_t bits;
        double eps;
        int nc, ret;
    } cs[] = {{(uint64_t)1 << 20, 0.001, 0, 0}, {(uint64_t)1 << 21, 0.01, 1, 1},
              {(uint64_t)1 << 20, 1e-6, 0, 1},  {(uint64_t)1 << 18, 0.001, 1, 0}};
    /* RBF_TEST_SHRINK: the 2^18 point alone (the exact pass is O(k M)) */
    const size_t n0 = shrunk() ? 3 : 0, n = shrunk() ? 4 : sizeof cs / sizeof cs[0];
    for (size_t i = n0; i < n; i++) {
        rbf_plan_options o = opts(cs[i].nc, cs[i].ret);
        rbf_plan fe, fa;
        o.method = RBF_MODEL_EXACT;
        assert_int_equal(rbf_plan_memory(cs[i].bits, cs[i].eps, &o, &fe), RBF_OK);
        o.method = RBF_MODEL_ASYMPTOTIC;
        assert_int_equal(rbf_plan_memory(cs[i].bits, cs[i].eps, &o, &fa), RBF_OK);
        const rbf_plan_choice *pe[2] = {&fe.sigma_bounded, &fe.two_phase};
        const rbf_plan_choice *pa[2] = {&fa.sigma_bounded, &fa.two_phase};
        for (int j = 0; j < 2; j++) {
            print_message("M = %llu eps = %g %s: exact k = %u sigma = %llu E[N_0] = %.10g, "
                          "fast k = %u sigma = %llu E[N_0] = %.10g\n",
                          (unsigned long long)cs[i].bits, cs[i].eps, j ? "two-phase" : "one-phase",
                          pe[j]->hashes, (unsigned long long)pe[j]->sigma,
                          pe[j]->expected_messages, pa[j]->hashes,
                          (unsigned long long)pa[j]->sigma, pa[j]->expected_messages);
            assert_true(pe[j]->feasible && pa[j]->feasible);
            assert_int_equal(pe[j]->hashes, pa[j]->hashes);
            assert_int_equal(pe[j]->sigma, pa[j]->sigma);
            assert_true(rel(pa[j]->expected_messages, pe[j]->expected_messages) <= 1e-9);
            assert_true(rel(pa[j]->fp, pe[j]->fp) <= 1e-9);
        }
    }
}

/* ---- 5. allocation failures: RBF_ENOMEM, nothing leaked */

static long fa_count, fa_fail, fa_live, fa_failed;

static void *fa_malloc(void *ctx, size_t size)
{
    (void)ctx;
    if (++fa_count == fa_fail) {
        fa_failed = 1;
        return NULL;
    }
    void *p = malloc(size ? size : 1);
    if (p)
        fa_live++;
    return p;
}

static void *fa_realloc(void *ctx, void *p, size_t size)
{
    (void)ctx;
    if (++fa_count == fa_fail) {
        fa_failed = 1;
        return NULL;
    }
    void *q = realloc(p, size ? size : 1);
    if (q && !p)
        fa_live++;
    return q;
}

static void fa_free(void *ctx, void *p)
{
    (void)ctx;
    if (p) {
        fa_live--;
        free(p);
    }
}

/* Fail allocation n for n = 1..first, then every `stride`-th, until a run
 * makes no failure (the plans make ten to forty thousand allocations: the
 * chain's records grow one load at a time). */
static void faults(int capacity, uint64_t arg, long first, long stride)
{
    static const rbf_allocator fa = {fa_malloc, fa_realloc, fa_free, NULL, NULL, {NULL}};
    rbf_plan_options o = opts(0, 0);
    o.max_hashes = 6;
    rbf_plan_choice ref, got;
    uint64_t rb = 0, gb = 0;
    int rc = capacity ? rbf_plan_blocked_capacity(arg, 0.01, &o, &rb, &ref)
                      : rbf_plan_blocked_memory(arg, 0.01, &o, &ref);
    assert_int_equal(rc, RBF_OK);
    assert_int_equal(rbf_set_allocator(&fa), RBF_OK);
    long n, tried = 0;
    for (n = 1;; n += n < first ? 1 : stride) {
        fa_count = 0;
        fa_fail = n;
        fa_live = 0;
        fa_failed = 0;
        rc = capacity ? rbf_plan_blocked_capacity(arg, 0.01, &o, &gb, &got)
                      : rbf_plan_blocked_memory(arg, 0.01, &o, &got);
        tried++;
        if (!fa_failed) {
            assert_int_equal(rc, RBF_OK);
            assert_int_equal(got.hashes, ref.hashes);
            assert_int_equal(got.sigma, ref.sigma);
            assert_true(got.expected_messages == ref.expected_messages && got.fp == ref.fp);
            assert_int_equal(gb, rb);
            break;
        }
        if (rc != RBF_ENOMEM)
            fail_msg("allocation %ld failed, status %d, wanted RBF_ENOMEM", n, rc);
        if (fa_live != 0)
            fail_msg("allocation %ld failed and %ld blocks leaked", n, fa_live);
    }
    assert_true(fa_live == 0);
    assert_int_equal(rbf_set_allocator(NULL), RBF_OK);
    print_message("%s: %ld failed allocations (of %ld), each RBF_ENOMEM with nothing leaked\n",
                  capacity ? "rbf_plan_blocked_capacity" : "rbf_plan_blocked_memory",
                  tried - 1, fa_count);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    if (shrunk()) { /* valgrind: a few */
        faults(0, 65536, 4, 5003);
        return;
    }
    faults(0, 65536, 16, 509);
    faults(1, 20000, 16, 2039);
}

/* ---- 4. arguments and cancellation */

static int cancel_at_first(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(unsigned *)ctx;
    return 1;
}

static void test_arguments(void **state)
{
    (void)state;
    rbf_plan_options o = opts(0, 0);
    rbf_plan_choice c;
    uint64_t bits = 0;
    assert_int_equal(rbf_plan_blocked_capacity(0, 0.01, &o, &bits, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(((uint64_t)1 << 50) + 1, 0.01, &o, &bits, &c),
                     RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.0, &o, &bits, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(100, 1.0, &o, &bits, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.01, NULL, &bits, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.01, &o, NULL, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.01, &o, &bits, NULL), RBF_EINVAL);
    o.max_hashes = 0;
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.01, &o, &bits, &c), RBF_EINVAL);
    o.max_hashes = RBF_MAX_HASHES + 1;
    assert_int_equal(rbf_plan_blocked_capacity(100, 0.01, &o, &bits, &c), RBF_EINVAL);
    assert_int_equal(rbf_plan_blocked_memory(1 << 20, 0.01, &o, &c), RBF_EINVAL);
    o = opts(0, 0);
    assert_int_equal(rbf_plan_blocked_memory(511, 0.01, &o, &c), RBF_EINVAL);
    unsigned calls = 0;
    o.progress = cancel_at_first;
    o.progress_ctx = &calls;
    assert_int_equal(rbf_plan_blocked_capacity(100000, 0.01, &o, &bits, &c), RBF_ECANCELED);
    assert_int_equal(calls, 1);
    calls = 0;
    assert_int_equal(rbf_plan_blocked_memory(1 << 20, 0.01, &o, &c), RBF_ECANCELED);
    assert_int_equal(calls, 1);
    /* max_hashes limits the choice */
    o = opts(0, 0);
    o.max_hashes = 2;
    assert_int_equal(rbf_plan_blocked_capacity(5000, 1e-4, &o, &bits, &c), RBF_OK);
    assert_true(c.hashes <= 2 && c.expected_messages >= 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_vs_reference),
        cmocka_unit_test(test_capacity_vs_search),
        cmocka_unit_test(test_flat_fast_vs_exact),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
