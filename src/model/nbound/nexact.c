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
 * The real user (rbf__nreal_fast) is in nreal.c: potentials of the fill
 * chain and the renewal sums of asym.c; the mass on a full filter, in
 * nfull.c.
 */
#include <stdlib.h>
#include <string.h>

#include "model_nbound.h"
#include "rbf_alloc.h"

#define NX_R 18      /* central moments of the tilted S_j used */
#define NX_KM 64     /* terms of the non-colliding correction K */
#define NX_DIRECT 4096
#define NX_TOL 1e-11 /* accepted accumulated relative error estimate */

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
