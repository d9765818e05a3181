/*
 * basic.c -- parameter checks, rho(b), the classic worst-case formula f_w
 * and the k = 1 closed form (MODEL.md 3-4, paper sections II-B and IV-D).
 */
#include <math.h>
#include <string.h>

#include "model_core.h"
#include "rbf_abi.h"

void rbf_model_params_init(rbf_model_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->hashing = RBF_COLLIDING;
    p->recycle = RBF_NON_RETAINING;
    p->method = RBF_MODEL_AUTO;
    p->progress = NULL;
    p->progress_ctx = NULL;
}

int rbf__model_check_params(const rbf_model_params *p)
{
    if (!p || p->bits < 1 || p->hashes < 1 || p->hashes > MODEL_MAX_HASHES)
        return RBF_EINVAL;
    if ((p->hashing != RBF_COLLIDING && p->hashing != RBF_NON_COLLIDING) ||
        (p->recycle != RBF_NON_RETAINING && p->recycle != RBF_RETAINING) ||
        (p->layout != 0 && p->layout != 1))
        return RBF_EINVAL;
    if (!RBF_RESERVED_ZERO(p)) /* a field this version does not know (rbf_base.h) */
        return RBF_EINVAL;
    if (p->method != RBF_MODEL_EXACT && p->method != RBF_MODEL_PAPER &&
        p->method != RBF_MODEL_ASYMPTOTIC && p->method != RBF_MODEL_AUTO)
        return RBF_EINVAL;
    if ((p->hashing == RBF_NON_COLLIDING) && p->hashes > p->bits)
        return RBF_EINVAL;
    return RBF_OK;
}

double rbf__model_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b)
{
    if (bits == 0 || hashes == 0)
        return 0.0;
    if (b >= bits)
        return 1.0;
    double M = (double)bits;
    if (!non_colliding) {
        double x = (double)b / M;
        /* integer power by squaring: exact enough and much faster than pow */
        double r = 1.0, base = x;
        unsigned e = hashes;
        while (e) {
            if (e & 1u)
                r *= base;
            base *= base;
            e >>= 1;
        }
        return model_clamp01(r);
    }
    if (b < hashes)
        return 0.0;
    double r = 1.0;
    for (unsigned q = 0; q < hashes; q++)
        r *= ((double)(b - q)) / ((double)(bits - q));
    return model_clamp01(r);
}

double rbf__model_one_minus_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b)
{
    if (b >= bits)
        return 0.0;
    double r = rbf__model_rho(bits, hashes, non_colliding, b);
    if (r <= 0.5)
        return 1.0 - r;
    /* rho close to 1: 1 - prod(1 - y_q) = -expm1(sum log1p(-y_q)) with
     * y_q = (M - b)/(M - q) the exact miss probability of hash q. */
    double s = 0.0, gap = (double)(bits - b);
    if (!non_colliding)
        s = (double)hashes * log1p(-gap / (double)bits);
    else
        for (unsigned q = 0; q < hashes; q++)
            s += log1p(-gap / (double)(bits - q));
    return model_clamp01(-expm1(s));
}

double rbf__model_f_w(uint64_t bits, unsigned hashes, uint64_t n)
{
    if (bits == 0 || hashes == 0 || n == 0)
        return 0.0; /* the first message meets an empty filter */
    if (bits == 1)
        return 1.0;
    /* 1 - (1 - 1/M)^{kn} = -expm1(kn log1p(-1/M)): no cancellation for
     * small kn/M, where the naive form loses every digit. */
    double t = (double)hashes * (double)n * log1p(-1.0 / (double)bits);
    double y = -expm1(t);
    return model_clamp01(pow(y, (double)hashes));
}

int rbf_model_rho(uint64_t bits, unsigned hashes, rbf_hashing hashing, uint64_t b, double *out)
{
    if (!out || bits == 0 || hashes == 0 || hashes > RBF_MAX_HASHES || b > bits ||
        (hashing != RBF_COLLIDING && hashing != RBF_NON_COLLIDING) ||
        (hashing == RBF_NON_COLLIDING && hashes > bits))
        return RBF_EINVAL;
    *out = rbf__model_rho(bits, hashes, hashing == RBF_NON_COLLIDING, b);
    return RBF_OK;
}

