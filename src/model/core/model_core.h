/*
 * model_core.h -- the models' shared numerics (src/model/core/): compensated
 * sums, rho(b) and f_w(n), Gauss-Legendre rules, harmonic sums, the
 * one-message step distribution, the parameter check and the progress
 * callback.  Every model sub-module builds on it; it depends on nothing
 * above it.
 *
 * Not installed.  Everything here is hidden (the library is built with
 * -fvisibility=hidden and none of these carry RBF_API).
 */
#ifndef RBF_MODEL_CORE_H
#define RBF_MODEL_CORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "rbf_model.h"

/* ---- compensated (Neumaier) summation.  Every long sum of the module goes
 * through this: the renewal pass adds up to 2^40 terms of very different
 * sizes, and plain summation would lose ~log2(M) bits. */
typedef struct {
    double s; /* running sum */
    double c; /* running compensation (lost low-order parts) */
} model_sum;

static inline void msum_init(model_sum *a)
{
    a->s = 0.0;
    a->c = 0.0;
}

static inline void msum_add(model_sum *a, double x)
{
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
}

static inline double msum_get(const model_sum *a) { return a->s + a->c; }

/* Clamp a computed probability into [0, 1] (a rounding error can push a
 * ratio of sums a few ulps past 1) and map a NaN (which would only come
 * from 0/0 on an empty range) to 0. */
static inline double model_clamp01(double x)
{
    if (!(x > 0.0)) /* also catches NaN */
        return 0.0;
    return x > 1.0 ? 1.0 : x;
}

/* rho(b) and f_w(n) with no domain check (callers pass valid values); the
 * public rbf_model_rho / rbf_model_f_w check and report. */
double rbf__model_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b);
double rbf__model_f_w(uint64_t bits, unsigned hashes, uint64_t n);

/* The n-point Gauss-Legendre rule on [-1, 1]: nodes x[0..n-1] (ascending)
 * and weights w[0..n-1]. */
void rbf__model_gauss_legendre(unsigned n, double *x, double *w);

/* Largest k the module accepts (work arrays are O(k) to O(k^3)). */
#define MODEL_MAX_HASHES RBF_MAX_HASHES

/* Validate the common parameters: bits >= 1, 1 <= hashes <= max,
 * non-colliding needs hashes <= bits, flags 0/1, a known method. */
int rbf__model_check_params(const rbf_model_params *p);
/* 1 - rho(b) computed without cancellation when rho(b) is close to 1. */
double rbf__model_one_minus_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b);

/* H_n - H_m (0 for n <= m), compensated; O(1) past 64 terms by the
 * asymptotic expansion of the harmonic numbers. */
double rbf__harm_diff(uint64_t n, uint64_t m);

/* ---- per-message step distribution (the paper's tau_k(i, i+d), d = 0..k,
 * without a threshold): out[d] for d = 0..k.  O(k^2). */
void rbf__model_step_dist(uint64_t bits, unsigned hashes, int non_colliding, uint64_t i, double *out);

/* The probability that hash q (0-based) lands on a set bit when lv of W
 * bits are set, lv < W: lv/W, or (lv - q)/(W - q) for non-colliding hashing
 * (the q earlier hashes' bits excluded).  The stay probability of both the
 * flat models and the blocked block chain. */
static inline double rbf__step_stay(uint64_t W, int nc, unsigned q, uint64_t lv)
{
    return nc ? (lv >= q ? (double)(lv - q) / ((double)W - (double)q) : 0.0)
              : (double)lv / (double)W;
}

/* The law behind rbf__model_step_dist, for any set of W bits (a whole filter, or one block of
 * the blocked layout): out[d], d = 0..k, the probability that one message
 * arriving at b set bits sets exactly d new ones, built hash by hash.  Hash
 * q (0-based) at lv set bits, lv < W, lands on a set bit with stay(W, nc,
 * q, lv) and on a clear one with move(W, nc, q, lv); at lv >= W it lands
 * on a set bit.  The caller gives both probabilities (both pass
 * rbf__step_stay as stay), not one and its complement, since the flat and
 * blocked models round the second differently and their values must not move by an ulp.  Inline, so that
 * each caller's two functions are inlined in turn. */
static inline void rbf__step_law(uint64_t W, unsigned k, int nc, uint64_t b,
                                 double (*stay)(uint64_t, int, unsigned, uint64_t),
                                 double (*move)(uint64_t, int, unsigned, uint64_t), double *out)
{
    for (unsigned d = 1; d <= k; d++)
        out[d] = 0.0;
    out[0] = 1.0;
    for (unsigned q = 0; q < k; q++) {
        for (unsigned d = q + 1;; d--) {
            uint64_t lv = b + d;
            double s = 0.0, u = 0.0;
            if (d <= q)
                s = lv < W ? out[d] * stay(W, nc, q, lv) : out[d];
            if (d >= 1 && lv - 1 < W)
                u = out[d - 1] * move(W, nc, q, lv - 1);
            out[d] = s + u;
            if (d == 0)
                break;
        }
    }
}

/* Cancellation check helper: calls the progress callback if any. */
static inline int model_progress(const rbf_model_params *p, uint64_t done, uint64_t total)
{
    if (p->progress && p->progress(p->progress_ctx, done, total))
        return RBF_ECANCELED;
    return RBF_OK;
}

#endif
