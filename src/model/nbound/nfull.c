/*
 * nfull.c -- the real user's chain on a full filter: log P(B'_c = M) by a
 * WKB/Bahadur-Rao estimate (docs/models.md 3b, "exact_real"), which tells
 * nreal.c where the propagation would keep a full filter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_nbound.h"
#include "rbf_alloc.h"

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
