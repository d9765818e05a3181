/*
 * laws_asym.c -- the cycle-length laws of large filters, from the first
 * cumulants of the fill (docs/models.md 9.7).
 *
 * The exact laws (laws.c) walk the fill chain level by level; their cost
 * grows as sigma x sqrt(M) (sigma-bounded) and N x sqrt(M) (the real
 * user's N-bounded cycles): seconds at 10^6 bits, minutes at 10^7.  At
 * those sizes the fill is nearly Gaussian, and these laws take what they
 * need from its exact mean, variance and third cumulant instead, in O(len)
 * for the sigma law and O(N) for the N-bounded one.
 *
 * sigma-bounded.  Without the stop, the set bits B(n) after n ticks are
 * an occupancy: n k uniform positions (colliding) or n uniform k-subsets
 * (non-colliding) in M bins.  With Z = M - B the empty bins and p_r the
 * chance that r given bins stay empty through one tick, E[(Z)_r] = (M)_r
 * p_r^n exactly, which gives the first three cumulants (computed from
 * log p_2/p_1^2 and log p_3/p_1^3, which carry no cancellation).  B is
 * non-decreasing, so the cycle (the tick that would pass sigma ends it)
 * has P(L > n) = P(B(n) <= sigma), taken from the Edgeworth expansion of
 * the lattice variable B(n) with its continuity correction; the error is
 * O(1/M) of the distribution function.  A tick at age n is a false
 * positive with E[rho(B(n-1)); B(n-1) <= sigma] (the Gaussian truncated
 * moments to second order in rho), and the filter frozen at a recycle
 * was left at sigma - u with the renewal undershoot law P(D > u)/E[D], D
 * the bits a message sets at sigma.
 *
 * real-user N-bounded.  The fill after c bit-setting messages B'_c moves
 * by D ~ tau(b, d)/(1 - rho(b)), d >= 1; its mean and variance follow the
 * linear-noise recursions (the drift's curvature in the mean), and the
 * covariances of the path are the variances carried forward by the
 * drift's slope.  Given the path, the false positives before step c are a
 * sum of independent geometric counts of means rho/(1 - rho) at the
 * levels passed, so every moment the moments' pass of laws.c keeps per
 * step (rbf_cyc_mstats: the false-positive ticks of each step with the
 * first two moments of the count before them, and the count at the end)
 * follows from sums over the path by the delta method, in O(N); the law
 * is then laid out by rbf__cyc_nreal_spread as for the moments' pass.
 *
 * tests/test_fn_model.c (test_asym_vs_chain) compares both with the chain
 * at sizes where both run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_cycles.h"
#include "rbf_alloc.h"

/* ---- the fill of the unstopped chain */

typedef struct {
    double M, k;
    int nc;
    double l1;   /* log p_1 */
    double l21;  /* log p_2 / p_1^2 */
    double l31;  /* log p_3 / p_1^3 */
    double lm1;  /* log (1 - 1/M) */
    double lm12; /* log (1 - 1/M)(1 - 2/M) */
} fillc;

static void fillc_init(fillc *f, uint64_t bits, unsigned k, int nc)
{
    const double M = (double)bits, K = (double)k;
    f->M = M;
    f->k = K;
    f->nc = nc;
    if (!nc) {
        /* p_r = (1 - r/M)^k; p_2/p_1^2 = 1 - 1/(M-1)^2, p_3/p_1^3 = 1 - (3M-1)/(M-1)^3 */
        f->l1 = K * log1p(-1.0 / M);
        f->l21 = K * log1p(-1.0 / ((M - 1.0) * (M - 1.0)));
        f->l31 = K * log1p(-(3.0 * M - 1.0) / ((M - 1.0) * (M - 1.0) * (M - 1.0)));
    } else {
        /* p_r = prod_{i<r} (M-k-i)/(M-i); p_2/p_1^2 = 1 - k/((M-1)(M-k)),
         * p_3 p_1^-3 = that times 1 - 2k/((M-2)(M-k)) */
        f->l1 = log1p(-K / M);
        f->l21 = log1p(-K / ((M - 1.0) * (M - K)));
        f->l31 = f->l21 + log1p(-2.0 * K / ((M - 2.0) * (M - K)));
    }
    f->lm1 = log1p(-1.0 / M);
    f->lm12 = f->lm1 + log1p(-2.0 / M);
}

