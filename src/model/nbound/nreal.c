/*
 * nreal.c -- the real user's N-bounded rate exact_real at any load in
 * milliseconds, by the potentials of the fill chain (docs/models.md 3b,
 * "exact_real"), with its own error estimate; the propagated chain
 * (nbounded.c) answers where the estimate is not small enough.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_nbound.h"
#include "rbf_alloc.h"

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
