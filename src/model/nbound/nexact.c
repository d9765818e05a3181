/*
 * nexact.c -- the exact N-bounded rates exact_worst = E[rho(B_N)] and
 * exact_oracle = sum_{n<N} E[rho(B_n)] / N at any M and N in milliseconds
 * (docs/models.md 3b, "Exact N-bounded rates, fast").
 *
 * A specific set of j bits is all set after n messages with probability
 * P_j(n) = sum_i (-1)^i C(j,i) F(i) = (-1)^j Delta^j F(0), F(x) = q(x)^n,
 * q(x) the chance that one message misses x given bits: (1 - x/M)^k
 * colliding, prod_{p<k} (1 - x/(M-p)) non-colliding.  By the repeated mean
 * value theorem Delta^j F(0) = E[F^(j)(S_j)], S_j the sum of j independent
 * uniforms on [0,1] (Irwin-Hall), and (-1)^j F^(j) > 0: a positive
 * integrand, so tiny values keep their relative precision.  Then
 *   colliding:      E[rho(B_n)] = sum_j S(k,j) (M)_j / M^k P_j(n),
 *                   (-1)^j F^(j)(s) = (t)_j M^-j (1 - s/M)^(t-j), t = nk;
 *   non-colliding:  E[rho(B_n)] = P_k(n),
 *                   (-1)^k F^(k)(s) = F(s) k! [z^k] prod_p (1 + z/(M-p-s))^n
 *                                   = F(s) (t)_k ybar^k K(s),
 *                   ybar = 1/(M - s - (k-1)/2), K = 1 + O(k^3/M^2).
 * E[g(S_j)] with g(s) = e^{-as} e^{L(s)}, a = t/M: the tilt e^{-as} is
 * exact (E[e^{-aS}] = phi(a)^j, phi(a) = (1-e^{-a})/a; under the tilted law
 * S is a sum of j truncated exponentials), and L varies by O(k(1+a)/M) over
 * [0, j], so E_a[e^{L(S)}] = e^{L(mu)} sum_m e_m mu_m, e_m the Taylor
 * coefficients of e^{L(mu+x) - L(mu)} and mu_m the central moments of the
 * tilted S_j (from its cumulants j kappa_r).  Each evaluation returns an
 * estimate of its relative error (the last terms of every truncated series
 * plus rounding); the caller falls back to the propagated chain when the
 * accumulated estimate is not far below 1e-9.
 *
 * The real user (rbf__nreal_fast, further down) uses potentials of the
 * fill chain and the renewal sums of asym.c.
 */
#include <stdlib.h>
#include <string.h>

#include "model_nbound.h"
#include "rbf_alloc.h"

#define NX_R 18      /* central moments of the tilted S_j used */
#define NX_KM 64     /* terms of the non-colliding correction K */
#define NX_DIRECT 4096
#define NX_GL 20
#define NX_TOL 1e-11 /* accepted accumulated relative error estimate */
#define FL_SLACK 3.0 /* around fl_cut the propagation decides (1.5 where
                      * it would take seconds, none where minutes) */
#define NR_TOL 2e-10 /* the same for the real user (its estimate is 2-300x
                      * above the measured gaps) */
#define NR_TOL_SOFT 1e-9 /* where the propagation would take seconds: the
                          * estimate carried to exact_real, est (1 - real).
                          * Over 133 grid points within it (2^16 ... 2^21
                          * bits, k = 2 ... 32, up to 0.995 of a whole
                          * filling) the largest gap to the propagation was
                          * 1.0e-10 in exact_real */

typedef struct nx_ctx {
    uint64_t M;
    unsigned k;
    int nc;
    double Md, lM;
    double *lS; /* log S(k, j), j = 0..k */
    double err; /* accumulated absolute error estimate of the last sum */
} nx_ctx;

static double lse2(double x, double y)
{
    if (x == -INFINITY)
        return y;
    if (y == -INFINITY)
        return x;
    return x > y ? x + log1p(exp(y - x)) : y + log1p(exp(x - y));
}

static int nx_init(nx_ctx *c, uint64_t M, unsigned k, int nc)
{
    memset(c, 0, sizeof *c);
    c->M = M;
    c->k = k;
    c->nc = nc;
    c->Md = (double)M;
    c->lM = log((double)M);
    if (nc)
        return RBF_OK;
    /* log Stirling numbers of the second kind, row by row */
    double *row = rbf__malloc(((size_t)k + 1) * sizeof *row);
    if (!row)
        return RBF_ENOMEM;
    row[0] = 0.0; /* S(0,0) = 1 */
    for (unsigned j = 1; j <= k; j++)
        row[j] = -INFINITY;
    for (unsigned m = 1; m <= k; m++) {
        for (unsigned j = m; j >= 1; j--)
            row[j] = lse2(log((double)j) + row[j], row[j - 1]);
        row[0] = -INFINITY;
    }
    c->lS = row;
    return RBF_OK;
}

static void nx_free(nx_ctx *c) { rbf__free(c->lS); }

/* Raw moments m[0..R] of U_a, density a e^{-au}/(1-e^{-a}) on [0, 1]:
 * I_r = int_0^1 u^r a e^{-au} du = -e^{-a} + (r/a) I_{r-1}, forward when
 * a > R (stable), else backward from far above (errors shrink by a/r). */
static void ua_moments(double a, double *m)
{
    double ea = exp(-a), I0 = -expm1(-a);
    double I[NX_R + 1];
    if (a > (double)NX_R + 1.0) {
        I[0] = I0;
        for (unsigned r = 1; r <= NX_R; r++)
            I[r] = -ea + ((double)r / a) * I[r - 1];
    } else {
        unsigned top = NX_R + 80;
        double v = a / ((double)top + 1.0); /* rough start; its error dies out */
        for (unsigned r = top; r >= 1; r--) {
            v = (a / (double)r) * (v + ea); /* v = I_{r-1} */
            if (r - 1 <= NX_R)
                I[r - 1] = v;
        }
    }
    for (unsigned r = 0; r <= NX_R; r++)
        m[r] = I[r] / I0;
}

/* Cumulants kap[1..R] of U_a from its raw moments:
 * kappa_r = m_r - sum_{i<r} C(r-1, i-1) kappa_i m_{r-i}. */
static void ua_cumulants(const double *m, double *kap)
{
    kap[0] = 0.0;
    for (unsigned r = 1; r <= NX_R; r++) {
        double s = m[r], b = 1.0; /* b = C(r-1, i-1) */
        for (unsigned i = 1; i < r; i++) {
            s -= b * kap[i] * m[r - i];
            b = b * (double)(r - i) / (double)i;
        }
        kap[r] = s;
    }
}

/* Central moments mu[0..R] of S_j / sc (sc a scale), from cumulants j kap. */
static void sj_central(const double *kap, double j, double sc, double *mu)
{
    double K[NX_R + 1];
    double f = 1.0;
    for (unsigned r = 1; r <= NX_R; r++) {
        f /= sc;
        K[r] = j * kap[r] * f;
    }
    K[1] = 0.0;
    mu[0] = 1.0;
    mu[1] = 0.0;
    for (unsigned r = 2; r <= NX_R; r++) {
        /* mu_r = sum_{i=2}^{r} C(r-1, i-1) K_i mu_{r-i} */
        double s = 0.0, b = 1.0; /* b = C(r-1, i-1), start i = 1 */
        for (unsigned i = 2; i <= r; i++) {
            b = b * (double)(r - i + 1) / (double)(i - 1);
            s += b * K[i] * mu[r - i];
        }
        mu[r] = s;
    }
}

/* E[e^{L(mu+x) - L(mu)}] for x = S - mu with scaled Taylor coefficients
 * l[1..R] (of y = x/sc) and scaled central moments mu[]; *err: estimate of
 * the truncation error. */
static double exp_series_mean(const double *l, const double *mu, double *err)
{
    double e[NX_R + 1];
    e[0] = 1.0;
    double s = 1.0, last = 0.0, prev = 0.0;
    for (unsigned m = 1; m <= NX_R; m++) {
        double v = 0.0;
        for (unsigned r = 1; r <= m; r++)
            v += (double)r * l[r] * e[m - r];
        e[m] = v / (double)m;
        double term = e[m] * mu[m];
        s += term;
        prev = last;
        last = fabs(term);
    }
    *err = 4.0 * (last + prev);
    return s;
}

