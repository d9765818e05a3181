/*
 * plan_nbound.c -- the planner's N-bounded policies (worst case, oracle and
 * average): for each k the largest N whose rate is at most eps (f_w, f_o
 * and f_a are non-decreasing in N; f_o(N) >= sum_j f_w(a_j) (a_{j+1} -
 * a_j) / N prunes the scan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

/* ---- N-bounded policies */

/* Largest N with f_w(N) <= eps (0 if none), at most 9e15.  The inverse of
 * f_w gives N to within a message or two; from there the search steps one
 * message, then doubles its step and bisects, so an eps that rounds
 * eps^(1/k) to 1 (the inverse is then infinite) costs about a hundred calls
 * instead of a walk of 9e15 messages. */
uint64_t rbf__plan_worst_n(uint64_t M, unsigned k, double eps)
{
    const uint64_t top = (uint64_t)9.0e15;
    if (M < 2)
        return 0;
    double t = log1p(-pow(eps, 1.0 / k)) / ((double)k * log1p(-1.0 / (double)M));
    uint64_t g = !(t > 0.0) ? 0 : t >= 9.0e15 ? top : (uint64_t)t;
    uint64_t lo, hi; /* f_w(lo) <= eps < f_w(hi), or lo = top */
    if (rbf__model_f_w(M, k, g) <= eps) {
        lo = g;
        for (uint64_t step = 1;; step *= 2) {
            hi = top - lo < step ? top : lo + step;
            if (rbf__model_f_w(M, k, hi) > eps)
                break;
            if (hi == top)
                return top;
            lo = hi;
        }
    } else {
        hi = g;
        for (uint64_t step = 1;; step *= 2) {
            lo = hi < step ? 0 : hi - step;
            if (rbf__model_f_w(M, k, lo) <= eps) /* f_w(0) = 0 */
                break;
            hi = lo;
        }
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rbf__model_f_w(M, k, mid) <= eps)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A lower bound on f_o(N): f_w is increasing, so over J pieces [a_j,
 * a_{j+1}) of 0..N-1, f_o(N) >= sum_j f_w(a_j) (a_{j+1} - a_j) / N; and
 * f_o(N) >= f_w(ceil(N/2)) floor(N/2) / N from the upper half alone. */
static double fo_lower(uint64_t M, unsigned k, uint64_t N)
{
    double lb = 0.0;
    uint64_t J = N < 256 ? N : 256;
    for (uint64_t j = 0; j < J; j++) {
        uint64_t a = N * j / J, b = N * (j + 1) / J;
        lb += rbf__model_f_w(M, k, a) * (double)(b - a);
    }
    lb /= (double)N;
    double half = rbf__model_f_w(M, k, N - N / 2) * (double)(N / 2) / (double)N;
    return (lb > half ? lb : half) * (1.0 - 1e-9);
}

/* Upper bound on the largest N with f_o(N) <= eps (hence also f_a). */
static uint64_t oracle_n_upper(uint64_t M, unsigned k, double eps, uint64_t start)
{
    uint64_t hi = start < 2 ? 2 : start, lo = 1;
    while (fo_lower(M, k, hi) <= eps) {
        if (hi >= ((uint64_t)1 << 60))
            return hi; /* no useful bound */
        lo = hi + 1;
        hi *= 2;
    }
    /* the smallest N with fo_lower(N) > eps, then N_o* < N; any N with
     * fo_lower(N) > eps bounds it, so the search stops within 2^-20
     * (relative) of the smallest (see sigma_cap_upper) */
    while (lo < hi && hi - lo > (hi >> 20)) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (fo_lower(M, k, mid) > eps)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi - 1;
}

/* Largest N with f_o(N) <= eps and with f_a(N) <= eps, by one scan. */
static int scan_oa(uint64_t M, unsigned k, double eps, uint64_t limit, plan_prog *pp, uint64_t *no,
                   double *fo_at, uint64_t *na, double *fa_at)
{
    fw_iter it;
    rbf__fw_iter_init(&it, M, k);
    model_sum so, sr;
    msum_init(&so);
    msum_init(&sr);
    *no = *na = 0;
    *fo_at = *fa_at = 0.0;
    int a_done = 0;
    uint64_t ticks = 0;
    for (uint64_t N = 1; N <= limit; N++) {
        if (++ticks == 0x100000) {
            ticks = 0;
            if (prog_tick(pp, 0x100000))
                return RBF_ECANCELED;
        }
        double f = rbf__fw_iter_next(&it); /* f_N = f_w(N-1) */
        msum_add(&so, f);
        double fo = msum_get(&so) / (double)N;
        if (fo > eps)
            break;
        *no = N;
        *fo_at = fo;
        if (f >= 1.0) {
            /* every later term is 1 as well (in double): with deficit
             * D = N - S_N, f_o(N') = 1 - D/N' <= eps iff N' <= D/(1-eps).
             * Without this an eps near 1 would scan ~1/(1-eps) terms. */
            double D = (double)N - msum_get(&so);
            double last = floor(D / (1.0 - eps));
            if (last > (double)limit)
                last = (double)limit;
            if (last > (double)N) {
                *no = (uint64_t)last;
                *fo_at = 1.0 - D / last;
            }
            break; /* f_a is 1 from here on (r_N is infinite) */
        }
        if (!a_done) {
            if (f >= 1.0) {
                a_done = 1;
                continue;
            }
            msum_add(&sr, f / (1.0 - f));
            double R = msum_get(&sr);
            double fa = R / ((double)N + R);
            if (fa > eps)
                a_done = 1;
            else {
                *na = N;
                *fa_at = fa;
            }
        }
    }
    prog_tick(pp, ticks);
    return RBF_OK;
}

/* The same answers as scan_oa by bisection on the Euler-Maclaurin values
 * of f_o and f_a (both non-decreasing in N). */
static uint64_t largest_n(uint64_t M, unsigned k, double eps, uint64_t limit, int avg, double *at)
{
    uint64_t lo = 1, hi = limit;
    double (*fn)(uint64_t, unsigned, uint64_t) = avg ? rbf__fa_fast : rbf__fo_fast;
    double v = fn(M, k, 1);
    *at = 0.0;
    if (v > eps)
        return 0;
    *at = v;
    double vh = fn(M, k, hi);
    if (vh <= eps) {
        *at = vh;
        return hi;
    }
    /* the limit is a tight bound (within ~0.2%): gallop down from it to a
     * bracket first (fourfold steps from limit/4096), then bisect it; the
     * predicate is monotone, so the answer is the one crossing */
    for (uint64_t d = hi >> 12 ? hi >> 12 : 1; hi - lo > 1 && d < hi - lo; d *= 4) {
        uint64_t m = hi - d;
        double vm = fn(M, k, m);
        if (vm <= eps) {
            lo = m;
            *at = vm;
            break;
        }
        hi = m;
        vh = vm;
    }
    rfalsi st;
    rbf__rf_init(&st, *at, vh, eps, lo, hi);
    while (hi - lo > 1) {
        uint64_t mid = rbf__rf_next(&st, lo, hi);
        double vm = fn(M, k, mid);
        rbf__rf_update(&st, vm <= eps, vm, eps);
        if (vm <= eps) {
            lo = mid;
            *at = vm;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void choose_n(rbf_plan_choice *c, unsigned k, uint64_t N, double fp)
{
    if (N == 0)
        return;
    if (!c->feasible || (double)N > c->expected_messages ||
        ((double)N == c->expected_messages && k < c->hashes)) {
        c->feasible = 1;
        c->hashes = k;
        c->sigma = 0;
        c->messages = N;
        c->expected_messages = (double)N;
        c->fp = fp;
    }
}

int rbf__plan_nbounded(uint64_t M, double eps, unsigned K, int fast, plan_prog *pp, rbf_plan *out)
{
    memset(&out->worst_case, 0, sizeof out->worst_case);
    memset(&out->oracle_n, 0, sizeof out->oracle_n);
    memset(&out->average_n, 0, sizeof out->average_n);
    if (M < 2)
        return RBF_OK;
    kcand *c = rbf__calloc(K, sizeof *c);
    if (!c)
        return RBF_ENOMEM;
    for (unsigned k = 1; k <= K; k++) {
        uint64_t nw = rbf__plan_worst_n(M, k, eps);
        choose_n(&out->worst_case, k, nw, rbf__model_f_w(M, k, nw));
        c[k - 1].k = k;
        c[k - 1].ub = (double)oracle_n_upper(M, k, eps, nw + 2);

    }
    qsort(c, K, sizeof *c, rbf__cmp_cand);
    int rc = RBF_OK;
    for (unsigned t = 0; t < K; t++) {
        unsigned k = c[t].k;
        int need_o = !out->oracle_n.feasible || c[t].ub > out->oracle_n.expected_messages ||
                     (c[t].ub == out->oracle_n.expected_messages && k < out->oracle_n.hashes);
        int need_a = !out->average_n.feasible || c[t].ub > out->average_n.expected_messages ||
                     (c[t].ub == out->average_n.expected_messages && k < out->average_n.hashes);
        if (!need_o && !need_a)
            continue;
        uint64_t no, na;
        double fo, fa;
        uint64_t limit = (uint64_t)c[t].ub + 1;
        if (fast && limit > 65536) {
            no = largest_n(M, k, eps, limit, 0, &fo);
            /* f_a >= f_o (Chebyshev), so N_a <= N_o */
            na = no ? largest_n(M, k, eps, no, 1, &fa) : largest_n(M, k, eps, limit, 1, &fa);
        } else {
            rc = scan_oa(M, k, eps, limit, pp, &no, &fo, &na, &fa);
            if (rc)
                break;
        }
        choose_n(&out->oracle_n, k, no, fo);
        choose_n(&out->average_n, k, na, fa);
    }
    rbf__free(c);
    return rc;
}
