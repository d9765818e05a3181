/*
 * fw.c -- the f_w sequence f_w(0), f_w(1), ... in O(1) per term (the
 * N-bounded chains, the fast sums of nfast.c and the planner read it).
 */
#include <math.h>

#include "model_nbound.h"

/* ---- the f_w sequence f_w(0), f_w(1), ... in O(1) per term */

void rbf__fw_iter_init(fw_iter *it, uint64_t bits, unsigned hashes)
{
    it->bits = bits;
    it->hashes = hashes;
    it->L = bits > 1 ? (double)hashes * log1p(-1.0 / (double)bits) : 0.0;
    it->a = bits > 1 ? -expm1(it->L) : 1.0; /* 1 - q, q = (1 - 1/M)^k */
    it->q = 1.0 - it->a;
    it->i = 0;
    it->z = 1.0;
    it->y = 0.0;
}

static inline double ipow(double x, unsigned e)
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

double rbf__fw_iter_next(fw_iter *it)
{
    double f;
    if (it->bits <= 1)
        f = it->i == 0 ? 0.0 : 1.0;
    else {
        if ((it->i & 63) == 0 && it->i) {
            /* resynchronise: the recurrences below drift by ~1 ulp a step */
            double t = (double)it->i * it->L;
            it->z = exp(t);
            it->y = -expm1(t);
        }
        f = ipow(it->y, it->hashes);
        /* y_{i+1} = 1 - q^{i+1} = y_i + q^i (1 - q): a sum of positive terms */
        it->y += it->z * it->a;
        it->z *= it->q;
    }
    it->i++;
    return model_clamp01(f);
}