/* Non-colliding: K(s) = sum_m (k)_m / prod_{i=1..m} (t-k+i) chat_m, chat the
 * coefficients of prod_p (1 + (1+eps_p) z)^n / (1+z)^{nk}, eps_p =
 * (p-h)/(M-p-s), by the exp series of dhat_r = (-1)^{r+1} (n/r) sum_p
 * ((1+eps_p)^r - 1).  *err: truncation estimate (absolute). */
static double nc_K(const nx_ctx *c, double n, double t, double mean, double *err)
{
    const unsigned K = c->k;
    const double M = c->Md, k = (double)c->k, h = 0.5 * (k - 1.0);
    /* K(mean): [z^k] of prod_p (1+y_p z)^n over (1+ybar z)^{nk}, by
     * the exp series of dhat_r = (-1)^{r+1} (n/r) sum_p ((1+eps_p)^r - 1) */
    unsigned KM = K < NX_KM ? K : NX_KM;
    double d[NX_KM + 1], cc[NX_KM + 1], P[NX_KM + 1];
    for (unsigned r = 1; r <= KM; r++)
        P[r] = 0.0;
    for (unsigned p = 0; p < K; p++) {
        double eps = ((double)p - h) / (M - (double)p - mean), e = 1.0;
        for (unsigned i = 1; i <= KM; i++) {
            e *= eps;
            P[i] += e;
        }
    }
    /* sum_p ((1+eps_p)^r - 1) = sum_{i=1..r} C(r,i) P_i */
    for (unsigned r = 1; r <= KM; r++) {
        double v = 0.0, b = 1.0;
        for (unsigned i = 1; i <= r; i++) {
            b = b * (double)(r - i + 1) / (double)i;
            v += b * P[i];
        }
        d[r] = ((r & 1) ? 1.0 : -1.0) * n * v / (double)r;
    }
    cc[0] = 1.0;
    double Ksum = 1.0, wm = 1.0, lastK = 0.0;
    for (unsigned mm = 1; mm <= KM; mm++) {
        double v = 0.0;
        for (unsigned r = 1; r <= mm; r++)
            v += (double)r * d[r] * cc[mm - r];
        cc[mm] = v / (double)mm;
        wm *= (k - (double)mm + 1.0) / (t - k + (double)mm);
        double term = wm * cc[mm];
        Ksum += term;
        lastK = fabs(term);
    }
    *err = KM < K ? 4.0 * lastK : 0.0;
    return Ksum;
}

/* E[rho(B_n)] at real n >= 1, and *rel: estimate of its relative error
 * (INFINITY where the expansions do not apply). */
static double nx_eval(const nx_ctx *c, double n, double *rel)
{
    const double M = c->Md, k = (double)c->k;
    const double t = n * k, a = t / M;
    double m[NX_R + 1], kap[NX_R + 1], mu[NX_R + 1], l[NX_R + 1];
    ua_moments(a, m);
    ua_cumulants(m, kap);
    const double lphi = log(-expm1(-a)) - log(a);
    double errsum = 0.0;

    if (c->nc) {
        const unsigned K = c->k;
        const double h = 0.5 * (k - 1.0);
        const double mean = k * m[1];
        double sc = sqrt(k * kap[2]);
        if (!(sc > 0.0))
            sc = 1.0;
        sj_central(kap, k, sc, mu);
        double lF = 0.0;
        double Pw[NX_R + 1];
        for (unsigned r = 0; r <= NX_R; r++)
            Pw[r] = 0.0;
        for (unsigned p = 0; p < K; p++) {
            double D = M - (double)p;
            lF += log1p(-mean / D);
            double u = sc / (D - mean), w = 1.0;
            for (unsigned r = 1; r <= NX_R; r++) {
                w *= u;
                Pw[r] += w;
            }
        }
        lF *= n;
        double Db = M - h - mean, ub = sc / Db, w = 1.0;
        for (unsigned r = 1; r <= NX_R; r++) {
            w *= ub;
            l[r] = (-n * Pw[r] + k * w) / (double)r;
        }
        l[1] += a * sc;
        /* K(s) enters through the first two Taylor coefficients of log K
         * at the mean (differences at +-sc); the next order is smaller by
         * about (sc + k)/(M - k - mean) */
        double kerr, kerr1, kerr2;
        double Ksum = nc_K(c, n, t, mean, &kerr);
        double Kp = nc_K(c, n, t, mean + sc, &kerr1), Km = nc_K(c, n, t, mean - sc, &kerr2);
        double c1 = 0.5 * (log(Kp) - log(Km)), c2 = 0.5 * (log(Kp) + log(Km) - 2.0 * log(Ksum));
        l[1] += c1;
        l[2] += c2;
        errsum += (kerr + kerr1 + kerr2) / Ksum +
                  4.0 * (fabs(c1) + fabs(c2)) * (sc + k) / (M - k - mean);
        double te;
        double E = exp_series_mean(l, mu, &te);
        errsum += te / E;
        double lt = 0.0;
        for (unsigned i = 0; i < K; i++)
            lt += log(t - (double)i);
        double lv = lt + k * lphi + a * mean + lF - k * log(Db) + log(E) + log(Ksum);
        *rel = errsum + 1e-13 + 4e-16 * fabs(lv);
        if (!(M - k - mean > 2.0 * (sc + k)) || !isfinite(lv) || !(*rel >= 0.0))
            *rel = INFINITY; /* M too close to k for the expansions */
        return exp(lv);
    }

    /* colliding: sum over j of S(k,j) (M)_j/M^k (t)_j/M^j E[(1-S_j/M)^(t-j)] */
    const unsigned K = c->k;
    double lpre[RBF_MAX_HASHES + 1];
    double lmj = 0.0, ltj = 0.0, lmax = -INFINITY;
    unsigned jmax = 0;
    for (unsigned j = 1; j <= K; j++) {
        double i = (double)(j - 1);
        if (t - i <= 0.0)
            break;
        lmj += log1p(-i / M);
        ltj += log((t - i) / M);
        jmax = j;
        lpre[j] = c->lS[j] + lmj - (k - (double)j) * c->lM + ltj + (double)j * lphi;
        if (lpre[j] > lmax)
            lmax = lpre[j];
    }
    double acc = 0.0, eacc = 0.0, lref = lmax + 1.0;
    for (unsigned j = 1; j <= jmax; j++) {
        if (lpre[j] < lmax - 60.0)
            continue;
        double jd = (double)j, mean = jd * m[1];
        double sc = sqrt(jd * kap[2]);
        if (!(sc > 0.0))
            sc = 1.0;
        sj_central(kap, jd, sc, mu);
        double tj = t - jd, D = M - mean, u = sc / D, w = 1.0;
        for (unsigned r = 1; r <= NX_R; r++) {
            w *= u;
            l[r] = -tj * w / (double)r;
        }
        l[1] += a * sc;
        double te;
        double E = exp_series_mean(l, mu, &te);
        double lt = lpre[j] + a * mean + tj * log1p(-mean / M) + log(E) - lref;
        double v = exp(lt);
        acc += v;
        eacc += v * te / E;
    }
    double lv = lref + log(acc);
    *rel = eacc / acc + 1e-13 + 4e-16 * fabs(lv);
    if (!isfinite(lv) || !(*rel >= 0.0))
        *rel = INFINITY;
    return exp(lv);
}

/* ---- sums over n */

/* sum_{n=a..c} f(n) by Euler-Maclaurin (f smooth on min(n/k, 1/|Lq|) >=
 * 128), integral by Gauss-Legendre panels; c->err accumulates. */
