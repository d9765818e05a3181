/*
 * fn.c -- steady-state false-negative rate of a workload (docs/models.md 9.3).
 *
 * Ages in ticks, clocks in arrivals.  A tick is an arrival the active
 * filter does not hold; the filter's state moves on ticks, so the cycle
 * law (cycles.c) gives, per tick-age u of the active filter, P(L > u) and
 * the false-positive rate phi(u) of a filter that old.  A repeat is held by
 * the active filter exactly when its previous arrival fell in the current
 * cycle (inserted then, or held, or a false positive: its bits are set
 * since), and by the frozen filter when it fell in the previous cycle.
 * With T the repeat's gap in arrivals (T = 1: the next arrival) and S(x) =
 * P(T > x), a repeat arriving x arrivals after the clear is a tick with
 * probability S(x), so the tick rate at age u is
 *
 *     nu(u) = r + (1 - r) S(x(u)),   x(u + 1) = x(u) + 1/nu(u),
 *
 * r the fraction of first arrivals: right after a clear every repeat is a
 * tick and the young filter ages fast in arrivals.  An arrival falls at age
 * u with weight P(L > u)/nu(u) (arrivals per tick), and a repeat there is a
 * false negative with probability
 *
 *     one phase:  S(x(u)) (1 - phi(u)),
 *     two phases: E[S(x(u) + x(L'))] (1 - phi(u)) (1 - rho_F),
 *
 * L' the previous (frozen) cycle, independent, and rho_F the frozen
 * filter's rate.  The two-phase oracle counts only arrivals held by neither
 * filter: its ticks are those with T > x(u) + x(N), x(N) the arrivals of a
 * whole cycle, a fixed point solved by iteration.  Mean field: x(u) is the
 * expected arrival count, and the gap of a repeat is independent of the
 * filter's state.
 *
 * Gaps.  uniform:P and zipf:P:S: each message's gaps are geometric with its
 * own arrival probability q (ranks merged into 4096 log-spaced classes of q
 * beyond 4096 ranks), S(x) = sum_q w_q (1 - q)^x, w_q the class's share of
 * arrivals.  fading:R:L: the gap law walked backwards from a repeat (each
 * earlier arrival a birth with probability R, otherwise a repeat that picks
 * the message with probability p^a / Z at age a), exactly up to the gap
 * beyond which the rest is below 1e-13.  gaps:FILE: the given distribution.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fn_gaps.h"
#include "rbf_alloc.h"
#include "rbf_abi.h"

/* ---- the model */

#define FN_BINS 128 /* the frozen cycle's law, in bins of equal mass */
/* ... and past CYC_MAX_CONV ticks (10^6 bits and more), where each bin
 * costs a survival lookup at every age: the cycle law is narrow there.
 * Measured on two-phase filters under uniform, Zipf and 10^6-gap
 * workloads: 4 bins give the same fn as 8 to 6e-13 relative at 2*10^6 to
 * 10^7 bits; 8 as 128 to about 1e-9 (1 bin: 5e-8) at 3000 to 10^6 bits,
 * where the law is relatively wider */
#define FN_BINS_LONG 4

/* The ticks' clock: nu[u] the ticks per arrival at age u and xs[u], vs[u]
 * the mean and variance of the arrivals before age u (u = 0..len + 1),
 * when the repeats x0 (variance v0) arrivals further back are held too
 * (the two-phase oracle's frozen filter; 0 otherwise).  Returns xs[len]. */
static double fn_run(const gap_surv *sv, double r, uint64_t len, double x0, double v0, double *nu,
                     double *xs, double *vs)
{
    double x = 0.0, vx = 0.0, nprev = 1.0;
    for (uint64_t u = 0; u <= len; u++) {
        xs[u] = x;
        vs[u] = vx;
        double v = 0.0;
        for (int rep = 0; rep < 2; rep++) {
            /* the period at age u: its arrivals sit about (1/nu - 1)/2
             * after its start */
            double xm = x + 0.5 * (1.0 / nprev - 1.0);
            v = r + (1.0 - r) * rbf__fn_surv_sm(sv, xm + x0, vx + v0);
            if (v < 1e-15)
                v = 1e-15;
            nprev = v;
        }
        nu[u] = v;
        x += 1.0 / v;
        vx += (1.0 - v) / (v * v); /* a geometric period */
    }
    xs[len + 1] = x;
    vs[len + 1] = vx;
    return xs[len];
}

