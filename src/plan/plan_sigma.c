/*
 * plan_sigma.c -- the planner's sigma-bounded and two-phase search: for
 * each k the largest sigma whose rate is at most eps, by the renewal pass
 * stopped at the first infeasible sigma or, on large filters, by the
 * asymptotic model and regula falsi; k values in order of an upper bound
 * on their capacity, skipping those that cannot win.
 *
 * Pruning (docs/models.md has the argument in full): for each k a cheap
 * upper bound on its capacity is computed first, and k values are run in
 * order of that bound; a k whose bound is below the best capacity found
 * so far cannot win and is skipped.  For sigma-bounded, with H(a, c) the
 * expected number of hashes made while the filter has a..c-1 bits set:
 *   - messages arriving at levels in [a, c) >= H(a, c)/k - 1 (every hash
 *     there belongs to one of them or to the one message that crossed a),
 *   - messages arriving at levels <= sigma <= 1 + H(0, sigma+1)/k,
 *   - E[N_0](sigma) <= 1 + H(0, sigma)/k,
 * and M'/(M-b) <= E[hashes at level b] <= M/(M-b) with M' = M (colliding)
 * or M-k+1 (non-colliding).  Hence, for any a_0 = 0 < a_1 < ... < a_J =
 * sigma+1 (rho increasing),
 *   f_sigma^1 >= sum_j rho(a_j) max(0, H_lo(a_j, a_{j+1})/k - 1)
 *                / (1 + H_hi(0, sigma+1)/k),
 * and once this lower bound exceeds eps at some sigma_0, every sigma >=
 * sigma_0 is infeasible (monotonicity), so capacity(k) <= 1 +
 * H_hi(0, sigma_0 - 1)/k.  The bounds are inflated by 1e-9 relative
 * against rounding.  For two-phase f^2 >= f^1 (of M/2), so the same bound
 * holds.  For the N-bounded policies f_a >= f_o (Chebyshev's sum
 * inequality) and f_o(N) >= sum_j f_w(a_j) (a_{j+1} - a_j) / N.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

/* ---- harmonic sums: hsum(M, a, c) = sum_{b=a}^{c-1} 1/(M-b) = H_{M-a} - H_{M-c} */

/* Expected hashes at levels a..c-1, bounds (see the file comment). */
static double hashes_hi(uint64_t M, uint64_t a, uint64_t c)
{
    return (double)M * rbf__harm_diff(M - a, M - c);
}

static double hashes_lo(uint64_t M, unsigned k, int nc, uint64_t a, uint64_t c)
{
    double m = nc ? (double)(M - k + 1) : (double)M;
    return m * rbf__harm_diff(M - a, M - c);
}

/* Lower bound on f_sigma^1 (non-retaining or retaining), over at most
 * jmax pieces: 512 for the bound a k is run with, 64 for the cheap first
 * bound that orders the k and prunes most of them (plan_sigma). */
#define PLAN_BOUND_PIECES 512
#define PLAN_CHEAP_PIECES 64
static double fsigma_lower(uint64_t M, unsigned k, int nc, uint64_t sigma, uint64_t jmax)
{
    uint64_t n = sigma + 1;
    uint64_t J = n / (4 * (uint64_t)k);
    if (J > jmax)
        J = jmax;
    if (J < 1)
        J = 1;
    double num = 0.0;
    for (uint64_t j = 0; j < J; j++) {
        uint64_t a = n * j / J, c = n * (j + 1) / J;
        double cnt = hashes_lo(M, k, nc, a, c) / k - 1.0;
        if (cnt > 0.0)
            num += rbf__model_rho(M, k, nc, a) * cnt;
    }
    double den = 1.0 + hashes_hi(M, 0, n) / k;
    return num / den * (1.0 - 1e-9);
}

/* Lower bound on the rate at sigma: f_sigma^1, or for two-phase
 * f_sigma^2 >= 1 - (1 - f^1)(1 - rho(sigma-k+1)) (the frozen filter ended
 * its cycle at sigma-k+1 bits or more). */
static double rate_lower(uint64_t M, unsigned k, int nc, int two, uint64_t sigma, uint64_t jmax)
{
    double f1 = fsigma_lower(M, k, nc, sigma, jmax);
    if (!two)
        return f1;
    uint64_t lowest = sigma + 1 >= k ? sigma + 1 - k : 0;
    double r = rbf__model_rho(M, k, nc, lowest) * (1.0 - 1e-9);
    return f1 + r * (1.0 - f1);
}