static double nx_em(nx_ctx *c, double Lq, double a, double b)
{
    model_sum s;
    msum_init(&s);
    double r;
    const double k = (double)c->k;
#define F(x) (nx_eval(c, (x), &r))
#define FE(x, dst)                                                                                 \
    do {                                                                                           \
        dst = F(x);                                                                                \
        c->err += fabs(dst) * r;                                                                   \
    } while (0)
    double fa, fb, fa1, fa_1, fa2, fa_2, fb1, fb_1, fb2, fb_2;
    FE(a, fa);
    FE(b, fb);
    FE(a + 1, fa1);
    FE(a - 1, fa_1);
    FE(a + 2, fa2);
    FE(a - 2, fa_2);
    FE(b + 1, fb1);
    FE(b - 1, fb_1);
    FE(b + 2, fb2);
    FE(b - 2, fb_2);
    double d1a = (8.0 * (fa1 - fa_1) - (fa2 - fa_2)) / 12.0;
    double d1b = (8.0 * (fb1 - fb_1) - (fb2 - fb_2)) / 12.0;
    double d3a = (fa2 - 2.0 * fa1 + 2.0 * fa_1 - fa_2) / 2.0;
    double d3b = (fb2 - 2.0 * fb1 + 2.0 * fb_1 - fb_2) / 2.0;
    msum_add(&s, 0.5 * (fa + fb));
    msum_add(&s, (d1b - d1a) / 12.0);
    msum_add(&s, -(d3b - d3a) / 720.0);
    double gx[NX_GL], gw[NX_GL];
    rbf__model_gauss_legendre(NX_GL, gx, gw);
    double x = a, scale = 2.0 / fabs(Lq);
    while (x < b) {
        double hh = 4.0 * x / (k + 2.0);
        if (hh > scale)
            hh = scale;
        if (hh > b - x || b - x - hh < 1e-9 * b)
            hh = b - x;
        double mid = x + 0.5 * hh, half = 0.5 * hh, acc = 0.0, eacc = 0.0;
        for (unsigned i = 0; i < NX_GL; i++) {
            double v = F(mid + half * gx[i]);
            acc += gw[i] * v;
            eacc += gw[i] * fabs(v) * r;
        }
        msum_add(&s, acc * half);
        c->err += eacc * half;
        x += hh;
    }
#undef F
#undef FE
    return msum_get(&s);
}

/* 1 - E[rho(B_n)] <= k E[#clear bits]/(M-k+1) = k M/(M-k+1) q1^n with
 * q1 = (1-1/M)^k (colliding) or 1 - k/M (non-colliding).  log q1: */
static double nx_logq1(const nx_ctx *c)
{
    return c->nc ? log1p(-(double)c->k / c->Md) : (double)c->k * log1p(-1.0 / c->Md);
}

/* sum_{n<N} E[rho(B_n)] (term n = 0 is 0) and E[rho(B_N)]; *relerr the
 * estimate of the larger of the two relative errors.  *nsat: the first n
 * with M q1^n < 1e-30 (P(some bit clear) below it). */
static double nx_sum(nx_ctx *c, uint64_t N, double *worst, double *relerr, uint64_t *nsat)
{
    const double Lq = nx_logq1(c);
    const double M = c->Md, k = (double)c->k;
    /* where 1 - E[rho] <= k M/(M-k+1) q1^n < 2^-60: the terms are 1 */
    double tsat = (log(k * M / (M - k + 1.0)) + 60.0 * log(2.0)) / -Lq;
    double ns = ceil((log(M) + 30.0 * log(10.0)) / -Lq);
    *nsat = ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX;
    double r;
    c->err = 0.0;
    /* worst */
    double w;
    if ((double)N > tsat) {
        w = 1.0;
        r = 0.0;
    } else {
        w = nx_eval(c, (double)N, &r);
    }
    *worst = model_clamp01(w);
    double rw = r;
    model_sum s;
    msum_init(&s);
    uint64_t nd = N < NX_DIRECT + 512 ? N : NX_DIRECT;
    for (uint64_t n = 1; n < nd; n++) {
        if ((double)n > tsat) {
            msum_add(&s, (double)(nd - n));
            break;
        }
        double v = nx_eval(c, (double)n, &r);
        msum_add(&s, v);
        c->err += v * r;
    }
    if (nd < N) {
        double last = (double)(N - 1);
        double cend = last;
        if (tsat < last) {
            cend = floor(tsat);
            if (cend < (double)nd + 512.0)
                cend = (double)nd + 512.0;
            if (cend > last)
                cend = last;
        }
        msum_add(&s, nx_em(c, Lq, (double)nd, cend));
        if (cend < last)
            msum_add(&s, last - cend);
    }
    double S = msum_get(&s);
    double ro = S > 0.0 ? c->err / S : 0.0;
    *relerr = rw > ro ? rw : ro;
    return S;
}

/* exact_worst and exact_oracle at N by the fast method.  Returns 1 when its
 * error estimate is not far enough below 1e-9 (the caller runs the chain),
 * else a status. */
int rbf__nexact_fast(const rbf_model_params *p, uint64_t N, double *worst, double *oracle,
                     uint64_t *saturated_at, double *relerr)
{
    nx_ctx c;
    int rc = nx_init(&c, p->bits, p->hashes, p->hashing == RBF_NON_COLLIDING);
    if (rc)
        return rc;
    double re;
    uint64_t nsat;
    double S = nx_sum(&c, N, worst, &re, &nsat);
    nx_free(&c);
    if (relerr)
        *relerr = re;
    if (!(re <= NX_TOL) || !isfinite(S))
        return 1;
    *oracle = model_clamp01(S / (double)N);
    *saturated_at = N > nsat ? nsat : 0;
    return RBF_OK;
}

/* One term, for tests: E[rho(B_n)] by the fast evaluator. */
double rbf__nexact_term(const rbf_model_params *p, uint64_t n, double *relerr)
{
    nx_ctx c;
    if (nx_init(&c, p->bits, p->hashes, p->hashing == RBF_NON_COLLIDING))
        return NAN;
    double r;
    double v = n == 0 ? 0.0 : nx_eval(&c, (double)n, &r);
    nx_free(&c);
    if (relerr)
        *relerr = n == 0 ? 0.0 : r;
    return v;
}

/* ---- the real user at any load (docs/models.md 3b, "exact_real")
 *
 * Potentials of the unconditioned fill chain (K its one-message kernel):
 * J with (K - I) J = 1 - rho (one per bit-setting message) and P with
 * (K - I) P = rho (one per false positive), J(0) = P(0) = 0.  Both exist
 * in closed form (a polynomial in the clear bits plus harmonic numbers)
 * and are smooth.  Optional stopping at the end of a real-user cycle
 * (B'_N bits after N bit-setting messages) gives E[J(B'_N)] = N exactly and
 * E_fp = E[P(B'_N)].  With G = P o J^-1, Y = J(B'_N):
 *   E_fp = G(N) + G'' mu2/2 + G''' mu3/6 + G'''' mu4/24 + O(N^-3) G,
 * mu the central moments of Y (nr_terms below).  J and P at a level
 * b come from the renewal sums of asym.c (optional stopping at the first
 * level >= b): J(b) = sum_{i<b} g_i (1 - rho_i) - ov_J(b),
 * P(b) = sum_{i<b} g_i rho_i - ov_P(b), ov the overshoot terms. */

typedef struct nr_ctx {
    const model_asym *a;
    uint64_t M;
    unsigned k;
    int nc;
    double *tau; /* k + 1, then 5 k overshoot laws (nr_JP) */
} nr_ctx;

/* Overshoot sums at b: sum_j O_j S_j for J and P, and (mom != NULL) the
 * overshoot's raw moments mom[r-1] = sum_j O_j j^r, r = 1..4, and (O !=
 * NULL) O_j for j = 0..k-1 (O_0 left 0: it adds nothing); O_j = P(first
 * level >= b is b+j) = sum_i g_i tau(i, b+j-i), S_j the renewal sums over
 * [b, b+j) of g (1 - rho) (J) and g rho (P). */
static void nr_over(const nr_ctx *c, uint64_t b, double *oJ, double *oP, double *mom, double *O)
{
    const unsigned k = c->k;
    double ovJ = 0.0, ovP = 0.0, m[4] = {0.0, 0.0, 0.0, 0.0};
    if (O)
        memset(O, 0, (size_t)k * sizeof *O);
    for (unsigned back = 1; back <= k && back <= b; back++) {
        uint64_t i = b - back;
        double gi = rbf__asym_g(c->a, i);
        rbf__model_step_dist(c->M, k, c->nc, i, c->tau);
        for (unsigned d = back; d <= k; d++) {
            unsigned j = d - back; /* lands at b + j */
            if (j == 0 || b + j >= c->M)
                continue;
            double o = gi * c->tau[d], sJ = 0.0, sP = 0.0;
            for (uint64_t l = b; l < b + j; l++) {
                double gl = rbf__asym_g(c->a, l);
                sJ += gl * rbf__model_one_minus_rho(c->M, k, c->nc, l);
                sP += gl * rbf__model_rho(c->M, k, c->nc, l);
            }
            ovJ += o * sJ;
            ovP += o * sP;
            if (O)
                O[j] += o;
            double jp = o;
            for (unsigned r = 0; r < 4; r++) {
                jp *= (double)j;
                m[r] += jp;
            }
        }
    }
    *oJ = ovJ;
    *oP = ovP;
    if (mom)
        memcpy(mom, m, sizeof m);
}