/* Pools (uniform, Zipf: no births, each message arriving with its own
 * probability q at every arrival), counted in ticks.  The held set only
 * changes on ticks, so within a period the tick rate is constant:
 * nu(u) = sum_c w_c (1 - h_c(u)), h_c the chance that a class-c message
 * arrived in this cycle, and the tick adds one message:
 * h_c += q_c (1 - h_c)/nu (the expectation, exact for a uniform pool: nu
 * = 1 - u/P).  One phase the forgotten repeat is the period's tick; two
 * phases it is held by neither filter, (1 - h_c(u)) G_c with G_c =
 * E[1 - h_c(L')] of the previous cycle.  The two-phase oracle ticks only
 * on arrivals held by neither (its active filter takes every arrival):
 * nu = sum_c w_c (1 - h_c)(1 - hF_c), h_c gaining each message of the
 * period's 1/nu arrivals, hF = h at N, by iteration.  Fills nu, ek = 1/nu
 * (arrivals per period), fa (repeats held by no filter per period), rein
 * (re-inserted from the frozen filter, per arrival).  Returns 0, 1 when
 * it would cost too much (the arrival clock stands), 2 stuck, -1 out of
 * memory. */
static int fn_classes(const gapdesc *d, const double *pmf, uint64_t len, uint64_t top, int two,
                      int oracle2, double *nu, double *ek, double *fa, double *rein)
{
    /* ages past top (no cycle lasts that long) weigh nothing */
    for (uint64_t u = top + 1; u <= len; u++) {
        nu[u] = ek[u] = 1.0;
        fa[u] = rein[u] = 0.0;
    }
    const size_t C = d->ncls;
    if ((double)C * (double)(len + 1) * (oracle2 ? 40.0 : two ? 2.0 : 1.0) > 1.5e8)
        return 1;
    double *h = rbf__calloc(C, sizeof *h), *G = rbf__calloc(C, sizeof *G);
    double *hF = rbf__calloc(C, sizeof *hF);
    int rc = 0;
    if (!h || !G || !hF) {
        rc = -1; /* out of memory */
        goto out;
    }
    if (two && !oracle2) { /* G_c = sum_l P(L' = l) (1 - h_c(l)) */
        for (uint64_t u = 0; u <= top; u++) {
            double v = 0.0;
            for (size_t c = 0; c < C; c++) {
                G[c] += pmf[u] * (1.0 - h[c]);
                v += d->w[c] * (1.0 - h[c]);
            }
            if (!(v > 1e-300))
                v = 1e-300;
            for (size_t c = 0; c < C; c++)
                h[c] += d->q[c] * (1.0 - h[c]) / v;
        }
        memset(h, 0, C * sizeof *h);
    }
    for (unsigned it = 0; it < (oracle2 ? 40u : 1u); it++) {
        memset(h, 0, C * sizeof *h);
        for (uint64_t u = 0; u <= top; u++) {
            double v = 0.0, fb = 0.0, re = 0.0;
            for (size_t c = 0; c < C; c++) {
                double a = d->w[c] * (1.0 - h[c]);
                if (oracle2) {
                    v += a * (1.0 - hF[c]);
                    re += a * hF[c];
                } else {
                    v += a;
                    fb += a * (two ? G[c] : 1.0);
                    re += two ? a * (1.0 - G[c]) : 0.0;
                }
            }
            if (!(v > 1e-12)) {
                rc = 2; /* no arrival is a tick any more: stuck */
                goto out;
            }
            nu[u] = v;
            ek[u] = 1.0 / v;
            fa[u] = (oracle2 ? v : fb) / v; /* per period: 1/nu arrivals */
            rein[u] = re;
            for (size_t c = 0; c < C; c++)
                h[c] = oracle2 ? 1.0 - (1.0 - h[c]) * exp(-d->q[c] / v)
                               : h[c] + d->q[c] * (1.0 - h[c]) / v;
        }
        if (oracle2) {
            double diff = 0.0;
            for (size_t c = 0; c < C; c++) {
                diff = fmax(diff, fabs(h[c] - hF[c]));
                hF[c] = h[c];
            }
            if (diff < 1e-12)
                break;
        }
    }
out:
    rbf__free(h);
    rbf__free(G);
    rbf__free(hF);
    return rc;
}

/* The frozen cycle (two phases, not the oracle): its arrivals x(L') in
 * bins of equal mass: bp the mass, bx the mean, bv the variance of each;
 * returns the number of bins. */
