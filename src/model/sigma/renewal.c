/*
 * renewal.c -- the renewal pass of MODEL.md 3, the exact sigma-bounded
 * method: every sigma at once in O(kM).
 *
 * Let the filter fill with no threshold, one hash at a time, and let
 * v(b, p) be the expected number of times the process has b bits set just
 * before hash p (0 <= p < k) of some message.  The expected number of
 * message arrivals that find exactly b bits set is g_b = v(b, 0), and a
 * sigma-bounded cycle is this process stopped at the first message that
 * would pass sigma, so g_b (b <= sigma) is the same for every sigma:
 *
 *   f_sigma^1 (non-retaining) = sum_{b<=sigma} g_b rho(b) / sum_{b<=sigma} g_b
 *   f_sigma^1 (retaining)     = sum_{1<=b<=sigma} g_b rho(b) / sum_{1<=b<=sigma} g_b
 *   E[N_0]                    = sum_{b<sigma} g_b
 *
 * At level b the phases form a cycle: hash p stays at b with probability
 * x_p(b) (b/M colliding, (b-p)/(M-p) non-colliding) and otherwise moves to
 * level b+1 at phase p+1.  With u_p(b) the inflow from level b-1,
 *
 *   v(b, p) = x_{p-1}(b) v(b, p-1) + u_p(b)          (phases mod k)
 *   v(b, 0) = sum_t (prod_{s=1..t} x_{k-s}(b)) u_{k-t}(b) / (1 - prod_p x_p(b))
 *
 * and prod_p x_p(b) = rho(b), so one level costs three O(k) loops.
 */
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

int rbf__model_pass_init(model_pass *ps, uint64_t bits, unsigned hashes, int non_colliding)
{
    memset(ps, 0, sizeof *ps);
    ps->bits = bits;
    ps->hashes = hashes;
    ps->non_colliding = non_colliding;
    ps->u = rbf__calloc(hashes, sizeof *ps->u);
    ps->v = rbf__calloc(hashes, sizeof *ps->v);
    ps->inv = rbf__calloc(hashes, sizeof *ps->inv);
    ps->x = rbf__calloc(hashes, sizeof *ps->x);
    if (!ps->u || !ps->v || !ps->inv || !ps->x) {
        rbf__model_pass_free(ps);
        return RBF_ENOMEM;
    }
    for (unsigned q = 0; q < hashes; q++)
        ps->inv[q] = bits > q ? 1.0 / (double)(bits - q) : 0.0;
    ps->u[0] = 1.0; /* the cycle starts with an arrival at b = 0, phase 0 */
    msum_init(&ps->sum_g);
    msum_init(&ps->sum_g1);
    msum_init(&ps->sum_gr);
    return RBF_OK;
}

void rbf__model_pass_free(model_pass *ps)
{
    if (!ps)
        return;
    rbf__free(ps->u);
    rbf__free(ps->v);
    rbf__free(ps->inv);
    rbf__free(ps->x);
    ps->u = ps->v = ps->inv = ps->x = NULL;
}