/* Upper bound on the sigma-bounded (or two-phase) capacity for k at eps;
 * *smax receives a sigma that the optimum cannot exceed. */
static double sigma_cap_upper(uint64_t M, unsigned k, int nc, int two, double eps, uint64_t *smax,
                              uint64_t jmax)
{
    uint64_t lo = 1, hi = M - 1; /* find the smallest sigma with lower bound > eps */
    *smax = M - 1;
    if (rate_lower(M, k, nc, two, hi, jmax) <= eps)
        return (1.0 + hashes_hi(M, 0, M - 1) / k) * (1.0 + 1e-9);
    /* Any sigma_0 whose bound is over eps makes the cap valid; the
     * smallest is the tightest.  The bisection stops once hi is within
     * 2^-20 (relative) of it, 2^-12 for the cheap bound: the bound is that
     * much looser (it only orders and prunes the k, and limits the search
     * for sigma), in half the evaluations. */
    const unsigned prec = jmax < PLAN_BOUND_PIECES ? 12 : 20; /* the cheap bound: 2^-12 */
    while (lo < hi && hi - lo > (hi >> prec)) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rate_lower(M, k, nc, two, mid, jmax) > eps)
            hi = mid;
        else
            lo = mid + 1;
    }
    lo = hi; /* the bound at hi is over eps (or hi = M - 1, over at the start) */
    /* every sigma >= lo is infeasible, so sigma* <= lo - 1 */
    *smax = lo > 1 ? lo - 1 : 1;
    return (1.0 + hashes_hi(M, 0, lo - 1) / k) * (1.0 + 1e-9);
}

/* ---- one k, exactly: the pass up to the first infeasible sigma */

typedef struct kres {
    int feasible;
    uint64_t sigma;
    double cap, fp;
} kres;

/* g_{sigma-k+1+t} for t = 0..k-1 from a ring of the last k+1 levels
 * (g_b at b % (k+1)); levels below 0 give 0. */
static void window_from_ring(const double *ring, unsigned k, uint64_t sigma, double *gwin)
{
    for (unsigned t = 0; t < k; t++) {
        uint64_t i1 = sigma + 1 + t; /* i + k */
        gwin[t] = i1 >= k ? ring[(i1 - k) % (k + 1)] : 0.0;
    }
}

static int sigma_one_k(uint64_t M, unsigned k, int nc, int ret, int two, double eps, double stop_at,
                       plan_prog *pp, kres *res)
{
    memset(res, 0, sizeof *res);
    if (M < 2 || (nc && k > M))
        return RBF_OK;
    model_pass ps;
    int rc = rbf__model_pass_init(&ps, M, k, nc);
    if (rc)
        return rc;
    double *ring = two ? rbf__calloc(k + 1, sizeof *ring) : NULL;
    double *gwin = two ? rbf__calloc(k, sizeof *gwin) : NULL;
    double f1_best = 0.0;
    if (two && (!ring || !gwin)) {
        rc = RBF_ENOMEM;
        goto out;
    }
    /* the smallest sigma the filter accepts: rbf_config_check wants
     * sigma >= k (a message may need k bits), whatever the recycling */
    const uint64_t first = k;
    uint64_t ticks = 0;
    for (uint64_t b = 0; b < M; b++) {
        if (++ticks == 0x10000) {
            ticks = 0;
            if ((rc = prog_tick(pp, 0x10000)) != RBF_OK)
                goto out;
        }
        rbf__model_pass_step(&ps);
        if (two)
            ring[b % (k + 1)] = ps.g;
        if (b < first)
            continue;
        double f1 = rbf__model_pass_fp(&ps, ret);
        if (f1 > eps)
            break;
        if (two) {
            /* the frozen rate lies in [rho(lowest end state), rho(sigma)]:
             * decide from these bounds, and solve exactly only between */
            uint64_t lowest = b + 1 >= k + (uint64_t)ret ? b + 1 - k : (uint64_t)ret;
            double lo2 = f1 + rbf__model_rho(M, k, nc, lowest) * (1.0 - f1);
            double hi2 = f1 + ps.rho * (1.0 - f1);
            if (lo2 > eps)
                break;
            if (hi2 > eps) {
                window_from_ring(ring, k, b, gwin);
                double ff = rbf__model_frozen_rate(M, k, nc, ret, b, gwin);
                if (ff < 0.0) {
                    rc = RBF_ENOMEM;
                    goto out;
                }
                if (f1 + ff * (1.0 - f1) > eps)
                    break;
            }
        }
        res->feasible = 1;
        res->sigma = b;
        res->cap = ps.en0;
        f1_best = f1;
        if (stop_at > 0.0 && ps.en0 >= stop_at)
            break; /* enough to answer "does this memory hold stop_at?" */
    }
    prog_tick(pp, ticks);
    res->fp = f1_best;
    if (two && res->feasible) {
        /* the ring still holds g for sigma*-k+1..sigma* (sigma* >= b-1) */
        window_from_ring(ring, k, res->sigma, gwin);
        double ff = rbf__model_frozen_rate(M, k, nc, ret, res->sigma, gwin);
        if (ff < 0.0) {
            rc = RBF_ENOMEM;
            goto out;
        }
        res->fp = model_clamp01(f1_best + ff * (1.0 - f1_best));
    }
    rc = RBF_OK;
out:
    rbf__free(ring);
    rbf__free(gwin);
    rbf__model_pass_free(&ps);
    return rc;
}