static size_t fn_frozen_bins(const double *pmf, uint64_t len, int ret, const double *xs,
                             const double *nu, const double *vs, double *bp, double *bx,
                             double *bv)
{
    const size_t bins = len > CYC_MAX_CONV ? FN_BINS_LONG : FN_BINS;
    size_t nb = 0;
    /* per bin: mass, E[x], E[x^2] + E[var] (then the variance) */
    double acc = 0.0, ax = 0.0, axx = 0.0;
    for (uint64_t l = 0; l <= len; l++) {
        if (!(pmf[l] > 0.0))
            continue;
        acc += pmf[l];
        /* retaining: the frozen filter also holds the arrivals after
         * its last tick, before the trigger */
        double xl = ret ? xs[l] + 1.0 / nu[l] - 1.0 : xs[l];
        ax += pmf[l] * xl;
        axx += pmf[l] * (xl * xl + vs[l]);
        if (acc >= 1.0 / (double)bins || l == len) {
            if (nb < bins) {
                bp[nb] = bx[nb] = bv[nb] = 0.0;
                nb++;
            } /* else (rounding) into the last bin */
            bp[nb - 1] += acc;
            bx[nb - 1] += ax;
            bv[nb - 1] += axx;
            acc = ax = axx = 0.0;
        }
    }
    if (acc > 0.0 && nb) {
        bp[nb - 1] += acc;
        bx[nb - 1] += ax;
        bv[nb - 1] += axx;
    }
    for (size_t b = 0; b < nb; b++) {
        bx[b] /= bp[b];
        bv[b] = bv[b] / bp[b] - bx[b] * bx[b];
        if (bv[b] < 0.0)
            bv[b] = 0.0;
    }
    return nb;
}

/* Ticks per arrival on average (nubar) and where cycles end (nuend,
 * harmonic, weighted by P(L = u + 1)), and there the share of repeats
 * that are ticks (psi). */
static void fn_clock_ends(const double *surv, const double *pmf, const double *nu, uint64_t len,
                          int prev_nu, double r, double *nubar, double *nuend, double *psi)
{
    model_sum a, b, e;
    msum_init(&a);
    msum_init(&b);
    msum_init(&e);
    for (uint64_t u = 0; u <= len; u++) {
        msum_add(&a, surv[u]);
        msum_add(&b, surv[u] / nu[u]);
        if (u + 1 <= len)
            msum_add(&e, pmf[u + 1] / nu[u]);
    }
    *nubar = msum_get(&b) > 0.0 ? model_clamp01(msum_get(&a) / msum_get(&b)) : 1.0;
    if (*nubar < 1e-15)
        *nubar = 1e-15;
    *nuend = msum_get(&e) > 0.0 ? model_clamp01(1.0 / msum_get(&e)) : *nubar;
    if (*nuend < 1e-15)
        *nuend = 1e-15;
    /* a repeat that ends a cycle is a tick: with nuend = r + (1 - r) psi */
    *psi = prev_nu ? *nuend : model_clamp01((*nuend - r) / (1.0 - r));
}

/* Two phases: the repeats the frozen filter holds are re-inserted into
 * the active one (rein per arrival), so the two share more set bits
 * than independent filters would, and a new message is a false
 * positive of both less often than 1 - (1 - phi)(1 - rho_F) says.  Mean
 * field on the bits: the frozen filter's F = M rho_F^(1/k) set bits; a
 * re-inserted repeat puts its k bits among them, any other insertion
 * anywhere; alpha, beta the fractions of F's bits and of the rest set
 * in the active filter; a new message is a false positive of both with
 * (F/M alpha)^k, not rho_A^k (F/M)^k: delta[u] is added to the
 * not-a-false-positive factor.  The oracle's re-inserted repeats are no
 * ticks: they fill its active filter beyond the N-bounded chain's, by
 * dphi[u] (and the frozen filter, the active one at N, with it). */
static inline double ipow(double x, unsigned k)
{
    double r = 1.0;
    while (k) {
        if (k & 1)
            r *= x;
        x *= x;
        k >>= 1;
    }
    return r;
}

/* Two phases: delta[u] and (the oracle) dphi[u] from the bits the two
 * filters share; *rF: the frozen
 * filter's rate (rhoF, the oracle's moved by its re-inserted repeats). */
static void fn_shared_bits(const rbf_model_params *p, double rhoF, uint64_t len, int oracle2,
                           const double *rein, const double *nu, double *delta, double *dphi,
                           double *rF)
{
    *rF = rhoF;
    const double Md = (double)p->bits, kd = (double)p->hashes;
    const double lM = kd * log1p(-1.0 / Md);
    const unsigned k = p->hashes;
    for (unsigned pass = 0; pass < (oracle2 ? 4u : 1u); pass++) {
        const double fF = *rF > 0.0 ? pow(*rF, 1.0 / kd) : 0.0;
        const double lF = fF * Md > 1.0 ? kd * log1p(-1.0 / (fF * Md)) : 0.0;
        double LF = 0.0, LN = 0.0, L0 = 0.0, pend = 0.0, p0end = 0.0;
        for (uint64_t u = 0; u <= len; u++) {
            double al = -expm1(LF), be = -expm1(LN), a0 = -expm1(L0);
            double pA = fF * al + (1.0 - fF) * be;
            /* x^k by multiplication past 2^17 ticks, where this loop is
             * long (within a few units in the last place of pow) */
            double dd = len > CYC_MAX_CONV ? ipow(fF * al, k) - ipow(pA * fF, k)
                                           : pow(fF * al, kd) - pow(pA * fF, kd);
            delta[u] = dd > 0.0 ? dd : 0.0;
            dphi[u] = !oracle2 ? 0.0
                      : len > CYC_MAX_CONV ? ipow(pA, k) - ipow(a0, k)
                                           : pow(pA, kd) - pow(a0, kd);
            if (u == len) {
                pend = pA;
                p0end = a0;
                break;
            }
            /* the re-inserted repeats per tick, and the tick */
            double h = rein[u] / nu[u];
            if (!oracle2) /* ticks include them: a share h */
                h = h < 1.0 ? h : 1.0;
            LF += h * lF + (oracle2 ? 1.0 : 1.0 - h) * lM;
            LN += (oracle2 ? 1.0 : 1.0 - h) * lM;
            L0 += lM;
        }
        if (oracle2) /* the frozen filter: the active one at N */
            *rF = model_clamp01(rhoF + pow(pend, kd) - pow(p0end, kd));
    }
}