void rbf__model_pass_step(model_pass *ps)
{
    const unsigned k = ps->hashes;
    const uint64_t b = ps->b;
    double *u = ps->u, *v = ps->v;
    double rho, h = 0.0;

    if (!ps->non_colliding && ps->bits > RBF_MODEL_AUTO_EXACT_BITS) {
        /* Above 2^22 bits (the 1.0 arithmetic is kept below): the phase
         * sums in extended precision.  In double the Horner sum h and the
         * phase chain round with a bias that grows linearly with the
         * levels: E[N_0] drifted -8.7e-11 at 2^24 bits, k = 32, and ~8e-9
         * at 2^30, against a pass in long double and the asymptotic value
         * (which agree to 1e-14); with these sums, 5e-15. */
        const long double x = (long double)b / (long double)ps->bits;
        const double stay_not = (double)(ps->bits - b) / (double)ps->bits;
        long double hl = 0.0L, xk = x;
        for (unsigned q = 1; q < k; q++) {
            hl = x * ((long double)u[q] + hl);
            xk *= x;
        }
        rho = (double)xk;
        long double omr = (k == 1) ? (long double)stay_not
                                   : (xk <= 0.5L ? 1.0L - xk
                                                 : (long double)rbf__model_one_minus_rho(
                                                       ps->bits, k, 0, b));
        long double t = omr > 0.0L ? ((long double)u[0] + hl) / omr : 0.0L;
        v[0] = (double)t;
        for (unsigned q = 1; q < k; q++) {
            t = x * t + (long double)u[q];
            v[q] = (double)t;
        }
        u[0] = v[k - 1] * stay_not;
        for (unsigned q = k - 1; q >= 1; q--)
            u[q] = v[q - 1] * stay_not;
    } else if (!ps->non_colliding) {
        const double x = (double)b / (double)ps->bits;
        const double stay_not = (double)(ps->bits - b) / (double)ps->bits; /* 1 - x, exact */
        double xk = x;
        for (unsigned q = 1; q < k; q++) {
            h = x * (u[q] + h);
            xk *= x;
        }
        rho = xk;
        double omr = (k == 1) ? stay_not
                              : (rho <= 0.5 ? 1.0 - rho : rbf__model_one_minus_rho(ps->bits, k, 0, b));
        v[0] = omr > 0.0 ? (u[0] + h) / omr : 0.0;
        for (unsigned q = 1; q < k; q++)
            v[q] = x * v[q - 1] + u[q];
        /* inflow to level b+1: leaving phase q-1 arrives at phase q */
        u[0] = v[k - 1] * stay_not;
        for (unsigned q = k - 1; q >= 1; q--)
            u[q] = v[q - 1] * stay_not;
    } else {
        double *x = ps->x;
        const double gap = (double)(ps->bits - b);
        double prod = 1.0;
        for (unsigned q = 0; q < k; q++) {
            x[q] = b >= q ? (double)(b - q) * ps->inv[q] : 0.0;
            prod *= x[q];
        }
        if (ps->bits > RBF_MODEL_AUTO_EXACT_BITS) {
            /* extended-precision phase sums, as for colliding hashing,
             * and x_q(b) divided at each level (a rounded 1/(M-q) is the
             * same factor at every level: a drift linear in the levels) */
            long double hl = 0.0L, pl = 1.0L;
            for (unsigned q = 0; q < k; q++) {
                long double xq = b >= q ? (long double)(b - q) / (long double)(ps->bits - q) : 0.0L;
                x[q] = (double)xq;
                pl *= xq;
            }
            for (unsigned q = 1; q < k; q++)
                hl = (long double)x[q] * ((long double)u[q] + hl);
            rho = (double)pl;
            long double omr = pl <= 0.5L ? 1.0L - pl
                                         : (long double)rbf__model_one_minus_rho(ps->bits, k, 1, b);
            long double t = omr > 0.0L ? ((long double)u[0] + hl) / omr : 0.0L;
            v[0] = (double)t;
            for (unsigned q = 1; q < k; q++) {
                t = (long double)x[q - 1] * t + (long double)u[q];
                v[q] = (double)t;
            }
        } else {
            for (unsigned q = 1; q < k; q++)
                h = x[q] * (u[q] + h);
            rho = prod;
            double omr = rho <= 0.5 ? 1.0 - rho : rbf__model_one_minus_rho(ps->bits, k, 1, b);
            v[0] = omr > 0.0 ? (u[0] + h) / omr : 0.0;
            for (unsigned q = 1; q < k; q++)
                v[q] = x[q - 1] * v[q - 1] + u[q];
        }
        if (ps->bits <= RBF_MODEL_AUTO_EXACT_BITS) {
            /* the 1.0 arithmetic, kept bit for bit at these sizes */
            u[0] = v[k - 1] * gap * ps->inv[k - 1];
            for (unsigned q = k - 1; q >= 1; q--)
                u[q] = v[q - 1] * gap * ps->inv[q - 1];
        } else {
            /* a rounded 1/(M-q) is the same factor at every level: its
             * error would grow linearly with the levels (~M 1e-16); a
             * division rounds independently each time */
            const double Md = (double)ps->bits;
            u[0] = v[k - 1] * (gap / (Md - (double)(k - 1)));
            for (unsigned q = k - 1; q >= 1; q--)
                u[q] = v[q - 1] * (gap / (Md - (double)(q - 1)));
        }
    }

    ps->g = v[0];
    ps->rho = rho;
    ps->en0 = msum_get(&ps->sum_g);
    msum_add(&ps->sum_g, v[0]);
    if (b >= 1)
        msum_add(&ps->sum_g1, v[0]);
    msum_add(&ps->sum_gr, v[0] * rho); /* rho(0) = 0: no b test needed */
    ps->b = b + 1;
}

double rbf__model_pass_fp(const model_pass *ps, int retaining)
{
    double den = retaining ? msum_get(&ps->sum_g1) : msum_get(&ps->sum_g);
    if (!(den > 0.0))
        return 0.0;
    return model_clamp01(msum_get(&ps->sum_gr) / den);
}