/* J(b) and P(b) at an integer b >= b1 + k + 2 */
static int nr_JP(const nr_ctx *c, uint64_t b, double *J, double *P)
{
    double fp, en0;
    int rc = rbf__asym_eval(c->a, b, 0, &fp, &en0);
    if (rc)
        return rc;
    const unsigned k = c->k;
    double gb = rbf__asym_g(c->a, b), rb = rbf__model_rho(c->M, k, c->nc, b);
    double F1 = en0, F2 = fp * (en0 + gb) - gb * rb;
    /* ov(b) = sum_j O_j (X(b+j) - X(b)), X = J or P; X(l+1) - X(l) =
     * (renewal term at l) - (ov(l+1) - ov(l)), so ov = ov0 - T ov with
     * ov0 = sum_j O_j S_j and (T f)(l) = sum_j O_j(l) (f(l+j) - f(l)).
     * ov is smooth: solved by fixed-point iteration on 5 levels b + i h
     * (h 1/32 of ov0's scale), f(l+j) from the quartic through them.  T
     * is about k E[j]/b, and its coefficients change with l on the scale
     * of M: a constant-coefficient series missed 1e-10 of P at light load
     * (M = 2^18, k = 12); four iterations leave T^5. */
    double L = fmin((double)b / ((double)k + 1.0), (double)(c->M - b));
    uint64_t h = L >= 64.0 ? (uint64_t)(L / 32.0) : 1;
    if (b < c->a->b1 + 2 * h)
        h = 1;
    double fJ[5], fP[5], vJ[5], vP[5], *O = c->tau + k + 1;
    for (int i = 0; i < 5; i++) {
        uint64_t l = b + (uint64_t)((int64_t)(i - 2) * (int64_t)h);
        nr_over(c, l, &fJ[i], &fP[i], NULL, O + (size_t)i * k);
        vJ[i] = fJ[i];
        vP[i] = fP[i];
    }
    const double hd = (double)h;
    for (unsigned it = 0; it < 4; it++) {
        double nJ[5], nP[5];
        for (int i = 0; i < 5; i++) {
            double tJ = 0.0, tP = 0.0;
            const double *Oi = O + (size_t)i * k;
            for (unsigned j = 1; j < k; j++) {
                if (Oi[j] == 0.0)
                    continue;
                /* Lagrange weights at x = (i - 2) + j/h on nodes -2..2 */
                double x = (double)(i - 2) + (double)j / hd, w[5];
                for (int q = 0; q < 5; q++) {
                    double num = 1.0, den = 1.0;
                    for (int r = 0; r < 5; r++)
                        if (r != q) {
                            num *= x - (double)(r - 2);
                            den *= (double)(q - r);
                        }
                    w[q] = num / den;
                }
                double pJ = 0.0, pP = 0.0;
                for (int q = 0; q < 5; q++) {
                    pJ += w[q] * vJ[q];
                    pP += w[q] * vP[q];
                }
                tJ += Oi[j] * (pJ - vJ[i]);
                tP += Oi[j] * (pP - vP[i]);
            }
            nJ[i] = fJ[i] - tJ;
            nP[i] = fP[i] - tP;
        }
        memcpy(vJ, nJ, sizeof nJ);
        memcpy(vP, nP, sizeof nP);
    }
    double ov[2] = {vJ[2], vP[2]};
    *J = F1 - F2 - ov[0];
    *P = F2 - ov[1];
    return RBF_OK;
}

/* ---- the second-order terms to O(1/M^2) (docs/models.md 3b, "exact_real")
 *
 * Y = J(B'_N), M_c = J(B'_c) - c a martingale with conditional variance
 * v(b) and third moment w(b) per step.  E[G(Y)] = G(N) + G'' mu2/2 +
 * G''' mu3/6 + G'''' mu4/24 + O(N^-3) G, with
 *   mu2 = E[V(B'_N)], V the potential of v ((K' - I) V = v, V(0) = 0):
 *         H(N) + H''(N) mu2/2, H = V o J^-1, H'' = v'(b)/J'(b);
 *   mu3 = sum_c E[w] + 3 sum_c E[M_c v(B'_c)]
 *       = int_0^b* J' (w - 3 v^2) db + 3 v(b*) mu2 (to leading order);
 *   mu4 = 3 mu2^2 (to leading order).
 * v needs O(1/M) relative accuracy: with J' = u, u = u0 - u0' E[D'^2] /
 * (2 E[D']) (u0 = (1 - rho)/E[D], the Taylor expansion of (K - I) J =
 * 1 - rho), v = u^2 Var(D') + u u0' Cov(D', D'^2), w = u^3 kappa_3(D'),
 * D' the bits a bit-setting message sets. */

/* rho, 1 - rho and d rho/db at a real level x >= 0 (non-colliding below
 * k: the polynomial, by its product) */
static void nr_rho_x(const nr_ctx *c, double x, double *rho, double *omr, double *drho)
{
    const double Md = (double)c->M;
    const unsigned k = c->k;
    if (!c->nc) {
        double l = (double)k * log(x / Md);
        *rho = exp(l);
        *omr = -expm1(l);
        *drho = (double)k / Md * pow(x / Md, (double)k - 1.0);
        return;
    }
    if (x < (double)k + 1.0) {
        double r = 1.0, d = 0.0;
        for (unsigned p = 0; p < k; p++) {
            double f = (x - (double)p) / (Md - (double)p);
            d = d * f + r / (Md - (double)p);
            r *= f;
        }
        *rho = r;
        *omr = 1.0 - r;
        *drho = d;
        return;
    }
    double l = 0.0, s = 0.0;
    for (unsigned p = 0; p < k; p++) {
        l += log((x - (double)p) / (Md - (double)p));
        s += 1.0 / (x - (double)p);
    }
    *rho = exp(l);
    *omr = -expm1(l);
    *drho = *rho * s;
}

/* Var(D'), its third central moment and (k4 may be NULL) its fourth
 * cumulant at an integer level b */
static void nr_dmom_int(const nr_ctx *c, uint64_t b, double *var, double *k3, double *k4)
{
    rbf__model_step_dist(c->M, c->k, c->nc, b, c->tau);
    double m0 = 0.0, m1 = 0.0;
    for (unsigned d = 1; d <= c->k; d++) {
        m0 += c->tau[d];
        m1 += (double)d * c->tau[d];
    }
    *var = *k3 = 0.0;
    if (k4)
        *k4 = 0.0;
    if (!(m0 > 0.0))
        return;
    double mean = m1 / m0, v = 0.0, t = 0.0, f = 0.0;
    for (unsigned d = 1; d <= c->k; d++) {
        double e = (double)d - mean, e2 = e * e;
        v += e2 * c->tau[d];
        t += e2 * e * c->tau[d];
        f += e2 * e2 * c->tau[d];
    }
    *var = v / m0;
    *k3 = t / m0;
    if (k4)
        *k4 = f / m0 - 3.0 * (*var) * (*var);
}

/* Var(J-step | a bit-setting message at b) per unit of J'(b)^2: the
 * variance of the bits such a message sets */
static double nr_vard(const nr_ctx *c, uint64_t b)
{
    double v, k3;
    nr_dmom_int(c, b, &v, &k3, NULL);
    return v;
}

/* Var(Y) to level bs: int_0^bs J'(b)^3 Var(D'(b)) db (Gauss-Legendre) */
static double nr_var(const nr_ctx *c, double bs)
{
    const uint64_t M = c->M;
    const unsigned k = c->k;
    const int nc = c->nc;
    const double Md = (double)M, C = c->a->C;
    double gx[NX_GL], gw[NX_GL];
    rbf__model_gauss_legendre(NX_GL, gx, gw);
    double V = 0.0;
    const unsigned PAN = 24;
    for (unsigned q = 0; q < PAN; q++) {
        double x0 = bs * (double)q / PAN, x1 = bs * (double)(q + 1) / PAN;
        double mid = 0.5 * (x0 + x1), half = 0.5 * (x1 - x0), acc = 0.0;
        for (unsigned i = 0; i < NX_GL; i++) {
            double x = mid + half * gx[i];
            uint64_t bi = (uint64_t)x;
            double Jp = C * rbf__model_one_minus_rho(M, k, nc, bi) / (Md - x);
            acc += gw[i] * Jp * Jp * Jp * nr_vard(c, bi);
        }
        V += acc * half;
    }
    return V;
}

