/*
 * model_nbound.h -- the N-bounded rates (src/model/nbound/): the f_w
 * sequence (fw.c), f_o and f_a by Euler-Maclaurin (nfast.c), the fast
 * exact worst/oracle rates (nexact.c), the real user's chain on a full
 * filter (nfull.c), the real user's rate by the fill chain's potentials
 * (nreal.c) and the propagated chains with the public entry points
 * (nbounded.c).  Files call only down this list.  Built on the
 * sigma-bounded module (the asymptotic prefix).  Internal to the models and
 * the planner.
 */
#ifndef RBF_MODEL_NBOUND_H
#define RBF_MODEL_NBOUND_H

#include <stdint.h>

#include "model_sigma.h"

/* fw.c: f_w(0), f_w(1), ... in O(1) each (two recurrences, resynchronised with
 * exp/expm1 every 64 terms, so the relative error stays ~1e-14). */
typedef struct fw_iter {
    uint64_t bits;
    unsigned hashes;
    double L;    /* k log1p(-1/M) */
    double a;    /* 1 - q, q = (1 - 1/M)^k */
    double q;
    uint64_t i;  /* index of the next term */
    double z;    /* q^i */
    double y;    /* 1 - q^i */
} fw_iter;

void rbf__fw_iter_init(fw_iter *it, uint64_t bits, unsigned hashes);
double rbf__fw_iter_next(fw_iter *it); /* returns f_w(i), then i++ */

/* f_o(N) and f_a(N) at any N by Euler-Maclaurin (nfast.c): O(k log N). */
double rbf__fo_fast(uint64_t M, unsigned k, uint64_t N);
double rbf__fa_fast(uint64_t M, unsigned k, uint64_t N);

/* exact_worst and exact_oracle at N by the fast method (nexact.c), any M
 * and N, O(k) to O(k^2) per term, milliseconds in all.  Returns 1 (nothing
 * usable) when its own error estimate is not below 1e-11 relative: run the
 * propagated chain then.  *relerr (may be NULL) receives the estimate. */
int rbf__nexact_fast(const rbf_model_params *p, uint64_t N, double *worst, double *oracle,
                     uint64_t *saturated_at, double *relerr);
/* RBF_MODEL_AUTO takes the fast N-bounded values (when their estimates
 * accept) where the propagation would cost more than this N k sqrt(M):
 * about 0.5 s on the 2-core test machine (1 Mi bits, k = 7, 10^5
 * messages, 7.2e8, took 7 s for both propagations) */
#define RBF__NB_AUTO_CHAIN 5e7

/* The chains above that cost (auto and fast; one value, not a curve) step a
 * message at a time by its kernel table instead of hash by hash
 * (nbounded.c): the same law summed in another order.  RBF__NB_AUTO_CHAIN;
 * tests lower it to compare the two. */
extern double rbf__nb_heavy_chain;
/* Nonzero: rbf_model_nbounded skips the fast paths and propagates (with
 * the kernel where heavy, method auto or fast): the reference of tests and
 * benchmarks at sizes where the hash steps would take minutes. */
extern int rbf__nb_chain_only;
/* The non-colliding hash-by-hash chain reads its factors (b - q)/(M - q)
 * and (M - b)/(M - q) from per-hash tables while they hold at most this
 * many doubles (2^21), and divides as it goes past that: the same
 * doubles either way (tests set 0 to compare). */
extern size_t rbf__nb_qtab_max;

/* The real-user rate follows from the oracle sum when rho(min(M, (N-1)k))
 * is at most this (nbounded.c): within half of it, relative. */
#define RBF__NEXACT_REAL_RMAX 1e-10

/* exact_real at any load by the potentials of the fill chain (nreal.c):
 * returns 1 when not applicable or its error estimate is above 2e-10
 * (*real and *relerr are still written when it could compute them).
 * worst (may be NULL): also E[rho(B'_N)], the real user's rate at the end
 * of its cycle, whose estimate must pass too. */
int rbf__nreal_fast(const rbf_model_params *p, uint64_t N, double *real, double *relerr,
                    double *worst);
/* The same; force 1: take estimates of exact_real's own error up to 1e-9
 * (instead of 2e-10 of E_fp's) and let the propagation decide a full
 * filter only within 1.5 of the cut (else 3); force 2: take the value
 * whatever its estimate, and decide a full filter by the cut alone.  Where
 * the propagation would take a fraction of a second to seconds (force 1:
 * N k sqrt(M) above RBF__NB_CHAIN_SOFT) or longer (force 2: above
 * RBF__NB_CHAIN_MAX), auto and fast use them instead of falling back to
 * it (nbounded.c). */
int rbf__nreal_fast_ex(const rbf_model_params *p, uint64_t N, int force, double *real,
                       double *relerr, double *worst);
/* The kernel chain's cost N k sqrt(M): 2^21 bits, k = 32, N = 262144 is
 * 1.2e10 and took 13 s on the 2-core test machine; 3e9 is about 3 s. */
#define RBF__NB_CHAIN_SOFT 3e8
#define RBF__NB_CHAIN_MAX 3e9

/* *lp = log P(B'_c = M): the real user's chain on a full filter after c
 * bit-setting messages, by a WKB/Bahadur-Rao estimate (nfull.c); 0 when c
 * is at or past the mean number of steps to a full filter.  Returns a
 * status (RBF_ENOMEM, RBF_EINVAL). */
int rbf__nreal_full_logp(const rbf_model_params *p, uint64_t c, double *lp);

/* E[rho(B_n)] alone by the fast evaluator (tests), *relerr its estimate. */
double rbf__nexact_term(const rbf_model_params *p, uint64_t n, double *relerr);

/* Gauss-Legendre nodes per panel of the fast N-bounded sums (nexact.c,
 * nreal.c, nfull.c). */
#define NX_GL 20

#endif
