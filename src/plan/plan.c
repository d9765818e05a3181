/*
 * plan.c -- capacity planning (MODEL.md 5, paper sections V-B and V-C).
 *
 * For memory M and target average rate eps, each policy's best k
 * (1..max_hashes, smallest k on ties) maximises the expected messages per
 * cycle.  The sigma-bounded and two-phase answers come from the renewal
 * pass (fast.c), stopped at the first sigma whose rate is over eps:
 * f_sigma^1 is a running g-weighted average of the increasing rho(b), so
 * it never decreases with sigma, and E[N_0] grows with sigma, so the
 * largest feasible sigma is the best one.  f_o and f_a are likewise
 * non-decreasing in N (averages of an increasing sequence; for f_a,
 * f_a(N+1) >= f_a(N) iff r_{N+1} >= mean r_i), and f_w is increasing.
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
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

void rbf_plan_options_init(rbf_plan_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->max_hashes = 32;
    o->hashing = RBF_COLLIDING;
    o->recycle = RBF_NON_RETAINING;
    o->progress = NULL;
    o->progress_ctx = NULL;
    o->method = RBF_MODEL_AUTO;
}

/* Asymptotic method for a pass over M bits?  The planners switch to it at
 * a smaller M than the models (RBF_MODEL_AUTO_EXACT_BITS): a plan runs the
 * pass for several k (and a least-memory search for several M), and the
 * exact pass at 2^22 bits costs a second where a planned reservation
 * should answer in milliseconds.  Above 2^16 bits the plans of the two
 * methods have had the same k and thresholds, with capacities and rates
 * within 5e-11 of each other, on every point checked (docs/models.md 4). */
#define PLAN_AUTO_EXACT_BITS ((uint64_t)1 << 16)

static int plan_fast(rbf_model_method m, uint64_t M)
{
    return m == RBF_MODEL_ASYMPTOTIC || (m == RBF_MODEL_AUTO && M > PLAN_AUTO_EXACT_BITS);
}

/* ---- progress across the whole plan */
typedef struct plan_prog {
    rbf_model_progress_fn fn;
    void *ctx;
    uint64_t done, total;
} plan_prog;

static int prog_tick(plan_prog *pp, uint64_t add)
{
    pp->done += add;
    if (pp->done > pp->total)
        pp->total = pp->done;
    if (pp->fn && pp->fn(pp->ctx, pp->done, pp->total))
        return RBF_ECANCELED;
    return RBF_OK;
}

/* ---- harmonic sums: hsum(M, a, c) = sum_{b=a}^{c-1} 1/(M-b) = H_{M-a} - H_{M-c} */

static double harm(double x)
{
    /* H_x - ln x - gamma, asymptotic, x >= 32: error < 1e-16 */
    double r = 1.0 / x, r2 = r * r;
    return 0.5 * r - r2 * (1.0 / 12.0 - r2 * (1.0 / 120.0 - r2 / 252.0));
}

static double harm_diff(uint64_t n, uint64_t m) /* H_n - H_m, n >= m */
{
    if (n <= m)
        return 0.0;
    model_sum s;
    msum_init(&s);
    if (n - m <= 64) {
        for (uint64_t j = n; j > m; j--)
            msum_add(&s, 1.0 / (double)j);
        return msum_get(&s);
    }
    uint64_t mm = m;
    while (mm < 32 && mm < n) { /* small m: sum directly up to 32 */
        mm++;
        msum_add(&s, 1.0 / (double)mm);
    }
    if (mm < n) {
        double dn = (double)n, dm = (double)mm;
        msum_add(&s, log1p((dn - dm) / dm));
        msum_add(&s, harm(dn) - harm(dm));
    }
    return msum_get(&s);
}

/* Expected hashes at levels a..c-1, bounds (see the file comment). */
static double hashes_hi(uint64_t M, uint64_t a, uint64_t c)
{
    return (double)M * harm_diff(M - a, M - c);
}