/* At a real level x: pi (the smooth visit density C (1 - rho)/(M - x)),
 * u = J', v and w as above */
static void nr_local(const nr_ctx *c, double x, double *pi, double *u, double *v, double *w)
{
    const double Md = (double)c->M, z = Md - x;
    double rho, omr, drho;
    nr_rho_x(c, x, &rho, &omr, &drho);
    double p1 = c->nc ? (double)c->k / Md : -expm1((double)c->k * log1p(-1.0 / Md));
    double m1 = z * p1; /* E[D] */
    double u0 = omr / m1;
    double du0 = -drho / m1 + u0 / z;
    uint64_t b = (uint64_t)x;
    double f = x - (double)b, va, ka, vb = 0.0, kb = 0.0;
    nr_dmom_int(c, b, &va, &ka, NULL);
    if (f > 0.0 && b + 1 < c->M)
        nr_dmom_int(c, b + 1, &vb, &kb, NULL);
    double var = va + f * (vb - va), k3 = ka + f * (kb - ka);
    double mean = 1.0 / u0; /* E[D'] = E[D]/(1 - rho) */
    double ed2 = var + mean * mean;
    double uu = u0 - du0 * ed2 / (2.0 * mean);
    double cov2 = 2.0 * mean * var + k3;
    *pi = c->a->C * omr / z;
    *u = uu;
    *v = uu * uu * var + uu * du0 * cov2;
    *w = uu * uu * uu * k3;
}

/* Fornberg's weights: derivatives 0..NR_ND-1 at x0 of the polynomial
 * through (xs[j], ys[j]), j < n (n <= NR_ND) */
#define NR_ND 11
#define NR_HW 5 /* the stencil's levels either side of b* */
static void nr_fornberg(double x0, const double *xs, const double *ys, unsigned n, double *der)
{
    double c[NR_ND][NR_ND][NR_ND];
    memset(c, 0, sizeof c);
    c[0][0][0] = 1.0;
    double c1 = 1.0, c4 = xs[0] - x0;
    for (unsigned i = 1; i < n; i++) {
        unsigned mn = i < NR_ND - 1 ? i : NR_ND - 1;
        double c2 = 1.0, c5 = c4;
        c4 = xs[i] - x0;
        for (unsigned j = 0; j < i; j++) {
            double c3 = xs[i] - xs[j];
            c2 *= c3;
            if (j == i - 1) {
                for (unsigned m = mn; m >= 1; m--)
                    c[m][i][i] = c1 * ((double)m * c[m - 1][i - 1][i - 1] - c5 * c[m][i - 1][i - 1]) / c2;
                c[0][i][i] = -c1 * c5 * c[0][i - 1][i - 1] / c2;
            }
            for (unsigned m = mn; m >= 1; m--)
                c[m][i][j] = (c4 * c[m][i - 1][j] - (double)m * c[m - 1][i - 1][j]) / c3;
            c[0][i][j] = c4 * c[0][i - 1][j] / c3;
        }
        c1 = c2;
    }
    for (unsigned m = 0; m < NR_ND; m++) {
        double s = 0.0;
        for (unsigned j = 0; j < n; j++)
            s += c[m][n - 1][j] * ys[j];
        der[m] = s;
    }
}

/* The moment terms of E[F(Y)] from F's derivatives d[2..8] at N:
 * t[r] = F^(r) mu_r / r!, with mu4 = 3 mu2^2 + kappa4 and the leading
 * parts of the higher moments: mu5 ~ 10 mu2 mu3, mu6 ~ 15 mu2^3 +
 * 15 mu2 kappa4 + 10 mu3^2, mu7 ~ 105 mu2^2 mu3, mu8 ~ 105 mu2^4.  Near a
 * full filter G's derivatives grow like those of a pole and the high terms
 * carry the error (2^18 bits, k = 12, N = 3 M/k: t6 = 1.18e-8 of E_fp;
 * 2^20 bits, k = 32, N = M/8: t6 = 1.5e-7, t8 about 4e-9).  Returns the
 * estimate of what they leave: the next even and odd terms, extrapolated
 * from the ratios of the last ones (t10 ~ t8 r, r = |t8/t6| times how much
 * that ratio grew from |t6/t4|; t8/t6 = 1.4 t6/t4 for a pole, measured
 * 1.6-2.2), twice; mu3's O(1) error dmu3 through t3, t5 and t7; kappa4's
 * relative O(1/b*) error; the other moments' relative O(1/b*) errors (q =
 * (k+1)/b*, from the start of the fill); and all of t[5..8] when the terms
 * do not fall.  kap4 NAN: mu4 = 3 mu2^2, and all of t4's q-term left. */
static double nr_moment_terms(const double *d, double mu2, double mu3, double dmu3, double kap4,
                              double q, double *t)
{
    t[2] = 0.5 * d[2] * mu2;
    t[3] = d[3] * mu3 / 6.0;
    const double k4 = isfinite(kap4) ? kap4 : 0.0;
    t[4] = d[4] * (3.0 * mu2 * mu2 + k4) / 24.0;
    t[5] = d[5] * 10.0 * mu2 * mu3 / 120.0;
    t[6] = d[6] * (15.0 * mu2 * mu2 * mu2 + 15.0 * mu2 * k4 + 10.0 * mu3 * mu3) / 720.0;
    t[7] = d[7] * 105.0 * mu2 * mu2 * mu3 / 5040.0;
    t[8] = d[8] * mu2 * mu2 * mu2 * mu2 / 384.0;
    t[9] = d[9] * 1260.0 * mu2 * mu2 * mu2 * mu3 / 362880.0;
    t[10] = d[10] * 945.0 * mu2 * mu2 * mu2 * mu2 * mu2 / 3628800.0;
    /* mu4's O(N) part: kappa4 to leading order, else all of it left */
    const double t4k = d[4] * k4 / 24.0;
    const double e4 = isfinite(kap4) ? 32.0 * q * (fabs(t4k) + q * fabs(t[4])) : 32.0 * q * fabs(t[4]);
    /* mu3's O(1) error dmu3, through t3, t5 and t7 */
    const double e3 = dmu3 * (fabs(d[3]) / 6.0 + fabs(d[5]) * 10.0 * mu2 / 120.0 +
                              fabs(d[7]) * 105.0 * mu2 * mu2 / 5040.0 +
                              fabs(d[9]) * 1260.0 * mu2 * mu2 * mu2 / 362880.0);
    double est = e3 + 32.0 * q * (fabs(t[3]) + fabs(t[5]) + fabs(t[6]) + fabs(t[7]) + fabs(t[8])) + e4 +
                 fabs(t[2]) * (32.0 * q * q + 1e-8);
    /* the next even term from t6, t8, t10, the next odd one from t5, t7,
     * t9 */
    double a6 = fabs(t[6]), a8 = fabs(t[8]), a10 = fabs(t[10]);
    if (a10 == 0.0 && a8 == 0.0)
        return est + 2.0 * fabs(t[9]);
    if (!(a8 < a6) || !(a10 < a8))
        return est + fabs(t[7]) + a8 + fabs(t[9]) + a10; /* not falling */
    double r1 = a8 / a6, r2 = a10 / a8;
    double t12 = a10 * r2 * fmax(1.0, r2 / r1);
    double a5 = fabs(t[5]), a7 = fabs(t[7]), a9 = fabs(t[9]), t11 = 0.0;
    if (a9 > 0.0) {
        if (!(a7 < a5) || !(a9 < a7))
            t11 = a7 + a9;
        else {
            double s1 = a7 / a5, s2 = a9 / a7;
            t11 = a9 * s2 * fmax(1.0, s2 / s1);
        }
    }
    return est + 2.0 * (t12 + t11);
}

/* df = f' on the grid x[0..n-1] (n >= 2): central differences over the
 * two neighbours, one-sided at the ends */
static void grid_diff(const double *x, const double *f, size_t n, double *df)
{
    for (size_t i = 0; i < n; i++) {
        size_t a = i == 0 ? 0 : i - 1, z = i + 1 < n ? i + 1 : n - 1;
        df[i] = (f[z] - f[a]) / (x[z] - x[a]);
    }
}