/* the arrivals of a whole (previous) cycle, for the two-phase oracle's
 * ticks: the least fixed point x = F(x), F(x) the arrivals of N ticks
 * when the frozen filter holds the x before them (F grows with x).
 * None (F(x) > x up to 10^15): a finite pool fits in the two filters,
 * no arrival is new any more and the oracle never recycles (stuck). */
/* The two-phase oracle: the arrivals of a whole (previous) cycle, *xN
 * (variance *vN), the least fixed point above;
 * *it counts the passes.  Returns 1 when there is none (stuck). */
static int fn_oracle_cycle(const rbf_model_params *p, const gap_surv *sv, double r, uint64_t len,
                           double *nu, double *xs, double *vs, double *xN, double *vN,
                           unsigned *it)
{
    double lo = 0.0, hi = xs[len], vhi = vs[len];
    for (;;) {
        if (model_progress(p, *it, 128))
            return RBF_ECANCELED;
        (*it)++;
        double F = fn_run(sv, r, len, hi, vhi, nu, xs, vs);
        if (F <= hi)
            break;
        if (hi > 1e15)
            return 1; /* stuck: no tick, no recycle, fn 0 */
        lo = hi;
        hi *= 2.0;
        vhi = vs[len];
    }
    for (unsigned b = 0; b < 100 && hi - lo > 1e-9 * hi; b++, (*it)++) {
        if (model_progress(p, *it, 128))
            return RBF_ECANCELED;
        double mid = 0.5 * (lo + hi);
        double F = fn_run(sv, r, len, mid, vhi, nu, xs, vs);
        vhi = vs[len];
        if (F <= mid)
            hi = mid;
        else
            lo = mid;
    }
    *xN = hi;
    *vN = vhi;
    fn_run(sv, r, len, *xN, *vN, nu, xs, vs);
    return RBF_OK;
}

/* The averages over the arrivals of every age u: the share that are
 * ticks, forgotten by every filter, and false negatives (out), the law
 * given L <= P weighted by keep. */
static int fn_totals(uint64_t len, int ret, int two, int exact, double r, double keep,
                     const double *surv, const double *phil, const double *nu, const double *ek,
                     const double *fa, const double *forg, const double *dphi,
                     const double *delta, double rF, rbf_model_fn_result *out)
{
    model_sum W, T, F, X;
    msum_init(&W);
    msum_init(&T);
    msum_init(&F);
    msum_init(&X);
    for (uint64_t u = 0; u <= len; u++) {
        /* the arrivals at age u: P(L > u)/nu; retaining, P(L >= u)/nu for
         * u >= 1 (the arrivals after a cycle's last tick wait for the
         * trigger, which opens the next cycle as its tick 1: age 0 is the
         * trigger alone, counted there) */
        double alive = ret ? (u ? surv[u - 1] : 0.0) : surv[u];
        if (!(alive > 0.0))
            continue;
        double wu = alive / nu[u];
        uint64_t ua = surv[u] > 0.0 || u == 0 ? u : u - 1; /* the last state */
        double phi = model_clamp01(phil[ua] / surv[ua]);
        /* per repeat held by no filter at this age (exact: per period, of
         * the (1 - r) EK repeats) */
        double fu = exact ? fa[u] / ((1.0 - r) * ek[u]) : forg[u];
        double miss;
        if (two)
            miss = fu * ((1.0 - model_clamp01(phi + dphi[u])) * (1.0 - rF) + delta[u]);
        else
            miss = fu * (1.0 - phi);
        msum_add(&W, wu);
        msum_add(&T, alive);
        msum_add(&F, wu * fu);
        msum_add(&X, wu * miss);
    }
    double Wt = msum_get(&W);
    if (!(Wt > 0.0))
        return RBF_EINVAL;
    out->tick_fraction = model_clamp01(keep * msum_get(&T) / Wt);
    out->forgotten = model_clamp01(keep * msum_get(&F) / Wt);
    out->fn = model_clamp01(keep * msum_get(&X) / Wt);
    return RBF_OK;
}

