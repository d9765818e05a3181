/*
 * nfast.c -- the paper's N-bounded rates f_o(N) and f_a(N) at any N in
 * microseconds (docs/models.md 3b): the sums over i < N of the smooth
 * f_w(i) = (1 - q^i)^k and r_i = f_w(i)/(1 - f_w(i)) (q = (1-1/M)^k)
 * by Euler-Maclaurin, the integral by composite Gauss-Legendre on panels
 * no longer than the function's scale (4i/(k+2) near 0, where f_w grows
 * like i^k, and 2/|log q| further on), the first NFAST_DIRECT terms summed
 * one by one, and once f_w rounds to 1 the rest in closed form.
 */
#include <stdlib.h>
#include <string.h>

#include "model_nbound.h"


#define NFAST_DIRECT 4096
#define NFAST_GL 20

/* f_w(t) (which = 0) or r(t) = f_w/(1-f_w) (which = 1) at real t >= 0 */
static double nf_eval(double L, unsigned k, int which, double t)
{
    double e = exp(L * t);       /* q^t */
    double y = -expm1(L * t);    /* 1 - q^t */
    double f = 1.0;
    for (unsigned i = 0; i < k; i++)
        f *= y;
    if (!which)
        return f;
    double omf = f <= 0.5 ? 1.0 - f : -expm1((double)k * log1p(-e));
    return omf > 0.0 ? f / omf : INFINITY;
}

/* sum_{i=a..c} F(i), F smooth on the scale min(i/k, 1/|L|) >= 128 */
static double nf_em(double L, unsigned k, int which, double a, double c)
{
    model_sum s;
    msum_init(&s);
#define F(t) nf_eval(L, k, which, (t))
    double fa = F(a), fc = F(c);
    double d1a = (8.0 * (F(a + 1) - F(a - 1)) - (F(a + 2) - F(a - 2))) / 12.0;
    double d1c = (8.0 * (F(c + 1) - F(c - 1)) - (F(c + 2) - F(c - 2))) / 12.0;
    double d3a = (F(a + 2) - 2.0 * F(a + 1) + 2.0 * F(a - 1) - F(a - 2)) / 2.0;
    double d3c = (F(c + 2) - 2.0 * F(c + 1) + 2.0 * F(c - 1) - F(c - 2)) / 2.0;
    msum_add(&s, 0.5 * (fa + fc));
    msum_add(&s, (d1c - d1a) / 12.0);
    msum_add(&s, -(d3c - d3a) / 720.0);
    double gx[NFAST_GL], gw[NFAST_GL];
    rbf__model_gauss_legendre(NFAST_GL, gx, gw);
    double t = a, scale = 2.0 / fabs(L);
    while (t < c) {
        double h = 4.0 * t / ((double)k + 2.0);
        if (h > scale)
            h = scale;
        if (h > c - t || c - t - h < 1e-9 * c)
            h = c - t;
        double mid = t + 0.5 * h, half = 0.5 * h, acc = 0.0;
        for (unsigned i = 0; i < NFAST_GL; i++)
            acc += gw[i] * F(mid + half * gx[i]);
        msum_add(&s, acc * half);
        t += h;
    }
#undef F
    return msum_get(&s);
}

/* sum_{i<N} f_w(i) (which = 0) or r_i (which = 1).  r: INFINITY once
 * f_w rounds to 1 (as the O(N) scan). */
static double nf_sum(uint64_t M, unsigned k, int which, uint64_t N)
{
    if (N == 0)
        return 0.0;
    if (M <= 1)
        return which ? INFINITY : (double)(N - 1);
    double L = (double)k * log1p(-1.0 / (double)M);
    uint64_t nd = N < NFAST_DIRECT + 512 ? N : NFAST_DIRECT;
    model_sum s;
    msum_init(&s);
    fw_iter it;
    rbf__fw_iter_init(&it, M, k);
    for (uint64_t i = 0; i < nd; i++) {
        double f = rbf__fw_iter_next(&it);
        if (which) {
            if (f >= 1.0)
                return INFINITY;
            msum_add(&s, f / (1.0 - f));
        } else {
            msum_add(&s, f);
        }
    }
    if (nd == N)
        return msum_get(&s);
    /* where f_w rounds to 1: k q^t < 2^-60 */
    double tsat = (log((double)k) + 60.0 * log(2.0)) / -L;
    double last = (double)(N - 1);
    if (which && rbf__model_f_w(M, k, N - 1) >= 1.0)
        return INFINITY;
    if (!which && tsat < last) {
        double c = floor(tsat);
        if (c < (double)nd + 512.0)
            c = (double)nd + 512.0;
        if (c < last) {
            msum_add(&s, nf_em(L, k, 0, (double)nd, c));
            msum_add(&s, last - c); /* each term is 1 to 2^-60 */
            return msum_get(&s);
        }
    }
    msum_add(&s, nf_em(L, k, which, (double)nd, last));
    return msum_get(&s);
}

double rbf__fo_fast(uint64_t M, unsigned k, uint64_t N)
{
    return model_clamp01(nf_sum(M, k, 0, N) / (double)N);
}

double rbf__fa_fast(uint64_t M, unsigned k, uint64_t N)
{
    double R = nf_sum(M, k, 1, N);
    if (isinf(R))
        return 1.0;
    return model_clamp01(R / ((double)N + R));
}