/* The rate at sigma by the asymptotic method (one- or two-phase). */
static int asym_rate(const model_asym *a, int ret, int two, uint64_t sigma, double *rate,
                     double *en0)
{
    double f1;
    int rc = rbf__asym_eval(a, sigma, ret, &f1, en0);
    if (rc)
        return rc;
    *rate = f1;
    if (!two)
        return RBF_OK;
    /* two-phase: bounds first, the frozen rate only when they straddle eps */
    const unsigned k = a->k;
    double *gwin = rbf__calloc(k, sizeof *gwin);
    if (!gwin)
        return RBF_ENOMEM;
    for (unsigned t = 0; t < k; t++)
        gwin[t] = rbf__asym_g(a, sigma + 1 + t - k);
    double ff = rbf__model_frozen_rate(a->M, k, a->nc, ret, sigma, gwin);
    rbf__free(gwin);
    if (ff < 0.0)
        return RBF_ENOMEM;
    *rate = model_clamp01(f1 + ff * (1.0 - f1));
    return RBF_OK;
}

/* One k by the asymptotic method: the largest sigma <= smax with rate <=
 * eps, by bisection (the rate is non-decreasing in sigma).  Sigma below
 * what the method's bounds accept goes to the exact pass. */
static int sigma_one_k_fast(uint64_t M, unsigned k, int nc, int ret, int two, double eps,
                            double stop_at, uint64_t smax, plan_prog *pp, kres *res)
{
    memset(res, 0, sizeof *res);
    if (M < 2 || (nc && k > M))
        return RBF_OK;
    uint64_t smin = smax / 16;
    if (smin < 8192)
        smin = 8192;
    /* raised: smin was moved up to where the method's bounds start (large
     * k: the start-up transient lasts ~ 9 k sqrt(M) levels); a rate above
     * eps there puts the answer below it, where the exact pass is cheap
     * (it stops at the answer: O(k sigma)) */
    int raised = 0;
    for (;;) {
        if (smin >= smax)
            smin = smax;
        model_asym a;
        int rc = rbf__asym_init(&a, M, k, nc, smin, NULL);
        if (rc)
            return rc;
        if (a.b1 == UINT64_MAX || smin < a.b1) {
            uint64_t next = a.b1 == UINT64_MAX ? smin * 4 : a.b1;
            rbf__asym_free(&a);
            if (smin >= smax || next >= smax)
                return sigma_one_k(M, k, nc, ret, two, eps, stop_at, pp, res);
            smin = next;
            raised = 1;
            continue;
        }
        double r, en0;
        if ((rc = asym_rate(&a, ret, two, smin, &r, &en0)) != RBF_OK) {
            rbf__asym_free(&a);
            return rc;
        }
        if (r > eps) {
            rbf__asym_free(&a);
            if (smin <= 8192 || raised)
                return sigma_one_k(M, k, nc, ret, two, eps, stop_at, pp, res);
            smax = smin - 1;
            smin /= 16;
            continue;
        }
        /* rate(lo) <= eps; find the largest such sigma in [lo, smax] */
        uint64_t lo = smin, hi = smax;
        double rlo = r, elo = en0;
        if ((rc = asym_rate(&a, ret, two, hi, &r, &en0)) != RBF_OK) {
            rbf__asym_free(&a);
            return rc;
        }
        if (r <= eps) {
            lo = hi;
            rlo = r;
            elo = en0;
        } else {
            rfalsi st;
            rbf__rf_init(&st, rlo, r, eps, lo, hi);
            while (hi - lo > 1) {
                uint64_t mid = rbf__rf_next(&st, lo, hi);
                if ((rc = asym_rate(&a, ret, two, mid, &r, &en0)) != RBF_OK) {
                    rbf__asym_free(&a);
                    return rc;
                }
                rbf__rf_update(&st, r <= eps, r, eps);
                if (r <= eps) {
                    lo = mid;
                    rlo = r;
                    elo = en0;
                } else {
                    hi = mid;
                }
            }
        }
        rbf__asym_free(&a);
        res->feasible = 1;
        res->sigma = lo;
        res->cap = elo;
        res->fp = rlo;
        return prog_tick(pp, 1);
    }
}