/* The clock of the arrivals rbf_model_fn's per-age steps share. */
typedef struct fn_clock {
    double r, psi, nuend, xN, vN;
    int two, oracle2, sig, ret;
    size_t nb;               /* the frozen cycle's bins (fn_frozen_bins) */
    const double *bp, *bx, *bv;
} fn_clock;

/* The periods one arrival at a time, where that is affordable (the
 * cycle's arrivals below 2e6).  In a period the i-th arrival is a tick
 * with p_i = r + (1 - r) A(x + i - 1) (A: not held by the active
 * filter), given the ones before were not: E[K] = sum_i P(K >= i), and
 * the repeats held by no filter sum P(K >= i)(1 - r) B.  One phase they
 * are the period's tick itself when it is a repeat: exact where cycles
 * are a few ticks long or gaps a few arrivals (the smooth clock below
 * puts every arrival of the period at its mean). */
/* The periods one arrival at a time: ek, fa,
 * nu, rein and xs per age, *exact = 1; else, past 2e6 arrivals or 2e7
 * steps, the smooth clock again. */
static int fn_periods(const rbf_model_params *p, const gap_surv *sv, const fn_clock *ck,
                      uint64_t len, double *xs, double *vs, double *ek, double *fa, double *nu,
                      double *rein, int *exact)
{
    const double r = ck->r, psi = ck->psi, nuend = ck->nuend, xN = ck->xN, vN = ck->vN;
    const int two = ck->two, oracle2 = ck->oracle2, sig = ck->sig, ret = ck->ret;
    const size_t nb = ck->nb;
    const double *bp = ck->bp, *bx = ck->bx, *bv = ck->bv;
    int periods = !*exact && xs[len] <= 2e6;
    if (periods) {
        /* A period's loop runs until the chance that the period is still
         * open is below 1e-13, about ln(1e-13 / nu) / ln(1 - nu) arrivals
         * at the smooth clock's rate nu.  When the sum passes the guard
         * below, the pass would most likely be abandoned there, after 2e7
         * steps (a quarter of a second at 10^6 bits): skip it at once.
         * (The estimate can be off where the rate moves within periods;
         * either way the smooth clock answers past the guard.) */
        double est = 0.0;
        for (uint64_t u = 0; u <= len && est <= 2e7; u++) {
            const double v = nu[u];
            est += v >= 1.0 ? 1.0 : v <= 1e-15 ? 65536.0 : fmin(65536.0, log(1e-13 / v) / log1p(-v));
        }
        if (est > 2e7)
            periods = 0;
    }
    for (uint64_t u = 0, guard = 0; periods && u <= len; u++) {
        if ((u & 4095) == 0 && u && model_progress(p, 64 + u / 4096, 64 + len / 4096 + 1))
            return RBF_ECANCELED;
        double x = u ? xs[u - 1] + ek[u - 1] : 0.0;
        xs[u] = x;
        double q = 1.0, EK = 0.0, ybar = 0.0, sa = 0.0, sb = 0.0, se = 0.0;
        for (unsigned i = 1; i <= 65536; i++, guard++) {
            double y = x + (double)(i - 1);
            /* the edge term once: A's and e's are the same value */
            const double ed = ret ? 0.0 : rbf__fn_surv_edge(sv, y, psi, nuend);
            double A = ret ? rbf__fn_surv_at(sv, y) : rbf__fn_surv_at(sv, y + 1.0) + ed;
            double B = 0.0, e = 0.0;
            if (!two) {
                B = A;
            } else if (oracle2) {
                B = rbf__fn_surv_sm(sv, y + xN, vN);
            } else if (sig && !ret) {
                e = ed;
            }
            double pt = r + (1.0 - r) * (oracle2 ? B : A);
            EK += q;
            ybar += q * y;
            sa += q * A;
            sb += q * B;
            se += q * e;
            if (pt >= 1.0)
                break;
            if (q * (1.0 - pt) < 1e-13 * EK || i == 65536) {
                /* the rest: geometric at the last rate */
                double rest = q * (1.0 - pt) / (pt > 1e-15 ? pt : 1e-15);
                EK += rest;
                ybar += rest * (y + 1.0 / (pt > 1e-15 ? pt : 1e-15));
                sa += rest * A;
                sb += rest * B;
                se += rest * e;
                break;
            }
            q *= 1.0 - pt;
        }
        ybar /= EK;
        if (two && !oracle2) { /* B: the frozen cycle, at the period's mean position */
            model_sum e2;
            msum_init(&e2);
            for (size_t b = 0; b < nb; b++)
                msum_add(&e2, bp[b] * rbf__fn_surv_sm(sv, ybar + bx[b], vs[u] + bv[b]));
            sb = msum_get(&e2) * EK + se;
        }
        ek[u] = EK;
        fa[u] = (1.0 - r) * sb;
        nu[u] = 1.0 / EK;
        double ra = (1.0 - r) * (sa - sb);
        rein[u] = ra > 0.0 ? ra / EK : 0.0;
        if (guard > 20000000)
            periods = 0; /* too long after all */
    }
    if (periods) {
        xs[len + 1] = xs[len] + ek[len];
        *exact = 1;
    } else if (!*exact) {
        /* the smooth clock, again where an abandoned pass wrote over it */
        fn_run(sv, r, len, xN, vN, nu, xs, vs);
    }
    return RBF_OK;
}