static double hashes_lo(uint64_t M, unsigned k, int nc, uint64_t a, uint64_t c)
{
    double m = nc ? (double)(M - k + 1) : (double)M;
    return m * harm_diff(M - a, M - c);
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

/* ---- the crossing of a smooth increasing rate by regula falsi
 *
 * The largest x in a bracket [lo, hi] (rate(lo) <= eps < rate(hi)) with
 * rate(x) <= eps: interpolate where g = log(rate/eps) crosses zero, with the
 * Illinois rule (an end kept twice in a row has its g halved) and a
 * bisection step whenever the bracket did not halve over two steps.  The
 * invariant is the bisection's, so for a monotone rate the answer is the
 * same adjacent pair; it takes about ten evaluations where bisection takes
 * forty. */
typedef struct rfalsi {
    double glo, ghi;
    int side;
    uint64_t width2;
    unsigned nstep;
} rfalsi;

static double rf_g(double v, double eps)
{
    return v > 0.0 ? log(v) - log(eps) : -1e300;
}

static void rf_init(rfalsi *st, double vlo, double vhi, double eps, uint64_t lo, uint64_t hi)
{
    st->glo = rf_g(vlo, eps);
    st->ghi = rf_g(vhi, eps);
    st->side = 0;
    st->width2 = hi - lo;
    st->nstep = 0;
}

static uint64_t rf_next(rfalsi *st, uint64_t lo, uint64_t hi)
{
    uint64_t mid;
    if (++st->nstep % 3 == 0 && (hi - lo) * 2 > st->width2) {
        mid = lo + (hi - lo) / 2;
    } else {
        double fr = st->glo > -1e299 && st->ghi > st->glo ? -st->glo / (st->ghi - st->glo) : 0.5;
        double x = (double)lo + fr * (double)(hi - lo);
        mid = x <= (double)lo + 1.0 ? lo + 1 : x >= (double)hi - 1.0 ? hi - 1 : (uint64_t)(x + 0.5);
    }
    if (st->nstep % 3 == 0)
        st->width2 = hi - lo;
    return mid;
}

static void rf_update(rfalsi *st, int feasible, double v, double eps)
{
    double g = rf_g(v, eps);
    if (feasible) {
        st->glo = g;
        if (st->side == -1)
            st->ghi *= 0.5;
        st->side = -1;
    } else {
        st->ghi = g;
        if (st->side == 1)
            st->glo *= 0.5;
        st->side = 1;
    }
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
            rf_init(&st, rlo, r, eps, lo, hi);
            while (hi - lo > 1) {
                uint64_t mid = rf_next(&st, lo, hi);
                if ((rc = asym_rate(&a, ret, two, mid, &r, &en0)) != RBF_OK) {
                    rbf__asym_free(&a);
                    return rc;
                }
                rf_update(&st, r <= eps, r, eps);
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
    kres r;
    uint64_t smax = M - 1;
    *feasible = 0;
    if (M < 2 || k >= M)
        return RBF_OK;
    (void)sigma_cap_upper(M, k, nc, two, eps, &smax, PLAN_BOUND_PIECES);
    int rc = plan_fast(method, M) ? sigma_one_k_fast(M, k, nc, ret, two, eps, 0.0, smax, &pp, &r)
                                  : sigma_one_k(M, k, nc, ret, two, eps, 0.0, &pp, &r);
    if (rc != RBF_OK || !r.feasible)
        return rc;
    *feasible = 1;
    *sigma = r.sigma;
    *en0 = r.cap;
    *fp = r.fp;
    return RBF_OK;
}

/* Best k for sigma-bounded (two = 0) or two-phase (two = 1, M = bits of
 * each filter) with pruning. */
typedef struct kcand {
    unsigned k;
    double ub;
    uint64_t smax;
} kcand;

static int cmp_cand(const void *a, const void *b)
{
    const kcand *x = a, *y = b;
    if (x->ub != y->ub)
        return x->ub > y->ub ? -1 : 1;
    return x->k < y->k ? -1 : (x->k > y->k);
}

static int plan_sigma(uint64_t M, double eps, unsigned K, int nc, int ret, int two, double target,
                      int fast, plan_prog *pp, rbf_plan_choice *out, unsigned *evaluated)
{
    memset(out, 0, sizeof *out);
    if (evaluated)
        *evaluated = 0;
    if (M < 2)
        return RBF_OK;
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
        c[n].ub = sigma_cap_upper(M, k, nc, two, eps, &c[n].smax, PLAN_CHEAP_PIECES);
        n++;
    }
    qsort(c, n, sizeof *c, cmp_cand);
    int rc = RBF_OK;
    for (unsigned t = 0; t < n; t++) {
        if (out->feasible &&
            (c[t].ub < out->expected_messages ||
             (c[t].ub == out->expected_messages && c[t].k > out->hashes)))
            continue; /* cannot win */
        if (target > 0.0 && c[t].ub < target)
            continue; /* cannot reach the target */
        /* the cheap bound did not rule this k out: the full one (tighter,
         * and the sigma limit the search starts from) */
        c[t].ub = sigma_cap_upper(M, c[t].k, nc, two, eps, &c[t].smax, PLAN_BOUND_PIECES);
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
    return rc;
}

/* ---- N-bounded policies */

/* Largest N with f_w(N) <= eps (0 if none). */
static uint64_t worst_n(uint64_t M, unsigned k, double eps)
{
    if (M < 2)
        return 0;
    double t = log1p(-pow(eps, 1.0 / k)) / ((double)k * log1p(-1.0 / (double)M));
    uint64_t N = t >= 9.0e15 ? (uint64_t)9.0e15 : (uint64_t)t;
    while (N > 0 && rbf__model_f_w(M, k, N) > eps)
        N--;
    while (rbf__model_f_w(M, k, N + 1) <= eps)
        N++;
    return N;
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
    rf_init(&st, *at, vh, eps, lo, hi);
    while (hi - lo > 1) {
        uint64_t mid = rf_next(&st, lo, hi);
        double vm = fn(M, k, mid);
        rf_update(&st, vm <= eps, vm, eps);
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

static int plan_nbounded(uint64_t M, double eps, unsigned K, int fast, plan_prog *pp, rbf_plan *out)
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
        uint64_t nw = worst_n(M, k, eps);
        choose_n(&out->worst_case, k, nw, rbf__model_f_w(M, k, nw));
        c[k - 1].k = k;
        c[k - 1].ub = (double)oracle_n_upper(M, k, eps, nw + 2);

    }
    qsort(c, K, sizeof *c, cmp_cand);
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

static void set_gain(rbf_plan_choice *c, double base)
{
    c->gain_vs_worst_case = (c->feasible && base > 0.0) ? c->expected_messages / base : 0.0;
}

static int check_plan_args(double eps, const rbf_plan_options *o)
{
    if (!(eps > 0.0 && eps < 1.0))
        return RBF_EINVAL;
    if (o && (o->max_hashes < 1 || o->max_hashes > MODEL_MAX_HASHES ||
              (o->hashing != RBF_COLLIDING && o->hashing != RBF_NON_COLLIDING) ||
              (o->recycle != RBF_NON_RETAINING && o->recycle != RBF_RETAINING) ||
              o->reserved_[0] || o->reserved_[1] || o->reserved_[2] || o->reserved_[3] ||
              o->reserved_[4] || o->reserved_[5] || o->reserved_[6] || o->reserved_[7] ||
              (o->method != RBF_MODEL_EXACT && o->method != RBF_MODEL_ASYMPTOTIC &&
               o->method != RBF_MODEL_AUTO)))
        return RBF_EINVAL;
    return RBF_OK;
}

int rbf_plan_memory(uint64_t bits, double eps, const rbf_plan_options *o, rbf_plan *out)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    int rc = check_plan_args(eps, o);
    if (rc)
        return rc;
    if (!out || bits < 1)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    out->bits = bits;
    out->target_fp = eps;
    plan_prog pp = {o->progress, o->progress_ctx, 0, bits};
    unsigned K = o->max_hashes;
    if ((rc = plan_sigma(bits, eps, K, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), 0, 0.0,
                         plan_fast(o->method, bits), &pp,
                         &out->sigma_bounded, NULL)) != RBF_OK)
        return rc;
    if ((rc = plan_sigma(bits / 2, eps, K, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), 1, 0.0,
                         plan_fast(o->method, bits / 2), &pp,
                         &out->two_phase, NULL)) != RBF_OK)
        return rc;
    if ((rc = plan_nbounded(bits, eps, K, plan_fast(o->method, bits), &pp, out)) != RBF_OK)
        return rc;
    double base = out->worst_case.feasible ? out->worst_case.expected_messages : 0.0;
    set_gain(&out->sigma_bounded, base);
    set_gain(&out->average_n, base);
    set_gain(&out->oracle_n, base);
    set_gain(&out->worst_case, base);
    set_gain(&out->two_phase, base);
    return RBF_OK;
}