/* One k for plan_fn.c (rbf plan --remember): the largest sigma >= k whose
 * rate is <= eps, by the search rbf_plan_memory makes for that k. */
int rbf__plan_sigma_k(uint64_t M, unsigned k, int nc, int ret, int two, rbf_model_method method,
                      double eps, int *feasible, uint64_t *sigma, double *en0, double *fp)
{
    plan_prog pp = {NULL, NULL, 0, 0};
    return rbf__plan_sigma_k_prog(M, k, nc, ret, two, method, eps, &pp, feasible, sigma, en0, fp);
}

int rbf__plan_sigma_k_prog(uint64_t M, unsigned k, int nc, int ret, int two,
                           rbf_model_method method, double eps, plan_prog *ppp, int *feasible,
                           uint64_t *sigma, double *en0, double *fp)
{
    plan_prog pp = *ppp;
    kres r;
    uint64_t smax = M - 1;
    *feasible = 0;
    if (M < 2 || k >= M)
        return RBF_OK;
    (void)sigma_cap_upper(M, k, nc, two, eps, &smax, PLAN_BOUND_PIECES);
    int rc = plan_fast(method, M) ? sigma_one_k_fast(M, k, nc, ret, two, eps, 0.0, smax, &pp, &r)
                                  : sigma_one_k(M, k, nc, ret, two, eps, 0.0, &pp, &r);
    *ppp = pp;
    if (rc != RBF_OK || !r.feasible)
        return rc;
    *feasible = 1;
    *sigma = r.sigma;
    *en0 = r.cap;
    *fp = r.fp;
    return RBF_OK;
}

/* The k whose cheap capacity bound is the largest at M (smallest k on
 * ties), 0 if none can make a filter: the capacity search's first guess
 * of the best k. */
unsigned rbf__plan_sigma_guess_k(uint64_t M, double eps, unsigned K, int nc, int two)
{
    unsigned best = 0;
    double best_ub = -1.0;
    for (unsigned k = 1; k <= K && k < M; k++) {
        uint64_t smax;
        double ub = sigma_cap_upper(M, k, nc, two, eps, &smax, PLAN_CHEAP_PIECES);
        if (ub > best_ub) {
            best_ub = ub;
            best = k;
        }
    }
    return best;
}

/* An upper bound on k's capacity at M <= ref->M from the full search at
 * ref->M.  To first order a filter of M bits reaches sigma after E[N_0] =
 * (M/k) ln(M/(M - sigma)) messages, whose derivative in M is -(1/k)
 * (x/(1-x) - ln(1/(1-x))), x = sigma/M: what the capacity may gain per
 * bit removed at a fixed sigma (and a smaller filter's sigma is not
 * larger).  ref->margin times that per bit (the exact fall reaches 1.8
 * times it at small k), plus 1e-9 relative. */