/* Forgotten by every filter (forg) and re-inserted from the frozen one
 * (rein), per arrival at age u, by the smooth clock. */
static int fn_forgotten(const rbf_model_params *p, const gap_surv *sv, const fn_clock *ck,
                        uint64_t len, const double *xs, const double *vs, const double *nu,
                        double *forg, double *rein)
{
    const double r = ck->r, psi = ck->psi, nuend = ck->nuend, xN = ck->xN, vN = ck->vN;
    const int two = ck->two, oracle2 = ck->oracle2, sig = ck->sig, ret = ck->ret;
    const size_t nb = ck->nb;
    const double *bp = ck->bp, *bx = ck->bx, *bv = ck->bv;
    for (uint64_t u = 0; u <= len; u++) {
        if ((u & 4095) == 0 && u && model_progress(p, 64 + u / 4096, 64 + len / 4096 + 1))
            return RBF_ECANCELED;
        /* the arrivals before a repeat of this age since the clear: its
         * period of 1/nu arrivals, chosen by arrival (size-biased), puts it
         * 1/nu - 1 after the period's start on average */
        double xm = xs[u] + (1.0 / nu[u] - 1.0), vm = vs[u], f, a;
        /* not held by the active filter: previous arrival before the
         * cycle, or (not retaining) the arrival that ended the last one */
        a = rbf__fn_surv_sm(sv, xm, vm);
        double edge = ret ? 0.0 : rbf__fn_surv_edge_sm(sv, xm, vm, psi, nuend);
        double edge0 = ret ? 0.0 : rbf__fn_surv_sm(sv, xm, vm) - rbf__fn_surv_sm(sv, xm + 1.0, vm);
        if (!two) {
            f = a - edge0 + edge;
        } else if (oracle2) {
            f = rbf__fn_surv_sm(sv, xm + xN, vm + vN);
        } else {
            model_sum e;
            msum_init(&e);
            for (size_t b = 0; b < nb; b++)
                msum_add(&e, bp[b] * rbf__fn_surv_sm(sv, xm + bx[b], vm + bv[b]));
            /* the trigger, held by neither filter */
            if (sig && !ret)
                msum_add(&e, edge);
            f = msum_get(&e);
        }
        forg[u] = f;
        rein[u] = a > f ? (1.0 - r) * (a - f) : 0.0;
    }
    return RBF_OK;
}

/* Without births the workload has finitely many messages, P = E[T]
 * (Kac: a message's mean return time), and a cycle's ticks are
 * distinct messages (a tick is held afterwards, a false positive too),
 * so L <= P.  The cycle law, of fresh messages, puts eps = P(L > P)
 * beyond: the chance that the pool's own bits cannot end a cycle (a
 * pool drawn once: that filter never recycles, no false negative).
 * The rest is the law given L <= P; fn is weighted by 1 - eps. */
/* fn_pool, for a finite pool (no births): the law given L <= P in new
 * tables *pmfl_out, *phill_out (the caller frees them), surv rescaled in
 * place, *pmf_io and *phil_io pointed at them and *keep_out = 1 - eps.
 * Returns 1 when the pool fits in the filter (stuck), else a status. */