/* The fourth cumulant of Y = J(B'_N) (its O(N) part; the Gaussian
 * 3 mu2^2 is the rest of mu4).  With M_c = J(B'_c) - c and the step's
 * conditional moments v, w and fourth cumulant k4s at B'_c,
 *   kappa4 = sum_c 6 Cov(M_c^2, v(B'_c)) + 4 Cov(M_c, w(B'_c)) + E k4s,
 * and B'_c - b_c = M_c/u - u' M_c^2/(2u^3) + ... (b_c the level where
 * J = c, u = J') gives, summing over c by int u db,
 *   kappa4 = int_0^b* 6 v' T + 6 (v'/u)' S^2 + 4 w' S + u k4s db,
 *   S(b) = int_0^b u v (the variance so far),
 *   T(b) = int_0^b u w + 3 v' S (the third moment so far),
 * to leading order (relative O(1/b*)).  Trapezoids on a grid with steps
 * of b* / 512, shrinking to a sixteenth of the distance to a full filter;
 * derivatives by differences on it.  *out NAN where the grid would be
 * finer than 8 levels.  Returns a status. */
static int nr_kappa4(const nr_ctx *c, double bs, double *out)
{
    const double Md = (double)c->M;
    enum { KG = 4096 };
    *out = NAN;
    double *x = rbf__malloc(9 * (size_t)KG * sizeof *x);
    if (!x)
        return RBF_ENOMEM;
    double *u = x + KG, *v = u + KG, *w = v + KG, *q4 = w + KG, *dv = q4 + KG;
    double *dw = dv + KG, *dvu = dw + KG, *dvu2 = dvu + KG;
    size_t n = 0;
    double xc = 0.0;
    for (;;) {
        double pi, uu, vv, ww;
        nr_local(c, xc, &pi, &uu, &vv, &ww);
        /* the step's fourth cumulant: u^4 kappa4(D') */
        double dvar, dk3, dk4;
        nr_dmom_int(c, (uint64_t)xc, &dvar, &dk3, &dk4);
        x[n] = xc;
        u[n] = uu;
        v[n] = vv;
        w[n] = ww;
        q4[n] = uu * uu * uu * uu * dk4;
        n++;
        if (xc >= bs)
            break;
        double step = fmin(bs / 512.0, (Md - xc) / 16.0);
        if (!(step >= 8.0) || n == KG) {
            rbf__free(x);
            return RBF_OK;
        }
        xc = xc + step >= bs - 0.5 * step ? bs : xc + step;
    }
    /* derivatives on the nonuniform grid (3 points; one-sided at the ends) */
    if (n < 2) {
        rbf__free(x);
        return RBF_OK;
    }
    grid_diff(x, v, n, dv);
    grid_diff(x, w, n, dw);
    for (size_t i = 0; i < n; i++)
        dvu[i] = dv[i] / u[i];
    grid_diff(x, dvu, n, dvu2);
    double S = 0.0, T = 0.0, K = 0.0, fS = 0.0, fT = 0.0, fK = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            double h = x[i] - x[i - 1];
            double gS = u[i] * v[i];
            double nS = S + 0.5 * h * (fS + gS);
            double gT = u[i] * w[i] + 3.0 * dv[i] * nS;
            double nT = T + 0.5 * h * (fT + gT);
            double gK = 6.0 * dv[i] * nT + 6.0 * dvu2[i] * nS * nS + 4.0 * dw[i] * nS + u[i] * q4[i];
            K += 0.5 * h * (fK + gK);
            S = nS;
            T = nT;
            fS = gS;
            fT = gT;
            fK = gK;
        } else {
            fS = u[0] * v[0];
            fT = u[0] * w[0];
            fK = u[0] * q4[0];
        }
    }
    rbf__free(x);
    *out = K;
    return RBF_OK;
}

/* int_0^X pi v and pi (w - 3 v^2) by Gauss-Legendre on panels no longer
 * than X/24 and a quarter of the distance to a full filter */
static void nr_integrals(const nr_ctx *c, double X, double *Iv, double *I3)
{
    double gx[NX_GL], gw[NX_GL];
    rbf__model_gauss_legendre(NX_GL, gx, gw);
    const double Md = (double)c->M;
    double sv = 0.0, s3 = 0.0, x0 = 0.0;
    while (x0 < X) {
        double len = fmin(X / 24.0, (Md - x0) / 4.0);
        double x1 = x0 + len >= X * (1.0 - 1e-12) ? X : x0 + len;
        double mid = 0.5 * (x0 + x1), half = 0.5 * (x1 - x0), av = 0.0, a3 = 0.0;
        for (unsigned i = 0; i < NX_GL; i++) {
            double pi, u, v, w;
            nr_local(c, mid + half * gx[i], &pi, &u, &v, &w);
            av += gw[i] * pi * v;
            a3 += gw[i] * pi * (w - 3.0 * v * v);
        }
        sv += av * half;
        s3 += a3 * half;
        x0 = x1;
    }
    *Iv = sv;
    *I3 = s3;
}

/* E_fp = G(N) + G'' mu2/2 + G''' mu3/6 + ... (see above) and an estimate
 * of its error; lo the level below b* = J^-1(N), GN = G(N) interpolated
 * linearly between J(lo) = Jlo and J(lo + 1) = Jhi.  Returns 0, 1 (not
 * applicable) or RBF_ENOMEM. */
static int nr_terms(const nr_ctx *c, uint64_t N, uint64_t lo, double bs, double GN, double Jlo,
                    double Jhi, double *E, double *est, double *R, double *Rest)
{
    const uint64_t M = c->M;
    const unsigned k = c->k;
    const double Md = (double)M;
    /* G's derivatives in J-time from 9 levels around b*: P against J */
    double L = fmin((double)lo / ((double)k + 1.0), (Md - (double)lo) / 2.0);
    uint64_t h = L >= 32.0 ? (uint64_t)(L / 16.0) : 1;
    if (lo < c->a->b1 + k + 2 + NR_HW * h || lo + NR_HW * h + k + 2 >= M)
        return 1;
    double sx[NR_ND], sy[NR_ND], der[NR_ND];
    for (unsigned j = 0; j < NR_ND; j++)
        if (nr_JP(c, lo + j * h - NR_HW * h, &sx[j], &sy[j]))
            return 1;
    nr_fornberg((double)N, sx, sy, NR_ND, der);
    /* mu2 = H(N) + H'' mu2/2, H = V o J^-1: V(lo) by Euler-Maclaurin on
     * the smooth visit density plus the start-up transient, less the
     * overshoot V' E[overshoot] */
    double Iv, I3, Iv2, I32;
    nr_integrals(c, (double)lo, &Iv, &I3);
    nr_integrals(c, bs, &Iv2, &I32);
    (void)Iv2;
    double pi0, u0, v0, w0, pib, ub, vb, wb, pis, us, vs, ws;
    nr_local(c, 0.0, &pi0, &u0, &v0, &w0);
    nr_local(c, (double)lo, &pib, &ub, &vb, &wb);
    nr_local(c, bs, &pis, &us, &vs, &ws);
    double dh = fmax(1.0, L / 64.0), pa, ua, va, wa, pz, uz, vz, wz;
    nr_local(c, bs - dh, &pa, &ua, &va, &wa);
    nr_local(c, bs + dh, &pz, &uz, &vz, &wz);
    double dv = (vz - va) / (2.0 * dh), dfb = (pz * vz - pa * va) / (2.0 * dh);
    double p1, u1, v1, w1;
    nr_local(c, 1.0, &p1, &u1, &v1, &w1);
    double df0 = p1 * v1 - pi0 * v0;
    double oJ, oP, om[4];
    nr_over(c, lo, &oJ, &oP, om, NULL);
    const double oj = om[0];
    /* the transient: sum_i (g_i - C/(M-i)) (1 - rho_i) v_i, by the first
     * two moments of g - C/(M-i) (v changes on the scale of M; its slope
     * matters at light load: 1e-10 of E_fp at M = 2^18, k = 12) */
    double t0 = v0, tq = fmax(64.0, sqrt(Md)), pq, uq, vq, wq;
    nr_local(c, tq, &pq, &uq, &vq, &wq);
    double rq, omq, dq;
    nr_rho_x(c, tq, &rq, &omq, &dq);
    double t1 = (omq * vq - t0) / tq;
    double SV = Iv + 0.5 * (pi0 * v0 - pib * vb) + (dfb - df0) / 12.0 + c->a->pre_delta * t0 +
                c->a->pre_delta1 * t1;
    double V = SV - pib * vb * oj;
    double H = V + (bs - (double)lo) * pis * vs;
    double H2 = dv / us;
    double mu2 = H / (1.0 - 0.5 * H2);
    double mu3 = I32 + 3.0 * vs * mu2;
    /* the linear interpolation's own error, G'' (N - Jlo)(Jhi - N)/2 */
    GN -= 0.5 * der[2] * ((double)N - Jlo) * (Jhi - (double)N);
    const double q = ((double)k + 1.0) / bs;
    double t[NR_ND];
    double kap4;
    int rc = nr_kappa4(c, bs, &kap4);
    if (rc)
        return rc;
    /* mu3 is right to O(1) (its O(N) parts to relative O(1/b*)): measured
     * against the exact law of B'_N (2^16, 2^17 bits, k = 8 and 32, near a
     * full filter) |error| <= 4.8 q (|I32| + |3 v mu2|); 32 q of it */
    const double dmu3 = 32.0 * q * (fabs(I32) + fabs(3.0 * vs * mu2));
    *est = nr_moment_terms(der, mu2, mu3, dmu3, kap4, q, t);
    *E = GN + t[2] + t[3] + t[4] + t[5] + t[6] + t[7] + t[8] + t[9] + t[10];
    /* E[rho(B'_N)] = E[R(Y)], R = rho o J^-1: the same moments */
    double ry[NR_ND], rd[NR_ND];
    for (unsigned j = 0; j < NR_ND; j++)
        ry[j] = rbf__model_rho(M, k, c->nc, lo + j * h - NR_HW * h);
    nr_fornberg((double)N, sx, ry, NR_ND, rd);
    double rlo = rbf__model_rho(M, k, c->nc, lo), rhi = rbf__model_rho(M, k, c->nc, lo + 1);
    double RN = rlo + ((double)N - Jlo) / (Jhi - Jlo) * (rhi - rlo) -
                0.5 * rd[2] * ((double)N - Jlo) * (Jhi - (double)N);
    double r[NR_ND];
    *Rest = nr_moment_terms(rd, mu2, mu3, dmu3, kap4, q, r);
    *R = RN + r[2] + r[3] + r[4] + r[5] + r[6] + r[7] + r[8] + r[9] + r[10];
    *Rest += 1e-13 * *R;
    return 0;
}