static double memo_bound(const plan_kmemo *ref, unsigned k, uint64_t M)
{
    double c = ref->cap[k - 1];
    if (!(c > 0.0))
        return 0.0;
    double x = (double)ref->sigma[k - 1] / (double)ref->M;
    if (x > 0.999)
        x = 0.999;
    double per_bit = (x / (1.0 - x) + log1p(-x)) / (double)k;
    return c * (1.0 + 1e-9) + ref->margin * per_bit * (double)(ref->M - M) + 1e-9;
}

/* Best k for sigma-bounded (two = 0) or two-phase (two = 1, M = bits of
 * each filter) with pruning. */
int rbf__plan_sigma(uint64_t M, double eps, unsigned K, int nc, int ret, int two, double target,
                    int fast, plan_prog *pp, rbf_plan_choice *out, unsigned *evaluated,
                    const plan_kmemo *ref, plan_kmemo *save)
{
    memset(out, 0, sizeof *out);
    if (evaluated)
        *evaluated = 0;
    if (save)
        save->M = 0;
    if (M < 2)
        return RBF_OK;
    if (ref && (ref->M < M || ref->K < K || ref->M == 0))
        ref = NULL; /* its bounds hold at memories up to its own only */
    if (target > 0.0)
        save = NULL; /* a search stopped at the target learns no capacities */
    kcand *c = rbf__calloc(K, sizeof *c);
    if (!c)
        return RBF_ENOMEM;
    unsigned n = 0;
    for (unsigned k = 1; k <= K; k++) {
        if (nc && k > M)
            break;
        if (k >= M)
            break; /* needs k <= sigma < M */
        c[n].k = k;
        c[n].ub = ref ? memo_bound(ref, k, M)
                      : sigma_cap_upper(M, k, nc, two, eps, &c[n].smax, PLAN_CHEAP_PIECES);
        n++;
    }
    if (save) {
        memset(save, 0, sizeof *save);
        save->M = M;
        save->K = K;
        save->margin = 4.0;
        for (unsigned t = 0; t < n; t++) {
            save->cap[c[t].k - 1] = c[t].ub;
            save->sigma[c[t].k - 1] = ref ? ref->sigma[c[t].k - 1] : c[t].smax;
        }
    }
    qsort(c, n, sizeof *c, rbf__cmp_cand);
    int rc = RBF_OK;
    for (unsigned t = 0; t < n; t++) {
        if (out->feasible &&
            (c[t].ub < out->expected_messages ||
             (c[t].ub == out->expected_messages && c[t].k > out->hashes)))
            continue; /* cannot win */
        if (target > 0.0 && c[t].ub < target)
            continue; /* cannot reach the target */
        /* the first bound did not rule this k out: the full one (tighter,
         * and the sigma limit the search starts from) */
        double full = sigma_cap_upper(M, c[t].k, nc, two, eps, &c[t].smax, PLAN_BOUND_PIECES);
        if (full < c[t].ub || !ref)
            c[t].ub = full;
        if (save) {
            save->cap[c[t].k - 1] = c[t].ub;
            save->sigma[c[t].k - 1] = c[t].smax;
        }
        if (out->feasible &&
            (c[t].ub < out->expected_messages ||
             (c[t].ub == out->expected_messages && c[t].k > out->hashes)))
            continue;
        if (target > 0.0 && c[t].ub < target)
            continue;
        kres r;
        if (fast)
            rc = sigma_one_k_fast(M, c[t].k, nc, ret, two, eps, target, c[t].smax, pp, &r);
        else
            rc = sigma_one_k(M, c[t].k, nc, ret, two, eps, target, pp, &r);
        if (rc != RBF_OK)
            break;
        if (evaluated)
            (*evaluated)++;
        if (save) {
            save->cap[c[t].k - 1] = r.feasible ? r.cap : 0.0;
            save->sigma[c[t].k - 1] = r.feasible ? r.sigma : 0;
        }
        if (!r.feasible)
            continue;
        if (!out->feasible || r.cap > out->expected_messages ||
            (r.cap == out->expected_messages && c[t].k < out->hashes)) {
            out->feasible = 1;
            out->hashes = c[t].k;
            out->sigma = r.sigma;
            out->messages = 0;
            out->expected_messages = r.cap;
            out->fp = r.fp;
        }
        if (target > 0.0 && out->feasible && out->expected_messages >= target)
            break; /* some k holds the target: that is all the caller asks */
    }
    rbf__free(c);
    if (rc != RBF_OK && save)
        save->M = 0;
    return rc;
}