static int fn_pool(const rbf_model_params *p, const rbf_model_cycle_spec *s, const gapdesc *dd,
                   uint64_t len, double *surv, const double **pmf_io, const double **phil_io,
                   double **pmfl_out, double **phill_out, double *keep_out)
{
    const gapdesc d = *dd;
    const double *pmf = *pmf_io, *phil = *phil_io;
    model_sum mt;
    msum_init(&mt);
    if (d.ncls) {
        for (size_t i = 0; i < d.ncls; i++)
            msum_add(&mt, d.w[i] / d.q[i]);
    } else {
        for (size_t i = 0; i < d.ngap; i++)
            msum_add(&mt, (double)d.t[i] * (d.hb[i] + d.hr[i]));
    }
    double Pm = d.tail > 0.0 ? INFINITY : msum_get(&mt);
    /* retaining: the trigger opening the next cycle is one more
     * message, so L <= P - 1 */
    const int rt = s->sigma && (p->recycle == RBF_RETAINING);
    if (Pm < (double)len + (rt ? 1.0 : 0.0)) {
        uint64_t Pc = (uint64_t)floor(Pm + 1e-9);
        if (rt)
            Pc = Pc ? Pc - 1 : 0;
        double eps = surv[Pc];
        if (!(eps < 1.0 - 1e-12)) {
            return 1; /* stuck: the pool fits in the filter */
        }
        const double keep = 1.0 - eps;
        *keep_out = keep;
        double *pmfl = *pmfl_out = rbf__malloc((len + 1) * sizeof *pmfl);
        double *phill = *phill_out = rbf__malloc((len + 1) * sizeof *phill);
        if (!pmfl || !phill)
            return RBF_ENOMEM;
        for (uint64_t u = 0; u <= len; u++) {
            pmfl[u] = u <= Pc ? pmf[u] / keep : 0.0;
            if (u < Pc && surv[u] > 0.0) {
                double fr = phil[u] / surv[u];
                surv[u] = (surv[u] - eps) / keep;
                phill[u] = fr * surv[u];
            } else {
                surv[u] = 0.0;
                phill[u] = 0.0;
            }
        }
        *pmf_io = pmfl;
        *phil_io = phill;
    }
    return RBF_OK;
}

/* The workload's gaps (d) for cycles of at most len ticks. */
static int fn_workload_gaps(const rbf_model_params *p, const rbf_model_workload *w, uint64_t len,
                            gapdesc *dp)
{
    int rc;
    switch (w->kind) {
    case RBF_WORKLOAD_UNIFORM:
    case RBF_WORKLOAD_ZIPF:
        rc = rbf__fn_gaps_geometric(w, dp);
        break;
    case RBF_WORKLOAD_FADING: {
        /* the longest x asked is about two cycles of arrivals, at most
         * (2 len + 3)/R: beyond tcut the gap law's rest is below 1e-15 */
        double g = 2.0 * (double)len + 3.0, R = w->new_fraction;
        double tc = R > 0.0 ? (g + 9.0 * sqrt(g / R) + 60.0) / R + 10.0 : 0.0;
        if (!(tc < 5e7)) {
            rc = RBF_ENOMEM;
            break;
        }
        rc = rbf__fn_gaps_fading(p, w, (uint64_t)tc, dp);
        break;
    }
    case RBF_WORKLOAD_TRACE:
        rc = rbf__fn_gaps_file(w, dp);
        break;
    default:
        rc = RBF_EINVAL;
    }
    return rc;
}

/* surv[u] = P(L > u), u = 0..len. */
static void fn_survival(const double *pmf, uint64_t len, double *surv)
{
    model_sum t;
    msum_init(&t);
    for (uint64_t u = len + 1; u-- > 0;) {
        surv[u] = msum_get(&t); /* P(L > u) */
        msum_add(&t, pmf[u]);
    }
}

int rbf_model_fn(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                 const rbf_model_workload *w, rbf_model_fn_result *out)
{
    return rbf_model_fn_with(NULL, p, s, w, out);
}