/* log P(B'_{N-1} = M) where the propagation starts to keep a full filter.
 * Its cut drops levels below 1e-30 at the edges of the window each step,
 * the front of the climb to a full filter among them, so it keeps one
 * later than P(B'_{N-1} = M) = 1e-30 (e^-69.1), and the more so the longer
 * the climb.  Measured (the first N the propagation says 1 at; the same N
 * by hash steps and by the kernel chain at 65536 bits, k = 2): e^-62.35
 * (16384 bits, k = 2), -60.97 (65536, 2), -59.0 (2^19, 2), -57.60 (2^21,
 * 2; the fit below, made before, says -57.59), -63.38 (8192,
 * 3), -64.45 (4096, 6), -63.82 (16384, 12, both hashings), -64.85 (4096,
 * 16), -63.36 (32768, 24), -63.2 (65536, 32); this fit is within 0.65 of
 * each. */
static double fl_cut(uint64_t M, unsigned k)
{
    return -62.35 + 0.68 * (log2((double)M) - 14.0) - 0.6 * log2((double)k / 2.0);
}

int rbf__nreal_fast(const rbf_model_params *p, uint64_t N, double *real, double *relerr,
                    double *worst)
{
    return rbf__nreal_fast_ex(p, N, 0, real, relerr, worst);
}

int rbf__nreal_fast_ex(const rbf_model_params *p, uint64_t N, int force, double *real,
                       double *relerr, double *worst)
{
    const uint64_t M = p->bits;
    const unsigned k = p->hashes;
    const int nc = p->hashing == RBF_NON_COLLIDING;
    const double Md = (double)M;
    if (relerr)
        *relerr = INFINITY;
    if (M < 1024 || k > M / 64)
        return 1;
    const double C = rbf__asym_C(M, k, nc);
    /* J(b) <= C (H_M - H_{M-b}) ~ C ln(M/(M-b)): b* >= M (1 - e^{-N/C}) */
    double bg = -Md * expm1(-(double)N / C);
    if (!(bg < 0.5 * Md))
        bg = 0.5 * Md; /* N near or past a whole filling: checked below */
    uint64_t smin = (uint64_t)(0.9 * bg);
    model_asym a;
    int rc = rbf__asym_init(&a, M, k, nc, smin, p);
    if (rc)
        return rc;
    nr_ctx c = {&a, M, k, nc, NULL};
    c.tau = rbf__malloc(((size_t)k + 1 + 5 * (size_t)k) * sizeof *c.tau);
    if (!c.tau) {
        rbf__asym_free(&a);
        return RBF_ENOMEM;
    }
    rc = 1;
    if (a.b1 == UINT64_MAX || a.b1 + k + 2 >= M)
        goto out;
    /* bisection for the level b0 with J(b0) <= N < J(b0 + 1) */
    uint64_t lo = a.b1 + k + 2, hi = M - k - 2;
    double Jlo, Plo, Jhi, Phi;
    if (nr_JP(&c, lo, &Jlo, &Plo) || nr_JP(&c, hi, &Jhi, &Phi))
        goto out;
    if (!(Jlo <= (double)N))
        goto out;
    /* Mass on a full filter (where the propagation says exact_real = 1).
     * J(B'_c) - c is a martingale with steps below bmax = 2k + 2 (a
     * message sets at most k bits, J' <= k+1 per level) and quadratic
     * variation about V(top); by Freedman's inequality it passes J(top) -
     * N above its mean with probability below 1e-32 once that gap is at
     * least xneed (and likewise stays below it when N - J(top) >= xneed) */
    double bmax = 2.0 * (double)k + 2.0, Vtop = nr_var(&c, (double)hi);
    double xneed = 24.67 * bmax + sqrt(608.6 * bmax * bmax + 148.0 * Vtop);
    if (!(Jhi - (double)N >= xneed)) {
        /* in between: the lower tail of the steps to a full filter.  The
         * propagation keeps a full filter once P(B'_{N-1} = M) passes
         * fl_cut (e^-65 to e^-59, growing with M); the estimate is within
         * 0.9 of the exact log P there (test_full_filter_tail).  Within
         * FL_SLACK of the cut the propagation decides, unless it would
         * take minutes (force 2): then the cut alone. */
        double lp = 0.0;
        if (!((double)N - Jhi >= xneed)) {
            int lr = rbf__nreal_full_logp(p, N - 1, &lp);
            if (lr) {
                rc = lr;
                goto out;
            }
        }
        const double cut = fl_cut(M, k);
        const double slack = force >= 2 ? 0.0 : force == 1 ? 0.5 * FL_SLACK : FL_SLACK;
        if (lp > cut + slack) {
            /* the real user fills the filter within the cycle */
            *real = 1.0;
            if (worst)
                *worst = 1.0;
            if (relerr)
                *relerr = 0.0;
            rc = RBF_OK;
            goto out;
        }
        if (!(lp <= cut - slack) || !((double)N < Jhi))
            goto out;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        double Jm, Pm;
        if (nr_JP(&c, mid, &Jm, &Pm))
            goto out;
        if (Jm <= (double)N) {
            lo = mid;
            Jlo = Jm;
            Plo = Pm;
        } else {
            hi = mid;
            Jhi = Jm;
            Phi = Pm;
        }
    }
    double f = ((double)N - Jlo) / (Jhi - Jlo);
    double GN = Plo + f * (Phi - Plo);
    double bs = (double)lo + f;
    double rs = rbf__model_rho(M, k, nc, lo);
    double oms = rbf__model_one_minus_rho(M, k, nc, lo);
    double E, est, R, Rest;
    int tr = nr_terms(&c, N, lo, bs, GN, Jlo, Jhi, &E, &est, &R, &Rest);
    if (tr) {
        rc = tr < 0 ? tr : 1;
        goto out;
    }
    if (worst)
        *worst = model_clamp01(R);
    est += 1e-12 * (Plo + fabs(Jlo) * rs / oms);
    double rel = E > 0.0 ? est / E : INFINITY;
    if (relerr)
        *relerr = rel;
    /* mass on a full filter (the propagation's exact_real = 1 there): keep
     * far from it */
    *real = model_clamp01(E / ((double)N + E));
    /* force 1 takes estimates of exact_real's error up to NR_TOL_SOFT
     * (E_fp's relative error shrinks by 1 - real in exact_real), force 2
     * any */
    const double lim = force >= 2 ? INFINITY : force == 1 ? NR_TOL_SOFT : NR_TOL;
    const double rrel = force == 1 ? rel * (1.0 - *real) : rel;
    if (!(E >= 0.0) || !isfinite(rel) || !(rrel <= lim))
        goto out;
    if (worst && !(Rest <= lim * R))
        goto out;
    rc = RBF_OK;
out:
    rbf__free(c.tau);
    rbf__asym_free(&a);
    return rc;
}