/* The mean, variance and third cumulant of B(n). */
static void fill_cum(const fillc *f, double n, double *mu, double *var, double *k3)
{
    const double t1 = n * f->l1;
    const double a = f->M * exp(t1); /* E[Z] */
    *mu = -f->M * expm1(t1);
    /* E[(Z)_2] = a^2 (1 + d2), E[(Z)_3] = a^3 (1 + d3) */
    const double d2 = expm1(f->lm1 + n * f->l21);
    const double d3 = expm1(f->lm12 + n * f->l31);
    double v = a + a * a * d2;
    *var = v > 0.0 ? v : 0.0;
    /* kappa_3(Z) = a^3 (d3 - 3 d2) + 3 a^2 d2 + a, and kappa_3(B) = -kappa_3(Z) */
    *k3 = -(a * a * a * (d3 - 3.0 * d2) + 3.0 * a * a * d2 + a);
}

#define INV_SQRT_2PI 0.39894228040143267794

/* P(B <= c) and P(B > c) of an integer B with those cumulants: the
 * Edgeworth expansion to the third cumulant, continuity-corrected. */
static void edge_cdf(double c, double mu, double var, double k3, double *F, double *G)
{
    if (!(var > 1e-300)) {
        *F = mu <= c + 0.5 ? 1.0 : 0.0;
        *G = 1.0 - *F;
        return;
    }
    const double s = sqrt(var), x = (c + 0.5 - mu) / s;
    if (x > 40.0) {
        *F = 1.0;
        *G = 0.0;
        return;
    }
    if (x < -40.0) {
        *F = 0.0;
        *G = 1.0;
        return;
    }
    const double g = k3 / (var * s);
    const double corr = INV_SQRT_2PI * exp(-0.5 * x * x) * g / 6.0 * (x * x - 1.0);
    *F = model_clamp01(0.5 * erfc(-x * M_SQRT1_2) - corr);
    *G = model_clamp01(0.5 * erfc(x * M_SQRT1_2) + corr);
}

/* rho(b) and its first two derivatives at a real level b: the product of
 * the k hashes' factors (b - q)/(M - q) (colliding: b/M each), expanded to
 * second order. */
static void rho_taylor(const fillc *f, double b, double *r0, double *r1, double *r2)
{
    double c0 = 1.0, c1 = 0.0, c2 = 0.0;
    const unsigned k = (unsigned)f->k;
    for (unsigned q = 0; q < k; q++) {
        const double den = f->nc ? f->M - (double)q : f->M;
        const double y = f->nc ? (b - (double)q) / den : b / den, w = 1.0 / den;
        c2 = c2 * y + c1 * w;
        c1 = c1 * y + c0 * w;
        c0 = c0 * y;
    }
    *r0 = c0;
    *r1 = c1;
    *r2 = 2.0 * c2;
}

/* ---- sigma-bounded cycles */

double rbf__cyc_sigma_chain_cost(const rbf_model_params *p, uint64_t sigma)
{
    fillc f;
    fillc_init(&f, p->bits, p->hashes, p->hashing == RBF_NON_COLLIDING);
    const double s = (double)sigma;
    /* the ticks to reach sigma, their spread there, and the chain's window
     * at the top level (about 25 of them, mass above 1e-28) */
    const double n = log1p(-s / f.M) / f.l1;
    double mu, var, k3;
    fill_cum(&f, n, &mu, &var, &k3);
    const double drift = (f.M - s) * -f.l1;
    const double sd = drift > 0.0 ? sqrt(var) / drift : 0.0;
    return s * f.k * (25.0 * sd + 2.0) * 0.5;
}

uint64_t rbf__cyc_sigma_asym_len(const rbf_model_params *p, uint64_t sigma)
{
    fillc f;
    fillc_init(&f, p->bits, p->hashes, p->hashing == RBF_NON_COLLIDING);
    const double s = (double)sigma;
    const double n = log1p(-s / f.M) / f.l1;
    double mu, var, k3;
    fill_cum(&f, n, &mu, &var, &k3);
    const double drift = (f.M - s) * -f.l1;
    const double sd = drift > 0.0 ? sqrt(var) / drift : 0.0;
    /* 40 spreads past the mean: the Edgeworth tail there is below 1e-300 */
    return (uint64_t)(n + 40.0 * sd) + 200;
}

