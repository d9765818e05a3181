/*
 * forget.c -- forgetting at one gap from a tick without the whole cycle
 * object: Chernoff bounds on the fill, and bounds or the value of
 * rbf_model_forget from the cycle-length law up to the gap (the planner's
 * screen, src/plan/plan_fn.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_cycles.h"
#include "rbf_alloc.h"

/* ---- forgetting at one gap, from a tick
 *
 * The forgetting probabilities after g ticks depend on the cycle-length
 * law only through P(L = n) for n <= g + 1 and E[L].  The first come from
 * sigma_pmf truncated at n = g + 2 (its values there are the untruncated
 * ones: A_b(n) depends only on smaller n), so the window in n is at most
 * g + 2 wide and levels above k (g + 2) are never reached; E[L] is the
 * renewal sum sum_{b <= sigma} g_b = E[N_0](sigma + 1) of the
 * non-retaining chain (minus the retained message when retaining).  Cost
 * O(k min(sigma, k g) min(W, g)) instead of O(k sigma W) and the O(len^2)
 * two-phase convolution: the planner's screen (plan_fn.c). */
/* A bound on P(B_n > sigma), B_n the set bits after n messages: the bit
 * indicators are negatively associated (balls in bins; for non-colliding
 * hashing each message's k distinct bits form a permutation distribution),
 * so the Chernoff bound of independent bits holds:
 * P(B_n >= a) <= exp(-M D(a/M || p)), p = 1 - q^n the chance that a given
 * bit is set, for a/M > p; 1 otherwise. */
double rbf__model_fill_tail_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma)
{
    const double M = (double)p->bits, k = (double)p->hashes;
    const double lq = p->hashing == RBF_NON_COLLIDING ? log1p(-k / M) : k * log1p(-1.0 / M);
    const double lnq = (double)n * lq;     /* log P(a given bit is clear) */
    const double x = ((double)sigma + 1.0) / M; /* < 1: the caller has sigma + 1 < M */
    const double pset = -expm1(lnq);
    if (!(x > pset))
        return 1.0;
    const double D = x * log(x / pset) + (1.0 - x) * (log1p(-x) - lnq);
    return exp(-M * D);
}

/* A bound on P(B_n <= sigma): the lower Chernoff tail of the same
 * negatively associated indicators, P(B_n <= a) <= exp(-M D(a/M || p)) for
 * a/M < p; 1 otherwise. */
double rbf__model_fill_low_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma)
{
    const double M = (double)p->bits, k = (double)p->hashes;
    const double lq = p->hashing == RBF_NON_COLLIDING ? log1p(-k / M) : k * log1p(-1.0 / M);
    const double lnq = (double)n * lq;
    const double x = (double)sigma / M;
    const double pset = -expm1(lnq);
    if (!(x < pset))
        return 1.0;
    /* x log(x/p) + (1 - x) log((1 - x)/(1 - p)), with 0 log 0 = 0 */
    const double D = (x > 0.0 ? x * log(x / pset) : 0.0) + (1.0 - x) * (log1p(-x) - lnq);
    return exp(-M * D);
}

/* rbf__model_forget_bounds past CYC_MAX_CONV ticks (see the comment
 * there): E = E[L], ret = retaining. */
static int forget_bounds_long(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                              uint64_t g, int ret, double E, double *lo, double *hi)
{
    /* Past 2^17 ticks: the same bounds, looser, in O(1) memory and
     * 4096 blocks (Fu and Fl are nondecreasing: a block's sum is
     * bracketed by its length times the values at its ends):
     *   one phase:  (g+1-ret - sum_{n<=g-ret} Fu(n))/E <= f <= (g+1-ret - sum Fl(n))/E
     *   two phases: trig <= f <= trig + sum_{n<g} Fu(n)/E.
     * Nothing exact is computed here: *lo < *hi may remain. */
    const uint64_t last = g - (uint64_t)ret; /* the n of P(L > n) in the one-phase sum */
    const uint64_t top = phases == 1 ? last : g - 1, step = top / 4096 + 1;
    model_sum su, sl;
    msum_init(&su);
    msum_init(&sl);
    /* blocks [a, b], the last ending at top; no a + step past top is
     * formed (top may be 2^64 - 1), and n + 1 saturates */
    const uint64_t sh = ret ? 1 : 0;
    for (uint64_t a = 0;; a += step) {
        uint64_t b = top - a > step - 1 ? a + step - 1 : top;
        double fu = rbf__model_fill_tail_bound(p, b > UINT64_MAX - sh ? UINT64_MAX : b + sh, sigma);
        double fl = 1.0 - rbf__model_fill_low_bound(p, a + sh, sigma);
        msum_add(&su, ((double)(b - a) + 1.0) * (fu < 1.0 ? fu : 1.0));
        msum_add(&sl, ((double)(b - a) + 1.0) * (fl > 0.0 ? fl : 0.0));
        if (b == top)
            break;
    }
    const double trig = ret ? 0.0 : 1.0 / E, cnt = (double)last + 1.0;
    if (phases == 1) {
        *lo = model_clamp01((cnt - msum_get(&su)) / E);
        *hi = model_clamp01((cnt - msum_get(&sl)) / E);
    } else {
        *lo = model_clamp01(trig);
        *hi = model_clamp01(trig + msum_get(&su) / E);
    }
    return RBF_OK;
}

