/*
 * asym.c -- the sigma-bounded model at any size, in milliseconds
 * (docs/models.md section 3b has the derivation and the error bounds).
 *
 * The renewal density g_b (message arrivals at b set bits) satisfies the
 * exact "crossing identity": the boundary between levels b-1 and b is
 * crossed exactly once per cycle, so for every b >= 1
 *
 *   sum_{m=1..k} g_{b-m} P(D_{b-m} >= m) = 1,            (*)
 *
 * D_j the bits one message sets from level j.  For both hashing modes the
 * factorial moments of D_j are (M-j)(M-j-1)...(M-j-r+1) times a constant,
 * so P(D_j >= m)/(M-j) is a polynomial in j and g_b = C/(M-b) solves (*)
 * exactly (its Taylor series in b terminates), with
 *
 *   1/C = sum_{m=1..k} P(D_{M-m} >= m)/m:  C = M/k colliding,
 *   1/C = sum_m (1/m) prod_{i<m} (k-i)/(M-i)  non-colliding.
 *
 * The true g_b is this particular solution plus homogeneous solutions of
 * (*): the start-up transient (the phase of the hash counter modulo k),
 * which decays like exp(-(1-cos(2 pi/k)) b^2/(2M)).  So
 *
 *   sum_{b<=s} g_b      = [exact pass, b < b1] + C H(b1, s) + (D_inf - S_delta(b1-1))
 *   sum_{b<=s} g_b rho_b = [exact pass, b < b1] + C R(b1, s) + (transient, bounded)
 *
 * with H(a, c) = sum_{b=a..c} 1/(M-b) (harmonic numbers), R(a, c) =
 * sum rho(b)/(M-b) (Euler-Maclaurin over composite Gauss-Legendre, exact
 * sums near the pole), S_delta the running sum of g_b - C/(M-b), and
 * D_inf its limit: (k-1)/(2k), exactly for colliding hashing (the number
 * of messages is ceil(T/k) for T hashes, and T mod k becomes uniform), and
 * to the noise of a numerical estimate for non-colliding hashing.  b1 is the first level where the transient's bound is below
 * the tolerance for every sigma >= sigma_min.
 */
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

#define ASYM_TOL 1e-12       /* relative budget of each bounded term */
#define ASYM_POLE_DIRECT 2048 /* levels next to a full filter summed exactly */
#define ASYM_GL 20           /* Gauss-Legendre points per panel */

/* ---- small helpers */