int rbf_model_f_w(uint64_t bits, unsigned hashes, uint64_t n, double *out)
{
    if (!out || bits == 0 || hashes == 0 || hashes > RBF_MAX_HASHES)
        return RBF_EINVAL;
    *out = rbf__model_f_w(bits, hashes, n);
    return RBF_OK;
}

int rbf_model_k1_closed_form(uint64_t bits, uint64_t sigma, double *fp)
{
    if (!fp || bits < 2 || sigma < 1 || sigma >= bits)
        return RBF_EINVAL;
    /* f = sum_{i<=sigma} i / (M (M - i)) / sum_{j<=sigma} 1/(M - j) */
    model_sum num, den;
    msum_init(&num);
    msum_init(&den);
    double M = (double)bits;
    for (uint64_t i = 0; i <= sigma; i++) {
        double w = 1.0 / (double)(bits - i);
        msum_add(&den, w);
        msum_add(&num, ((double)i / M) * w);
    }
    *fp = model_clamp01(msum_get(&num) / msum_get(&den));
    return RBF_OK;
}

/* Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n; the
 * asymptotic, fast N-bounded and blocked models share it). */
static void gauss_legendre_compute(unsigned n, double *x, double *w);

/* The rule is asked for again and again with the same n (once per
 * integral: thousands of times in a blocked plan), and Newton's iteration
 * may run its 100 steps when the last update flips an ulp: the last n's
 * nodes and weights are kept, per thread, and copied. */
#define GL_CACHE_MAX 64u
void rbf__model_gauss_legendre(unsigned n, double *x, double *w)
{
    static _Thread_local unsigned cn;
    static _Thread_local double cx[GL_CACHE_MAX], cw[GL_CACHE_MAX];
    if (n > GL_CACHE_MAX) {
        gauss_legendre_compute(n, x, w);
        return;
    }
    if (cn != n) {
        gauss_legendre_compute(n, cx, cw);
        cn = n;
    }
    memcpy(x, cx, n * sizeof *x);
    memcpy(w, cw, n * sizeof *w);
}

static void gauss_legendre_compute(unsigned n, double *x, double *w)
{
    const double pi = 3.14159265358979323846;
    for (unsigned i = 0; i < (n + 1) / 2; i++) {
        double z = cos(pi * ((double)i + 0.75) / ((double)n + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1.0, p1 = z;
            for (unsigned j = 2; j <= n; j++) {
                double p2 = ((double)(2 * j - 1) * z * p1 - (double)(j - 1) * p0) / (double)j;
                p0 = p1;
                p1 = p2;
            }
            dp = (double)n * (z * p1 - p0) / (z * z - 1.0);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-17)
                break;
        }
        {
            double p0 = 1.0, p1 = z;
            for (unsigned j = 2; j <= n; j++) {
                double p2 = ((double)(2 * j - 1) * z * p1 - (double)(j - 1) * p0) / (double)j;
                p0 = p1;
                p1 = p2;
            }
            dp = (double)n * (z * p1 - p0) / (z * z - 1.0);
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = w[n - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

/* ---- harmonic sums */

/* H_x - ln x - gamma, asymptotic, x >= 32: error < 1e-16 relative to H */
static double harm_tail(double x)
{
    double r = 1.0 / x, r2 = r * r;
    return 0.5 * r - r2 * (1.0 / 12.0 - r2 * (1.0 / 120.0 - r2 / 252.0));
}

/* H_n - H_m for n >= m */
double rbf__harm_diff(uint64_t n, uint64_t m)
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
    while (mm < 32 && mm < n) {
        mm++;
        msum_add(&s, 1.0 / (double)mm);
    }
    if (mm < n) {
        double dn = (double)n, dm = (double)mm;
        msum_add(&s, log1p((dn - dm) / dm));
        msum_add(&s, harm_tail(dn) - harm_tail(dm));
    }
    return msum_get(&s);
}

/* ---- the one-message step distribution */

/* hash q at lv set bits of M, lv < M, on a clear bit: (M - lv) over the
 * same denominator as rbf__step_stay */
static double flat_move(uint64_t M, int nc, unsigned q, uint64_t lv)
{
    return nc ? (double)(M - lv) / ((double)M - (double)q) : (double)(M - lv) / (double)M;
}

void rbf__model_step_dist(uint64_t bits, unsigned hashes, int non_colliding, uint64_t i, double *out)
{
    rbf__step_law(bits, hashes, non_colliding, i, rbf__step_stay, flat_move, out);
}