/* Least memory whose (one- or two-phase) sigma-bounded capacity reaches
 * `messages`, by a proportional search followed by bisection, assuming
 * capacity is non-decreasing in M (docs/models.md says how exact). */
static int plan_messages_any(uint64_t messages, double eps, const rbf_plan_options *o, int two,
                             uint64_t *bits, rbf_plan *out)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    int rc = check_plan_args(eps, o);
    if (rc)
        return rc;
    if (!bits || messages < 1 || messages > ((uint64_t)1 << 50))
        return RBF_EINVAL;
    const uint64_t MAXM = (uint64_t)1 << 56;
    plan_prog pp = {o->progress, o->progress_ctx, 0, 1};
    rbf_plan_choice ch;
    double target = (double)messages;
    /* The full capacities computed so far, per filter size: "does M hold
     * N?" is then answered from them (a k holds N iff its capacity does:
     * the same decision as the pass stopped at N). */
    uint64_t memo_m[8];
    double memo_cap[8];
    unsigned memo_n = 0;
#define CAP_AT(Mv, tgt, capv)                                                                     \
    do {                                                                                          \
        uint64_t Mf_ = two ? (Mv) / 2 : (Mv);                                                     \
        int hit_ = 0;                                                                             \
        for (unsigned i_ = 0; i_ < memo_n && i_ < 8; i_++)                                        \
            if (memo_m[i_] == Mf_) {                                                              \
                (capv) = memo_cap[i_];                                                            \
                hit_ = 1;                                                                         \
            }                                                                                     \
        if (hit_)                                                                                 \
            break;                                                                                \
        rc = plan_sigma(Mf_, eps, o->max_hashes, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), two, (tgt),     \
                        plan_fast(o->method, Mf_), &pp,                                           \
                        &ch, NULL);                                                               \
        if (rc)                                                                                   \
            return rc;                                                                            \
        (capv) = ch.feasible ? ch.expected_messages : 0.0;                                        \
        if ((tgt) <= 0.0) {                                                                       \
            memo_m[memo_n % 8] = Mf_;                                                             \
            memo_cap[memo_n % 8] = (capv);                                                        \
            memo_n++;                                                                             \
        }                                                                                         \
    } while (0)
    /* 1. Capacity is nearly proportional to memory: from the classic
     *    sizing M ~ N log2(1/eps)/ln 2, a few full evaluations and
     *    proportional steps land within a few bits. */
    double guess = target * log2(1.0 / eps) / log(2.0) * (two ? 2.0 : 1.0);
    uint64_t M = guess < 2.0 ? 2 : (guess > (double)MAXM ? MAXM : (uint64_t)guess);
    double cap;
    for (int iter = 0; iter < 4; iter++) {
        CAP_AT(M, 0.0, cap);
        double nm;
        if (cap <= 0.0)
            nm = (double)M * 2.0;
        else
            nm = ceil((double)M * (target / cap));
        if (nm > (double)MAXM)
            nm = (double)MAXM;
        uint64_t next = nm < 2.0 ? 2 : (uint64_t)nm;
        if (cap > 0.0 && (next > M ? next - M : M - next) <= 2) {
            M = next;
            break;
        }
        if (next >= MAXM && M >= MAXM)
            return RBF_EINVAL; /* more than 2^56 bits */
        M = next;
    }
    /* 2. Bracket cap(lo) < N <= cap(hi) by steps of doubling width, asking
     *    only "does M hold N?" (cheaper: the pass stops at N messages and
     *    k values whose bound is below N are skipped); 3. bisect. */
    uint64_t lo = 1, hi = 0;
    CAP_AT(M, target, cap);
    if (cap >= target) {
        hi = M;
        for (uint64_t w = 1;; w *= 2) {
            uint64_t t = hi > w + 1 ? hi - w : 1;
            if (t <= 1) {
                lo = 1;
                break;
            }
            CAP_AT(t, target, cap);
            if (cap >= target) {
                hi = t;
            } else {
                lo = t;
                break;
            }
        }
    } else {
        lo = M;
        for (uint64_t w = 1;; w *= 2) {
            if (lo >= MAXM)
                return RBF_EINVAL;
            uint64_t t = lo + w > MAXM ? MAXM : lo + w;
            CAP_AT(t, target, cap);
            if (cap >= target) {
                hi = t;
                break;
            }
            lo = t;
        }
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        CAP_AT(mid, target, cap);
        if (cap >= target)
            hi = mid;
        else
            lo = mid;
    }
#undef CAP_AT
    *bits = hi;
    if (out)
        return rbf_plan_memory(hi, eps, o, out);
    return RBF_OK;
}

int rbf_plan_messages(uint64_t messages, double eps, const rbf_plan_options *o, uint64_t *bits,
                      rbf_plan *out)
{
    return plan_messages_any(messages, eps, o, 0, bits, out);
}

int rbf_plan_messages_two_phase(uint64_t messages, double eps, const rbf_plan_options *o,
                                uint64_t *bits, rbf_plan *out)
{
    return plan_messages_any(messages, eps, o, 1, bits, out);
}