static double ipow_d(double x, unsigned e)
{
    double r = 1.0;
    while (e) {
        if (e & 1u)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

/* sum_{b=a..c} 1/(M-b), c < M */
static double hsum(uint64_t M, uint64_t a, uint64_t c)
{
    if (c < a)
        return 0.0;
    return rbf__harm_diff(M - a, M - c - 1);
}

/* rho(t) for real t >= k (non-colliding) or t >= 0 (colliding) */
static double rho_real(uint64_t M, unsigned k, int nc, double t)
{
    if (!nc)
        return ipow_d(t / (double)M, k);
    double r = 1.0;
    for (unsigned p = 0; p < k; p++)
        r *= (t - (double)p) / ((double)M - (double)p);
    return r;
}

/* F(t) = rho(t)/(M-t) and the log-derivatives L1, L2, L3 */
static double fr_eval(uint64_t M, unsigned k, int nc, double t, double *d1, double *d3)
{
    double f = rho_real(M, k, nc, t) / ((double)M - t);
    if (d1) {
        double s1 = 0.0, s2 = 0.0, s3 = 0.0;
        if (!nc) {
            s1 = (double)k / t;
            s2 = (double)k / (t * t);
            s3 = (double)k / (t * t * t);
        } else {
            for (unsigned p = 0; p < k; p++) {
                double y = 1.0 / (t - (double)p);
                s1 += y;
                s2 += y * y;
                s3 += y * y * y;
            }
        }
        double q = 1.0 / ((double)M - t);
        double L1 = s1 + q, L2 = -s2 + q * q, L3 = 2.0 * s3 + 2.0 * q * q * q;
        *d1 = f * L1;
        *d3 = f * (L1 * L1 * L1 + 3.0 * L1 * L2 + L3);
    }
    return f;
}

/* R(a, c) = sum_{b=a..c} rho(b)/(M-b), a >= 64k, c < M. */
static double rsum(uint64_t M, unsigned k, int nc, uint64_t a, uint64_t c)
{
    model_sum s;
    msum_init(&s);
    if (c < a)
        return 0.0;
    /* levels next to a full filter: F varies on the scale M - b; sum them */
    uint64_t top = M > ASYM_POLE_DIRECT + 1 ? M - ASYM_POLE_DIRECT - 1 : 0;
    if (c > top) {
        uint64_t lo = a > top + 1 ? a : top + 1;
        for (uint64_t b = c + 1; b-- > lo;)
            msum_add(&s, rbf__model_rho(M, k, nc, b) / (double)(M - b));
        if (lo == a)
            return msum_get(&s);
        c = top;
    }
    if (c - a < 512) {
        for (uint64_t b = c + 1; b-- > a;)
            msum_add(&s, rbf__model_rho(M, k, nc, b) / (double)(M - b));
        return msum_get(&s);
    }
    /* Euler-Maclaurin: sum = int_a^c F + (F(a)+F(c))/2 + (F'(c)-F'(a))/12
     *                        - (F'''(c)-F'''(a))/720 + O(F^(5)/30240) */
    double xa, xc, d1a, d3a, d1c, d3c;
    xa = fr_eval(M, k, nc, (double)a, &d1a, &d3a);
    xc = fr_eval(M, k, nc, (double)c, &d1c, &d3c);
    msum_add(&s, 0.5 * (xa + xc));
    msum_add(&s, (d1c - d1a) / 12.0);
    msum_add(&s, -(d3c - d3a) / 720.0);
    double gx[ASYM_GL], gw[ASYM_GL];
    rbf__model_gauss_legendre(ASYM_GL, gx, gw);
    double t = (double)a, end = (double)c, Md = (double)M;
    while (t < end) {
        double h = 4.0 * t / ((double)k + 2.0);
        double hp = (Md - t) / 4.0;
        if (hp < h)
            h = hp;
        if (h > end - t || end - t - h < 1e-9 * end)
            h = end - t;
        double mid = t + 0.5 * h, half = 0.5 * h, acc = 0.0;
        for (unsigned i = 0; i < ASYM_GL; i++)
            acc += gw[i] * fr_eval(M, k, nc, mid + half * gx[i], NULL, NULL);
        msum_add(&s, acc * half);
        t += h;
    }
    return msum_get(&s);
}

/* ---- the transient bound e(b) >= |S_delta(b') - D_inf| for b' >= b */
static double trans_bound(uint64_t M, unsigned k, double b)
{
    if (k < 2)
        return 0.0;
    const double pi = 3.14159265358979323846;
    double c = 1.0 - cos(2.0 * pi / (double)k);
    if (b <= 1.0)
        return (double)k;
    double y = 2.0 * c * (b - 1.0) / (double)M;
    double phi = (double)M / (4.0 * c) * ((1.0 + y) * log1p(y) - y);
    /* y tiny: (1+y)ln(1+y) - y = y^2/2 - y^3/6 + ..., avoid cancellation */
    if (y < 1e-4)
        phi = (double)M / (4.0 * c) * (y * y / 2.0 - y * y * y / 6.0);
    double e = (double)k * exp(-phi);
    return e > (double)k ? (double)k : e;
}

double rbf__asym_C(uint64_t M, unsigned k, int nc)
{
    if (!nc)
        return (double)M / (double)k;
    model_sum s;
    msum_init(&s);
    double prod = 1.0;
    for (unsigned m = 1; m <= k; m++) {
        prod *= (double)(k - (m - 1)) / (double)(M - (m - 1));
        msum_add(&s, prod / (double)m);
        if (prod < 1e-30)
            break;
    }
    return 1.0 / msum_get(&s);
}

/* Bound on |sum_{b>=b1} delta_b rho_b| (Abel summation; see the header). */
static double rho_tail_bound(uint64_t M, unsigned k, int nc, uint64_t b1)
{
    double e = trans_bound(M, k, (double)b1);
    double acc = e * rbf__model_rho(M, k, nc, b1);
    double b = (double)b1;
    double rb = rbf__model_rho(M, k, nc, b1);
    while (b < (double)M - 1.0) {
        double nb = b * 1.05 + 1.0;
        if (nb > (double)M - 1.0)
            nb = (double)M - 1.0;
        double rn = rbf__model_rho(M, k, nc, (uint64_t)nb);
        double eb = trans_bound(M, k, b);
        acc += eb * (rn - rb);
        if (eb < 1e-300 || eb * (1.0 - rn) < 1e-20 * acc)
            break;
        b = nb;
        rb = rn;
    }
    return acc;
}

/* Do the bounds hold with the prefix [0, b1) for every sigma >= smin? */
static int b1_ok(uint64_t M, unsigned k, int nc, double C, uint64_t b1, uint64_t smin)
{
    const double tol = ASYM_TOL;
    double es = trans_bound(M, k, (double)(smin - k));
    double sg_lo = C * hsum(M, 0, smin);
    /* sum g: D_inf = (k-1)/(2k), the error is e(sigma+1) */
    if (es > tol * sg_lo)
        return 0;
    /* g near sigma (two-phase window): |delta_b| <= 2 e(b-1) vs C/M */
    if (2.0 * es > tol * C / (double)M)
        return 0;
    /* sum g rho: >= L(sigma) = (C/M) rho(sigma) (sigma-k+1)/(k+1).  Its
     * transient (Abel summation) is the tail bound from b1 plus the
     * boundary term at sigma, |S_delta(sigma) - D_inf| rho(sigma) <=
     * es rho(sigma).  L grows with sigma and es rho(sigma)/L(sigma) does
     * not, so tail + es rho(smin) <= tol L(smin) keeps the whole
     * transient below tol L(sigma) for every sigma >= smin. */
    double rho_s = rbf__model_rho(M, k, nc, smin);
    double sgr_lo = C / (double)M * rho_s * (double)(smin + 1 - k) / ((double)k + 1.0);
    if (rho_tail_bound(M, k, nc, b1) + es * rho_s > tol * sgr_lo)
        return 0;
    return 1;
}

void rbf__asym_free(model_asym *a)
{
    if (a) {
        rbf__free(a->gtail);
        a->gtail = NULL;
    }
}

int rbf__asym_init(model_asym *a, uint64_t M, unsigned k, int nc, uint64_t smin,
                   const rbf_model_params *prog)
{
    memset(a, 0, sizeof *a);
    a->M = M;
    a->k = k;
    a->nc = nc;
    a->C = rbf__asym_C(M, k, nc);
    uint64_t bmin = 64 * (uint64_t)k;
    if (bmin < 4096)
        bmin = 4096;
    if (smin + 1 < 2 * bmin || M < 4 * bmin) {
        a->b1 = UINT64_MAX; /* not applicable: the caller runs the exact pass */
        return RBF_OK;
    }
    uint64_t b1 = bmin;
    while (!b1_ok(M, k, nc, a->C, b1, smin)) {
        b1 += b1 / 4;
        if (b1 + 1 >= smin) {
            a->b1 = UINT64_MAX;
            return RBF_OK;
        }
    }
    a->b1 = b1;
    a->gtail = rbf__calloc(k, sizeof *a->gtail);
    if (!a->gtail)
        return RBF_ENOMEM;
    model_pass ps;
    int rc = rbf__model_pass_init(&ps, M, k, nc);
    if (rc) {
        rbf__asym_free(a);
        return rc;
    }
    model_sum sd, sd1;
    msum_init(&sd);
    msum_init(&sd1);
    for (uint64_t b = 0; b < b1; b++) {
        if ((b & 0xffff) == 0 && b && prog && model_progress(prog, b, b1)) {
            rbf__model_pass_free(&ps);
            rbf__asym_free(a);
            return RBF_ECANCELED;
        }
        rbf__model_pass_step(&ps);
        double dl = ps.g - a->C / (double)(M - b);
        msum_add(&sd, dl);
        msum_add(&sd1, dl * (double)b);
        if (b + k >= b1)
            a->gtail[b + k - b1] = ps.g;
    }
    a->pre_g = ps.sum_g;
    a->pre_gr = ps.sum_gr;
    a->pre_delta = msum_get(&sd);
    a->pre_delta1 = msum_get(&sd1);
    /* Proved for colliding hashing (T mod k becomes uniform); for
     * non-colliding hashing S_delta's average over a window of k levels
     * agrees with it to the estimate's noise (docs/models.md 3b). */
    a->dinf = (double)(k - 1) / (2.0 * (double)k);
    rbf__model_pass_free(&ps);
    return RBF_OK;
}

/* sum_{b<=s} g_b, s >= b1 - 1 */
static double asym_sum_g(const model_asym *a, uint64_t s)
{
    if (s + 1 == a->b1)
        return msum_get(&a->pre_g);
    model_sum t = a->pre_g;
    msum_add(&t, a->C * hsum(a->M, a->b1, s));
    msum_add(&t, a->dinf - a->pre_delta);
    return msum_get(&t);
}

double rbf__asym_g(const model_asym *a, uint64_t b)
{
    if (b < a->b1) {
        if (b + a->k >= a->b1)
            return a->gtail[b + a->k - a->b1];
        return 0.0; /* not kept; callers only ask near sigma >= b1 */
    }
    return a->C / (double)(a->M - b);
}

int rbf__asym_eval(const model_asym *a, uint64_t sigma, int retaining, double *fp, double *en0)
{
    if (a->b1 == UINT64_MAX || sigma < a->b1 || sigma >= a->M)
        return RBF_EINVAL;
    double sg = asym_sum_g(a, sigma);
    model_sum t = a->pre_gr;
    msum_add(&t, a->C * rsum(a->M, a->k, a->nc, a->b1, sigma));
    double sgr = msum_get(&t);
    double den = retaining ? sg - 1.0 : sg; /* g_0 = 1 */
    if (fp)
        *fp = den > 0.0 ? model_clamp01(sgr / den) : 0.0;
    if (en0)
        *en0 = asym_sum_g(a, sigma - 1);
    return RBF_OK;
}

/* The two-phase frozen rate from g near sigma (asymptotic) */
int rbf__asym_frozen(const model_asym *a, int retaining, uint64_t sigma, double *ff)
{
    const unsigned k = a->k;
    double *gwin = rbf__calloc(k, sizeof *gwin);
    if (!gwin)
        return RBF_ENOMEM;
    for (unsigned t = 0; t < k; t++)
        gwin[t] = rbf__asym_g(a, sigma + 1 + t - k);
    *ff = rbf__model_frozen_rate(a->M, k, a->nc, retaining, sigma, gwin);
    rbf__free(gwin);
    return *ff < 0.0 ? RBF_ENOMEM : RBF_OK;
}

int rbf__model_sigma_asym(const rbf_model_params *p, uint64_t sigma, double *f1, double *en0,
                          double *ff)
{
    model_asym a;
    int rc = rbf__asym_init(&a, p->bits, p->hashes, (p->hashing == RBF_NON_COLLIDING), sigma, p);
    if (rc)
        return rc;
    if (a.b1 == UINT64_MAX || sigma < a.b1) {
        rbf__asym_free(&a);
        return 1; /* too small for the bounds: the exact pass is cheap here */
    }
    rc = rbf__asym_eval(&a, sigma, (p->recycle == RBF_RETAINING), f1, en0);
    if (!rc && ff)
        rc = rbf__asym_frozen(&a, (p->recycle == RBF_RETAINING), sigma, ff);
    rbf__asym_free(&a);
    return rc;
}