int rbf__cyc_sigma_pmf_asym(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
                            double *phi, double *rend, double *lost)
{
    const unsigned k = p->hashes;
    const int nc = p->hashing == RBF_NON_COLLIDING;
    if (sigma + 1 >= p->bits || k > MODEL_MAX_HASHES)
        return RBF_EINVAL;
    fillc f;
    fillc_init(&f, p->bits, k, nc);
    memset(pmf, 0, (nmax + 1) * sizeof *pmf);
    memset(phi, 0, (nmax + 2) * sizeof *phi);
    const double c = (double)sigma;
    /* S(n) = P(L > n) = P(B(n) <= sigma), kept as F = S and G = 1 - S for
     * precision at both ends, each made monotone */
    double F = 1.0, G = 0.0;
    double mu = 0.0, var = 0.0, k3 = 0.0; /* B(n - 1) */
    for (uint64_t n = 1; n <= nmax + 1; n++) {
        if ((n & 65535) == 0 && model_progress(p, n, nmax + 1))
            return RBF_ECANCELED;
        /* tick n at age n - 1: a false positive with E[rho(B); B <= sigma] */
        if (F > 0.0) {
            double r0, r1, r2;
            rho_taylor(&f, mu, &r0, &r1, &r2);
            double ph;
            const double s = sqrt(var);
            const double z = s > 0.0 ? (c + 0.5 - mu) / s : (mu <= c + 0.5 ? INFINITY : -INFINITY);
            if (z > 40.0) {
                ph = r0 + 0.5 * r2 * var;
            } else {
                const double dz = INV_SQRT_2PI * exp(-0.5 * z * z);
                const double Pz = 0.5 * erfc(-z * M_SQRT1_2);
                ph = r0 * F - r1 * s * dz + 0.5 * r2 * var * (Pz - z * dz);
            }
            if (ph > F)
                ph = F;
            phi[n] = ph > 0.0 ? ph : 0.0;
        }
        fill_cum(&f, (double)n, &mu, &var, &k3);
        double Fn, Gn;
        edge_cdf(c, mu, var, k3, &Fn, &Gn);
        if (Fn > F)
            Fn = F;
        if (Gn < G)
            Gn = G;
        if (n <= nmax) {
            double d = F < 0.5 ? F - Fn : Gn - G;
            pmf[n] = d > CYC_TINY ? d : 0.0;
        }
        F = Fn;
        G = Gn;
        if (F == 0.0)
            break; /* every later tick: no mass, no false positive */
    }
    *lost = F;
    /* the frozen filter: left at sigma - u, u with the undershoot law */
    double tau[MODEL_MAX_HASHES + 1];
    rbf__model_step_dist(p->bits, k, nc, sigma, tau);
    double ed = 0.0;
    for (unsigned d = 1; d <= k; d++)
        ed += (double)d * tau[d];
    double r = 0.0, tail = 1.0 - tau[0];
    for (unsigned u = 0; u < k && u <= sigma; u++) {
        r += tail / ed * rbf__model_rho(p->bits, k, nc, sigma - u);
        tail -= tau[u + 1];
        if (tail < 0.0)
            tail = 0.0;
    }
    *rend = r;
    return RBF_OK;
}

/* ---- the real user's N-bounded cycles */

/* h(rho) and its first two derivatives in rho, for the functions of rho
 * the moments need (G the geometric count of false positives before a
 * bit-setting message, P(G = j) = rho^j (1 - rho)). */
enum { H_RHO, H_EG, H_VG, H_EG2, H_EGEG2 };
static void h_rho(int which, double r, double *h0, double *h1, double *h2)
{
    const double o = 1.0 - r, o2 = o * o, o3 = o2 * o, o4 = o2 * o2;
    switch (which) {
    case H_RHO: /* rho */
        *h0 = r, *h1 = 1.0, *h2 = 0.0;
        break;
    case H_EG: /* E G = rho/(1-rho) */
        *h0 = r / o, *h1 = 1.0 / o2, *h2 = 2.0 / o3;
        break;
    case H_VG: /* Var G = rho/(1-rho)^2 */
        *h0 = r / o2, *h1 = (1.0 + r) / o3, *h2 = (4.0 + 2.0 * r) / o4;
        break;
    case H_EG2: /* (E G)^2 */
        *h0 = r * r / o2, *h1 = 2.0 * r / o3, *h2 = (2.0 + 4.0 * r) / o4;
        break;
    default: /* E G . E G^2 = rho^2 (1+rho)/(1-rho)^3 */
        *h0 = r * r * (1.0 + r) / o3, *h1 = (2.0 * r + 4.0 * r * r) / o4,
        *h2 = (2.0 + 14.0 * r + 8.0 * r * r) / (o4 * o);
        break;
    }
}

/* E[h(rho(B))] to second order for B of mean b and variance v (rho, its
 * slope and curvature r0, r1, r2 at b); *slope the derivative of h(rho(b))
 * in b. */
static double h_mean(int which, double r0, double r1, double r2, double v, double *slope)
{
    double h0, h1, h2;
    h_rho(which, r0, &h0, &h1, &h2);
    if (slope)
        *slope = h1 * r1;
    return h0 + 0.5 * (h2 * r1 * r1 + h1 * r2) * v;
}