int rbf__model_forget_bounds(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                             uint64_t g, double *mean, double *lo, double *hi)
{
    rbf_model_cycle_spec spec;
    rbf_model_cycle_spec_init(&spec);
    spec.phases = phases;
    spec.sigma = sigma;
    int rc = rbf__cyc_check_spec(p, &spec);
    if (rc)
        return rc;
    if (!mean || !lo || !hi || sigma + 1 >= p->bits)
        return RBF_EINVAL;
    const int ret = (p->recycle == RBF_RETAINING);
    rbf_model_params q = *p;
    q.recycle = RBF_NON_RETAINING;
    q.progress = NULL;
    rbf_model_sigma_result sr;
    if ((rc = rbf_model_sigma(&q, sigma + 1, &sr)))
        return rc;
    const double E = sr.expected_messages - (ret ? 1.0 : 0.0);
    *mean = E;
    /* Bounds from the Chernoff bounds on the fill, both tails: L <= n iff
     * B_{n+ret} > sigma (non-retaining: L is the tick that crosses;
     * retaining: L = n' - 1), so Fl(n) <= P(L <= n) <= Fu(n) with
     * Fu = min(1, upper tail), Fl = max(0, 1 - lower tail).  Then
     *   P(R = j) = P(L > j - ret)/E in [(1 - Fu)/E, (1 - Fl)/E] (j >= ret),
     *   one phase:  f = sum_{j<=g} P(R = j),
     *   two phases: f = trig + sum_{l<=g} P(L' = l) S(g - l),
     *               S(m) = P(0 < R <= m), nondecreasing, so L' between the
     *               laws with distribution functions Fu (stochastically
     *               smaller) and Fl (larger) bounds the sum;
     *   trig = 1/E non-retaining (the trigger is held nowhere), 0 retaining. */
    if (g > CYC_MAX_CONV)
        return forget_bounds_long(p, sigma, phases, g, ret, E, lo, hi);
    const uint64_t gn = g + 1;
    double *Fu = rbf__malloc(gn * sizeof *Fu), *Fl = rbf__malloc(gn * sizeof *Fl);
    double *Su = rbf__malloc(gn * sizeof *Su), *Sl = rbf__malloc(gn * sizeof *Sl);
    if (!Fu || !Fl || !Su || !Sl) {
        rbf__free(Fu);
        rbf__free(Fl);
        rbf__free(Su);
        rbf__free(Sl);
        return RBF_ENOMEM;
    }
    /* Both bounds grow with n (the chance a bit is set does) and are 0 or
     * 1 exactly away from the crossing n* of E[fill] and sigma: the upper
     * tail underflows to 0 well below n* (found by bisection) and is 1 from
     * n*; the lower one's complement is 0 up to n* and 1 once it
     * underflows.  Only the window between is computed: some thousands of
     * ticks instead of 2 (g + 1) evaluations (the --remember least-memory
     * search calls this for every candidate) */
    const uint64_t r1 = ret ? 1 : 0;
    uint64_t z0 = 0; /* Fu[n] = 0 for n < z0 */
    if (rbf__model_fill_tail_bound(p, r1, sigma) == 0.0) {
        uint64_t a = 0, b = g + 1; /* tail(a) == 0; b: tail != 0 or past g */
        while (b - a > 1) {
            uint64_t m = a + (b - a) / 2;
            if (rbf__model_fill_tail_bound(p, m + r1, sigma) == 0.0)
                a = m;
            else
                b = m;
        }
        z0 = b;
    }
    uint64_t o0 = 0; /* Fl[n] = 0 (the lower tail bound is 1) for n < o0 */
    if (rbf__model_fill_low_bound(p, r1, sigma) >= 1.0) {
        uint64_t a = 0, b = g + 1;
        while (b - a > 1) {
            uint64_t m = a + (b - a) / 2;
            if (rbf__model_fill_low_bound(p, m + r1, sigma) >= 1.0)
                a = m;
            else
                b = m;
        }
        o0 = b;
    }
    int uone = 0, lone = 0;
    for (uint64_t n = 0; n <= g; n++) {
        double u = n < z0 ? 0.0 : uone ? 1.0 : rbf__model_fill_tail_bound(p, n + r1, sigma);
        double v = n < o0 ? 1.0 : lone ? 0.0 : rbf__model_fill_low_bound(p, n + r1, sigma);
        Fu[n] = u < 1.0 ? u : 1.0;
        Fl[n] = v < 1.0 ? 1.0 - v : 0.0;
        if (n && Fu[n] < Fu[n - 1]) /* distribution functions: nondecreasing */
            Fu[n] = Fu[n - 1];
        if (n && Fl[n] < Fl[n - 1])
            Fl[n] = Fl[n - 1];
        uone = Fu[n] >= 1.0;
        lone = Fl[n] >= 1.0;
    }
    /* P(R = j) bounds, j = 0..g, and S(m) = sum_{1<=j<=m} */
    model_sum r_lo, r_hi, s_lo, s_hi;
    msum_init(&r_lo);
    msum_init(&r_hi);
    msum_init(&s_lo);
    msum_init(&s_hi);
    for (uint64_t j = 0; j <= g; j++) {
        double rl = 0.0, rh = 0.0;
        if (j >= (uint64_t)ret) {
            uint64_t i = j - (uint64_t)ret;
            rl = (1.0 - Fu[i]) / E;
            rh = (1.0 - Fl[i]) / E;
        }
        msum_add(&r_lo, rl);
        msum_add(&r_hi, rh);
        if (j >= 1) {
            msum_add(&s_lo, rl);
            msum_add(&s_hi, rh);
        }
        Sl[j] = msum_get(&s_lo);
        Su[j] = msum_get(&s_hi);
    }
    const double trig = ret ? 0.0 : 1.0 / E;
    if (phases == 1) {
        *lo = model_clamp01(msum_get(&r_lo));
        *hi = model_clamp01(msum_get(&r_hi));
    } else {
        model_sum a, b;
        msum_init(&a);
        msum_init(&b);
        for (uint64_t l = 0; l <= g; l++) {
            double du = Fu[l] - (l ? Fu[l - 1] : 0.0), dl = Fl[l] - (l ? Fl[l - 1] : 0.0);
            msum_add(&a, du * Su[g - l]); /* L' as small as Fu lets it be: the upper bound */
            msum_add(&b, dl * Sl[g - l]); /* as large as Fl lets it be: the lower bound */
        }
        *lo = model_clamp01(trig + msum_get(&b));
        *hi = model_clamp01(trig + msum_get(&a));
    }
    rbf__free(Fu);
    rbf__free(Fl);
    rbf__free(Su);
    rbf__free(Sl);
    return RBF_OK;
}