/* ---- mass on a full filter (docs/models.md 3b, "exact_real")
 *
 * The real user's chain B'_c (each message conditioned on setting a bit)
 * fills the filter after D bit-setting messages; the propagation keeps a
 * full filter, and so prints exact_real = 1, once P(B'_{N-1} = M) =
 * P(D <= N - 1) passes its 1e-30 cut.  D's lower tail far out (20 or more
 * standard deviations) decides it, which no variance bound reaches.
 *
 * u(b) = E[e^{-theta D_b}] (D_b: steps from level b) solves
 * u(b) = e^{-theta} E[u(b + D'_b)], u(M) = 1, D'_b the bits a bit-setting
 * message sets at b.  Its WKB solution: log u(b) = -int_b^M s + A(b) with
 * K_y(s(y)) = theta, K_y the cumulant generating function of D'_y, and
 * A' = -s' m2/(2m) (m, m2 the s-tilted first and second moments of D'):
 * Lambda(theta) = log u(0) = -int_0^M s + int_0^M s' m2/(2m), exact to
 * O(k^2/M) per unit of A.  The tilted count of steps has mean int dy/m
 * and variance V = int K''/m^3 dy; theta solves int dy/m = c, and
 * Bahadur-Rao on the lattice gives
 *   log P(D <= c) = theta c + Lambda - log(1 - e^{-theta}) - log(2 pi V)/2.
 * Integrals by Gauss-Legendre on 8k panels in b/M (the step law changes on
 * the scale M/k), D' at the integer level below y. */

typedef struct fl_node {
    double y, w;
    double t[3][RBF_MAX_HASHES + 1]; /* conditioned step law at y, y-h, y+h */
    double dy;                         /* the levels between the last two */
} fl_node;

/* K_t(s) = log sum_d t_d e^{s d}; *m, *v: tilted mean and variance */
static double fl_K(const double *t, unsigned k, double s, double *m, double *v)
{
    double top = s > 0.0 ? s * (double)k : s;
    double z = 0.0, z1 = 0.0, z2 = 0.0;
    for (unsigned d = 1; d <= k; d++) {
        if (t[d] == 0.0)
            continue;
        double e = t[d] * exp(s * (double)d - top);
        z += e;
        z1 += e * (double)d;
        z2 += e * (double)d * (double)d;
    }
    double mean = z1 / z;
    if (m)
        *m = mean;
    if (v)
        *v = fmax(z2 / z - mean * mean, 0.0);
    return top + log(z);
}

/* s with K_t(s) = theta (K is convex and increasing, K' in [1, k]) */
static double fl_solve(const double *t, unsigned k, double theta, double s0)
{
    double s = s0;
    for (int it = 0; it < 60; it++) {
        double m, K = fl_K(t, k, s, &m, NULL);
        double ds = (K - theta) / m;
        s -= ds;
        if (fabs(ds) <= 1e-15 * fabs(s) + 1e-300)
            break;
    }
    return s;
}

int rbf__nreal_full_logp(const rbf_model_params *p, uint64_t c, double *out)
{
    const uint64_t M = p->bits;
    const unsigned k = p->hashes;
    const int nc = p->hashing == RBF_NON_COLLIDING;
    const double Md = (double)M;
    *out = NAN;
    if (M < 2 || k < 1 || k > RBF_MAX_HASHES)
        return RBF_EINVAL;
    unsigned panels = 8 * k < 32 ? 32 : 8 * k;
    const size_t nn = (size_t)panels * NX_GL;
    fl_node *nd = rbf__malloc(nn * sizeof *nd);
    if (!nd)
        return RBF_ENOMEM;
    double gx[NX_GL], gw[NX_GL], tau[RBF_MAX_HASHES + 1];
    rbf__model_gauss_legendre(NX_GL, gx, gw);
    const double hy = fmax(1.0, Md / (64.0 * (double)panels));
    for (unsigned q = 0; q < panels; q++) {
        double x0 = Md * q / panels, x1 = Md * (q + 1) / panels;
        double mid = 0.5 * (x0 + x1), half = 0.5 * (x1 - x0);
        for (unsigned i = 0; i < NX_GL; i++) {
            fl_node *n = &nd[(size_t)q * NX_GL + i];
            n->y = mid + half * gx[i];
            n->w = gw[i] * half;
            uint64_t lv[3];
            for (int j = 0; j < 3; j++) {
                double y = n->y + (j == 0 ? 0.0 : j == 1 ? -hy : hy);
                if (y < 0.0)
                    y = 0.0;
                uint64_t b = (uint64_t)y;
                if (b > M - 1)
                    b = M - 1;
                lv[j] = b;
                rbf__model_step_dist(M, k, nc, b, tau);
                double z = 0.0;
                for (unsigned d = 1; d <= k; d++)
                    z += tau[d];
                n->t[j][0] = 0.0;
                for (unsigned d = 1; d <= k; d++)
                    n->t[j][d] = tau[d] / z;
            }
            n->dy = (double)(lv[2] - lv[1]);
        }
    }
    /* theta: int dy/m = c, by safeguarded Newton (int dy/m falls with theta) */
    const double cd = (double)c;
    double lo = 0.0, hi = INFINITY, theta = 0.0, S1 = 0.0, V = 0.0;
    for (int it = 0; it < 200; it++) {
        S1 = V = 0.0;
        for (size_t i = 0; i < nn; i++) {
            double m, v;
            double s = fl_solve(nd[i].t[0], k, theta, theta);
            (void)fl_K(nd[i].t[0], k, s, &m, &v);
            S1 += nd[i].w / m;
            V += nd[i].w * v / (m * m * m);
        }
        if (it == 0 && S1 <= cd) {
            rbf__free(nd);
            *out = 0.0; /* c at or past the mean filling: P(D <= c) is not small */
            return RBF_OK;
        }
        if (S1 > cd)
            lo = theta;
        else
            hi = theta;
        double g = S1 - cd;
        if (fabs(g) <= 1e-12 * cd)
            break;
        if (!(V > 0.0))
            break; /* every step sets one bit (k = 1): D = M */
        double nt = theta + g / V;
        if (!(nt > lo && nt < hi))
            nt = isinf(hi) ? 2.0 * lo + 1e-6 : 0.5 * (lo + hi);
        if (fabs(nt - theta) <= 1e-15 * theta)
            break;
        theta = nt;
    }
    /* Lambda(theta) */
    double Is = 0.0, IA = 0.0;
    for (size_t i = 0; i < nn; i++) {
        double m, v;
        double s = fl_solve(nd[i].t[0], k, theta, theta);
        (void)fl_K(nd[i].t[0], k, s, &m, &v);
        double Kp = fl_K(nd[i].t[2], k, s, NULL, NULL), Km = fl_K(nd[i].t[1], k, s, NULL, NULL);
        double dK = nd[i].dy > 0.0 ? (Kp - Km) / nd[i].dy : 0.0;
        double ds = -dK / m;
        Is += nd[i].w * s;
        IA += nd[i].w * ds * (v + m * m) / (2.0 * m);
    }
    rbf__free(nd);
    if (!(V > 0.0)) {
        *out = -INFINITY; /* k = 1: D = M exactly, and c < M */
        return RBF_OK;
    }
    double Lam = -Is + IA;
    *out = theta * cd + Lam - log(-expm1(-theta)) - 0.5 * log(6.283185307179586 * V);
    return RBF_OK;
}