int rbf__cyc_nreal_asym(const rbf_model_params *p, uint64_t N, double *efp, double *rhoF,
                        rbf_cyc_mstats *st, double *sd)
{
    const unsigned k = p->hashes;
    const int nc = p->hashing == RBF_NON_COLLIDING;
    memset(st, 0, sizeof *st);
    if (k > MODEL_MAX_HASHES || N == 0)
        return RBF_EINVAL;
    fillc f;
    fillc_init(&f, p->bits, k, nc);
    const double M = f.M;
    /* one message: q1 the chance it hits a given clear bit, q2 two given
     * clear bits (colliding: 1 - 2a1 + a2 = (1 - a1)^2 + (a2 - a1^2)) */
    double q1, q2;
    if (!nc) {
        const double a1 = exp(f.l1);
        q1 = -expm1(f.l1);
        q2 = q1 * q1 + a1 * a1 * expm1(f.l21);
    } else {
        q1 = f.k / M;
        q2 = f.k * (f.k - 1.0) / (M * (M - 1.0));
    }
    st->T = rbf__malloc(3 * N * sizeof *st->T);
    if (!st->T)
        return RBF_ENOMEM;
    /* the fill B'_c: mean mu, variance v; the sums over the steps before
     * c: Mc = sum E eg, Vg = sum E vg, Q = Var(sum eg' xi), H = sum eg'
     * Cov(xi_i, xi_c), Hv = sum vg' Cov(xi_i, xi_c) */
    double mu = 0.0, v = 0.0, Q = 0.0, H = 0.0, Hv = 0.0;
    model_sum Mc, Vg;
    msum_init(&Mc);
    msum_init(&Vg);
    for (uint64_t c = 0; c < N; c++) {
        if ((c & 65535) == 0 && c && model_progress(p, c, N)) {
            rbf__cyc_mstats_free(st);
            return RBF_ECANCELED;
        }
        double r0, r1, r2;
        rho_taylor(&f, mu, &r0, &r1, &r2);
        if (!(r0 < 1.0) || mu + 12.0 * sqrt(v) >= M) {
            rbf__cyc_mstats_free(st); /* the filter may fill: the chain decides */
            return RBF_EINVAL;
        }
        double ep, vgp;
        const double e = h_mean(H_EG, r0, r1, r2, v, &ep);
        const double ev = h_mean(H_VG, r0, r1, r2, v, &vgp);
        const double e4 = h_mean(H_EG2, r0, r1, r2, v, NULL);
        const double e3 = h_mean(H_EGEG2, r0, r1, r2, v, NULL);
        const double g1 = r0 / (1.0 - r0); /* eg at the mean */
        const double m1 = msum_get(&Mc), vg = msum_get(&Vg);
        /* the false-positive ticks of step c, and the first two moments of
         * the count before each (as mom_level, summed over the path) */
        double *T = st->T + 3 * c;
        T[0] = e;
        T[1] = e * m1 + ep * H + e4;
        T[2] = e * vg + ep * Hv + e * (m1 * m1 + Q) + 2.0 * m1 * ep * H + 2.0 * (e4 * m1 + 2.0 * g1 * ep * H) + e3;
        st->steps = c + 1;
        Q += ep * ep * v + 2.0 * ep * H;
        msum_add(&Mc, e);
        msum_add(&Vg, ev);
        /* the step: D of mean m(b) = (M - b) q1 / (1 - rho), E D(D-1) =
         * (M - b)(M - b - 1) q2 / (1 - rho) */
        const double w = 1.0 / (1.0 - r0), w1 = r1 * w * w, w2 = r2 * w * w + 2.0 * r1 * r1 * w * w * w;
        const double em = M - mu;
        const double m = q1 * em * w, mp = q1 * (-w + em * w1), mpp = q1 * (-2.0 * w1 + em * w2);
        const double ed2 = (em * (em - 1.0) * q2 + em * q1) * w;
        double sv = ed2 - m * m;
        if (sv < 0.0)
            sv = 0.0;
        const double a = 1.0 + mp;
        H = a * (H + ep * v);
        Hv = a * (Hv + vgp * v);
        mu += m + 0.5 * mpp * v;
        v = a * a * v + sv;
    }
    double r0, r1, r2;
    rho_taylor(&f, mu, &r0, &r1, &r2);
    if (mu + 12.0 * sqrt(v) >= M) {
        rbf__cyc_mstats_free(st);
        return RBF_EINVAL;
    }
    const double m1 = msum_get(&Mc);
    *efp = m1;
    *rhoF = model_clamp01(h_mean(H_RHO, r0, r1, r2, v, NULL));
    st->W0 = 1.0;
    st->W1 = m1;
    st->W2 = msum_get(&Vg) + m1 * m1 + Q;
    st->lost = 0.0;
    *sd = sqrt(v);
    return RBF_OK;
}