int rbf__model_forget_law(const rbf_model_params *p, uint64_t sigma, unsigned phases, uint64_t g,
                          double E, double *out)
{
    if (!out || g > CYC_MAX_CONV || (phases != 1 && phases != 2))
        return RBF_EINVAL;
    const int ret = (p->recycle == RBF_RETAINING);
    int rc;
    const uint64_t nmax = g + 2;
    double *pm = rbf__malloc((nmax + 1) * sizeof *pm);
    double *rt = rbf__calloc(nmax + 2, sizeof *rt); /* sigma_pmf's phi first */
    if (!pm || !rt) {
        rbf__free(pm);
        rbf__free(rt);
        return RBF_ENOMEM;
    }
    double lost = 0.0, rend = 0.0;
    if ((rc = rbf__cyc_sigma_pmf(p, sigma, nmax, pm, rt, &rend, &lost)))
        goto done;
    memset(rt, 0, (nmax + 2) * sizeof *rt);
    if (ret) { /* L = n - 1 */
        memmove(pm, pm + 1, nmax * sizeof *pm);
        pm[nmax] = 0.0;
    }
    /* rt[j] = P(R_tick = j), j = 0..g: non-retaining P(L > j)/E,
     * retaining P(L >= j)/E for j >= 1 */
    model_sum cdf;
    msum_init(&cdf);
    for (uint64_t j = 0; j <= g; j++) {
        double ge = 1.0 - msum_get(&cdf); /* P(L >= j) */
        msum_add(&cdf, pm[j]);
        double gt = 1.0 - msum_get(&cdf); /* P(L > j) */
        rt[j] = (ret ? (j ? ge : 0.0) : gt) / E;
    }
    model_sum f;
    msum_init(&f);
    if (phases == 1) {
        for (uint64_t j = 0; j <= g; j++)
            msum_add(&f, rt[j]);
        *out = model_clamp01(msum_get(&f));
    } else {
        /* the message is forgotten when the active cycle ends (R) and the
         * next one ends too (L'): P(R + L' <= g); a non-retaining trigger
         * (R = 0) is held nowhere */
        const double trig0 = rt[0];
        if (!ret)
            rt[0] = 0.0;
        rbf__cyc_cumsum(rt, g + 1); /* rt[m] = P(0 < R <= m) */
        for (uint64_t l = 0; l <= g; l++)
            if (pm[l] != 0.0)
                msum_add(&f, pm[l] * rt[g - l]);
        *out = model_clamp01((ret ? 0.0 : trig0) + msum_get(&f));
    }
done:
    rbf__free(pm);
    rbf__free(rt);
    return rc;
}

int rbf__model_forget_sigma(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                            uint64_t g, double *lo, double *hi, int exact)
{
    double E;
    int rc = rbf__model_forget_bounds(p, sigma, phases, g, &E, lo, hi);
    if (rc || !exact || g > CYC_MAX_CONV || *hi - *lo <= 1e-12 * *hi)
        return rc;
    double f;
    if ((rc = rbf__model_forget_law(p, sigma, phases, g, E, &f)))
        return rc;
    *lo = *hi = f;
    return RBF_OK;
}