int rbf_model_fn_with(const rbf_model_cycles *given, const rbf_model_params *p,
                      const rbf_model_cycle_spec *s, const rbf_model_workload *w,
                      rbf_model_fn_result *out)
{
    if (!w || !out)
        return RBF_EINVAL;
    if (!RBF_RESERVED_ZERO(w))
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    rbf_model_cycles *c = NULL;
    int rc = given ? RBF_OK : rbf_model_cycles_new(p, s, &c);
    if (rc)
        return rc;
    const double *pmf, *phil;
    uint64_t len;
    double rhoF;
    const rbf_model_cycles *cc = given ? given : c;
    rbf__model_cycles_tables(cc, &pmf, &phil, &len, &rhoF);
    double *pmfl = NULL, *phill = NULL, keep = 1.0;
    gapdesc d;
    memset(&d, 0, sizeof d);
    gap_surv sv;
    memset(&sv, 0, sizeof sv);
    double *surv = NULL, *nu = NULL, *xs = NULL, *bx = NULL, *bp = NULL;
    double *forg = NULL, *rein = NULL, *delta = NULL, *dphi = NULL, *vs = NULL, *bv = NULL;
    double *ek = NULL, *fa = NULL;
    /* the per-age arrays, one zeroed block (rbf__alloc_lines: past 2 MiB
     * mapped on huge pages, a few page faults instead of one per 4 KiB) */
    double *blk = NULL;
    size_t blk_bytes = 0;
    rc = fn_workload_gaps(p, w, len, &d);
    if (rc)
        goto done;
    out->fp = rbf_model_cycles_fp(cc);
    out->cycle_mean = rbf_model_cycles_mean(cc);
    if (d.r >= 1.0) {
        out->tick_fraction = 1.0;
        goto done; /* no repeats: fn 0 */
    }
    if ((rc = rbf__fn_surv_build(&d, &sv)))
        goto done;
    {
        /* 10 arrays of len + 2 (some need len + 1), 3 of FN_BINS */
        const size_t ages = (size_t)len + 2;
        if (len >= SIZE_MAX / sizeof(double) / 16) {
            rc = RBF_ENOMEM;
            goto done;
        }
        blk_bytes = (10 * ages + 3 * (size_t)FN_BINS) * sizeof(double);
        if (!(blk = rbf__alloc_lines(blk_bytes))) {
            rc = RBF_ENOMEM;
            goto done;
        }
        double *at = blk;
        double **per_age[] = {&surv, &nu, &xs, &forg, &vs, &rein, &ek, &fa, &delta, &dphi};
        for (size_t i = 0; i < sizeof per_age / sizeof per_age[0]; i++, at += ages)
            *per_age[i] = at;
        bx = at;
        bp = at + FN_BINS;
        bv = at + 2 * FN_BINS;
    }
    fn_survival(pmf, len, surv);
    if (d.r <= 0.0) {
        rc = fn_pool(p, s, &d, len, surv, &pmf, &phil, &pmfl, &phill, &keep);
        if (rc == 1) {
            rc = RBF_OK;
            out->tick_fraction = 0.0; /* stuck: the pool fits in the filter */
            goto done;
        }
        if (rc)
            goto done;
    }
    const double r = d.r;
    const int two = s->phases == 2, oracle2 = two && s->oracle;
    /* where the arrival that ended the last cycle is held: sigma
     * non-retaining, by no filter (the trigger is not inserted); retaining,
     * by the fresh active one; N-bounded, by the closed filter */
    const int sig = s->sigma != 0, ret = sig && (p->recycle == RBF_RETAINING);
    double xN = 0.0, vN = 0.0;
    unsigned it = 1;
    fn_run(&sv, r, len, 0.0, 0.0, nu, xs, vs);
    if (oracle2) {
        rc = fn_oracle_cycle(p, &sv, r, len, nu, xs, vs, &xN, &vN, &it);
        if (rc == 1) {
            rc = RBF_OK;
            out->tick_fraction = 0.0; /* stuck: no tick, no recycle, fn 0 */
            goto done;
        }
        if (rc)
            goto done;
    }
    out->iterations = it;
    /* the frozen cycle (two phases, not the oracle): its arrivals x(L') in
     * bins of equal mass */
    size_t nb = two && !oracle2 ? fn_frozen_bins(pmf, len, ret, xs, nu, vs, bp, bx, bv) : 0;
    /* ticks per arrival on average (nubar) and where cycles end (nuend,
     * harmonic, weighted by P(L = u + 1)), and there the share of repeats
     * that are ticks */
    double nubar, nuend, psi;
    fn_clock_ends(surv, pmf, nu, len, d.prev_nu, r, &nubar, &nuend, &psi);
    /* The values per age, the first way that applies: pools in ticks, the
     * periods one arrival at a time, or the smooth clock. */
    int exact = 0;
    if (d.ncls) {
        uint64_t top = len; /* the last age a cycle reaches */
        while (top > 0 && !(ret ? surv[top - 1] > 0.0 : surv[top] > 0.0))
            top--;
        int cr = fn_classes(&d, pmf, len, top, two, oracle2, nu, ek, fa, rein);
        if (cr < 0) {
            rc = RBF_ENOMEM;
            goto done;
        }
        if (cr == 2) {
            memset(out, 0, sizeof *out); /* stuck: no recycle, no false negative */
            out->fp = rbf_model_cycles_fp(cc);
            out->cycle_mean = rbf_model_cycles_mean(cc);
            goto done;
        }
        exact = cr == 0;
    }
    fn_clock ck = {r, psi, nuend, xN, vN, two, oracle2, sig, ret, nb, bp, bx, bv};
    if ((rc = fn_periods(p, &sv, &ck, len, xs, vs, ek, fa, nu, rein, &exact)))
        goto done;
    /* forgotten by every filter, and re-inserted from the frozen one (per
     * arrival at age u) */
    if (!exact && (rc = fn_forgotten(p, &sv, &ck, len, xs, vs, nu, forg, rein)))
        goto done;
    double rF = rhoF;
    if (two)
        fn_shared_bits(p, rhoF, len, oracle2, rein, nu, delta, dphi, &rF);
    rc = fn_totals(len, ret, two, exact, r, keep, surv, phil, nu, ek, fa, forg, dphi, delta, rF,
                   out);
done:
    if (blk)
        rbf__free_lines(blk, blk_bytes);
    rbf__free(pmfl);
    rbf__free(phill);
    rbf__fn_surv_free(&sv);
    rbf__fn_gap_free(&d);
    rbf_model_cycles_free(c);
    return rc;
}
